package main

import (
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// callResult is the result object of an OTC call answer.
type callResult struct {
	CallID  string          `json:"call_id"`
	Success bool            `json:"success"`
	Value   json.RawMessage `json:"value"`
	Error   *struct {
		Message      string `json:"message"`
		CanRetry     bool   `json:"can_retry"`
		RetryAfterMs int    `json:"retry_after_ms"`
	} `json:"error"`
}

// postCall sends an OTC call and decodes the result of a 200 answer.
func postCall(t *testing.T, c *http.Client, base, body string) callResult {
	t.Helper()
	resp, err := c.Post(base+"/tools/call", "application/json", strings.NewReader(body))
	require.NoError(t, err)
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	require.Equal(t, http.StatusOK, resp.StatusCode, "%s", b)
	var out struct {
		Result callResult `json:"result"`
	}
	require.NoError(t, json.Unmarshal(b, &out), "%s", b)
	return out.Result
}

// TestTimerWait_Timeout: a wait past Timer.Wait's 2 s timeout is answered
// at the timeout, as a tool error that may be retried, over real HTTP.
func TestTimerWait_Timeout(t *testing.T) {
	t.Parallel()
	logger := slog.New(slog.DiscardHandler)
	reg, err := newRegistry(logger, nil, nil, nil, false)
	require.NoError(t, err)
	handler, _, err := newServer(reg, credentials{}, shared{}, site{}, logger, nil)
	require.NoError(t, err)
	srv := httptest.NewServer(handler)
	t.Cleanup(srv.Close)

	start := time.Now()
	res := postCall(t, srv.Client(), srv.URL, `{"request":{"tool_id":"Timer.Wait@1.0.0","input":{"ms":9000}}}`)
	elapsed := time.Since(start)
	require.False(t, res.Success)
	require.NotNil(t, res.Error)
	assert.Equal(t, "Tool 'Timer_Wait' did not finish within 2s", res.Error.Message)
	assert.True(t, res.Error.CanRetry)
	// Not a timing test: the call must not have waited out its 9 s.
	assert.Less(t, elapsed, 9*time.Second, "the answer came at the timeout, not when the wait ended")
}

// TestTimerWait_MaxConcurrent holds four waits running, then calls a fifth:
// it is refused at once, as a tool error with a retry hint, and once the
// four have finished a call runs again.
func TestTimerWait_MaxConcurrent(t *testing.T) {
	t.Parallel()
	started := make(recordSignal, waitMaxConcurrent)
	logger := slog.New(started)
	reg, err := newRegistry(logger, nil, nil, nil, false)
	require.NoError(t, err)
	handler, _, err := newServer(reg, credentials{}, shared{}, site{}, slog.New(slog.DiscardHandler), nil)
	require.NoError(t, err)
	srv := httptest.NewServer(handler)
	t.Cleanup(srv.Close)

	var wg sync.WaitGroup
	results := make([]callResult, waitMaxConcurrent)
	for i := range waitMaxConcurrent {
		wg.Go(func() {
			results[i] = postCall(t, srv.Client(), srv.URL, fmt.Sprintf(`{"request":{"tool_id":"Timer.Wait@1.0.0","call_id":"hold-%d","input":{"ms":1500}}}`, i))
		})
	}
	for range waitMaxConcurrent {
		select {
		case <-started:
		case <-time.After(time.Minute): // a guard: each wait logs as it starts
			t.Fatal("the four waits did not all start")
		}
	}
	res := postCall(t, srv.Client(), srv.URL, `{"request":{"tool_id":"Timer.Wait@1.0.0","input":{"ms":0}}}`)
	require.False(t, res.Success, "a fifth wait while four run")
	require.NotNil(t, res.Error)
	assert.Equal(t, "Tool 'Timer_Wait' is busy; try again shortly", res.Error.Message)
	assert.True(t, res.Error.CanRetry)
	assert.Equal(t, 1000, res.Error.RetryAfterMs)

	wg.Wait()
	for i, r := range results {
		assert.True(t, r.Success, "wait %d: %+v", i, r.Error)
		assert.JSONEq(t, `1500`, string(r.Value))
	}
	res = postCall(t, srv.Client(), srv.URL, `{"request":{"tool_id":"Timer.Wait@1.0.0","input":{"ms":0}}}`)
	assert.True(t, res.Success, "a wait once the four have finished: %+v", res.Error)
}

// TestMain_LogCalls runs the program with OTC_LOG_CALLS=1 and calls it
// over OTC and REST: each call writes one JSON record on stderr, with the
// call id among its fields and no secret or input value.
func TestMain_LogCalls(t *testing.T) {
	t.Parallel()
	cmd, lines := startMainEnv(t, "-addr 127.0.0.1:0", "OTC_LOG_CALLS=1")
	t.Cleanup(func() { _ = cmd.Process.Kill() })
	base := listeningURL(t, nextLine(t, lines))

	const secret = "signing-key-value-3f9a1c"
	const message = "message-to-sign-7b2e"
	res := postCall(t, http.DefaultClient, base, `{"request":{"tool_id":"Signer.Sign","call_id":"log-call-1","trace_id":"trace-1",`+
		`"input":{"message":"`+message+`"},"context":{"secrets":[{"id":"SIGNING_KEY","value":"`+secret+`"}]}}}`)
	require.True(t, res.Success)

	record := nextCallRecord(t, lines)
	assert.NotContains(t, record.line, secret)
	assert.NotContains(t, record.line, message)
	assert.Equal(t, "tool call", record.fields["msg"])
	assert.Equal(t, "INFO", record.fields["level"])
	assert.Equal(t, "Signer.Sign@1.0.0", record.fields["tool_id"])
	assert.Equal(t, "log-call-1", record.fields["call_id"])
	assert.Equal(t, "trace-1", record.fields["trace_id"])
	assert.Equal(t, "otc", record.fields["protocol"])
	assert.Equal(t, "success", record.fields["outcome"])
	assert.IsType(t, float64(0), record.fields["duration_ms"])
	assert.NotContains(t, record.fields, "caller", "the server does not authenticate")

	req, err := http.NewRequest(http.MethodPost, base+"/v1/tools/Calculator_Add:invoke",
		strings.NewReader(`{"schema_version":"0.1.0","args":{"a":"x","b":2}}`))
	require.NoError(t, err)
	req.Header.Set("X-Request-Id", "log-call-2")
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	_ = resp.Body.Close()
	require.Equal(t, http.StatusBadRequest, resp.StatusCode)

	record = nextCallRecord(t, lines)
	assert.Equal(t, "Calculator.Add@1.0.0", record.fields["tool_id"])
	assert.Equal(t, "log-call-2", record.fields["call_id"])
	assert.Equal(t, "http", record.fields["protocol"])
	assert.Equal(t, "invalid_input", record.fields["outcome"])
	assert.NotContains(t, record.fields, "trace_id", "the call sent none")
}

// callRecord is one JSON line of the call log.
type callRecord struct {
	line   string
	fields map[string]any
}

// nextCallRecord reads stderr until the next JSON record of a call.
func nextCallRecord(t *testing.T, lines <-chan string) callRecord {
	t.Helper()
	for {
		l := nextLine(t, lines)
		if !strings.HasPrefix(l, "{") {
			continue // the text log of the server itself
		}
		var fields map[string]any
		require.NoError(t, json.Unmarshal([]byte(l), &fields), "a call record must be one JSON object: %s", l)
		return callRecord{l, fields}
	}
}

// TestMain_ReadsLoggedAndLimited runs the program with OTC_LOG_CALLS=1
// and OTC_RATE_LIMIT=5/m: a read of a resource over MCP writes a record
// of the call log (message "read", its URI), and the caller's reads are
// refused past the limit as its calls are.
func TestMain_ReadsLoggedAndLimited(t *testing.T) {
	t.Parallel()
	cmd, lines := startMainEnv(t, "-addr 127.0.0.1:0", "OTC_LOG_CALLS=1", "OTC_RATE_LIMIT=5/m")
	t.Cleanup(func() { _ = cmd.Process.Kill() })
	base := listeningURL(t, nextLine(t, lines))
	read := func() int {
		req, err := http.NewRequest(http.MethodPost, base+"/mcp", strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"resources/read","params":{"uri":"calc://constants"}}`))
		require.NoError(t, err)
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		req.Header.Set("MCP-Protocol-Version", "2025-11-25")
		resp, err := http.DefaultClient.Do(req)
		require.NoError(t, err)
		resp.Body.Close()
		return resp.StatusCode
	}
	require.Equal(t, http.StatusOK, read())
	record := nextCallRecord(t, lines)
	assert.Equal(t, "read", record.fields["msg"])
	assert.Equal(t, "calc://constants", record.fields["target"])
	assert.Equal(t, "mcp", record.fields["protocol"])
	assert.Equal(t, "success", record.fields["outcome"])

	statuses := map[int]int{http.StatusOK: 1}
	for range 29 {
		statuses[read()]++
	}
	assert.Equal(t, map[int]int{http.StatusOK: 5, http.StatusTooManyRequests: 25}, statuses, "30 reads at a limit of 5")
}
