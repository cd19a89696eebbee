package redisstore_test

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/otcgo/otc"
	"github.com/otcgo/otc/idempotency"
	"github.com/otcgo/otc/internal/redistest"
	"github.com/otcgo/otc/internal/testkit"
	"github.com/otcgo/otc/redisstore"
)

// roundTrips counts what a client sends to Redis: one per command sent
// alone, one per pipeline.
type roundTrips struct{ n atomic.Int64 }

func (rt *roundTrips) DialHook(next redis.DialHook) redis.DialHook { return next }

func (rt *roundTrips) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error {
		rt.n.Add(1)
		return next(ctx, cmd)
	}
}

func (rt *roundTrips) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return func(ctx context.Context, cmds []redis.Cmder) error {
		rt.n.Add(1)
		return next(ctx, cmds)
	}
}

// callBench serves Calculator.Add over OTC with a new call id per call.
type callBench struct {
	h http.Handler
	n int
}

func newCallBench(tb testing.TB, store otc.IdempotencyStore) *callBench {
	reg := otc.NewRegistry(&otc.RegistryOptions{Logger: slog.New(slog.DiscardHandler), Idempotency: store})
	require.NoError(tb, otc.Register(reg, otc.Tool{ID: "Calculator.Add", Version: "1.0.0", Description: "Adds two numbers together."}, testkit.Add))
	return &callBench{h: otc.NewHandler(reg, nil)}
}

func (cb *callBench) call(tb testing.TB) {
	cb.n++
	cb.callID(tb, fmt.Sprintf("rt-%d-%d", time.Now().UnixNano(), cb.n))
}

