package client

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"

	"github.com/otcgo/otc"
	"github.com/otcgo/otc/internal/a2awire"
	"github.com/otcgo/otc/internal/jsonparse"
	"github.com/otcgo/otc/internal/jsonrpc"
	"github.com/otcgo/otc/internal/wire"
)

// This file calls an A2A agent's skill: the message, its task followed
// to its end (its questions answered, cancelled when the call ends), and
// the result read from the parts.

// a2aTask is a task, or the message that answers a call, in either
// version's shape: the wire's Task (its Kind "task" or "message" in 0.3),
// with a message's members beside (0.3, where the result is the message
// itself).
type a2aTask struct {
	a2awire.Task
	Parts    []a2awire.Part  `json:"parts"`
	Metadata json.RawMessage `json:"metadata"`
}

// rpc sends one JSON-RPC request to the agent and decodes its result.
func (w *a2aWire) rpc(ctx context.Context, k *call, a *a2aAgent, method string, params any, out any) error {
	body, err := jsonrpc.Request(1, method, params)
	if err != nil {
		return fmt.Errorf("encoding %s: %w", method, err)
	}
	r, err := w.c.sendWith(ctx, http.MethodPost, a.endpoint, body, k.header(), a.versionHeader)
	if err != nil {
		return fmt.Errorf("%s: %w", method, err)
	}
	return decodeAnswer(r, method, out)
}

// versionHeader sets the A2A-Version header, in the versions that have
// it.
func (a *a2aAgent) versionHeader(h http.Header) {
	if a.ver.Header {
		h.Set(a2awire.HeaderVersion, a.ver.Name)
	}
}

// decodeAnswer decodes an agent's JSON-RPC answer to method into out, or
// returns the error it is.
func decodeAnswer(r *response, method string, out any) error {
	r.rpcMethod = method
	data, status := r.body, r.status
	env, ok := jsonrpc.ReadEnvelope(data)
	var e *RPCError
	if ok && env.Err != nil {
		e = &RPCError{}
		ok = json.Unmarshal(env.Err, e) == nil
	}
	if !ok || env.Result == nil && e == nil {
		if status != http.StatusOK {
			return r.rpcFailure()
		}
		return r.unexpected(errors.New("not an A2A JSON-RPC answer"))
	}
	if status != http.StatusOK && status != http.StatusBadRequest {
		return r.rpcFailure()
	}
	if e != nil {
		e.Method = method
		return a2aError(e)
	}
	if raw, ok := out.(*json.RawMessage); ok {
		*raw = env.Result // the answer's body is this request's own
		return nil
	}
	if err := json.Unmarshal(env.Result, out); err != nil {
		return fmt.Errorf("%s: the result: %w", method, err)
	}
	return nil
}

// a2aError maps an agent's JSON-RPC error: invalid params with field
// violations is invalid input, the SDKs' -31401 and -31403 are refusals
// of the caller; anything else stays an *RPCError.
func a2aError(e *RPCError) error {
	switch e.Code {
	case jsonrpc.CodeInvalidParams:
		var data []struct {
			FieldViolations []struct {
				Field       string `json:"field"`
				Description string `json:"description"`
			} `json:"fieldViolations"`
		}
		_ = json.Unmarshal(e.Data, &data)
		pe := map[string]string{}
		for _, d := range data {
			for _, v := range d.FieldViolations {
				pe[v.Field] = v.Description
			}
		}
		if len(pe) > 0 {
			return &otc.Error{Code: otc.CodeInvalidInput, Message: "Some input parameters are invalid", ParameterErrors: pe}
		}
	case a2awire.CodeUnauthenticated:
		return &otc.Error{Code: otc.CodeUnauthenticated, Message: e.Message}
	case a2awire.CodeUnauthorized:
		return &otc.Error{Code: otc.CodeForbidden, Message: e.Message}
	}
	return e
}

