package redisstore_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/otcgo/otc"
	"github.com/otcgo/otc/redisstore"
)

// newStore returns a store with a prefix of its own, so that tests do not
// see each other's keys.
func newStore(t *testing.T, client *redis.Client, opts redisstore.Options) *redisstore.Store {
	t.Helper()
	opts.Prefix = strings.ReplaceAll(t.Name(), "/", ":") + ":"
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	return redisstore.New(client, &opts)
}

func TestClaimCompleteReplay(t *testing.T) {
	client := needRedis(t)
	ctx := context.Background()
	s := newStore(t, client, redisstore.Options{})

	rec, c, err := s.Claim(ctx, "alice/call-1", "Tool@1.0.0 fp")
	require.NoError(t, err)
	require.Nil(t, rec)
	require.NotNil(t, c)

	rec, other, err := s.Claim(ctx, "alice/call-1", "Tool@1.0.0 other")
	require.NoError(t, err)
	assert.Nil(t, other, "a key in flight is not claimed twice")
	assert.Equal(t, &otc.IdempotencyRecord{Fingerprint: "Tool@1.0.0 fp"}, rec)

	require.NoError(t, c.Complete(ctx, []byte("outcome\x00bytes")))
	rec, other, err = s.Claim(ctx, "alice/call-1", "x")
	require.NoError(t, err)
	assert.Nil(t, other)
	assert.Equal(t, &otc.IdempotencyRecord{Fingerprint: "Tool@1.0.0 fp", Done: true, Outcome: []byte("outcome\x00bytes")}, rec)

	assert.ErrorIs(t, c.Complete(ctx, []byte("again")), otc.ErrClaimLost)
	assert.ErrorIs(t, c.Release(ctx), otc.ErrClaimLost)

	// The key in Redis is the prefix and a SHA-256, not the caller's id.
	keys, err := client.Keys(ctx, "TestClaimCompleteReplay:*").Result()
	require.NoError(t, err)
	require.Len(t, keys, 1)
	assert.Len(t, keys[0], len("TestClaimCompleteReplay:")+64)
	ttl, err := client.PTTL(ctx, keys[0]).Result()
	require.NoError(t, err)
	assert.InDelta(t, otc.DefaultIdempotencyTTL.Hours(), ttl.Hours(), 0.01, "an outcome is kept for the TTL")
}

func TestConcurrentClaimsOneWins(t *testing.T) {
	client := needRedis(t)
	s := newStore(t, client, redisstore.Options{})
	const n = 32
	var wg sync.WaitGroup
	claims := make(chan otc.IdempotencyClaim, n)
	for range n {
		wg.Go(func() {
			_, c, err := s.Claim(context.Background(), "k", "fp")
			assert.NoError(t, err)
			if c != nil {
				claims <- c
			}
		})
	}
	wg.Wait()
	close(claims)
	var won []otc.IdempotencyClaim
	for c := range claims {
		won = append(won, c)
	}
	require.Len(t, won, 1, "exactly one of the concurrent claims wins")
	require.NoError(t, won[0].Release(context.Background()))
}

func TestWaitWakes(t *testing.T) {
	client := needRedis(t)
	ctx := context.Background()
	s := newStore(t, client, redisstore.Options{PollInterval: 10 * time.Millisecond})
	for _, end := range []string{"complete", "release"} {
		t.Run(end, func(t *testing.T) {
			_, c, err := s.Claim(ctx, end, "fp")
			require.NoError(t, err)
			waited := make(chan error)
			go func() { waited <- s.Wait(ctx, end) }()
			select {
			case err := <-waited:
				t.Fatalf("Wait returned while the call was in flight: %v", err)
			case <-time.After(50 * time.Millisecond):
			}
			if end == "complete" {
				require.NoError(t, c.Complete(ctx, []byte("o")))
			} else {
				require.NoError(t, c.Release(ctx))
			}
			require.NoError(t, <-waited)
			rec, c2, err := s.Claim(ctx, end, "fp")
			require.NoError(t, err)
			if end == "complete" {
				assert.True(t, rec.Done)
			} else {
				assert.Nil(t, rec, "a released key is free")
				require.NoError(t, c2.Release(ctx))
			}
		})
	}
	wctx, cancel := context.WithTimeout(ctx, 30*time.Millisecond)
	defer cancel()
	_, c, err := s.Claim(ctx, "never", "fp")
	require.NoError(t, err)
	assert.ErrorIs(t, s.Wait(wctx, "never"), context.DeadlineExceeded)
	require.NoError(t, c.Release(ctx))
	assert.NoError(t, s.Wait(ctx, "absent"))
}

