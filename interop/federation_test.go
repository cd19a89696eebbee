package interop

// The federation against upstreams no one here wrote: the MCP Go SDK's and
// mcp-go's servers over Streamable HTTP and stdio, and a2a-go's agent;
// their tools called through the gateway over OTC, REST, MCP and A2A.

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	a2av2 "github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/a2aproject/a2a-go/v2/a2asrv"
	mcpgoserver "github.com/mark3labs/mcp-go/server"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/otcgo/otc"
	"github.com/otcgo/otc/auth"
	"github.com/otcgo/otc/client"
	"github.com/otcgo/otc/federation"
	"github.com/otcgo/otc/mount"
)

// a2aGoAgent serves the a2a-go agent of a2aExecutor and returns its URL.
func a2aGoAgent(t *testing.T) string {
	mux := http.NewServeMux()
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	card := &a2av2.AgentCard{
		Name: "a2a-go agent", Description: "Echoes.", Version: "1",
		SupportedInterfaces: []*a2av2.AgentInterface{a2av2.NewAgentInterface(srv.URL, a2av2.TransportProtocolJSONRPC)},
		DefaultInputModes:   []string{"text/plain"}, DefaultOutputModes: []string{"text/plain"},
		Skills: []a2av2.AgentSkill{{ID: "echo", Name: "echo", Description: "Echoes text.", Tags: []string{"echo"}}},
	}
	mux.Handle(a2asrv.WellKnownAgentCardPath, a2asrv.NewStaticAgentCardHandler(card))
	mux.Handle("/", a2asrv.NewJSONRPCHandler(a2asrv.NewHandler(a2aExecutor{})))
	return srv.URL
}

// federate mounts ups in a registry served on every format, with the
// authenticator given, and returns the gateway's URL.
func federate(t *testing.T, ups []federation.Upstream, authn otc.Authenticator) (*federation.Federation, string) {
	t.Helper()
	reg := otc.NewRegistry(nil)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	fed, err := federation.Mount(ctx, reg, ups, nil)
	require.NoError(t, err)
	t.Cleanup(func() { _ = fed.Close() })
	mux := http.NewServeMux()
	mount.All(mux, reg, &mount.Options{Authenticator: authn})
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	return fed, srv.URL
}