// sendParams is a SendMessage's params in the agent's version, with
// configuration (an object, nil for none), written by hand: the message's
// parts are this package's (dataPart, the version's DataPart of a call's
// checked input, TextPart), valid JSON on one line.
func sendParams(a *a2aAgent, messageID, taskID, contextID string, parts []a2awire.Part, configuration []byte) jsonrpc.Verbatim {
	msg := a2awire.Message{MessageID: messageID, TaskID: taskID, ContextID: contextID, Role: a.ver.UserRole(), Parts: parts}
	if a.ver.KindTagged {
		msg.Kind = "message"
	}
	n := 128 + len(messageID) + len(taskID) + len(contextID) + len(configuration)
	for _, p := range parts {
		n += len(p.Data) + len(p.Text) + 24
	}
	b := append(make([]byte, 0, n), `{"message":`...)
	b = a2awire.AppendMessage(b, &msg)
	if configuration != nil {
		b = append(append(b, `,"configuration":`...), configuration...)
	}
	return append(b, '}')
}

// dataPart is a data part holding v, in the agent's version.
func dataPart(a *a2aAgent, v any) (a2awire.Part, error) {
	b, err := json.Marshal(v)
	if err != nil {
		return a2awire.Part{}, fmt.Errorf("encoding a data part: %w", err)
	}
	return a.ver.DataPart(b), nil
}

// methodName is a method's name in the agent's version.
func methodName(a *a2aAgent, m string) string { return a.ver.Method(m) }

// send sends a message and returns the task or message that answers it.
func (w *a2aWire) send(ctx context.Context, k *call, a *a2aAgent, params jsonrpc.Verbatim) (*a2aTask, error) {
	var out json.RawMessage
	if err := w.rpc(ctx, k, a, methodName(a, a2awire.SendMessage), params, &out); err != nil {
		return nil, err
	}
	return readSendResult(a, out)
}

// readSendResult reads SendMessage's result: 1.0's {"task"} or
// {"message"}, or 0.3's task or message itself.
func readSendResult(a *a2aAgent, out json.RawMessage) (*a2aTask, error) {
	if !a.ver.KindTagged {
		// The one member is read in a pass over the result's members, and
		// only it decoded.
		var task, message []byte
		if !jsonparse.EachMember(out, func(name, v []byte) bool {
			switch string(name) {
			case "task":
				task = v
			case "message":
				message = v
			}
			return true
		}) {
			return nil, errors.New("SendMessage: the result is not a JSON object")
		}
		switch {
		case task != nil && string(task) != "null":
			var t a2aTask
			if err := json.Unmarshal(task, &t); err != nil {
				return nil, fmt.Errorf("SendMessage: the result's task: %w", err)
			}
			return &t, nil
		case message != nil && string(message) != "null":
			t, err := readAnswerMessage(message)
			if err != nil {
				return nil, fmt.Errorf("SendMessage: the result's message: %w", err)
			}
			return t, nil
		}
		return nil, errors.New("SendMessage: the result is neither a task nor a message")
	}
	var t a2aTask
	if err := json.Unmarshal(out, &t); err != nil {
		return nil, fmt.Errorf("message/send: the result: %w", err)
	}
	if t.Kind != "task" && t.Kind != "message" {
		return nil, errors.New("message/send: the result is neither a task nor a message")
	}
	return &t, nil
}

// readAnswerMessage reads a message that answers a call, its parts and
// metadata, in one pass over its members, as json.Unmarshal would read it
// into an a2awire.Message (the last of a repeated member counts, a member
// of another type fails it) but matching names exactly, and without
// reflection: the other members are checked and skipped.
func readAnswerMessage(raw []byte) (*a2aTask, error) {
	t := &a2aTask{Task: a2awire.Task{Kind: "message"}}
	var err error
	ok := jsonparse.EachMember(raw, func(name, v []byte) bool {
		switch string(name) {
		case "kind", "messageId", "contextId", "taskId", "role":
			if v[0] != '"' && string(v) != "null" { // checked, not kept
				err = fmt.Errorf("%s is %s, not a string", name, kindOf(v))
			}
		case "parts":
			t.Parts, err = readParts(v)
		case "metadata":
			t.Metadata = v
		}
		return err == nil
	})
	if err == nil && !ok {
		err = fmt.Errorf("it is %s, not an object", kindOf(raw))
	}
	return t, err
}

