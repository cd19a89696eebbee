package otc

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"runtime/debug"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"unicode/utf8"
)

// DefaultMaxBodyBytes is the default limit on a request body: 4 MiB.
const DefaultMaxBodyBytes = 4 << 20

// HandlerOptions configures a [Handler]. The zero value, and nil, give the
// defaults described on each field.
type HandlerOptions struct {
	// MaxBodyBytes limits the size of a request body; a larger one is
	// answered 413. Zero or less means DefaultMaxBodyBytes.
	MaxBodyBytes int64

	// Schema is the $schema spelling of responses to requests that name
	// none: SchemaOTC (the default, when empty), SchemaOXP or
	// SchemaOpenAPI. A request that names one gets its own spelling back.
	Schema string

	// IncludeItems adds the catalog a second time under the key "items",
	// beside "tools". The OXP OpenAPI file names the catalog "items" and
	// clients generated from it read that key; the seeds and this
	// library's client read "tools".
	IncludeItems bool

	// Logger receives faults of the handler itself. Nil means the
	// registry's logger. Tool panics are logged by the registry.
	Logger *slog.Logger

	// Authenticator, when set, must accept a request before the catalog is
	// listed or a tool called (SPEC §8); GET /health is never
	// authenticated. Nil means no authentication, and the Authorization
	// header is ignored. See [NewAPIKeyAuth], [NewJWTAuth] and [AnyOf].
	Authenticator Authenticator
}

// Handler serves a [Registry] over OTC/OXP 1.0 HTTP (SPEC §1):
//
//	GET  /tools       the catalog
//	POST /tools/call  call a tool
//	POST /call        the same, as in the spec's examples
//	GET  /health      200 when ready, 503 when not
//
// Paths are relative to where the handler is mounted, so it works under
// any mux and behind [http.StripPrefix]. It is safe for concurrent use.
// Authentication, CORS and request logging are middleware around it.
type Handler struct {
	reg     *Registry
	maxBody int64
	schema  string
	items   bool
	logger  *slog.Logger
	auth    Authenticator

	unavailable atomic.Bool
}

var _ http.Handler = (*Handler)(nil)

// NewHandler returns a handler serving reg. opts may be nil. It panics if
// reg is nil or opts.Schema is not an accepted spelling, since both are
// mistakes in the program rather than in a request.
func NewHandler(reg *Registry, opts *HandlerOptions) *Handler {
	if reg == nil {
		panic("otc: NewHandler: the registry is nil")
	}
	if opts == nil {
		opts = &HandlerOptions{}
	}
	h := &Handler{reg: reg, maxBody: opts.MaxBodyBytes, schema: opts.Schema, items: opts.IncludeItems, logger: opts.Logger, auth: opts.Authenticator}
	if h.maxBody <= 0 {
		h.maxBody = DefaultMaxBodyBytes
	}
	if h.schema == "" {
		h.schema = SchemaOTC
	}
	if !supportedSchema(h.schema) {
		panic(fmt.Sprintf("otc: NewHandler: HandlerOptions.Schema %q is not supported; use otc.SchemaOTC or otc.SchemaOXP", h.schema))
	}
	if h.logger == nil {
		h.logger = reg.logger
	}
	return h
}

// SetReady sets whether the server takes calls. While not ready, GET
// /health answers 503 and calls answer a server error saying the server is
// temporarily unavailable; the catalog is still served. A new handler is
// ready. Call SetReady(false) when draining before shutdown.
func (h *Handler) SetReady(ready bool) { h.unavailable.Store(!ready) }

// ServeHTTP routes a request to one of the endpoints.
func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	defer h.recoverFault(w, r)
	path := strings.TrimPrefix(r.URL.Path, "/")
	switch path {
	case "tools":
		if h.allow(w, r, http.MethodGet, http.MethodHead) {
			if r, ok := h.authenticate(w, r); ok {
				h.listTools(w, r)
			}
		}
	case "tools/call", "call":
		if h.allow(w, r, http.MethodPost) {
			if r, ok := h.authenticate(w, r); ok {
				h.callTool(w, r)
			}
		}
	case "health":
		if h.allow(w, r, http.MethodGet, http.MethodHead) {
			h.health(w)
		}
	default:
		h.writeJSON(w, http.StatusNotFound, errorBody{
			Schema:           h.schema,
			Message:          fmt.Sprintf("No endpoint at '/%s'", truncate(path, 80)),
			DeveloperMessage: "this tool server answers GET /tools, POST /tools/call, POST /call and GET /health",
		})
	}
}

