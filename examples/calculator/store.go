package main

import (
	"context"
	"fmt"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/otcgo/otc"
	"github.com/otcgo/otc/redisstore"
)

// idempotencyStore returns the store that records calls by call id, and
// its name for the log: in memory, unless OTC_REDIS_URL names a Redis
// server ("redis://127.0.0.1:6379/0") to share the record with other
// replicas. OTC_REDIS_LEASE sets how long a claim lives unless renewed
// (30s by default): a call in flight on a replica that died runs again
// when a retry comes after it. It fails when that server cannot be
// reached, rather than serve without the record the operator asked for.
func idempotencyStore(ctx context.Context, getenv func(string) string) (otc.IdempotencyStore, string, error) {
	url := getenv("OTC_REDIS_URL")
	if url == "" {
		return otc.NewMemoryStore(nil), "memory", nil
	}
	var lease time.Duration
	if v := getenv("OTC_REDIS_LEASE"); v != "" {
		d, err := time.ParseDuration(v)
		if err != nil || d < time.Second {
			return nil, "", fmt.Errorf("OTC_REDIS_LEASE: %q is not a duration of a second or more (such as 30s)", v)
		}
		lease = d
	}
	opts, err := redis.ParseURL(url)
	if err != nil {
		return nil, "", fmt.Errorf("OTC_REDIS_URL: %w (the form is redis://host:port/db)", err)
	}
	client := redis.NewClient(opts)
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	if err := client.Ping(ctx).Err(); err != nil {
		client.Close()
		return nil, "", fmt.Errorf("OTC_REDIS_URL: cannot reach Redis at %s: %w", opts.Addr, err)
	}
	return redisstore.New(client, &redisstore.Options{Lease: lease}), "redis", nil
}

// storeShutdown is how long the Redis store may go on writing outcomes
// once the server has stopped serving.
const storeShutdown = 5 * time.Second
