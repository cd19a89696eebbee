package oauth_test

// JWT access tokens over real HTTP: the authorization server of
// helpers_test.go publishes its metadata and keys, and the protected
// server answers each token with the identity or the refusal and its
// challenge.

import (
	"crypto/rand"
	"encoding/base64"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/otcgo/otc"
	"github.com/otcgo/otc/oauth"
)

// TestJWTAccepted: tokens signed with each accepted algorithm by a key of
// its type, typed as access tokens or plainly, with audiences written in
// the forms a canonical URI may take.
func TestJWTAccepted(t *testing.T) {
	t.Parallel()
	as := newAuthServer(t, "")
	a := newAuth(t, oauth.Options{AuthorizationServers: []oauth.AuthorizationServer{{Issuer: as.issuer}}}, oauth.TimingForTest{})
	srv := newProtected(t, a)
	k := keys(t)

	for _, tc := range []struct {
		name   string
		method jwt.SigningMethod
		key    any
		kid    string
		typ    string
		edit   func(c jwt.MapClaims)
	}{
		{"rs256_at_jwt", jwt.SigningMethodRS256, k.rsa, kidRSA, "at+jwt", nil},
		{"rs512", jwt.SigningMethodRS512, k.rsa, kidRSA, "at+jwt", nil},
		{"ps256", jwt.SigningMethodPS256, k.rsa, kidRSA, "at+jwt", nil},
		{"es256", jwt.SigningMethodES256, k.ec, kidEC, "at+jwt", nil},
		{"es384", jwt.SigningMethodES384, k.ec384, kidEC384, "at+jwt", nil},
		{"eddsa", jwt.SigningMethodEdDSA, k.ed, kidED, "at+jwt", nil},
		{"typ_media_type", jwt.SigningMethodRS256, k.rsa, kidRSA, "application/at+jwt", nil},
		{"typ_upper_case", jwt.SigningMethodRS256, k.rsa, kidRSA, "AT+JWT", nil},
		{"typ_jwt", jwt.SigningMethodRS256, k.rsa, kidRSA, "JWT", nil},
		{"typ_absent", jwt.SigningMethodRS256, k.rsa, kidRSA, "", nil},
		{"aud_in_list", jwt.SigningMethodRS256, k.rsa, kidRSA, "at+jwt", func(c jwt.MapClaims) { c["aud"] = []any{"https://other.test", resource} }},
		{"aud_upper_case_scheme_and_host", jwt.SigningMethodRS256, k.rsa, kidRSA, "at+jwt", func(c jwt.MapClaims) { c["aud"] = "HTTP://127.0.0.1:8080/mcp" }},
		{"nbf_within_leeway", jwt.SigningMethodRS256, k.rsa, kidRSA, "at+jwt", func(c jwt.MapClaims) { c["nbf"] = time.Now().Add(10 * time.Second).Unix() }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			s := requireAccepted(t, call(t, srv, bearer(sign(t, tc.method, tc.key, tc.kid, tc.typ, as.claims(tc.edit)))))
			assert.Equal(t, oauth.Method, s.Method)
			assert.Equal(t, "user-42", s.Name)
			assert.Equal(t, []string{"counter:read", "counter:write"}, s.Scopes)
			assert.Equal(t, as.issuer, s.Claims["iss"])
		})
	}

	t.Run("client_credentials_without_sub", func(t *testing.T) {
		t.Parallel()
		s := requireAccepted(t, call(t, srv, bearer(as.token(t, func(c jwt.MapClaims) { delete(c, "sub") }))))
		assert.Equal(t, "mcp-client", s.Name, "the client_id names a caller without a subject")
	})
	t.Run("scp_array", func(t *testing.T) {
		t.Parallel()
		s := requireAccepted(t, call(t, srv, bearer(as.token(t, func(c jwt.MapClaims) {
			delete(c, "scope")
			c["scp"] = []any{"a", "b"}
		}))))
		assert.Equal(t, []string{"a", "b"}, s.Scopes)
	})
	t.Run("other_audience_configured", func(t *testing.T) {
		t.Parallel()
		b := newAuth(t, oauth.Options{Audiences: []string{"api://tools"}, AuthorizationServers: []oauth.AuthorizationServer{{Issuer: as.issuer}}}, oauth.TimingForTest{})
		requireAccepted(t, call(t, newProtected(t, b), bearer(as.token(t, func(c jwt.MapClaims) { c["aud"] = "api://tools" }))))
	})
}

