//lint:file-ignore SA1019 logging is deprecated in MCP 2026-07-28 but still part of it, and the bridge forwards it

package mcpsdk_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"maps"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/otcgo/otc"
	otcmcp "github.com/otcgo/otc/mcp"
	"github.com/otcgo/otc/mcpsdk"
)

// callTimeout bounds one exchange; a healthy one takes milliseconds.
const callTimeout = 30 * time.Second

type addInput struct {
	A float64 `json:"a" jsonschema:"description=The first number."`
	B float64 `json:"b" jsonschema:"description=The second number."`
}

type echoInput struct{}

type echoOutput struct {
	CallID string `json:"call_id"`
	UserID string `json:"user_id"`
	Secret string `json:"secret"`
}

type workInput struct {
	Steps int `json:"steps" jsonschema:"description=How many steps to run.,minimum=1,maximum=10"`
}

type ringInput struct {
	DoorbellID string `json:"doorbell_id" jsonschema:"description=The doorbell to ring."`
}

// pngBytes is not a real image; the bytes only have to survive base64.
var pngBytes = []byte{0x89, 'P', 'N', 'G', 0, 1, 2, 0xff}

// newRegistry registers the tools the tests call: values, content blocks,
// requirements, progress and logs, a tool error, and two versions of one
// tool.
func newRegistry(t *testing.T) *otc.Registry {
	t.Helper()
	reg := otc.NewRegistry(nil)
	require.NoError(t, otc.Register(reg, otc.Tool{
		ID: "Calculator.Add", Version: "1.0.0",
		Description: "Adds two numbers.", OutputDescription: "The sum.",
	}, func(ctx context.Context, in addInput) (float64, error) {
		return in.A + in.B, nil
	}))
	require.NoError(t, otc.Register(reg, otc.Tool{
		ID: "Chart.Show", Version: "1.0.0", Description: "Shows a chart.",
	}, func(ctx context.Context, _ struct{}) (otc.Content, error) {
		return otc.Content{
			otc.TextContent("Last week's sales:"),
			otc.ImageContent(pngBytes, "image/png"),
			otc.ResourceContent("file:///notes/sales.md", "text/markdown", "# Sales"),
			otc.BlobResourceContent("file:///sales.bin", "application/octet-stream", []byte{1, 2, 3}),
		}, nil
	}))
	require.NoError(t, otc.Register(reg, otc.Tool{
		ID: "Context.Echo", Version: "1.0.0", Description: "Echoes the call context.",
		Requirements: &otc.Requirements{Secrets: []otc.SecretRequirement{{ID: "API_KEY"}}, UserID: true},
	}, func(ctx context.Context, _ echoInput) (echoOutput, error) {
		secret, _ := otc.Secret(ctx, "API_KEY")
		return echoOutput{CallID: otc.CallID(ctx), UserID: otc.UserID(ctx), Secret: secret}, nil
	}))
	require.NoError(t, otc.Register(reg, otc.Tool{
		ID: "Work.Run", Version: "1.0.0", Description: "Runs steps, reporting each.",
	}, func(ctx context.Context, in workInput) (int, error) {
		for i := 1; i <= in.Steps; i++ {
			otc.ReportProgress(ctx, float64(i), float64(in.Steps), fmt.Sprintf("step %d", i))
			otc.ReportProgress(ctx, float64(i)-0.5, float64(in.Steps), "backwards") // dropped
			otc.LogToClient(ctx, slog.LevelDebug, "below the client's level")
			otc.LogToClient(ctx, slog.LevelInfo, map[string]any{"step": i})
		}
		otc.LogToClient(ctx, slog.LevelWarn, "done")
		return in.Steps, nil
	}))
	require.NoError(t, otc.Register(reg, otc.Tool{
		ID: "Doorbell.Ring", Version: "1.0.0", Description: "Rings a doorbell.",
	}, func(ctx context.Context, in ringInput) (otc.NoOutput, error) {
		if in.DoorbellID != "doorbell42" {
			return otc.NoOutput{}, &otc.ToolError{Message: "Doorbell ID not found", CanRetry: true, RetryAfter: 500 * time.Millisecond}
		}
		return otc.NoOutput{}, nil
	}))
	for _, v := range []string{"1.0.0", "2.0.0"} {
		require.NoError(t, otc.Register(reg, otc.Tool{
			ID: "Versioned.Get", Version: v, Description: "Version " + v + ".",
		}, func(ctx context.Context, _ struct{}) (string, error) {
			return v, nil
		}))
	}
	return reg
}

