package redisstore_test

import (
	"context"
	"log"
	"net/http"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/otcgo/otc"
	"github.com/otcgo/otc/mcp"
	"github.com/otcgo/otc/ratelimit"
	"github.com/otcgo/otc/redisstore"
)

// Replicas of a tool server share one record of calls through Redis: a
// call retried with the same call_id on any replica is answered with the
// first call's outcome.
func Example() {
	// docs:start redis
	opts, err := redis.ParseURL("redis://127.0.0.1:6379/0")
	if err != nil {
		panic(err)
	}
	reg := otc.NewRegistry(&otc.RegistryOptions{
		Idempotency: redisstore.NewIdempotencyStore(redis.NewClient(opts), nil),
	})
	// Register tools on reg, then serve it.
	http.Handle("/", otc.NewHandler(reg, nil))
	// docs:end redis
}

// At exit, once the server has stopped, the outcomes Redis has not
// recorded yet get a few seconds to reach it.
func ExampleIdempotencyStore_Shutdown() {
	store := redisstore.NewIdempotencyStore(redis.NewClient(&redis.Options{Addr: "127.0.0.1:6379"}), nil)
	// docs:start shutdown
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := store.Shutdown(ctx); err != nil {
		log.Printf("some outcomes were not recorded: %v", err)
	}
	// docs:end shutdown
}

// Rate limits that hold across the replicas: each caller's allowance is
// kept in Redis.
func ExampleNewRateStore() {
	client := redis.NewClient(&redis.Options{Addr: "127.0.0.1:6379"})
	// docs:start rate
	limit, err := ratelimit.New(&ratelimit.Options{
		All:   ratelimit.Limit{Rate: 10, Burst: 20},
		Store: redisstore.NewRateStore(client, nil),
	})
	if err != nil {
		panic(err)
	}
	reg := otc.NewRegistry(&otc.RegistryOptions{Middleware: []otc.Middleware{limit}})
	// docs:end rate
	_ = reg
}

// Redis Cluster: give the stores a cluster client.
func Example_cluster() {
	// docs:start cluster
	client := redis.NewClusterClient(&redis.ClusterOptions{
		Addrs: []string{"10.0.0.1:6379", "10.0.0.2:6379", "10.0.0.3:6379"},
	})
	reg := otc.NewRegistry(&otc.RegistryOptions{Idempotency: redisstore.NewIdempotencyStore(client, nil)})
	// docs:end cluster
	_ = reg
}

// Replicas of an MCP server share its sessions: a client whose requests
// and stream land on any replica is told of a change whichever replica
// made it, with no sticky routing. Every replica has the same keys, which
// seal the session ids.
func ExampleNewSessionStore() {
	reg := otc.NewRegistry(nil)
	keys := [][]byte{make([]byte, mcp.RequestStateKeySize)} // 32 random bytes, the same on every replica
	// docs:start sessions
	rdb := redis.NewClient(&redis.Options{Addr: "127.0.0.1:6379"})
	h := mcp.NewHandler(reg, &mcp.Options{
		Sessions:         redisstore.NewSessionStore(rdb, nil),
		RequestStateKeys: keys,
	})
	http.Handle("/mcp", h)
	// docs:end sessions
}
