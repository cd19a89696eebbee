package main

import (
	"bytes"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/sha256"
	"crypto/x509"
	"encoding/base64"
	"encoding/json"
	"encoding/pem"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/otcgo/otc"
	"github.com/otcgo/otc/auth"
)

const testIssuer = "https://issuer.example"

// runCmd runs the command and returns its exit code and outputs.
func runCmd(t *testing.T, stdin string, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	var out, errOut bytes.Buffer
	code = run(args, strings.NewReader(stdin), &out, &errOut, time.Now())
	return code, out.String(), errOut.String()
}

// keygen makes a key pair in a new directory and returns the paths.
func keygen(t *testing.T) (jwksPath, keyPath string) {
	t.Helper()
	dir := t.TempDir()
	jwksPath, keyPath = filepath.Join(dir, "jwks.json"), filepath.Join(dir, "key.pem")
	code, stdout, stderr := runCmd(t, "", "-keygen", "-jwks", jwksPath, "-key", keyPath)
	require.Equal(t, 0, code, "stderr: %s", stderr)
	assert.Empty(t, stdout)
	assert.Contains(t, stderr, "kid ")
	return jwksPath, keyPath
}

// verify checks a token with the capability authenticator of the otc
// package, given the key set -keygen wrote, and returns its claims.
func verify(t *testing.T, jwksPath, token string) map[string]any {
	t.Helper()
	set, err := os.ReadFile(jwksPath)
	require.NoError(t, err)
	auth, err := auth.NewCapabilityAuth(t.Context(), &auth.CapabilityOptions{Issuers: []string{testIssuer}, JWKS: set})
	require.NoError(t, err, "the key set must be one the server accepts")
	req, err := http.NewRequest(http.MethodPost, "http://127.0.0.1/tools/call", nil)
	require.NoError(t, err)
	req.Header.Set("Authorization", "Bearer "+token)
	id, err := auth.Authenticate(req)
	require.NoError(t, err)
	assert.Equal(t, otc.MethodCapability, id.Method)
	return id.Claims
}

func header(t *testing.T, token string) map[string]any {
	t.Helper()
	tok, _, err := jwt.NewParser().ParseUnverified(token, jwt.MapClaims{})
	require.NoError(t, err)
	return tok.Header
}

func TestKeygen(t *testing.T) {
	t.Parallel()
	jwksPath, keyPath := keygen(t)

	info, err := os.Stat(keyPath)
	require.NoError(t, err)
	assert.Equal(t, os.FileMode(0o600), info.Mode().Perm(), "the private key is its owner's only")
	key, err := readPrivateKey(keyPath)
	require.NoError(t, err)

	raw, err := os.ReadFile(jwksPath)
	require.NoError(t, err)
	var set struct {
		Keys []map[string]any `json:"keys"`
	}
	require.NoError(t, json.Unmarshal(raw, &set))
	require.Len(t, set.Keys, 1)
	k := set.Keys[0]
	assert.ElementsMatch(t, []string{"kty", "crv", "x", "y", "kid", "use", "alg"}, keysOf(k), "a public key only: no d")
	assert.Equal(t, "EC", k["kty"])
	assert.Equal(t, "P-256", k["crv"])
	assert.Equal(t, "ES256", k["alg"])
	assert.Equal(t, "sig", k["use"])

	// The coordinates are the private key's public half, 32 bytes each.
	x, err := base64.RawURLEncoding.DecodeString(k["x"].(string))
	require.NoError(t, err)
	y, err := base64.RawURLEncoding.DecodeString(k["y"].(string))
	require.NoError(t, err)
	pub, err := ecdsa.ParseUncompressedPublicKey(elliptic.P256(), append(append([]byte{4}, x...), y...))
	require.NoError(t, err)
	assert.True(t, pub.Equal(&key.PublicKey))

	// The kid is the RFC 7638 thumbprint, written out here by hand.
	canonical := `{"crv":"P-256","kty":"EC","x":"` + k["x"].(string) + `","y":"` + k["y"].(string) + `"}`
	sum := sha256.Sum256([]byte(canonical))
	assert.Equal(t, base64.RawURLEncoding.EncodeToString(sum[:]), k["kid"])

	t.Run("never_overwrites", func(t *testing.T) {
		for _, args := range [][]string{
			{"-keygen", "-jwks", jwksPath, "-key", filepath.Join(t.TempDir(), "new.pem")},
			{"-keygen", "-jwks", filepath.Join(t.TempDir(), "new.json"), "-key", keyPath},
		} {
			code, _, stderr := runCmd(t, "", args...)
			assert.Equal(t, 1, code)
			assert.Contains(t, stderr, "already exists")
		}
		again, err := readPrivateKey(keyPath)
		require.NoError(t, err)
		assert.True(t, again.Equal(key), "the key is unchanged")
		rawAgain, err := os.ReadFile(jwksPath)
		require.NoError(t, err)
		assert.Equal(t, raw, rawAgain, "the key set is unchanged")
	})
}

