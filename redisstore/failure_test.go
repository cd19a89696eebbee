package redisstore_test

import (
	"context"
	"fmt"
	"log/slog"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/otcgo/otc"
	"github.com/otcgo/otc/redisstore"
)

// These tests make the test's redis-server fail as a production one does
// (full, restarted, stalled) while a call is in flight, and check the
// failure rules of the package doc: the tool runs once, every answer
// comes within its bound, and nothing logs a lost claim that was not.

// failureFixture is a registry whose Count.Up counts its runs in the
// process (Redis may refuse the count), announces each on entered, and
// then waits for a value on proceed, or for proceed to be closed; served
// over OTC.
type failureFixture struct {
	client  *redis.Client
	store   *redisstore.IdempotencyStore
	url     string
	logs    *logRecorder // the registry's and the store's
	runs    atomic.Int64
	entered chan struct{}
	proceed chan struct{}
}

func newFailureFixture(t *testing.T, opts redisstore.IdempotencyOptions, wait time.Duration) *failureFixture {
	t.Helper()
	f := &failureFixture{client: needRedis(t), logs: &logRecorder{}, entered: make(chan struct{}, 16), proceed: make(chan struct{})}
	opts.Logger = slog.New(f.logs)
	f.store = newStore(t, f.client, opts)
	t.Cleanup(func() {
		// Every outcome was written by the end of the test: nothing is
		// left for Shutdown to stop.
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		defer cancel()
		assert.NoError(t, f.store.Shutdown(ctx))
	})
	reg := otc.NewRegistry(&otc.RegistryOptions{Logger: slog.New(f.logs), Idempotency: f.store, IdempotencyWait: wait})
	require.NoError(t, otc.Register(reg, otc.Tool{ID: "Count.Up", Version: "1.0.0", Description: "Counts its runs."},
		func(ctx context.Context, _ countInput) (int64, error) {
			n := f.runs.Add(1)
			f.entered <- struct{}{}
			<-f.proceed
			return n, nil
		}))
	srv := httptest.NewServer(otc.NewHandler(reg, nil))
	t.Cleanup(srv.Close)
	f.url = srv.URL
	return f
}

// start sends a call in the background and returns where its answer,
// and how long it took, will come, once the tool has begun to run.
func (f *failureFixture) start(t *testing.T, callID string) <-chan timedAnswer {
	t.Helper()
	ch := make(chan timedAnswer, 1)
	go func() {
		start := time.Now()
		a, err := post(f.url, callID, `{}`)
		assert.NoError(t, err)
		ch <- timedAnswer{a, time.Since(start)}
	}()
	select {
	case <-f.entered:
	case <-time.After(10 * time.Second):
		t.Fatal("the tool did not start")
	}
	return ch
}

type timedAnswer struct {
	answer
	took time.Duration
}

// timedCall is call, timed.
func timedCall(t *testing.T, base, callID string) timedAnswer {
	t.Helper()
	start := time.Now()
	a := call(t, base, callID, `{}`)
	return timedAnswer{a, time.Since(start)}
}

// toolError returns the tool error of a call that failed.
func (a answer) toolError(t *testing.T) map[string]any {
	t.Helper()
	res, ok := a.body["result"].(map[string]any)
	require.True(t, ok, "%v", a.body)
	require.Equal(t, false, res["success"], "%v", a.body)
	te, ok := res["error"].(map[string]any)
	require.True(t, ok, "%v", a.body)
	return te
}

// record returns the record under the test's prefix, "" when there is
// none.
func record(t *testing.T, client *redis.Client) string {
	t.Helper()
	ctx := context.Background()
	keys, err := client.Keys(ctx, strings.ReplaceAll(t.Name(), "/", ":")+":*").Result()
	require.NoError(t, err)
	require.LessOrEqual(t, len(keys), 1)
	if len(keys) == 0 {
		return ""
	}
	v, err := client.Get(ctx, keys[0]).Result()
	if err == redis.Nil {
		return ""
	}
	require.NoError(t, err)
	return v
}

// noFalseAlarm checks that nothing was logged of a lost or lapsed claim,
// or of a retry that would run the call again.
func (f *failureFixture) noFalseAlarm(t *testing.T) {
	t.Helper()
	for _, m := range f.logs.messages() {
		assert.NotContains(t, m, "lost")
		assert.NotContains(t, m, "lapsed")
		assert.NotContains(t, m, "run it again")
	}
}

