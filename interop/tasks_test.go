package interop

// The official Go SDK's client against a task of this library's server
// (MCP's tasks extension at 2026-07-28).
//
// What the SDK (v1.8.0) can and cannot do, read from its source:
//
//   - ClientSession speaks 2026-07-28 and lets a client declare the
//     extension (ClientOptions.Capabilities.Extensions), but it has no
//     tasks API: it sends only the methods it knows, and any other
//     (tasks/get, tasks/update, tasks/cancel) is refused before it
//     leaves (jsonrpc2.ErrNotHandled), even from a sending middleware.
//     Its CallTool decodes a CreateTaskResult as a CallToolResult without
//     content, and the task's id is lost (TestSDKSessionHasNoTasks).
//   - Its lowest-level request API, a transport's Connection (Write a
//     jsonrpc.Request, Read the jsonrpc.Response), carries any request,
//     and sets MCP-Protocol-Version from the request's _meta and
//     Mcp-Method; it sets Mcp-Name only for tools/call, prompts/get and
//     resources/read, so the test's HTTP client adds the task id as
//     Mcp-Name to tasks/* requests, as the extension asks
//     (TestSDKConnectionPollsTask).

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/otcgo/otc"
	otcmcp "github.com/otcgo/otc/mcp"
	"github.com/otcgo/otc/tasks"
)

// taskServer serves tools that run as tasks: Report.Build works 300 ms;
// Report.Named asks a name in rounds, then becomes a task.
func taskServer(t *testing.T) string {
	t.Helper()
	reg := otc.NewRegistry(&otc.RegistryOptions{Logger: slog.New(slog.DiscardHandler)})
	require.NoError(t, otc.Register(reg, otc.Tool{ID: "Report.Build", Version: "1.0.0", Description: "Builds a report, slowly.", Tasks: otc.TasksOptional},
		func(ctx context.Context, in struct {
			Title string `json:"title" jsonschema:"description=The report's title."`
		}) (string, error) {
			select {
			case <-time.After(300 * time.Millisecond):
				return "report " + in.Title, nil
			case <-ctx.Done():
				return "", ctx.Err()
			}
		}))
	srv := httptest.NewServer(otcmcp.NewHandler(reg, &otcmcp.Options{Tasks: &tasks.Options{PollInterval: 50 * time.Millisecond}}))
	t.Cleanup(srv.Close)
	return srv.URL
}

// taskNameHeader adds Mcp-Name, the task's id, to the tasks/* requests
// the SDK's transport sends without it.
type taskNameHeader struct{ next http.RoundTripper }

func (h taskNameHeader) RoundTrip(r *http.Request) (*http.Response, error) {
	switch m := r.Header.Get("Mcp-Method"); m {
	case "tasks/get", "tasks/update", "tasks/cancel":
		body, err := io.ReadAll(r.Body)
		if err != nil {
			return nil, err
		}
		var req struct {
			Params struct {
				TaskID string `json:"taskId"`
			} `json:"params"`
		}
		if err := json.Unmarshal(body, &req); err != nil {
			return nil, err
		}
		r = r.Clone(r.Context())
		r.Body = io.NopCloser(bytes.NewReader(body))
		r.Header.Set("Mcp-Name", req.Params.TaskID)
	}
	return h.next.RoundTrip(r)
}

// tasksMeta is the _meta of a 2026-07-28 request from a client that
// declares the tasks extension.
var tasksMeta = map[string]any{
	"io.modelcontextprotocol/protocolVersion":    otcmcp.Version20260728,
	"io.modelcontextprotocol/clientCapabilities": map[string]any{"extensions": map[string]any{otcmcp.ExtensionTasks: map[string]any{}}},
}

// rpc sends one request on conn and reads its response.
func rpc(t *testing.T, ctx context.Context, conn mcp.Connection, id int, method string, params map[string]any) json.RawMessage {
	t.Helper()
	params["_meta"] = tasksMeta
	raw, err := json.Marshal(params)
	require.NoError(t, err)
	rid, err := jsonrpc.MakeID(float64(id))
	require.NoError(t, err)
	require.NoError(t, conn.Write(ctx, &jsonrpc.Request{ID: rid, Method: method, Params: raw}))
	for {
		msg, err := conn.Read(ctx)
		require.NoError(t, err)
		if resp, ok := msg.(*jsonrpc.Response); ok {
			require.Equal(t, rid, resp.ID)
			require.NoError(t, resp.Error, "%s", method)
			return resp.Result
		}
	}
}

