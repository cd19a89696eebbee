package otc_test

import (
	"context"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/otcgo/otc"
	"github.com/otcgo/otc/auth"
	"github.com/otcgo/otc/internal/testkit"
	"github.com/otcgo/otc/mcp"
	"github.com/otcgo/otc/registryview"
	"github.com/otcgo/otc/rest"
)

// The scope tests send an OAuth caller's scopes in a test header
// (testkit.ScopesAuth) and a capability token's claims in another
// (testkit.ClaimsAuth); a request with neither is the API-key caller
// "ops". Every refusal is checked on OTC, REST and MCP: its status, its
// body in the format's own shape, and its WWW-Authenticate challenge.

// notesTools registers the tools of the scope tests on reg.
func notesTools(t *testing.T, reg *otc.Registry) {
	t.Helper()
	add := func(id string, p *otc.Policy) {
		require.NoError(t, otc.Register(reg, otc.Tool{ID: id, Version: "1.0.0", Description: "A notes tool.", Policy: p},
			func(ctx context.Context, in refundInput) (string, error) { return "done:" + in.OrderID, nil }))
	}
	add("Notes.Read", &otc.Policy{RequiredScopes: []string{"notes:read"}})
	add("Notes.Write", &otc.Policy{RequiredScopes: []string{"notes:read", "notes:write"}})
	add("Notes.Admin", &otc.Policy{ResourceURI: "urn:notes", RequiredCapabilities: []string{"notes:admin"}, RequiredScopes: []string{"notes:admin"}})
	add("Notes.Audit", &otc.Policy{RequiredCapabilities: []string{"notes:audit"}}) // audience: its id
	add("Notes.Open", nil)
}

// prmChallenger is an authenticator whose challenges depend on the
// refusal, as an OAuth resource server's do: every one names its metadata
// document.
type prmChallenger struct{ otc.Authenticator }

const prmChallenge = `Bearer resource_metadata="https://notes.test/.well-known/oauth-protected-resource"`

func (prmChallenger) Challenge(e *otc.Error) string {
	if e.Reason == otc.ReasonInsufficientScope {
		return prmChallenge + `, error="insufficient_scope", scope="` + strings.Join(e.RequiredScopes, " ") + `"`
	}
	return prmChallenge
}

// newNotesServer serves the notes tools on every wire format, behind auth:
// OTC at /, REST at /v1/, MCP at /mcp and the registry view at /registry/.
func newNotesServer(t *testing.T, auth otc.Authenticator, opts *otc.RegistryOptions) (string, *otc.Registry) {
	t.Helper()
	if opts == nil {
		opts = &otc.RegistryOptions{}
	}
	opts.Logger = slog.New(slog.DiscardHandler)
	reg := otc.NewRegistry(opts)
	notesTools(t, reg)
	mux := http.NewServeMux()
	mux.Handle("/v1/", http.StripPrefix("/v1", rest.NewHandler(reg, &rest.Options{Authenticator: auth})))
	mux.Handle("/mcp", mcp.NewHandler(reg, &mcp.Options{Authenticator: auth}))
	mux.Handle("/registry/", http.StripPrefix("/registry", registryview.NewHandler(reg, &registryview.Options{Authenticator: auth})))
	mux.Handle("/", otc.NewHandler(reg, &otc.HandlerOptions{Authenticator: auth}))
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	return srv.URL, reg
}

// scopeCaller is who sends a request in these tests.
type scopeCaller struct {
	scopes *string        // the OAuth token's scopes, nil for none
	claims map[string]any // a capability token's claims, nil for none
}

func oauthCaller(scopes string) scopeCaller { return scopeCaller{scopes: &scopes} }

func (c scopeCaller) headers(extra map[string]string) map[string]string {
	h := map[string]string{}
	for k, v := range extra {
		h[k] = v
	}
	if c.scopes != nil {
		h[testkit.ScopesHeader] = *c.scopes
	}
	return h
}

// refusal is what a refused call answered, read from each format's shape.
type refusal struct {
	status    int
	reason    string
	scopes    []any // required_scopes, nil when absent
	challenge string
	message   string
	code      any // the REST code or the JSON-RPC code
}