// logged reports whether a message containing s was logged.
func (f *failureFixture) logged(s string) bool {
	for _, m := range f.logs.messages() {
		if strings.Contains(m, s) {
			return true
		}
	}
	return false
}

// fillRedis makes Redis refuse every write that needs memory, as a full
// Redis with the noeviction policy does, until the test ends or
// emptyRedis.
func fillRedis(t *testing.T, client *redis.Client) {
	t.Helper()
	ctx := context.Background()
	require.NoError(t, client.ConfigSet(ctx, "maxmemory-policy", "noeviction").Err())
	require.NoError(t, client.ConfigSet(ctx, "maxmemory", "1").Err())
	t.Cleanup(func() { emptyRedis(t, client) })
}

func emptyRedis(t *testing.T, client *redis.Client) {
	require.NoError(t, client.ConfigSet(context.Background(), "maxmemory", "0").Err())
}

// stall makes Redis sleep for d (DEBUG SLEEP), as a Redis stalled by a
// slow command, a fork or a paused VM does, and returns once it sleeps.
// The channel is closed when it wakes; the test waits for that before
// it ends.
func stall(t *testing.T, d time.Duration) <-chan struct{} {
	t.Helper()
	sleeper := redis.NewClient(&redis.Options{Addr: redisAddr, ReadTimeout: d + 10*time.Second, MaxRetries: -1})
	woke := make(chan struct{})
	go func() {
		defer close(woke)
		defer sleeper.Close()
		err := sleeper.Do(context.Background(), "DEBUG", "SLEEP", d.Seconds()).Err()
		assert.NoError(t, err)
	}()
	t.Cleanup(func() { <-woke })
	// It sleeps once a PING goes unanswered.
	probe := redis.NewClient(&redis.Options{Addr: redisAddr, ContextTimeoutEnabled: true, MaxRetries: -1})
	defer probe.Close()
	require.Eventually(t, func() bool {
		ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
		defer cancel()
		return probe.Ping(ctx).Err() != nil
	}, 5*time.Second, 10*time.Millisecond, "Redis did not start to sleep")
	return woke
}

// TestOutcomeRefusedWhileRedisIsFull fills Redis while the tool runs, so
// that it refuses the outcome: the caller gets its answer, retries are
// told to ask again later without running, over several leases, and once
// Redis has room the outcome is written and replayed. The tool runs once.
func TestOutcomeRefusedWhileRedisIsFull(t *testing.T) {
	const (
		lease = 600 * time.Millisecond
		wait  = 300 * time.Millisecond // the registry's IdempotencyWait
	)
	f := newFailureFixture(t, redisstore.IdempotencyOptions{Lease: lease, PollInterval: 10 * time.Millisecond, OpTimeout: 500 * time.Millisecond}, wait)
	first := f.start(t, "full")
	fillRedis(t, f.client)
	close(f.proceed)
	a := <-first
	assert.Equal(t, 1.0, a.value(t), "the caller gets its answer")
	assert.False(t, a.replayed)
	assert.Less(t, a.took, 5*time.Second)
	t.Logf("the call was answered %v after it was sent", a.took)
	assert.True(t, f.logged("not recorded yet"), "the registry says the store keeps trying: %q", f.logs.messages())

	// Retries while Redis is full, for more than three leases: each waits
	// IdempotencyWait and is told to ask again later; none runs.
	for deadline := time.Now().Add(3 * lease); time.Now().Before(deadline); {
		r := timedCall(t, f.url, "full")
		te := r.toolError(t)
		assert.Equal(t, true, te["can_retry"], "%v", te)
		assert.Contains(t, te["message"], "still running this call")
		assert.GreaterOrEqual(t, r.took, wait)
		assert.Less(t, r.took, wait+time.Second, "a retry waits a bounded time")
		t.Logf("a retry while Redis was full was answered in %v: %v", r.took, te["developer_message"])
	}
	assert.EqualValues(t, 1, f.runs.Load(), "no retry ran the tool")
	assert.True(t, strings.HasPrefix(record(t, f.client), "R"), "the replica keeps its claim, renewing the lease")

	emptyRedis(t, f.client)
	assert.Eventually(t, func() bool { return strings.HasPrefix(record(t, f.client), "D") },
		5*time.Second, 10*time.Millisecond, "the outcome is written once Redis has room")
	r := call(t, f.url, "full", `{}`)
	assert.True(t, r.replayed, "a retry now gets the outcome")
	assert.Equal(t, 1.0, r.value(t))
	assert.EqualValues(t, 1, f.runs.Load(), "the tool ran once")
	assert.True(t, f.logged("recorded an outcome Redis had not recorded at first"), "%q", f.logs.messages())
	f.noFalseAlarm(t)
}

