package a2a_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/otcgo/otc"
	"github.com/otcgo/otc/a2a"
	"github.com/otcgo/otc/internal/testkit"
)

// historyServer serves a tool that asks for a name (Ask.Name) and one
// whose task fails (Job.Fail), both run as tasks.
func historyServer(t *testing.T) *server {
	t.Helper()
	reg := otc.NewRegistry(nil)
	registerAskName(t, reg)
	require.NoError(t, otc.Register(reg, otc.Tool{ID: "Job.Fail", Version: "1.0.0", Description: "Fails.", Tasks: otc.TasksOptional},
		func(context.Context, struct{}) (string, error) {
			return "", &otc.ToolError{Message: "the printer is on fire"}
		}))
	mux := http.NewServeMux()
	mux.Handle("/a2a/", http.StripPrefix("/a2a", a2a.NewHandler(reg, &a2a.Options{Authenticator: testkit.ClaimsAuth()})))
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	return &server{url: srv.URL + "/a2a"}
}

// registerAskName registers Ask.Name, which may run as a task and asks
// its caller for a name.
func registerAskName(t *testing.T, reg *otc.Registry) {
	t.Helper()
	require.NoError(t, otc.Register(reg, otc.Tool{ID: "Ask.Name", Version: "1.0.0", Description: "Asks for a name.", Tasks: otc.TasksOptional},
		func(ctx context.Context, _ struct{}) (string, error) {
			var a signup
			if _, err := otc.Elicit(ctx, "Your name?", &a); err != nil {
				return "", err
			}
			return "hello " + a.Name, nil
		}))
}

// historyMessage is a message of a task's history, as the tests read it.
type historyMessage struct {
	Kind      string `json:"kind"`
	MessageID string `json:"messageId"`
	ContextID string `json:"contextId"`
	TaskID    string `json:"taskId"`
	Role      string `json:"role"`
	Parts     []struct {
		Kind string          `json:"kind"`
		Text *string         `json:"text"`
		Data json.RawMessage `json:"data"`
	} `json:"parts"`
}

// historyOf is the history of the task raw, and whether it has the member.
func historyOf(t *testing.T, raw json.RawMessage) ([]historyMessage, bool) {
	t.Helper()
	var task struct {
		History *[]historyMessage `json:"history"`
	}
	require.NoError(t, json.Unmarshal(raw, &task), "%s", raw)
	if task.History == nil {
		return nil, false
	}
	return *task.History, true
}

