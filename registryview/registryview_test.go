package registryview_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/otcgo/otc"
	"github.com/otcgo/otc/auth"
	"github.com/otcgo/otc/registryview"
)

type registryViewInput struct {
	ID string `json:"id" jsonschema:"description=What to act on."`
}

// registryViewRefundPolicy sets every field of a policy.
var registryViewRefundPolicy = &otc.Policy{
	Protocols:            []string{"otc", "mcp"},
	ResourceURI:          "urn:otc:example:payments",
	RequiredCapabilities: []string{"payments:refund"},
	MaxBlastRadius:       "tenant:*",
	RequiresExecution:    true,
	AllowedOperations:    []string{"refund"},
	AllowedTargets:       []string{"order:1"},
	RequiredScopes:       []string{"payments:write"},
	RequiresBoundToken:   true,
}

// newRegistryViewRegistry registers tools with and without policies, in
// several versions, out of catalog order. It lists every tool to every
// caller (ListEveryTool), since the tests that use it check the
// listing's shape; TestRegistryView_PerCaller checks per-caller listings.
func newRegistryViewRegistry(t *testing.T) *otc.Registry {
	t.Helper()
	reg := otc.NewRegistry(&otc.RegistryOptions{Logger: slog.New(slog.DiscardHandler), ListEveryTool: true})
	for _, tool := range []otc.Tool{
		{ID: "Payments.Refund", Version: "1.0.0", Description: "Refunds an order.", Policy: registryViewRefundPolicy},
		{ID: "Payments.Refund", Version: "1.2.0", Description: "Refunds an order, faster.",
			Policy: &otc.Policy{Protocols: []string{"a2a/2025-draft-01", "otc"}}},
		{ID: "Calculator.Add", Version: "2.0.0", Description: "Adds numbers."},
		{ID: "Calculator.Add", Version: "1.0.0", Description: "Adds two numbers."},
		{ID: "Payments.Quote", Version: "0.1.0", Description: "Quotes a price.", Policy: &otc.Policy{Protocols: []string{"http"}}},
		{ID: "Payments.Audit", Version: "1.0.0", Description: "Lists refunds.", Name: "audit",
			Policy: &otc.Policy{RequiredCapabilities: []string{"payments:audit"}}},
	} {
		require.NoError(t, otc.Register(reg, tool, func(context.Context, registryViewInput) (string, error) { return "ok", nil }))
	}
	return reg
}

// serveRegistryView mounts the view under /registry/ as the documentation
// shows, and returns the server's URL.
func serveRegistryView(t *testing.T, reg *otc.Registry, opts *registryview.Options) string {
	t.Helper()
	mux := http.NewServeMux()
	mux.Handle("/registry/", http.StripPrefix("/registry", registryview.NewHandler(reg, opts)))
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	return srv.URL + "/registry"
}

type registryViewResponse struct {
	status int
	header http.Header
	body   []byte
}

func registryViewDo(t *testing.T, method, url string, header http.Header) registryViewResponse {
	t.Helper()
	req, err := http.NewRequest(method, url, nil)
	require.NoError(t, err)
	for k, v := range header {
		req.Header[k] = v
	}
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	return registryViewResponse{resp.StatusCode, resp.Header, body}
}

func registryViewGet(t *testing.T, url string) registryViewResponse {
	t.Helper()
	return registryViewDo(t, http.MethodGet, url, nil)
}

// entries decodes a 200 listing.
func (r registryViewResponse) entries(t *testing.T) []map[string]any {
	t.Helper()
	require.Equal(t, http.StatusOK, r.status, "body: %s", r.body)
	assert.Equal(t, "application/json", r.header.Get("Content-Type"))
	var out []map[string]any
	require.NoError(t, json.Unmarshal(r.body, &out), "body: %s", r.body)
	require.NotNil(t, out, "an array, never null: %s", r.body)
	return out
}

// ids lists the tool_id of each entry.
func (r registryViewResponse) ids(t *testing.T) []string {
	t.Helper()
	ids := []string{}
	for _, e := range r.entries(t) {
		ids = append(ids, e["tool_id"].(string))
	}
	return ids
}