// mode is a way of serving the SDK server over HTTP, and the protocol
// version its client asks for ("" for the SDK's choice).
type mode struct {
	name      string
	stateless bool
	version   string
	want      string // the version the session must end up speaking
}

var modes = []mode{
	// The SDK serves 2026-07-28 only when stateless.
	{name: "stateless", stateless: true, want: otcmcp.Version20260728},
	// A stateful SDK server turns server/discover down with the versions
	// it speaks; the client falls back to initialize.
	{name: "stateful", want: otcmcp.Version20251125},
	{name: "stateful_2025-06-18", version: otcmcp.Version20250618, want: otcmcp.Version20250618},
}

// bridgeServer returns an SDK server with the registry's tools added.
func bridgeServer(t *testing.T, reg *otc.Registry, opts *mcpsdk.Options) *mcp.Server {
	t.Helper()
	server := mcp.NewServer(&mcp.Implementation{Name: "bridge-test", Version: "1.0.0"}, nil)
	require.NoError(t, mcpsdk.AddTools(server, reg, opts))
	return server
}

// serveSDK serves an SDK server with the SDK's streamable HTTP handler and
// returns its URL.
func serveSDK(t *testing.T, server *mcp.Server, stateless bool) string {
	t.Helper()
	h := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return server },
		&mcp.StreamableHTTPOptions{Stateless: stateless})
	ts := httptest.NewServer(h)
	t.Cleanup(ts.Close)
	return ts.URL
}

// serveNative serves the registry with the native MCP handler, the
// reference the bridge must answer like.
func serveNative(t *testing.T, reg *otc.Registry) string {
	t.Helper()
	ts := httptest.NewServer(otcmcp.NewHandler(reg, nil))
	t.Cleanup(ts.Close)
	return ts.URL
}

// notes collects a session's progress and log notifications.
type notes struct {
	progress chan *mcp.ProgressNotificationParams
	logs     chan *mcp.LoggingMessageParams
}

// connect opens a session of the SDK client and closes it when the test
// ends.
func connect(t *testing.T, url, version string) (*mcp.ClientSession, *notes) {
	t.Helper()
	n := &notes{
		progress: make(chan *mcp.ProgressNotificationParams, 100),
		logs:     make(chan *mcp.LoggingMessageParams, 100),
	}
	client := mcp.NewClient(&mcp.Implementation{Name: "bridge-test-client", Version: "0.0.0"}, &mcp.ClientOptions{
		ProgressNotificationHandler: func(_ context.Context, r *mcp.ProgressNotificationClientRequest) {
			n.progress <- r.Params
		},
		LoggingMessageHandler: func(_ context.Context, r *mcp.LoggingMessageRequest) {
			n.logs <- r.Params
		},
	})
	ctx, cancel := context.WithTimeout(t.Context(), callTimeout)
	defer cancel()
	var opts *mcp.ClientSessionOptions
	if version != "" {
		opts = &mcp.ClientSessionOptions{ProtocolVersion: version}
	}
	cs, err := client.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: url, MaxRetries: -1}, opts)
	require.NoError(t, err)
	t.Cleanup(func() { _ = cs.Close() })
	return cs, n
}

// pair is a session with the bridge and one, in the same protocol
// version, with the native server over the same registry.
type pair struct {
	bridge, native *mcp.ClientSession
	notes          *notes
}

