package otc_test

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/otcgo/otc"
	"github.com/otcgo/otc/auth"
	"github.com/otcgo/otc/internal/testkit"
	"github.com/otcgo/otc/mcp"
	"github.com/otcgo/otc/registryview"
	"github.com/otcgo/otc/rest"
)

// policyGet sends a GET with the claims of a capability token (see
// testkit.ClaimsAuth) and headers, and reads the JSON answer.
func policyGet(t *testing.T, url string, claims map[string]any, headers map[string]string) policyAnswer {
	t.Helper()
	req, err := http.NewRequest(http.MethodGet, url, nil)
	require.NoError(t, err)
	for k, v := range headers {
		req.Header.Set(k, v)
	}
	if claims != nil {
		b, err := json.Marshal(claims)
		require.NoError(t, err)
		req.Header.Set(testkit.ClaimsHeader, string(b))
	}
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	a := policyAnswer{status: resp.StatusCode, header: resp.Header, raw: string(raw)}
	if strings.HasPrefix(string(raw), "{") {
		require.NoError(t, json.Unmarshal(raw, &a.body), string(raw))
	}
	return a
}

// catalogIDs reads the tool ids of an OTC catalog.
func catalogIDs(t *testing.T, a policyAnswer) []string {
	t.Helper()
	require.Equal(t, http.StatusOK, a.status, a.raw)
	ids := []string{}
	for _, tool := range a.body["tools"].([]any) {
		ids = append(ids, tool.(map[string]any)["id"].(string))
	}
	return ids
}

// plannerNames reads the names of the REST planner view.
func plannerNames(t *testing.T, a policyAnswer) []string {
	t.Helper()
	require.Equal(t, http.StatusOK, a.status, a.raw)
	var list []struct {
		Name string `json:"name"`
	}
	require.NoError(t, json.Unmarshal([]byte(a.raw), &list), a.raw)
	names := []string{}
	for _, e := range list {
		names = append(names, e.Name)
	}
	return names
}

// mcpToolNames reads the names of an MCP tools/list result.
func mcpToolNames(t *testing.T, a policyAnswer) []string {
	t.Helper()
	require.Equal(t, http.StatusOK, a.status, a.raw)
	names := []string{}
	for _, tool := range a.body["result"].(map[string]any)["tools"].([]any) {
		names = append(names, tool.(map[string]any)["name"].(string))
	}
	return names
}

// registryIDs reads the tool ids of a registry view listing.
func registryIDs(t *testing.T, a policyAnswer) []string {
	t.Helper()
	require.Equal(t, http.StatusOK, a.status, a.raw)
	var list []struct {
		ID string `json:"tool_id"`
	}
	require.NoError(t, json.Unmarshal([]byte(a.raw), &list), a.raw)
	ids := []string{}
	for _, e := range list {
		ids = append(ids, e.ID)
	}
	return ids
}

// listings lists the tools caller sees on every wire format, each as a
// list of tool ids ("Notes.Read@1.0.0" on OTC and the registry view) or
// names ("Notes_Read" on REST and MCP).
func listings(t *testing.T, base string, caller scopeCaller) map[string][]string {
	t.Helper()
	return map[string][]string{
		"otc":      catalogIDs(t, policyGet(t, base+"/tools", caller.claims, caller.headers(nil))),
		"rest":     plannerNames(t, policyGet(t, base+"/v1/tools", caller.claims, caller.headers(nil))),
		"mcp":      mcpToolNames(t, policyPost(t, base+"/mcp", `{"jsonrpc":"2.0","id":1,"method":"tools/list"}`, caller.claims, caller.headers(nil))),
		"registry": registryIDs(t, policyGet(t, base+"/registry/v1/tools", caller.claims, caller.headers(nil))),
	}
}

// sameOnEvery expects the same tools on every wire format.
func sameOnEvery(tools ...string) map[string][]string {
	ids, names := []string{}, []string{}
	for _, tool := range tools {
		ids = append(ids, tool+"@1.0.0")
		names = append(names, strings.ReplaceAll(tool, ".", "_"))
	}
	return map[string][]string{"otc": ids, "rest": names, "mcp": names, "registry": ids}
}

