package main

import (
	"fmt"
	"strconv"
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
	l, err := parseRateLimit(spec)
	if err != nil {
		return nil, fmt.Errorf("OTC_RATE_LIMIT: %w", err)
	}
	return ratelimit.New(&ratelimit.Options{All: l, Store: store})
}

// parseRateLimit reads "N/s", "N/m" or "N/h", with an optional
// ",burst=N" (the burst is N by default, at least 1).
func parseRateLimit(spec string) (ratelimit.Limit, error) {
	rate, rest, _ := strings.Cut(spec, ",")
	n, unit, ok := strings.Cut(strings.TrimSpace(rate), "/")
	count, err := strconv.ParseFloat(n, 64)
	per := map[string]float64{"s": 1, "m": 60, "h": 3600}[unit]
	if !ok || err != nil || per == 0 || count <= 0 {
		return ratelimit.Limit{}, fmt.Errorf("%q is not a rate such as 20/s, 600/m or 3600/h, with an optional ,burst=N", spec)
	}
	l := ratelimit.Limit{Rate: count / per, Burst: max(int(count), 1)}
	if rest = strings.TrimSpace(rest); rest != "" {
		b, ok := strings.CutPrefix(rest, "burst=")
		burst, err := strconv.Atoi(b)
		if !ok || err != nil || burst < 1 {
			return ratelimit.Limit{}, fmt.Errorf("%q: after the rate (such as 20/s), only ,burst=N (a whole number, 1 or more)", spec)
		}
		l.Burst = burst
	}
	return l, nil
}
