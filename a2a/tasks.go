package a2a

import (
	"bytes"
	"cmp"
	"context"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/otcgo/otc"
	"github.com/otcgo/otc/caller"
	"github.com/otcgo/otc/internal/jsonparse"
	"github.com/otcgo/otc/internal/modeltext"
	"github.com/otcgo/otc/internal/taskrun"
	"github.com/otcgo/otc/internal/wire"
	"github.com/otcgo/otc/tasks"
)

// This file serves tasks that outlive their message: a message asking
// for it (returnImmediately; 0.3's blocking false) that calls a tool whose
// calls may run as tasks ([otc.Tool.Tasks]) is answered at once with a
// WORKING task, whose call runs in the background on a taskrun.Runner and
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

// newRunner returns the runner of the handler's tasks, which tells
// changed of each change of a task's state.
func newRunner(opts *Options, logger *slog.Logger, changed func(*tasks.Task)) *taskrun.Runner {
	to := opts.Tasks
	if to == nil {
		to = &tasks.Options{}
	}
	store := to.Store
	if store == nil {
		store = tasks.NewMemoryStore(nil)
	}
	return taskrun.NewRunner(store, &taskrun.RunnerOptions{
		MaxRunning: to.MaxRunning, PollInterval: to.PollInterval, Failure: failure, Said: said, Changed: changed, Logger: logger, Name: "a2a",
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
			// A refusal that may pass later (a rate limit, a busy
			// server) says when, as a message's refusal does.
			o.Info = failureInfo(e.Code.String(), e.RetryAfter > 0, e.RetryAfter, "")
		}
	case res.Error != nil:
		te := res.Error
		o.Failed, o.Text = true, modeltext.ToolError(te.Message, te.AdditionalPromptContent, te.CanRetry, te.RetryAfter)
		o.Info = failureInfo("tool_error", te.CanRetry, te.RetryAfter, te.AdditionalPromptContent)
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

// startTask runs the call of message m as a task (see taskrun.Runner.Start):
// it returns the task at WORKING once the call is admitted and its task
// kept, or, with wait, once the task has ended or asks something. The
// task's id is derived from its owner and m's messageId, so that the
// message sent again gets the task it started, not a second one. A call
// refused before its task was kept (by the registry, or by the task's
// limits) is answered as any call is, by a message, and leaves no task
// behind.
func (h *Handler) startTask(r *http.Request, d dialect, req *otc.CallRequest, m incoming, contextID string, wait bool, st *streamer) (*task, *message, *rpcError, int) {
	ctx := r.Context()
	owner, err := caller.Key(ctx, r)
	if err != nil {
		msg, e, status := h.reply(d, m.messageID, contextID, otc.CallResult{}, &otc.Error{Code: otc.CodeServerError,
			Message: "The tool runs only as a task, and a task belongs to the caller that made it: your credential names no one (a token with neither sub nor client_id). Ask for a token that names you."})
		return nil, msg, e, status
	}
	taskID := taskIDOf(owner, m.messageID)
	first := tasks.Task{ID: taskID, Owner: owner, ContextID: contextID, History: []json.RawMessage{callerEntry(m, taskID, contextID)}}
	if m.push >= 0 {
		w, e := h.messagePush(r, d, m)
		if e != nil {
			return nil, nil, e, http.StatusOK
		}
		first.Webhooks = []tasks.Webhook{w}
	}
	if st != nil {
		st.taskID, st.contextID, st.opening = taskID, contextID, history(d, &first, m.history)
	}
	if again, e := h.resent(r, d, taskID, owner, contextID, m.history, st); again != nil || e != nil {
		return again, nil, e, http.StatusOK
	}
	var prepare func(context.Context) context.Context
	if st != nil {
		prepare = func(runCtx context.Context) context.Context { return otc.WithNotifier(runCtx, st) }
	}
	kept, res, err := h.runner.Start(ctx, h.reg, req, first, allowAsk, prepare, settle)
	if kept == nil {
		if errors.Is(err, tasks.ErrExists) { // the same message, sent twice at once: the other started it
			if again, e := h.resent(r, d, taskID, owner, contextID, m.history, st); again != nil || e != nil {
				return again, nil, e, http.StatusOK
			}
		}
		msg, e, status := h.reply(d, m.messageID, contextID, res, err)
		return nil, msg, e, status
	}
	if st != nil {
		st.following = true
	}
	if wait {
		t, err := h.settled(ctx, taskID)
		if err != nil {
			return nil, nil, &rpcError{Code: codeInternalError, Message: "Internal error: the request ended before the task did; get it with GetTask " + taskID}, http.StatusOK
		}
		return h.taskOf(d, t, contextID, m.history), nil, nil, http.StatusOK
	}
	return d.task(&task{ID: taskID, ContextID: contextID, Status: taskStatus{State: d.state(stateWorking), Timestamp: now()},
		History: history(d, kept, m.history)}), nil, nil, http.StatusOK
}

// resent returns the task a message sent again started, when the store
// holds task id for owner: as it now is (with its n most recent messages),
// or followed on st's stream. It returns nil when the message was not
// sent before.
func (h *Handler) resent(r *http.Request, d dialect, id, owner, contextID string, n int, st *streamer) (*task, *rpcError) {
	t, err := h.runner.Store().Get(r.Context(), id)
	switch {
	case errors.Is(err, tasks.ErrNotFound):
		return nil, nil
	case err != nil:
		h.logger.ErrorContext(r.Context(), "a2a: the task store failed", slog.String("task", id), slog.String("error", err.Error()))
		return nil, &rpcError{Code: codeInternalError, Message: "Internal error: the task store failed; try again"}
	case t.Owner != owner:
		return nil, nil // cannot be: the id is derived from the owner
	}
	if st != nil {
		st.following = true
	}
	return h.taskOf(d, t, contextID, n), nil
}

// taskIDOf is the id of the task of owner's message messageID: a version
// 4 UUID of their SHA-256, which only who knows both can name.
func taskIDOf(owner, messageID string) string {
	h := sha256.New()
	h.Write([]byte(owner))
	h.Write([]byte{0})
	h.Write([]byte(messageID))
	var b [16]byte
	copy(b[:], h.Sum(nil))
	return wire.UUID(b)
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

// taskOf is the A2A task of a stored task, in contextID when given, else
// in the context it was created in (its own id for a store that keeps no
// context), with the n most recent messages of its history (historyAll
// for every one kept).
func (h *Handler) taskOf(d dialect, st *tasks.Task, contextID string, n int) *task {
	t := h.taskState(d, st, contextID)
	t.History = history(d, st, n)
	return t
}

// taskState is the A2A task of a stored task, without its history.
func (h *Handler) taskState(d dialect, st *tasks.Task, contextID string) *task {
	if contextID == "" {
		contextID = st.ContextID
	}
	if contextID == "" {
		contextID = st.ID
	}
	t := &task{ID: st.ID, ContextID: contextID}
	switch st.Status {
	case tasks.Completed, tasks.Failed:
		var o outcome
		_ = json.Unmarshal(st.Result, &o)           // written by this package
		if st.Status == tasks.Failed && !o.Failed { // lost with its replica: no outcome was recorded
			o.Failed, o.Text = true, orDefault(st.StatusMessage, "The task failed; its outcome is unknown")
		}
		if o.Failed {
			return h.failedTask(d, st.ID, contextID, o.Text, o.Info)
		}
		t.Status = taskStatus{State: d.state(stateCompleted), Timestamp: st.UpdatedAt}
		parts := []part{}
		if o.Value != nil {
			parts = append(parts, d.dataPart(o.Value), d.textPart(modeltext.Value(o.Value)))
		}
		t.Artifacts = []artifact{{ArtifactID: "result", Name: "result", Parts: parts}}
	case tasks.InputRequired:
		t.Status = taskStatus{State: d.state(stateInputRequired), Timestamp: st.UpdatedAt,
			Message: d.message(&message{MessageID: questionID(st), ContextID: contextID, TaskID: st.ID, Role: d.roleAgent(),
				Parts: []part{d.textPart(questionsText(st)), d.dataPart(questionsData(st))}})}
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
func (h *Handler) ownTask(r *http.Request, id string) (*tasks.Task, *rpcError) {
	ctx := r.Context()
	notFound := &rpcError{Code: codeTaskNotFound, Message: "Task not found: no task " + quoteID(id) + " of yours is kept here", Data: errorInfo("TASK_NOT_FOUND", nil)}
	owner, err := caller.Key(ctx, r)
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

// getTask answers GetTask: the task, with the n most recent messages of
// its history.
func (h *Handler) getTask(r *http.Request, d dialect, id string, n int) (*task, *rpcError) {
	st, e := h.ownTask(r, id)
	if e != nil {
		return nil, e
	}
	return h.taskOf(d, st, "", n), nil
}

// cancelTask answers CancelTask: a task that has not ended is cancelled
// (its call stopped, here or on the replica that runs it); one that has is
// not cancelable.
func (h *Handler) cancelTask(r *http.Request, d dialect, id string) (*task, *rpcError) {
	ctx := r.Context()
	st, e := h.ownTask(r, id)
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
		if st.Status == tasks.Cancelled {
			h.changed(st)
		}
	}
	return h.taskOf(d, st, "", historyAll), nil
}

// quoteID quotes a task id for a message, truncated.
func quoteID(id string) string {
	if len(id) > 64 {
		id = id[:64] + "…"
	}
	return fmt.Sprintf("%q", id)
}

// readTaskID reads params.id of GetTask, CancelTask and SubscribeToTask,
// and GetTask's params.historyLength (historyAll when not given).
func readTaskID(d *jsonparse.Document, params int32) (string, int, *rpcError) {
	if params < 0 || d.Kind(params) != jsonparse.KindObject {
		return "", 0, invalidParams("id", "required: the task's id")
	}
	v := d.Member(params, "id")
	if v < 0 || d.Kind(v) != jsonparse.KindString {
		return "", 0, invalidParams("id", "required: the task's id, a string")
	}
	n, e := readHistoryLength(d, params, "historyLength")
	return d.StringValue(v), n, e
}

// settled waits until task id has ended or waits for answers, and returns
// it as it then is.
func (h *Handler) settled(ctx context.Context, id string) (*tasks.Task, error) {
	var out *tasks.Task
	err := h.watch(ctx, id, func(t *tasks.Task) bool {
		out = t
		return t.Status.Terminal() || t.Status == tasks.InputRequired
	})
	return out, err
}

// watch reads task id from the store, and again at each change, until
// done returns true for it; it returns the store's error, or ctx's cause.
// A task this process runs is watched; one another replica runs is looked
// at every poll interval.
func (h *Handler) watch(ctx context.Context, id string, done func(*tasks.Task) bool) error {
	var tick <-chan time.Time
	for {
		var changed <-chan struct{}
		if l := h.runner.Lookup(id); l != nil {
			changed = l.Changed()
		}
		t, err := h.runner.Store().Get(ctx, id)
		if err != nil {
			return err
		}
		if done(t) {
			return nil
		}
		if tick == nil {
			tk := time.NewTicker(h.runner.PollInterval())
			defer tk.Stop()
			tick = tk.C
		}
		select {
		case <-changed:
		case <-tick:
		case <-ctx.Done():
			return context.Cause(ctx)
		}
	}
}

// allowAsk refuses the questions an A2A client cannot be asked: it answers
// elicitation (a question and the schema of its answer), but has neither
// a model to sample nor roots to list.
func allowAsk(r otc.InputRequest) error {
	if r.Method == otc.MethodElicit {
		return nil
	}
	return fmt.Errorf("a2a: ask: %w: an A2A client is asked questions (%s) only, not %s", otc.ErrInputUnsupported, otc.MethodElicit, r.Method)
}

// questionsText is what an INPUT_REQUIRED task's status message says: the
// questions, and how to answer them.
func questionsText(st *tasks.Task) string {
	qs := taskrun.Questions(st)
	keys := slices.Sorted(maps.Keys(qs))
	var b strings.Builder
	b.WriteString("The tool asks:")
	for _, k := range keys {
		var p struct {
			Message string `json:"message"`
			URL     string `json:"url"`
		}
		_ = json.Unmarshal(qs[k].Params, &p)
		fmt.Fprintf(&b, " [%s] %s", k, p.Message)
		if p.URL != "" {
			fmt.Fprintf(&b, " (%s)", p.URL)
		}
	}
	b.WriteString(" Answer with a message on this task (its taskId) carrying a data part")
	if len(keys) == 1 {
		b.WriteString(" with the requested fields, or")
	}
	fmt.Fprintf(&b, ` {"input_responses": {%q: {"action": "accept", "content": {...}}}} ("decline" or "cancel" to refuse).`, keys[0])
	return b.String()
}

// questionsData is the data part of an INPUT_REQUIRED task's status
// message: {"input_requests": {key: {"method", "params"}}}.
func questionsData(st *tasks.Task) json.RawMessage {
	b := []byte(`{"input_requests":{`)
	for i, k := range slices.Sorted(maps.Keys(st.InputRequests)) {
		if i > 0 {
			b = append(b, ',')
		}
		b = wire.AppendString(b, k)
		b = append(b, ':')
		b = append(b, st.InputRequests[k]...)
	}
	return append(b, "}}"...)
}

// continueTask answers a message that names a task: the answers it
// carries go to the task's open questions, and the task is answered as it
// then is (once it has ended or asks again, unless the caller asked to be
// answered at once).
func (h *Handler) continueTask(r *http.Request, d dialect, m incoming) (*task, *rpcError) {
	ctx := r.Context()
	st, e := h.ownTask(r, m.taskID)
	if e != nil {
		return nil, e
	}
	switch {
	case st.Status.Terminal():
		return nil, &rpcError{Code: codeUnsupported, Message: "The task has ended (" + string(st.Status) + ") and takes no more messages: send a new message, without taskId, to call the tool again", Data: errorInfo("UNSUPPORTED_OPERATION", nil)}
	case st.Status != tasks.InputRequired:
		return nil, &rpcError{Code: codeUnsupported, Message: "The task is working and waits for no answer: follow it with GetTask or SubscribeToTask", Data: errorInfo("UNSUPPORTED_OPERATION", nil)}
	}
	if contextID := cmp.Or(st.ContextID, st.ID); m.contextID != "" && m.contextID != contextID {
		return nil, invalidParams("message.contextId", "the task "+quoteID(m.taskID)+" is in context "+quoteID(contextID)+", not this one: send the task's contextId, or none")
	}
	answers, e := readAnswers(m, st)
	if e != nil {
		return nil, e
	}
	if err := h.runner.Answer(ctx, st, answers, callerEntry(m, st.ID, cmp.Or(st.ContextID, st.ID))); err != nil {
		var bad *taskrun.AnswerError
		switch {
		case errors.As(err, &bad):
			return nil, invalidParams("message.parts.data.input_responses."+wire.Truncate(bad.Key, 64), "the answer to "+bad.Method+" is invalid: "+bad.Reason+"; the task still waits for it")
		case errors.Is(err, tasks.ErrResultTooLarge):
			return nil, invalidParams("message.parts.data.input_responses", "larger than this agent keeps for a task")
		case errors.Is(err, tasks.ErrNotFound):
			return nil, &rpcError{Code: codeTaskNotFound, Message: "Task not found: no task " + quoteID(m.taskID) + " of yours is kept here", Data: errorInfo("TASK_NOT_FOUND", nil)}
		}
		h.logger.ErrorContext(ctx, "a2a: the task store failed to take answers", slog.String("task", wire.Truncate(m.taskID, 64)), slog.String("error", err.Error()))
		return nil, &rpcError{Code: codeInternalError, Message: "Internal error: the task store failed; try again"}
	}
	var err error
	if m.returnImmediately {
		st, err = h.runner.Store().Get(ctx, m.taskID)
	} else {
		st, err = h.settled(ctx, m.taskID)
	}
	if err != nil {
		return nil, &rpcError{Code: codeInternalError, Message: "Internal error: the answers were taken, but the task could not be read; get it with GetTask " + quoteID(m.taskID)}
	}
	return h.taskOf(d, st, "", m.history), nil
}

// readAnswers reads the answers a message gives to task st's questions:
// a data part {"input_responses": {key: answer}}, each answer the result
// MCP defines for the question (for elicitation, {"action", "content"}).
// To a task with one question open, a data part may also give the answer
// itself ({"action": ...}), or only the content of an accepted one.
func readAnswers(m incoming, st *tasks.Task) (map[string]json.RawMessage, *rpcError) {
	d := m.doc
	if m.answers >= 0 {
		out := map[string]json.RawMessage{}
		for k, v := range d.Members(m.answers) {
			out[d.StringValue(k)] = json.RawMessage(bytes.Clone(d.Raw(v)))
		}
		return out, nil
	}
	if m.data >= 0 && len(st.InputRequests) == 1 {
		key := slices.Collect(maps.Keys(st.InputRequests))[0]
		raw := bytes.Clone(d.Raw(m.data))
		if d.Member(m.data, "action") < 0 {
			raw = append(append([]byte(`{"action":"accept","content":`), raw...), '}')
		}
		return map[string]json.RawMessage{key: raw}, nil
	}
	return nil, invalidParams("message.parts", `the task waits for answers to its questions: send a data part {"input_responses": {"<key>": {"action": "accept", "content": {...}}}}, one key per question its status names`)
}

// subscribe answers SubscribeToTask: the caller's task, not ended, is
// followed on a stream to its end (rpcID is the JSON-RPC request's id,
// nil for HTTP+JSON); an error is answered as fail says. A subscriber
// sees the task's changes of state, its questions and its end; the
// progress its tool reports reaches the stream of the message that
// started it only.
func (h *Handler) subscribe(w http.ResponseWriter, r *http.Request, d dialect, id string, rpcID []byte, fail func(e *rpcError)) {
	st, e := h.ownTask(r, id)
	if e == nil && st.Status.Terminal() {
		e = &rpcError{Code: codeUnsupported, Message: "The task has ended (" + string(st.Status) + "): read it with GetTask", Data: errorInfo("UNSUPPORTED_OPERATION", nil)}
	}
	if e != nil {
		fail(e)
		return
	}
	s := &streamer{w: w, r: r, d: d, rpcID: rpcID, taskID: id, contextID: id, history: historyAll}
	h.follow(r.Context(), s, id, "", false)
}