// TestOutcomeRefusedWhileRedisRestarts stops Redis while the tool runs,
// so that the outcome cannot be written, and starts it again, empty, as a
// Redis without persistence restarts: the claim's record and every
// recorded outcome are lost; the replica writes its pending outcome again
// once Redis is back, and a retry gets it. An outcome recorded before the
// restart is lost for good: its retry runs again.
func TestOutcomeRefusedWhileRedisRestarts(t *testing.T) {
	const lease = 600 * time.Millisecond
	f := newFailureFixture(t, redisstore.IdempotencyOptions{Lease: lease, PollInterval: 10 * time.Millisecond, OpTimeout: 300 * time.Millisecond}, 300*time.Millisecond)
	before := f.start(t, "before")
	f.proceed <- struct{}{}
	assert.Equal(t, 1.0, (<-before).value(t))

	first := f.start(t, "restart")
	redisSrv.Stop()
	f.proceed <- struct{}{}
	a := <-first
	close(f.proceed) // later runs, which should be none but one, go on at once
	assert.Equal(t, 2.0, a.value(t), "the caller gets its answer")
	assert.Less(t, a.took, 5*time.Second)

	r := timedCall(t, f.url, "restart")
	te := r.toolError(t)
	assert.Equal(t, true, te["can_retry"], "a retry while Redis is down is refused, retryably: %v", te)
	body := fmt.Sprint(te)
	for _, internal := range []string{"redisstore", "OpTimeout", "dial", "deadline", "connection"} {
		assert.NotContains(t, body, internal, "the answer says what the caller can act on; the store's error goes to the log")
	}
	assert.True(t, f.logs.logged("call_id=restart", "error=redisstore"), "the log has the store's error with the call id")
	assert.Less(t, r.took, time.Second, "within OpTimeout")
	assert.EqualValues(t, 2, f.runs.Load(), "and does not run")

	require.NoError(t, redisSrv.Restart())
	assert.Eventually(t, func() bool { return strings.HasPrefix(record(t, f.client), "D") },
		5*time.Second, 10*time.Millisecond, "the outcome is written once Redis is back")
	r = timedCall(t, f.url, "restart")
	assert.True(t, r.replayed, "a retry gets the outcome")
	assert.Equal(t, 2.0, r.value(t))
	assert.EqualValues(t, 2, f.runs.Load(), "the tool ran once for the call")

	r = timedCall(t, f.url, "before")
	assert.False(t, r.replayed, "the outcome recorded before the restart was lost with it")
	assert.Equal(t, 3.0, r.value(t), "so its retry ran again, the documented at-least-once edge")
	f.noFalseAlarm(t)
}

