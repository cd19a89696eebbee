package jose_test

import (
	"crypto"
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"encoding/pem"
	"strings"
	"testing"

	"github.com/golang-jwt/jwt/v5"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/otcgo/otc/internal/jose"
)

func keys(t *testing.T) map[string]crypto.Signer {
	t.Helper()
	p256, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	require.NoError(t, err)
	p384, err := ecdsa.GenerateKey(elliptic.P384(), rand.Reader)
	require.NoError(t, err)
	p521, err := ecdsa.GenerateKey(elliptic.P521(), rand.Reader)
	require.NoError(t, err)
	r, err := rsa.GenerateKey(rand.Reader, 2048)
	require.NoError(t, err)
	_, ed, err := ed25519.GenerateKey(rand.Reader)
	require.NoError(t, err)
	return map[string]crypto.Signer{"ES256": p256, "ES384": p384, "ES512": p521, "RS256": r, "EdDSA": ed}
}

// TestSignVerifiedByAnotherLibrary: what Sign makes, golang-jwt verifies
// with the key's public half, for every kind of key; Verify agrees, and
// refuses the token once a byte of it changes.
func TestSignVerifiedByAnotherLibrary(t *testing.T) {
	for want, key := range keys(t) {
		t.Run(want, func(t *testing.T) {
			alg, err := jose.Alg(key)
			require.NoError(t, err)
			require.Equal(t, want, alg)
			tok, err := jose.Sign(key, alg, map[string]any{"typ": "JWT"}, map[string]any{"sub": "agent", "n": 1})
			require.NoError(t, err)
			parsed, err := jwt.Parse(tok, func(*jwt.Token) (any, error) { return key.Public(), nil }, jwt.WithValidMethods([]string{alg}))
			require.NoError(t, err, "golang-jwt verifies it")
			assert.Equal(t, "agent", parsed.Claims.(jwt.MapClaims)["sub"])

			h, c, input, sig, err := jose.Parse(tok)
			require.NoError(t, err)
			assert.Equal(t, alg, h["alg"])
			assert.Equal(t, "agent", c["sub"])
			require.NoError(t, jose.Verify(key.Public(), alg, input, sig))
			bad := append([]byte(nil), input...)
			bad[len(bad)-2] ^= 1
			assert.Error(t, jose.Verify(key.Public(), alg, bad, sig))
			for _, other := range jose.Algorithms {
				if other != alg {
					assert.Error(t, jose.Verify(key.Public(), other, input, sig), "not with %s", other)
				}
			}
		})
	}
}

// TestPSS: an RSA key signs with PS256 where a server lists it and not
// RS256, and golang-jwt verifies it.
func TestPSS(t *testing.T) {
	key := keys(t)["RS256"]
	alg, err := jose.Alg(key, "ES256", "PS256")
	require.NoError(t, err)
	require.Equal(t, "PS256", alg)
	tok, err := jose.Sign(key, alg, nil, map[string]any{"a": "b"})
	require.NoError(t, err)
	_, err = jwt.Parse(tok, func(*jwt.Token) (any, error) { return key.Public(), nil }, jwt.WithValidMethods([]string{"PS256"}))
	require.NoError(t, err)
}