// TestHistory: a task keeps its messages (the caller's, the questions
// asked, the answers given, the failure it ended with), and each request
// gets as many of the most recent as its historyLength asks: all when it
// names none, none (and no history member) for 0, all for a number larger
// than the history, an invalid-params error naming the field for a
// negative one.
func TestHistory(t *testing.T) {
	s := historyServer(t)
	rpcCall := func(method, params string) answer {
		return s.post(t, "/", a2a.Version10, `{"jsonrpc":"2.0","id":1,"method":"`+method+`","params":`+params+`}`, as("alice")...)
	}
	id, state, raw := rpcTask(t, rpcCall("SendMessage", `{"message":{"messageId":"h1","contextId":"ctx-1","role":"ROLE_USER","parts":[{"text":"please"},{"data":{"tool":"Ask_Name","input":{}}}]}}`))
	require.Equal(t, "TASK_STATE_INPUT_REQUIRED", state, "%s", raw)
	h, ok := historyOf(t, raw)
	require.True(t, ok, "the answer holds the history: %s", raw)
	require.Len(t, h, 2, "%s", raw)
	assert.Equal(t, "h1", h[0].MessageID)
	assert.Equal(t, "ROLE_USER", h[0].Role)
	assert.Equal(t, id, h[0].TaskID)
	assert.Equal(t, "ctx-1", h[0].ContextID)
	require.Len(t, h[0].Parts, 2, "the caller's text and data parts are kept")
	assert.Equal(t, "please", *h[0].Parts[0].Text)
	assert.JSONEq(t, `{"tool":"Ask_Name","input":{}}`, string(h[0].Parts[1].Data))
	assert.Equal(t, "ROLE_AGENT", h[1].Role)
	assert.Equal(t, id, h[1].TaskID)
	assert.Equal(t, "ctx-1", h[1].ContextID)
	var status struct {
		Status struct {
			Message struct {
				MessageID string `json:"messageId"`
			} `json:"message"`
		} `json:"status"`
	}
	require.NoError(t, json.Unmarshal(raw, &status))
	assert.Equal(t, status.Status.Message.MessageID, h[1].MessageID, "the question in the status is the one in the history")
	require.Len(t, h[1].Parts, 2)
	assert.Contains(t, *h[1].Parts[0].Text, "Your name?")
	assert.Contains(t, string(h[1].Parts[1].Data), `"input_requests"`)

	get := func(params string) (json.RawMessage, []historyMessage, bool) {
		t.Helper()
		_, _, raw := rpcTask(t, rpcCall("GetTask", params))
		h, ok := historyOf(t, raw)
		return raw, h, ok
	}
	_, h, _ = get(`{"id":"` + id + `"}`)
	assert.Len(t, h, 2, "no historyLength: all of it")
	_, h, _ = get(`{"id":"` + id + `","historyLength":1}`)
	require.Len(t, h, 1)
	assert.Equal(t, "ROLE_AGENT", h[0].Role, "the most recent")
	_, h, _ = get(`{"id":"` + id + `","historyLength":"1"}`)
	assert.Len(t, h, 1, "ProtoJSON's int32 as a string")
	_, h, _ = get(`{"id":"` + id + `","historyLength":50}`)
	assert.Len(t, h, 2, "larger than the history: all of it")
	raw, _, ok = get(`{"id":"` + id + `","historyLength":0}`)
	assert.False(t, ok, "0: no history member: %s", raw)

	for _, bad := range []string{`-1`, `"-3"`, `1.5`, `"x"`, `true`} {
		r := decodeRPC(t, rpcCall("GetTask", `{"id":"`+id+`","historyLength":`+bad+`}`))
		require.NotNil(t, r.Error, "historyLength %s", bad)
		assert.Equal(t, -32602, r.Error.Code, "historyLength %s", bad)
		assert.Contains(t, r.Error.Message, "historyLength", "historyLength %s", bad)
	}
	a := s.get(t, "/tasks/"+id+"?historyLength=-2", as("alice")...)
	assert.Equal(t, http.StatusBadRequest, a.status, "%s", a.body)
	assert.Contains(t, string(a.body), "historyLength")
	a = s.get(t, "/tasks/"+id+"?historyLength=1", as("alice")...)
	require.Equal(t, http.StatusOK, a.status, "%s", a.body)
	h, _ = historyOf(t, a.body)
	assert.Len(t, h, 1, "HTTP+JSON reads the query")

	// A message on the task naming another context is refused, and the
	// task still waits.
	r := decodeRPC(t, rpcCall("SendMessage", `{"message":{"messageId":"h2","taskId":"`+id+`","contextId":"ctx-2","role":"ROLE_USER","parts":[{"data":{"name":"Ada"}}]}}`))
	require.NotNil(t, r.Error)
	assert.Equal(t, -32602, r.Error.Code)
	assert.Contains(t, r.Error.Message, "message.contextId")
	assert.Contains(t, r.Error.Message, "ctx-1", "says the task's context")
	_, h, _ = get(`{"id":"` + id + `"}`)
	assert.Len(t, h, 2, "the refused message is not kept")

	// The answer, naming the task's own context: kept, and the
	// configuration's historyLength honoured.
	_, state, raw = rpcTask(t, rpcCall("SendMessage", `{"message":{"messageId":"h3","taskId":"`+id+`","contextId":"ctx-1","role":"ROLE_USER","parts":[{"data":{"name":"Ada"}}]},"configuration":{"historyLength":1}}`))
	require.Equal(t, "TASK_STATE_COMPLETED", state, "%s", raw)
	h, _ = historyOf(t, raw)
	require.Len(t, h, 1, "%s", raw)
	assert.Equal(t, "h3", h[0].MessageID)
	assert.Equal(t, "ROLE_USER", h[0].Role)
	_, h, _ = get(`{"id":"` + id + `"}`)
	require.Len(t, h, 3)
	assert.Equal(t, []string{"ROLE_USER", "ROLE_AGENT", "ROLE_USER"}, []string{h[0].Role, h[1].Role, h[2].Role})
	r = decodeRPC(t, rpcCall("SendMessage", `{"message":{"messageId":"h4","role":"ROLE_USER","parts":[{"data":{"tool":"Ask_Name","input":{}}}]},"configuration":{"historyLength":-1}}`))
	require.NotNil(t, r.Error)
	assert.Contains(t, r.Error.Message, "configuration.historyLength")

	// A failed task's history ends with the failure it said.
	fid, state, raw := rpcTask(t, rpcCall("SendMessage", `{"message":{"messageId":"h5","role":"ROLE_USER","parts":[{"data":{"tool":"Job_Fail","input":{}}}]}}`))
	require.Equal(t, "TASK_STATE_FAILED", state, "%s", raw)
	h, _ = historyOf(t, raw)
	require.Len(t, h, 2, "%s", raw)
	// Its first entry is the caller's message, whose one data part is
	// kept as sent (a message read in one pass over the body).
	assert.Equal(t, "ROLE_USER", h[0].Role)
	require.Len(t, h[0].Parts, 1, "%s", raw)
	assert.JSONEq(t, `{"tool":"Job_Fail","input":{}}`, string(h[0].Parts[0].Data))
	assert.Equal(t, "ROLE_AGENT", h[1].Role)
	assert.Contains(t, *h[1].Parts[0].Text, "the printer is on fire")
	assert.Equal(t, fid, h[1].TaskID)

	// ListTasks: historyLength per task, and a negative one refused.
	a = rpcCall("ListTasks", `{"historyLength":1}`)
	var list struct {
		Tasks []json.RawMessage `json:"tasks"`
	}
	require.NoError(t, json.Unmarshal(decodeRPC(t, a).Result, &list), "%s", a.body)
	require.Len(t, list.Tasks, 2, "%s", a.body)
	for _, raw := range list.Tasks {
		h, _ := historyOf(t, raw)
		assert.Len(t, h, 1, "%s", raw)
	}
	a = rpcCall("ListTasks", `{}`)
	require.NoError(t, json.Unmarshal(decodeRPC(t, a).Result, &list))
	for _, raw := range list.Tasks {
		h, _ := historyOf(t, raw)
		assert.GreaterOrEqual(t, len(h), 2, "%s", raw)
	}
	r = decodeRPC(t, rpcCall("ListTasks", `{"historyLength":-5}`))
	require.NotNil(t, r.Error)
	assert.Contains(t, r.Error.Message, "historyLength")
	a = s.get(t, "/tasks?historyLength=0", as("alice")...)
	require.Equal(t, http.StatusOK, a.status, "%s", a.body)
	assert.NotContains(t, string(a.body), `"history"`)
	a = s.get(t, "/tasks?historyLength=-5", as("alice")...)
	assert.Equal(t, http.StatusBadRequest, a.status, "%s", a.body)
	assert.Contains(t, string(a.body), "historyLength")

	// 0.3 reads the history in its own shapes.
	a = s.post(t, "/", "", `{"jsonrpc":"2.0","id":1,"method":"tasks/get","params":{"id":"`+id+`"}}`, as("alice")...)
	h, _ = historyOf(t, decodeRPC(t, a).Result)
	require.Len(t, h, 3, "%s", a.body)
	assert.Equal(t, []string{"user", "agent", "user"}, []string{h[0].Role, h[1].Role, h[2].Role})
	for _, m := range h {
		assert.Equal(t, "message", m.Kind)
		for _, p := range m.Parts {
			assert.NotEmpty(t, p.Kind, "%s", a.body)
		}
	}
}

