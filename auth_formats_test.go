package otc_test

// The authenticators of package auth on the wire formats other than OTC
// (whose handler package auth's own tests drive): the REST view and MCP
// refuse the same requests as the OTC handler, each in its own envelope,
// with the same challenge and reason.

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/otcgo/otc"
	"github.com/otcgo/otc/auth"
	"github.com/otcgo/otc/internal/testkit"
	"github.com/otcgo/otc/mcp"
	"github.com/otcgo/otc/rest"
)

// Credentials of these tests, long and distinctive so that a leak into a
// body or a header is unmistakable.
const (
	authKeyCI      = "oxp-key-ci-3f9a1c7e5b2d4086a1e94c"
	authKeyPartner = "oxp-key-partner-b71d02c4e8f6a3957c"
)

var authSecret = []byte("auth-test-hs256-secret-6c1e9b47d2a0f835")

// authWhoAmI is what Auth.WhoAmI reports of the identity in its context.
type authWhoAmI struct {
	Authenticated bool   `json:"authenticated"`
	Method        string `json:"method,omitempty"`
	Name          string `json:"name,omitempty"`
}

// newAuthRegistry returns a registry with one tool, Auth.WhoAmI, that
// returns otc.CallerIdentity of its context.
func newAuthRegistry(t testing.TB) *otc.Registry {
	t.Helper()
	reg := otc.NewRegistry(&otc.RegistryOptions{Logger: slog.New(slog.DiscardHandler)})
	require.NoError(t, otc.Register(reg, otc.Tool{
		ID: "Auth.WhoAmI", Version: "1.0.0", Description: "Returns the identity the caller proved.",
	}, func(ctx context.Context, _ struct{}) (authWhoAmI, error) {
		id := otc.CallerIdentity(ctx)
		if id == nil {
			return authWhoAmI{}, nil
		}
		return authWhoAmI{Authenticated: true, Method: id.Method, Name: id.Name}, nil
	}))
	return reg
}

// newAuthKeys returns an API key authenticator with the keys "ci" and
// "partner".
func newAuthKeys(t testing.TB) *auth.APIKeyAuth {
	t.Helper()
	a, err := auth.NewAPIKeyAuth(map[string]string{"ci": authKeyCI, "partner": authKeyPartner})
	require.NoError(t, err)
	return a
}

// newAuthJWT returns an HS256 authenticator under authSecret.
func newAuthJWT(t testing.TB) *auth.JWTAuth {
	t.Helper()
	a, err := auth.NewJWTAuth(&auth.JWTOptions{Secret: authSecret})
	require.NoError(t, err)
	return a
}

// authHS256 signs a token for newAuthJWT, valid for five minutes from
// now unless edit changes its claims.
func authHS256(t testing.TB, edit func(c jwt.MapClaims)) string {
	t.Helper()
	now := time.Now()
	c := jwt.MapClaims{"sub": "agent-7", "iat": now.Add(-10 * time.Second).Unix(), "exp": now.Add(5 * time.Minute).Unix()}
	if edit != nil {
		edit(c)
	}
	tok, err := jwt.NewWithClaims(jwt.SigningMethodHS256, c).SignedString(authSecret)
	require.NoError(t, err)
	return tok
}

// authLines builds a header from name, value pairs with Header.Add, so
// that a name given twice goes on the wire as two header lines.
func authLines(kv ...string) http.Header {
	h := http.Header{}
	for i := 0; i+1 < len(kv); i += 2 {
		h.Add(kv[i], kv[i+1])
	}
	return h
}

// authREST is a REST envelope.
type authREST struct {
	SchemaVersion string `json:"schema_version"`
	OK            bool   `json:"ok"`
	Error         *struct {
		Code    string `json:"code"`
		Message string `json:"message"`
	} `json:"error"`
	Result json.RawMessage `json:"result"`
}

