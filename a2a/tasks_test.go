package a2a_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/otcgo/otc"
	"github.com/otcgo/otc/a2a"
	"github.com/otcgo/otc/caller"
	"github.com/otcgo/otc/internal/testkit"
	"github.com/otcgo/otc/ratelimit"
	"github.com/otcgo/otc/tasks"
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

// TestListTasks: ListTasks (GET /tasks) lists the caller's own tasks, most
// recently updated first, without artifacts unless asked, filtered by
// state, a page at a time; bad paging is refused; a store that cannot
// list answers UnsupportedOperation.
func TestListTasks(t *testing.T) {
	s, release, _ := taskServer(t)
	send := func(id, tool, caller string) string {
		tid, _, _ := rpcTask(t, s.post(t, "/", a2a.Version10, `{"jsonrpc":"2.0","id":1,"method":"SendMessage","params":{"message":{"messageId":"`+id+`","role":"ROLE_USER","parts":[{"data":{"tool":"`+tool+`","input":{}}}]},"configuration":{"returnImmediately":true}}}`, as(caller)...))
		time.Sleep(3 * time.Millisecond) // distinct update times
		return tid
	}
	type listed struct {
		Tasks []struct {
			ID     string `json:"id"`
			Status struct {
				State string `json:"state"`
			} `json:"status"`
			Artifacts []json.RawMessage `json:"artifacts"`
		} `json:"tasks"`
		NextPageToken *string `json:"nextPageToken"`
		PageSize      int     `json:"pageSize"`
		TotalSize     int     `json:"totalSize"`
	}
	list := func(params, caller string) (listed, rpc) {
		t.Helper()
		r := decodeRPC(t, s.post(t, "/", a2a.Version10, `{"jsonrpc":"2.0","id":9,"method":"ListTasks","params":`+params+`}`, as(caller)...))
		var l listed
		if r.Error == nil {
			require.NoError(t, json.Unmarshal(r.Result, &l), "%s", r.Result)
		}
		return l, r
	}
	done1 := send("l1", "Job_Must", "alice")
	slow := send("l2", "Job_Slow", "alice")
	done2 := send("l3", "Job_Must", "alice")
	send("l4", "Job_Must", "bob")
	require.Eventually(t, func() bool {
		l, _ := list(`{"status":"TASK_STATE_COMPLETED"}`, "alice")
		return l.TotalSize == 2
	}, 5*time.Second, 10*time.Millisecond)

	l, r := list(`{}`, "alice")
	require.Nil(t, r.Error)
	assert.Equal(t, 3, l.TotalSize, "alice's own tasks only")
	assert.Equal(t, 50, l.PageSize)
	require.NotNil(t, l.NextPageToken, "always present")
	assert.Empty(t, *l.NextPageToken)
	ids := []string{}
	for _, task := range l.Tasks {
		ids = append(ids, task.ID)
		assert.Nil(t, task.Artifacts, "no artifacts unless asked")
	}
	assert.ElementsMatch(t, []string{done1, slow, done2}, ids)
	assert.NotContains(t, ids[1:], ids[0])

	l, _ = list(`{"includeArtifacts":true,"status":"TASK_STATE_COMPLETED"}`, "alice")
	require.Len(t, l.Tasks, 2)
	for _, task := range l.Tasks {
		assert.NotEmpty(t, task.Artifacts)
		assert.Equal(t, "TASK_STATE_COMPLETED", task.Status.State)
	}
	l, _ = list(`{"status":"TASK_STATE_WORKING"}`, "alice")
	require.Len(t, l.Tasks, 1)
	assert.Equal(t, slow, l.Tasks[0].ID)

	// A page at a time: every task once, in the same order.
	var paged []string
	token := ""
	for range 5 {
		l, r = list(`{"pageSize":2,"pageToken":"`+token+`"}`, "alice")
		require.Nil(t, r.Error)
		assert.Equal(t, 3, l.TotalSize)
		for _, task := range l.Tasks {
			paged = append(paged, task.ID)
		}
		token = *l.NextPageToken
		if token == "" {
			break
		}
	}
	assert.Equal(t, ids, paged)

	for _, bad := range []string{`{"pageSize":0}`, `{"pageSize":101}`, `{"pageToken":"x"}`, `{"status":"DONE"}`, `{"statusTimestampAfter":"yesterday"}`} {
		_, r = list(bad, "alice")
		require.NotNil(t, r.Error, bad)
		assert.Equal(t, -32602, r.Error.Code, bad)
	}

	// A task keeps the context its message named.
	grouped, _, _ := rpcTask(t, s.post(t, "/", a2a.Version10, `{"jsonrpc":"2.0","id":1,"method":"SendMessage","params":{"message":{"messageId":"l5","contextId":"trip-1","role":"ROLE_USER","parts":[{"data":{"tool":"Job_Must","input":{}}}]}}}`, as("alice")...))
	_, _, raw := rpcTask(t, s.post(t, "/", a2a.Version10, `{"jsonrpc":"2.0","id":2,"method":"GetTask","params":{"id":"`+grouped+`"}}`, as("alice")...))
	assert.Contains(t, string(raw), `"contextId":"trip-1"`)
	l, _ = list(`{"contextId":"trip-1"}`, "alice")
	require.Len(t, l.Tasks, 1)
	assert.Equal(t, grouped, l.Tasks[0].ID)

	// HTTP+JSON.
	req, err := http.NewRequest(http.MethodGet, s.url+"/tasks?pageSize=1", nil)
	require.NoError(t, err)
	req.Header.Set("A2A-Version", a2a.Version10)
	req.Header.Set(as("bob")[0], as("bob")[1])
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	var rl listed
	require.NoError(t, json.NewDecoder(resp.Body).Decode(&rl))
	resp.Body.Close()
	assert.Equal(t, http.StatusOK, resp.StatusCode)
	assert.Equal(t, 1, rl.TotalSize)
	assert.Equal(t, 1, rl.PageSize)
	req, _ = http.NewRequest(http.MethodGet, s.url+"/tasks?pageSize=abc", nil)
	req.Header.Set("A2A-Version", a2a.Version10)
	resp, err = http.DefaultClient.Do(req)
	require.NoError(t, err)
	resp.Body.Close()
	assert.Equal(t, http.StatusBadRequest, resp.StatusCode)
	release <- struct{}{}

	// A store that cannot list.
	reg := otc.NewRegistry(nil)
	h := a2a.NewHandler(reg, &a2a.Options{Tasks: &tasks.Options{Store: struct{ tasks.Store }{tasks.NewMemoryStore(nil)}}})
	srv := httptest.NewServer(h)
	defer srv.Close()
	a := (&server{url: srv.URL}).post(t, "/", a2a.Version10, `{"jsonrpc":"2.0","id":1,"method":"ListTasks","params":{}}`)
	r = decodeRPC(t, a)
	require.NotNil(t, r.Error)
	assert.Equal(t, -32004, r.Error.Code)
}