func TestLeaseRenewedWhileRunning(t *testing.T) {
	client := needRedis(t)
	ctx := context.Background()
	s := newStore(t, client, redisstore.Options{Lease: 300 * time.Millisecond})
	_, c, err := s.Claim(ctx, "long", "fp")
	require.NoError(t, err)
	time.Sleep(time.Second) // more than three leases
	rec, other, err := s.Claim(ctx, "long", "fp")
	require.NoError(t, err)
	assert.Nil(t, other, "the renewed claim still holds the key")
	require.NotNil(t, rec)
	assert.False(t, rec.Done)
	require.NoError(t, c.Complete(ctx, []byte("o")))
}

func TestExpiredLeaseLetsAnotherRun(t *testing.T) {
	client := needRedis(t)
	ctx := context.Background()
	s := newStore(t, client, redisstore.Options{Lease: 200 * time.Millisecond, PollInterval: 10 * time.Millisecond})
	_, c, err := s.Claim(ctx, "crash", "fp")
	require.NoError(t, err)
	// The replica "dies": its record loses the lease. A waiter then sees
	// the key free, and a new claim runs the call.
	keys, err := client.Keys(ctx, "TestExpiredLeaseLetsAnotherRun:*").Result()
	require.NoError(t, err)
	require.Len(t, keys, 1)
	require.NoError(t, client.Del(ctx, keys[0]).Err()) // as the lapse of the lease would
	require.NoError(t, s.Wait(ctx, "crash"))
	_, c2, err := s.Claim(ctx, "crash", "fp")
	require.NoError(t, err)
	require.NotNil(t, c2, "the key is claimed again")
	assert.ErrorIs(t, c.Complete(ctx, []byte("late")), otc.ErrClaimLost, "the first claim cannot overwrite the new one")
	require.NoError(t, c2.Complete(ctx, []byte("o")))
}

func TestTTLAndLimits(t *testing.T) {
	client := needRedis(t)
	ctx := context.Background()
	s := newStore(t, client, redisstore.Options{TTL: 100 * time.Millisecond, MaxOutcomeBytes: 8})

	_, c, err := s.Claim(ctx, "ttl", "fp")
	require.NoError(t, err)
	require.NoError(t, c.Complete(ctx, []byte("small")))
	rec, _, err := s.Claim(ctx, "ttl", "fp")
	require.NoError(t, err)
	require.NotNil(t, rec)
	require.Eventually(t, func() bool {
		rec, c, err := s.Claim(ctx, "ttl", "fp")
		if err != nil || rec != nil {
			return false
		}
		return c.Release(ctx) == nil
	}, 5*time.Second, 20*time.Millisecond, "the outcome expires after the TTL")

	_, c, err = s.Claim(ctx, "big", "fp")
	require.NoError(t, err)
	assert.ErrorIs(t, c.Complete(ctx, []byte("123456789")), otc.ErrOutcomeTooLarge)
	rec, c, err = s.Claim(ctx, "big", "fp")
	require.NoError(t, err)
	assert.Nil(t, rec, "a call whose outcome was too large is not deduplicated")
	require.NoError(t, c.Release(ctx))
}

func TestPrefixesAreSeparate(t *testing.T) {
	client := needRedis(t)
	ctx := context.Background()
	a := redisstore.New(client, &redisstore.Options{Prefix: "TestPrefixesAreSeparate:a:"})
	b := redisstore.New(client, &redisstore.Options{Prefix: "TestPrefixesAreSeparate:b:"})
	_, ca, err := a.Claim(ctx, "k", "fp")
	require.NoError(t, err)
	_, cb, err := b.Claim(ctx, "k", "fp")
	require.NoError(t, err)
	require.NotNil(t, ca)
	require.NotNil(t, cb)
	require.NoError(t, ca.Release(ctx))
	require.NoError(t, cb.Release(ctx))
}

func TestForeignValueIsAnError(t *testing.T) {
	client := needRedis(t)
	ctx := context.Background()
	s := newStore(t, client, redisstore.Options{})
	_, c, err := s.Claim(ctx, "k", "fp")
	require.NoError(t, err)
	keys, err := client.Keys(ctx, "TestForeignValueIsAnError:*").Result()
	require.NoError(t, err)
	require.NoError(t, c.Release(ctx))
	require.NoError(t, client.Set(ctx, keys[0], "not ours", 0).Err())
	_, _, err = s.Claim(ctx, "k", "fp")
	assert.ErrorContains(t, err, "not one this store wrote")
}

// call posts an OTC call of Count.Up and returns the status, the body
// and whether the answer was replayed.
func call(t *testing.T, base, callID, input string) (int, map[string]any, bool) {
	t.Helper()
	body := fmt.Sprintf(`{"request":{"tool_id":"Count.Up","call_id":%q,"input":%s}}`, callID, input)
	resp, err := http.Post(base+"/tools/call", "application/json", strings.NewReader(body))
	require.NoError(t, err)
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	var m map[string]any
	require.NoError(t, json.Unmarshal(b, &m), "%s", b)
	return resp.StatusCode, m, resp.Header.Get(otc.HeaderReplayed) == "true"
}

