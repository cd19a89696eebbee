package main

import (
	"context"
	"encoding/json"
	"log/slog"
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/otcgo/otc"
)

// recordSignal is a slog handler that sends the message of every record,
// debug ones included, so that a test can wait for a tool to start.
type recordSignal chan string

func (recordSignal) Enabled(context.Context, slog.Level) bool { return true }
func (s recordSignal) Handle(_ context.Context, r slog.Record) error {
	s <- r.Message
	return nil
}
func (s recordSignal) WithAttrs([]slog.Attr) slog.Handler { return s }
func (s recordSignal) WithGroup(string) slog.Handler      { return s }

// TestTimerWait_Cancelled cancels a Timer.Wait call once it has started
// waiting: the tool stops at once and reports the cancellation as a tool
// error, instead of waiting out its 10 seconds.
func TestTimerWait_Cancelled(t *testing.T) {
	t.Parallel()
	started := make(recordSignal, 1)
	reg, err := newRegistry(slog.New(started), nil, nil, nil, false)
	require.NoError(t, err)

	ctx, cancel := context.WithCancel(t.Context())
	type outcome struct {
		res otc.CallResult
		err error
	}
	done := make(chan outcome, 1)
	go func() {
		res, err := reg.Call(ctx, &otc.CallRequest{ToolID: "Timer.Wait@1.0.0", Input: json.RawMessage(`{"ms":10000}`)})
		done <- outcome{res, err}
	}()

	select {
	case msg := <-started:
		require.Equal(t, "calculator: Timer.Wait started", msg)
	case <-time.After(time.Minute): // a guard: the tool logs at once
		t.Fatal("Timer.Wait did not start")
	}
	cancel()

	var o outcome
	select {
	case o = <-done:
	case <-time.After(time.Minute): // a guard; a tool that ignored the cancellation returns 10000 after 10 s
		t.Fatal("Timer.Wait did not return")
	}
	require.NoError(t, o.err, "the call ran: a failure is a tool error, not a refusal")
	require.NotNil(t, o.res.Error, "value: %s", o.res.Value)
	assert.Equal(t, "the wait of 10000 ms was cancelled: context canceled", o.res.Error.Message)
	assert.Nil(t, o.res.Value)
}

// TestToolMetadata lists the example's tools over MCP and checks the title
// and hints of each: what a client shows, and whether it asks before a
// call. The list is that of a capability token that may refund, since a
// caller's list holds only the tools it may call.
func TestToolMetadata(t *testing.T) {
	t.Parallel()
	keys := newIssuerKeys(t)
	base := serveWithEnvAuth(t, keys.env())
	a := send(t, http.MethodPost, base+"/mcp", `{"jsonrpc":"2.0","id":1,"method":"tools/list"}`, keys.sign(t, refundClaims("", nil)),
		map[string]string{"Accept": "application/json, text/event-stream", "MCP-Protocol-Version": "2025-11-25"})
	require.Equal(t, http.StatusOK, a.status, a.raw)
	var answer struct {
		Result struct {
			Tools []struct {
				Name        string          `json:"name"`
				Title       string          `json:"title"`
				Annotations json.RawMessage `json:"annotations"`
				Icons       []otc.Icon      `json:"icons"`
			} `json:"tools"`
		} `json:"result"`
	}
	require.NoError(t, json.Unmarshal([]byte(a.raw), &answer))
	readOnly := `{"readOnlyHint":true,"idempotentHint":true,"openWorldHint":false}`
	want := map[string][2]string{
		"Calculator_Add":    {"Add two numbers", readOnly},
		"Counter_Increment": {"Increment the counter", `{"readOnlyHint":false,"destructiveHint":false,"idempotentHint":false,"openWorldHint":false}`},
		"Doorbell_Ring":     {"Ring a doorbell", `{"readOnlyHint":false,"destructiveHint":false,"idempotentHint":false,"openWorldHint":true}`},
		"Math_Evaluate":     {"Evaluate an expression", readOnly},
		"Memory_Store":      {"Keep a number in memory", `{"readOnlyHint":false,"destructiveHint":true,"idempotentHint":true,"openWorldHint":false}`},
		"Payments_Refund":   {"Refund an order", `{"readOnlyHint":false,"destructiveHint":true,"idempotentHint":false,"openWorldHint":false}`},
		"Shipping_Quote":    {"Quote a shipment", readOnly},
		"Signer_Sign":       {"Sign a message", readOnly},
		"Timer_Wait":        {"Wait a while", readOnly},
	}
	require.Len(t, answer.Result.Tools, len(want))
	for _, tool := range answer.Result.Tools {
		w, ok := want[tool.Name]
		require.True(t, ok, tool.Name)
		assert.Equal(t, w[0], tool.Title, tool.Name)
		assert.JSONEq(t, w[1], string(tool.Annotations), tool.Name)
		if tool.Name == "Calculator_Add" {
			assert.Equal(t, []otc.Icon{{Src: addIcon, MIMEType: "image/svg+xml", Sizes: []string{"any"}}}, tool.Icons)
		} else {
			assert.Nil(t, tool.Icons, tool.Name)
		}
	}
}
