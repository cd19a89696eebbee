package auth_test

// The capability-token authenticator over real HTTP: an httptest server
// publishes the issuer's JWKS, and the OTC handler serves a registry with
// a tool whose Policy needs a capability token (Payments.Refund) and one
// without a policy (Open.WhoAmI). Keys are generated once per run. Every
// refusal is checked for its status, its challenge, its reason and the
// absence of the token in the answer.

import (
	"bytes"
	"context"
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"crypto/sha256"
	"crypto/x509"
	"encoding/base64"
	"encoding/json"
	"encoding/pem"
	"errors"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/MicahParks/jwkset"
	"github.com/golang-jwt/jwt/v5"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"github.com/otcgo/otc"
	"github.com/otcgo/otc/auth"
	"github.com/otcgo/otc/internal/testkit"
)

// The key ids of the test JWKS.
const (
	kidEC2     = "ec-p256-2"
	kidED      = "ed25519-1"
	kidRSA     = "rsa-2048-1"
	kidEC384   = "ec-p384-1"
	kidRSA1024 = "rsa-1024-1"
	kidOct     = "oct-1"
)

// capTestKeys are the issuer's keys: the three accepted kinds, a second
// P-256 key for rotation, and kinds that must never verify a token.
type capTestKeys struct {
	ec, ec2, ecOther, ec384 *ecdsa.PrivateKey
	ed                      ed25519.PrivateKey
	rsa, rsa1024            *rsa.PrivateKey
}

var capKeysOnce = sync.OnceValues(func() (capTestKeys, error) {
	var k capTestKeys
	var errs [7]error
	k.ec, errs[0] = ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	k.ec2, errs[1] = ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	k.ecOther, errs[2] = ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	k.ec384, errs[3] = ecdsa.GenerateKey(elliptic.P384(), rand.Reader)
	_, k.ed, errs[4] = ed25519.GenerateKey(rand.Reader)
	k.rsa, errs[5] = rsa.GenerateKey(rand.Reader, 2048)
	k.rsa1024, errs[6] = rsa.GenerateKey(rand.Reader, 1024)
	return k, errors.Join(errs[:]...)
})

func capKeys(t testing.TB) capTestKeys {
	t.Helper()
	k, err := capKeysOnce()
	require.NoError(t, err)
	return k
}

// capOctSecret is a symmetric key published in a JWKS by mistake.
var capOctSecret = []byte("cap-test-oct-key-that-must-never-verify-3b9d")

// capAllJWKs is the issuer's usual key set, plus keys of kinds that must
// never verify a capability token.
func capAllJWKs(t testing.TB) []jwkset.JWKMarshal {
	k := capKeys(t)
	return []jwkset.JWKMarshal{
		testkit.JWK(t, &k.ec.PublicKey, testkit.KidEC),
		testkit.JWK(t, k.ed.Public(), kidED),
		testkit.JWK(t, &k.rsa.PublicKey, kidRSA),
		testkit.JWK(t, &k.ec384.PublicKey, kidEC384),
		testkit.JWK(t, &k.rsa1024.PublicKey, kidRSA1024),
		testkit.JWK(t, capOctSecret, kidOct),
	}
}

// capJWKS is an issuer's JWKS endpoint whose keys a test changes, and
// which counts and announces its fetches.
type capJWKS struct {
	mu      sync.Mutex
	body    []byte
	status  int
	fetches int
	times   []time.Time // when each fetch came
	fetched chan struct{}
	srv     *httptest.Server
}

func newCapJWKS(t *testing.T, keys ...jwkset.JWKMarshal) *capJWKS {
	t.Helper()
	s := &capJWKS{body: testkit.JWKS(t, keys...), status: http.StatusOK, fetched: make(chan struct{}, 1)}
	s.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		s.mu.Lock()
		s.fetches++
		s.times = append(s.times, time.Now())
		body, status := s.body, s.status
		s.mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(status)
		_, _ = w.Write(body)
		select {
		case s.fetched <- struct{}{}:
		default:
		}
	}))
	t.Cleanup(s.srv.Close)
	return s
}

// set publishes keys and returns the number of fetches so far: every
// later fetch serves the new set.
func (s *capJWKS) set(t testing.TB, keys ...jwkset.JWKMarshal) int {
	body := testkit.JWKS(t, keys...)
	s.mu.Lock()
	defer s.mu.Unlock()
	s.body = body
	return s.fetches
}

// fail makes the endpoint answer status (or 200 again) and returns the
// number of fetches so far.
func (s *capJWKS) fail(status int) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.status = status
	return s.fetches
}

func (s *capJWKS) count() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.fetches
}

// fetchTimes are when each fetch came.
func (s *capJWKS) fetchTimes() []time.Time {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]time.Time(nil), s.times...)
}

// waitFetches waits until the endpoint has been fetched n times. The
// periodic refresh fetches one at a time, so once fetch n+1 has begun,
// the keys of fetch n are in use.
func (s *capJWKS) waitFetches(t *testing.T, n int) {
	t.Helper()
	timeout := time.After(10 * time.Second)
	for s.count() < n {
		select {
		case <-s.fetched:
		case <-timeout:
			t.Fatalf("the JWKS was fetched %d times, want %d", s.count(), n)
		}
	}
}

// capSeen is what a tool reports of the identity in its context.
type capSeen struct {
	Method string         `json:"method"`
	Name   string         `json:"name"`
	Claims map[string]any `json:"claims"`
}

// newCapServer serves Payments.Refund (policy: testkit.CapResource and
// testkit.CapCapability) and Open.WhoAmI (no policy) behind a, over httptest.
// runs counts the calls that reached a tool.
func newCapServer(t *testing.T, a otc.Authenticator) (*httptest.Server, *atomic.Int64) {
	t.Helper()
	runs := &atomic.Int64{}
	// Every tool is listed to everyone, so that each refusal names its
	// reason; without it, a caller that sees a tool through no protocol
	// is answered as for an unknown tool (the root's TestHiddenToolsAnswerAsUnknown).
	reg := otc.NewRegistry(&otc.RegistryOptions{Logger: slog.New(slog.DiscardHandler), ListEveryTool: true})
	whoami := func(ctx context.Context, _ struct{}) (capSeen, error) {
		runs.Add(1)
		id := otc.CallerIdentity(ctx)
		if id == nil {
			return capSeen{}, nil
		}
		return capSeen{Method: id.Method, Name: id.Name, Claims: id.Claims}, nil
	}
	require.NoError(t, otc.Register(reg, otc.Tool{
		ID: "Payments.Refund", Version: "1.0.0", Description: "Refunds an order.",
		Policy: &otc.Policy{ResourceURI: testkit.CapResource, RequiredCapabilities: []string{testkit.CapCapability}},
	}, whoami))
	require.NoError(t, otc.Register(reg, otc.Tool{
		ID: "Open.WhoAmI", Version: "1.0.0", Description: "Returns the caller's identity.",
	}, whoami))
	srv := httptest.NewServer(otc.NewHandler(reg, &otc.HandlerOptions{Authenticator: a}))
	t.Cleanup(srv.Close)
	return srv, runs
}

// capCall calls tool on srv with the given headers.
func capCall(t *testing.T, srv *httptest.Server, tool string, header http.Header) testkit.Response {
	t.Helper()
	body := []byte(`{"request":{"tool_id":"` + tool + `","input":{}}}`)
	return testkit.Send(t, srv.Client(), http.MethodPost, srv.URL+"/tools/call", header, body)
}

// capBearer is the header of one bearer token.
func capBearer(token string) http.Header {
	return http.Header{"Authorization": {"Bearer " + token}}
}

