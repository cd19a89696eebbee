package client

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/otcgo/otc"
	"github.com/otcgo/otc/internal/jsonparse"
	"github.com/otcgo/otc/internal/jsonrpc"
	"github.com/otcgo/otc/internal/mcpwire"
	"github.com/otcgo/otc/internal/modeltext"
	"github.com/otcgo/otc/internal/wire"
)

// This file calls an MCP tool: tools/call through 2026-07-28's
// input_required rounds and tasks, and the reading of its result.

// call calls a tool: tools/call, through 2026-07-28's input_required
// rounds and tasks.
func (s *mcpSession) call(ctx context.Context, k *call) (*Result, error) {
	return s.runTask(ctx, k, nil)
}

// start begins a call, and returns its task without waiting for it; a
// call the server answers within its request is done at once.
func (s *mcpSession) start(ctx context.Context, k *call) (*Task, error) {
	t := &Task{c: s.c, k: k}
	res, err := s.runTask(ctx, k, t)
	if t.ID == "" {
		t.done, t.res, t.err = true, res, err
		if err != nil && res == nil {
			return nil, err
		}
	}
	return t, nil
}

// runTask makes a call: tools/call through its input_required rounds;
// a task it becomes is followed to its end, or, when detached is not
// nil, handed back in it.
func (s *mcpSession) runTask(ctx context.Context, k *call, detached *Task) (res *Result, err error) {
	k.mu.Lock()
	k.failed = nil // a retry's attempt is its own
	k.mu.Unlock()
	defer func() { err = k.withHandlerError(err) }()
	s.enter(ctx, k)
	defer s.leave(k)
	params := &callParams{name: k.toolID, callID: k.opts.CallID}
	if f := k.opts.Progress; f != nil {
		params.progress = true
		s.progress.Store(k.opts.CallID, f)
		defer s.progress.Delete(k.opts.CallID)
	}
	if o := k.opts; o.UserID != "" || len(o.Secrets) > 0 || len(o.Authorization) > 0 {
		params.context = &otc.CallContext{UserID: o.UserID, Secrets: o.Secrets, Authorization: o.Authorization}
	}
	args := k.input
	if args == nil {
		args = json.RawMessage(`{}`)
	}
	params.args = args
	if bytes.IndexByte(args, '\n') < 0 && bytes.IndexByte(args, '\r') < 0 {
		params.args = jsonrpc.Verbatim(args) // checked by newCall, and on one line
	}
	if hs, ok := s.headers.Load(k.toolID); ok {
		k.mirrored = mirrored(hs.([]paramHeader), args)
	}
	for round := 0; ; round++ {
		var raw json.RawMessage
		if err := s.request(ctx, k, "tools/call", params, &raw); err != nil {
			return nil, err
		}
		head, err := readCallAnswer(raw)
		if err != nil {
			return nil, fmt.Errorf("tools/call: the result is not a CallToolResult: %w", err)
		}
		switch head.ResultType {
		case "input_required":
			if round >= mcpMaxRounds {
				return nil, fmt.Errorf("the tool asked for input %d times; the client stops there", mcpMaxRounds)
			}
			answers, err := s.c.answerAll(ctx, head.InputRequests)
			if err != nil {
				return nil, err
			}
			params.inputResponses, params.requestState = answers, head.RequestState
		case "task":
			if head.TaskID == "" {
				return nil, errors.New("tools/call: a task without a taskId")
			}
			first := time.Duration(head.PollIntervalMs) * time.Millisecond
			if head.Status != "working" && head.Status != "input_required" {
				first = 0
			}
			if detached != nil {
				detached.ID, detached.poll = head.TaskID, first
				return nil, nil
			}
			if f := k.opts.Progress; f != nil {
				f(Progress{TaskID: head.TaskID, State: head.Status}) // named before its first poll
			}
			raw, err := s.awaitTask(ctx, k, head.TaskID, first, time.Duration(head.PollIntervalMs)*time.Millisecond)
			if err != nil {
				return nil, err
			}
			return decodeCallResult(k.opts.CallID, raw)
		default:
			return head.result(k.opts.CallID, raw)
		}
	}
}

// callParams are a tools/call's params, written by hand (AppendJSON) as
// Request would write them as a map: the commonest request the client
// sends. rpc sets the 2026-07-28 members of _meta (stateless).
type callParams struct {
	name   string
	args   any // a jsonrpc.Verbatim, or the json.RawMessage that spans lines
	callID string
	// progress says _meta.progressToken is the call id; context is the
	// caller's context (otc's _meta), nil for none.
	progress bool
	context  *otc.CallContext
	// inputResponses and requestState answer the tool's questions, in the
	// rounds after the first.
	inputResponses map[string]any
	requestState   *string
	stateless      statelessMeta
}