// readParts reads a message's parts as readAnswerMessage reads the
// message: null for none, and a null part read as an empty one.
func readParts(v []byte) ([]a2awire.Part, error) {
	if string(v) == "null" {
		return nil, nil
	}
	if v[0] != '[' {
		return nil, fmt.Errorf("parts is %s, not an array", kindOf(v))
	}
	parts := []a2awire.Part{}
	var err error
	str := func(name, v []byte) string {
		s, ok := jsonparse.String(v)
		if !ok && string(v) != "null" {
			err = fmt.Errorf("a part's %s is %s, not a string", name, kindOf(v))
		}
		return s
	}
	jsonparse.EachElement(v, func(v []byte) bool {
		var p a2awire.Part
		if string(v) != "null" {
			if v[0] != '{' {
				err = fmt.Errorf("a part is %s, not an object", kindOf(v))
				return false
			}
			jsonparse.EachMember(v, func(name, v []byte) bool {
				switch string(name) {
				case "kind":
					p.Kind = str(name, v)
				case "text":
					p.Text = str(name, v)
					p.IsText = string(v) != "null"
				case "data":
					p.Data = v
				}
				return err == nil
			})
		}
		parts = append(parts, p)
		return err == nil
	})
	return parts, err
}

// call sends a message calling the tool, and follows the task that
// answers it, if any, to its end.
func (w *a2aWire) call(ctx context.Context, k *call) (*Result, error) {
	a, parts, err := w.message(ctx, k)
	if err != nil {
		return nil, err
	}
	params := sendParams(a, k.opts.CallID, "", "", parts, nil)
	var t *a2aTask
	if k.opts.Progress != nil && a.streams {
		t, err = w.stream(ctx, k, a, params)
	} else {
		t, err = w.send(ctx, k, a, params)
	}
	if err != nil {
		return nil, err
	}
	return w.follow(ctx, a, k, t)
}

// message is the agent and the parts of the message that makes call k,
// or why there can be none.
func (w *a2aWire) message(ctx context.Context, k *call) (*a2aAgent, []a2awire.Part, error) {
	a, err := w.current(ctx, k)
	if err != nil {
		return nil, nil, err
	}
	if a.elsewhere != nil {
		return nil, nil, a.elsewhere
	}
	if o := k.opts; len(o.Secrets) > 0 || o.UserID != "" || len(o.Authorization) > 0 {
		return nil, nil, errors.New("A2A carries no secrets, user id or provider tokens: call the tool over OTC or MCP")
	}
	parts, err := w.parts(a, k)
	if err != nil {
		return nil, nil, err
	}
	return a, parts, nil
}

// parts are the parts of a message calling the tool: a data part
// {"tool", "input"} for a typed skill; for another, the text (and data)
// of the input, or, for an input without "text" (and for a skill that
// takes no text), the input as the data part.
func (w *a2aWire) parts(a *a2aAgent, k *call) ([]a2awire.Part, error) {
	var parts []a2awire.Part
	if a.typed[k.toolID] {
		input := k.input
		if input == nil {
			input = json.RawMessage(`{}`)
		}
		// {"tool", "input"}, written at once: the input is valid JSON.
		b := make([]byte, 0, len(k.toolID)+len(input)+24)
		b = append(b, `{"tool":`...)
		b = wire.AppendString(b, k.toolID)
		b = append(b, `,"input":`...)
		b = append(append(b, input...), '}')
		parts = []a2awire.Part{a.ver.DataPart(b)}
	} else if a.dataOnly[k.toolID] {
		if len(k.input) == 0 || string(k.input) == "{}" {
			return nil, &otc.Error{Code: otc.CodeInvalidInput, Message: "Some input parameters are invalid",
				ParameterErrors: map[string]string{"": "the data to send to the agent is required"}}
		}
		parts = []a2awire.Part{a.ver.DataPart(k.input)}
	} else {
		var in struct {
			Text *string        `json:"text"`
			Data map[string]any `json:"data"`
		}
		if len(k.input) > 0 {
			if err := json.Unmarshal(k.input, &in); err != nil {
				return nil, &otc.Error{Code: otc.CodeInvalidInput, Message: "Some input parameters are invalid", ParameterErrors: map[string]string{"text": err.Error()}}
			}
		}
		if in.Text == nil {
			data := k.input
			if in.Text == nil && in.Data != nil && onlyKey(k.input, "data") {
				data, _ = json.Marshal(in.Data) // {"data": {...}}: its data
			}
			if len(data) == 0 || string(data) == "{}" {
				return nil, &otc.Error{Code: otc.CodeInvalidInput, Message: "Some input parameters are invalid",
					ParameterErrors: map[string]string{"text": "required: the message to send to the agent (or, for its data part, an object of the data)"}}
			}
			return []a2awire.Part{a.ver.DataPart(data)}, nil
		}
		parts = []a2awire.Part{a.ver.TextPart(*in.Text)}
		if in.Data != nil {
			p, err := dataPart(a, in.Data)
			if err != nil {
				return nil, err
			}
			parts = append(parts, p)
		}
	}
	return parts, nil
}

