package oauth_test

import (
	"context"
	"crypto"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/sha256"
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
	"github.com/otcgo/otc/idempotency"
	"github.com/otcgo/otc/internal/jose"
	"github.com/otcgo/otc/oauth"
)

// holder is a client's DPoP key, with what a proof names of it.
type holder struct {
	key *ecdsa.PrivateKey
	jwk map[string]any
	jkt string
}

func newHolder(t testing.TB) holder {
	t.Helper()
	k, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	require.NoError(t, err)
	j, err := jose.PublicJWK(k.Public())
	require.NoError(t, err)
	tp, err := jose.Thumbprint(j)
	require.NoError(t, err)
	return holder{key: k, jwk: j, jkt: tp}
}

// proof is a DPoP proof signed by golang-jwt (not this module's signer),
// for method and htu, with the hash of token, edited by edit.
func (h holder) proof(t testing.TB, method, htu, token string, edit func(header, claims map[string]any)) string {
	t.Helper()
	sum := sha256.Sum256([]byte(token))
	c := jwt.MapClaims{"jti": rand.Text(), "htm": method, "htu": htu, "iat": time.Now().Unix(), "ath": base64.RawURLEncoding.EncodeToString(sum[:])}
	tok := jwt.NewWithClaims(jwt.SigningMethodES256, c)
	tok.Header["typ"] = "dpop+jwt"
	tok.Header["jwk"] = h.jwk
	if edit != nil {
		edit(tok.Header, c)
	}
	s, err := tok.SignedString(crypto.Signer(h.key))
	require.NoError(t, err)
	return s
}

// dpopCall sends a POST to srv's /mcp with the Authorization and DPoP
// headers given ("" for none).
func dpopCall(t *testing.T, srv *httptest.Server, authorization string, proofs ...string) (*http.Response, string) {
	t.Helper()
	req, err := http.NewRequestWithContext(t.Context(), http.MethodPost, srv.URL+"/mcp", strings.NewReader("{}"))
	require.NoError(t, err)
	if authorization != "" {
		req.Header.Set("Authorization", authorization)
	}
	for _, p := range proofs {
		req.Header.Add("DPoP", p)
	}
	resp, err := srv.Client().Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp, string(b)
}