// TestJWTRefused: each check refuses what it should, 401 invalid_token
// with the challenge naming the metadata, a message saying what was wrong
// and no part of the token in the answer.
func TestJWTRefused(t *testing.T) {
	t.Parallel()
	as := newAuthServer(t, "")
	a := newAuth(t, oauth.Options{AuthorizationServers: []oauth.AuthorizationServer{{Issuer: as.issuer}}}, oauth.TimingForTest{MinGap: time.Hour})
	srv := newProtected(t, a)
	k := keys(t)
	rs := func(typ string, edit func(c jwt.MapClaims)) string {
		return sign(t, jwt.SigningMethodRS256, k.rsa, kidRSA, typ, as.claims(edit))
	}
	// An HS256 token whose secret is the RSA key's public modulus: the
	// key confusion that pinning algorithms to key types forbids.
	hs := sign(t, jwt.SigningMethodHS256, k.rsa.PublicKey.N.Bytes(), kidRSA, "at+jwt", as.claims(nil))
	none := func() string {
		tok := jwt.NewWithClaims(jwt.SigningMethodNone, as.claims(nil))
		tok.Header["kid"] = kidRSA
		s, err := tok.SignedString(jwt.UnsafeAllowNoneSignatureType)
		require.NoError(t, err)
		return s
	}()
	crit := func() string {
		tok := jwt.NewWithClaims(jwt.SigningMethodRS256, as.claims(nil))
		tok.Header["kid"], tok.Header["typ"], tok.Header["crit"] = kidRSA, "at+jwt", []any{"exp"}
		s, err := tok.SignedString(k.rsa)
		require.NoError(t, err)
		return s
	}()
	tampered := func() string {
		parts := strings.Split(as.token(t, nil), ".")
		claims := as.claims(func(c jwt.MapClaims) { c["scope"] = "admin" })
		raw, err := jwt.NewParser().DecodeSegment(parts[1])
		require.NoError(t, err)
		require.NotEmpty(t, raw)
		tok := jwt.NewWithClaims(jwt.SigningMethodRS256, claims)
		other, err := tok.SigningString()
		require.NoError(t, err)
		return parts[0] + "." + strings.Split(other, ".")[1] + "." + parts[2]
	}()
	random := make([]byte, 48)
	_, _ = rand.Read(random)
	opaque := base64.RawURLEncoding.EncodeToString(random)

	for _, tc := range []struct {
		name, token, want string
	}{
		{"alg_none", none, "algorithm (alg) is not accepted"},
		{"alg_hs256_with_public_key", hs, "algorithm (alg) is not accepted"},
		{"alg_not_the_keys", sign(t, jwt.SigningMethodES256, k.ec, kidRSA, "at+jwt", as.claims(nil)), "not the one its key allows"},
		{"rsa_key_too_short", sign(t, jwt.SigningMethodRS256, k.rsa1024, kidRSA1024, "at+jwt", as.claims(nil)), "not the one its key allows"},
		{"es384_with_p256_key", sign(t, jwt.SigningMethodES384, k.ec384, kidEC, "at+jwt", as.claims(nil)), "not the one its key allows"},
		{"signature", sign(t, jwt.SigningMethodRS256, k.rsaOther, kidRSA, "at+jwt", as.claims(nil)), "signature is not valid"},
		{"tampered_claims", tampered, "signature is not valid"},
		{"typ_other", rs("logout+jwt", nil), "type (typ) is not an access token's"},
		{"typ_capability_like", rs("application/cap+jwt", nil), "type (typ) is not an access token's"},
		{"crit", crit, `"crit"`},
		{"no_kid", sign(t, jwt.SigningMethodRS256, k.rsa, "", "at+jwt", as.claims(nil)), "no key id (kid)"},
		{"kid_unknown", sign(t, jwt.SigningMethodRS256, k.rsa, "unknown-kid", "at+jwt", as.claims(nil)), "key (kid) is not one of"},
		{"iss_missing", rs("at+jwt", func(c jwt.MapClaims) { delete(c, "iss") }), "has no issuer (iss)"},
		{"iss_other", rs("at+jwt", func(c jwt.MapClaims) { c["iss"] = "https://evil.test" }), "issuer (iss) is not one this server accepts"},
		{"iss_trailing_slash", rs("at+jwt", func(c jwt.MapClaims) { c["iss"] = as.issuer + "/" }), "issuer (iss) is not one this server accepts"},
		{"iss_not_a_string", rs("at+jwt", func(c jwt.MapClaims) { c["iss"] = []any{as.issuer} }), "issuer (iss) is not a string"},
		{"aud_missing", rs("at+jwt", func(c jwt.MapClaims) { delete(c, "aud") }), "no audience (aud)"},
		{"aud_other", rs("at+jwt", func(c jwt.MapClaims) { c["aud"] = "http://127.0.0.1:8080/other" }), "not for this server"},
		{"aud_prefix", rs("at+jwt", func(c jwt.MapClaims) { c["aud"] = "http://127.0.0.1:8080" }), "not for this server"},
		{"aud_other_port", rs("at+jwt", func(c jwt.MapClaims) { c["aud"] = "http://127.0.0.1:8081/mcp" }), "not for this server"},
		{"aud_path_case", rs("at+jwt", func(c jwt.MapClaims) { c["aud"] = "http://127.0.0.1:8080/MCP" }), "not for this server"},
		{"aud_userinfo", rs("at+jwt", func(c jwt.MapClaims) { c["aud"] = "http://x@127.0.0.1:8080/mcp" }), "not for this server"},
		{"aud_userinfo_password", rs("at+jwt", func(c jwt.MapClaims) { c["aud"] = "http://a:b@127.0.0.1:8080/mcp" }), "not for this server"},
		{"aud_fragment", rs("at+jwt", func(c jwt.MapClaims) { c["aud"] = resource + "#frag" }), "not for this server"},
		{"aud_empty_fragment", rs("at+jwt", func(c jwt.MapClaims) { c["aud"] = resource + "#" }), "not for this server"},
		{"scope_tab", rs("at+jwt", func(c jwt.MapClaims) { c["scope"] = "counter:read\tcounter:write" }), "scopes are malformed"},
		{"scope_newline", rs("at+jwt", func(c jwt.MapClaims) { c["scope"] = "counter:read\ncounter:write" }), "scopes are malformed"},
		{"scope_nbsp", rs("at+jwt", func(c jwt.MapClaims) { c["scope"] = "counter:read\u00a0counter:write" }), "scopes are malformed"},
		{"scope_control", rs("at+jwt", func(c jwt.MapClaims) { c["scope"] = "counter:read\x7f" }), "scopes are malformed"},
		{"scp_string_tab", rs("at+jwt", func(c jwt.MapClaims) { delete(c, "scope"); c["scp"] = "counter:read\tcounter:write" }), "scopes are malformed"},
		{"scp_element_space", rs("at+jwt", func(c jwt.MapClaims) { delete(c, "scope"); c["scp"] = []any{"counter:read counter:write"} }), "scopes are malformed"},
		{"scope_not_a_string", rs("at+jwt", func(c jwt.MapClaims) { c["scope"] = []any{"counter:write"} }), "scopes are malformed"},
		{"aud_not_strings", rs("at+jwt", func(c jwt.MapClaims) { c["aud"] = []any{resource, 7} }), "not a string or a list of strings"},
		{"aud_number", rs("at+jwt", func(c jwt.MapClaims) { c["aud"] = 7 }), "not a string or a list of strings"},
		{"exp_missing", rs("at+jwt", func(c jwt.MapClaims) { delete(c, "exp") }), "no expiry (exp)"},
		{"expired", rs("at+jwt", func(c jwt.MapClaims) { c["exp"] = time.Now().Add(-time.Minute).Unix() }), "has expired"},
		{"nbf_future", rs("at+jwt", func(c jwt.MapClaims) { c["nbf"] = time.Now().Add(time.Hour).Unix() }), "not valid yet (nbf)"},
		{"iat_future", rs("at+jwt", func(c jwt.MapClaims) { c["iat"] = time.Now().Add(time.Hour).Unix() }), "issued in the future (iat)"},
		{"lifetime_too_long", rs("at+jwt", func(c jwt.MapClaims) { c["exp"] = time.Now().Add(25 * time.Hour).Unix() }), "expires too far in the future"},
		{"sub_not_a_string", rs("at+jwt", func(c jwt.MapClaims) { c["sub"] = 42 }), "subject (sub) is not a string"},
		{"malformed_jwt", "eyJhbGciOiJSUzI1NiJ9." + base64.RawURLEncoding.EncodeToString([]byte(`{"iss":"`+as.issuer+`"}`)) + ".A", "malformed"},
		{"claims_not_json", "eyJhbGciOiJSUzI1NiIsImtpZCI6InJzYS0yMDQ4In0.bm90IGpzb24.c2ln", "claims are not a JSON object"},
		{"opaque_without_introspection", opaque, "does not introspect opaque tokens"},
		{"too_long", strings.Repeat("a", 16<<10+1), "too long"},
		{"bad_characters", "abc\"def", "characters a bearer token may not"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			assertRefused(t, call(t, srv, bearer(tc.token)), tc.want, tc.token)
		})
	}

	t.Run("sent_twice", func(t *testing.T) {
		t.Parallel()
		good := as.token(t, nil)
		assertRefused(t, call(t, srv, bearer(good), bearer(good)), "sent more than once", good)
		assertRefused(t, call(t, srv, bearer(good)+", "+bearer(good)), "sent more than once", good)
	})
	t.Run("empty_token", func(t *testing.T) {
		t.Parallel()
		assertRefused(t, call(t, srv, "Bearer "), "empty")
	})

	// No token, or credentials of another scheme: the challenge names
	// the metadata and no error (RFC 6750 §3.1).
	for _, tc := range []struct {
		name   string
		header []string
	}{
		{"no_header", nil},
		{"basic_scheme", []string{"Basic dXNlcjpwYXNz"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			res := call(t, srv, tc.header...)
			assert.Equal(t, http.StatusUnauthorized, res.Status)
			assert.Equal(t, otc.ReasonMissingToken, res.Reason)
			assert.Equal(t, []string{plainChallenge}, res.Challenge)
			assert.Contains(t, res.Message, "send an OAuth access token")
		})
	}
}

