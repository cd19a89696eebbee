package otc_test

// Tests of the call pipeline over real HTTP, through the OTC handler and
// the REST view: middleware order and what it sees, refusals, the outcome
// class of every kind of call, call logging, per-tool limits and the HTTP
// request accessor.

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/otcgo/otc"
	"github.com/otcgo/otc/auth"
	"github.com/otcgo/otc/calllog"
	"github.com/otcgo/otc/internal/testkit"
	"github.com/otcgo/otc/rest"
)

const (
	pipeAPIKey  = "pipe-api-key-value-8c41d2"
	pipeSecret  = "pipe-secret-value-2e7f90"
	pipeInputAB = "pipe-input-value-5a3b7c"
)

// pipeFixture serves one registry over OTC (/otc/) and REST (/v1/), both
// behind API-key authentication with the key named "ci".
type pipeFixture struct {
	srv     *httptest.Server
	reg     *otc.Registry
	release chan struct{} // closes to let Pipe.Hold return
	holding chan struct{} // receives when a Pipe.Hold call starts
	ran     atomic.Int64  // runs of Pipe.Echo
}

type pipeKey struct{}

// newPipeFixture registers the fixture's tools on a registry built with
// opts (Logger is set to discard when nil).
func newPipeFixture(t *testing.T, opts otc.RegistryOptions) *pipeFixture {
	t.Helper()
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	f := &pipeFixture{reg: otc.NewRegistry(&opts), release: make(chan struct{}), holding: make(chan struct{}, 16)}
	t.Cleanup(func() {
		select {
		case <-f.release:
		default:
			close(f.release)
		}
	})
	type echoIn struct {
		S string `json:"s" jsonschema:"description=A string."`
	}
	require.NoError(t, otc.Register(f.reg, otc.Tool{ID: "Pipe.Echo", Version: "1.0.0", Description: "Echoes s, with what middleware put in the context.",
		Requirements: &otc.Requirements{Secrets: []otc.SecretRequirement{{ID: "KEY"}}}},
		func(ctx context.Context, in echoIn) (string, error) {
			f.ran.Add(1)
			v, _ := ctx.Value(pipeKey{}).(string)
			return in.S + "|" + v, nil
		}))
	require.NoError(t, otc.Register(f.reg, otc.Tool{ID: "Pipe.Fail", Version: "1.0.0", Description: "Fails, or panics."},
		func(ctx context.Context, in struct {
			Panic bool `json:"panic,omitempty" jsonschema:"description=Panic instead."`
		}) (string, error) {
			if in.Panic {
				panic("pipe panic")
			}
			return "", &otc.ToolError{Message: "it failed", CanRetry: true}
		}))
	require.NoError(t, otc.Register(f.reg, otc.Tool{ID: "Pipe.Hold", Version: "1.0.0", Description: "Runs until released, ignoring its context.",
		Timeout: 100 * time.Millisecond, MaxConcurrent: 1},
		func(ctx context.Context, in struct{}) (string, error) {
			f.holding <- struct{}{}
			<-f.release
			return "released", nil
		}))
	require.NoError(t, otc.Register(f.reg, otc.Tool{ID: "Pipe.Request", Version: "1.0.0", Description: "Reports a header of its HTTP request."},
		func(ctx context.Context, in struct{}) (string, error) {
			r := otc.HTTPRequest(ctx)
			if r == nil {
				return "no request", nil
			}
			return r.Header.Get("X-Pipe"), nil
		}))
	auth, err := auth.NewAPIKeyAuth(map[string]string{"ci": pipeAPIKey})
	require.NoError(t, err)
	mux := http.NewServeMux()
	mux.Handle("/otc/", http.StripPrefix("/otc", otc.NewHandler(f.reg, &otc.HandlerOptions{Authenticator: auth})))
	mux.Handle("/v1/", http.StripPrefix("/v1", rest.NewHandler(f.reg, &rest.Options{Authenticator: auth})))
	f.srv = httptest.NewServer(mux)
	t.Cleanup(f.srv.Close)
	return f
}

