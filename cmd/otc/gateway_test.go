package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/otcgo/otc"
	"github.com/otcgo/otc/client"
	"github.com/otcgo/otc/federation"
	"github.com/otcgo/otc/internal/testkit"
	"github.com/otcgo/otc/mcp"
)

func writeConfig(t *testing.T, text string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "gateway.yaml")
	require.NoError(t, os.WriteFile(p, []byte(text), 0o600))
	return p
}

// startGateway runs otc gateway with the file and returns its base URL.
func startGateway(t *testing.T, config string, env map[string]string) string {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	out, errOut := &testkit.SyncBuffer{}, &testkit.SyncBuffer{}
	done := make(chan int, 1)
	getenv := func(k string) string { return env[k] }
	go func() {
		done <- run(ctx, []string{"gateway", "--config", writeConfig(t, config), "--addr", "127.0.0.1:0"}, strings.NewReader(""), out, errOut, getenv)
	}()
	t.Cleanup(func() {
		cancel()
		select {
		case code := <-done:
			assert.Equal(t, exitOK, code, "stderr: %s", errOut.String())
		case <-time.After(15 * time.Second):
			t.Error("otc gateway did not stop")
		}
	})
	serving := regexp.MustCompile(`serving \d+ upstreams on (http://127\.0\.0\.1:\d+)`)
	var base string
	require.Eventually(t, func() bool {
		m := serving.FindStringSubmatch(out.String())
		if m != nil {
			base = m[1]
		}
		return m != nil
	}, 20*time.Second, 20*time.Millisecond, "stdout: %s\nstderr: %s", out, errOut)
	return base
}

// TestGateway serves an OTC upstream and an MCP server run as a process
// (this test binary, as TestMain makes it) from one configuration, over
// every format, with the upstreams' health.
func TestGateway(t *testing.T) {
	origin := serveTools(t, "upstream-key")
	exe, err := os.Executable()
	require.NoError(t, err)
	config := fmt.Sprintf(`
upstreams:
  - name: calc
    otc: {url: %q}
    credentials: {api_key_env: CALC_KEY}
    exclude: ["Signer.*"]
  - name: proc
    mcp:
      command: [%q, "-test.run=^$"]
      env: {%s: "1"}
    rename: {Calculator_Add: add}
`, origin, exe, stdioServerEnv)
	base := startGateway(t, config, map[string]string{"CALC_KEY": "upstream-key", "OTC_API_KEY": "gateway-key"})
	ctx := context.Background()

	for _, c := range []struct {
		path   string
		format client.Format
		tool   string
	}{
		{"/otc", client.FormatOTC, "calc.Calculator_Add"},
		{"/v1", client.FormatREST, "calc_Calculator_Add"},
		{"/mcp", client.FormatMCP, "proc_add"},
		{"/a2a", client.FormatA2A, "proc_add"},
	} {
		cl, err := client.New(base+c.path, &client.Options{Format: c.format, APIKey: "gateway-key"})
		require.NoError(t, err)
		res, err := cl.Call(ctx, c.tool, map[string]float64{"a": 2, "b": 5}, nil)
		require.NoError(t, err, c.path)
		assert.JSONEq(t, "7", string(res.Value), c.path)
		defs, err := cl.ListTools(ctx)
		require.NoError(t, err)
		for _, d := range defs {
			assert.NotContains(t, d.Name, "Signer", "an excluded tool is not served")
		}
		_ = cl.Close()
	}

	// The gateway's own authentication holds: no key, no call.
	anon, err := client.New(base+"/otc", nil)
	require.NoError(t, err)
	_, err = anon.Call(ctx, "calc.Calculator_Add", map[string]float64{"a": 1, "b": 1}, nil)
	require.Error(t, err)

	resp, err := http.Get(base + "/federation/health")
	require.NoError(t, err)
	defer resp.Body.Close()
	var health struct {
		Status    string `json:"status"`
		Upstreams []struct {
			Name, State string
			Tools       int
		} `json:"upstreams"`
	}
	require.NoError(t, json.NewDecoder(resp.Body).Decode(&health))
	assert.Equal(t, "ok", health.Status)
	require.Len(t, health.Upstreams, 2)
	assert.Equal(t, "calc", health.Upstreams[0].Name)
	assert.Equal(t, "up", health.Upstreams[0].State)
	assert.Equal(t, 1, health.Upstreams[1].Tools)

	// otc inspect shows each tool's upstream, over OTC (from the
	// gateway's health) and over MCP (from the tool's _meta too).
	for _, kind := range []string{"otc", "mcp"} {
		args := []string{base + "/otc", "--api-key", "gateway-key"}
		if kind == "mcp" {
			args = []string{"--mcp", base + "/mcp", "--api-key", "gateway-key"}
		}
		a := newInspectAPI(t, startInspect(t, nil, args...))
		resp, body := a.do(t, "GET", "/api/tools?server="+kind, "", nil)
		require.Equal(t, http.StatusOK, resp.StatusCode, body)
		var listed struct {
			Tools []inspectTool `json:"tools"`
		}
		require.NoError(t, json.Unmarshal([]byte(body), &listed))
		require.NotEmpty(t, listed.Tools)
		for _, tl := range listed.Tools {
			require.NotNil(t, tl.Upstream, "%s: %s", kind, tl.ID)
			want := "calc"
			if strings.Contains(tl.ID, "proc") {
				want = "proc"
			}
			assert.Equal(t, want, tl.Upstream.Name, tl.ID)
			assert.Equal(t, "up", tl.Upstream.State, tl.ID)
		}
	}
}

