package a2a

import (
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"math/bits"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/otcgo/otc"
	"github.com/otcgo/otc/internal/a2awire"
	"github.com/otcgo/otc/internal/hook"
	"github.com/otcgo/otc/internal/modeltext"
	"github.com/otcgo/otc/internal/wire"
)

// seam is what package otc lends the packages beside it (internal/hook).
var seam = hook.Of[otc.Registry, otc.Policy, otc.ToolDefinition, otc.CallRequest, otc.Identity, otc.Error]()

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
func (h *Handler) send(dst []byte, r *http.Request, d dialect, m *incoming, body []byte) ([]byte, *rpcError, int) {
	var v valueReply
	t, msg, e, status := h.answer(r, d, m, body, nil, &v)
	switch {
	case e != nil:
		return dst, e, status
	case v.value != nil:
		return appendValueReply(dst, d, &v), nil, status
	}
	return appendResult(dst, d, t, msg), nil, status
}

// valueReply is a call that ended with a value, which send writes as the
// message that answers it without building the message (the commonest
// answer, written straight to the wire).
type valueReply struct {
	messageID, contextID string
	value                json.RawMessage
}

// appendValueReply appends the SendMessageResponse of v: the message
// reply writes for a value, in d's shape.
func appendValueReply(dst []byte, d dialect, v *valueReply) []byte {
	if d != v03 {
		dst = append(dst, `{"message":`...)
	}
	m := message{ReplyTo: v.messageID, ContextID: v.contextID, Role: d.roleAgent(), Metadata: outcomeSucceeded}
	if d == v03 {
		m.Kind = "message"
	}
	parts := [2]part{d.dataPart(v.value), d.valueTextPart(v.value)}
	m.Parts = parts[:]
	dst = appendMessage(dst, &m)
	if d != v03 {
		dst = append(dst, '}')
	}
	return dst
}

// answer answers a message: it calls the tool its data part names and
// returns the task that says how the call ended, or the message that
// guides a caller who called no tool, or the error to answer with and its
// HTTP status. With st, the call reports its progress on st's stream.
// With v, a call that ends with a value is returned in v, for the caller
// to write (appendValueReply), rather than as a message.
func (h *Handler) answer(r *http.Request, d dialect, m *incoming, body []byte, st *streamer, v *valueReply) (*task, *message, *rpcError, int) {
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
		t, e := h.continueTask(r, d, *m)
		return t, nil, e, http.StatusOK
	}
	// What answers the message is named after it, so that the message
	// sent again is answered alike: a context it names none of, the
	// message that answers it, the task its call runs as.
	// (The message that answers names the context derived from its
	// messageId when the caller named none: see message.ReplyTo.)
	contextID := m.contextID
	tool := m.tool
	var textInput []byte
	if !m.found {
		text, ok := m.text()
		if !ok || h.opts.TextTool == "" || m.data >= 0 {
			return nil, h.guide(r, d, m.messageID, contextID), nil, http.StatusOK
		}
		param, err := h.textParam()
		if err != nil {
			h.logger.ErrorContext(r.Context(), "a2a: Options.TextTool cannot take a message's text; the message is answered with the guide", slog.String("error", err.Error()))
			return nil, h.guide(r, d, m.messageID, contextID), nil, http.StatusOK
		}
		tool, textInput = h.opts.TextTool, marshalText(param, text)
	}
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
	if h.opts.Search && tool == SearchSkill && textInput == nil {
		var input []byte
		if m.input >= 0 {
			input = m.doc.Raw(m.input)
		}
		msg, e, status := h.searchReply(r, d, m.messageID, contextID, input)
		return nil, msg, e, status
	}
	// The request outlives this frame: the registry keeps it.
	req := new(otc.CallRequest)
	*req = otc.CallRequest{CallID: m.messageID, CallIDGenerated: m.generated, Protocol: otc.ProtocolA2A, HTTPRequest: r, RequestBody: body}
	switch {
	case textInput != nil:
		req.Input = textInput
	case m.input >= 0:
		req.Input = m.doc.Raw(m.input)
		seam.SetParsed(req, m.doc, m.input)
	}
	if strings.Contains(tool, ".") {
		req.ToolID = tool
	} else {
		req.ToolName = tool
	}
	// A call of a tool whose calls may run as tasks runs as one, kept in
	// the task store: answered at once when the caller asks for that,
	// else when it ends or asks its caller something. A stream follows
	// the task to its end or its first question.
	if support := h.taskSupport(req); support != otc.TasksForbidden {
		if contextID == "" {
			contextID = derivedID("context", m.messageID)
		}
		return h.startTask(r, d, req, *m, contextID, st == nil && !m.returnImmediately, st)
	}
	// Any other call is answered within its message, by a message: it
	// leaves nothing to follow, so it hands out no task (a stream holds
	// that one message, the tool's progress unsent).
	res, err := h.reg.Call(r.Context(), req)
	if v != nil && err == nil && res.Error == nil && res.Value != nil {
		*v = valueReply{messageID: m.messageID, contextID: contextID, value: res.Value}
		return nil, nil, nil, http.StatusOK
	}
	msg, e, status := h.reply(d, m.messageID, contextID, res, err)
	return nil, msg, e, status
}

