package otc_test

// Tests of call_id as an idempotency key, over real HTTP through the OTC
// handler and the REST view, with the in-memory store: replay, in-flight
// duplicates, what is recorded, reuse with other content, caller
// isolation, TTL and eviction, large results and a failing store.

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/otcgo/otc"
	"github.com/otcgo/otc/auth"
	"github.com/otcgo/otc/calllog"
	"github.com/otcgo/otc/idempotency"
	"github.com/otcgo/otc/rest"
)

// idemFixture serves one registry with an idempotency store over OTC
// (/otc/) and REST (/v1/), behind API keys for the callers "alice" and
// "bob", or without authentication.
type idemFixture struct {
	srv   *httptest.Server
	store otc.IdempotencyStore

	runs    sync.Map // tool name → *atomic.Int64
	hold    chan struct{}
	entered chan struct{}
}

const (
	idemAlice = "idem-alice-key-4f1c"
	idemBob   = "idem-bob-key-9a2e"
)

type idemInput struct {
	N     int    `json:"n,omitempty" jsonschema:"description=Any number."`
	Label string `json:"label,omitempty" jsonschema:"description=Any label."`
}

type idemFailInput struct {
	Retry bool `json:"retry,omitempty" jsonschema:"description=Whether the error says can_retry."`
}

func newIdemFixture(t *testing.T, store otc.IdempotencyStore, withAuth bool) *idemFixture {
	t.Helper()
	f := &idemFixture{store: store, hold: make(chan struct{}), entered: make(chan struct{}, 64)}
	reg := otc.NewRegistry(&otc.RegistryOptions{Logger: slog.New(slog.DiscardHandler), Idempotency: store})
	add := func(tool otc.Tool, fn any) {
		t.Helper()
		if tool.Version == "" {
			tool.Version = "1.0.0"
		}
		tool.Description = "A tool of the idempotency tests."
		var err error
		switch fn := fn.(type) {
		case func(context.Context, idemInput) (int64, error):
			err = otc.Register(reg, tool, fn)
		case func(context.Context, idemFailInput) (int64, error):
			err = otc.Register(reg, tool, fn)
		case func(context.Context, struct{}) (string, error):
			err = otc.Register(reg, tool, fn)
		}
		require.NoError(t, err)
	}
	add(otc.Tool{ID: "Count.Up"}, func(ctx context.Context, in idemInput) (int64, error) {
		return f.count("Count.Up"), nil
	})
	add(otc.Tool{ID: "Count.Other"}, func(ctx context.Context, in idemInput) (int64, error) {
		return f.count("Count.Other"), nil
	})
	add(otc.Tool{ID: "Count.Hold"}, func(ctx context.Context, in idemInput) (int64, error) {
		n := f.count("Count.Hold")
		f.entered <- struct{}{}
		select {
		case <-f.hold:
		case <-ctx.Done():
			return 0, ctx.Err()
		}
		return n, nil
	})
	add(otc.Tool{ID: "Count.Slow", Timeout: 30 * time.Millisecond}, func(ctx context.Context, in idemInput) (int64, error) {
		n := f.count("Count.Slow")
		// Sleeps |n| ms, ignoring its context as a careless function
		// does; fails when n is negative.
		time.Sleep(time.Duration(max(in.N, -in.N)) * time.Millisecond)
		if in.N < 0 {
			return 0, errors.New("a late failure")
		}
		return n, nil
	})
	add(otc.Tool{ID: "Count.Fail"}, func(ctx context.Context, in idemFailInput) (int64, error) {
		n := f.count("Count.Fail")
		return 0, &otc.ToolError{Message: fmt.Sprintf("Failure number %d", n), CanRetry: in.Retry}
	})
	add(otc.Tool{ID: "Count.Panic"}, func(ctx context.Context, in idemInput) (int64, error) {
		f.count("Count.Panic")
		panic("boom")
	})
	add(otc.Tool{ID: "Count.Big"}, func(ctx context.Context, _ struct{}) (string, error) {
		n := f.count("Count.Big")
		return fmt.Sprintf("%d:%s", n, strings.Repeat("x", 4096)), nil
	})
	add(otc.Tool{ID: "Count.Busy", MaxConcurrent: 1}, func(ctx context.Context, in idemInput) (int64, error) {
		n := f.count("Count.Busy")
		f.entered <- struct{}{}
		<-f.hold
		return n, nil
	})

	var hopts *otc.HandlerOptions
	var ropts *rest.Options
	if withAuth {
		a, err := auth.NewAPIKeyAuth(map[string]string{"alice": idemAlice, "bob": idemBob})
		require.NoError(t, err)
		hopts = &otc.HandlerOptions{Authenticator: a}
		ropts = &rest.Options{Authenticator: a}
	}
	mux := http.NewServeMux()
	mux.Handle("/otc/", http.StripPrefix("/otc", otc.NewHandler(reg, hopts)))
	mux.Handle("/v1/", http.StripPrefix("/v1", rest.NewHandler(reg, ropts)))
	f.srv = httptest.NewServer(mux)
	t.Cleanup(f.srv.Close)
	t.Cleanup(f.release)
	return f
}