// TestDPoPBoundTokens: a token bound to a key is taken with a proof made
// with that key for this request, and refused, with the reason that says
// what to do, in every other case the RFC names.
func TestDPoPBoundTokens(t *testing.T) {
	as := newAuthServer(t, "")
	a := newAuth(t, oauth.Options{AuthorizationServers: []oauth.AuthorizationServer{{Issuer: as.issuer}}, DPoP: &oauth.DPoP{}}, oauth.TimingForTest{})
	srv := newProtected(t, a)
	h, other := newHolder(t), newHolder(t)
	bound := as.token(t, func(c jwt.MapClaims) { c["cnf"] = map[string]any{"jkt": h.jkt} })
	plain := as.token(t, nil)

	resp, body := dpopCall(t, srv, "DPoP "+bound, h.proof(t, "POST", resource, bound, nil))
	require.Equal(t, http.StatusOK, resp.StatusCode, body)
	assert.Contains(t, body, h.jkt, "the identity's claims hold the binding")

	// A bearer token is still taken, and the challenge offers both.
	resp, body = dpopCall(t, srv, "Bearer "+plain)
	require.Equal(t, http.StatusOK, resp.StatusCode, body)
	resp, _ = dpopCall(t, srv, "")
	assert.Equal(t, []string{plainChallenge + `, DPoP algs="ES256 ES384 ES512 RS256 RS384 RS512 PS256 PS384 PS512 EdDSA", resource_metadata="` + prmURL + `"`}, resp.Header.Values("WWW-Authenticate"))

	replayed := h.proof(t, "POST", resource, bound, nil)
	resp, body = dpopCall(t, srv, "DPoP "+bound, replayed)
	require.Equal(t, http.StatusOK, resp.StatusCode, body)

	for name, tc := range map[string]struct {
		auth   string
		proofs []string
		reason string
		want   string
	}{
		"replayed proof":        {"DPoP " + bound, []string{replayed}, oauth.ReasonInvalidProof, "used before"},
		"no proof":              {"DPoP " + bound, nil, oauth.ReasonInvalidProof, "needs a DPoP proof"},
		"two proofs":            {"DPoP " + bound, []string{h.proof(t, "POST", resource, bound, nil), h.proof(t, "POST", resource, bound, nil)}, oauth.ReasonInvalidProof, "more than one"},
		"another method":        {"DPoP " + bound, []string{h.proof(t, "GET", resource, bound, nil)}, oauth.ReasonInvalidProof, "another method"},
		"another URL":           {"DPoP " + bound, []string{h.proof(t, "POST", "http://127.0.0.1:8080/other", bound, nil)}, oauth.ReasonInvalidProof, "another URL"},
		"another host":          {"DPoP " + bound, []string{h.proof(t, "POST", "http://evil.example:8080/mcp", bound, nil)}, oauth.ReasonInvalidProof, "another URL"},
		"a query in htu":        {"DPoP " + bound, []string{h.proof(t, "POST", resource+"?a=1", bound, nil)}, oauth.ReasonInvalidProof, "another URL"},
		"stale iat":             {"DPoP " + bound, []string{h.proof(t, "POST", resource, bound, func(_, c map[string]any) { c["iat"] = time.Now().Add(-10 * time.Minute).Unix() })}, oauth.ReasonInvalidProof, "iat"},
		"iat ahead":             {"DPoP " + bound, []string{h.proof(t, "POST", resource, bound, func(_, c map[string]any) { c["iat"] = time.Now().Add(5 * time.Minute).Unix() })}, oauth.ReasonInvalidProof, "iat"},
		"no jti":                {"DPoP " + bound, []string{h.proof(t, "POST", resource, bound, func(_, c map[string]any) { delete(c, "jti") })}, oauth.ReasonInvalidProof, "jti"},
		"ath of another token":  {"DPoP " + bound, []string{h.proof(t, "POST", resource, plain, nil)}, oauth.ReasonInvalidProof, "ath"},
		"typ":                   {"DPoP " + bound, []string{h.proof(t, "POST", resource, bound, func(hd, _ map[string]any) { hd["typ"] = "JWT" })}, oauth.ReasonInvalidProof, "typ"},
		"private key in jwk":    {"DPoP " + bound, []string{h.proof(t, "POST", resource, bound, func(hd, _ map[string]any) { hd["jwk"] = withMember(h.jwk, "d", "AAAA") })}, oauth.ReasonInvalidProof, "private"},
		"jwk of another key":    {"DPoP " + bound, []string{h.proof(t, "POST", resource, bound, func(hd, _ map[string]any) { hd["jwk"] = other.jwk })}, oauth.ReasonInvalidProof, "signature"},
		"key not the cnf.jkt":   {"DPoP " + bound, []string{other.proof(t, "POST", resource, bound, nil)}, otc.ReasonInvalidToken, "another key"},
		"unbound token as DPoP": {"DPoP " + plain, []string{h.proof(t, "POST", resource, plain, nil)}, otc.ReasonInvalidToken, "not bound"},
		"bound token as Bearer": {"Bearer " + bound, nil, otc.ReasonInvalidToken, "bound to a key"},
		"garbage proof":         {"DPoP " + bound, []string{"not.a.jwt"}, oauth.ReasonInvalidProof, "malformed"},
		"huge proof":            {"DPoP " + bound, []string{strings.Repeat("a", 9000)}, oauth.ReasonInvalidProof, "over"},
	} {
		t.Run(name, func(t *testing.T) {
			resp, body := dpopCall(t, srv, tc.auth, tc.proofs...)
			assert.Equal(t, http.StatusUnauthorized, resp.StatusCode, body)
			assert.Contains(t, body, `"reason":"`+tc.reason+`"`)
			assert.Contains(t, strings.ToLower(body), strings.ToLower(tc.want))
			ch := strings.Join(resp.Header.Values("WWW-Authenticate"), "\n")
			if tc.reason == oauth.ReasonInvalidProof {
				assert.True(t, strings.HasPrefix(ch, "DPoP "), ch)
				assert.Contains(t, ch, `error="invalid_dpop_proof"`)
			} else {
				assert.Contains(t, ch, `error="invalid_token"`)
			}
			assert.NotContains(t, body+ch, strings.Split(bound, ".")[1], "the answer quotes the token")
		})
	}
}

func withMember(m map[string]any, k string, v any) map[string]any {
	out := map[string]any{k: v}
	for a, b := range m {
		out[a] = b
	}
	return out
}

