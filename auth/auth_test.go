package auth_test

// Server authentication (SPEC §8) and the client's side of it, over real
// HTTP. Every refusal is checked for what SPEC §6 fixes for the
// authentication class (401, Content-Type application/json, a body of
// {"$schema", "message"}, WWW-Authenticate: Bearer exactly when JWT is
// configured), for a message that says what was wrong, and for the absence
// of the credential itself anywhere in the answer.
//
// The JWT authenticators of these tests read a pinned clock (authNow, set
// through SetJWTAuthClockForTest in export_test.go), so that the
// boundaries of exp, nbf, iat and the leeway are exact; the rows that go
// through the client use the real clock, as a deployed server does.

import (
	"bytes"
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/otcgo/otc"
	"github.com/otcgo/otc/auth"
	"github.com/otcgo/otc/client"
	"github.com/otcgo/otc/internal/testkit"
)

// Credentials of the tests. They are long and distinctive, so that a leak
// into a body or a header is unmistakable.
const (
	authKeyCI      = "oxp-key-ci-3f9a1c7e5b2d4086a1e94c"
	authKeyPartner = "oxp-key-partner-b71d02c4e8f6a3957c"
	authAudience   = "tools.example.com"
)

var (
	authSecret      = []byte("auth-test-hs256-secret-6c1e9b47d2a0f835")
	authOtherSecret = []byte("auth-test-other-secret-0d8e2f71a9c4b653")

	// authNow is the pinned clock of the JWT authenticators: a whole
	// second, since JWT times are whole seconds.
	authNow = time.Unix(1_893_456_000, 0)
)

func authClock() time.Time { return authNow }

// authWhoAmI is what the tool Auth.WhoAmI reports of the identity it finds
// in its context.
type authWhoAmI struct {
	Authenticated bool           `json:"authenticated"`
	Method        string         `json:"method,omitempty"`
	Name          string         `json:"name,omitempty"`
	Claims        map[string]any `json:"claims,omitempty"`
}

// newAuthRegistry returns a registry with one tool, Auth.WhoAmI, that
// returns otc.CallerIdentity of its context.
func newAuthRegistry(t testing.TB) *otc.Registry {
	t.Helper()
	return newAuthCountingRegistry(t, nil)
}

// newAuthCountingRegistry is newAuthRegistry whose tool adds one to runs,
// when not nil, each time it runs, so that a test can tell that a refused
// request never reached it.
func newAuthCountingRegistry(t testing.TB, runs *atomic.Int64) *otc.Registry {
	t.Helper()
	reg := otc.NewRegistry(nil)
	require.NoError(t, otc.Register(reg, otc.Tool{
		ID: "Auth.WhoAmI", Version: "1.0.0", Description: "Returns the identity the caller proved.",
	}, func(ctx context.Context, _ struct{}) (authWhoAmI, error) {
		if runs != nil {
			runs.Add(1)
		}
		id := otc.CallerIdentity(ctx)
		if id == nil {
			return authWhoAmI{}, nil
		}
		return authWhoAmI{Authenticated: true, Method: id.Method, Name: id.Name, Claims: id.Claims}, nil
	}))
	return reg
}

// newAuthServer serves Auth.WhoAmI with opts over httptest.
func newAuthServer(t *testing.T, opts *otc.HandlerOptions) *httptest.Server {
	t.Helper()
	srv := httptest.NewServer(otc.NewHandler(newAuthRegistry(t), opts))
	t.Cleanup(srv.Close)
	return srv
}

// newAuthJWT returns a JWT authenticator on the pinned clock.
func newAuthJWT(t testing.TB, opts auth.JWTOptions) *auth.JWTAuth {
	t.Helper()
	if opts.Secret == nil {
		opts.Secret = authSecret
	}
	a, err := auth.NewJWTAuth(&opts)
	require.NoError(t, err)
	auth.SetJWTAuthClockForTest(a, authClock)
	return a
}

// newAuthKeys returns an API key authenticator with the keys "ci" and
// "partner".
func newAuthKeys(t testing.TB) *auth.APIKeyAuth {
	t.Helper()
	a, err := auth.NewAPIKeyAuth(map[string]string{"ci": authKeyCI, "partner": authKeyPartner})
	require.NoError(t, err)
	return a
}

// authHeader builds a header from name, value pairs.
func authHeader(kv ...string) http.Header {
	h := http.Header{}
	for i := 0; i+1 < len(kv); i += 2 {
		h.Set(kv[i], kv[i+1])
	}
	return h
}

// authWhoAmICall is the body of a call to Auth.WhoAmI.
var authWhoAmICall = []byte(`{"request":{"tool_id":"Auth.WhoAmI","input":{}}}`)

// authCall calls Auth.WhoAmI on srv with the given headers.
func authCall(t *testing.T, srv *httptest.Server, header http.Header) testkit.Response {
	t.Helper()
	return testkit.Send(t, srv.Client(), http.MethodPost, srv.URL+"/tools/call", header, authWhoAmICall)
}

// requireAuthAccepted checks a successful call of Auth.WhoAmI and returns
// what the tool saw.
func requireAuthAccepted(t *testing.T, res testkit.Response) authWhoAmI {
	t.Helper()
	require.Equal(t, http.StatusOK, res.Status, "body: %s", res.Raw)
	assert.Equal(t, "application/json", res.Header.Get("Content-Type"))
	assert.Empty(t, res.Header.Values("WWW-Authenticate"), "a 200 carries no challenge")
	var body struct {
		Schema string `json:"$schema"`
		Result struct {
			Success bool       `json:"success"`
			Value   authWhoAmI `json:"value"`
		} `json:"result"`
	}
	require.NoError(t, json.Unmarshal(res.Raw, &body), "body: %s", res.Raw)
	assert.NotEmpty(t, body.Schema)
	require.True(t, body.Result.Success, "body: %s", res.Raw)
	return body.Result.Value
}

// assertAuthRefused checks a 401 of the OTC handler: the shape SPEC §6
// gives the authentication class, a message containing wantMsg (case
// folded), the challenge exactly when challenge is true, and none of the
// credentials in leaks, nor any of their dot- or space-separated pieces
// of 8 bytes or more, in the body or a header.
func assertAuthRefused(t *testing.T, res testkit.Response, wantMsg string, challenge bool, leaks ...string) {
	t.Helper()
	assert.Equal(t, http.StatusUnauthorized, res.Status, "body: %s", res.Raw)
	assert.Equal(t, "application/json", res.Header.Get("Content-Type"))
	var body map[string]any
	if assert.NoError(t, json.Unmarshal(res.Raw, &body), "body: %s", res.Raw) {
		assert.NotEmpty(t, body["$schema"], "body: %s", res.Raw)
		msg, _ := body["message"].(string)
		assert.Contains(t, strings.ToLower(msg), strings.ToLower(wantMsg), "message")
		for k := range body {
			assert.Contains(t, []string{"$schema", "message"}, k, "a 401 body is {$schema, message} (SPEC §6)")
		}
	}
	if challenge {
		assert.Equal(t, []string{"Bearer"}, res.Header.Values("WWW-Authenticate"))
	} else {
		assert.Empty(t, res.Header.Values("WWW-Authenticate"), "no challenge without JWT")
	}
	testkit.AssertNoLeak(t, res, leaks...)
}

// authClaims returns the claims of a valid token on the pinned clock,
// changed by edit.
func authClaims(edit func(c jwt.MapClaims)) jwt.MapClaims {
	c := jwt.MapClaims{
		"sub":   "agent-7",
		"iat":   authNow.Add(-10 * time.Second).Unix(),
		"exp":   authNow.Add(5 * time.Minute).Unix(),
		"scope": "tools:call",
	}
	if edit != nil {
		edit(c)
	}
	return c
}

// authSign signs claims with method and key.
func authSign(t testing.TB, method jwt.SigningMethod, key any, claims jwt.MapClaims) string {
	t.Helper()
	tok, err := jwt.NewWithClaims(method, claims).SignedString(key)
	require.NoError(t, err)
	return tok
}

// authHS256 signs claims as the server expects them signed.
func authHS256(t testing.TB, claims jwt.MapClaims) string {
	t.Helper()
	return authSign(t, jwt.SigningMethodHS256, authSecret, claims)
}

// authB64 is the base64url encoding without padding that JWTs use.
func authB64(s string) string { return base64.RawURLEncoding.EncodeToString([]byte(s)) }

// authUnsigned builds an "alg": "none" token by hand: header, claims and
// an empty signature.
func authUnsigned(t testing.TB, claims jwt.MapClaims) string {
	t.Helper()
	payload, err := json.Marshal(claims)
	require.NoError(t, err)
	return authB64(`{"alg":"none","typ":"JWT"}`) + "." + authB64(string(payload)) + "."
}

var (
	authRSAKey = sync.OnceValues(func() (*rsa.PrivateKey, error) { return rsa.GenerateKey(rand.Reader, 2048) })
	authECKey  = sync.OnceValues(func() (*ecdsa.PrivateKey, error) { return ecdsa.GenerateKey(elliptic.P256(), rand.Reader) })
)

