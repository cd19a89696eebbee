package a2a

import (
	"encoding/json"
	"net/http"
	"net/url"
	"strings"

	"github.com/otcgo/otc/internal/jsonparse"
	"github.com/otcgo/otc/internal/wire"
)

// restStatus is the google.rpc.Status name of an error, by its reason
// (as the A2A SDKs map them), or else by its HTTP status.
func restStatus(reason string, status int) string {
	switch reason {
	case "INVALID_PARAMS", "INVALID_REQUEST", "PARSE_ERROR":
		return "INVALID_ARGUMENT"
	case "TASK_NOT_FOUND", "NOT_FOUND":
		return "NOT_FOUND"
	case "UNSUPPORTED_OPERATION", "PUSH_NOTIFICATION_NOT_SUPPORTED", "VERSION_NOT_SUPPORTED", "EXTENDED_AGENT_CARD_NOT_CONFIGURED", "TASK_NOT_CANCELABLE":
		return "FAILED_PRECONDITION"
	case "UNAUTHENTICATED":
		return "UNAUTHENTICATED"
	case "UNAUTHORIZED":
		return "PERMISSION_DENIED"
	}
	switch status {
	case http.StatusMethodNotAllowed:
		return "UNIMPLEMENTED"
	case http.StatusRequestTimeout:
		return "DEADLINE_EXCEEDED"
	case http.StatusServiceUnavailable:
		return "UNAVAILABLE"
	case http.StatusInternalServerError:
		return "INTERNAL"
	}
	return "INVALID_ARGUMENT"
}

// writeRESTError writes an HTTP+JSON error: a google.rpc.Status with an
// ErrorInfo naming the reason.
func writeRESTError(w http.ResponseWriter, status int, reason, message string, details ...any) {
	body := map[string]any{"error": map[string]any{
		"code": status, "status": restStatus(reason, status), "message": message,
		"details": append(errorInfo(reason, nil), details...),
	}}
	b, _ := json.Marshal(body)
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_, _ = w.Write(b)
}

// serveRESTSend answers POST /message:send (or, with stream,
// /message:stream), a SendMessageRequest, in 1.0's shapes.
func (h *Handler) serveRESTSend(w http.ResponseWriter, r *http.Request, stream bool) {
	buf, ok := h.readBody(w, r, func(status int, msg string) { writeRESTError(w, status, "INVALID_REQUEST", msg) })
	defer wire.ReleaseBuffer(buf) // after the document and the call, which point into it
	if !ok {
		return
	}
	body := buf.Bytes()
	doc, err := jsonparse.Parse(body)
	if err != nil {
		writeRESTError(w, http.StatusBadRequest, "PARSE_ERROR", "The body is not JSON: "+err.Error())
		return
	}
	defer jsonparse.Release(doc)
	root := int32(0)
	if doc.Repeated {
		root = -1 // a body with a member named twice is refused whole
	}
	in, e := readSend(doc, root, "required: the body must be a SendMessageRequest, an object with a message")
	if e != nil {
		writeRESTError(w, http.StatusBadRequest, "INVALID_PARAMS", e.Message, restDetails(e)...)
		return
	}
	if stream {
		h.serveStream(w, r, v10, in, body, nil, func(e *rpcError, status int) {
			if status == http.StatusOK {
				status = restStatusOf(e)
			}
			writeRESTError(w, status, restReason(e), e.Message, restDetails(e)...)
		})
		return
	}
	out := wire.GetBuffer()
	defer wire.ReleaseBuffer(out)
	result, e, status := h.send(out.AvailableBuffer(), r, v10, &in, body)
	if e != nil {
		h.challenge(w, e)
		if status == http.StatusOK {
			status = restStatusOf(e)
		}
		writeRESTError(w, status, restReason(e), e.Message, restDetails(e)...)
		return
	}
	out.Write(result) // keeps the grown array for the pool
	wire.ArmWriteDeadline(w, r)
	w.Header().Set("Content-Type", "application/a2a+json")
	_, _ = w.Write(result)
}

// restReason is the ErrorInfo reason of a JSON-RPC error, for the
// HTTP+JSON binding.
func restReason(e *rpcError) string {
	for _, d := range e.Data {
		if m, ok := d.(map[string]any); ok {
			if r, ok := m["reason"].(string); ok {
				return r
			}
		}
	}
	return "INVALID_PARAMS"
}

// restDetails are a JSON-RPC error's details but its ErrorInfo, which
// writeRESTError writes itself.
func restDetails(e *rpcError) []any {
	var out []any
	for _, d := range e.Data {
		if m, ok := d.(map[string]any); ok && m["reason"] != nil {
			continue
		}
		out = append(out, d)
	}
	return out
}

// restStatusOf is the HTTP status of an error answered 200 on JSON-RPC.
func restStatusOf(e *rpcError) int {
	switch e.Code {
	case codeTaskNotFound:
		return http.StatusNotFound
	case codeInternalError:
		return http.StatusInternalServerError
	}
	return http.StatusBadRequest
}

// serveRESTTask answers GET /tasks/{id} and POST /tasks/{id}:cancel.
func (h *Handler) serveRESTTask(w http.ResponseWriter, r *http.Request, rest string) {
	id, action, _ := strings.Cut(rest, ":")
	if unescaped, err := url.PathUnescape(id); err == nil {
		id = unescaped
	}
	var t *task
	var e *rpcError
	switch {
	case action == "" && r.Method == http.MethodGet:
		n := historyAll
		if s := r.URL.Query().Get("historyLength"); s != "" {
			n, e = parseHistoryLength(s, "historyLength")
		}
		if e == nil {
			t, e = h.getTask(r, v10, id, n)
		}
	case action == "cancel" && r.Method == http.MethodPost:
		t, e = h.cancelTask(r, v10, id)
	case action == "subscribe" && (r.Method == http.MethodPost || r.Method == http.MethodGet):
		h.subscribe(w, r, v10, id, nil, func(e *rpcError) {
			writeRESTError(w, restStatusOf(e), restReason(e), e.Message, restDetails(e)...)
		})
		return
	default:
		writeRESTError(w, http.StatusMethodNotAllowed, "METHOD_NOT_FOUND", "A task is read with GET /tasks/{id}, followed with POST /tasks/{id}:subscribe and cancelled with POST /tasks/{id}:cancel")
		return
	}
	if e != nil {
		writeRESTError(w, restStatusOf(e), restReason(e), e.Message, restDetails(e)...)
		return
	}
	wire.ArmWriteDeadline(w, r)
	w.Header().Set("Content-Type", "application/a2a+json")
	_, _ = w.Write(appendTask(nil, t))
}