// pipeAnswer is an answer, decoded.
type pipeAnswer struct {
	status int
	body   []byte
	doc    map[string]any
}

// send posts body to path with the API key and extra headers.
func (f *pipeFixture) send(t *testing.T, path, body string, header ...string) pipeAnswer {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, f.srv.URL+path, strings.NewReader(body))
	require.NoError(t, err)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set(otc.HeaderAPIKey, pipeAPIKey)
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	resp, err := f.srv.Client().Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	a := pipeAnswer{status: resp.StatusCode, body: b}
	require.NoError(t, json.Unmarshal(b, &a.doc), "%s", b)
	return a
}

// otcCall is the OTC body of a call.
func otcCall(tool, callID, input string) string {
	return fmt.Sprintf(`{"request":{"tool_id":%q,"call_id":%q,"trace_id":"trace-%s","input":%s,"context":{"secrets":[{"id":"KEY","value":%q}]}}}`,
		tool, callID, callID, input, pipeSecret)
}

// restCall is the REST body of a call.
func restCall(input string) string {
	return fmt.Sprintf(`{"schema_version":"0.1.0","args":%s,"context":{"secrets":[{"id":"KEY","value":%q}]},"trace":{"trace_id":"trace-rest"}}`,
		input, pipeSecret)
}

// recorder is middleware that records what it sees.
type recorder struct {
	mu       sync.Mutex
	events   []string
	calls    []otc.Call
	outcomes []otc.Outcome
}

func (rec *recorder) middleware(name string) otc.Middleware {
	return func(next otc.CallFunc) otc.CallFunc {
		return func(ctx context.Context, c *otc.Call) (otc.CallResult, error) {
			rec.mu.Lock()
			rec.events = append(rec.events, name+" before")
			if name == "outer" {
				rec.calls = append(rec.calls, *c)
			}
			rec.mu.Unlock()
			res, err := next(context.WithValue(ctx, pipeKey{}, "from "+name), c)
			rec.mu.Lock()
			rec.events = append(rec.events, name+" after")
			if name == "outer" {
				rec.outcomes = append(rec.outcomes, otc.OutcomeOf(res, err))
			}
			rec.mu.Unlock()
			return res, err
		}
	}
}

func (rec *recorder) take() (events []string, calls []otc.Call, outcomes []otc.Outcome) {
	rec.mu.Lock()
	defer rec.mu.Unlock()
	events, calls, outcomes = rec.events, rec.calls, rec.outcomes
	rec.events, rec.calls, rec.outcomes = nil, nil, nil
	return
}