// recoverFault answers a JSON 500 if something in the handler itself
// panics (an author's hook, say), so that no fault reaches the client as
// an HTML page or a dropped connection. Tool panics never get here: the
// registry turns them into tool errors.
func (h *Handler) recoverFault(w http.ResponseWriter, r *http.Request) {
	v := recover()
	if v == nil {
		return
	}
	logFault(h.logger, r, v)
	h.writeJSON(w, http.StatusInternalServerError, errorBody{
		Schema:  h.schema,
		Message: "The tool server failed unexpectedly",
	})
}

// logFault logs a panic recovered in a handler, with its stack. It
// re-panics http.ErrAbortHandler, which a handler panics with on purpose
// to abort a response, so that net/http does what that asks.
func logFault(logger *slog.Logger, r *http.Request, v any) {
	if v == http.ErrAbortHandler {
		panic(v)
	}
	logger.ErrorContext(r.Context(), "otc: handler panicked",
		slog.String("path", r.URL.Path),
		slog.String("panic", describePanic(v)),
		slog.String("stack", string(debug.Stack())))
}

// allow answers 405 unless the request's method is one of methods.
func (h *Handler) allow(w http.ResponseWriter, r *http.Request, methods ...string) bool {
	for _, m := range methods {
		if r.Method == m {
			return true
		}
	}
	allowed := strings.Join(methods, ", ")
	w.Header().Set("Allow", allowed)
	h.writeJSON(w, http.StatusMethodNotAllowed, errorBody{
		Schema:           h.schema,
		Message:          fmt.Sprintf("Method %s is not allowed here", truncate(r.Method, 32)),
		DeveloperMessage: fmt.Sprintf("%s accepts %s", r.URL.Path, allowed),
	})
	return false
}

// authenticate runs the authenticator, if any, before the body is read.
// On success the request's context carries the caller's [Identity]; on
// failure the 401 is written.
func (h *Handler) authenticate(w http.ResponseWriter, r *http.Request) (*http.Request, bool) {
	r, err := authenticateRequest(h.auth, r)
	if err == nil {
		return r, true
	}
	if c := wwwAuthenticate(h.auth); c != "" {
		w.Header().Set("WWW-Authenticate", c)
	}
	h.writeError(w, h.schema, err)
	return r, false
}

// health answers GET /health.
func (h *Handler) health(w http.ResponseWriter) {
	if h.unavailable.Load() {
		h.writeJSON(w, http.StatusServiceUnavailable, struct {
			Schema  string `json:"$schema"`
			Status  string `json:"status"`
			Message string `json:"message"`
		}{h.schema, "unavailable", "The tool server is not taking calls"})
		return
	}
	h.writeJSON(w, http.StatusOK, struct {
		Schema string `json:"$schema"`
		Status string `json:"status"`
	}{h.schema, "ok"})
}

// listTools answers GET /tools. The request may carry a JSON body holding
// only $schema (SPEC §1).
func (h *Handler) listTools(w http.ResponseWriter, r *http.Request) {
	schema := h.schema
	if r.ContentLength != 0 {
		body, rerr := readBody(w, r, h.maxBody)
		defer releaseBuffer(body)
		if rerr != nil {
			h.writeError(w, schema, rerr)
			return
		}
		if len(bytes.TrimSpace(body.Bytes())) > 0 {
			var req struct {
				Schema *string `json:"$schema"`
			}
			if err := decodeObject(body.Bytes(), &req); err != nil {
				h.writeError(w, sentSchema(body.Bytes(), schema), err)
				return
			}
			if req.Schema != nil {
				if !supportedSchema(*req.Schema) {
					h.writeError(w, schema, unsupportedSchema(*req.Schema))
					return
				}
				schema = *req.Schema
			}
		}
	}
	// The catalog array is encoded once per registry snapshot; only the
	// few bytes around it are written per request, so a large catalog is
	// never copied.
	tools := h.reg.current.Load().encodedCatalog()
	head := appendJSONString([]byte(`{"$schema":`), schema)
	head = append(head, `,"tools":`...)
	parts := [][]byte{head, tools}
	if h.items {
		parts = append(parts, []byte(`,"items":`), tools)
	}
	writeBody(w, http.StatusOK, append(parts, []byte("}"))...)
}

