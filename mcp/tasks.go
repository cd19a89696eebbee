package mcp

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"net/http"
	"strconv"
	"time"

	"github.com/otcgo/otc"
	"github.com/otcgo/otc/caller"
	"github.com/otcgo/otc/internal/jsonrpc"
	"github.com/otcgo/otc/internal/mcpwire"
	"github.com/otcgo/otc/internal/taskrun"
	"github.com/otcgo/otc/internal/wire"
	"github.com/otcgo/otc/tasks"
)

// This file serves MCP's tasks extension (io.modelcontextprotocol/tasks)
// on protocol version 2026-07-28: a tools/call of a tool whose calls may
// run as tasks ([otc.Tool.Tasks]), from a client that declares the
// extension in the request's client capabilities, is answered at once
// with a task (resultType "task"); the call runs in the background, and
// tasks/get, tasks/update and tasks/cancel read, answer and cancel it.
// The tasks live in an [tasks.Store], so that any replica sharing the
// store answers for a task another one runs.
//
// A tool with [otc.Tool.AskBeforeTask] runs for its window before its
// task is created, asking in input_required rounds meanwhile: see
// compose.go.

// ExtensionTasks is the identifier of MCP's tasks extension, under which
// the server advertises it in server/discover and a client declares it in
// a request's client capabilities.
const ExtensionTasks = mcpwire.ExtensionTasks

// taskManager serves the tasks of one server, run by a taskrun.Runner that
// it shares the rules of with every wire format that serves tasks.
type taskManager struct {
	*taskrun.Runner
	s     *server
	store tasks.Store
	poll  time.Duration
}

func newTaskManager(s *server, opts *tasks.Options) *taskManager {
	if opts == nil {
		opts = &tasks.Options{}
	}
	store := opts.Store
	if store == nil {
		store = tasks.NewMemoryStore(nil)
	}
	r := taskrun.NewRunner(store, &taskrun.RunnerOptions{
		MaxRunning:   opts.MaxRunning,
		PollInterval: opts.PollInterval,
		Failure: func(msg string) json.RawMessage {
			return rpcErrorJSON(&rpcError{Code: codeInternalError, Message: msg})
		},
		Logger: s.logger,
		Name:   "mcp",
	})
	return &taskManager{Runner: r, s: s, store: store, poll: r.PollInterval()}
}

// missingTasksCapability is the error for a request that needs the tasks
// extension from a client that did not declare it.
func missingTasksCapability(why string) *rpcError {
	return &rpcError{
		Code:    codeMissingCapability,
		Message: "Missing required client capability: the extension " + ExtensionTasks + " (" + why + "); declare it under extensions in _meta[\"io.modelcontextprotocol/clientCapabilities\"]",
		Data:    mcpwire.MissingCapabilityData{RequiredCapabilities: map[string]any{"extensions": map[string]any{ExtensionTasks: map[string]any{}}}},
		Status:  400,
	}
}

// isTaskMethod reports whether method is one of the extension's.
func isTaskMethod(method string) bool {
	switch method {
	case "tasks/get", "tasks/update", "tasks/cancel":
		return true
	}
	return false
}

// taskParams are the params of the extension's methods.
type taskParams struct {
	TaskID         *string                    `json:"taskId"`
	InputResponses map[string]json.RawMessage `json:"inputResponses"`
}

// taskIDParam reads params.taskId, for the Mcp-Name header check.
func taskIDParam(params []byte) (string, bool) {
	var p struct {
		TaskID *string `json:"taskId"`
	}
	if params == nil || json.Unmarshal(params, &p) != nil || p.TaskID == nil {
		return "", false
	}
	return *p.TaskID, true
}

// startTask runs a tools/call as a task when its tool allows it and its
// client can take one. done is false when the call runs as usual.
func (s *server) startTask(ctx context.Context, x *exchange, req *otc.CallRequest) (result []byte, e *rpcError, done bool) {
	if !x.gen.tasks() {
		return nil, nil, false // before 2026-07-28 there are no tasks: the registry refuses a required one
	}
	m := x.msg
	// The tool is resolved here, once: the call goes on with this
	// resolution (callin.Resolve).
	tasks, window, ok := seam.Resolve(s.reg, req)
	support := otc.TaskSupport(tasks)
	if !ok || support == otc.TasksForbidden {
		return nil, nil, false
	}
	if m.caps.has&capTasks == 0 {
		if support == otc.TasksRequired {
			return nil, missingTasksCapability("tool " + strconv.Quote(wire.Truncate(m.name, 64)) + " runs only as a task"), true
		}
		return nil, nil, false
	}
	if _, err := caller.Key(ctx, x.request); err != nil {
		// A task belongs to the caller that made it: one whose credential
		// names no one could not be told from another such caller.
		if support == otc.TasksRequired {
			return appendToolError(nil, &otc.ToolError{
				Message: "The tool runs only as a task, and a task belongs to the caller that made it: your credential names no one " +
					"(a token with neither sub nor client_id), so no task can be kept for you. Ask for a token that names you.",
			}, s.infoMeta), nil, true
		}
		return nil, nil, false // it runs as any call does
	}
	if window > 0 {
		result, e = s.tasks.startAsking(ctx, x, req, window) // compose.go
		return result, e, true
	}
	result, e = s.tasks.start(ctx, x, req)
	return result, e, true
}