// TestDPoPRequired: with Required, a bearer token is refused, and the
// challenge offers DPoP alone.
func TestDPoPRequired(t *testing.T) {
	as := newAuthServer(t, "")
	a := newAuth(t, oauth.Options{AuthorizationServers: []oauth.AuthorizationServer{{Issuer: as.issuer}}, DPoP: &oauth.DPoP{Required: true, Algorithms: []string{"ES256"}}}, oauth.TimingForTest{})
	srv := newProtected(t, a)
	resp, body := dpopCall(t, srv, "Bearer "+as.token(t, nil))
	assert.Equal(t, http.StatusUnauthorized, resp.StatusCode)
	assert.Contains(t, body, "DPoP-bound tokens only")
	resp, _ = dpopCall(t, srv, "")
	assert.Equal(t, []string{`DPoP algs="ES256", resource_metadata="` + prmURL + `"`}, resp.Header.Values("WWW-Authenticate"))

	// The metadata says so (RFC 9728 §2).
	prm, err := a.MetadataHandler(nil, nil)
	require.NoError(t, err)
	rec := httptest.NewRecorder()
	prm.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, prmURL, nil))
	assert.Contains(t, rec.Body.String(), `"dpop_signing_alg_values_supported":["ES256"],"dpop_bound_access_tokens_required":true`)

	// A proof signed with an algorithm not listed is refused.
	h := newHolder(t)
	bound := as.token(t, func(c jwt.MapClaims) { c["cnf"] = map[string]any{"jkt": h.jkt} })
	p384, err := ecdsa.GenerateKey(elliptic.P384(), rand.Reader)
	require.NoError(t, err)
	j, _ := jose.PublicJWK(p384.Public())
	proof, err := jose.Sign(p384, "ES384", map[string]any{"typ": "dpop+jwt", "jwk": j}, map[string]any{"jti": "x", "htm": "POST", "htu": resource, "iat": time.Now().Unix()})
	require.NoError(t, err)
	resp, body = dpopCall(t, srv, "DPoP "+bound, proof)
	assert.Equal(t, http.StatusUnauthorized, resp.StatusCode)
	assert.Contains(t, body, "alg is not one this server takes")

	_, err = oauth.New(t.Context(), &oauth.Options{Resource: resource, AuthorizationServers: []oauth.AuthorizationServer{{Issuer: as.issuer}}, DPoP: &oauth.DPoP{Algorithms: []string{"HS256"}}})
	assert.ErrorContains(t, err, "not an asymmetric JWS algorithm")
	_, err = oauth.New(t.Context(), &oauth.Options{Resource: resource, AuthorizationServers: []oauth.AuthorizationServer{{Issuer: as.issuer}}, DPoP: &oauth.DPoP{NonceSecret: []byte("short")}})
	assert.ErrorContains(t, err, "at least 32 bytes")
}

// TestDPoPNonces: with Nonce, a proof without the server's nonce is
// refused with use_dpop_nonce and the nonce, which every answer of the
// wrapped handler carries; a proof with it is taken; a nonce from a
// replica sharing the secret is taken, one from a replica with another
// secret is not; a made-up nonce is not.
func TestDPoPNonces(t *testing.T) {
	as := newAuthServer(t, "")
	secret := []byte(strings.Repeat("s", 32))
	replica := func(secret []byte) *httptest.Server {
		a := newAuth(t, oauth.Options{AuthorizationServers: []oauth.AuthorizationServer{{Issuer: as.issuer}}, DPoP: &oauth.DPoP{Nonce: true, NonceSecret: secret}}, oauth.TimingForTest{})
		inner := newProtected(t, a)
		srv := httptest.NewServer(a.Nonces(inner.Config.Handler))
		t.Cleanup(srv.Close)
		return srv
	}
	one, two, stranger := replica(secret), replica(secret), replica(nil)
	h := newHolder(t)
	bound := as.token(t, func(c jwt.MapClaims) { c["cnf"] = map[string]any{"jkt": h.jkt} })

	resp, body := dpopCall(t, one, "DPoP "+bound, h.proof(t, "POST", resource, bound, nil))
	require.Equal(t, http.StatusUnauthorized, resp.StatusCode, body)
	assert.Contains(t, resp.Header.Get("WWW-Authenticate"), `error="use_dpop_nonce"`)
	assert.Contains(t, body, `"reason":"use_dpop_nonce"`)
	nonce := resp.Header.Get("DPoP-Nonce")
	require.NotEmpty(t, nonce)

	withNonce := func(n string) func(_, c map[string]any) { return func(_, c map[string]any) { c["nonce"] = n } }
	resp, body = dpopCall(t, one, "DPoP "+bound, h.proof(t, "POST", resource, bound, withNonce(nonce)))
	require.Equal(t, http.StatusOK, resp.StatusCode, body)
	assert.NotEmpty(t, resp.Header.Get("DPoP-Nonce"), "every answer carries the nonce")
	resp, body = dpopCall(t, two, "DPoP "+bound, h.proof(t, "POST", resource, bound, withNonce(nonce)))
	require.Equal(t, http.StatusOK, resp.StatusCode, body)

	for name, n := range map[string]string{"another secret": nonce, "made up": "AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA"} {
		srv := one
		if name == "another secret" {
			srv = stranger
		}
		resp, body = dpopCall(t, srv, "DPoP "+bound, h.proof(t, "POST", resource, bound, withNonce(n)))
		assert.Equal(t, http.StatusUnauthorized, resp.StatusCode, name)
		assert.Contains(t, body, "use_dpop_nonce", name)
	}
}

