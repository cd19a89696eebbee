package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/otcgo/otc"
	"github.com/otcgo/otc/auth"
	"github.com/otcgo/otc/mount"
)

// checkAgainst runs otc check against h and returns its exit code and
// output.
func checkAgainst(t *testing.T, h http.Handler, args ...string) (int, string) {
	t.Helper()
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	code, out, errOut := otcRun(t, srv.URL, "", nil, append([]string{"check", "URL"}, args...)...)
	return code, out + errOut
}

// conforming is this library's handler, with the tools of serveTools.
func conforming(t *testing.T, opts *otc.HandlerOptions) http.Handler {
	t.Helper()
	reg := otc.NewRegistry(nil)
	require.NoError(t, otc.Register(reg, otc.Tool{ID: "Calculator.Add", Version: "1.0.0", Description: "Adds two numbers together."},
		func(_ context.Context, in addInput) (float64, error) { return in.A + in.B, nil }))
	return otc.NewHandler(reg, opts)
}

func TestCheckPassesAgainstTheLibrary(t *testing.T) {
	code, out := checkAgainst(t, conforming(t, nil), "--tool", "Calculator.Add@1.0.0", "--input", `{"a":1,"b":2}`)
	assert.Equal(t, exitOK, code, out)
	assert.Contains(t, out, "20 passed, 0 failed, 1 skipped", "all but authentication, which needs credentials")
	assert.Contains(t, out, "PASS  invalid input")

	a, err := auth.NewAPIKeyAuth(map[string]string{"check": "check-key"})
	require.NoError(t, err)
	code, out = checkAgainst(t, conforming(t, &otc.HandlerOptions{Authenticator: a}), "--api-key", "check-key")
	assert.Equal(t, exitOK, code, out)
	assert.Contains(t, out, "PASS  authentication required")
	assert.Contains(t, out, "SKIP  calls: calls no tool unless named")
	assert.Contains(t, out, "SKIP  invalid input: calls no tool unless named")

	code, out = checkAgainst(t, conforming(t, nil), "--json")
	assert.Equal(t, exitOK, code, out)
	assert.Contains(t, out, `"failed": 0`)
}

// broken wraps the conforming handler, letting change answer instead
// for the requests it picks.
func broken(t *testing.T, change func(w http.ResponseWriter, r *http.Request, body []byte) bool) http.Handler {
	ok := conforming(t, nil)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		if change(w, r, body) {
			return
		}
		r.Body = io.NopCloser(bytes.NewReader(body))
		ok.ServeHTTP(w, r)
	})
}

func writeJSON(w http.ResponseWriter, status int, body string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_, _ = io.WriteString(w, body)
}

