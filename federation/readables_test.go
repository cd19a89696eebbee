package federation_test

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/otcgo/otc"
	"github.com/otcgo/otc/client"
	"github.com/otcgo/otc/federation"
	"github.com/otcgo/otc/mcp"
	"github.com/otcgo/otc/prompt"
	"github.com/otcgo/otc/ratelimit"
	"github.com/otcgo/otc/resource"
)

type dayIn struct {
	N int `json:"n" jsonschema:"required,maximum=31,description=The day."`
}

type summaryIn struct {
	Text  string `json:"text" jsonschema:"required,description=What to summarize."`
	Style string `json:"style,omitempty" jsonschema:"enum=short,enum=long,description=How."`
}

// notesOrigin is an MCP server of resources, a template and a prompt;
// extra, when set, registers more.
func notesOrigin(t *testing.T, extra func(*otc.Registry)) (*httptest.Server, *otc.Registry) {
	t.Helper()
	reg := otc.NewRegistry(nil)
	_, err := resource.Register(reg, resource.Resource{URI: "notes://today", Name: "today", MIMEType: "text/markdown"},
		func(context.Context) (string, error) { return "# Today", nil })
	require.NoError(t, err)
	_, err = resource.Register(reg, resource.Resource{URI: "notes://empty", Name: "empty"},
		func(context.Context) (string, error) { return "", nil })
	require.NoError(t, err)
	_, err = resource.RegisterTemplate(reg, resource.Template[dayIn]{URITemplate: "notes://days/{n}", Name: "day"},
		func(_ context.Context, in dayIn) (string, error) { return fmt.Sprintf("day %d", in.N), nil })
	require.NoError(t, err)
	_, err = prompt.Register(reg, prompt.Prompt[summaryIn]{Name: "summarize", Description: "Summarizes text."},
		func(_ context.Context, in summaryIn) (string, error) {
			return "Summarize (" + in.Style + "): " + in.Text, nil
		})
	require.NoError(t, err)
	if extra != nil {
		extra(reg)
	}
	srv := httptest.NewServer(mcp.NewHandler(reg, nil))
	t.Cleanup(srv.Close)
	return srv, reg
}

// TestFederation_Readables: the gateway serves an MCP upstream's
// resources (by their own URIs), its template and its prompt (under the
// upstream's name), forwards reads, renders and completions, applies a
// changed list, and keeps the last lists while the upstream is down.
func TestFederation_Readables(t *testing.T) {
	t.Parallel()
	origin, oreg := notesOrigin(t, nil)
	fed, base, _ := gateway(t, []federation.Upstream{{Name: "notes", URL: origin.URL, Format: client.FormatMCP}}, nil)
	for _, version := range []string{"", mcp.Version20251125} {
		c, err := client.New(base+"/mcp", &client.Options{Format: client.FormatMCP, MCPVersion: version})
		require.NoError(t, err)
		t.Cleanup(func() { c.Close() })
		ctx := t.Context()

		list, err := c.MCP().ListResources(ctx)
		require.NoError(t, err)
		assert.Equal(t, []client.Resource{
			{URI: "notes://empty", Name: "empty"},
			{URI: "notes://today", Name: "today", MIMEType: "text/markdown"},
			{URITemplate: "notes://days/{n}", Name: "day"},
		}, list, version)
		contents, err := c.MCP().ReadResource(ctx, "notes://today")
		require.NoError(t, err)
		assert.Equal(t, []otc.EmbeddedResource{{URI: "notes://today", MIMEType: "text/markdown", Text: "# Today"}}, contents)
		contents, err = c.MCP().ReadResource(ctx, "notes://days/12")
		require.NoError(t, err)
		assert.Equal(t, "day 12", contents[0].Text)

		_, err = c.MCP().ReadResource(ctx, "notes://days/40")
		var rpc *client.RPCError
		require.ErrorAs(t, err, &rpc, "the upstream's refusal of a variable reaches the caller")
		assert.Equal(t, -32602, rpc.Code)
		assert.Contains(t, rpc.Message, "Must be at most 31")
		_, err = c.MCP().ReadResource(ctx, "notes://elsewhere")
		require.ErrorAs(t, err, &rpc)
		assert.JSONEq(t, `{"uri":"notes://elsewhere"}`, string(rpc.Data))

		prompts, err := c.MCP().ListPrompts(ctx)
		require.NoError(t, err)
		require.Len(t, prompts, 1)
		assert.Equal(t, "notes_summarize", prompts[0].Name)
		assert.Len(t, prompts[0].Arguments, 2)
		got, err := c.MCP().GetPrompt(ctx, "notes_summarize", map[string]string{"text": "a long story", "style": "short"})
		require.NoError(t, err)
		assert.Equal(t, "Summarize (short): a long story", got.Messages[0].Content.Text)
		values, _, err := c.MCP().Complete(ctx, client.PromptRef("notes_summarize"), "style", "l", nil)
		require.NoError(t, err)
		assert.Equal(t, []string{"long"}, values, "completion is forwarded")
	}

	// A new resource upstream is served after the next read of its lists;
	// a removed one is gone.
	added, err := resource.Register(oreg, resource.Resource{URI: "notes://new", Name: "new"}, func(context.Context) (string, error) { return "new", nil })
	require.NoError(t, err)
	require.NoError(t, fed.Refresh(t.Context(), "notes"))
	c, err := client.New(base+"/mcp", &client.Options{Format: client.FormatMCP})
	require.NoError(t, err)
	t.Cleanup(func() { c.Close() })
	contents, err := c.MCP().ReadResource(t.Context(), "notes://new")
	require.NoError(t, err)
	assert.Equal(t, "new", contents[0].Text)
	assert.True(t, added.Remove())
	require.NoError(t, fed.Refresh(t.Context(), "notes"))
	_, err = c.MCP().ReadResource(t.Context(), "notes://new")
	require.Error(t, err)

	// Down: the lists stay, and a read says the server is not reached.
	// (The gateway's listen stream to it is a connection Close would wait
	// for: a server going away ends its streams, as mount.Serve's drain
	// does.)
	origin.CloseClientConnections()
	origin.Close()
	require.Error(t, fed.Refresh(t.Context(), "notes"))
	list, err := c.MCP().ListResources(t.Context())
	require.NoError(t, err)
	assert.Len(t, list, 3, "the last good lists are served")
	_, err = c.MCP().ReadResource(t.Context(), "notes://today")
	require.Error(t, err)
	assert.Contains(t, err.Error(), "notes")
}

