package oauth_test

// OAuth access tokens beside capability tokens and API keys in auth.AnyOf:
// each token reaches the authenticator it was meant for, a refusal is
// that authenticator's, and every challenge names the metadata.

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"io"
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
	"github.com/otcgo/otc/oauth"
)

const capIssuer = "https://capabilities.test"

// capToken is a capability token: ES256 like the OAuth tokens of the
// test, but signed by the capability issuer's own key and naming it.
func capToken(t *testing.T, edit func(c jwt.MapClaims)) string {
	t.Helper()
	now := time.Now()
	c := jwt.MapClaims{"iss": capIssuer, "sub": "agent-7", "iat": now.Unix(), "exp": now.Add(5 * time.Minute).Unix()}
	if edit != nil {
		edit(c)
	}
	return sign(t, jwt.SigningMethodES256, keys(t).ecOther, "cap-1", "", c)
}

func TestAnyOfCapabilityAndOAuth(t *testing.T) {
	t.Parallel()
	k := keys(t)
	as := newAuthServer(t, "")
	capAuth, err := auth.NewCapabilityAuth(t.Context(), &auth.CapabilityOptions{Issuers: []string{capIssuer}, JWKS: jwksJSON(t, jwk(t, &k.ecOther.PublicKey, "cap-1"))})
	require.NoError(t, err)
	oauthAuth := newAuth(t, oauth.Options{AuthorizationServers: []oauth.AuthorizationServer{{Issuer: as.issuer}}}, oauth.TimingForTest{})
	es256 := func(edit func(c jwt.MapClaims)) string {
		return sign(t, jwt.SigningMethodES256, k.ec, kidEC, "at+jwt", as.claims(edit))
	}

	for name, combined := range map[string]otc.Authenticator{
		"capability_first": auth.AnyOf(capAuth, oauthAuth),
		"oauth_first":      auth.AnyOf(oauthAuth, capAuth),
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			srv := newProtected(t, combined)

			s := requireAccepted(t, call(t, srv, bearer(capToken(t, nil))))
			assert.Equal(t, otc.MethodCapability, s.Method)
			assert.Equal(t, "agent-7", s.Name)

			s = requireAccepted(t, call(t, srv, bearer(es256(nil))))
			assert.Equal(t, oauth.Method, s.Method)
			assert.Equal(t, "user-42", s.Name)

			// Refused OAuth tokens are refused in the OAuth authenticator's
			// words, whatever the order.
			expired := es256(func(c jwt.MapClaims) { c["exp"] = time.Now().Add(-time.Hour).Unix() })
			assertRefused(t, call(t, srv, bearer(expired)), "expired: get a new one from the authorization server", expired)
			wrongAud := es256(func(c jwt.MapClaims) { c["aud"] = "https://elsewhere.test" })
			assertRefused(t, call(t, srv, bearer(wrongAud)), "not for this server", wrongAud)
			// Typed at+jwt, from its issuer: the surest fit.
			jwtTyped := sign(t, jwt.SigningMethodES256, k.ec, kidEC, "JWT", as.claims(func(c jwt.MapClaims) { c["exp"] = time.Now().Add(-time.Hour).Unix() }))
			assertRefused(t, call(t, srv, bearer(jwtTyped)), "get a new one from the authorization server", jwtTyped)

			// Refused capability tokens in the capability authenticator's.
			capExpired := capToken(t, func(c jwt.MapClaims) { c["exp"] = time.Now().Add(-time.Hour).Unix() })
			res := call(t, srv, bearer(capExpired))
			assertRefused(t, res, "has expired", capExpired)
			assert.NotContains(t, res.Message, "authorization server")
			capLong := capToken(t, func(c jwt.MapClaims) { c["exp"] = time.Now().Add(time.Hour).Unix() })
			assertRefused(t, call(t, srv, bearer(capLong)), "capability tokens valid for at most", capLong)

			// No token: the challenge names the metadata, and the message
			// says to send a bearer token.
			res = call(t, srv)
			assert.Equal(t, http.StatusUnauthorized, res.Status)
			assert.Equal(t, otc.ReasonMissingToken, res.Reason)
			assert.Equal(t, []string{plainChallenge}, res.Challenge)
			assert.Contains(t, res.Message, "a bearer token in the Authorization header")
		})
	}

	t.Run("unknown_issuer_same_algorithm", func(t *testing.T) {
		t.Parallel()
		// Neither issuer: both read ES256, so the first method's refusal
		// is reported, as before.
		stray := sign(t, jwt.SigningMethodES256, k.ec, kidEC, "", jwt.MapClaims{"iss": "https://stray.test", "exp": time.Now().Add(time.Minute).Unix()})
		res := call(t, newProtected(t, auth.AnyOf(capAuth, oauthAuth)), bearer(stray))
		assertRefused(t, res, "issuer (iss) is not one this server accepts", stray)
	})
}

