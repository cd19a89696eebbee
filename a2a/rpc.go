package a2a

import (
	"encoding/json"
	"net/http"

	"github.com/otcgo/otc"
	"github.com/otcgo/otc/internal/a2awire"
	"github.com/otcgo/otc/internal/jsonparse"
	"github.com/otcgo/otc/internal/jsonrpc"
	"github.com/otcgo/otc/internal/wire"
)

// JSON-RPC error codes: the standard ones, and A2A's (its section 5.4).
const (
	codeParseError          = jsonrpc.CodeParseError
	codeInvalidRequest      = jsonrpc.CodeInvalidRequest
	codeMethodNotFound      = jsonrpc.CodeMethodNotFound
	codeInvalidParams       = jsonrpc.CodeInvalidParams
	codeInternalError       = jsonrpc.CodeInternalError
	codeTaskNotFound        = a2awire.CodeTaskNotFound
	codeTaskNotCancelable   = a2awire.CodeTaskNotCancelable
	codePushNotSupported    = a2awire.CodePushNotSupported
	codeUnsupported         = a2awire.CodeUnsupported
	codeExtendedCardMissing = a2awire.CodeExtendedCardMissing
	codeVersionNotSupported = a2awire.CodeVersionNotSupported
	codeUnauthenticated     = a2awire.CodeUnauthenticated
	codeUnauthorized        = a2awire.CodeUnauthorized
)

// rpcResponse is a JSON-RPC 2.0 response: a result or an error.
type rpcResponse struct {
	ID     json.RawMessage
	Result any
	Error  *rpcError
}

// encode writes the response with "jsonrpc" and exactly one of result
// and error.
func (r rpcResponse) encode() []byte {
	if r.Error != nil {
		return jsonrpc.Response(r.ID, nil, r.Error)
	}
	return jsonrpc.Response(r.ID, r.Result, nil)
}

// rpcError is the JSON-RPC error object the agent answers with: its Data
// is an array of detail objects, each with its "@type", as A2A's section
// 9.5 asks; its Refusal the refusal of the caller it answers, whose
// challenge the answer carries.
type rpcError = jsonrpc.Error[[]any]

// errorInfo is the google.rpc.ErrorInfo detail of an error.
func errorInfo(reason string, metadata map[string]string) []any {
	d := map[string]any{"@type": "type.googleapis.com/google.rpc.ErrorInfo", "reason": reason, "domain": "a2a-protocol.org"}
	if len(metadata) > 0 {
		d["metadata"] = metadata
	}
	return []any{d}
}

// badRequest is the google.rpc.BadRequest detail naming each field that
// is wrong.
func badRequest(fields map[string]string, order []string) []any {
	violations := make([]map[string]string, 0, len(order))
	for _, f := range order {
		violations = append(violations, map[string]string{"field": f, "description": fields[f]})
	}
	return []any{map[string]any{"@type": "type.googleapis.com/google.rpc.BadRequest", "fieldViolations": violations}}
}