func (f *idemFixture) count(tool string) int64 {
	c, _ := f.runs.LoadOrStore(tool, new(atomic.Int64))
	return c.(*atomic.Int64).Add(1)
}

func (f *idemFixture) ran(tool string) int64 {
	c, ok := f.runs.Load(tool)
	if !ok {
		return 0
	}
	return c.(*atomic.Int64).Load()
}

var releaseOnce sync.Map

func (f *idemFixture) release() {
	if _, done := releaseOnce.LoadOrStore(f, true); !done {
		close(f.hold)
	}
}

// idemAnswer is an HTTP answer as these tests read it.
type idemAnswer struct {
	status   int
	replayed string
	body     map[string]any
	raw      string
}

// call sends an OTC call as key's caller ("" for none).
func (f *idemFixture) call(t *testing.T, key, tool, callID string, input any) idemAnswer {
	t.Helper()
	req := map[string]any{"tool_id": tool, "input": input}
	if callID != "" {
		req["call_id"] = callID
	}
	b, err := json.Marshal(map[string]any{"request": req})
	require.NoError(t, err)
	return f.send(t, key, "/otc/tools/call", "", string(b))
}

// rest sends a REST call as key's caller, with X-Request-Id callID.
func (f *idemFixture) rest(t *testing.T, key, tool, callID string, input any) idemAnswer {
	t.Helper()
	b, err := json.Marshal(map[string]any{"schema_version": "0.1.0", "args": input})
	require.NoError(t, err)
	name := strings.ReplaceAll(tool, ".", "_")
	return f.send(t, key, "/v1/tools/"+name+":invoke", callID, string(b))
}

func (f *idemFixture) send(t *testing.T, key, path, requestID, body string) idemAnswer {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, f.srv.URL+path, strings.NewReader(body))
	require.NoError(t, err)
	req.Header.Set("Content-Type", "application/json")
	if key != "" {
		req.Header.Set("OXP-API-Key", key)
	}
	if requestID != "" {
		req.Header.Set("X-Request-Id", requestID)
	}
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	var raw strings.Builder
	_, err = fmt.Fprint(&raw, mustRead(t, resp))
	require.NoError(t, err)
	a := idemAnswer{status: resp.StatusCode, replayed: resp.Header.Get(otc.HeaderReplayed), raw: raw.String()}
	require.NoError(t, json.Unmarshal([]byte(a.raw), &a.body), "body: %s", a.raw)
	return a
}

func mustRead(t *testing.T, resp *http.Response) string {
	t.Helper()
	var b strings.Builder
	buf := make([]byte, 4096)
	for {
		n, err := resp.Body.Read(buf)
		b.Write(buf[:n])
		if err != nil {
			break
		}
	}
	return b.String()
}

// result returns the OTC result object of a 200 answer.
func (a idemAnswer) result(t *testing.T) map[string]any {
	t.Helper()
	require.Equal(t, http.StatusOK, a.status, a.raw)
	res, ok := a.body["result"].(map[string]any)
	require.True(t, ok, a.raw)
	return res
}

