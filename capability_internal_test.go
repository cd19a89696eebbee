package otc

import (
	"context"
	"time"

	"github.com/otcgo/otc/internal/jwks"
)

// JWKSTimingForTest shortens the intervals of fetching a JWKS, which are
// seconds in production, so that the black-box tests in jwks_test.go and
// capability_test.go (package otc_test, compiled into the same test
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
func NewCapabilityAuthForTest(ctx context.Context, opts CapabilityOptions, timing JWKSTimingForTest) (*CapabilityAuth, error) {
	t := jwks.DefaultTiming(opts.RefreshInterval).With(timing.MinGap, timing.BackoffMin, timing.BackoffMax, timing.Wait)
	return newCapabilityAuth(ctx, opts, t)
}

// CachedTokensForTest returns the number of verified tokens the
// authenticator remembers.
func (a *CapabilityAuth) CachedTokensForTest() int { return a.cache.Len() }
