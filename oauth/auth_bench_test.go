package oauth_test

// What authenticating a request costs, beside the least work that checks
// the same token: the signature verification (golang-jwt, the key given),
// which dominates. Run with
//
//	go test -run '^$' -bench Authenticate -benchmem ./oauth

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"
	"github.com/stretchr/testify/require"

	"github.com/otcgo/otc"
	"github.com/otcgo/otc/auth"
	"github.com/otcgo/otc/internal/testkit"
	"github.com/otcgo/otc/oauth"
)

func BenchmarkAuthenticate(b *testing.B) {
	k := keys(b)
	const issuer = "https://login.example.com"
	// Ten minutes: within the capability tokens' lifetime cap too.
	claims := func(jwt.MapClaims) jwt.MapClaims {
		return (&authServer{issuer: issuer}).claims(func(c jwt.MapClaims) { c["exp"] = time.Now().Add(10 * time.Minute).Unix() })
	}
	es256 := sign(b, jwt.SigningMethodES256, k.ec, kidEC, "at+jwt", claims(nil))
	rs256 := sign(b, jwt.SigningMethodRS256, k.rsa, kidRSA, "at+jwt", claims(nil))
	// CacheSize -1: every authentication verifies the token; the "again"
	// cases have the cache of verified tokens, as by default.
	a := benchOAuth(b, issuer, -1)
	capAuth := benchCapability(b, issuer, -1)
	capOther := benchCapability(b, "https://capabilities.test", -1)
	request := func(token string) *http.Request {
		r := httptest.NewRequest(http.MethodPost, "/tools/call", nil)
		r.Header.Set("Authorization", "Bearer "+token)
		return r
	}

	for _, bc := range []struct {
		name  string
		token string
		auth  otc.Authenticator
	}{
		{"oauth_es256", es256, a},
		{"capability_es256", es256, capAuth},
		{"oauth_rs256", rs256, a},
		// The capability authenticator refuses the OAuth token first.
		{"anyof_capability_oauth_es256", es256, auth.AnyOf(capOther, a)},
		{"oauth_es256_again", es256, benchOAuth(b, issuer, 0)},
		{"capability_es256_again", es256, benchCapability(b, issuer, 0)},
	} {
		b.Run(bc.name, func(b *testing.B) {
			r := request(bc.token)
			b.ReportAllocs()
			for b.Loop() {
				if _, e := otc.Authenticate(bc.auth, r); e != nil {
					b.Fatal(e)
				}
			}
		})
	}

	// The baseline: parse and verify the token with its key, nothing else.
	for _, bc := range []struct {
		name  string
		token string
		key   any
	}{
		{"floor_es256", es256, &k.ec.PublicKey},
		{"floor_rs256", rs256, &k.rsa.PublicKey},
	} {
		b.Run(bc.name, func(b *testing.B) {
			p := jwt.NewParser()
			b.ReportAllocs()
			for b.Loop() {
				if _, err := p.Parse(bc.token, func(*jwt.Token) (any, error) { return bc.key, nil }); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkCallWithToken times one whole call through the OTC handler
// (Calculator.Add, read from the body, validated, run, answered) without
// authentication, with a capability token and with OAuth access tokens,
// so that the difference shows what a token costs a call. The tokens
// are ES256 and RS256, whose verification BenchmarkAuthenticate's floors
// time alone: a token's call should cost the bare call plus its floor.
func BenchmarkCallWithToken(b *testing.B) {
	k := keys(b)
	const issuer = "https://login.example.com"
	claims := (&authServer{issuer: issuer}).claims(func(c jwt.MapClaims) { c["exp"] = time.Now().Add(10 * time.Minute).Unix() })
	es256 := sign(b, jwt.SigningMethodES256, k.ec, kidEC, "at+jwt", claims)
	rs256 := sign(b, jwt.SigningMethodRS256, k.rsa, kidRSA, "at+jwt", claims)
	oauthAuth := benchOAuth(b, issuer, -1)
	capAuth := benchCapability(b, issuer, -1)
	reg := testkit.NewAddRegistry(b)

	for _, bc := range []struct {
		name  string
		token string
		auth  otc.Authenticator
	}{
		{"bare", "", nil},
		{"capability_es256", es256, capAuth},
		{"oauth_es256", es256, oauthAuth},
		{"oauth_rs256", rs256, oauthAuth},
		// The same token again, from the cache of verified tokens.
		{"capability_es256_again", es256, benchCapability(b, issuer, 0)},
		{"oauth_es256_again", es256, benchOAuth(b, issuer, 0)},
	} {
		b.Run(bc.name, func(b *testing.B) {
			h := otc.NewHandler(reg, &otc.HandlerOptions{Authenticator: bc.auth})
			call := func() *httptest.ResponseRecorder {
				r := httptest.NewRequest(http.MethodPost, "/tools/call", strings.NewReader(testkit.OTCAddCall))
				r.Header.Set("Content-Type", "application/json")
				if bc.token != "" {
					r.Header.Set("Authorization", "Bearer "+bc.token)
				}
				w := httptest.NewRecorder()
				h.ServeHTTP(w, r)
				return w
			}
			w := call()
			require.Equal(b, http.StatusOK, w.Code, w.Body.String())
			require.Contains(b, w.Body.String(), `"value":15`)
			b.ReportAllocs()
			for b.Loop() {
				call()
			}
		})
	}
}

// benchOAuth returns an OAuth authenticator for issuer's tokens with the
// given cache size (-1: none).
func benchOAuth(b *testing.B, issuer string, cacheSize int) *oauth.Authenticator {
	a, err := oauth.New(b.Context(), &oauth.Options{
		Resource:             resource,
		AuthorizationServers: []oauth.AuthorizationServer{{Issuer: issuer, JWKS: jwksJSON(b, usualJWKs(b)...)}},
		CacheSize:            cacheSize,
	})
	require.NoError(b, err)
	return a
}

// benchCapability returns a capability-token authenticator for issuer
// with the given cache size (-1: none).
func benchCapability(b *testing.B, issuer string, cacheSize int) *auth.CapabilityAuth {
	a, err := auth.NewCapabilityAuth(b.Context(), &auth.CapabilityOptions{Issuers: []string{issuer}, JWKS: jwksJSON(b, usualJWKs(b)...), CacheSize: cacheSize})
	require.NoError(b, err)
	return a
}

// BenchmarkDPoP times the authentication of a request with a DPoP-bound
// ES256 token (verified once, then from the cache) and a fresh ES256
// proof, the proof's signing left out of the time, beside the same token
// as a bearer token (the baseline: what the proof adds is one signature
// check and its claims) and the signature check alone.
func BenchmarkDPoP(b *testing.B) {
	k := keys(b)
	const issuer = "https://login.example.com"
	h := newHolder(b)
	boundClaims := (&authServer{issuer: issuer}).claims(func(c jwt.MapClaims) {
		c["exp"] = time.Now().Add(10 * time.Minute).Unix()
		c["cnf"] = map[string]any{"jkt": h.jkt}
	})
	bound := sign(b, jwt.SigningMethodES256, k.ec, kidEC, "at+jwt", boundClaims)
	plain := sign(b, jwt.SigningMethodES256, k.ec, kidEC, "at+jwt", (&authServer{issuer: issuer}).claims(func(c jwt.MapClaims) { c["exp"] = time.Now().Add(10 * time.Minute).Unix() }))
	dpopAuth, err := oauth.New(b.Context(), &oauth.Options{
		Resource:             resource,
		AuthorizationServers: []oauth.AuthorizationServer{{Issuer: issuer, JWKS: jwksJSON(b, usualJWKs(b)...)}},
		DPoP:                 &oauth.DPoP{},
	})
	require.NoError(b, err)
	b.Run("bearer_again", func(b *testing.B) {
		a := benchOAuth(b, issuer, 0)
		r := httptest.NewRequest(http.MethodPost, "/mcp", nil)
		r.Header.Set("Authorization", "Bearer "+plain)
		b.ReportAllocs()
		for b.Loop() {
			if _, e := otc.Authenticate(a, r); e != nil {
				b.Fatal(e)
			}
		}
	})
	b.Run("dpop_again", func(b *testing.B) {
		r := httptest.NewRequest(http.MethodPost, "/mcp", nil)
		r.Header.Set("Authorization", "DPoP "+bound)
		b.ReportAllocs()
		for i := 0; i < b.N; i++ {
			b.StopTimer()
			r.Header.Set("DPoP", h.proof(b, "POST", resource, bound, nil))
			b.StartTimer()
			if _, e := otc.Authenticate(dpopAuth, r); e != nil {
				b.Fatal(e)
			}
		}
	})
}
