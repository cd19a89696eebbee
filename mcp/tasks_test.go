package mcp_test

// The tasks extension over Streamable HTTP: task creation, tasks/get,
// tasks/update and tasks/cancel, the gate on the client's declaration,
// the owner check, the limits, and a task-required tool over the
// versions that have no tasks.

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/otcgo/otc"
	"github.com/otcgo/otc/auth"
	"github.com/otcgo/otc/caller"
	"github.com/otcgo/otc/mcp"
	"github.com/otcgo/otc/ratelimit"
	"github.com/otcgo/otc/tasks"
)

type sleepInput struct {
	MS int `json:"ms" jsonschema:"description=How long to work in milliseconds."`
}

type sizeInput struct {
	Bytes int `json:"bytes" jsonschema:"description=How long a text to return."`
}

// taskFixture is a registry of tools that run as tasks, and what their
// functions tell the test.
type taskFixture struct {
	reg     *otc.Registry
	stopped chan error // the error with which Job.Slow returned
}

func newTaskRegistry(t *testing.T, mw ...otc.Middleware) *taskFixture {
	t.Helper()
	f := &taskFixture{reg: otc.NewRegistry(&otc.RegistryOptions{Logger: slog.New(slog.DiscardHandler), Middleware: mw}), stopped: make(chan error, 16)}
	tool := func(id string, tasks otc.TaskSupport) otc.Tool {
		return otc.Tool{ID: id, Version: "1.0.0", Description: "A tool of the tests: " + id + ".", Tasks: tasks, Timeout: time.Minute}
	}
	require.NoError(t, otc.Register(f.reg, tool("Job.Slow", otc.TasksOptional), func(ctx context.Context, in sleepInput) (map[string]int, error) {
		select {
		case <-time.After(time.Duration(in.MS) * time.Millisecond):
			f.stopped <- nil
			return map[string]int{"slept_ms": in.MS}, nil
		case <-ctx.Done():
			f.stopped <- ctx.Err()
			return nil, ctx.Err()
		}
	}))
	require.NoError(t, otc.Register(f.reg, tool("Job.Required", otc.TasksRequired), func(context.Context, struct{}) (string, error) {
		return "done", nil
	}))
	require.NoError(t, otc.Register(f.reg, tool("Job.Fail", otc.TasksOptional), func(context.Context, struct{}) (string, error) {
		return "", errors.New("the disk is full")
	}))
	require.NoError(t, otc.Register(f.reg, tool("Job.Panic", otc.TasksOptional), func(context.Context, struct{}) (string, error) {
		panic("boom")
	}))
	require.NoError(t, otc.Register(f.reg, tool("Job.Big", otc.TasksOptional), func(_ context.Context, in sizeInput) (string, error) {
		return strings.Repeat("x", in.Bytes), nil
	}))
	require.NoError(t, otc.Register(f.reg, tool("Job.Ask", otc.TasksOptional), func(ctx context.Context, _ struct{}) (string, error) {
		answers, err := otc.Ask(ctx,
			otc.InputRequest{Method: otc.MethodElicit, Params: json.RawMessage(`{"mode":"form","message":"Name?","requestedSchema":{"type":"object","properties":{"name":{"type":"string"}}}}`)},
			otc.InputRequest{Method: otc.MethodElicit, Params: json.RawMessage(`{"mode":"form","message":"Sure?","requestedSchema":{"type":"object","properties":{"ok":{"type":"boolean"}}}}`)})
		if err != nil {
			return "", err
		}
		return string(answers[0]) + " " + string(answers[1]), nil
	}))
	require.NoError(t, otc.Register(f.reg, tool("Job.AskTwice", otc.TasksOptional), func(ctx context.Context, _ struct{}) (string, error) {
		// Two goroutines ask at once: the task shows both questions.
		var wg sync.WaitGroup
		out := make([]string, 2)
		errs := make([]error, 2)
		for i, msg := range []string{"First?", "Second?"} {
			wg.Go(func() {
				a, err := otc.Ask(ctx, otc.InputRequest{Method: otc.MethodElicit, Params: json.RawMessage(`{"mode":"form","message":"` + msg + `","requestedSchema":{"type":"object"}}`)})
				if err == nil {
					out[i] = string(a[0])
				}
				errs[i] = err
			})
		}
		wg.Wait()
		return strings.Join(out, " "), errors.Join(errs...)
	}))
	require.NoError(t, otc.Register(f.reg, tool("Job.AskKeyed", otc.TasksOptional), func(ctx context.Context, _ struct{}) (string, error) {
		var out []string
		for range 2 { // the same key twice: the second is told apart
			a, err := otc.Ask(ctx, otc.InputRequest{Method: otc.MethodElicit, Key: "confirm", Params: json.RawMessage(`{"mode":"form","message":"Sure?","requestedSchema":{"type":"object","properties":{"ok":{"type":"boolean"}},"required":["ok"]}}`)})
			if err != nil {
				return "", err
			}
			out = append(out, string(a[0]))
		}
		return strings.Join(out, " "), nil
	}))
	require.NoError(t, otc.Register(f.reg, tool("Job.Plain", otc.TasksForbidden), func(context.Context, struct{}) (string, error) {
		return "plain", nil
	}))
	return f
}

