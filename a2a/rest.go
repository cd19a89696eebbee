package a2a

import (
	"encoding/json"
	"net/http"
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

// serveRESTSend answers POST /message:send, a SendMessageRequest, in 1.0's
// shapes.
func (h *Handler) serveRESTSend(w http.ResponseWriter, r *http.Request) {
	body, ok := h.readBody(w, r, func(status int, msg string) { writeRESTError(w, status, "INVALID_REQUEST", msg) })
	if !ok {
		return
	}
	var p sendParams
	if err := json.Unmarshal(body, &p); err != nil || p.Message == nil {
		writeRESTError(w, http.StatusBadRequest, "INVALID_PARAMS", "The body must be a SendMessageRequest: an object with a message",
			badRequest(map[string]string{"message": "required"}, []string{"message"})...)
		return
	}
	result, e, status := h.send(r, dialect{}, p.Message, body)
	if e != nil {
		h.challenge(w, e)
		if status == http.StatusOK {
			status = http.StatusBadRequest
			if e.Code == codeTaskNotFound {
				status = http.StatusNotFound
			}
		}
		reason := "INVALID_PARAMS"
		var details []any
		for _, d := range e.Data {
			if m, ok := d.(map[string]any); ok && m["reason"] != nil {
				reason, _ = m["reason"].(string)
				continue
			}
			details = append(details, d)
		}
		writeRESTError(w, status, reason, e.Message, details...)
		return
	}
	b, err := json.Marshal(result)
	if err != nil {
		writeRESTError(w, http.StatusInternalServerError, "INTERNAL", "The answer could not be written")
		return
	}
	w.Header().Set("Content-Type", "application/a2a+json")
	_, _ = w.Write(b)
}
