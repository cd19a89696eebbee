package oauth_test

// The Protected Resource Metadata document over real HTTP, the URL it is
// served at, and the challenges that name it.

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/otcgo/otc"
	"github.com/otcgo/otc/oauth"
)

// TestMetadataURL: the well-known path goes between the host and the
// path (RFC 9728 §3.1).
func TestMetadataURL(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ resource, want string }{
		{"https://tools.example.com/mcp", "https://tools.example.com/.well-known/oauth-protected-resource/mcp"},
		{"https://tools.example.com", "https://tools.example.com/.well-known/oauth-protected-resource"},
		{"https://tools.example.com/", "https://tools.example.com/.well-known/oauth-protected-resource"},
		{"https://tools.example.com:8443/public/mcp", "https://tools.example.com:8443/.well-known/oauth-protected-resource/public/mcp"},
		{"http://127.0.0.1:8080/mcp", "http://127.0.0.1:8080/.well-known/oauth-protected-resource/mcp"},
		{"https://tools.example.com/a%20b", "https://tools.example.com/.well-known/oauth-protected-resource/a%20b"},
	} {
		got, err := oauth.MetadataURL(tc.resource)
		require.NoError(t, err, tc.resource)
		assert.Equal(t, tc.want, got, tc.resource)
	}
	for _, bad := range []string{"tools.example.com/mcp", "https://tools.example.com/mcp#x", "https://tools.example.com/mcp?x=1", "/mcp"} {
		_, err := oauth.MetadataURL(bad)
		assert.Error(t, err, bad)
	}
}

// metadataRegistry has tools that require scopes, one that requires none,
// and one without a policy.
func metadataRegistry(t *testing.T) *otc.Registry {
	t.Helper()
	reg := otc.NewRegistry(nil)
	noop := func(context.Context, struct{}) (struct{}, error) { return struct{}{}, nil }
	for _, d := range []struct {
		name   string
		policy *otc.Policy
	}{
		{"Counter.Increment", &otc.Policy{RequiredScopes: []string{"counter:write"}}},
		{"Counter.Read", &otc.Policy{RequiredScopes: []string{"counter:read"}}},
		{"Counter.Reset", &otc.Policy{RequiredScopes: []string{"counter:write", "counter:admin"}}},
		{"Calculator.Add", nil},
	} {
		require.NoError(t, otc.Register(reg, otc.Tool{ID: d.name, Description: "A tool.", Version: "1.0.0", Policy: d.policy}, noop))
	}
	return reg
}

type prmAnswer struct {
	Status int
	Header http.Header
	Body   string
	Doc    map[string]any
}

func prmGet(t *testing.T, method, url string, header http.Header) prmAnswer {
	t.Helper()
	req, err := http.NewRequestWithContext(t.Context(), method, url, nil)
	require.NoError(t, err)
	for k, v := range header {
		req.Header[k] = v
	}
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	ans := prmAnswer{Status: resp.StatusCode, Header: resp.Header, Body: string(raw)}
	if resp.StatusCode == http.StatusOK && method == http.MethodGet {
		require.NoError(t, json.Unmarshal(raw, &ans.Doc))
	}
	return ans
}