// requireCapAccepted checks a successful call and returns what the tool
// saw.
func requireCapAccepted(t *testing.T, res testkit.Response) capSeen {
	t.Helper()
	require.Equal(t, http.StatusOK, res.Status, "body: %s", res.Raw)
	var body struct {
		Result struct {
			Success bool    `json:"success"`
			Value   capSeen `json:"value"`
		} `json:"result"`
	}
	require.NoError(t, json.Unmarshal(res.Raw, &body), "body: %s", res.Raw)
	require.True(t, body.Result.Success, "body: %s", res.Raw)
	return body.Result.Value
}

// capRaw builds a token from a header and claims of its own and a
// signature made by sign over "header.claims": for what the JWT library
// refuses to sign.
func capRaw(t testing.TB, header map[string]any, claims jwt.MapClaims, sign func(signing string) []byte) string {
	t.Helper()
	h, err := json.Marshal(header)
	require.NoError(t, err)
	c, err := json.Marshal(claims)
	require.NoError(t, err)
	signing := base64.RawURLEncoding.EncodeToString(h) + "." + base64.RawURLEncoding.EncodeToString(c)
	return signing + "." + base64.RawURLEncoding.EncodeToString(sign(signing))
}

// capES256WithP384 signs as ES256 claims, with a P-384 key: the JWT
// library will not, since the curve is not the algorithm's.
func capES256WithP384(t testing.TB, key *ecdsa.PrivateKey, kid string, claims jwt.MapClaims) string {
	return capRaw(t, map[string]any{"alg": "ES256", "typ": "JWT", "kid": kid}, claims, func(signing string) []byte {
		sum := sha256.Sum256([]byte(signing))
		r, s, err := ecdsa.Sign(rand.Reader, key, sum[:])
		require.NoError(t, err)
		out := make([]byte, 96)
		r.FillBytes(out[:48])
		s.FillBytes(out[48:])
		return out
	})
}

func TestCapabilityAuthAlgorithms(t *testing.T) {
	t.Parallel()
	k := capKeys(t)
	jwks := newCapJWKS(t, capAllJWKs(t)...)
	srv, _ := newCapServer(t, testkit.CapabilityAuth(t, auth.CapabilityOptions{JWKSURL: jwks.srv.URL}))

	for _, c := range []struct {
		name   string
		method jwt.SigningMethod
		key    any
		kid    string
	}{
		{"es256_p256", jwt.SigningMethodES256, k.ec, testkit.KidEC},
		{"eddsa_ed25519", jwt.SigningMethodEdDSA, k.ed, kidED},
		{"rs256_rsa2048", jwt.SigningMethodRS256, k.rsa, kidRSA},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			token := testkit.Sign(t, c.method, c.key, c.kid, testkit.CapClaims(nil))

			seen := requireCapAccepted(t, capCall(t, srv, "Payments.Refund", capBearer(token)))
			assert.Equal(t, otc.MethodCapability, seen.Method)
			assert.Equal(t, "agent-7", seen.Name)
			assert.Equal(t, testkit.CapIssuer, seen.Claims["iss"])
			assert.Equal(t, "tok-1", seen.Claims["jti"])
			assert.Equal(t, []any{"payments:read", testkit.CapCapability}, seen.Claims["caps"])
			assert.Equal(t, []any{"urn:other", testkit.CapResource}, seen.Claims["aud"])

			seen = requireCapAccepted(t, capCall(t, srv, "Open.WhoAmI", capBearer(token)))
			assert.Equal(t, otc.MethodCapability, seen.Method)
		})
	}
	t.Cleanup(func() { assert.Equal(t, 1, jwks.count(), "known keys are not fetched again") })
}

// TestCapabilityAuthRotation: a token naming a key the server has not
// seen makes it fetch the JWKS again, and the new key verifies; made-up
// kids sent within the minimum gap after that fetch fetch nothing more,
// and are told to try again.
func TestCapabilityAuthRotation(t *testing.T) {
	t.Parallel()
	k := capKeys(t)
	first := testkit.JWK(t, &k.ec.PublicKey, testkit.KidEC)
	jwks := newCapJWKS(t, first)
	const gap = 2 * time.Second // the 20 calls below take milliseconds
	srv, runs := newCapServer(t, newCapAuthTimed(t, auth.CapabilityOptions{JWKSURL: jwks.srv.URL}, auth.JWKSTimingForTest{MinGap: gap}))

	// The first call waits for the first fetch.
	requireCapAccepted(t, capCall(t, srv, "Payments.Refund", capBearer(testkit.Sign(t, jwt.SigningMethodES256, k.ec, testkit.KidEC, testkit.CapClaims(nil)))))
	require.Equal(t, 1, jwks.count(), "one fetch at start")

	jwks.set(t, first, testkit.JWK(t, &k.ec2.PublicKey, kidEC2))
	time.Sleep(gap)
	rotated := testkit.Sign(t, jwt.SigningMethodES256, k.ec2, kidEC2, testkit.CapClaims(nil))
	seen := requireCapAccepted(t, capCall(t, srv, "Payments.Refund", capBearer(rotated)))
	assert.Equal(t, otc.MethodCapability, seen.Method)
	assert.Equal(t, 2, jwks.count(), "the new kid fetched the JWKS once")

	// A fetch began less than the gap ago: bogus kids are refused without
	// reaching the issuer.
	before := runs.Load()
	for i := range 20 {
		bogus := testkit.Sign(t, jwt.SigningMethodES256, k.ec2, "bogus-"+string(rune('a'+i)), testkit.CapClaims(nil))
		res := capCall(t, srv, "Payments.Refund", capBearer(bogus))
		testkit.AssertCapRefused(t, res, http.StatusUnauthorized, otc.ReasonInvalidToken, "try again in a few seconds", bogus)
	}
	assert.Equal(t, 2, jwks.count(), "unknown kids are rate-limited")
	assert.Equal(t, before, runs.Load())

	// Known keys still verify, without a fetch.
	requireCapAccepted(t, capCall(t, srv, "Payments.Refund", capBearer(rotated)))
	assert.Equal(t, 2, jwks.count())
}

// TestCapabilityAuthUnknownKID: an unknown kid fetches the JWKS once, and
// is refused when the fresh set lacks it too.
func TestCapabilityAuthUnknownKID(t *testing.T) {
	t.Parallel()
	k := capKeys(t)
	jwks := newCapJWKS(t, testkit.JWK(t, &k.ec.PublicKey, testkit.KidEC))
	const gap = 50 * time.Millisecond
	srv, runs := newCapServer(t, newCapAuthTimed(t, auth.CapabilityOptions{JWKSURL: jwks.srv.URL}, auth.JWKSTimingForTest{MinGap: gap}))
	requireCapAccepted(t, capCall(t, srv, "Open.WhoAmI", capBearer(testkit.Sign(t, jwt.SigningMethodES256, k.ec, testkit.KidEC, testkit.CapClaims(nil)))))
	runs.Store(0)
	time.Sleep(gap)

	token := testkit.Sign(t, jwt.SigningMethodES256, k.ec, "no-such-key", testkit.CapClaims(nil))
	res := capCall(t, srv, "Payments.Refund", capBearer(token))
	testkit.AssertCapRefused(t, res, http.StatusUnauthorized, otc.ReasonInvalidToken, "is not one of the issuers' keys", token)
	assert.Equal(t, 2, jwks.count(), "the unknown kid fetched the JWKS again")
	assert.Zero(t, runs.Load())
}

