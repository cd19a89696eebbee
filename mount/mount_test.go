package mount_test

import (
	"context"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/otcgo/otc"
	"github.com/otcgo/otc/auth"
	"github.com/otcgo/otc/caller"
	"github.com/otcgo/otc/mcp"
	"github.com/otcgo/otc/mount"
	"github.com/otcgo/otc/ratelimit"
)

const key = "mount-test-key-0f3a9c1e7b5d2846"

func newRegistry(t *testing.T) *otc.Registry {
	t.Helper()
	reg := otc.NewRegistry(nil)
	require.NoError(t, otc.Register(reg, otc.Tool{ID: "Calculator.Add", Version: "1.0.0", Description: "Adds two numbers."},
		func(_ context.Context, in struct {
			A float64 `json:"a" jsonschema:"description=The first number."`
			B float64 `json:"b" jsonschema:"description=The second number."`
		}) (float64, error) {
			return in.A + in.B, nil
		}))
	return reg
}

// request is one request of the tests: its method, path and body.
type request struct{ method, path, body string }

// send sends r to srv with the API key header when key is not empty, and
// returns the status and body.
func send(t *testing.T, srv *httptest.Server, r request, apiKey string) (int, string) {
	t.Helper()
	var body io.Reader
	if r.body != "" {
		body = strings.NewReader(r.body)
	}
	req, err := http.NewRequestWithContext(t.Context(), r.method, srv.URL+r.path, body)
	require.NoError(t, err)
	if r.body != "" {
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		req.Header.Set("MCP-Protocol-Version", "2025-11-25")
		req.Header.Set("A2A-Version", "1.0")
	}
	if apiKey != "" {
		req.Header.Set(otc.HeaderAPIKey, apiKey)
	}
	resp, err := srv.Client().Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	return resp.StatusCode, string(b)
}

const mcpCall = `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"Calculator_Add","arguments":{"a":1,"b":2}}}`

// every is one request to each format, and what its answer holds.
var every = []struct {
	name string
	req  request
	want string
}{
	{"otc_list", request{http.MethodGet, "/otc/tools", ""}, `"Calculator.Add@1.0.0"`},
	{"otc_call", request{http.MethodPost, "/otc/tools/call", `{"request":{"tool_id":"Calculator.Add","input":{"a":1,"b":2}}}`}, `"value":3`},
	{"mcp", request{http.MethodPost, "/mcp", mcpCall}, `"structuredContent":{"result":3}`},
	{"mcp_trailing_slash", request{http.MethodPost, "/mcp/", mcpCall}, `"structuredContent":{"result":3}`},
	{"rest_list", request{http.MethodGet, "/v1/tools", ""}, `"Calculator_Add"`},
	{"rest_invoke", request{http.MethodPost, "/v1/tools/Calculator_Add:invoke", `{"schema_version":"0.1.0","args":{"a":1,"b":2}}`}, `"result":3`},
	{"registry_view", request{http.MethodGet, "/registry/v1/tools", ""}, `"tool_id":"Calculator.Add@1.0.0"`},
	{"a2a", request{http.MethodPost, "/a2a", `{"jsonrpc":"2.0","id":1,"method":"SendMessage","params":{"message":{"messageId":"m1","role":"ROLE_USER","parts":[{"data":{"tool":"Calculator_Add","input":{"a":1,"b":2}}}]}}}`}, `{"data":3}`},
	{"a2a_rest", request{http.MethodPost, "/a2a/message:send", `{"message":{"messageId":"m2","role":"ROLE_USER","parts":[{"data":{"tool":"Calculator_Add","input":{"a":1,"b":2}}}]}}`}, `{"data":3}`},
}

// TestAll: every format answers under its prefix, MCP with and without a
// trailing slash and nowhere below it; one authenticator guards them all.
func TestAll(t *testing.T) {
	keys, err := auth.NewAPIKeyAuth(map[string]string{"ci": key})
	require.NoError(t, err)
	for _, tc := range []struct {
		name string
		opts *mount.Options
		key  string
	}{
		{"no_options", nil, ""},
		{"authenticated", &mount.Options{Authenticator: keys}, key},
	} {
		t.Run(tc.name, func(t *testing.T) {
			mux := http.NewServeMux()
			h := mount.All(mux, newRegistry(t), tc.opts)
			require.NotNil(t, h.OTC)
			require.NotNil(t, h.MCP)
			require.NotNil(t, h.REST)
			require.NotNil(t, h.Registry)
			require.NotNil(t, h.A2A)
			srv := httptest.NewServer(mux)
			t.Cleanup(srv.Close)
			for _, e := range every {
				status, body := send(t, srv, e.req, tc.key)
				assert.Equal(t, http.StatusOK, status, "%s: %s", e.name, body)
				assert.Contains(t, body, e.want, e.name)
				if tc.key != "" {
					status, body = send(t, srv, e.req, "")
					assert.Equal(t, http.StatusUnauthorized, status, "%s without the key: %s", e.name, body)
				}
			}
			for _, path := range []string{"/mcp/x", "/tools", "/otc"} {
				status, _ := send(t, srv, request{http.MethodPost, path, mcpCall}, tc.key)
				assert.Contains(t, []int{http.StatusNotFound, http.StatusMethodNotAllowed, http.StatusMovedPermanently}, status, path)
				assert.NotEqual(t, http.StatusOK, status, path)
			}
		})
	}
}

