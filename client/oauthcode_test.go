package client_test

import (
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"net/url"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/otcgo/otc/client"
)

// codeServer is an authorization server over real HTTP for the
// authorization-code flow with PKCE: it lets clients register (RFC 7591),
// issues a code for the challenge it was shown, exchanges it for an
// access token and a refresh token, and refreshes.
type codeServer struct {
	srv *httptest.Server

	mu         sync.Mutex
	registered []map[string]any
	challenge  map[string]string // code → S256 challenge
	issued     int
	refreshed  int
	valid      map[string]bool // access tokens the resource server takes
}

func newCodeServer(t *testing.T) *codeServer {
	t.Helper()
	cs := &codeServer{challenge: map[string]string{}, valid: map[string]bool{}}
	mux := http.NewServeMux()
	mux.HandleFunc("/.well-known/oauth-authorization-server", func(w http.ResponseWriter, _ *http.Request) {
		u := cs.srv.URL
		_ = json.NewEncoder(w).Encode(map[string]any{"issuer": u, "authorization_endpoint": u + "/authorize", "token_endpoint": u + "/token",
			"registration_endpoint": u + "/register", "code_challenge_methods_supported": []string{"S256"},
			"scopes_supported": []string{"tools", "offline_access"}, "token_endpoint_auth_methods_supported": []string{"client_secret_post"},
			"authorization_response_iss_parameter_supported": true})
	})
	mux.HandleFunc("/register", func(w http.ResponseWriter, r *http.Request) {
		var md map[string]any
		_ = json.NewDecoder(r.Body).Decode(&md)
		cs.mu.Lock()
		cs.registered = append(cs.registered, md)
		cs.mu.Unlock()
		w.WriteHeader(http.StatusCreated)
		_ = json.NewEncoder(w).Encode(map[string]any{"client_id": "dyn-1", "client_secret": "dyn-secret", "token_endpoint_auth_method": "client_secret_post"})
	})
	mux.HandleFunc("/token", func(w http.ResponseWriter, r *http.Request) {
		cs.mu.Lock()
		defer cs.mu.Unlock()
		fail := func(e string) {
			w.WriteHeader(http.StatusBadRequest)
			_ = json.NewEncoder(w).Encode(map[string]string{"error": e})
		}
		if r.FormValue("client_id") != "dyn-1" || r.FormValue("client_secret") != "dyn-secret" {
			fail("invalid_client")
			return
		}
		switch r.FormValue("grant_type") {
		case "authorization_code":
			sum := sha256.Sum256([]byte(r.FormValue("code_verifier")))
			if want, ok := cs.challenge[r.FormValue("code")]; !ok || want != base64.RawURLEncoding.EncodeToString(sum[:]) {
				fail("invalid_grant")
				return
			}
			delete(cs.challenge, r.FormValue("code"))
		case "refresh_token":
			if r.FormValue("refresh_token") != "refresh-1" {
				fail("invalid_grant")
				return
			}
			cs.refreshed++
		default:
			fail("unsupported_grant_type")
			return
		}
		cs.issued++
		tok := "access-" + string(rune('0'+cs.issued))
		cs.valid[tok] = true
		_ = json.NewEncoder(w).Encode(map[string]any{"access_token": tok, "token_type": "Bearer", "refresh_token": "refresh-1", "scope": "tools offline_access"})
	})
	cs.srv = httptest.NewServer(mux)
	t.Cleanup(cs.srv.Close)
	return cs
}

// authorize is the browser step: it checks the authorization URL and
// answers as the authorization server would redirect back, with the
// code, the state and the issuer (tamper changes what it answers).
func (cs *codeServer) authorize(t *testing.T, tamper func(q url.Values)) func(context.Context, string) (string, error) {
	return func(_ context.Context, authURL string) (string, error) {
		u, err := url.Parse(authURL)
		require.NoError(t, err)
		q := u.Query()
		assert.Equal(t, cs.srv.URL+"/authorize", u.Scheme+"://"+u.Host+u.Path)
		assert.Equal(t, "code", q.Get("response_type"))
		assert.Equal(t, "S256", q.Get("code_challenge_method"))
		assert.Equal(t, "dyn-1", q.Get("client_id"))
		assert.NotEmpty(t, q.Get("resource"))
		cs.mu.Lock()
		cs.challenge["code-1"] = q.Get("code_challenge")
		cs.mu.Unlock()
		back := url.Values{"code": {"code-1"}, "state": {q.Get("state")}, "iss": {cs.srv.URL}}
		if tamper != nil {
			tamper(back)
		}
		return q.Get("redirect_uri") + "?" + back.Encode(), nil
	}
}