// start starts a call as a task (see taskrun.Runner.Start) and returns its
// CreateTaskResult; a call refused before its task was made (by the
// registry, or by the task's limits) is answered as any call is.
func (tm *taskManager) start(ctx context.Context, x *exchange, req *otc.CallRequest) ([]byte, *rpcError) {
	owner, _ := caller.Key(ctx, x.request) // startTask checked it
	caps := x.msg.caps.clone()
	t, res, err := tm.Start(ctx, tm.s.reg, req, tasks.Task{ID: otc.NewCallID(), Owner: owner}, caps.allows,
		func(runCtx context.Context) context.Context {
			return context.WithValue(runCtx, stateKey{}, &callState{caps: caps})
		}, settle)
	if t == nil {
		return appendCallResult(nil, res, err, tm.s.infoMeta)
	}
	return tm.created(t), nil
}

// create creates a working task for a call whose function runs already
// (compose.go), or returns the answer of a call whose task the store
// refuses.
func (tm *taskManager) create(ctx context.Context, r *http.Request) (*tasks.Task, []byte) {
	owner, _ := caller.Key(ctx, r) // startTask checked it
	t, err := tm.Create(ctx, &tasks.Task{ID: otc.NewCallID(), Owner: owner, Status: tasks.Working})
	if err != nil {
		refused, _ := appendCallError(nil, err, tm.s.infoMeta) // a retryable refusal: a tool error
		return nil, refused
	}
	return t, nil
}

// settle turns the outcome of a call into the final update of its task:
// completed with the CallToolResult (a tool error is a result), or failed
// with the JSON-RPC error the call would have been answered with, or an
// internal error for a fault (a panic, a value that cannot be encoded).
func settle(res otc.CallResult, err error) tasks.Update {
	if err == nil && res.Unexpected && res.Error != nil {
		return tasks.Update{Status: tasks.Failed, Result: rpcErrorJSON(&rpcError{Code: codeInternalError, Message: "Internal error: " + res.Error.Message})}
	}
	b, e := appendCallResult(nil, res, err, nil)
	if e != nil {
		return tasks.Update{Status: tasks.Failed, Result: rpcErrorJSON(e)}
	}
	return tasks.Update{Status: tasks.Completed, Result: b}
}

// rpcErrorJSON encodes a JSON-RPC error object.
func rpcErrorJSON(e *rpcError) json.RawMessage {
	b, err := json.Marshal(e)
	if err != nil {
		b, _ = json.Marshal(&rpcError{Code: jsonrpc.CodeInternalError, Message: "Internal error"})
	}
	return b
}

// taskTime formats a task's time as ISO 8601, in UTC.
func taskTime(t time.Time) string {
	return t.UTC().Format("2006-01-02T15:04:05.000Z")
}

// appendTask appends the members of a Task, without braces.
func (tm *taskManager) appendTask(b []byte, t *tasks.Task) []byte {
	b = append(b, `"taskId":`...)
	b = wire.AppendString(b, t.ID)
	b = append(b, `,"status":"`...)
	b = append(b, t.Status...)
	b = append(b, '"')
	if t.StatusMessage != "" {
		b = append(b, `,"statusMessage":`...)
		b = wire.AppendString(b, t.StatusMessage)
	}
	b = append(b, `,"createdAt":"`...)
	b = append(b, taskTime(t.CreatedAt)...)
	b = append(b, `","lastUpdatedAt":"`...)
	b = append(b, taskTime(t.UpdatedAt)...)
	b = append(b, `","ttlMs":`...)
	if t.TTL > 0 {
		b = strconv.AppendInt(b, max(t.TTL.Milliseconds(), 1), 10)
	} else {
		b = append(b, "null"...)
	}
	b = append(b, `,"pollIntervalMs":`...)
	return strconv.AppendInt(b, max(tm.poll.Milliseconds(), 1), 10)
}