// assertError checks an error answer: status, JSON content type and the
// {"error", "error_description"} document.
func (r registryViewResponse) assertError(t *testing.T, status int, code string) string {
	t.Helper()
	assert.Equal(t, status, r.status, "body: %s", r.body)
	assert.Equal(t, "application/json", r.header.Get("Content-Type"))
	var doc map[string]any
	require.NoError(t, json.Unmarshal(r.body, &doc), "body: %s", r.body)
	assert.Equal(t, code, doc["error"], "body: %s", r.body)
	desc, _ := doc["error_description"].(string)
	assert.NotEmpty(t, desc, "error_description")
	assert.Len(t, doc, 2, "only error and error_description: %s", r.body)
	return desc
}

const (
	refundEntry = `{
		"tool_id": "Payments.Refund@1.0.0",
		"name": "Payments_Refund",
		"description": "Refunds an order.",
		"version": "1.0.0",
		"protocols": ["otc", "mcp"],
		"resource_uri": "urn:otc:example:payments",
		"required_capabilities": ["payments:refund"],
		"max_blast_radius": "tenant:*",
		"requires_execution": true,
		"allowed_operations": ["refund"],
		"allowed_targets": ["order:1"],
		"required_scopes": ["payments:write"],
		"requires_bound_token": true
	}`
	refundV12Entry = `{
		"tool_id": "Payments.Refund@1.2.0",
		"name": "Payments_Refund",
		"description": "Refunds an order, faster.",
		"version": "1.2.0",
		"protocols": ["a2a/2025-draft-01", "otc"]
	}`
	addV2Entry = `{
		"tool_id": "Calculator.Add@2.0.0",
		"name": "Calculator_Add",
		"description": "Adds numbers.",
		"version": "2.0.0",
		"protocols": ["otc", "http", "mcp", "a2a"]
	}`
	auditEntry = `{
		"tool_id": "Payments.Audit@1.0.0",
		"name": "audit",
		"description": "Lists refunds.",
		"version": "1.0.0",
		"protocols": ["otc", "http", "mcp", "a2a"],
		"required_capabilities": ["payments:audit"]
	}`
)

func TestRegistryView_List(t *testing.T) {
	t.Parallel()
	base := serveRegistryView(t, newRegistryViewRegistry(t), nil)
	resp := registryViewGet(t, base+"/v1/tools")
	assert.Equal(t, []string{
		"Calculator.Add@1.0.0", "Calculator.Add@2.0.0",
		"Payments.Audit@1.0.0", "Payments.Quote@0.1.0",
		"Payments.Refund@1.0.0", "Payments.Refund@1.2.0",
	}, resp.ids(t), "catalog order: by id, then version")
	assert.Equal(t, "nosniff", resp.header.Get("X-Content-Type-Options"))

	entries := resp.entries(t)
	byID := map[string]string{}
	for _, e := range entries {
		b, err := json.Marshal(e)
		require.NoError(t, err)
		byID[e["tool_id"].(string)] = string(b)
	}
	for _, tc := range []struct {
		name, id, want string
	}{
		{"every_policy_field", "Payments.Refund@1.0.0", refundEntry},
		{"protocols_only", "Payments.Refund@1.2.0", refundV12Entry},
		{"no_policy", "Calculator.Add@2.0.0", addV2Entry},
		{"policy_without_protocols", "Payments.Audit@1.0.0", auditEntry},
	} {
		t.Run(tc.name, func(t *testing.T) {
			assert.JSONEq(t, tc.want, byID[tc.id])
		})
	}

	t.Run("field_order", func(t *testing.T) {
		// The seed's readers see the identity first, the policy after.
		i := strings.Index(string(resp.body), `{"tool_id":"Payments.Refund@1.0.0"`)
		require.GreaterOrEqual(t, i, 0, "body: %s", resp.body)
		assert.True(t, strings.HasPrefix(string(resp.body[i:]),
			`{"tool_id":"Payments.Refund@1.0.0","name":"Payments_Refund","description":"Refunds an order.","version":"1.0.0","protocols":["otc","mcp"],"resource_uri":`),
			"body: %s", resp.body)
	})

	t.Run("query_without_protocol_lists_all", func(t *testing.T) {
		assert.Equal(t, resp.body, registryViewGet(t, base+"/v1/tools?other=1").body)
	})

	t.Run("empty_registry", func(t *testing.T) {
		empty := serveRegistryView(t, otc.NewRegistry(&otc.RegistryOptions{Logger: slog.New(slog.DiscardHandler)}), nil)
		for _, path := range []string{"/v1/tools", "/v1/tools?protocol=mcp", "/v1/mcp/tools"} {
			resp := registryViewGet(t, empty+path)
			assert.Equal(t, http.StatusOK, resp.status, path)
			assert.Equal(t, "[]", string(resp.body), path)
		}
	})
}

