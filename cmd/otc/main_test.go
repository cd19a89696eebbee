package main

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/otcgo/otc"
	"github.com/otcgo/otc/auth"
	"github.com/otcgo/otc/idempotency"
	"github.com/otcgo/otc/mcp"
	"github.com/otcgo/otc/rest"
	"github.com/otcgo/otc/search"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata")

type addInput struct {
	A float64 `json:"a" jsonschema:"description=The first number."`
	B float64 `json:"b" jsonschema:"description=The second number."`
}

type searchInput struct {
	Query string   `json:"query" jsonschema:"description=What to look for."`
	Limit int      `json:"limit,omitempty" jsonschema:"description=How many results.,minimum=1,maximum=50,default=10"`
	Sort  string   `json:"sort,omitempty" jsonschema:"description=The order.,enum=relevance,enum=date"`
	Exact bool     `json:"exact,omitempty" jsonschema:"description=Match exactly."`
	Tags  []string `json:"tags,omitempty" jsonschema:"description=Tags to filter by."`
	Scope struct {
		Site string `json:"site" jsonschema:"description=A site to search."`
	} `json:"scope,omitempty" jsonschema:"description=Where to search."`
}

// registryOf returns the registry serveTools serves.
func registryOf(t *testing.T) *otc.Registry {
	t.Helper()
	reg := otc.NewRegistry(&otc.RegistryOptions{Idempotency: idempotency.NewMemoryStore(nil)})
	require.NoError(t, otc.Register(reg, otc.Tool{ID: "Calculator.Add", Version: "1.0.0", Description: "Adds two numbers together."},
		func(_ context.Context, in addInput) (float64, error) { return in.A + in.B, nil }))
	require.NoError(t, otc.Register(reg, otc.Tool{ID: "Search.Run", Version: "2.1.0", Description: "Searches the documents of the company wiki and returns the best matches, most relevant first."},
		func(_ context.Context, in searchInput) (searchInput, error) { return in, nil }))
	require.NoError(t, otc.Register(reg, otc.Tool{ID: "Doorbell.Ring", Version: "0.1.0", Description: "Rings a doorbell."},
		func(context.Context, struct{}) (otc.NoOutput, error) {
			return otc.NoOutput{}, &otc.ToolError{Message: "Doorbell not found", AdditionalPromptContent: "ids: d1, d2", CanRetry: true, RetryAfter: 500 * time.Millisecond}
		}))
	require.NoError(t, otc.Register(reg, otc.Tool{ID: "Signer.Sign", Version: "1.0.0", Description: "Signs.",
		Requirements: &otc.Requirements{Secrets: []otc.SecretRequirement{{ID: "SIGNING_KEY"}}, UserID: true}},
		func(ctx context.Context, in struct {
			Message string `json:"message" jsonschema:"description=The text."`
		}) (string, error) {
			k, _ := otc.Secret(ctx, "SIGNING_KEY")
			return k + ":" + in.Message + ":" + otc.UserID(ctx), nil
		}))
	return reg
}

// serveTools serves a small registry over OTC, behind an API key when key
// is not empty.
func serveTools(t *testing.T, key string) string {
	t.Helper()
	reg := registryOf(t)
	opts := &otc.HandlerOptions{Search: search.Query}
	if key != "" {
		a, err := auth.NewAPIKeyAuth(map[string]string{"cli": key})
		require.NoError(t, err)
		opts.Authenticator = a
	}
	mux := http.NewServeMux()
	mux.Handle("/mcp", mcp.NewHandler(reg, &mcp.Options{Authenticator: opts.Authenticator}))
	ropts := &rest.Options{Authenticator: opts.Authenticator, Search: search.Query}
	mux.Handle("/v1/", http.StripPrefix("/v1", rest.NewHandler(reg, ropts)))
	mux.Handle("/", otc.NewHandler(reg, opts))
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	return srv.URL
}