// TestFederationForeignUpstreams: the tools of the go-sdk's and mcp-go's
// servers (HTTP and stdio) and of an a2a-go agent, called through the
// gateway over every format: values, content, tool errors, progress, and
// a cancellation the upstream sees.
func TestFederationForeignUpstreams(t *testing.T) {
	gosdk := httptest.NewServer(sdk.NewStreamableHTTPHandler(func(*http.Request) *sdk.Server { return sdkServer() }, nil))
	t.Cleanup(gosdk.Close)
	mcpgoHTTP := httptest.NewServer(mcpgoserver.NewStreamableHTTPServer(mcpgoServer()))
	t.Cleanup(mcpgoHTTP.Close)
	stdio := func(which string) federation.Upstream {
		return federation.Upstream{Name: strings.ReplaceAll(which, "-", "") + "_stdio", Command: []string{os.Args[0], "-test.run=^$"},
			Env: append(os.Environ(), foreignStdioEnv+"="+which)}
	}
	fed, base := federate(t, []federation.Upstream{
		{Name: "gosdk", URL: gosdk.URL, Format: client.FormatMCP},
		{Name: "mcpgo", URL: mcpgoHTTP.URL + "/mcp"},
		stdio("go-sdk"), stdio("mcp-go"),
		{Name: "agent", URL: a2aGoAgent(t)},
	}, nil)
	for _, h := range fed.Health() {
		require.Equal(t, federation.StateUp, h.State, "%s: %s", h.Name, h.LastError)
		require.Empty(t, h.Skipped, h.Name)
	}

	ctx := context.Background()
	formats := map[string]client.Format{"/otc": client.FormatOTC, "/v1": client.FormatREST, "/mcp": client.FormatMCP, "/a2a": client.FormatA2A}
	for path, format := range formats {
		t.Run(string(format), func(t *testing.T) {
			cl, err := client.New(base+path, &client.Options{Format: format})
			require.NoError(t, err)
			defer cl.Close()
			name := func(id string) string {
				if format == client.FormatOTC {
					return id
				}
				return strings.ReplaceAll(id, ".", "_")
			}
			for _, up := range []string{"gosdk", "gosdk_stdio"} {
				res, err := cl.Call(ctx, name(up+".add"), map[string]float64{"a": 2, "b": 5}, nil)
				require.NoError(t, err, up)
				assert.JSONEq(t, `{"sum":7}`, string(res.Value), up)
			}
			for _, up := range []string{"mcpgo", "mcpgo_stdio"} {
				res, err := cl.Call(ctx, name(up+".add"), map[string]float64{"a": 2, "b": 5}, nil)
				require.NoError(t, err, up)
				text, _ := client.ModelText(res, nil)
				assert.Contains(t, text, "7", up)
			}
			for _, up := range []string{"gosdk", "mcpgo_stdio"} {
				_, err := cl.Call(ctx, name(up+".fail"), map[string]any{}, nil)
				var te *otc.ToolError
				require.True(t, errors.As(err, &te), "%s: %v", up, err)
				assert.Contains(t, te.Message, "the disk is full", up)
			}
			res, err := cl.Call(ctx, name("agent.echo"), map[string]any{"text": "hi"}, nil)
			require.NoError(t, err)
			assert.Contains(t, string(res.Value), "echo: hi")
		})
	}

	// Progress and cancellation cross the hop: a caller over MCP sees the
	// upstream's progress, and its cancellation reaches the upstream.
	cl, err := client.New(base+"/mcp", &client.Options{Format: client.FormatMCP})
	require.NoError(t, err)
	defer cl.Close()
	// (The servers over HTTP: they count in this process.)
	for _, up := range []string{"gosdk", "mcpgo"} {
		before := cancelled.Load()
		cctx, cancel := context.WithCancel(ctx)
		var mu sync.Mutex
		var got []client.Progress
		done := make(chan error, 1)
		go func() {
			_, err := cl.Call(cctx, up+"_slow", map[string]any{}, &client.CallOptions{Progress: func(p client.Progress) {
				mu.Lock()
				got = append(got, p)
				mu.Unlock()
			}})
			done <- err
		}()
		require.Eventually(t, func() bool {
			mu.Lock()
			defer mu.Unlock()
			return len(got) > 0
		}, 10*time.Second, 10*time.Millisecond, "%s: progress reached the caller", up)
		mu.Lock()
		assert.Equal(t, "half way", got[0].Message, up)
		assert.InDelta(t, 1, got[0].Progress, 0, up)
		mu.Unlock()
		cancel()
		require.Error(t, <-done)
		require.Eventually(t, func() bool { return cancelled.Load() > before }, 10*time.Second, 10*time.Millisecond,
			"%s: the upstream saw the call cancelled", up)
	}
}

// TestFederationListChanged: a go-sdk server that adds and removes a tool
// says so (notifications/tools/list_changed); the gateway's catalog
// follows within a second, and a removed tool answers as unknown.
func TestFederationListChanged(t *testing.T) {
	s := sdk.NewServer(&sdk.Implementation{Name: "changing", Version: "1"}, nil)
	type in struct {
		X int `json:"x"`
	}
	sdk.AddTool(s, &sdk.Tool{Name: "first", Description: "The first tool."}, func(context.Context, *sdk.CallToolRequest, in) (*sdk.CallToolResult, any, error) {
		return nil, nil, nil
	})
	srv := httptest.NewServer(sdk.NewStreamableHTTPHandler(func(*http.Request) *sdk.Server { return s }, nil))
	t.Cleanup(srv.Close)
	_, base := federate(t, []federation.Upstream{{Name: "changing", URL: srv.URL, Format: client.FormatMCP, Timeouts: federation.Timeouts{Refresh: time.Hour}}}, nil)
	cl, err := client.New(base+"/otc", nil)
	require.NoError(t, err)
	has := func(name string) bool {
		defs, err := cl.ListTools(context.Background())
		require.NoError(t, err)
		for _, d := range defs {
			if d.Name == name {
				return true
			}
		}
		return false
	}
	require.True(t, has("changing_first"))

	sdk.AddTool(s, &sdk.Tool{Name: "second", Description: "Added later."}, func(context.Context, *sdk.CallToolRequest, in) (*sdk.CallToolResult, any, error) {
		return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: "second here"}}}, nil, nil
	})
	require.Eventually(t, func() bool { return has("changing_second") }, 15*time.Second, 20*time.Millisecond, "visible on list_changed, not at the hour's refresh")
	res, err := cl.Call(context.Background(), "changing.second", map[string]int{"x": 1}, nil)
	require.NoError(t, err)
	text, _ := client.ModelText(res, nil)
	assert.Contains(t, text, "second here")

	// A flood of changes costs a few reads, and the catalog settles.
	for range 50 {
		s.RemoveTools("second")
		sdk.AddTool(s, &sdk.Tool{Name: "second", Description: "Added later."}, func(context.Context, *sdk.CallToolRequest, in) (*sdk.CallToolResult, any, error) {
			return nil, nil, nil
		})
	}
	s.RemoveTools("first")
	require.Eventually(t, func() bool { return !has("changing_first") && has("changing_second") }, 15*time.Second, 20*time.Millisecond)
	_, err = cl.Call(context.Background(), "changing.first", map[string]int{"x": 1}, nil)
	var oe *otc.Error
	require.True(t, errors.As(err, &oe), "%v", err)
	assert.Contains(t, oe.Error(), "changing.first is not registered")
}

