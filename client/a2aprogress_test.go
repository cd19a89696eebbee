package client_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/otcgo/otc"
	"github.com/otcgo/otc/client"
	"github.com/otcgo/otc/mount"
)

// TestA2AProgress: a call of an agent that streams, made with a Progress
// callback, follows the agent's stream (SendStreamingMessage): each
// progress report of a tool that runs as a task reaches the callback as
// the agent's status message says it, and the call's value comes after; a
// tool error too, its failure the last report.
func TestA2AProgress(t *testing.T) {
	reg := otc.NewRegistry(nil)
	require.NoError(t, otc.Register(reg, otc.Tool{ID: "Steps.Run", Version: "1.0.0", Description: "Runs three steps.", Tasks: otc.TasksOptional},
		func(ctx context.Context, in struct {
			Fail bool `json:"fail,omitempty" jsonschema:"description=Fail after the steps."`
		}) (string, error) {
			for i := 1; i <= 3; i++ {
				otc.ReportProgress(ctx, float64(i), 3, "step "+string(rune('0'+i)))
			}
			if in.Fail {
				return "", &otc.ToolError{Message: "the last step broke"}
			}
			return "done", nil
		}))
	mux := http.NewServeMux()
	mount.All(mux, reg, nil)
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	c, err := client.New(srv.URL+mount.PrefixA2A, &client.Options{Format: client.FormatA2A})
	require.NoError(t, err)

	var mu sync.Mutex
	var said []string
	progress := func(p client.Progress) {
		mu.Lock()
		defer mu.Unlock()
		if p.Message != "" {
			said = append(said, p.Message)
		}
		assert.NotEmpty(t, p.TaskID)
	}
	res, err := c.Call(t.Context(), "Steps_Run", nil, &client.CallOptions{Progress: progress})
	require.NoError(t, err)
	assert.JSONEq(t, `"done"`, string(res.Value))
	mu.Lock()
	assert.Equal(t, []string{"1 of 3: step 1", "2 of 3: step 2", "3 of 3: step 3"}, said)
	said = nil
	mu.Unlock()

	_, err = c.Call(t.Context(), "Steps_Run", map[string]any{"fail": true}, &client.CallOptions{Progress: progress})
	var te *otc.ToolError
	require.ErrorAs(t, err, &te)
	assert.Contains(t, te.Message, "the last step broke")
	mu.Lock()
	assert.Equal(t, []string{"1 of 3: step 1", "2 of 3: step 2", "3 of 3: step 3", "the last step broke"}, said, strings.Join(said, "; "))
	mu.Unlock()

	// Without a callback, the call is a plain SendMessage, and the same.
	res, err = c.Call(t.Context(), "Steps_Run", nil, nil)
	require.NoError(t, err)
	assert.JSONEq(t, `"done"`, string(res.Value))
}