func (a idemAnswer) value(t *testing.T) any {
	t.Helper()
	res := a.result(t)
	require.Equal(t, true, res["success"], a.raw)
	return res["value"]
}

func (a idemAnswer) toolError(t *testing.T) map[string]any {
	t.Helper()
	res := a.result(t)
	require.Equal(t, false, res["success"], a.raw)
	e, ok := res["error"].(map[string]any)
	require.True(t, ok, a.raw)
	return e
}

func TestIdempotencySequentialReplay(t *testing.T) {
	f := newIdemFixture(t, idempotency.NewMemoryStore(nil), false)

	first := f.call(t, "", "Count.Up", "call-1", map[string]any{"n": 1})
	assert.EqualValues(t, 1, first.value(t))
	assert.Empty(t, first.replayed, "the first call ran")
	second := f.call(t, "", "Count.Up", "call-1", map[string]any{"n": 1})
	assert.EqualValues(t, 1, second.value(t), "the retry gets the first call's value")
	assert.Equal(t, "true", second.replayed)
	assert.Equal(t, "call-1", second.result(t)["call_id"])
	assert.Equal(t, first.result(t)["duration"], second.result(t)["duration"], "the original duration")
	assert.EqualValues(t, 1, f.ran("Count.Up"))

	// The same call named by its versioned id, with its input written
	// another way, is the same call.
	third := f.call(t, "", "Count.Up@1.0.0", "call-1", json.RawMessage(`{ "n" : 1.0 }`))
	assert.EqualValues(t, 1, third.value(t))
	assert.EqualValues(t, 1, f.ran("Count.Up"))

	// A new call id runs; a call without one always runs.
	assert.EqualValues(t, 2, f.call(t, "", "Count.Up", "call-2", map[string]any{"n": 1}).value(t))
	assert.EqualValues(t, 3, f.call(t, "", "Count.Up", "", map[string]any{"n": 1}).value(t))
	assert.EqualValues(t, 4, f.call(t, "", "Count.Up", "", map[string]any{"n": 1}).value(t))
}

func TestIdempotencyConcurrentDuplicatesRunOnce(t *testing.T) {
	f := newIdemFixture(t, idempotency.NewMemoryStore(nil), false)
	const n = 8
	answers := make([]idemAnswer, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			if i%2 == 0 {
				answers[i] = f.call(t, "", "Count.Hold", "same", map[string]any{})
			} else {
				answers[i] = f.rest(t, "", "Count.Hold", "same", map[string]any{})
			}
		})
	}
	<-f.entered // the first is running; the others wait for it
	time.Sleep(50 * time.Millisecond)
	assert.EqualValues(t, 1, f.ran("Count.Hold"), "a duplicate never runs in parallel")
	f.release()
	wg.Wait()
	replayed := 0
	for i, a := range answers {
		if i%2 == 0 {
			assert.EqualValues(t, 1, a.value(t))
		} else {
			require.Equal(t, http.StatusOK, a.status, a.raw)
			assert.EqualValues(t, 1, a.body["result"])
		}
		if a.replayed == "true" {
			replayed++
		}
	}
	assert.Equal(t, n-1, replayed, "all but the first are replays")
	assert.EqualValues(t, 1, f.ran("Count.Hold"))
}