// TestFederationFoldedNames: two tools of a foreign server whose names
// fold into one local name are an error naming both (at mount time, for a
// strict mount); a rename settles it.
func TestFederationFoldedNames(t *testing.T) {
	s := sdk.NewServer(&sdk.Implementation{Name: "dashes", Version: "1"}, nil)
	for _, n := range []string{"get-sum", "get_sum"} {
		sdk.AddTool(s, &sdk.Tool{Name: n, Description: "Sums."}, func(context.Context, *sdk.CallToolRequest, struct{}) (*sdk.CallToolResult, any, error) {
			return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: n}}}, nil, nil
		})
	}
	srv := httptest.NewServer(sdk.NewStreamableHTTPHandler(func(*http.Request) *sdk.Server { return s }, nil))
	t.Cleanup(srv.Close)
	_, err := federation.Mount(context.Background(), otc.NewRegistry(nil), []federation.Upstream{{Name: "d", URL: srv.URL, Format: client.FormatMCP}}, &federation.Options{Strict: true})
	var ce *federation.CollisionError
	require.True(t, errors.As(err, &ce), "%v", err)
	assert.Equal(t, "d.get_sum", ce.Tool)
	assert.Contains(t, err.Error(), `"get-sum"`)
	assert.Contains(t, err.Error(), `"get_sum"`)

	_, base := federate(t, []federation.Upstream{{Name: "d", URL: srv.URL, Format: client.FormatMCP, Rename: map[string]string{"get-sum": "dashed"}}}, nil)
	cl, err := client.New(base+"/otc", nil)
	require.NoError(t, err)
	for id, want := range map[string]string{"d.dashed": "get-sum", "d.get_sum": "get_sum"} {
		text, err := cl.CallText(context.Background(), id, nil)
		require.NoError(t, err)
		assert.Contains(t, text, want)
	}
}

// TestFederationSessionsPerCaller: a go-sdk server keeps a session per
// client; two callers of the gateway get two sessions, and one caller
// keeps its own.
func TestFederationSessionsPerCaller(t *testing.T) {
	s := sdk.NewServer(&sdk.Implementation{Name: "sessions", Version: "1"}, nil)
	sdk.AddTool(s, &sdk.Tool{Name: "whoami", Description: "Names the session."}, func(_ context.Context, req *sdk.CallToolRequest, _ struct{}) (*sdk.CallToolResult, any, error) {
		return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: req.Session.ID()}}}, nil, nil
	})
	sdk.AddTool(s, &sdk.Tool{Name: "wait", Description: "Waits until cancelled."}, func(ctx context.Context, _ *sdk.CallToolRequest, _ struct{}) (*sdk.CallToolResult, any, error) {
		<-ctx.Done()
		return nil, nil, ctx.Err()
	})
	srv := httptest.NewServer(sdk.NewStreamableHTTPHandler(func(*http.Request) *sdk.Server { return s }, nil))
	t.Cleanup(srv.Close)
	keys, err := auth.NewAPIKeyAuth(map[string]string{"alice": "key-alice-0123456789", "bob": "key-bob-0123456789"})
	require.NoError(t, err)
	fed, base := federate(t, []federation.Upstream{{Name: "s", URL: srv.URL, Format: client.FormatMCP}}, keys)
	session := func(key string) string {
		cl, err := client.New(base+"/otc", &client.Options{APIKey: key})
		require.NoError(t, err)
		text, err := cl.CallText(context.Background(), "s.whoami", nil)
		require.NoError(t, err)
		require.NotEmpty(t, text)
		return text
	}
	a1, b, a2 := session("key-alice-0123456789"), session("key-bob-0123456789"), session("key-alice-0123456789")
	assert.NotEqual(t, a1, b, "two callers never share a session")
	assert.Equal(t, a1, a2, "a caller keeps its session")

	// An upstream whose format Dial finds is an MCP server all the same:
	// its callers get sessions of their own too.
	_, found := federate(t, []federation.Upstream{{Name: "s", URL: srv.URL}}, keys)
	foundSession := func(key string) string {
		cl, err := client.New(found+"/otc", &client.Options{APIKey: key})
		require.NoError(t, err)
		text, err := cl.CallText(context.Background(), "s.whoami", nil)
		require.NoError(t, err)
		return text
	}
	assert.NotEqual(t, foundSession("key-alice-0123456789"), foundSession("key-bob-0123456789"))

	// A session idle for longer than SessionIdle is closed; the caller's
	// next call opens another.
	idleFed, idle := federate(t, []federation.Upstream{{Name: "s", URL: srv.URL, Format: client.FormatMCP, SessionIdle: time.Second}}, keys)
	idleSession := func() string {
		cl, err := client.New(idle+"/otc", &client.Options{APIKey: "key-bob-0123456789"})
		require.NoError(t, err)
		text, err := cl.CallText(context.Background(), "s.whoami", nil)
		require.NoError(t, err)
		return text
	}
	first := idleSession()
	assert.Equal(t, first, idleSession(), "kept while in use")
	// Closed once idle: the health counts no session (watched, not
	// touched), and the next call opens another.
	require.Eventually(t, func() bool { return idleFed.Health()[0].Sessions == 0 }, 15*time.Second, 20*time.Millisecond, "the idle session is closed")
	assert.NotEqual(t, first, idleSession(), "closed once idle, a new one opened")

	// A call the caller gives up on does not cost it its session.
	cl, err := client.New(base+"/otc", &client.Options{APIKey: "key-alice-0123456789"})
	require.NoError(t, err)
	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	_, err = cl.Call(ctx, "s.wait", nil, nil)
	require.Error(t, err)
	assert.Equal(t, a1, session("key-alice-0123456789"), "the session outlives a cancelled call")
	for _, h := range fed.Health() {
		assert.Equal(t, 2, h.Sessions)
	}
}

