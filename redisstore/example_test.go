package redisstore_test

import (
	"context"
	"log"
	"net/http"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/otcgo/otc"
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
		Idempotency: redisstore.New(redis.NewClient(opts), nil),
	})
	// Register tools on reg, then serve it.
	http.Handle("/", otc.NewHandler(reg, nil))
	// docs:end redis
}

// At exit, once the server has stopped, the outcomes Redis has not
// recorded yet get a few seconds to reach it.
func ExampleStore_Shutdown() {
	store := redisstore.New(redis.NewClient(&redis.Options{Addr: "127.0.0.1:6379"}), nil)
	// docs:start shutdown
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := store.Shutdown(ctx); err != nil {
		log.Printf("some outcomes were not recorded: %v", err)
	}
	// docs:end shutdown
}