// textParam is the name of the text tool's one string parameter, or why
// it has none: the tool is not registered (wrapping otc.ErrToolNotFound),
// or it has no string parameter, or several. It is found once per
// revision of the registry.
func (h *Handler) textParam() (string, error) {
	rev := h.reg.Revision()
	if c := h.textTool.Load(); c != nil && c.revision == rev {
		return c.param, c.err
	}
	param, err := h.findTextParam()
	h.textTool.Store(&textTool{revision: rev, param: param, err: err})
	return param, err
}

// textTool is the text tool's parameter (or why it has none) in a
// revision of the registry.
type textTool struct {
	revision uint64
	param    string
	err      error
}

// findTextParam looks textParam's answer up.
func (h *Handler) findTextParam() (string, error) {
	var def *otc.ToolDefinition
	var err error
	if strings.Contains(h.opts.TextTool, ".") {
		def, err = h.reg.Lookup(h.opts.TextTool, otc.ProtocolA2A)
	} else {
		def, err = h.reg.LookupName(h.opts.TextTool, otc.ProtocolA2A)
	}
	if err != nil {
		return "", fmt.Errorf("tool %q: %w", h.opts.TextTool, err)
	}
	var schema struct {
		Properties map[string]struct {
			Type any `json:"type"`
		} `json:"properties"`
	}
	_ = json.Unmarshal(def.InputSchema.Parameters, &schema)
	var names []string
	for name, p := range schema.Properties {
		if p.Type == "string" {
			names = append(names, name)
		}
	}
	if len(names) != 1 {
		return "", fmt.Errorf("tool %q has %d string parameters; the text of a message needs a tool with exactly one", def.ID, len(names))
	}
	return names[0], nil
}

// marshalText is the input {param: text} of a call of the text tool.
func marshalText(param, text string) []byte {
	b, _ := json.Marshal(map[string]string{param: text})
	return b
}

// reply answers a call that ended within its message, as
// [otc.Registry.Call] returned it: with a message holding the value (as
// data, and as text), or saying how the call failed, or with the error a
// refusal is answered with, and its HTTP status. The message is the
// same for the same messageId (its id derived from it, and the value
// replayed by the registry's idempotency store).
func (h *Handler) reply(d dialect, messageID, contextID string, res otc.CallResult, err error) (*message, *rpcError, int) {
	f := new(replyBuf)
	m := &f.msg
	*m = message{ReplyTo: messageID, ContextID: contextID, Role: d.roleAgent()}
	switch {
	case err != nil:
		e, ok := errors.AsType[*otc.Error](err)
		if !ok {
			e = &otc.Error{Code: otc.CodeServerError, Message: "The call was refused"}
		}
		if re, status := refusalError(e, err); re != nil {
			return nil, re, status
		}
		// Any other refusal (missing requirements, a busy server, a rate
		// limit): the call failed, saying why, as a tool error would.
		m.Parts = f.parts[:0]
		m.Parts = append(m.Parts, d.textPart(e.Message), d.dataPart(failureInfo(e.Code.String(), e.RetryAfter > 0, e.RetryAfter, "")))
		m.Metadata = outcomeFailed
	case res.Error != nil:
		te := res.Error
		m.Parts = f.parts[:0]
		m.Parts = append(m.Parts, d.textPart(modeltext.ToolError(te.Message, te.AdditionalPromptContent, te.CanRetry, te.RetryAfter)),
			d.dataPart(failureInfo("tool_error", te.CanRetry, te.RetryAfter, te.AdditionalPromptContent)))
		m.Metadata = outcomeFailed
	case res.Value == nil:
		m.Parts = append(f.parts[:0], d.textPart("The call succeeded; the tool returns no value."))
		m.Metadata = outcomeSucceeded
	default:
		m.Parts = append(f.parts[:0], d.dataPart(res.Value), d.valueTextPart(res.Value))
		m.Metadata = outcomeSucceeded
	}
	return d.message(m), nil, http.StatusOK
}