// TestAuthREST: the REST adapter refuses the same requests, in its own
// envelope, with code request.unauthenticated.
func TestAuthREST(t *testing.T) {
	t.Parallel()
	reg := newAuthRegistry(t)
	srv := httptest.NewServer(rest.NewHandler(reg, &rest.Options{Authenticator: auth.AnyOf(newAuthKeys(t), newAuthJWT(t))}))
	t.Cleanup(srv.Close)
	plain := httptest.NewServer(rest.NewHandler(reg, &rest.Options{Authenticator: otc.AuthenticatorFunc(func(*http.Request) (*otc.Identity, error) {
		return nil, errors.New("ldap bind failed: password hunter2")
	})}))
	t.Cleanup(plain.Close)
	keysOnly := httptest.NewServer(rest.NewHandler(reg, &rest.Options{Authenticator: newAuthKeys(t)}))
	t.Cleanup(keysOnly.Close)

	expired := authHS256(t, func(c jwt.MapClaims) { c["exp"] = time.Now().Add(-time.Hour).Unix() })
	good := authHS256(t, nil)
	invoke := []byte(`{"schema_version":"0.1.0","args":{}}`)

	tests := []struct {
		name      string
		srv       *httptest.Server
		method    string
		path      string
		header    http.Header
		body      []byte
		want      string // a piece of the message; "" for 200
		challenge bool
	}{
		{name: "list_without_credentials", srv: srv, method: http.MethodGet, path: "/tools", want: "Authentication required", challenge: true},
		{name: "describe_without_credentials", srv: srv, method: http.MethodGet, path: "/tools/Auth_WhoAmI", want: "Authentication required", challenge: true},
		{name: "invoke_without_credentials", srv: srv, method: http.MethodPost, path: "/tools/Auth_WhoAmI:invoke", body: invoke, want: "Authentication required", challenge: true},
		{name: "invoke_unknown_tool_without_credentials", srv: srv, method: http.MethodPost, path: "/tools/No_Such:invoke", body: invoke, want: "Authentication required", challenge: true},
		{name: "invoke_expired_token", srv: srv, method: http.MethodPost, path: "/tools/Auth_WhoAmI:invoke", header: authLines("Authorization", "Bearer "+expired), body: invoke, want: "expired", challenge: true},
		{name: "invoke_wrong_key", srv: srv, method: http.MethodPost, path: "/tools/Auth_WhoAmI:invoke", header: authLines("OXP-API-Key", "wrong-key-wrong-key"), body: invoke, want: "API key is not valid", challenge: true},
		{name: "keys_only_no_challenge", srv: keysOnly, method: http.MethodGet, path: "/tools", want: "Authentication required"},
		{name: "plain_error_is_generic", srv: plain, method: http.MethodGet, path: "/tools", want: "Authentication failed"},
		{name: "request_id_echoed", srv: srv, method: http.MethodGet, path: "/tools", header: authLines("X-Request-Id", "req-auth-0001"), want: "Authentication required", challenge: true},
		{name: "list_with_key", srv: srv, method: http.MethodGet, path: "/tools", header: authLines("OXP-API-Key", authKeyCI)},
		{name: "invoke_with_key", srv: srv, method: http.MethodPost, path: "/tools/Auth_WhoAmI:invoke", header: authLines("OXP-API-Key", authKeyPartner), body: invoke},
		{name: "invoke_with_token", srv: srv, method: http.MethodPost, path: "/tools/Auth_WhoAmI:invoke", header: authLines("Authorization", "Bearer "+good), body: invoke},
		// Credentials sent twice are refused as on the OTC handler, even
		// when each copy is right and another method would accept them.
		{name: "two_api_keys", srv: srv, method: http.MethodPost, path: "/tools/Auth_WhoAmI:invoke", header: authLines(otc.HeaderAPIKey, authKeyCI, otc.HeaderLegacyAPIKey, authKeyCI), body: invoke, want: "sent more than once", challenge: true},
		{name: "two_tokens_and_right_key", srv: srv, method: http.MethodPost, path: "/tools/Auth_WhoAmI:invoke", header: authLines(otc.HeaderAPIKey, authKeyCI, "Authorization", "Bearer "+good, "Authorization", "Bearer "+good), body: invoke, want: "sent more than once", challenge: true},
		{name: "comma_joined_tokens", srv: srv, method: http.MethodPost, path: "/tools/Auth_WhoAmI:invoke", header: authLines("Authorization", "Bearer "+good+", Bearer "+good), body: invoke, want: "sent more than once", challenge: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			res := testkit.Send(t, tt.srv.Client(), tt.method, tt.srv.URL+tt.path, tt.header, tt.body)
			assert.Equal(t, "application/json", res.Header.Get("Content-Type"))
			assert.NotEmpty(t, res.Header.Get("X-Request-Id"))
			if want := tt.header.Get("X-Request-Id"); want != "" {
				assert.Equal(t, want, res.Header.Get("X-Request-Id"))
			}
			testkit.AssertNoLeak(t, res, authKeyCI, authKeyPartner, expired, good)
			assert.NotContains(t, string(res.Raw), "hunter2")
			if tt.want == "" {
				require.Equal(t, http.StatusOK, res.Status, "body: %s", res.Raw)
				assert.Empty(t, res.Header.Values("WWW-Authenticate"))
				if strings.HasSuffix(tt.path, ":invoke") {
					var out authREST
					require.NoError(t, json.Unmarshal(res.Raw, &out))
					require.True(t, out.OK, "body: %s", res.Raw)
					var id authWhoAmI
					require.NoError(t, json.Unmarshal(out.Result, &id))
					want := authWhoAmI{Authenticated: true, Method: "api_key", Name: "partner"}
					if tt.header.Get("Authorization") != "" {
						want = authWhoAmI{Authenticated: true, Method: "jwt", Name: "agent-7"}
					}
					assert.Equal(t, want, id)
				}
				return
			}
			assert.Equal(t, http.StatusUnauthorized, res.Status, "body: %s", res.Raw)
			var out authREST
			require.NoError(t, json.Unmarshal(res.Raw, &out), "body: %s", res.Raw)
			assert.Equal(t, rest.SchemaVersion, out.SchemaVersion)
			assert.False(t, out.OK)
			require.NotNil(t, out.Error, "body: %s", res.Raw)
			assert.Equal(t, rest.CodeUnauthenticated, out.Error.Code)
			assert.Equal(t, "request.unauthenticated", out.Error.Code)
			assert.Contains(t, strings.ToLower(out.Error.Message), strings.ToLower(tt.want))
			if tt.challenge {
				assert.Equal(t, []string{"Bearer"}, res.Header.Values("WWW-Authenticate"))
			} else {
				assert.Empty(t, res.Header.Values("WWW-Authenticate"))
			}
		})
	}
}

