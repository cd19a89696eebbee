package otc

import (
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"strings"
	"time"

	"github.com/otcgo/otc/internal/jsonparse"
	"github.com/otcgo/otc/internal/wire"
)

// This file serves a registry as the plain REST tool API that many agent
// runtimes use: a planner view, full definitions by name, and invocation,
// with dotted error codes. It is an adapter over the
// same call path as the OTC handler, so validation, requirements and tool
// behaviour are identical.

// RESTSchemaVersion is the schema_version of the REST API's documents.
const RESTSchemaVersion = "0.1.0"

// The REST API's error codes. The first eight are the API's own; the last
// five are this library's additions for authentication, the body limit,
// slow clients, calls that middleware refused and call ids reused for a
// different call, which the API does not cover.
const (
	RESTRouteNotFound    = "route.not_found"            // 404
	RESTMethodNotAllowed = "request.method_not_allowed" // 405
	RESTInvalidJSON      = "request.invalid_json"       // 400
	RESTInvalidShape     = "request.invalid_shape"      // 400
	RESTToolNotFound     = "tool.not_found"             // 404
	RESTInvalidArgs      = "tool.invalid_args"          // 400
	RESTExecutionError   = "tool.execution_error"       // 500
	RESTHandlerError     = "tool.handler_error"         // 500
	RESTUnauthenticated  = "request.unauthenticated"    // 401
	RESTRequestTooLarge  = "request.too_large"          // 413
	RESTRequestTimeout   = "request.timeout"            // 408
	RESTCallRefused      = "request.refused"            // 403
	RESTCallIDReused     = "request.call_id_reused"     // 409
)

// restStatus maps each error code to its HTTP status.
func restStatus(code string) int {
	switch code {
	case RESTInvalidArgs, RESTInvalidJSON, RESTInvalidShape:
		return http.StatusBadRequest
	case RESTUnauthenticated:
		return http.StatusUnauthorized
	case RESTCallRefused:
		return http.StatusForbidden
	case RESTCallIDReused:
		return http.StatusConflict
	case RESTToolNotFound, RESTRouteNotFound:
		return http.StatusNotFound
	case RESTMethodNotAllowed:
		return http.StatusMethodNotAllowed
	case RESTRequestTooLarge:
		return http.StatusRequestEntityTooLarge
	case RESTRequestTimeout:
		return http.StatusRequestTimeout
	case RESTExecutionError, RESTHandlerError:
		return http.StatusInternalServerError
	}
	return http.StatusInternalServerError
}

// RESTOptions configures a [RESTHandler]. The zero value, and nil, give the
// defaults described on each field.
type RESTOptions struct {
	// MaxBodyBytes limits the size of a request body; a larger one is
	// answered 413. Zero or less means DefaultMaxBodyBytes.
	MaxBodyBytes int64
	// Logger receives faults of the handler itself. Nil means the
	// registry's logger.
	Logger *slog.Logger
	// BodyReadTimeout bounds the time a client may take to send a request
	// body, as [HandlerOptions.BodyReadTimeout] does for the OTC handler.
	// Zero means DefaultBodyReadTimeout; a negative value means no limit.
	BodyReadTimeout time.Duration
	// Authenticator, when set, must accept every request, as for the OTC
	// [Handler]. Nil means no authentication.
	Authenticator Authenticator
}

// RESTHandler serves a [Registry] as a REST tool API:
//
//	GET  /tools                the planner view: [{"name", "description"}]
//	GET  /tools/{name}         one tool's full definition
//	POST /tools/{name}:invoke  call it
//
// {name} is the tool's name (Calculator_Add), optionally followed by a
// version as in an OTC tool id (Calculator_Add@1.0.0, Calculator_Add@1);
// without one it is the highest version. Paths are relative to where the
// handler is mounted; the API's conventional prefix is /v1:
//
//	mux.Handle("/v1/", http.StripPrefix("/v1", otc.NewRESTHandler(reg, nil)))
//
// Every response carries X-Request-Id: the client's, or a generated UUID
// when it sent none. The request id is also the call id a tool sees, and
// the idempotency key of a retry; a header that cannot be one (over
// [MaxIDLength] bytes, or any byte that is not visible ASCII) is answered
// 400 request.invalid_shape rather than replaced, so that a retry is never
// silently run as a new call.
type RESTHandler struct {
	reg     *Registry
	maxBody int64
	timeout time.Duration
	logger  *slog.Logger
	auth    Authenticator
}