// taskCaps are client capabilities that declare the tasks extension and
// elicitation.
var taskCaps = obj{"elicitation": obj{}, "extensions": obj{mcp.ExtensionTasks: obj{}}}

// taskMeta is the _meta of a request from a client that declares caps.
func taskMeta(caps obj) obj {
	return modernMeta(obj{"io.modelcontextprotocol/clientCapabilities": caps})
}

// callTool sends a 2026-07-28 tools/call from a client with caps.
func callTool(t *testing.T, url, name string, args any, caps obj, hdr map[string]string) answer {
	t.Helper()
	h := modernHeaders("tools/call", name)
	for k, v := range hdr {
		h[k] = v
	}
	return post(t, url, request(1, "tools/call", callParams(name, args, taskMeta(caps))), h)
}

// taskRequest sends a tasks/* request about id from a client with caps.
func taskRequest(t *testing.T, url, method, id string, extra obj, caps obj, hdr map[string]string) answer {
	t.Helper()
	p := obj{"taskId": id, "_meta": taskMeta(caps)}
	for k, v := range extra {
		p[k] = v
	}
	h := modernHeaders(method, id)
	for k, v := range hdr {
		h[k] = v
	}
	return post(t, url, request(2, method, p), h)
}

// createTask calls a tool that runs as a task, checks the CreateTaskResult
// and returns it.
func createTask(t *testing.T, url, name string, args any, hdr map[string]string) map[string]any {
	t.Helper()
	res := object(t, callTool(t, url, name, args, taskCaps, hdr).result(t))
	assert.Equal(t, []string{"createdAt", "lastUpdatedAt", "pollIntervalMs", "resultType", "status", "taskId", "ttlMs"}, keys(res), "%v", res)
	assert.Equal(t, "task", res["resultType"])
	assert.Equal(t, "working", res["status"])
	assert.Equal(t, float64(time.Hour.Milliseconds()), res["ttlMs"])
	assert.Equal(t, float64(tasks.DefaultPollInterval.Milliseconds()), res["pollIntervalMs"])
	for _, k := range []string{"createdAt", "lastUpdatedAt"} {
		_, err := time.Parse(time.RFC3339, res[k].(string))
		assert.NoError(t, err, "%s is ISO 8601", k)
	}
	require.NotEmpty(t, res["taskId"])
	return res
}

// getTask reads a task, checking the envelope every tasks/get shares.
func getTask(t *testing.T, url string, id string, hdr map[string]string) map[string]any {
	t.Helper()
	res := object(t, taskRequest(t, url, "tasks/get", id, nil, taskCaps, hdr).result(t))
	assert.Equal(t, "complete", res["resultType"])
	assert.Equal(t, id, res["taskId"])
	assert.NotContains(t, res, "requestState")
	return res
}

// awaitTask polls a task until its status is one of want, and returns it.
func awaitTask(t *testing.T, url, id string, hdr map[string]string, want ...string) map[string]any {
	t.Helper()
	deadline := time.Now().Add(waitTimeout)
	for {
		res := getTask(t, url, id, hdr)
		for _, w := range want {
			if res["status"] == w {
				return res
			}
		}
		require.True(t, time.Now().Before(deadline), "task %s still %v, want %v", id, res["status"], want)
		time.Sleep(10 * time.Millisecond)
	}
}

