package a2a

import (
	"encoding/json"
	"net/http"
	"strings"

	"github.com/otcgo/otc"
	"github.com/otcgo/otc/internal/jsonparse"
	"github.com/otcgo/otc/internal/wire"
)

// JSON-RPC error codes: the standard ones, and A2A's (its section 5.4).
const (
	codeParseError          = -32700
	codeInvalidRequest      = -32600
	codeMethodNotFound      = -32601
	codeInvalidParams       = -32602
	codeInternalError       = -32603
	codeTaskNotFound        = -32001
	codeTaskNotCancelable   = -32002
	codePushNotSupported    = -32003
	codeUnsupported         = -32004
	codeExtendedCardMissing = -32007
	codeVersionNotSupported = -32009
	codeUnauthenticated     = -31401
	codeUnauthorized        = -31403
)

// rpcResponse is a JSON-RPC 2.0 response: a result or an error.
type rpcResponse struct {
	ID     json.RawMessage
	Result any
	Error  *rpcError
}

// MarshalJSON writes the response with "jsonrpc" and exactly one of
// result and error.
func (r rpcResponse) MarshalJSON() ([]byte, error) {
	out := struct {
		JSONRPC string          `json:"jsonrpc"`
		ID      json.RawMessage `json:"id"`
		Result  any             `json:"result,omitempty"`
		Error   *rpcError       `json:"error,omitempty"`
	}{"2.0", r.ID, r.Result, r.Error}
	return json.Marshal(out)
}

// rpcError is a JSON-RPC error object; Data is an array of detail
// objects, each with its "@type", as A2A's section 9.5 asks.
type rpcError struct {
	Code    int    `json:"code"`
	Message string `json:"message"`
	Data    []any  `json:"data,omitempty"`

	// refusal is the refusal of the caller the error answers, whose
	// challenge the answer carries.
	refusal *otc.Error
}

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
	if raw, ok := resp.Result.(json.RawMessage); ok && resp.Error == nil {
		b := make([]byte, 0, len(raw)+len(resp.ID)+40)
		b = append(b, `{"jsonrpc":"2.0","id":`...)
		b = append(b, resp.ID...)
		b = append(b, `,"result":`...)
		b = append(b, raw...)
		b = append(b, '}')
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(status)
		_, _ = w.Write(b)
		return
	}
	b, err := json.Marshal(resp)
	if err != nil {
		status, b = http.StatusInternalServerError, []byte(`{"jsonrpc":"2.0","id":null,"error":{"code":-32603,"message":"Internal error"}}`)
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_, _ = w.Write(b)
}

