package a2a

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"time"

	"github.com/otcgo/otc"
	"github.com/otcgo/otc/internal/jsonparse"
	"github.com/otcgo/otc/internal/modeltext"
	"github.com/otcgo/otc/tasks"
)

// This file serves tasks that outlive their message: a message asking
// for it (returnImmediately; 0.3's blocking false) that calls a tool whose
// calls may run as tasks ([otc.Tool.Tasks]) is answered at once with a
// WORKING task, whose call runs in the background on a tasks.Runner and
// whose outcome the task store keeps, for GetTask and CancelTask, on any
// replica that shares the store. A message calling a tool that runs only
// as a task without asking for it waits for the task's end, as a blocking
// A2A message does, and is answered with the task as it ended.

// outcome is what the task store keeps of a task's call: the value, or
// the failure's text and its details for the model.
type outcome struct {
	Value  json.RawMessage `json:"value,omitempty"`
	Failed bool            `json:"failed,omitempty"`
	Text   string          `json:"text,omitempty"`
	Info   json.RawMessage `json:"info,omitempty"`
}

// failure is the outcome of a task failed for the reason msg.
func failure(msg string) json.RawMessage {
	b, _ := json.Marshal(outcome{Failed: true, Text: msg})
	return b
}

// newRunner returns the runner of the handler's tasks.
func newRunner(opts *Options, logger *slog.Logger) *tasks.Runner {
	store := opts.TaskStore
	if store == nil {
		store = tasks.NewMemoryStore(nil)
	}
	return tasks.NewRunner(store, &tasks.RunnerOptions{
		MaxRunning: opts.MaxRunningTasks, Failure: failure, Logger: logger, Name: "a2a",
	})
}

// settle turns a call's outcome into the final update of its task.
func settle(res otc.CallResult, err error) tasks.Update {
	var o outcome
	switch {
	case err != nil:
		o.Failed, o.Text = true, "The call was refused: "+err.Error()
		if e, ok := errors.AsType[*otc.Error](err); ok {
			o.Text = e.Message
			if e.Code == otc.CodeInvalidInput && len(e.ParameterErrors) > 0 {
				o.Text = modeltext.InvalidArguments(e.ParameterErrors)
			}
		}
	case res.Error != nil:
		te := res.Error
		o.Failed, o.Text, o.Info = true, modeltext.ToolError(te.Message, te.AdditionalPromptContent, te.CanRetry, te.RetryAfter), toolErrorInfo(te)
	default:
		o.Value = res.Value
	}
	b, _ := json.Marshal(o)
	status := tasks.Completed
	if o.Failed {
		status = tasks.Failed
	}
	return tasks.Update{Status: status, Result: b}
}

// toolErrorInfo is the data part of a failed task's status message.
func toolErrorInfo(te *otc.ToolError) json.RawMessage {
	b, _ := json.Marshal(map[string]any{
		"can_retry":                 te.CanRetry,
		"retry_after_ms":            retryMS(te.RetryAfter),
		"additional_prompt_content": te.AdditionalPromptContent,
	})
	return b
}

// startTask runs a call as a task: it creates the task, starts the call in
// the background and returns the task at WORKING; with wait, it returns
// the task once it has ended. A call that cannot start a task is answered
// with a failed task saying why.
func (h *Handler) startTask(r *http.Request, d dialect, req *otc.CallRequest, taskID, contextID string, wait bool) (*task, *rpcError, int) {
	ctx := r.Context()
	owner, err := tasks.Owner(otc.CallerIdentity(ctx))
	if err != nil {
		return h.failedTask(d, taskID, contextID, "The tool runs only as a task, and a task belongs to the caller that made it: your credential names no one (a token with neither sub nor client_id). Ask for a token that names you.", nil), nil, http.StatusOK
	}
	if !h.runner.Acquire() {
		return h.failedTask(d, taskID, contextID, fmt.Sprintf("The tool could not be started as a task: this agent runs as many tasks as it may (%d). Try again shortly.", h.runner.MaxRunning()), retryInfo(time.Second)), nil, http.StatusOK
	}
	if _, err := h.runner.Store().Create(ctx, &tasks.Task{ID: taskID, Owner: owner, Status: tasks.Working}); err != nil {
		h.runner.Release()
		msg, after := "The tool could not be started as a task: the agent's task store failed.", time.Second
		var limit *tasks.LimitError
		switch {
		case errors.As(err, &limit):
			msg, after = fmt.Sprintf("The tool could not be started as a task: you hold or run as many tasks as this agent keeps for one caller (your limit is %d).", limit.Limit), limit.RetryAfter
		case errors.Is(err, tasks.ErrStoreFull):
			msg = "The tool could not be started as a task: the agent's task store is full."
		default:
			h.logger.ErrorContext(ctx, "a2a: the task store failed to create a task", slog.String("error", err.Error()))
		}
		return h.failedTask(d, taskID, contextID, msg, retryInfo(after)), nil, http.StatusOK
	}
	run, runCtx, cancel := tasks.Detach(ctx, req)
	lt := tasks.NewLocal(cancel)
	h.runner.Register(taskID, lt)
	done := make(chan struct{})
	go func() {
		defer close(done)
		h.runner.Supervise(runCtx, taskID, lt, func() (u tasks.Update) {
			defer func() {
				if p := recover(); p != nil { // a middleware's panic: the function's are the registry's
					h.logger.Error("a2a: a task's call panicked", slog.String("task", taskID), slog.Any("panic", p))
					u = tasks.Update{Status: tasks.Failed, Result: failure("Internal error: the call failed unexpectedly")}
				}
			}()
			return settle(h.reg.Call(runCtx, run))
		})
	}()
	if wait {
		select {
		case <-done:
		case <-ctx.Done():
			return nil, &rpcError{Code: codeInternalError, Message: "Internal error: the request ended before the task did; get it with GetTask " + taskID}, http.StatusOK
		}
		st, err := h.runner.Store().Get(ctx, taskID)
		if err == nil {
			return h.taskOf(d, st, contextID), nil, http.StatusOK
		}
	}
	return d.task(&task{ID: taskID, ContextID: contextID, Status: taskStatus{State: d.state(stateWorking), Timestamp: now()}}), nil, http.StatusOK
}

