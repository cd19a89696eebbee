package rest

import (
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"strings"
	"sync/atomic"
	"time"

	"github.com/otcgo/otc"
	"github.com/otcgo/otc/internal/envelope"
	"github.com/otcgo/otc/internal/hook"
	"github.com/otcgo/otc/internal/jsonparse"
	"github.com/otcgo/otc/internal/viewcache"
	"github.com/otcgo/otc/internal/wire"
)

// seam is what package otc lends the packages beside it (internal/hook).
var seam = hook.Of[otc.Registry, otc.Policy, otc.ToolDefinition, otc.CallRequest, otc.Identity, otc.Error]()

// SchemaVersion is the schema_version of the REST API's documents.
const SchemaVersion = "0.1.0"

// The REST API's error codes. The first eight are the API's own; the last
// five are this library's additions for authentication, the body limit,
// slow clients, calls that middleware refused and call ids reused for a
// different call, which the API does not cover.
const (
	CodeRouteNotFound    = "route.not_found"            // 404
	CodeMethodNotAllowed = "request.method_not_allowed" // 405
	CodeInvalidJSON      = "request.invalid_json"       // 400
	CodeInvalidShape     = "request.invalid_shape"      // 400
	CodeToolNotFound     = "tool.not_found"             // 404
	CodeInvalidArgs      = "tool.invalid_args"          // 400
	CodeExecutionError   = "tool.execution_error"       // 500
	CodeHandlerError     = "tool.handler_error"         // 500
	CodeUnauthenticated  = "request.unauthenticated"    // 401
	CodeRequestTooLarge  = "request.too_large"          // 413
	CodeRequestTimeout   = "request.timeout"            // 408
	CodeCallRefused      = "request.refused"            // 403
	CodeCallIDReused     = "request.call_id_reused"     // 409
	CodeUnavailable      = "request.unavailable"        // 503
	CodeRateLimited      = "request.rate_limited"       // 429
)

// restStatus maps each error code to its HTTP status.
func restStatus(code string) int {
	switch code {
	case CodeInvalidArgs, CodeInvalidJSON, CodeInvalidShape:
		return http.StatusBadRequest
	case CodeUnauthenticated:
		return http.StatusUnauthorized
	case CodeCallRefused:
		return http.StatusForbidden
	case CodeCallIDReused:
		return http.StatusConflict
	case CodeToolNotFound, CodeRouteNotFound:
		return http.StatusNotFound
	case CodeMethodNotAllowed:
		return http.StatusMethodNotAllowed
	case CodeRequestTooLarge:
		return http.StatusRequestEntityTooLarge
	case CodeRequestTimeout:
		return http.StatusRequestTimeout
	case CodeExecutionError, CodeHandlerError:
		return http.StatusInternalServerError
	case CodeUnavailable:
		return http.StatusServiceUnavailable
	case CodeRateLimited:
		return http.StatusTooManyRequests
	}
	return http.StatusInternalServerError
}

// Options configures a [Handler]. The zero value, and nil, give the
// defaults described on each field.
type Options struct {
	// MaxBodyBytes limits the size of a request body; a larger one is
	// answered 413. Zero or less means [otc.DefaultMaxBodyBytes].
	MaxBodyBytes int64
	// Logger receives faults of the handler itself. Nil means the
	// registry's logger.
	Logger *slog.Logger
	// BodyReadTimeout bounds the time a client may take to send a request
	// body, as [otc.HandlerOptions.BodyReadTimeout] does for the OTC
	// handler. Zero means [otc.DefaultBodyReadTimeout]; a negative value
	// means no limit.
	BodyReadTimeout time.Duration
	// Authenticator, when set, must accept every request, as for the OTC
	// [otc.Handler]. Nil means no authentication.
	Authenticator otc.Authenticator
	// Search, when set, answers GET /tools?q=…&limit=…, as
	// [otc.HandlerOptions.Search] does for the OTC handler: search.Query
	// is one, and what mount.All gives. Nil answers a search 400.
	Search func(r *http.Request, reg *otc.Registry, protocol string) ([]string, error)
}