func TestCatalogsPerCaller(t *testing.T) {
	t.Parallel()
	auth := auth.AnyOf(testkit.ScopesAuth(), testkit.ClaimsAuth())
	base, _ := newNotesServer(t, auth, nil)
	admin := map[string]any{"aud": "urn:notes", "caps": []any{"notes:admin"}, "scope": "notes:admin"}
	for _, tc := range []struct {
		name   string
		caller scopeCaller
		want   map[string][]string
	}{
		{"api_key", scopeCaller{}, sameOnEvery("Notes.Open")},
		{"oauth_without_scopes", oauthCaller(""), sameOnEvery("Notes.Open")},
		{"oauth_reader", oauthCaller("notes:read"), sameOnEvery("Notes.Open", "Notes.Read")},
		{"oauth_writer", oauthCaller("notes:write notes:read"), sameOnEvery("Notes.Open", "Notes.Read", "Notes.Write")},
		{"oauth_with_every_scope_sees_no_capability_tool", oauthCaller("notes:read notes:write notes:admin notes:audit"),
			sameOnEvery("Notes.Open", "Notes.Read", "Notes.Write")},
		{"capability_with_both_claims", scopeCaller{claims: admin}, sameOnEvery("Notes.Admin", "Notes.Open")},
		{"capability_for_another_audience", scopeCaller{claims: map[string]any{"aud": "urn:other", "caps": []any{"notes:admin"}, "scope": "notes:admin"}},
			sameOnEvery("Notes.Open")},
		{"capability_without_the_scope", scopeCaller{claims: map[string]any{"aud": "urn:notes", "caps": []any{"notes:admin"}}}, sameOnEvery("Notes.Open")},
		{"capability_for_one_tool", scopeCaller{claims: map[string]any{"aud": "Notes.Audit@1.0.0", "caps": []any{"notes:audit"}}},
			sameOnEvery("Notes.Audit", "Notes.Open")},
		{"capability_with_scopes_too", scopeCaller{claims: map[string]any{"aud": []any{"Notes.Audit@1.0.0", "urn:notes"}, "caps": []any{"notes:audit", "notes:admin"}, "scp": []any{"notes:read", "notes:admin"}}},
			sameOnEvery("Notes.Admin", "Notes.Audit", "Notes.Open", "Notes.Read")},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			for range 2 { // built, then from the cache
				assert.Equal(t, tc.want, listings(t, base, tc.caller))
			}
		})
	}
}

// With ListEveryTool, every caller sees every tool, as before catalogs
// were made per caller; calls are refused as before.
func TestListEveryTool(t *testing.T) {
	t.Parallel()
	base, _ := newNotesServer(t, auth.AnyOf(testkit.ScopesAuth(), testkit.ClaimsAuth()), &otc.RegistryOptions{ListEveryTool: true})
	every := sameOnEvery("Notes.Admin", "Notes.Audit", "Notes.Open", "Notes.Read", "Notes.Write")
	assert.Equal(t, every, listings(t, base, scopeCaller{}))
	assert.Equal(t, every, listings(t, base, oauthCaller("notes:read")))
	_, r := callNotes(t, base, "otc", "Notes.Write", oauthCaller("notes:read"))
	assert.Equal(t, otc.ReasonInsufficientScope, r.reason)
}

// A handler without an authenticator has callers that proved nothing:
// they see only the tools without a policy that needs credentials, the
// only ones they could call.
func TestCatalogsWithoutAuthenticator(t *testing.T) {
	t.Parallel()
	base, _ := newNotesServer(t, nil, nil)
	assert.Equal(t, sameOnEvery("Notes.Open"), listings(t, base, scopeCaller{}))
}