func TestAuthAPIKey(t *testing.T) {
	t.Parallel()
	srv := newAuthServer(t, &otc.HandlerOptions{Authenticator: newAuthKeys(t)})

	tests := []struct {
		name   string
		header http.Header
		want   string // the identity's name on 200; a piece of the message on 401
		ok     bool
	}{
		{name: "right_key_ci", header: authHeader("OXP-API-Key", authKeyCI), want: "ci", ok: true},
		{name: "right_key_partner", header: authHeader("OXP-API-Key", authKeyPartner), want: "partner", ok: true},
		{name: "legacy_header_OTC-API-Key", header: authHeader("OTC-API-Key", authKeyCI), want: "ci", ok: true},
		{name: "legacy_header_partner", header: authHeader("OTC-API-Key", authKeyPartner), want: "partner", ok: true},
		{name: "header_name_case_insensitive", header: http.Header{"oxp-api-key": {authKeyCI}}, want: "ci", ok: true},
		{name: "no_credentials", header: nil, want: "Authentication required"},
		{name: "wrong_key", header: authHeader("OXP-API-Key", "oxp-key-wrong-00000000000000000000"), want: "API key is not valid"},
		{name: "wrong_key_on_legacy_header", header: authHeader("OTC-API-Key", "oxp-key-wrong-00000000000000000000"), want: "API key is not valid"},
		{name: "key_with_extra_byte", header: authHeader("OXP-API-Key", authKeyCI+"x"), want: "API key is not valid"},
		{name: "key_prefix", header: authHeader("OXP-API-Key", authKeyCI[:len(authKeyCI)-1]), want: "API key is not valid"},
		{name: "key_in_other_case", header: authHeader("OXP-API-Key", strings.ToUpper(authKeyCI)), want: "API key is not valid"},
		{name: "both_keys_joined", header: authHeader("OXP-API-Key", authKeyCI+","+authKeyPartner), want: "API key is not valid"},
		{name: "empty_key", header: authHeader("OXP-API-Key", ""), want: "Authentication required"},
		{name: "wrong_header_X-API-Key", header: authHeader("X-API-Key", authKeyCI), want: "Authentication required"},
		{name: "key_as_bearer_token", header: authHeader("Authorization", "Bearer "+authKeyCI), want: "Authentication required"},
		{name: "key_as_raw_authorization", header: authHeader("Authorization", authKeyCI), want: "Authentication required"},
		{name: "key_in_query_string_is_not_read", header: nil, want: "Authentication required"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			url := srv.URL + "/tools/call"
			if tt.name == "key_in_query_string_is_not_read" {
				url += "?api_key=" + authKeyCI
			}
			res := testkit.Send(t, srv.Client(), http.MethodPost, url, tt.header, authWhoAmICall)
			if tt.ok {
				id := requireAuthAccepted(t, res)
				assert.Equal(t, authWhoAmI{Authenticated: true, Method: "api_key", Name: tt.want}, id)
				testkit.AssertNoLeak(t, res, authKeyCI, authKeyPartner)
				return
			}
			assertAuthRefused(t, res, tt.want, false, authKeyCI, authKeyPartner)
			if strings.Contains(tt.want, "required") {
				assert.Contains(t, string(res.Raw), otc.HeaderAPIKey, "the message names the header to use")
			}
		})
	}
}