// Handler serves an [otc.Registry] as a REST tool API:
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
//	mux.Handle("/v1/", http.StripPrefix("/v1", rest.NewHandler(reg, nil)))
//
// Every response carries X-Request-Id: the client's, or a generated UUID
// when it sent none. The request id is also the call id a tool sees, and
// the idempotency key of a retry; a header that cannot be one (over
// [otc.MaxIDLength] bytes, or any byte that is not visible ASCII) is answered
// 400 request.invalid_shape rather than replaced, so that a retry is never
// silently run as a new call.
type Handler struct {
	reg     *otc.Registry
	maxBody int64
	timeout time.Duration
	logger  *slog.Logger
	// faultBody answers a panic of the handler itself (wire.Recover).
	faultBody []byte
	auth      otc.Authenticator
	searcher  func(r *http.Request, reg *otc.Registry, protocol string) ([]string, error)
	planner   atomic.Pointer[plannerView]
	// views holds the planner views of the callers who see only some of
	// the tools, by visibility key.
	views viewcache.Cache[[]byte]
}

var _ http.Handler = (*Handler)(nil)

// NewHandler returns a REST handler serving reg. opts may be nil. It
// panics if reg is nil.
func NewHandler(reg *otc.Registry, opts *Options) *Handler {
	if reg == nil {
		panic("otc: rest.NewHandler: the registry is nil")
	}
	if opts == nil {
		opts = &Options{}
	}
	h := &Handler{reg: reg, logger: opts.Logger, auth: opts.Authenticator, searcher: opts.Search}
	h.maxBody, h.timeout = wire.BodyLimits(opts.MaxBodyBytes, opts.BodyReadTimeout)
	if h.logger == nil {
		h.logger = reg.Logger()
	}
	h.faultBody, _ = json.Marshal(restResult{SchemaVersion: SchemaVersion, Error: &restError{SchemaVersion: SchemaVersion,
		Code: CodeHandlerError, Message: "The tool server failed unexpectedly"}})
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

	// The API's document has no place for a tool's title, hints or icons:
	// they follow its own members, spelt as MCP spells them, as additions
	// a client that does not know them skips. The tool's _meta, MCP's
	// envelope for MCP's own extensions, is left to MCP.
	Title       string               `json:"title,omitempty"`
	Annotations *otc.ToolAnnotations `json:"annotations,omitempty"`
	Icons       []otc.Icon           `json:"icons,omitempty"`
}

// ServeHTTP routes a request.
func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	id, idErr := requestID(r)
	w.Header().Set("X-Request-Id", id)
	defer wire.Recover(h.logger, w, r, h.faultBody)
	if idErr != nil {
		h.fail(w, CodeInvalidShape, restMessage(idErr), nil)
		return
	}

	path := strings.TrimPrefix(r.URL.Path, "/")
	if path == "tools" {
		if h.allow(w, r, http.MethodGet, http.MethodHead) && h.authenticate(w, &r) {
			h.list(w, r)
		}
		return
	}
	rest, ok := strings.CutPrefix(path, "tools/")
	if !ok || rest == "" || strings.Contains(rest, "/") {
		h.fail(w, CodeRouteNotFound, fmt.Sprintf("No route for '/%s'", wire.Truncate(path, 80)), nil)
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
		return otc.NewCallID(), nil
	}
	if len(id) > otc.MaxIDLength {
		return otc.NewCallID(), idTooLong("X-Request-Id")
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
			return otc.NewCallID(), &otc.Error{
				Code:             otc.CodeServerError,
				Message:          fmt.Sprintf("X-Request-Id holds %s at byte %d", what, i),
				DeveloperMessage: "the request id is the call id: 1 to 128 visible ASCII characters, such as a UUID; send the same one with each retry of a call",
			}
		}
	}
	return id, nil
}

func (h *Handler) allow(w http.ResponseWriter, r *http.Request, methods ...string) bool {
	for _, m := range methods {
		if r.Method == m {
			return true
		}
	}
	w.Header().Set("Allow", strings.Join(methods, ", "))
	h.fail(w, CodeMethodNotAllowed, fmt.Sprintf("Method %s is not allowed here; use %s", wire.Truncate(r.Method, 32), strings.Join(methods, " or ")), nil)
	return false
}