// TestCapabilityAuthKeyRemoved: a key taken out of the JWKS stops
// verifying once a refresh has read the new set.
func TestCapabilityAuthKeyRemoved(t *testing.T) {
	t.Parallel()
	k := capKeys(t)
	ec, ed := testkit.JWK(t, &k.ec.PublicKey, testkit.KidEC), testkit.JWK(t, k.ed.Public(), kidED)
	jwks := newCapJWKS(t, ec, ed)
	srv, _ := newCapServer(t, testkit.CapabilityAuth(t, auth.CapabilityOptions{JWKSURL: jwks.srv.URL, RefreshInterval: 10 * time.Millisecond}))

	removed := testkit.Sign(t, jwt.SigningMethodES256, k.ec, testkit.KidEC, testkit.CapClaims(nil))
	kept := testkit.Sign(t, jwt.SigningMethodEdDSA, k.ed, kidED, testkit.CapClaims(nil))
	requireCapAccepted(t, capCall(t, srv, "Payments.Refund", capBearer(removed)))

	n := jwks.set(t, ed)
	jwks.waitFetches(t, n+2)

	res := capCall(t, srv, "Payments.Refund", capBearer(removed))
	testkit.AssertCapRefused(t, res, http.StatusUnauthorized, otc.ReasonInvalidToken, "is not one of the issuers' keys", removed)
	requireCapAccepted(t, capCall(t, srv, "Payments.Refund", capBearer(kept)))
}

// TestCapabilityAuthFirstFetchFails: a server whose issuer is down when it
// starts comes up, refuses every token, logs why, and accepts tokens once
// a refresh has brought the keys. A retry comes no later than a refresh
// would (10 ms here, less than the backoff).
func TestCapabilityAuthFirstFetchFails(t *testing.T) {
	t.Parallel()
	k := capKeys(t)
	jwks := newCapJWKS(t, testkit.JWK(t, &k.ec.PublicKey, testkit.KidEC))
	jwks.fail(http.StatusServiceUnavailable)
	var logs testkit.SyncBuffer
	a := testkit.CapabilityAuth(t, auth.CapabilityOptions{
		JWKSURL: jwks.srv.URL, RefreshInterval: 10 * time.Millisecond,
		Logger: slog.New(slog.NewTextHandler(&logs, nil)),
	})
	srv, runs := newCapServer(t, a)

	// The call waits for the first fetch, which fails and is logged first.
	token := testkit.Sign(t, jwt.SigningMethodES256, k.ec, testkit.KidEC, testkit.CapClaims(nil))
	res := capCall(t, srv, "Payments.Refund", capBearer(token))
	testkit.AssertCapRefused(t, res, http.StatusUnauthorized, otc.ReasonInvalidToken, "has not obtained the issuers' keys yet", token)
	assert.Zero(t, runs.Load())
	assert.Contains(t, logs.String(), "fetching the capability issuers' JWKS failed")
	assert.Contains(t, logs.String(), "503")

	n := jwks.fail(http.StatusOK)
	jwks.waitFetches(t, n+2)
	requireCapAccepted(t, capCall(t, srv, "Payments.Refund", capBearer(token)))
}

// TestCapabilityAuthJWKSTooLarge: a key set over 1 MiB is not read, and
// the keys stay unknown.
func TestCapabilityAuthJWKSTooLarge(t *testing.T) {
	t.Parallel()
	k := capKeys(t)
	jwks := newCapJWKS(t)
	huge := append([]byte(`{"padding":"`), bytes.Repeat([]byte("x"), 2<<20)...)
	huge = append(huge, `","keys":`+string(testkit.JWKS(t, testkit.JWK(t, &k.ec.PublicKey, testkit.KidEC)))[len(`{"keys":`):]...)
	jwks.mu.Lock()
	jwks.body = huge
	jwks.mu.Unlock()
	var logs testkit.SyncBuffer
	a := testkit.CapabilityAuth(t, auth.CapabilityOptions{JWKSURL: jwks.srv.URL, Logger: slog.New(slog.NewTextHandler(&logs, nil))})
	srv, _ := newCapServer(t, a)

	token := testkit.Sign(t, jwt.SigningMethodES256, k.ec, testkit.KidEC, testkit.CapClaims(nil))
	res := capCall(t, srv, "Payments.Refund", capBearer(token))
	testkit.AssertCapRefused(t, res, http.StatusUnauthorized, otc.ReasonInvalidToken, "has not obtained the issuers' keys yet", token)
	assert.Contains(t, logs.String(), "the key set is over 1048576 bytes")
}

// capPEM and capDER are a public key's encodings, which an attacker who
// knows the key can use as an HMAC secret.
func capDER(t testing.TB, pub any) []byte {
	t.Helper()
	der, err := x509.MarshalPKIXPublicKey(pub)
	require.NoError(t, err)
	return der
}

func capPEM(t testing.TB, pub any) []byte {
	return pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: capDER(t, pub)})
}

// TestCapabilityAuthAlgorithmConfusion: no token verifies under a key of
// another type than its algorithm's, nor with an algorithm outside ES256,
// EdDSA and RS256, whatever key it names.
func TestCapabilityAuthAlgorithmConfusion(t *testing.T) {
	t.Parallel()
	k := capKeys(t)
	jwks := newCapJWKS(t, capAllJWKs(t)...)
	srv, runs := newCapServer(t, testkit.CapabilityAuth(t, auth.CapabilityOptions{JWKSURL: jwks.srv.URL}))
	claims := testkit.CapClaims(nil)
	const (
		algRefused = "algorithm (alg) is not accepted"
		keyRefused = "not the one its key allows"
	)

	for _, c := range []struct {
		name, token, want string
	}{
		{"hs256_with_ec_public_pem", testkit.Sign(t, jwt.SigningMethodHS256, capPEM(t, &k.ec.PublicKey), testkit.KidEC, claims), algRefused},
		{"hs256_with_ec_public_der", testkit.Sign(t, jwt.SigningMethodHS256, capDER(t, &k.ec.PublicKey), testkit.KidEC, claims), algRefused},
		{"hs256_with_rsa_public_pem", testkit.Sign(t, jwt.SigningMethodHS256, capPEM(t, &k.rsa.PublicKey), kidRSA, claims), algRefused},
		{"hs256_with_rsa_public_der", testkit.Sign(t, jwt.SigningMethodHS256, capDER(t, &k.rsa.PublicKey), kidRSA, claims), algRefused},
		{"hs256_with_rsa_pkcs1_der", testkit.Sign(t, jwt.SigningMethodHS256, x509.MarshalPKCS1PublicKey(&k.rsa.PublicKey), kidRSA, claims), algRefused},
		{"hs256_with_ed25519_public", testkit.Sign(t, jwt.SigningMethodHS256, []byte(k.ed.Public().(ed25519.PublicKey)), kidED, claims), algRefused},
		{"hs256_with_jwks_oct_key", testkit.Sign(t, jwt.SigningMethodHS256, capOctSecret, kidOct, claims), algRefused},
		{"hs512_with_ec_public_pem", testkit.Sign(t, jwt.SigningMethodHS512, capPEM(t, &k.ec.PublicKey), testkit.KidEC, claims), algRefused},
		{"alg_none", testkit.Sign(t, jwt.SigningMethodNone, jwt.UnsafeAllowNoneSignatureType, testkit.KidEC, claims), algRefused},
		{"alg_none_no_kid", testkit.Sign(t, jwt.SigningMethodNone, jwt.UnsafeAllowNoneSignatureType, "", claims), algRefused},
		{"es384_with_p384_key", testkit.Sign(t, jwt.SigningMethodES384, k.ec384, kidEC384, claims), algRefused},
		{"ps256_with_rsa_key", testkit.Sign(t, jwt.SigningMethodPS256, k.rsa, kidRSA, claims), algRefused},
		{"rs256_header_over_ec_kid", testkit.Sign(t, jwt.SigningMethodRS256, k.rsa, testkit.KidEC, claims), keyRefused},
		{"es256_header_over_rsa_kid", testkit.Sign(t, jwt.SigningMethodES256, k.ec, kidRSA, claims), keyRefused},
		{"eddsa_header_over_ec_kid", testkit.Sign(t, jwt.SigningMethodEdDSA, k.ed, testkit.KidEC, claims), keyRefused},
		{"rs256_header_over_ed_kid", testkit.Sign(t, jwt.SigningMethodRS256, k.rsa, kidED, claims), "may not verify this token"}, // the JWK's own alg, EdDSA, refuses first
		{"es256_header_over_p384_kid", capES256WithP384(t, k.ec384, kidEC384, claims), keyRefused},
		{"rs256_with_rsa_1024", testkit.Sign(t, jwt.SigningMethodRS256, k.rsa1024, kidRSA1024, claims), keyRefused},
		{"rs256_header_over_oct_kid", testkit.Sign(t, jwt.SigningMethodRS256, k.rsa, kidOct, claims), keyRefused},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			res := capCall(t, srv, "Payments.Refund", capBearer(c.token))
			testkit.AssertCapRefused(t, res, http.StatusUnauthorized, otc.ReasonInvalidToken, c.want, c.token)
			res = capCall(t, srv, "Open.WhoAmI", capBearer(c.token))
			testkit.AssertCapRefused(t, res, http.StatusUnauthorized, otc.ReasonInvalidToken, c.want, c.token)
		})
	}
	t.Cleanup(func() { assert.Zero(t, runs.Load(), "no refused token reached a tool") })
}

