package client_test

// Rate limits and busy servers over OTC: a 429 or 503 is an *otc.Error of
// its class with the wait the server asked for, which RetryPolicy honours
// and ModelText tells the model.

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/otcgo/otc"
	"github.com/otcgo/otc/client"
	"github.com/otcgo/otc/ratelimit"
)

// TestRateLimitedCall: the library's own handler behind ratelimit, one
// call a minute: the second call is an *otc.Error with CodeRateLimited and
// the wait the server asked for (Retry-After), retried within MaxWait by
// the policy, and told to the model with when to try again.
func TestRateLimitedCall(t *testing.T) {
	limit, err := ratelimit.New(&ratelimit.Options{All: ratelimit.PerMinute(1)})
	require.NoError(t, err)
	var runs atomic.Int64
	reg := otc.NewRegistry(&otc.RegistryOptions{Middleware: []otc.Middleware{limit}})
	require.NoError(t, otc.Register(reg, otc.Tool{ID: "Calculator.Add", Version: "1.0.0", Description: "Adds."},
		func(_ context.Context, in struct {
			A float64 `json:"a" jsonschema:"description=A."`
		}) (float64, error) {
			runs.Add(1)
			return in.A, nil
		}))
	var requests atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodPost {
			requests.Add(1)
		}
		otc.NewHandler(reg, nil).ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)

	c, err := client.New(srv.URL, &client.Options{Retry: &client.RetryPolicy{MaxAttempts: 2, MaxWait: 20 * time.Millisecond}})
	require.NoError(t, err)
	_, err = c.Call(t.Context(), "Calculator.Add", map[string]any{"a": 1}, nil)
	require.NoError(t, err)
	res, err := c.Call(t.Context(), "Calculator.Add", map[string]any{"a": 2}, nil)
	require.Error(t, err)
	assert.Nil(t, res)
	var e *otc.Error
	require.True(t, errors.As(err, &e), "%T: %v", err, err)
	assert.Equal(t, otc.CodeRateLimited, e.Code)
	assert.Greater(t, e.RetryAfter, 30*time.Second, "the wait the server asked for: most of a minute")
	assert.Equal(t, int64(3), requests.Load(), "the refused call was retried once, within MaxWait")
	assert.Equal(t, int64(1), runs.Load())

	text, ok := client.ModelText(res, err)
	require.True(t, ok)
	assert.Contains(t, text, "This may succeed if tried again after")
}

// TestBusyServerRetried: a load balancer's 503 (not the protocol's JSON)
// with Retry-After is CodeUnavailable with that wait; the call is sent
// again, with the same call id, and its answer is returned.
func TestBusyServerRetried(t *testing.T) {
	var n atomic.Int64
	var mu sync.Mutex
	var ids []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		id := callIDOf(t, r)
		mu.Lock()
		ids = append(ids, id)
		mu.Unlock()
		if n.Add(1) == 1 {
			w.Header().Set("Retry-After", "1")
			w.Header().Set("Content-Type", "text/html")
			w.WriteHeader(http.StatusServiceUnavailable)
			_, _ = w.Write([]byte("<html>no server is available</html>"))
			return
		}
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(`{"result":{"call_id":"x","duration":1,"success":true,"value":7}}`))
	}))
	t.Cleanup(srv.Close)

	c, err := client.New(srv.URL, &client.Options{Retry: &client.RetryPolicy{MaxWait: 10 * time.Millisecond}})
	require.NoError(t, err)
	res, err := c.Call(t.Context(), "Job.Run", nil, nil)
	require.NoError(t, err)
	assert.JSONEq(t, `7`, string(res.Value))
	mu.Lock()
	require.Len(t, ids, 2)
	assert.Equal(t, ids[0], ids[1], "the same call id, so that an otc server runs it once")
	mu.Unlock()

	// Without a policy: the error, with the class and the wait.
	n.Store(0)
	plain, err := client.New(srv.URL, nil)
	require.NoError(t, err)
	_, err = plain.Call(t.Context(), "Job.Run", nil, nil)
	var e *otc.Error
	require.True(t, errors.As(err, &e), "%T: %v", err, err)
	assert.Equal(t, otc.CodeUnavailable, e.Code)
	assert.Equal(t, time.Second, e.RetryAfter)
	assert.Contains(t, e.DeveloperMessage, "no server is available")
}

// callIDOf reads the call id of an OTC call request.
func callIDOf(t *testing.T, r *http.Request) string {
	t.Helper()
	var body struct {
		Request struct {
			CallID string `json:"call_id"`
		} `json:"request"`
	}
	require.NoError(t, json.NewDecoder(r.Body).Decode(&body))
	return body.Request.CallID
}

// TestDrainingServerRetried: the protocol's 503 (a server going away) is
// CodeUnavailable and retried; a bare 503 page without Retry-After stays
// an unexpected response (TestCall_UnexpectedResponses).
func TestDrainingServerRetried(t *testing.T) {
	var n atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		if n.Add(1) == 1 {
			w.WriteHeader(http.StatusServiceUnavailable)
			_, _ = w.Write([]byte(`{"message":"The tool server is temporarily unavailable","developer_message":"the server is draining"}`))
			return
		}
		_, _ = w.Write([]byte(`{"result":{"call_id":"x","duration":1,"success":true,"value":"ok"}}`))
	}))
	t.Cleanup(srv.Close)
	c, err := client.New(srv.URL, &client.Options{Retry: &client.RetryPolicy{Backoff: time.Millisecond}})
	require.NoError(t, err)
	res, err := c.Call(t.Context(), "Job.Run", nil, nil)
	require.NoError(t, err)
	assert.JSONEq(t, `"ok"`, string(res.Value))
	assert.Equal(t, int64(2), n.Load())
}