// TestMiddlewareOrderAndView calls a tool over both wire formats through
// two middleware: the first listed runs outermost, the innermost's context
// value reaches the function, and the Call holds what the issue lists.
func TestMiddlewareOrderAndView(t *testing.T) {
	rec := &recorder{}
	f := newPipeFixture(t, otc.RegistryOptions{Middleware: []otc.Middleware{rec.middleware("outer"), rec.middleware("inner")}})

	a := f.send(t, "/otc/tools/call", otcCall("Pipe.Echo", "order-1", `{"s":"x"}`))
	require.Equal(t, http.StatusOK, a.status, "%s", a.body)
	assert.Equal(t, "x|from inner", a.doc["result"].(map[string]any)["value"])
	events, calls, outcomes := rec.take()
	assert.Equal(t, []string{"outer before", "inner before", "inner after", "outer after"}, events)
	require.Len(t, calls, 1)
	c := calls[0]
	assert.Equal(t, otc.ProtocolOTC, c.Protocol)
	assert.Equal(t, "Pipe.Echo", c.ToolID)
	require.NotNil(t, c.Tool)
	assert.Equal(t, "Pipe.Echo@1.0.0", c.Tool.ID)
	assert.Equal(t, "Pipe_Echo", c.Tool.Name)
	assert.Equal(t, "order-1", c.CallID)
	assert.Equal(t, "trace-order-1", c.TraceID)
	require.NotNil(t, c.Identity)
	assert.Equal(t, "ci", c.Identity.Name)
	assert.JSONEq(t, `{"s":"x"}`, string(c.Input))
	assert.Equal(t, []otc.Outcome{otc.OutcomeSuccess}, outcomes)

	a = f.send(t, "/v1/tools/Pipe_Echo:invoke", restCall(`{"s":"y"}`), "X-Request-Id", "order-2")
	require.Equal(t, http.StatusOK, a.status, "%s", a.body)
	assert.Equal(t, "y|from inner", a.doc["result"])
	events, calls, _ = rec.take()
	assert.Equal(t, []string{"outer before", "inner before", "inner after", "outer after"}, events)
	require.Len(t, calls, 1)
	c = calls[0]
	assert.Equal(t, otc.ProtocolHTTP, c.Protocol)
	assert.Equal(t, "Pipe_Echo", c.ToolID)
	assert.Equal(t, "Pipe.Echo@1.0.0", c.Tool.ID)
	assert.Equal(t, "order-2", c.CallID)
	assert.Equal(t, "trace-rest", c.TraceID)
	assert.Equal(t, "ci", c.Identity.Name)
	assert.JSONEq(t, `{"s":"y"}`, string(c.Input))

	// A call id the caller did not send is generated before middleware
	// runs, and is the one the answer carries.
	a = f.send(t, "/otc/tools/call", `{"request":{"tool_id":"Pipe.Request"}}`)
	require.Equal(t, http.StatusOK, a.status, "%s", a.body)
	_, calls, _ = rec.take()
	require.Len(t, calls, 1)
	assert.NotEmpty(t, calls[0].CallID)
	assert.Equal(t, calls[0].CallID, a.doc["result"].(map[string]any)["call_id"])
}

// TestMiddlewareRefusal refuses calls from middleware and checks how each
// wire format renders the refusal; the function never runs.
func TestMiddlewareRefusal(t *testing.T) {
	refuse := func(next otc.CallFunc) otc.CallFunc {
		return func(ctx context.Context, c *otc.Call) (otc.CallResult, error) {
			switch c.CallID {
			case "refuse-error":
				return otc.CallResult{}, &otc.Error{Code: otc.CodeServerError, Message: "Calls of this tool are paused", DeveloperMessage: "maintenance until noon"}
			case "refuse-auth":
				return otc.CallResult{}, &otc.Error{Code: otc.CodeUnauthenticated, Message: "This key may not call this tool"}
			case "refuse-plain":
				return otc.CallResult{}, errors.New("quota exhausted for ci")
			}
			return next(ctx, c)
		}
	}
	f := newPipeFixture(t, otc.RegistryOptions{Middleware: []otc.Middleware{refuse}})

	for _, tt := range []struct {
		callID               string
		otcStatus            int
		message, developer   string
		restStatus           int
		restCode, restPrefix string
	}{
		{"refuse-error", http.StatusBadRequest, "Calls of this tool are paused", "maintenance until noon", http.StatusForbidden, rest.CodeCallRefused, "Calls of this tool are paused"},
		{"refuse-auth", http.StatusUnauthorized, "This key may not call this tool", "", http.StatusUnauthorized, rest.CodeUnauthenticated, "This key may not call this tool"},
		{"refuse-plain", http.StatusBadRequest, "The call was refused", "quota exhausted for ci", http.StatusForbidden, rest.CodeCallRefused, "The call was refused"},
	} {
		t.Run(tt.callID, func(t *testing.T) {
			a := f.send(t, "/otc/tools/call", otcCall("Pipe.Echo", tt.callID, `{"s":"x"}`))
			assert.Equal(t, tt.otcStatus, a.status, "%s", a.body)
			assert.Equal(t, tt.message, a.doc["message"])
			if tt.developer != "" {
				assert.Equal(t, tt.developer, a.doc["developer_message"])
			} else {
				assert.NotContains(t, a.doc, "developer_message")
			}
			assert.NotContains(t, a.doc, "result")

			r := f.send(t, "/v1/tools/Pipe_Echo:invoke", restCall(`{"s":"x"}`), "X-Request-Id", tt.callID)
			assert.Equal(t, tt.restStatus, r.status, "%s", r.body)
			assert.Equal(t, false, r.doc["ok"])
			e := r.doc["error"].(map[string]any)
			assert.Equal(t, tt.restCode, e["code"])
			assert.Equal(t, tt.restPrefix, e["message"])
		})
	}
	assert.Zero(t, f.ran.Load(), "a refused call never reaches the function")
}