// authenticate runs the authenticator, if any, and on success puts the
// caller's identity in the request's context.
func (h *Handler) authenticate(w http.ResponseWriter, r **http.Request) bool {
	authed, err := otc.Authenticate(h.auth, *r)
	if err == nil {
		*r = authed
		return true
	}
	h.challenge(w, err)
	if err.Code == otc.CodeUnavailable || err.Code == otc.CodeRateLimited {
		wire.SetRetryAfter(w.Header(), err.RetryAfter)
	}
	var details map[string]any
	if err.Reason != "" {
		details = refusalDetails(err)
	}
	h.fail(w, restCodeOf(err), err.Message, details)
	return false
}

// challenge sets the WWW-Authenticate header of an answer refusing the
// request with e: a 401, or a 403 for want of scopes ([otc.Challenge]).
func (h *Handler) challenge(w http.ResponseWriter, e *otc.Error) {
	if c := otc.Challenge(h.auth, e); c != "" {
		w.Header().Set("WWW-Authenticate", c)
	}
}

// refusalDetails are the details of a refusal that carries a reason: the
// reason, the developer message, and the scopes to ask for when the
// refusal names some.
func refusalDetails(e *otc.Error) map[string]any {
	d := map[string]any{"reason": e.Reason}
	if e.DeveloperMessage != "" {
		d["developer_message"] = e.DeveloperMessage
	}
	if len(e.RequiredScopes) > 0 {
		d["required_scopes"] = e.RequiredScopes
	}
	return d
}

// restCodeOf maps an error class to the REST code that says the same.
func restCodeOf(e *otc.Error) string {
	switch {
	case e.Code == otc.CodeUnauthenticated:
		return CodeUnauthenticated
	case e.Code == otc.CodeTooLarge:
		return CodeRequestTooLarge
	case e.Code == otc.CodeRequestTimeout:
		return CodeRequestTimeout
	case e.Code == otc.CodeInvalidInput:
		return CodeInvalidArgs
	case e.Code == otc.CodeForbidden:
		return CodeCallRefused
	case e.Code == otc.CodeUnavailable:
		return CodeUnavailable
	case e.Code == otc.CodeRateLimited:
		return CodeRateLimited
	case errors.Is(e, otc.ErrToolNotFound):
		return CodeToolNotFound
	case errors.Is(e, otc.ErrCallIDReused):
		return CodeCallIDReused
	case otc.OutcomeOf(otc.CallResult{}, e) == otc.OutcomeRefused:
		return CodeCallRefused
	}
	return CodeInvalidShape
}

// list answers GET /tools: one {name, description} per tool, for its
// highest version that this view may call, in catalog order, among the
// tools the caller may see ([otc.Registry.Visibility]). A tool whose
// highest version the caller may not see is left out, even when it may
// see an older one: a call by the bare name reaches the highest, and
// would be refused.
func (h *Handler) list(w http.ResponseWriter, r *http.Request) {
	if r.URL.Query().Has("q") {
		h.search(w, r)
		return
	}
	p := h.plannerView()
	body := p.body
	if v := h.reg.Visibility(otc.CallerIdentity(r.Context()), otc.ProtocolHTTP); v.Key() != "" {
		if v.Revision() == p.revision {
			body = h.views.Get(p.revision, v.Key(), func() []byte { return p.encode(v) })
		} else { // a registration came between the two reads: served, not kept
			body = p.encode(v)
		}
	}
	wire.WriteBody(w, http.StatusOK, body)
}