// The REST view and MCP carry the reason of a refused token, as OTC does.
func TestCapabilityRefusalReasonOnEveryFormat(t *testing.T) {
	t.Parallel()
	a := testkit.CapabilityAuth(t, auth.CapabilityOptions{})
	reg := otc.NewRegistry(&otc.RegistryOptions{Logger: slog.New(slog.DiscardHandler)})
	require.NoError(t, otc.Register(reg, otc.Tool{ID: "Open.Ping", Version: "1.0.0", Description: "Answers."},
		func(context.Context, struct{}) (int, error) { return 1, nil }))
	mux := http.NewServeMux()
	mux.Handle("/v1/", http.StripPrefix("/v1", rest.NewHandler(reg, &rest.Options{Authenticator: auth.AnyOf(a)})))
	mux.Handle("/mcp", mcp.NewHandler(reg, &mcp.Options{Authenticator: a}))
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)

	expired := testkit.CapToken(t, (func(c jwt.MapClaims) { c["exp"] = time.Now().Add(-time.Hour).Unix() }))
	for _, tc := range []struct {
		name, path, body, token, reason string
	}{
		{"rest_invalid", "/v1/tools/Open_Ping:invoke", `{"schema_version":"0.1.0","args":{}}`, expired, otc.ReasonInvalidToken},
		{"rest_missing", "/v1/tools/Open_Ping:invoke", `{"schema_version":"0.1.0","args":{}}`, "", otc.ReasonMissingToken},
		{"mcp_invalid", "/mcp", `{"jsonrpc":"2.0","id":1,"method":"ping"}`, expired, otc.ReasonInvalidToken},
		{"mcp_missing", "/mcp", `{"jsonrpc":"2.0","id":1,"method":"ping"}`, "", otc.ReasonMissingToken},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			req, err := http.NewRequest(http.MethodPost, srv.URL+tc.path, strings.NewReader(tc.body))
			require.NoError(t, err)
			req.Header.Set("Content-Type", "application/json")
			if tc.token != "" {
				req.Header.Set("Authorization", "Bearer "+tc.token)
			}
			resp, err := http.DefaultClient.Do(req)
			require.NoError(t, err)
			defer resp.Body.Close()
			raw, err := io.ReadAll(resp.Body)
			require.NoError(t, err)
			assert.Equal(t, http.StatusUnauthorized, resp.StatusCode)
			assert.Equal(t, "Bearer", resp.Header.Get("WWW-Authenticate"))
			var body struct {
				Error struct {
					Details map[string]any `json:"details"` // REST
					Data    map[string]any `json:"data"`    // MCP
				} `json:"error"`
			}
			require.NoError(t, json.Unmarshal(raw, &body), string(raw))
			got := body.Error.Details["reason"]
			if strings.HasPrefix(tc.name, "mcp") {
				got = body.Error.Data["error"]
			}
			assert.Equal(t, tc.reason, got, string(raw))
			if tc.token != "" {
				assert.NotContains(t, string(raw), tc.token[len(tc.token)-20:])
			}
		})
	}
}