// TestTaskLimits: past the agent's cap on running tasks, and past a
// caller's cap in the store, a message is answered with a failed task
// that says which limit, and when to try again.
func TestTaskLimits(t *testing.T) {
	release := make(chan struct{})
	reg := otc.NewRegistry(nil)
	require.NoError(t, otc.Register(reg, otc.Tool{ID: "Job.Slow", Version: "1.0.0", Description: "Waits to be released.", Tasks: otc.TasksOptional},
		func(ctx context.Context, _ struct{}) (string, error) {
			select {
			case <-release:
			case <-ctx.Done():
			}
			return "done", nil
		}))
	defer close(release)
	for _, c := range []struct {
		name string
		opts *a2a.Options
		want string
	}{
		{"agent", &a2a.Options{Tasks: &tasks.Options{MaxRunning: 1}}, "this server runs as many tasks as it may (1)"},
		{"caller", &a2a.Options{Tasks: &tasks.Options{Store: tasks.NewMemoryStore(&tasks.MemoryStoreOptions{MaxRunningPerOwner: 1})}}, "your limit is 1"},
	} {
		t.Run(c.name, func(t *testing.T) {
			srv := httptest.NewServer(a2a.NewHandler(reg, c.opts))
			defer srv.Close()
			s := &server{url: srv.URL}
			send := func(id string) answer {
				return s.post(t, "/", a2a.Version10, `{"jsonrpc":"2.0","id":1,"method":"SendMessage","params":{"message":{"messageId":"`+id+`","role":"ROLE_USER","parts":[{"data":{"tool":"Job_Slow","input":{}}}]},"configuration":{"returnImmediately":true}}}`)
			}
			_, state, _ := rpcTask(t, send(c.name+"-1"))
			require.Equal(t, "TASK_STATE_WORKING", state)
			r := decodeRPC(t, send(c.name+"-2"))
			require.Nil(t, r.Error)
			refused := replyOf(t, r.Result)
			assert.Empty(t, refused.TaskID, "refused before its task was kept: answered as a call, without a task")
			assert.JSONEq(t, `{"io.github.otcgo/outcome":"failed"}`, string(refused.Metadata))
			assert.Contains(t, string(r.Result), c.want)
			assert.Contains(t, string(r.Result), `"can_retry":true`)
		})
	}
}