func TestTaskLifecycle(t *testing.T) {
	t.Parallel()
	f := newTaskRegistry(t)
	url := serve(t, f.reg, nil)

	t.Run("completed", func(t *testing.T) {
		t.Parallel()
		id := createTask(t, url, "Job_Slow", obj{"ms": 200}, nil)["taskId"].(string)
		res := getTask(t, url, id, nil) // at once: the task is durably created
		assert.Contains(t, []any{"working", "completed"}, res["status"])
		if res["status"] == "working" {
			assert.NotContains(t, res, "result")
			assert.NotContains(t, res, "error")
		}
		res = awaitTask(t, url, id, nil, "completed", "failed", "cancelled")
		assert.Equal(t, "completed", res["status"])
		assert.NotContains(t, res, "error")
		assert.JSONEq(t, `{"content":[{"type":"text","text":"{\"slept_ms\":200}"}],"structuredContent":{"slept_ms":200}}`, mustJSON(t, res["result"]),
			"the result is the CallToolResult, without the related-task _meta")
	})
	t.Run("tool_error_is_completed", func(t *testing.T) {
		t.Parallel()
		id := createTask(t, url, "Job_Fail", nil, nil)["taskId"].(string)
		res := awaitTask(t, url, id, nil, "completed", "failed")
		assert.Equal(t, "completed", res["status"])
		result := res["result"].(map[string]any)
		assert.Equal(t, true, result["isError"])
		assert.Contains(t, mustJSON(t, result["content"]), "the disk is full")
	})
	t.Run("panic_is_failed", func(t *testing.T) {
		t.Parallel()
		id := createTask(t, url, "Job_Panic", nil, nil)["taskId"].(string)
		res := awaitTask(t, url, id, nil, "completed", "failed")
		assert.Equal(t, "failed", res["status"])
		assert.NotContains(t, res, "result")
		e := res["error"].(map[string]any)
		assert.Equal(t, float64(-32603), e["code"])
		assert.Contains(t, e["message"], "Internal error")
	})
	t.Run("cancel", func(t *testing.T) {
		t.Parallel()
		f := newTaskRegistry(t) // its own, so that f.stopped hears only this call
		url := serve(t, f.reg, nil)
		id := createTask(t, url, "Job_Slow", obj{"ms": 60_000}, nil)["taskId"].(string)
		a := taskRequest(t, url, "tasks/cancel", id, nil, taskCaps, nil)
		assert.JSONEq(t, `{"resultType":"complete"}`, string(a.result(t)))
		res := getTask(t, url, id, nil)
		assert.Equal(t, "cancelled", res["status"], "the cancellation shows at the next tasks/get")
		assert.NotContains(t, res, "result")
		assert.ErrorIs(t, recvWithin(t, f.stopped, "the function's return"), context.Canceled, "the function's context is cancelled")
		a = taskRequest(t, url, "tasks/cancel", id, nil, taskCaps, nil)
		assert.JSONEq(t, `{"resultType":"complete"}`, string(a.result(t)), "cancelling an ended task is acked too")
		assert.Equal(t, "cancelled", getTask(t, url, id, nil)["status"])
	})
	t.Run("forbidden_tool_runs_at_once", func(t *testing.T) {
		t.Parallel()
		res := object(t, callTool(t, url, "Job_Plain", nil, taskCaps, nil).result(t))
		assert.Equal(t, "complete", res["resultType"])
		assert.NotContains(t, res, "taskId")
	})
	t.Run("legacy_task_param_ignored", func(t *testing.T) {
		t.Parallel()
		p := callParams("Job_Plain", nil, taskMeta(taskCaps))
		p["task"] = obj{"ttl": 60000}
		res := object(t, post(t, url, request(1, "tools/call", p), modernHeaders("tools/call", "Job_Plain")).result(t))
		assert.Equal(t, "complete", res["resultType"])
	})
}