// TestGateway_HostileUpstream: an upstream whose first catalog cannot be
// served (more tools than its max_tools) does not stop the gateway: it
// starts, serves the other upstream, and says the first is down.
func TestGateway_HostileUpstream(t *testing.T) {
	origin := serveTools(t, "")
	config := fmt.Sprintf(`
upstreams:
  - name: calc
    otc: {url: %q}
  - name: big
    otc: {url: %q}
    max_tools: 1
`, origin, origin)
	base := startGateway(t, config, nil)
	cl, err := client.New(base+"/otc", nil)
	require.NoError(t, err)
	res, err := cl.Call(context.Background(), "calc.Calculator_Add", map[string]float64{"a": 2, "b": 5}, nil)
	require.NoError(t, err)
	assert.JSONEq(t, "7", string(res.Value))
	resp, err := http.Get(base + "/federation/health")
	require.NoError(t, err)
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	assert.Contains(t, string(b), `{"name":"big","format":"otc","state":"down","tools":0}`)
}

// TestGateway_ConfigErrors: each mistake names the file's line and the
// field.
func TestGateway_ConfigErrors(t *testing.T) {
	for _, c := range []struct {
		name, config, want string
	}{
		{"unknown_field", "upstreams:\n  - name: a\n    otc: {url: http://x}\n    retries: 3\n", `gateway.yaml:4: retries is not a key of an upstream; it takes name, url, mcp`},
		{"bad_duration", "upstreams:\n  - name: a\n    otc: {url: http://x}\n    timeouts:\n      call: soon\n", `gateway.yaml:5: "soon" is not a duration`},
		{"two_formats", "upstreams:\n  - name: a\n    otc: {url: http://x}\n    a2a: {url: http://y}\n", `upstreams[0] (a) `},
		{"bad_name", "upstreams:\n  - name: a\n    otc: {url: http://x}\n  - name: no good\n    otc: {url: http://y}\n", `gateway.yaml:4: upstreams[1] (no good) name: must be 1 to 64 letters`},
		{"no_url", "upstreams:\n  - name: a\n    otc: {}\n", `gateway.yaml:3: upstreams[0] (a) otc: a url or a command is required`},
		{"command_not_mcp", "upstreams:\n  - name: a\n    a2a: {command: [x]}\n", `gateway.yaml:3: upstreams[0] (a) a2a.command: only an MCP server runs as a process`},
		{"version_not_mcp", "upstreams:\n  - name: a\n    a2a: {url: \"http://x\", version: 2025-11-25}\n", `gateway.yaml:3: upstreams[0] (a) a2a.version: only an MCP upstream's protocol version can be pinned`},
		{"version_unknown", "upstreams:\n  - name: a\n    mcp: {url: \"http://x\", version: 1999-01-01}\n", `gateway.yaml:3: upstreams[0] (a) mcp.version: "1999-01-01" is not an MCP protocol version the client speaks`},
		{"transport_not_mcp", "upstreams:\n  - name: a\n    otc: {url: \"http://x\", transport: sse}\n", `gateway.yaml:3: upstreams[0] (a) otc.transport: only an MCP upstream has a choice of transport`},
		{"transport_unknown", "upstreams:\n  - name: a\n    mcp: {url: \"http://x\", transport: websocket}\n", `gateway.yaml:3: upstreams[0] (a) mcp.transport: "websocket" is not a transport: set "sse"`},
		{"transport_stdio", "upstreams:\n  - name: a\n    mcp: {command: [x], transport: sse}\n", `gateway.yaml:3: upstreams[0] (a) mcp.transport: a server run as a process speaks over its standard input and output`},
		{"transport_stateless", "upstreams:\n  - name: a\n    mcp: {url: \"http://x\", transport: sse, version: 2026-07-28}\n", `gateway.yaml:3: upstreams[0] (a) mcp.version: 2026-07-28 is not spoken over HTTP+SSE`},
		{"rename", "upstreams:\n  - name: a\n    otc: {url: http://x}\n    rename:\n      x: y.z\n", `gateway.yaml:4: upstreams[0] (a) rename: "x" → "y.z"`},
		{"missing_secret", "upstreams:\n  - name: a\n    otc: {url: http://x}\n    credentials:\n      bearer_token_env: NOT_SET_HERE\n", `gateway.yaml:5: upstreams[0] (a) credentials.bearer_token_env: the environment variable NOT_SET_HERE is empty or not set`},
		{"pass_through_audience", "upstreams:\n  - name: a\n    otc: {url: http://x}\n    credentials:\n      pass_through: {}\n", `upstreams[0] (a) credentials.audience: pass_through needs the audience`},
		{"no_upstreams", "upstreams: []\n", `gateway.yaml:1: upstreams: the file names no upstream`},
		{"not_yaml", "upstreams: [\n", `gateway.yaml:1: did not find expected node content`},
		{"json", `{"upstreams": [{"name": "a", "otc": {"url": "http://x"}, "sessions": "many"}]}`, `gateway.yaml:1: sessions: "many" is not a whole number`},
		{"typo", "upstreams:\n  - name: a\n    mcp: {comand: [x]}\n", `gateway.yaml:3: comand is not a key of mcp, a2a, otc and rest (did you mean command?)`},
		{"tab", "upstreams:\n  - name: a\n    otc: {url: http://x}\n  - name: b\n\totc: {url: http://y}\n", `gateway.yaml:5: a tab in the indentation: indent with spaces`},
		{"search_threshold", "upstreams:\n  - name: a\n    otc: {url: http://x}\nmcp:\n  search_threshold: many\n", `gateway.yaml:5: "many" is not a number of tools (0 or more) or off`},
		{"search_threshold_negative", "upstreams:\n  - name: a\n    otc: {url: http://x}\nmcp:\n  search_threshold: -1\n", `gateway.yaml:5: "-1" is not a number of tools`},
		{"mcp_typo", "upstreams:\n  - name: a\n    otc: {url: http://x}\nmcp:\n  pined_tools: [x]\n", `gateway.yaml:5: pined_tools is not a key of the gateway's mcp (did you mean pinned_tools?)`},
		{"duplicate", "upstreams:\n  - name: a\n    otc: {url: http://x}\n  - name: a\n    otc: {url: http://y}\n", `gateway.yaml:4: upstreams[1] (a) name: the name is taken by the upstream at line 2`},
	} {
		t.Run(c.name, func(t *testing.T) {
			var out, errOut bytes.Buffer
			code := run(context.Background(), []string{"gateway", "--config", writeConfig(t, c.config)}, strings.NewReader(""), &out, &errOut, func(string) string { return "" })
			assert.Equal(t, exitBadInput, code)
			assert.Contains(t, errOut.String(), c.want)
			assert.True(t, strings.HasPrefix(errOut.String(), "otc gateway: "), errOut.String())
		})
	}
	// Every mistake at once, each at its line.
	var errOut2 bytes.Buffer
	code := run(context.Background(), []string{"gateway", "--config", writeConfig(t, "upstreams:\n  - name: a\n    otc: {url: http://x}\n    rename: {x: y.z}\n  - name: \"no good\"\n    otc: {url: http://y}\n  - name: c\n    a2a: {command: [x]}\n")},
		strings.NewReader(""), &bytes.Buffer{}, &errOut2, func(string) string { return "" })
	assert.Equal(t, exitBadInput, code)
	for _, want := range []string{"gateway.yaml:4: upstreams[0] (a) rename:", "gateway.yaml:5: upstreams[1] (no good) name:", "gateway.yaml:8: upstreams[2] (c) a2a.command:"} {
		assert.Contains(t, errOut2.String(), want)
	}
	// One error type, one numbering: the file's mistake and Mount's name
	// an upstream alike.
	_, err := federation.LoadConfig(writeConfig(t, "upstreams:\n  - name: a\n    otc: {url: http://x}\n  - name: no good\n    otc: {url: http://y}\n"), func(string) string { return "" })
	var ce *federation.ConfigError
	require.ErrorAs(t, err, &ce)
	assert.Equal(t, 1, ce.Index)
	assert.Equal(t, "name", ce.Field)
	assert.Equal(t, 4, ce.Line)
	_, err = federation.Mount(context.Background(), otc.NewRegistry(nil), []federation.Upstream{{Name: "a", URL: "http://x"}, {Name: "no good", URL: "http://y"}}, nil)
	require.ErrorAs(t, err, &ce)
	assert.Equal(t, 1, ce.Index)
	assert.Contains(t, err.Error(), "federation: upstreams[1] (no good) name:")
	var errOut bytes.Buffer
	assert.Equal(t, exitBadInput, run(context.Background(), []string{"gateway"}, strings.NewReader(""), &bytes.Buffer{}, &errOut, func(string) string { return "" }))
	assert.Contains(t, errOut.String(), "usage: otc gateway --config FILE [--addr HOST:PORT | --stdio]")
}