// TestCapabilityAuthIgnoresHeaderKeys: keys come from the configured JWKS
// only. A token that carries its own key ("jwk") or points at another key
// set ("jku", "x5u") is checked against the issuer's key its kid names,
// and the other set is never fetched.
func TestCapabilityAuthIgnoresHeaderKeys(t *testing.T) {
	t.Parallel()
	k := capKeys(t)
	jwks := newCapJWKS(t, testkit.JWK(t, &k.ec.PublicKey, testkit.KidEC))
	attacker := newCapJWKS(t, testkit.JWK(t, &k.ecOther.PublicKey, testkit.KidEC))
	srv, runs := newCapServer(t, testkit.CapabilityAuth(t, auth.CapabilityOptions{JWKSURL: jwks.srv.URL}))
	attackerJWK := testkit.JWK(t, &k.ecOther.PublicKey, testkit.KidEC)

	for _, c := range []struct {
		name   string
		header map[string]any
	}{
		{"jwk", map[string]any{"jwk": attackerJWK}},
		{"jku", map[string]any{"jku": attacker.srv.URL}},
		{"x5u", map[string]any{"x5u": attacker.srv.URL}},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			tok := jwt.NewWithClaims(jwt.SigningMethodES256, testkit.CapClaims(nil))
			tok.Header["kid"] = testkit.KidEC
			for name, value := range c.header {
				tok.Header[name] = value
			}
			token, err := tok.SignedString(k.ecOther)
			require.NoError(t, err)
			res := capCall(t, srv, "Payments.Refund", capBearer(token))
			testkit.AssertCapRefused(t, res, http.StatusUnauthorized, otc.ReasonInvalidToken, "signature is not valid", token)
		})
	}
	t.Cleanup(func() {
		assert.Zero(t, attacker.count(), "the token's own key set was never fetched")
		assert.Zero(t, runs.Load())
	})
}

// TestCapabilityAuthRefusals: each way a token or its header can be wrong,
// with the reason and message it gets.
func TestCapabilityAuthRefusals(t *testing.T) {
	t.Parallel()
	k := capKeys(t)
	jwks := newCapJWKS(t, capAllJWKs(t)...)
	srv, runs := newCapServer(t, testkit.CapabilityAuth(t, auth.CapabilityOptions{JWKSURL: jwks.srv.URL}))
	sign := func(edit func(jwt.MapClaims)) string {
		return testkit.Sign(t, jwt.SigningMethodES256, k.ec, testkit.KidEC, testkit.CapClaims(edit))
	}
	valid := sign(nil)
	parts := strings.Split(valid, ".")
	hour := time.Hour
	otherPayload := base64.RawURLEncoding.EncodeToString([]byte(`{"iss":"` + testkit.CapIssuer + `","sub":"admin","exp":9999999999}`))
	typed := func(typ string) string {
		tok := jwt.NewWithClaims(jwt.SigningMethodES256, testkit.CapClaims(nil))
		tok.Header["kid"] = testkit.KidEC
		tok.Header["typ"] = typ
		s, err := tok.SignedString(k.ec)
		require.NoError(t, err)
		return s
	}
	critical := jwt.NewWithClaims(jwt.SigningMethodES256, testkit.CapClaims(nil))
	critical.Header["kid"] = testkit.KidEC
	critical.Header["crit"] = []any{"exp"}
	withCrit, err := critical.SignedString(k.ec)
	require.NoError(t, err)

	for _, c := range []struct {
		name   string
		header http.Header
		reason string
		want   string
	}{
		{"no_authorization", nil, otc.ReasonMissingToken, "authentication required"},
		{"iss_missing", capBearer(sign(func(c jwt.MapClaims) { delete(c, "iss") })), otc.ReasonInvalidToken, "has no issuer (iss)"},
		{"iss_not_configured", capBearer(sign(func(c jwt.MapClaims) { c["iss"] = "https://evil.test" })), otc.ReasonInvalidToken, "issuer (iss) is not one this server accepts"},
		{"iss_not_a_string", capBearer(sign(func(c jwt.MapClaims) { c["iss"] = []any{testkit.CapIssuer} })), otc.ReasonInvalidToken, "issuer (iss) is not a string"},
		{"exp_missing", capBearer(sign(func(c jwt.MapClaims) { delete(c, "exp") })), otc.ReasonInvalidToken, "has no expiry (exp)"},
		{"exp_past", capBearer(sign(func(c jwt.MapClaims) { c["exp"] = time.Now().Add(-hour).Unix() })), otc.ReasonInvalidToken, "has expired"},
		{"exp_not_a_number", capBearer(sign(func(c jwt.MapClaims) { c["exp"] = "tomorrow" })), otc.ReasonInvalidToken, "wrong type"},
		{"nbf_future", capBearer(sign(func(c jwt.MapClaims) { c["nbf"] = time.Now().Add(hour).Unix() })), otc.ReasonInvalidToken, "not valid yet (nbf)"},
		{"iat_future", capBearer(sign(func(c jwt.MapClaims) { c["iat"] = time.Now().Add(hour).Unix() })), otc.ReasonInvalidToken, "issued in the future (iat)"},
		{"sub_not_a_string", capBearer(sign(func(c jwt.MapClaims) { c["sub"] = 7 })), otc.ReasonInvalidToken, "subject (sub) is not a string"},
		{"wrong_signature", capBearer(testkit.Sign(t, jwt.SigningMethodES256, k.ecOther, testkit.KidEC, testkit.CapClaims(nil))), otc.ReasonInvalidToken, "signature is not valid"},
		{"payload_swapped", capBearer(parts[0] + "." + otherPayload + "." + parts[2]), otc.ReasonInvalidToken, "signature is not valid"},
		{"signature_cut", capBearer(parts[0] + "." + parts[1] + "." + parts[2][:20]), otc.ReasonInvalidToken, "signature is not valid"},
		{"no_kid", capBearer(testkit.Sign(t, jwt.SigningMethodES256, k.ec, "", testkit.CapClaims(nil))), otc.ReasonInvalidToken, "has no key id (kid)"},
		{"crit", capBearer(withCrit), otc.ReasonInvalidToken, "crit"},
		// An OAuth access token (or an ID token, a DPoP proof) from the same
		// issuer, with capability claims, is still not a capability token.
		{"typ_access_token", capBearer(typed("at+jwt")), otc.ReasonInvalidToken, "type (typ) is not a capability token's"},
		{"typ_access_token_media_type", capBearer(typed("application/AT+JWT")), otc.ReasonInvalidToken, "type (typ) is not a capability token's"},
		{"typ_id_token", capBearer(typed("id_token")), otc.ReasonInvalidToken, "type (typ) is not a capability token's"},
		{"typ_dpop", capBearer(typed("dpop+jwt")), otc.ReasonInvalidToken, "type (typ) is not a capability token's"},
		{"scope_tab", capBearer(sign(func(c jwt.MapClaims) { c["scope"] = "calc:read\tcounter:write" })), otc.ReasonInvalidToken, "scopes are malformed"},
		{"scope_newline", capBearer(sign(func(c jwt.MapClaims) { c["scope"] = "calc:read\ncounter:write" })), otc.ReasonInvalidToken, "scopes are malformed"},
		{"scp_control", capBearer(sign(func(c jwt.MapClaims) { c["scp"] = []any{"calc:read\x00"} })), otc.ReasonInvalidToken, "scopes are malformed"},
		{"two_parts", capBearer(parts[0] + "." + parts[1]), otc.ReasonInvalidToken, "malformed"},
		{"four_parts", capBearer(valid + ".x"), otc.ReasonInvalidToken, "malformed"},
		{"not_base64", capBearer("!!!." + parts[1] + "." + parts[2]), otc.ReasonInvalidToken, "malformed"},
		{"padded", capBearer(parts[0] + "=." + parts[1] + "." + parts[2]), otc.ReasonInvalidToken, "malformed"},
		{"header_not_json", capBearer(base64.RawURLEncoding.EncodeToString([]byte("kid")) + "." + parts[1] + "." + parts[2]), otc.ReasonInvalidToken, "malformed"},
		{"empty_bearer", http.Header{"Authorization": {"Bearer "}}, otc.ReasonInvalidToken, `must be "Bearer <token>"`}, // the server trims the space
		{"bearer_without_token", http.Header{"Authorization": {"Bearer"}}, otc.ReasonInvalidToken, `must be "Bearer <token>"`},
		{"basic_scheme", http.Header{"Authorization": {"Basic " + valid}}, otc.ReasonInvalidToken, `must be "Bearer <token>"`},
		{"two_tokens_one_line", http.Header{"Authorization": {"Bearer " + valid + " " + valid}}, otc.ReasonInvalidToken, "malformed"},
		{"two_tokens_comma", http.Header{"Authorization": {"Bearer " + valid + ", Bearer " + valid}}, otc.ReasonInvalidToken, "more than once"},
		{"two_authorization_headers", http.Header{"Authorization": {"Bearer " + valid, "Bearer " + valid}}, otc.ReasonInvalidToken, "more than once"},
		{"oversized", capBearer(sign(func(c jwt.MapClaims) { c["pad"] = strings.Repeat("p", 9000) })), otc.ReasonInvalidToken, "too long"},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			res := capCall(t, srv, "Open.WhoAmI", c.header)
			testkit.AssertCapRefused(t, res, http.StatusUnauthorized, c.reason, c.want, c.header.Values("Authorization")...)
		})
	}
	t.Run("valid_still_accepted", func(t *testing.T) {
		t.Parallel()
		requireCapAccepted(t, capCall(t, srv, "Open.WhoAmI", capBearer(valid)))
	})
	t.Run("typ_jwt_accepted", func(t *testing.T) {
		t.Parallel()
		requireCapAccepted(t, capCall(t, srv, "Open.WhoAmI", capBearer(typed("JWT"))))
	})
	t.Cleanup(func() { assert.LessOrEqual(t, runs.Load(), int64(2), "only the two valid tokens reached a tool") })
}

