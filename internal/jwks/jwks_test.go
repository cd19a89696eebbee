package jwks

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
)

// TestJWKSDefaultTiming: the intervals are the ones CapabilityOptions
// documents, and they keep the bars: a key published after a
// made-up kid's fetch, and an issuer back from an outage, are seen within
// 45 seconds.
func TestJWKSDefaultTiming(t *testing.T) {
	t.Parallel()
	d := DefaultTiming(0)
	assert.Equal(t, Timing{Refresh: time.Hour, MinGap: 5 * time.Second, BackoffMin: time.Second, BackoffMax: 30 * time.Second, Wait: 5 * time.Second}, d)
	assert.Equal(t, 10*time.Minute, DefaultTiming(10*time.Minute).Refresh)

	var retries []time.Duration
	for n := 1; n <= 8; n++ {
		retries = append(retries, d.RetryAfter(n))
	}
	s := time.Second
	assert.Equal(t, []time.Duration{s, 2 * s, 4 * s, 8 * s, 16 * s, 30 * s, 30 * s, 30 * s}, retries)
	assert.Equal(t, 30*time.Second, d.RetryAfter(1000), "no overflow after many failures")

	// The issuer comes back while a fetch hangs: that fetch ends within the
	// fetch timeout, and the next starts at most the backoff cap later.
	assert.Less(t, FetchTimeout+d.BackoffMax, 45*time.Second)
	assert.Less(t, d.MinGap+FetchTimeout, 45*time.Second)

	// A retry never waits longer than a refresh would.
	short := DefaultTiming(3 * time.Second)
	assert.Equal(t, 3*time.Second, short.RetryAfter(5))
	assert.Equal(t, time.Second, short.RetryAfter(1))
}