// TestGateway_ExampleConfig: the configuration the guide points to is one
// the command takes.
func TestGateway_ExampleConfig(t *testing.T) {
	cfg, err := federation.LoadConfig(filepath.Join("..", "..", "examples", "gateway", "gateway.yaml"), func(string) string { return "" })
	require.NoError(t, err)
	ups := cfg.Upstreams
	require.Len(t, ups, 2)
	assert.Equal(t, "calc", ups[0].Name)
	assert.Equal(t, client.FormatOTC, ups[0].Format)
	assert.Equal(t, []string{"go", "run", "./examples/calculator", "-stdio"}, ups[1].Command)
}

// TestGateway_StartsAtOnce: the gateway listens before its upstreams are
// reached: an upstream that is not there yet (its start timeout a minute)
// does not keep the port closed, the health page says it is starting, and
// the upstream that answers is served meanwhile. With --strict, an
// upstream that cannot be reached as it is set up (a command not found)
// fails the start at once, naming it.
func TestGateway_StartsAtOnce(t *testing.T) {
	up := httptest.NewServer(otc.NewHandler(testkit.NewAddRegistry(t), nil))
	t.Cleanup(up.Close)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	dead := ln.Addr().String()
	ln.Close() // nothing listens there
	ln, err = net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	addr := ln.Addr().String()
	ln.Close()

	config := writeConfig(t, "upstreams:\n  - name: calc\n    otc: {url: "+up.URL+"}\n  - name: later\n    otc: {url: http://"+dead+"}\n    timeouts: {start: 1m}\n")
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan int, 1)
	out, errOut := &testkit.SyncBuffer{}, &testkit.SyncBuffer{}
	go func() {
		done <- run(ctx, []string{"gateway", "--config", config, "--addr", addr}, strings.NewReader(""), out, errOut, func(string) string { return "" })
	}()
	t.Cleanup(func() {
		cancel()
		select {
		case <-done:
		case <-time.After(15 * time.Second):
			t.Error("otc gateway did not stop")
		}
	})
	base := "http://" + addr
	var health *http.Response
	require.Eventually(t, func() bool {
		health, err = http.Get(base + gatewayHealthPath)
		return err == nil
	}, 20*time.Second, 20*time.Millisecond, "the port opens before the minute is out; stderr: %s", errOut)
	health.Body.Close()
	assert.Equal(t, http.StatusServiceUnavailable, health.StatusCode, "starting")
	assert.NotContains(t, out.String(), "serving", "Mount is still waiting for the late upstream")
	c, err := client.New(base+"/otc", nil)
	require.NoError(t, err)
	require.Eventually(t, func() bool {
		defs, err := c.ListTools(t.Context())
		return err == nil && len(defs) > 0
	}, 20*time.Second, 20*time.Millisecond, "the upstream that answers is served meanwhile")

	var strictOut bytes.Buffer
	start := time.Now()
	code := run(context.Background(), []string{"gateway", "--strict", "--addr", "127.0.0.1:0", "--config",
		writeConfig(t, "upstreams:\n  - name: gone\n    mcp: {command: [/nonexistent/otc-server]}\n    timeouts: {start: 1m}\n")},
		strings.NewReader(""), &bytes.Buffer{}, &strictOut, func(string) string { return "" })
	assert.Equal(t, exitBadInput, code)
	assert.Less(t, time.Since(start), 30*time.Second, "not the start timeout")
	assert.Contains(t, strictOut.String(), `upstream "gone" cannot be reached as it is set up`)
}