// otcRun runs the command with args (URL replaced by url) and returns
// its exit code, stdout and stderr.
func otcRun(t *testing.T, url, stdin string, env map[string]string, args ...string) (int, string, string) {
	t.Helper()
	for i, a := range args {
		if rest, ok := strings.CutPrefix(a, "URL"); ok {
			args[i] = url + rest
		}
	}
	var out, errOut bytes.Buffer
	code := run(context.Background(), args, strings.NewReader(stdin), &out, &errOut, func(k string) string { return env[k] })
	return code, out.String(), errOut.String()
}

func golden(t *testing.T, name, got string) {
	t.Helper()
	path := filepath.Join("testdata", name+".golden")
	if *update {
		require.NoError(t, os.WriteFile(path, []byte(got), 0o644))
		return
	}
	want, err := os.ReadFile(path)
	require.NoError(t, err, "run go test -update ./cmd/otc")
	assert.Equal(t, string(want), got)
}

func TestToolsAndCallOutputs(t *testing.T) {
	url := serveTools(t, "")
	for _, tc := range []struct {
		name  string
		args  []string
		stdin string
		env   map[string]string
		code  int
		out   bool // compare stdout (else stderr) with the golden file
	}{
		{"tools", []string{"tools", "URL"}, "", nil, exitOK, true},
		{"tools_one", []string{"tools", "URL", "Search.Run"}, "", nil, exitOK, true},
		{"tools_by_name", []string{"tools", "URL", "Search_Run"}, "", nil, exitOK, true},
		{"tools_unknown", []string{"tools", "URL", "Nope.Tool"}, "", nil, exitRefused, false},
		{"call_json", []string{"call", "URL", "Calculator.Add", `{"a":10,"b":5}`}, "", nil, exitOK, true},
		{"call_pairs", []string{"call", "URL", "Search.Run", "query=go", "limit=3", "exact=true", `tags=["a"]`, `scope={"site":"x"}`}, "", nil, exitOK, true},
		{"call_stdin", []string{"call", "URL", "Calculator.Add", "-"}, `{"a":1.5,"b":2}`, nil, exitOK, true},
		{"call_invalid", []string{"call", "URL", "Calculator.Add", `{"a":10,"b":"x"}`}, "", nil, exitBadInput, false},
		{"call_pair_type", []string{"call", "URL", "Calculator.Add", "a=ten"}, "", nil, exitBadInput, false},
		{"call_pair_unknown", []string{"call", "URL", "Calculator.Add", "c=1"}, "", nil, exitBadInput, false},
		{"call_tool_error", []string{"call", "URL", "Doorbell.Ring"}, "", nil, exitToolError, true},
		{"call_missing_secret", []string{"call", "URL", "Signer.Sign", "message=hi"}, "", nil, exitRefused, false},
		{"call_secret", []string{"call", "URL", "Signer.Sign", "message=hi", "--secret", "SIGNING_KEY=k", "--user-id", "u1"}, "", nil, exitOK, true},
		{"call_secret_env", []string{"call", "URL", "Signer.Sign", "message=hi", "--secret", "SIGNING_KEY", "--user-id", "u1"}, "", map[string]string{"SIGNING_KEY": "from-env"}, exitOK, true},
		{"call_unknown_tool", []string{"call", "URL", "Nope.Tool", "{}"}, "", nil, exitRefused, false},
		{"call_not_object", []string{"call", "URL", "Calculator.Add", "-"}, "[1]", nil, exitBadInput, false},

		// The same over MCP, where tools are named by name.
		{"mcp_tools", []string{"tools", "--mcp", "URL/mcp"}, "", nil, exitOK, true},
		{"mcp_tools_one", []string{"tools", "--mcp", "URL/mcp", "Search_Run"}, "", nil, exitOK, true},
		{"mcp_call_pairs", []string{"call", "--mcp", "URL/mcp", "Search_Run", "query=go", "limit=3", `tags=["a"]`}, "", nil, exitOK, true},
		{"mcp_call_number", []string{"call", "--mcp", "URL/mcp", "Calculator_Add", "a=1", "b=2"}, "", nil, exitOK, true},
		{"mcp_call_invalid", []string{"call", "--mcp", "URL/mcp", "Calculator_Add", `{"a":10,"b":"x"}`}, "", nil, exitBadInput, false},
		{"mcp_call_tool_error", []string{"call", "--mcp", "URL/mcp", "Doorbell_Ring"}, "", nil, exitToolError, true},
		{"mcp_call_missing_secret", []string{"call", "--mcp", "URL/mcp", "Signer_Sign", "message=hi"}, "", nil, exitRefused, false},
		{"mcp_call_secret", []string{"call", "--mcp", "URL/mcp", "Signer_Sign", "message=hi", "--secret", "SIGNING_KEY=k", "--user-id", "u1"}, "", nil, exitOK, true},
		{"mcp_call_unknown_tool", []string{"call", "--mcp", "URL/mcp", "Nope_Tool", "{}"}, "", nil, exitRefused, false},

		// And over the REST view.
		{"rest_tools", []string{"tools", "--rest", "URL/v1"}, "", nil, exitOK, true},
		{"rest_tools_one", []string{"tools", "--rest", "URL/v1", "Search_Run"}, "", nil, exitOK, true},
		{"rest_tools_unknown", []string{"tools", "--rest", "URL/v1", "Nope_Tool"}, "", nil, exitRefused, false},
		{"rest_call_pairs", []string{"call", "--rest", "URL/v1", "Calculator_Add", "a=1", "b=2"}, "", nil, exitOK, true},
		{"rest_call_invalid", []string{"call", "--rest", "URL/v1", "Calculator_Add", `{"a":10,"b":"x"}`}, "", nil, exitBadInput, false},
		{"rest_call_tool_error", []string{"call", "--rest", "URL/v1", "Doorbell_Ring"}, "", nil, exitToolError, true},
		{"rest_call_missing_secret", []string{"call", "--rest", "URL/v1", "Signer_Sign", "message=hi"}, "", nil, exitRefused, false},
		{"rest_call_secret", []string{"call", "--rest", "URL/v1", "Signer_Sign", "message=hi", "--secret", "SIGNING_KEY=k", "--user-id", "u1"}, "", nil, exitOK, true},
		{"rest_call_unknown_tool", []string{"call", "--rest", "URL/v1", "Nope_Tool", "{}"}, "", nil, exitRefused, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, out, errOut := otcRun(t, url, tc.stdin, tc.env, tc.args...)
			assert.Equal(t, tc.code, code, "stdout: %s\nstderr: %s", out, errOut)
			if tc.out {
				golden(t, tc.name, out)
			} else {
				golden(t, tc.name, strings.ReplaceAll(errOut, url, "URL"))
			}
		})
	}
}

