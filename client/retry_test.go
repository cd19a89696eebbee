package client_test

// Opt-in retries (seed 002, "Retrying Errors": when can_retry is true the
// client should retry, after retry_after_ms when present), against
// scripted fake servers and against the library's own handler.

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/otcgo/otc"
	"github.com/otcgo/otc/client"
	"github.com/otcgo/otc/mount"
)

// attempt is one request a scripted server received.
type attempt struct {
	at     time.Time
	callID string
}

// reply answers the n-th request (from 1) of a call whose id is callID.
// drop closes the connection without answering.
type reply func(n int, callID string) (status int, body string, drop bool)

// scripted serves replies in turn, repeating the last one, and records
// each request.
type scripted struct {
	mu       sync.Mutex
	attempts []attempt
}

func (s *scripted) log() []attempt {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]attempt(nil), s.attempts...)
}

func serveScript(t *testing.T, replies ...reply) (*scripted, string) {
	t.Helper()
	s := &scripted{}
	srv := serve(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		at := time.Now()
		var body struct {
			Request struct {
				CallID string `json:"call_id"`
			} `json:"request"`
		}
		raw, _ := io.ReadAll(r.Body)
		_ = json.Unmarshal(raw, &body)
		s.mu.Lock()
		s.attempts = append(s.attempts, attempt{at: at, callID: body.Request.CallID})
		n := len(s.attempts)
		s.mu.Unlock()

		status, out, drop := replies[min(n, len(replies))-1](n, body.Request.CallID)
		if drop {
			dropper()(w, r)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(status)
		_, _ = io.WriteString(w, out)
	}))
	return s, srv.URL
}

// retryable is a tool error with can_retry true; retryAfterMS < 0 leaves
// retry_after_ms out.
func retryable(retryAfterMS int) reply {
	return func(n int, callID string) (int, string, bool) {
		after := ""
		if retryAfterMS >= 0 {
			after = fmt.Sprintf(`,"retry_after_ms":%d`, retryAfterMS)
		}
		return 200, fmt.Sprintf(`{"$schema":"otc://1.0","result":{"call_id":%q,"duration":1,"success":false,"error":{"message":"busy, attempt %d","can_retry":true%s}}}`, callID, n, after), false
	}
}

func succeed(n int, callID string) (int, string, bool) {
	return 200, fmt.Sprintf(`{"$schema":"otc://1.0","result":{"call_id":%q,"duration":1,"success":true,"value":%d}}`, callID, n), false
}

func fixed(status int, body string) reply {
	return func(int, string) (int, string, bool) { return status, body, false }
}

func drop(int, string) (int, string, bool) { return 0, "", true }

// gaps returns the time between consecutive attempts.
func gaps(log []attempt) []time.Duration {
	var out []time.Duration
	for i := 1; i < len(log); i++ {
		out = append(out, log[i].at.Sub(log[i-1].at))
	}
	return out
}

// TestRetry_FailsTwiceThenSucceeds: the third attempt succeeds, after the
// waits the server asked for, with the call id of the first.
func TestRetry_FailsTwiceThenSucceeds(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name   string
		callID string
	}{
		{"caller_call_id", "call-7"},
		{"generated_call_id", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			script, url := serveScript(t, retryable(50), retryable(50), succeed)
			c := newClient(t, url, &client.Options{Retry: &client.RetryPolicy{MaxAttempts: 5}})

			res, err := c.Call(t.Context(), "Doorbell.Ring", map[string]any{"doorbell_id": "d1"}, &client.CallOptions{CallID: tc.callID})
			require.NoError(t, err)
			assert.JSONEq(t, `3`, string(res.Value), "the value of the third attempt")

			log := script.log()
			require.Len(t, log, 3)
			id := log[0].callID
			if tc.callID != "" {
				assert.Equal(t, tc.callID, id)
			} else {
				assert.Regexp(t, uuidV4, id, "the client gives the call an id before the first attempt")
			}
			for i, a := range log {
				assert.Equal(t, id, a.callID, "attempt %d reuses the call id", i+1)
			}
			assert.Equal(t, id, res.CallID)
			for i, g := range gaps(log) {
				assert.GreaterOrEqual(t, g, 50*time.Millisecond, "wait %d honours retry_after_ms", i+1)
			}
		})
	}
}