// TestCallPrintsTheCause: a tool error's developer message (a gateway's
// "what happened") is printed on stderr without --json; stdout keeps what
// a model would read.
func TestCallPrintsTheCause(t *testing.T) {
	reg := otc.NewRegistry(nil)
	require.NoError(t, otc.Register(reg, otc.Tool{ID: "Far.Away", Version: "1.0.0", Description: "Fails as a gateway's tool does."},
		func(context.Context, struct{}) (otc.NoOutput, error) {
			return otc.NoOutput{}, &otc.ToolError{Message: "The tool's server (far) cannot be reached just now.", CanRetry: true,
				DeveloperMessage: "federation: upstream far has no client: dial tcp: connection refused"}
		}))
	srv := httptest.NewServer(otc.NewHandler(reg, nil))
	t.Cleanup(srv.Close)
	var out, errOut bytes.Buffer
	code := run(context.Background(), []string{"call", srv.URL, "Far.Away"}, strings.NewReader(""), &out, &errOut, func(string) string { return "" })
	assert.Equal(t, exitToolError, code)
	assert.Contains(t, out.String(), "cannot be reached just now")
	assert.NotContains(t, out.String(), "connection refused", "stdout: what the model reads")
	assert.Contains(t, errOut.String(), "cause: federation: upstream far has no client: dial tcp: connection refused")
}