// ack is the empty result of tasks/update and tasks/cancel.
var ack = []byte(`{"resultType":"complete"}`)

// handleTask answers tasks/get, tasks/update and tasks/cancel.
func (s *server) handleTask(ctx context.Context, m *message, r *http.Request) ([]byte, *rpcError) {
	if m.caps.has&capTasks == 0 {
		return nil, missingTasksCapability(m.method + " is one of its methods")
	}
	var raw struct {
		TaskID         json.RawMessage `json:"taskId"`
		InputResponses json.RawMessage `json:"inputResponses"`
	}
	var p taskParams
	if json.Unmarshal(m.params, &raw) != nil || json.Unmarshal(raw.TaskID, &p.TaskID) != nil || p.TaskID == nil {
		return nil, newError(codeInvalidParams, "Invalid params: %s names the task in params.taskId, a string", m.method)
	}
	if m.method == "tasks/update" {
		if json.Unmarshal(raw.InputResponses, &p.InputResponses) != nil || p.InputResponses == nil {
			return nil, newError(codeInvalidParams, "Invalid params: tasks/update carries params.inputResponses, an object of answers by the keys of the task's inputRequests")
		}
	}
	tm := s.tasks
	id := *p.TaskID
	owner, err := caller.Key(ctx, r)
	if err != nil {
		return nil, newError(codeInvalidParams, "Invalid params: your credential names no one (a token with neither sub nor client_id), so it owns no task")
	}
	t, err := tm.store.Get(ctx, id)
	if err == nil && t.Owner != owner {
		err = tasks.ErrNotFound // another caller's task is none of this one's business
	}
	if err != nil {
		return nil, tm.storeError(ctx, err, id)
	}
	switch m.method {
	case "tasks/cancel":
		if err := tm.store.Cancel(ctx, id); err != nil {
			return nil, tm.storeError(ctx, err, id)
		}
		if lt := tm.Lookup(id); lt != nil {
			lt.Cancel()
		}
		return ack, nil
	case "tasks/update":
		// An answer to an open question must fit it before it reaches the
		// call: a wrong one is refused, nothing is taken, and the task
		// waits on. Answers under other keys (never asked, answered
		// already, or superseded) are ignored, as the extension says a
		// server should.
		if err := tm.Answer(ctx, t, p.InputResponses, nil); err != nil {
			var bad *taskrun.AnswerError
			switch {
			case errors.As(err, &bad):
				return nil, newError(codeInvalidParams, "Invalid params: inputResponses[%q]: the answer to %s is invalid: %s; the task still waits for it", wire.Truncate(bad.Key, 64), bad.Method, bad.Reason)
			case errors.Is(err, tasks.ErrResultTooLarge):
				return nil, newError(codeInvalidParams, "Invalid params: the answers are larger than the server keeps for a task")
			}
			return nil, tm.storeError(ctx, err, id)
		}
		return ack, nil
	}
	return tm.detailed(t), nil
}

// storeError is the JSON-RPC error for a failure of the task store.
func (tm *taskManager) storeError(ctx context.Context, err error, id string) *rpcError {
	if errors.Is(err, tasks.ErrNotFound) {
		return newError(codeInvalidParams, "Invalid params: unknown task %q: it never existed, belongs to another caller, or was dropped after its ttlMs", wire.Truncate(id, 64))
	}
	tm.s.logger.ErrorContext(ctx, "mcp: the task store failed", slog.String("task", wire.Truncate(id, 64)), slog.String("error", err.Error()))
	return &rpcError{Code: codeInternalError, Message: "Internal error: the server's task store failed; try again shortly"}
}

// detailed is the tasks/get result: the task, with its questions, result
// or error inlined.
func (tm *taskManager) detailed(t *tasks.Task) []byte {
	b := make([]byte, 0, 256+len(t.Result))
	b = append(b, '{')
	b = tm.appendTask(b, t)
	switch t.Status {
	case tasks.InputRequired:
		b = append(b, `,"inputRequests":{`...)
		first := true
		for k, v := range t.InputRequests {
			if !first {
				b = append(b, ',')
			}
			first = false
			b = wire.AppendString(b, k)
			b = append(b, ':')
			b = append(b, v...)
		}
		b = append(b, '}')
	case tasks.Completed:
		b = append(b, `,"result":`...)
		b = append(b, t.Result...)
	case tasks.Failed:
		b = append(b, `,"error":`...)
		if t.Result != nil {
			b = append(b, t.Result...)
		} else {
			b = append(b, rpcErrorJSON(&rpcError{Code: codeInternalError, Message: "Internal error: " + t.StatusMessage})...)
		}
	}
	return append(b, `,"resultType":"complete"}`...)
}
