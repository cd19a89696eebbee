package auth

import (
	"context"
	"time"

	"github.com/otcgo/otc/internal/jwks"
)

// SetJWTAuthClockForTest makes a's checks of "exp", "nbf" and "iat" read
// the time from now. It lets the black-box tests in auth_test.go (package
// auth_test, compiled into the same test binary) pin the clock, so that a
// boundary such as "expired 30 s ago with a 30 s leeway" is exact and a
// fuzz seed token never expires. Call it before the authenticator serves.
func SetJWTAuthClockForTest(a *JWTAuth, now func() time.Time) { a.now = now }

// JWKSTimingForTest shortens the intervals of fetching a JWKS, which are
// seconds in production, so that the black-box tests in jwks_test.go and
// capability_test.go (package auth_test, compiled into the same test
// binary) see a rotation, a backoff or a bounded wait in milliseconds. A
// zero field keeps its default.
type JWKSTimingForTest struct {
	MinGap     time.Duration // least time between a fetch and one an unknown kid asks for
	BackoffMin time.Duration // retry after the first failed fetch in a row
	BackoffMax time.Duration // cap of the doubling retries
	Wait       time.Duration // longest a request waits for a fetch
}

// NewCapabilityAuthForTest is NewCapabilityAuth with the intervals of
// fetching JWKSURL shortened as timing says.
func NewCapabilityAuthForTest(ctx context.Context, opts *CapabilityOptions, timing JWKSTimingForTest) (*CapabilityAuth, error) {
	t := jwks.DefaultTiming(opts.RefreshInterval).With(timing.MinGap, timing.BackoffMin, timing.BackoffMax, timing.Wait)
	return newCapabilityAuth(ctx, *opts, t)
}

// CachedTokensForTest returns the number of verified tokens the
// authenticator remembers.
func (a *CapabilityAuth) CachedTokensForTest() int { return a.cache.Len() }