func TestTaskInput(t *testing.T) {
	t.Parallel()
	url := serve(t, newTaskRegistry(t).reg, nil)
	id := createTask(t, url, "Job_Ask", nil, nil)["taskId"].(string)
	res := awaitTask(t, url, id, nil, "input_required")
	reqs := res["inputRequests"].(map[string]any)
	require.Len(t, reqs, 2)
	var first, second string
	for k, v := range reqs {
		q := v.(map[string]any)
		assert.Equal(t, "elicitation/create", q["method"])
		switch q["params"].(map[string]any)["message"] {
		case "Name?":
			first = k
		case "Sure?":
			second = k
		}
	}
	require.NotEmpty(t, first)
	require.NotEmpty(t, second)

	// An answer that does not fit its question is refused; nothing is
	// taken, and the task waits. One under a key the task did not ask is
	// ignored (the tasks extension says a server should).
	a := taskRequest(t, url, "tasks/update", id, obj{"inputResponses": obj{"nope": obj{}}}, taskCaps, nil)
	assert.JSONEq(t, `{"resultType":"complete"}`, string(a.result(t)))
	for _, bad := range []obj{
		{"action": "accept", "content": obj{"name": 7}},
		{"action": "maybe"},
		{"content": obj{"name": "Ada"}},
	} {
		a = taskRequest(t, url, "tasks/update", id, obj{"inputResponses": obj{first: bad, "nope": obj{}}}, taskCaps, nil)
		e, _ := a.rpcErr(t, http.StatusBadRequest, -32602)
		assert.Contains(t, e.Message, "is invalid", "%v", bad)
		assert.Contains(t, e.Message, "the task still waits for it")
	}
	res = getTask(t, url, id, nil)
	assert.Equal(t, "input_required", res["status"])
	assert.Len(t, res["inputRequests"], 2, "no answer was taken")

	a = taskRequest(t, url, "tasks/update", id, obj{"inputResponses": obj{first: obj{"action": "accept", "content": obj{"name": "Ada"}}, "nope": obj{}}}, taskCaps, nil)
	assert.JSONEq(t, `{"resultType":"complete"}`, string(a.result(t)))
	res = getTask(t, url, id, nil)
	assert.Equal(t, "input_required", res["status"], "one question is still open")
	assert.Equal(t, []string{second}, keys(res["inputRequests"].(map[string]any)))

	a = taskRequest(t, url, "tasks/update", id, obj{"inputResponses": obj{second: obj{"action": "accept", "content": obj{"ok": true}}}}, taskCaps, nil)
	assert.JSONEq(t, `{"resultType":"complete"}`, string(a.result(t)))
	res = awaitTask(t, url, id, nil, "completed", "failed", "cancelled")
	require.Equal(t, "completed", res["status"], "%v", res)
	got := res["result"].(map[string]any)["structuredContent"].(map[string]any)["result"]
	assert.Equal(t, `{"action":"accept","content":{"name":"Ada"}} {"action":"accept","content":{"ok":true}}`, got, "the answers reach the function in order")

	t.Run("bad_params", func(t *testing.T) {
		a := taskRequest(t, url, "tasks/update", id, nil, taskCaps, nil)
		e, _ := a.rpcErr(t, http.StatusBadRequest, -32602)
		assert.Contains(t, e.Message, "inputResponses")
		for _, bad := range []any{nil, obj{"action": "accept"}, []any{}, "answers"} {
			extra := obj{"inputResponses": bad}
			if m, ok := bad.(obj); ok {
				extra["inputResponses"] = []any{m}
			}
			a := taskRequest(t, url, "tasks/update", id, extra, taskCaps, nil)
			e, _ := a.rpcErr(t, http.StatusBadRequest, -32602)
			assert.Contains(t, e.Message, "inputResponses, an object")
		}
		a = post(t, url, request(2, "tasks/get", obj{"_meta": taskMeta(taskCaps)}), modernHeaders("tasks/get", ""))
		e, _ = a.rpcErr(t, http.StatusBadRequest, -32602)
		assert.Contains(t, e.Message, "params.taskId, a string")
		a = post(t, url, request(2, "tasks/get", obj{"taskId": 12, "_meta": taskMeta(taskCaps)}), modernHeaders("tasks/get", ""))
		e, _ = a.rpcErr(t, http.StatusBadRequest, -32602)
		assert.Contains(t, e.Message, "params.taskId, a string")
	})
	t.Run("cancel_while_asking", func(t *testing.T) {
		id := createTask(t, url, "Job_Ask", nil, nil)["taskId"].(string)
		awaitTask(t, url, id, nil, "input_required")
		taskRequest(t, url, "tasks/cancel", id, nil, taskCaps, nil).result(t)
		res := getTask(t, url, id, nil)
		assert.Equal(t, "cancelled", res["status"])
		assert.NotContains(t, res, "inputRequests", "a cancelled task asks nothing")
		a := taskRequest(t, url, "tasks/update", id, obj{"inputResponses": obj{"q1": obj{"action": "accept"}}}, taskCaps, nil)
		assert.JSONEq(t, `{"resultType":"complete"}`, string(a.result(t)), "a late answer is acked and ignored")
		assert.Equal(t, "cancelled", getTask(t, url, id, nil)["status"])
	})
	t.Run("without_elicitation", func(t *testing.T) {
		caps := obj{"extensions": obj{mcp.ExtensionTasks: obj{}}}
		res := object(t, callTool(t, url, "Job_Ask", nil, caps, nil).result(t))
		id := res["taskId"].(string)
		got := awaitTask(t, url, id, nil, "completed", "failed")
		assert.Equal(t, "completed", got["status"])
		assert.Contains(t, mustJSON(t, got["result"]), "elicitation", "the tool's error names the capability the client lacks")
	})
}