func TestRegistryView_ProtocolFilter(t *testing.T) {
	t.Parallel()
	base := serveRegistryView(t, newRegistryViewRegistry(t), nil)
	for _, tc := range []struct {
		name, protocol string
		want           []string
	}{
		{"mcp", "mcp", []string{"Calculator.Add@1.0.0", "Calculator.Add@2.0.0", "Payments.Audit@1.0.0", "Payments.Refund@1.0.0"}},
		{"mcp_with_version", "mcp/2025-11-25", []string{"Calculator.Add@1.0.0", "Calculator.Add@2.0.0", "Payments.Audit@1.0.0", "Payments.Refund@1.0.0"}},
		{"http", "http", []string{"Calculator.Add@1.0.0", "Calculator.Add@2.0.0", "Payments.Audit@1.0.0", "Payments.Quote@0.1.0"}},
		{"otc", "otc", []string{"Calculator.Add@1.0.0", "Calculator.Add@2.0.0", "Payments.Audit@1.0.0", "Payments.Refund@1.0.0", "Payments.Refund@1.2.0"}},
		{"a2a_by_name", "a2a", []string{"Calculator.Add@1.0.0", "Calculator.Add@2.0.0", "Payments.Audit@1.0.0", "Payments.Refund@1.2.0"}},
		{"a2a_listed_version", "a2a/2025-draft-01", []string{"Calculator.Add@1.0.0", "Calculator.Add@2.0.0", "Payments.Audit@1.0.0", "Payments.Refund@1.2.0"}},
		{"a2a_other_version", "a2a/2026-01", []string{"Calculator.Add@1.0.0", "Calculator.Add@2.0.0", "Payments.Audit@1.0.0", "Payments.Refund@1.2.0"}},
		{"unknown", "grpc", []string{}},
		{"case_sensitive", "MCP", []string{}},
		{"spaces_trimmed", " mcp ", []string{"Calculator.Add@1.0.0", "Calculator.Add@2.0.0", "Payments.Audit@1.0.0", "Payments.Refund@1.0.0"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			resp := registryViewGet(t, base+"/v1/tools?protocol="+strings.ReplaceAll(tc.protocol, " ", "%20"))
			assert.Equal(t, tc.want, resp.ids(t))
		})
	}

	t.Run("entries_unchanged", func(t *testing.T) {
		t.Parallel()
		entries := registryViewGet(t, base+"/v1/tools?protocol=a2a").entries(t)
		require.Len(t, entries, 4)
		b, err := json.Marshal(entries[3])
		require.NoError(t, err)
		assert.JSONEq(t, refundV12Entry, string(b))
	})

	for _, tc := range []struct{ name, query string }{
		{"empty", "protocol="},
		{"blank", "protocol=%20"},
		{"version_only", "protocol=/2025-draft-01"},
		{"repeated", "protocol=mcp&protocol=http"},
		{"malformed_query", "protocol=%zz"},
	} {
		t.Run("invalid_"+tc.name, func(t *testing.T) {
			t.Parallel()
			registryViewGet(t, base+"/v1/tools?"+tc.query).assertError(t, http.StatusBadRequest, "invalid_request")
		})
	}
}

func TestRegistryView_MCPAlias(t *testing.T) {
	t.Parallel()
	base := serveRegistryView(t, newRegistryViewRegistry(t), nil)
	alias := registryViewGet(t, base+"/v1/mcp/tools")
	assert.Equal(t, []string{"Calculator.Add@1.0.0", "Calculator.Add@2.0.0", "Payments.Audit@1.0.0", "Payments.Refund@1.0.0"}, alias.ids(t))
	assert.Equal(t, string(registryViewGet(t, base+"/v1/tools?protocol=mcp").body), string(alias.body), "the same bytes as ?protocol=mcp")
}