// TestAllOwnOptions: a format's own options win over the shared ones, and
// the options given are left as they were.
func TestAllOwnOptions(t *testing.T) {
	keys, err := auth.NewAPIKeyAuth(map[string]string{"ci": key})
	require.NoError(t, err)
	open := otc.AuthenticatorFunc(func(*http.Request) (*otc.Identity, error) { return &otc.Identity{Method: "test"}, nil })
	own := &mcp.Options{Authenticator: open}
	opts := &mount.Options{Authenticator: keys, Logger: slog.New(slog.DiscardHandler), MCP: own}
	mux := http.NewServeMux()
	mount.All(mux, newRegistry(t), opts)
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)

	status, body := send(t, srv, request{http.MethodPost, "/mcp", mcpCall}, "")
	assert.Equal(t, http.StatusOK, status, "MCP takes its own authenticator: %s", body)
	status, _ = send(t, srv, request{http.MethodGet, "/otc/tools", ""}, "")
	assert.Equal(t, http.StatusUnauthorized, status, "the others take the shared one")
	assert.Nil(t, own.Logger, "All fills in copies, not the options given")
	assert.Nil(t, opts.OTC, "All fills in copies, not the options given")
}

// TestAllURLAndCallers: Options.URL is what the Agent Card names, whatever
// Host a request gives, and Options.Callers tells every format's clients
// apart behind a trusted proxy: a rate limit counts each client of the
// proxy on its own.
func TestAllURLAndCallers(t *testing.T) {
	limit, err := ratelimit.New(&ratelimit.Options{All: ratelimit.Limit{Rate: 0.001, Burst: 1}})
	require.NoError(t, err)
	reg := otc.NewRegistry(&otc.RegistryOptions{Middleware: []otc.Middleware{limit}})
	require.NoError(t, otc.Register(reg, otc.Tool{ID: "Calculator.Add", Version: "1.0.0", Description: "Adds two numbers."},
		func(_ context.Context, in struct {
			A float64 `json:"a" jsonschema:"description=The first number."`
			B float64 `json:"b" jsonschema:"description=The second number."`
		}) (float64, error) {
			return in.A + in.B, nil
		}))
	mux := http.NewServeMux()
	trusted := []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8"), netip.MustParsePrefix("10.0.0.0/8")}
	mount.All(mux, reg, &mount.Options{URL: "https://tools.example.com/", Callers: &caller.Options{TrustedProxies: trusted}})
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)

	for _, path := range []string{"/.well-known/agent-card.json", "/a2a/.well-known/agent-card.json"} {
		req, err := http.NewRequest(http.MethodGet, srv.URL+path, nil)
		require.NoError(t, err)
		req.Host = "attacker.test"
		resp, err := srv.Client().Do(req)
		require.NoError(t, err)
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		assert.Contains(t, string(b), `"url":"https://tools.example.com/a2a"`, path)
		assert.NotContains(t, string(b), "attacker.test", path)
	}
	call := func(r request, client string) (int, string) {
		req, err := http.NewRequest(r.method, srv.URL+r.path, strings.NewReader(r.body))
		require.NoError(t, err)
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		req.Header.Set("MCP-Protocol-Version", "2025-11-25")
		req.Header.Set("A2A-Version", "1.0")
		req.Header.Set("X-Forwarded-For", client+", 10.9.9.9")
		resp, err := srv.Client().Do(req)
		require.NoError(t, err)
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	// Each client of the proxy has its one call, on whichever format;
	// the next is refused.
	for i, e := range every {
		if e.req.method != http.MethodPost {
			continue
		}
		client := "198.51.100." + strconv.Itoa(i+1)
		status, body := call(e.req, client)
		assert.Equal(t, http.StatusOK, status, "%s: %s", e.name, body)
		assert.Contains(t, body, e.want, "%s: the first call of %s", e.name, client)
		status, body = call(every[1].req, client)
		assert.Equal(t, http.StatusTooManyRequests, status, "%s: the second call of %s: %s", e.name, client, body)
	}
}

// TestAllSearch: All turns on GET /tools?q= of the OTC handler and the
// REST view, NoSearch leaves both off, and a format's own Search wins.
func TestAllSearch(t *testing.T) {
	t.Parallel()
	own := func(*http.Request, *otc.Registry, string) ([]string, error) {
		return []string{"Calculator.Add@1.0.0"}, nil
	}
	for _, tc := range []struct {
		name       string
		opts       *mount.Options
		otc, rest  int
		restBodyIs string
	}{
		{"default", nil, http.StatusOK, http.StatusOK, `"Calculator_Add"`},
		{"no_search", &mount.Options{NoSearch: true}, http.StatusBadRequest, http.StatusBadRequest, "does not search"},
		{"own", &mount.Options{NoSearch: true, OTC: &otc.HandlerOptions{Search: own}}, http.StatusOK, http.StatusBadRequest, "does not search"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			mux := http.NewServeMux()
			mount.All(mux, newRegistry(t), tc.opts)
			srv := httptest.NewServer(mux)
			t.Cleanup(srv.Close)
			status, body := send(t, srv, request{http.MethodGet, "/otc/tools?q=add+numbers", ""}, "")
			assert.Equal(t, tc.otc, status, body)
			if status == http.StatusOK {
				assert.Contains(t, body, `"Calculator.Add@1.0.0"`)
			}
			status, body = send(t, srv, request{http.MethodGet, "/v1/tools?q=add+numbers", ""}, "")
			assert.Equal(t, tc.rest, status, body)
			assert.Contains(t, body, tc.restBodyIs)
		})
	}
}