func TestTaskGate(t *testing.T) {
	t.Parallel()
	url := serve(t, newTaskRegistry(t).reg, nil)
	noExt := obj{"elicitation": obj{}}
	for _, method := range []string{"tasks/get", "tasks/update", "tasks/cancel"} {
		t.Run("undeclared_"+strings.ReplaceAll(method, "/", "_"), func(t *testing.T) {
			t.Parallel()
			a := taskRequest(t, url, method, "some-task", obj{"inputResponses": obj{}}, noExt, nil)
			e, _ := a.rpcErr(t, http.StatusBadRequest, -32021)
			assert.JSONEq(t, `{"requiredCapabilities":{"extensions":{"io.modelcontextprotocol/tasks":{}}}}`, string(e.Data))
			assert.Contains(t, e.Message, mcp.ExtensionTasks)
		})
	}
	t.Run("undeclared_optional_runs_at_once", func(t *testing.T) {
		t.Parallel()
		res := object(t, callTool(t, url, "Job_Slow", obj{"ms": 1}, noExt, nil).result(t))
		assert.Equal(t, "complete", res["resultType"])
		assert.NotContains(t, res, "taskId")
		assert.Equal(t, map[string]any{"slept_ms": float64(1)}, res["structuredContent"])
	})
	t.Run("undeclared_required_refused", func(t *testing.T) {
		t.Parallel()
		e, _ := callTool(t, url, "Job_Required", nil, noExt, nil).rpcErr(t, http.StatusBadRequest, -32021)
		assert.JSONEq(t, `{"requiredCapabilities":{"extensions":{"io.modelcontextprotocol/tasks":{}}}}`, string(e.Data))
		assert.Contains(t, e.Message, "Job_Required")
	})
	t.Run("declared_null_is_undeclared", func(t *testing.T) {
		t.Parallel()
		caps := obj{"extensions": obj{mcp.ExtensionTasks: nil}}
		callTool(t, url, "Job_Required", nil, caps, nil).rpcErr(t, http.StatusBadRequest, -32021)
	})
	t.Run("unknown_task", func(t *testing.T) {
		t.Parallel()
		for _, method := range []string{"tasks/get", "tasks/update", "tasks/cancel"} {
			e, _ := taskRequest(t, url, method, "no-such-task", obj{"inputResponses": obj{}}, taskCaps, nil).rpcErr(t, http.StatusBadRequest, -32602)
			assert.Contains(t, e.Message, `unknown task "no-such-task"`)
		}
	})
	t.Run("removed_methods", func(t *testing.T) {
		t.Parallel()
		for _, method := range []string{"tasks/result", "tasks/list"} {
			a := post(t, url, request(3, method, obj{"taskId": "x", "_meta": taskMeta(taskCaps)}), modernHeaders(method, ""))
			a.rpcErr(t, http.StatusNotFound, -32601)
		}
	})
	t.Run("name_header", func(t *testing.T) {
		t.Parallel()
		id := createTask(t, url, "Job_Slow", obj{"ms": 1}, nil)["taskId"].(string)
		e, _ := taskRequest(t, url, "tasks/get", id, nil, taskCaps, map[string]string{"Mcp-Name": ""}).rpcErr(t, http.StatusBadRequest, -32020)
		assert.Contains(t, e.Message, "Mcp-Name header is required")
		e, _ = taskRequest(t, url, "tasks/get", id, nil, taskCaps, map[string]string{"Mcp-Name": "other"}).rpcErr(t, http.StatusBadRequest, -32020)
		assert.Contains(t, e.Message, "does not match")
		getTask(t, url, id, map[string]string{"Mcp-Name": b64(id)})
	})
}

func TestTaskOwner(t *testing.T) {
	t.Parallel()
	auth, err := auth.NewAPIKeyAuth(map[string]string{"alice": "key-a", "bob": "key-b"})
	require.NoError(t, err)
	url := serve(t, newTaskRegistry(t).reg, &mcp.Options{Authenticator: auth})
	alice := map[string]string{otc.HeaderAPIKey: "key-a"}
	bob := map[string]string{otc.HeaderAPIKey: "key-b"}
	id := createTask(t, url, "Job_Slow", obj{"ms": 60_000}, alice)["taskId"].(string)
	for _, method := range []string{"tasks/get", "tasks/update", "tasks/cancel"} {
		e, _ := taskRequest(t, url, method, id, obj{"inputResponses": obj{}}, taskCaps, bob).rpcErr(t, http.StatusBadRequest, -32602)
		assert.Contains(t, e.Message, "unknown task", "another caller's task is unknown to %s", method)
	}
	assert.Equal(t, "working", getTask(t, url, id, alice)["status"], "bob's cancel did nothing")
	taskRequest(t, url, "tasks/cancel", id, nil, taskCaps, alice).result(t)
}

