package a2a

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"strings"
	"sync/atomic"
	"time"

	"github.com/otcgo/otc"
	"github.com/otcgo/otc/internal/a2awire"
	"github.com/otcgo/otc/internal/jsonparse"
	"github.com/otcgo/otc/internal/taskrun"
	"github.com/otcgo/otc/internal/wire"
	"github.com/otcgo/otc/tasks"
)

// Options configures [NewHandler]. The zero value, and nil, give the
// defaults described on each field.
type Options struct {
	// Name and Description are the agent's, as its card shows them. Empty
	// means "otc tool server" and a sentence naming the tools' form.
	Name, Description string
	// Version is the agent's version on its card. Empty means "1.0.0".
	Version string
	// URL is the absolute URL the handler is reached at, which the card
	// names for both bindings: set it to the public URL clients reach the
	// agent at. Empty means the URL the card was fetched at (its Host
	// header), less "/.well-known/agent-card.json"; such a card is served
	// with Cache-Control: private and Vary: Host, so that no shared cache
	// hands one client a card naming the host another asked for, but a
	// client whose request names a host (a proxy that passes any Host on)
	// is told that host: set URL wherever a proxy stands in front.
	URL string

	// SecuritySchemes names the credentials the agent takes, as the card's
	// securitySchemes: each an A2A SecurityScheme object (for an API key,
	// {"apiKeySecurityScheme": {"location": "header", "name":
	// "OXP-API-Key"}}). The card requires any one of them. Nil means those
	// of the Authenticator's methods (each of an auth.AnyOf, the one a
	// ratelimit.Guard guards): an API key header for auth's API keys (an
	// authenticator with an APIKeyHeader method), an HTTP bearer scheme
	// for a method whose challenge asks for a bearer token (with the
	// OAuth resource metadata URL, when the challenge names one, in its
	// description).
	SecuritySchemes map[string]json.RawMessage

	// TextTool names the tool (by name or id) that a message of text
	// calls: a message without a call part whose parts hold text calls
	// it, with the text (its text parts, a blank line between them) as
	// the tool's one string parameter, and is answered as any call of it
	// is (a task for a tool whose calls may run as tasks, with its
	// questions and its stream). An A2A agent is often driven by text:
	// name an LLM-backed assistant, a router or a search here. The tool
	// must have exactly one string parameter; NewHandler panics when the
	// registry holds it and it has not. Empty means a message of text gets
	// a message naming the skills and the form of a call.
	TextTool string

	// Search, when set, adds a skill to the card (SearchSkill, first) that
	// searches the others: a call {"tool": "search_tools", "input":
	// {"query": WORDS, "limit": N}} is answered with {"skills": [...]},
	// the skills the caller may call that the words describe, best first
	// (5 unless limit says otherwise, 1 to search.MaxLimit), each with its
	// id, name, description and schemas, as package search ranks them. A
	// tool registered under that name is then called by its id. One
	// caller's searches are bounded as search.Admit says.
	Search bool

	// Tasks configures the tasks of the calls of tools whose calls may run
	// as tasks ([otc.Tool.Tasks]): every such call is one. Its Store keeps
	// them (ListTasks needs one that lists, [tasks.Lister]; push
	// notifications one that keeps webhooks, [tasks.WebhookStore]); nil,
	// or a nil Store, means a tasks.MemoryStore with its defaults, which
	// serves one process; replicas share one in Redis
	// (github.com/otcgo/otc/redisstore). The same options as MCP's.
	Tasks *tasks.Options
	// Push, when set, serves push notifications: a caller gives a task a
	// webhook (the push notification configuration methods, or a
	// message's configuration), kept with the task in the task store (which
	// must keep webhooks, tasks.WebhookStore, as this module's stores
	// do), and each change of the task's state is posted to it. The card
	// then says pushNotifications: true. Nil means push notifications are
	// not supported, and their methods answer so.
	Push *PushOptions

	// Authenticator, when set, must accept every request but the card's,
	// as for the OTC [otc.Handler]; a refusal is answered 401 with the
	// WWW-Authenticate value of [otc.Challenge]. Nil means no
	// authentication.
	Authenticator otc.Authenticator
	// MaxBodyBytes caps a request body. Zero means the handlers' default
	// (4 MiB).
	MaxBodyBytes int64
	// BodyReadTimeout bounds reading a request body. Zero means the
	// handlers' default.
	BodyReadTimeout time.Duration
	// Logger receives the handler's own faults. Nil means the registry's.
	Logger *slog.Logger
}

