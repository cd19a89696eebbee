package oauth

import (
	"context"
	"time"

	"github.com/otcgo/otc/internal/jwks"
)

// TimingForTest shortens the intervals of fetching metadata and keys,
// which are seconds in production, so that the black-box tests see a
// rotation, a backoff or a bounded wait in milliseconds. A zero field
// keeps its default.
type TimingForTest struct {
	MinGap     time.Duration // least time between a fetch and one an unknown kid asks for
	BackoffMin time.Duration // retry after the first failed fetch in a row
	BackoffMax time.Duration // cap of the doubling retries
	Wait       time.Duration // longest a request waits for a fetch
}

// NewForTest is New with the intervals of fetching shortened.
func NewForTest(ctx context.Context, opts Options, timing TimingForTest) (*Authenticator, error) {
	t := jwks.DefaultTiming(opts.RefreshInterval).With(timing.MinGap, timing.BackoffMin, timing.BackoffMax, timing.Wait)
	return newAuthenticator(ctx, opts, t)
}

// CacheStatsForTest returns the number of introspection answers cached
// and their bytes.
func CacheStatsForTest(a *Authenticator) (entries, size int) {
	if a.intro == nil {
		return 0, 0
	}
	return a.intro.cache.stats()
}

// TokenCacheLenForTest returns the number of verified JWTs remembered.
func TokenCacheLenForTest(a *Authenticator) int { return a.cache.Len() }