// anonServer serves a task tool to anonymous callers behind a trusted
// proxy (loopback), whose X-Forwarded-For names each caller's address;
// mw are the registry's middleware, store the task store.
func anonServer(t *testing.T, store tasks.Store, mw ...otc.Middleware) *server {
	t.Helper()
	reg := otc.NewRegistry(&otc.RegistryOptions{Middleware: mw})
	require.NoError(t, otc.Register(reg, otc.Tool{ID: "Job.Quick", Version: "1.0.0", Description: "Ends at once.", Tasks: otc.TasksOptional},
		func(context.Context, struct {
			N int `json:"n,omitempty" jsonschema:"minimum=0,description=A count."`
		}) (int, error) {
			return 1, nil
		}))
	h := caller.Handler(http.StripPrefix("/a2a", a2a.NewHandler(reg, &a2a.Options{Tasks: &tasks.Options{Store: store}})),
		&caller.Options{TrustedProxies: []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8")}})
	mux := http.NewServeMux()
	mux.Handle("/a2a/", h)
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	return &server{url: srv.URL + "/a2a"}
}

// from is the header of an anonymous caller at addr, behind the proxy.
func from(addr string) []string { return []string{"X-Forwarded-For", addr} }

// TestAnonymousCallersApart: on a server without authentication, an
// anonymous caller is never listed a task (not its own, which it cannot
// prove it started, nor another's), and cannot read or cancel a task
// another address started; its tasks count against its address's caps
// alone, so that one client filling its caps locks out no other.
func TestAnonymousCallersApart(t *testing.T) {
	store := tasks.NewMemoryStore(&tasks.MemoryStoreOptions{MaxTasksPerOwner: 3})
	s := anonServer(t, store)
	start := func(id, addr string) answer {
		return s.post(t, "/", a2a.Version10, `{"jsonrpc":"2.0","id":1,"method":"SendMessage","params":{"message":{"messageId":"`+id+`","role":"ROLE_USER","parts":[{"data":{"tool":"Job_Quick","input":{}}}]},"configuration":{"returnImmediately":true}}}`, from(addr)...)
	}
	id, _, _ := rpcTask(t, start("m1", "198.51.100.7"))
	rpcCall := func(method, params, addr string) rpc {
		return decodeRPC(t, s.post(t, "/", a2a.Version10, `{"jsonrpc":"2.0","id":2,"method":"`+method+`","params":`+params+`}`, from(addr)...))
	}
	for _, addr := range []string{"198.51.100.7", "203.0.113.9"} {
		r := rpcCall("ListTasks", `{}`, addr)
		require.Nil(t, r.Error, addr)
		assert.JSONEq(t, `[]`, string(jsonField(t, r.Result, "tasks")), "%s is listed nothing", addr)
		assert.JSONEq(t, `0`, string(jsonField(t, r.Result, "totalSize")))
	}
	rest := s.get(t, "/tasks", from("203.0.113.9")...)
	assert.Equal(t, http.StatusOK, rest.status)
	assert.NotContains(t, string(rest.body), id, "nor over HTTP+JSON")

	for _, method := range []string{"GetTask", "CancelTask"} {
		r := rpcCall(method, `{"id":"`+id+`"}`, "203.0.113.9")
		require.NotNil(t, r.Error, "%s from another address", method)
		assert.Equal(t, -32001, r.Error.Code)
	}
	r := rpcCall("GetTask", `{"id":"`+id+`"}`, "198.51.100.7")
	require.Nil(t, r.Error, "the address that started it reads it by its id")

	// Crowding: the first address fills its caps; another is not refused.
	for i := range 2 {
		_, state, _ := rpcTask(t, start("m"+strconv.Itoa(i+2), "198.51.100.7"))
		assert.Equal(t, "TASK_STATE_WORKING", state)
	}
	r = decodeRPC(t, start("m9", "198.51.100.7"))
	require.Nil(t, r.Error)
	assert.Contains(t, *replyOf(t, r.Result).Parts[0].Text, "you hold as many tasks as this server keeps for one caller (your limit is 3)")
	_, state, _ := rpcTask(t, start("m10", "203.0.113.9"))
	assert.Equal(t, "TASK_STATE_WORKING", state, "another address has caps of its own")
	_, state, _ = rpcTask(t, start("m11", "2001:db8:1:2::99"))
	assert.Equal(t, "TASK_STATE_WORKING", state)
}

// TestRefusedCallLeavesNoTask: a call the registry refuses (over its rate
// limit, or with invalid input) is answered without a task kept: the
// store holds only the admitted calls' tasks, and a refusal costs the
// caller none of its task caps.
func TestRefusedCallLeavesNoTask(t *testing.T) {
	limit, err := ratelimit.New(&ratelimit.Options{All: ratelimit.Limit{Rate: 0.001, Burst: 3}}) // the bad call takes one too
	require.NoError(t, err)
	store := tasks.NewMemoryStore(&tasks.MemoryStoreOptions{MaxTasksPerOwner: 2})
	s := anonServer(t, store, limit)
	send := func(id, input string) answer {
		return s.post(t, "/", a2a.Version10, `{"jsonrpc":"2.0","id":1,"method":"SendMessage","params":{"message":{"messageId":"`+id+`","role":"ROLE_USER","parts":[{"data":{"tool":"Job_Quick","input":`+input+`}}]},"configuration":{"returnImmediately":true}}}`, from("198.51.100.7")...)
	}
	r := decodeRPC(t, send("bad", `{"n":-1}`))
	require.NotNil(t, r.Error, "invalid input: refused before a task is kept")
	assert.Equal(t, -32602, r.Error.Code)
	var kept []string
	for i := range 2 {
		id, state, _ := rpcTask(t, send("ok"+strconv.Itoa(i), `{}`))
		assert.Equal(t, "TASK_STATE_WORKING", state)
		kept = append(kept, id)
	}
	for i := range 50 {
		r := decodeRPC(t, send("over"+strconv.Itoa(i), `{}`))
		require.Nil(t, r.Error)
		refused := replyOf(t, r.Result)
		require.Empty(t, refused.TaskID, "a refused call hands out no task")
		require.Contains(t, *refused.Parts[0].Text, "Too many calls", "the rate limit's refusal, not the store's")
	}
	held, err := store.List(t.Context(), "a:198.51.100.7")
	require.NoError(t, err)
	var ids []string
	for _, h := range held {
		ids = append(ids, h.ID)
	}
	assert.ElementsMatch(t, kept, ids, "only the admitted calls' tasks")
}

// jsonField is one member of a JSON object.
func jsonField(t *testing.T, raw json.RawMessage, name string) json.RawMessage {
	t.Helper()
	var m map[string]json.RawMessage
	require.NoError(t, json.Unmarshal(raw, &m), "%s", raw)
	return m[name]
}

// TestLostTask: a task whose replica stopped renewing its lease is shown
// FAILED, saying its outcome is unknown, never COMPLETED without a result.
func TestLostTask(t *testing.T) {
	store := tasks.NewMemoryStore(&tasks.MemoryStoreOptions{Lease: 50 * time.Millisecond})
	s := anonServer(t, store)
	_, err := store.Create(t.Context(), &tasks.Task{ID: "lost-1", Owner: "a:198.51.100.7", Status: tasks.Working})
	require.NoError(t, err)
	require.Eventually(t, func() bool {
		_, state, _ := rpcTask(t, s.post(t, "/", a2a.Version10, `{"jsonrpc":"2.0","id":1,"method":"GetTask","params":{"id":"lost-1"}}`, from("198.51.100.7")...))
		return state == "TASK_STATE_FAILED"
	}, 5*time.Second, 20*time.Millisecond)
	_, _, raw := rpcTask(t, s.post(t, "/", a2a.Version10, `{"jsonrpc":"2.0","id":1,"method":"GetTask","params":{"id":"lost-1"}}`, from("198.51.100.7")...))
	assert.Contains(t, string(raw), "its outcome is unknown")
	assert.NotContains(t, string(raw), "artifacts")
}

// TestResendSameTask: a message sent again gets the task it started, not
// a second one: while it runs, and once it has ended; another message, or
// the same message id from another caller, starts a task of its own.
func TestResendSameTask(t *testing.T) {
	s, release, _ := taskServer(t)
	send := func(id, tool, caller string) (string, string) {
		taskID, state, _ := rpcTask(t, s.post(t, "/", a2a.Version10, `{"jsonrpc":"2.0","id":1,"method":"SendMessage","params":{"message":{"messageId":"`+id+`","role":"ROLE_USER","parts":[{"data":{"tool":"`+tool+`","input":{}}}]},"configuration":{"returnImmediately":true}}}`, as(caller)...))
		return taskID, state
	}
	first, state := send("again-1", "Job_Slow", "alice")
	require.Equal(t, "TASK_STATE_WORKING", state)
	again, state := send("again-1", "Job_Slow", "alice")
	assert.Equal(t, first, again, "the same task")
	assert.Equal(t, "TASK_STATE_WORKING", state)
	other, _ := send("again-2", "Job_Slow", "alice")
	assert.NotEqual(t, first, other)
	bobs, _ := send("again-1", "Job_Slow", "bob")
	assert.NotEqual(t, first, bobs, "another caller's message of the same id")
	for range 3 {
		release <- struct{}{}
	}
	require.Eventually(t, func() bool {
		_, state := send("again-1", "Job_Slow", "alice")
		return state == "TASK_STATE_COMPLETED"
	}, 5*time.Second, 20*time.Millisecond, "sent again once it has ended: the task, completed")
	ended, _ := send("again-1", "Job_Slow", "alice")
	assert.Equal(t, first, ended)

	done, state := send("again-3", "Job_Must", "alice")
	assert.Contains(t, []string{"TASK_STATE_WORKING", "TASK_STATE_COMPLETED"}, state)
	same, _ := send("again-3", "Job_Must", "alice")
	assert.Equal(t, done, same)
}