func newPair(t *testing.T, m mode) pair {
	t.Helper()
	reg := newRegistry(t)
	bridge, n := connect(t, serveSDK(t, bridgeServer(t, reg, nil), m.stateless), m.version)
	require.Equal(t, m.want, bridge.InitializeResult().ProtocolVersion)
	native, _ := connect(t, serveNative(t, reg), m.want)
	require.Equal(t, m.want, native.InitializeResult().ProtocolVersion)
	return pair{bridge: bridge, native: native, notes: n}
}

// withoutServerInfo returns a copy of res without the serverInfo that
// the SDK server adds to the _meta of every 2026-07-28 result, and the
// native server only to those of lists: the one difference the bridge
// cannot help.
func withoutServerInfo(res *mcp.CallToolResult) *mcp.CallToolResult {
	c := *res
	c.Meta = maps.Clone(res.Meta)
	delete(c.Meta, "io.modelcontextprotocol/serverInfo")
	if len(c.Meta) == 0 {
		c.Meta = nil
	}
	return &c
}

func callTool(t *testing.T, cs *mcp.ClientSession, params *mcp.CallToolParams) *mcp.CallToolResult {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), callTimeout)
	defer cancel()
	res, err := cs.CallTool(ctx, params)
	require.NoError(t, err, "calling %s", params.Name)
	require.NotNil(t, res)
	return res
}

func callError(t *testing.T, cs *mcp.ClientSession, params *mcp.CallToolParams) *jsonrpc.Error {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), callTimeout)
	defer cancel()
	res, err := cs.CallTool(ctx, params)
	require.Error(t, err, "a JSON-RPC error, not a result: %s", marshal(t, res))
	rpcErr, ok := errors.AsType[*jsonrpc.Error](err)
	require.True(t, ok, "a JSON-RPC error, got %T: %v", err, err)
	return rpcErr
}

func marshal(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	require.NoError(t, err)
	return string(b)
}

// TestAddTools_list checks that the bridge lists the highest version of
// each tool as the native server does, with the registry's schemas.
func TestAddTools_list(t *testing.T) {
	t.Parallel()
	for _, m := range modes {
		t.Run(m.name, func(t *testing.T) {
			t.Parallel()
			p := newPair(t, m)
			ctx, cancel := context.WithTimeout(t.Context(), callTimeout)
			defer cancel()
			got, err := p.bridge.ListTools(ctx, nil)
			require.NoError(t, err)
			want, err := p.native.ListTools(ctx, nil)
			require.NoError(t, err)

			var names []string
			for _, tool := range got.Tools {
				names = append(names, tool.Name)
			}
			assert.Equal(t, []string{"Calculator_Add", "Chart_Show", "Context_Echo", "Doorbell_Ring", "Versioned_Get", "Work_Run"}, names)
			assert.JSONEq(t, marshal(t, want.Tools), marshal(t, got.Tools), "the tools as the native server lists them")
			for _, tool := range got.Tools {
				if tool.Name == "Versioned_Get" {
					assert.Equal(t, "Version 2.0.0.", tool.Description, "the highest version")
				}
			}
		})
	}
}