// callID makes one call with the given call id. It is safe for
// concurrent use.
func (cb *callBench) callID(tb testing.TB, id string) {
	body := `{"request":{"call_id":"` + id + `","tool_id":"Calculator.Add","input":{"a":10,"b":5}}}`
	req := httptest.NewRequest(http.MethodPost, "/tools/call", strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	rec := httptest.NewRecorder()
	cb.h.ServeHTTP(rec, req)
	if rec.Code != http.StatusOK || !strings.Contains(rec.Body.String(), `"value":15`) {
		tb.Fatalf("status %d: %.300s", rec.Code, rec.Body.String())
	}
}

// countedStore returns a store on the test's Redis whose client counts
// its round trips.
func countedStore(tb testing.TB) (*redisstore.IdempotencyStore, *roundTrips) {
	addr := redistest.Need(tb, redisSrv, redisError)
	client := redis.NewClient(&redis.Options{Addr: addr, ContextTimeoutEnabled: true})
	tb.Cleanup(func() { client.Close() })
	rt := &roundTrips{}
	client.AddHook(rt)
	return redisstore.NewIdempotencyStore(client, &redisstore.IdempotencyOptions{Prefix: "rt:" + tb.Name() + ":"}), rt
}

// TestRoundTripsPerCall: a call with a new call id costs Redis two round
// trips, the least it can: the claim (one script) before the tool runs,
// and the outcome (one script) after. A replay costs one.
func TestRoundTripsPerCall(t *testing.T) {
	store, rt := countedStore(t)
	cb := newCallBench(t, store)
	cb.call(t) // loads the scripts (EVALSHA, then EVAL once)
	const calls = 50
	before := rt.n.Load()
	for range calls {
		cb.call(t)
	}
	assert.Equal(t, int64(2*calls), rt.n.Load()-before, "round trips for %d calls", calls)

	replay := func() *httptest.ResponseRecorder {
		req := httptest.NewRequest(http.MethodPost, "/tools/call", strings.NewReader(`{"request":{"call_id":"rt-replay","tool_id":"Calculator.Add","input":{"a":10,"b":5}}}`))
		req.Header.Set("Content-Type", "application/json")
		rec := httptest.NewRecorder()
		cb.h.ServeHTTP(rec, req)
		return rec
	}
	replay()
	before = rt.n.Load()
	rec := replay()
	assert.Equal(t, "true", rec.Header().Get(otc.HeaderReplayed), rec.Body.String())
	assert.Equal(t, int64(1), rt.n.Load()-before, "a replay reads the outcome in one round trip")
}

// BenchmarkCall times an OTC call with a new call id through the handler
// with the in-memory store and with the Redis store on a local
// redis-server (loopback), in alternating blocks of 64 calls, and reports
// their ratio, the ratio to the memory store's call plus two PINGs (the
// floor of two round trips), and the Redis round trips per call.
//
//	go test -run '^$' -bench Call -benchmem ./redisstore
func BenchmarkCall(b *testing.B) {
	store, rt := countedStore(b)
	mem, red := newCallBench(b, idempotency.NewMemoryStore(nil)), newCallBench(b, store)
	red.call(b)
	// The floor of two round trips: two PINGs from a client of its own.
	ping := redis.NewClient(&redis.Options{Addr: redistest.Need(b, redisSrv, redisError)})
	b.Cleanup(func() { ping.Close() })
	const block = 64
	var tMem, tRed, tPing, cpuRed, cpuPing time.Duration
	var calls int64
	before := rt.n.Load()
	for i := 0; b.Loop(); i++ {
		if i%block != 0 {
			continue
		}
		start := time.Now()
		for range block {
			mem.call(b)
		}
		mid := time.Now()
		cpu0 := redisCPU(b, ping)
		for range block {
			red.call(b)
		}
		cpu1 := redisCPU(b, ping)
		end := time.Now()
		for range 2 * block {
			if err := ping.Ping(context.Background()).Err(); err != nil {
				b.Fatal(err)
			}
		}
		cpu2 := redisCPU(b, ping)
		tMem, tRed, tPing = tMem+mid.Sub(start), tRed+end.Sub(mid), tPing+time.Since(end)
		cpuRed, cpuPing = cpuRed+cpu1-cpu0, cpuPing+cpu2-cpu1
		calls += block
	}
	if tMem > 0 {
		// Redis's own CPU (user and system) per call, and per PING: the
		// cost of a round trip that does nothing.
		b.ReportMetric(float64(cpuRed.Nanoseconds())/1e3/float64(calls), "redis-cpu-µs/call")
		b.ReportMetric(float64(cpuPing.Nanoseconds())/1e3/float64(2*calls), "redis-cpu-µs/ping")
		b.ReportMetric(float64(tRed)/float64(tMem), "redis/memory")
		// What the Redis store adds beyond its two round trips.
		b.ReportMetric(float64(tRed)/float64(tMem+tPing), "redis/(memory+2pings)")
		b.ReportMetric(float64(tRed.Microseconds())/float64(calls), "µs/redis-call")
		b.ReportMetric(float64(rt.n.Load()-before)/float64(calls), "roundtrips/call")
	}
}

// redisCPU is the CPU time the Redis server has used (user and system),
// as INFO cpu reports it, to the microsecond. The INFO command's own cost
// is in it.
func redisCPU(tb testing.TB, c redis.UniversalClient) time.Duration {
	info, err := c.Info(context.Background(), "cpu").Result()
	if err != nil {
		tb.Fatal(err)
	}
	var total time.Duration
	for line := range strings.Lines(info) {
		k, v, ok := strings.Cut(strings.TrimSpace(line), ":")
		if ok && (k == "used_cpu_sys" || k == "used_cpu_user") {
			f, err := strconv.ParseFloat(v, 64)
			if err != nil {
				tb.Fatalf("INFO cpu: %s: %v", line, err)
			}
			total += time.Duration(f * 1e9)
		}
	}
	return total
}

// BenchmarkCallParallel makes calls with new call ids from 64 goroutines
// at once, as a replica under load does, through the handler with the
// Redis store on a local redis-server, then with the in-memory store, in
// alternating rounds of 100 ms, and reports the Redis store's calls/s as
// a ratio to the memory store's, Redis's CPU per call and the round trips
// per call: concurrent calls share round trips.
//
//	go test -run '^$' -bench CallParallel -benchtime 20x ./redisstore
func BenchmarkCallParallel(b *testing.B) {
	const workers = 64
	store, rt := countedStore(b)
	mem, red := newCallBench(b, idempotency.NewMemoryStore(nil)), newCallBench(b, store)
	info := redis.NewClient(&redis.Options{Addr: redistest.Need(b, redisSrv, redisError)})
	b.Cleanup(func() { info.Close() })
	var seq atomic.Int64
	round := func(cb *callBench) int64 {
		var done atomic.Int64
		stop := time.Now().Add(100 * time.Millisecond)
		var wg sync.WaitGroup
		for range workers {
			wg.Go(func() {
				for time.Now().Before(stop) {
					cb.callID(b, fmt.Sprintf("par-%d", seq.Add(1)))
					done.Add(1)
				}
			})
		}
		wg.Wait()
		return done.Load()
	}
	round(red) // warm up: connections, scripts
	var nMem, nRed int64
	var cpu time.Duration
	trips := rt.n.Load()
	for b.Loop() {
		nMem += round(mem)
		c0 := redisCPU(b, info)
		nRed += round(red)
		cpu += redisCPU(b, info) - c0
	}
	trips = rt.n.Load() - trips
	if nRed > 0 {
		b.ReportMetric(float64(nRed)/float64(nMem), "redis/memory-calls")
		b.ReportMetric(float64(cpu.Nanoseconds())/1e3/float64(nRed), "redis-cpu-µs/call")
		b.ReportMetric(float64(trips)/float64(nRed), "roundtrips/call")
	}
}

// TestRoundTripsShared: claims that reach the store while Redis is busy
// share round trips: 32 claims made while a DEBUG SLEEP holds Redis are
// sent in a few pipelines (the four in flight, then the rest together),
// not in 32 round trips, and each is still won once.
func TestRoundTripsShared(t *testing.T) {
	store, rt := countedStore(t)
	ctx := context.Background()
	_, c, err := store.Claim(ctx, "shared/warm", "fp") // the connections
	require.NoError(t, err)
	require.NoError(t, c.Release(ctx))
	admin := redis.NewClient(&redis.Options{Addr: redistest.Need(t, redisSrv, redisError)})
	t.Cleanup(func() { admin.Close() })
	slept := make(chan error, 1)
	go func() { slept <- admin.Do(context.Background(), "DEBUG", "SLEEP", "0.5").Err() }()
	time.Sleep(50 * time.Millisecond) // Redis is asleep
	before := rt.n.Load()
	var wg sync.WaitGroup
	claims := make([]otc.IdempotencyClaim, 32)
	prefix := fmt.Sprintf("shared/%d/", time.Now().UnixNano())
	for i := range claims {
		wg.Go(func() {
			var err error
			_, claims[i], err = store.Claim(ctx, prefix+strconv.Itoa(i), "fp")
			assert.NoError(t, err)
		})
	}
	wg.Wait()
	require.NoError(t, <-slept)
	trips := rt.n.Load() - before
	for i, c := range claims {
		require.NotNil(t, c, "claim %d of its own id is won", i)
		assert.NoError(t, c.Release(ctx))
	}
	assert.Less(t, trips, int64(16), "32 claims in %d round trips (one each, without sharing)", trips)
	t.Logf("32 claims in %d round trips", trips)
}

// TestClaimsBeforeRedis7: a Redis that refuses SET with both NX and GET
// (older than 7.0) is told by its syntax error; the store then claims by
// script, and keeps its promises.
func TestClaimsBeforeRedis7(t *testing.T) {
	addr := redistest.Need(t, redisSrv, redisError)
	client := redis.NewClient(&redis.Options{Addr: addr})
	t.Cleanup(func() { client.Close() })
	client.AddHook(old6{})
	s := redisstore.NewIdempotencyStore(client, &redisstore.IdempotencyOptions{Prefix: freshPrefix(t, client), Logger: slog.New(slog.DiscardHandler)})
	ctx := context.Background()
	rec, c, err := s.Claim(ctx, "alice/call-1", "fp")
	require.NoError(t, err)
	require.Nil(t, rec)
	require.NotNil(t, c, "claimed, by the script")
	rec, other, err := s.Claim(ctx, "alice/call-1", "fp")
	require.NoError(t, err)
	assert.Nil(t, other, "not twice")
	assert.Equal(t, &otc.IdempotencyRecord{Fingerprint: "fp"}, rec)
	require.NoError(t, c.Complete(ctx, []byte("out")))
	rec, _, err = s.Claim(ctx, "alice/call-1", "fp")
	require.NoError(t, err)
	assert.Equal(t, []byte("out"), rec.Outcome)
}

// old6 answers SET ... NX ... GET as a Redis 6 does: a syntax error.
type old6 struct{}

func (old6) DialHook(next redis.DialHook) redis.DialHook { return next }

func (old6) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error {
		if refuseSetGet(cmd) {
			return cmd.Err()
		}
		return next(ctx, cmd)
	}
}

func (old6) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return func(ctx context.Context, cmds []redis.Cmder) error {
		var rest []redis.Cmder
		for _, cmd := range cmds {
			if !refuseSetGet(cmd) {
				rest = append(rest, cmd)
			}
		}
		if len(rest) == 0 {
			return nil
		}
		return next(ctx, rest)
	}
}

// refuseSetGet sets a syntax error on cmd when it is SET with NX and GET.
func refuseSetGet(cmd redis.Cmder) bool {
	args := fmt.Sprint(cmd.Args()...)
	if cmd.Name() == "set" && strings.Contains(strings.ToLower(args), "nx") && strings.HasSuffix(strings.ToLower(args), "get") {
		cmd.SetErr(errors.New("ERR syntax error"))
		return true
	}
	return false
}