// TestCapabilityAuthLeeway: exp, nbf and iat within the leeway pass, and
// a negative leeway allows no skew.
func TestCapabilityAuthLeeway(t *testing.T) {
	t.Parallel()
	k := capKeys(t)
	jwks := newCapJWKS(t, testkit.JWK(t, &k.ec.PublicKey, testkit.KidEC))
	lenient, _ := newCapServer(t, testkit.CapabilityAuth(t, auth.CapabilityOptions{JWKSURL: jwks.srv.URL}))
	strict, _ := newCapServer(t, testkit.CapabilityAuth(t, auth.CapabilityOptions{JWKSURL: jwks.srv.URL, Leeway: -1}))
	skewed := testkit.Sign(t, jwt.SigningMethodES256, k.ec, testkit.KidEC, testkit.CapClaims(func(c jwt.MapClaims) {
		c["exp"] = time.Now().Add(-10 * time.Second).Unix()
		c["nbf"] = time.Now().Add(10 * time.Second).Unix()
		c["iat"] = time.Now().Add(10 * time.Second).Unix()
	}))

	requireCapAccepted(t, capCall(t, lenient, "Open.WhoAmI", capBearer(skewed)))
	res := capCall(t, strict, "Open.WhoAmI", capBearer(skewed))
	testkit.AssertCapRefused(t, res, http.StatusUnauthorized, otc.ReasonInvalidToken, "has expired", skewed)
}

// TestCapabilityAuthPolicy: the claims of a verified token reach the
// tool's policy, whose refusals keep their own reasons.
func TestCapabilityAuthPolicy(t *testing.T) {
	t.Parallel()
	k := capKeys(t)
	jwks := newCapJWKS(t, testkit.JWK(t, &k.ec.PublicKey, testkit.KidEC))
	var asked sync.Map
	srv, runs := newCapServer(t, testkit.CapabilityAuth(t, auth.CapabilityOptions{
		JWKSURL: jwks.srv.URL,
		Revoked: func(_ context.Context, jti string) (bool, error) {
			asked.Store(jti, true)
			switch jti {
			case "revoked":
				return true, nil
			case "unknown":
				return false, errors.New("revocation list unavailable")
			}
			return false, nil
		},
	}))
	sign := func(edit func(jwt.MapClaims)) string {
		return testkit.Sign(t, jwt.SigningMethodES256, k.ec, testkit.KidEC, testkit.CapClaims(edit))
	}

	for _, c := range []struct {
		name   string
		token  string
		status int
		reason string
	}{
		{"lacks_capability", sign(func(c jwt.MapClaims) { c["caps"] = []any{"payments:read"} }), http.StatusForbidden, otc.ReasonInsufficientCapabilities},
		{"other_audience", sign(func(c jwt.MapClaims) { c["aud"] = "urn:test:ledger" }), http.StatusForbidden, otc.ReasonAudienceMismatch},
		{"revoked", sign(func(c jwt.MapClaims) { c["jti"] = "revoked" }), http.StatusUnauthorized, otc.ReasonTokenRevoked},
		{"revocation_check_fails", sign(func(c jwt.MapClaims) { c["jti"] = "unknown" }), http.StatusUnauthorized, otc.ReasonTokenRevoked},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			res := capCall(t, srv, "Payments.Refund", capBearer(c.token))
			testkit.AssertCapRefused(t, res, c.status, c.reason, "", c.token)
			// A tool without a policy takes any valid capability token.
			requireCapAccepted(t, capCall(t, srv, "Open.WhoAmI", capBearer(c.token)))
		})
	}
	t.Run("allowed", func(t *testing.T) {
		t.Parallel()
		requireCapAccepted(t, capCall(t, srv, "Payments.Refund", capBearer(sign(func(c jwt.MapClaims) { c["jti"] = "fresh" }))))
		_, ok := asked.Load("fresh")
		assert.True(t, ok, "the revocation check was asked about the token's jti")
	})
	t.Cleanup(func() { assert.Equal(t, int64(5), runs.Load(), "four Open.WhoAmI calls and one refund ran") })
}