// The metadata of a message answering a call: how the call ended, under
// this module's key, for a client to tell a value from a failure without
// reading the parts.
var (
	outcomeSucceeded = json.RawMessage(`{"` + a2awire.MetaOutcome + `":"` + a2awire.OutcomeSucceeded + `"}`)
	outcomeFailed    = json.RawMessage(`{"` + a2awire.MetaOutcome + `":"` + a2awire.OutcomeFailed + `"}`)
)

// failureInfo is the data part that says how a call failed, in a reply
// or a failed task's status message: its class ("tool_error", or an
// otc.Code's name for a refusal), whether and when it may be tried again,
// and the tool's hint for the model.
func failureInfo(code string, canRetry bool, after time.Duration, hint string) json.RawMessage {
	b, _ := json.Marshal(struct {
		Code         string `json:"code"`
		CanRetry     bool   `json:"can_retry"`
		RetryAfterMS int64  `json:"retry_after_ms"`
		Hint         string `json:"additional_prompt_content,omitempty"`
	}{code, canRetry, retryMS(after), hint})
	return b
}

// derivedID is the id of what answers message messageID, by its kind:
// the same for the message sent again, distinct for another message or
// kind.
func derivedID(kind, messageID string) string {
	return wire.UUID(derivedSum(kind, messageID))
}

// derivedSum is the hash derivedID is the UUID of.
func derivedSum(kind, messageID string) [16]byte {
	// FNV-1a, 128 bits (as hash/fnv's New128a computes it), without the
	// hash.Hash's allocation: the id of each answer is derived from it.
	const primeShift, primeLow = 24, 0x13b // the prime is 2^88 + 0x13b
	hi, lo := uint64(0x6c62272e07bb0142), uint64(0x62b821756295c58d)
	add := func(c byte) {
		lo ^= uint64(c)
		carry, low := bits.Mul64(lo, primeLow)
		hi = hi*primeLow + carry + lo<<primeShift
		lo = low
	}
	for i := range len(kind) {
		add(kind[i])
	}
	add(0)
	for i := range len(messageID) {
		add(messageID[i])
	}
	var b [16]byte
	binary.BigEndian.PutUint64(b[:8], hi)
	binary.BigEndian.PutUint64(b[8:], lo)
	return b
}

// retryMS is a retry delay in whole milliseconds, rounded up.
func retryMS(d time.Duration) int64 {
	return int64((d + time.Millisecond - 1) / time.Millisecond)
}

// refusalError is the error that answers a call the registry refused
// before the tool ran, and its HTTP status: invalid input, an unknown
// tool, a refusal of the caller, a reused call id. It returns nil for a
// refusal answered as a failed call (missing requirements, a busy
// server, a rate limit).
func refusalError(e *otc.Error, err error) (*rpcError, int) {
	switch {
	case errors.Is(err, otc.ErrToolNotFound):
		return &rpcError{Code: codeInvalidParams, Message: e.Message + ": the card lists the skills this agent has", Data: errorInfo("INVALID_PARAMS", map[string]string{"field": "message.parts.data.tool"})}, http.StatusOK
	case e.Code == otc.CodeInvalidInput && len(e.ParameterErrors) > 0:
		order := slices.Sorted(maps.Keys(e.ParameterErrors))
		return &rpcError{Code: codeInvalidParams, Message: modeltext.InvalidArguments(e.ParameterErrors), Data: append(errorInfo("INVALID_PARAMS", nil), badRequest(e.ParameterErrors, order)...)}, http.StatusOK
	case e.Code == otc.CodeUnauthenticated || e.Code == otc.CodeForbidden:
		return authError(e), e.Code.HTTPStatus()
	case e.Code == otc.CodeInvalidInput || errors.Is(err, otc.ErrCallIDReused):
		return &rpcError{Code: codeInvalidParams, Message: e.Message, Data: errorInfo("INVALID_PARAMS", nil)}, http.StatusOK
	}
	return nil, 0
}

// invalidParams is the invalid-params error naming one field.
func invalidParams(field, problem string) *rpcError {
	return &rpcError{Code: codeInvalidParams, Message: "Invalid parameters: " + field + ": " + problem, Data: append(errorInfo("INVALID_PARAMS", nil), badRequest(map[string]string{field: problem}, []string{field})...)}
}

// taskSupport is whether the tool a call names may run as a task;
// TasksForbidden when it names none. The tool is resolved here, once: the
// call goes on with this resolution (callin.Resolve).
func (h *Handler) taskSupport(req *otc.CallRequest) otc.TaskSupport {
	tasks, _, ok := seam.Resolve(h.reg, req)
	if !ok {
		return otc.TasksForbidden
	}
	return otc.TaskSupport(tasks)
}

// replyBuf holds the message that answers a call within its message,
// and its parts, in one allocation.
type replyBuf struct {
	msg   message
	parts [2]part
}