// Handler serves a registry as an A2A agent. Create one with
// [NewHandler]; it is safe for concurrent use.
type Handler struct {
	reg     *otc.Registry
	opts    Options
	auth    otc.Authenticator
	maxBody int64
	timeout time.Duration
	logger  *slog.Logger
	runner  *taskrun.Runner
	schemes map[string]json.RawMessage // the card's securitySchemes
	push    *pusher                    // nil without push notifications
	// textTool caches the text tool's parameter (textParam).
	textTool atomic.Pointer[textTool]
}

var _ http.Handler = (*Handler)(nil)

// NewHandler returns a handler serving reg over A2A. opts may be nil.
func NewHandler(reg *otc.Registry, opts *Options) *Handler {
	if opts == nil {
		opts = &Options{}
	}
	h := &Handler{reg: reg, opts: *opts, auth: opts.Authenticator, logger: opts.Logger}
	h.maxBody, h.timeout = wire.BodyLimits(opts.MaxBodyBytes, opts.BodyReadTimeout)
	if h.logger == nil {
		h.logger = reg.Logger()
	}
	h.runner = newRunner(opts, h.logger, h.changed)
	h.push = newPusher(h, opts.Push, h.runner.Store())
	h.schemes = securitySchemes(opts, h.auth)
	if opts.TextTool != "" {
		if _, err := h.textParam(); err != nil && !errors.Is(err, otc.ErrToolNotFound) {
			panic("a2a: Options.TextTool: " + err.Error())
		}
	}
	return h
}

// cardPath is where the Agent Card is served, relative to the handler.
const cardPath = a2awire.CardPath