// TestFederation_ReadablesPolicyAndCollisions: the upstream's local policy
// applies first, and a URI the registry serves already keeps its own
// entry, the upstream's being named in its health.
func TestFederation_ReadablesPolicyAndCollisions(t *testing.T) {
	t.Parallel()
	origin, _ := notesOrigin(t, nil)
	fed, base, _ := gateway(t, []federation.Upstream{{Name: "notes", URL: origin.URL, Format: client.FormatMCP,
		Policy: &otc.Policy{Protocols: []string{"otc"}}}}, func(reg *otc.Registry) {
		_, err := resource.Register(reg, resource.Resource{URI: "notes://today", Name: "local"}, func(context.Context) (string, error) { return "local", nil })
		require.NoError(t, err)
	})
	c, err := client.New(base+"/mcp", &client.Options{Format: client.FormatMCP})
	require.NoError(t, err)
	t.Cleanup(func() { c.Close() })
	list, err := c.MCP().ListResources(t.Context())
	require.NoError(t, err)
	assert.Equal(t, []client.Resource{{URI: "notes://today", Name: "local"}}, list, "the upstream's are for OTC callers only")
	prompts, err := c.MCP().ListPrompts(t.Context())
	require.NoError(t, err)
	assert.Empty(t, prompts)
	_, err = c.MCP().GetPrompt(t.Context(), "notes_summarize", map[string]string{"text": "x"})
	require.Error(t, err)
	h := fed.Health()
	require.Len(t, h, 1)
	assert.Contains(t, strings.Join(h[0].Skipped, "\n"), "a resource at notes://today is registered already")
}

