package otc_test

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/otcgo/otc"
	"github.com/otcgo/otc/internal/runner"
)

// TestRawResultAndInput: a tool of json.RawMessage in and out (a remote
// tool's shape) gets its input as the text, its own copy, and its result
// goes out as it is when it is JSON on one line, compacted when it spans
// lines, and as an encoding fault when it is not JSON.
func TestRawResultAndInput(t *testing.T) {
	reg := otc.NewRegistry(nil)
	var out json.RawMessage
	var seen json.RawMessage
	require.NoError(t, otc.Register(reg, otc.Tool{
		ID: "Raw.Echo", Version: "1.0.0", Description: "Answers what it is told to.",
		InputSchema: json.RawMessage(`{"type":"object"}`),
	}, func(_ context.Context, in json.RawMessage) (json.RawMessage, error) {
		seen = in
		return out, nil
	}))
	call := func(input string) otc.CallResult {
		t.Helper()
		buf := []byte(input)
		res, err := reg.Call(context.Background(), &otc.CallRequest{ToolID: "Raw.Echo", Input: buf})
		require.NoError(t, err)
		for i := range buf {
			buf[i] = 'x' // the caller's buffer used again: the tool's copy and the result stand
		}
		return res
	}

	out = json.RawMessage(`{"sum":3,"tag":"<b>"}`)
	res := call(` {"a": 1} `)
	require.Nil(t, res.Error)
	assert.JSONEq(t, `{"a":1}`, string(seen), "the input, as the text")
	assert.Equal(t, `{"sum":3,"tag":"<b>"}`, string(res.Value), "JSON on one line goes as it is")

	out = json.RawMessage("{\n  \"sum\": 3\n}")
	res = call(`{}`)
	require.Nil(t, res.Error)
	assert.Equal(t, `{"sum":3}`, string(res.Value), "a result over lines is compacted")

	out = json.RawMessage(`{"sum":`)
	res = call(`{}`)
	require.NotNil(t, res.Error, "a result that is not JSON fails the call")
	assert.True(t, res.Unexpected)
	assert.Nil(t, res.Value)
}

// TestLongToolRunsOnKeptGoroutines: a timed tool whose run took long (a
// remote call's time) runs on goroutines kept between runs from then on.
func TestLongToolRunsOnKeptGoroutines(t *testing.T) {
	reg := otc.NewRegistry(nil)
	type in struct {
		Wait bool `json:"wait" jsonschema:"description=Whether to take a millisecond."`
	}
	require.NoError(t, otc.Register(reg, otc.Tool{ID: "Slow.Wait", Version: "1.0.0", Description: "Waits a millisecond, if asked.", Timeout: time.Second},
		func(_ context.Context, i in) (bool, error) {
			if i.Wait {
				time.Sleep(time.Millisecond)
			}
			return i.Wait, nil
		}))
	call := func(input string) {
		res, err := reg.Call(context.Background(), &otc.CallRequest{ToolID: "Slow.Wait", Input: json.RawMessage(input)})
		require.NoError(t, err)
		require.Nil(t, res.Error)
	}
	call(`{"wait":true}`) // a long run, after which the tool's runs are kept
	before := runner.Runs()
	call(`{"wait":false}`)
	assert.Greater(t, runner.Runs(), before, "the run went on a kept goroutine")
}
