package redisstore_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/otcgo/otc"
	"github.com/otcgo/otc/internal/testkit"
	"github.com/otcgo/otc/mcp"
	"github.com/otcgo/otc/redisstore"
	"github.com/otcgo/otc/tasks"
)

func TestTaskStore(t *testing.T) {
	client := needRedis(t)
	testkit.TaskStoreContract(t, func(t *testing.T, l testkit.TaskLimits) tasks.Store {
		return redisstore.NewTaskStore(client, &redisstore.TaskOptions{Prefix: freshPrefix(t, client), TTL: l.TTL, Lease: l.Lease,
			MaxTasksPerOwner: l.PerOwner, MaxRunningPerOwner: l.Running, MaxWebhooksPerOwner: l.Webhooks, MaxResultBytes: l.MaxResult, MaxHistory: l.MaxHistory})
	})
}

// killable is a task store that a test can cut off, as if its replica
// had died: every call then fails, so the replica's leases are no longer
// renewed.
type killable struct {
	tasks.Store
	dead atomic.Bool
}

var errDead = errors.New("the replica is gone")

func (k *killable) Update(ctx context.Context, id string, u *tasks.Update) (*tasks.Task, error) {
	if k.dead.Load() {
		return nil, errDead
	}
	return k.Store.Update(ctx, id, u)
}

// replicas serves one registry twice, as two replicas sharing a task
// store in Redis; a's store can be cut off. started receives each start
// of Job.Wait, stopped its context's error when it stops.
type replicas struct {
	a, b    string
	aStore  *killable
	started chan struct{}
	stopped chan error
}

func newReplicas(t *testing.T) *replicas {
	t.Helper()
	client := needRedis(t)
	prefix := freshPrefix(t, client)
	r := &replicas{started: make(chan struct{}, 4), stopped: make(chan error, 4)}
	serveReplica := func(store tasks.Store) string {
		reg := otc.NewRegistry(&otc.RegistryOptions{Logger: slog.New(slog.DiscardHandler)})
		require.NoError(t, otc.Register(reg, otc.Tool{ID: "Job.Wait", Version: "1.0.0", Description: "Waits until cancelled.", Tasks: otc.TasksRequired, Timeout: time.Minute},
			func(ctx context.Context, _ struct{}) (string, error) {
				r.started <- struct{}{}
				<-ctx.Done()
				r.stopped <- ctx.Err()
				return "", ctx.Err()
			}))
		require.NoError(t, otc.Register(reg, otc.Tool{ID: "Job.Ask", Version: "1.0.0", Description: "Asks, then answers.", Tasks: otc.TasksRequired},
			func(ctx context.Context, _ struct{}) (string, error) {
				a, err := otc.Ask(ctx, otc.InputRequest{Method: otc.MethodElicit, Params: json.RawMessage(`{"mode":"form","message":"Name?","requestedSchema":{"type":"object"}}`)})
				if err != nil {
					return "", err
				}
				return string(a[0]), nil
			}))
		h := mcp.NewHandler(reg, &mcp.Options{Logger: slog.New(slog.DiscardHandler), Tasks: &tasks.Options{Store: store, PollInterval: 50 * time.Millisecond}})
		srv := httptest.NewServer(h)
		t.Cleanup(srv.Close)
		return srv.URL
	}
	newStore := func() tasks.Store {
		return redisstore.NewTaskStore(client, &redisstore.TaskOptions{Prefix: prefix, Lease: 300 * time.Millisecond})
	}
	r.aStore = &killable{Store: newStore()}
	r.a = serveReplica(r.aStore)
	r.b = serveReplica(newStore())
	return r
}

var tasksDeclared = map[string]any{"elicitation": map[string]any{}, "extensions": map[string]any{mcp.ExtensionTasks: map[string]any{}}}

