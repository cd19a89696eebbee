package a2a

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/otcgo/otc"
	"github.com/otcgo/otc/internal/modeltext"
	"github.com/otcgo/otc/internal/wire"
)

// Limits of a message, beside the body's size.
const (
	maxParts      = 64
	maxMessageID  = 256
	maxToolLength = 200
)

// callPart is the data part that calls a tool.
type callPart struct {
	Tool  string          `json:"tool"`
	Input json.RawMessage `json:"input"`
}

// send answers a message: it calls the tool its data part names and
// returns the SendMessageResponse in d's shape (a 1.0 {"task": ...} or
// {"message": ...}; 0.3's task or message itself), or the error to
// answer with and its HTTP status (200 but for refusals of the caller).
func (h *Handler) send(r *http.Request, d dialect, m *message, body []byte) (any, *rpcError, int) {
	switch {
	case m.MessageID == "":
		return nil, invalidParams("message.messageId", "required: the message's id, which is also the call's id"), http.StatusOK
	case len(m.MessageID) > maxMessageID:
		return nil, invalidParams("message.messageId", fmt.Sprintf("at most %d bytes", maxMessageID)), http.StatusOK
	case len(m.Parts) == 0:
		return nil, invalidParams("message.parts", "At least one part is required"), http.StatusOK
	case len(m.Parts) > maxParts:
		return nil, invalidParams("message.parts", fmt.Sprintf("at most %d parts", maxParts)), http.StatusOK
	case len(m.TaskID) > 0:
		return nil, &rpcError{Code: codeTaskNotFound, Message: "Task not found: this agent keeps no task to continue; send a new message without taskId", Data: errorInfo("TASK_NOT_FOUND", map[string]string{"taskId": wire.Truncate(m.TaskID, 64)})}, http.StatusOK
	}
	call, found, err := findCall(m.Parts)
	if err != nil {
		return nil, invalidParams("message.parts", err.Error()), http.StatusOK
	}
	contextID := m.ContextID
	if contextID == "" {
		contextID = otc.NewCallID()
	}
	if !found {
		return h.guide(r, d, contextID), nil, http.StatusOK
	}
	if call.Tool == "" {
		only, ok := h.onlySkill(r)
		if !ok {
			return nil, invalidParams("message.parts.data.tool", "required: this agent has several skills; name one (its card lists them)"), http.StatusOK
		}
		call.Tool = only
	}
	if len(call.Tool) > maxToolLength {
		return nil, invalidParams("message.parts.data.tool", fmt.Sprintf("at most %d bytes", maxToolLength)), http.StatusOK
	}
	req := &otc.CallRequest{CallID: m.MessageID, Input: call.Input, Protocol: otc.ProtocolA2A, HTTPRequest: r, RequestBody: body}
	if strings.Contains(call.Tool, ".") {
		req.ToolID = call.Tool
	} else {
		req.ToolName = call.Tool
	}
	res, err := h.reg.Call(r.Context(), req)
	if err != nil {
		return h.refused(d, contextID, err)
	}
	t := &task{ID: otc.NewCallID(), ContextID: contextID}
	if te := res.Error; te != nil {
		info, _ := json.Marshal(map[string]any{
			"can_retry":                 te.CanRetry,
			"retry_after_ms":            retryMS(te.RetryAfter),
			"additional_prompt_content": te.AdditionalPromptContent,
		})
		t.Status = taskStatus{State: d.state(stateFailed), Timestamp: now(), Message: d.message(&message{
			MessageID: otc.NewCallID(), ContextID: contextID, TaskID: t.ID, Role: d.roleAgent(),
			Parts: []part{d.textPart(modeltext.ToolError(te.Message, te.AdditionalPromptContent, te.CanRetry, te.RetryAfter)), d.dataPart(info)},
		})}
		return wrap(d, "task", d.task(t)), nil, http.StatusOK
	}
	t.Status = taskStatus{State: d.state(stateCompleted), Timestamp: now()}
	parts := []part{}
	if res.Value != nil {
		parts = append(parts, d.dataPart(res.Value), d.textPart(modeltext.Value(res.Value)))
	}
	t.Artifacts = []artifact{{ArtifactID: otc.NewCallID(), Name: "result", Parts: parts}}
	return wrap(d, "task", d.task(t)), nil, http.StatusOK
}