// TestCapabilityAuthStaticJWKS: keys given in the options, never fetched.
func TestCapabilityAuthStaticJWKS(t *testing.T) {
	t.Parallel()
	k := capKeys(t)
	a := testkit.CapabilityAuth(t, auth.CapabilityOptions{JWKS: testkit.JWKS(t, testkit.JWK(t, k.ed.Public(), kidED), testkit.JWK(t, &k.rsa.PublicKey, kidRSA))})
	srv, _ := newCapServer(t, a)

	requireCapAccepted(t, capCall(t, srv, "Payments.Refund", capBearer(testkit.Sign(t, jwt.SigningMethodEdDSA, k.ed, kidED, testkit.CapClaims(nil)))))
	requireCapAccepted(t, capCall(t, srv, "Payments.Refund", capBearer(testkit.Sign(t, jwt.SigningMethodRS256, k.rsa, kidRSA, testkit.CapClaims(nil)))))
	unknown := testkit.Sign(t, jwt.SigningMethodES256, k.ec, testkit.KidEC, testkit.CapClaims(nil))
	testkit.AssertCapRefused(t, capCall(t, srv, "Payments.Refund", capBearer(unknown)), http.StatusUnauthorized, otc.ReasonInvalidToken, "is not one of the issuers' keys", unknown)
}

// TestCapabilityAuthAnyOf: capability tokens beside API keys and HS256
// tokens. Each kind of credential reaches the method made for it, and a
// capability-only tool still refuses the others.
func TestCapabilityAuthAnyOf(t *testing.T) {
	t.Parallel()
	k := capKeys(t)
	jwks := newCapJWKS(t, testkit.JWK(t, &k.ec.PublicKey, testkit.KidEC))
	capAuth := testkit.CapabilityAuth(t, auth.CapabilityOptions{JWKSURL: jwks.srv.URL})
	hs256, err := auth.NewJWTAuth(&auth.JWTOptions{Secret: authSecret, Audiences: []string{testkit.CapResource}})
	require.NoError(t, err)
	srv, _ := newCapServer(t, auth.AnyOf(newAuthKeys(t), hs256, capAuth))

	hsToken := testkit.Sign(t, jwt.SigningMethodHS256, authSecret, "", jwt.MapClaims{
		"sub": "hs-agent", "exp": time.Now().Add(5 * time.Minute).Unix(),
		"aud": testkit.CapResource, "caps": []any{testkit.CapCapability},
	})
	capToken := testkit.Sign(t, jwt.SigningMethodES256, k.ec, testkit.KidEC, testkit.CapClaims(nil))

	t.Run("hs256_token", func(t *testing.T) {
		t.Parallel()
		seen := requireCapAccepted(t, capCall(t, srv, "Open.WhoAmI", capBearer(hsToken)))
		assert.Equal(t, "jwt", seen.Method)
		assert.Equal(t, "hs-agent", seen.Name)
		// Even with the right claims, an HS256 token is no capability token.
		res := capCall(t, srv, "Payments.Refund", capBearer(hsToken))
		testkit.AssertCapRefused(t, res, http.StatusUnauthorized, otc.ReasonMissingToken, "needs a capability token", hsToken)
	})
	t.Run("capability_token", func(t *testing.T) {
		t.Parallel()
		seen := requireCapAccepted(t, capCall(t, srv, "Payments.Refund", capBearer(capToken)))
		assert.Equal(t, otc.MethodCapability, seen.Method)
		assert.Equal(t, testkit.CapIssuer, seen.Claims["iss"])
	})
	t.Run("api_key", func(t *testing.T) {
		t.Parallel()
		seen := requireCapAccepted(t, capCall(t, srv, "Open.WhoAmI", authHeader(otc.HeaderAPIKey, authKeyCI)))
		assert.Equal(t, "api_key", seen.Method)
		res := capCall(t, srv, "Payments.Refund", authHeader(otc.HeaderAPIKey, authKeyCI))
		testkit.AssertCapRefused(t, res, http.StatusUnauthorized, otc.ReasonMissingToken, "needs a capability token", authKeyCI)
	})
	t.Run("no_credentials", func(t *testing.T) {
		t.Parallel()
		res := capCall(t, srv, "Open.WhoAmI", nil)
		assert.Equal(t, http.StatusUnauthorized, res.Status)
		assert.Contains(t, authMessage(t, res), "bearer token")
	})
	t.Run("api_key_and_ambiguous_bearer", func(t *testing.T) {
		t.Parallel()
		header := authHeader(otc.HeaderAPIKey, authKeyCI)
		header["Authorization"] = []string{"Bearer " + capToken, "Bearer " + capToken}
		res := capCall(t, srv, "Open.WhoAmI", header)
		testkit.AssertCapRefused(t, res, http.StatusUnauthorized, "", "more than once", capToken, authKeyCI)
	})
	t.Run("hs256_refusal_reported", func(t *testing.T) {
		t.Parallel()
		expired := testkit.Sign(t, jwt.SigningMethodHS256, authSecret, "", jwt.MapClaims{"sub": "hs-agent", "exp": time.Now().Add(-time.Hour).Unix()})
		res := capCall(t, srv, "Open.WhoAmI", capBearer(expired))
		assert.Equal(t, http.StatusUnauthorized, res.Status)
		assert.Contains(t, authMessage(t, res), "has expired")
		testkit.AssertNoLeak(t, res, expired)
	})
	t.Run("capability_refusal_reported", func(t *testing.T) {
		t.Parallel()
		// Both bearer methods refuse an expired ES256 token; AnyOf
		// reports the verdict of the method its algorithm belongs to, the
		// capability method's, whichever comes first.
		expired := testkit.Sign(t, jwt.SigningMethodES256, k.ec, testkit.KidEC, testkit.CapClaims(func(c jwt.MapClaims) { c["exp"] = time.Now().Add(-time.Hour).Unix() }))
		res := capCall(t, srv, "Open.WhoAmI", capBearer(expired))
		testkit.AssertCapRefused(t, res, http.StatusUnauthorized, otc.ReasonInvalidToken, "has expired", expired)

		capFirst, _ := newCapServer(t, auth.AnyOf(newAuthKeys(t), capAuth, hs256))
		res = capCall(t, capFirst, "Open.WhoAmI", capBearer(expired))
		testkit.AssertCapRefused(t, res, http.StatusUnauthorized, otc.ReasonInvalidToken, "has expired", expired)
	})
}

// TestCapabilityAuthDirect: Authenticate's errors for callers that use it
// without a handler, as AnyOf and custom authenticators do.
func TestCapabilityAuthDirect(t *testing.T) {
	t.Parallel()
	k := capKeys(t)
	a := testkit.CapabilityAuth(t, auth.CapabilityOptions{JWKS: testkit.JWKS(t, testkit.JWK(t, &k.ec.PublicKey, testkit.KidEC))})
	assert.Equal(t, "Bearer", a.Challenge(&otc.Error{Code: otc.CodeUnauthenticated}))
	assert.Equal(t, "Bearer", otc.Challenge(a, &otc.Error{Code: otc.CodeUnauthenticated}))

	req := httptest.NewRequest(http.MethodGet, "/tools", nil)
	_, err := a.Authenticate(req)
	assert.ErrorIs(t, err, otc.ErrNoCredentials)
	e, ok := errors.AsType[*otc.Error](err)
	require.True(t, ok)
	assert.Equal(t, otc.CodeUnauthenticated, e.Code)
	assert.Equal(t, otc.ReasonMissingToken, e.Reason)

	hs := testkit.Sign(t, jwt.SigningMethodHS256, authSecret, "", jwt.MapClaims{"sub": "x", "exp": time.Now().Add(time.Minute).Unix()})
	req.Header.Set("Authorization", "Bearer "+hs)
	_, err = a.Authenticate(req)
	assert.NotErrorIs(t, err, otc.ErrNoCredentials, "a token was sent")
	e, ok = errors.AsType[*otc.Error](err)
	require.True(t, ok)
	assert.Equal(t, otc.CodeUnauthenticated, e.Code)
	assert.Equal(t, otc.ReasonInvalidToken, e.Reason)
	assert.NotContains(t, e.Error(), hs)

	req.Header.Set("Authorization", "Bearer "+testkit.Sign(t, jwt.SigningMethodES256, k.ec, testkit.KidEC, testkit.CapClaims(nil)))
	id, err := a.Authenticate(req)
	require.NoError(t, err)
	assert.Equal(t, otc.MethodCapability, id.Method)
	assert.Equal(t, "agent-7", id.Name)
	assert.Equal(t, "tok-1", id.Claims["jti"])
}