func TestIdempotencyWaitingDuplicateBoundedByItsContext(t *testing.T) {
	store := idempotency.NewMemoryStore(nil)
	reg := otc.NewRegistry(&otc.RegistryOptions{Logger: slog.New(slog.DiscardHandler), Idempotency: store})
	hold, entered := make(chan struct{}), make(chan struct{})
	var runs atomic.Int64
	require.NoError(t, otc.Register(reg, otc.Tool{ID: "Count.Hold", Version: "1.0.0", Description: "Holds."},
		func(ctx context.Context, _ struct{}) (int64, error) {
			n := runs.Add(1)
			close(entered)
			<-hold
			return n, nil
		}))
	firstDone := make(chan otc.CallResult)
	go func() {
		res, _ := reg.Call(context.Background(), &otc.CallRequest{ToolID: "Count.Hold", CallID: "k"})
		firstDone <- res
	}()
	<-entered
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Millisecond)
	defer cancel()
	res, err := reg.Call(ctx, &otc.CallRequest{ToolID: "Count.Hold", CallID: "k"})
	require.NoError(t, err)
	require.NotNil(t, res.Error, "the duplicate gave up waiting")
	assert.True(t, res.Error.CanRetry)
	assert.Contains(t, res.Error.Message, "still running this call")
	assert.Equal(t, otc.OutcomeCanceled, otc.OutcomeOf(res, err))
	close(hold)
	first := <-firstDone
	assert.Equal(t, json.RawMessage(`1`), first.Value)
	again, err := reg.Call(context.Background(), &otc.CallRequest{ToolID: "Count.Hold", CallID: "k"})
	require.NoError(t, err)
	assert.True(t, again.Replayed)
	assert.Equal(t, json.RawMessage(`1`), again.Value)
	assert.EqualValues(t, 1, runs.Load())
}

// TestIdempotencyWaitIsBounded: a duplicate of a call in flight waits at
// most RegistryOptions.IdempotencyWait, then is told to ask again later;
// it never runs the call.
func TestIdempotencyWaitIsBounded(t *testing.T) {
	const wait = 100 * time.Millisecond
	reg := otc.NewRegistry(&otc.RegistryOptions{Logger: slog.New(slog.DiscardHandler), Idempotency: idempotency.NewMemoryStore(nil), IdempotencyWait: wait})
	hold, entered := make(chan struct{}), make(chan struct{})
	var runs atomic.Int64
	require.NoError(t, otc.Register(reg, otc.Tool{ID: "Count.Hold", Version: "1.0.0", Description: "Holds."},
		func(ctx context.Context, _ struct{}) (int64, error) {
			n := runs.Add(1)
			close(entered)
			<-hold
			return n, nil
		}))
	firstDone := make(chan otc.CallResult)
	go func() {
		res, _ := reg.Call(context.Background(), &otc.CallRequest{ToolID: "Count.Hold", CallID: "k"})
		firstDone <- res
	}()
	<-entered
	start := time.Now()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second) // a failure here, not a hang
	defer cancel()
	// The first call holds until hold is closed, below: the duplicate
	// that answers before that waited IdempotencyWait, not for the call.
	res, err := reg.Call(ctx, &otc.CallRequest{ToolID: "Count.Hold", CallID: "k"})
	took := time.Since(start)
	require.NoError(t, err)
	require.NotNil(t, res.Error, "the duplicate stopped waiting")
	assert.GreaterOrEqual(t, took, wait)
	assert.True(t, res.Error.CanRetry)
	assert.Equal(t, time.Second, res.Error.RetryAfter)
	assert.Contains(t, res.Error.Message, "still running this call")
	assert.Contains(t, res.Error.DeveloperMessage, "IdempotencyWait")
	assert.Equal(t, otc.OutcomeBusy, otc.OutcomeOf(res, err))
	close(hold)
	assert.Equal(t, json.RawMessage(`1`), (<-firstDone).Value)
	again, err := reg.Call(context.Background(), &otc.CallRequest{ToolID: "Count.Hold", CallID: "k"})
	require.NoError(t, err)
	assert.True(t, again.Replayed)
	assert.EqualValues(t, 1, runs.Load())
}

