package redisstore_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/otcgo/otc"
	"github.com/otcgo/otc/internal/testkit"
	"github.com/otcgo/otc/ratelimit"
	"github.com/otcgo/otc/redisstore"
)

// rateContract checks a RateStore on client: a burst, then one call per
// interval; a refused call says how long to wait and takes nothing; keys
// apart; and two stores (two replicas) taking from one allowance at once
// are admitted exactly Burst times between them.
func rateContract(t *testing.T, client redis.UniversalClient, prefix string) {
	ctx := context.Background()
	a := redisstore.NewRateStore(client, &redisstore.RateOptions{Prefix: prefix})
	b := redisstore.NewRateStore(client, &redisstore.RateOptions{Prefix: prefix})
	// One each second: the takes below that must fall within one
	// interval have a second, which load does not use up.
	l := ratelimit.Limit{Rate: 1, Burst: 3}
	for i := range 3 {
		ok, _, err := a.Take(ctx, "alice", l)
		require.NoError(t, err)
		assert.True(t, ok, "call %d of the burst", i+1)
	}
	ok, after, err := b.Take(ctx, "alice", l)
	require.NoError(t, err)
	assert.False(t, ok, "the other replica sees the same allowance")
	assert.Positive(t, after)
	assert.LessOrEqual(t, after, time.Second, "the wait for the next, at most one interval")
	ok, _, _ = a.Take(ctx, "bob", l)
	assert.True(t, ok, "each caller has its own")
	time.Sleep(after + 10*time.Millisecond)
	ok, _, _ = b.Take(ctx, "alice", l)
	assert.True(t, ok, "one more after the interval")
	ok, _, _ = a.Take(ctx, "alice", l)
	assert.False(t, ok)

	var admitted atomic.Int64
	var wg sync.WaitGroup
	slow := ratelimit.Limit{Rate: 0.001, Burst: 40}
	for i := range 200 {
		s := a
		if i%2 == 1 {
			s = b
		}
		wg.Go(func() {
			ok, _, err := s.Take(ctx, "carol", slow)
			assert.NoError(t, err)
			if ok {
				admitted.Add(1)
			}
		})
	}
	wg.Wait()
	assert.Equal(t, int64(40), admitted.Load(), "two replicas admit the burst between them, once")

	_, _, err = a.Take(ctx, "x", ratelimit.Limit{})
	assert.ErrorIs(t, err, ratelimit.ErrBadLimit)

	// A charge takes from the allowance whether or not it fits, at most
	// one burst below nothing, and the other replica sees it.
	require.NoError(t, a.Charge(ctx, "dave", slow, 39))
	ok, _, _ = b.Take(ctx, "dave", slow)
	assert.True(t, ok, "the one call the charge left")
	ok, _, _ = b.Take(ctx, "dave", slow)
	assert.False(t, ok)
	require.NoError(t, a.Charge(ctx, "dave", slow, 1e9))
	_, after, _ = b.Take(ctx, "dave", slow)
	assert.InDelta(t, float64(41*time.Second*1000), float64(after), float64(time.Second), "one burst below nothing at most: (80+1-40) intervals of 1000 s")
	assert.ErrorIs(t, a.Charge(ctx, "dave", ratelimit.Limit{}, 1), ratelimit.ErrBadLimit)
}

func TestRateStore(t *testing.T) {
	client := needRedis(t)
	rateContract(t, client, freshPrefix(t, client))
}

func TestClusterRateStore(t *testing.T) {
	client := needCluster(t)
	rateContract(t, client, clusterPrefix(t))
}

// TestRateLimitAcrossReplicas: two replicas whose rate limits share Redis
// hold one caller to one limit, whichever replica its calls reach.
func TestRateLimitAcrossReplicas(t *testing.T) {
	client := needRedis(t)
	prefix := freshPrefix(t, client)
	var urls []string
	for range 2 {
		limit, err := ratelimit.New(&ratelimit.Options{All: ratelimit.Limit{Rate: 0.01, Burst: 4},
			Store: redisstore.NewRateStore(client, &redisstore.RateOptions{Prefix: prefix})})
		require.NoError(t, err)
		srv := httptest.NewServer(otc.NewHandler(testkit.NewAddRegistry(t, limit), nil))
		t.Cleanup(srv.Close)
		urls = append(urls, srv.URL)
	}
	var codes []int
	for i := range 8 {
		resp, err := http.Post(urls[i%2]+"/tools/call", "application/json", strings.NewReader(`{"request":{"tool_id":"Calculator.Add","input":{"a":1,"b":2}}}`))
		require.NoError(t, err)
		resp.Body.Close()
		codes = append(codes, resp.StatusCode)
		if resp.StatusCode == http.StatusTooManyRequests {
			assert.NotEmpty(t, resp.Header.Get("Retry-After"))
		}
	}
	assert.Equal(t, []int{200, 200, 200, 200, 429, 429, 429, 429}, codes)
}

// BenchmarkRateTake checks a rate limit from 64 goroutines at once, each
// its own caller, through a RateStore on the local redis-server, and
// reports the round trips and Redis's CPU per check: concurrent checks
// share round trips.
//
//	go test -run '^$' -bench RateTake ./redisstore
func BenchmarkRateTake(b *testing.B) {
	addr := needRedis(b).Options().Addr
	client := redis.NewClient(&redis.Options{Addr: addr, ContextTimeoutEnabled: true})
	b.Cleanup(func() { client.Close() })
	rt := &roundTrips{}
	client.AddHook(rt)
	rs := redisstore.NewRateStore(client, &redisstore.RateOptions{Prefix: "bench-rate:"})
	l := ratelimit.Limit{Rate: 1e6, Burst: 1_000_000}
	var n atomic.Int64
	trips, cpu := rt.n.Load(), redisCPU(b, client)
	b.SetParallelism(32) // 64 goroutines on 2 cores
	b.RunParallel(func(pb *testing.PB) {
		key := "caller-" + otc.NewCallID()
		for pb.Next() {
			if ok, _, err := rs.Take(context.Background(), key, l); err != nil || !ok {
				b.Errorf("%v %v", ok, err)
				return
			}
			n.Add(1)
		}
	})
	cpu = redisCPU(b, client) - cpu
	trips = rt.n.Load() - trips - 1 // the INFO
	b.ReportMetric(float64(trips)/float64(n.Load()), "roundtrips/check")
	b.ReportMetric(float64(cpu.Nanoseconds())/1e3/float64(n.Load()), "redis-cpu-µs/check")
}