func TestAuthJWT(t *testing.T) {
	t.Parallel()
	jwtAuth := newAuthJWT(t, auth.JWTOptions{Audiences: []string{authAudience, "billing"}})
	srv := newAuthServer(t, &otc.HandlerOptions{Authenticator: jwtAuth})

	bearer := func(c jwt.MapClaims) func(t *testing.T) string {
		return func(t *testing.T) string { return "Bearer " + authHS256(t, c) }
	}
	signed := func(method jwt.SigningMethod, key func(t *testing.T) any) func(t *testing.T) string {
		return func(t *testing.T) string { return "Bearer " + authSign(t, method, key(t), authClaims(nil)) }
	}
	secret := func(*testing.T) any { return authSecret }
	future := authNow.Add(10 * time.Minute).Unix()

	tests := []struct {
		name  string
		authz func(t *testing.T) string // the Authorization header; "" sends none
		want  string                    // the identity's name on 200; a piece of the message on 401
		ok    bool
	}{
		{name: "valid", authz: bearer(authClaims(nil)), want: "agent-7", ok: true},
		{name: "lowercase_bearer_scheme", authz: func(t *testing.T) string { return "bearer " + authHS256(t, authClaims(nil)) }, want: "agent-7", ok: true},
		{name: "uppercase_bearer_scheme", authz: func(t *testing.T) string { return "BEARER " + authHS256(t, authClaims(nil)) }, want: "agent-7", ok: true},
		{name: "no_sub", authz: bearer(authClaims(func(c jwt.MapClaims) { delete(c, "sub") })), want: "", ok: true},
		{name: "aud_absent", authz: bearer(authClaims(nil)), want: "agent-7", ok: true},
		{name: "aud_allowed", authz: bearer(authClaims(func(c jwt.MapClaims) { c["aud"] = authAudience })), want: "agent-7", ok: true},
		{name: "aud_second_allowed", authz: bearer(authClaims(func(c jwt.MapClaims) { c["aud"] = "billing" })), want: "agent-7", ok: true},
		{name: "aud_array_with_one_allowed", authz: bearer(authClaims(func(c jwt.MapClaims) { c["aud"] = []string{"other.example.com", authAudience} })), want: "agent-7", ok: true},
		{name: "exp_14_minutes_ahead", authz: bearer(authClaims(func(c jwt.MapClaims) { c["exp"] = authNow.Add(14 * time.Minute).Unix() })), want: "agent-7", ok: true},
		{name: "nbf_past", authz: bearer(authClaims(func(c jwt.MapClaims) { c["nbf"] = authNow.Add(-time.Minute).Unix() })), want: "agent-7", ok: true},
		{name: "no_iat", authz: bearer(authClaims(func(c jwt.MapClaims) { delete(c, "iat") })), want: "agent-7", ok: true},

		{name: "no_credentials", authz: nil, want: "Authentication required"},
		{name: "expired", authz: bearer(authClaims(func(c jwt.MapClaims) { c["exp"] = authNow.Add(-time.Hour).Unix() })), want: "expired"},
		{name: "no_exp", authz: bearer(authClaims(func(c jwt.MapClaims) { delete(c, "exp") })), want: "no expiry"},
		{name: "exp_2_hours_ahead", authz: bearer(authClaims(func(c jwt.MapClaims) { c["exp"] = authNow.Add(2 * time.Hour).Unix() })), want: "too far in the future"},
		{name: "exp_16_minutes_ahead", authz: bearer(authClaims(func(c jwt.MapClaims) { c["exp"] = authNow.Add(16 * time.Minute).Unix() })), want: "too far in the future"},
		{name: "exp_a_string", authz: bearer(authClaims(func(c jwt.MapClaims) { c["exp"] = "tomorrow" })), want: "wrong type"},
		{name: "nbf_in_the_future", authz: bearer(authClaims(func(c jwt.MapClaims) { c["nbf"] = future })), want: "not valid yet"},
		{name: "iat_in_the_future", authz: bearer(authClaims(func(c jwt.MapClaims) { c["iat"] = future })), want: "issued in the future"},
		{name: "wrong_aud", authz: bearer(authClaims(func(c jwt.MapClaims) { c["aud"] = "evil.example.com" })), want: "audience"},
		{name: "aud_array_none_allowed", authz: bearer(authClaims(func(c jwt.MapClaims) { c["aud"] = []string{"a.example.com", "b.example.com"} })), want: "audience"},
		{name: "aud_a_number", authz: bearer(authClaims(func(c jwt.MapClaims) { c["aud"] = 42 })), want: "audience"},
		{name: "alg_none_by_hand", authz: func(t *testing.T) string { return "Bearer " + authUnsigned(t, authClaims(nil)) }, want: "HS256"},
		{name: "alg_none_jwt_library", authz: signed(jwt.SigningMethodNone, func(*testing.T) any { return jwt.UnsafeAllowNoneSignatureType }), want: "HS256"},
		{name: "alg_none_with_hs256_signature", authz: func(t *testing.T) string {
			good := strings.Split(authHS256(t, authClaims(nil)), ".")
			return "Bearer " + authB64(`{"alg":"none","typ":"JWT"}`) + "." + good[1] + "." + good[2]
		}, want: "HS256"},
		{name: "RS256", authz: signed(jwt.SigningMethodRS256, func(t *testing.T) any {
			k, err := authRSAKey()
			require.NoError(t, err)
			return k
		}), want: "HS256"},
		{name: "ES256", authz: signed(jwt.SigningMethodES256, func(t *testing.T) any {
			k, err := authECKey()
			require.NoError(t, err)
			return k
		}), want: "HS256"},
		{name: "HS384_same_secret", authz: signed(jwt.SigningMethodHS384, secret), want: "HS256"},
		{name: "HS512_same_secret", authz: signed(jwt.SigningMethodHS512, secret), want: "HS256"},
		{name: "signature_from_another_secret", authz: func(t *testing.T) string {
			return "Bearer " + authSign(t, jwt.SigningMethodHS256, authOtherSecret, authClaims(nil))
		}, want: "signature"},
		{name: "payload_swapped_under_a_valid_signature", authz: func(t *testing.T) string {
			good := strings.Split(authHS256(t, authClaims(nil)), ".")
			admin := strings.Split(authHS256(t, authClaims(func(c jwt.MapClaims) { c["sub"] = "admin" })), ".")
			return "Bearer " + good[0] + "." + admin[1] + "." + good[2]
		}, want: "signature"},
		{name: "signature_stripped", authz: func(t *testing.T) string {
			good := strings.Split(authHS256(t, authClaims(nil)), ".")
			return "Bearer " + good[0] + "." + good[1] + "."
		}, want: "signature"},
		{name: "two_parts", authz: func(t *testing.T) string {
			good := strings.Split(authHS256(t, authClaims(nil)), ".")
			return "Bearer " + good[0] + "." + good[1]
		}, want: "malformed"},
		{name: "four_parts", authz: func(t *testing.T) string { return "Bearer " + authHS256(t, authClaims(nil)) + ".c2lnbmF0dXJl" }, want: "malformed"},
		{name: "garbage", authz: func(*testing.T) string { return "Bearer this-is-not-a-jwt-at-all-0123456789" }, want: "malformed"},
		{name: "bad_base64_in_header_segment", authz: func(t *testing.T) string {
			good := strings.Split(authHS256(t, authClaims(nil)), ".")
			return "Bearer " + "!!not*base64url!!" + "." + good[1] + "." + good[2]
		}, want: "malformed"},
		{name: "bad_base64_in_payload_segment", authz: func(t *testing.T) string {
			good := strings.Split(authHS256(t, authClaims(nil)), ".")
			return "Bearer " + good[0] + ".%%%%payload%%%%." + good[2]
		}, want: "malformed"},
		{name: "header_not_json", authz: func(t *testing.T) string {
			good := strings.Split(authHS256(t, authClaims(nil)), ".")
			return "Bearer " + authB64("not json at all") + "." + good[1] + "." + good[2]
		}, want: "malformed"},
		{name: "empty_token", authz: func(*testing.T) string { return "Bearer " }, want: `"Bearer <token>"`},
		{name: "basic_scheme", authz: func(*testing.T) string { return "Basic " + authB64("agent-7:"+string(authSecret)) }, want: `"Bearer <token>"`},
		{name: "token_without_scheme", authz: func(t *testing.T) string { return authHS256(t, authClaims(nil)) }, want: `"Bearer <token>"`},
		{name: "other_scheme_with_valid_token", authz: func(t *testing.T) string { return "Token " + authHS256(t, authClaims(nil)) }, want: `"Bearer <token>"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			var header http.Header
			authz := ""
			if tt.authz != nil {
				authz = tt.authz(t)
				header = authHeader("Authorization", authz)
			}
			res := authCall(t, srv, header)
			if tt.ok {
				id := requireAuthAccepted(t, res)
				assert.Equal(t, "jwt", id.Method)
				assert.Equal(t, tt.want, id.Name)
				return
			}
			assertAuthRefused(t, res, tt.want, true, authz, string(authSecret))
		})
	}
}

// authHS256Header signs claims with HS256 under secret (the server's when
// nil), with extra members in the JOSE header. Under the server's secret
// the signature is right, so only the header can be the reason for a
// refusal.
func authHS256Header(t testing.TB, secret []byte, header map[string]any, claims jwt.MapClaims) string {
	t.Helper()
	if secret == nil {
		secret = authSecret
	}
	tok := jwt.NewWithClaims(jwt.SigningMethodHS256, claims)
	for k, v := range header {
		tok.Header[k] = v
	}
	s, err := tok.SignedString(secret)
	require.NoError(t, err)
	return s
}

// TestAuthJWTCrit: a token whose header has "crit" is refused, whatever it
// lists, even when correctly signed: the server understands no extension,
// and RFC 7515 §4.1.11 says a recipient must then reject the token. The
// rows without "crit" are the controls: the same headers otherwise pass.
func TestAuthJWTCrit(t *testing.T) {
	t.Parallel()
	srv := newAuthServer(t, &otc.HandlerOptions{Authenticator: newAuthJWT(t, auth.JWTOptions{})})
	const wantMsg = "requires extensions that this server does not support"

	tests := []struct {
		name   string
		header map[string]any // extra members of the JOSE header
		secret []byte         // nil for the server's
		ok     bool
	}{
		{name: "control_no_crit", header: nil, ok: true},
		{name: "control_b64_without_crit", header: map[string]any{"b64": true}, ok: true},
		{name: "crit_b64", header: map[string]any{"b64": true, "crit": []string{"b64"}}},
		{name: "crit_b64_false", header: map[string]any{"b64": false, "crit": []string{"b64"}}},
		{name: "crit_exp", header: map[string]any{"crit": []string{"exp"}}},
		{name: "crit_empty_list", header: map[string]any{"crit": []string{}}},
		{name: "crit_unknown_extension", header: map[string]any{"https://ext.example.com/x": 1, "crit": []string{"https://ext.example.com/x"}}},
		{name: "crit_null", header: map[string]any{"crit": nil}},
		{name: "crit_not_a_list", header: map[string]any{"crit": "exp"}},
		// The extension is refused before the signature is checked: it may
		// change what was signed, so "signature not valid" would mislead.
		{name: "crit_under_another_secret", header: map[string]any{"crit": []string{"exp"}}, secret: authOtherSecret},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			tok := authHS256Header(t, tt.secret, tt.header, authClaims(nil))
			res := authCall(t, srv, authHeader("Authorization", "Bearer "+tok))
			if tt.ok {
				assert.Equal(t, "agent-7", requireAuthAccepted(t, res).Name)
				return
			}
			assertAuthRefused(t, res, wantMsg, true, tok, string(authSecret))
			assert.Contains(t, authMessage(t, res), `"crit"`, "the message names the header parameter")
		})
	}
}

// TestAuthJWTClock covers the leeway and the cap on exp, on the pinned
// clock. RFC 7519 §4.1.4: the current time must be before exp, so a token
// whose exp plus the leeway is exactly now is expired.
func TestAuthJWTClock(t *testing.T) {
	t.Parallel()
	at := func(d time.Duration) int64 { return authNow.Add(d).Unix() }

	tests := []struct {
		name   string
		opts   auth.JWTOptions
		claims jwt.MapClaims
		want   string // "" for accepted, else a piece of the message
	}{
		{name: "expired_5s_ago_default_leeway", claims: authClaims(func(c jwt.MapClaims) { c["exp"] = at(-5 * time.Second) })},
		{name: "expired_5s_ago_no_leeway", opts: auth.JWTOptions{Leeway: -1}, claims: authClaims(func(c jwt.MapClaims) { c["exp"] = at(-5 * time.Second) }), want: "expired"},
		{name: "expired_29s_ago_default_leeway", claims: authClaims(func(c jwt.MapClaims) { c["exp"] = at(-29 * time.Second) })},
		{name: "expired_30s_ago_default_leeway", claims: authClaims(func(c jwt.MapClaims) { c["exp"] = at(-30 * time.Second) }), want: "expired"},
		{name: "expires_now_no_leeway", opts: auth.JWTOptions{Leeway: -1}, claims: authClaims(func(c jwt.MapClaims) { c["exp"] = at(0) }), want: "expired"},
		{name: "expires_in_1s_no_leeway", opts: auth.JWTOptions{Leeway: -1}, claims: authClaims(func(c jwt.MapClaims) { c["exp"] = at(time.Second) })},
		{name: "expired_90s_ago_2min_leeway", opts: auth.JWTOptions{Leeway: 2 * time.Minute}, claims: authClaims(func(c jwt.MapClaims) { c["exp"] = at(-90 * time.Second) })},
		{name: "nbf_in_5s_default_leeway", claims: authClaims(func(c jwt.MapClaims) { c["nbf"] = at(5 * time.Second) })},
		{name: "nbf_in_5s_no_leeway", opts: auth.JWTOptions{Leeway: -1}, claims: authClaims(func(c jwt.MapClaims) { c["nbf"] = at(5 * time.Second) }), want: "not valid yet"},
		{name: "nbf_in_31s_default_leeway", claims: authClaims(func(c jwt.MapClaims) { c["nbf"] = at(31 * time.Second) }), want: "not valid yet"},
		{name: "iat_in_5s_default_leeway", claims: authClaims(func(c jwt.MapClaims) { c["iat"] = at(5 * time.Second) })},
		{name: "iat_in_5s_no_leeway", opts: auth.JWTOptions{Leeway: -1}, claims: authClaims(func(c jwt.MapClaims) { c["iat"] = at(5 * time.Second) }), want: "issued in the future"},
		{name: "exp_at_default_cap", claims: authClaims(func(c jwt.MapClaims) { c["exp"] = at(15 * time.Minute) })},
		{name: "exp_2h_ahead_default_cap", claims: authClaims(func(c jwt.MapClaims) { c["exp"] = at(2 * time.Hour) }), want: "at most 15m0s ahead"},
		{name: "exp_2h_ahead_3h_cap", opts: auth.JWTOptions{MaxLifetime: 3 * time.Hour}, claims: authClaims(func(c jwt.MapClaims) { c["exp"] = at(2 * time.Hour) })},
		{name: "exp_4h_ahead_3h_cap", opts: auth.JWTOptions{MaxLifetime: 3 * time.Hour}, claims: authClaims(func(c jwt.MapClaims) { c["exp"] = at(4 * time.Hour) }), want: "at most 3h0m0s ahead"},
		{name: "exp_5min_ahead_1min_cap_no_leeway", opts: auth.JWTOptions{MaxLifetime: time.Minute, Leeway: -1}, claims: authClaims(func(c jwt.MapClaims) { c["exp"] = at(5 * time.Minute) }), want: "too far in the future"},
		{name: "exp_1min_ahead_1min_cap_no_leeway", opts: auth.JWTOptions{MaxLifetime: time.Minute, Leeway: -1}, claims: authClaims(func(c jwt.MapClaims) { c["exp"] = at(time.Minute) })},
		{name: "aud_present_with_empty_allow_list", claims: authClaims(func(c jwt.MapClaims) { c["aud"] = authAudience }), want: "audience"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			srv := newAuthServer(t, &otc.HandlerOptions{Authenticator: newAuthJWT(t, tt.opts)})
			tok := authHS256(t, tt.claims)
			res := authCall(t, srv, authHeader("Authorization", "Bearer "+tok))
			if tt.want == "" {
				assert.Equal(t, "agent-7", requireAuthAccepted(t, res).Name)
				return
			}
			assertAuthRefused(t, res, tt.want, true, tok)
		})
	}
}

// TestAuthJWTRealClock checks the default clock: the pinned one of the
// other tests replaces it.
func TestAuthJWTRealClock(t *testing.T) {
	t.Parallel()
	a, err := auth.NewJWTAuth(&auth.JWTOptions{Secret: authSecret})
	require.NoError(t, err)
	srv := newAuthServer(t, &otc.HandlerOptions{Authenticator: a})
	now := time.Now()

	good := authHS256(t, jwt.MapClaims{"sub": "live", "iat": now.Unix(), "exp": now.Add(time.Minute).Unix()})
	assert.Equal(t, "live", requireAuthAccepted(t, authCall(t, srv, authHeader("Authorization", "Bearer "+good))).Name)

	// Valid on the pinned clock of the other tests, years away from now.
	pinned := authHS256(t, authClaims(nil))
	assertAuthRefused(t, authCall(t, srv, authHeader("Authorization", "Bearer "+pinned)), "", true, pinned)

	expired := authHS256(t, jwt.MapClaims{"sub": "live", "iat": now.Add(-time.Hour).Unix(), "exp": now.Add(-10 * time.Minute).Unix()})
	assertAuthRefused(t, authCall(t, srv, authHeader("Authorization", "Bearer "+expired)), "expired", true, expired)
}

// TestAuthHugeHeader sends a 64 KB Authorization header, and an API key as
// long: 401, and the server keeps serving.
func TestAuthHugeHeader(t *testing.T) {
	t.Parallel()
	huge := strings.Repeat("A", 64<<10)
	good := authHS256(t, authClaims(nil))

	tests := []struct {
		name      string
		auth      otc.Authenticator
		header    http.Header
		want      string
		challenge bool
		next      http.Header // a valid request afterwards
	}{
		{name: "bearer_token_64KB", auth: newAuthJWT(t, auth.JWTOptions{}), header: authHeader("Authorization", "Bearer "+huge), want: "malformed", challenge: true, next: authHeader("Authorization", "Bearer "+good)},
		{name: "bearer_jwt_shaped_64KB", auth: newAuthJWT(t, auth.JWTOptions{}), header: authHeader("Authorization", "Bearer "+huge[:32<<10]+"."+huge[:16<<10]+"."+huge[:16<<10]), want: "malformed", challenge: true, next: authHeader("Authorization", "Bearer "+good)},
		{name: "api_key_64KB", auth: newAuthKeys(t), header: authHeader("OXP-API-Key", huge), want: "API key is not valid", next: authHeader("OXP-API-Key", authKeyCI)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			srv := newAuthServer(t, &otc.HandlerOptions{Authenticator: tt.auth})
			res := authCall(t, srv, tt.header)
			assertAuthRefused(t, res, tt.want, tt.challenge, huge[:64])
			assert.Less(t, len(res.Raw), 1024, "the answer does not grow with the header")
			requireAuthAccepted(t, authCall(t, srv, tt.next))
		})
	}
}

// TestAuthAnyOf enables both methods at once: a request passes if either
// does (SPEC §8).
func TestAuthAnyOf(t *testing.T) {
	t.Parallel()
	srv := newAuthServer(t, &otc.HandlerOptions{Authenticator: auth.AnyOf(newAuthKeys(t), newAuthJWT(t, auth.JWTOptions{}))})
	good := authHS256(t, authClaims(nil))
	expired := authHS256(t, authClaims(func(c jwt.MapClaims) { c["exp"] = authNow.Add(-time.Hour).Unix() }))
	const wrongKey = "oxp-key-wrong-11111111111111111111"

	tests := []struct {
		name   string
		header http.Header
		method string // the identity's method on 200; "" for 401
		want   string // the identity's name on 200; a piece of the message on 401
	}{
		{name: "api_key_only", header: authHeader("OXP-API-Key", authKeyCI), method: "api_key", want: "ci"},
		{name: "legacy_api_key_only", header: authHeader("OTC-API-Key", authKeyPartner), method: "api_key", want: "partner"},
		{name: "token_only", header: authHeader("Authorization", "Bearer "+good), method: "jwt", want: "agent-7"},
		{name: "both_right", header: authHeader("OXP-API-Key", authKeyCI, "Authorization", "Bearer "+good), method: "api_key", want: "ci"},
		{name: "wrong_api_key_right_token", header: authHeader("OXP-API-Key", wrongKey, "Authorization", "Bearer "+good), method: "jwt", want: "agent-7"},
		{name: "right_api_key_expired_token", header: authHeader("OXP-API-Key", authKeyCI, "Authorization", "Bearer "+expired), method: "api_key", want: "ci"},
		{name: "right_api_key_basic_scheme", header: authHeader("OXP-API-Key", authKeyCI, "Authorization", "Basic dXNlcjpwYXNzd29yZA=="), method: "api_key", want: "ci"},
		{name: "wrong_api_key_no_token", header: authHeader("OXP-API-Key", wrongKey), want: "API key is not valid"},
		{name: "no_api_key_expired_token", header: authHeader("Authorization", "Bearer "+expired), want: "expired"},
		{name: "no_api_key_malformed_token", header: authHeader("Authorization", "Bearer x.y"), want: "malformed"},
		{name: "wrong_api_key_expired_token", header: authHeader("OXP-API-Key", wrongKey, "Authorization", "Bearer "+expired), want: "API key is not valid"},
		{name: "nothing", header: nil, want: "Authentication required"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			res := authCall(t, srv, tt.header)
			if tt.method != "" {
				id := requireAuthAccepted(t, res)
				assert.Equal(t, tt.method, id.Method)
				assert.Equal(t, tt.want, id.Name)
				return
			}
			assertAuthRefused(t, res, tt.want, true, authKeyCI, authKeyPartner, wrongKey, good, expired)
			if tt.name == "nothing" {
				msg := authMessage(t, res)
				assert.Contains(t, msg, otc.HeaderAPIKey, "names the API key way")
				assert.Contains(t, msg, "bearer token", "names the JWT way")
			}
		})
	}
}

// TestAuthAnyOfOrder: the message for a request without credentials names
// both ways whatever the order, and the challenge is sent whenever JWT is
// among the methods.
func TestAuthAnyOfOrder(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name      string
		auth      otc.Authenticator
		ways      []string
		challenge bool
	}{
		{name: "jwt_then_api_key", auth: auth.AnyOf(newAuthJWT(t, auth.JWTOptions{}), newAuthKeys(t)), ways: []string{otc.HeaderAPIKey, "bearer token"}, challenge: true},
		{name: "api_key_alone", auth: auth.AnyOf(newAuthKeys(t)), ways: []string{otc.HeaderAPIKey}},
		{name: "jwt_alone", auth: auth.AnyOf(newAuthJWT(t, auth.JWTOptions{})), ways: []string{"bearer token"}, challenge: true},
		{name: "custom_and_jwt", auth: auth.AnyOf(otc.AuthenticatorFunc(func(*http.Request) (*otc.Identity, error) {
			return nil, fmt.Errorf("no tenant header: %w", otc.ErrNoCredentials)
		}), newAuthJWT(t, auth.JWTOptions{})), ways: []string{"bearer token"}, challenge: true},
		{name: "none", auth: auth.AnyOf(), ways: nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			srv := newAuthServer(t, &otc.HandlerOptions{Authenticator: tt.auth})
			res := authCall(t, srv, nil)
			assertAuthRefused(t, res, "Authentication required", tt.challenge)
			msg := authMessage(t, res)
			for _, w := range tt.ways {
				assert.Contains(t, msg, w)
			}
		})
	}
}

// authMessage returns the message of an OTC error body.
func authMessage(t *testing.T, res testkit.Response) string {
	t.Helper()
	var body struct {
		Message string `json:"message"`
	}
	require.NoError(t, json.Unmarshal(res.Raw, &body))
	return body.Message
}

// TestAuthNoneConfigured: with no method, the Authorization header (and an
// API key header) is ignored (SPEC §8), and the tool sees no identity.
func TestAuthNoneConfigured(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		opts *otc.HandlerOptions
	}{
		{name: "nil_options", opts: nil},
		{name: "zero_options", opts: &otc.HandlerOptions{}},
	}
	headers := map[string]http.Header{
		"garbage_bearer": authHeader("Authorization", "Bearer garbage"),
		"expired_token":  authHeader("Authorization", "Bearer "+authHS256(t, authClaims(func(c jwt.MapClaims) { c["exp"] = authNow.Add(-time.Hour).Unix() }))),
		"basic":          authHeader("Authorization", "Basic dXNlcjpwYXNzd29yZA=="),
		"api_key":        authHeader("OXP-API-Key", "anything"),
		"nothing":        nil,
	}
	for _, tt := range tests {
		for hname, h := range headers {
			t.Run(tt.name+"/"+hname, func(t *testing.T) {
				t.Parallel()
				srv := newAuthServer(t, tt.opts)
				id := requireAuthAccepted(t, authCall(t, srv, h))
				assert.Equal(t, authWhoAmI{}, id, "no identity without an authenticator")
				res := testkit.Send(t, srv.Client(), http.MethodGet, srv.URL+"/tools", h, nil)
				assert.Equal(t, http.StatusOK, res.Status, "body: %s", res.Raw)
			})
		}
	}
}

// TestAuthEndpoints: /health is never authenticated; the catalog and both
// call paths are.
func TestAuthEndpoints(t *testing.T) {
	t.Parallel()
	srv := newAuthServer(t, &otc.HandlerOptions{Authenticator: auth.AnyOf(newAuthKeys(t), newAuthJWT(t, auth.JWTOptions{}))})
	key := authHeader("OXP-API-Key", authKeyCI)
	badBearer := authHeader("Authorization", "Bearer not.a.token")

	tests := []struct {
		name   string
		method string
		path   string
		header http.Header
		body   []byte
		status int
	}{
		{name: "health_without_credentials", method: http.MethodGet, path: "/health", status: http.StatusOK},
		{name: "health_with_bad_token", method: http.MethodGet, path: "/health", header: badBearer, status: http.StatusOK},
		{name: "head_health_without_credentials", method: http.MethodHead, path: "/health", status: http.StatusOK},
		{name: "tools_without_credentials", method: http.MethodGet, path: "/tools", status: http.StatusUnauthorized},
		{name: "head_tools_without_credentials", method: http.MethodHead, path: "/tools", status: http.StatusUnauthorized},
		{name: "tools_with_key", method: http.MethodGet, path: "/tools", header: key, status: http.StatusOK},
		{name: "tools_call_without_credentials", method: http.MethodPost, path: "/tools/call", body: authWhoAmICall, status: http.StatusUnauthorized},
		{name: "tools_call_with_key", method: http.MethodPost, path: "/tools/call", header: key, body: authWhoAmICall, status: http.StatusOK},
		{name: "call_without_credentials", method: http.MethodPost, path: "/call", body: authWhoAmICall, status: http.StatusUnauthorized},
		{name: "call_with_bad_token", method: http.MethodPost, path: "/call", header: badBearer, body: authWhoAmICall, status: http.StatusUnauthorized},
		{name: "call_with_key", method: http.MethodPost, path: "/call", header: key, body: authWhoAmICall, status: http.StatusOK},
		{name: "tools_call_empty_body_without_credentials", method: http.MethodPost, path: "/tools/call", body: []byte{}, status: http.StatusUnauthorized},
		{name: "tools_call_malformed_body_without_credentials", method: http.MethodPost, path: "/tools/call", body: []byte(`{"request":`), status: http.StatusUnauthorized},
		{name: "tools_call_unknown_tool_without_credentials", method: http.MethodPost, path: "/tools/call", body: []byte(`{"request":{"tool_id":"No.Such"}}`), status: http.StatusUnauthorized},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			res := testkit.Send(t, srv.Client(), tt.method, srv.URL+tt.path, tt.header, tt.body)
			assert.Equal(t, tt.status, res.Status, "body: %s", res.Raw)
			if tt.method == http.MethodHead {
				return
			}
			assert.Equal(t, "application/json", res.Header.Get("Content-Type"))
			if tt.status == http.StatusUnauthorized {
				assertAuthRefused(t, res, "", true, "not.a.token")
			} else {
				assert.Empty(t, res.Header.Values("WWW-Authenticate"))
			}
		})
	}
}

// authBodyProbe records whether the handler read any of the request body.
type authBodyProbe struct {
	io.ReadCloser
	read atomic.Int64
}

func (p *authBodyProbe) Read(b []byte) (int, error) {
	n, err := p.ReadCloser.Read(b)
	p.read.Add(int64(n))
	return n, err
}

// TestAuthBeforeBody: authentication happens before the body is read, so
// an unauthenticated client cannot make the server read, buffer or parse
// anything: a body over the limit earns 401, not 413.
func TestAuthBeforeBody(t *testing.T) {
	t.Parallel()
	var probes sync.Map // request id -> *authBodyProbe
	h := otc.NewHandler(newAuthRegistry(t), &otc.HandlerOptions{MaxBodyBytes: 1024, Authenticator: newAuthKeys(t)})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		p := &authBodyProbe{ReadCloser: r.Body}
		probes.Store(r.Header.Get("X-Probe"), p)
		r.Body = p
		h.ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)
	big := []byte(`{"request":{"tool_id":"Auth.WhoAmI","input":{"pad":"` + strings.Repeat("x", 8<<10) + `"}}}`)

	tests := []struct {
		name     string
		header   http.Header
		status   int
		bodyRead bool
	}{
		{name: "no_credentials", header: authHeader("X-Probe", "a"), status: http.StatusUnauthorized},
		{name: "wrong_key", header: authHeader("X-Probe", "b", "OXP-API-Key", "wrong-key-wrong-key"), status: http.StatusUnauthorized},
		// The control: the same body with a valid key is over the limit.
		{name: "right_key", header: authHeader("X-Probe", "c", "OXP-API-Key", authKeyCI), status: http.StatusRequestEntityTooLarge},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			res := testkit.Send(t, srv.Client(), http.MethodPost, srv.URL+"/tools/call", tt.header, big)
			assert.Equal(t, tt.status, res.Status, "body: %s", res.Raw)
			assert.Equal(t, "application/json", res.Header.Get("Content-Type"))
			if tt.status != http.StatusUnauthorized {
				return
			}
			v, ok := probes.Load(tt.header.Get("X-Probe"))
			require.True(t, ok)
			assert.Zero(t, v.(*authBodyProbe).read.Load(), "the handler read the body of an unauthenticated request")
		})
	}
	// Chunked, with no Content-Length to refuse it by: still 401.
	req, err := http.NewRequestWithContext(t.Context(), http.MethodPost, srv.URL+"/tools/call", io.MultiReader(bytes.NewReader(big)))
	require.NoError(t, err)
	req.Header.Set("X-Probe", "chunked")
	resp, err := srv.Client().Do(req)
	require.NoError(t, err)
	resp.Body.Close()
	assert.Equal(t, http.StatusUnauthorized, resp.StatusCode)
	v, ok := probes.Load("chunked")
	require.True(t, ok)
	assert.Zero(t, v.(*authBodyProbe).read.Load())
}

// TestAuthIdentityReachesTool: the tool function sees who the caller
// proved to be, through its context, and never the API key itself.
func TestAuthIdentityReachesTool(t *testing.T) {
	t.Parallel()
	custom := otc.AuthenticatorFunc(func(r *http.Request) (*otc.Identity, error) {
		if r.Header.Get("X-Tenant-Token") != "tenant-7-token-aaaaaaaa" {
			return nil, fmt.Errorf("no tenant token: %w", otc.ErrNoCredentials)
		}
		return &otc.Identity{Method: "tenant_token", Name: "tenant-7"}, nil
	})
	srv := newAuthServer(t, &otc.HandlerOptions{Authenticator: auth.AnyOf(newAuthKeys(t), newAuthJWT(t, auth.JWTOptions{Audiences: []string{authAudience}}), custom)})
	tok := authHS256(t, authClaims(func(c jwt.MapClaims) { c["aud"] = []string{authAudience}; c["tenant"] = map[string]any{"id": 7.0} }))

	t.Run("api_key", func(t *testing.T) {
		t.Parallel()
		for _, k := range []struct{ key, name string }{{authKeyCI, "ci"}, {authKeyPartner, "partner"}} {
			res := authCall(t, srv, authHeader("OXP-API-Key", k.key))
			id := requireAuthAccepted(t, res)
			assert.Equal(t, authWhoAmI{Authenticated: true, Method: "api_key", Name: k.name}, id)
			testkit.AssertNoLeak(t, res, authKeyCI, authKeyPartner)
		}
	})
	t.Run("jwt_claims", func(t *testing.T) {
		t.Parallel()
		id := requireAuthAccepted(t, authCall(t, srv, authHeader("Authorization", "Bearer "+tok)))
		assert.Equal(t, "jwt", id.Method)
		assert.Equal(t, "agent-7", id.Name)
		assert.Equal(t, "agent-7", id.Claims["sub"])
		assert.Equal(t, "tools:call", id.Claims["scope"])
		assert.Equal(t, []any{authAudience}, id.Claims["aud"])
		assert.Equal(t, map[string]any{"id": 7.0}, id.Claims["tenant"])
		assert.EqualValues(t, authNow.Add(5*time.Minute).Unix(), id.Claims["exp"])
	})
	t.Run("custom", func(t *testing.T) {
		t.Parallel()
		id := requireAuthAccepted(t, authCall(t, srv, authHeader("X-Tenant-Token", "tenant-7-token-aaaaaaaa")))
		assert.Equal(t, authWhoAmI{Authenticated: true, Method: "tenant_token", Name: "tenant-7"}, id)
	})
	t.Run("context_helpers", func(t *testing.T) {
		t.Parallel()
		assert.Nil(t, otc.CallerIdentity(context.Background()))
		id := &otc.Identity{Method: "jwt", Name: "x"}
		assert.Same(t, id, otc.CallerIdentity(otc.WithIdentity(context.Background(), id)))
	})
}

// TestAuthCustomAuthenticator plugs in an AuthenticatorFunc for a scheme
// the package does not ship.
func TestAuthCustomAuthenticator(t *testing.T) {
	t.Parallel()
	const internal = "dial tcp 10.0.0.5:5432: password hunter2 rejected"
	errorFor := map[string]error{
		"plain":                 errors.New(internal),
		"no_credentials":        fmt.Errorf("%s: %w", internal, otc.ErrNoCredentials),
		"unauthenticated_class": &otc.Error{Code: otc.CodeUnauthenticated, Message: "The tenant token was revoked"},
		"server_error_class":    &otc.Error{Code: otc.CodeServerError, Message: "The X-Tenant header must be a number"},
		"wrapped_server_error":  fmt.Errorf("%s: %w", internal, &otc.Error{Code: otc.CodeServerError, Message: "The X-Tenant header must be a number"}),
	}
	custom := otc.AuthenticatorFunc(func(r *http.Request) (*otc.Identity, error) {
		if r.Header.Get("X-Tenant") == "7" {
			return &otc.Identity{Method: "tenant", Name: "tenant-7"}, nil
		}
		return nil, errorFor[r.Header.Get("X-Fail")]
	})
	srv := newAuthServer(t, &otc.HandlerOptions{Authenticator: custom})

	tests := []struct {
		name   string
		fail   string
		status int
		want   string
	}{
		{name: "plain", fail: "plain", status: http.StatusUnauthorized, want: "Authentication failed"},
		{name: "no_credentials", fail: "no_credentials", status: http.StatusUnauthorized, want: "Authentication failed"},
		{name: "unauthenticated_class", fail: "unauthenticated_class", status: http.StatusUnauthorized, want: "The tenant token was revoked"},
		{name: "server_error_class", fail: "server_error_class", status: http.StatusBadRequest, want: "The X-Tenant header must be a number"},
		{name: "wrapped_server_error", fail: "wrapped_server_error", status: http.StatusBadRequest, want: "The X-Tenant header must be a number"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			res := authCall(t, srv, authHeader("X-Fail", tt.fail))
			if tt.status == http.StatusUnauthorized {
				assertAuthRefused(t, res, tt.want, false)
			} else {
				assert.Equal(t, tt.status, res.Status, "body: %s", res.Raw)
				assert.Equal(t, "application/json", res.Header.Get("Content-Type"))
				assert.Empty(t, res.Header.Values("WWW-Authenticate"))
				assert.Equal(t, tt.want, authMessage(t, res))
			}
			assert.NotContains(t, string(res.Raw), "hunter2", "the authenticator's error text leaks")
			assert.NotContains(t, string(res.Raw), "10.0.0.5")
		})
	}
	t.Run("accepted", func(t *testing.T) {
		t.Parallel()
		id := requireAuthAccepted(t, authCall(t, srv, authHeader("X-Tenant", "7")))
		assert.Equal(t, authWhoAmI{Authenticated: true, Method: "tenant", Name: "tenant-7"}, id)
	})
}

func TestNewAPIKeyAuthErrors(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		keys map[string]string
		want string
	}{
		{name: "nil_map", keys: nil, want: "no keys"},
		{name: "empty_map", keys: map[string]string{}, want: "no keys"},
		{name: "empty_key", keys: map[string]string{"ci": authKeyCI, "partner": ""}, want: `"partner"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			a, err := auth.NewAPIKeyAuth(tt.keys)
			require.Error(t, err)
			assert.Nil(t, a)
			assert.True(t, strings.HasPrefix(err.Error(), "auth: "), err.Error())
			assert.Contains(t, err.Error(), tt.want)
			assert.NotContains(t, err.Error(), authKeyCI, "a setup error never quotes a key")
		})
	}

	t.Run("keys_copied", func(t *testing.T) {
		t.Parallel()
		keys := map[string]string{"ci": authKeyCI}
		a, err := auth.NewAPIKeyAuth(keys)
		require.NoError(t, err)
		keys["ci"] = "changed-after-construction"
		keys["late"] = authKeyPartner
		srv := newAuthServer(t, &otc.HandlerOptions{Authenticator: a})
		assert.Equal(t, "ci", requireAuthAccepted(t, authCall(t, srv, authHeader("OXP-API-Key", authKeyCI))).Name)
		assertAuthRefused(t, authCall(t, srv, authHeader("OXP-API-Key", authKeyPartner)), "not valid", false, authKeyPartner)
	})
}