// TestCallShowsProgress: on a terminal, otc call's spinner line says the
// tool's progress as it comes; piped, nothing of it is written, and
// stdout holds the value alone either way.
func TestCallShowsProgress(t *testing.T) {
	reg := otc.NewRegistry(nil)
	require.NoError(t, otc.Register(reg, otc.Tool{ID: "Job.Steps", Version: "1.0.0", Description: "Reports its steps."},
		func(ctx context.Context, _ struct{}) (string, error) {
			for i := 1; i <= 3; i++ {
				otc.ReportProgress(ctx, float64(i), 3, fmt.Sprintf("step %d", i))
				time.Sleep(150 * time.Millisecond) // for the line to be drawn; the test bounds nothing by it
			}
			return "done", nil
		}))
	srv := httptest.NewServer(mcp.NewHandler(reg, nil))
	t.Cleanup(srv.Close)
	for _, tty := range []bool{true, false} {
		var out, errOut testkit.SyncBuffer
		code := runOn(context.Background(), []string{"call", "--mcp", srv.URL, "Job_Steps"}, strings.NewReader(""), &out, &errOut,
			func(string) string { return "" }, terminalFeatures{spinner: tty})
		require.Equal(t, exitOK, code, "stderr: %s", errOut.String())
		assert.Equal(t, "done\n", out.String())
		if tty {
			assert.Regexp(t, `calling Job_Steps… [123]/3 step [123]`, errOut.String())
		} else {
			assert.Empty(t, errOut.String(), "piped: no progress line")
		}
	}
}

// serveMany serves an OTC registry of n tools, one of which forecasts the
// weather.
func serveMany(t *testing.T, n int) string {
	t.Helper()
	reg := otc.NewRegistry(nil)
	require.NoError(t, otc.Register(reg, otc.Tool{ID: "Weather.Forecast", Version: "1.0.0", Description: "Forecasts the weather of a city for the next days."},
		func(_ context.Context, in struct {
			City string `json:"city" jsonschema:"description=The city."`
		}) (string, error) {
			return "sunny in " + in.City, nil
		}))
	for i := 1; i < n; i++ {
		require.NoError(t, otc.Register(reg, otc.Tool{ID: fmt.Sprintf("Bulk.Tool%02d", i), Version: "1.0.0", Description: fmt.Sprintf("Counts to %d.", i)},
			func(context.Context, struct{}) (int, error) { return i, nil }))
	}
	srv := httptest.NewServer(otc.NewHandler(reg, nil))
	t.Cleanup(srv.Close)
	return srv.URL
}