// TestRetry_MaxWaitCapsRetryAfter: a server asking for ten minutes cannot
// stall the caller past MaxWait.
func TestRetry_MaxWaitCapsRetryAfter(t *testing.T) {
	t.Parallel()
	script, url := serveScript(t, retryable(600_000), retryable(600_000), succeed)
	c := newClient(t, url, &client.Options{Retry: &client.RetryPolicy{MaxWait: 20 * time.Millisecond}})
	// The guard fails the test, instead of hanging it, if the cap is lost.
	ctx, cancel := context.WithTimeout(t.Context(), 5*time.Second)
	defer cancel()

	res, err := c.Call(ctx, "Doorbell.Ring", nil, nil)
	require.NoError(t, err)
	assert.JSONEq(t, `3`, string(res.Value))
	log := script.log()
	require.Len(t, log, 3)
	for _, g := range gaps(log) {
		assert.GreaterOrEqual(t, g, 20*time.Millisecond)
	}
}

// TestRetry_Backoff: without retry_after_ms the client waits Backoff,
// doubling at each attempt.
func TestRetry_Backoff(t *testing.T) {
	t.Parallel()
	script, url := serveScript(t, retryable(-1), retryable(-1), retryable(-1), succeed)
	c := newClient(t, url, &client.Options{Retry: &client.RetryPolicy{MaxAttempts: 4, Backoff: 20 * time.Millisecond, MaxWait: time.Second}})

	_, err := c.Call(t.Context(), "Doorbell.Ring", nil, nil)
	require.NoError(t, err)
	g := gaps(script.log())
	require.Len(t, g, 3)
	assert.GreaterOrEqual(t, g[0], 20*time.Millisecond)
	assert.GreaterOrEqual(t, g[1], 40*time.Millisecond)
	assert.GreaterOrEqual(t, g[2], 80*time.Millisecond)
}

// TestRetry_MaxAttempts: the client gives up after MaxAttempts, with the
// last attempt's tool error and result.
func TestRetry_MaxAttempts(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name        string
		maxAttempts int
		want        int
	}{
		{"one_means_no_retry", 1, 1},
		{"two", 2, 2},
		{"zero_means_three", 0, 3},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			script, url := serveScript(t, retryable(1))
			c := newClient(t, url, &client.Options{Retry: &client.RetryPolicy{MaxAttempts: tc.maxAttempts}})
			res, err := c.Call(t.Context(), "Doorbell.Ring", nil, &client.CallOptions{CallID: "c1"})
			te, ok := errors.AsType[*otc.ToolError](err)
			require.True(t, ok, "want a *otc.ToolError, got %T: %v", err, err)
			assert.Equal(t, fmt.Sprintf("busy, attempt %d", tc.want), te.Message, "the last attempt's error")
			assert.True(t, te.CanRetry)
			require.NotNil(t, res)
			assert.Equal(t, "c1", res.CallID)
			assert.Len(t, script.log(), tc.want)
		})
	}
}