func TestNewJWTAuthErrors(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name   string
		secret []byte
		ok     bool
	}{
		{name: "nil_secret", secret: nil},
		{name: "empty_secret", secret: []byte{}},
		{name: "31_bytes", secret: bytes.Repeat([]byte("k"), 31)},
		{name: "32_bytes", secret: bytes.Repeat([]byte("k"), 32), ok: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			a, err := auth.NewJWTAuth(&auth.JWTOptions{Secret: tt.secret})
			if tt.ok {
				require.NoError(t, err)
				assert.NotNil(t, a)
				return
			}
			require.Error(t, err)
			assert.Nil(t, a)
			assert.True(t, strings.HasPrefix(err.Error(), "auth: "), err.Error())
			assert.Contains(t, err.Error(), "32 bytes")
		})
	}

	t.Run("options_copied", func(t *testing.T) {
		t.Parallel()
		secret := bytes.Clone(authSecret)
		auds := []string{authAudience}
		a := newAuthJWT(t, auth.JWTOptions{Secret: secret, Audiences: auds})
		copy(secret, "XXXXXXXX")
		auds[0] = "changed.example.com"
		srv := newAuthServer(t, &otc.HandlerOptions{Authenticator: a})
		tok := authHS256(t, authClaims(func(c jwt.MapClaims) { c["aud"] = authAudience }))
		assert.Equal(t, "agent-7", requireAuthAccepted(t, authCall(t, srv, authHeader("Authorization", "Bearer "+tok))).Name)
	})
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