// callBody is the body of POST /tools/call. Unknown fields are refused,
// here and in request (SPEC §4).
type callBody struct {
	Schema  *string      `json:"$schema"`
	Request *callRequest `json:"request"`
}

// callRequest is the request object of a call. The context is decoded on
// its own, because unlike the rest it may carry fields this server does
// not know.
type callRequest struct {
	ToolID  *string         `json:"tool_id"`
	CallID  string          `json:"call_id"`
	TraceID string          `json:"trace_id"`
	Input   json.RawMessage `json:"input"`
	Context json.RawMessage `json:"context"`
}

// callTool answers POST /tools/call, following the order of checks of
// SPEC §4: body, $schema, tool, requirements, input, call.
func (h *Handler) callTool(w http.ResponseWriter, r *http.Request) {
	schema := h.schema
	if h.unavailable.Load() {
		h.writeError(w, schema, serverError("The tool server is temporarily unavailable", "the server is draining or not yet ready; retry later or elsewhere"))
		return
	}
	body, rerr := readBody(w, r, h.maxBody)
	defer releaseBuffer(body)
	if rerr != nil {
		h.writeError(w, schema, rerr)
		return
	}
	var env callBody
	if err := decodeObject(body.Bytes(), &env); err != nil {
		h.writeError(w, sentSchema(body.Bytes(), schema), err)
		return
	}
	if env.Schema != nil {
		if !supportedSchema(*env.Schema) {
			h.writeError(w, schema, unsupportedSchema(*env.Schema))
			return
		}
		schema = *env.Schema
	}
	req, err := env.callRequest()
	if err != nil {
		h.writeError(w, schema, err)
		return
	}

	res, err := h.reg.Call(r.Context(), req)
	if err != nil {
		h.writeError(w, schema, err)
		return
	}

	bp := responsePool.Get().(*[]byte)
	out := append((*bp)[:0], `{"$schema":`...)
	out = appendJSONString(out, schema)
	out = append(out, `,"result":{"call_id":`...)
	out = appendJSONString(out, res.CallID)
	out = append(out, `,"duration":`...)
	out = strconv.AppendFloat(out, float64(res.Duration.Microseconds())/1000, 'f', -1, 64)
	if res.Error == nil {
		out = append(out, `,"success":true`...)
		if res.Value != nil {
			out = append(out, `,"value":`...)
			out = append(out, res.Value...)
		}
	} else {
		toolErr, err := json.Marshal(res.Error)
		if err != nil { // cannot happen: every field is a string, bool or int
			toolErr = []byte(`{"message":"The tool failed"}`)
		}
		out = append(out, `,"success":false,"error":`...)
		out = append(out, toolErr...)
	}
	out = append(out, "}}"...)
	writeBody(w, http.StatusOK, out)
	if cap(out) <= maxPooledBuffer {
		*bp = out
		responsePool.Put(bp)
	}
}

// callRequest checks the request object and turns it into the registry's
// protocol-neutral form.
func (env *callBody) callRequest() (*CallRequest, error) {
	req := env.Request
	switch {
	case req == nil:
		return nil, serverError("The request field is required", `the body must be {"$schema": ..., "request": {"tool_id": ..., "input": {...}}}`)
	case req.ToolID == nil:
		return nil, serverError("request.tool_id is required", "tool_id names the tool to call: Toolkit.Tool, Toolkit.Tool@x or Toolkit.Tool@x.y.z")
	case !isObjectOrNull(req.Input):
		return nil, serverError("request.input must be a JSON object", "input maps parameter names to values; send {} or leave it out for a tool without parameters")
	}
	out := &CallRequest{ToolID: *req.ToolID, CallID: req.CallID, TraceID: req.TraceID, Input: req.Input}
	if !isNull(req.Context) {
		if !isObjectOrNull(req.Context) {
			return nil, serverError("request.context must be a JSON object", "context may hold authorization, secrets and user_id")
		}
		// Lenient: fields this server does not know are ignored, as the
		// OpenAPI file allows.
		if err := json.Unmarshal(req.Context, &out.Context); err != nil {
			return nil, serverError("request.context is malformed", describeJSONError(err, "request.context"))
		}
	}
	return out, nil
}

