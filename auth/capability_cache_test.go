package auth_test

import (
	"context"
	"net/http"
	"sync/atomic"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"
	"github.com/stretchr/testify/assert"

	"github.com/otcgo/otc"
	"github.com/otcgo/otc/auth"
	"github.com/otcgo/otc/internal/testkit"
)

// TestCapabilityCacheKeepsPerCallChecks: a token sent again is taken from
// the cache of verified tokens, and every call still runs its tool's
// policy on the claims: a revocation after the first call refuses the
// second, and a token lacking a capability is refused each time.
func TestCapabilityCacheKeepsPerCallChecks(t *testing.T) {
	t.Parallel()
	k := capKeys(t)
	jwks := newCapJWKS(t, testkit.JWK(t, &k.ec.PublicKey, testkit.KidEC))
	var revoked atomic.Bool
	a := testkit.CapabilityAuth(t, auth.CapabilityOptions{
		JWKSURL: jwks.srv.URL,
		Revoked: func(context.Context, string) (bool, error) { return revoked.Load(), nil },
	})
	srv, runs := newCapServer(t, a)

	token := testkit.Sign(t, jwt.SigningMethodES256, k.ec, testkit.KidEC, testkit.CapClaims(nil))
	requireCapAccepted(t, capCall(t, srv, "Payments.Refund", capBearer(token)))
	requireCapAccepted(t, capCall(t, srv, "Payments.Refund", capBearer(token)))
	assert.Equal(t, 1, a.CachedTokensForTest(), "the token is remembered once")

	revoked.Store(true)
	testkit.AssertCapRefused(t, capCall(t, srv, "Payments.Refund", capBearer(token)), http.StatusUnauthorized, otc.ReasonTokenRevoked, "", token)

	lacking := testkit.Sign(t, jwt.SigningMethodES256, k.ec, testkit.KidEC, testkit.CapClaims(func(c jwt.MapClaims) {
		c["caps"] = []any{"payments:read"}
		c["jti"] = "tok-2"
	}))
	revoked.Store(false)
	for range 2 {
		testkit.AssertCapRefused(t, capCall(t, srv, "Payments.Refund", capBearer(lacking)), http.StatusForbidden, otc.ReasonInsufficientCapabilities, "", lacking)
	}
	assert.Equal(t, int64(2), runs.Load(), "only the two allowed calls ran")
}

// TestCapabilityCacheNotPastExpiry: a remembered token is refused once it
// has expired, as it would be without the cache.
func TestCapabilityCacheNotPastExpiry(t *testing.T) {
	t.Parallel()
	k := capKeys(t)
	a := testkit.CapabilityAuth(t, auth.CapabilityOptions{JWKS: testkit.JWKS(t, testkit.JWK(t, &k.ec.PublicKey, testkit.KidEC)), Leeway: -1})
	srv, _ := newCapServer(t, a)
	exp := time.Now().Add(3 * time.Second).Truncate(time.Second).Add(time.Second) // room for the calls before it, on a busy machine
	token := testkit.Sign(t, jwt.SigningMethodES256, k.ec, testkit.KidEC, testkit.CapClaims(func(c jwt.MapClaims) { c["exp"] = exp.Unix() }))
	requireCapAccepted(t, capCall(t, srv, "Open.WhoAmI", capBearer(token)))
	assert.Equal(t, 1, a.CachedTokensForTest())
	time.Sleep(time.Until(exp) + 50*time.Millisecond)
	testkit.AssertCapRefused(t, capCall(t, srv, "Open.WhoAmI", capBearer(token)), http.StatusUnauthorized, otc.ReasonInvalidToken, "expired", token)
}

// TestCapabilityCacheSkipsBoundTokens: a token with execution claims is
// for one call and is not remembered; with CacheSize negative nothing is.
func TestCapabilityCacheSkipsBoundTokens(t *testing.T) {
	t.Parallel()
	k := capKeys(t)
	set := testkit.JWKS(t, testkit.JWK(t, &k.ec.PublicKey, testkit.KidEC))
	a := testkit.CapabilityAuth(t, auth.CapabilityOptions{JWKS: set})
	srv, _ := newCapServer(t, a)
	bound := testkit.Sign(t, jwt.SigningMethodES256, k.ec, testkit.KidEC, testkit.CapClaims(func(c jwt.MapClaims) { c["exec_act"] = "refund" }))
	requireCapAccepted(t, capCall(t, srv, "Open.WhoAmI", capBearer(bound)))
	assert.Equal(t, 0, a.CachedTokensForTest())

	off := testkit.CapabilityAuth(t, auth.CapabilityOptions{JWKS: set, CacheSize: -1})
	srv, _ = newCapServer(t, off)
	plain := testkit.Sign(t, jwt.SigningMethodES256, k.ec, testkit.KidEC, testkit.CapClaims(nil))
	requireCapAccepted(t, capCall(t, srv, "Open.WhoAmI", capBearer(plain)))
	requireCapAccepted(t, capCall(t, srv, "Open.WhoAmI", capBearer(plain)))
	assert.Equal(t, 0, off.CachedTokensForTest())
}
