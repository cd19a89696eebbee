package redisstore_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/otcgo/otc"
	"github.com/otcgo/otc/redisstore"
)

// newStore returns a store with a prefix of its own (see freshPrefix), so
// that tests do not see each other's keys.
func newStore(t *testing.T, client *redis.Client, opts redisstore.IdempotencyOptions) *redisstore.IdempotencyStore {
	t.Helper()
	opts.Prefix = freshPrefix(t, client)
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	return redisstore.NewIdempotencyStore(client, &opts)
}

func TestClaimCompleteReplay(t *testing.T) {
	client := needRedis(t)
	ctx := context.Background()
	s := newStore(t, client, redisstore.IdempotencyOptions{})

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
	s := newStore(t, client, redisstore.IdempotencyOptions{})
	const n = 64
	var wg sync.WaitGroup
	claims := make(chan otc.IdempotencyClaim, n)
	records := make(chan *otc.IdempotencyRecord, n)
	for range n {
		wg.Go(func() {
			rec, c, err := s.Claim(context.Background(), "k", "fp")
			assert.NoError(t, err)
			if c != nil {
				claims <- c
			} else {
				records <- rec
			}
		})
	}
	wg.Wait()
	close(claims)
	close(records)
	var won []otc.IdempotencyClaim
	for c := range claims {
		won = append(won, c)
	}
	require.Len(t, won, 1, "exactly one of the concurrent claims wins")
	assert.Len(t, records, n-1)
	for rec := range records {
		assert.Equal(t, &otc.IdempotencyRecord{Fingerprint: "fp"}, rec, "the others see the winner's call in flight")
	}
	require.NoError(t, won[0].Release(context.Background()))
}

func TestWaitWakes(t *testing.T) {
	client := needRedis(t)
	ctx := context.Background()
	s := newStore(t, client, redisstore.IdempotencyOptions{PollInterval: 10 * time.Millisecond})
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
	cctx, cancelCause := context.WithCancelCause(ctx)
	gone := errors.New("the caller went away")
	cancelCause(gone)
	assert.ErrorIs(t, s.Wait(cctx, "never"), gone, "Wait returns the context's cause")
	require.NoError(t, c.Release(ctx))
	assert.NoError(t, s.Wait(ctx, "absent"))
}