// TestOutcomeClasses makes a call of every outcome class through both wire
// formats, and checks the class middleware observes and the status.
func TestOutcomeClasses(t *testing.T) {
	rec := &recorder{}
	f := newPipeFixture(t, otc.RegistryOptions{Middleware: []otc.Middleware{rec.middleware("outer")}})

	type wire struct {
		path, body string
		status     int
	}
	for _, tt := range []struct {
		name       string
		want       otc.Outcome
		otc, rest  wire
		toolSeen   bool // Call.Tool is set
		otcToolErr bool // the OTC answer is a 200 with success false
	}{
		{"success", otc.OutcomeSuccess,
			wire{"/otc/tools/call", otcCall("Pipe.Echo", "c1", `{"s":"x"}`), 200},
			wire{"/v1/tools/Pipe_Echo:invoke", restCall(`{"s":"x"}`), 200}, true, false},
		{"tool_error", otc.OutcomeToolError,
			wire{"/otc/tools/call", otcCall("Pipe.Fail", "c2", `{}`), 200},
			wire{"/v1/tools/Pipe_Fail:invoke", restCall(`{}`), 500}, true, true},
		{"fault", otc.OutcomeFault,
			wire{"/otc/tools/call", otcCall("Pipe.Fail", "c3", `{"panic":true}`), 200},
			wire{"/v1/tools/Pipe_Fail:invoke", restCall(`{"panic":true}`), 500}, true, true},
		{"not_found", otc.OutcomeNotFound,
			wire{"/otc/tools/call", otcCall("Pipe.Nope", "c4", `{}`), 400},
			wire{"/v1/tools/Pipe_Nope:invoke", restCall(`{}`), 404}, false, false},
		{"bad_request", otc.OutcomeBadRequest,
			wire{"/otc/tools/call", otcCall("Pipe..Echo", "c5", `{}`), 400},
			wire{"/v1/tools/Pipe_Echo@1.x:invoke", restCall(`{}`), 404}, false, false},
		{"invalid_input", otc.OutcomeInvalidInput,
			wire{"/otc/tools/call", otcCall("Pipe.Echo", "c6", `{"s":5}`), 422},
			wire{"/v1/tools/Pipe_Echo:invoke", restCall(`{"s":5}`), 400}, true, false},
		{"missing_requirements", otc.OutcomeMissingRequirements,
			wire{"/otc/tools/call", `{"request":{"tool_id":"Pipe.Echo","input":{"s":"x"}}}`, 400},
			wire{"/v1/tools/Pipe_Echo:invoke", `{"schema_version":"0.1.0","args":{"s":"x"}}`, 400}, true, false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			for _, w := range []wire{tt.otc, tt.rest} {
				a := f.send(t, w.path, w.body)
				assert.Equal(t, w.status, a.status, "%s: %s", w.path, a.body)
				_, calls, outcomes := rec.take()
				require.Len(t, outcomes, 1, w.path)
				assert.Equal(t, tt.want, outcomes[0], w.path)
				assert.Equal(t, tt.toolSeen, calls[0].Tool != nil, w.path)
			}
		})
	}

	t.Run("timeout_and_busy", func(t *testing.T) {
		// Pipe.Hold ignores its context: it is answered at its 100 ms
		// timeout, and holds its one place until released, so the next
		// call is busy.
		a := f.send(t, "/otc/tools/call", otcCall("Pipe.Hold", "c7", `{}`))
		require.Equal(t, http.StatusOK, a.status, "%s", a.body)
		res := a.doc["result"].(map[string]any)
		assert.Equal(t, false, res["success"])
		e := res["error"].(map[string]any)
		assert.Equal(t, "Tool 'Pipe_Hold' did not finish within 100ms", e["message"])
		assert.Equal(t, true, e["can_retry"])
		_, _, outcomes := rec.take()
		assert.Equal(t, []otc.Outcome{otc.OutcomeTimeout}, outcomes)
		<-f.holding

		r := f.send(t, "/v1/tools/Pipe_Hold:invoke", restCall(`{}`))
		assert.Equal(t, http.StatusInternalServerError, r.status, "%s", r.body)
		re := r.doc["error"].(map[string]any)
		assert.Equal(t, rest.CodeExecutionError, re["code"])
		assert.Equal(t, true, re["retryable"])
		assert.Equal(t, float64(1000), re["details"].(map[string]any)["retry_after_ms"])
		_, _, outcomes = rec.take()
		assert.Equal(t, []otc.Outcome{otc.OutcomeBusy}, outcomes)
	})
}