// retryInfo is the data of a failed task that may be tried again after.
func retryInfo(after time.Duration) json.RawMessage {
	b, _ := json.Marshal(map[string]any{"can_retry": true, "retry_after_ms": retryMS(after)})
	return b
}

// failedTask is a task that failed for the reason text, with info (nil for
// none) in a data part.
func (h *Handler) failedTask(d dialect, taskID, contextID, text string, info json.RawMessage) *task {
	parts := []part{d.textPart(text)}
	if info != nil {
		parts = append(parts, d.dataPart(info))
	}
	return d.task(&task{ID: taskID, ContextID: contextID, Status: taskStatus{State: d.state(stateFailed), Timestamp: now(),
		Message: d.message(&message{MessageID: otc.NewCallID(), ContextID: contextID, TaskID: taskID, Role: d.roleAgent(), Parts: parts})}})
}

// taskOf is the A2A task of a stored task. The context of a task started
// without one is its own id.
func (h *Handler) taskOf(d dialect, st *tasks.Task, contextID string) *task {
	if contextID == "" {
		contextID = st.ID
	}
	t := &task{ID: st.ID, ContextID: contextID}
	switch st.Status {
	case tasks.Completed, tasks.Failed:
		var o outcome
		_ = json.Unmarshal(st.Result, &o) // written by this package
		if o.Failed {
			return h.failedTask(d, st.ID, contextID, o.Text, o.Info)
		}
		t.Status = taskStatus{State: d.state(stateCompleted), Timestamp: st.UpdatedAt}
		parts := []part{}
		if o.Value != nil {
			parts = append(parts, d.dataPart(o.Value), d.textPart(modeltext.Value(o.Value)))
		}
		t.Artifacts = []artifact{{ArtifactID: "result", Name: "result", Parts: parts}}
	case tasks.Cancelled:
		t.Status = taskStatus{State: d.state(stateCanceled), Timestamp: st.UpdatedAt}
	default:
		t.Status = taskStatus{State: d.state(stateWorking), Timestamp: st.UpdatedAt}
	}
	return d.task(t)
}

// ownTask returns the stored task id if it is the caller's, or the error
// that answers a request for it: TaskNotFound for a task of another
// caller as for none.
func (h *Handler) ownTask(ctx context.Context, id string) (*tasks.Task, *rpcError) {
	notFound := &rpcError{Code: codeTaskNotFound, Message: "Task not found: no task " + quoteID(id) + " of yours is kept here", Data: errorInfo("TASK_NOT_FOUND", nil)}
	owner, err := tasks.Owner(otc.CallerIdentity(ctx))
	if err != nil || id == "" || len(id) > maxMessageID {
		return nil, notFound
	}
	st, err := h.runner.Store().Get(ctx, id)
	switch {
	case errors.Is(err, tasks.ErrNotFound):
		return nil, notFound
	case err != nil:
		h.logger.ErrorContext(ctx, "a2a: the task store failed", slog.String("task", id), slog.String("error", err.Error()))
		return nil, &rpcError{Code: codeInternalError, Message: "Internal error: the task store failed; try again"}
	case st.Owner != owner:
		return nil, notFound
	}
	return st, nil
}

// getTask answers GetTask.
func (h *Handler) getTask(ctx context.Context, d dialect, id string) (*task, *rpcError) {
	st, e := h.ownTask(ctx, id)
	if e != nil {
		return nil, e
	}
	return h.taskOf(d, st, ""), nil
}

// cancelTask answers CancelTask: a task that has not ended is cancelled
// (its call stopped, here or on the replica that runs it); one that has is
// not cancelable.
func (h *Handler) cancelTask(ctx context.Context, d dialect, id string) (*task, *rpcError) {
	st, e := h.ownTask(ctx, id)
	if e != nil {
		return nil, e
	}
	if st.Status.Terminal() {
		return nil, &rpcError{Code: codeTaskNotCancelable, Message: "Task not cancelable: it has ended (" + string(st.Status) + ")", Data: errorInfo("TASK_NOT_CANCELABLE", nil)}
	}
	if err := h.runner.Store().Cancel(ctx, id); err != nil {
		return nil, &rpcError{Code: codeInternalError, Message: "Internal error: the task store failed; try again"}
	}
	if lt := h.runner.Lookup(id); lt != nil {
		lt.Cancel()
	}
	if now, err := h.runner.Store().Get(ctx, id); err == nil {
		st = now
	}
	return h.taskOf(d, st, ""), nil
}

// quoteID quotes a task id for a message, truncated.
func quoteID(id string) string {
	if len(id) > 64 {
		id = id[:64] + "…"
	}
	return fmt.Sprintf("%q", id)
}

// readTaskID reads params.id of GetTask and CancelTask.
func readTaskID(d *jsonparse.Document, params int32) (string, *rpcError) {
	if params < 0 || d.Kind(params) != jsonparse.KindObject {
		return "", invalidParams("id", "required: the task's id")
	}
	v := d.Member(params, "id")
	if v < 0 || d.Kind(v) != jsonparse.KindString {
		return "", invalidParams("id", "required: the task's id, a string")
	}
	return d.StringValue(v), nil
}