func TestLeaseRenewedWhileRunning(t *testing.T) {
	client := needRedis(t)
	ctx := context.Background()
	s := newStore(t, client, redisstore.IdempotencyOptions{Lease: 300 * time.Millisecond})
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

// TestExpiredLeaseLetsAnotherRun lets a claim's lease lapse, as it does
// when its replica dies: the waiter wakes, the key is claimed again, and
// the first claim can no longer record its outcome over the new one.
func TestExpiredLeaseLetsAnotherRun(t *testing.T) {
	client := needRedis(t)
	ctx := context.Background()
	const lease = 200 * time.Millisecond
	s := newStore(t, client, redisstore.IdempotencyOptions{Lease: lease, PollInterval: 10 * time.Millisecond})
	_, c, err := s.Claim(ctx, "crash", "fp")
	require.NoError(t, err)
	redisstore.StopRenewing(c)
	key := onlyKey(t, client)
	pttl, err := client.PTTL(ctx, key).Result()
	require.NoError(t, err)
	assert.LessOrEqual(t, pttl, lease, "a claim's record expires with its lease")
	assert.Positive(t, pttl)

	require.NoError(t, s.Wait(ctx, "crash"), "the waiter wakes when the lease lapses")
	assert.ErrorIs(t, client.Get(ctx, key).Err(), redis.Nil, "the record lapsed with the lease")
	_, c2, err := s.Claim(ctx, "crash", "fp")
	require.NoError(t, err)
	require.NotNil(t, c2, "the key is claimed again")
	assert.ErrorIs(t, c.Complete(ctx, []byte("late")), otc.ErrClaimLost, "the first claim cannot overwrite the new one")
	assert.ErrorIs(t, c.Release(ctx), otc.ErrClaimLost, "nor delete it")
	require.NoError(t, c2.Complete(ctx, []byte("second")))
	rec, _, err := s.Claim(ctx, "crash", "fp")
	require.NoError(t, err)
	assert.Equal(t, &otc.IdempotencyRecord{Fingerprint: "fp", Done: true, Outcome: []byte("second")}, rec)
}

// TestLostLeaseWarnsOnce takes a claim's key from under it: its renewal
// finds another token, warns once, and stops, while the new claim's
// renewals go on.
func TestLostLeaseWarnsOnce(t *testing.T) {
	client := needRedis(t)
	ctx := context.Background()
	const lease = 150 * time.Millisecond
	logs := &logRecorder{}
	s := newStore(t, client, redisstore.IdempotencyOptions{Lease: lease, Logger: slog.New(logs)})
	_, c, err := s.Claim(ctx, "k", "fp")
	require.NoError(t, err)
	require.NoError(t, client.Del(ctx, onlyKey(t, client)).Err()) // as the lapse of the lease would
	_, c2, err := s.Claim(ctx, "k", "fp")
	require.NoError(t, err)
	require.NotNil(t, c2)

	require.Eventually(t, func() bool { return len(logs.messages()) > 0 }, 5*time.Second, 5*time.Millisecond)
	time.Sleep(2 * lease) // six more renewal periods of the first claim
	msgs := logs.messages()
	require.Len(t, msgs, 1, "one warning, then no more renewals: %q", msgs)
	assert.Contains(t, msgs[0], "lapsed")
	rec, other, err := s.Claim(ctx, "k", "fp")
	require.NoError(t, err)
	assert.Nil(t, other, "the second claim, renewed, still holds the key")
	assert.Equal(t, &otc.IdempotencyRecord{Fingerprint: "fp"}, rec)
	assert.ErrorIs(t, c.Complete(ctx, []byte("o")), otc.ErrClaimLost)
	require.NoError(t, c2.Release(ctx))
}

// TestShortDurationsRoundUp: Redis counts expiries in whole milliseconds
// and refuses zero; shorter durations are rounded up, not refused.
func TestShortDurationsRoundUp(t *testing.T) {
	client := needRedis(t)
	ctx := context.Background()
	s := newStore(t, client, redisstore.IdempotencyOptions{Lease: time.Microsecond, TTL: time.Nanosecond})
	_, c, err := s.Claim(ctx, "k", "fp")
	require.NoError(t, err)
	require.NotNil(t, c)
	require.NoError(t, c.Complete(ctx, []byte("o")))
}

func TestTTLAndLimits(t *testing.T) {
	client := needRedis(t)
	ctx := context.Background()
	s := newStore(t, client, redisstore.IdempotencyOptions{TTL: 100 * time.Millisecond, MaxOutcomeBytes: 8})

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
	a := redisstore.NewIdempotencyStore(client, &redisstore.IdempotencyOptions{Prefix: "TestPrefixesAreSeparate:a:"})
	b := redisstore.NewIdempotencyStore(client, &redisstore.IdempotencyOptions{Prefix: "TestPrefixesAreSeparate:b:"})
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
	s := newStore(t, client, redisstore.IdempotencyOptions{})
	_, c, err := s.Claim(ctx, "k", "fp")
	require.NoError(t, err)
	keys, err := client.Keys(ctx, "TestForeignValueIsAnError:*").Result()
	require.NoError(t, err)
	require.NoError(t, c.Release(ctx))
	require.NoError(t, client.Set(ctx, keys[0], "not ours", 0).Err())
	_, _, err = s.Claim(ctx, "k", "fp")
	assert.ErrorContains(t, err, "not one this store wrote")
}

// answer is what a server answered an OTC call with.
type answer struct {
	status   int
	body     map[string]any
	replayed bool // the Idempotent-Replayed header said true
}

// post sends an OTC call of Count.Up. It does not fail the test, so that
// goroutines can call it.
func post(base, callID, input string) (answer, error) {
	body := fmt.Sprintf(`{"request":{"tool_id":"Count.Up","call_id":%q,"input":%s}}`, callID, input)
	resp, err := http.Post(base+"/tools/call", "application/json", strings.NewReader(body))
	if err != nil {
		return answer{}, err
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	if err != nil {
		return answer{}, err
	}
	a := answer{status: resp.StatusCode, replayed: resp.Header.Get(otc.HeaderReplayed) == "true"}
	if err := json.Unmarshal(raw, &a.body); err != nil {
		return a, fmt.Errorf("%w: %s", err, raw)
	}
	return a, nil
}

// call is post for the test's goroutine.
func call(t *testing.T, base, callID, input string) answer {
	t.Helper()
	a, err := post(base, callID, input)
	require.NoError(t, err)
	return a
}

// result returns the result of a successful call.
func (a answer) result(t *testing.T) map[string]any {
	t.Helper()
	res, ok := a.body["result"].(map[string]any)
	require.True(t, ok, "%v", a.body)
	require.Equal(t, true, res["success"], "%v", a.body)
	return res
}

// value returns the count a successful call of Count.Up returned.
func (a answer) value(t *testing.T) float64 {
	t.Helper()
	v, ok := a.result(t)["value"].(float64)
	require.True(t, ok, "%v", a.body)
	return v
}

// runs returns the count of Count.Up's runs under counter.
func runs(t *testing.T, client redis.UniversalClient, counter string) int {
	t.Helper()
	n, err := client.Get(context.Background(), counter).Int()
	if errors.Is(err, redis.Nil) {
		return 0
	}
	require.NoError(t, err)
	return n
}

// concurrently sends n calls of one call id at once, the i-th to
// bases[i%len(bases)], and returns the answers.
func concurrently(t *testing.T, n int, bases []string, callID, input string) []answer {
	t.Helper()
	answers := make([]answer, n)
	errs := make([]error, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() { answers[i], errs[i] = post(bases[i%len(bases)], callID, input) })
	}
	wg.Wait()
	for _, err := range errs {
		require.NoError(t, err)
	}
	return answers
}

// checkOneRun checks the answers to duplicates of one call: each is a
// success with callID and the count want, and all but one are replays.
func checkOneRun(t *testing.T, answers []answer, callID string, want float64) {
	t.Helper()
	ran := 0
	for _, a := range answers {
		assert.Equal(t, http.StatusOK, a.status)
		assert.Equal(t, callID, a.result(t)["call_id"])
		assert.Equal(t, want, a.value(t), "every duplicate gets the one run's count")
		if !a.replayed {
			ran++
		}
	}
	assert.Equal(t, 1, ran, "one answer is the run's, the others are marked as replays")
}

func TestThroughTheHandler(t *testing.T) {
	client := needRedis(t)
	store := newStore(t, client, redisstore.IdempotencyOptions{PollInterval: 10 * time.Millisecond})
	counter := t.Name() + ":runs"
	reg, err := newCountingRegistry(client, store, counter)
	require.NoError(t, err)
	srv := httptest.NewServer(otc.NewHandler(reg, nil))
	t.Cleanup(srv.Close)

	first := call(t, srv.URL, "seq", `{}`)
	again := call(t, srv.URL, "seq", `{}`)
	checkOneRun(t, []answer{first, again}, "seq", 1)
	assert.False(t, first.replayed)
	assert.Equal(t, 1, runs(t, client, counter))

	// Eight at once, each taking 200ms: the seven duplicates arrive while
	// the first runs, and wait for it.
	checkOneRun(t, concurrently(t, 8, []string{srv.URL}, "concurrent", `{"sleep_ms":200}`), "concurrent", 2)
	assert.Equal(t, 2, runs(t, client, counter), "one run per call id")

	a := call(t, srv.URL, "seq", `{"label":"other"}`)
	assert.Equal(t, http.StatusBadRequest, a.status)
	assert.Equal(t, "The call_id was already used for a different call", a.body["message"])
	assert.Equal(t, 2, runs(t, client, counter), "a refused call does not run")
}

// TestRedisDown: a registry whose store cannot reach Redis runs no call,
// and answers it with a failure the caller may retry.
func TestRedisDown(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	addr := ln.Addr().String()
	require.NoError(t, ln.Close()) // nothing listens there now
	client := redis.NewClient(&redis.Options{Addr: addr, MaxRetries: -1, DialerRetries: 1, DialerRetryTimeout: time.Millisecond})
	t.Cleanup(func() { client.Close() })
	store := redisstore.NewIdempotencyStore(client, &redisstore.IdempotencyOptions{Logger: slog.New(slog.DiscardHandler)})

	_, _, err = store.Claim(context.Background(), "k", "fp")
	require.Error(t, err)
	assert.Contains(t, err.Error(), "redisstore: claiming a call id")
	assert.ErrorContains(t, store.Wait(context.Background(), "k"), "redisstore: waiting for a call in flight")

	var ran atomic.Int64
	reg := otc.NewRegistry(&otc.RegistryOptions{Logger: slog.New(slog.DiscardHandler), Idempotency: store})
	require.NoError(t, otc.Register(reg, otc.Tool{ID: "Count.Up", Version: "1.0.0", Description: "Counts its runs."},
		func(context.Context, countInput) (int64, error) { return ran.Add(1), nil }))
	srv := httptest.NewServer(otc.NewHandler(reg, nil))
	t.Cleanup(srv.Close)
	a := call(t, srv.URL, "id", `{}`)
	res, ok := a.body["result"].(map[string]any)
	require.True(t, ok, "%v", a.body)
	assert.Equal(t, false, res["success"], "%v", a.body)
	assert.Equal(t, "id", res["call_id"])
	te, ok := res["error"].(map[string]any)
	require.True(t, ok, "%v", a.body)
	assert.Equal(t, true, te["can_retry"], "%v", te)
	assert.Zero(t, ran.Load(), "the tool did not run")
}

// TestTwoProcesses runs two servers, each a process of its own with its
// own registry and store, sharing one Redis: duplicates sent to both run
// once.
func TestTwoProcesses(t *testing.T) {
	client := needRedis(t)
	prefix := freshPrefix(t, client)
	counter := prefix + "runs"
	a, _ := startChild(t, prefix, 0, false)
	b, _ := startChild(t, prefix, 0, false)
	both := []string{a, b}

	// Three to each at once; the run takes 200ms, so that the duplicates
	// arrive while it runs.
	checkOneRun(t, concurrently(t, 6, both, "shared-id", `{"sleep_ms":200}`), "shared-id", 1)
	assert.Equal(t, 1, runs(t, client, counter), "the function ran once across the two processes")
	// Later retries, to either, are replays.
	for _, base := range both {
		r := call(t, base, "shared-id", `{"sleep_ms":200}`)
		assert.True(t, r.replayed)
		assert.Equal(t, 1.0, r.value(t))
	}

	r := call(t, b, "another-id", `{}`)
	assert.Equal(t, 2.0, r.value(t), "a new call id runs")
	assert.False(t, r.replayed)

	for _, base := range both {
		r := call(t, base, "shared-id", `{"label":"different"}`)
		assert.Equal(t, http.StatusBadRequest, r.status)
		assert.Equal(t, "The call_id was already used for a different call", r.body["message"])
		assert.Contains(t, r.body["developer_message"], "with different input")
	}
	assert.Equal(t, 2, runs(t, client, counter))
}

// TestReplicaCrash kills the process running a call: once its lease has
// lapsed, the duplicate waiting on the other process runs the call again
// (the documented at-least-once edge), and later retries get that
// outcome.
func TestReplicaCrash(t *testing.T) {
	client := needRedis(t)
	ctx := context.Background()
	prefix := freshPrefix(t, client)
	counter := prefix + "runs"
	const lease = 500 * time.Millisecond
	a, cmdA := startChild(t, prefix, lease, true) // its Count.Up never returns
	b, _ := startChild(t, prefix, lease, false)

	go func() { _, _ = post(a, "crash-id", `{}`) }() // fails when a dies
	require.Eventually(t, func() bool { return runs(t, client, counter) == 1 },
		10*time.Second, 5*time.Millisecond, "the first process started the call")

	// a renews its lease while the call runs: after two leases, the
	// record is still a claim.
	time.Sleep(2 * lease)
	var record string
	iter := client.Scan(ctx, 0, prefix+"*", 100).Iterator()
	for iter.Next(ctx) {
		if iter.Val() != counter {
			require.Empty(t, record, "one record")
			record = iter.Val()
		}
	}
	require.NoError(t, iter.Err())
	v, err := client.Get(ctx, record).Result()
	require.NoError(t, err)
	assert.Equal(t, byte('R'), v[0], "the call is still in flight")

	// A duplicate on b waits for a; it is sent before a dies, and has no
	// answer while a lives.
	dup := make(chan answer, 1)
	go func() {
		r, err := post(b, "crash-id", `{}`)
		assert.NoError(t, err)
		dup <- r
	}()
	time.Sleep(lease / 5) // time for the duplicate to reach b's store
	select {
	case r := <-dup:
		t.Fatalf("the duplicate was answered while the call ran on a: %v", r.body)
	default:
	}
	require.NoError(t, cmdA.Process.Signal(syscall.SIGKILL))

	r := <-dup
	assert.Equal(t, 2.0, r.value(t), "the call ran again once a's lease lapsed")
	assert.False(t, r.replayed)
	r = call(t, b, "crash-id", `{}`)
	assert.Equal(t, 2.0, r.value(t))
	assert.True(t, r.replayed, "and was recorded this time")
	assert.Equal(t, 2, runs(t, client, counter))
}

// onlyKey returns the one key under the test's prefix.
func onlyKey(t *testing.T, client *redis.Client) string {
	t.Helper()
	keys, err := client.Keys(context.Background(), strings.ReplaceAll(t.Name(), "/", ":")+":*").Result()
	require.NoError(t, err)
	require.Len(t, keys, 1)
	return keys[0]
}

// logRecorder is a slog.Handler that keeps the messages logged.
type logRecorder struct {
	mu    sync.Mutex
	msgs  []string
	lines []string // each message with its attributes, "msg k=v k=v"
}

func (h *logRecorder) Enabled(context.Context, slog.Level) bool { return true }
func (h *logRecorder) WithAttrs([]slog.Attr) slog.Handler       { return h }
func (h *logRecorder) WithGroup(string) slog.Handler            { return h }

func (h *logRecorder) Handle(_ context.Context, r slog.Record) error {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.msgs = append(h.msgs, r.Message)
	line := r.Message
	r.Attrs(func(a slog.Attr) bool {
		line += " " + a.String()
		return true
	})
	h.lines = append(h.lines, line)
	return nil
}

// logged reports whether a record logged holds every one of parts.
func (h *logRecorder) logged(parts ...string) bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	for _, l := range h.lines {
		all := true
		for _, p := range parts {
			all = all && strings.Contains(l, p)
		}
		if all {
			return true
		}
	}
	return false
}

func (h *logRecorder) messages() []string {
	h.mu.Lock()
	defer h.mu.Unlock()
	return append([]string(nil), h.msgs...)
}