// TestOutcomeCanceled cancels a call while its function runs: the
// function's own answer comes back, classed canceled.
func TestOutcomeCanceled(t *testing.T) {
	t.Parallel()
	reg := otc.NewRegistry(&otc.RegistryOptions{Logger: slog.New(slog.DiscardHandler)})
	started := make(chan struct{})
	// Without a timeout the function runs in the caller's goroutine; with
	// one, in its own.
	for i, timeout := range []time.Duration{-1, time.Hour} {
		id := fmt.Sprintf("Cancel.T%d", i)
		require.NoError(t, otc.Register(reg, otc.Tool{ID: id, Version: "1.0.0", Description: "Waits for its context.", Timeout: timeout},
			func(ctx context.Context, in struct{}) (string, error) {
				started <- struct{}{}
				<-ctx.Done()
				return "", fmt.Errorf("stopped: %w", ctx.Err())
			}))
		ctx, cancel := context.WithCancel(t.Context())
		done := make(chan struct{})
		var res otc.CallResult
		var err error
		go func() {
			defer close(done)
			res, err = reg.Call(ctx, &otc.CallRequest{ToolID: id})
		}()
		<-started
		cancel()
		<-done
		require.NoError(t, err, id)
		require.NotNil(t, res.Error, id)
		assert.Equal(t, "stopped: context canceled", res.Error.Message, id)
		assert.Equal(t, otc.OutcomeCanceled, otc.OutcomeOf(res, err), id)
	}
}