// TestRetry_NeverRetried: only a tool error with can_retry true, a rate
// limit and a busy server (TestBusyServerRetried) are retried. Another
// refused call, an unexpected response and a transport failure (after
// which the tool may or may not have run) are not.
func TestRetry_NeverRetried(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name  string
		reply reply
		kind  string // errorKind of the error
	}{
		{"tool_error_can_retry_false", fixed(200, `{"result":{"call_id":"c","duration":1,"success":false,"error":{"message":"no","retry_after_ms":1}}}`), "tool"},
		{"server_error_400", fixed(400, `{"message":"Tool 'X_Y' was not found"}`), "refused"},
		{"unauthenticated_401", fixed(401, `{"message":"Missing API key"}`), "refused"},
		{"too_large_413", fixed(413, `{"message":"Too large"}`), "refused"},
		{"validation_422", fixed(422, `{"message":"Some input parameters are invalid","parameter_errors":{"b":"Must be a number"}}`), "refused"},
		{"html_502", fixed(502, `<html>Bad Gateway</html>`), "response"},
		{"truncated_200", fixed(200, `{"result":{"success":tr`), "response"},
		{"connection_dropped", drop, "other"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			// Every later attempt would succeed: a retry would show.
			script, url := serveScript(t, tc.reply, succeed)
			c := newClient(t, url, &client.Options{Retry: &client.RetryPolicy{MaxAttempts: 5, Backoff: time.Millisecond}})
			_, err := c.Call(t.Context(), "Doorbell.Ring", nil, nil)
			require.Error(t, err)
			assert.Equal(t, tc.kind, errorKind(err), "%v", err)
			assert.Len(t, script.log(), 1)
		})
	}
}

// TestRetry_Disabled: without Options.Retry a retryable error is returned
// at once.
func TestRetry_Disabled(t *testing.T) {
	t.Parallel()
	script, url := serveScript(t, retryable(1), succeed)
	c := newClient(t, url, nil)
	res, err := c.Call(t.Context(), "Doorbell.Ring", nil, nil)
	te, ok := errors.AsType[*otc.ToolError](err)
	require.True(t, ok, "want a *otc.ToolError, got %T: %v", err, err)
	assert.True(t, te.CanRetry)
	assert.Equal(t, time.Millisecond, te.RetryAfter)
	assert.NotNil(t, res)
	assert.Len(t, script.log(), 1)
}

// cancelAfterResponse cancels a context once the client has read and
// closed the first response: the client is then about to wait to retry.
type cancelAfterResponse struct {
	next   client.Doer
	cancel context.CancelFunc
}

func (d cancelAfterResponse) Do(r *http.Request) (*http.Response, error) {
	resp, err := d.next.Do(r)
	if err == nil {
		resp.Body = cancelOnClose{resp.Body, d.cancel}
	}
	return resp, err
}

type cancelOnClose struct {
	io.ReadCloser
	cancel context.CancelFunc
}

func (b cancelOnClose) Close() error {
	err := b.ReadCloser.Close()
	b.cancel()
	return err
}

// TestRetry_ContextEndsDuringWait: the wait stops as soon as the context
// ends, and the error says both what the tool said and why the client
// stopped.
func TestRetry_ContextEndsDuringWait(t *testing.T) {
	t.Parallel()
	// The server asks for ten minutes and the policy allows an hour: only
	// the context can end the wait.
	policy := &client.RetryPolicy{MaxWait: time.Hour}

	t.Run("cancelled", func(t *testing.T) {
		t.Parallel()
		script, url := serveScript(t, retryable(600_000), succeed)
		ctx, cancel := context.WithCancel(t.Context())
		defer cancel()
		c := newClient(t, url, &client.Options{Retry: policy, HTTPClient: cancelAfterResponse{http.DefaultClient, cancel}})
		res, err := callWithGuard(t, func() (*client.Result, error) { return c.Call(ctx, "Doorbell.Ring", nil, nil) })
		assert.ErrorIs(t, err, context.Canceled)
		checkAbandoned(t, res, err)
		assert.Len(t, script.log(), 1)
	})
	t.Run("deadline", func(t *testing.T) {
		t.Parallel()
		script, url := serveScript(t, retryable(600_000), succeed)
		// Long enough for the first attempt to complete even on a loaded
		// machine, so that the deadline passes during the wait.
		ctx, cancel := context.WithTimeout(t.Context(), 500*time.Millisecond)
		defer cancel()
		c := newClient(t, url, &client.Options{Retry: policy})
		res, err := callWithGuard(t, func() (*client.Result, error) { return c.Call(ctx, "Doorbell.Ring", nil, nil) })
		assert.ErrorIs(t, err, context.DeadlineExceeded)
		checkAbandoned(t, res, err)
		assert.Len(t, script.log(), 1)
	})
	t.Run("already_cancelled", func(t *testing.T) {
		t.Parallel()
		script, url := serveScript(t, succeed)
		ctx, cancel := context.WithCancel(t.Context())
		cancel()
		c := newClient(t, url, &client.Options{Retry: policy})
		res, err := c.Call(ctx, "Doorbell.Ring", nil, nil)
		assert.ErrorIs(t, err, context.Canceled)
		assert.Nil(t, res)
		assert.Empty(t, script.log(), "nothing is sent")
	})
}