// TestJWTExplicitTypeOnly: with ExplicitTypeOnly, only at+jwt tokens
// pass, as RFC 9068 §4 has it.
func TestJWTExplicitTypeOnly(t *testing.T) {
	t.Parallel()
	as := newAuthServer(t, "")
	a := newAuth(t, oauth.Options{ExplicitTypeOnly: true, AuthorizationServers: []oauth.AuthorizationServer{{Issuer: as.issuer}}}, oauth.TimingForTest{})
	srv := newProtected(t, a)
	k := keys(t)
	requireAccepted(t, call(t, srv, bearer(as.token(t, nil))))
	requireAccepted(t, call(t, srv, bearer(sign(t, jwt.SigningMethodRS256, k.rsa, kidRSA, "application/at+jwt", as.claims(nil)))))
	for _, typ := range []string{"JWT", ""} {
		tok := sign(t, jwt.SigningMethodRS256, k.rsa, kidRSA, typ, as.claims(nil))
		assertRefused(t, call(t, srv, bearer(tok)), "accepts only JWTs typed at+jwt", tok)
	}
}

// TestJWTMaxLifetime: the lifetime cap is configurable, and measured from
// now with the leeway.
func TestJWTMaxLifetime(t *testing.T) {
	t.Parallel()
	as := newAuthServer(t, "")
	a := newAuth(t, oauth.Options{MaxLifetime: 10 * time.Minute, AuthorizationServers: []oauth.AuthorizationServer{{Issuer: as.issuer}}}, oauth.TimingForTest{})
	srv := newProtected(t, a)
	requireAccepted(t, call(t, srv, bearer(as.token(t, func(c jwt.MapClaims) { c["exp"] = time.Now().Add(10 * time.Minute).Unix() }))))
	tok := as.token(t, func(c jwt.MapClaims) { c["exp"] = time.Now().Add(11 * time.Minute).Unix() })
	assertRefused(t, call(t, srv, bearer(tok)), "valid for at most 10m0s", tok)
	assert.Equal(t, 24*time.Hour, oauth.DefaultMaxLifetime)
}