// A tool registered after the listings were cached shows in the next
// listing of each caller who may see it, on every wire format, and in no
// other's.
func TestCatalogsPerCallerAfterRegistration(t *testing.T) {
	t.Parallel()
	base, reg := newNotesServer(t, auth.AnyOf(testkit.ScopesAuth(), testkit.ClaimsAuth()), nil)
	reader, writer := oauthCaller("notes:read"), oauthCaller("notes:read notes:write")
	require.Equal(t, sameOnEvery("Notes.Open", "Notes.Read"), listings(t, base, reader))
	require.Equal(t, sameOnEvery("Notes.Open", "Notes.Read", "Notes.Write"), listings(t, base, writer))
	require.Equal(t, sameOnEvery("Notes.Open"), listings(t, base, scopeCaller{}))
	before := reg.Visibility(nil, otc.ProtocolMCP).Key()

	require.NoError(t, otc.Register(reg, otc.Tool{ID: "Notes.Erase", Version: "1.0.0", Description: "Erases a note.",
		Policy: &otc.Policy{RequiredScopes: []string{"notes:write"}}},
		func(ctx context.Context, in refundInput) (string, error) { return "erased", nil }))
	require.NoError(t, otc.Register(reg, otc.Tool{ID: "Notes.Count", Version: "1.0.0", Description: "Counts notes."},
		func(ctx context.Context, in refundInput) (int, error) { return 3, nil }))

	// The caller without a token first: its key is the same as before the
	// registrations, so that only the revision tells its cached listing
	// is stale.
	require.Equal(t, before, reg.Visibility(nil, otc.ProtocolMCP).Key(), "the key of a caller who passes no check")
	assert.Equal(t, sameOnEvery("Notes.Count", "Notes.Open"), listings(t, base, scopeCaller{}))
	assert.Equal(t, sameOnEvery("Notes.Count", "Notes.Open", "Notes.Read"), listings(t, base, reader))
	assert.Equal(t, sameOnEvery("Notes.Count", "Notes.Erase", "Notes.Open", "Notes.Read", "Notes.Write"), listings(t, base, writer))
}

// The lookup of one tool by name is not filtered: it tells a client what
// the tool needs, which is how it learns what to ask for.
func TestLookupsAreNotFiltered(t *testing.T) {
	t.Parallel()
	base, _ := newNotesServer(t, auth.AnyOf(testkit.ScopesAuth(), testkit.ClaimsAuth()), nil)
	a := policyGet(t, base+"/v1/tools/Notes_Write", nil, nil)
	assert.Equal(t, http.StatusOK, a.status, a.raw)
	assert.Equal(t, "Notes_Write", a.body["name"])
	a = policyGet(t, base+"/registry/v1/tools/Notes.Write", nil, nil)
	assert.Equal(t, http.StatusOK, a.status, a.raw)
	assert.Equal(t, []any{"notes:read", "notes:write"}, a.body["required_scopes"])
}

// A catalog that lists one version of each tool (REST, MCP) lists the one
// a call by the bare name reaches, or none: an older version the caller
// could call does not stand in for the newer one it cannot, since a call
// by the bare name would be refused. OTC lists every version, each as
// visible.
func TestCatalogsPerCallerAndVersions(t *testing.T) {
	t.Parallel()
	reg := otc.NewRegistry(&otc.RegistryOptions{Logger: slog.New(slog.DiscardHandler)})
	for _, v := range []struct {
		version string
		p       *otc.Policy
	}{{"1.0.0", nil}, {"2.0.0", &otc.Policy{RequiredScopes: []string{"echo:v2"}}}} {
		require.NoError(t, otc.Register(reg, otc.Tool{ID: "K.Echo", Version: v.version, Description: "Echoes its version.", Policy: v.p},
			func(ctx context.Context, _ struct{}) (string, error) { return otc.ToolID(ctx), nil }))
	}
	auth := testkit.ScopesAuth()
	mux := http.NewServeMux()
	mux.Handle("/v1/", http.StripPrefix("/v1", rest.NewHandler(reg, &rest.Options{Authenticator: auth})))
	mux.Handle("/mcp", mcp.NewHandler(reg, &mcp.Options{Authenticator: auth}))
	mux.Handle("/registry/", http.StripPrefix("/registry", registryview.NewHandler(reg, &registryview.Options{Authenticator: auth})))
	mux.Handle("/", otc.NewHandler(reg, &otc.HandlerOptions{Authenticator: auth}))
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)

	assert.Equal(t, map[string][]string{
		"otc": {"K.Echo@1.0.0"}, "rest": {}, "mcp": {}, "registry": {"K.Echo@1.0.0"},
	}, listings(t, srv.URL, oauthCaller("")))
	assert.Equal(t, map[string][]string{
		"otc": {"K.Echo@1.0.0", "K.Echo@2.0.0"}, "rest": {"K_Echo"}, "mcp": {"K_Echo"}, "registry": {"K.Echo@1.0.0", "K.Echo@2.0.0"},
	}, listings(t, srv.URL, oauthCaller("echo:v2")))
}