// TestAnyOfAPIKeyAndOAuth: an API key beside OAuth tokens; a request that
// sends its Authorization header twice is refused even with a good API
// key, as for this package's own bearer methods; no credentials at all
// are told of both ways.
func TestAnyOfAPIKeyAndOAuth(t *testing.T) {
	t.Parallel()
	as := newAuthServer(t, "")
	keysAuth, err := auth.NewAPIKeyAuth(map[string]string{"ops": "key-123"})
	require.NoError(t, err)
	oauthAuth := newAuth(t, oauth.Options{AuthorizationServers: []oauth.AuthorizationServer{{Issuer: as.issuer}}}, oauth.TimingForTest{})
	srv := newProtected(t, auth.AnyOf(keysAuth, oauthAuth))

	send := func(header http.Header) response {
		req, err := http.NewRequestWithContext(t.Context(), http.MethodPost, srv.URL, strings.NewReader("{}"))
		require.NoError(t, err)
		req.Header = header
		resp, err := srv.Client().Do(req)
		require.NoError(t, err)
		defer resp.Body.Close()
		return response{Status: resp.StatusCode, Challenge: resp.Header.Values("WWW-Authenticate")}
	}
	assert.Equal(t, http.StatusOK, send(http.Header{otc.HeaderAPIKey: {"key-123"}}).Status)
	tok := as.token(t, nil)
	twice := send(http.Header{otc.HeaderAPIKey: {"key-123"}, "Authorization": {bearer(tok), bearer(tok)}})
	assert.Equal(t, http.StatusUnauthorized, twice.Status, "an ambiguous request never passes")

	// A wrong API key, no bearer token: the API key's refusal, with the
	// plain challenge (no token was refused).
	res := call(t, srv)
	assert.Contains(t, res.Message, otc.HeaderAPIKey)
	assert.Contains(t, res.Message, "bearer token")
	assert.Equal(t, []string{plainChallenge}, res.Challenge)
	wrong := send(http.Header{otc.HeaderAPIKey: {"nope"}})
	assert.Equal(t, http.StatusUnauthorized, wrong.Status)
	assert.Equal(t, []string{plainChallenge}, wrong.Challenge)
}

// TestAnyOfOpaqueToken: an opaque token refused by introspection is
// reported as such, not as a malformed capability token.
func TestAnyOfOpaqueToken(t *testing.T) {
	t.Parallel()
	k := keys(t)
	as := newAuthServer(t, "")
	capAuth, err := auth.NewCapabilityAuth(t.Context(), &auth.CapabilityOptions{Issuers: []string{capIssuer}, JWKS: jwksJSON(t, jwk(t, &k.ecOther.PublicKey, "cap-1"))})
	require.NoError(t, err)
	in := &oauth.Introspection{Endpoint: as.srv.URL + "/introspect", ClientID: "rs", ClientSecret: "s3cret", InactiveCacheTTL: -1}
	oauthAuth := newAuth(t, oauth.Options{AuthorizationServers: []oauth.AuthorizationServer{{Issuer: as.issuer, Introspection: in}}}, oauth.TimingForTest{})
	srv := newProtected(t, auth.AnyOf(capAuth, oauthAuth))
	b := make([]byte, 32)
	_, _ = rand.Read(b)
	opaque := base64.RawURLEncoding.EncodeToString(b)
	assertRefused(t, call(t, srv, bearer(opaque)), "not active", opaque)
	as.activate(opaque, activeAnswer(as, nil))
	assert.Equal(t, oauth.Method, requireAccepted(t, call(t, srv, bearer(opaque))).Method)
}

