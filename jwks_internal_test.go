package otc

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
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
	t := defaultJWKSTiming(opts.RefreshInterval)
	for _, f := range []struct {
		set time.Duration
		to  *time.Duration
	}{
		{timing.MinGap, &t.minGap},
		{timing.BackoffMin, &t.backoffMin},
		{timing.BackoffMax, &t.backoffMax},
		{timing.Wait, &t.wait},
	} {
		if f.set != 0 {
			*f.to = f.set
		}
	}
	return newCapabilityAuth(ctx, opts, t)
}

// TestJWKSDefaultTiming: the intervals are the ones CapabilityOptions
// documents, and they keep the bars: a key published after a
// made-up kid's fetch, and an issuer back from an outage, are seen within
// 45 seconds.
func TestJWKSDefaultTiming(t *testing.T) {
	t.Parallel()
	d := defaultJWKSTiming(0)
	assert.Equal(t, jwksTiming{refresh: time.Hour, minGap: 5 * time.Second, backoffMin: time.Second, backoffMax: 30 * time.Second, wait: 5 * time.Second}, d)
	assert.Equal(t, 10*time.Minute, defaultJWKSTiming(10*time.Minute).refresh)

	var retries []time.Duration
	for n := 1; n <= 8; n++ {
		retries = append(retries, d.retryAfter(n))
	}
	s := time.Second
	assert.Equal(t, []time.Duration{s, 2 * s, 4 * s, 8 * s, 16 * s, 30 * s, 30 * s, 30 * s}, retries)
	assert.Equal(t, 30*time.Second, d.retryAfter(1000), "no overflow after many failures")

	// The issuer comes back while a fetch hangs: that fetch ends within the
	// fetch timeout, and the next starts at most the backoff cap later.
	assert.Less(t, jwksFetchTimeout+d.backoffMax, 45*time.Second)
	assert.Less(t, d.minGap+jwksFetchTimeout, 45*time.Second)

	// A retry never waits longer than a refresh would.
	short := defaultJWKSTiming(3 * time.Second)
	assert.Equal(t, 3*time.Second, short.retryAfter(5))
	assert.Equal(t, time.Second, short.retryAfter(1))
}