// authWrapper is a custom authenticator that delegates to a, as a user's
// own scheme built on one of the package's might: AnyOf cannot ask it in
// advance whether the request is ambiguous, only see the refusal it
// passes on.
func authWrapper(a otc.Authenticator) otc.Authenticator {
	return otc.AuthenticatorFunc(func(r *http.Request) (*otc.Identity, error) {
		id, err := a.Authenticate(r)
		if err != nil {
			return nil, fmt.Errorf("wrapped: %w", err)
		}
		return id, nil
	})
}

// TestAuthDuplicateCredentials: credentials sent more than once (two
// header lines, or a proxy's comma-joined line holding a bearer token) are
// refused, even when every copy is right and even when
// another method of AnyOf would accept the request, and the tool does not
// run. Which copy counts would otherwise depend on header order, which
// whoever adds a header line can choose.
func TestAuthDuplicateCredentials(t *testing.T) {
	t.Parallel()
	good := authHS256(t, authClaims(nil))
	other := authHS256(t, authClaims(func(c jwt.MapClaims) { c["sub"] = "admin" }))
	const wrongKey = "oxp-key-wrong-44444444444444444444"
	const dup = "Credentials were sent more than once"

	keys := func(t *testing.T) otc.Authenticator { return newAuthKeys(t) }
	jwts := func(t *testing.T) otc.Authenticator { return newAuthJWT(t, auth.JWTOptions{}) }
	keysThenJWT := func(t *testing.T) otc.Authenticator {
		return auth.AnyOf(newAuthKeys(t), newAuthJWT(t, auth.JWTOptions{}))
	}
	jwtThenKeys := func(t *testing.T) otc.Authenticator {
		return auth.AnyOf(newAuthJWT(t, auth.JWTOptions{}), newAuthKeys(t))
	}
	nested := func(t *testing.T) otc.Authenticator {
		return auth.AnyOf(auth.AnyOf(newAuthKeys(t)), auth.AnyOf(newAuthJWT(t, auth.JWTOptions{})))
	}
	wrappedJWTThenKeys := func(t *testing.T) otc.Authenticator {
		return auth.AnyOf(authWrapper(newAuthJWT(t, auth.JWTOptions{})), newAuthKeys(t))
	}

	tests := []struct {
		name      string
		auth      func(t *testing.T) otc.Authenticator
		header    http.Header
		method    string // the identity's method on 200; "" for 401
		want      string // the identity's name on 200; a piece of the message on 401
		challenge bool
	}{
		// Controls: one copy of each credential passes.
		{name: "control_one_api_key", auth: keys, header: authLines(otc.HeaderAPIKey, authKeyCI), method: "api_key", want: "ci"},
		{name: "control_one_legacy_api_key", auth: keys, header: authLines(otc.HeaderLegacyAPIKey, authKeyCI), method: "api_key", want: "ci"},
		{name: "control_one_token", auth: jwts, header: authLines("Authorization", "Bearer "+good), method: "jwt", want: "agent-7"},
		{name: "control_any_of_key_and_token", auth: keysThenJWT, header: authLines(otc.HeaderAPIKey, authKeyCI, "Authorization", "Bearer "+good), method: "api_key", want: "ci"},
		// Commas belong to other schemes' credentials (Digest's
		// auth-params): only a list with a Bearer element is two.
		{name: "control_any_of_key_and_digest_with_commas", auth: keysThenJWT, header: authLines(otc.HeaderAPIKey, authKeyCI, "Authorization", `Digest username="agent-7", realm="tools", nonce="abc"`), method: "api_key", want: "ci"},

		{name: "two_api_keys_both_right", auth: keys, header: authLines(otc.HeaderAPIKey, authKeyCI, otc.HeaderAPIKey, authKeyCI), want: dup},
		{name: "two_api_keys_right_then_wrong", auth: keys, header: authLines(otc.HeaderAPIKey, authKeyCI, otc.HeaderAPIKey, wrongKey), want: dup},
		{name: "two_api_keys_wrong_then_right", auth: keys, header: authLines(otc.HeaderAPIKey, wrongKey, otc.HeaderAPIKey, authKeyCI), want: dup},
		{name: "two_api_keys_empty_then_right", auth: keys, header: authLines(otc.HeaderAPIKey, "", otc.HeaderAPIKey, authKeyCI), want: dup},
		{name: "two_legacy_api_keys", auth: keys, header: authLines(otc.HeaderLegacyAPIKey, authKeyCI, otc.HeaderLegacyAPIKey, authKeyPartner), want: dup},
		{name: "api_key_and_legacy_api_key_same", auth: keys, header: authLines(otc.HeaderAPIKey, authKeyCI, otc.HeaderLegacyAPIKey, authKeyCI), want: dup},
		{name: "api_key_and_legacy_api_key_different", auth: keys, header: authLines(otc.HeaderAPIKey, authKeyCI, otc.HeaderLegacyAPIKey, authKeyPartner), want: dup},

		{name: "two_tokens_both_right", auth: jwts, header: authLines("Authorization", "Bearer "+good, "Authorization", "Bearer "+good), want: dup, challenge: true},
		{name: "two_tokens_different", auth: jwts, header: authLines("Authorization", "Bearer "+good, "Authorization", "Bearer "+other), want: dup, challenge: true},
		{name: "token_then_basic", auth: jwts, header: authLines("Authorization", "Bearer "+good, "Authorization", "Basic dXNlcjpwYXNzd29yZA=="), want: dup, challenge: true},
		{name: "token_then_empty_line", auth: jwts, header: authLines("Authorization", "Bearer "+good, "Authorization", ""), want: dup, challenge: true},
		{name: "tokens_comma_joined", auth: jwts, header: authLines("Authorization", "Bearer "+good+", Bearer "+other), want: dup, challenge: true},
		{name: "tokens_comma_joined_no_space", auth: jwts, header: authLines("Authorization", "Bearer "+good+",Bearer "+good), want: dup, challenge: true},
		{name: "basic_and_token_comma_joined", auth: jwts, header: authLines("Authorization", "Basic dXNlcjpwYXNzd29yZA==, Bearer "+good), want: dup, challenge: true},
		{name: "token_with_trailing_comma", auth: jwts, header: authLines("Authorization", "Bearer "+good+","), want: dup, challenge: true},
		// A JWT holds no white space: two tokens run together are not one.
		{name: "tokens_space_joined", auth: jwts, header: authLines("Authorization", "Bearer "+good+" "+other), want: "malformed: it must be a JWT", challenge: true},
		{name: "token_with_space_inside", auth: jwts, header: authLines("Authorization", "Bearer "+good[:20]+" "+good[20:]), want: "malformed: it must be a JWT", challenge: true},
		{name: "token_with_tab_inside", auth: jwts, header: authLines("Authorization", "Bearer "+good[:20]+"\t"+good[20:]), want: "malformed: it must be a JWT", challenge: true},

		// AnyOf: one method finding the request ambiguous refuses it, even
		// though another method accepts it, in either order.
		{name: "any_of_two_api_keys_and_right_token", auth: keysThenJWT, header: authLines(otc.HeaderAPIKey, authKeyCI, otc.HeaderAPIKey, wrongKey, "Authorization", "Bearer "+good), want: dup, challenge: true},
		{name: "any_of_jwt_first_two_api_keys_and_right_token", auth: jwtThenKeys, header: authLines(otc.HeaderAPIKey, authKeyCI, otc.HeaderLegacyAPIKey, authKeyCI, "Authorization", "Bearer "+good), want: dup, challenge: true},
		{name: "any_of_right_api_key_and_two_tokens", auth: keysThenJWT, header: authLines(otc.HeaderAPIKey, authKeyCI, "Authorization", "Bearer "+good, "Authorization", "Bearer "+good), want: dup, challenge: true},
		{name: "any_of_right_api_key_and_comma_joined_tokens", auth: keysThenJWT, header: authLines(otc.HeaderAPIKey, authKeyCI, "Authorization", "Bearer "+good+", Bearer "+other), want: dup, challenge: true},
		{name: "any_of_two_api_keys_alone", auth: keysThenJWT, header: authLines(otc.HeaderAPIKey, authKeyCI, otc.HeaderAPIKey, authKeyCI), want: dup, challenge: true},
		{name: "nested_any_of_two_tokens_and_right_api_key", auth: nested, header: authLines(otc.HeaderAPIKey, authKeyCI, "Authorization", "Bearer "+good, "Authorization", "Bearer "+good), want: dup, challenge: true},
		// A custom authenticator passing on the package's refusal: AnyOf
		// stops there rather than let the API key in.
		{name: "custom_wrapper_two_tokens_and_right_api_key", auth: wrappedJWTThenKeys, header: authLines(otc.HeaderAPIKey, authKeyCI, "Authorization", "Bearer "+good, "Authorization", "Bearer "+good), want: dup},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			var runs atomic.Int64
			reg := newAuthCountingRegistry(t, &runs)
			srv := httptest.NewServer(otc.NewHandler(reg, &otc.HandlerOptions{Authenticator: tt.auth(t)}))
			t.Cleanup(srv.Close)
			res := authCall(t, srv, tt.header)
			testkit.AssertNoLeak(t, res, authKeyCI, authKeyPartner, wrongKey, good, other)

			if tt.method != "" {
				id := requireAuthAccepted(t, res)
				assert.Equal(t, tt.method, id.Method)
				assert.Equal(t, tt.want, id.Name)
				assert.EqualValues(t, 1, runs.Load(), "the tool runs once")
				return
			}
			assertAuthRefused(t, res, tt.want, tt.challenge)
			if tt.want == dup {
				assert.Contains(t, authMessage(t, res), "exactly one", "the message says what to send")
			}
			assert.Zero(t, runs.Load(), "the tool ran for a refused request")
		})
	}
}