func TestTaskLimits(t *testing.T) {
	t.Parallel()
	t.Run("running", func(t *testing.T) {
		t.Parallel()
		url := serve(t, newTaskRegistry(t).reg, &mcp.Options{Tasks: &tasks.Options{MaxRunning: 1}})
		id := createTask(t, url, "Job_Slow", obj{"ms": 60_000}, nil)["taskId"].(string)
		res := object(t, callTool(t, url, "Job_Slow", obj{"ms": 1}, taskCaps, nil).result(t))
		assert.Equal(t, true, res["isError"])
		assert.Contains(t, mustJSON(t, res["content"]), "runs as many tasks as it may (1)")
		assert.Contains(t, mustJSON(t, res["_meta"]), `"can_retry":true`)
		taskRequest(t, url, "tasks/cancel", id, nil, taskCaps, nil).result(t)
	})
	t.Run("per_caller", func(t *testing.T) {
		t.Parallel()
		store := tasks.NewMemoryStore(&tasks.MemoryStoreOptions{MaxTasksPerOwner: 1})
		url := serve(t, newTaskRegistry(t).reg, &mcp.Options{Tasks: &tasks.Options{Store: store}})
		createTask(t, url, "Job_Slow", obj{"ms": 1}, nil)
		res := object(t, callTool(t, url, "Job_Slow", obj{"ms": 1}, taskCaps, nil).result(t))
		assert.Equal(t, true, res["isError"])
		assert.Contains(t, mustJSON(t, res["content"]), "you hold as many tasks as this server keeps for one caller (your limit is 1)")
		assert.Regexp(t, `"retry_after_ms":(3[0-9]{6})`, mustJSON(t, res["_meta"]), "retry when the oldest task expires, within the hour")
	})
	t.Run("running_per_caller", func(t *testing.T) {
		t.Parallel()
		store := tasks.NewMemoryStore(&tasks.MemoryStoreOptions{MaxRunningPerOwner: 1})
		url := serve(t, newTaskRegistry(t).reg, &mcp.Options{Tasks: &tasks.Options{Store: store}})
		id := createTask(t, url, "Job_Slow", obj{"ms": 60_000}, nil)["taskId"].(string)
		res := object(t, callTool(t, url, "Job_Slow", obj{"ms": 1}, taskCaps, nil).result(t))
		assert.Equal(t, true, res["isError"])
		assert.Contains(t, mustJSON(t, res["content"]), "you run as many tasks at once as this server runs for one caller (your limit is 1)")
		assert.Contains(t, mustJSON(t, res["_meta"]), `"can_retry":true`)
		assert.Contains(t, mustJSON(t, res["_meta"]), `"retry_after_ms":1000`)
		taskRequest(t, url, "tasks/cancel", id, nil, taskCaps, nil).result(t)
		createTask(t, url, "Job_Slow", obj{"ms": 1}, nil) // the cancelled task made room
	})
	t.Run("result_size", func(t *testing.T) {
		t.Parallel()
		store := tasks.NewMemoryStore(&tasks.MemoryStoreOptions{MaxResultBytes: 1024})
		url := serve(t, newTaskRegistry(t).reg, &mcp.Options{Tasks: &tasks.Options{Store: store}})
		id := createTask(t, url, "Job_Big", obj{"bytes": 4096}, nil)["taskId"].(string)
		res := awaitTask(t, url, id, nil, "completed", "failed")
		assert.Equal(t, "failed", res["status"])
		assert.Contains(t, res["error"].(map[string]any)["message"], "larger than the server's task store keeps")
		small := createTask(t, url, "Job_Big", obj{"bytes": 10}, nil)["taskId"].(string)
		assert.Equal(t, "completed", awaitTask(t, url, small, nil, "completed", "failed")["status"])
	})
}

// TestTaskRequiredWithoutTasks checks a task-required tool over MCP
// versions without tasks: a tool error says to use tasks, and the
// function does not run.
func TestTaskRequiredWithoutTasks(t *testing.T) {
	t.Parallel()
	url := serve(t, newTaskRegistry(t).reg, nil)
	a := post(t, url, request(1, "tools/call", callParams("Job_Required", nil, nil)), map[string]string{"MCP-Protocol-Version": mcp.Version20251125})
	res := object(t, a.result(t))
	assert.Equal(t, true, res["isError"])
	assert.Contains(t, mustJSON(t, res["content"]), "runs only as a task")
	assert.Contains(t, mustJSON(t, res["content"]), "io.modelcontextprotocol/tasks")
	assert.Contains(t, mustJSON(t, res["_meta"]), `"can_retry":false`)
}

// TestTaskStdio runs a task over stdio, where tasks/* carry no headers.
func TestTaskStdio(t *testing.T) {
	t.Parallel()
	c := startStdio(t, t.Context(), newTaskRegistry(t).reg, nil)
	c.send(request(1, "tools/call", callParams("Job_Slow", obj{"ms": 50}, taskMeta(taskCaps))))
	r := c.recvResponse()
	require.Nil(t, r.Error)
	created := object(t, r.Result)
	require.Equal(t, "task", created["resultType"])
	id := created["taskId"].(string)
	deadline := time.Now().Add(waitTimeout)
	for n := 2; ; n++ {
		c.send(request(n, "tasks/get", obj{"taskId": id, "_meta": taskMeta(taskCaps)}))
		r := c.recvResponse()
		require.Nil(t, r.Error)
		res := object(t, r.Result)
		if res["status"] == "completed" {
			assert.Equal(t, map[string]any{"slept_ms": float64(50)}, res["result"].(map[string]any)["structuredContent"])
			break
		}
		require.Equal(t, "working", res["status"])
		require.True(t, time.Now().Before(deadline), "the task did not complete")
		time.Sleep(10 * time.Millisecond)
	}
	c.send(request(99, "tasks/get", obj{"taskId": id, "_meta": modernMeta(nil)}))
	r = c.recvResponse()
	require.NotNil(t, r.Error)
	assert.Equal(t, -32021, r.Error.Code)
}

