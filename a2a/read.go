package a2a

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/otcgo/otc/internal/jsonparse"
	"github.com/otcgo/otc/internal/wire"
)

// This file reads requests: the body is parsed once (internal/jsonparse),
// and the call's input handed to the registry as the parsed node, so that
// it is not parsed again.

// incoming is a message as this package reads it.
type incoming struct {
	messageID, contextID, taskID string
	parts                        int
	// tool and input are the call part's: input is its node, -1 when it
	// has none; found says the message has a call part.
	tool  string
	input int32
	found bool
	doc   *jsonparse.Document
	// generated says that messageID is this package's, not the caller's:
	// such a call is never looked up in the idempotency store.
	generated bool
	// answers is the node of a data part's "input_responses", the
	// answers to a task's questions by key, -1 for none; data is the
	// first data part that neither calls nor answers, -1 for none.
	answers, data int32
	// returnImmediately says the caller wants the task at once, not its
	// end (1.0's configuration.returnImmediately, 0.3's blocking false).
	returnImmediately bool
	// partsNode is the node of the message's parts; texts counts its text
	// parts. A message readQuick read has no document of its parts
	// (partsNode -1): dataRaw is its one data part's value.
	partsNode int32
	texts     int
	dataRaw   []byte
	// history is the configuration's historyLength: how many of a task's
	// most recent messages its answer holds, historyAll when not given.
	history int
	// push is the node of the configuration's push notification
	// configuration (1.0's taskPushNotificationConfig, 0.3's
	// pushNotificationConfig), -1 for none; pushField names it.
	push      int32
	pushField string
}

// text returns the text of the message's text parts, one after the other
// with a blank line between, and whether it has any.
func (in *incoming) text() (string, bool) {
	if in.texts == 0 {
		return "", false
	}
	var b []byte
	for _, p := range in.doc.Elements(in.partsNode) {
		t := in.doc.Member(p, "text")
		if t < 0 || in.doc.Kind(t) != jsonparse.KindString {
			continue
		}
		if len(b) > 0 {
			b = append(b, "\n\n"...)
		}
		b = append(b, in.doc.StringValue(t)...)
	}
	return string(b), true
}

// readConfiguration reads a SendMessageRequest's configuration into in.
func readConfiguration(d *jsonparse.Document, params int32, in *incoming) *rpcError {
	c := d.Member(params, "configuration")
	if c < 0 || d.Kind(c) != jsonparse.KindObject {
		return nil
	}
	n, e := readHistoryLength(d, c, "configuration.historyLength")
	if e != nil {
		return e
	}
	in.history = n
	for _, name := range []string{"taskPushNotificationConfig", "pushNotificationConfig"} {
		if v := d.Member(c, name); v >= 0 && d.Kind(v) != jsonparse.KindNull {
			in.push, in.pushField = v, "configuration."+name
		}
	}
	if v := d.Member(c, "returnImmediately"); v >= 0 && d.Kind(v) == jsonparse.KindTrue {
		in.returnImmediately = true
	}
	if v := d.Member(c, "blocking"); v >= 0 && d.Kind(v) == jsonparse.KindFalse {
		in.returnImmediately = true
	}
	return nil
}

// readHistoryLength reads member historyLength of object node o of d (a
// number, or a string holding one, as ProtoJSON allows), naming field in
// its error; historyAll when absent or null.
func readHistoryLength(d *jsonparse.Document, o int32, field string) (int, *rpcError) {
	v := d.Member(o, "historyLength")
	if v < 0 || d.Kind(v) == jsonparse.KindNull {
		return historyAll, nil
	}
	s := string(d.Raw(v))
	if d.Kind(v) == jsonparse.KindString {
		s = d.StringValue(v)
	} else if d.Kind(v) != jsonparse.KindNumber {
		return 0, invalidParams(field, "must be a whole number, 0 or more")
	}
	return parseHistoryLength(s, field)
}

// parseHistoryLength reads a historyLength given as text: a whole number,
// 0 or more.
func parseHistoryLength(s, field string) (int, *rpcError) {
	n, err := strconv.Atoi(s)
	switch {
	case err != nil && strings.HasPrefix(s, "-"):
		return 0, invalidParams(field, "must be 0 or more, got "+wire.Truncate(s, 32))
	case err != nil:
		return 0, invalidParams(field, "must be a whole number, 0 or more")
	case n < 0:
		return 0, invalidParams(field, "must be 0 or more, got "+strconv.Itoa(n))
	}
	return n, nil
}

// readSend reads the SendMessageRequest at node params of d: its message
// and configuration. problem says what is wrong when params is not an
// object.
func readSend(d *jsonparse.Document, params int32, problem string) (incoming, *rpcError) {
	if params < 0 || d.Kind(params) != jsonparse.KindObject {
		return incoming{}, invalidParams("message", problem)
	}
	in, e := readMessage(d, d.Member(params, "message"))
	if e == nil {
		e = readConfiguration(d, params, &in)
	}
	return in, e
}

