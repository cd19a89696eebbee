package mcp_test

// A tool that asks in input_required rounds of tools/call, then becomes a
// task ([otc.Tool.AskBeforeTask]), over Streamable HTTP.

import (
	"context"
	"log/slog"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/otcgo/otc"
	"github.com/otcgo/otc/mcp"
)

type whoAnswer struct {
	Name string `json:"name" jsonschema:"description=Your name."`
}

// composeRegistry has the tools of the tests: Job.Greet asks a name
// within its window, then works past the window; Job.Later works past
// its window, then asks; Job.Quick asks nothing and answers at once;
// Job.Insist asks and returns the error when the client cannot answer.
func composeRegistry(t *testing.T, work time.Duration) *otc.Registry {
	t.Helper()
	reg := otc.NewRegistry(&otc.RegistryOptions{Logger: slog.New(slog.DiscardHandler)})
	tool := func(id string, window time.Duration) otc.Tool {
		return otc.Tool{ID: id, Version: "1.0.0", Description: "A tool of the tests: " + id + ".",
			Tasks: otc.TasksRequired, AskBeforeTask: window, Timeout: time.Minute}
	}
	wait := func(ctx context.Context, d time.Duration) error {
		select {
		case <-time.After(d):
			return nil
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	require.NoError(t, otc.Register(reg, tool("Job.Greet", 2*time.Second), func(ctx context.Context, _ struct{}) (string, error) {
		var who whoAnswer
		action, err := otc.Elicit(ctx, "Your name?", &who)
		if err != nil {
			return "", err
		}
		if err := wait(ctx, work); err != nil {
			return "", err
		}
		return "Hello, " + who.Name + " (" + string(action) + ")", nil
	}))
	require.NoError(t, otc.Register(reg, tool("Job.Later", 50*time.Millisecond), func(ctx context.Context, _ struct{}) (string, error) {
		if err := wait(ctx, 300*time.Millisecond); err != nil {
			return "", err
		}
		var who whoAnswer
		if _, err := otc.Elicit(ctx, "Your name, now?", &who); err != nil {
			return "", err
		}
		return "Later, " + who.Name, nil
	}))
	require.NoError(t, otc.Register(reg, tool("Job.Slowpoke", 50*time.Millisecond), func(ctx context.Context, _ struct{}) (string, error) {
		var who whoAnswer
		if _, err := otc.Elicit(ctx, "Your name?", &who); err != nil {
			time.Sleep(300 * time.Millisecond) // returns after its window
			return "", err
		}
		return "Slowly, " + who.Name, nil
	}))
	require.NoError(t, otc.Register(reg, tool("Job.Quick", 20*time.Second), func(context.Context, struct{}) (string, error) {
		return "quick", nil
	}))
	require.NoError(t, otc.Register(reg, tool("Job.Insist", 2*time.Second), func(ctx context.Context, _ struct{}) (string, error) {
		var who whoAnswer
		_, err := otc.Elicit(ctx, "Your name?", &who)
		return who.Name, err
	}))
	return reg
}

func TestAskThenTask(t *testing.T) {
	t.Parallel()
	// The function works 3 s after its answer, past its 2 s window: the
	// second round answers with a working task.
	url := serve(t, composeRegistry(t, 3*time.Second), nil)

	// Round 1: input_required, no task.
	a := round(t, url, "Job_Greet", nil, taskCaps, nil, "")
	require.Equal(t, http.StatusOK, a.status)
	r := decodeInputRequired(t, a)
	require.Len(t, r.InputRequests, 1)
	var key string
	for k, q := range r.InputRequests {
		key = k
		assert.Equal(t, otc.MethodElicit, q.Method)
		assert.Contains(t, string(q.Params), "Your name?")
	}
	assert.NotContains(t, object(t, a.result(t)), "taskId", "round 1 makes no task")

	t.Run("tampered_state", func(t *testing.T) {
		t.Parallel()
		bad := r.RequestState[:len(r.RequestState)-2] + "AA"
		if bad == r.RequestState {
			bad = r.RequestState[:len(r.RequestState)-2] + "BB"
		}
		answers := obj{key: obj{"action": "accept", "content": obj{"name": "Mallory"}}}
		e, _ := round(t, url, "Job_Greet", nil, taskCaps, answers, bad).rpcErr(t, http.StatusBadRequest, -32602)
		assert.Contains(t, e.Message, "requestState was not issued by this server or was altered")
	})
	t.Run("state_of_another_tool", func(t *testing.T) {
		t.Parallel()
		answers := obj{key: obj{"action": "accept", "content": obj{"name": "Mallory"}}}
		e, _ := round(t, url, "Job_Insist", nil, taskCaps, answers, r.RequestState).rpcErr(t, http.StatusBadRequest, -32602)
		assert.Contains(t, e.Message, "requestState belongs to another request")
	})

	// Round 2: the answer, and the call becomes a task when the window
	// ends with the function still working.
	start := time.Now()
	a = round(t, url, "Job_Greet", nil, taskCaps, obj{key: obj{"action": "accept", "content": obj{"name": "Alice"}}}, r.RequestState)
	res := object(t, a.result(t))
	assert.GreaterOrEqual(t, time.Since(start), 2*time.Second, "the task is made when the window ends")
	assert.Equal(t, "task", res["resultType"], "%v", res)
	assert.Equal(t, "working", res["status"])
	assert.NotContains(t, res, "requestState")
	assert.NotContains(t, res, "inputRequests")
	id, _ := res["taskId"].(string)
	require.NotEmpty(t, id)

	got := awaitTask(t, url, id, nil, "completed", "failed", "cancelled")
	require.Equal(t, "completed", got["status"], "%v", got)
	assert.Contains(t, mustJSON(t, got["result"]), "Hello, Alice (accept)", "the task's result reflects the answer of the rounds")
}

func TestAskThenTaskFinishedInWindow(t *testing.T) {
	t.Parallel()
	url := serve(t, composeRegistry(t, 0), nil)

	t.Run("asked_then_done", func(t *testing.T) {
		t.Parallel()
		r := decodeInputRequired(t, round(t, url, "Job_Greet", nil, taskCaps, nil, ""))
		res := object(t, round(t, url, "Job_Greet", nil, taskCaps, obj{"q1": obj{"action": "accept", "content": obj{"name": "Bob"}}}, r.RequestState).result(t))
		assert.Equal(t, "task", res["resultType"], "%v", res)
		assert.Equal(t, "completed", res["status"], "the function returned within the window: its task is made ended")
		got := getTask(t, url, res["taskId"].(string), nil)
		assert.Equal(t, "completed", got["status"])
		assert.Contains(t, mustJSON(t, got["result"]), "Hello, Bob")
	})
	t.Run("asked_nothing", func(t *testing.T) {
		t.Parallel()
		start := time.Now()
		res := object(t, callTool(t, url, "Job_Quick", nil, taskCaps, nil).result(t))
		assert.Less(t, time.Since(start), 15*time.Second, "a function that returns does not wait for the window (20 s)")
		assert.Equal(t, "task", res["resultType"])
		assert.Equal(t, "completed", res["status"])
		got := getTask(t, url, res["taskId"].(string), nil)
		assert.Contains(t, mustJSON(t, got["result"]), "quick")
	})
	t.Run("declined", func(t *testing.T) {
		t.Parallel()
		r := decodeInputRequired(t, round(t, url, "Job_Greet", nil, taskCaps, nil, ""))
		res := object(t, round(t, url, "Job_Greet", nil, taskCaps, obj{"q1": obj{"action": "decline"}}, r.RequestState).result(t))
		got := awaitTask(t, url, res["taskId"].(string), nil, "completed", "failed")
		assert.Contains(t, mustJSON(t, got["result"]), "(decline)")
	})
	t.Run("without_elicitation", func(t *testing.T) {
		t.Parallel()
		caps := obj{"extensions": obj{mcp.ExtensionTasks: obj{}}}
		e, _ := round(t, url, "Job_Insist", nil, caps, nil, "").rpcErr(t, http.StatusBadRequest, -32021)
		assert.Equal(t, "Missing required client capability: elicitation", e.Message, "as for a call that is no task")
	})
	t.Run("without_tasks", func(t *testing.T) {
		t.Parallel()
		e, _ := round(t, url, "Job_Greet", nil, obj{"elicitation": obj{}}, nil, "").rpcErr(t, http.StatusBadRequest, -32021)
		assert.Contains(t, e.Message, mcp.ExtensionTasks, "a task-required tool still needs the extension")
	})
	t.Run("asked_and_returned_after_the_window", func(t *testing.T) {
		t.Parallel()
		// The function asked within its window, and returned after it:
		// the call waits for it and answers input_required, not a task.
		start := time.Now()
		r := decodeInputRequired(t, round(t, url, "Job_Slowpoke", nil, taskCaps, nil, ""))
		assert.GreaterOrEqual(t, time.Since(start), 300*time.Millisecond)
		res := object(t, round(t, url, "Job_Slowpoke", nil, taskCaps, obj{"q1": obj{"action": "accept", "content": obj{"name": "Eve"}}}, r.RequestState).result(t))
		require.Equal(t, "task", res["resultType"], "%v", res)
		got := awaitTask(t, url, res["taskId"].(string), nil, "completed", "failed")
		assert.Contains(t, mustJSON(t, got["result"]), "Slowly, Eve")
	})
	t.Run("bad_answer", func(t *testing.T) {
		t.Parallel()
		r := decodeInputRequired(t, round(t, url, "Job_Greet", nil, taskCaps, nil, ""))
		e, _ := round(t, url, "Job_Greet", nil, taskCaps, obj{"q1": obj{"action": "accept", "content": obj{"name": 12}}}, r.RequestState).rpcErr(t, http.StatusBadRequest, -32602)
		assert.Contains(t, e.Message, "inputResponses")
	})
}

func TestAskThenTaskAsksThroughTheTask(t *testing.T) {
	t.Parallel()
	url := serve(t, composeRegistry(t, 0), nil)
	res := object(t, callTool(t, url, "Job_Later", nil, taskCaps, nil).result(t))
	require.Equal(t, "task", res["resultType"], "%v", res)
	assert.Equal(t, "working", res["status"])
	id := res["taskId"].(string)

	got := awaitTask(t, url, id, nil, "input_required", "completed", "failed")
	require.Equal(t, "input_required", got["status"], "a question asked after the task was made goes through it: %v", got)
	reqs := got["inputRequests"].(map[string]any)
	require.Len(t, reqs, 1)
	var key string
	for k, v := range reqs {
		key = k
		assert.Contains(t, mustJSON(t, v), "Your name, now?")
	}
	a := taskRequest(t, url, "tasks/update", id, obj{"inputResponses": obj{key: obj{"action": "accept", "content": obj{"name": "Carol"}}}}, taskCaps, nil)
	assert.JSONEq(t, `{"resultType":"complete"}`, string(a.result(t)))
	got = awaitTask(t, url, id, nil, "completed", "failed", "cancelled")
	require.Equal(t, "completed", got["status"])
	assert.Contains(t, mustJSON(t, got["result"]), "Later, Carol")

	t.Run("cancel", func(t *testing.T) {
		t.Parallel()
		res := object(t, callTool(t, url, "Job_Later", nil, taskCaps, nil).result(t))
		id := res["taskId"].(string)
		assert.JSONEq(t, `{"resultType":"complete"}`, string(taskRequest(t, url, "tasks/cancel", id, nil, taskCaps, nil).result(t)))
		assert.Equal(t, "cancelled", getTask(t, url, id, nil)["status"])
	})
}

func TestAskBeforeTaskRegistration(t *testing.T) {
	t.Parallel()
	reg := otc.NewRegistry(nil)
	fn := func(context.Context, struct{}) (string, error) { return "", nil }
	err := otc.Register(reg, otc.Tool{ID: "Job.Sync", Version: "1.0.0", Description: "Never a task.", AskBeforeTask: time.Second}, fn)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "AskBeforeTask is set but Tasks is TasksForbidden")
	err = otc.Register(reg, otc.Tool{ID: "Job.Neg", Version: "1.0.0", Description: "A negative window.", Tasks: otc.TasksOptional, AskBeforeTask: -time.Second}, fn)
	require.Error(t, err)
	assert.True(t, strings.Contains(err.Error(), "AskBeforeTask is -1s"), "%v", err)
}

func TestAskThenTaskOverStdio(t *testing.T) {
	t.Parallel()
	c := startStdio(t, t.Context(), composeRegistry(t, 0), nil)
	c.send(request(1, "tools/call", callParams("Job_Greet", nil, taskMeta(taskCaps))))
	r := c.recvResponse()
	require.Nil(t, r.Error)
	round1 := object(t, r.Result)
	require.Equal(t, "input_required", round1["resultType"], "%v", round1)
	assert.NotContains(t, round1, "taskId")
	state, _ := round1["requestState"].(string)
	require.NotEmpty(t, state)

	p := callParams("Job_Greet", nil, taskMeta(taskCaps))
	p["inputResponses"] = obj{"q1": obj{"action": "accept", "content": obj{"name": "Dora"}}}
	p["requestState"] = state
	c.send(request(2, "tools/call", p))
	r = c.recvResponse()
	require.Nil(t, r.Error)
	created := object(t, r.Result)
	require.Equal(t, "task", created["resultType"], "%v", created)
	assert.NotContains(t, created, "requestState")
	c.send(request(3, "tasks/get", obj{"taskId": created["taskId"], "_meta": taskMeta(taskCaps)}))
	r = c.recvResponse()
	require.Nil(t, r.Error)
	got := object(t, r.Result)
	assert.Equal(t, "completed", got["status"])
	assert.Contains(t, mustJSON(t, got["result"]), "Hello, Dora")
}