// wrap is a SendMessageResponse: 1.0 names what it holds, 0.3 does not.
func wrap(d dialect, key string, v any) any {
	if d.v03 {
		return v
	}
	return map[string]any{key: v}
}

// retryMS is a retry delay in whole milliseconds, rounded up.
func retryMS(d time.Duration) int64 {
	return int64((d + time.Millisecond - 1) / time.Millisecond)
}

// findCall returns the message's call part: the data part with "tool" or
// "input", which must be alone of its kind.
func findCall(parts []part) (callPart, bool, error) {
	var call callPart
	found := false
	for _, p := range parts {
		if len(p.Data) == 0 || p.Data[0] != '{' {
			continue
		}
		var c callPart
		if err := json.Unmarshal(p.Data, &c); err != nil {
			return call, false, errors.New(`a data part's "tool" must be a string and its "input" a JSON object`)
		}
		if c.Tool == "" && c.Input == nil {
			continue
		}
		if found {
			return call, false, errors.New("one message calls one tool: send one data part with \"tool\" and \"input\"")
		}
		if c.Input != nil && !bytes.HasPrefix(bytes.TrimSpace(c.Input), []byte("{")) && string(bytes.TrimSpace(c.Input)) != "null" {
			return call, false, errors.New(`a data part's "input" must be a JSON object of the tool's parameters`)
		}
		call, found = c, true
	}
	return call, found, nil
}

// refused answers a call the registry refused before the tool ran.
func (h *Handler) refused(d dialect, contextID string, err error) (any, *rpcError, int) {
	e, ok := errors.AsType[*otc.Error](err)
	if !ok {
		e = &otc.Error{Code: otc.CodeServerError, Message: "The call was refused"}
	}
	switch {
	case errors.Is(err, otc.ErrToolNotFound):
		return nil, &rpcError{Code: codeInvalidParams, Message: e.Message + ": the card lists the skills this agent has", Data: errorInfo("INVALID_PARAMS", map[string]string{"field": "message.parts.data.tool"})}, http.StatusOK
	case e.Code == otc.CodeInvalidInput && len(e.ParameterErrors) > 0:
		order := slices.Sorted(maps.Keys(e.ParameterErrors))
		return nil, &rpcError{Code: codeInvalidParams, Message: modeltext.InvalidArguments(e.ParameterErrors), Data: append(errorInfo("INVALID_PARAMS", nil), badRequest(e.ParameterErrors, order)...)}, http.StatusOK
	case e.Code == otc.CodeUnauthenticated || e.Code == otc.CodeForbidden:
		return nil, authError(e), e.Code.HTTPStatus()
	case e.Code == otc.CodeInvalidInput || errors.Is(err, otc.ErrCallIDReused):
		return nil, &rpcError{Code: codeInvalidParams, Message: e.Message, Data: errorInfo("INVALID_PARAMS", nil)}, http.StatusOK
	}
	// Any other refusal (missing requirements, busy): a failed task that
	// says why, as a tool error would.
	info, _ := json.Marshal(map[string]any{"code": e.Code.String(), "can_retry": e.RetryAfter > 0, "retry_after_ms": retryMS(e.RetryAfter)})
	t := &task{ID: otc.NewCallID(), ContextID: contextID, Status: taskStatus{State: d.state(stateFailed), Timestamp: now()}}
	t.Status.Message = d.message(&message{MessageID: otc.NewCallID(), ContextID: contextID, TaskID: t.ID, Role: d.roleAgent(),
		Parts: []part{d.textPart(e.Message), d.dataPart(info)}})
	return wrap(d, "task", d.task(t)), nil, http.StatusOK
}

// invalidParams is the invalid-params error naming one field.
func invalidParams(field, problem string) *rpcError {
	return &rpcError{Code: codeInvalidParams, Message: "Invalid parameters: " + field + ": " + problem, Data: append(errorInfo("INVALID_PARAMS", nil), badRequest(map[string]string{field: problem}, []string{field})...)}
}