// readMessage reads message node m of d, or returns the invalid-params
// error that refuses it.
func readMessage(d *jsonparse.Document, m int32) (incoming, *rpcError) {
	in := incoming{input: -1, answers: -1, data: -1, push: -1, doc: d, history: historyAll}
	if m < 0 || d.Kind(m) != jsonparse.KindObject {
		return in, invalidParams("message", "required: an object")
	}
	str := func(name string) (string, *rpcError) {
		v := d.Member(m, name)
		if v < 0 || d.Kind(v) == jsonparse.KindNull {
			return "", nil
		}
		if d.Kind(v) != jsonparse.KindString {
			return "", invalidParams("message."+name, "must be a string")
		}
		return d.StringValue(v), nil
	}
	var e *rpcError
	if in.messageID, e = str("messageId"); e != nil {
		return in, e
	}
	if in.contextID, e = str("contextId"); e != nil {
		return in, e
	}
	if in.taskID, e = str("taskId"); e != nil {
		return in, e
	}
	parts := d.Member(m, "parts")
	if parts < 0 || d.Kind(parts) != jsonparse.KindArray {
		return in, invalidParams("message.parts", "At least one part is required")
	}
	in.parts, in.partsNode = int(d.Nodes[parts].Count), parts
	for _, p := range d.Elements(parts) {
		if d.Kind(p) != jsonparse.KindObject {
			return in, invalidParams("message.parts", "each part must be an object")
		}
		if t := d.Member(p, "text"); t >= 0 && d.Kind(t) == jsonparse.KindString {
			in.texts++
		}
		data := d.Member(p, "data")
		if data < 0 || d.Kind(data) != jsonparse.KindObject {
			continue
		}
		if a := d.Member(data, "input_responses"); a >= 0 {
			if d.Kind(a) != jsonparse.KindObject || in.answers >= 0 {
				return in, invalidParams("message.parts", `a message answers a task's questions with one data part {"input_responses": {"<key>": answer}}`)
			}
			in.answers = a
			continue
		}
		tool, input := d.Member(data, "tool"), d.Member(data, "input")
		if tool < 0 && input < 0 {
			if in.data < 0 {
				in.data = data
			}
			continue
		}
		if in.found {
			return in, invalidParams("message.parts", "one message calls one tool: send one data part with \"tool\" and \"input\"")
		}
		in.found = true
		if tool >= 0 && d.Kind(tool) != jsonparse.KindNull {
			if d.Kind(tool) != jsonparse.KindString {
				return in, invalidParams("message.parts", `a data part's "tool" must be a string`)
			}
			in.tool = d.StringValue(tool)
		}
		if input >= 0 && d.Kind(input) != jsonparse.KindNull {
			if d.Kind(input) != jsonparse.KindObject {
				return in, invalidParams("message.parts", `a data part's "input" must be a JSON object of the tool's parameters`)
			}
			in.input = input
		}
	}
	return in, nil
}

// rpcEnvelope is a JSON-RPC request as read: its id (as sent), method and
// params node (-1 for none).
type rpcEnvelope struct {
	id     []byte
	method string
	params int32
}

// readEnvelope reads the JSON-RPC request of document d, or returns the
// error to answer (with a null id when the id cannot be read).
func readEnvelope(d *jsonparse.Document) (rpcEnvelope, []byte, *rpcError) {
	env := rpcEnvelope{params: -1}
	if d.Kind(0) != jsonparse.KindObject {
		return env, nil, &rpcError{Code: codeInvalidRequest, Message: "Request payload validation error: the body must be a JSON-RPC request object"}
	}
	if d.Repeated {
		return env, nil, &rpcError{Code: codeInvalidRequest, Message: "Request payload validation error: a member name is repeated"}
	}
	id := d.Member(0, "id")
	switch {
	case id < 0:
		return env, nil, &rpcError{Code: codeInvalidRequest, Message: `Request payload validation error: "id" is required (this agent answers no notifications)`}
	case d.Kind(id) != jsonparse.KindString && d.Kind(id) != jsonparse.KindNumber:
		return env, nil, &rpcError{Code: codeInvalidRequest, Message: `Request payload validation error: "id" must be a string or a number`}
	case len(d.Raw(id)) > maxIDBytes:
		return env, nil, &rpcError{Code: codeInvalidRequest, Message: fmt.Sprintf("Request payload validation error: the id is longer than %d bytes", maxIDBytes)}
	}
	env.id = d.Raw(id) // points into the body, which outlives the answer
	if v := d.Member(0, "jsonrpc"); v < 0 || d.Kind(v) != jsonparse.KindString || !d.StringIs(v, "2.0") {
		return env, env.id, &rpcError{Code: codeInvalidRequest, Message: `Request payload validation error: "jsonrpc" must be "2.0"`}
	}
	m := d.Member(0, "method")
	if m < 0 || d.Kind(m) != jsonparse.KindString {
		return env, env.id, &rpcError{Code: codeInvalidRequest, Message: `Request payload validation error: "method" must be a string`}
	}
	switch {
	case d.StringIs(m, "SendMessage"): // the commonest, without a copy
		env.method = "SendMessage"
	case d.StringIs(m, "message/send"):
		env.method = "message/send"
	default:
		env.method = d.StringValue(m)
	}
	env.params = d.Member(0, "params")
	return env, env.id, nil
}

// readDraft reads the params of the universal tool registry's draft form,
// JSON-RPC "a2a/tasks/send" with {agentCard, taskType, input}: taskType
// names the tool and input is its input. The draft has no message id, so
// the call gets a generated one.
func readDraft(d *jsonparse.Document, params int32) (incoming, *rpcError) {
	in := incoming{input: -1, answers: -1, data: -1, push: -1, doc: d, parts: 1, found: true, generated: true, history: historyAll}
	if params < 0 || d.Kind(params) != jsonparse.KindObject {
		return in, invalidParams("params", "required: an object with taskType and input")
	}
	tt := d.Member(params, "taskType")
	if tt < 0 || d.Kind(tt) != jsonparse.KindString || len(d.Raw(tt)) <= 2 {
		return in, invalidParams("params.taskType", "required: the name or id of the tool to call")
	}
	in.tool = d.StringValue(tt)
	if v := d.Member(params, "input"); v >= 0 && d.Kind(v) != jsonparse.KindNull {
		if d.Kind(v) != jsonparse.KindObject {
			return in, invalidParams("params.input", "must be a JSON object of the tool's parameters")
		}
		in.input = v
	}
	return in, nil
}