// TestFederation_RelaysResourceUpdates: the gateway subscribes to an
// upstream's resources (resources/subscribe before MCP 2026-07-28, a
// subscriptions/listen stream in it), and an update reaches the
// gateway's own subscribers (here a client over stdio).
func TestFederation_RelaysResourceUpdates(t *testing.T) {
	t.Parallel()
	for name, version := range map[string]string{"2025-11-25": mcp.Version20251125, "2026-07-28": ""} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			up := stdioUpstream(t, "proc")
			if version != "" {
				up.Client = &client.Options{MCPVersion: version}
			}
			relaysUpdates(t, up)
		})
	}
	// Over HTTP, an otc server of the generation of sessions tells of the
	// update on the session's stream.
	t.Run("http_2025-11-25", func(t *testing.T) {
		t.Parallel()
		upReg := otc.NewRegistry(nil)
		state, err := resource.Register(upReg, resource.Resource{URI: "proc://state", Name: "state"},
			func(context.Context) (string, error) { return "on", nil })
		require.NoError(t, err)
		require.NoError(t, otc.Register(upReg, otc.Tool{ID: "Process.Touch", Version: "1.0.0", Description: "Touches the state."},
			func(context.Context, otc.NoOutput) (otc.NoOutput, error) {
				state.Changed()
				return otc.NoOutput{}, nil
			}))
		srv := httptest.NewServer(mcp.NewHandler(upReg, nil))
		t.Cleanup(func() { srv.CloseClientConnections(); srv.Close() })
		relaysUpdates(t, federation.Upstream{Name: "proc", URL: srv.URL, Format: client.FormatMCP, Client: &client.Options{MCPVersion: mcp.Version20251125}})
	})
}

// relaysUpdates mounts up in a gateway, subscribes to its proc://state
// through the gateway over stdio, touches it, and expects the update.
func relaysUpdates(t *testing.T, up federation.Upstream) {
	t.Helper()
	reg := otc.NewRegistry(nil)
	ctx, cancel := context.WithTimeout(t.Context(), 20*time.Second)
	defer cancel()
	fed, err := federation.Mount(ctx, reg, []federation.Upstream{up}, nil)
	require.NoError(t, err)
	t.Cleanup(func() { fed.Close() })

	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	go func() { _ = mcp.Serve(t.Context(), reg, inR, outW, nil); outW.Close() }()
	t.Cleanup(func() { inW.Close() })
	lines := bufio.NewScanner(outR)
	send := func(id int, method string, params any) {
		b, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": id, "method": method, "params": params})
		_, err := inW.Write(append(b, '\n'))
		require.NoError(t, err)
	}
	next := func() map[string]any {
		require.True(t, lines.Scan())
		var m map[string]any
		require.NoError(t, json.Unmarshal(lines.Bytes(), &m))
		return m
	}
	send(1, "initialize", map[string]any{"protocolVersion": mcp.Version20251125, "capabilities": map[string]any{}, "clientInfo": map[string]any{"name": "t", "version": "1"}})
	next()
	send(2, "resources/subscribe", map[string]any{"uri": "proc://state"})
	assert.Contains(t, next(), "result")
	send(3, "tools/call", map[string]any{"name": "proc_Process_Touch", "arguments": map[string]any{}})
	var got []string
	for range 2 {
		m := next()
		if m["method"] != nil {
			got = append(got, fmt.Sprint(m["method"], " ", m["params"]))
		} else {
			got = append(got, "result")
		}
	}
	assert.Contains(t, got, "notifications/resources/updated map[uri:proc://state]", "the upstream's update is relayed")
}