func TestCallJSONAndCallID(t *testing.T) {
	url := serveTools(t, "")
	code, out, _ := otcRun(t, url, "", nil, "call", "URL", "Calculator.Add", "a=1", "b=2", "--json", "--call-id", "cli-1")
	require.Equal(t, exitOK, code)
	assert.Contains(t, out, `"call_id": "cli-1"`)
	assert.Contains(t, out, `"value": 3`)
	code, out, _ = otcRun(t, url, "", nil, "call", "URL", "Doorbell.Ring", "--json")
	require.Equal(t, exitToolError, code)
	assert.Contains(t, out, `"success": false`)
	assert.Contains(t, out, `"can_retry": true`)
	code, out, _ = otcRun(t, url, "", nil, "tools", "URL", "--json")
	require.Equal(t, exitOK, code)
	assert.Contains(t, out, `"id": "Calculator.Add@1.0.0"`)

	// Over MCP the call id travels in _meta, and is replayed too.
	for range 2 {
		code, out, _ = otcRun(t, url, "", nil, "call", "--mcp", "URL/mcp", "Calculator_Add", "a=1", "b=2", "--json", "--call-id", "cli-mcp")
		require.Equal(t, exitOK, code)
		assert.Contains(t, out, `"call_id": "cli-mcp"`)
		assert.Contains(t, out, `"value": 3`)
	}
	code, _, errOut := otcRun(t, url, "", nil, "call", "--mcp", "URL/mcp", "Calculator_Add", "a=5", "b=2", "--call-id", "cli-mcp")
	assert.Equal(t, exitRefused, code)
	assert.Contains(t, errOut, "The call_id was already used for a different call")

	// Over REST, as X-Request-Id.
	for range 2 {
		code, out, _ = otcRun(t, url, "", nil, "call", "--rest", "URL/v1", "Calculator_Add", "a=1", "b=2", "--json", "--call-id", "cli-rest")
		require.Equal(t, exitOK, code)
		assert.Contains(t, out, `"call_id": "cli-rest"`)
	}
	code, _, errOut = otcRun(t, url, "", nil, "call", "--rest", "URL/v1", "Calculator_Add", "a=5", "b=2", "--call-id", "cli-rest")
	assert.Equal(t, exitRefused, code)
	assert.Contains(t, errOut, "The call_id was already used for a different call")

	code, _, errOut = otcRun(t, url, "", nil, "tools", "--rest", "--mcp", "URL")
	assert.Equal(t, exitBadInput, code)
	assert.Contains(t, errOut, "give one of --mcp, --rest, --a2a and --stdio")
}

