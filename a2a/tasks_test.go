package a2a_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/otcgo/otc"
	"github.com/otcgo/otc/a2a"
	"github.com/otcgo/otc/internal/testkit"
)

// taskServer serves tools that run as tasks, behind testkit.ClaimsAuth
// (each caller names itself by its claims' sub).
func taskServer(t *testing.T) (*server, chan struct{}, chan error) {
	t.Helper()
	release := make(chan struct{})
	stopped := make(chan error, 4)
	reg := otc.NewRegistry(nil)
	require.NoError(t, otc.Register(reg, otc.Tool{ID: "Job.Slow", Version: "1.0.0", Description: "Waits to be released.", Tasks: otc.TasksOptional},
		func(ctx context.Context, _ struct{}) (string, error) {
			select {
			case <-release:
				return "finished", nil
			case <-ctx.Done():
				stopped <- ctx.Err()
				return "", ctx.Err()
			}
		}))
	require.NoError(t, otc.Register(reg, otc.Tool{ID: "Job.Must", Version: "1.0.0", Description: "Runs only as a task.", Tasks: otc.TasksRequired},
		func(context.Context, struct{}) (int, error) { return 7, nil }))
	mux := http.NewServeMux()
	mux.Handle("/a2a/", http.StripPrefix("/a2a", a2a.NewHandler(reg, &a2a.Options{Authenticator: testkit.ClaimsAuth()})))
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	return &server{url: srv.URL + "/a2a"}, release, stopped
}

// as is the header of caller sub.
func as(sub string) []string {
	return []string{testkit.ClaimsHeader, `{"iss":"https://issuer.test","sub":"` + sub + `"}`}
}

// rpcTask is the task a JSON-RPC answer holds, directly or under "task".
func rpcTask(t *testing.T, a answer) (string, string, json.RawMessage) {
	t.Helper()
	r := decodeRPC(t, a)
	require.Nil(t, r.Error, "%s", a.body)
	var wrapped struct {
		Task json.RawMessage `json:"task"`
	}
	raw := r.Result
	if json.Unmarshal(r.Result, &wrapped) == nil && wrapped.Task != nil {
		raw = wrapped.Task
	}
	var task struct {
		ID     string `json:"id"`
		Status struct {
			State string `json:"state"`
		} `json:"status"`
	}
	require.NoError(t, json.Unmarshal(raw, &task), "%s", raw)
	return task.ID, task.Status.State, raw
}

// TestTasks: a message with returnImmediately calling a tool whose calls
// may run as tasks is answered at once with a WORKING task, which GetTask
// then shows COMPLETED with its artifact; CancelTask stops a running one;
// another caller finds none of it; a tool that runs only as a task makes
// a blocking message wait for its end.
func TestTasks(t *testing.T) {
	s, release, stopped := taskServer(t)
	send := func(id, tool string, immediately bool, caller string) answer {
		cfg := ""
		if immediately {
			cfg = `,"configuration":{"returnImmediately":true}`
		}
		return s.post(t, "/", a2a.Version10, `{"jsonrpc":"2.0","id":1,"method":"SendMessage","params":{"message":{"messageId":"`+id+`","role":"ROLE_USER","parts":[{"data":{"tool":"`+tool+`","input":{}}}]}`+cfg+`}}`, as(caller)...)
	}
	get := func(id, caller string) answer {
		return s.post(t, "/", a2a.Version10, `{"jsonrpc":"2.0","id":2,"method":"GetTask","params":{"id":"`+id+`"}}`, as(caller)...)
	}

	id, state, _ := rpcTask(t, send("t1", "Job_Slow", true, "alice"))
	assert.Equal(t, "TASK_STATE_WORKING", state)
	_, state, _ = rpcTask(t, get(id, "alice"))
	assert.Equal(t, "TASK_STATE_WORKING", state)

	r := decodeRPC(t, get(id, "bob"))
	require.NotNil(t, r.Error, "another caller's task is none of bob's business")
	assert.Equal(t, -32001, r.Error.Code)

	release <- struct{}{}
	require.Eventually(t, func() bool {
		_, state, _ := rpcTask(t, get(id, "alice"))
		return state == "TASK_STATE_COMPLETED"
	}, 5*time.Second, 10*time.Millisecond)
	_, _, raw := rpcTask(t, get(id, "alice"))
	assert.Contains(t, string(raw), `{"data":"finished"},{"text":"finished"}`)

	r = decodeRPC(t, s.post(t, "/", a2a.Version10, `{"jsonrpc":"2.0","id":3,"method":"CancelTask","params":{"id":"`+id+`"}}`, as("alice")...))
	require.NotNil(t, r.Error)
	assert.Equal(t, -32002, r.Error.Code, "an ended task is not cancelable")

	// Cancelled while it runs: the call stops.
	id2, _, _ := rpcTask(t, send("t2", "Job_Slow", true, "alice"))
	_, state, _ = rpcTask(t, s.post(t, "/", a2a.Version10, `{"jsonrpc":"2.0","id":4,"method":"CancelTask","params":{"id":"`+id2+`"}}`, as("alice")...))
	assert.Equal(t, "TASK_STATE_CANCELED", state)
	select {
	case err := <-stopped:
		assert.ErrorIs(t, err, context.Canceled)
	case <-time.After(5 * time.Second):
		t.Fatal("the cancelled task's call went on")
	}

	// Over HTTP+JSON too.
	id3, _, _ := rpcTask(t, send("t3", "Job_Slow", true, "alice"))
	a := s.post(t, "/tasks/"+id3+":cancel", a2a.Version10, `{}`, as("alice")...)
	require.Equal(t, http.StatusOK, a.status, "%s", a.body)
	assert.Contains(t, string(a.body), `"TASK_STATE_CANCELED"`)
	<-stopped
	req, err := http.NewRequest(http.MethodGet, s.url+"/tasks/"+id3, nil)
	require.NoError(t, err)
	req.Header.Set(as("alice")[0], as("alice")[1])
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	resp.Body.Close()
	assert.Equal(t, http.StatusOK, resp.StatusCode)
	req.Header.Set(as("bob")[0], as("bob")[1])
	resp, err = http.DefaultClient.Do(req)
	require.NoError(t, err)
	resp.Body.Close()
	assert.Equal(t, http.StatusNotFound, resp.StatusCode, "another caller's task")

	// Runs only as a task: a blocking message waits for its end, and the
	// task is kept.
	id4, state, raw := rpcTask(t, send("t4", "Job_Must", false, "alice"))
	assert.Equal(t, "TASK_STATE_COMPLETED", state, "%s", raw)
	assert.Contains(t, string(raw), `{"data":7}`)
	_, state, _ = rpcTask(t, get(id4, "alice"))
	assert.Equal(t, "TASK_STATE_COMPLETED", state)

	// 0.3: blocking false asks for the task at once.
	a = s.post(t, "/", "", `{"jsonrpc":"2.0","id":5,"method":"message/send","params":{"message":{"kind":"message","messageId":"t5","role":"user","parts":[{"kind":"data","data":{"tool":"Job_Slow","input":{}}}]},"configuration":{"blocking":false}}}`, as("alice")...)
	_, state, raw = rpcTask(t, a)
	assert.Equal(t, "working", state)
	assert.Contains(t, string(raw), `"kind":"task"`)
	release <- struct{}{}
}