// TestFederationTypeScriptUpstreams: the MCP TypeScript SDK's server, over
// Streamable HTTP (with its sessions) and as a process, and an agent built
// with the A2A JavaScript SDK, federated; their tools called through the
// gateway over OTC, MCP and A2A, and a cancellation over the hop that the
// upstream sees (notifications/cancelled).
func TestFederationTypeScriptUpstreams(t *testing.T) {
	url, lines := nodeServer(t, "server-mcp-ts.mjs")
	agent, _ := nodeServer(t, "server-a2a-js.mjs")
	node, dir := frameworkScripts(t)
	fed, base := federate(t, []federation.Upstream{
		{Name: "ts", URL: url},
		{Name: "ts_stdio", Command: []string{node, "server-mcp-ts.mjs", "stdio"}, Dir: dir},
		{Name: "js_agent", URL: agent},
	}, nil)
	for _, h := range fed.Health() {
		require.Equal(t, federation.StateUp, h.State, "%s: %s", h.Name, h.LastError)
	}
	ctx := t.Context()
	for path, format := range map[string]client.Format{"/otc": client.FormatOTC, "/mcp": client.FormatMCP, "/a2a": client.FormatA2A} {
		cl, err := client.New(base+path, &client.Options{Format: format})
		require.NoError(t, err)
		name := func(id string) string {
			if format == client.FormatOTC {
				return id
			}
			return strings.ReplaceAll(id, ".", "_")
		}
		for _, up := range []string{"ts", "ts_stdio"} {
			// Its add declares no output schema: its content blocks are
			// the result (the text "7").
			res, err := cl.Call(ctx, name(up+".add"), map[string]float64{"a": 2, "b": 5}, nil)
			require.NoError(t, err, "%s %s", format, up)
			text, _ := client.ModelText(res, nil)
			assert.Contains(t, text, "7", "%s %s", format, up)
			_, err = cl.Call(ctx, name(up+".fail"), map[string]any{}, nil)
			var te *otc.ToolError
			require.ErrorAs(t, err, &te, "%s %s", format, up)
			assert.Equal(t, "the disk is full", te.Message)
		}
		res, err := cl.Call(ctx, name("js_agent.echo"), map[string]any{"text": "hi"}, nil)
		require.NoError(t, err, format)
		assert.Contains(t, string(res.Value), "echo: hi")
		_ = cl.Close()
	}

	// The SDK's server asks its caller in the middle of a call, over HTTP
	// on the call's stream and over stdio on the process's: the question
	// reaches the gateway's caller either way.
	answer := &client.Handlers{Elicit: func(_ context.Context, req *client.ElicitRequest) (*client.ElicitResult, error) {
		return &client.ElicitResult{Action: "accept", Content: map[string]any{"name": "Ada"}}, nil
	}}
	asker, err := client.New(base+"/mcp", &client.Options{Format: client.FormatMCP, MCPVersion: "2025-11-25", Handlers: answer})
	require.NoError(t, err)
	for _, up := range []string{"ts", "ts_stdio"} {
		text, err := asker.CallText(ctx, up+"_ask", nil)
		require.NoError(t, err, up)
		assert.Equal(t, "hello Ada", text, up)
	}
	_ = asker.Close()

	cl, err := client.New(base+"/mcp", &client.Options{Format: client.FormatMCP})
	require.NoError(t, err)
	defer cl.Close()
	cctx, cancel := context.WithCancel(ctx)
	done := make(chan error, 1)
	var progressed atomic.Bool
	go func() {
		_, err := cl.Call(cctx, "ts_slow", map[string]any{}, &client.CallOptions{Progress: func(p client.Progress) { progressed.Store(p.Message == "half way") }})
		done <- err
	}()
	require.Eventually(t, progressed.Load, frameworkTimeout, 10*time.Millisecond, "the upstream's progress reached the caller")
	cancel()
	require.Error(t, <-done)
	select {
	case line := <-lines:
		assert.Equal(t, "cancelled", line, "the upstream saw notifications/cancelled")
	case <-time.After(10 * time.Second):
		t.Fatal("the upstream did not see the call cancelled")
	}
}