func TestRegistryView_Describe(t *testing.T) {
	t.Parallel()
	base := serveRegistryView(t, newRegistryViewRegistry(t), nil)
	for _, tc := range []struct {
		name, id, want string
	}{
		{"with_version", "Payments.Refund@1.0.0", refundEntry},
		{"without_version_is_highest", "Payments.Refund", refundV12Entry},
		{"major_only", "Payments.Refund@1", refundEntry},
		{"no_policy", "Calculator.Add", addV2Entry},
		{"escaped_at", "Calculator.Add%402.0.0", addV2Entry},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			resp := registryViewGet(t, base+"/v1/tools/"+tc.id)
			require.Equal(t, http.StatusOK, resp.status, "body: %s", resp.body)
			assert.Equal(t, "application/json", resp.header.Get("Content-Type"))
			assert.JSONEq(t, tc.want, string(resp.body))
		})
	}
	t.Run("same_bytes_as_the_listing", func(t *testing.T) {
		t.Parallel()
		one := registryViewGet(t, base+"/v1/tools/Payments.Refund@1.0.0")
		assert.Contains(t, string(registryViewGet(t, base+"/v1/tools").body), string(one.body))
	})
	for _, tc := range []struct {
		name, id string
		status   int
		code     string
	}{
		{"unknown_tool", "Payments.Nope", http.StatusNotFound, "not_found"},
		{"unknown_version", "Payments.Refund@3.0.0", http.StatusNotFound, "not_found"},
		{"malformed", "Payments", http.StatusBadRequest, "invalid_request"},
		{"name_not_id", "Payments_Refund", http.StatusBadRequest, "invalid_request"},
		{"malformed_version", "Payments.Refund@1.0", http.StatusBadRequest, "invalid_request"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			registryViewGet(t, base+"/v1/tools/"+tc.id).assertError(t, tc.status, tc.code)
		})
	}
}

func TestRegistryView_Errors(t *testing.T) {
	t.Parallel()
	base := serveRegistryView(t, newRegistryViewRegistry(t), nil)
	for _, tc := range []struct {
		name, method, path string
		status             int
		code               string
	}{
		{"unknown_path", http.MethodGet, "/v1/nowhere", http.StatusNotFound, "not_found"},
		{"root", http.MethodGet, "/", http.StatusNotFound, "not_found"},
		{"other_version", http.MethodGet, "/v2/tools", http.StatusNotFound, "not_found"},
		{"trailing_slash", http.MethodGet, "/v1/tools/", http.StatusNotFound, "not_found"},
		{"nested", http.MethodGet, "/v1/tools/Calculator.Add/extra", http.StatusNotFound, "not_found"},
		{"mcp_tool", http.MethodGet, "/v1/mcp/tools/Calculator.Add", http.StatusNotFound, "not_found"},
		{"unknown_path_any_method", http.MethodPost, "/v1/nowhere", http.StatusNotFound, "not_found"},
		{"post_list", http.MethodPost, "/v1/tools", http.StatusMethodNotAllowed, "method_not_allowed"},
		{"put_alias", http.MethodPut, "/v1/mcp/tools", http.StatusMethodNotAllowed, "method_not_allowed"},
		{"delete_tool", http.MethodDelete, "/v1/tools/Calculator.Add", http.StatusMethodNotAllowed, "method_not_allowed"},
		{"delete_unknown_tool", http.MethodDelete, "/v1/tools/Nope.Nope", http.StatusMethodNotAllowed, "method_not_allowed"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			resp := registryViewDo(t, tc.method, base+tc.path, nil)
			resp.assertError(t, tc.status, tc.code)
			if tc.status == http.StatusMethodNotAllowed {
				assert.Equal(t, "GET", resp.header.Get("Allow"))
			} else {
				assert.Empty(t, resp.header.Get("Allow"))
			}
		})
	}
	t.Run("head_is_not_allowed", func(t *testing.T) {
		t.Parallel()
		resp := registryViewDo(t, http.MethodHead, base+"/v1/tools", nil)
		assert.Equal(t, http.StatusMethodNotAllowed, resp.status)
		assert.Equal(t, "GET", resp.header.Get("Allow"))
	})
}

func TestRegistryView_NilRegistry(t *testing.T) {
	t.Parallel()
	base := serveRegistryView(t, nil, nil)
	for _, path := range []string{"/v1/tools", "/v1/tools?protocol=mcp", "/v1/mcp/tools", "/v1/tools/Calculator.Add"} {
		t.Run(path, func(t *testing.T) {
			t.Parallel()
			desc := registryViewGet(t, base+path).assertError(t, http.StatusServiceUnavailable, "server_error")
			assert.Equal(t, "Tool registry not initialised", desc)
		})
	}
	t.Run("routes_still_apply", func(t *testing.T) {
		t.Parallel()
		registryViewGet(t, base+"/v1/nowhere").assertError(t, http.StatusNotFound, "not_found")
		registryViewDo(t, http.MethodPost, base+"/v1/tools", nil).assertError(t, http.StatusMethodNotAllowed, "method_not_allowed")
	})
}