var _ http.Handler = (*RESTHandler)(nil)

// NewRESTHandler returns a REST handler serving reg. opts may be nil. It
// panics if reg is nil.
func NewRESTHandler(reg *Registry, opts *RESTOptions) *RESTHandler {
	if reg == nil {
		panic("otc: NewRESTHandler: the registry is nil")
	}
	if opts == nil {
		opts = &RESTOptions{}
	}
	h := &RESTHandler{reg: reg, maxBody: opts.MaxBodyBytes, timeout: bodyTimeout(opts.BodyReadTimeout), logger: opts.Logger, auth: opts.Authenticator}
	if h.maxBody <= 0 {
		h.maxBody = DefaultMaxBodyBytes
	}
	if h.logger == nil {
		h.logger = reg.logger
	}
	return h
}

// restError is the Error document of the REST API.
type restError struct {
	SchemaVersion string         `json:"schema_version"`
	Code          string         `json:"code"`
	Message       string         `json:"message"`
	Retryable     bool           `json:"retryable"`
	Details       map[string]any `json:"details,omitempty"`
}

// restResult is the ToolResult document: the answer to an invocation, and
// the envelope of every error answer, so that a client finds error.code in
// the same place whatever went wrong.
type restResult struct {
	SchemaVersion string          `json:"schema_version"`
	OK            bool            `json:"ok"`
	Result        json.RawMessage `json:"result,omitempty"`
	Error         *restError      `json:"error,omitempty"`
	Metrics       *restMetrics    `json:"metrics,omitempty"`
}

type restMetrics struct {
	LatencyMS float64 `json:"latency_ms"`
}

// restDefinition is the ToolDefinition document of GET /tools/{name}.
type restDefinition struct {
	SchemaVersion string          `json:"schema_version"`
	Name          string          `json:"name"`
	Description   string          `json:"description"`
	Version       string          `json:"version"`
	Parameters    json.RawMessage `json:"parameters"`
	Returns       json.RawMessage `json:"returns,omitempty"`
	Tags          []string        `json:"tags"`
	Source        string          `json:"source"`
}

// ServeHTTP routes a request.
func (h *RESTHandler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	id, idErr := requestID(r)
	w.Header().Set("X-Request-Id", id)
	defer h.recoverFault(w, r)
	if idErr != nil {
		h.fail(w, RESTInvalidShape, restMessage(idErr), nil)
		return
	}

	path := strings.TrimPrefix(r.URL.Path, "/")
	if path == "tools" {
		if h.allow(w, r, http.MethodGet, http.MethodHead) && h.authenticate(w, &r) {
			h.list(w)
		}
		return
	}
	rest, ok := strings.CutPrefix(path, "tools/")
	if !ok || rest == "" || strings.Contains(rest, "/") {
		h.fail(w, RESTRouteNotFound, fmt.Sprintf("No route for '/%s'", wire.Truncate(path, 80)), nil)
		return
	}
	if name, ok := strings.CutSuffix(rest, ":invoke"); ok {
		if h.allow(w, r, http.MethodPost) && h.authenticate(w, &r) {
			h.invoke(w, r, name)
		}
		return
	}
	if h.allow(w, r, http.MethodGet, http.MethodHead) && h.authenticate(w, &r) {
		h.describe(w, rest)
	}
}

// requestID returns the request's id: the client's X-Request-Id, or a new
// UUID when it sent none. An X-Request-Id that cannot be a call id is an
// error, returned with a new UUID to name the answer. Its length is held
// to OTC's rule for call_id (checkID); its bytes to visible ASCII, since a
// header carries no character set and the id is echoed in one.
//
// Replacing an unusable id, as this view once did, turned a client's
// retry into a second run of the tool: the retry's key was a fresh UUID.
func requestID(r *http.Request) (string, error) {
	id := r.Header.Get("X-Request-Id")
	if id == "" {
		return NewCallID(), nil
	}
	if err := checkID("X-Request-Id", id); err != nil {
		return NewCallID(), err
	}
	for i := 0; i < len(id); i++ {
		if c := id[i]; c <= ' ' || c > '~' {
			what := "a control character"
			switch {
			case c == ' ':
				what = "a space"
			case c >= 0x80:
				what = "a byte that is not ASCII"
			}
			return NewCallID(), badRequest(fmt.Sprintf("X-Request-Id holds %s at byte %d", what, i),
				"the request id is the call id: 1 to 128 visible ASCII characters, such as a UUID; send the same one with each retry of a call")
		}
	}
	return id, nil
}