// callNotes calls a notes tool over one wire format as caller.
func callNotes(t *testing.T, base, format, tool string, caller scopeCaller) (policyAnswer, refusal) {
	t.Helper()
	name := strings.ReplaceAll(tool, ".", "_")
	var a policyAnswer
	switch format {
	case "otc":
		a = policyPost(t, base+"/tools/call", `{"request":{"tool_id":"`+tool+`","input":{"order_id":"1"}}}`, caller.claims, caller.headers(nil))
	case "rest":
		a = policyPost(t, base+"/v1/tools/"+name+":invoke", `{"schema_version":"0.1.0","args":{"order_id":"1"}}`, caller.claims, caller.headers(nil))
	case "mcp":
		a = policyPost(t, base+"/mcp", `{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"`+name+`","arguments":{"order_id":"1"}}}`,
			caller.claims, caller.headers(map[string]string{"Accept": "application/json, text/event-stream"}))
	default:
		t.Fatalf("no format %q", format)
	}
	r := refusal{status: a.status, challenge: a.header.Get("WWW-Authenticate")}
	var shape map[string]any
	switch format {
	case "otc":
		shape = a.body
		r.message, _ = a.body["message"].(string)
	case "rest":
		if e, ok := a.body["error"].(map[string]any); ok {
			r.code, r.message = e["code"], e["message"].(string)
			shape, _ = e["details"].(map[string]any)
		}
	case "mcp":
		if e, ok := a.body["error"].(map[string]any); ok {
			r.code, r.message = e["code"], e["message"].(string)
			shape, _ = e["data"].(map[string]any)
			if shape != nil {
				shape = map[string]any{"reason": shape["error"], "required_scopes": shape["required_scopes"]}
			}
		}
	}
	if shape != nil {
		r.reason, _ = shape["reason"].(string)
		r.scopes, _ = shape["required_scopes"].([]any)
	}
	return a, r
}

var allFormats = []string{"otc", "rest", "mcp"}

func TestScopesOnEveryFormat(t *testing.T) {
	t.Parallel()
	auth := auth.AnyOf(testkit.ScopesAuth(), testkit.ClaimsAuth())
	// Every tool listed to everyone, so that each refusal names its
	// reason (see TestHiddenToolsAnswerAsUnknown).
	base, _ := newNotesServer(t, auth, &otc.RegistryOptions{ListEveryTool: true})
	adminClaims := func(edit func(map[string]any)) map[string]any {
		c := map[string]any{"aud": "urn:notes", "caps": []any{"notes:admin"}, "scope": "notes:admin"}
		if edit != nil {
			edit(c)
		}
		return c
	}
	for _, tc := range []struct {
		name      string
		tool      string
		caller    scopeCaller
		status    int
		reason    string
		scopes    []any
		challenge string
		message   string // a part of the message
	}{
		{name: "granted", tool: "Notes.Read", caller: oauthCaller("notes:read"), status: 200},
		{name: "granted_among_others", tool: "Notes.Write", caller: oauthCaller("profile notes:write  notes:read"), status: 200},
		{name: "no_policy", tool: "Notes.Open", caller: oauthCaller(""), status: 200},
		{name: "one_scope_missing", tool: "Notes.Write", caller: oauthCaller("notes:read"), status: 403,
			reason: otc.ReasonInsufficientScope, scopes: []any{"notes:write"},
			challenge: `Bearer error="insufficient_scope", scope="notes:write"`, message: "needs the scope notes:write, which the token does not grant"},
		{name: "every_scope_missing", tool: "Notes.Write", caller: oauthCaller(""), status: 403,
			reason: otc.ReasonInsufficientScope, scopes: []any{"notes:read", "notes:write"},
			challenge: `Bearer error="insufficient_scope", scope="notes:read notes:write"`, message: "needs the scopes notes:read notes:write"},
		// Scopes are separated by spaces only: a tab makes the scope
		// string malformed, and it grants nothing.
		{name: "scope_string_with_a_tab", tool: "Notes.Write", caller: oauthCaller("notes:read\tnotes:write"), status: 403,
			reason: otc.ReasonInsufficientScope, scopes: []any{"notes:read", "notes:write"}, challenge: `Bearer error="insufficient_scope", scope="notes:read notes:write"`},
		{name: "scopes_compared_exactly", tool: "Notes.Read", caller: oauthCaller("notes:READ notes:read:all"), status: 403,
			reason: otc.ReasonInsufficientScope, scopes: []any{"notes:read"}, challenge: `Bearer error="insufficient_scope", scope="notes:read"`},
		{name: "api_key_has_no_token", tool: "Notes.Read", caller: scopeCaller{}, status: 401,
			reason: otc.ReasonMissingToken, scopes: []any{"notes:read"}, challenge: "Bearer", message: "needs an access token granting the scope notes:read"},
		{name: "capability_token_with_scope", tool: "Notes.Read", caller: scopeCaller{claims: map[string]any{"scope": "notes:read"}}, status: 200},
		{name: "capability_token_with_scp", tool: "Notes.Read", caller: scopeCaller{claims: map[string]any{"scp": []any{"notes:read"}}}, status: 200},
		{name: "capability_token_without_scope", tool: "Notes.Read", caller: scopeCaller{claims: map[string]any{"caps": []any{"notes:read"}}}, status: 403,
			reason: otc.ReasonInsufficientScope, scopes: []any{"notes:read"}, challenge: `Bearer error="insufficient_scope", scope="notes:read"`},
		{name: "both_claims", tool: "Notes.Admin", caller: scopeCaller{claims: adminClaims(nil)}, status: 200},
		{name: "oauth_cannot_call_a_capability_tool", tool: "Notes.Admin", caller: oauthCaller("notes:admin"), status: 401,
			reason: otc.ReasonMissingToken, challenge: "Bearer", message: "needs a capability token"},
		{name: "audience_before_scopes", tool: "Notes.Admin", caller: scopeCaller{claims: adminClaims(func(c map[string]any) { c["aud"] = "urn:other"; delete(c, "scope") })}, status: 403,
			reason: otc.ReasonAudienceMismatch},
		{name: "scopes_before_capabilities", tool: "Notes.Admin", caller: scopeCaller{claims: adminClaims(func(c map[string]any) { delete(c, "caps"); delete(c, "scope") })}, status: 403,
			reason: otc.ReasonInsufficientScope, scopes: []any{"notes:admin"}, challenge: `Bearer error="insufficient_scope", scope="notes:admin"`},
		{name: "capabilities_checked_too", tool: "Notes.Admin", caller: scopeCaller{claims: adminClaims(func(c map[string]any) { delete(c, "caps") })}, status: 403,
			reason: otc.ReasonInsufficientCapabilities},
		{name: "capability_tool_without_scopes", tool: "Notes.Audit", caller: oauthCaller("notes:audit"), status: 401,
			reason: otc.ReasonMissingToken, challenge: "Bearer"},
	} {
		for _, format := range allFormats {
			t.Run(tc.name+"/"+format, func(t *testing.T) {
				t.Parallel()
				a, r := callNotes(t, base, format, tc.tool, tc.caller)
				require.Equal(t, tc.status, r.status, a.raw)
				if tc.status == 200 {
					assert.Contains(t, a.raw, "done:1")
					assert.Empty(t, r.challenge)
					return
				}
				assert.Equal(t, tc.reason, r.reason, a.raw)
				assert.Equal(t, tc.scopes, r.scopes, a.raw)
				assert.Equal(t, tc.challenge, r.challenge, "WWW-Authenticate")
				assert.Contains(t, r.message, tc.message)
				switch format {
				case "otc":
					assert.Equal(t, "otc://1.0", a.body["$schema"])
				case "rest":
					want := rest.CodeCallRefused
					if tc.status == 401 {
						want = rest.CodeUnauthenticated
					}
					assert.Equal(t, want, r.code)
				case "mcp":
					want := float64(-32002)
					if tc.status == 401 {
						want = -32001
					}
					assert.Equal(t, want, r.code)
				}
			})
		}
	}
}