func TestCredentials(t *testing.T) {
	url := serveTools(t, "cli-secret-key")
	code, _, errOut := otcRun(t, url, "", nil, "tools", "URL")
	assert.Equal(t, exitRefused, code)
	assert.Contains(t, errOut, "otc tools:")
	code, _, _ = otcRun(t, url, "", nil, "tools", "URL", "--api-key", "cli-secret-key")
	assert.Equal(t, exitOK, code)
	code, _, _ = otcRun(t, url, "", map[string]string{"OTC_API_KEY": "cli-secret-key"}, "call", "URL", "Calculator.Add", "a=1", "b=1")
	assert.Equal(t, exitOK, code, "the key from the environment")
	code, _, errOut = otcRun(t, url, "", nil, "tools", "--mcp", "URL/mcp")
	assert.Equal(t, exitRefused, code, "MCP without the key: %s", errOut)
	assert.Contains(t, errOut, "Authentication required: send an API key", "the server's own words")
	code, _, _ = otcRun(t, url, "", nil, "tools", "--mcp", "URL/mcp", "--api-key", "cli-secret-key")
	assert.Equal(t, exitOK, code)
	code, _, errOut = otcRun(t, url, "", nil, "tools", "--rest", "URL/v1")
	assert.Equal(t, exitRefused, code, "REST without the key: %s", errOut)
	code, _, _ = otcRun(t, url, "", nil, "tools", "--rest", "URL/v1", "--api-key", "cli-secret-key")
	assert.Equal(t, exitOK, code)
}

func TestTransportAndUsage(t *testing.T) {
	code, _, errOut := otcRun(t, "http://127.0.0.1:1", "", nil, "tools", "URL")
	assert.Equal(t, exitTransport, code)
	assert.Contains(t, errOut, "connection refused")

	notOTC := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html")
		_, _ = w.Write([]byte("<html>a proxy</html>"))
	}))
	t.Cleanup(notOTC.Close)
	code, _, errOut = otcRun(t, notOTC.URL, "", nil, "tools", "URL")
	assert.Equal(t, exitTransport, code, errOut)

	for _, args := range [][]string{{}, {"nope"}, {"tools"}, {"call", "http://x"}, {"tools", "--bogus"}} {
		code, _, _ = otcRun(t, "", "", nil, args...)
		assert.Equal(t, exitBadInput, code, "%v", args)
	}
	code, out, _ := otcRun(t, "", "", nil, "help")
	assert.Equal(t, exitOK, code)
	assert.Contains(t, out, "Exit codes:")
	assert.True(t, slices.ContainsFunc(strings.Split(out, "\n"), func(l string) bool {
		return strings.Contains(l, "otc call http://127.0.0.1:8080 Calculator.Add a=10 b=5")
	}))
}

