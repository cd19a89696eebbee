package redisstore_test

import (
	"context"
	"fmt"
	"net/http/httptest"
	"os"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/otcgo/otc"
	"github.com/otcgo/otc/internal/redistest"
	"github.com/otcgo/otc/internal/testkit"
	"github.com/otcgo/otc/redisstore"
	"github.com/otcgo/otc/tasks"
)

// The cluster tests run against a real Redis Cluster of three masters,
// started from redis-server in cluster mode and joined with redis-cli
// --cluster create, once, by the first test that needs it.

// sharedCluster is a cluster the tests of this package start once, when
// the first needs it, and TestMain stops.
type sharedCluster struct {
	masters, replicas int
	once              sync.Once
	c                 *redistest.Cluster
	err               error
}

// need returns the cluster, or ends the test: it skips without
// redis-server, or fails when OTC_REQUIRE_REDIS is 1.
func (s *sharedCluster) need(t *testing.T) *redistest.Cluster {
	t.Helper()
	s.once.Do(func() { s.c, s.err = redistest.StartCluster(s.masters, s.replicas) })
	if s.c == nil {
		failOrSkip(t, s.err)
	}
	return s.c
}

// stop stops the cluster, if it was started.
func (s *sharedCluster) stop() {
	if s.c != nil {
		s.c.Stop()
	}
}

var (
	// plainCluster has three masters.
	plainCluster = &sharedCluster{masters: 3}
	// replicatedCluster has three masters, each with a replica, for the
	// test that fails masters over.
	replicatedCluster = &sharedCluster{masters: 3, replicas: 1}
)

// needCluster returns a client of plainCluster.
func needCluster(t *testing.T) *redis.ClusterClient {
	t.Helper()
	c := redis.NewClusterClient(&redis.ClusterOptions{Addrs: plainCluster.need(t).Addrs})
	t.Cleanup(func() { c.Close() })
	return c
}

// failOrSkip ends a test that could not start its cluster: it skips, or
// fails when OTC_REQUIRE_REDIS is 1.
func failOrSkip(t *testing.T, err error) {
	t.Helper()
	if os.Getenv("OTC_REQUIRE_REDIS") == "1" {
		t.Fatalf("OTC_REQUIRE_REDIS=1 but no Redis Cluster could be started: %v", err)
	}
	t.Skipf("no Redis Cluster: %v", err)
}

// clusterPrefix is a key prefix no other test or run uses.
func clusterPrefix(t *testing.T) string {
	return fmt.Sprintf("%s:%d:", t.Name(), time.Now().UnixNano())
}

// mastersHolding counts the masters that hold at least one key under
// prefix.
func mastersHolding(t *testing.T, c *redis.ClusterClient, prefix string) int {
	t.Helper()
	var mu sync.Mutex
	n := 0
	require.NoError(t, c.ForEachMaster(context.Background(), func(ctx context.Context, m *redis.Client) error {
		keys, err := m.Keys(ctx, prefix+"*").Result()
		if err == nil && len(keys) > 0 {
			mu.Lock()
			n++
			mu.Unlock()
		}
		return err
	}))
	return n
}

// TestClusterTaskStore: the task store keeps its promises on a Redis
// Cluster (each task's keys and its owner's counts are in one slot).
func TestClusterTaskStore(t *testing.T) {
	client := needCluster(t)
	testkit.TaskStoreContract(t, func(t *testing.T, l testkit.TaskLimits) tasks.Store {
		return redisstore.NewTaskStore(client, &redisstore.TaskOptions{Prefix: clusterPrefix(t), TTL: l.TTL, Lease: l.Lease,
			MaxTasksPerOwner: l.PerOwner, MaxRunningPerOwner: l.Running, MaxWebhooksPerOwner: l.Webhooks, MaxResultBytes: l.MaxResult, MaxHistory: l.MaxHistory})
	})
	// Many tasks of one store: each task's key is in a slot of its own.
	prefix := clusterPrefix(t)
	s := redisstore.NewTaskStore(client, &redisstore.TaskOptions{Prefix: prefix})
	for range 24 {
		_, err := s.Create(context.Background(), &tasks.Task{ID: otc.NewCallID(), Owner: "alice", Status: tasks.Working})
		require.NoError(t, err)
	}
	assert.Equal(t, 3, mastersHolding(t, client, prefix), "the tasks spread over every master")
}

// TestClusterClaims: on a Redis Cluster, claims of many keys (spread over
// every master) are each won once, completed, and replayed; a claim in
// flight is not claimed twice.
func TestClusterClaims(t *testing.T) {
	client := needCluster(t)
	ctx := context.Background()
	prefix := clusterPrefix(t)
	s := redisstore.NewIdempotencyStore(client, &redisstore.IdempotencyOptions{Prefix: prefix})
	const keys = 48
	for i := range keys {
		key := "caller/call-" + strconv.Itoa(i)
		var wg sync.WaitGroup
		won := make(chan otc.IdempotencyClaim, 4)
		for range 4 {
			wg.Go(func() {
				rec, c, err := s.Claim(ctx, key, "Tool@1.0.0 fp")
				assert.NoError(t, err)
				if c != nil {
					won <- c
				} else {
					assert.NotNil(t, rec, "a claim that is not won finds the record")
				}
			})
		}
		wg.Wait()
		close(won)
		var claims []otc.IdempotencyClaim
		for c := range won {
			claims = append(claims, c)
		}
		require.Len(t, claims, 1, "one of four concurrent claims of %s wins", key)
		require.NoError(t, claims[0].Complete(ctx, []byte("outcome "+key)))
		rec, c, err := s.Claim(ctx, key, "x")
		require.NoError(t, err)
		assert.Nil(t, c)
		assert.Equal(t, &otc.IdempotencyRecord{Fingerprint: "Tool@1.0.0 fp", Done: true, Outcome: []byte("outcome " + key)}, rec)
	}
	assert.Equal(t, 3, mastersHolding(t, client, prefix), "the claims spread over every master")
}

// TestClusterThroughTheHandler: a registry whose idempotency store is on a
// Redis Cluster runs each call id once, however many times it is sent at
// once.
func TestClusterThroughTheHandler(t *testing.T) {
	client := needCluster(t)
	store := redisstore.NewIdempotencyStore(client, &redisstore.IdempotencyOptions{Prefix: clusterPrefix(t), PollInterval: 10 * time.Millisecond})
	counter := clusterPrefix(t) + "runs"
	reg, err := newCountingRegistry(client, store, counter)
	require.NoError(t, err)
	srv := httptest.NewServer(otc.NewHandler(reg, nil))
	t.Cleanup(srv.Close)

	checkOneRun(t, []answer{call(t, srv.URL, "seq", `{}`), call(t, srv.URL, "seq", `{}`)}, "seq", 1)
	checkOneRun(t, concurrently(t, 8, []string{srv.URL}, "concurrent", `{"sleep_ms":200}`), "concurrent", 2)
	assert.Equal(t, 2, runs(t, client, counter), "one run per call id")
}
