package auth_test

// When the issuers' JWKS is fetched, over real HTTP: an httptest server
// publishes the keys (and rotates them, goes down or hangs), and the OTC
// handler serves the tools of capability_test.go behind a capability
// authenticator. The intervals are shortened through
// auth.NewCapabilityAuthForTest so that each test takes a second or two;
// internal/jwks/jwks_test.go checks the default intervals themselves.

import (
	"context"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"github.com/otcgo/otc"
	"github.com/otcgo/otc/auth"
	"github.com/otcgo/otc/internal/testkit"
)

// newCapAuthTimed is newCapAuth with the intervals of fetching the JWKS
// shortened.
func newCapAuthTimed(t *testing.T, opts auth.CapabilityOptions, timing auth.JWKSTimingForTest) *auth.CapabilityAuth {
	t.Helper()
	if opts.Issuers == nil {
		opts.Issuers = []string{testkit.CapIssuer}
	}
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	a, err := auth.NewCapabilityAuthForTest(t.Context(), &opts, timing)
	require.NoError(t, err)
	return a
}

// capRetry calls tool with token every 20 ms until it is accepted or
// within has passed since from, and returns the last answer, the
// refusals before it and when the last call was answered.
func capRetry(t *testing.T, srv *httptest.Server, token string, from time.Time, within time.Duration) (last testkit.Response, refused []testkit.Response, at time.Time) {
	t.Helper()
	for {
		last = capCall(t, srv, "Payments.Refund", capBearer(token))
		at = time.Now()
		if last.Status == http.StatusOK || at.Sub(from) > within {
			return last, refused, at
		}
		refused = append(refused, last)
		time.Sleep(20 * time.Millisecond)
	}
}

// TestJWKSMadeUpKIDCannotHoldBackRotation: an attacker's made-up kid spends
// a fetch just before the issuer publishes a new key; a token signed with
// that key is refused with "try again" at most for the minimum gap between
// fetches, then accepted. (With one unknown-kid fetch per five minutes it
// was refused for five minutes.)
func TestJWKSMadeUpKIDCannotHoldBackRotation(t *testing.T) {
	t.Parallel()
	k := capKeys(t)
	first := testkit.JWK(t, &k.ec.PublicKey, testkit.KidEC)
	jwks := newCapJWKS(t, first)
	const gap = 300 * time.Millisecond
	srv, runs := newCapServer(t, newCapAuthTimed(t, auth.CapabilityOptions{JWKSURL: jwks.srv.URL}, auth.JWKSTimingForTest{MinGap: gap}))
	requireCapAccepted(t, capCall(t, srv, "Payments.Refund", capBearer(testkit.Sign(t, jwt.SigningMethodES256, k.ec, testkit.KidEC, testkit.CapClaims(nil)))))
	time.Sleep(gap)

	// The attacker goes first: its kid fetches the set, which lacks it.
	bogus := testkit.Sign(t, jwt.SigningMethodES256, k.ecOther, "attacker-kid", testkit.CapClaims(nil))
	testkit.AssertCapRefused(t, capCall(t, srv, "Payments.Refund", capBearer(bogus)), http.StatusUnauthorized, otc.ReasonInvalidToken, "is not one of the issuers' keys", bogus)
	require.Equal(t, 2, jwks.count(), "the made-up kid fetched the JWKS")

	// Then the issuer rotates, and its client retries until accepted.
	jwks.set(t, first, testkit.JWK(t, &k.ec2.PublicKey, kidEC2))
	published := time.Now()
	rotated := testkit.Sign(t, jwt.SigningMethodES256, k.ec2, kidEC2, testkit.CapClaims(nil))
	res, refused, at := capRetry(t, srv, rotated, published, gap+5*time.Second)
	seen := requireCapAccepted(t, res)
	assert.Equal(t, "agent-7", seen.Name)
	assert.Less(t, at.Sub(published), gap+2*time.Second, "the new key verified within the gap (and a fetch)")
	for _, r := range refused {
		testkit.AssertCapRefused(t, r, http.StatusUnauthorized, otc.ReasonInvalidToken, "try again in a few seconds", rotated)
	}
	assert.Equal(t, 3, jwks.count(), "the rotated key cost one fetch")
	assert.Equal(t, int64(2), runs.Load())
}