// search answers GET /tools?q=…&limit=…: the planner view's entries of
// the tools the caller may call here that match q, best first (10 unless
// limit says otherwise), through Options.Search.
func (h *Handler) search(w http.ResponseWriter, r *http.Request) {
	if h.searcher == nil {
		h.fail(w, CodeInvalidShape, "This server does not search its tools; list them without q", nil)
		return
	}
	ids, err := h.searcher(r, h.reg, otc.ProtocolHTTP)
	if err != nil {
		var oe *otc.Error
		if errors.As(err, &oe) && oe.Code == otc.CodeRateLimited {
			wire.SetRetryAfter(w.Header(), oe.RetryAfter)
			h.fail(w, CodeRateLimited, oe.Message, nil)
			return
		}
		if errors.As(err, &oe) && len(oe.ParameterErrors) > 0 {
			h.fail(w, CodeInvalidShape, oe.Message, map[string]any{"parameter_errors": oe.ParameterErrors})
			return
		}
		h.fail(w, CodeInvalidShape, "The search failed: "+errorMessage(err), nil)
		return
	}
	out := make([]plannerEntry, 0, len(ids))
	for _, id := range ids {
		if d, err := h.reg.Lookup(id, otc.ProtocolHTTP); err == nil {
			out = append(out, plannerEntry{Name: d.Name, Description: d.Description})
		}
	}
	h.writeJSON(w, http.StatusOK, out)
}

// plannerView is the answer to GET /tools for one revision of the
// registry, encoded once, with the entries it holds.
type plannerView struct {
	revision uint64
	entries  []plannerEntry
	body     []byte
}

// plannerEntry is one tool of the planner view, and the versioned id of
// the version it describes.
type plannerEntry struct {
	id          string
	Name        string `json:"name"`
	Description string `json:"description"`
}

// encode encodes the entries whose version v sees; the zero Visibility
// sees them all.
func (p *plannerView) encode(v otc.Visibility) []byte {
	out := make([]plannerEntry, 0, len(p.entries))
	for _, e := range p.entries {
		if v.Sees(e.id) {
			out = append(out, e)
		}
	}
	b, _ := json.Marshal(out) // strings only: cannot fail
	return b
}

// plannerView returns the planner view of the registry's current catalog,
// building it when the catalog has changed since the last one. Two
// requests that race to build it both do, and the last one kept wins;
// both are right.
func (h *Handler) plannerView() *plannerView {
	rev := h.reg.Revision()
	if v := h.planner.Load(); v != nil && v.revision == rev {
		return v
	}
	defs := h.reg.Tools()
	out := make([]plannerEntry, 0, len(defs))
	for i, d := range defs {
		// One entry per tool: its highest version that this view may call.
		// The catalog is ordered by id, then version, so that is the last
		// allowed one before the next tool's id.
		if !d.Policy.AllowsProtocol(otc.ProtocolHTTP) {
			continue
		}
		key := toolKey(d.ID)
		later := false
		for _, e := range defs[i+1:] {
			if toolKey(e.ID) != key {
				break
			}
			if e.Policy.AllowsProtocol(otc.ProtocolHTTP) {
				later = true
				break
			}
		}
		if !later {
			out = append(out, plannerEntry{id: d.ID, Name: d.Name, Description: d.Description})
		}
	}
	v := &plannerView{revision: rev, entries: out}
	v.body = v.encode(otc.Visibility{})
	h.planner.Store(v)
	return v
}

// toolKey is a versioned tool id without its version: "Toolkit.Tool".
func toolKey(id string) string {
	key, _, _ := strings.Cut(id, "@")
	return key
}

// describe answers GET /tools/{name}.
func (h *Handler) describe(w http.ResponseWriter, name string) {
	d, err := h.reg.LookupName(name, otc.ProtocolHTTP)
	if err == nil && !d.Policy.AllowsProtocol(otc.ProtocolHTTP) {
		// A tool the REST view may not call is not described either.
		err = &otc.Error{Code: otc.CodeServerError, Message: fmt.Sprintf("Tool '%s' was not found", wire.Truncate(name, 80))}
	}
	if err != nil {
		h.fail(w, CodeToolNotFound, errorMessage(err), nil)
		return
	}
	toolkit, _, _ := strings.Cut(d.ID, ".")
	h.writeJSON(w, http.StatusOK, restDefinition{
		SchemaVersion: SchemaVersion,
		Name:          d.Name,
		Description:   d.Description,
		Version:       d.Version,
		Parameters:    d.InputSchema.Parameters,
		Returns:       d.OutputSchema,
		Tags:          []string{toolkit},
		Source:        "otc:" + d.ID,

		Title:       d.Title,
		Annotations: d.Annotations,
		Icons:       d.Icons,
	})
}