// TestMetadataDocument: the document at both paths, with the resource
// exactly as configured, the issuers, the registry's scopes (and the
// configured ones), and its headers; a new tool's scopes appear at the
// next read.
func TestMetadataDocument(t *testing.T) {
	t.Parallel()
	as := newAuthServer(t, "")
	a := newAuth(t, oauth.Options{AuthorizationServers: []oauth.AuthorizationServer{{Issuer: as.issuer}, {Issuer: "https://login.example.com", JWKS: jwksJSON(t, usualJWKs(t)...)}}}, oauth.TimingForTest{})
	reg := metadataRegistry(t)
	h, err := a.MetadataHandler(reg, &oauth.MetadataOptions{
		Scopes:                []string{"tools:read", "counter:read", "offline_access"},
		ResourceName:          "Counter tools",
		ResourceDocumentation: "https://docs.example.com/tools",
	})
	require.NoError(t, err)
	assert.Equal(t, []string{"/.well-known/oauth-protected-resource/mcp", "/.well-known/oauth-protected-resource"}, h.Paths())
	mux := http.NewServeMux()
	h.Mount(mux)
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)

	want := `{"resource":"http://127.0.0.1:8080/mcp","authorization_servers":["` + as.issuer + `","https://login.example.com"],` +
		`"scopes_supported":["counter:admin","counter:read","counter:write","tools:read"],"bearer_methods_supported":["header"],` +
		`"resource_name":"Counter tools","resource_documentation":"https://docs.example.com/tools"}`
	var etag string
	for _, path := range h.Paths() {
		res := prmGet(t, http.MethodGet, srv.URL+path, nil)
		require.Equal(t, http.StatusOK, res.Status, path)
		assert.JSONEq(t, want, res.Body, path)
		assert.Equal(t, "application/json", res.Header.Get("Content-Type"))
		assert.Equal(t, "*", res.Header.Get("Access-Control-Allow-Origin"))
		assert.Equal(t, "public, max-age=300", res.Header.Get("Cache-Control"))
		assert.Equal(t, "nosniff", res.Header.Get("X-Content-Type-Options"))
		assert.NotEmpty(t, res.Header.Get("ETag"))
		etag = res.Header.Get("ETag")
	}
	assert.Equal(t, http.StatusNotFound, prmGet(t, http.MethodGet, srv.URL+"/.well-known/oauth-protected-resource/other", nil).Status)

	t.Run("head", func(t *testing.T) {
		res := prmGet(t, http.MethodHead, srv.URL+h.Paths()[0], nil)
		assert.Equal(t, http.StatusOK, res.Status)
		assert.Empty(t, res.Body)
		assert.Equal(t, etag, res.Header.Get("ETag"))
	})
	t.Run("not_modified", func(t *testing.T) {
		res := prmGet(t, http.MethodGet, srv.URL+h.Paths()[0], http.Header{"If-None-Match": {etag}})
		assert.Equal(t, http.StatusNotModified, res.Status)
		assert.Empty(t, res.Body)
	})
	t.Run("preflight", func(t *testing.T) {
		res := prmGet(t, http.MethodOptions, srv.URL+h.Paths()[0], http.Header{
			"Origin":                         {"https://app.example.com"},
			"Access-Control-Request-Method":  {"GET"},
			"Access-Control-Request-Headers": {"mcp-protocol-version"},
		})
		assert.Equal(t, http.StatusNoContent, res.Status)
		assert.Equal(t, "*", res.Header.Get("Access-Control-Allow-Origin"))
		assert.Equal(t, "GET, HEAD, OPTIONS", res.Header.Get("Access-Control-Allow-Methods"))
		assert.Equal(t, "mcp-protocol-version", res.Header.Get("Access-Control-Allow-Headers"))
	})
	t.Run("method_not_allowed", func(t *testing.T) {
		res := prmGet(t, http.MethodPost, srv.URL+h.Paths()[0], nil)
		assert.Equal(t, http.StatusMethodNotAllowed, res.Status)
		assert.Equal(t, "GET, HEAD, OPTIONS", res.Header.Get("Allow"))
	})
	t.Run("new_revision", func(t *testing.T) {
		noop := func(context.Context, struct{}) (struct{}, error) { return struct{}{}, nil }
		require.NoError(t, otc.Register(reg, otc.Tool{ID: "Files.Write", Description: "A tool.", Version: "1.0.0", Policy: &otc.Policy{RequiredScopes: []string{"files:write"}}}, noop))
		res := prmGet(t, http.MethodGet, srv.URL+h.Paths()[1], nil)
		assert.Equal(t, []any{"counter:admin", "counter:read", "counter:write", "files:write", "tools:read"}, res.Doc["scopes_supported"])
		assert.NotEqual(t, etag, res.Header.Get("ETag"))
	})
}

// TestMetadataRootResource: a resource at the root of its host has one
// document path; without a registry or scopes, scopes_supported is left
// out.
func TestMetadataRootResource(t *testing.T) {
	t.Parallel()
	a := newAuth(t, oauth.Options{Resource: "https://tools.example.com/", AuthorizationServers: []oauth.AuthorizationServer{{Issuer: "https://login.example.com", JWKS: jwksJSON(t, usualJWKs(t)...)}}}, oauth.TimingForTest{})
	assert.Equal(t, "https://tools.example.com/.well-known/oauth-protected-resource", a.ResourceMetadataURL())
	h, err := a.MetadataHandler(nil, nil)
	require.NoError(t, err)
	assert.Equal(t, []string{"/.well-known/oauth-protected-resource"}, h.Paths())
	mux := http.NewServeMux()
	h.Mount(mux)
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	res := prmGet(t, http.MethodGet, srv.URL+"/.well-known/oauth-protected-resource", nil)
	assert.JSONEq(t, `{"resource":"https://tools.example.com/","authorization_servers":["https://login.example.com"],"bearer_methods_supported":["header"]}`, res.Body)
}