// TestJWKSMadeUpKIDFlood: 200 made-up kids, 20 at a time, cost the issuer
// at most one fetch per minimum gap, and no request waits long: each is
// refused at once, or shares a fetch in progress.
func TestJWKSMadeUpKIDFlood(t *testing.T) {
	t.Parallel()
	k := capKeys(t)
	jwks := newCapJWKS(t, testkit.JWK(t, &k.ec.PublicKey, testkit.KidEC))
	const gap = 200 * time.Millisecond
	srv, runs := newCapServer(t, newCapAuthTimed(t, auth.CapabilityOptions{JWKSURL: jwks.srv.URL}, auth.JWKSTimingForTest{MinGap: gap}))
	requireCapAccepted(t, capCall(t, srv, "Payments.Refund", capBearer(testkit.Sign(t, jwt.SigningMethodES256, k.ec, testkit.KidEC, testkit.CapClaims(nil)))))
	time.Sleep(gap)

	const total, workers = 200, 20
	tokens := make(chan string, total)
	for i := range total {
		tokens <- testkit.Sign(t, jwt.SigningMethodES256, k.ecOther, "made-up-"+strconv.Itoa(i), testkit.CapClaims(nil))
	}
	close(tokens)
	var (
		wg      sync.WaitGroup
		slowest atomic.Int64
		status  sync.Map
	)
	before := jwks.count()
	start := time.Now()
	for range workers {
		wg.Go(func() {
			for token := range tokens {
				began := time.Now()
				res := capCall(t, srv, "Payments.Refund", capBearer(token))
				took := int64(time.Since(began))
				for old := slowest.Load(); took > old && !slowest.CompareAndSwap(old, took); old = slowest.Load() {
				}
				status.Store(res.Status, true)
			}
		})
	}
	wg.Wait()
	elapsed := time.Since(start)

	fetches := jwks.count() - before
	t.Logf("%d made-up kids in %v: %d fetches, slowest answer %v", total, elapsed, fetches, time.Duration(slowest.Load()))
	assert.GreaterOrEqual(t, fetches, 1, "the first made-up kid fetched the set")
	assert.LessOrEqual(t, fetches, 1+int(elapsed/gap), "at most one fetch per gap")
	assert.Less(t, time.Duration(slowest.Load()), 2*time.Second, "no request waited for long")
	status.Range(func(s, _ any) bool {
		assert.Equal(t, http.StatusUnauthorized, s)
		return true
	})
	assert.Equal(t, int64(1), runs.Load(), "no made-up kid reached a tool")
}

// TestJWKSIssuerComesBack: the JWKS is down at start; a call during the
// outage is refused with "try again"; the fetch is retried on a growing
// backoff, and once the JWKS is back a valid token is accepted within
// the backoff's cap. Unknown kids may not fetch here (a gap of an hour),
// so only the backoff can bring the keys.
func TestJWKSIssuerComesBack(t *testing.T) {
	t.Parallel()
	k := capKeys(t)
	jwks := newCapJWKS(t, testkit.JWK(t, &k.ec.PublicKey, testkit.KidEC))
	jwks.fail(http.StatusServiceUnavailable)
	var logs testkit.SyncBuffer
	const backoffMin, backoffMax = 50 * time.Millisecond, 400 * time.Millisecond
	a := newCapAuthTimed(t, auth.CapabilityOptions{JWKSURL: jwks.srv.URL, Logger: slog.New(slog.NewTextHandler(&logs, nil))},
		auth.JWKSTimingForTest{MinGap: time.Hour, BackoffMin: backoffMin, BackoffMax: backoffMax})
	srv, runs := newCapServer(t, a)

	token := testkit.Sign(t, jwt.SigningMethodES256, k.ec, testkit.KidEC, testkit.CapClaims(nil))
	res := capCall(t, srv, "Payments.Refund", capBearer(token))
	testkit.AssertCapRefused(t, res, http.StatusUnauthorized, otc.ReasonInvalidToken, "has not obtained the issuers' keys yet", token)
	assert.Contains(t, authMessage(t, res), "try again")
	// The call may come while the first fetch is still failing: its log
	// line follows it.
	require.Eventually(t, func() bool { return strings.Contains(logs.String(), "fetching the capability issuers' JWKS failed") },
		10*time.Second, 5*time.Millisecond, "the failed fetch is logged")

	// The outage: retries after 50, 100, 200 ms…, neither given up nor
	// every few milliseconds: the fourth fetch comes, and no sooner than
	// the backoffs before it allow.
	require.Eventually(t, func() bool { return jwks.count() >= 4 }, 30*time.Second, 5*time.Millisecond, "the fetch is retried")
	fetched := jwks.fetchTimes()
	for i, least := range []time.Duration{backoffMin, 2 * backoffMin, 4 * backoffMin} {
		assert.GreaterOrEqual(t, fetched[i+1].Sub(fetched[i]), least*9/10, "the retries back off: fetch %d", i+2)
	}

	jwks.fail(http.StatusOK)
	back := time.Now()
	res, refused, at := capRetry(t, srv, token, back, backoffMax+5*time.Second)
	requireCapAccepted(t, res)
	assert.Less(t, at.Sub(back), backoffMax+time.Second, "accepted within the backoff cap of the JWKS's return")
	for _, r := range refused {
		testkit.AssertCapRefused(t, r, http.StatusUnauthorized, otc.ReasonInvalidToken, "has not obtained the issuers' keys yet", token)
	}
	assert.Equal(t, int64(1), runs.Load())
	assert.Contains(t, logs.String(), "fetched the capability issuers' JWKS again")
}