// recoverFault answers a JSON 500 if the handler itself panics.
func (h *RESTHandler) recoverFault(w http.ResponseWriter, r *http.Request) {
	v := recover()
	if v == nil {
		return
	}
	logFault(h.logger, r, v)
	h.fail(w, RESTHandlerError, "The tool server failed unexpectedly", nil)
}

func (h *RESTHandler) allow(w http.ResponseWriter, r *http.Request, methods ...string) bool {
	for _, m := range methods {
		if r.Method == m {
			return true
		}
	}
	w.Header().Set("Allow", strings.Join(methods, ", "))
	h.fail(w, RESTMethodNotAllowed, fmt.Sprintf("Method %s is not allowed here; use %s", wire.Truncate(r.Method, 32), strings.Join(methods, " or ")), nil)
	return false
}

// authenticate runs the authenticator, if any, and on success puts the
// caller's identity in the request's context.
func (h *RESTHandler) authenticate(w http.ResponseWriter, r **http.Request) bool {
	authed, err := authenticateRequest(h.auth, *r)
	if err == nil {
		*r = authed
		return true
	}
	if c := WWWAuthenticate(h.auth); c != "" {
		w.Header().Set("WWW-Authenticate", c)
	}
	var details map[string]any
	if err.Reason != "" {
		details = map[string]any{"reason": err.Reason}
	}
	h.fail(w, restCodeOf(err), err.Message, details)
	return false
}

// restCodeOf maps an error class to the REST code that says the same.
func restCodeOf(e *Error) string {
	switch {
	case e.Code == CodeUnauthenticated:
		return RESTUnauthenticated
	case e.Code == CodeTooLarge:
		return RESTRequestTooLarge
	case e.Code == CodeRequestTimeout:
		return RESTRequestTimeout
	case e.Code == CodeInvalidInput:
		return RESTInvalidArgs
	case e.Code == CodeForbidden:
		return RESTCallRefused
	case errors.Is(e, ErrToolNotFound):
		return RESTToolNotFound
	case errors.Is(e, ErrCallIDReused):
		return RESTCallIDReused
	case OutcomeOf(CallResult{}, e) == OutcomeRefused:
		return RESTCallRefused
	}
	return RESTInvalidShape
}

// list answers GET /tools: one {name, description} per tool, for its
// highest version, in catalog order.
func (h *RESTHandler) list(w http.ResponseWriter) {
	cat := h.reg.current.Load()
	type entry struct {
		Name        string `json:"name"`
		Description string `json:"description"`
	}
	out := make([]entry, 0, len(cat.tools))
	for _, t := range cat.list {
		// One entry per tool: its highest version that this view may call.
		fam := cat.tools[t.key]
		if latestAllowed(fam, ProtocolHTTP) == t {
			out = append(out, entry{Name: t.def.Name, Description: t.def.Description})
		}
	}
	h.writeJSON(w, http.StatusOK, out)
}

// describe answers GET /tools/{name}.
func (h *RESTHandler) describe(w http.ResponseWriter, name string) {
	t, err := h.reg.resolveNameFor(name, ProtocolHTTP)
	if err == nil && !t.def.Policy.AllowsProtocol(ProtocolHTTP) {
		// A tool the REST view may not call is not described either.
		err = &Error{Code: CodeServerError, Message: fmt.Sprintf("Tool '%s' was not found", wire.Truncate(name, 80)), cause: ErrToolNotFound}
	}
	if err != nil {
		h.fail(w, RESTToolNotFound, errorMessage(err), nil)
		return
	}
	d := t.def
	h.writeJSON(w, http.StatusOK, restDefinition{
		SchemaVersion: RESTSchemaVersion,
		Name:          d.Name,
		Description:   d.Description,
		Version:       d.Version,
		Parameters:    d.InputSchema.Parameters,
		Returns:       d.OutputSchema,
		Tags:          []string{t.key[:strings.IndexByte(t.key, '.')]},
		Source:        "otc:" + d.ID,
	})
}