func TestNewCapabilityAuthErrors(t *testing.T) {
	t.Parallel()
	k := capKeys(t)
	good := testkit.JWKS(t, testkit.JWK(t, &k.ec.PublicKey, testkit.KidEC))
	private, err := jwkset.NewJWKFromKey(k.ec, jwkset.JWKOptions{Metadata: jwkset.JWKMetadataOptions{KID: "leaked"}, Marshal: jwkset.JWKMarshalOptions{Private: true}})
	require.NoError(t, err)
	noKID, err := jwkset.NewJWKFromKey(&k.ec.PublicKey, jwkset.JWKOptions{})
	require.NoError(t, err)
	var noContext context.Context

	for _, c := range []struct {
		name string
		ctx  context.Context
		opts auth.CapabilityOptions
		want string
	}{
		{"nil_context", noContext, auth.CapabilityOptions{Issuers: []string{testkit.CapIssuer}, JWKS: good}, "nil context"},
		{"no_issuers", t.Context(), auth.CapabilityOptions{JWKS: good}, "no issuers"},
		{"empty_issuer", t.Context(), auth.CapabilityOptions{Issuers: []string{testkit.CapIssuer, ""}, JWKS: good}, "an issuer is empty"},
		{"neither", t.Context(), auth.CapabilityOptions{Issuers: []string{testkit.CapIssuer}}, "neither JWKSURL nor JWKS"},
		{"both", t.Context(), auth.CapabilityOptions{Issuers: []string{testkit.CapIssuer}, JWKS: good, JWKSURL: "https://issuer.test/jwks"}, "both JWKSURL and JWKS"},
		{"plain_http", t.Context(), auth.CapabilityOptions{Issuers: []string{testkit.CapIssuer}, JWKSURL: "http://issuer.test/jwks"}, "must be an https URL"},
		{"other_scheme", t.Context(), auth.CapabilityOptions{Issuers: []string{testkit.CapIssuer}, JWKSURL: "file:///etc/jwks.json"}, "must be an https URL"},
		{"relative_url", t.Context(), auth.CapabilityOptions{Issuers: []string{testkit.CapIssuer}, JWKSURL: "/jwks"}, "must be an https URL"},
		{"negative_refresh", t.Context(), auth.CapabilityOptions{Issuers: []string{testkit.CapIssuer}, JWKS: good, RefreshInterval: -time.Second}, "negative RefreshInterval"},
		{"jwks_not_json", t.Context(), auth.CapabilityOptions{Issuers: []string{testkit.CapIssuer}, JWKS: json.RawMessage(`{"keys":`)}, "not a usable JSON Web Key Set"},
		{"jwks_bad_key", t.Context(), auth.CapabilityOptions{Issuers: []string{testkit.CapIssuer}, JWKS: json.RawMessage(`{"keys":[{"kty":"EC","crv":"P-256","x":"AA","y":"AA","kid":"k"}]}`)}, "not a usable JSON Web Key Set"},
		{"jwks_empty", t.Context(), auth.CapabilityOptions{Issuers: []string{testkit.CapIssuer}, JWKS: json.RawMessage(`{"keys":[]}`)}, "no key with a kid"},
		{"jwks_private_key", t.Context(), auth.CapabilityOptions{Issuers: []string{testkit.CapIssuer}, JWKS: testkit.JWKS(t, private.Marshal())}, "private or secret key"},
		{"jwks_secret_key", t.Context(), auth.CapabilityOptions{Issuers: []string{testkit.CapIssuer}, JWKS: testkit.JWKS(t, testkit.JWK(t, capOctSecret, kidOct))}, "private or secret key"},
		{"jwks_only_p384", t.Context(), auth.CapabilityOptions{Issuers: []string{testkit.CapIssuer}, JWKS: testkit.JWKS(t, testkit.JWK(t, &k.ec384.PublicKey, kidEC384))}, "no key with a kid"},
		{"jwks_only_rsa_1024", t.Context(), auth.CapabilityOptions{Issuers: []string{testkit.CapIssuer}, JWKS: testkit.JWKS(t, testkit.JWK(t, &k.rsa1024.PublicKey, kidRSA1024))}, "no key with a kid"},
		{"jwks_no_kid", t.Context(), auth.CapabilityOptions{Issuers: []string{testkit.CapIssuer}, JWKS: testkit.JWKS(t, noKID.Marshal())}, "no key with a kid"},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			a, err := auth.NewCapabilityAuth(c.ctx, &c.opts)
			assert.Nil(t, a)
			require.Error(t, err)
			assert.True(t, strings.HasPrefix(err.Error(), "auth: NewCapabilityAuth: "), err.Error())
			assert.Contains(t, err.Error(), c.want)
		})
	}
	t.Run("loopback_http", func(t *testing.T) {
		t.Parallel()
		for _, u := range []string{"http://localhost:1/jwks", "http://127.0.0.1:1/jwks", "http://[::1]:1/jwks"} {
			a, err := auth.NewCapabilityAuth(t.Context(), &auth.CapabilityOptions{
				Issuers: []string{testkit.CapIssuer}, JWKSURL: u, Logger: slog.New(slog.DiscardHandler),
				HTTPClient: &http.Client{Timeout: time.Second},
			})
			require.NoError(t, err, "%s: a failed first fetch does not fail NewCapabilityAuth", u)
			assert.NotNil(t, a)
		}
	})
}

// TestCapabilityAuthStopsRefreshing: the context given to
// NewCapabilityAuth ends its background refresh. Not parallel, so that
// goleak sees only this test's goroutines.
func TestCapabilityAuthStopsRefreshing(t *testing.T) {
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
	k := capKeys(t)
	jwks := newCapJWKS(t, testkit.JWK(t, &k.ec.PublicKey, testkit.KidEC))
	transport := &http.Transport{}
	ctx, cancel := context.WithCancel(t.Context())
	_, err := auth.NewCapabilityAuth(ctx, &auth.CapabilityOptions{
		Issuers: []string{testkit.CapIssuer}, JWKSURL: jwks.srv.URL, RefreshInterval: 5 * time.Millisecond,
		HTTPClient: &http.Client{Transport: transport, Timeout: 5 * time.Second},
		Logger:     slog.New(slog.DiscardHandler),
	})
	require.NoError(t, err)
	jwks.waitFetches(t, 3)
	cancel()
	jwks.srv.Close()
	transport.CloseIdleConnections()
}

