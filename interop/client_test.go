package interop

// The client package against servers no one here wrote: the MCP Go SDK's
// and mcp-go's servers over Streamable HTTP and over stdio, and a2a-go's
// agent (a2asrv). The same calls, read into the same types, as against an
// otc server (client/formats_test.go). The TypeScript SDKs' servers are
// in client_node_test.go.

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"iter"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	a2av2 "github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/a2aproject/a2a-go/v2/a2asrv"
	mcpgo "github.com/mark3labs/mcp-go/mcp"
	mcpgoserver "github.com/mark3labs/mcp-go/server"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/otcgo/otc"
	"github.com/otcgo/otc/client"
	"github.com/otcgo/otc/export"
)

// foreignStdioEnv, set to "go-sdk" or "mcp-go", makes the test binary that
// SDK's MCP server over stdio (TestMain).
const foreignStdioEnv = "OTC_INTEROP_FOREIGN_STDIO"

// cancelled counts the calls of "slow" whose context the server saw end.
var cancelled atomic.Int64

// sdkServer is an MCP Go SDK server with the tools every foreign server
// here has: add (typed), fail (a tool error), slow (progress, then waits
// for its cancellation).
func sdkServer() *sdk.Server {
	s := sdk.NewServer(&sdk.Implementation{Name: "go-sdk-server", Version: "1"}, nil)
	type addIn struct {
		A float64 `json:"a"`
		B float64 `json:"b"`
	}
	type addOut struct {
		Sum float64 `json:"sum"`
	}
	sdk.AddTool(s, &sdk.Tool{Name: "add", Description: "Adds two numbers."}, func(_ context.Context, _ *sdk.CallToolRequest, in addIn) (*sdk.CallToolResult, addOut, error) {
		return nil, addOut{Sum: in.A + in.B}, nil
	})
	sdk.AddTool(s, &sdk.Tool{Name: "fail", Description: "Fails."}, func(context.Context, *sdk.CallToolRequest, struct{}) (*sdk.CallToolResult, any, error) {
		return &sdk.CallToolResult{IsError: true, Content: []sdk.Content{&sdk.TextContent{Text: "the disk is full"}}}, nil, nil
	})
	sdk.AddTool(s, &sdk.Tool{Name: "slow", Description: "Reports progress and waits."}, func(ctx context.Context, req *sdk.CallToolRequest, _ struct{}) (*sdk.CallToolResult, any, error) {
		if tok := req.Params.GetProgressToken(); tok != nil {
			_ = req.Session.NotifyProgress(ctx, &sdk.ProgressNotificationParams{ProgressToken: tok, Progress: 1, Total: 2, Message: "half way"})
		}
		select {
		case <-ctx.Done():
			cancelled.Add(1)
			return nil, nil, ctx.Err()
		case <-time.After(time.Minute):
			return &sdk.CallToolResult{}, nil, nil
		}
	})
	return s
}

// mcpgoServer is an mcp-go server with the same tools.
func mcpgoServer() *mcpgoserver.MCPServer {
	s := mcpgoserver.NewMCPServer("mcp-go-server", "1")
	s.AddTool(mcpgo.NewTool("add", mcpgo.WithDescription("Adds two numbers."),
		mcpgo.WithNumber("a", mcpgo.Required()), mcpgo.WithNumber("b", mcpgo.Required())),
		func(_ context.Context, req mcpgo.CallToolRequest) (*mcpgo.CallToolResult, error) {
			a, _ := req.RequireFloat("a")
			b, _ := req.RequireFloat("b")
			return mcpgo.NewToolResultText(fmt.Sprint(a + b)), nil
		})
	s.AddTool(mcpgo.NewTool("fail", mcpgo.WithDescription("Fails.")), func(context.Context, mcpgo.CallToolRequest) (*mcpgo.CallToolResult, error) {
		return mcpgo.NewToolResultError("the disk is full"), nil
	})
	s.AddTool(mcpgo.NewTool("slow", mcpgo.WithDescription("Reports progress and waits.")), func(ctx context.Context, req mcpgo.CallToolRequest) (*mcpgo.CallToolResult, error) {
		if req.Params.Meta != nil && req.Params.Meta.ProgressToken != nil {
			_ = mcpgoserver.ServerFromContext(ctx).SendNotificationToClient(ctx, "notifications/progress",
				map[string]any{"progressToken": req.Params.Meta.ProgressToken, "progress": 1, "total": 2, "message": "half way"})
		}
		select {
		case <-ctx.Done():
			cancelled.Add(1)
			return nil, ctx.Err()
		case <-time.After(time.Minute):
			return mcpgo.NewToolResultText("late"), nil
		}
	})
	return s
}

