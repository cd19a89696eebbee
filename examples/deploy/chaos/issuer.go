package main

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"time"
)

// The chaos run signs its own capability tokens, so that the load can
// call Payments.Refund, the example's tool that asks the user before it
// runs: an ES256 key whose public half the replicas read from a JWKS
// file (OTC_TOKEN_ISSUER, OTC_JWKS_FILE), and a token per request, bound
// to its body, as the example's policy wants.

const (
	chaosIssuer = "https://chaos.test"
	chaosKid    = "chaos-1"
	// chaosAPIKey is the key every other request of the load carries
	// (OTC_API_KEY): with an issuer configured, the replicas want
	// credentials on every call.
	chaosAPIKey = "chaos-api-key"
)

// issuer signs capability tokens for the chaos run.
type issuer struct {
	key      *ecdsa.PrivateKey
	jwksPath string
}

// newIssuer makes a key and writes its public key set into dir.
func newIssuer(dir string) (*issuer, error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, err
	}
	point, err := key.PublicKey.Bytes()
	if err != nil {
		return nil, err
	}
	enc := base64.RawURLEncoding
	jwks, err := json.Marshal(map[string]any{"keys": []map[string]string{{
		"kty": "EC", "crv": "P-256", "kid": chaosKid, "use": "sig", "alg": "ES256",
		"x": enc.EncodeToString(point[1:33]), "y": enc.EncodeToString(point[33:]),
	}}})
	if err != nil {
		return nil, err
	}
	path := filepath.Join(dir, "jwks.json")
	if err := os.WriteFile(path, jwks, 0o644); err != nil {
		return nil, err
	}
	return &issuer{key: key, jwksPath: path}, nil
}

// env is what a replica needs to accept the issuer's tokens and the load's
// API key, and to open the requestStates another replica sealed.
func (is *issuer) env(stateKey string) []string {
	return []string{
		"OTC_API_KEY=" + chaosAPIKey,
		"OTC_TOKEN_ISSUER=" + chaosIssuer,
		"OTC_JWKS_FILE=" + is.jwksPath,
		"OTC_REQUEST_STATE_KEYS=" + stateKey,
	}
}

// newStateKey returns a requestState key, in hex, for every replica.
func newStateKey() string {
	var k [32]byte
	_, _ = rand.Read(k[:])
	return hex.EncodeToString(k[:])
}

// refundToken signs a token that may make the refund request body, once.
func (is *issuer) refundToken(body string) (string, error) {
	sum := sha256.Sum256([]byte(body))
	return is.sign("chaos-agent", map[string]any{
		"aud":          []string{"urn:otc:example:payments"},
		"caps":         []string{"payments:refund"},
		"blast_radius": "tenant:chaos",
		"exec_act":     "refund",
		"inp_hash":     base64.RawURLEncoding.EncodeToString(sum[:]),
	})
}

// callerToken signs a token that names sub, for the requests of one
// caller: the tasks of the load are spread over several callers, since a
// caller holds at most 1,000 tasks (each kept an hour for its result).
func (is *issuer) callerToken(sub string) (string, error) {
	return is.sign(sub, nil)
}

// sign signs a token for sub with the claims every token has and extra.
func (is *issuer) sign(sub string, extra map[string]any) (string, error) {
	var jti [12]byte
	_, _ = rand.Read(jti[:])
	now := time.Now()
	claims := map[string]any{
		"iss": chaosIssuer,
		"sub": sub,
		"iat": now.Unix(),
		"exp": now.Add(5 * time.Minute).Unix(),
		"jti": hex.EncodeToString(jti[:]),
	}
	for k, v := range extra {
		claims[k] = v
	}
	header, err := json.Marshal(map[string]string{"alg": "ES256", "typ": "JWT", "kid": chaosKid})
	if err != nil {
		return "", err
	}
	payload, err := json.Marshal(claims)
	if err != nil {
		return "", err
	}
	enc := base64.RawURLEncoding
	signing := enc.EncodeToString(header) + "." + enc.EncodeToString(payload)
	digest := sha256.Sum256([]byte(signing))
	r, s, err := ecdsa.Sign(rand.Reader, is.key, digest[:])
	if err != nil {
		return "", fmt.Errorf("signing a token: %w", err)
	}
	sig := make([]byte, 64)
	r.FillBytes(sig[:32])
	s.FillBytes(sig[32:])
	return signing + "." + enc.EncodeToString(sig), nil
}