// TestFederation_ReadsRateLimited: the gateway's rate limit (its
// registry's middleware) counts reads, renders and completions as it
// counts calls: 30 of each at once from one caller, with 5 allowed, reach
// the upstream 5 times, not 30.
func TestFederation_ReadsRateLimited(t *testing.T) {
	t.Parallel()
	var reads, renders, completions atomic.Int64
	type dayIn struct {
		N int `json:"n" jsonschema:"required,maximum=31,description=The day."`
	}
	reg := otc.NewRegistry(nil)
	_, err := resource.Register(reg, resource.Resource{URI: "notes://today", Name: "today"},
		func(context.Context) (string, error) { reads.Add(1); return "# Today", nil })
	require.NoError(t, err)
	_, err = resource.RegisterTemplate(reg, resource.Template[dayIn]{URITemplate: "notes://days/{n}", Name: "day",
		Complete: func(context.Context, string, string, dayIn) ([]string, error) {
			completions.Add(1)
			return []string{"1"}, nil
		}},
		func(_ context.Context, in dayIn) (string, error) { return fmt.Sprint(in.N), nil })
	require.NoError(t, err)
	_, err = prompt.Register(reg, prompt.Prompt[summaryIn]{Name: "summarize"},
		func(_ context.Context, in summaryIn) (string, error) { renders.Add(1); return in.Text, nil })
	require.NoError(t, err)
	origin := httptest.NewServer(mcp.NewHandler(reg, nil))
	t.Cleanup(origin.Close)

	limit, err := ratelimit.New(&ratelimit.Options{All: ratelimit.Limit{Rate: 0.001, Burst: 5}})
	require.NoError(t, err)
	srv := mcpGateway(t, otc.NewRegistry(&otc.RegistryOptions{Middleware: []otc.Middleware{limit}}), origin.URL)

	for _, tc := range []struct {
		name    string
		do      func(c *client.Client) error
		counter *atomic.Int64
	}{
		{"read", func(c *client.Client) error { _, err := c.MCP().ReadResource(t.Context(), "notes://today"); return err }, &reads},
		{"render", func(c *client.Client) error {
			_, err := c.MCP().GetPrompt(t.Context(), "notes_summarize", map[string]string{"text": "x"})
			return err
		}, &renders},
		{"complete", func(c *client.Client) error {
			_, _, err := c.MCP().Complete(t.Context(), client.TemplateRef("notes://days/{n}"), "n", "", nil)
			return err
		}, &completions},
	} {
		// Each from an address of its own: a caller of its own, with its
		// own allowance of 5.
		c, err := client.New(srv.URL, &client.Options{Format: client.FormatMCP, HTTPClient: clientFrom(fmt.Sprintf("127.0.0.%d", 10+len(tc.name)))})
		require.NoError(t, err)
		t.Cleanup(func() { c.Close() })
		var wg sync.WaitGroup
		var refused atomic.Int64
		for range 30 {
			wg.Go(func() {
				if err := tc.do(c); err != nil {
					refused.Add(1)
				}
			})
		}
		wg.Wait()
		assert.LessOrEqual(t, tc.counter.Load(), int64(5), "%s: the upstream was reached past the gateway's limit", tc.name)
		assert.GreaterOrEqual(t, refused.Load(), int64(25), tc.name)
	}
}

// clientFrom is an HTTP client whose connections come from the loopback
// address ip, so that a server tells it apart from other callers.
func clientFrom(ip string) *http.Client {
	d := &net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP(ip)}}
	return &http.Client{Transport: &http.Transport{DialContext: d.DialContext}}
}

// TestFederation_PromptQuestionsRelayed: a prompt of an upstream that
// asks its caller a question (elicitation) while it renders has the
// question put to the gateway's caller, and renders with the answer, as
// a tool of the upstream's does.
func TestFederation_PromptQuestionsRelayed(t *testing.T) {
	t.Parallel()
	up := otc.NewRegistry(nil)
	_, err := prompt.Register(up, prompt.Prompt[struct{}]{Name: "ask"}, func(ctx context.Context, _ struct{}) (string, error) {
		var ans struct {
			Topic string `json:"topic" jsonschema:"required"`
		}
		if _, err := otc.Elicit(ctx, "Which topic?", &ans); err != nil {
			return "", err
		}
		return "Explain " + ans.Topic, nil
	})
	require.NoError(t, err)
	origin := httptest.NewServer(mcp.NewHandler(up, nil))
	t.Cleanup(origin.Close)
	srv := mcpGateway(t, otc.NewRegistry(nil), origin.URL)
	var asked atomic.Value
	c, err := client.New(srv.URL, &client.Options{Format: client.FormatMCP, Handlers: &client.Handlers{
		Elicit: func(_ context.Context, req *client.ElicitRequest) (*client.ElicitResult, error) {
			asked.Store(req.Message)
			return &client.ElicitResult{Action: "accept", Content: map[string]any{"topic": "tides"}}, nil
		}}})
	require.NoError(t, err)
	t.Cleanup(func() { c.Close() })
	res, err := c.MCP().GetPrompt(t.Context(), "notes_ask", nil)
	require.NoError(t, err)
	assert.Equal(t, "Which topic?", asked.Load(), "the upstream's question reached the gateway's caller")
	b, _ := json.Marshal(res)
	assert.Contains(t, string(b), "Explain tides")
}

// mcpGateway mounts the MCP server at url as the upstream "notes" on gw,
// and serves gw over MCP.
func mcpGateway(t *testing.T, gw *otc.Registry, url string) *httptest.Server {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 20*time.Second)
	defer cancel()
	fed, err := federation.Mount(ctx, gw, []federation.Upstream{{Name: "notes", URL: url, Format: client.FormatMCP}}, nil)
	require.NoError(t, err)
	t.Cleanup(func() { fed.Close() })
	srv := httptest.NewServer(mcp.NewHandler(gw, nil))
	t.Cleanup(srv.Close)
	return srv
}