// ServeHTTP routes a request to the card or to a binding.
func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	path := routedPath(r)
	if path == cardPath {
		if r.Method != http.MethodGet && r.Method != http.MethodHead {
			w.Header().Set("Allow", "GET, HEAD")
			writeRESTError(w, http.StatusMethodNotAllowed, "METHOD_NOT_FOUND", "The Agent Card is read with GET")
			return
		}
		h.serveCard(w, r)
		return
	}
	if path == jwksPath && h.push != nil && h.push.signer != nil {
		h.push.serveJWKS(w, r)
		return
	}
	r, e := otc.Authenticate(h.auth, r)
	if e != nil {
		if errors.Is(e, otc.ErrNoCredentials) && h.servePublicCard(w, r, path) {
			return
		}
		if c := otc.Challenge(h.auth, e); c != "" {
			w.Header().Set("WWW-Authenticate", c)
		}
		if e.Code == otc.CodeUnavailable || e.Code == otc.CodeRateLimited {
			wire.SetRetryAfter(w.Header(), e.RetryAfter)
		}
		status := e.Code.HTTPStatus()
		if isREST(path) {
			writeRESTError(w, status, errorReason(e), e.Message)
		} else {
			writeRPC(w, status, rpcResponse{ID: json.RawMessage("null"), Error: authError(e)})
		}
		return
	}
	version, named, ok := requestVersion(r)
	if !ok {
		msg := "A2A version " + wire.Truncate(named, 16) + " is not supported: this agent speaks " + Version10 + " and " + Version03
		if isREST(path) {
			writeRESTError(w, http.StatusBadRequest, "VERSION_NOT_SUPPORTED", msg)
		} else {
			writeRPC(w, http.StatusOK, rpcResponse{ID: json.RawMessage("null"), Error: &rpcError{Code: codeVersionNotSupported, Message: msg, Data: errorInfo("VERSION_NOT_SUPPORTED", nil)}})
		}
		return
	}
	switch {
	case path == "/" || path == "":
		if r.Method != http.MethodPost {
			w.Header().Set("Allow", "POST")
			writeRPC(w, http.StatusMethodNotAllowed, rpcResponse{ID: json.RawMessage("null"), Error: &rpcError{Code: codeInvalidRequest, Message: "A JSON-RPC request is sent with POST"}})
			return
		}
		h.serveRPC(w, r, version, named != "")
	case path == "/message:send" || path == "/message:stream":
		if r.Method != http.MethodPost {
			w.Header().Set("Allow", "POST")
			writeRESTError(w, http.StatusMethodNotAllowed, "METHOD_NOT_FOUND", path[1:]+" takes POST")
			return
		}
		h.serveRESTSend(w, r, path == "/message:stream")
	case path == "/extendedAgentCard":
		if r.Method != http.MethodGet {
			w.Header().Set("Allow", "GET")
			writeRESTError(w, http.StatusMethodNotAllowed, "METHOD_NOT_FOUND", "extendedAgentCard takes GET")
			return
		}
		if h.auth == nil {
			writeRESTError(w, http.StatusBadRequest, "EXTENDED_AGENT_CARD_NOT_CONFIGURED", "This agent has no extended Agent Card: it authenticates no one, and its card lists every skill")
			return
		}
		b, err := json.Marshal(h.card(h.endpointURL(r, path), otc.CallerIdentity(r.Context())))
		if err != nil {
			writeRESTError(w, http.StatusInternalServerError, "INTERNAL", "The Agent Card could not be written")
			return
		}
		w.Header().Set("Content-Type", "application/a2a+json")
		w.Header().Set("Cache-Control", "private") // the caller's own card
		w.Header().Add("Vary", "Host")
		_, _ = w.Write(b)
	case strings.HasPrefix(path, "/tasks/") && strings.Contains(path, "/pushNotificationConfigs"):
		taskID, rest, _ := strings.Cut(path[len("/tasks/"):], "/pushNotificationConfigs")
		id, one := strings.CutPrefix(rest, "/")
		if rest != "" && !one || strings.Contains(id, "/") {
			writeRESTError(w, http.StatusNotFound, "NOT_FOUND", "Nothing is served at "+wire.Truncate(path, 64))
			return
		}
		taskID, _ = url.PathUnescape(taskID)
		id, _ = url.PathUnescape(id)
		h.serveRESTPush(w, r, taskID, id, one)
	case path == "/tasks":
		if r.Method != http.MethodGet {
			w.Header().Set("Allow", "GET")
			writeRESTError(w, http.StatusMethodNotAllowed, "METHOD_NOT_FOUND", "Tasks are listed with GET /tasks")
			return
		}
		q, e := readListQuery(r.URL.Query())
		var b []byte
		if e == nil {
			b, e = h.listTasks(r, v10, q)
		}
		if e != nil {
			writeRESTError(w, restStatusOf(e), restReason(e), e.Message, restDetails(e)...)
			return
		}
		w.Header().Set("Content-Type", "application/a2a+json")
		_, _ = w.Write(b)
	case strings.HasPrefix(path, "/tasks/") && !strings.Contains(path[len("/tasks/"):], "/"):
		h.serveRESTTask(w, r, path[len("/tasks/"):])
	case isREST(path):
		writeRESTError(w, http.StatusBadRequest, "UNSUPPORTED_OPERATION", "This operation is not supported by this agent: it serves message:send, message:stream and the Agent Card")
	default:
		writeRESTError(w, http.StatusNotFound, "NOT_FOUND", "Nothing is served at "+wire.Truncate(path, 64))
	}
}

// maxCardRequest bounds the body read of a JSON-RPC request without
// credentials, to see whether it asks for the extended card.
const maxCardRequest = 4 << 10

// servePublicCard answers a request without credentials that asks for the
// extended Agent Card (GET /extendedAgentCard, or JSON-RPC
// GetExtendedAgentCard) with the public card, and reports whether it did:
// the SDKs ask for the extended card whenever the public one says there is
// one, and a caller without credentials is owed the public card, not an
// error. Any other request is left to be refused.
func (h *Handler) servePublicCard(w http.ResponseWriter, r *http.Request, path string) bool {
	switch {
	case path == "/extendedAgentCard" && r.Method == http.MethodGet:
		b, err := json.Marshal(h.card(h.endpointURL(r, path), nil))
		if err != nil {
			return false
		}
		w.Header().Set("Content-Type", "application/a2a+json")
		_, _ = w.Write(b)
		return true
	case (path == "/" || path == "") && r.Method == http.MethodPost:
		body, err := io.ReadAll(io.LimitReader(r.Body, maxCardRequest+1))
		if err != nil || len(body) > maxCardRequest {
			return false
		}
		doc, err := jsonparse.Parse(body)
		if err != nil {
			return false
		}
		defer jsonparse.Release(doc)
		env, id, e := readEnvelope(doc)
		if e != nil || env.method != "GetExtendedAgentCard" && env.method != "agent/getAuthenticatedExtendedCard" {
			return false
		}
		writeRPC(w, http.StatusOK, rpcResponse{ID: id, Result: h.card(h.endpointURL(r, ""), nil)})
		return true
	}
	return false
}