// TestCallLogRecord checks the record calllog.New writes, and that no secret,
// credential or input value reaches it unless inputs are logged.
func TestCallLogRecord(t *testing.T) {
	var buf testkit.SyncBuffer
	logger := slog.New(slog.NewJSONHandler(&buf, nil))
	f := newPipeFixture(t, otc.RegistryOptions{Middleware: []otc.Middleware{calllog.New(logger, nil)}})

	a := f.send(t, "/otc/tools/call", otcCall("Pipe.Echo", "log-1", `{"s":"`+pipeInputAB+`"}`))
	require.Equal(t, http.StatusOK, a.status, "%s", a.body)
	a = f.send(t, "/v1/tools/Pipe_Echo:invoke", restCall(`{"s":5}`), "X-Request-Id", "log-2")
	require.Equal(t, http.StatusBadRequest, a.status, "%s", a.body)
	a = f.send(t, "/otc/tools/call", otcCall("Pipe.Fail", "log-3", `{"panic":true}`))
	require.Equal(t, http.StatusOK, a.status, "%s", a.body)

	records := logRecords(t, &buf)
	require.Len(t, records, 3, buf.String())
	for _, secret := range []string{pipeSecret, pipeAPIKey, pipeInputAB} {
		assert.NotContains(t, buf.String(), secret)
	}
	r := records[0]
	assert.Equal(t, "tool call", r["msg"])
	assert.Equal(t, "INFO", r["level"])
	assert.Equal(t, "Pipe.Echo@1.0.0", r["tool_id"])
	assert.Equal(t, "log-1", r["call_id"])
	assert.Equal(t, "trace-log-1", r["trace_id"])
	assert.Equal(t, "otc", r["protocol"])
	assert.Equal(t, "ci", r["caller"])
	assert.Equal(t, "success", r["outcome"])
	assert.IsType(t, float64(0), r["duration_ms"])
	wantKeys := []string{"time", "level", "msg", "tool_id", "call_id", "trace_id", "protocol", "caller", "outcome", "duration_ms"}
	assert.ElementsMatch(t, wantKeys, keysOf(r), "no other field")

	r = records[1]
	assert.Equal(t, "http", r["protocol"])
	assert.Equal(t, "log-2", r["call_id"])
	assert.Equal(t, "invalid_input", r["outcome"])

	r = records[2]
	assert.Equal(t, "ERROR", r["level"], "a fault is logged as an error")
	assert.Equal(t, "fault", r["outcome"])

	t.Run("log_input", func(t *testing.T) {
		var buf testkit.SyncBuffer
		logger := slog.New(slog.NewJSONHandler(&buf, &slog.HandlerOptions{Level: slog.LevelDebug}))
		f := newPipeFixture(t, otc.RegistryOptions{Middleware: []otc.Middleware{calllog.New(logger, &calllog.Options{LogInput: true, Level: slog.LevelDebug})}})
		a := f.send(t, "/otc/tools/call", otcCall("Pipe.Echo", "log-4", `{"s":5}`))
		require.Equal(t, http.StatusUnprocessableEntity, a.status, "%s", a.body)
		records := logRecords(t, &buf)
		require.Len(t, records, 1)
		assert.Equal(t, "DEBUG", records[0]["level"])
		assert.Equal(t, map[string]any{"s": float64(5)}, records[0]["input"])
		assert.Contains(t, records[0]["error"], "Some input parameters are invalid")
		assert.NotContains(t, buf.String(), pipeSecret, "the call context is not the input")
	})
	t.Run("disabled_level", func(t *testing.T) {
		var buf testkit.SyncBuffer
		logger := slog.New(slog.NewJSONHandler(&buf, &slog.HandlerOptions{Level: slog.LevelWarn}))
		f := newPipeFixture(t, otc.RegistryOptions{Middleware: []otc.Middleware{calllog.New(logger, nil)}})
		f.send(t, "/otc/tools/call", otcCall("Pipe.Echo", "log-5", `{"s":"x"}`))
		f.send(t, "/otc/tools/call", otcCall("Pipe.Fail", "log-6", `{"panic":true}`))
		records := logRecords(t, &buf)
		require.Len(t, records, 1, "only the fault reaches a handler at warn: %s", buf.String())
		assert.Equal(t, "log-6", records[0]["call_id"])
	})
}

// logRecords decodes each JSON line of s.
func logRecords(t *testing.T, s *testkit.SyncBuffer) []map[string]any {
	t.Helper()
	var out []map[string]any
	for line := range strings.SplitSeq(strings.TrimSpace(s.String()), "\n") {
		if line == "" {
			continue
		}
		var m map[string]any
		require.NoError(t, json.Unmarshal([]byte(line), &m), line)
		out = append(out, m)
	}
	return out
}

