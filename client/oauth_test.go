package client_test

import (
	"context"
	"encoding/json"
	"maps"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/otcgo/otc"
	"github.com/otcgo/otc/client"
	"github.com/otcgo/otc/mcp"
)

// authServer is an OAuth authorization server over real HTTP that grants
// client credentials to gw:gw-secret, recording the Authorization header
// of every token request.
type authServer struct {
	srv        *httptest.Server
	mu         sync.Mutex
	sent       []string
	discovered int      // requests for the metadata
	agents     []string // the User-Agent of every request
}

func newAuthServer(t *testing.T) *authServer {
	t.Helper()
	as := &authServer{}
	mux := http.NewServeMux()
	mux.HandleFunc("/.well-known/oauth-authorization-server", func(w http.ResponseWriter, _ *http.Request) {
		as.mu.Lock()
		as.discovered++
		as.mu.Unlock()
		_ = json.NewEncoder(w).Encode(map[string]any{"issuer": as.srv.URL, "token_endpoint": as.srv.URL + "/token",
			"token_endpoint_auth_methods_supported": []string{"client_secret_basic"}})
	})
	mux.HandleFunc("/token", func(w http.ResponseWriter, r *http.Request) {
		as.mu.Lock()
		as.sent = append(as.sent, r.Header.Get("Authorization"))
		as.mu.Unlock()
		if id, secret, ok := r.BasicAuth(); !ok || id != "gw" || secret != "gw-secret" {
			w.WriteHeader(http.StatusUnauthorized)
			_ = json.NewEncoder(w).Encode(map[string]string{"error": "invalid_client"})
			return
		}
		_ = json.NewEncoder(w).Encode(map[string]any{"access_token": "granted", "token_type": "Bearer", "expires_in": 3600})
	})
	as.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		as.mu.Lock()
		as.agents = append(as.agents, r.Header.Get("User-Agent"))
		as.mu.Unlock()
		mux.ServeHTTP(w, r)
	}))
	t.Cleanup(as.srv.Close)
	return as
}

// requests are the Authorization headers the token endpoint received.
func (as *authServer) requests() []string {
	as.mu.Lock()
	defer as.mu.Unlock()
	return append([]string(nil), as.sent...)
}

// discoveries is how many times the metadata was read.
func (as *authServer) discoveries() int {
	as.mu.Lock()
	defer as.mu.Unlock()
	return as.discovered
}

// protectedMCP serves an MCP server that takes the bearer token
// "granted", and whose protected-resource metadata names the
// authorization servers given.
func protectedMCP(t *testing.T, authorizationServers ...string) string {
	t.Helper()
	return protectedResource(t, func(token string) bool { return token == "granted" },
		map[string]any{"authorization_servers": authorizationServers})
}

// protectedResource serves an MCP server (of Echo.Say) that takes the
// bearer tokens accept says, and answers others 401 naming its
// protected-resource metadata: meta, with its resource.
func protectedResource(t *testing.T, accept func(token string) bool, meta map[string]any) string {
	t.Helper()
	reg := otc.NewRegistry(nil)
	require.NoError(t, otc.Register(reg, otc.Tool{ID: "Echo.Say", Version: "1.0.0", Description: "Says it back."},
		func(_ context.Context, in struct {
			Text string `json:"text" jsonschema:"description=What to say."`
		}) (string, error) {
			return in.Text, nil
		}))
	h := mcp.NewHandler(reg, nil)
	var srv *httptest.Server
	srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/.well-known/oauth-protected-resource/mcp" {
			doc := maps.Clone(meta)
			doc["resource"] = srv.URL + "/mcp"
			_ = json.NewEncoder(w).Encode(doc)
			return
		}
		token, bearer := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
		if !bearer || !accept(token) {
			w.Header().Set("WWW-Authenticate", `Bearer resource_metadata="`+srv.URL+`/.well-known/oauth-protected-resource/mcp"`)
			w.WriteHeader(http.StatusUnauthorized)
			return
		}
		h.ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)
	return srv.URL + "/mcp"
}

// TestOAuthSecretStaysWithItsIssuer: a client secret goes only to the
// authorization server it is registered with (OAuth.Issuer). A server
// whose metadata names another is refused, with an error naming both,
// and that other server is never sent the secret; a server that names
// the client's issuer gets its token as usual. A secret without an
// issuer is a mistake New names.
func TestOAuthSecretStaysWithItsIssuer(t *testing.T) {
	honest, hostile := newAuthServer(t), newAuthServer(t)
	creds := func() *client.Options {
		return &client.Options{Format: client.FormatMCP, OAuth: &client.OAuth{Issuer: honest.srv.URL, ClientID: "gw", ClientSecret: "gw-secret"}}
	}

	c, err := client.New(protectedMCP(t, hostile.srv.URL), creds())
	require.NoError(t, err)
	_, err = c.ListTools(t.Context())
	require.Error(t, err)
	assert.Contains(t, err.Error(), "names the authorization server "+hostile.srv.URL+", not "+honest.srv.URL)
	assert.Empty(t, hostile.requests(), "the hostile server never saw the secret")
	assert.Empty(t, honest.requests(), "nor was a token asked for")

	c, err = client.New(protectedMCP(t, hostile.srv.URL, honest.srv.URL), creds())
	require.NoError(t, err)
	got, err := c.CallText(t.Context(), "Echo_Say", json.RawMessage(`{"text":"hi"}`))
	require.NoError(t, err, "a server that names the client's issuer among its own")
	assert.Equal(t, "hi", got)
	assert.Len(t, honest.requests(), 1)
	assert.Empty(t, hostile.requests())

	_, err = client.New(protectedMCP(t, honest.srv.URL), &client.Options{Format: client.FormatMCP, OAuth: &client.OAuth{ClientID: "gw", ClientSecret: "gw-secret"}})
	assert.ErrorContains(t, err, "OAuth.ClientSecret needs Issuer")
}

// TestOAuthRequestsAsTheClient: the requests to the authorization server
// go as every request of the client's does, with its User-Agent.
func TestOAuthRequestsAsTheClient(t *testing.T) {
	as := newAuthServer(t)
	c, err := client.New(protectedMCP(t, as.srv.URL), &client.Options{Format: client.FormatMCP, UserAgent: "tester/1.0",
		OAuth: &client.OAuth{Issuer: as.srv.URL, ClientID: "gw", ClientSecret: "gw-secret"}})
	require.NoError(t, err)
	_, err = c.ListTools(t.Context())
	require.NoError(t, err)
	as.mu.Lock()
	defer as.mu.Unlock()
	require.NotEmpty(t, as.agents)
	for _, a := range as.agents {
		assert.Equal(t, "tester/1.0", a)
	}
}