// invoke answers POST /tools/{name}:invoke through the registry's call
// path.
func (h *Handler) invoke(w http.ResponseWriter, r *http.Request, name string) {
	callID := w.Header().Get("X-Request-Id")
	generated := callID != r.Header.Get("X-Request-Id")
	// A name the REST view cannot resolve, malformed version included, is
	// a tool.not_found whatever the body holds. The name is resolved once,
	// by the call itself; only when something fails is it looked up
	// again, to tell an unknown tool from a bad request.
	if name == "" {
		// POST /tools/:invoke names no tool at all: there is no call for
		// the pipeline to observe.
		h.fail(w, CodeToolNotFound, "Tool '' was not found", nil)
		return
	}
	notFound := func(served error) bool {
		_, lookupErr := h.reg.LookupName(name, otc.ProtocolHTTP)
		if lookupErr == nil {
			return false
		}
		if served == nil {
			// The pipeline observes the failed call, through the
			// middleware, as it would have had the body been good.
			req := &otc.CallRequest{ToolName: name, CallID: callID, CallIDGenerated: generated, Protocol: otc.ProtocolHTTP, HTTPRequest: r}
			_, served = h.reg.Call(r.Context(), req)
		}
		if served != nil && !unresolved(served) {
			h.callError(w, served) // middleware answered otherwise
		} else {
			h.fail(w, CodeToolNotFound, errorMessage(lookupErr), nil)
		}
		return true
	}
	body, err := wire.ReadBody(w, r, h.maxBody, h.timeout)
	defer wire.ReleaseBuffer(body)
	if err != nil {
		if !notFound(nil) {
			h.bodyFailed(w, err)
		}
		return
	}
	doc, err := jsonparse.Parse(body.Bytes())
	if err != nil {
		if !notFound(nil) {
			h.fail(w, CodeInvalidJSON, restMessage(envelope.BodyError(body.Bytes(), err, invocationShape)), nil)
		}
		return
	}
	defer jsonparse.Release(doc)
	req, err := readInvocation(doc)
	if err != nil {
		if !notFound(nil) {
			h.fail(w, CodeInvalidShape, restMessage(err), nil)
		}
		return
	}
	req.ToolName, req.CallID, req.CallIDGenerated = name, callID, generated
	req.Protocol, req.HTTPRequest, req.RequestBody = otc.ProtocolHTTP, r, body.Bytes()

	res, err := h.reg.Call(r.Context(), req)
	if err != nil {
		if !notFound(err) {
			h.callError(w, err)
		}
		return
	}
	wire.ArmWriteDeadline(w, r)
	if res.Replayed {
		w.Header().Set(otc.HeaderReplayed, "true")
	}
	out := restResult{
		SchemaVersion: SchemaVersion,
		OK:            res.Error == nil,
		Result:        res.Value,
		Metrics:       &restMetrics{LatencyMS: float64(res.Duration.Microseconds()) / 1000},
	}
	status := http.StatusOK
	if te := res.Error; te != nil {
		code := CodeExecutionError
		if res.Unexpected {
			code = CodeHandlerError
		}
		out.Error = &restError{
			SchemaVersion: SchemaVersion,
			Code:          code,
			Message:       te.Message,
			Retryable:     te.CanRetry,
			Details:       toolErrorDetails(te),
		}
		status = restStatus(code)
		if te.CanRetry && te.RetryAfter > 0 {
			// The delay the tool gave, for clients and proxies that read
			// the header rather than the body's details.
			wire.SetRetryAfter(w.Header(), te.RetryAfter)
		}
	}
	h.writeJSON(w, status, out)
}

// bodyFailed answers a body that could not be read: too large, too slow,
// or cut short.
func (h *Handler) bodyFailed(w http.ResponseWriter, err error) {
	status, msg := wire.BodyProblem(err, h.maxBody, h.timeout)
	switch status {
	case http.StatusRequestEntityTooLarge:
		h.fail(w, CodeRequestTooLarge, msg, nil)
	case http.StatusRequestTimeout:
		h.fail(w, CodeRequestTimeout, msg, nil)
	default:
		h.fail(w, CodeInvalidJSON, msg, nil)
	}
}