// statelessMeta is what a request's _meta carries in 2026-07-28: none of
// it when version is nil.
type statelessMeta struct {
	version, caps any
	logLevel      string
}

// AppendJSON writes p, its members and its _meta's in the order Request
// sorts a map's.
func (p *callParams) AppendJSON(dst []byte) ([]byte, error) {
	var err error
	dst = append(dst, `{"_meta":{`...)
	dst = appendMember(dst, mcpwire.MetaCallID, false)
	dst = wire.AppendString(dst, p.callID)
	if p.context != nil {
		dst = appendMember(dst, mcpwire.MetaContext, true)
		if dst, err = jsonrpc.AppendValue(dst, *p.context); err != nil {
			return nil, err
		}
	}
	if st := &p.stateless; st.version != nil {
		for _, m := range [...]struct {
			name  string
			value any
		}{{mcpwire.MetaClientCapabilities, st.caps}, {mcpwire.MetaClientInfo, clientInfo}} {
			dst = appendMember(dst, m.name, true)
			if dst, err = jsonrpc.AppendValue(dst, m.value); err != nil {
				return nil, err
			}
		}
		if st.logLevel != "" {
			dst = appendMember(dst, mcpwire.MetaLogLevel, true)
			dst = wire.AppendString(dst, st.logLevel)
		}
		dst = appendMember(dst, mcpwire.MetaProtocolVersion, true)
		if dst, err = jsonrpc.AppendValue(dst, st.version); err != nil {
			return nil, err
		}
	}
	if p.progress {
		dst = appendMember(dst, "progressToken", true)
		dst = wire.AppendString(dst, p.callID)
	}
	dst = append(dst, `},"arguments":`...)
	if dst, err = jsonrpc.AppendValue(dst, p.args); err != nil {
		return nil, err
	}
	if p.inputResponses != nil {
		dst = append(dst, `,"inputResponses":`...)
		if dst, err = jsonrpc.AppendValue(dst, p.inputResponses); err != nil {
			return nil, err
		}
	}
	dst = append(dst, `,"name":`...)
	dst = wire.AppendString(dst, p.name)
	if p.requestState != nil {
		dst = append(dst, `,"requestState":`...)
		dst = wire.AppendString(dst, *p.requestState)
	}
	return append(dst, '}'), nil
}

// appendMember writes an object member's name and colon, after a comma
// when more says it is not the first.
func appendMember(dst []byte, name string, more bool) []byte {
	if more {
		dst = append(dst, ',')
	}
	dst = wire.AppendString(dst, name)
	return append(dst, ':')
}

// awaitTask polls task id until it ends, answering its questions, and
// returns its result. When ctx ends, the task is cancelled.
func (s *mcpSession) awaitTask(ctx context.Context, k *call, id string, first, poll time.Duration) (json.RawMessage, error) {
	wait := min(first, maxPoll)
	for {
		poll = min(max(poll, minPoll), maxPoll)
		if err := sleep(ctx, wait); err != nil {
			return nil, s.cancelTask(ctx, k, id, err)
		}
		wait = poll
		var t struct {
			Status         string                     `json:"status"`
			StatusMessage  string                     `json:"statusMessage"`
			PollIntervalMs int64                      `json:"pollIntervalMs"`
			InputRequests  map[string]json.RawMessage `json:"inputRequests"`
			Result         json.RawMessage            `json:"result"`
			Error          *RPCError                  `json:"error"`
		}
		if err := s.request(ctx, k, "tasks/get", map[string]any{"taskId": id}, &t); err != nil {
			if ctx.Err() != nil {
				return nil, s.cancelTask(ctx, k, id, err)
			}
			return nil, err
		}
		if t.PollIntervalMs > 0 {
			poll = time.Duration(t.PollIntervalMs) * time.Millisecond
		}
		if f := k.opts.Progress; f != nil {
			f(Progress{TaskID: id, State: t.Status, Message: t.StatusMessage})
		}
		switch t.Status {
		case "completed":
			if len(t.Result) == 0 {
				return nil, fmt.Errorf("task %s completed without its result", id)
			}
			return t.Result, nil
		case "failed":
			if t.Error != nil {
				t.Error.Method = "tasks/get"
				return nil, asError(t.Error)
			}
			return nil, &otc.Error{Code: otc.CodeServerError, Message: "The task failed: " + t.StatusMessage}
		case "cancelled":
			return nil, &otc.Error{Code: otc.CodeServerError, Message: "The task was cancelled"}
		case "input_required":
			answers, err := s.c.answerAll(ctx, t.InputRequests)
			if err != nil {
				return nil, s.cancelTask(ctx, k, id, err)
			}
			if err := s.request(ctx, k, "tasks/update", map[string]any{"taskId": id, "inputResponses": answers}, nil); err != nil {
				if ctx.Err() != nil {
					return nil, s.cancelTask(ctx, k, id, err)
				}
				return nil, err
			}
			wait = 0
		case "working":
		default:
			return nil, fmt.Errorf("task %s: status %q is not one of MCP's", id, truncate(t.Status, 32))
		}
	}
}

