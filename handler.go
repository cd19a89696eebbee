package otc

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/otcgo/otc/internal/envelope"
	"github.com/otcgo/otc/internal/jsonparse"
	"github.com/otcgo/otc/internal/wire"
)

// DefaultMaxBodyBytes is the default limit on a request body, for every
// wire format: 4 MiB.
const DefaultMaxBodyBytes = wire.DefaultMaxBodyBytes

// DefaultBodyReadTimeout is the default limit on the time a client may
// take to send a request body, for every wire format: 30 seconds, enough
// for the largest body at the default limit over a slow link.
const DefaultBodyReadTimeout = wire.DefaultBodyReadTimeout

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
	// clients generated from it read that key; the protocol's List
	// Tools page and this library's client read "tools".
	IncludeItems bool

	// Logger receives faults of the handler itself. Nil means the
	// registry's logger. Tool panics are logged by the registry.
	Logger *slog.Logger

	// BodyReadTimeout bounds the time a client may take to send a request
	// body, from when the handler starts reading it; a client that trickles
	// its body is answered 408 and cut off, so that it cannot hold a
	// goroutine and a buffer for as long as it likes. Zero means
	// DefaultBodyReadTimeout; a negative value means no limit.
	//
	// The limit is set with [http.ResponseController], so it holds however
	// the handler is mounted, provided the ResponseWriter it is given can
	// set deadlines (middleware that wraps the writer must implement
	// Unwrap). A server's own ReadTimeout still applies when it is
	// shorter. Either limit covers the body only: once it has been read,
	// net/http lifts the read deadline, so a tool may run longer.
	BodyReadTimeout time.Duration

	// Authenticator, when set, must accept a request before the catalog is
	// listed or a tool called; GET /health is never authenticated. Nil
	// means no authentication, and the Authorization header is ignored.
	// See package [github.com/otcgo/otc/auth].
	Authenticator Authenticator

	// Search, when set, answers GET /tools?q=…&limit=…: the ids of the
	// tools the request's caller sees through protocol that match q, best
	// first, which the handler lists as the catalog does; an *Error it
	// returns is answered as its class says. search.Query (package
	// [github.com/otcgo/otc/search]) is one, and what mount.All gives.
	// Nil answers a search 400, saying the server does not search.
	Search func(r *http.Request, reg *Registry, protocol string) ([]string, error)
}

// Handler serves a [Registry] over OTC/OXP 1.0 HTTP:
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
	timeout time.Duration
	schema  string
	items   bool
	logger  *slog.Logger
	// faultBody answers a panic of the handler itself (wire.Recover).
	faultBody []byte
	auth      Authenticator
	search    func(r *http.Request, reg *Registry, protocol string) ([]string, error)

	unavailable atomic.Bool
	draining    atomic.Bool
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
	h := &Handler{reg: reg, schema: opts.Schema, items: opts.IncludeItems, logger: opts.Logger, auth: opts.Authenticator, search: opts.Search}
	h.maxBody, h.timeout = wire.BodyLimits(opts.MaxBodyBytes, opts.BodyReadTimeout)
	if h.schema == "" {
		h.schema = SchemaOTC
	}
	if !supportedSchema(h.schema) {
		panic(fmt.Sprintf("otc: NewHandler: HandlerOptions.Schema %q is not supported; use otc.SchemaOTC or otc.SchemaOXP", h.schema))
	}
	if h.logger == nil {
		h.logger = reg.logger
	}
	h.faultBody, _ = json.Marshal(errorBody{Schema: h.schema, Message: "The tool server failed unexpectedly"})
	return h
}

// SetReady sets whether the server takes calls. While not ready, GET
// /health answers 503 and calls answer a server error saying the server is
// temporarily unavailable; the catalog is still served. A new handler is
// ready. Call SetReady(false) when draining before shutdown.
func (h *Handler) SetReady(ready bool) { h.unavailable.Store(!ready) }

// SetDraining sets whether the server is going away. While draining, GET
// /health answers 503, so that a load balancer stops sending new calls,
// and calls are still taken: those the balancer sends before its checks
// notice are served rather than refused with an error it could not retry
// elsewhere. mount.Serve calls SetDraining(true) on the handlers in
// its ServeOptions.Drain when shutdown begins.
func (h *Handler) SetDraining(draining bool) { h.draining.Store(draining) }

// ServeHTTP routes a request to one of the endpoints.
func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	defer wire.Recover(h.logger, w, r, h.faultBody)
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
			Message:          fmt.Sprintf("No endpoint at '/%s'", wire.Truncate(path, 80)),
			DeveloperMessage: "this tool server answers GET /tools, POST /tools/call, POST /call and GET /health",
		})
	}
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
		Message:          fmt.Sprintf("Method %s is not allowed here", wire.Truncate(r.Method, 32)),
		DeveloperMessage: fmt.Sprintf("%s accepts %s", r.URL.Path, allowed),
	})
	return false
}