// authTokenRecorder wraps a handler and keeps every bearer token it sees.
type authTokenRecorder struct {
	next   http.Handler
	mu     sync.Mutex
	tokens []string
	keys   []string
}

func (rec *authTokenRecorder) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	rec.mu.Lock()
	if tok, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer "); ok {
		rec.tokens = append(rec.tokens, tok)
	}
	if k := r.Header.Get(otc.HeaderAPIKey); k != "" {
		rec.keys = append(rec.keys, k)
	}
	rec.mu.Unlock()
	rec.next.ServeHTTP(w, r)
}

func (rec *authTokenRecorder) seen() (tokens, keys []string) {
	rec.mu.Lock()
	defer rec.mu.Unlock()
	return append([]string(nil), rec.tokens...), append([]string(nil), rec.keys...)
}

// newAuthClientServer serves Auth.WhoAmI behind a recorder. The JWT
// authenticator reads the real clock, since the client signs with it.
func newAuthClientServer(t *testing.T, a otc.Authenticator) (*httptest.Server, *authTokenRecorder) {
	t.Helper()
	rec := &authTokenRecorder{next: otc.NewHandler(newAuthRegistry(t), &otc.HandlerOptions{Authenticator: a})}
	srv := httptest.NewServer(rec)
	t.Cleanup(srv.Close)
	return srv, rec
}