// wait follows the task id to its end.
func (s *mcpSession) wait(ctx context.Context, t *Task) (*Result, error) {
	raw, err := s.awaitTask(ctx, t.k, t.ID, t.poll, t.poll)
	if err != nil {
		return nil, err
	}
	return decodeCallResult(t.k.opts.CallID, raw)
}

// status reads the task's status once.
func (s *mcpSession) status(ctx context.Context, id string) (TaskStatus, error) {
	var t struct {
		Status        string `json:"status"`
		StatusMessage string `json:"statusMessage"`
	}
	if err := s.request(ctx, nil, "tasks/get", map[string]any{"taskId": id}, &t); err != nil {
		return TaskStatus{}, err
	}
	return TaskStatus{State: t.Status, Message: t.StatusMessage}, nil
}

// cancel cancels the task.
func (s *mcpSession) cancel(ctx context.Context, id string) error {
	return s.request(ctx, nil, "tasks/cancel", map[string]any{"taskId": id}, nil)
}

// cancelTask sends tasks/cancel for a task whose call ends with cause,
// and returns cause (joined with the failure to cancel, if any).
func (s *mcpSession) cancelTask(ctx context.Context, k *call, id string, cause error) error {
	cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), mcpCancelWait)
	defer cancel()
	if err := s.rpc(cctx, k, s.ver(), "tasks/cancel", map[string]any{"taskId": id}, nil); err != nil {
		return errors.Join(cause, fmt.Errorf("cancelling task %s: %w", id, err))
	}
	return cause
}

// callAnswer is a tools/call result: a CallToolResult, or in 2026-07-28
// an input_required round or a task.
type callAnswer struct {
	ResultType     string
	InputRequests  map[string]json.RawMessage
	RequestState   *string
	TaskID         string
	Status         string
	PollIntervalMs int64

	// Content is the content blocks' array as it came, read for its text
	// only when the result needs it.
	Content    []byte
	Structured json.RawMessage
	IsError    bool
	// Meta is the _meta object as it came.
	Meta []byte
}

// readCallAnswer reads a tools/call result in one pass over its members,
// as json.Unmarshal would read it into a struct (the last of a repeated
// member counts, a null one is not set, a member of another type fails
// it) but matching names exactly, and without reflection: the members
// the client uses are read, the others checked and skipped.
func readCallAnswer(raw []byte) (callAnswer, error) {
	var a callAnswer
	var err error
	str := func(name, v []byte) string {
		s, ok := jsonparse.String(v)
		if !ok {
			err = fmt.Errorf("%s is %s, not a string", name, kindOf(v))
		}
		return s
	}
	ok := jsonparse.EachMember(raw, func(name, v []byte) bool {
		if string(v) == "null" {
			return true
		}
		switch string(name) {
		case "resultType":
			a.ResultType = str(name, v)
		case "inputRequests":
			err = json.Unmarshal(v, &a.InputRequests)
		case "requestState":
			s := str(name, v)
			a.RequestState = &s
		case "taskId":
			a.TaskID = str(name, v)
		case "status":
			a.Status = str(name, v)
		case "pollIntervalMs":
			n, perr := strconv.ParseInt(string(v), 10, 64)
			if perr != nil {
				err = json.Unmarshal(v, &n) // a number of another form: as encoding/json reads it
			}
			a.PollIntervalMs = n
		case "content":
			if v[0] != '[' {
				err = fmt.Errorf("content is %s, not an array", kindOf(v))
			}
			a.Content = v
		case "structuredContent":
			a.Structured = v
		case "isError":
			switch string(v) {
			case "true":
				a.IsError = true
			case "false":
				a.IsError = false
			default:
				err = fmt.Errorf("isError is %s, not a boolean", kindOf(v))
			}
		case "_meta":
			if v[0] != '{' {
				err = fmt.Errorf("_meta is %s, not an object", kindOf(v))
			}
			a.Meta = v
		}
		return err == nil
	})
	if err == nil && !ok {
		err = errors.New("it is not a JSON object")
	}
	return a, err
}