// Registry.Visibility, directly: keys, Sees, and the checks that never
// hide a tool.
func TestRegistryVisibility(t *testing.T) {
	t.Parallel()
	reg := otc.NewRegistry(nil)
	for _, tool := range []otc.Tool{
		{ID: "V.Open", Version: "1.0.0", Description: "Open."},
		{ID: "V.OTCOnly", Version: "1.0.0", Description: "OTC only.", Policy: &otc.Policy{Protocols: []string{"otc"}}},
		{ID: "V.Read", Version: "1.0.0", Description: "Reads.", Policy: &otc.Policy{RequiredScopes: []string{"read"}}},
		{ID: "V.Bound", Version: "1.0.0", Description: "Bound.", Policy: &otc.Policy{
			ResourceURI: "urn:v", RequiredCapabilities: []string{"pay"}, MaxBlastRadius: "tenant:*",
			RequiresExecution: true, AllowedOperations: []string{"pay"}, AllowedTargets: []string{"a"},
		}},
	} {
		require.NoError(t, otc.Register(reg, tool, func(context.Context, struct{}) (int, error) { return 0, nil }))
	}
	oauth := func(scope string) *otc.Identity {
		return &otc.Identity{Method: testkit.MethodOAuth, Claims: map[string]any{"scope": scope}}
	}
	capability := func(claims map[string]any) *otc.Identity {
		return &otc.Identity{Method: otc.MethodCapability, Claims: claims}
	}
	bound := map[string]any{"aud": "urn:v", "caps": []any{"pay"}, "blast_radius": "tenant:acme"}
	seen := func(v otc.Visibility) []string {
		var out []string
		for _, d := range reg.Tools() {
			if v.Sees(d.ID) {
				out = append(out, strings.TrimPrefix(strings.TrimSuffix(d.ID, "@1.0.0"), "V."))
			}
		}
		return out
	}
	for _, tc := range []struct {
		name     string
		id       *otc.Identity
		protocol string
		want     []string
	}{
		{"nobody", nil, otc.ProtocolOTC, []string{"OTCOnly", "Open"}},
		{"nobody_over_mcp", nil, otc.ProtocolMCP, []string{"Open"}},
		{"api_key", &otc.Identity{Method: "api_key", Name: "ops"}, otc.ProtocolOTC, []string{"OTCOnly", "Open"}},
		{"reader", oauth("read"), otc.ProtocolMCP, []string{"Open", "Read"}},
		{"every_protocol", oauth("read"), "", []string{"OTCOnly", "Open", "Read"}},
		{"binding_revocation_and_jti_never_hide", capability(bound), otc.ProtocolMCP, []string{"Bound", "Open"}},
		{"the_claims_of_another_kind_of_token_do_not_count", &otc.Identity{Method: "jwt", Claims: bound}, otc.ProtocolMCP, []string{"Open"}},
		{"blast_radius_hides", capability(map[string]any{"aud": "urn:v", "caps": []any{"pay"}, "blast_radius": "org:acme"}), otc.ProtocolMCP, []string{"Open"}},
		{"blast_radius_missing_hides", capability(map[string]any{"aud": "urn:v", "caps": []any{"pay"}}), otc.ProtocolMCP, []string{"Open"}},
		{"capability_missing_hides", capability(map[string]any{"aud": "urn:v", "caps": []any{"read"}, "blast_radius": "tenant:a"}), otc.ProtocolMCP, []string{"Open"}},
		{"audience_hides", capability(map[string]any{"aud": []any{"urn:w"}, "caps": []any{"pay"}, "blast_radius": "tenant:a"}), otc.ProtocolMCP, []string{"Open"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			v := reg.Visibility(tc.id, tc.protocol)
			assert.Equal(t, tc.want, seen(v))
			assert.NotEmpty(t, v.Key(), "the registry has policies that depend on the caller")
			assert.Equal(t, reg.Revision(), v.Revision())
			assert.False(t, v.Sees("V.Missing@1.0.0"))
		})
	}
	t.Run("same_claims_same_key", func(t *testing.T) {
		t.Parallel()
		a := reg.Visibility(capability(map[string]any{"aud": []any{"urn:x", "urn:v"}, "caps": []any{"pay", "x"}, "blast_radius": "tenant:a", "jti": "1"}), otc.ProtocolOTC)
		b := reg.Visibility(capability(map[string]any{"aud": []any{"urn:v", "urn:v"}, "caps": []any{"pay"}, "blast_radius": "tenant:b", "jti": "2"}), otc.ProtocolOTC)
		assert.Equal(t, a.Key(), b.Key())
		c := reg.Visibility(oauth("read"), otc.ProtocolOTC)
		assert.NotEqual(t, a.Key(), c.Key())
		// Audiences count only for a caller that passes a class of
		// checks that reads them.
		d := reg.Visibility(capability(map[string]any{"aud": "urn:v"}), otc.ProtocolOTC)
		e := reg.Visibility(capability(map[string]any{"aud": []any{"urn:v", "V.Open@1.0.0"}}), otc.ProtocolOTC)
		assert.Equal(t, d.Key(), e.Key())
		assert.Equal(t, reg.Visibility(nil, otc.ProtocolOTC).Key(), d.Key())
	})
	t.Run("no_policy_no_key", func(t *testing.T) {
		t.Parallel()
		plain := otc.NewRegistry(nil)
		require.NoError(t, otc.Register(plain, otc.Tool{ID: "V.Open", Version: "1.0.0", Description: "Open.", Policy: &otc.Policy{Protocols: []string{"mcp"}}},
			func(context.Context, struct{}) (int, error) { return 0, nil }))
		v := plain.Visibility(nil, otc.ProtocolOTC)
		assert.Empty(t, v.Key())
		assert.False(t, v.Sees("V.Open@1.0.0"), "the protocol is still checked")
		assert.True(t, plain.Visibility(nil, otc.ProtocolMCP).Sees("V.Open@1.0.0"))
	})
	t.Run("list_every_tool", func(t *testing.T) {
		t.Parallel()
		every := otc.NewRegistry(&otc.RegistryOptions{ListEveryTool: true})
		require.NoError(t, otc.Register(every, otc.Tool{ID: "V.Read", Version: "1.0.0", Description: "Reads.", Policy: &otc.Policy{RequiredScopes: []string{"read"}}},
			func(context.Context, struct{}) (int, error) { return 0, nil }))
		v := every.Visibility(nil, otc.ProtocolOTC)
		assert.Empty(t, v.Key())
		assert.True(t, v.Sees("V.Read@1.0.0"))
	})
	t.Run("zero_value", func(t *testing.T) {
		t.Parallel()
		var v otc.Visibility
		assert.Empty(t, v.Key())
		assert.True(t, v.Sees("Any.Tool@1.0.0"))
	})
}

