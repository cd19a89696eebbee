package main

import (
	"context"
	"encoding/base64"
	"encoding/hex"
	"fmt"
	"log/slog"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/otcgo/otc"
	"github.com/otcgo/otc/idempotency"
	"github.com/otcgo/otc/mcp"
	"github.com/otcgo/otc/ratelimit"
	"github.com/otcgo/otc/redisstore"
	"github.com/otcgo/otc/sessions"
	"github.com/otcgo/otc/tasks"
)

// shared is what the replicas of a deployment share, so that any of them
// answers for what another began: the record of calls by call id, the
// tasks, and the keys that seal the requestState of an input_required
// round, the MCP sessions and the calculator's memory.
type shared struct {
	idem      otc.IdempotencyStore
	tasks     tasks.Store // nil: in this process (the mcp package's default)
	stateKeys [][]byte    // nil: a key of this process
	rate      ratelimit.Store
	// sessions keeps the MCP sessions (nil: the handler's own, in
	// memory), and memory the number of calc://memory (nil: in memory).
	sessions sessions.Store
	memory   register
	name     string // "memory" or "redis", for the log
}

// sharedFromEnv reads what the replicas share from the environment: in
// memory, unless OTC_REDIS_URL names a Redis server
// ("redis://127.0.0.1:6379/0") that keeps the record of calls and the
// tasks for every replica, or OTC_REDIS_CLUSTER names the nodes of a
// Redis Cluster ("10.0.0.1:6379,10.0.0.2:6379,10.0.0.3:6379") that does. OTC_REDIS_LEASE sets how long a claim, or a
// task's lease, lives unless renewed (30s by default): a call in flight
// on a replica that died runs again when a retry comes after it, and its
// task is shown failed (lost). OTC_REQUEST_STATE_KEYS holds the keys that
// seal requestStates (see requestStateKeys). It fails when Redis cannot
// be reached, rather than serve without the record the operator asked
// for.
func sharedFromEnv(ctx context.Context, getenv func(string) string) (shared, error) {
	keys, err := requestStateKeys(getenv("OTC_REQUEST_STATE_KEYS"))
	if err != nil {
		return shared{}, err
	}
	url, nodes := getenv("OTC_REDIS_URL"), strings.TrimSpace(getenv("OTC_REDIS_CLUSTER"))
	if url != "" && nodes != "" {
		return shared{}, fmt.Errorf("OTC_REDIS_URL and OTC_REDIS_CLUSTER are both set: give one Redis, or the nodes of one cluster")
	}
	if url == "" && nodes == "" {
		return shared{idem: idempotency.NewMemoryStore(nil), stateKeys: keys, rate: ratelimit.NewMemoryStore(nil), name: "memory"}, nil
	}
	var lease time.Duration
	if v := getenv("OTC_REDIS_LEASE"); v != "" {
		d, err := time.ParseDuration(v)
		if err != nil || d < time.Second {
			return shared{}, fmt.Errorf("OTC_REDIS_LEASE: %q is not a duration of a second or more (such as 30s)", v)
		}
		lease = d
	}
	var client redis.UniversalClient
	name, where := "OTC_REDIS_URL", ""
	if nodes != "" {
		var addrs []string
		for a := range strings.SplitSeq(nodes, ",") {
			if a = strings.TrimSpace(a); a != "" {
				addrs = append(addrs, a)
			}
		}
		client = redis.NewClusterClient(&redis.ClusterOptions{Addrs: addrs})
		name, where = "OTC_REDIS_CLUSTER", "the Redis Cluster at "+strings.Join(addrs, ",")
	} else {
		opts, err := redis.ParseURL(url)
		if err != nil {
			return shared{}, fmt.Errorf("OTC_REDIS_URL: %w (the form is redis://host:port/db)", err)
		}
		client = redis.NewClient(opts)
		where = "Redis at " + opts.Addr
	}
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	if err := client.Ping(ctx).Err(); err != nil {
		client.Close()
		return shared{}, fmt.Errorf("%s: cannot reach %s: %w", name, where, err)
	}
	return shared{
		idem:      redisstore.NewIdempotencyStore(client, &redisstore.IdempotencyOptions{Lease: lease}),
		tasks:     redisstore.NewTaskStore(client, &redisstore.TaskOptions{Lease: lease}),
		stateKeys: keys,
		rate:      redisstore.NewRateStore(client, nil),
		sessions:  redisstore.NewSessionStore(client, nil),
		memory:    redisRegister{client: client, key: "otc:calculator:memory"},
		name:      "redis",
	}, nil
}

// requestStateKeys reads OTC_REQUEST_STATE_KEYS: comma-separated keys of
// 32 random bytes each, written in hex (64 digits) or base64, the same on
// every replica. The first seals the requestStates the server issues; all
// open them, so that a key is rotated by putting the new one first and
// dropping the old one once the states it sealed have expired (15 minutes).
// Empty means a random key made for this process.
func requestStateKeys(v string) ([][]byte, error) {
	if strings.TrimSpace(v) == "" {
		return nil, nil
	}
	var keys [][]byte
	for i, s := range strings.Split(v, ",") {
		s = strings.TrimSpace(s)
		k, err := hex.DecodeString(s)
		if err != nil {
			if k, err = base64.StdEncoding.DecodeString(s); err != nil {
				k, err = base64.RawURLEncoding.DecodeString(strings.TrimRight(s, "="))
			}
		}
		if err != nil || len(k) != mcp.RequestStateKeySize {
			return nil, fmt.Errorf("OTC_REQUEST_STATE_KEYS: key %d is not %d bytes in hex or base64 (make one with: openssl rand -hex 32)", i+1, mcp.RequestStateKeySize)
		}
		keys = append(keys, k)
	}
	return keys, nil
}

// mcpOptions are the options of the MCP handler (or stdio server) of a
// server whose replicas share sh.
func (sh shared) mcpOptions(logger *slog.Logger) *mcp.Options {
	o := &mcp.Options{Name: "calculator", Version: serverVersion, Logger: logger, RequestStateKeys: sh.stateKeys, Sessions: sh.sessions}
	if sh.tasks != nil {
		o.Tasks = &tasks.Options{Store: sh.tasks}
	}
	return o
}

// storeShutdown is how long the Redis store may go on writing outcomes
// once the server has stopped serving.
const storeShutdown = 5 * time.Second