// authRealJWT is a JWT authenticator on the real clock.
func authRealJWT(t *testing.T, opts auth.JWTOptions) *auth.JWTAuth {
	t.Helper()
	opts.Secret = authSecret
	a, err := auth.NewJWTAuth(&opts)
	require.NoError(t, err)
	return a
}

// authClientWhoAmI calls Auth.WhoAmI through c and decodes what it saw.
func authClientWhoAmI(t *testing.T, c *client.Client) (authWhoAmI, error) {
	t.Helper()
	res, err := c.Call(t.Context(), "Auth.WhoAmI", nil, nil)
	if err != nil {
		return authWhoAmI{}, err
	}
	var id authWhoAmI
	require.NoError(t, json.Unmarshal(res.Value, &id))
	return id, nil
}

// requireAuthUnauthenticated checks that err is the client's form of a
// 401 (an *otc.Error with CodeUnauthenticated) and that its message has
// want in it.
func requireAuthUnauthenticated(t *testing.T, err error, want string, leaks ...string) {
	t.Helper()
	require.Error(t, err)
	var e *otc.Error
	require.True(t, errors.As(err, &e), "%T: %v", err, err)
	assert.Equal(t, otc.CodeUnauthenticated, e.Code)
	assert.Contains(t, strings.ToLower(e.Message), strings.ToLower(want))
	for _, l := range leaks {
		assert.NotContains(t, err.Error(), l)
	}
}

func TestAuthClientAPIKey(t *testing.T) {
	t.Parallel()
	srv, rec := newAuthClientServer(t, newAuthKeys(t))

	c, err := client.New(srv.URL, &client.Options{APIKey: authKeyPartner})
	require.NoError(t, err)
	defs, err := c.ListTools(t.Context())
	require.NoError(t, err)
	require.Len(t, defs, 1)
	id, err := authClientWhoAmI(t, c)
	require.NoError(t, err)
	assert.Equal(t, authWhoAmI{Authenticated: true, Method: "api_key", Name: "partner"}, id)
	_, keys := rec.seen()
	assert.Equal(t, []string{authKeyPartner, authKeyPartner}, keys, "sent in %s on every request", otc.HeaderAPIKey)

	t.Run("wrong_key", func(t *testing.T) {
		t.Parallel()
		c, err := client.New(srv.URL, &client.Options{APIKey: "oxp-key-wrong-22222222222222222222"})
		require.NoError(t, err)
		_, err = authClientWhoAmI(t, c)
		requireAuthUnauthenticated(t, err, "API key is not valid", "oxp-key-wrong-22222222222222222222")
		_, err = c.ListTools(t.Context())
		requireAuthUnauthenticated(t, err, "API key is not valid")
	})
	t.Run("no_key", func(t *testing.T) {
		t.Parallel()
		c, err := client.New(srv.URL, nil)
		require.NoError(t, err)
		_, err = authClientWhoAmI(t, c)
		requireAuthUnauthenticated(t, err, "Authentication required")
		assert.NoError(t, c.Health(t.Context()), "/health is never authenticated")
	})
}

func TestAuthClientBearerToken(t *testing.T) {
	t.Parallel()
	srv, _ := newAuthClientServer(t, authRealJWT(t, auth.JWTOptions{}))
	now := time.Now()

	good := authHS256(t, jwt.MapClaims{"sub": "static-agent", "iat": now.Unix(), "exp": now.Add(5 * time.Minute).Unix()})
	c, err := client.New(srv.URL, &client.Options{BearerToken: good})
	require.NoError(t, err)
	id, err := authClientWhoAmI(t, c)
	require.NoError(t, err)
	assert.Equal(t, "jwt", id.Method)
	assert.Equal(t, "static-agent", id.Name)

	expired := authHS256(t, jwt.MapClaims{"sub": "static-agent", "iat": now.Add(-time.Hour).Unix(), "exp": now.Add(-30 * time.Minute).Unix()})
	c, err = client.New(srv.URL, &client.Options{BearerToken: expired})
	require.NoError(t, err)
	_, err = authClientWhoAmI(t, c)
	requireAuthUnauthenticated(t, err, "expired", expired)
}

func TestAuthClientJWTSigner(t *testing.T) {
	t.Parallel()
	srv, rec := newAuthClientServer(t, authRealJWT(t, auth.JWTOptions{Audiences: []string{authAudience}}))
	const lifetime = 2 * time.Minute
	c, err := client.New(srv.URL, &client.Options{JWT: &client.JWTSigner{
		Secret: authSecret, Audience: authAudience, Lifetime: lifetime, Subject: "agent-9",
	}})
	require.NoError(t, err)

	before := time.Now().Truncate(time.Second)
	id, err := authClientWhoAmI(t, c)
	require.NoError(t, err)
	assert.Equal(t, "jwt", id.Method)
	assert.Equal(t, "agent-9", id.Name)
	assert.Equal(t, []any{authAudience}, id.Claims["aud"])
	_, err = c.ListTools(t.Context())
	require.NoError(t, err)
	after := time.Now()

	tokens, _ := rec.seen()
	require.Len(t, tokens, 2)
	assert.NotEqual(t, tokens[0], tokens[1], "each request carries a freshly signed token")
	for _, tok := range tokens {
		claims := jwt.MapClaims{}
		_, err := jwt.NewParser(jwt.WithValidMethods([]string{"HS256"})).ParseWithClaims(tok, claims, func(*jwt.Token) (any, error) { return authSecret, nil })
		require.NoError(t, err)
		iat, err := claims.GetIssuedAt()
		require.NoError(t, err)
		require.NotNil(t, iat)
		exp, err := claims.GetExpirationTime()
		require.NoError(t, err)
		require.NotNil(t, exp)
		assert.Equal(t, lifetime, exp.Sub(iat.Time), "exp is iat plus the lifetime")
		assert.False(t, iat.Before(before), "iat %v is before the request (%v)", iat, before)
		assert.False(t, iat.After(after), "iat %v is after the request (%v)", iat, after)
		aud, err := claims.GetAudience()
		require.NoError(t, err)
		assert.Equal(t, jwt.ClaimStrings{authAudience}, aud)
	}

	t.Run("default_lifetime_one_minute", func(t *testing.T) {
		t.Parallel()
		srv, rec := newAuthClientServer(t, authRealJWT(t, auth.JWTOptions{}))
		c, err := client.New(srv.URL, &client.Options{JWT: &client.JWTSigner{Secret: authSecret}})
		require.NoError(t, err)
		id, err := authClientWhoAmI(t, c)
		require.NoError(t, err)
		assert.Equal(t, "jwt", id.Method)
		_, hasAud := id.Claims["aud"]
		assert.False(t, hasAud, "no aud without Audience")
		tokens, _ := rec.seen()
		require.Len(t, tokens, 1)
		claims := jwt.MapClaims{}
		_, _, err = jwt.NewParser().ParseUnverified(tokens[0], claims)
		require.NoError(t, err)
		iat, _ := claims.GetIssuedAt()
		exp, _ := claims.GetExpirationTime()
		require.NotNil(t, iat)
		require.NotNil(t, exp)
		assert.Equal(t, time.Minute, exp.Sub(iat.Time))
	})

	tests := []struct {
		name   string
		signer client.JWTSigner
		want   string
	}{
		{name: "wrong_secret", signer: client.JWTSigner{Secret: authOtherSecret, Audience: authAudience}, want: "signature"},
		{name: "wrong_audience", signer: client.JWTSigner{Secret: authSecret, Audience: "other.example.com"}, want: "audience"},
		{name: "lifetime_over_the_server_cap", signer: client.JWTSigner{Secret: authSecret, Audience: authAudience, Lifetime: time.Hour}, want: "too far in the future"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			c, err := client.New(srv.URL, &client.Options{JWT: &tt.signer})
			require.NoError(t, err)
			_, err = authClientWhoAmI(t, c)
			requireAuthUnauthenticated(t, err, tt.want, string(tt.signer.Secret))
		})
	}
}