func value(t *testing.T, m map[string]any) float64 {
	t.Helper()
	res, ok := m["result"].(map[string]any)
	require.True(t, ok, "%v", m)
	require.Equal(t, true, res["success"], "%v", m)
	return res["value"].(float64)
}

func TestThroughTheHandler(t *testing.T) {
	client := needRedis(t)
	store := newStore(t, client, redisstore.Options{PollInterval: 10 * time.Millisecond})
	reg, err := newCountingRegistry(client, store, "TestThroughTheHandler:runs")
	require.NoError(t, err)
	srv := httptest.NewServer(otc.NewHandler(reg, nil))
	t.Cleanup(srv.Close)

	_, first, replayed := call(t, srv.URL, "seq", `{}`)
	assert.False(t, replayed)
	_, again, replayed := call(t, srv.URL, "seq", `{}`)
	assert.True(t, replayed)
	assert.Equal(t, value(t, first), value(t, again))

	var wg sync.WaitGroup
	values := make([]float64, 8)
	for i := range values {
		wg.Go(func() {
			_, m, _ := call(t, srv.URL, "concurrent", `{"sleep_ms":200}`)
			values[i] = value(t, m)
		})
	}
	wg.Wait()
	for _, v := range values {
		assert.Equal(t, values[0], v, "every duplicate gets the one run's count")
	}
	runs, err := client.Get(context.Background(), "TestThroughTheHandler:runs").Int()
	require.NoError(t, err)
	assert.Equal(t, 2, runs, "one run per call id")
}

// TestTwoProcesses runs two servers, each a process of its own with its
// own registry and store, sharing one Redis: duplicates sent to both run
// once.
func TestTwoProcesses(t *testing.T) {
	client := needRedis(t)
	ctx := context.Background()
	require.NoError(t, client.Del(ctx, "twoproc:runs").Err())
	a, _ := startChild(t, 0, false)
	b, _ := startChild(t, 0, false)

	var wg sync.WaitGroup
	var mu sync.Mutex
	var seen []float64
	for i := range 6 {
		base := a
		if i%2 == 1 {
			base = b
		}
		wg.Go(func() {
			status, m, _ := call(t, base, "shared-id", `{"sleep_ms":200}`)
			assert.Equal(t, http.StatusOK, status)
			mu.Lock()
			seen = append(seen, value(t, m))
			mu.Unlock()
		})
	}
	wg.Wait()
	for _, v := range seen {
		assert.Equal(t, 1.0, v, "all six answers are the one run's")
	}
	runs, err := client.Get(ctx, "twoproc:runs").Int()
	require.NoError(t, err)
	assert.Equal(t, 1, runs, "the function ran once across the two processes")

	_, m, _ := call(t, b, "another-id", `{}`)
	assert.Equal(t, 2.0, value(t, m), "a new call id runs")

	status, m, _ := call(t, a, "shared-id", `{"label":"different"}`)
	assert.Equal(t, http.StatusBadRequest, status)
	assert.Equal(t, "The call_id was already used for a different call", m["message"])
	runs, err = client.Get(ctx, "twoproc:runs").Int()
	require.NoError(t, err)
	assert.Equal(t, 2, runs)
}

// TestReplicaCrash kills the process running a call: once its lease has
// lapsed, the retry on the other process runs the call again (the
// documented at-least-once edge), and later retries get that outcome.
func TestReplicaCrash(t *testing.T) {
	client := needRedis(t)
	ctx := context.Background()
	require.NoError(t, client.Del(ctx, "twoproc:runs").Err())
	const lease = 500 * time.Millisecond
	a, cmdA := startChild(t, lease, true) // its Count.Up never returns
	b, _ := startChild(t, lease, false)

	go func() { _, _, _ = callNoCheck(a, "crash-id", `{}`) }()
	require.Eventually(t, func() bool {
		n, _ := client.Get(ctx, "twoproc:runs").Int()
		return n == 1
	}, 10*time.Second, 10*time.Millisecond, "the first process started the call")
	time.Sleep(2 * lease) // renewed meanwhile: the claim outlives its first lease
	require.NoError(t, cmdA.Process.Signal(syscall.SIGKILL))

	// The retry waits for the dead replica's lease to lapse, then runs.
	_, m, replayed := call(t, b, "crash-id", `{}`)
	assert.Equal(t, 2.0, value(t, m), "the call ran again")
	assert.False(t, replayed)
	_, m, replayed = call(t, b, "crash-id", `{}`)
	assert.Equal(t, 2.0, value(t, m))
	assert.True(t, replayed, "and was recorded this time")
}

func callNoCheck(base, callID, input string) (int, []byte, error) {
	body := fmt.Sprintf(`{"request":{"tool_id":"Count.Up","call_id":%q,"input":%s}}`, callID, input)
	resp, err := http.Post(base+"/tools/call", "application/json", strings.NewReader(body))
	if err != nil {
		return 0, nil, err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	return resp.StatusCode, b, err
}