func TestCheckReportsEachBrokenRule(t *testing.T) {
	for _, tc := range []struct {
		name   string
		server func(w http.ResponseWriter, r *http.Request, body []byte) bool
		want   []string
	}{
		{"catalog without $schema", func(w http.ResponseWriter, r *http.Request, body []byte) bool {
			if r.Method == http.MethodGet && r.URL.Path == "/tools" && len(body) == 0 {
				writeJSON(w, 200, `{"tools":[]}`)
				return true
			}
			return false
		}, []string{"FAIL  catalog", `seen: $schema "" is not a spelling of 1.0`}},
		{"bad catalog entry", func(w http.ResponseWriter, r *http.Request, body []byte) bool {
			if r.Method == http.MethodGet && r.URL.Path == "/tools" && len(body) == 0 {
				writeJSON(w, 200, `{"$schema":"otc://1.0","tools":[{"id":"Add@1","name":"add tool","description":"","version":"1",
					"input_schema":{"parameters":{"type":"object","properties":{"a":{"type":"number"}}}}}]}`)
				return true
			}
			return false
		}, []string{"FAIL  catalog entries", "id is not Toolkit.Tool@x.y.z", `name "add tool" does not match`, "no description", `parameter "a" has no description`, "no output_schema"}},
		{"catalog out of order", func(w http.ResponseWriter, r *http.Request, body []byte) bool {
			if r.Method == http.MethodGet && r.URL.Path == "/tools" && len(body) == 0 {
				entry := func(id, version string) string {
					return `{"id":"` + id + `@` + version + `","name":"X_Y","description":"d","version":"` + version + `","input_schema":{"parameters":{"type":"object","properties":{}}},"output_schema":null}`
				}
				writeJSON(w, 200, `{"$schema":"otc://1.0","tools":[`+entry("X.Y", "10.0.0")+`,`+entry("X.Y", "9.0.0")+`]}`)
				return true
			}
			return false
		}, []string{"FAIL  catalog entries", "not in order of id, then version"}},
		{"invalid input run anyway", func(w http.ResponseWriter, r *http.Request, body []byte) bool {
			if bytes.Contains(body, []byte("otc_check_unknown_parameter")) {
				writeJSON(w, 200, `{"$schema":"otc://1.0","result":{"call_id":"x","duration":1,"success":true,"value":3}}`)
				return true
			}
			return false
		}, []string{"FAIL  invalid input", "status 200, want 422"}},
		{"unknown tool answered 404", func(w http.ResponseWriter, r *http.Request, body []byte) bool {
			if r.Method == http.MethodPost && string(body) == `{"request":{"tool_id":"`+checkNamespace+`"}}` {
				writeJSON(w, 404, `{"$schema":"otc://1.0","message":"no such tool"}`)
				return true
			}
			return false
		}, []string{"FAIL  unknown tool", "status 404, want 400"}},
		{"HTML error page", func(w http.ResponseWriter, r *http.Request, body []byte) bool {
			if r.Method == http.MethodPost && string(body) == "not json" {
				w.Header().Set("Content-Type", "text/html")
				w.WriteHeader(500)
				_, _ = io.WriteString(w, "<html>Internal Server Error</html>")
				return true
			}
			return false
		}, []string{"FAIL  body not JSON", "status 500, want 400", `Content-Type "text/html", want application/json`, "body is not a JSON object"}},
		{"no body limit", func(w http.ResponseWriter, r *http.Request, body []byte) bool {
			if len(body) > 4<<20 {
				writeJSON(w, 400, `{"$schema":"otc://1.0","message":"Tool not found"}`)
				return true
			}
			return false
		}, []string{"FAIL  body limit", "status 400, want 413"}},
		{"unknown fields ignored", func(w http.ResponseWriter, r *http.Request, body []byte) bool {
			if bytes.Contains(body, []byte(`"inputs"`)) {
				writeJSON(w, 400, `{"$schema":"otc://1.0","message":"Tool not found"}`)
				return true
			}
			return false
		}, []string{"FAIL  unknown field inputs", `the error does not name "inputs"`}},
		{"health missing", func(w http.ResponseWriter, r *http.Request, body []byte) bool {
			if r.URL.Path == "/health" {
				http.NotFound(w, r)
				return true
			}
			return false
		}, []string{"FAIL  health", "seen: status 404"}},
		{"$schema not echoed", func(w http.ResponseWriter, r *http.Request, body []byte) bool {
			if r.Method == http.MethodGet && r.URL.Path == "/tools" && bytes.Contains(body, []byte("urn:oxp:1.0")) {
				writeJSON(w, 200, `{"$schema":"otc://1.0","tools":[]}`)
				return true
			}
			return false
		}, []string{"FAIL  $schema spellings", `urn:oxp:1.0: echoed as "otc://1.0"`}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, out := checkAgainst(t, broken(t, tc.server), "--tool", "Calculator.Add@1.0.0", "--input", `{"a":1,"b":2}`)
			assert.Equal(t, exitCheckFailed, code, out)
			for _, w := range tc.want {
				assert.Contains(t, out, w)
			}
			assert.Contains(t, out, "rule: ")
			assert.Equal(t, 1, strings.Count(out, "FAIL  "), "only the broken rule fails:\n%s", out)
		})
	}
}