// sentSchema returns the $schema named by a body that failed strict
// decoding (an unknown field, a field of the wrong type), when the body is
// still a JSON object naming a supported spelling, so that the error echoes
// the client's spelling as SPEC §2 asks; otherwise def. It runs only on
// that error path.
func sentSchema(body []byte, def string) string {
	var v struct {
		Schema *string `json:"$schema"`
	}
	if json.Unmarshal(body, &v) == nil && v.Schema != nil && supportedSchema(*v.Schema) {
		return *v.Schema
	}
	return def
}

// unsupportedSchema is the error for a $schema this server does not speak
// (SPEC §2).
func unsupportedSchema(s string) *Error {
	return serverError(
		fmt.Sprintf("Protocol version '%s' is not supported", truncate(s, 80)),
		fmt.Sprintf("accepted $schema values: %s, %s, %s; leave $schema out for the latest", SchemaOTC, SchemaOXP, SchemaOpenAPI))
}

// readBody reads the request body within the size limit. The buffer comes
// from a pool; the caller releases it, even on error.
func readBody(w http.ResponseWriter, r *http.Request, maxBody int64) (*bytes.Buffer, error) {
	if r.ContentLength > maxBody {
		return nil, tooLarge(maxBody)
	}
	buf := getBuffer()
	if r.ContentLength > 0 {
		buf.Grow(int(r.ContentLength) + bytes.MinRead)
	}
	_, err := buf.ReadFrom(http.MaxBytesReader(w, r.Body, maxBody))
	if err != nil {
		if _, ok := errors.AsType[*http.MaxBytesError](err); ok {
			return buf, tooLarge(maxBody)
		}
		return buf, serverError("The request body could not be read", err.Error())
	}
	if !utf8.Valid(buf.Bytes()) {
		return buf, serverError("The request body is not valid UTF-8", "JSON text must be encoded as UTF-8 (RFC 8259)")
	}
	return buf, nil
}

func tooLarge(limit int64) *Error {
	return &Error{Code: CodeTooLarge, Message: fmt.Sprintf("The request body is larger than the limit of %d bytes", limit)}
}

// decodeObject decodes a JSON object into v, refusing unknown fields and
// anything after the object, and turns every failure into a server error
// that says what was wrong without quoting the body.
func decodeObject(body []byte, v any) error {
	trimmed := bytes.TrimLeft(body, " \t\r\n")
	switch {
	case len(trimmed) == 0:
		return serverError("The request body is empty", `send a JSON object: {"request": {"tool_id": ..., "input": {...}}}`)
	case trimmed[0] != '{':
		return serverError("The request body must be a JSON object", "the body is JSON of another kind, or not JSON")
	}
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		var se *json.SyntaxError
		var te *json.UnmarshalTypeError
		switch {
		case errors.As(err, &te):
			return serverError("The request body has the wrong shape: "+describeJSONError(err, ""), `the body is {"$schema": string, "request": {"tool_id": string, "call_id": string, "trace_id": string, "input": object, "context": object}}`)
		case errors.As(err, &se), errors.Is(err, io.ErrUnexpectedEOF):
			return serverError("The request body is not valid JSON", describeJSONError(err, ""))
		case strings.HasPrefix(err.Error(), "json: unknown field "):
			field := strings.TrimPrefix(err.Error(), "json: unknown field ")
			return serverError("Unknown field "+truncate(field, 80),
				`the body accepts "$schema" and "request"; "request" accepts "tool_id", "call_id", "trace_id", "input" and "context"`)
		}
		return serverError("The request body has the wrong shape", describeJSONError(err, ""))
	}
	if len(bytes.TrimSpace(body[dec.InputOffset():])) > 0 {
		return serverError("The request body has data after the JSON object", "send exactly one JSON object")
	}
	return nil
}