// invoke answers POST /tools/{name}:invoke through the registry's call
// path.
func (h *RESTHandler) invoke(w http.ResponseWriter, r *http.Request, name string) {
	t, err := h.reg.resolveNameFor(name, ProtocolHTTP)
	if err != nil {
		// The pipeline observes the failure before the body is read. A
		// name the REST view cannot resolve, malformed version included,
		// is a tool.not_found, unless middleware answered otherwise.
		req := &CallRequest{ToolID: name, CallID: w.Header().Get("X-Request-Id"), Protocol: ProtocolHTTP, HTTPRequest: r}
		if _, served := h.reg.serve(r.Context(), req, name, nil, err); served != err {
			h.callError(w, served)
		} else {
			h.fail(w, RESTToolNotFound, errorMessage(err), nil)
		}
		return
	}
	body, err := readBody(w, r, h.maxBody, h.timeout)
	defer releaseBuffer(body)
	if err != nil {
		code := RESTInvalidJSON
		if e, ok := errors.AsType[*Error](err); ok && (e.Code == CodeTooLarge || e.Code == CodeRequestTimeout) {
			code = restCodeOf(e)
		}
		h.fail(w, code, errorMessage(err), nil)
		return
	}
	doc, err := jsonparse.Parse(body.Bytes())
	if err != nil {
		h.fail(w, RESTInvalidJSON, restMessage(bodyError(body.Bytes(), err, invocationShape)), nil)
		return
	}
	defer jsonparse.Release(doc)
	req, err := readInvocation(doc)
	if err != nil {
		h.fail(w, RESTInvalidShape, restMessage(err), nil)
		return
	}
	req.CallID = w.Header().Get("X-Request-Id")
	req.generatedID = req.CallID != r.Header.Get("X-Request-Id")
	req.ToolID, req.Protocol, req.HTTPRequest, req.RequestBody = t.def.ID, ProtocolHTTP, r, body.Bytes()

	res, err := h.reg.serve(r.Context(), req, name, t, nil)
	if err != nil {
		h.callError(w, err)
		return
	}
	armWriteDeadline(w, r)
	if res.Replayed {
		w.Header().Set(HeaderReplayed, "true")
	}
	out := restResult{
		SchemaVersion: RESTSchemaVersion,
		OK:            res.Error == nil,
		Result:        res.Value,
		Metrics:       &restMetrics{LatencyMS: float64(res.Duration.Microseconds()) / 1000},
	}
	status := http.StatusOK
	if te := res.Error; te != nil {
		code := RESTExecutionError
		if res.Unexpected {
			code = RESTHandlerError
		}
		out.Error = &restError{
			SchemaVersion: RESTSchemaVersion,
			Code:          code,
			Message:       te.Message,
			Retryable:     te.CanRetry,
			Details:       toolErrorDetails(te),
		}
		status = restStatus(code)
	}
	h.writeJSON(w, status, out)
}

// callError writes the answer to a call that failed before its function
// ran.
func (h *RESTHandler) callError(w http.ResponseWriter, err error) {
	e, ok := errors.AsType[*Error](err)
	if !ok { // the pipeline returns only *Error
		e = serverError(err.Error(), "")
	}
	var details map[string]any
	switch {
	case e.ParameterErrors != nil:
		details = map[string]any{"parameter_errors": e.ParameterErrors}
	case e.MissingRequirements != nil:
		details = map[string]any{"missing_requirements": e.MissingRequirements}
	case e.Reason != "":
		details = map[string]any{"reason": e.Reason}
		if e.DeveloperMessage != "" {
			details["developer_message"] = e.DeveloperMessage
		}
		if e.Code == CodeUnauthenticated {
			w.Header().Set("WWW-Authenticate", "Bearer")
		}
	}
	h.fail(w, restCodeOf(e), e.Message, details)
}

// invocationShape describes the invocation document for messages.
const invocationShape = `send {"schema_version": "0.1.0", "args": {...}, "context": {...}, "trace": {"trace_id": ...}}`