// serveForeignStdio serves the SDK named by foreignStdioEnv over stdio.
func serveForeignStdio(which string) int {
	var err error
	switch which {
	case "go-sdk":
		err = sdkServer().Run(context.Background(), &sdk.StdioTransport{})
	case "mcp-go":
		err = mcpgoserver.ServeStdio(mcpgoServer())
	default:
		err = fmt.Errorf("unknown server %q", which)
	}
	if err != nil && !errors.Is(err, context.Canceled) {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	return 0
}

// foreignClients are clients of each foreign MCP server: go-sdk and
// mcp-go, over HTTP and over stdio.
func foreignClients(t *testing.T) map[string]*client.Client {
	t.Helper()
	out := map[string]*client.Client{}
	gosdk := httptest.NewServer(sdk.NewStreamableHTTPHandler(func(*http.Request) *sdk.Server { return sdkServer() }, nil))
	t.Cleanup(gosdk.Close)
	mcpgoHTTP := httptest.NewServer(mcpgoserver.NewStreamableHTTPServer(mcpgoServer()))
	t.Cleanup(mcpgoHTTP.Close)
	for name, url := range map[string]string{"go-sdk/http": gosdk.URL, "mcp-go/http": mcpgoHTTP.URL + "/mcp"} {
		c, err := client.New(url, &client.Options{Format: client.FormatMCP})
		require.NoError(t, err)
		t.Cleanup(func() { _ = c.Close() })
		out[name] = c
	}
	for _, which := range []string{"go-sdk", "mcp-go"} {
		cmd := exec.Command(os.Args[0], "-test.run=^$")
		cmd.Env = append(os.Environ(), foreignStdioEnv+"="+which)
		c, err := client.NewStdio(cmd, nil)
		require.NoError(t, err)
		t.Cleanup(func() { _ = c.Close() })
		out[which+"/stdio"] = c
	}
	return out
}

// TestClientForeignMCPServers: the client lists and calls the tools of
// the go-sdk's and mcp-go's servers, over HTTP (their sessions kept) and
// over stdio: a value, a tool error, progress, and a cancelled call that
// the server sees cancelled.
func TestClientForeignMCPServers(t *testing.T) {
	for name, c := range foreignClients(t) {
		t.Run(name, func(t *testing.T) {
			ctx := t.Context()
			defs, err := c.ListTools(ctx)
			require.NoError(t, err)
			var names []string
			for _, d := range defs {
				names = append(names, d.Name)
			}
			assert.ElementsMatch(t, []string{"add", "fail", "slow"}, names)
			ts, err := export.New(defs, nil)
			require.NoError(t, err)
			add, _ := ts.Lookup("add")
			assert.Contains(t, string(add.InputSchema.Parameters), `"a"`)

			res, err := c.Call(ctx, "add", map[string]any{"a": 2, "b": 3}, nil)
			require.NoError(t, err)
			text, ok := client.ModelText(res, err)
			require.True(t, ok)
			assert.Contains(t, text, "5")

			_, err = c.Call(ctx, "fail", nil, nil)
			var te *otc.ToolError
			require.ErrorAs(t, err, &te)
			assert.Equal(t, "the disk is full", te.Message)

			_, err = c.Call(ctx, "nope", nil, nil)
			var oe *otc.Error
			if !errors.As(err, &oe) {
				// mcp-go answers an unknown tool as a tool error.
				require.ErrorAs(t, err, &te, "%v", err)
			}

			before := cancelled.Load()
			var progressed atomic.Bool
			cctx, cancel := context.WithCancel(ctx)
			done := make(chan error, 1)
			go func() {
				_, err := c.Call(cctx, "slow", nil, &client.CallOptions{Progress: func(p client.Progress) {
					progressed.Store(p.Message == "half way" && p.Total == 2)
				}})
				done <- err
			}()
			require.Eventually(t, progressed.Load, 10*time.Second, 10*time.Millisecond, "progress reaches the call")
			cancel()
			assert.ErrorIs(t, <-done, context.Canceled)
			if !strings.HasSuffix(name, "/stdio") { // a stdio server's count is its own process's
				require.Eventually(t, func() bool { return cancelled.Load() > before }, 10*time.Second, 10*time.Millisecond, "the server saw the call cancelled")
			}
			// The server still answers after a cancelled call.
			_, err = c.Call(ctx, "add", map[string]any{"a": 1, "b": 1}, nil)
			require.NoError(t, err)
			require.NoError(t, c.Health(ctx))
		})
	}
}

// a2aExecutor is an a2a-go agent: "echo" answers with a message, "task"
// with a task that works, then completes with an artifact, "ask" with a
// task that asks a question, and completes with the answer.
type a2aExecutor struct{}

func (a2aExecutor) Execute(_ context.Context, ec *a2asrv.ExecutorContext) iter.Seq2[a2av2.Event, error] {
	text := ""
	for _, p := range ec.Message.Parts {
		text += p.Text()
		if d := p.Data(); d != nil { // a data part: echoed as JSON
			b, _ := json.Marshal(d)
			text += string(b)
		}
	}
	return func(yield func(a2av2.Event, error) bool) {
		switch {
		case ec.StoredTask != nil: // the answer to the question
			if !yield(a2av2.NewArtifactEvent(ec, a2av2.NewTextPart("hello "+text)), nil) {
				return
			}
			yield(a2av2.NewStatusUpdateEvent(ec, a2av2.TaskStateCompleted, nil), nil)
		case strings.HasPrefix(text, "task"):
			if !yield(a2av2.NewSubmittedTask(ec, ec.Message), nil) {
				return
			}
			if !yield(a2av2.NewStatusUpdateEvent(ec, a2av2.TaskStateWorking, nil), nil) {
				return
			}
			if !yield(a2av2.NewArtifactEvent(ec, a2av2.NewTextPart("done: "+text)), nil) {
				return
			}
			yield(a2av2.NewStatusUpdateEvent(ec, a2av2.TaskStateCompleted, nil), nil)
		case strings.HasPrefix(text, "ask"):
			if !yield(a2av2.NewSubmittedTask(ec, ec.Message), nil) {
				return
			}
			yield(a2av2.NewStatusUpdateEvent(ec, a2av2.TaskStateInputRequired,
				a2av2.NewMessageForTask(a2av2.MessageRoleAgent, ec, a2av2.NewTextPart("What is your name?"))), nil)
		default:
			yield(a2av2.NewMessage(a2av2.MessageRoleAgent, a2av2.NewTextPart("echo: "+text)), nil)
		}
	}
}

func (a2aExecutor) Cancel(_ context.Context, ec *a2asrv.ExecutorContext) iter.Seq2[a2av2.Event, error] {
	return func(yield func(a2av2.Event, error) bool) {
		yield(a2av2.NewStatusUpdateEvent(ec, a2av2.TaskStateCanceled, nil), nil)
	}
}

// TestClientA2AGoAgent: the client lists an a2a-go agent's skills as
// tools taking text, and calls them: a message answer, a task followed to
// its end, a task's question answered by the Elicit handler.
func TestClientA2AGoAgent(t *testing.T) {
	url := a2aGoAgent(t)
	var asked atomic.Value
	c, err := client.Dial(t.Context(), url, &client.Options{Handlers: &client.Handlers{
		Elicit: func(_ context.Context, req *client.ElicitRequest) (*client.ElicitResult, error) {
			asked.Store(req.Message)
			return &client.ElicitResult{Action: "accept", Content: map[string]any{"text": "Ada"}}, nil
		},
	}})
	require.NoError(t, err)
	assert.Equal(t, client.FormatA2A, c.Format(), "found by its card")
	defs, err := c.ListTools(t.Context())
	require.NoError(t, err)
	require.Len(t, defs, 1)
	assert.Equal(t, "echo", defs[0].Name)
	assert.Contains(t, string(defs[0].InputSchema.Parameters), `"text"`)

	res, err := c.Call(t.Context(), "echo", map[string]any{"text": "hi"}, nil)
	require.NoError(t, err)
	assert.JSONEq(t, `"echo: hi"`, string(res.Value))

	var states []string
	res, err = c.Call(t.Context(), "echo", map[string]any{"text": "task one"}, &client.CallOptions{Progress: func(p client.Progress) { states = append(states, p.State) }})
	require.NoError(t, err)
	assert.JSONEq(t, `"done: task one"`, string(res.Value))
	assert.NotEmpty(t, states)

	res, err = c.Call(t.Context(), "echo", map[string]any{"text": "ask me"}, nil)
	require.NoError(t, err)
	assert.JSONEq(t, `"hello Ada"`, string(res.Value))
	assert.Equal(t, "What is your name?", asked.Load())

	// A plain object, as a person or model would send it, goes as the
	// message's data part, not refused for its missing text.
	res, err = c.Call(t.Context(), "echo", map[string]any{"a": 2, "b": 3}, nil)
	require.NoError(t, err)
	assert.JSONEq(t, `"echo: {\"a\":2,\"b\":3}"`, string(res.Value))

	_, err = c.Call(t.Context(), "echo", map[string]any{}, nil)
	var oe *otc.Error
	require.ErrorAs(t, err, &oe)
	assert.Equal(t, otc.CodeInvalidInput, oe.Code)
	assert.Contains(t, oe.ParameterErrors, "text")
}