// An authenticator that is an otc.ErrorChallenger writes every challenge:
// its refusals', the policy's 401s and the 403s for want of scopes, on
// every wire format; other 403s carry none.
func TestChallengesFromTheAuthenticator(t *testing.T) {
	t.Parallel()
	auth := prmChallenger{auth.AnyOf(testkit.ScopesAuth(), testkit.ClaimsAuth())}
	// Every tool listed to everyone, so that each refusal names its
	// reason (see TestHiddenToolsAnswerAsUnknown).
	base, _ := newNotesServer(t, auth, &otc.RegistryOptions{ListEveryTool: true})
	for _, tc := range []struct {
		name      string
		tool      string
		caller    scopeCaller
		status    int
		challenge string
	}{
		{"insufficient_scope", "Notes.Write", oauthCaller("notes:read"), 403, prmChallenge + `, error="insufficient_scope", scope="notes:write"`},
		{"missing_token", "Notes.Read", scopeCaller{}, 401, prmChallenge},
		{"other_refusal", "Notes.Audit", scopeCaller{claims: map[string]any{"aud": "Notes.Audit@1.0.0"}}, 403, ""},
		{"granted", "Notes.Read", oauthCaller("notes:read"), 200, ""},
	} {
		for _, format := range allFormats {
			t.Run(tc.name+"/"+format, func(t *testing.T) {
				t.Parallel()
				a, r := callNotes(t, base, format, tc.tool, tc.caller)
				require.Equal(t, tc.status, r.status, a.raw)
				assert.Equal(t, tc.challenge, r.challenge)
			})
		}
	}
	// The authenticator's own refusal, before any tool: a claims header
	// that is not JSON.
	for _, path := range []string{"/tools", "/v1/tools", "/registry/v1/tools", "/mcp"} {
		t.Run("authentication"+path, func(t *testing.T) {
			t.Parallel()
			method := http.MethodGet
			if path == "/mcp" {
				method = http.MethodPost
			}
			req, err := http.NewRequest(method, base+path, strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"tools/list"}`))
			require.NoError(t, err)
			req.Header.Set(testkit.ClaimsHeader, "not json")
			req.Header.Set("Content-Type", "application/json")
			resp, err := http.DefaultClient.Do(req)
			require.NoError(t, err)
			defer resp.Body.Close()
			_, _ = io.Copy(io.Discard, resp.Body)
			assert.Equal(t, http.StatusUnauthorized, resp.StatusCode)
			assert.Equal(t, prmChallenge, resp.Header.Get("WWW-Authenticate"))
		})
	}
}

// A server without an authenticator has no caller with a token: a tool
// that needs scopes is refused 401, naming them.
func TestScopesWithoutAuthenticator(t *testing.T) {
	t.Parallel()
	base, _ := newNotesServer(t, nil, nil)
	for _, format := range allFormats {
		t.Run(format, func(t *testing.T) {
			t.Parallel()
			a, r := callNotes(t, base, format, "Notes.Write", scopeCaller{})
			require.Equal(t, 401, r.status, a.raw)
			assert.Equal(t, otc.ReasonMissingToken, r.reason)
			assert.Equal(t, []any{"notes:read", "notes:write"}, r.scopes)
			assert.Equal(t, "Bearer", r.challenge)
		})
	}
}

func TestScopesRegistration(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name   string
		scopes []string
		want   string
	}{
		{"empty", []string{"a", ""}, "RequiredScopes[1] is empty"},
		{"space", []string{"notes:read notes:write"}, "holds a space: list each scope as an element of its own"},
		{"tab", []string{"notes:\tread"}, `holds '\t' at byte 6`},
		{"quote", []string{`notes"`}, "without spaces, double quotes or backslashes"},
		{"backslash", []string{`notes\`}, "without spaces, double quotes or backslashes"},
		{"not_ascii", []string{"notes:é"}, "printable ASCII"},
		{"twice", []string{"a", "b", "a"}, `RequiredScopes lists "a" twice`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			err := otc.Register(otc.NewRegistry(nil), otc.Tool{ID: "Notes.Bad", Version: "1.0.0", Description: "A tool.", Policy: &otc.Policy{RequiredScopes: tc.scopes}},
				func(context.Context, struct{}) (int, error) { return 0, nil })
			require.Error(t, err)
			assert.Contains(t, err.Error(), `"Notes.Bad@1.0.0"`)
			assert.Contains(t, err.Error(), tc.want)
		})
	}
	t.Run("scopes_are_copied", func(t *testing.T) {
		t.Parallel()
		reg := otc.NewRegistry(nil)
		p := &otc.Policy{RequiredScopes: []string{"a"}}
		require.NoError(t, otc.Register(reg, otc.Tool{ID: "Notes.Ok", Version: "1.0.0", Description: "A tool.", Policy: p},
			func(context.Context, struct{}) (int, error) { return 0, nil }))
		p.RequiredScopes[0] = "b"
		assert.Equal(t, []string{"a"}, reg.Tools()[0].Policy.RequiredScopes)
	})
}

// TestUnavailableOnEveryFormat: an authenticator that cannot decide just
// now (CodeUnavailable) is answered 503 with Retry-After by every handler,
// and never lets the request through.
func TestUnavailableOnEveryFormat(t *testing.T) {
	t.Parallel()
	busy := otc.AuthenticatorFunc(func(*http.Request) (*otc.Identity, error) {
		return nil, &otc.Error{Code: otc.CodeUnavailable, Message: "The authorization server is busy: try again shortly", RetryAfter: 1500 * time.Millisecond}
	})
	base, _ := newNotesServer(t, busy, nil)
	for _, format := range allFormats {
		a, r := callNotes(t, base, format, "Notes.Open", scopeCaller{})
		assert.Equal(t, http.StatusServiceUnavailable, r.status, "%s: %s", format, a.raw)
		assert.Equal(t, "2", a.header.Get("Retry-After"), "%s: whole seconds, rounded up", format)
		assert.Contains(t, r.message, "try again shortly", format)
		assert.Empty(t, r.challenge, format)
		assert.NotContains(t, a.raw, "done:", format)
	}
	req, err := http.NewRequestWithContext(t.Context(), http.MethodGet, base+"/registry/v1/tools", nil)
	require.NoError(t, err)
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	resp.Body.Close()
	assert.Equal(t, http.StatusServiceUnavailable, resp.StatusCode, "the registry view")
	assert.Equal(t, "2", resp.Header.Get("Retry-After"))
	assert.Equal(t, "unavailable", otc.CodeUnavailable.String())
}
