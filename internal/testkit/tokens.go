package testkit

import (
	"bytes"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/MicahParks/jwkset"
	"github.com/golang-jwt/jwt/v5"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/otcgo/otc/auth"
)

// The capability tokens of the tests of package auth and of the root's
// cross-format tests: an issuer, its ES256 key and key set, the claims of
// a token for Payments.Refund, and the HTTP plumbing that checks how a
// token is refused.

// The issuer, resource and capability of the test tokens.
const (
	CapIssuer      = "https://issuer.test"
	CapOtherIssuer = "https://other-issuer.test"
	CapResource    = "urn:test:payments"
	CapCapability  = "payments:refund"
	// KidEC names CapKey in the key set.
	KidEC = "ec-p256-1"
)

var capKey = sync.OnceValues(func() (*ecdsa.PrivateKey, error) { return ecdsa.GenerateKey(elliptic.P256(), rand.Reader) })

// CapKey returns the issuer's ES256 key, generated once per test binary.
func CapKey(t testing.TB) *ecdsa.PrivateKey {
	t.Helper()
	k, err := capKey()
	require.NoError(t, err)
	return k
}

// CapJWKS returns the key set holding CapKey's public key under KidEC.
func CapJWKS(t testing.TB) []byte {
	t.Helper()
	return JWKS(t, JWK(t, &CapKey(t).PublicKey, KidEC))
}

// JWK returns the JWK of a public key (or, for []byte, a secret) with the
// given kid and no "alg", so that only the authenticator's own checks
// stand between a key and a token of the wrong algorithm.
func JWK(t testing.TB, key any, kid string) jwkset.JWKMarshal {
	t.Helper()
	_, secret := key.([]byte)
	jwk, err := jwkset.NewJWKFromKey(key, jwkset.JWKOptions{
		Metadata: jwkset.JWKMetadataOptions{KID: kid},
		Marshal:  jwkset.JWKMarshalOptions{Private: secret},
	})
	require.NoError(t, err)
	return jwk.Marshal()
}

// JWKS encodes a key set.
func JWKS(t testing.TB, keys ...jwkset.JWKMarshal) []byte {
	t.Helper()
	b, err := json.Marshal(jwkset.JWKSMarshal{Keys: keys})
	require.NoError(t, err)
	return b
}

// CapClaims returns the claims of a valid token for Payments.Refund
// (audience CapResource, capability CapCapability), changed by edit.
func CapClaims(edit func(c jwt.MapClaims)) jwt.MapClaims {
	now := time.Now()
	c := jwt.MapClaims{
		"iss":  CapIssuer,
		"sub":  "agent-7",
		"aud":  []any{"urn:other", CapResource},
		"caps": []any{"payments:read", CapCapability},
		"jti":  "tok-1",
		"iat":  now.Add(-10 * time.Second).Unix(),
		"exp":  now.Add(5 * time.Minute).Unix(),
	}
	if edit != nil {
		edit(c)
	}
	return c
}

// Sign signs claims with method and key, naming kid in the header unless
// it is empty.
func Sign(t testing.TB, method jwt.SigningMethod, key any, kid string, claims jwt.MapClaims) string {
	t.Helper()
	tok := jwt.NewWithClaims(method, claims)
	if kid != "" {
		tok.Header["kid"] = kid
	}
	s, err := tok.SignedString(key)
	require.NoError(t, err)
	return s
}

// CapToken returns a token signed with CapKey, of CapClaims(edit).
func CapToken(t testing.TB, edit func(c jwt.MapClaims)) string {
	t.Helper()
	return Sign(t, jwt.SigningMethodES256, CapKey(t), KidEC, CapClaims(edit))
}

// Response is an answer, fully read.
type Response struct {
	Status int
	Header http.Header
	Raw    []byte
}

// Send sends one request with the given headers, and a JSON body unless
// body is nil.
func Send(t *testing.T, c *http.Client, method, url string, header http.Header, body []byte) Response {
	t.Helper()
	var rd io.Reader
	if body != nil {
		rd = bytes.NewReader(body)
	}
	req, err := http.NewRequestWithContext(t.Context(), method, url, rd)
	require.NoError(t, err)
	for k, vs := range header {
		req.Header[k] = vs
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := c.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	return Response{Status: resp.StatusCode, Header: resp.Header, Raw: raw}
}

// AssertNoLeak checks that no piece of the credentials in leaks (a piece
// of eight bytes or more: the whole, or a part between dots or spaces)
// appears in the answer's body or headers.
func AssertNoLeak(t *testing.T, res Response, leaks ...string) {
	t.Helper()
	for _, leak := range leaks {
		pieces := append([]string{leak}, strings.FieldsFunc(leak, func(r rune) bool { return r == '.' || r == ' ' })...)
		for _, p := range pieces {
			if len(p) < 8 {
				continue
			}
			p = p[:min(len(p), 256)]
			assert.NotContains(t, string(res.Raw), p, "the body quotes a credential")
			for k, vs := range res.Header {
				for _, v := range vs {
					assert.NotContains(t, v, p, "header %s quotes a credential", k)
				}
			}
		}
	}
}

// AssertCapRefused checks an OTC handler's refusal: the status, the
// Bearer challenge on a 401, the reason, a message containing wantMsg
// (case folded), and no piece of the credentials in leaks anywhere in the
// answer.
func AssertCapRefused(t *testing.T, res Response, status int, reason, wantMsg string, leaks ...string) {
	t.Helper()
	assert.Equal(t, status, res.Status, "body: %s", res.Raw)
	assert.Equal(t, "application/json", res.Header.Get("Content-Type"))
	if status == http.StatusUnauthorized {
		assert.Equal(t, []string{"Bearer"}, res.Header.Values("WWW-Authenticate"))
	}
	var body map[string]any
	if assert.NoError(t, json.Unmarshal(res.Raw, &body), "body: %s", res.Raw) {
		assert.NotEmpty(t, body["$schema"], "body: %s", res.Raw)
		if reason == "" {
			assert.NotContains(t, body, "reason", "body: %s", res.Raw)
		} else {
			assert.Equal(t, reason, body["reason"], "body: %s", res.Raw)
		}
		msg, _ := body["message"].(string)
		assert.Contains(t, strings.ToLower(msg), strings.ToLower(wantMsg), "message")
	}
	AssertNoLeak(t, res, leaks...)
}

// CapabilityAuth returns a capability authenticator that ends with the
// test: issuers CapOtherIssuer and CapIssuer and a silent logger unless
// opts gives them, and CapJWKS unless opts gives a key set.
func CapabilityAuth(t *testing.T, opts auth.CapabilityOptions) *auth.CapabilityAuth {
	t.Helper()
	if opts.Issuers == nil {
		opts.Issuers = []string{CapOtherIssuer, CapIssuer}
	}
	if opts.JWKS == nil && opts.JWKSURL == "" {
		opts.JWKS = CapJWKS(t)
	}
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	a, err := auth.NewCapabilityAuth(t.Context(), &opts)
	require.NoError(t, err)
	return a
}