func TestIdempotencyWhatIsRecorded(t *testing.T) {
	f := newIdemFixture(t, idempotency.NewMemoryStore(nil), false)

	t.Run("tool error without can_retry is replayed", func(t *testing.T) {
		a := f.call(t, "", "Count.Fail", "fail-final", map[string]any{})
		assert.Equal(t, "Failure number 1", a.toolError(t)["message"])
		b := f.call(t, "", "Count.Fail", "fail-final", map[string]any{})
		assert.Equal(t, "Failure number 1", b.toolError(t)["message"])
		assert.Equal(t, "true", b.replayed)
		assert.EqualValues(t, 1, f.ran("Count.Fail"))
	})
	t.Run("tool error with can_retry runs again", func(t *testing.T) {
		in := map[string]any{"retry": true}
		a := f.call(t, "", "Count.Fail", "fail-retry", in)
		assert.Equal(t, "Failure number 2", a.toolError(t)["message"])
		assert.Equal(t, true, a.toolError(t)["can_retry"])
		b := f.call(t, "", "Count.Fail", "fail-retry", in)
		assert.Equal(t, "Failure number 3", b.toolError(t)["message"], "a retry must really retry")
		assert.Empty(t, b.replayed)
	})
	t.Run("a panic is recorded", func(t *testing.T) {
		a := f.rest(t, "", "Count.Panic", "panic-1", map[string]any{})
		assert.Equal(t, http.StatusInternalServerError, a.status, a.raw)
		b := f.rest(t, "", "Count.Panic", "panic-1", map[string]any{})
		assert.Equal(t, http.StatusInternalServerError, b.status, b.raw)
		assert.Equal(t, a.body["error"].(map[string]any)["code"], b.body["error"].(map[string]any)["code"])
		assert.Equal(t, "true", b.replayed)
		assert.EqualValues(t, 1, f.ran("Count.Panic"), "a function that may have acted before it panicked is not run again")
	})
	t.Run("failures before the function ran are not recorded", func(t *testing.T) {
		bad := f.call(t, "", "Count.Up", "pre-run", map[string]any{"n": "not a number"})
		assert.Equal(t, http.StatusUnprocessableEntity, bad.status, bad.raw)
		before := f.ran("Count.Up")
		good := f.call(t, "", "Count.Up", "pre-run", map[string]any{"n": 2})
		assert.Equal(t, before+1, toInt(good.value(t)), "the id was not used up by a call that did not run")
		missing := f.call(t, "", "Count.Nope", "pre-run-2", map[string]any{})
		assert.Equal(t, http.StatusBadRequest, missing.status)
		assert.EqualValues(t, before+2, toInt(f.call(t, "", "Count.Up", "pre-run-2", map[string]any{}).value(t)))
	})
	t.Run("busy is not recorded", func(t *testing.T) {
		holder := make(chan idemAnswer)
		go func() { holder <- f.call(t, "", "Count.Busy", "busy-holder", map[string]any{}) }()
		<-f.entered
		a := f.call(t, "", "Count.Busy", "busy-1", map[string]any{})
		assert.Equal(t, true, a.toolError(t)["can_retry"])
		f.release()
		assert.EqualValues(t, 1, (<-holder).value(t))
		b := f.call(t, "", "Count.Busy", "busy-1", map[string]any{})
		assert.EqualValues(t, 2, b.value(t), "the call refused as busy runs when retried")
	})
}

func toInt(v any) int64 {
	f, _ := v.(float64)
	return int64(f)
}

func TestIdempotencyTimeout(t *testing.T) {
	f := newIdemFixture(t, idempotency.NewMemoryStore(nil), false)
	slow := map[string]any{"n": 300}
	a := f.call(t, "", "Count.Slow", "slow-1", slow)
	assert.Equal(t, true, a.toolError(t)["can_retry"], "answered at the timeout")

	// While the function runs on, a retry waits for it rather than
	// running a second copy, and gets what it returned.
	b := f.call(t, "", "Count.Slow", "slow-1", slow)
	assert.EqualValues(t, 1, b.value(t), "the retry got what the late function returned")
	assert.Equal(t, "true", b.replayed)
	assert.EqualValues(t, 1, f.ran("Count.Slow"))

	// A late failure is not recorded: the retry after it runs.
	failing := map[string]any{"n": -300}
	c := f.call(t, "", "Count.Slow", "slow-2", failing)
	assert.Equal(t, true, c.toolError(t)["can_retry"])
	d := f.call(t, "", "Count.Slow", "slow-2", failing)
	assert.Equal(t, true, d.toolError(t)["can_retry"])
	assert.Empty(t, d.replayed)
	assert.EqualValues(t, 3, f.ran("Count.Slow"), "the retry waited for the first run, then ran")
}