func TestSDKConnectionPollsTask(t *testing.T) {
	t.Parallel()
	t.Run("test_server", func(t *testing.T) {
		t.Parallel()
		pollTask(t, taskServer(t), "Report_Build", map[string]any{"title": "Q3"}, 50, `report Q3`)
	})
	// The example server's Timer.Wait is task-optional: a client that
	// declares the extension gets a task (polled every second, its
	// default interval).
	t.Run("example_server", func(t *testing.T) {
		t.Parallel()
		pollTask(t, sharedServer.url+"/mcp", "Timer_Wait", map[string]any{"ms": 1500}, 1000, `1500`)
	})
}

// pollTask calls tool over the SDK's lowest-level connection, declaring
// the tasks extension, and polls the task it gets until it ends with
// want as its text.
func pollTask(t *testing.T, url, tool string, args map[string]any, interval int, want string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	transport := &mcp.StreamableClientTransport{Endpoint: url, MaxRetries: -1,
		HTTPClient: &http.Client{Transport: taskNameHeader{http.DefaultTransport}}}
	conn, err := transport.Connect(ctx)
	require.NoError(t, err)
	defer conn.Close()

	var created struct {
		ResultType     string `json:"resultType"`
		TaskID         string `json:"taskId"`
		Status         string `json:"status"`
		PollIntervalMs int    `json:"pollIntervalMs"`
	}
	raw := rpc(t, ctx, conn, 1, "tools/call", map[string]any{"name": tool, "arguments": args})
	require.NoError(t, json.Unmarshal(raw, &created), "%s", raw)
	require.Equal(t, "task", created.ResultType, "%s", raw)
	assert.Equal(t, "working", created.Status)
	assert.Equal(t, interval, created.PollIntervalMs)
	require.NotEmpty(t, created.TaskID)

	var task struct {
		Status string              `json:"status"`
		Result *mcp.CallToolResult `json:"result"`
	}
	seen := map[string]bool{}
	for id := 2; ; id++ {
		require.Less(t, id, 400, "the task never ended: %v", seen)
		time.Sleep(time.Duration(created.PollIntervalMs) * time.Millisecond)
		raw := rpc(t, ctx, conn, id, "tasks/get", map[string]any{"taskId": created.TaskID})
		require.NoError(t, json.Unmarshal(raw, &task), "%s", raw)
		seen[task.Status] = true
		if task.Status != "working" {
			break
		}
	}
	assert.True(t, seen["working"], "polled while it worked")
	require.Equal(t, "completed", task.Status)
	require.NotNil(t, task.Result, "the result is the SDK's CallToolResult")
	require.Len(t, task.Result.Content, 1)
	assert.Equal(t, want, task.Result.Content[0].(*mcp.TextContent).Text)
}

func TestSDKSessionHasNoTasks(t *testing.T) {
	t.Parallel()
	url := taskServer(t)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	caps := &mcp.ClientCapabilities{}
	caps.AddExtension(otcmcp.ExtensionTasks, nil)
	client := mcp.NewClient(&mcp.Implementation{Name: "sdk-tasks", Version: "1.0.0"}, &mcp.ClientOptions{Capabilities: caps})
	var sendErr error
	client.AddSendingMiddleware(func(next mcp.MethodHandler) mcp.MethodHandler {
		return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
			if method == "tools/call" && sendErr == nil {
				// The SDK's own path cannot send tasks/get.
				_, sendErr = next(ctx, "tasks/get", req)
			}
			return next(ctx, method, req)
		}
	})
	session, err := client.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: url, MaxRetries: -1}, nil)
	require.NoError(t, err)
	defer session.Close()

	res, err := session.CallTool(ctx, &mcp.CallToolParams{Name: "Report_Build", Arguments: map[string]any{"title": "Q4"}})
	require.Error(t, sendErr, "tasks/get is refused before it leaves")
	assert.Contains(t, sendErr.Error(), "not handled")
	// The server made a task; the SDK shows a result without content and
	// has no field for the task's id.
	require.NoError(t, err)
	assert.Empty(t, res.Content, "a CreateTaskResult read as a CallToolResult")
	assert.Nil(t, res.StructuredContent)
}
