package a2a

import (
	"encoding/json"
	"net/http"
)

// restStatus names an HTTP status as google.rpc.Status does.
var restStatus = map[int]string{
	http.StatusBadRequest:            "INVALID_ARGUMENT",
	http.StatusUnauthorized:          "UNAUTHENTICATED",
	http.StatusForbidden:             "PERMISSION_DENIED",
	http.StatusNotFound:              "NOT_FOUND",
	http.StatusMethodNotAllowed:      "UNIMPLEMENTED",
	http.StatusRequestEntityTooLarge: "INVALID_ARGUMENT",
	http.StatusRequestTimeout:        "DEADLINE_EXCEEDED",
	http.StatusServiceUnavailable:    "UNAVAILABLE",
	http.StatusInternalServerError:   "INTERNAL",
}

// writeRESTError writes an HTTP+JSON error: a google.rpc.Status with an
// ErrorInfo naming the reason.
func writeRESTError(w http.ResponseWriter, status int, reason, message string, details ...any) {
	body := map[string]any{"error": map[string]any{
		"code": status, "status": restStatus[status], "message": message,
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
	body := h.readBody(w, r, func(status int, msg string) { writeRESTError(w, status, "INVALID_ARGUMENT", msg) })
	if body == nil {
		return
	}
	var p sendParams
	if err := json.Unmarshal(body, &p); err != nil || p.Message == nil {
		writeRESTError(w, http.StatusBadRequest, "INVALID_ARGUMENT", "The body must be a SendMessageRequest: an object with a message",
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
		reason := "INVALID_ARGUMENT"
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