func TestIdempotencyReuseWithOtherContentRefused(t *testing.T) {
	f := newIdemFixture(t, idempotency.NewMemoryStore(nil), false)
	assert.EqualValues(t, 1, f.call(t, "", "Count.Up", "reused", map[string]any{"n": 1}).value(t))

	for _, tc := range []struct {
		name, tool string
		input      any
		detail     string
	}{
		{"other input", "Count.Up", map[string]any{"n": 2}, "with different input"},
		{"other tool", "Count.Other", map[string]any{"n": 1}, "for tool Count.Up@1.0.0"},
	} {
		t.Run(tc.name+" over OTC", func(t *testing.T) {
			a := f.call(t, "", tc.tool, "reused", tc.input)
			require.Equal(t, http.StatusBadRequest, a.status, a.raw)
			assert.Equal(t, "The call_id was already used for a different call", a.body["message"])
			assert.Contains(t, a.body["developer_message"], tc.detail)
			assert.Contains(t, a.body["developer_message"], "a new call needs a new call_id")
			assert.NotContains(t, a.raw, `"value"`, "never another call's result")
		})
		t.Run(tc.name+" over REST", func(t *testing.T) {
			a := f.rest(t, "", tc.tool, "reused", tc.input)
			require.Equal(t, http.StatusConflict, a.status, a.raw)
			e, ok := a.body["error"].(map[string]any)
			require.True(t, ok, a.raw)
			assert.Equal(t, rest.CodeCallIDReused, e["code"])
			assert.Equal(t, "The call_id was already used for a different call", e["message"])
		})
	}
	assert.EqualValues(t, 1, f.ran("Count.Up"))
	assert.EqualValues(t, 0, f.ran("Count.Other"))
	// The original still replays.
	assert.EqualValues(t, 1, f.call(t, "", "Count.Up", "reused", map[string]any{"n": 1}).value(t))
}

func TestIdempotencyCallersAreIsolated(t *testing.T) {
	f := newIdemFixture(t, idempotency.NewMemoryStore(nil), true)
	a := f.call(t, idemAlice, "Count.Up", "shared-id", map[string]any{"label": "alice's"})
	assert.EqualValues(t, 1, a.value(t))
	// Bob's call with the same id and other input is neither refused nor
	// given Alice's result: it is his own call.
	b := f.call(t, idemBob, "Count.Up", "shared-id", map[string]any{"label": "bob's"})
	assert.EqualValues(t, 2, b.value(t))
	assert.Empty(t, b.replayed)
	// Each gets their own result back.
	assert.EqualValues(t, 1, f.call(t, idemAlice, "Count.Up", "shared-id", map[string]any{"label": "alice's"}).value(t))
	assert.EqualValues(t, 2, f.rest(t, idemBob, "Count.Up", "shared-id", map[string]any{"label": "bob's"}).body["result"])
	assert.EqualValues(t, 2, f.ran("Count.Up"))
	// A call that fails authentication does not touch the record.
	bad := f.call(t, "wrong-key", "Count.Up", "shared-id", map[string]any{"label": "alice's"})
	assert.Equal(t, http.StatusUnauthorized, bad.status)
}

func TestIdempotencyRESTWithoutRequestIDAlwaysRuns(t *testing.T) {
	f := newIdemFixture(t, idempotency.NewMemoryStore(nil), false)
	a := f.rest(t, "", "Count.Up", "", map[string]any{})
	b := f.rest(t, "", "Count.Up", "", map[string]any{})
	assert.EqualValues(t, 1, a.body["result"])
	assert.EqualValues(t, 2, b.body["result"])
	// An X-Request-Id the view does not accept (too long) is refused, not
	// replaced by a new id: the tool does not run (TestRESTUnusableRequestIDNeverRuns).
	long := strings.Repeat("x", 200)
	assert.Equal(t, http.StatusBadRequest, f.rest(t, "", "Count.Up", long, map[string]any{}).status)
	assert.EqualValues(t, 2, f.ran("Count.Up"))
	// A valid one is a key, shared with OTC's call_id.
	e := f.rest(t, "", "Count.Up", "rest-id", map[string]any{})
	assert.EqualValues(t, 3, e.body["result"])
	assert.EqualValues(t, 3, f.call(t, "", "Count.Up", "rest-id", map[string]any{}).value(t))
}