// texts are the text blocks of the result's content, in order.
func (res *callAnswer) texts() ([]string, error) {
	var text []string
	var err error
	jsonparse.EachElement(res.Content, func(v []byte) bool {
		if string(v) == "null" {
			return true
		}
		var typ, txt string
		ok := jsonparse.EachMember(v, func(name, v []byte) bool {
			switch string(name) {
			case "type":
				typ, err = blockString(name, v)
			case "text":
				txt, err = blockString(name, v)
			}
			return err == nil
		})
		if err == nil && !ok {
			err = fmt.Errorf("a content block is %s, not an object", kindOf(v))
		}
		if typ == "text" {
			text = append(text, txt)
		}
		return err == nil
	})
	return text, err
}

// blockString reads a content block's string member (null reads as "").
func blockString(name, v []byte) (string, error) {
	s, ok := jsonparse.String(v)
	if !ok && string(v) != "null" {
		return "", fmt.Errorf("a content block's %s is %s, not a string", name, kindOf(v))
	}
	return s, nil
}

// memberOf is the raw value of the member name of object raw; nil when
// it has none (or raw is not an object).
func memberOf(raw []byte, name string) []byte {
	var out []byte
	jsonparse.EachMember(raw, func(n, v []byte) bool {
		if string(n) == name {
			out = v // the last of a repeated member, as encoding/json reads it
		}
		return true
	})
	return out
}

// decodeCallResult reads a CallToolResult: the tool's value, its error,
// or the refusal it reports.
func decodeCallResult(callID string, raw json.RawMessage) (*Result, error) {
	res, err := readCallAnswer(raw)
	if err != nil {
		return nil, fmt.Errorf("tools/call: the result is not a CallToolResult: %w", err)
	}
	return res.result(callID, raw)
}

// result is the outcome a CallToolResult reports: the tool's value, its
// error, or the refusal. A value is the structuredContent (unwrapped from
// {"result": v} when that is all it holds), else the text blocks joined,
// as a JSON string.
func (res *callAnswer) result(callID string, raw json.RawMessage) (*Result, error) {
	out := &Result{CallID: callID, Raw: raw}
	if !res.IsError && len(res.Structured) > 0 {
		out.Value = unwrapResult(res.Structured)
		return out, nil
	}
	text, err := res.texts()
	if err != nil {
		return nil, fmt.Errorf("tools/call: the result is not a CallToolResult: %w", err)
	}
	if res.IsError {
		var info struct {
			Code                string                   `json:"code"`
			CanRetry            bool                     `json:"can_retry"`
			RetryAfterMS        int64                    `json:"retry_after_ms"`
			ParameterErrors     map[string]string        `json:"parameter_errors"`
			MissingRequirements *otc.MissingRequirements `json:"missing_requirements"`
		}
		if m := memberOf(res.Meta, mcpwire.MetaError); m != nil {
			_ = json.Unmarshal(m, &info)
		}
		msg := strings.Join(text, "\n")
		after := retryMS(info.RetryAfterMS)
		switch info.Code {
		case otc.CodeInvalidInput.String():
			return nil, &otc.Error{Code: otc.CodeInvalidInput, Message: "Some input parameters are invalid", ParameterErrors: info.ParameterErrors}
		case otc.CodeRateLimited.String(), otc.CodeUnavailable.String():
			code := otc.CodeRateLimited
			if info.Code == otc.CodeUnavailable.String() {
				code = otc.CodeUnavailable
			}
			return nil, &otc.Error{Code: code, Message: firstParagraph(msg), RetryAfter: after}
		}
		if info.MissingRequirements != nil {
			return nil, &otc.Error{Code: otc.CodeServerError, Message: firstParagraph(msg), MissingRequirements: info.MissingRequirements}
		}
		te := &otc.ToolError{CanRetry: info.CanRetry, RetryAfter: after}
		// The text is for a model: the message, then any further
		// paragraphs (a hint; the retry sentence, which CanRetry says).
		paras := strings.Split(msg, "\n\n")
		if n := len(paras); n > 1 && info.CanRetry && strings.HasPrefix(paras[n-1], modeltext.RetrySentence) {
			paras = paras[:n-1]
		}
		te.Message = paras[0]
		if te.Message == "" {
			te.Message = "the tool failed without a message"
		}
		te.AdditionalPromptContent = strings.Join(paras[1:], "\n\n")
		return out, te
	}
	if len(text) > 0 {
		out.Value, _ = json.Marshal(strings.Join(text, "\n"))
	}
	return out, nil
}

// firstParagraph is a model's text up to its first blank line.
func firstParagraph(s string) string {
	p, _, _ := strings.Cut(s, "\n\n")
	return p
}