// mcpToolNames lists the gateway's MCP tools as a model's client would,
// without asking for the full catalog.
func mcpToolNames(t *testing.T, url string) []string {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, url, strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"tools/list"}`))
	require.NoError(t, err)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("MCP-Protocol-Version", mcp.Version20251125)
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	var out struct {
		Result struct {
			Tools []struct {
				Name string `json:"name"`
			} `json:"tools"`
		} `json:"result"`
	}
	require.NoError(t, json.NewDecoder(resp.Body).Decode(&out))
	var names []string
	for _, tl := range out.Result.Tools {
		names = append(names, tl.Name)
	}
	return names
}

// TestGateway_SearchMode: past 50 tools a caller of the gateway's MCP
// endpoint lists the search and call tools; a tool is found and called,
// by its name too; otc's client still lists the whole catalog, and the
// command searches over MCP. The configuration moves the threshold, pins
// tools, or turns it off.
func TestGateway_SearchMode(t *testing.T) {
	upstream := serveMany(t, 60)
	base := startGateway(t, fmt.Sprintf("upstreams:\n  - name: many\n    otc: {url: %q}\n", upstream), nil)
	require.Eventually(t, func() bool { return len(mcpToolNames(t, base+"/mcp")) > 0 }, 20*time.Second, 50*time.Millisecond)
	assert.Equal(t, []string{mcp.SearchToolName, mcp.CallToolName}, mcpToolNames(t, base+"/mcp"), "60 tools: past the default threshold")

	ctx := context.Background()
	c, err := client.New(base+"/mcp", &client.Options{Format: client.FormatMCP})
	require.NoError(t, err)
	defer c.Close()
	all, err := c.ListTools(ctx)
	require.NoError(t, err)
	assert.Len(t, all, 60, "the client mirrors the whole catalog")
	found, err := c.SearchTools(ctx, "weather forecast for Paris", 3)
	require.NoError(t, err)
	require.NotEmpty(t, found)
	assert.Equal(t, "many_Weather_Forecast", found[0].Name)
	res, err := c.Call(ctx, "many_Weather_Forecast", map[string]string{"city": "Paris"}, nil)
	require.NoError(t, err)
	assert.JSONEq(t, `"sunny in Paris"`, string(res.Value))
	res, err = c.Call(ctx, mcp.SearchToolName, map[string]any{"query": "count to 7"}, nil)
	require.NoError(t, err)
	assert.Contains(t, string(res.Value), "many_Bulk_Tool07")
	res, err = c.Call(ctx, mcp.CallToolName, map[string]any{"name": "many_Bulk_Tool07"}, nil)
	require.NoError(t, err)
	assert.JSONEq(t, `7`, string(res.Value))

	// The A2A card's search skill finds among the skills.
	ag, err := client.New(base+"/a2a", &client.Options{Format: client.FormatA2A})
	require.NoError(t, err)
	res, err = ag.Call(ctx, "search_tools", map[string]any{"query": "weather forecast", "limit": 1}, nil)
	require.NoError(t, err)
	assert.Contains(t, string(res.Value), `"name":"many_Weather_Forecast"`)

	code, out, errOut := otcRun(t, base, "", nil, "tools", "--mcp", "URL/mcp", "--search", "weather", "--limit", "1")
	require.Equal(t, exitOK, code, errOut)
	assert.Contains(t, out, "many_Weather_Forecast")

	for _, c := range []struct {
		name, mcpConfig string
		want            int
		pinned          []string
	}{
		{"off", "search_threshold: off", 60, nil},
		{"higher", "search_threshold: 100", 60, nil},
		{"pinned", "search_threshold: 10\n    pinned_tools: [many_Weather_Forecast]", 3, []string{"many_Weather_Forecast"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			base := startGateway(t, fmt.Sprintf("upstreams:\n  - name: many\n    otc: {url: %q}\nmcp:\n    %s\n", upstream, c.mcpConfig), nil)
			var names []string
			require.Eventually(t, func() bool { names = mcpToolNames(t, base+"/mcp"); return len(names) == c.want }, 20*time.Second, 50*time.Millisecond, "%v", names)
			for _, p := range c.pinned {
				assert.Equal(t, p, names[0])
			}
		})
	}
}