// onlyKey reports whether the JSON object obj has key and no other.
func onlyKey(obj json.RawMessage, key string) bool {
	var m map[string]json.RawMessage
	if json.Unmarshal(obj, &m) != nil {
		return false
	}
	_, ok := m[key]
	return ok && len(m) == 1
}

// follow follows the answer of a call to its end: a message is the
// outcome; a task is read again until it ends, its questions answered,
// and cancelled when ctx ends. In 0.3, whose data parts hold objects, a
// value an otc agent wrapped as {"result": v} is v.
func (w *a2aWire) follow(ctx context.Context, a *a2aAgent, k *call, t *a2aTask) (*Result, error) {
	res, err := w.followParts(ctx, a, k, t)
	if a.ver.ObjectData && res != nil {
		res.Value = unwrapResult(res.Value)
	}
	return res, err
}

// unwrapResult is v of {"result": v}, and any other value as it is.
func unwrapResult(raw json.RawMessage) json.RawMessage {
	if len(raw) == 0 || raw[0] != '{' {
		return raw
	}
	var inner []byte
	n := 0
	ok := jsonparse.EachMember(raw, func(name, v []byte) bool {
		n++
		if string(name) == "result" {
			inner = v
		}
		return n < 2
	})
	if ok && n == 1 && inner != nil {
		return inner
	}
	return raw
}

// followParts is follow, without the unwrapping.
func (w *a2aWire) followParts(ctx context.Context, a *a2aAgent, k *call, t *a2aTask) (*Result, error) {
	res := &Result{CallID: k.opts.CallID}
	wait := a2aFirstPoll
	for round := 0; ; {
		if t.Kind == "message" || t.ID == "" {
			return res.fromMessage(t.Parts, t.Metadata)
		}
		if f := k.opts.Progress; f != nil {
			msg := ""
			if m := t.Status.Message; m != nil {
				msg = textOf(m.Parts)
			}
			f(Progress{TaskID: t.ID, State: strings.ToLower(strings.TrimPrefix(a2awire.State(t.Status.State), "TASK_STATE_")), Message: msg})
		}
		switch a2awire.State(t.Status.State) {
		case a2awire.StateCompleted:
			var ps []a2awire.Part
			for _, ar := range t.Artifacts {
				ps = append(ps, ar.Parts...)
			}
			if len(ps) == 0 && t.Status.Message != nil {
				ps = t.Status.Message.Parts
			}
			return res.fromParts(ps)
		case a2awire.StateFailed, a2awire.StateRejected:
			if m := t.Status.Message; m != nil {
				return res.fromFailure(m.Parts)
			}
			return res, &otc.ToolError{Message: "The agent's task failed"}
		case a2awire.StateCanceled:
			return nil, &otc.Error{Code: otc.CodeServerError, Message: "The agent's task was cancelled"}
		case a2awire.StateAuthRequired:
			return nil, w.abandon(ctx, k, a, t.ID, &otc.Error{Code: otc.CodeUnauthenticated, Message: "The agent's task needs authorization the client cannot give"})
		case a2awire.StateInputRequired:
			if round++; round > a2aMaxRounds {
				return nil, w.abandon(ctx, k, a, t.ID, fmt.Errorf("the agent asked %d questions; the client stops there", a2aMaxRounds))
			}
			reply, err := w.reply(ctx, a, t)
			if err != nil {
				return nil, w.abandon(ctx, k, a, t.ID, err)
			}
			next, err := w.send(ctx, k, a, sendParams(a, otc.NewCallID(), t.ID, t.ContextID, reply, nil))
			if err != nil {
				return nil, w.abandon(ctx, k, a, t.ID, err)
			}
			t, wait = next, a2aFirstPoll
			continue
		}
		// Submitted or working: read it again, a little later each time.
		if err := sleep(ctx, wait); err != nil {
			return nil, w.abandon(ctx, k, a, t.ID, err)
		}
		wait = min(wait*2, a2aMaxPoll)
		nt, err := w.getTask(ctx, k, a, t.ID)
		if err != nil {
			return nil, err
		}
		t = nt
	}
}