// TestThumbprintOfRFC7638: the RFC's own example key has the RFC's
// thumbprint; a JWK round-trips to its key.
func TestThumbprintOfRFC7638(t *testing.T) {
	jwk := map[string]any{
		"kty": "RSA",
		"n":   "0vx7agoebGcQSuuPiLJXZptN9nndrQmbXEps2aiAFbWhM78LhWx4cbbfAAtVT86zwu1RK7aPFFxuhDR1L6tSoc_BJECPebWKRXjBZCiFV4n3oknjhMstn64tZ_2W-5JsGY4Hc5n9yBXArwl93lqt7_RN5w6Cf0h4QyQ5v-65YGjQR0_FDW2QvzqY368QQMicAtaSqzs8KJZgnYb9c7d0zgdAZHzu6qMQvRL5hajrn1n91CbOpbISD08qNLyrdkt-bFTWhAI4vMQFh6WeZu0fM4lFd2NcRwr3XPksINHaQ-G_xBniIqbw0Ls1jF44-csFCur-kEgU8awapJzKnqDKgw",
		"e":   "AQAB",
		"alg": "RS256",
		"kid": "2011-04-29",
	}
	tp, err := jose.Thumbprint(jwk)
	require.NoError(t, err)
	assert.Equal(t, "NzbLsXh8uDCcd-6MNwXF4W_7noWXFZAfHkxZsRGC9Xs", tp)

	for name, key := range keys(t) {
		j, err := jose.PublicJWK(key.Public())
		require.NoError(t, err, name)
		pub, err := jose.PublicKey(j)
		require.NoError(t, err, name)
		assert.True(t, pub.(interface{ Equal(crypto.PublicKey) bool }).Equal(key.Public()), name)
		a, err := jose.Thumbprint(j)
		require.NoError(t, err)
		assert.Len(t, a, 43, "a SHA-256 in base64url")
	}
}

// TestBadJWKs: private members, unknown curves, short RSA keys and
// coordinates off the curve are refused.
func TestBadJWKs(t *testing.T) {
	p256 := keys(t)["ES256"]
	good, err := jose.PublicJWK(p256.Public())
	require.NoError(t, err)
	with := func(k string, v any) map[string]any {
		m := map[string]any{}
		for a, b := range good {
			m[a] = b
		}
		if v == nil {
			delete(m, k)
		} else {
			m[k] = v
		}
		return m
	}
	for name, jwk := range map[string]map[string]any{
		"private d":     with("d", "AAAA"),
		"no y":          with("y", nil),
		"curve":         with("crv", "secp256k1"),
		"kty":           with("kty", "oct"),
		"off the curve": with("y", good["x"]),
		"short x":       with("x", "AAAA"),
		"small rsa":     {"kty": "RSA", "n": "AQAB", "e": "AQAB"},
	} {
		_, err := jose.PublicKey(jwk)
		assert.Error(t, err, name)
	}
}

// TestParseRefuses: what is not a compact JWS, or too large, is refused.
func TestParseRefuses(t *testing.T) {
	for _, tok := range []string{"", "a.b", "a.b.c.d", "!!.e30.", "e30.!!.", "W10.e30.", strings.Repeat("a", 20000) + ".e30.e30"} {
		_, _, _, _, err := jose.Parse(tok)
		assert.Error(t, err, tok[:min(len(tok), 20)])
	}
}

// TestParsePrivateKey reads the three PEM forms and refuses the rest.
func TestParsePrivateKey(t *testing.T) {
	ks := keys(t)
	p8, err := x509.MarshalPKCS8PrivateKey(ks["EdDSA"])
	require.NoError(t, err)
	sec1, err := x509.MarshalECPrivateKey(ks["ES256"].(*ecdsa.PrivateKey))
	require.NoError(t, err)
	p1 := x509.MarshalPKCS1PrivateKey(ks["RS256"].(*rsa.PrivateKey))
	for typ, der := range map[string][]byte{"PRIVATE KEY": p8, "EC PRIVATE KEY": sec1, "RSA PRIVATE KEY": p1} {
		data := append([]byte("comment\n"), pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: []byte{1}})...)
		data = append(data, pem.EncodeToMemory(&pem.Block{Type: typ, Bytes: der})...)
		k, err := jose.ParsePrivateKey(data)
		require.NoError(t, err, typ)
		_, err = jose.Alg(k)
		assert.NoError(t, err)
	}
	_, err = jose.ParsePrivateKey([]byte("nothing"))
	assert.ErrorContains(t, err, "no PEM private key")
	_, err = jose.ParsePrivateKey(pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: []byte{1, 2}}))
	assert.Error(t, err)
	small, err := rsa.GenerateKey(rand.Reader, 1024)
	require.NoError(t, err)
	_, err = jose.ParsePrivateKey(pem.EncodeToMemory(&pem.Block{Type: "RSA PRIVATE KEY", Bytes: x509.MarshalPKCS1PrivateKey(small)}))
	assert.ErrorContains(t, err, "1024 bits")
}