// TestJWTStaticAndConfiguredKeys: keys given as a static set or a JWKS URL
// are used without discovery, and a JWK's own "alg" narrows its key.
func TestJWTStaticAndConfiguredKeys(t *testing.T) {
	t.Parallel()
	k := keys(t)
	as := newAuthServer(t, "")
	t.Run("static", func(t *testing.T) {
		t.Parallel()
		a := newAuth(t, oauth.Options{AuthorizationServers: []oauth.AuthorizationServer{{Issuer: "urn:test:issuer", JWKS: jwksJSON(t, jwk(t, &k.ec.PublicKey, kidEC))}}}, oauth.TimingForTest{})
		srv := newProtected(t, a)
		requireAccepted(t, call(t, srv, bearer(sign(t, jwt.SigningMethodES256, k.ec, kidEC, "at+jwt", as.claims(func(c jwt.MapClaims) { c["iss"] = "urn:test:issuer" })))))
	})
	t.Run("jwks_url", func(t *testing.T) {
		t.Parallel()
		other := newAuthServer(t, "")
		a := newAuth(t, oauth.Options{AuthorizationServers: []oauth.AuthorizationServer{{Issuer: other.issuer, JWKSURL: other.srv.URL + "/jwks"}}}, oauth.TimingForTest{})
		requireAccepted(t, call(t, newProtected(t, a), bearer(other.token(t, nil))))
		assert.Zero(t, other.metadataHits(), "no discovery with a JWKS URL")
		assert.Equal(t, 1, other.count("/jwks"))
	})
	t.Run("jwk_alg_narrows", func(t *testing.T) {
		t.Parallel()
		j := jwk(t, &k.rsa.PublicKey, kidRSA)
		j.ALG = "PS256"
		a := newAuth(t, oauth.Options{AuthorizationServers: []oauth.AuthorizationServer{{Issuer: as.issuer, JWKS: jwksJSON(t, j)}}}, oauth.TimingForTest{})
		srv := newProtected(t, a)
		requireAccepted(t, call(t, srv, bearer(sign(t, jwt.SigningMethodPS256, k.rsa, kidRSA, "at+jwt", as.claims(nil)))))
		tok := as.token(t, nil)
		assertRefused(t, call(t, srv, bearer(tok)), "limits it to another algorithm or use", tok)
	})
}

