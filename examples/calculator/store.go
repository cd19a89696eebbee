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
// replicas. It fails when that server cannot be reached, rather than
// serve without the record the operator asked for.
func idempotencyStore(ctx context.Context, getenv func(string) string) (otc.IdempotencyStore, string, error) {
	url := getenv("OTC_REDIS_URL")
	if url == "" {
		return otc.NewMemoryStore(nil), "memory", nil
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
	return redisstore.New(client, nil), "redis", nil
}