// TestToolLimits checks the timeout and the concurrency limit under
// concurrent calls: a function that ignores its deadline is answered at
// the deadline but keeps its place until it returns, so calls beyond the
// limit are refused at once, and none runs in excess of it.
func TestToolLimits(t *testing.T) {
	t.Parallel()
	reg := otc.NewRegistry(&otc.RegistryOptions{Logger: slog.New(slog.DiscardHandler), BusyRetryAfter: 250 * time.Millisecond})
	var running, peak atomic.Int64
	release := make(chan struct{})
	entered := make(chan struct{}, 8)
	require.NoError(t, otc.Register(reg, otc.Tool{ID: "Limit.Run", Version: "1.0.0", Description: "Runs until released.",
		Timeout: 20 * time.Millisecond, MaxConcurrent: 3},
		func(ctx context.Context, in struct{}) (string, error) {
			n := running.Add(1)
			defer running.Add(-1)
			for {
				p := peak.Load()
				if n <= p || peak.CompareAndSwap(p, n) {
					break
				}
			}
			entered <- struct{}{}
			<-release
			return "done", nil
		}))
	h := otc.NewHandler(reg, nil)
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)

	call := func() string {
		resp, err := srv.Client().Post(srv.URL+"/tools/call", "application/json", strings.NewReader(`{"request":{"tool_id":"Limit.Run"}}`))
		if err != nil {
			return err.Error()
		}
		defer resp.Body.Close()
		var out struct {
			Result struct {
				Error struct {
					Message      string `json:"message"`
					CanRetry     bool   `json:"can_retry"`
					RetryAfterMS int    `json:"retry_after_ms"`
				} `json:"error"`
			} `json:"result"`
		}
		if err := json.NewDecoder(resp.Body).Decode(&out); err != nil {
			return err.Error()
		}
		e := out.Result.Error
		switch {
		case e.Message == "Tool 'Limit_Run' did not finish within 20ms" && e.CanRetry:
			return "timeout"
		case e.Message == "Tool 'Limit_Run' is busy; try again shortly" && e.CanRetry && e.RetryAfterMS == 250:
			return "busy"
		}
		return fmt.Sprintf("%+v", e)
	}

	const calls = 12
	var wg sync.WaitGroup
	outcomes := make([]string, calls)
	for i := range calls {
		wg.Go(func() { outcomes[i] = call() })
	}
	wg.Wait()
	// Every call has been answered while the three that ran are still
	// running: the answers did not wait for the functions.
	counts := map[string]int{}
	for _, o := range outcomes {
		counts[o]++
	}
	assert.Equal(t, map[string]int{"timeout": 3, "busy": calls - 3}, counts)
	assert.Equal(t, int64(3), running.Load(), "three functions still run, past their deadline")
	// Their places are still taken: a call now, after all the answers, is
	// refused rather than run.
	assert.Equal(t, "busy", call())
	assert.Equal(t, int64(3), running.Load())

	close(release)
	for range 3 {
		<-entered
	}
	assert.LessOrEqual(t, peak.Load(), int64(3), "never more than MaxConcurrent at once")
}

// TestLimitDefaults: the registry's defaults apply to tools that set no
// limit, and a negative limit on a tool turns the default off.
func TestLimitDefaults(t *testing.T) {
	t.Parallel()
	reg := otc.NewRegistry(&otc.RegistryOptions{Logger: slog.New(slog.DiscardHandler), DefaultTimeout: 10 * time.Millisecond})
	sleep := func(ctx context.Context, in struct{}) (string, error) {
		time.Sleep(50 * time.Millisecond)
		return "slept", nil
	}
	require.NoError(t, otc.Register(reg, otc.Tool{ID: "Default.Sleep", Version: "1.0.0", Description: "Sleeps."}, sleep))
	require.NoError(t, otc.Register(reg, otc.Tool{ID: "Unlimited.Sleep", Version: "1.0.0", Description: "Sleeps.", Timeout: -1}, sleep))

	res, err := reg.Call(t.Context(), &otc.CallRequest{ToolID: "Default.Sleep"})
	require.NoError(t, err)
	assert.Equal(t, otc.OutcomeTimeout, otc.OutcomeOf(res, err))
	res, err = reg.Call(t.Context(), &otc.CallRequest{ToolID: "Unlimited.Sleep"})
	require.NoError(t, err)
	assert.Equal(t, otc.OutcomeSuccess, otc.OutcomeOf(res, err))
	assert.JSONEq(t, `"slept"`, string(res.Value))
}