// getTask reads task id as it now is; a call whose context ended
// cancels it.
func (w *a2aWire) getTask(ctx context.Context, k *call, a *a2aAgent, id string) (*a2aTask, error) {
	var got json.RawMessage
	if err := w.rpc(ctx, k, a, methodName(a, a2awire.GetTask), map[string]any{"id": id}, &got); err != nil {
		if ctx.Err() != nil {
			return nil, w.abandon(ctx, k, a, id, err)
		}
		return nil, err
	}
	var t a2aTask
	if err := json.Unmarshal(got, &t); err != nil {
		return nil, fmt.Errorf("GetTask: the result: %w", err)
	}
	t.Kind = "task"
	return &t, nil
}

// reply answers the question of a task in INPUT_REQUIRED: an otc agent's
// questions (a data part {"input_requests"}) each with the handler of its
// kind, another agent's text with Options.Handlers.Elicit.
func (w *a2aWire) reply(ctx context.Context, a *a2aAgent, t *a2aTask) ([]a2awire.Part, error) {
	var parts []a2awire.Part
	if t.Status.Message != nil {
		parts = t.Status.Message.Parts
	}
	for _, p := range parts {
		var q struct {
			InputRequests map[string]json.RawMessage `json:"input_requests"`
		}
		if len(p.Data) > 0 && json.Unmarshal(p.Data, &q) == nil && len(q.InputRequests) > 0 {
			answers, err := w.c.answerAll(ctx, q.InputRequests)
			if err != nil {
				return nil, err
			}
			p, err := dataPart(a, map[string]any{"input_responses": answers})
			if err != nil {
				return nil, err
			}
			return []a2awire.Part{p}, nil
		}
	}
	h := w.c.opts.Handlers
	question := textOf(parts)
	if h == nil || h.Elicit == nil {
		return nil, fmt.Errorf("the agent asked %q, and the client cannot answer: set Options.Handlers.Elicit", truncate(question, 200))
	}
	res, err := h.Elicit(ctx, &ElicitRequest{Message: question})
	if err != nil {
		return nil, err
	}
	if res == nil || res.Action != otc.ElicitAccept {
		return nil, errors.New("the user declined the agent's question")
	}
	text, _ := res.Content["text"].(string)
	out := []a2awire.Part{a.ver.TextPart(text)}
	rest := map[string]any{}
	for k, v := range res.Content {
		if k != "text" {
			rest[k] = v
		}
	}
	if len(rest) > 0 {
		p, err := dataPart(a, rest)
		if err != nil {
			return nil, err
		}
		out = append(out, p)
	}
	return out, nil
}

// abandon cancels a task whose call ends with cause, and returns cause.
func (w *a2aWire) abandon(ctx context.Context, k *call, a *a2aAgent, id string, cause error) error {
	cctx, stop := context.WithTimeout(context.WithoutCancel(ctx), mcpCancelWait)
	defer stop()
	var ack json.RawMessage
	if err := w.rpc(cctx, k, a, methodName(a, a2awire.CancelTask), map[string]any{"id": id}, &ack); err != nil {
		return errors.Join(cause, fmt.Errorf("cancelling task %s: %w", id, err))
	}
	return cause
}
