package main

import (
	"fmt"
	"strings"

	"github.com/otcgo/otc"
	"github.com/otcgo/otc/ratelimit"
)

// rateLimitFromEnv reads OTC_RATE_LIMIT, the limit of every caller's calls
// ("20/s", "600/m" or "3600/h", with an optional ",burst=N"; none when
// empty). A caller is its identity, or its client address as the site's
// trusted proxies tell it (see siteFromEnv). The limit is kept in store:
// in Redis when OTC_REDIS_URL is set, so that it holds across the
// replicas, else in this process. It returns nil without a limit.
func rateLimitFromEnv(getenv func(string) string, store ratelimit.Store) (otc.Middleware, error) {
	spec := strings.TrimSpace(getenv("OTC_RATE_LIMIT"))
	if spec == "" {
		return nil, nil
	}
	l, err := ratelimit.ParseLimit(spec)
	if err != nil {
		return nil, fmt.Errorf("OTC_RATE_LIMIT: %w", err)
	}
	return ratelimit.New(&ratelimit.Options{All: l, Store: store})
}