func keysOf(m map[string]any) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	return out
}

// TestMint_RoundTrip makes a key pair, mints a token for a body file and
// verifies it with the key set, as the calculator would.
func TestMint_RoundTrip(t *testing.T) {
	t.Parallel()
	jwksPath, keyPath := keygen(t)
	body := []byte("{\"request\":{\"tool_id\":\"Payments.Refund@1.0.0\",\"input\":{\"order_id\":\"A-1\",\"amount_cents\":250}}}\n")
	bodyPath := filepath.Join(t.TempDir(), "body.json")
	require.NoError(t, os.WriteFile(bodyPath, body, 0o644))

	before := time.Now()
	code, stdout, stderr := runCmd(t, "",
		"-key", keyPath, "-iss", testIssuer, "-aud", "urn:otc:example:payments",
		"-caps", "payments:refund, payments:read", "-blast-radius", "tenant:acme", "-exec-act", "refund",
		"-target", "order:A-1", "-body", bodyPath,
		"-htm", "POST", "-htu", "http://127.0.0.1:8080/tools/call")
	require.Equal(t, 0, code, "stderr: %s", stderr)
	assert.Empty(t, stderr)
	token, ok := strings.CutSuffix(stdout, "\n")
	require.True(t, ok, "one line: %q", stdout)

	claims := verify(t, jwksPath, token)
	sum := sha256.Sum256(body)
	assert.Equal(t, base64.RawURLEncoding.EncodeToString(sum[:]), claims["inp_hash"], "the SHA-256 of the file's exact bytes, newline included")
	assert.Equal(t, testIssuer, claims["iss"])
	assert.Equal(t, "example-agent", claims["sub"])
	assert.Equal(t, []any{"urn:otc:example:payments"}, claims["aud"])
	assert.Equal(t, []any{"payments:refund", "payments:read"}, claims["caps"])
	assert.Equal(t, "tenant:acme", claims["blast_radius"])
	assert.Equal(t, "refund", claims["exec_act"])
	assert.Equal(t, "order:A-1", claims["target"])
	assert.Equal(t, "POST", claims["htm"])
	assert.Equal(t, "http://127.0.0.1:8080/tools/call", claims["htu"])

	iat, exp := claims["iat"].(float64), claims["exp"].(float64)
	assert.InDelta(t, float64(before.Unix()), iat, 2)
	assert.Equal(t, 300.0, exp-iat, "valid for 5 minutes")
	jti, _ := claims["jti"].(string)
	raw, err := base64.RawURLEncoding.DecodeString(jti)
	require.NoError(t, err)
	assert.Len(t, raw, 16, "128 random bits")

	h := header(t, token)
	assert.Equal(t, "ES256", h["alg"])
	set, err := os.ReadFile(jwksPath)
	require.NoError(t, err)
	assert.Contains(t, string(set), `"kid": "`+h["kid"].(string)+`"`, "the header names the key set's kid")

	t.Run("jti_is_new_each_time", func(t *testing.T) {
		code, again, _ := runCmd(t, "", "-key", keyPath, "-iss", testIssuer, "-aud", "x", "-body", bodyPath)
		require.Equal(t, 0, code)
		other := verify(t, jwksPath, strings.TrimSpace(again))
		assert.NotEqual(t, claims["jti"], other["jti"])
		assert.Equal(t, claims["inp_hash"], other["inp_hash"])
	})

	t.Run("body_from_stdin", func(t *testing.T) {
		code, out, stderr := runCmd(t, string(body), "-key", keyPath, "-iss", testIssuer, "-aud", "x", "-body", "-")
		require.Equal(t, 0, code, "stderr: %s", stderr)
		assert.Equal(t, claims["inp_hash"], verify(t, jwksPath, strings.TrimSpace(out))["inp_hash"])
	})

	t.Run("only_the_claims_asked_for", func(t *testing.T) {
		code, out, stderr := runCmd(t, "", "-key", keyPath, "-iss", testIssuer, "-aud", "a, b", "-sub", "agent-7", "-ttl", "1m")
		require.Equal(t, 0, code, "stderr: %s", stderr)
		c := verify(t, jwksPath, strings.TrimSpace(out))
		assert.ElementsMatch(t, []string{"iss", "sub", "aud", "iat", "exp", "jti"}, keysOf(c))
		assert.Equal(t, []any{"a", "b"}, c["aud"])
		assert.Equal(t, "agent-7", c["sub"])
		assert.Equal(t, 60.0, c["exp"].(float64)-c["iat"].(float64))
	})

	t.Run("another_key_does_not_verify", func(t *testing.T) {
		otherJWKS, _ := keygen(t)
		set, err := os.ReadFile(otherJWKS)
		require.NoError(t, err)
		auth, err := auth.NewCapabilityAuth(t.Context(), &auth.CapabilityOptions{Issuers: []string{testIssuer}, JWKS: set})
		require.NoError(t, err)
		req, err := http.NewRequest(http.MethodGet, "http://127.0.0.1/tools", nil)
		require.NoError(t, err)
		req.Header.Set("Authorization", "Bearer "+token)
		_, err = auth.Authenticate(req)
		assert.Error(t, err)
	})
}