// Making a Visibility reads the caller's claims without allocating, and
// a key seen before is not allocated again. Not parallel: AllocsPerRun.
func TestVisibilityAllocations(t *testing.T) {
	reg := otc.NewRegistry(nil)
	for i, p := range []*otc.Policy{
		{RequiredScopes: []string{"read"}},
		{ResourceURI: "urn:v", RequiredCapabilities: []string{"pay"}, MaxBlastRadius: "tenant:*", RequiredScopes: []string{"pay"}},
		{RequiredCapabilities: []string{"audit"}},
	} {
		require.NoError(t, otc.Register(reg, otc.Tool{ID: "V.T" + string(rune('a'+i)), Version: "1.0.0", Description: "A tool.", Policy: p},
			func(context.Context, struct{}) (int, error) { return 0, nil }))
	}
	for _, id := range []*otc.Identity{
		nil,
		{Method: testkit.MethodOAuth, Claims: map[string]any{"scope": "read pay"}},
		{Method: otc.MethodCapability, Claims: map[string]any{"aud": []any{"urn:v", "V.Tc@1.0.0"}, "caps": []any{"pay", "audit"}, "blast_radius": "tenant:a", "scp": []any{"pay"}}},
	} {
		reg.Visibility(id, otc.ProtocolOTC)
		assert.Zero(t, testing.AllocsPerRun(100, func() { reg.Visibility(id, otc.ProtocolOTC) }))
	}
}