// TestMCPAnswersAsEvents: a server that answers in an SSE stream, with a
// notification first, and one whose cursors never end.
// fakeMCP is an MCP server of the 2025-11-25 handshake whose answers to
// every other request answer writes (id is the request's).
func fakeMCP(t *testing.T, answer func(w http.ResponseWriter, id string)) string {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var msg struct {
			ID     json.RawMessage `json:"id"`
			Method string          `json:"method"`
		}
		_ = json.NewDecoder(r.Body).Decode(&msg)
		switch {
		case msg.Method == "server/discover":
			w.Header().Set("Content-Type", "application/json")
			_, _ = fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%s,"error":{"code":-32601,"message":"Method not found"}}`, msg.ID)
		case msg.Method == "initialize":
			w.Header().Set("Content-Type", "application/json")
			_, _ = fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%s,"result":{"protocolVersion":"2025-11-25","capabilities":{"tools":{}},"serverInfo":{"name":"fake","version":"1"}}}`, msg.ID)
		case len(msg.ID) == 0:
			w.WriteHeader(http.StatusAccepted)
		default:
			answer(w, string(msg.ID))
		}
	}))
	t.Cleanup(srv.Close)
	return srv.URL
}

func TestMCPAnswersAsEvents(t *testing.T) {
	sse := fakeMCP(t, func(w http.ResponseWriter, id string) {
		w.Header().Set("Content-Type", "text/event-stream")
		_, _ = w.Write([]byte("event: message\ndata: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/message\",\"params\":{}}\n\n" +
			"event: message\ndata: {\"jsonrpc\":\"2.0\",\"id\":" + id + ",\"result\":{\"tools\":[{\"name\":\"Echo\",\"description\":\"Echoes.\",\"inputSchema\":{\"type\":\"object\"}}]}}\n\n"))
	})
	code, out, errOut := otcRun(t, sse, "", nil, "tools", "--mcp", "URL")
	require.Equal(t, exitOK, code, errOut)
	assert.Contains(t, out, "Echo  Echoes.")

	endless := fakeMCP(t, func(w http.ResponseWriter, id string) {
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(`{"jsonrpc":"2.0","id":` + id + `,"result":{"tools":[],"nextCursor":"again"}}`))
	})
	code, _, errOut = otcRun(t, endless, "", nil, "tools", "--mcp", "URL")
	assert.Equal(t, exitTransport, code)
	assert.Contains(t, errOut, "more than 100 pages")

	html := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html")
		_, _ = w.Write([]byte("<html>not here</html>"))
	}))
	t.Cleanup(html.Close)
	code, _, errOut = otcRun(t, html.URL, "", nil, "tools", "--mcp", "URL")
	assert.Equal(t, exitTransport, code)
	assert.Contains(t, errOut, "unexpected response 200 OK")
	assert.Contains(t, errOut, "text/html")
}

func TestTerminalFeatures(t *testing.T) {
	env := func(m map[string]string) func(string) string { return func(k string) string { return m[k] } }
	assert.Equal(t, terminalFeatures{color: true, spinner: true, stdoutTTY: true, stderrTTY: true}, terminal(true, true, env(nil)))
	assert.Equal(t, terminalFeatures{spinner: true, stdoutTTY: true, stderrTTY: true}, terminal(true, true, env(map[string]string{"NO_COLOR": "1"})), "NO_COLOR")
	assert.Equal(t, terminalFeatures{spinner: true, stderrTTY: true}, terminal(false, true, env(nil)), "output piped")
	assert.Equal(t, terminalFeatures{}, terminal(false, false, env(nil)))

	// With colour, the table's header is bold and a tool error red; the
	// columns still line up.
	url := serveTools(t, "")
	var out, errOut bytes.Buffer
	code := runOn(context.Background(), []string{"tools", url}, strings.NewReader(""), &out, &errOut, env(nil), terminalFeatures{color: true, stdoutTTY: true, stderrTTY: true})
	require.Equal(t, exitOK, code)
	lines := strings.Split(out.String(), "\n")
	assert.Equal(t, styleBold+"ID                    NAME            DESCRIPTION"+styleReset, lines[0])
	out.Reset()
	code = runOn(context.Background(), []string{"call", url, "Doorbell.Ring"}, strings.NewReader(""), &out, &errOut, env(nil), terminalFeatures{color: true, stdoutTTY: true, stderrTTY: true})
	require.Equal(t, exitToolError, code)
	assert.True(t, strings.HasPrefix(out.String(), styleRed+"Tool error:"+styleReset), out.String())
}

