package a2a_test

import (
	"context"
	"encoding/json"
	"errors"
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

// signup is the form the asking tools ask for.
type signup struct {
	Name string `json:"name" jsonschema:"minLength=2"`
}

// askServer serves tools that ask their caller a question: one whose
// calls may run as tasks (Ask.Name), one whose calls may not
// (Ask.Plain), and one that waits to be released (Ask.Slow).
func askServer(t *testing.T) (*server, chan struct{}) {
	t.Helper()
	release := make(chan struct{})
	reg := otc.NewRegistry(nil)
	require.NoError(t, otc.Register(reg, otc.Tool{ID: "Ask.Name", Version: "1.0.0", Description: "Asks for a name.", Tasks: otc.TasksOptional},
		func(ctx context.Context, _ struct{}) (string, error) {
			var a signup
			action, err := otc.Elicit(ctx, "Your name?", &a)
			if err != nil {
				return "", err
			}
			if action != otc.ElicitAccept {
				return "no name (" + string(action) + ")", nil
			}
			return "hello " + a.Name, nil
		}))
	require.NoError(t, otc.Register(reg, otc.Tool{ID: "Ask.Plain", Version: "1.0.0", Description: "Asks, but runs in its message only."},
		func(ctx context.Context, _ struct{}) (string, error) {
			var a signup
			if _, err := otc.Elicit(ctx, "Your name?", &a); err != nil {
				if errors.Is(err, otc.ErrInputUnsupported) {
					return "", &otc.ToolError{Message: "this caller cannot be asked"}
				}
				return "", err
			}
			return "hello " + a.Name, nil
		}))
	require.NoError(t, otc.Register(reg, otc.Tool{ID: "Ask.Slow", Version: "1.0.0", Description: "Waits to be released.", Tasks: otc.TasksOptional},
		func(ctx context.Context, _ struct{}) (string, error) {
			select {
			case <-release:
				return "released", nil
			case <-ctx.Done():
				return "", ctx.Err()
			}
		}))
	mux := http.NewServeMux()
	mux.Handle("/a2a/", http.StripPrefix("/a2a", a2a.NewHandler(reg, &a2a.Options{Authenticator: testkit.ClaimsAuth()})))
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	return &server{url: srv.URL + "/a2a"}, release
}

// statusMessage is the text and data of a task's status message.
func statusMessage(t *testing.T, raw json.RawMessage) (string, json.RawMessage) {
	t.Helper()
	var task struct {
		Status struct {
			Message struct {
				Parts []struct {
					Text *string         `json:"text"`
					Data json.RawMessage `json:"data"`
				} `json:"parts"`
			} `json:"message"`
		} `json:"status"`
	}
	require.NoError(t, json.Unmarshal(raw, &task), "%s", raw)
	var text string
	var data json.RawMessage
	for _, p := range task.Status.Message.Parts {
		if p.Text != nil {
			text = *p.Text
		}
		if p.Data != nil {
			data = p.Data
		}
	}
	return text, data
}

// TestQuestions: a tool that asks makes its task INPUT_REQUIRED, with the
// question and its schema in a data part; a message on the task answers
// it (checked against the schema first), and the task goes on to its
// end; a task that has ended takes no more messages; a tool whose calls
// run in their message cannot ask.
func TestQuestions(t *testing.T) {
	s, _ := askServer(t)
	send := func(id, msg string, caller string) answer {
		return s.post(t, "/", a2a.Version10, `{"jsonrpc":"2.0","id":1,"method":"SendMessage","params":{"message":{"messageId":"`+id+`","role":"ROLE_USER",`+msg+`}}}`, as(caller)...)
	}
	id, state, raw := rpcTask(t, send("q1", `"parts":[{"data":{"tool":"Ask_Name","input":{}}}]`, "alice"))
	require.Equal(t, "TASK_STATE_INPUT_REQUIRED", state, "%s", raw)
	text, data := statusMessage(t, raw)
	assert.Contains(t, text, "Your name?")
	assert.Contains(t, text, `"input_responses"`, "the status says how to answer")
	var asked struct {
		InputRequests map[string]struct {
			Method string `json:"method"`
			Params struct {
				Message         string `json:"message"`
				RequestedSchema struct {
					Properties map[string]any `json:"properties"`
				} `json:"requestedSchema"`
			} `json:"params"`
		} `json:"input_requests"`
	}
	require.NoError(t, json.Unmarshal(data, &asked), "%s", data)
	require.Len(t, asked.InputRequests, 1, "%s", data)
	var key string
	for k, q := range asked.InputRequests {
		key = k
		assert.Equal(t, otc.MethodElicit, q.Method)
		assert.Equal(t, "Your name?", q.Params.Message)
		assert.Contains(t, q.Params.RequestedSchema.Properties, "name")
	}
	// GetTask shows the same.
	_, state, _ = rpcTask(t, s.post(t, "/", a2a.Version10, `{"jsonrpc":"2.0","id":2,"method":"GetTask","params":{"id":"`+id+`"}}`, as("alice")...))
	assert.Equal(t, "TASK_STATE_INPUT_REQUIRED", state)

	// Another caller cannot answer it.
	r := decodeRPC(t, send("q2", `"taskId":"`+id+`","parts":[{"data":{"name":"Mallory"}}]`, "bob"))
	require.NotNil(t, r.Error)
	assert.Equal(t, -32001, r.Error.Code)

	// An answer that does not fit the schema is refused; the task waits on.
	r = decodeRPC(t, send("q3", `"taskId":"`+id+`","parts":[{"data":{"input_responses":{"`+key+`":{"action":"accept","content":{"name":"A"}}}}}]`, "alice"))
	require.NotNil(t, r.Error)
	assert.Equal(t, -32602, r.Error.Code)
	assert.Contains(t, r.Error.Message, "input_responses."+key)
	assert.Contains(t, r.Error.Message, "name")
	_, state, _ = rpcTask(t, s.post(t, "/", a2a.Version10, `{"jsonrpc":"2.0","id":2,"method":"GetTask","params":{"id":"`+id+`"}}`, as("alice")...))
	assert.Equal(t, "TASK_STATE_INPUT_REQUIRED", state)

	// A message with no answer in it is told the form.
	r = decodeRPC(t, send("q4", `"taskId":"`+id+`","parts":[{"text":"Ada"}]`, "alice"))
	require.NotNil(t, r.Error)
	assert.Contains(t, r.Error.Message, "input_responses")

	// The answer (the short form: the fields alone): the blocking message
	// is answered when the task ends.
	_, state, raw = rpcTask(t, send("q5", `"taskId":"`+id+`","parts":[{"data":{"name":"Ada"}}]`, "alice"))
	require.Equal(t, "TASK_STATE_COMPLETED", state, "%s", raw)
	assert.Contains(t, string(raw), `{"data":"hello Ada"}`)

	// An ended task takes no more messages.
	r = decodeRPC(t, send("q6", `"taskId":"`+id+`","parts":[{"data":{"name":"Ada"}}]`, "alice"))
	require.NotNil(t, r.Error)
	assert.Equal(t, -32004, r.Error.Code, "UnsupportedOperationError")

	// The full form, declining, over HTTP+JSON.
	a := s.post(t, "/message:send", a2a.Version10, `{"message":{"messageId":"q7","role":"ROLE_USER","parts":[{"data":{"tool":"Ask_Name","input":{}}}]}}`, as("alice")...)
	require.Equal(t, http.StatusOK, a.status, "%s", a.body)
	var sent struct {
		Task struct {
			ID string `json:"id"`
		} `json:"task"`
	}
	require.NoError(t, json.Unmarshal(a.body, &sent))
	a = s.post(t, "/message:send", a2a.Version10, `{"message":{"messageId":"q8","taskId":"`+sent.Task.ID+`","role":"ROLE_USER","parts":[{"data":{"input_responses":{"`+key+`":{"action":"decline"}}}}]}}`, as("alice")...)
	require.Equal(t, http.StatusOK, a.status, "%s", a.body)
	assert.Contains(t, string(a.body), `"TASK_STATE_COMPLETED"`)
	assert.Contains(t, string(a.body), `no name (decline)`)

	// A tool whose calls run in their message cannot ask over A2A: its
	// question fails as unsupported, which the tool handles.
	r = decodeRPC(t, send("q9", `"parts":[{"data":{"tool":"Ask_Plain","input":{}}}]`, "alice"))
	require.Nil(t, r.Error)
	plain := replyOf(t, r.Result)
	assert.JSONEq(t, `{"io.github.otcgo/outcome":"failed"}`, string(plain.Metadata))
	assert.Contains(t, *plain.Parts[0].Text, "this caller cannot be asked")

	// A message naming no task of the caller's.
	r = decodeRPC(t, send("q10", `"taskId":"nope","parts":[{"data":{"name":"Ada"}}]`, "alice"))
	require.NotNil(t, r.Error)
	assert.Equal(t, -32001, r.Error.Code)
}

// TestStreamQuestions: a stream follows a task to its first question and
// closes there; the answer, sent as a message, is followed by a
// subscription to the task's end.
func TestStreamQuestions(t *testing.T) {
	s, _ := askServer(t)
	a := s.post(t, "/", a2a.Version10, `{"jsonrpc":"2.0","id":1,"method":"SendStreamingMessage","params":{"message":{"messageId":"s1","role":"ROLE_USER","parts":[{"data":{"tool":"Ask_Name","input":{}}}]}}}`, as("alice")...)
	evs := events(t, a)
	require.NotEmpty(t, evs, "%s", a.body)
	last := string(evs[len(evs)-1])
	assert.Contains(t, last, `"statusUpdate"`, "%s", a.body)
	assert.Contains(t, last, `"TASK_STATE_INPUT_REQUIRED"`, "%s", a.body)
	assert.Contains(t, last, `"input_requests"`)
	var first struct {
		Result struct {
			Task struct {
				ID string `json:"id"`
			} `json:"task"`
		} `json:"result"`
	}
	require.NoError(t, json.Unmarshal(evs[0], &first), "%s", evs[0])
	id := first.Result.Task.ID
	require.NotEmpty(t, id, "the stream begins with the task: %s", evs[0])

	// Answer at once (returnImmediately), then subscribe to the end.
	a = s.post(t, "/", a2a.Version10, `{"jsonrpc":"2.0","id":2,"method":"SendMessage","params":{"message":{"messageId":"s2","taskId":"`+id+`","role":"ROLE_USER","parts":[{"data":{"name":"Ada"}}]},"configuration":{"returnImmediately":true}}}`, as("alice")...)
	require.Nil(t, decodeRPC(t, a).Error, "%s", a.body)
	sub := s.post(t, "/", a2a.Version10, `{"jsonrpc":"2.0","id":3,"method":"SubscribeToTask","params":{"id":"`+id+`"}}`, as("alice")...)
	if r := decodeMaybeRPC(sub); r != nil && r.Error != nil {
		// The task ended before the subscription: that is the spec's
		// UnsupportedOperationError, and GetTask has the result.
		assert.Equal(t, -32004, r.Error.Code)
	} else {
		evs = events(t, sub)
		require.NotEmpty(t, evs)
		assert.Contains(t, string(evs[len(evs)-1]), `"TASK_STATE_COMPLETED"`, "%s", sub.body)
	}
	_, state, raw := rpcTask(t, s.post(t, "/", a2a.Version10, `{"jsonrpc":"2.0","id":4,"method":"GetTask","params":{"id":"`+id+`"}}`, as("alice")...))
	assert.Equal(t, "TASK_STATE_COMPLETED", state)
	assert.Contains(t, string(raw), "hello Ada")
}

// decodeMaybeRPC decodes a JSON-RPC answer that is not a stream.
func decodeMaybeRPC(a answer) *rpc {
	if strings.HasPrefix(a.header.Get("Content-Type"), "text/event-stream") {
		return nil
	}
	var r rpc
	if json.Unmarshal(a.body, &r) != nil {
		return nil
	}
	return &r
}

// TestSubscribe: SubscribeToTask (and POST /tasks/{id}:subscribe) streams
// a running task from its state now to its end; an ended task, another
// caller's and an unknown one are refused.
func TestSubscribe(t *testing.T) {
	s, release := askServer(t)
	start := func(id string) string {
		tid, state, _ := rpcTask(t, s.post(t, "/", a2a.Version10, `{"jsonrpc":"2.0","id":1,"method":"SendMessage","params":{"message":{"messageId":"`+id+`","role":"ROLE_USER","parts":[{"data":{"tool":"Ask_Slow","input":{}}}]},"configuration":{"returnImmediately":true}}}`, as("alice")...))
		require.Equal(t, "TASK_STATE_WORKING", state)
		return tid
	}
	for _, binding := range []string{"jsonrpc", "rest"} {
		t.Run(binding, func(t *testing.T) {
			id := start("sub-" + binding)
			// The task ends once the subscriber has its first event (the
			// task as it is): an event, not a guess at how long
			// subscribing takes.
			var a answer
			if binding == "jsonrpc" {
				a = s.postStream(t, "/", `{"jsonrpc":"2.0","id":2,"method":"SubscribeToTask","params":{"id":"`+id+`"}}`, func() { release <- struct{}{} }, as("alice")...)
			} else {
				a = s.postStream(t, "/tasks/"+id+":subscribe", ``, func() { release <- struct{}{} }, as("alice")...)
			}
			evs := events(t, a)
			require.GreaterOrEqual(t, len(evs), 3, "%s", a.body)
			assert.Contains(t, string(evs[0]), `"TASK_STATE_WORKING"`, "the task as it is, first")
			assert.Contains(t, string(evs[0]), `"task"`)
			assert.Contains(t, string(evs[len(evs)-2]), `"artifactUpdate"`)
			assert.Contains(t, string(evs[len(evs)-2]), `released`)
			assert.Contains(t, string(evs[len(evs)-1]), `"TASK_STATE_COMPLETED"`)

			// Ended: nothing to subscribe to.
			if binding == "jsonrpc" {
				r := decodeRPC(t, s.post(t, "/", a2a.Version10, `{"jsonrpc":"2.0","id":3,"method":"SubscribeToTask","params":{"id":"`+id+`"}}`, as("alice")...))
				require.NotNil(t, r.Error)
				assert.Equal(t, -32004, r.Error.Code)
				r = decodeRPC(t, s.post(t, "/", a2a.Version10, `{"jsonrpc":"2.0","id":3,"method":"SubscribeToTask","params":{"id":"`+id+`"}}`, as("bob")...))
				require.NotNil(t, r.Error)
				assert.Equal(t, -32001, r.Error.Code)
			} else {
				a = s.post(t, "/tasks/"+id+":subscribe", a2a.Version10, ``, as("alice")...)
				assert.Equal(t, http.StatusBadRequest, a.status)
				assert.Contains(t, string(a.body), "UNSUPPORTED_OPERATION")
				a = s.post(t, "/tasks/unknown:subscribe", a2a.Version10, ``, as("alice")...)
				assert.Equal(t, http.StatusNotFound, a.status)
			}
		})
	}
}