func TestRegistryView_Authentication(t *testing.T) {
	t.Parallel()
	keys, err := auth.NewAPIKeyAuth(map[string]string{"ci": "secret-key"})
	require.NoError(t, err)
	jwtAuth, err := auth.NewJWTAuth(&auth.JWTOptions{Secret: []byte("an-example-secret-of-32-bytes-or-more")})
	require.NoError(t, err)
	reg := newRegistryViewRegistry(t)

	for _, tc := range []struct {
		name      string
		auth      otc.Authenticator
		challenge string
	}{
		{"api_key", keys, ""},
		{"api_key_or_jwt", auth.AnyOf(keys, jwtAuth), "Bearer"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			base := serveRegistryView(t, reg, &registryview.Options{Authenticator: tc.auth})
			for _, path := range []string{"/v1/tools", "/v1/mcp/tools", "/v1/tools/Calculator.Add"} {
				t.Run("no_key"+path, func(t *testing.T) {
					resp := registryViewGet(t, base+path)
					resp.assertError(t, http.StatusUnauthorized, "access_denied")
					assert.Equal(t, tc.challenge, resp.header.Get("WWW-Authenticate"))
				})
				t.Run("wrong_key"+path, func(t *testing.T) {
					resp := registryViewDo(t, http.MethodGet, base+path, http.Header{otc.HeaderAPIKey: {"nope"}})
					resp.assertError(t, http.StatusUnauthorized, "access_denied")
					assert.Equal(t, tc.challenge, resp.header.Get("WWW-Authenticate"))
				})
				t.Run("key"+path, func(t *testing.T) {
					resp := registryViewDo(t, http.MethodGet, base+path, http.Header{otc.HeaderAPIKey: {"secret-key"}})
					assert.Equal(t, http.StatusOK, resp.status, "body: %s", resp.body)
				})
			}
			t.Run("unknown_path_before_authentication", func(t *testing.T) {
				registryViewGet(t, base+"/v1/nowhere").assertError(t, http.StatusNotFound, "not_found")
			})
			t.Run("method_before_authentication", func(t *testing.T) {
				registryViewDo(t, http.MethodPost, base+"/v1/tools", nil).assertError(t, http.StatusMethodNotAllowed, "method_not_allowed")
			})
		})
	}

	t.Run("nil_registry_after_authentication", func(t *testing.T) {
		t.Parallel()
		base := serveRegistryView(t, nil, &registryview.Options{Authenticator: keys})
		registryViewGet(t, base+"/v1/tools").assertError(t, http.StatusUnauthorized, "access_denied")
		resp := registryViewDo(t, http.MethodGet, base+"/v1/tools", http.Header{otc.HeaderAPIKey: {"secret-key"}})
		resp.assertError(t, http.StatusServiceUnavailable, "server_error")
	})
}

// TestRegistryView_FollowsRegistrations checks that the cached listing is
// rebuilt when the catalog changes, including while it is being read.
func TestRegistryView_FollowsRegistrations(t *testing.T) {
	t.Parallel()
	reg := newRegistryViewRegistry(t)
	base := serveRegistryView(t, reg, nil)
	require.Len(t, registryViewGet(t, base+"/v1/tools").ids(t), 6)
	require.Len(t, registryViewGet(t, base+"/v1/mcp/tools").ids(t), 4)

	register := func(version string) {
		assert.NoError(t, otc.Register(reg, otc.Tool{ID: "Calculator.Add", Version: version, Description: "Adds more numbers."},
			func(context.Context, registryViewInput) (string, error) { return "ok", nil }))
	}
	register("3.0.0")
	assert.Contains(t, registryViewGet(t, base+"/v1/tools").ids(t), "Calculator.Add@3.0.0")
	assert.Contains(t, registryViewGet(t, base+"/v1/mcp/tools").ids(t), "Calculator.Add@3.0.0")
	resp := registryViewGet(t, base+"/v1/tools/Calculator.Add")
	require.Equal(t, http.StatusOK, resp.status)
	assert.Contains(t, string(resp.body), `"tool_id":"Calculator.Add@3.0.0"`)

	var wg sync.WaitGroup
	wg.Go(func() {
		for i := range 20 {
			register(fmt.Sprintf("4.%d.0", i))
		}
	})
	for range 4 {
		wg.Go(func() {
			for range 20 {
				for _, path := range []string{"/v1/tools?protocol=http", "/v1/tools/Calculator.Add"} {
					resp, err := http.Get(base + path)
					if !assert.NoError(t, err) {
						return
					}
					_ = resp.Body.Close()
					assert.Equal(t, http.StatusOK, resp.StatusCode, path)
				}
			}
		})
	}
	wg.Wait()
	ids := registryViewGet(t, base+"/v1/tools").ids(t)
	assert.Len(t, ids, 6+1+20)
	assert.Contains(t, ids, "Calculator.Add@4.19.0")
}