// callWithGuard runs call, failing the test if it has not returned after
// a time far beyond what the test waits for but far short of the wait the
// server asked for, so that a broken cancellation fails instead of hanging.
func callWithGuard(t *testing.T, call func() (*client.Result, error)) (*client.Result, error) {
	t.Helper()
	type outcome struct {
		res *client.Result
		err error
	}
	done := make(chan outcome, 1)
	go func() {
		res, err := call()
		done <- outcome{res, err}
	}()
	select {
	case o := <-done:
		return o.res, o.err
	case <-time.After(10 * time.Second):
		t.Fatal("the call kept waiting after its context ended")
		return nil, nil
	}
}

func checkAbandoned(t *testing.T, res *client.Result, err error) {
	t.Helper()
	require.Error(t, err)
	te, ok := errors.AsType[*otc.ToolError](err)
	require.True(t, ok, "the tool error is still there: %T: %v", err, err)
	assert.Equal(t, "busy, attempt 1", te.Message)
	assert.Equal(t, 10*time.Minute, te.RetryAfter)
	require.NotNil(t, res, "the result of the last attempt")
	assert.NotEmpty(t, res.CallID)
	assert.Contains(t, err.Error(), "Doorbell.Ring")
	assert.Contains(t, err.Error(), "busy, attempt 1")
	assert.NotContains(t, err.Error(), "\n", "one line")
}

// TestRetry_OwnHandler retries a tool of the library's own registry that
// fails twice with a retry hint, and checks the call id the tool saw.
func TestRetry_OwnHandler(t *testing.T) {
	t.Parallel()
	var mu sync.Mutex
	var ids []string
	reg := otc.NewRegistry(&otc.RegistryOptions{Logger: quiet})
	require.NoError(t, otc.Register(reg, otc.Tool{ID: "Door.Open", Version: "1.0.0", Description: "Opens a door; jams twice."},
		func(ctx context.Context, _ struct{}) (string, error) {
			mu.Lock()
			defer mu.Unlock()
			ids = append(ids, otc.CallID(ctx))
			if len(ids) < 3 {
				return "", &otc.ToolError{Message: "The door is jammed", CanRetry: true, RetryAfter: 10 * time.Millisecond}
			}
			return "open", nil
		}))
	srv := serve(t, otc.NewHandler(reg, nil))
	c := newClient(t, srv.URL, &client.Options{Retry: &client.RetryPolicy{}})

	got, err := client.CallAs[string](t.Context(), c, "Door.Open", nil, nil)
	require.NoError(t, err)
	assert.Equal(t, "open", got)
	mu.Lock()
	defer mu.Unlock()
	require.Len(t, ids, 3)
	assert.Regexp(t, uuidV4, ids[0])
	assert.Equal(t, []string{ids[0], ids[0], ids[0]}, ids)
}