// writeRPC writes a JSON-RPC response with the given HTTP status. A
// result already encoded (json.RawMessage) is written around by hand.
func writeRPC(w http.ResponseWriter, status int, resp rpcResponse) {
	var b []byte
	if raw, ok := resp.Result.(json.RawMessage); ok && resp.Error == nil {
		b = jsonrpc.AppendResponse(make([]byte, 0, len(raw)+len(resp.ID)+40), resp.ID, raw)
	} else {
		b = resp.encode()
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_, _ = w.Write(b)
}

// rpcCall is one JSON-RPC request as a method answers it.
type rpcCall struct {
	w      http.ResponseWriter
	r      *http.Request
	d      dialect
	doc    *jsonparse.Document
	params int32
	id     json.RawMessage
	body   []byte
}

// An rpcMethod answers one JSON-RPC method: with its result, or an
// error; written is true when it wrote the answer itself (a stream, or a
// result encoded in a pooled buffer).
type rpcMethod func(h *Handler, c *rpcCall) (result any, e *rpcError, written bool)

// rpcMethods are the methods of each version, by name.
var rpcMethods = [...]map[string]rpcMethod{
	v10: methodTable(false),
	v03: methodTable(true),
}

// methodTable is the method table of 1.0, or of 0.3 (v03): each method of
// the protocol by its name in that version (0.3 has no ListTasks), and
// the draft method that names its version.
func methodTable(v03 bool) map[string]rpcMethod {
	out := map[string]rpcMethod{draftMethodName: draftMethod}
	for m, f := range map[string]rpcMethod{
		a2awire.SendMessage:                      sendMethod,
		a2awire.SendStreamingMessage:             streamMethod,
		a2awire.GetTask:                          getMethod,
		a2awire.CancelTask:                       cancelMethod,
		a2awire.ListTasks:                        listMethod,
		a2awire.SubscribeToTask:                  subscribeMethod,
		a2awire.GetExtendedAgentCard:             extendedCardMethod,
		a2awire.CreateTaskPushNotificationConfig: pushSetMethod,
		a2awire.GetTaskPushNotificationConfig:    pushGetMethod,
		a2awire.ListTaskPushNotificationConfigs:  pushListMethod,
		a2awire.DeleteTaskPushNotificationConfig: pushDeleteMethod,
	} {
		v := a2awire.Version10
		if v03 {
			v = a2awire.Version03
		}
		if name := v.Method(m); name != "" {
			out[name] = f
		}
	}
	return out
}

// draftMethodName is the universal tool registry's draft method, served
// in the task shape of the request's version.
const draftMethodName = "a2a/tasks/send"

// serveRPC answers one JSON-RPC request of A2A version d. A request
// whose A2A-Version named none (named is false) is 0.3's, as the spec
// says, unless its method is 1.0's alone: 1.0 clients that leave the
// header out are served, and no method is both versions' under one name
// but the draft's.
func (h *Handler) serveRPC(w http.ResponseWriter, r *http.Request, d dialect, named bool) {
	buf, ok := h.readBody(w, r, func(status int, msg string) {
		writeRPC(w, status, rpcResponse{ID: json.RawMessage("null"), Error: &rpcError{Code: codeInvalidRequest, Message: msg}})
	})
	defer wire.ReleaseBuffer(buf) // after the document and the call, which point into it
	if !ok {
		return
	}
	var (
		env   rpcEnvelope
		rawID []byte
		e     *rpcError
		doc   *jsonparse.Document
	)
	q, quick := readQuick(buf.Bytes())
	if quick {
		env, rawID, doc = rpcEnvelope{id: q.id, method: q.method, params: -1}, q.id, q.in.doc
	} else {
		var err error
		if doc, err = jsonparse.Parse(buf.Bytes()); err != nil {
			writeRPC(w, http.StatusOK, rpcResponse{ID: json.RawMessage("null"), Error: &rpcError{Code: codeParseError, Message: "Invalid JSON payload: " + err.Error()}})
			return
		}
		env, rawID, e = readEnvelope(doc)
	}
	defer jsonparse.Release(doc)
	id := json.RawMessage(rawID)
	if len(id) == 0 {
		id = json.RawMessage("null")
	}
	var result any
	if e == nil {
		m, found := rpcMethods[d][env.method]
		if !found && !named {
			if m, found = rpcMethods[v10][env.method]; found {
				d = v10
			}
		}
		if !found {
			e = &rpcError{Code: codeMethodNotFound, Message: "Method not found: " + wire.Truncate(env.method, 64) + " (A2A " + d.String() + ")"}
		} else {
			var written bool
			switch {
			case quick:
				// A method readQuick read and that is found is
				// SendMessage, by either version's name.
				c := rpcCall{w: w, r: r, d: d, id: id, body: buf.Bytes()}
				result, e, written = sendRead(h, &c, &q.in)
			case env.method == "SendMessage":
				// A direct call, which the compiler sees through: the
				// commonest request allocates no rpcCall.
				c := rpcCall{w: w, r: r, d: d, doc: doc, params: env.params, id: id, body: buf.Bytes()}
				result, e, written = sendMethod(h, &c)
			default:
				result, e, written = m(h, &rpcCall{w: w, r: r, d: d, doc: doc, params: env.params, id: id, body: buf.Bytes()})
			}
			if written {
				return
			}
		}
	}
	h.challenge(w, e)
	writeRPC(w, http.StatusOK, rpcResponse{ID: id, Result: result, Error: e})
}

// sendMethod answers SendMessage (0.3: message/send). A refusal of the
// caller by a tool's policy is a JSON-RPC error like any other (-31401,
// -31403), answered 200 as the binding's clients expect, with its
// challenge; only a request no authenticator accepts is refused at the
// HTTP level (401).
func sendMethod(h *Handler, c *rpcCall) (any, *rpcError, bool) {
	in, e := readSend(c.doc, c.params, sendParamsProblem)
	if e != nil {
		return nil, e, false
	}
	return sendRead(h, c, &in)
}

// sendRead is sendMethod once the message is read.
func sendRead(h *Handler, c *rpcCall, in *incoming) (any, *rpcError, bool) {
	out := wire.GetBuffer()
	defer wire.ReleaseBuffer(out)
	b := jsonrpc.AppendResultHead(out.AvailableBuffer(), c.id)
	b, e, _ := h.send(b, c.r, c.d, in, c.body)
	if e != nil {
		return nil, e, false
	}
	b = append(b, '}')
	out.Write(b) // keeps the grown array for the pool
	wire.ArmWriteDeadline(c.w, c.r)
	wire.SetJSONHeaders(c.w.Header(), len(b), false)
	_, _ = c.w.Write(b)
	return nil, nil, true
}

// streamMethod answers SendStreamingMessage (0.3: message/stream).
func streamMethod(h *Handler, c *rpcCall) (any, *rpcError, bool) {
	in, e := readSend(c.doc, c.params, sendParamsProblem)
	if e != nil {
		return nil, e, false
	}
	h.serveStream(c.w, c.r, c.d, in, c.body, c.id, func(e *rpcError, _ int) {
		writeRPC(c.w, http.StatusOK, rpcResponse{ID: c.id, Error: e})
	})
	return nil, nil, true
}

// getMethod answers GetTask (0.3: tasks/get).
func getMethod(h *Handler, c *rpcCall) (any, *rpcError, bool) {
	return taskMethod(c, h.getTask)
}

// cancelMethod answers CancelTask (0.3: tasks/cancel).
func cancelMethod(h *Handler, c *rpcCall) (any, *rpcError, bool) {
	return taskMethod(c, func(r *http.Request, d dialect, id string, _ int) (*task, *rpcError) {
		return h.cancelTask(r, d, id)
	})
}

// taskMethod answers a method on the task params.id names with op, given
// params.historyLength.
func taskMethod(c *rpcCall, op func(*http.Request, dialect, string, int) (*task, *rpcError)) (any, *rpcError, bool) {
	id, n, e := readTaskID(c.doc, c.params)
	if e != nil {
		return nil, e, false
	}
	t, e := op(c.r, c.d, id, n)
	if e != nil {
		return nil, e, false
	}
	return json.RawMessage(appendTask(nil, t)), nil, false
}

// listMethod answers ListTasks.
func listMethod(h *Handler, c *rpcCall) (any, *rpcError, bool) {
	q, e := readListParams(c.doc, c.params)
	if e != nil {
		return nil, e, false
	}
	b, e := h.listTasks(c.r, c.d, q)
	if e != nil {
		return nil, e, false
	}
	return json.RawMessage(b), nil, false
}

// subscribeMethod answers SubscribeToTask (0.3: tasks/resubscribe).
func subscribeMethod(h *Handler, c *rpcCall) (any, *rpcError, bool) {
	taskID, _, e := readTaskID(c.doc, c.params)
	if e != nil {
		return nil, e, false
	}
	h.subscribe(c.w, c.r, c.d, taskID, c.id, func(e *rpcError) {
		writeRPC(c.w, http.StatusOK, rpcResponse{ID: c.id, Error: e})
	})
	return nil, nil, true
}

// draftMethod answers the universal tool registry's draft form, in the
// task shape of the request's version.
func draftMethod(h *Handler, c *rpcCall) (any, *rpcError, bool) {
	in, e := readDraft(c.doc, c.params)
	if e != nil {
		return nil, e, false
	}
	b, e, _ := h.send(nil, c.r, c.d, &in, c.body)
	if e != nil {
		return nil, e, false
	}
	return json.RawMessage(b), nil, false
}

// extendedCardMethod answers GetExtendedAgentCard (0.3:
// agent/getAuthenticatedExtendedCard).
func extendedCardMethod(h *Handler, c *rpcCall) (any, *rpcError, bool) {
	if h.auth == nil {
		return nil, &rpcError{Code: codeExtendedCardMissing, Message: "This agent has no extended Agent Card: it authenticates no one, and its card lists every skill", Data: errorInfo("EXTENDED_AGENT_CARD_NOT_CONFIGURED", nil)}, false
	}
	return h.card(h.endpointURL(c.r, ""), otc.CallerIdentity(c.r.Context())), nil, false
}

// challenge sets the WWW-Authenticate header of an answer refusing the
// caller with e ([otc.Challenge]).
func (h *Handler) challenge(w http.ResponseWriter, e *rpcError) {
	if e == nil || e.Refusal == nil {
		return
	}
	if c := otc.Challenge(h.auth, e.Refusal); c != "" {
		w.Header().Set("WWW-Authenticate", c)
	}
}

// sendParamsProblem is the problem of a send whose params are not an
// object.
const sendParamsProblem = "required: params must be an object with a message"

// maxIDBytes bounds a JSON-RPC id.
const maxIDBytes = 256