// A revoked token is refused with token_revoked on REST and MCP too.
func TestCapabilityRevokedOnEveryFormat(t *testing.T) {
	t.Parallel()
	a := testkit.CapabilityAuth(t, auth.CapabilityOptions{
		Revoked: func(context.Context, string) (bool, error) { return true, nil },
	})
	reg := otc.NewRegistry(&otc.RegistryOptions{Logger: slog.New(slog.DiscardHandler)})
	require.NoError(t, otc.Register(reg, otc.Tool{ID: "Payments.Refund", Version: "1.0.0", Description: "Refunds.",
		Policy: &otc.Policy{ResourceURI: testkit.CapResource, RequiredCapabilities: []string{testkit.CapCapability}}},
		func(context.Context, struct{}) (int, error) { return 1, nil }))
	mux := http.NewServeMux()
	mux.Handle("/v1/", http.StripPrefix("/v1", rest.NewHandler(reg, &rest.Options{Authenticator: a})))
	mux.Handle("/mcp", mcp.NewHandler(reg, &mcp.Options{Authenticator: a}))
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	token := testkit.CapToken(t, nil)
	for _, tc := range []struct{ name, path, body string }{
		{"rest", "/v1/tools/Payments_Refund:invoke", `{"schema_version":"0.1.0","args":{}}`},
		{"mcp", "/mcp", `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"Payments_Refund"}}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			req, err := http.NewRequest(http.MethodPost, srv.URL+tc.path, strings.NewReader(tc.body))
			require.NoError(t, err)
			req.Header.Set("Content-Type", "application/json")
			req.Header.Set("Authorization", "Bearer "+token)
			resp, err := http.DefaultClient.Do(req)
			require.NoError(t, err)
			defer resp.Body.Close()
			raw, err := io.ReadAll(resp.Body)
			require.NoError(t, err)
			assert.Equal(t, http.StatusUnauthorized, resp.StatusCode, string(raw))
			assert.Contains(t, string(raw), `"`+otc.ReasonTokenRevoked+`"`)
		})
	}
}