func TestCheckUsage(t *testing.T) {
	code, _, errOut := otcRun(t, "", "", nil, "check")
	assert.Equal(t, exitBadInput, code)
	assert.Contains(t, errOut, "want one URL")
	code, _, errOut = otcRun(t, "http://x", "", nil, "check", "URL", "--input", "[1]")
	assert.Equal(t, exitBadInput, code)
	assert.Contains(t, errOut, "--input must be a JSON object")
	code, _, _ = otcRun(t, "http://127.0.0.1:1", "", nil, "check", "URL")
	assert.Equal(t, exitTransport, code)
}

// TestCheckEveryFormat: otc check finds the format as the other commands
// do: a server's root leads to its OTC handler, which passes; an MCP
// endpoint, a REST view, an A2A agent and a server over stdio get the
// checks of every format, and say so.
func TestCheckEveryFormat(t *testing.T) {
	reg := otc.NewRegistry(nil)
	require.NoError(t, otc.Register(reg, otc.Tool{ID: "Calculator.Add", Version: "1.0.0", Description: "Adds two numbers together."},
		func(_ context.Context, in addInput) (float64, error) { return in.A + in.B, nil }))
	mux := http.NewServeMux()
	mount.All(mux, reg, nil)
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)

	code, out, errOut := otcRun(t, srv.URL, "", nil, "check", "URL")
	assert.Equal(t, exitOK, code, out+errOut)
	assert.Contains(t, errOut, "is an OTC server; going on with that URL")
	assert.Contains(t, out, "0 failed")

	for _, c := range []struct{ args []string }{
		{[]string{"check", "URL/mcp"}},
		{[]string{"check", "--rest", "URL/v1"}},
		{[]string{"check", "URL/a2a"}},
	} {
		code, out, errOut := otcRun(t, srv.URL, "", nil, append(c.args, "--tool", "Calculator_Add", "--input", `{"a":1,"b":2}`)...)
		assert.Equal(t, exitOK, code, "%v: %s%s", c.args, out, errOut)
		assert.Contains(t, errOut, "the checks of every format apply", c.args)
		assert.Contains(t, out, "PASS  call", c.args)
		assert.Contains(t, out, "PASS  invalid input", c.args)
		assert.Contains(t, out, "PASS  names and schemas", c.args)
	}

	t.Setenv(stdioServerEnv, "1")
	code, out, errOut = otcRun(t, "", "", nil, "check", "--stdio", "'"+os.Args[0]+"' -test.run='^$'", "--tool", "Calculator_Add", "--input", `{"a":1,"b":1}`)
	assert.Equal(t, exitOK, code, out+errOut)
	assert.Contains(t, errOut, "as an MCP server over stdio")
	assert.Contains(t, out, "PASS  unknown tool")

	// A server that answers a call of any name: the check says so.
	liar := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var msg struct {
			ID     json.RawMessage `json:"id"`
			Method string          `json:"method"`
		}
		_ = json.NewDecoder(r.Body).Decode(&msg)
		w.Header().Set("Content-Type", "application/json")
		switch msg.Method {
		case "server/discover":
			_, _ = fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%s,"error":{"code":-32601,"message":"no"}}`, msg.ID)
		case "initialize":
			_, _ = fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%s,"result":{"protocolVersion":"2025-06-18"}}`, msg.ID)
		case "tools/list":
			_, _ = fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%s,"result":{"tools":[{"name":"bad name!","inputSchema":{"type":"object"}}]}}`, msg.ID)
		case "tools/call":
			_, _ = fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%s,"result":{"content":[{"type":"text","text":"sure"}]}}`, msg.ID)
		default:
			w.WriteHeader(http.StatusAccepted)
		}
	}))
	t.Cleanup(liar.Close)
	code, out, _ = otcRun(t, liar.URL, "", nil, "check", "--mcp", "URL")
	assert.Equal(t, exitCheckFailed, code, out)
	assert.Contains(t, out, "FAIL  names and schemas")
	assert.Contains(t, out, "FAIL  unknown tool")
	assert.Contains(t, out, "not refused: the call succeeded")
}