// FuzzCapabilityToken: whatever the Authorization header holds, the
// handler answers 200 or a 401 that quotes nothing of it, and it lets a
// request in only with a token that the test's own keys signed, from an
// accepted issuer, not expired. The input is used three ways: as a
// bearer token, as a whole header, and as the claims of a token that the
// test key signs, which exercises the claim checks on signed garbage.
func FuzzCapabilityToken(f *testing.F) {
	k := capKeys(f)
	jwks := testkit.JWKS(f, testkit.JWK(f, &k.ec.PublicKey, testkit.KidEC), testkit.JWK(f, k.ed.Public(), kidED), testkit.JWK(f, &k.rsa.PublicKey, kidRSA))
	a, err := auth.NewCapabilityAuth(f.Context(), &auth.CapabilityOptions{Issuers: []string{testkit.CapIssuer}, JWKS: jwks})
	require.NoError(f, err)
	reg := otc.NewRegistry(&otc.RegistryOptions{Logger: slog.New(slog.DiscardHandler)})
	h := otc.NewHandler(reg, &otc.HandlerOptions{Authenticator: a})
	public := map[string]any{testkit.KidEC: &k.ec.PublicKey, kidED: k.ed.Public(), kidRSA: &k.rsa.PublicKey}
	signedHeader := base64.RawURLEncoding.EncodeToString([]byte(`{"alg":"ES256","kid":"` + testkit.KidEC + `"}`))

	f.Add(testkit.Sign(f, jwt.SigningMethodES256, k.ec, testkit.KidEC, testkit.CapClaims(nil)))
	f.Add(testkit.Sign(f, jwt.SigningMethodEdDSA, k.ed, kidED, testkit.CapClaims(nil)))
	f.Add("Bearer " + testkit.Sign(f, jwt.SigningMethodRS256, k.rsa, kidRSA, testkit.CapClaims(nil)))
	f.Add(testkit.Sign(f, jwt.SigningMethodHS256, capPEM(f, &k.ec.PublicKey), testkit.KidEC, testkit.CapClaims(nil)))
	f.Add(testkit.Sign(f, jwt.SigningMethodRS256, k.rsa, testkit.KidEC, testkit.CapClaims(nil)))
	f.Add(`{"iss":"` + testkit.CapIssuer + `","exp":9999999999}`)

	f.Fuzz(func(t *testing.T, s string) {
		signing := signedHeader + "." + base64.RawURLEncoding.EncodeToString([]byte(s))
		sig, err := jwt.SigningMethodES256.Sign(signing, k.ec)
		require.NoError(t, err)
		signed := signing + "." + base64.RawURLEncoding.EncodeToString(sig)
		for _, header := range []string{"Bearer " + s, s, "Bearer " + signed} {
			req := httptest.NewRequest(http.MethodGet, "/tools", nil)
			req.Header.Set("Authorization", header)
			rec := httptest.NewRecorder()
			h.ServeHTTP(rec, req)

			switch rec.Code {
			case http.StatusOK:
				if problem := capFuzzInvalid(public, header); problem != "" {
					t.Fatalf("Authorization %q was let in, but %s", header, problem)
				}
			case http.StatusUnauthorized:
				var body struct {
					Message string `json:"message"`
					Reason  string `json:"reason"`
				}
				if err := json.Unmarshal(rec.Body.Bytes(), &body); err != nil || body.Message == "" {
					t.Fatalf("Authorization %q: body %s is not {message, reason} (%v)", header, rec.Body, err)
				}
				if body.Reason != otc.ReasonInvalidToken && body.Reason != otc.ReasonMissingToken {
					t.Fatalf("Authorization %q: reason %q", header, body.Reason)
				}
				if got := rec.Header().Values("WWW-Authenticate"); len(got) != 1 || got[0] != "Bearer" {
					t.Fatalf("Authorization %q: WWW-Authenticate %q", header, got)
				}
				for _, leak := range []string{s, signed} {
					if len(leak) >= 24 && strings.Contains(rec.Body.String(), leak) {
						t.Fatalf("Authorization %q: the body quotes the credential: %s", header, rec.Body)
					}
				}
			default:
				t.Fatalf("Authorization %q: status %d: %s", header, rec.Code, rec.Body)
			}
		}
	})
}

// capFuzzInvalid checks, without the authenticator's code, that an
// accepted Authorization header holds a token signed by one of the test's
// keys with that key's algorithm, from testkit.CapIssuer and not expired; it
// returns what is wrong, or "".
func capFuzzInvalid(public map[string]any, header string) string {
	scheme, token, ok := strings.Cut(header, " ")
	if !ok || !strings.EqualFold(scheme, "Bearer") {
		return "the header is not a bearer token"
	}
	parts := strings.Split(strings.TrimSpace(token), ".")
	if len(parts) != 3 {
		return "the token is not three parts"
	}
	rawHeader, err1 := base64.RawURLEncoding.Strict().DecodeString(parts[0])
	rawClaims, err2 := base64.RawURLEncoding.Strict().DecodeString(parts[1])
	sig, err3 := base64.RawURLEncoding.Strict().DecodeString(parts[2])
	if err := errors.Join(err1, err2, err3); err != nil {
		return "the token is not base64url: " + err.Error()
	}
	var jose struct {
		Alg string `json:"alg"`
		Kid string `json:"kid"`
	}
	if err := json.Unmarshal(rawHeader, &jose); err != nil {
		return "the header is not JSON"
	}
	want := map[string]string{testkit.KidEC: "ES256", kidED: "EdDSA", kidRSA: "RS256"}[jose.Kid]
	if want == "" || jose.Alg != want {
		return "alg " + jose.Alg + " is not the algorithm of key " + jose.Kid
	}
	if err := jwt.GetSigningMethod(want).Verify(parts[0]+"."+parts[1], sig, public[jose.Kid]); err != nil {
		return "the signature does not verify under the test key: " + err.Error()
	}
	// A map, not a struct: encoding/json matches struct fields without
	// regard to case, and "ISS" is not "iss".
	var claims map[string]any
	if err := json.Unmarshal(rawClaims, &claims); err != nil {
		return "the claims are not a JSON object"
	}
	if claims["iss"] != testkit.CapIssuer {
		return "the issuer is not " + testkit.CapIssuer
	}
	if exp, ok := claims["exp"].(float64); !ok || exp < float64(time.Now().Add(-time.Minute).Unix()) {
		return "exp is missing or past"
	}
	return ""
}

// TestCapabilityMaxLifetime: a capability token may not live longer than
// MaxLifetime (15 minutes by default) plus the leeway.
func TestCapabilityMaxLifetime(t *testing.T) {
	t.Parallel()
	k := capKeys(t)
	jwks := testkit.JWKS(t, testkit.JWK(t, &k.ec.PublicKey, testkit.KidEC))
	token := func(ttl time.Duration) string {
		return testkit.Sign(t, jwt.SigningMethodES256, k.ec, testkit.KidEC, testkit.CapClaims(func(c jwt.MapClaims) { c["exp"] = time.Now().Add(ttl).Unix() }))
	}
	def, _ := newCapServer(t, testkit.CapabilityAuth(t, auth.CapabilityOptions{JWKS: jwks}))
	hour, _ := newCapServer(t, testkit.CapabilityAuth(t, auth.CapabilityOptions{JWKS: jwks, MaxLifetime: time.Hour}))
	for _, tc := range []struct {
		name string
		srv  *httptest.Server
		ttl  time.Duration
		ok   bool
		want string
	}{
		{"default_14_minutes", def, 14 * time.Minute, true, ""},
		{"default_15_minutes_and_the_leeway", def, 15*time.Minute + 25*time.Second, true, ""},
		{"default_16_minutes", def, 16 * time.Minute, false, "valid for at most 15m0s"},
		{"default_ten_years", def, 10 * 365 * 24 * time.Hour, false, "expires too far in the future"},
		{"hour_59_minutes", hour, 59 * time.Minute, true, ""},
		{"hour_2_hours", hour, 2 * time.Hour, false, "valid for at most 1h0m0s"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			tok := token(tc.ttl)
			res := capCall(t, tc.srv, "Open.WhoAmI", capBearer(tok))
			if tc.ok {
				requireCapAccepted(t, res)
				return
			}
			testkit.AssertCapRefused(t, res, http.StatusUnauthorized, otc.ReasonInvalidToken, tc.want, tok)
		})
	}
	_, err := auth.NewCapabilityAuth(t.Context(), &auth.CapabilityOptions{Issuers: []string{testkit.CapIssuer}, JWKS: jwks, MaxLifetime: -time.Second})
	assert.ErrorContains(t, err, "negative MaxLifetime")
}