// TestRetry_Transport: a call that failed in transport is sent again
// only under a policy with Transport, and only where running it twice
// cannot happen (an OTC server deduplicates by call id) or does no harm
// (the call says it is idempotent); TransportOnly hands refusals back at
// once.
func TestRetry_Transport(t *testing.T) {
	t.Parallel()
	ms := time.Millisecond
	for _, tc := range []struct {
		name     string
		policy   client.RetryPolicy
		replies  []reply
		attempts int
		ok       bool
	}{
		{"dropped_then_answered", client.RetryPolicy{Transport: true, Backoff: ms}, []reply{drop, succeed}, 2, true},
		{"dropped_without_transport", client.RetryPolicy{Backoff: ms}, []reply{drop, succeed}, 1, false},
		{"bad_gateway", client.RetryPolicy{Transport: true, Backoff: ms}, []reply{fixed(502, "<html>bad gateway</html>")}, 3, false},
		{"transport_only_dropped", client.RetryPolicy{TransportOnly: true, Backoff: ms}, []reply{drop, succeed}, 2, true},
		{"transport_only_refusal", client.RetryPolicy{TransportOnly: true, Backoff: ms}, []reply{retryable(1), succeed}, 1, false},
		{"transport_tool_error", client.RetryPolicy{Transport: true, Backoff: ms}, []reply{retryable(1), succeed}, 2, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			script, url := serveScript(t, tc.replies...)
			p := tc.policy
			c := newClient(t, url, &client.Options{Retry: &p})
			_, err := c.Call(t.Context(), "Doorbell.Ring", nil, nil)
			if tc.ok {
				require.NoError(t, err)
			} else {
				require.Error(t, err)
			}
			log := script.log()
			require.Len(t, log, tc.attempts)
			for _, a := range log {
				assert.Equal(t, log[0].callID, a.callID, "every attempt carries the call's id")
			}
		})
	}
}

// TestRetry_TransportNeedsIdempotence: a server whose protocol does not
// deduplicate calls (the REST view) gets a call that failed in transport
// again only when the call says it is idempotent.
func TestRetry_TransportNeedsIdempotence(t *testing.T) {
	t.Parallel()
	reg, _ := formatsRegistry(nil)
	mux := http.NewServeMux()
	mount.All(mux, reg, nil)
	var posts atomic.Int64
	srv := serve(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodPost && posts.Add(1) <= 2 {
			dropper()(w, r) // the first attempt of each call is cut before it reaches the tool
			return
		}
		mux.ServeHTTP(w, r)
	}))
	c := newClient(t, srv.URL+mount.PrefixREST, &client.Options{Format: client.FormatREST, Retry: &client.RetryPolicy{Transport: true, Backoff: time.Millisecond}})
	require.False(t, c.DeduplicatesCalls())

	_, err := c.Call(t.Context(), "Math_Add", addInput{A: 1, B: 2}, nil)
	require.Error(t, err)
	assert.True(t, c.Unreached(err), "%v", err)
	assert.EqualValues(t, 1, posts.Load(), "not sent again: it might run twice")

	sum, err := client.CallAs[float64](t.Context(), c, "Math_Add", addInput{A: 1, B: 2}, &client.CallOptions{Idempotent: true})
	require.NoError(t, err)
	assert.Equal(t, 3.0, sum)
	assert.EqualValues(t, 3, posts.Load(), "cut once, sent again once")
}

// TestUnreached: which failures are in transport.
func TestUnreached(t *testing.T) {
	c, err := client.New("http://127.0.0.1:1", nil)
	require.NoError(t, err)
	for _, tc := range []struct {
		err  error
		want bool
	}{
		{nil, false},
		{errors.New("dial tcp 127.0.0.1:1: connect: connection refused"), true},
		{fmt.Errorf("otc client: call X: %w", &otc.ToolError{Message: "no", CanRetry: true}), false},
		{&otc.Error{Code: otc.CodeUnavailable}, true},
		{&otc.Error{Code: otc.CodeRateLimited}, false},
		{&otc.Error{Code: otc.CodeInvalidInput}, false},
		{&client.ResponseError{StatusCode: 502}, true},
		{&client.ResponseError{StatusCode: 0}, true},
		{&client.ResponseError{StatusCode: 404}, false},
		{&client.RPCError{Code: -32601, Method: "tools/call"}, false},
		{fmt.Errorf("x: %w", &client.OriginError{What: "the card", Given: "http://a", Named: "http://b"}), false},
	} {
		assert.Equal(t, tc.want, c.Unreached(tc.err), "%v", tc.err)
	}

	// A real refused connection.
	_, err = c.Call(t.Context(), "Math.Add", nil, nil)
	require.Error(t, err)
	assert.True(t, c.Unreached(err), "%v", err)
}