// describeJSONError explains a decoding error in terms of the protocol's
// fields. It never quotes the input: a type error names the field and the
// expected kind, a syntax error its position.
func describeJSONError(err error, prefix string) string {
	var te *json.UnmarshalTypeError
	var se *json.SyntaxError
	switch {
	case errors.As(err, &te):
		field := joinPath(prefix, te.Field)
		if field == "" {
			field = "the value"
		}
		return fmt.Sprintf("%s must be %s, not %s", field, jsonKindOf(te.Type), strings.Fields(te.Value + " value")[0])
	case errors.As(err, &se):
		return fmt.Sprintf("%s (at byte %d)", strings.TrimPrefix(se.Error(), "json: "), se.Offset)
	case errors.Is(err, io.ErrUnexpectedEOF):
		return "the JSON ends before it is complete"
	}
	return strings.TrimPrefix(err.Error(), "json: ")
}

// writeError answers err: an [*Error] with its class's status and body
// (SPEC §6). Anything else is a fault of this library and answers 500,
// still as JSON.
func (h *Handler) writeError(w http.ResponseWriter, schema string, err error) {
	var e *Error
	if !errors.As(err, &e) {
		h.logger.Error("otc: unexpected error", slog.String("error", err.Error()))
		e = &Error{Message: "The tool server failed unexpectedly"}
	}
	h.writeJSON(w, e.Code.HTTPStatus(), errorBody{
		Schema:              schema,
		Message:             e.Message,
		DeveloperMessage:    e.DeveloperMessage,
		ParameterErrors:     e.ParameterErrors,
		MissingRequirements: e.MissingRequirements,
	})
}

// writeJSON encodes v and writes it with the status.
func (h *Handler) writeJSON(w http.ResponseWriter, status int, v any) {
	b, err := json.Marshal(v)
	if err != nil {
		h.logger.Error("otc: encoding a response", slog.String("error", err.Error()))
		status, b = http.StatusInternalServerError, []byte(`{"message":"The tool server failed unexpectedly"}`)
	}
	writeBody(w, status, b)
}

// writeBody sends a JSON body, given in one or more parts. A failed write
// means the client has gone; there is no one left to tell.
func writeBody(w http.ResponseWriter, status int, parts ...[]byte) {
	n := 0
	for _, p := range parts {
		n += len(p)
	}
	hdr := w.Header()
	hdr.Set("Content-Type", "application/json")
	hdr.Set("X-Content-Type-Options", "nosniff")
	hdr.Set("Content-Length", strconv.Itoa(n))
	w.WriteHeader(status)
	for _, p := range parts {
		if _, err := w.Write(p); err != nil {
			return
		}
	}
}

// bufferPool recycles request and response buffers. Buffers that grew past
// maxPooledBuffer are dropped, so one large request does not pin memory.
var bufferPool = sync.Pool{New: func() any { return new(bytes.Buffer) }}

const maxPooledBuffer = 64 << 10

// responsePool recycles the buffers successful calls are encoded into.
var responsePool = sync.Pool{New: func() any { b := make([]byte, 0, 512); return &b }}

func getBuffer() *bytes.Buffer {
	b := bufferPool.Get().(*bytes.Buffer)
	b.Reset()
	return b
}

func releaseBuffer(b *bytes.Buffer) {
	if b != nil && b.Cap() <= maxPooledBuffer {
		bufferPool.Put(b)
	}
}

// appendJSONString appends s as a JSON string. Control characters, quotes,
// backslashes and the line separators U+2028 and U+2029 are escaped, and
// invalid UTF-8 becomes U+FFFD, as encoding/json does.
func appendJSONString(dst []byte, s string) []byte {
	const hexDigits = "0123456789abcdef"
	dst = append(dst, '"')
	start := 0
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			if c >= 0x20 && c != '"' && c != '\\' {
				i++
				continue
			}
			dst = append(dst, s[start:i]...)
			switch c {
			case '"', '\\':
				dst = append(dst, '\\', c)
			case '\n':
				dst = append(dst, '\\', 'n')
			case '\r':
				dst = append(dst, '\\', 'r')
			case '\t':
				dst = append(dst, '\\', 't')
			default:
				dst = append(dst, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xF])
			}
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			dst = append(dst, s[start:i]...)
			dst = append(dst, `\ufffd`...)
			i += size
			start = i
			continue
		}
		if r == '\u2028' || r == '\u2029' {
			dst = append(dst, s[start:i]...)
			dst = append(dst, '\\', 'u', '2', '0', '2', hexDigits[r&0xF])
			i += size
			start = i
			continue
		}
		i += size
	}
	dst = append(dst, s[start:]...)
	return append(dst, '"')
}