func TestIdempotencyTTLAndEviction(t *testing.T) {
	t.Run("TTL", func(t *testing.T) {
		const ttl = time.Second // two calls within it, however busy the machine
		f := newIdemFixture(t, idempotency.NewMemoryStore(&idempotency.MemoryStoreOptions{TTL: ttl}), false)
		assert.EqualValues(t, 1, f.call(t, "", "Count.Up", "ttl", map[string]any{}).value(t))
		assert.EqualValues(t, 1, f.call(t, "", "Count.Up", "ttl", map[string]any{}).value(t))
		time.Sleep(ttl + 50*time.Millisecond)
		assert.EqualValues(t, 2, f.call(t, "", "Count.Up", "ttl", map[string]any{}).value(t), "the record expired")
	})
	t.Run("by size", func(t *testing.T) {
		store := idempotency.NewMemoryStore(&idempotency.MemoryStoreOptions{MaxBytes: 3 * 4600})
		f := newIdemFixture(t, store, false)
		for i := range 4 {
			a := f.call(t, "", "Count.Big", fmt.Sprintf("big-%d", i), map[string]any{})
			require.Equal(t, http.StatusOK, a.status)
		}
		assert.Equal(t, 3, store.Len(), "the oldest was evicted")
		first := f.call(t, "", "Count.Big", "big-0", map[string]any{}).value(t).(string)
		assert.True(t, strings.HasPrefix(first, "5:"), "big-0 ran again: %.10s", first)
		last := f.call(t, "", "Count.Big", "big-3", map[string]any{}).value(t).(string)
		assert.True(t, strings.HasPrefix(last, "4:"), "big-3 was kept: %.10s", last)
	})
	t.Run("by entries", func(t *testing.T) {
		store := idempotency.NewMemoryStore(&idempotency.MemoryStoreOptions{MaxEntries: 2})
		f := newIdemFixture(t, store, false)
		for i := range 3 {
			f.call(t, "", "Count.Up", fmt.Sprintf("e-%d", i), map[string]any{})
		}
		assert.Equal(t, 2, store.Len())
		assert.EqualValues(t, 4, f.call(t, "", "Count.Up", "e-0", map[string]any{}).value(t), "e-0 was evicted")
		assert.EqualValues(t, 3, f.call(t, "", "Count.Up", "e-2", map[string]any{}).value(t), "e-2 was kept")
	})
	t.Run("large results are not deduplicated", func(t *testing.T) {
		store := idempotency.NewMemoryStore(&idempotency.MemoryStoreOptions{MaxOutcomeBytes: 1024})
		f := newIdemFixture(t, store, false)
		a := f.call(t, "", "Count.Big", "large", map[string]any{}).value(t).(string)
		b := f.call(t, "", "Count.Big", "large", map[string]any{}).value(t).(string)
		assert.True(t, strings.HasPrefix(a, "1:"))
		assert.True(t, strings.HasPrefix(b, "2:"), "a result over the limit is not kept")
		assert.Equal(t, 0, store.Len())
	})
}

// failingStore is a store whose every operation fails.
type failingStore struct{}

func (failingStore) Claim(context.Context, string, string) (*otc.IdempotencyRecord, otc.IdempotencyClaim, error) {
	return nil, nil, errors.New("connection refused")
}
func (failingStore) Wait(context.Context, string) error { return nil }

func TestIdempotencyStoreFailureDoesNotRun(t *testing.T) {
	f := newIdemFixture(t, failingStore{}, false)
	a := f.call(t, "", "Count.Up", "x", map[string]any{})
	e := a.toolError(t)
	assert.Equal(t, true, e["can_retry"])
	assert.EqualValues(t, 1000, e["retry_after_ms"])
	assert.Contains(t, e["message"], "could not be run just now")
	assert.EqualValues(t, 0, f.ran("Count.Up"), "without its record, the call does not run")
	// A call without a call id does not need the store.
	assert.EqualValues(t, 1, f.call(t, "", "Count.Up", "", map[string]any{}).value(t))
}