// TestJWKSHangingIssuer: a JWKS that never answers does not hold up
// NewCapabilityAuth (10 s fetch timeout; it returns at once), and a call
// waits for the first fetch only the bounded time, then is refused with a
// message saying to try again. Cancelling the context ends the fetching
// and leaves no goroutine behind. Not parallel, for goleak.
func TestJWKSHangingIssuer(t *testing.T) {
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
	k := capKeys(t)
	release := make(chan struct{})
	var fetches atomic.Int64
	hang := httptest.NewServer(http.HandlerFunc(func(_ http.ResponseWriter, r *http.Request) {
		fetches.Add(1)
		select {
		case <-r.Context().Done():
		case <-release:
		}
	}))
	defer hang.Close()
	defer close(release)
	transport := &http.Transport{}
	defer transport.CloseIdleConnections()
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()

	const wait = 500 * time.Millisecond
	start := time.Now()
	a, err := auth.NewCapabilityAuthForTest(ctx, &auth.CapabilityOptions{
		Issuers: []string{testkit.CapIssuer}, JWKSURL: hang.URL, Logger: slog.New(slog.DiscardHandler),
		HTTPClient: &http.Client{Transport: transport, Timeout: 10 * time.Second},
	}, auth.JWKSTimingForTest{Wait: wait})
	returned := time.Since(start)
	require.NoError(t, err)
	assert.Less(t, returned, time.Second, "NewCapabilityAuth did not wait for the hanging JWKS")

	srv, runs := newCapServer(t, a)
	token := testkit.Sign(t, jwt.SigningMethodES256, k.ec, testkit.KidEC, testkit.CapClaims(nil))
	began := time.Now()
	res := capCall(t, srv, "Payments.Refund", capBearer(token))
	took := time.Since(began)
	testkit.AssertCapRefused(t, res, http.StatusUnauthorized, otc.ReasonInvalidToken, "still fetching the issuers' keys", token)
	assert.Contains(t, authMessage(t, res), "try again")
	assert.GreaterOrEqual(t, took, wait-50*time.Millisecond, "the call waited for the first fetch")
	assert.Less(t, took, wait+2*time.Second, "the call waited only the bounded time")
	assert.Zero(t, runs.Load())
	assert.Equal(t, int64(1), fetches.Load(), "one fetch, shared")
	srv.Close()
}

// TestJWKSOtherIssuerCostsNoFetch: a token naming another issuer, such as
// an OAuth access token beside capability tokens in AnyOf, is refused for
// its issuer before its unknown kid is looked up, so that it neither
// fetches the capability issuers' JWKS nor waits for a fetch.
func TestJWKSOtherIssuerCostsNoFetch(t *testing.T) {
	t.Parallel()
	k := capKeys(t)
	jwks := newCapJWKS(t, testkit.JWK(t, &k.ec.PublicKey, testkit.KidEC))
	const gap = 50 * time.Millisecond
	srv, runs := newCapServer(t, newCapAuthTimed(t, auth.CapabilityOptions{JWKSURL: jwks.srv.URL}, auth.JWKSTimingForTest{MinGap: gap}))
	requireCapAccepted(t, capCall(t, srv, "Payments.Refund", capBearer(testkit.Sign(t, jwt.SigningMethodES256, k.ec, testkit.KidEC, testkit.CapClaims(nil)))))
	before := jwks.count()
	for range 3 {
		time.Sleep(gap)
		other := testkit.Sign(t, jwt.SigningMethodES256, k.ecOther, "authorization-server-kid", testkit.CapClaims(func(c jwt.MapClaims) { c["iss"] = "https://login.test" }))
		testkit.AssertCapRefused(t, capCall(t, srv, "Payments.Refund", capBearer(other)), http.StatusUnauthorized, otc.ReasonInvalidToken, "issuer (iss) is not one this server accepts", other)
	}
	assert.Equal(t, before, jwks.count(), "no fetch for another issuer's kid")
	assert.Equal(t, int64(1), runs.Load())
}