// resource serves an MCP server taking the tokens cs issued.
func (cs *codeServer) resource(t *testing.T) string {
	t.Helper()
	return protectedResource(t, func(token string) bool {
		cs.mu.Lock()
		defer cs.mu.Unlock()
		return cs.valid[token]
	}, map[string]any{"authorization_servers": []string{cs.srv.URL}, "scopes_supported": []string{"tools"}})
}

// TestOAuthAuthorizationCode: a client without credentials registers
// itself, takes the user through the authorization step with PKCE,
// gets a token and a refresh token, and when the token is refused later,
// refreshes it without the user.
func TestOAuthAuthorizationCode(t *testing.T) {
	cs := newCodeServer(t)
	mcpURL := cs.resource(t)
	c, err := client.New(mcpURL, &client.Options{Format: client.FormatMCP, OAuth: &client.OAuth{
		RedirectURL: "http://127.0.0.1:9999/callback", Authorize: cs.authorize(t, nil)}})
	require.NoError(t, err)
	t.Cleanup(func() { _ = c.Close() })
	_, err = c.ListTools(t.Context())
	require.NoError(t, err)

	cs.mu.Lock()
	require.Len(t, cs.registered, 1)
	md := cs.registered[0]
	assert.Equal(t, "native", md["application_type"], "a loopback redirect is a native application")
	assert.ElementsMatch(t, []any{"authorization_code", "refresh_token"}, md["grant_types"])
	assert.Equal(t, 1, cs.issued)
	// The token lapses: the server refuses it from now on.
	cs.valid = map[string]bool{}
	cs.mu.Unlock()

	_, err = c.ListTools(t.Context())
	require.NoError(t, err)
	cs.mu.Lock()
	assert.Equal(t, 1, cs.refreshed, "refreshed, without the user")
	assert.Len(t, cs.registered, 1, "registered once")
	cs.mu.Unlock()
}

// TestOAuthAuthorizationCallback: a callback whose state or issuer is
// not the one sent is not taken, nor one that carries an error or no
// code.
func TestOAuthAuthorizationCallback(t *testing.T) {
	for name, tc := range map[string]struct {
		tamper func(url.Values)
		want   string
	}{
		"state":  {func(q url.Values) { q.Set("state", "forged") }, "state is not the one sent"},
		"issuer": {func(q url.Values) { q.Set("iss", "https://elsewhere.example") }, "is not the issuer"},
		"no iss": {func(q url.Values) { q.Del("iss") }, "has no iss"},
		"error":  {func(q url.Values) { q.Set("error", "access_denied") }, "refused: access_denied"},
		"code":   {func(q url.Values) { q.Del("code") }, "has no code"},
	} {
		t.Run(name, func(t *testing.T) {
			cs := newCodeServer(t)
			c, err := client.New(cs.resource(t), &client.Options{Format: client.FormatMCP, OAuth: &client.OAuth{
				RedirectURL: "https://app.example/callback", Authorize: cs.authorize(t, tc.tamper)}})
			require.NoError(t, err)
			t.Cleanup(func() { _ = c.Close() })
			_, err = c.ListTools(t.Context())
			require.Error(t, err)
			assert.Contains(t, err.Error(), tc.want)
			cs.mu.Lock()
			assert.Zero(t, cs.issued, "no token for a callback not taken")
			assert.Equal(t, "web", cs.registered[0]["application_type"])
			cs.mu.Unlock()
		})
	}
	_, err := client.New("http://127.0.0.1:1/mcp", &client.Options{Format: client.FormatMCP, OAuth: &client.OAuth{Authorize: func(context.Context, string) (string, error) { return "", nil }}})
	assert.ErrorContains(t, err, "needs a RedirectURL")
	_, err = client.New("http://127.0.0.1:1/mcp", &client.Options{Format: client.FormatMCP, OAuth: &client.OAuth{}})
	assert.ErrorContains(t, err, "needs Authorize")
}
