package a2a

import (
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"math/rand/v2"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/otcgo/otc"
	"github.com/otcgo/otc/internal/callin"
	"github.com/otcgo/otc/internal/modeltext"
	"github.com/otcgo/otc/internal/wire"
)

// Limits of a message, beside the body's size.
const (
	maxParts      = 64
	maxMessageID  = 256
	maxToolLength = 200
)

// send answers a message: it appends to dst the SendMessageResponse of
// answer's task or message, encoded in d's shape (a 1.0 {"task": ...} or
// {"message": ...}; 0.3's task or message itself), or returns the error
// to answer with and its HTTP status (200 but for refusals of the
// caller).
func (h *Handler) send(dst []byte, r *http.Request, d dialect, m incoming, body []byte) ([]byte, *rpcError, int) {
	t, msg, e, status := h.answer(r, d, m, body, nil)
	if e != nil {
		return dst, e, status
	}
	return appendResult(dst, d, t, msg), nil, status
}

// answer answers a message: it calls the tool its data part names and
// returns the task that says how the call ended, or the message that
// guides a caller who called no tool, or the error to answer with and its
// HTTP status. With st, the call reports its progress on st's stream.
func (h *Handler) answer(r *http.Request, d dialect, m incoming, body []byte, st *streamer) (*task, *message, *rpcError, int) {
	if m.generated {
		m.messageID = otc.NewCallID()
	}
	switch {
	case m.messageID == "":
		return nil, nil, invalidParams("message.messageId", "required: the message's id, which is also the call's id"), http.StatusOK
	case len(m.messageID) > maxMessageID:
		return nil, nil, invalidParams("message.messageId", fmt.Sprintf("at most %d bytes", maxMessageID)), http.StatusOK
	case m.parts == 0:
		return nil, nil, invalidParams("message.parts", "At least one part is required"), http.StatusOK
	case m.parts > maxParts:
		return nil, nil, invalidParams("message.parts", fmt.Sprintf("at most %d parts", maxParts)), http.StatusOK
	case len(m.taskID) > 0:
		if st != nil {
			return nil, nil, &rpcError{Code: codeUnsupported, Message: "Answer a task's questions with SendMessage; to follow the task, subscribe to it (SubscribeToTask)", Data: errorInfo("UNSUPPORTED_OPERATION", nil)}, http.StatusOK
		}
		t, e := h.continueTask(r, d, m)
		return t, nil, e, http.StatusOK
	}
	// A task's id is new; a context the message names none of gets the
	// same value, which is as unique (the two are never compared).
	taskID := newTaskID()
	contextID := m.contextID
	if contextID == "" {
		contextID = taskID
	}
	if !m.found {
		return nil, h.guide(r, d, contextID), nil, http.StatusOK
	}
	tool := m.tool
	if tool == "" {
		only, ok := h.onlySkill(r)
		if !ok {
			return nil, nil, invalidParams("message.parts.data.tool", "required: this agent has several skills; name one (its card lists them)"), http.StatusOK
		}
		tool = only
	}
	if len(tool) > maxToolLength {
		return nil, nil, invalidParams("message.parts.data.tool", fmt.Sprintf("at most %d bytes", maxToolLength)), http.StatusOK
	}
	// The request and the answer's task outlive this frame (the registry
	// and the encoder keep them): one allocation holds them.
	f := new(callFrame)
	req := &f.req
	*req = otc.CallRequest{CallID: m.messageID, CallIDGenerated: m.generated, Protocol: otc.ProtocolA2A, HTTPRequest: r, RequestBody: body}
	if m.input >= 0 {
		req.Input = m.doc.Raw(m.input)
		callin.SetParsed(req, m.doc, m.input)
	}
	if strings.Contains(tool, ".") {
		req.ToolID = tool
	} else {
		req.ToolName = tool
	}
	// A call of a tool whose calls may run as tasks runs as one, kept in
	// the task store: answered at once when the caller asks for that,
	// else when it ends or asks its caller something.
	// A stream follows the task to its end or its first question.
	if support := h.taskSupport(req); support != otc.TasksForbidden {
		// A kept task's id is a handle to it: unguessable.
		if contextID == taskID {
			contextID = ""
		}
		taskID = otc.NewCallID()
		if contextID == "" {
			contextID = taskID
		}
		if st != nil {
			st.taskID, st.contextID = taskID, contextID
		}
		t, e, status := h.startTask(r, d, req, taskID, contextID, st == nil && !m.returnImmediately, st)
		return t, nil, e, status
	}
	ctx := r.Context()
	if st != nil {
		st.taskID, st.contextID = taskID, contextID
		ctx = otc.WithNotifier(ctx, st)
	}
	res, err := h.reg.Call(ctx, req)
	if st != nil {
		st.end() // nothing the tool reports from now on is sent
	}
	return h.outcome(d, taskID, contextID, res, err, f)
}