func TestIdempotencyLoggedAndObserved(t *testing.T) {
	var logs strings.Builder
	var mu sync.Mutex
	logger := slog.New(slog.NewJSONHandler(writerFunc(func(p []byte) (int, error) {
		mu.Lock()
		defer mu.Unlock()
		return logs.Write(p)
	}), nil))
	var outcomes []otc.Outcome
	reg := otc.NewRegistry(&otc.RegistryOptions{
		Logger:      slog.New(slog.DiscardHandler),
		Idempotency: idempotency.NewMemoryStore(nil),
		Middleware: []otc.Middleware{calllog.New(logger, nil), func(next otc.CallFunc) otc.CallFunc {
			return func(ctx context.Context, c *otc.Call) (otc.CallResult, error) {
				res, err := next(ctx, c)
				outcomes = append(outcomes, otc.OutcomeOf(res, err))
				return res, err
			}
		}},
	})
	require.NoError(t, otc.Register(reg, otc.Tool{ID: "Count.Up", Version: "1.0.0", Description: "Counts."},
		func(context.Context, idemInput) (int, error) { return 1, nil }))
	for _, n := range []int{1, 1, 2} {
		_, err := reg.Call(context.Background(), &otc.CallRequest{ToolID: "Count.Up", CallID: "logged", Input: json.RawMessage(fmt.Sprintf(`{"n":%d}`, n))})
		if n == 2 {
			require.ErrorIs(t, err, otc.ErrCallIDReused)
		} else {
			require.NoError(t, err)
		}
	}
	assert.Equal(t, []otc.Outcome{otc.OutcomeSuccess, otc.OutcomeSuccess, otc.OutcomeConflict}, outcomes)
	lines := strings.Split(strings.TrimSpace(logs.String()), "\n")
	require.Len(t, lines, 3)
	assert.NotContains(t, lines[0], "replayed")
	assert.Contains(t, lines[1], `"replayed":true`)
	assert.Contains(t, lines[2], `"outcome":"conflict"`)
}

type writerFunc func([]byte) (int, error)

func (f writerFunc) Write(p []byte) (int, error) { return f(p) }

// TestRESTUnusableRequestIDNeverRuns checks that an invocation whose
// X-Request-Id cannot be a call id never reaches the tool, however often
// it is sent, and that a usable one, up to the longest, is the key that
// makes a retry a replay.
func TestRESTUnusableRequestIDNeverRuns(t *testing.T) {
	f := newIdemFixture(t, idempotency.NewMemoryStore(nil), false)
	for _, id := range []string{strings.Repeat("x", otc.MaxIDLength+1), "retry 1", "retry-\u00e9", "retry-\xff"} {
		for range 2 {
			a := f.rest(t, "", "Count.Up", id, map[string]any{"n": 1})
			require.Equal(t, http.StatusBadRequest, a.status, a.raw)
			require.True(t, utf8.ValidString(a.raw), "the answer is UTF-8: %q", a.raw)
			e, ok := a.body["error"].(map[string]any)
			require.True(t, ok, a.raw)
			assert.Equal(t, rest.CodeInvalidShape, e["code"])
			assert.Contains(t, e["message"], "X-Request-Id")
			assert.NotContains(t, a.raw, id, "the refused id is not echoed")
		}
	}
	assert.Zero(t, f.ran("Count.Up"), "a refused request never runs the tool")

	longest := strings.Repeat("x", otc.MaxIDLength)
	first := f.rest(t, "", "Count.Up", longest, map[string]any{"n": 1})
	retry := f.rest(t, "", "Count.Up", longest, map[string]any{"n": 1})
	assert.EqualValues(t, 1, first.body["result"], first.raw)
	assert.Empty(t, first.replayed)
	assert.EqualValues(t, 1, retry.body["result"], retry.raw)
	assert.Equal(t, "true", retry.replayed, "the retry is a replay")
	assert.EqualValues(t, 1, f.ran("Count.Up"), "the tool ran once")
}