// TestRegistryView_PerCaller checks that each caller's listing holds the
// tools its identity could call, across protocols, under every filter,
// and follows registrations; a lookup by id is not filtered.
func TestRegistryView_PerCaller(t *testing.T) {
	t.Parallel()
	reg := otc.NewRegistry(&otc.RegistryOptions{Logger: slog.New(slog.DiscardHandler)})
	add := func(id string, p *otc.Policy) {
		require.NoError(t, otc.Register(reg, otc.Tool{ID: id, Version: "1.0.0", Description: "A tool.", Policy: p},
			func(context.Context, registryViewInput) (string, error) { return "ok", nil }))
	}
	add("Notes.Open", nil)
	add("Notes.Read", &otc.Policy{RequiredScopes: []string{"notes:read"}, Protocols: []string{"mcp", "a2a"}})
	add("Notes.Admin", &otc.Policy{RequiredCapabilities: []string{"notes:admin"}})
	// X-Scopes carries an OAuth caller's scopes; without it the caller
	// has an API key.
	auth := otc.AuthenticatorFunc(func(r *http.Request) (*otc.Identity, error) {
		if scopes, ok := r.Header["X-Scopes"]; ok {
			return &otc.Identity{Method: "oauth", Claims: map[string]any{"scope": scopes[0]}}, nil
		}
		return &otc.Identity{Method: "api_key", Name: "ops"}, nil
	})
	base := serveRegistryView(t, reg, &registryview.Options{Authenticator: auth})
	list := func(path string, scopes ...string) []string {
		h := http.Header{}
		if len(scopes) > 0 {
			h.Set("X-Scopes", scopes[0])
		}
		return registryViewDo(t, http.MethodGet, base+path, h).ids(t)
	}
	for range 2 { // built, then cached
		assert.Equal(t, []string{"Notes.Open@1.0.0"}, list("/v1/tools"))
		assert.Equal(t, []string{"Notes.Open@1.0.0", "Notes.Read@1.0.0"}, list("/v1/tools", "notes:read"))
		assert.Equal(t, []string{"Notes.Open@1.0.0", "Notes.Read@1.0.0"}, list("/v1/mcp/tools", "notes:read"))
		assert.Equal(t, []string{"Notes.Open@1.0.0"}, list("/v1/tools?protocol=mcp"))
		assert.Equal(t, []string{"Notes.Open@1.0.0"}, list("/v1/tools?protocol=http", "notes:read"))
		assert.Equal(t, []string{"Notes.Open@1.0.0", "Notes.Read@1.0.0"}, list("/v1/tools?protocol=a2a", "notes:read"))
		assert.Equal(t, []string{"Notes.Open@1.0.0"}, list("/v1/tools?protocol=a2a"), "a tool without a protocol list is served over A2A too")
	}
	resp := registryViewGet(t, base+"/v1/tools/Notes.Read")
	assert.Equal(t, http.StatusOK, resp.status, "a lookup is not filtered: it tells a caller what the tool needs")

	add("Notes.Write", &otc.Policy{RequiredScopes: []string{"notes:read"}})
	assert.Equal(t, []string{"Notes.Open@1.0.0", "Notes.Read@1.0.0", "Notes.Write@1.0.0"}, list("/v1/tools", "notes:read"))
	assert.Equal(t, []string{"Notes.Open@1.0.0"}, list("/v1/tools"))
}