// isREST reports whether path is one of the HTTP+JSON binding's.
// routedPath is the path of a request below where the handler is
// mounted: the request's own when it is one the handler serves (mounted
// at the root, or with http.StripPrefix), and otherwise the path below
// the ServeMux pattern that routed it, so that mux.Handle("/a2a/", h)
// serves as mount.All's http.StripPrefix form does. A pattern with
// wildcards is not stripped.
func routedPath(r *http.Request) string {
	p := r.URL.Path
	if p == "/" || p == "" || p == cardPath || p == jwksPath || isREST(p) || r.Pattern == "" {
		return p
	}
	pat := r.Pattern
	if _, rest, ok := strings.Cut(pat, " "); ok {
		pat = rest // the method
	}
	if i := strings.IndexByte(pat, '/'); i > 0 {
		pat = pat[i:] // the host
	}
	pat = strings.TrimSuffix(strings.TrimSuffix(pat, "{$}"), "/")
	if pat == "" || strings.Contains(pat, "{") || !strings.HasPrefix(p, pat) || len(p) > len(pat) && p[len(pat)] != '/' {
		return p
	}
	return p[len(pat):]
}

func isREST(path string) bool {
	return strings.HasPrefix(path, "/message:") || strings.HasPrefix(path, "/tasks") || path == "/extendedAgentCard"
}

// requestVersion returns the A2A version a request asks for (header, else
// query parameter; none is 0.3), the version it named ("" for none), and
// whether it is one this package
// speaks.
func requestVersion(r *http.Request) (d dialect, named string, ok bool) {
	// The header's canonical key, read from the map as it is: Get would
	// canonicalize "A2A-Version" again on every request.
	if vs := r.Header["A2a-Version"]; len(vs) > 0 {
		named = strings.TrimSpace(vs[0])
	}
	if named == "" && r.URL.RawQuery != "" {
		named = strings.TrimSpace(r.URL.Query().Get("A2A-Version"))
	}
	switch named {
	case "", Version03:
		return v03, named, true
	case Version10, "1":
		return v10, named, true
	}
	return v03, named, false
}

// readBody reads a request's body within the limits, into a pooled
// buffer the caller releases (even when ok is false); ok is false when the
// body could not be read, which fail has then answered.
func (h *Handler) readBody(w http.ResponseWriter, r *http.Request, fail func(status int, msg string)) (body *bytes.Buffer, ok bool) {
	body, err := wire.ReadBody(w, r, h.maxBody, h.timeout)
	if err != nil {
		status, msg := wire.BodyProblem(err, h.maxBody, h.timeout)
		fail(status, msg)
		return body, false
	}
	return body, true
}

// errorReason is the ErrorInfo reason of a refusal of the caller, as
// the A2A SDKs name it: UNAUTHENTICATED for a 401, UNAUTHORIZED for a 403.
func errorReason(e *otc.Error) string {
	switch e.Code {
	case otc.CodeUnauthenticated:
		return "UNAUTHENTICATED"
	case otc.CodeForbidden:
		return "UNAUTHORIZED"
	case otc.CodeUnavailable:
		return "UNAVAILABLE"
	case otc.CodeRateLimited:
		return "RESOURCE_EXHAUSTED"
	}
	return "FAILED_PRECONDITION"
}

// refusalMetadata is the ErrorInfo metadata of a refusal: the policy's
// reason, and the scopes to ask for.
func refusalMetadata(e *otc.Error) map[string]string {
	m := map[string]string{}
	if e.Reason != "" {
		m["reason"] = e.Reason
	}
	if len(e.RequiredScopes) > 0 {
		m["requiredScopes"] = strings.Join(e.RequiredScopes, " ")
	}
	return m
}

// authError is the JSON-RPC error of a request refused for its
// credentials: -31401 (unauthenticated) or -31403 (unauthorized), the
// codes the A2A SDKs give these refusals, which A2A 1.0 leaves to HTTP.
func authError(e *otc.Error) *rpcError {
	code := codeUnauthenticated
	switch e.Code {
	case otc.CodeForbidden:
		code = codeUnauthorized
	case otc.CodeUnavailable, otc.CodeRateLimited: // the server cannot check now, or will not for a while
		code = codeInternalError
	}
	return &rpcError{Code: code, Message: e.Message, Data: errorInfo(errorReason(e), refusalMetadata(e)), Refusal: e}
}