// TestJWTTwoServers: each token is checked with the keys of the server
// its issuer names, and a token from one is not verified by the other's
// keys.
func TestJWTTwoServers(t *testing.T) {
	t.Parallel()
	k := keys(t)
	one, two := newAuthServer(t, ""), newAuthServer(t, "/tenant2")
	two.set(func(as *authServer) { as.jwks = jwksJSON(t, jwk(t, &k.rsa2.PublicKey, kidRSA)) })
	a := newAuth(t, oauth.Options{AuthorizationServers: []oauth.AuthorizationServer{{Issuer: one.issuer}, {Issuer: two.issuer}}}, oauth.TimingForTest{})
	srv := newProtected(t, a)
	requireAccepted(t, call(t, srv, bearer(one.token(t, nil))))
	requireAccepted(t, call(t, srv, bearer(sign(t, jwt.SigningMethodRS256, k.rsa2, kidRSA, "at+jwt", two.claims(nil)))))
	// Same kid, one's key, two's issuer: two's keys do not verify it.
	forged := sign(t, jwt.SigningMethodRS256, k.rsa, kidRSA, "at+jwt", two.claims(nil))
	assertRefused(t, call(t, srv, bearer(forged)), "signature is not valid", forged)
	assert.Equal(t, []string{one.issuer, two.issuer}, a.Issuers())
}

// TestJWTCache: a token sent again is remembered once, and refused once
// it has expired although remembered; with CacheSize negative nothing is
// remembered. (A key dropped from the set is TestDiscoveryRefresh.)
func TestJWTCache(t *testing.T) {
	t.Parallel()
	as := newAuthServer(t, "")
	k := keys(t)
	a := newAuth(t, oauth.Options{AuthorizationServers: []oauth.AuthorizationServer{{Issuer: as.issuer}}, Leeway: -1}, oauth.TimingForTest{})
	srv := newProtected(t, a)
	exp := time.Now().Add(3 * time.Second).Truncate(time.Second).Add(time.Second) // room for the calls before it, on a busy machine
	token := sign(t, jwt.SigningMethodES256, k.ec, kidEC, "at+jwt", as.claims(func(c jwt.MapClaims) { c["exp"] = exp.Unix() }))
	for range 3 {
		assert.Equal(t, "user-42", requireAccepted(t, call(t, srv, bearer(token))).Name)
	}
	assert.Equal(t, 1, oauth.TokenCacheLenForTest(a))
	time.Sleep(time.Until(exp) + 50*time.Millisecond)
	assertRefused(t, call(t, srv, bearer(token)), "expired", token)

	off := newAuth(t, oauth.Options{AuthorizationServers: []oauth.AuthorizationServer{{Issuer: as.issuer}}, CacheSize: -1}, oauth.TimingForTest{})
	srv = newProtected(t, off)
	fresh := sign(t, jwt.SigningMethodES256, k.ec, kidEC, "at+jwt", as.claims(nil))
	requireAccepted(t, call(t, srv, bearer(fresh)))
	assert.Equal(t, 0, oauth.TokenCacheLenForTest(off))
}