// TestTaskConcurrentAsks checks a function whose goroutines ask at once:
// the task stays input_required until every question is answered.
func TestTaskConcurrentAsks(t *testing.T) {
	t.Parallel()
	url := serve(t, newTaskRegistry(t).reg, nil)
	id := createTask(t, url, "Job_AskTwice", nil, nil)["taskId"].(string)
	var res map[string]any
	deadline := time.Now().Add(waitTimeout)
	for {
		res = awaitTask(t, url, id, nil, "input_required")
		if len(res["inputRequests"].(map[string]any)) == 2 {
			break
		}
		require.True(t, time.Now().Before(deadline), "the second question did not show: %v", res)
		time.Sleep(10 * time.Millisecond)
	}
	byMessage := map[string]string{}
	for k, v := range res["inputRequests"].(map[string]any) {
		byMessage[v.(map[string]any)["params"].(map[string]any)["message"].(string)] = k
	}
	taskRequest(t, url, "tasks/update", id, obj{"inputResponses": obj{byMessage["Second?"]: obj{"action": "decline"}}}, taskCaps, nil).result(t)
	res = getTask(t, url, id, nil)
	assert.Equal(t, "input_required", res["status"], "the first question is still open")
	assert.Equal(t, []string{byMessage["First?"]}, keys(res["inputRequests"].(map[string]any)))
	taskRequest(t, url, "tasks/update", id, obj{"inputResponses": obj{byMessage["First?"]: obj{"action": "cancel"}}}, taskCaps, nil).result(t)
	res = awaitTask(t, url, id, nil, "completed", "failed", "cancelled")
	require.Equal(t, "completed", res["status"], "%v", res)
	assert.Equal(t, `{"action":"cancel"} {"action":"decline"}`, res["result"].(map[string]any)["structuredContent"].(map[string]any)["result"])
}

// claimsAuth authenticates as the oauth package does, from the claims of
// a test header: the caller is named by "sub", else "client_id".
func claimsAuth() otc.Authenticator {
	return otc.AuthenticatorFunc(func(r *http.Request) (*otc.Identity, error) {
		var c map[string]any
		if err := json.Unmarshal([]byte(r.Header.Get("X-Test-Claims")), &c); err != nil {
			return nil, err
		}
		name, _ := c["sub"].(string)
		if name == "" {
			name, _ = c["client_id"].(string)
		}
		return &otc.Identity{Method: "oauth", Name: name, Claims: c}, nil
	})
}

// TestTaskOwnership: a task belongs to exactly one identity. A subject
// never equals a client id, and a credential that names no one owns no
// task: a tool that may run as a task then runs at once, one that must is
// refused.
func TestTaskOwnership(t *testing.T) {
	t.Parallel()
	url := serve(t, newTaskRegistry(t).reg, &mcp.Options{Authenticator: claimsAuth()})
	as := func(claims string) map[string]string { return map[string]string{"X-Test-Claims": claims} }
	alice := as(`{"iss":"https://as.test","client_id":"alice"}`)
	id := createTask(t, url, "Job_Slow", obj{"ms": 60_000}, alice)["taskId"].(string)
	getTask(t, url, id, alice)

	for name, other := range map[string]map[string]string{
		"sub_equal_to_the_client_id": as(`{"iss":"https://as.test","sub":"alice","client_id":"evilapp"}`),
		"other_issuer":               as(`{"iss":"https://other.test","client_id":"alice"}`),
		"no_one":                     as(`{"iss":"https://as.test"}`),
	} {
		for _, method := range []string{"tasks/get", "tasks/cancel", "tasks/update"} {
			var extra obj
			if method == "tasks/update" {
				extra = obj{"inputResponses": obj{}}
			}
			e, _ := taskRequest(t, url, method, id, extra, taskCaps, other).rpcErr(t, http.StatusBadRequest, -32602)
			assert.NotContains(t, e.Message, "working", "%s %s", name, method)
		}
	}
	assert.Equal(t, "working", getTask(t, url, id, alice)["status"], "no one else cancelled it")
	taskRequest(t, url, "tasks/cancel", id, nil, taskCaps, alice).result(t)

	noOne := as(`{"iss":"https://as.test","scope":"x"}`)
	res := object(t, callTool(t, url, "Job_Slow", obj{"ms": 1}, taskCaps, noOne).result(t))
	assert.Equal(t, "complete", res["resultType"], "a tool that may run as a task runs at once: %v", res)
	assert.JSONEq(t, `{"slept_ms":1}`, mustJSON(t, res["structuredContent"]))
	res = object(t, callTool(t, url, "Job_Required", obj{}, taskCaps, noOne).result(t))
	assert.Equal(t, true, res["isError"])
	assert.Contains(t, mustJSON(t, res["content"]), "your credential names no one")
}