// TestMint_SEC1Key signs with a key in the SEC 1 PEM that openssl
// writes, under a kid given with -kid.
func TestMint_SEC1Key(t *testing.T) {
	t.Parallel()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	require.NoError(t, err)
	der, err := x509.MarshalECPrivateKey(key)
	require.NoError(t, err)
	dir := t.TempDir()
	keyPath := filepath.Join(dir, "ec.pem")
	require.NoError(t, os.WriteFile(keyPath,
		append([]byte("-----BEGIN EC PARAMETERS-----\nBggqhkjOPQMBBw==\n-----END EC PARAMETERS-----\n"),
			pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: der})...), 0o600))

	code, out, stderr := runCmd(t, "", "-key", keyPath, "-kid", "key-1", "-iss", testIssuer, "-aud", "x")
	require.Equal(t, 0, code, "stderr: %s", stderr)
	token := strings.TrimSpace(out)
	assert.Equal(t, "key-1", header(t, token)["kid"])
	_, err = jwt.NewParser(jwt.WithValidMethods([]string{"ES256"})).Parse(token, func(*jwt.Token) (any, error) { return &key.PublicKey, nil })
	assert.NoError(t, err)
}

func TestRun_Errors(t *testing.T) {
	t.Parallel()
	_, keyPath := keygen(t)
	dir := t.TempDir()
	garbage := filepath.Join(dir, "garbage.pem")
	require.NoError(t, os.WriteFile(garbage, []byte("not a key"), 0o600))
	p384PEM := filepath.Join(dir, "p384.pem")
	p384, err := ecdsa.GenerateKey(elliptic.P384(), rand.Reader)
	require.NoError(t, err)
	der, err := x509.MarshalPKCS8PrivateKey(p384)
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(p384PEM, pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: der}), 0o600))

	mintArgs := func(extra ...string) []string {
		return append([]string{"-key", keyPath, "-iss", testIssuer, "-aud", "x"}, extra...)
	}
	for _, tc := range []struct {
		name string
		args []string
		code int
		want string
	}{
		{"keygen_without_paths", []string{"-keygen", "-jwks", filepath.Join(dir, "j.json")}, 2, "-keygen needs -jwks and -key"},
		{"jwks_without_keygen", mintArgs("-jwks", "j.json"), 2, "-jwks is only for -keygen"},
		{"no_key", []string{"-iss", testIssuer, "-aud", "x"}, 2, "-key is required"},
		{"no_issuer", []string{"-key", keyPath, "-aud", "x"}, 2, "-iss is required"},
		{"no_audience", []string{"-key", keyPath, "-iss", testIssuer, "-aud", " , "}, 2, "-aud is required"},
		{"bad_ttl", mintArgs("-ttl", "0s"), 2, "-ttl must be positive"},
		{"stray_argument", mintArgs("extra"), 2, `unexpected argument "extra"`},
		{"unknown_flag", []string{"-nope"}, 2, "flag provided but not defined"},
		{"missing_body", mintArgs("-body", filepath.Join(dir, "none.json")), 1, "reading -body"},
		{"missing_key", []string{"-key", filepath.Join(dir, "none.pem"), "-iss", testIssuer, "-aud", "x"}, 1, "none.pem"},
		{"not_a_key", []string{"-key", garbage, "-iss", testIssuer, "-aud", "x"}, 1, "holds no PRIVATE KEY"},
		{"wrong_curve", []string{"-key", p384PEM, "-iss", testIssuer, "-aud", "x"}, 1, "not an EC P-256 key"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			code, stdout, stderr := runCmd(t, "", tc.args...)
			assert.Equal(t, tc.code, code)
			assert.Empty(t, stdout, "no token")
			assert.Contains(t, stderr, tc.want)
		})
	}
}