// TestMetadataOptionsRefused: options that would write a broken document.
func TestMetadataOptionsRefused(t *testing.T) {
	t.Parallel()
	a := newAuth(t, oauth.Options{AuthorizationServers: []oauth.AuthorizationServer{{Issuer: "https://login.example.com", JWKS: jwksJSON(t, usualJWKs(t)...)}}}, oauth.TimingForTest{})
	for _, opts := range []oauth.MetadataOptions{
		{ResourceDocumentation: "docs.example.com"},
		{ResourceTOSURI: "javascript:alert(1)"},
		{Scopes: []string{""}},
		{Scopes: []string{"two words"}},
		{Scopes: []string{`quo"te`}},
	} {
		_, err := a.MetadataHandler(nil, &opts)
		assert.Error(t, err, "%+v", opts)
	}
}

// TestChallenge: the challenges of each kind of refusal, quoted as
// RFC 9110 asks.
func TestChallenge(t *testing.T) {
	t.Parallel()
	// A quote or backslash in the resource's path is percent-encoded in
	// the URL, so that the quoted value cannot be broken out of.
	a := newAuth(t, oauth.Options{Resource: `https://tools.example.com/a"b\c`, AuthorizationServers: []oauth.AuthorizationServer{{Issuer: "https://login.example.com", JWKS: jwksJSON(t, usualJWKs(t)...)}}}, oauth.TimingForTest{})
	meta := `resource_metadata="https://tools.example.com/.well-known/oauth-protected-resource/a%22b%5Cc"`
	assert.Equal(t, "Bearer "+meta, a.Challenge(&otc.Error{Code: otc.CodeUnauthenticated}))
	for _, tc := range []struct {
		name string
		e    *otc.Error
		want string
	}{
		{"missing", &otc.Error{Code: otc.CodeUnauthenticated, Reason: otc.ReasonMissingToken, Message: "send one"}, "Bearer " + meta},
		{"api_key_refused", &otc.Error{Code: otc.CodeUnauthenticated, Message: "The API key is not valid"}, "Bearer " + meta},
		{"invalid", &otc.Error{Code: otc.CodeUnauthenticated, Reason: otc.ReasonInvalidToken, Message: `Bad "token" \ here ☃`},
			"Bearer " + meta + `, error="invalid_token", error_description="Bad 'token' / here ?"`},
		{"revoked_by_policy", &otc.Error{Code: otc.CodeUnauthenticated, Reason: otc.ReasonTokenRevoked, Message: "revoked"},
			"Bearer " + meta + `, error="invalid_token", error_description="revoked"`},
		{"insufficient_scope", &otc.Error{Code: otc.CodeForbidden, Reason: otc.ReasonInsufficientScope, RequiredScopes: []string{"counter:read", "counter:write"}, Message: "Tool 'Counter.Increment' needs scope counter:write"},
			`Bearer error="insufficient_scope", scope="counter:read counter:write", ` + meta + `, error_description="Tool 'Counter.Increment' needs scope counter:write"`},
		{"scope_quoted", &otc.Error{Code: otc.CodeForbidden, Reason: otc.ReasonInsufficientScope, RequiredScopes: []string{`a"b\c`}},
			`Bearer error="insufficient_scope", scope="a\"b\\c", ` + meta},
		{"other_forbidden", &otc.Error{Code: otc.CodeForbidden, Reason: otc.ReasonAudienceMismatch, Message: "no"}, ""},
		{"not_found", &otc.Error{Code: otc.CodeServerError, Message: "no such tool"}, ""},
		{"nil", nil, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			assert.Equal(t, tc.want, a.Challenge(tc.e))
			if tc.e != nil {
				assert.Equal(t, tc.want, otc.Challenge(a, tc.e), "otc.Challenge asks the authenticator")
			}
		})
	}
	long := strings.Repeat("x", 1000)
	c := a.Challenge(&otc.Error{Code: otc.CodeUnauthenticated, Reason: otc.ReasonInvalidToken, Message: long})
	assert.Less(t, len(c), 500, "the description is capped")
}