// authenticate runs the authenticator, if any, before the body is read.
// On success the request's context carries the caller's [Identity]; on
// failure the 401 is written.
func (h *Handler) authenticate(w http.ResponseWriter, r *http.Request) (*http.Request, bool) {
	r, err := Authenticate(h.auth, r)
	if err == nil {
		return r, true
	}
	h.challenge(w, err)
	h.writeError(w, h.schema, err)
	return r, false
}

// challenge sets the WWW-Authenticate header of an answer refusing the
// request with err: a 401, or a 403 for want of scopes (see [Challenge]).
func (h *Handler) challenge(w http.ResponseWriter, err error) {
	if e, ok := errors.AsType[*Error](err); ok {
		if c := Challenge(h.auth, e); c != "" {
			w.Header().Set("WWW-Authenticate", c)
		}
	}
}

// health answers GET /health.
func (h *Handler) health(w http.ResponseWriter) {
	if h.unavailable.Load() || h.draining.Load() {
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
// only $schema.
func (h *Handler) listTools(w http.ResponseWriter, r *http.Request) {
	schema := h.schema
	if r.ContentLength != 0 {
		body, rerr := readBody(w, r, h.maxBody, h.timeout)
		defer releaseBuffer(body)
		if rerr != nil {
			h.writeError(w, schema, rerr)
			return
		}
		if b := body.Bytes(); len(bytes.TrimSpace(b)) > 0 {
			sent, err := readListBody(b)
			err = envelopeError(err)
			schema, err = negotiateSchema(schema, sent, err)
			if err != nil {
				h.writeError(w, schema, err)
				return
			}
		}
	}
	if r.URL.Query().Has("q") {
		h.searchTools(w, r, schema)
		return
	}
	// The catalog array is encoded once per registry snapshot, and for a
	// caller who sees only some of the tools once per snapshot and set of
	// visible tools; only the few bytes around it are written per
	// request, so a large catalog is never copied.
	cat := h.reg.current.Load()
	tools := cat.encodedCatalogFor(h.reg.visibilityIn(cat, CallerIdentity(r.Context()), ProtocolOTC))
	h.writeCatalog(w, schema, tools)
}

// writeCatalog answers a listing with the JSON array tools.
func (h *Handler) writeCatalog(w http.ResponseWriter, schema string, tools []byte) {
	head := appendJSONString([]byte(`{"$schema":`), schema)
	head = append(head, `,"tools":`...)
	parts := [][]byte{head, tools}
	if h.items {
		parts = append(parts, []byte(`,"items":`), tools)
	}
	wire.WriteBody(w, http.StatusOK, append(parts, []byte("}"))...)
}

// searchTools answers GET /tools?q=…&limit=…: the tools the caller sees
// that match q, best first, each as the catalog lists it, through
// HandlerOptions.Search.
func (h *Handler) searchTools(w http.ResponseWriter, r *http.Request, schema string) {
	if h.search == nil {
		h.writeError(w, schema, badRequest("This server does not search its tools; list them without q",
			"GET /tools?q= needs HandlerOptions.Search (search.Query; mount.All sets it)"))
		return
	}
	ids, err := h.search(r, h.reg, ProtocolOTC)
	if err != nil {
		h.writeError(w, schema, err)
		return
	}
	buf := []byte{'['}
	for _, id := range ids {
		t, err := h.reg.resolveFor(id, "")
		if err != nil {
			continue // removed since the search
		}
		if len(buf) > 1 {
			buf = append(buf, ',')
		}
		buf = append(buf, t.encodedDef...)
	}
	h.writeCatalog(w, schema, append(buf, ']'))
}

// callShape describes the body of a call for messages.
const callShape = `the body is {"$schema": string, "request": {"tool_id": string, "call_id": string, "trace_id": string, "input": object, "context": object}}`

// negotiateSchema returns the $schema spelling of the answer to a body
// that named sent (nil for none) and was read with err: the spelling sent
// when it is supported, whatever else is wrong with the body, so that the
// answer echoes it. A body without other faults that names an unsupported
// spelling gets that error.
func negotiateSchema(def string, sent *string, err error) (string, error) {
	switch {
	case sent == nil:
		return def, err
	case supportedSchema(*sent):
		return *sent, err
	case err == nil:
		return def, unsupportedSchema(*sent)
	}
	return def, err
}

// sentSchema returns the string value of the body's top-level $schema, if
// it has one.
func sentSchema(d *jsonparse.Document) *string {
	if d.Kind(0) != jsonparse.KindObject {
		return nil
	}
	if v := d.Member(0, "$schema"); v >= 0 && d.Kind(v) == jsonparse.KindString {
		s := d.StringValue(v)
		return &s
	}
	return nil
}

// readListBody reads the optional body of GET /tools: an object holding
// at most $schema. It returns the $schema sent, if any.
func readListBody(body []byte) (*string, error) {
	const shape = `the body of GET /tools may hold only {"$schema": string}`
	d, err := jsonparse.Parse(body)
	if err != nil {
		return nil, envelope.BodyError(body, err, shape)
	}
	defer jsonparse.Release(d)
	sent := sentSchema(d)
	if d.Kind(0) != jsonparse.KindObject {
		return nil, serverError("The request body must be a JSON object", shape)
	}
	fs := []envelope.Field{{Name: "$schema"}}
	if err := envelope.ReadFields(d, 0, "", fs, true, shape); err != nil {
		return sent, err
	}
	_, err = envelope.OptString(d, fs[0].Node, "$schema", shape)
	return sent, err
}

// readCall reads the body of a call (parsed into d) into the registry's
// protocol-neutral form, checking it as the protocol's first step asks: a
// JSON object with a request object, known fields only, each once.
func readCall(d *jsonparse.Document) (req *CallRequest, err error) {
	if d.Kind(0) != jsonparse.KindObject {
		return nil, serverError("The request body must be a JSON object", callShape)
	}
	top := []envelope.Field{{Name: "$schema"}, {Name: "request"}}
	err = envelope.ReadFields(d, 0, "", top, true, `the body accepts "$schema" and "request"`)
	if err != nil {
		return nil, err
	}
	if _, err = envelope.OptString(d, top[0].Node, "$schema", callShape); err != nil {
		return nil, err
	}
	ri := top[1].Node
	if ri < 0 || d.Kind(ri) == jsonparse.KindNull {
		return nil, serverError("The request field is required", `the body must be {"$schema": ..., "request": {"tool_id": ..., "input": {...}}}`)
	}
	if d.Kind(ri) != jsonparse.KindObject {
		return nil, envelope.WrongShape(d, ri, "request", "an object", callShape)
	}
	fs := []envelope.Field{{Name: "tool_id"}, {Name: "call_id"}, {Name: "trace_id"}, {Name: "input"}, {Name: "context"}}
	err = envelope.ReadFields(d, ri, "request", fs, true, `"request" accepts "tool_id", "call_id", "trace_id", "input" and "context"`)
	if err != nil {
		return nil, err
	}
	req = &CallRequest{}
	if fs[0].Node < 0 || d.Kind(fs[0].Node) == jsonparse.KindNull {
		return nil, serverError("request.tool_id is required", "tool_id names the tool to call: Toolkit.Tool, Toolkit.Tool@x or Toolkit.Tool@x.y.z")
	}
	if req.ToolID, err = envelope.OptString(d, fs[0].Node, "request.tool_id", callShape); err != nil {
		return nil, err
	}
	if req.CallID, err = envelope.OptString(d, fs[1].Node, "request.call_id", callShape); err != nil {
		return nil, err
	}
	if req.TraceID, err = envelope.OptString(d, fs[2].Node, "request.trace_id", callShape); err != nil {
		return nil, err
	}
	if err := checkIDs(req.CallID, req.TraceID); err != nil {
		return nil, err
	}
	if in := fs[3].Node; in >= 0 {
		if k := d.Kind(in); k != jsonparse.KindObject && k != jsonparse.KindNull {
			return nil, serverError("request.input must be a JSON object", "input maps parameter names to values; send {} or leave it out for a tool without parameters")
		}
		req.Input, req.doc, req.root = d.Raw(in), d, in
	}
	if ok, err := envelope.OptObject(d, fs[4].Node, "request.context", envelope.ContextShape); err != nil {
		return nil, err
	} else if ok {
		req.Context.UserID, err = envelope.ReadContext(d, fs[4].Node, "request.context",
			func(id, token string) {
				req.Context.Authorization = append(req.Context.Authorization, ToolAuthorization{ID: id, Token: token})
			},
			func(id, value string) {
				req.Context.Secrets = append(req.Context.Secrets, ToolSecret{ID: id, Value: value})
			},
			func(key string, raw []byte) {
				if req.Context.InputResponses == nil {
					req.Context.InputResponses = map[string]json.RawMessage{}
				}
				req.Context.InputResponses[key] = raw
			})
		if err != nil {
			return nil, err
		}
	}
	return req, nil
}

// callTool answers POST /tools/call, following the protocol's order of
// checks: body, $schema, tool, requirements, input, call.
func (h *Handler) callTool(w http.ResponseWriter, r *http.Request) {
	schema := h.schema
	if h.unavailable.Load() {
		h.writeError(w, schema, serverError("The tool server is temporarily unavailable", "the server is draining or not yet ready; retry later or elsewhere"))
		return
	}
	body, rerr := readBody(w, r, h.maxBody, h.timeout)
	defer releaseBuffer(body)
	if rerr != nil {
		h.writeError(w, schema, rerr)
		return
	}
	b := body.Bytes()
	if t := bytes.TrimLeft(b, " \t\r\n"); len(t) > 0 && t[0] != '{' {
		h.writeError(w, schema, serverError("The request body must be a JSON object", "the body is JSON of another kind, or not JSON"))
		return
	}
	doc, err := jsonparse.Parse(b)
	if err != nil {
		h.writeError(w, schema, envelopeError(envelope.BodyError(b, err, `send a JSON object: {"request": {"tool_id": ..., "input": {...}}}`)))
		return
	}
	defer jsonparse.Release(doc)
	req, err := readCall(doc)
	err = envelopeError(err)
	schema, err = negotiateSchema(schema, sentSchema(doc), err)
	if err != nil {
		h.writeError(w, schema, err)
		return
	}

	req.Protocol, req.HTTPRequest, req.RequestBody = ProtocolOTC, r, b
	res, err := h.reg.Call(r.Context(), req)
	if err != nil {
		h.challenge(w, err)
		h.writeError(w, schema, err)
		return
	}
	wire.ArmWriteDeadline(w, r)
	if res.Replayed {
		w.Header().Set(HeaderReplayed, "true")
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
	wire.WriteBody(w, http.StatusOK, out)
	if cap(out) <= maxPooledResponse {
		*bp = out
		responsePool.Put(bp)
	}
}

// unsupportedSchema is the error for a $schema this server does not speak.
func unsupportedSchema(s string) *Error {
	return serverError(
		fmt.Sprintf("Protocol version '%s' is not supported", wire.Truncate(s, 80)),
		fmt.Sprintf("accepted $schema values: %s, %s, %s; leave $schema out for the latest", SchemaOTC, SchemaOXP, SchemaOpenAPI))
}

// readBody reads the request body within the size limit and, when timeout
// is not zero, within that time. The buffer comes from a pool; the caller
// releases it, even on error.
func readBody(w http.ResponseWriter, r *http.Request, maxBody int64, timeout time.Duration) (*bytes.Buffer, error) {
	buf, err := wire.ReadBody(w, r, maxBody, timeout)
	if err == nil {
		return buf, nil
	}
	switch status, msg := wire.BodyProblem(err, maxBody, timeout); status {
	case http.StatusRequestEntityTooLarge:
		return buf, &Error{Code: CodeTooLarge, Message: msg}
	case http.StatusRequestTimeout:
		return buf, &Error{Code: CodeRequestTimeout, Message: msg,
			DeveloperMessage: "send the whole body promptly; the server does not wait for slow clients"}
	default:
		return buf, serverError(msg, err.Error())
	}
}

// writeError answers err: an [*Error] with its class's status and body. Anything else is a fault of this library and answers 500,
// still as JSON.
func (h *Handler) writeError(w http.ResponseWriter, schema string, err error) {
	var e *Error
	if !errors.As(err, &e) {
		h.logger.Error("otc: unexpected error", slog.String("error", err.Error()))
		e = &Error{Message: "The tool server failed unexpectedly"}
	}
	if e.Code == CodeUnavailable || e.Code == CodeRateLimited {
		wire.SetRetryAfter(w.Header(), e.RetryAfter)
	}
	h.writeJSON(w, e.Code.HTTPStatus(), errorBody{
		Schema:              schema,
		Message:             e.Message,
		DeveloperMessage:    e.DeveloperMessage,
		ParameterErrors:     e.ParameterErrors,
		MissingRequirements: e.MissingRequirements,
		Reason:              e.Reason,
		RequiredScopes:      e.RequiredScopes,
	})
}

// writeJSON encodes v and writes it with the status.
func (h *Handler) writeJSON(w http.ResponseWriter, status int, v any) {
	b, err := json.Marshal(v)
	if err != nil {
		h.logger.Error("otc: encoding a response", slog.String("error", err.Error()))
		status, b = http.StatusInternalServerError, []byte(`{"message":"The tool server failed unexpectedly"}`)
	}
	wire.WriteBody(w, status, b)
}

func releaseBuffer(b *bytes.Buffer) { wire.ReleaseBuffer(b) }

// maxPooledResponse is the largest response buffer kept for reuse.
const maxPooledResponse = 64 << 10

// responsePool recycles the buffers successful calls are encoded into.
var responsePool = sync.Pool{New: func() any { b := make([]byte, 0, 512); return &b }}

func appendJSONString(dst []byte, s string) []byte { return wire.AppendString(dst, s) }

// envelopeError answers a malformed envelope (see package envelope) as the
// protocol answers a malformed request: a 400 server error.
func envelopeError(err error) error {
	if e, ok := err.(*envelope.Error); ok {
		return serverError(e.Message, e.Developer)
	}
	return err
}