// TestRedisStallIsBounded stalls Redis (DEBUG SLEEP) longer than the
// lease, at the claim and at the outcome's write: each call is answered
// within its bound, twice OpTimeout plus its run; the outcome is
// recorded after the stall; the tool runs once; and no claim is said to
// be lost.
func TestRedisStallIsBounded(t *testing.T) {
	const (
		opTimeout = 300 * time.Millisecond
		lease     = time.Second
		sleep     = 3 * time.Second
		bound     = 2*opTimeout + 700*time.Millisecond // the documented bound, and room for a busy machine
	)
	opts := redisstore.IdempotencyOptions{Lease: lease, PollInterval: 10 * time.Millisecond, OpTimeout: opTimeout}

	t.Run("claim", func(t *testing.T) {
		f := newFailureFixture(t, opts, 300*time.Millisecond)
		close(f.proceed)
		woke := stall(t, sleep)
		r := timedCall(t, f.url, "stalled")
		te := r.toolError(t)
		assert.Equal(t, true, te["can_retry"], "%v", te)
		assert.Contains(t, te["message"], "could not be run just now")
		assert.Less(t, r.took, bound, "answered within the bound")
		assert.Zero(t, f.runs.Load())
		t.Logf("a call during a %v stall was answered in %v", sleep, r.took)
		<-woke

		// Redis carried out the claim when it woke; nothing renews it, so
		// a retry runs once its lease has lapsed.
		var ran answer
		require.Eventually(t, func() bool {
			ran = call(t, f.url, "stalled", `{}`)
			res, _ := ran.body["result"].(map[string]any)
			return res["success"] == true
		}, 5*time.Second, 50*time.Millisecond)
		assert.False(t, ran.replayed)
		assert.Equal(t, 1.0, ran.value(t))
		r = timedCall(t, f.url, "stalled")
		assert.True(t, r.replayed)
		assert.EqualValues(t, 1, f.runs.Load())
		f.noFalseAlarm(t)
	})

	t.Run("outcome", func(t *testing.T) {
		f := newFailureFixture(t, opts, 300*time.Millisecond)
		first := f.start(t, "stalled")
		woke := stall(t, sleep)
		proceeded := time.Now()
		close(f.proceed)
		a := <-first
		assert.Equal(t, 1.0, a.value(t))
		assert.Less(t, time.Since(proceeded), bound, "answered within the bound of its run")
		t.Logf("a call whose outcome was written during a %v stall was answered %v after its run", sleep, time.Since(proceeded))
		<-woke

		require.Eventually(t, func() bool { return f.logged("recorded an outcome") },
			5*time.Second, 10*time.Millisecond, "the outcome is recorded after the stall")
		r := timedCall(t, f.url, "stalled")
		assert.True(t, r.replayed)
		assert.Equal(t, 1.0, r.value(t))
		assert.EqualValues(t, 1, f.runs.Load(), "no second run")
		assert.True(t, f.logged("not recorded yet"))
		f.noFalseAlarm(t)
	})
}

// TestShutdownStopsWriteBehind: Shutdown waits for pending outcomes until
// its context ends, then stops trying, and the claim lapses.
func TestShutdownStopsWriteBehind(t *testing.T) {
	client := needRedis(t)
	ctx := context.Background()
	logs := &logRecorder{}
	s := newStore(t, client, redisstore.IdempotencyOptions{Lease: 300 * time.Millisecond, OpTimeout: 300 * time.Millisecond, Logger: slog.New(logs)})
	_, c, err := s.Claim(ctx, "k", "fp")
	require.NoError(t, err)
	fillRedis(t, client)
	require.ErrorIs(t, c.Complete(ctx, []byte("o")), otc.ErrOutcomePending)
	sctx, cancel := context.WithTimeout(ctx, 200*time.Millisecond)
	defer cancel()
	start := time.Now()
	assert.ErrorIs(t, s.Shutdown(sctx), context.DeadlineExceeded, "the outcome was not written in time")
	assert.Less(t, time.Since(start), 10*time.Second, "Shutdown returns once its context ends (200 ms), not when Redis takes the outcome (never, while full)")
	assert.Contains(t, logs.messages(), "redisstore: shut down before Redis recorded an outcome; its call id is freed when its lease lapses, and a retry then runs the call again")
	emptyRedis(t, client)
	require.Eventually(t, func() bool { return record(t, client) == "" }, 5*time.Second, 10*time.Millisecond, "the claim lapses")

	// After Shutdown, an outcome Redis refuses is not written later.
	_, c, err = s.Claim(ctx, "k2", "fp")
	require.NoError(t, err)
	fillRedis(t, client)
	err = c.Complete(ctx, []byte("o"))
	assert.ErrorContains(t, err, "OOM")
	assert.NotErrorIs(t, err, otc.ErrOutcomePending)
	emptyRedis(t, client)
	assert.NoError(t, s.Shutdown(ctx))
}

// TestStalledOpReturnsAtItsDeadline: with a client that does not apply
// contexts to its connections (go-redis's default), an operation still
// ends at OpTimeout.
func TestStalledOpReturnsAtItsDeadline(t *testing.T) {
	needRedis(t)
	// Both kinds of client: one that waits on its own timeouts, which the
	// store watches from a goroutine, and one that honours its context's
	// deadline, which the store calls directly.
	for _, honours := range []bool{false, true} {
		t.Run(fmt.Sprintf("ContextTimeoutEnabled=%v", honours), func(t *testing.T) {
			client := redis.NewClient(&redis.Options{Addr: redisAddr, ContextTimeoutEnabled: honours})
			t.Cleanup(func() { client.Close() })
			s := newStore(t, client, redisstore.IdempotencyOptions{OpTimeout: 200 * time.Millisecond})
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second) // a failure, not a hang
			defer cancel()
			woke := stall(t, 3*time.Second)
			// Each ends at its deadline: before Redis wakes, which is
			// when it would end without one.
			asleep := func(what string) {
				select {
				case <-woke:
					t.Errorf("%s ended only when Redis woke", what)
				default:
				}
			}
			_, c, err := s.Claim(ctx, "k", "fp")
			assert.ErrorIs(t, err, context.DeadlineExceeded)
			assert.ErrorContains(t, err, "OpTimeout")
			asleep("Claim")
			if c != nil {
				defer c.Release(ctx)
			}
			assert.ErrorContains(t, s.Wait(ctx, "k"), "OpTimeout")
			asleep("Wait")
			<-woke
		})
	}
}