// TestFederationLogs: a go-sdk server's log messages of a call reach the
// gateway's caller over MCP, as the messages of its own call.
func TestFederationLogs(t *testing.T) {
	s := sdk.NewServer(&sdk.Implementation{Name: "chatty", Version: "1"}, nil)
	sdk.AddTool(s, &sdk.Tool{Name: "chatty", Description: "Logs, then answers."}, func(ctx context.Context, req *sdk.CallToolRequest, _ struct{}) (*sdk.CallToolResult, any, error) {
		//lint:ignore SA1019 logging is deprecated from MCP 2026-07-28 on, and still sent in its window: what the gateway forwards
		_ = req.Session.Log(ctx, &sdk.LoggingMessageParams{Level: "warning", Logger: "chatty", Data: "the disk is almost full"})
		return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: "done"}}}, nil, nil
	})
	srv := httptest.NewServer(sdk.NewStreamableHTTPHandler(func(*http.Request) *sdk.Server { return s }, nil))
	t.Cleanup(srv.Close)
	_, base := federate(t, []federation.Upstream{{Name: "c", URL: srv.URL, Format: client.FormatMCP}}, nil)
	for _, v := range []string{"2025-11-25", "2026-07-28"} {
		var mu sync.Mutex
		var logs []string
		cl, err := client.New(base+"/mcp", &client.Options{Format: client.FormatMCP, MCPVersion: v, LogLevel: "info",
			OnNotification: func(method string, params json.RawMessage) {
				if method == "notifications/message" {
					mu.Lock()
					logs = append(logs, string(params))
					mu.Unlock()
				}
			}})
		require.NoError(t, err)
		text, err := cl.CallText(t.Context(), "c_chatty", nil)
		require.NoError(t, err)
		assert.Equal(t, "done", text)
		mu.Lock()
		require.Len(t, logs, 1, v)
		assert.Contains(t, logs[0], `"level":"warning"`)
		assert.Contains(t, logs[0], "the disk is almost full")
		mu.Unlock()
		_ = cl.Close()
	}
}

// TestFederationA2AQuestion: an a2a-go agent's task that asks a question
// (INPUT_REQUIRED) has it put to the gateway's caller over MCP, whose
// answer goes back to the agent.
func TestFederationA2AQuestion(t *testing.T) {
	_, base := federate(t, []federation.Upstream{{Name: "agent", URL: a2aGoAgent(t), Format: client.FormatA2A}}, nil)
	var asked atomic.Value
	cl, err := client.New(base+"/mcp", &client.Options{Format: client.FormatMCP, Handlers: &client.Handlers{
		Elicit: func(_ context.Context, req *client.ElicitRequest) (*client.ElicitResult, error) {
			asked.Store(req.Message)
			return &client.ElicitResult{Action: "accept", Content: map[string]any{"text": "Ada"}}, nil
		},
	}})
	require.NoError(t, err)
	defer cl.Close()
	res, err := cl.Call(t.Context(), "agent_echo", map[string]any{"text": "ask me"}, nil)
	require.NoError(t, err)
	assert.Contains(t, string(res.Value), "hello Ada")
	assert.Equal(t, "What is your name?", asked.Load())
}