// TestTaskInputKeys: a question keeps the key it was asked under; the same
// key asked again in the task is told apart.
func TestTaskInputKeys(t *testing.T) {
	t.Parallel()
	url := serve(t, newTaskRegistry(t).reg, nil)
	id := createTask(t, url, "Job_AskKeyed", nil, nil)["taskId"].(string)
	res := awaitTask(t, url, id, nil, "input_required")
	assert.Equal(t, []string{"confirm"}, keys(res["inputRequests"].(map[string]any)))
	taskRequest(t, url, "tasks/update", id, obj{"inputResponses": obj{"confirm": obj{"action": "accept", "content": obj{"ok": true}}}}, taskCaps, nil).result(t)
	var second string
	require.Eventually(t, func() bool {
		res = getTask(t, url, id, nil)
		qs, _ := res["inputRequests"].(map[string]any)
		for k := range qs {
			second = k
		}
		return second != ""
	}, 10*time.Second, 20*time.Millisecond)
	assert.True(t, strings.HasPrefix(second, "confirm#"), second)
	taskRequest(t, url, "tasks/update", id, obj{"inputResponses": obj{second: obj{"action": "decline"}}}, taskCaps, nil).result(t)
	res = awaitTask(t, url, id, nil, "completed", "failed")
	assert.Contains(t, mustJSON(t, res["result"]), `{\"action\":\"accept\",\"content\":{\"ok\":true}} {\"action\":\"decline\"}`)
}

// TestAnonymousTasks: on a server without authentication, a task belongs
// to the client address that started it (read behind the trusted proxy),
// so another address's tasks/get and tasks/cancel find none of it, and
// one address at its cap leaves the others theirs; a call the registry
// refuses (its rate limit, invalid input) is answered without a task, so
// that refusals cost no cap.
func TestAnonymousTasks(t *testing.T) {
	t.Parallel()
	limit, err := ratelimit.New(&ratelimit.Options{Tools: map[string]ratelimit.Limit{"Job.Required": {Rate: 0.001, Burst: 1}}})
	require.NoError(t, err)
	reg := newTaskRegistry(t, limit).reg
	store := tasks.NewMemoryStore(&tasks.MemoryStoreOptions{MaxTasksPerOwner: 2})
	srv := httptest.NewServer(caller.Handler(mcp.NewHandler(reg, &mcp.Options{Tasks: &tasks.Options{Store: store}}),
		&caller.Options{TrustedProxies: []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8")}}))
	t.Cleanup(srv.Close)
	url := srv.URL
	at := func(addr string) map[string]string { return map[string]string{"X-Forwarded-For": addr} }

	id := createTask(t, url, "Job_Slow", obj{"ms": 60_000}, at("198.51.100.7"))["taskId"].(string)
	for _, method := range []string{"tasks/get", "tasks/cancel"} {
		e, _ := taskRequest(t, url, method, id, nil, taskCaps, at("203.0.113.9")).rpcErr(t, http.StatusBadRequest, -32602)
		assert.Contains(t, e.Message, "unknown task", "another address's task is unknown to %s", method)
	}
	assert.Equal(t, "working", getTask(t, url, id, at("198.51.100.7"))["status"])

	createTask(t, url, "Job_Slow", obj{"ms": 1}, at("198.51.100.7"))
	res := object(t, callTool(t, url, "Job_Slow", obj{"ms": 1}, taskCaps, at("198.51.100.7")).result(t))
	assert.Contains(t, mustJSON(t, res["content"]), "your limit is 2", "the first address is at its cap")
	createTask(t, url, "Job_Slow", obj{"ms": 1}, at("203.0.113.9")) // another is not
	taskRequest(t, url, "tasks/cancel", id, nil, taskCaps, at("198.51.100.7")).result(t)

	// Refusals before the task: no task is answered, none is kept.
	res = object(t, callTool(t, url, "Job_Slow", obj{"ms": "soon"}, taskCaps, at("192.0.2.1")).result(t))
	assert.Equal(t, true, res["isError"], "invalid input: %v", res)
	assert.NotEqual(t, "task", res["resultType"])
	createTask(t, url, "Job_Required", nil, at("192.0.2.1"))
	for range 20 {
		res = object(t, callTool(t, url, "Job_Required", nil, taskCaps, at("192.0.2.1")).result(t))
		require.NotEqual(t, "task", res["resultType"], "%v", res)
		require.Contains(t, mustJSON(t, res["content"]), "Too many calls")
	}
	held, err := store.List(t.Context(), "a:192.0.2.1")
	require.NoError(t, err)
	assert.Len(t, held, 1, "only the admitted call's task is kept")
}
