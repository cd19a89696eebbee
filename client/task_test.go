package client_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/otcgo/otc"
	"github.com/otcgo/otc/client"
	"github.com/otcgo/otc/mount"
)

// taskServer serves, on every format, Job.Run: a tool that may run as a
// task, which waits for release (or its cancellation) and answers its
// input's n doubled.
func taskServer(t *testing.T) (root string, release chan struct{}, cancelled chan struct{}) {
	t.Helper()
	release, cancelled = make(chan struct{}), make(chan struct{}, 4)
	reg := otc.NewRegistry(nil)
	require.NoError(t, otc.Register(reg, otc.Tool{ID: "Job.Run", Version: "1.0.0", Description: "Runs a job.", Tasks: otc.TasksOptional},
		func(ctx context.Context, in struct {
			N int `json:"n" jsonschema:"description=The number."`
		}) (int, error) {
			select {
			case <-release:
				return 2 * in.N, nil
			case <-ctx.Done():
				cancelled <- struct{}{}
				return 0, ctx.Err()
			}
		}))
	mux := http.NewServeMux()
	mount.All(mux, reg, nil)
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	return srv.URL, release, cancelled
}

// TestTasks: one task API over MCP and A2A: Start hands the task back
// while the tool runs, Status reads it, another client takes it up by its
// id and waits for its value; Cancel stops the tool. Over OTC a call is a
// task done at once.
func TestTasks(t *testing.T) {
	for _, f := range []client.Format{client.FormatMCP, client.FormatA2A} {
		t.Run(string(f), func(t *testing.T) {
			root, release, _ := taskServer(t)
			url := root + map[client.Format]string{client.FormatMCP: mount.PrefixMCP, client.FormatA2A: mount.PrefixA2A}[f]
			opts := &client.Options{Format: f, Tasks: true}
			c, err := client.New(url, opts)
			require.NoError(t, err)
			defs, err := c.ListTools(t.Context())
			require.NoError(t, err)
			tool := toolID(t, defs, "Job_Run")

			task, err := c.Start(t.Context(), tool, map[string]any{"n": 21}, nil)
			require.NoError(t, err)
			require.NotEmpty(t, task.ID, "a task, handed back while the tool runs")
			st, err := task.Status(t.Context())
			require.NoError(t, err)
			assert.Contains(t, []string{"working", "submitted"}, st.State)

			// Another client, as another process would, by the id.
			other, err := client.New(url, opts)
			require.NoError(t, err)
			again, err := other.Task(task.ID, nil)
			require.NoError(t, err)
			close(release)
			res, err := again.Wait(t.Context())
			require.NoError(t, err)
			assert.JSONEq(t, `42`, string(res.Value))
			res, err = task.Wait(t.Context())
			require.NoError(t, err)
			assert.JSONEq(t, `42`, string(res.Value))
			st, err = task.Status(t.Context())
			require.NoError(t, err)
			assert.Equal(t, "completed", st.State)

			// Cancelled while it runs: the tool sees it.
			root2, _, cancelled2 := taskServer(t)
			c2, err := client.New(root2+map[client.Format]string{client.FormatMCP: mount.PrefixMCP, client.FormatA2A: mount.PrefixA2A}[f], opts)
			require.NoError(t, err)
			_, err = c2.ListTools(t.Context())
			require.NoError(t, err)
			long, err := c2.Start(t.Context(), tool, map[string]any{"n": 1}, nil)
			require.NoError(t, err)
			require.NotEmpty(t, long.ID)
			require.NoError(t, long.Cancel(t.Context()))
			select {
			case <-cancelled2:
			case <-time.After(5 * time.Second):
				t.Fatal("the tool was not cancelled")
			}
			_, err = long.Wait(t.Context())
			require.Error(t, err, "a cancelled task has no value")
		})
	}

	t.Run("progress_names_the_task_first", func(t *testing.T) {
		// A call's Progress hears of its MCP task when the server hands
		// it out, before the first tasks/get.
		reg := otc.NewRegistry(nil)
		release := make(chan struct{})
		require.NoError(t, otc.Register(reg, otc.Tool{ID: "Job.Run", Version: "1.0.0", Description: "Runs a job.", Tasks: otc.TasksOptional},
			func(ctx context.Context, _ struct{}) (string, error) {
				select {
				case <-release:
					return "done", nil
				case <-ctx.Done():
					return "", ctx.Err()
				}
			}))
		mux := http.NewServeMux()
		mount.All(mux, reg, nil)
		var polls atomic.Int32
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if r.Header.Get("Mcp-Method") == "tasks/get" {
				polls.Add(1)
			}
			mux.ServeHTTP(w, r)
		}))
		t.Cleanup(srv.Close)
		c, err := client.New(srv.URL+mount.PrefixMCP, &client.Options{Format: client.FormatMCP, Tasks: true})
		require.NoError(t, err)
		var first *client.Progress
		var pollsAtFirst int32
		res, err := c.Call(t.Context(), "Job_Run", nil, &client.CallOptions{Progress: func(p client.Progress) {
			if first == nil {
				first, pollsAtFirst = &p, polls.Load()
				close(release)
			}
		}})
		require.NoError(t, err)
		assert.JSONEq(t, `"done"`, string(res.Value))
		require.NotNil(t, first)
		assert.NotEmpty(t, first.TaskID)
		assert.Equal(t, "working", first.State)
		assert.Zero(t, pollsAtFirst, "named before the first tasks/get")
	})

	t.Run("a2a_carries_no_secrets", func(t *testing.T) {
		// Start refuses what A2A cannot carry, as Call does, before any
		// message is sent.
		root, _, _ := taskServer(t)
		c, err := client.New(root+mount.PrefixA2A, &client.Options{Format: client.FormatA2A})
		require.NoError(t, err)
		_, err = c.Start(t.Context(), "Job_Run", map[string]any{"n": 1}, &client.CallOptions{Secrets: []otc.ToolSecret{{ID: "KEY", Value: "v"}}})
		assert.ErrorContains(t, err, "A2A carries no secrets")
		_, err = c.Start(t.Context(), "Job_Run", map[string]any{"n": 1}, &client.CallOptions{UserID: "u-1"})
		assert.ErrorContains(t, err, "A2A carries no secrets")
	})

	t.Run("otc", func(t *testing.T) {
		root, release, _ := taskServer(t)
		close(release)
		c, err := client.New(root+mount.PrefixOTC, nil)
		require.NoError(t, err)
		task, err := c.Start(t.Context(), "Job.Run", map[string]any{"n": 4}, nil)
		require.NoError(t, err)
		assert.Empty(t, task.ID, "OTC has no tasks: the call is done")
		res, err := task.Wait(t.Context())
		require.NoError(t, err)
		assert.JSONEq(t, `8`, string(res.Value))
		_, err = c.Task("x", nil)
		assert.ErrorContains(t, err, "has no tasks")
	})
}