// TestHistoryBounds: a message larger than a task's history keeps is
// kept as a note saying so, and the stream's first task event honours
// historyLength.
func TestHistoryBounds(t *testing.T) {
	s := historyServer(t)
	big := strings.Repeat("x", 100<<10)
	_, state, raw := rpcTask(t, s.post(t, "/", a2a.Version10, `{"jsonrpc":"2.0","id":1,"method":"SendMessage","params":{"message":{"messageId":"b1","role":"ROLE_USER","parts":[{"text":"`+big+`"},{"data":{"tool":"Ask_Name","input":{}}}]}}}`, as("alice")...))
	require.Equal(t, "TASK_STATE_INPUT_REQUIRED", state)
	h, _ := historyOf(t, raw)
	require.Len(t, h, 2)
	require.Len(t, h[0].Parts, 1)
	assert.Contains(t, *h[0].Parts[0].Text, "larger than a task's history keeps")
	assert.Equal(t, "b1", h[0].MessageID, "the note keeps the message's id")
	assert.Less(t, len(raw), 8<<10, "the history holds the note, not the message")

	for i, c := range []struct {
		config string
		want   int
	}{{``, 1}, {`,"configuration":{"historyLength":1}`, 1}, {`,"configuration":{"historyLength":0}`, 0}} {
		body := fmt.Sprintf(`{"jsonrpc":"2.0","id":1,"method":"SendStreamingMessage","params":{"message":{"messageId":"s%d","role":"ROLE_USER","parts":[{"data":{"tool":"Ask_Name","input":{}}}]}%s}}`, i, c.config)
		a := s.post(t, "/", a2a.Version10, body, as("alice")...)
		evs := events(t, a)
		require.NotEmpty(t, evs, "%s", a.body)
		var first struct {
			Result struct {
				Task json.RawMessage `json:"task"`
			} `json:"result"`
		}
		require.NoError(t, json.Unmarshal(evs[0], &first), "%s", evs[0])
		h, _ := historyOf(t, first.Result.Task)
		if c.config == "" { // the caller's message, and the question if it was asked already
			require.NotEmpty(t, h, "%s", evs[0])
			assert.Equal(t, fmt.Sprintf("s%d", i), h[0].MessageID)
			continue
		}
		assert.Len(t, h, c.want, "%s", evs[0])
	}
}