// TestAuthClientBothMethods: a client may send an API key and a token; a
// server accepting either lets it in.
func TestAuthClientBothMethods(t *testing.T) {
	t.Parallel()
	srv, rec := newAuthClientServer(t, auth.AnyOf(newAuthKeys(t), authRealJWT(t, auth.JWTOptions{})))
	c, err := client.New(srv.URL, &client.Options{APIKey: "oxp-key-wrong-33333333333333333333", JWT: &client.JWTSigner{Secret: authSecret, Subject: "agent-3"}})
	require.NoError(t, err)
	id, err := authClientWhoAmI(t, c)
	require.NoError(t, err)
	assert.Equal(t, "jwt", id.Method, "a wrong API key does not hide a valid token")
	assert.Equal(t, "agent-3", id.Name)
	tokens, keys := rec.seen()
	assert.Len(t, tokens, 1)
	assert.Equal(t, []string{"oxp-key-wrong-33333333333333333333"}, keys)
}

func TestAuthClientOptionsErrors(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		opts client.Options
		want string
	}{
		{name: "bearer_and_jwt", opts: client.Options{BearerToken: "tok", JWT: &client.JWTSigner{Secret: authSecret}}, want: "not both"},
		{name: "jwt_nil_secret", opts: client.Options{JWT: &client.JWTSigner{Audience: authAudience}}, want: "Secret"},
		{name: "jwt_empty_secret", opts: client.Options{JWT: &client.JWTSigner{Secret: []byte{}}}, want: "Secret"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			c, err := client.New("http://127.0.0.1:1", &tt.opts)
			require.Error(t, err)
			assert.Nil(t, c)
			assert.Contains(t, err.Error(), tt.want)
			assert.NotContains(t, err.Error(), string(authSecret))
		})
	}
}

// authFuzzClaims are the claims of the one valid token of FuzzJWTAuth, on
// the pinned clock, so that the token never expires.
func authFuzzClaims() jwt.MapClaims {
	return jwt.MapClaims{
		"sub": "fuzz-agent",
		"aud": authAudience,
		"iat": authNow.Add(-time.Minute).Unix(),
		"exp": authNow.Add(5 * time.Minute).Unix(),
	}
}

// authFuzzIsValidToken reports whether tok, surrounded by white space or
// not, is the seeded valid token: the same signed header and payload, and
// a signature segment that decodes to the same bytes. That is the only
// token the server may accept; anything else it accepted would be a
// forgery.
func authFuzzIsValidToken(valid, tok string) bool {
	v := strings.Split(valid, ".")
	p := strings.Split(strings.TrimSpace(tok), ".")
	if len(p) != 3 || p[0] != v[0] || p[1] != v[1] {
		return false
	}
	want, err := base64.RawURLEncoding.DecodeString(v[2])
	if err != nil {
		return false
	}
	got, err := base64.RawURLEncoding.DecodeString(p[2])
	return err == nil && bytes.Equal(got, want)
}

// FuzzJWTAuth feeds arbitrary strings as a bearer token, as a whole
// Authorization header and as an API key, to a server accepting either
// method: it never panics, answers 401 with a JSON body that does not
// quote the input, and answers 200 only for the seeded valid token or key.
func FuzzJWTAuth(f *testing.F) {
	jwtAuth := newAuthJWT(f, auth.JWTOptions{Audiences: []string{authAudience}})
	keys, err := auth.NewAPIKeyAuth(map[string]string{"ci": authKeyCI})
	require.NoError(f, err)
	h := otc.NewHandler(newAuthRegistry(f), &otc.HandlerOptions{Authenticator: auth.AnyOf(keys, jwtAuth)})
	valid := authHS256(f, authFuzzClaims())

	f.Add(valid)
	f.Add(authKeyCI)
	f.Add("Bearer " + valid)
	f.Add(authSign(f, jwt.SigningMethodHS384, authSecret, authFuzzClaims()))
	f.Add(authUnsigned(f, authFuzzClaims()))

	f.Fuzz(func(t *testing.T, s string) {
		cases := []struct {
			header, value string
			accept        bool
		}{
			{header: "Authorization", value: "Bearer " + s, accept: authFuzzIsValidToken(valid, s)},
			{header: "Authorization", value: s, accept: authFuzzIsBearerOfValid(valid, s)},
			{header: otc.HeaderAPIKey, value: s, accept: s == authKeyCI},
			{header: otc.HeaderLegacyAPIKey, value: s, accept: s == authKeyCI},
		}
		for _, c := range cases {
			req := httptest.NewRequest(http.MethodGet, "/tools", nil)
			req.Header.Set(c.header, c.value)
			rec := httptest.NewRecorder()
			h.ServeHTTP(rec, req)

			if c.accept {
				if rec.Code != http.StatusOK {
					t.Fatalf("%s %q: status %d for the valid credential, want 200: %s", c.header, c.value, rec.Code, rec.Body)
				}
				continue
			}
			if rec.Code != http.StatusUnauthorized {
				t.Fatalf("%s %q: status %d, want 401: %s", c.header, c.value, rec.Code, rec.Body)
			}
			if ct := rec.Header().Get("Content-Type"); ct != "application/json" {
				t.Fatalf("%s %q: Content-Type %q", c.header, c.value, ct)
			}
			if got := rec.Header().Values("WWW-Authenticate"); len(got) != 1 || got[0] != "Bearer" {
				t.Fatalf("%s %q: WWW-Authenticate %q, want [Bearer]", c.header, c.value, got)
			}
			var body struct {
				Schema  string `json:"$schema"`
				Message string `json:"message"`
			}
			if err := json.Unmarshal(rec.Body.Bytes(), &body); err != nil || body.Schema == "" || body.Message == "" {
				t.Fatalf("%s %q: body %s is not {$schema, message} (%v)", c.header, c.value, rec.Body, err)
			}
			// Long inputs only: a short one may occur in any message.
			if len(s) >= 24 && strings.Contains(rec.Body.String(), s) {
				t.Fatalf("%s %q: the body quotes the credential: %s", c.header, c.value, rec.Body)
			}
		}
	})
}

// authFuzzIsBearerOfValid reports whether a whole Authorization header is
// the valid token under the Bearer scheme, whose name is case-insensitive
// (RFC 9110 §11.1).
func authFuzzIsBearerOfValid(valid, header string) bool {
	scheme, tok, ok := strings.Cut(header, " ")
	return ok && strings.EqualFold(scheme, "Bearer") && authFuzzIsValidToken(valid, tok)
}

// errorChallenger is a custom authenticator whose challenge depends on
// the refusal, as an OAuth resource server's does.
type errorChallenger struct{ otc.Authenticator }

func (errorChallenger) Challenge(e *otc.Error) string {
	return "Custom for " + e.Code.String()
}

// TestAnyOfChallenge: AnyOf's challenge is the fullest of its methods':
// the first that carries more than a scheme, nested AnyOfs included, else
// the first a method gives; and otc.Challenge fills in its defaults.
func TestAnyOfChallenge(t *testing.T) {
	t.Parallel()
	custom := errorChallenger{otc.AuthenticatorFunc(func(*http.Request) (*otc.Identity, error) { return nil, nil })}
	unauth := &otc.Error{Code: otc.CodeUnauthenticated, Message: "no"}
	policy := &otc.Error{Code: otc.CodeUnauthenticated, Reason: otc.ReasonInvalidToken, Message: "no"}
	scope := &otc.Error{Code: otc.CodeForbidden, Reason: otc.ReasonInsufficientScope, RequiredScopes: []string{"a", "b"}}
	other := &otc.Error{Code: otc.CodeForbidden, Message: "no"}
	for _, tc := range []struct {
		name string
		auth otc.Authenticator
		e    *otc.Error
		want string
	}{
		{"plain_401", auth.AnyOf(newAuthKeys(t), newAuthJWT(t, auth.JWTOptions{})), unauth, "Bearer"},
		{"plain_nested_401", auth.AnyOf(auth.AnyOf(newAuthKeys(t)), auth.AnyOf(newAuthJWT(t, auth.JWTOptions{}))), unauth, "Bearer"},
		{"keys_401", auth.AnyOf(newAuthKeys(t)), unauth, ""},
		{"keys_policy_401", auth.AnyOf(newAuthKeys(t)), policy, "Bearer"},
		{"plain_scope", auth.AnyOf(newAuthKeys(t)), scope, `Bearer error="insufficient_scope", scope="a b"`},
		{"jwt_scope", auth.AnyOf(newAuthJWT(t, auth.JWTOptions{})), scope, `Bearer error="insufficient_scope", scope="a b"`},
		{"not_a_challenge", auth.AnyOf(newAuthJWT(t, auth.JWTOptions{}), custom), other, ""},
		{"custom_401", auth.AnyOf(newAuthKeys(t), custom), unauth, "Custom for unauthenticated"},
		{"custom_after_jwt", auth.AnyOf(newAuthJWT(t, auth.JWTOptions{}), custom), unauth, "Custom for unauthenticated"},
		{"custom_scope", auth.AnyOf(custom, newAuthKeys(t)), scope, "Custom for forbidden"},
		{"custom_nested", auth.AnyOf(auth.AnyOf(newAuthKeys(t)), auth.AnyOf(custom)), unauth, "Custom for unauthenticated"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			assert.Equal(t, tc.want, otc.Challenge(tc.auth, tc.e))
		})
	}
}