// TestHTTPRequestAccessor: a tool reads its HTTP request over both wire
// formats, and sees none when called directly.
func TestHTTPRequestAccessor(t *testing.T) {
	f := newPipeFixture(t, otc.RegistryOptions{})
	a := f.send(t, "/otc/tools/call", `{"request":{"tool_id":"Pipe.Request"}}`, "X-Pipe", "over-otc")
	assert.Equal(t, "over-otc", a.doc["result"].(map[string]any)["value"])
	a = f.send(t, "/v1/tools/Pipe_Request:invoke", `{"schema_version":"0.1.0","args":{}}`, "X-Pipe", "over-rest")
	assert.Equal(t, "over-rest", a.doc["result"])
	res, err := f.reg.Call(t.Context(), &otc.CallRequest{ToolID: "Pipe.Request"})
	require.NoError(t, err)
	assert.JSONEq(t, `"no request"`, string(res.Value))
}

// TestMiddlewareForeignCall: middleware that passes on a Call it built
// itself gets an error, never a run with missing state.
func TestMiddlewareForeignCall(t *testing.T) {
	t.Parallel()
	forge := func(next otc.CallFunc) otc.CallFunc {
		return func(ctx context.Context, c *otc.Call) (otc.CallResult, error) {
			return next(ctx, &otc.Call{ToolID: c.ToolID, Tool: c.Tool})
		}
	}
	copyCall := func(next otc.CallFunc) otc.CallFunc {
		return func(ctx context.Context, c *otc.Call) (otc.CallResult, error) {
			cp := *c
			return next(ctx, &cp)
		}
	}
	for _, tt := range []struct {
		name string
		mw   otc.Middleware
		ok   bool
	}{{"forged", forge, false}, {"copied", copyCall, true}} {
		reg := otc.NewRegistry(&otc.RegistryOptions{Logger: slog.New(slog.DiscardHandler), Middleware: []otc.Middleware{tt.mw}})
		require.NoError(t, otc.Register(reg, otc.Tool{ID: "A.B", Version: "1.0.0", Description: "Returns 1."},
			func(ctx context.Context, in struct{}) (int, error) { return 1, nil }))
		res, err := reg.Call(t.Context(), &otc.CallRequest{ToolID: "A.B"})
		if tt.ok {
			require.NoError(t, err, tt.name)
			assert.JSONEq(t, `1`, string(res.Value))
			continue
		}
		var e *otc.Error
		require.ErrorAs(t, err, &e, tt.name)
		assert.Equal(t, "The call could not be run", e.Message)
	}
}

// TestCallByToolName: a direct call may name the tool as a model sees it,
// with or without a version, and middleware sees that name.
func TestCallByToolName(t *testing.T) {
	rec := &recorder{}
	f := newPipeFixture(t, otc.RegistryOptions{Middleware: []otc.Middleware{rec.middleware("outer")}})
	for _, tt := range []struct {
		name string
		want otc.Outcome
	}{
		{"Pipe_Request", otc.OutcomeSuccess},
		{"Pipe_Request@1", otc.OutcomeSuccess},
		{"Pipe_Request@1.0.0", otc.OutcomeSuccess},
		{"Pipe_Request@2", otc.OutcomeNotFound},
		{"Pipe_Request@1.x", otc.OutcomeBadRequest},
		{"Pipe_Nope", otc.OutcomeNotFound},
	} {
		res, err := f.reg.Call(t.Context(), &otc.CallRequest{ToolName: tt.name})
		assert.Equal(t, tt.want, otc.OutcomeOf(res, err), tt.name)
		_, calls, _ := rec.take()
		require.Len(t, calls, 1)
		assert.Equal(t, tt.name, calls[0].ToolID)
		if tt.want == otc.OutcomeSuccess {
			assert.JSONEq(t, `"no request"`, string(res.Value), tt.name)
			assert.Equal(t, "Pipe.Request@1.0.0", calls[0].Tool.ID)
		}
	}
}
