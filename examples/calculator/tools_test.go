package main

import (
	"context"
	"encoding/json"
	"log/slog"
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
	reg, err := newRegistry(slog.New(started), nil, nil)
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