// TestAddTools_schemaBytes checks that the input schema reaches the wire
// as the registry's bytes, not reflected or re-encoded by the SDK: a
// re-encoded schema would have its keys sorted.
func TestAddTools_schemaBytes(t *testing.T) {
	t.Parallel()
	reg := newRegistry(t)
	url := serveSDK(t, bridgeServer(t, reg, nil), true)
	req, err := http.NewRequestWithContext(t.Context(), http.MethodPost, url,
		strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"tools/list"}`))
	require.NoError(t, err)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("Mcp-Protocol-Version", otcmcp.Version20250618)
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	require.Equal(t, http.StatusOK, resp.StatusCode, "%s", body)

	var checked int
	for _, d := range reg.Tools() {
		if d.Name == "Calculator_Add" {
			require.True(t, bytes.HasPrefix(d.InputSchema.Parameters, []byte(`{"properties"`)),
				"the registry's key order, which sorting would change: %s", d.InputSchema.Parameters)
			assert.Contains(t, string(body), `"inputSchema":`+string(d.InputSchema.Parameters))
			checked++
		}
	}
	assert.Equal(t, 1, checked)
}

// TestAddTools_call checks calls through the bridge against the native
// server's answers to the same calls, and what the answers must say.
func TestAddTools_call(t *testing.T) {
	t.Parallel()
	for _, m := range modes {
		t.Run(m.name, func(t *testing.T) {
			t.Parallel()
			p := newPair(t, m)

			// same calls both servers and requires identical results.
			same := func(t *testing.T, params *mcp.CallToolParams) *mcp.CallToolResult {
				t.Helper()
				got := callTool(t, p.bridge, params)
				want := callTool(t, p.native, params)
				assert.JSONEq(t, marshal(t, withoutServerInfo(want)), marshal(t, withoutServerInfo(got)), "the native server's answer")
				return got
			}

			t.Run("value", func(t *testing.T) {
				res := same(t, &mcp.CallToolParams{Name: "Calculator_Add", Arguments: map[string]any{"a": 2, "b": 3.5}})
				assert.False(t, res.IsError)
				assert.Equal(t, map[string]any{"result": 5.5}, res.StructuredContent)
				require.Len(t, res.Content, 1)
				assert.Equal(t, "5.5", res.Content[0].(*mcp.TextContent).Text)
			})

			t.Run("no_value", func(t *testing.T) {
				res := same(t, &mcp.CallToolParams{Name: "Doorbell_Ring", Arguments: map[string]any{"doorbell_id": "doorbell42"}})
				assert.False(t, res.IsError)
				assert.Empty(t, res.Content)
				assert.Nil(t, res.StructuredContent)
			})

			t.Run("tool_error", func(t *testing.T) {
				res := same(t, &mcp.CallToolParams{Name: "Doorbell_Ring", Arguments: map[string]any{"doorbell_id": "doorbell1"}})
				assert.True(t, res.IsError)
				require.Len(t, res.Content, 1)
				assert.Contains(t, res.Content[0].(*mcp.TextContent).Text, "Doorbell ID not found")
				assert.JSONEq(t, `{"code":"tool_error","can_retry":true,"retry_after_ms":500}`, marshal(t, res.Meta[otcmcp.MetaError]))
			})

			t.Run("invalid_input", func(t *testing.T) {
				res := same(t, &mcp.CallToolParams{Name: "Calculator_Add", Arguments: map[string]any{"a": "two"}})
				assert.True(t, res.IsError)
				require.Len(t, res.Content, 1)
				text := res.Content[0].(*mcp.TextContent).Text
				assert.Contains(t, text, "- a: ")
				assert.Contains(t, text, "- b: ")
				assert.JSONEq(t, `{"code":"invalid_input","can_retry":false,"parameter_errors":{"a":"Must be a number","b":"Is required"}}`,
					marshal(t, res.Meta[otcmcp.MetaError]))
			})

			t.Run("content_blocks", func(t *testing.T) {
				res := same(t, &mcp.CallToolParams{Name: "Chart_Show"})
				assert.False(t, res.IsError)
				assert.Nil(t, res.StructuredContent, "content blocks carry no structured content")
				require.Len(t, res.Content, 4)
				assert.Equal(t, &mcp.TextContent{Text: "Last week's sales:"}, res.Content[0])
				assert.Equal(t, &mcp.ImageContent{Data: pngBytes, MIMEType: "image/png"}, res.Content[1])
				assert.Equal(t, &mcp.EmbeddedResource{Resource: &mcp.ResourceContents{
					URI: "file:///notes/sales.md", MIMEType: "text/markdown", Text: "# Sales",
				}}, res.Content[2])
				assert.Equal(t, &mcp.EmbeddedResource{Resource: &mcp.ResourceContents{
					URI: "file:///sales.bin", MIMEType: "application/octet-stream", Blob: []byte{1, 2, 3},
				}}, res.Content[3])
			})

			t.Run("missing_requirements", func(t *testing.T) {
				res := same(t, &mcp.CallToolParams{Name: "Context_Echo"})
				assert.True(t, res.IsError)
				require.Len(t, res.Content, 1)
				text := res.Content[0].(*mcp.TextContent).Text
				assert.Contains(t, text, "API_KEY")
				assert.Contains(t, text, otcmcp.MetaContext)
				assert.JSONEq(t, `{"code":"server_error","can_retry":false,"missing_requirements":{"secrets":[{"id":"API_KEY"}],"user_id":true}}`,
					marshal(t, res.Meta[otcmcp.MetaError]))
			})

			t.Run("requirements_in_meta", func(t *testing.T) {
				res := same(t, &mcp.CallToolParams{Name: "Context_Echo", Meta: mcp.Meta{
					otcmcp.MetaContext: otc.CallContext{Secrets: []otc.ToolSecret{{ID: "API_KEY", Value: "k-123"}}, UserID: "u1"},
					otcmcp.MetaCallID:  "call-7",
				}})
				require.False(t, res.IsError, "%s", marshal(t, res.Content))
				assert.Equal(t, map[string]any{"call_id": "call-7", "user_id": "u1", "secret": "k-123"}, res.StructuredContent)
			})

			t.Run("unknown_tool", func(t *testing.T) {
				err := callError(t, p.bridge, &mcp.CallToolParams{Name: "Calculator_Subtract"})
				assert.Equal(t, int64(jsonrpc.CodeInvalidParams), err.Code)
				assert.Equal(t, err.Code, callError(t, p.native, &mcp.CallToolParams{Name: "Calculator_Subtract"}).Code)
			})

			// Errors the bridge itself answers, rather than the SDK.
			for _, tc := range []struct {
				name   string
				params *mcp.CallToolParams
				says   string
			}{
				{"arguments_not_object", &mcp.CallToolParams{Name: "Calculator_Add", Arguments: []any{1, 2}}, `"arguments" must be a JSON object`},
				{"context_malformed", &mcp.CallToolParams{Name: "Context_Echo", Meta: mcp.Meta{otcmcp.MetaContext: "k-123"}}, otcmcp.MetaContext},
				{"call_id_not_string", &mcp.CallToolParams{Name: "Calculator_Add", Arguments: map[string]any{"a": 1, "b": 2}, Meta: mcp.Meta{otcmcp.MetaCallID: 7}}, otcmcp.MetaCallID},
			} {
				t.Run(tc.name, func(t *testing.T) {
					err := callError(t, p.bridge, tc.params)
					assert.Equal(t, int64(jsonrpc.CodeInvalidParams), err.Code)
					assert.Contains(t, err.Message, tc.says)
					assert.Equal(t, err.Code, callError(t, p.native, tc.params).Code, "the native server's code")
				})
			}
		})
	}
}

// TestAddTools_notifications checks that progress and log reports reach
// the SDK client: progress when it sent a token, logs at the level it
// chose, and neither a backwards progress nor a log below that level.
func TestAddTools_notifications(t *testing.T) {
	t.Parallel()
	for _, m := range modes {
		t.Run(m.name, func(t *testing.T) {
			t.Parallel()
			reg := newRegistry(t)
			cs, n := connect(t, serveSDK(t, bridgeServer(t, reg, nil), m.stateless), m.version)
			require.Equal(t, m.want, cs.InitializeResult().ProtocolVersion)

			params := &mcp.CallToolParams{Name: "Work_Run", Arguments: map[string]any{"steps": 3}}
			params.SetProgressToken("work-1")
			if m.want >= otcmcp.Version20260728 {
				// 2026-07-28 names the log level in each request.
				params.Meta["io.modelcontextprotocol/logLevel"] = "info"
			} else {
				ctx, cancel := context.WithTimeout(t.Context(), callTimeout)
				defer cancel()
				require.NoError(t, cs.SetLoggingLevel(ctx, &mcp.SetLoggingLevelParams{Level: "info"}))
			}
			res := callTool(t, cs, params)
			require.False(t, res.IsError, "%s", marshal(t, res.Content))
			assert.Equal(t, map[string]any{"result": 3.0}, res.StructuredContent)

			// The client may return the result before its handlers have
			// seen every notification: wait for the last of each.
			var progress []*mcp.ProgressNotificationParams
			var logs []*mcp.LoggingMessageParams
			timeout := time.NewTimer(callTimeout)
			defer timeout.Stop()
			for len(progress) < 3 || len(logs) < 4 {
				select {
				case p := <-n.progress:
					progress = append(progress, p)
				case l := <-n.logs:
					logs = append(logs, l)
				case <-timeout.C:
					require.Failf(t, "missing notifications", "progress %s, logs %s", marshal(t, progress), marshal(t, logs))
				}
			}
			assert.JSONEq(t, `[
				{"progressToken": "work-1", "progress": 1, "total": 3, "message": "step 1"},
				{"progressToken": "work-1", "progress": 2, "total": 3, "message": "step 2"},
				{"progressToken": "work-1", "progress": 3, "total": 3, "message": "step 3"}
			]`, marshal(t, progress), "backwards reports dropped")
			assert.JSONEq(t, `[
				{"level": "info", "data": {"step": 1}},
				{"level": "info", "data": {"step": 2}},
				{"level": "info", "data": {"step": 3}},
				{"level": "warning", "data": "done"}
			]`, marshal(t, logs), "debug messages dropped")
			assert.Empty(t, n.progress, "no more progress")
			assert.Empty(t, n.logs, "no more logs")
		})
	}
}

// TestAddTools_noProgressToken checks that a call without a progress
// token gets no progress notifications.
func TestAddTools_noProgressToken(t *testing.T) {
	t.Parallel()
	reg := newRegistry(t)
	cs, n := connect(t, serveSDK(t, bridgeServer(t, reg, nil), true), "")
	// Logs at "info" mark the end of the call's notifications: once the
	// last one is in, any progress notification would be in before it.
	res := callTool(t, cs, &mcp.CallToolParams{Name: "Work_Run", Arguments: map[string]any{"steps": 2},
		Meta: mcp.Meta{"io.modelcontextprotocol/logLevel": "warning"}})
	require.False(t, res.IsError)
	select {
	case l := <-n.logs:
		assert.Equal(t, "done", l.Data)
	case <-time.After(callTimeout):
		require.Fail(t, "the warning log did not arrive")
	}
	assert.Empty(t, n.progress)
	assert.Empty(t, n.logs)
}

// TestAddTools_filter checks that Options.Filter chooses the tools added.
func TestAddTools_filter(t *testing.T) {
	t.Parallel()
	reg := newRegistry(t)
	var seen []string
	server := bridgeServer(t, reg, &mcpsdk.Options{Filter: func(d otc.ToolDefinition) bool {
		seen = append(seen, d.ID)
		return strings.HasPrefix(d.Name, "Calculator_") || d.Name == "Versioned_Get"
	}})
	cs, _ := connect(t, serveSDK(t, server, true), "")
	assert.Equal(t, []string{"Calculator_Add", "Versioned_Get"}, listNames(t, cs))
	assert.Contains(t, seen, "Versioned.Get@2.0.0", "Filter sees the highest version")
	assert.NotContains(t, seen, "Versioned.Get@1.0.0", "and only it")
}

// TestAddTools_again checks that tools registered after AddTools appear
// once it is called again, and that the tools added before are replaced,
// not doubled.
func TestAddTools_again(t *testing.T) {
	t.Parallel()
	reg := newRegistry(t)
	server := bridgeServer(t, reg, nil)
	url := serveSDK(t, server, true)
	require.NoError(t, otc.Register(reg, otc.Tool{ID: "Calculator.Negate", Version: "1.0.0", Description: "Negates a number."},
		func(ctx context.Context, in struct {
			X float64 `json:"x" jsonschema:"description=The number."`
		}) (float64, error) {
			return -in.X, nil
		}))
	require.NoError(t, otc.Register(reg, otc.Tool{ID: "Versioned.Get", Version: "3.0.0", Description: "Version 3.0.0."},
		func(ctx context.Context, _ struct{}) (string, error) { return "3.0.0", nil }))

	cs, _ := connect(t, url, "")
	assert.NotContains(t, listNames(t, cs), "Calculator_Negate", "not added by itself")

	require.NoError(t, mcpsdk.AddTools(server, reg, nil))
	// A new session: a 2026-07-28 client caches the list it had.
	cs, _ = connect(t, url, "")
	assert.Equal(t, []string{"Calculator_Add", "Calculator_Negate", "Chart_Show", "Context_Echo", "Doorbell_Ring", "Versioned_Get", "Work_Run"}, listNames(t, cs))
	res := callTool(t, cs, &mcp.CallToolParams{Name: "Versioned_Get"})
	assert.Equal(t, map[string]any{"result": "3.0.0"}, res.StructuredContent, "the new highest version")
}

func listNames(t *testing.T, cs *mcp.ClientSession) []string {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), callTimeout)
	defer cancel()
	var names []string
	for tool, err := range cs.Tools(ctx, nil) {
		require.NoError(t, err)
		names = append(names, tool.Name)
	}
	return names
}

// TestAddTools_errors checks the refusals at setup.
func TestAddTools_errors(t *testing.T) {
	t.Parallel()
	t.Run("nil_server", func(t *testing.T) {
		t.Parallel()
		err := mcpsdk.AddTools(nil, otc.NewRegistry(nil), nil)
		assert.ErrorContains(t, err, "mcpsdk: AddTools: the server is nil")
	})
	t.Run("nil_registry", func(t *testing.T) {
		t.Parallel()
		server := mcp.NewServer(&mcp.Implementation{Name: "s"}, nil)
		assert.ErrorContains(t, mcpsdk.AddTools(server, nil, nil), "mcpsdk: AddTools: the registry is nil")
	})
	t.Run("tool_the_sdk_refuses", func(t *testing.T) {
		t.Parallel()
		// The SDK takes x-mcp-header on strings, integers and booleans
		// only; the registry does not check the annotation.
		reg := newRegistry(t)
		require.NoError(t, otc.Register(reg, otc.Tool{
			ID: "Geo.Find", Version: "1.0.0", Description: "Finds a place.",
			InputSchema: json.RawMessage(`{"type":"object","properties":{"lat":{"type":"number","description":"The latitude.","x-mcp-header":"Lat"}}}`),
		}, func(ctx context.Context, in struct {
			Lat float64 `json:"lat" jsonschema:"description=The latitude."`
		}) (string, error) {
			return "here", nil
		}))
		server := mcp.NewServer(&mcp.Implementation{Name: "s"}, nil)
		err := mcpsdk.AddTools(server, reg, nil)
		require.Error(t, err)
		assert.Contains(t, err.Error(), `mcpsdk: AddTools: the SDK refuses tool "Geo_Find"`)
		assert.Contains(t, err.Error(), "x-mcp-header")

		cs, _ := connect(t, serveSDK(t, server, true), "")
		assert.Empty(t, listNames(t, cs), "nothing added")
	})
}

// TestAddTools_policy checks that a tool whose policy keeps it off MCP is
// not added, as the native server does not list it.
func TestAddTools_policy(t *testing.T) {
	t.Parallel()
	reg := newRegistry(t)
	require.NoError(t, otc.Register(reg, otc.Tool{ID: "Calculator.Secret", Version: "1.0.0", Description: "OTC only.",
		Policy: &otc.Policy{Protocols: []string{"otc"}}},
		func(ctx context.Context, _ struct{}) (int, error) { return 1, nil }))
	cs, _ := connect(t, serveSDK(t, bridgeServer(t, reg, nil), true), "")
	assert.NotContains(t, listNames(t, cs), "Calculator_Secret")
	assert.Contains(t, listNames(t, cs), "Calculator_Add")
}