// TestScriptsSentTwice: a client that sends a script again after an
// answer it did not get in time (go-redis does, on its ReadTimeout) finds
// what its first attempt did. The claim is still the store's own, the
// outcome is recorded, the key is released: none of them is a lost
// claim.
func TestScriptsSentTwice(t *testing.T) {
	needRedis(t)
	client := redis.NewClient(&redis.Options{Addr: redisAddr})
	t.Cleanup(func() { client.Close() })
	client.AddHook(twiceHook{})
	ctx := context.Background()
	s := newStore(t, client, redisstore.IdempotencyOptions{})

	_, c, err := s.Claim(ctx, "claimed", "fp")
	require.NoError(t, err)
	assert.NotNil(t, c, "the claim its first attempt made is the store's")
	assert.NoError(t, c.Complete(ctx, []byte("o")), "the outcome its first attempt wrote is recorded")
	rec, _, err := s.Claim(ctx, "claimed", "fp")
	require.NoError(t, err)
	assert.Equal(t, &otc.IdempotencyRecord{Fingerprint: "fp", Done: true, Outcome: []byte("o")}, rec)

	_, c, err = s.Claim(ctx, "released", "fp")
	require.NoError(t, err)
	require.NotNil(t, c)
	assert.NoError(t, c.Release(ctx), "the key its first attempt released is released")
}

// twiceHook runs every script twice, dropping the first answer, as a
// client that retries after a timeout does when Redis carried out the
// first attempt after all.
type twiceHook struct{}

func (twiceHook) DialHook(next redis.DialHook) redis.DialHook { return next }

func (twiceHook) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error {
		if n := cmd.Name(); n == "evalsha" || n == "eval" {
			_ = next(ctx, cmd)
		}
		return next(ctx, cmd)
	}
}

func (twiceHook) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return next
}

// TestVanishedRecordIsMadeAgain: a claim whose record Redis lost (a
// restart without persistence, a failover, an eviction) makes it again
// at its next renewal, so that retries wait rather than run.
func TestVanishedRecordIsMadeAgain(t *testing.T) {
	client := needRedis(t)
	ctx := context.Background()
	const lease = 300 * time.Millisecond
	logs := &logRecorder{}
	s := newStore(t, client, redisstore.IdempotencyOptions{Lease: lease, Logger: slog.New(logs)})
	_, c, err := s.Claim(ctx, "k", "fp")
	require.NoError(t, err)
	require.NoError(t, client.Del(ctx, onlyKey(t, client)).Err())
	require.Eventually(t, func() bool { return record(t, client) != "" }, 5*time.Second, 5*time.Millisecond)
	rec, other, err := s.Claim(ctx, "k", "fp")
	require.NoError(t, err)
	assert.Nil(t, other, "the key is held again")
	assert.Equal(t, &otc.IdempotencyRecord{Fingerprint: "fp"}, rec)
	assert.Contains(t, logs.messages(), "redisstore: the record of a call id held by this replica had gone from Redis (a restart, a failover, an eviction?); made it again")
	require.NoError(t, c.Complete(ctx, []byte("o")))

	// A call that ends before its next renewal writes its outcome where
	// its record was.
	require.NoError(t, client.Del(ctx, onlyKey(t, client)).Err())
	_, c, err = s.Claim(ctx, "k", "fp")
	require.NoError(t, err)
	require.NoError(t, client.Del(ctx, onlyKey(t, client)).Err())
	require.NoError(t, c.Complete(ctx, []byte("o2")), "the outcome is recorded")
	rec, _, err = s.Claim(ctx, "k", "fp")
	require.NoError(t, err)
	assert.Equal(t, &otc.IdempotencyRecord{Fingerprint: "fp", Done: true, Outcome: []byte("o2")}, rec)
}