// TestDPoPProofsSharedByReplicas: with the proofs kept in a store two
// authenticators share, a proof taken by one is refused by the other.
func TestDPoPProofsSharedByReplicas(t *testing.T) {
	as := newAuthServer(t, "")
	store := idempotency.NewMemoryStore(nil)
	var srvs []*httptest.Server
	for range 2 {
		a := newAuth(t, oauth.Options{AuthorizationServers: []oauth.AuthorizationServer{{Issuer: as.issuer}}, DPoP: &oauth.DPoP{Proofs: store}}, oauth.TimingForTest{})
		srvs = append(srvs, newProtected(t, a))
	}
	h := newHolder(t)
	bound := as.token(t, func(c jwt.MapClaims) { c["cnf"] = map[string]any{"jkt": h.jkt} })
	p := h.proof(t, "POST", resource, bound, nil)
	resp, body := dpopCall(t, srvs[0], "DPoP "+bound, p)
	require.Equal(t, http.StatusOK, resp.StatusCode, body)
	resp, body = dpopCall(t, srvs[1], "DPoP "+bound, p)
	assert.Equal(t, http.StatusUnauthorized, resp.StatusCode)
	assert.Contains(t, body, "used before")
}

// TestBoundTokenPolicy: a tool whose policy asks for a bound token
// refuses a bearer token (401 token_not_bound, the challenge
// offering DPoP) and take the same caller's DPoP-bound token; a tool
// without it takes either.
func TestBoundTokenPolicy(t *testing.T) {
	as := newAuthServer(t, "")
	a := newAuth(t, oauth.Options{AuthorizationServers: []oauth.AuthorizationServer{{Issuer: as.issuer}}, DPoP: &oauth.DPoP{}}, oauth.TimingForTest{})
	reg := otc.NewRegistry(nil)
	require.NoError(t, otc.Register(reg, otc.Tool{ID: "Pay.Out", Version: "1.0.0", Description: "Pays.", Policy: &otc.Policy{RequiresBoundToken: true}},
		func(context.Context, struct{}) (string, error) { return "paid", nil }))
	require.NoError(t, otc.Register(reg, otc.Tool{ID: "Read.Me", Version: "1.0.0", Description: "Reads."},
		func(context.Context, struct{}) (string, error) { return "read", nil }))
	srv := httptest.NewServer(otc.NewHandler(reg, &otc.HandlerOptions{Authenticator: a}))
	t.Cleanup(srv.Close)
	h := newHolder(t)
	bound := as.token(t, func(c jwt.MapClaims) { c["cnf"] = map[string]any{"jkt": h.jkt} })
	plain := as.token(t, nil)

	send := func(path, body, authorization, proof string) (*http.Response, string) {
		req, err := http.NewRequestWithContext(t.Context(), http.MethodPost, srv.URL+path, strings.NewReader(body))
		require.NoError(t, err)
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		req.Header.Set("MCP-Protocol-Version", "2025-11-25")
		req.Header.Set("Authorization", authorization)
		if proof != "" {
			req.Header.Set("DPoP", proof)
		}
		resp, err := srv.Client().Do(req)
		require.NoError(t, err)
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp, string(b)
	}
	htu := func(path string) string { return "http://127.0.0.1:8080" + path }
	call := `{"request":{"tool_id":"Pay.Out","input":{}}}`
	resp, body := send("/tools/call", call, "Bearer "+plain, "")
	assert.Equal(t, http.StatusUnauthorized, resp.StatusCode, body)
	assert.Contains(t, body, otc.ReasonTokenNotBound)
	assert.Contains(t, resp.Header.Get("WWW-Authenticate"), "DPoP algs=")
	resp, body = send("/tools/call", `{"request":{"tool_id":"Read.Me","input":{}}}`, "Bearer "+plain, "")
	assert.Equal(t, http.StatusOK, resp.StatusCode, body)
	resp, body = send("/tools/call", call, "DPoP "+bound, h.proof(t, "POST", htu("/tools/call"), bound, nil))
	assert.Equal(t, http.StatusOK, resp.StatusCode, body)
	assert.Contains(t, body, "paid")

}