// rpc sends a 2026-07-28 request to url, with name as its Mcp-Name, and
// returns its result, or fails the test on an error.
func rpc(t *testing.T, url, method, name string, params map[string]any) map[string]any {
	t.Helper()
	params["_meta"] = map[string]any{
		"io.modelcontextprotocol/protocolVersion":    mcp.Version20260728,
		"io.modelcontextprotocol/clientCapabilities": tasksDeclared,
	}
	body, err := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": 1, "method": method, "params": params})
	require.NoError(t, err)
	req, err := http.NewRequest(http.MethodPost, url, bytes.NewReader(body))
	require.NoError(t, err)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("MCP-Protocol-Version", mcp.Version20260728)
	req.Header.Set("Mcp-Method", method)
	req.Header.Set("Mcp-Name", name)
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	var out struct {
		Result map[string]any  `json:"result"`
		Error  json.RawMessage `json:"error"`
	}
	require.NoError(t, json.NewDecoder(resp.Body).Decode(&out))
	require.Equal(t, http.StatusOK, resp.StatusCode, "error: %s", out.Error)
	require.NotNil(t, out.Result, "error: %s", out.Error)
	return out.Result
}

// await polls a task on url until its status is not from, and returns it.
func await(t *testing.T, url, id, from string) map[string]any {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		res := rpc(t, url, "tasks/get", id, map[string]any{"taskId": id})
		if res["status"] != from {
			return res
		}
		require.True(t, time.Now().Before(deadline), "task %s still %s", id, from)
		time.Sleep(20 * time.Millisecond)
	}
}

func recv[T any](t *testing.T, ch <-chan T, what string) T {
	t.Helper()
	select {
	case v := <-ch:
		return v
	case <-time.After(10 * time.Second):
		t.Fatalf("no %s within 10s", what)
		panic("unreachable")
	}
}

func TestTaskReplicas(t *testing.T) {
	t.Run("another_replica_reports", func(t *testing.T) {
		r := newReplicas(t)
		id := rpc(t, r.a, "tools/call", "Job_Wait", map[string]any{"name": "Job_Wait"})["taskId"].(string)
		recv(t, r.started, "start")
		res := rpc(t, r.b, "tasks/get", id, map[string]any{"taskId": id})
		assert.Equal(t, "working", res["status"], "B reports the task A runs")
		time.Sleep(500 * time.Millisecond) // longer than the lease: A renews it
		assert.Equal(t, "working", rpc(t, r.b, "tasks/get", id, map[string]any{"taskId": id})["status"])

		assert.Equal(t, map[string]any{"resultType": "complete"}, rpc(t, r.b, "tasks/cancel", id, map[string]any{"taskId": id}))
		assert.Equal(t, "cancelled", rpc(t, r.a, "tasks/get", id, map[string]any{"taskId": id})["status"], "A reports B's cancellation")
		assert.ErrorIs(t, recv(t, r.stopped, "stop"), context.Canceled, "A stops the call at its next renewal")
	})
	t.Run("answers_through_another_replica", func(t *testing.T) {
		r := newReplicas(t)
		id := rpc(t, r.a, "tools/call", "Job_Ask", map[string]any{"name": "Job_Ask"})["taskId"].(string)
		res := await(t, r.b, id, "working")
		require.Equal(t, "input_required", res["status"])
		reqs := res["inputRequests"].(map[string]any)
		require.Len(t, reqs, 1)
		var key string
		for k := range reqs {
			key = k
		}
		rpc(t, r.b, "tasks/update", id, map[string]any{"taskId": id, "inputResponses": map[string]any{key: map[string]any{"action": "accept", "content": map[string]any{"name": "Ada"}}}})
		await(t, r.b, id, "input_required")
		res = await(t, r.b, id, "working")
		require.Equal(t, "completed", res["status"], "%v", res)
		assert.Contains(t, fmt.Sprint(res["result"]), "Ada")
	})
	t.Run("runner_lost", func(t *testing.T) {
		r := newReplicas(t)
		id := rpc(t, r.a, "tools/call", "Job_Wait", map[string]any{"name": "Job_Wait"})["taskId"].(string)
		recv(t, r.started, "start")
		r.aStore.dead.Store(true) // A stops renewing its lease, as a replica that died
		res := await(t, r.b, id, "working")
		assert.Equal(t, "failed", res["status"], "a task whose runner is gone is failed, not working forever")
		e := res["error"].(map[string]any)
		assert.Equal(t, float64(-32603), e["code"])
		assert.Contains(t, e["message"], "stopped before it ended")
		assert.NotContains(t, res, "result")
		r.aStore.dead.Store(false) // A comes back: its late renewal finds the task failed, and stops the call
		assert.ErrorIs(t, recv(t, r.stopped, "stop"), context.Canceled)
		assert.Equal(t, "failed", rpc(t, r.a, "tasks/get", id, map[string]any{"taskId": id})["status"])
	})
}