// unresolved reports whether err, the pipeline's answer to a call whose
// name the registry cannot resolve, is the resolution's own refusal (an
// unknown tool or version, a malformed version), rather than a
// middleware's answer: the REST view answers the former tool.not_found.
func unresolved(err error) bool {
	switch otc.OutcomeOf(otc.CallResult{}, err) {
	case otc.OutcomeNotFound, otc.OutcomeBadRequest:
		return true
	}
	return false
}

// callError writes the answer to a call that failed before its function
// ran.
func (h *Handler) callError(w http.ResponseWriter, err error) {
	e, ok := errors.AsType[*otc.Error](err)
	if !ok { // the pipeline returns only *otc.Error
		e = &otc.Error{Code: otc.CodeServerError, Message: err.Error()}
	}
	var details map[string]any
	switch {
	case e.ParameterErrors != nil:
		details = map[string]any{"parameter_errors": e.ParameterErrors}
	case e.MissingRequirements != nil:
		details = map[string]any{"missing_requirements": e.MissingRequirements}
	case e.Reason != "":
		details = refusalDetails(e)
	}
	if e.Code == otc.CodeUnavailable || e.Code == otc.CodeRateLimited {
		wire.SetRetryAfter(w.Header(), e.RetryAfter)
		if e.RetryAfter > 0 {
			details = map[string]any{"retry_after_ms": (e.RetryAfter + time.Millisecond - 1).Milliseconds()}
		}
	}
	h.challenge(w, e)
	h.fail(w, restCodeOf(e), e.Message, details)
}

// invocationShape describes the invocation document for messages.
const invocationShape = `send {"schema_version": "0.1.0", "args": {...}, "context": {...}, "trace": {"trace_id": ...}}`

// restMessage is the message of a REST error answer: the REST API has no
// developer message, so a malformed request's details are appended.
func restMessage(err error) string {
	var message, developer string
	if e, ok := errors.AsType[*otc.Error](err); ok {
		message, developer = e.Message, e.DeveloperMessage
	} else if e, ok := errors.AsType[*envelope.Error](err); ok {
		message, developer = e.Message, e.Developer
	} else {
		return err.Error()
	}
	if developer == "" || message == "The request body is empty" {
		return message
	}
	return message + ": " + developer
}

// readInvocation reads a ToolInvocationRequest document (parsed into d)
// into the registry's protocol-neutral form. Fields it does not name are
// ignored; the names it reads are matched exactly and may appear once.
func readInvocation(d *jsonparse.Document) (*otc.CallRequest, error) {
	if d.Kind(0) != jsonparse.KindObject {
		return nil, &envelope.Error{Message: "The request body must be a JSON object"}
	}
	fs := []envelope.Field{{Name: "schema_version"}, {Name: "args"}, {Name: "context"}, {Name: "trace"}}
	if err := envelope.ReadFields(d, 0, "", fs, false, ""); err != nil {
		return nil, err
	}
	switch v := fs[0].Node; {
	case v < 0 || d.Kind(v) == jsonparse.KindNull:
		return nil, &envelope.Error{Message: "schema_version is required"}
	case d.Kind(v) != jsonparse.KindString:
		return nil, envelope.WrongShape(d, v, "schema_version", "a string", invocationShape)
	case !d.StringIs(v, SchemaVersion):
		return nil, &envelope.Error{Message: fmt.Sprintf("schema_version '%s' is not supported; send %s", wire.Truncate(d.StringValue(v), 40), SchemaVersion)}
	}
	args := fs[1].Node
	switch {
	case args < 0:
		return nil, &envelope.Error{Message: "args is required: an object of the tool's arguments, {} for none"}
	case d.Kind(args) != jsonparse.KindObject:
		return nil, &envelope.Error{Message: "args must be a JSON object"}
	}
	req := &otc.CallRequest{Input: d.Raw(args)}
	seam.SetParsed(req, d, args)
	if ok, err := envelope.OptObject(d, fs[2].Node, "context", envelope.ContextShape); err != nil {
		return nil, err
	} else if ok {
		c := &req.Context
		c.UserID, err = envelope.ReadContext(d, fs[2].Node, "context",
			func(id, token string) {
				c.Authorization = append(c.Authorization, otc.ToolAuthorization{ID: id, Token: token})
			},
			func(id, value string) { c.Secrets = append(c.Secrets, otc.ToolSecret{ID: id, Value: value}) },
			func(key string, raw []byte) {
				if c.InputResponses == nil {
					c.InputResponses = map[string]json.RawMessage{}
				}
				c.InputResponses[key] = raw
			})
		if err != nil {
			return nil, err
		}
	}
	if ok, err := envelope.OptObject(d, fs[3].Node, "trace", invocationShape); err != nil {
		return nil, err
	} else if ok {
		ts := []envelope.Field{{Name: "trace_id"}}
		if err := envelope.ReadFields(d, fs[3].Node, "trace", ts, false, ""); err != nil {
			return nil, err
		}
		var err error
		if req.TraceID, err = envelope.OptString(d, ts[0].Node, "trace.trace_id", invocationShape); err != nil {
			return nil, err
		}
		if len(req.TraceID) > otc.MaxIDLength {
			return nil, idTooLong("trace_id")
		}
	}
	return req, nil
}