// restMessage is the message of a REST error answer: the REST API has no
// developer message, so a malformed request's details are appended.
func restMessage(err error) string {
	e, ok := errors.AsType[*Error](err)
	if !ok {
		return err.Error()
	}
	if e.DeveloperMessage == "" || e.Message == "The request body is empty" {
		return e.Message
	}
	return e.Message + ": " + e.DeveloperMessage
}

// readInvocation reads a ToolInvocationRequest document (parsed into d)
// into the registry's protocol-neutral form. Fields it does not name are
// ignored; the names it reads are matched exactly and may appear once.
func readInvocation(d *jsonparse.Document) (*CallRequest, error) {
	if d.Kind(0) != jsonparse.KindObject {
		return nil, serverError("The request body must be a JSON object", "")
	}
	fs := []field{{name: "schema_version"}, {name: "args"}, {name: "context"}, {name: "trace"}}
	if err := readFields(d, 0, "", fs, false, ""); err != nil {
		return nil, err
	}
	switch v := fs[0].node; {
	case v < 0 || d.Kind(v) == jsonparse.KindNull:
		return nil, serverError("schema_version is required", "")
	case d.Kind(v) != jsonparse.KindString:
		return nil, wrongShape(d, v, "schema_version", "a string", invocationShape)
	case !d.StringIs(v, RESTSchemaVersion):
		return nil, serverError(fmt.Sprintf("schema_version '%s' is not supported; send %s", wire.Truncate(d.StringValue(v), 40), RESTSchemaVersion), "")
	}
	args := fs[1].node
	switch {
	case args < 0:
		return nil, serverError("args is required: an object of the tool's arguments, {} for none", "")
	case d.Kind(args) != jsonparse.KindObject:
		return nil, serverError("args must be a JSON object", "")
	}
	req := &CallRequest{Input: d.Raw(args), doc: d, root: args}
	if ok, err := optObject(d, fs[2].node, "context", contextShape); err != nil {
		return nil, err
	} else if ok {
		if err := readCallContext(d, fs[2].node, "context", &req.Context); err != nil {
			return nil, err
		}
	}
	if ok, err := optObject(d, fs[3].node, "trace", invocationShape); err != nil {
		return nil, err
	} else if ok {
		ts := []field{{name: "trace_id"}}
		if err := readFields(d, fs[3].node, "trace", ts, false, ""); err != nil {
			return nil, err
		}
		var err error
		if req.TraceID, err = optString(d, ts[0].node, "trace.trace_id", invocationShape); err != nil {
			return nil, err
		}
		if err := checkIDs("", req.TraceID); err != nil {
			return nil, err
		}
	}
	return req, nil
}

// toolErrorDetails carries the parts of a tool error that the REST Error
// document has no field for.
func toolErrorDetails(te *ToolError) map[string]any {
	d := map[string]any{}
	if te.DeveloperMessage != "" {
		d["developer_message"] = te.DeveloperMessage
	}
	if te.AdditionalPromptContent != "" {
		d["additional_prompt_content"] = te.AdditionalPromptContent
	}
	if te.RetryAfter > 0 {
		d["retry_after_ms"] = te.retryAfterMS()
	}
	if len(d) == 0 {
		return nil
	}
	return d
}

// errorMessage is the user-facing message of an error.
func errorMessage(err error) string {
	if e, ok := errors.AsType[*Error](err); ok {
		return e.Message
	}
	return err.Error()
}

// fail writes an error answer.
func (h *RESTHandler) fail(w http.ResponseWriter, code, message string, details map[string]any) {
	h.writeJSON(w, restStatus(code), restResult{
		SchemaVersion: RESTSchemaVersion,
		Error: &restError{
			SchemaVersion: RESTSchemaVersion,
			Code:          code,
			Message:       message,
			Details:       details,
		},
	})
}

func (h *RESTHandler) writeJSON(w http.ResponseWriter, status int, v any) {
	b, err := json.Marshal(v)
	if err != nil {
		h.logger.Error("otc: encoding a REST response", slog.String("error", err.Error()))
		status = http.StatusInternalServerError
		b = []byte(`{"schema_version":"` + RESTSchemaVersion + `","ok":false,"error":{"schema_version":"` + RESTSchemaVersion + `","code":"` + RESTHandlerError + `","message":"The tool server failed unexpectedly","retryable":false}}`)
	}
	writeBody(w, status, b)
}