// serveRPC answers one JSON-RPC request of the given A2A version.
func (h *Handler) serveRPC(w http.ResponseWriter, r *http.Request, version string) {
	buf, ok := h.readBody(w, r, func(status int, msg string) {
		writeRPC(w, status, rpcResponse{ID: json.RawMessage("null"), Error: &rpcError{Code: codeInvalidRequest, Message: msg}})
	})
	defer wire.ReleaseBuffer(buf) // after the document and the call, which point into it
	if !ok {
		return
	}
	body := buf.Bytes()
	doc, err := jsonparse.Parse(body)
	if err != nil {
		writeRPC(w, http.StatusOK, rpcResponse{ID: json.RawMessage("null"), Error: &rpcError{Code: codeParseError, Message: "Invalid JSON payload: " + err.Error()}})
		return
	}
	defer jsonparse.Release(doc)
	env, rawID, e := readEnvelope(doc)
	id := json.RawMessage(rawID)
	if len(id) == 0 {
		id = json.RawMessage("null")
	}
	if e != nil {
		writeRPC(w, http.StatusOK, rpcResponse{ID: id, Error: e})
		return
	}
	d := dialect{v03: version == Version03}
	var result any
	switch {
	case version == Version10 && env.method == "SendMessage", version == Version03 && env.method == "message/send":
		in, pe := readSend(doc, env.params, sendParamsProblem)
		if pe != nil {
			e = pe
			break
		}
		// A refusal of the caller by a tool's policy is a JSON-RPC error
		// like any other (-31401, -31403), answered 200 as the binding's
		// clients expect, with its challenge; only a request no
		// authenticator accepts is refused at the HTTP level (401).
		out := wire.GetBuffer()
		defer wire.ReleaseBuffer(out)
		b := append(out.AvailableBuffer(), `{"jsonrpc":"2.0","id":`...)
		b = append(b, id...)
		b = append(b, `,"result":`...)
		b, e, _ = h.send(b, r, d, in, body)
		h.challenge(w, e)
		if e == nil {
			b = append(b, '}')
			out.Write(b) // keeps the grown array for the pool
			wire.ArmWriteDeadline(w, r)
			wire.SetJSONHeaders(w.Header(), len(b), false)
			_, _ = w.Write(b)
			return
		}
	case version == Version10 && (env.method == "GetTask" || env.method == "CancelTask"), version == Version03 && (env.method == "tasks/get" || env.method == "tasks/cancel"):
		id, pe := readTaskID(doc, env.params)
		if pe != nil {
			e = pe
			break
		}
		var t *task
		if env.method == "GetTask" || env.method == "tasks/get" {
			t, e = h.getTask(r, d, id)
		} else {
			t, e = h.cancelTask(r, d, id)
		}
		if e == nil {
			result = json.RawMessage(appendTask(nil, t))
		}
	case version == Version10 && env.method == "ListTasks":
		q, pe := readListParams(doc, env.params)
		if pe != nil {
			e = pe
			break
		}
		var b []byte
		if b, e = h.listTasks(r, d, q); e == nil {
			result = json.RawMessage(b)
		}
	case env.method == "a2a/tasks/send":
		// The universal tool registry's draft form, answered in the task
		// shape of the request's version.
		in, pe := readDraft(doc, env.params)
		if pe != nil {
			e = pe
			break
		}
		out := wire.GetBuffer()
		defer wire.ReleaseBuffer(out)
		b, se, _ := h.send(out.AvailableBuffer(), r, d, in, body)
		if se != nil {
			e = se
			h.challenge(w, e)
			break
		}
		result = json.RawMessage(b)
	case version == Version10 && env.method == "SendStreamingMessage", version == Version03 && env.method == "message/stream":
		in, pe := readSend(doc, env.params, sendParamsProblem)
		if pe != nil {
			e = pe
			break
		}
		h.serveStream(w, r, d, in, body, id, func(e *rpcError, _ int) {
			writeRPC(w, http.StatusOK, rpcResponse{ID: id, Error: e})
		})
		return
	case version == Version10 && env.method == "SubscribeToTask", version == Version03 && env.method == "tasks/resubscribe":
		taskID, pe := readTaskID(doc, env.params)
		if pe != nil {
			e = pe
			break
		}
		h.subscribe(w, r, d, taskID, id, func(e *rpcError) {
			writeRPC(w, http.StatusOK, rpcResponse{ID: id, Error: e})
		})
		return
	case version == Version10 && strings.HasSuffix(env.method, "PushNotificationConfig"), version == Version10 && env.method == "ListTaskPushNotificationConfigs",
		version == Version03 && strings.HasPrefix(env.method, "tasks/pushNotificationConfig/"):
		e = &rpcError{Code: codePushNotSupported, Message: "Push notifications are not supported by this agent", Data: errorInfo("PUSH_NOTIFICATION_NOT_SUPPORTED", nil)}
	case version == Version10 && env.method == "GetExtendedAgentCard", version == Version03 && env.method == "agent/getAuthenticatedExtendedCard":
		if h.auth == nil {
			e = &rpcError{Code: codeExtendedCardMissing, Message: "This agent has no extended Agent Card: it authenticates no one, and its card lists every skill", Data: errorInfo("EXTENDED_AGENT_CARD_NOT_CONFIGURED", nil)}
			break
		}
		result = h.card(h.endpointURL(r, ""), otc.CallerIdentity(r.Context()))
	default:
		e = &rpcError{Code: codeMethodNotFound, Message: "Method not found: " + wire.Truncate(env.method, 64) + " (A2A " + version + ")"}
	}
	writeRPC(w, http.StatusOK, rpcResponse{ID: id, Result: result, Error: e})
}

// challenge sets the WWW-Authenticate header of an answer refusing the
// caller with e ([otc.Challenge]).
func (h *Handler) challenge(w http.ResponseWriter, e *rpcError) {
	if e == nil || e.refusal == nil {
		return
	}
	if c := otc.Challenge(h.auth, e.refusal); c != "" {
		w.Header().Set("WWW-Authenticate", c)
	}
}

// sendParamsProblem is the problem of a send whose params are not an
// object.
const sendParamsProblem = "required: params must be an object with a message"

// maxIDBytes bounds a JSON-RPC id.
const maxIDBytes = 256
