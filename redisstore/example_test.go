package redisstore_test

import (
	"net/http"

	"github.com/redis/go-redis/v9"

	"github.com/otcgo/otc"
	"github.com/otcgo/otc/redisstore"
)

// Replicas of a tool server share one record of calls through Redis: a
// call retried with the same call_id on any replica is answered with the
// first call's outcome.
func Example() {
	opts, err := redis.ParseURL("redis://127.0.0.1:6379/0")
	if err != nil {
		panic(err)
	}
	reg := otc.NewRegistry(&otc.RegistryOptions{
		Idempotency: redisstore.New(redis.NewClient(opts), nil),
	})
	// Register tools on reg, then serve it.
	http.Handle("/", otc.NewHandler(reg, nil))
}