// outcome answers a call that ended within its message, as
// [otc.Registry.Call] returned it: with the task that says how it ended,
// or the error its refusal is answered with. f, when not nil, holds the
// answer's task.
func (h *Handler) outcome(d dialect, taskID, contextID string, res otc.CallResult, err error, f *callFrame) (*task, *message, *rpcError, int) {
	if err != nil {
		return h.refused(d, taskID, contextID, err)
	}
	if te := res.Error; te != nil {
		text := modeltext.ToolError(te.Message, te.AdditionalPromptContent, te.CanRetry, te.RetryAfter)
		return h.failedTask(d, taskID, contextID, text, toolErrorInfo(te)), nil, nil, http.StatusOK
	}
	if f == nil {
		f = new(callFrame)
	}
	t := &f.task
	*t = task{ID: taskID, ContextID: contextID}
	t.Status = taskStatus{State: d.state(stateCompleted), Timestamp: now()}
	parts := f.parts[:0]
	if res.Value != nil {
		parts = append(parts, d.dataPart(res.Value), d.textPart(modeltext.Value(res.Value)))
	}
	// One artifact per task: its id need only be unique within the task.
	f.artifacts[0] = artifact{ArtifactID: "result", Name: "result", Parts: parts}
	t.Artifacts = f.artifacts[:]
	return d.task(t), nil, nil, http.StatusOK
}

// retryMS is a retry delay in whole milliseconds, rounded up.
func retryMS(d time.Duration) int64 {
	return int64((d + time.Millisecond - 1) / time.Millisecond)
}

// refused answers a call the registry refused before the tool ran.
func (h *Handler) refused(d dialect, taskID, contextID string, err error) (*task, *message, *rpcError, int) {
	e, ok := errors.AsType[*otc.Error](err)
	if !ok {
		e = &otc.Error{Code: otc.CodeServerError, Message: "The call was refused"}
	}
	switch {
	case errors.Is(err, otc.ErrToolNotFound):
		return nil, nil, &rpcError{Code: codeInvalidParams, Message: e.Message + ": the card lists the skills this agent has", Data: errorInfo("INVALID_PARAMS", map[string]string{"field": "message.parts.data.tool"})}, http.StatusOK
	case e.Code == otc.CodeInvalidInput && len(e.ParameterErrors) > 0:
		order := slices.Sorted(maps.Keys(e.ParameterErrors))
		return nil, nil, &rpcError{Code: codeInvalidParams, Message: modeltext.InvalidArguments(e.ParameterErrors), Data: append(errorInfo("INVALID_PARAMS", nil), badRequest(e.ParameterErrors, order)...)}, http.StatusOK
	case e.Code == otc.CodeUnauthenticated || e.Code == otc.CodeForbidden:
		return nil, nil, authError(e), e.Code.HTTPStatus()
	case e.Code == otc.CodeInvalidInput || errors.Is(err, otc.ErrCallIDReused):
		return nil, nil, &rpcError{Code: codeInvalidParams, Message: e.Message, Data: errorInfo("INVALID_PARAMS", nil)}, http.StatusOK
	}
	// Any other refusal (missing requirements, busy): a failed task that
	// says why, as a tool error would.
	return h.failedTask(d, taskID, contextID, e.Message, refusalInfo(e)), nil, nil, http.StatusOK
}

// refusalInfo is the data part of a task failed by a refusal of its call:
// its class, and whether and when to try again.
func refusalInfo(e *otc.Error) json.RawMessage {
	b, _ := json.Marshal(map[string]any{"code": e.Code.String(), "can_retry": e.RetryAfter > 0, "retry_after_ms": retryMS(e.RetryAfter)})
	return b
}

// invalidParams is the invalid-params error naming one field.
func invalidParams(field, problem string) *rpcError {
	return &rpcError{Code: codeInvalidParams, Message: "Invalid parameters: " + field + ": " + problem, Data: append(errorInfo("INVALID_PARAMS", nil), badRequest(map[string]string{field: problem}, []string{field})...)}
}

// taskSupport is whether the tool a call names may run as a task;
// TasksForbidden when it names none.
func (h *Handler) taskSupport(req *otc.CallRequest) otc.TaskSupport {
	var def *otc.ToolDefinition
	var err error
	if req.ToolID != "" {
		def, err = h.reg.Lookup(req.ToolID, otc.ProtocolA2A)
	} else {
		def, err = h.reg.LookupName(req.ToolName, otc.ProtocolA2A)
	}
	if err != nil {
		return otc.TasksForbidden
	}
	return def.Tasks
}

// callFrame holds what a message's call allocates: the call's request and
// the task that answers it.
type callFrame struct {
	req       otc.CallRequest
	task      task
	artifacts [1]artifact
	parts     [2]part
}

// newTaskID returns a new task id, a random UUID (version 4). The random
// source is the runtime's, which is seeded unpredictably and needs no
// system call: a task that the store keeps gets an id from
// [otc.NewCallID] instead.
func newTaskID() string {
	var b [16]byte
	binary.LittleEndian.PutUint64(b[:8], rand.Uint64())
	binary.LittleEndian.PutUint64(b[8:], rand.Uint64())
	return wire.UUID(b)
}