// TestAccessTokenIsNotACapabilityToken: when the capability tokens' issuer
// is also the authorization server, an OAuth access token (typ at+jwt)
// carrying capability claims is still an OAuth token: a tool that needs a
// capability token refuses it, over real HTTP, in either order of AnyOf.
func TestAccessTokenIsNotACapabilityToken(t *testing.T) {
	t.Parallel()
	k := keys(t)
	as := newAuthServer(t, "")
	capAuth, err := auth.NewCapabilityAuth(t.Context(), &auth.CapabilityOptions{Issuers: []string{as.issuer}, JWKS: jwksJSON(t, jwk(t, &k.ec.PublicKey, kidEC))})
	require.NoError(t, err)
	oauthAuth := newAuth(t, oauth.Options{AuthorizationServers: []oauth.AuthorizationServer{{Issuer: as.issuer}}}, oauth.TimingForTest{})
	reg := otc.NewRegistry(nil)
	tool := otc.Tool{ID: "Payments.Refund", Version: "1.0.0", Description: "Refunds an order.",
		Policy: &otc.Policy{RequiredCapabilities: []string{"payments:refund"}}}
	require.NoError(t, otc.Register(reg, tool, func(context.Context, struct{}) (string, error) { return "refunded", nil }))
	withCaps := func(typ string) string {
		return sign(t, jwt.SigningMethodES256, k.ec, kidEC, typ, as.claims(func(c jwt.MapClaims) {
			c["aud"] = []any{resource, "Payments.Refund@1.0.0"}
			c["caps"] = []any{"payments:refund"}
			c["exp"] = time.Now().Add(5 * time.Minute).Unix() // within a capability token's lifetime
		}))
	}
	for name, a := range map[string]otc.Authenticator{"capability_first": auth.AnyOf(capAuth, oauthAuth), "oauth_first": auth.AnyOf(oauthAuth, capAuth)} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			srv := httptest.NewServer(otc.NewHandler(reg, &otc.HandlerOptions{Authenticator: a}))
			t.Cleanup(srv.Close)
			post := func(token string) (int, string) {
				req, err := http.NewRequestWithContext(t.Context(), http.MethodPost, srv.URL+"/tools/call",
					strings.NewReader(`{"request":{"tool_id":"Payments.Refund","input":{}}}`))
				require.NoError(t, err)
				req.Header.Set("Authorization", "Bearer "+token)
				resp, err := srv.Client().Do(req)
				require.NoError(t, err)
				defer resp.Body.Close()
				b, _ := io.ReadAll(resp.Body)
				return resp.StatusCode, string(b)
			}
			status, body := post(withCaps("at+jwt"))
			assert.Equal(t, http.StatusUnauthorized, status, body)
			assert.Contains(t, body, otc.ReasonMissingToken, "an access token is not the capability token the tool needs")
			assert.NotContains(t, body, "refunded")
			if name == "capability_first" {
				// The same claims typed JWT are a capability token, to the
				// authenticator tried first (OAuth takes JWT-typed tokens too).
				status, body = post(withCaps("JWT"))
				assert.Equal(t, http.StatusOK, status, body)
				assert.Contains(t, body, "refunded")
			}
		})
	}
}