// idTooLong is the refusal of an id over otc.MaxIDLength, worded as the
// OTC handler words it for call_id.
func idTooLong(name string) *otc.Error {
	return &otc.Error{
		Code:             otc.CodeServerError,
		Message:          fmt.Sprintf("%s is longer than %d bytes", name, otc.MaxIDLength),
		DeveloperMessage: fmt.Sprintf("%s is echoed back and logged, so it is limited to %d bytes: send a UUID or another short id", name, otc.MaxIDLength),
	}
}

// toolErrorDetails carries the parts of a tool error that the REST Error
// document has no field for.
func toolErrorDetails(te *otc.ToolError) map[string]any {
	d := map[string]any{}
	if te.DeveloperMessage != "" {
		d["developer_message"] = te.DeveloperMessage
	}
	if te.AdditionalPromptContent != "" {
		d["additional_prompt_content"] = te.AdditionalPromptContent
	}
	if te.RetryAfter > 0 {
		// Whole milliseconds, rounded up so that a client never retries
		// early, as the OTC handler writes retry_after_ms.
		ms := int64(te.RetryAfter / time.Millisecond)
		if te.RetryAfter%time.Millisecond > 0 {
			ms++
		}
		d["retry_after_ms"] = ms
	}
	if len(d) == 0 {
		return nil
	}
	return d
}

// errorMessage is the user-facing message of an error.
func errorMessage(err error) string {
	if e, ok := errors.AsType[*otc.Error](err); ok {
		return e.Message
	}
	return err.Error()
}

// fail writes an error answer.
func (h *Handler) fail(w http.ResponseWriter, code, message string, details map[string]any) {
	h.writeJSON(w, restStatus(code), restResult{
		SchemaVersion: SchemaVersion,
		Error: &restError{
			SchemaVersion: SchemaVersion,
			Code:          code,
			Message:       message,
			Details:       details,
			// A caller over its rate limit, or a server that cannot
			// decide yet, may send the same request again later.
			Retryable: code == CodeRateLimited || code == CodeUnavailable,
		},
	})
}

func (h *Handler) writeJSON(w http.ResponseWriter, status int, v any) {
	b, err := json.Marshal(v)
	if err != nil {
		h.logger.Error("otc: encoding a REST response", slog.String("error", err.Error()))
		status = http.StatusInternalServerError
		b = []byte(`{"schema_version":"` + SchemaVersion + `","ok":false,"error":{"schema_version":"` + SchemaVersion + `","code":"` + CodeHandlerError + `","message":"The tool server failed unexpectedly","retryable":false}}`)
	}
	wire.WriteBody(w, status, b)
}