// TestSpinner: a call that takes over a second shows a spinner on
// standard error, cleared when the answer comes; a quick one shows none.
func TestSpinner(t *testing.T) {
	reg := otc.NewRegistry(nil)
	require.NoError(t, otc.Register(reg, otc.Tool{ID: "Slow.Wait", Version: "1.0.0", Description: "Waits."},
		func(_ context.Context, in struct {
			Ms int `json:"ms" jsonschema:"description=How long."`
		}) (int, error) {
			time.Sleep(time.Duration(in.Ms) * time.Millisecond)
			return in.Ms, nil
		}))
	srv := httptest.NewServer(otc.NewHandler(reg, &otc.HandlerOptions{Search: search.Query}))
	t.Cleanup(srv.Close)
	env := func(string) string { return "" }

	var out, errOut bytes.Buffer
	code := runOn(context.Background(), []string{"call", srv.URL, "Slow.Wait", "ms=1400"}, strings.NewReader(""), &out, &errOut, env, terminalFeatures{spinner: true})
	require.Equal(t, exitOK, code)
	assert.Contains(t, errOut.String(), "calling Slow.Wait…")
	assert.True(t, strings.HasSuffix(errOut.String(), "\r\x1b[K"), "the line is cleared: %q", errOut.String())
	assert.Equal(t, "1400\n", out.String())

	errOut.Reset()
	code = runOn(context.Background(), []string{"call", srv.URL, "Slow.Wait", "ms=0"}, strings.NewReader(""), &out, &errOut, env, terminalFeatures{spinner: true})
	require.Equal(t, exitOK, code)
	assert.Empty(t, errOut.String(), "no spinner for a quick call")
}

// TestCallRateLimited: a call the server refuses for now (429 with
// Retry-After) exits 7, saying when to try again.
func TestCallRateLimited(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("Retry-After", "42")
		w.WriteHeader(http.StatusTooManyRequests)
		_, _ = w.Write([]byte(`{"message":"Rate limit exceeded: try again later"}`))
	}))
	t.Cleanup(srv.Close)
	code, _, errOut := otcRun(t, srv.URL, "", nil, "call", "URL", "Calculator.Add", "a=1", "b=2")
	assert.Equal(t, exitBusy, code)
	assert.Contains(t, errOut, "Rate limit exceeded")
	assert.Contains(t, errOut, "try again after 42s")
}

// TestToolsSearch: otc tools --search asks the server's search.
func TestToolsSearch(t *testing.T) {
	url := serveTools(t, "")
	code, out, errOut := otcRun(t, url, "", nil, "tools", "URL", "--search", "add two numbers", "--limit", "1")
	require.Equal(t, exitOK, code, errOut)
	lines := strings.Split(strings.TrimSpace(out), "\n")
	require.Len(t, lines, 2, "a header and one tool: %s", out)
	assert.Contains(t, lines[1], "Calculator.Add")

	code, out, errOut = otcRun(t, url, "", nil, "tools", "URL", "--search", "sign a message", "--json")
	require.Equal(t, exitOK, code, errOut)
	var defs []otc.ToolDefinition
	require.NoError(t, json.Unmarshal([]byte(out), &defs))
	require.NotEmpty(t, defs)
	assert.Equal(t, "Signer.Sign@1.0.0", defs[0].ID)

	code, _, errOut = otcRun(t, url, "", nil, "tools", "URL", "--search", "add", "--limit", "1000")
	assert.NotEqual(t, exitOK, code)
	assert.Contains(t, errOut, "limit")

	code, _, errOut = otcRun(t, url, "", nil, "tools", "--rest", "URL/v1", "--search", "add")
	assert.Equal(t, exitBadInput, code)
	assert.Contains(t, errOut, "--search asks an OTC server's search")
	// An MCP server without search mode declares no tools.dynamic.
	code, _, errOut = otcRun(t, url, "", nil, "tools", "--mcp", "URL/mcp", "--search", "add")
	assert.NotEqual(t, exitOK, code)
	assert.Contains(t, errOut, "offers no search")
}
