package redisstore_test

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/otcgo/otc"
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
	body := fmt.Sprintf(`{"request":{"call_id":"rt-%d-%d","tool_id":"Calculator.Add","input":{"a":10,"b":5}}}`, time.Now().UnixNano(), cb.n)
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
func countedStore(tb testing.TB) (*redisstore.Store, *roundTrips) {
	addr := redistest.Need(tb, redisSrv, redisError)
	client := redis.NewClient(&redis.Options{Addr: addr, ContextTimeoutEnabled: true})
	tb.Cleanup(func() { client.Close() })
	rt := &roundTrips{}
	client.AddHook(rt)
	return redisstore.New(client, &redisstore.Options{Prefix: "rt:" + tb.Name() + ":"}), rt
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
	mem, red := newCallBench(b, otc.NewMemoryStore(nil)), newCallBench(b, store)
	red.call(b)
	// The floor of two round trips: two PINGs from a client of its own.
	ping := redis.NewClient(&redis.Options{Addr: redistest.Need(b, redisSrv, redisError)})
	b.Cleanup(func() { ping.Close() })
	const block = 64
	var tMem, tRed, tPing time.Duration
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
		for range block {
			red.call(b)
		}
		end := time.Now()
		for range 2 * block {
			if err := ping.Ping(context.Background()).Err(); err != nil {
				b.Fatal(err)
			}
		}
		tMem, tRed, tPing = tMem+mid.Sub(start), tRed+end.Sub(mid), tPing+time.Since(end)
		calls += block
	}
	if tMem > 0 {
		b.ReportMetric(float64(tRed)/float64(tMem), "redis/memory")
		// What the Redis store adds beyond its two round trips.
		b.ReportMetric(float64(tRed)/float64(tMem+tPing), "redis/(memory+2pings)")
		b.ReportMetric(float64(tRed.Microseconds())/float64(calls), "µs/redis-call")
		b.ReportMetric(float64(rt.n.Load()-before)/float64(calls), "roundtrips/call")
	}
}
