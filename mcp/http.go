package mcp

import (
	"encoding/base64"
	"encoding/json"
	"mime"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/otcgo/otc"
	"github.com/otcgo/otc/internal/jsonrpc"
	"github.com/otcgo/otc/internal/mcpwire"
	"github.com/otcgo/otc/internal/wire"
)

// Handler serves a registry's tools over MCP's Streamable HTTP transport,
// at whatever path it is mounted on. It answers POST only: GET, which
// would open a stream of server messages, and DELETE, which would end a
// session, are answered 405, as this server has neither.
type Handler struct {
	s              *server
	auth           otc.Authenticator
	timeout        time.Duration
	allowedOrigins map[string]bool
	allowedHosts   map[string]bool
	hostCheck      bool
}

var _ http.Handler = (*Handler)(nil)

// NewHandler returns an MCP handler for reg. opts may be nil. It panics
// when reg is nil, a mistake of setup, not of a request.
func NewHandler(reg *otc.Registry, opts *Options) *Handler {
	if reg == nil {
		panic("mcp: NewHandler called with a nil *otc.Registry")
	}
	if opts == nil {
		opts = &Options{}
	}
	h := &Handler{
		s:              newServer(reg, opts, opts.Authenticator != nil),
		auth:           opts.Authenticator,
		allowedOrigins: map[string]bool{},
		allowedHosts:   map[string]bool{},
		hostCheck:      !opts.DisableHostCheck,
	}
	_, h.timeout = wire.BodyLimits(0, opts.BodyReadTimeout)
	if !opts.Stateless {
		h.s.table = newSessionTable(opts, h.s.sealer, h.s.logger)
		h.s.hub = newHub(h.s, h.s.table)
		h.s.hub.watch()
	}
	for _, o := range opts.AllowedOrigins {
		h.allowedOrigins[strings.ToLower(strings.TrimSuffix(o, "/"))] = true
	}
	for _, host := range opts.AllowedHosts {
		h.allowedHosts[strings.ToLower(host)] = true
	}
	return h
}

// SetDraining, with draining true, ends the handler's subscriptions/listen
// streams, each with its result, so that their clients listen again (on
// another replica), and ends at once any opened later, until
// SetDraining(false); every other request is answered as before.
// mount.Serve calls it when shutdown begins for a handler in its
// ServeOptions.Drain: without it, the streams hold the shutdown until its
// grace period ends.
func (h *Handler) SetDraining(draining bool) {
	if draining {
		h.s.endListens()
	} else {
		h.s.resumeListens()
	}
}

// SetReady(false) is SetDraining(true), and SetReady(true)
// SetDraining(false): the MCP handler refuses no request while not
// ready, but ends its listen streams.
func (h *Handler) SetReady(ready bool) { h.SetDraining(!ready) }

// codeUnauthorized is the JSON-RPC code of a 401, in the range left to
// implementations.
const codeUnauthorized = mcpwire.CodeUnauthorized

// ServeHTTP answers one MCP message.
func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if msg, ok := h.checkOrigin(r); !ok {
		writeHTTPError(w, http.StatusForbidden, nil, &rpcError{Code: codeInvalidRequest, Message: msg})
		return
	}
	sessionful := h.s.table != nil && (r.Method == http.MethodGet || r.Method == http.MethodDelete) &&
		canonicalHeader(r, "Mcp-Protocol-Version") != Version20260728
	if r.Method != http.MethodPost && !sessionful {
		allow, msg := http.MethodPost, "Method not allowed: send JSON-RPC messages with POST; this server opens no stream of its own and keeps no sessions"
		if h.s.table != nil {
			allow, msg = "GET, POST, DELETE", "Method not allowed: send JSON-RPC messages with POST; GET opens a session's stream and DELETE ends it (2026-07-28 has no sessions: subscriptions/listen)"
		}
		w.Header().Set("Allow", allow)
		writeHTTPError(w, http.StatusMethodNotAllowed, nil, &rpcError{Code: codeInvalidRequest, Message: msg})
		return
	}
	r, aerr := otc.Authenticate(h.auth, r)
	if aerr != nil {
		h.challenge(w, aerr)
		e := &rpcError{Code: codeUnauthorized, Message: aerr.Message}
		if aerr.Reason != "" {
			e.Data = refusalData(aerr)
		}
		status := http.StatusUnauthorized
		switch aerr.Code {
		case otc.CodeUnavailable: // the server cannot tell yet: try again
			status, e.Code = http.StatusServiceUnavailable, codeInternalError
			wire.SetRetryAfter(w.Header(), aerr.RetryAfter)
		case otc.CodeRateLimited: // too many failed authentications: try again later
			status, e.Code = http.StatusTooManyRequests, codeServerBusy
			wire.SetRetryAfter(w.Header(), aerr.RetryAfter)
		}
		writeHTTPError(w, status, nil, e)
		return
	}
	switch r.Method {
	case http.MethodGet:
		h.serveStream(w, r) // sessionstream.go
		return
	case http.MethodDelete:
		h.endSession(w, r)
		return
	}
	if !isJSONContentType(canonicalHeader(r, "Content-Type")) {
		writeHTTPError(w, http.StatusUnsupportedMediaType, nil, &rpcError{Code: codeInvalidRequest, Message: "Unsupported media type: send the message as Content-Type: application/json"})
		return
	}
	sse, ok := accepts(r.Header["Accept"])
	if !ok {
		writeHTTPError(w, http.StatusNotAcceptable, nil, &rpcError{Code: codeInvalidRequest, Message: "Not acceptable: the Accept header must allow application/json or text/event-stream"})
		return
	}

	body, err := wire.ReadBody(w, r, h.s.maxBody, h.timeout)
	// The body goes back to its pool when the request ends, or earlier
	// when the request detaches from it (a listen stream).
	x := exchange{held: body}
	defer func() { wire.ReleaseBuffer(x.held) }()
	if err != nil {
		status, msg := wire.BodyProblem(err, h.s.maxBody, h.timeout)
		writeHTTPError(w, status, nil, &rpcError{Code: codeInvalidRequest, Message: msg})
		return
	}
	b := body.Bytes()
	// The message points into the body, so nothing keeps it past the
	// request: it comes from a pool, and goes back when the body does.
	m := getMessage()
	defer putMessage(m) // before the body it refers to
	e := readMessage(b, m, "body")
	if e != nil {
		writeHTTPError(w, http.StatusBadRequest, m.id, e)
		return
	}
	// A header naming a version this server does not speak is refused on
	// every message, before the version decides how the message is read:
	// taken for the newest version, it was answered with that version's
	// header rules, which told the client nothing of what to send instead.
	hv := canonicalHeader(r, "Mcp-Protocol-Version") // MCP-Protocol-Version
	if hv != "" && !isSupportedVersion(hv) {
		writeHTTPError(w, http.StatusBadRequest, m.id, unsupportedVersion(hv, true))
		return
	}
	gen := generationFor(m, hv)
	var sess *session
	if sid := sessionHeader(r); sid != "" && h.s.table != nil && !gen.stateless() && m.method != "initialize" {
		// A request of a session: refused, 404, when the session is no
		// more (the client begins another with initialize).
		if sess, e = h.s.table.check(r.Context(), r, sid); e != nil {
			writeHTTPError(w, e.Status, m.id, e)
			return
		}
		h.s.hub.active()
	}
	if m.isReply { // the client's answer to what a tool asked (ask.go)
		h.answer(w, r, b)
		return
	}
	if !m.hasID {
		// A notification (initialized, cancelled): over HTTP, the server
		// learns of a cancelled call when its connection closes.
		w.WriteHeader(http.StatusAccepted)
		return
	}

	x.msg, x.request, x.body, x.version, x.wantResponse = m, r, b, hv, true
	if sse {
		x.writer = w // a call may answer on an SSE stream (server.call)
	}
	x.gen, x.session = gen, sess
	if sess != nil {
		if x.version == "" {
			x.version = sess.Version
		}
		x.caps = sess.caps()
	}
	if e := gen.checkHTTP(h, r, m, hv); e != nil {
		writeHTTPError(w, e.Status, m.id, e)
		return
	}

	result, e := h.s.handle(r.Context(), &x)
	if e == nil && m.method == "initialize" && h.s.table != nil && !gen.stateless() {
		// The session begins: its id is the answer's header.
		var sid string
		if sid, e = h.s.table.open(r.Context(), r, h.s.negotiate(m.version), m.clientCaps); e == nil {
			w.Header().Set("Mcp-Session-Id", sid)
			h.s.hub.active()
		}
	}
	stream := x.stream
	write := func() {
		wire.ArmWriteDeadline(w, r)
		switch {
		case e == nil && result == nil:
			// A listen stream the client ended: nothing to answer.
		case stream != nil && stream.started:
			out := make([]byte, 0, len(result)+64)
			if e != nil {
				out = jsonrpc.AppendErrorResponse(out, m.id, e)
			} else {
				out = jsonrpc.AppendResponse(out, m.id, result)
			}
			stream.event(out)
		case e != nil:
			h.challenge(w, e.Refusal)
			writeHTTPError(w, gen.httpStatus(e), m.id, e)
		case x.response != nil:
			writeJSON(w, http.StatusOK, x.response)
		default:
			writeResult(w, m.id, result)
		}
	}
	if x.notifier != nil {
		x.notifier.finish(write)
	} else {
		write()
	}
	x.releaseResponse()
}

// challenge sets the WWW-Authenticate header of an answer refusing the
// request with e: a 401, or a 403 for want of scopes ([otc.Challenge]).
// A nil e, an error that is not a refusal, sets none.
func (h *Handler) challenge(w http.ResponseWriter, e *otc.Error) {
	if c := otc.Challenge(h.auth, e); c != "" {
		w.Header().Set("WWW-Authenticate", c)
	}
}

// transportStatus is the HTTP status of an error answer whatever the
// generation: the one the error carries, or 400 for a request that is not
// JSON-RPC; 0 when the generation decides.
func transportStatus(e *rpcError) int {
	if e.Status != 0 {
		return e.Status
	}
	switch e.Code {
	case codeParseError, codeInvalidRequest:
		return http.StatusBadRequest
	}
	return 0
}

// checkHeaders checks the headers of a 2026-07-28 request against its
// body, in the order the protocol's errors are specified: required headers
// present, _meta complete, then each header equal to the body's value.
func (h *Handler) checkHeaders(r *http.Request, m *message, hv string) *rpcError {
	mismatch := func(format string, args ...any) *rpcError {
		e := newError(codeHeaderMismatch, format, args...)
		e.Status = http.StatusBadRequest
		return e
	}
	if hv == "" {
		return mismatch("Header mismatch: the MCP-Protocol-Version header is required")
	}
	method, hasMethod := canonicalHeaderValue(r, "Mcp-Method")
	if !hasMethod {
		return mismatch("Header mismatch: the Mcp-Method header is required")
	}
	needsName, want := m.method == "tools/call", m.name
	if isTaskMethod(m.method) { // the task id, for routing to the replica that holds the task
		want, needsName = taskIDParam(m.params)
	}
	name, hasName := canonicalHeaderValue(r, "Mcp-Name")
	if needsName && !hasName {
		return mismatch("Header mismatch: the Mcp-Name header is required for %s", m.method)
	}
	if e := (rounds{}).checkMeta(m); e != nil {
		return e
	}
	if hv != m.metaVersion {
		return mismatch("Header mismatch: MCP-Protocol-Version header value '%s' does not match body value '%s'", wire.Truncate(hv, 32), wire.Truncate(m.metaVersion, 32))
	}
	if m.metaVersion != Version20260728 {
		return unsupportedVersion(m.metaVersion, false)
	}
	if method != m.method {
		return mismatch("Header mismatch: Mcp-Method header value '%s' does not match body value '%s'", wire.Truncate(method, 64), wire.Truncate(m.method, 64))
	}
	if needsName {
		decoded, ok := decodeHeaderValue(name)
		if !ok {
			return mismatch("Header mismatch: the Mcp-Name header value is not valid")
		}
		if decoded != want {
			return mismatch("Header mismatch: Mcp-Name header value '%s' does not match body value '%s'", wire.Truncate(decoded, 64), wire.Truncate(want, 64))
		}
		if m.method != "tools/call" {
			return nil
		}
		return h.checkParamHeaders(r, m)
	}
	return nil
}

// checkParamHeaders compares the Mcp-Param-* headers of a tools/call with
// the arguments its tool's schema marks with x-mcp-header.
func (h *Handler) checkParamHeaders(r *http.Request, m *message) *rpcError {
	// A call of an older version ("name@1") is held to the listed
	// version's annotations, the ones a client mirrors headers from.
	name, _, _ := strings.Cut(m.name, "@")
	params := h.s.lists.get(h.s.reg).headers[name]
	if params == nil {
		return nil
	}
	var args map[string]any
	if m.arguments != nil {
		d := json.NewDecoder(strings.NewReader(string(m.arguments)))
		d.UseNumber()
		_ = d.Decode(&args)
	}
	for _, p := range params {
		v, present := lookup(args, p.path)
		hdr, hasHdr := headerValue(r, "Mcp-Param-"+p.header)
		if !present || v == nil {
			continue // the client omits the header; one sent anyway is ignored
		}
		if !hasHdr {
			e := newError(codeHeaderMismatch, "Header mismatch: the Mcp-Param-%s header is required, as argument %s is given", p.header, strings.Join(p.path, "."))
			e.Status = http.StatusBadRequest
			return e
		}
		decoded, ok := decodeHeaderValue(hdr)
		if !ok || !headerMatches(decoded, v) {
			e := newError(codeHeaderMismatch, "Header mismatch: Mcp-Param-%s header value does not match argument %s", p.header, strings.Join(p.path, "."))
			e.Status = http.StatusBadRequest
			return e
		}
	}
	return nil
}

// lookup reads the value at a chain of properties.
func lookup(args map[string]any, path []string) (any, bool) {
	var cur any = args
	for _, k := range path {
		obj, ok := cur.(map[string]any)
		if !ok {
			return nil, false
		}
		if cur, ok = obj[k]; !ok {
			return nil, false
		}
	}
	return cur, true
}

// headerMatches compares a decoded header value with an argument: strings
// exactly, booleans as "true" and "false", numbers numerically.
func headerMatches(h string, v any) bool {
	switch v := v.(type) {
	case string:
		return h == v
	case bool:
		return h == strconv.FormatBool(v)
	case json.Number:
		want, err1 := strconv.ParseFloat(v.String(), 64)
		got, err2 := strconv.ParseFloat(h, 64)
		return err1 == nil && err2 == nil && want == got
	}
	return false
}

// canonicalHeader is r.Header.Get for a key already in canonical form,
// without the work (and, for a key such as MCP-Protocol-Version, the
// allocation) of canonicalizing it on every request.
func canonicalHeader(r *http.Request, key string) string {
	if vs := r.Header[key]; len(vs) > 0 {
		return vs[0]
	}
	return ""
}

// headerValue returns a request header and whether it was sent.
func headerValue(r *http.Request, name string) (string, bool) {
	vs := r.Header.Values(name)
	if len(vs) == 0 {
		return "", false
	}
	return strings.TrimSpace(vs[0]), true
}

// canonicalHeaderValue is headerValue for a key already in canonical form.
func canonicalHeaderValue(r *http.Request, key string) (string, bool) {
	vs := r.Header[key]
	if len(vs) == 0 {
		return "", false
	}
	return strings.TrimSpace(vs[0]), true
}

// decodeHeaderValue decodes a value that may use the Base64 form
// =?base64?...?=, and checks a plain one holds only the characters a
// header value may.
func decodeHeaderValue(v string) (string, bool) {
	if strings.HasPrefix(v, "=?base64?") && strings.HasSuffix(v, "?=") && len(v) >= len("=?base64??=") {
		raw, err := base64.StdEncoding.Strict().DecodeString(v[len("=?base64?") : len(v)-len("?=")])
		if err != nil || !utf8.Valid(raw) {
			return "", false
		}
		return string(raw), true
	}
	for i := 0; i < len(v); i++ {
		if c := v[i]; (c < 0x20 && c != '\t') || c > 0x7e {
			return "", false
		}
	}
	return v, true
}

// isJSONContentType reports whether a Content-Type names JSON, without
// parsing the common spellings.
func isJSONContentType(ct string) bool {
	switch ct {
	case "application/json", "application/json; charset=utf-8", "application/json;charset=utf-8":
		return true
	}
	mt, _, err := mime.ParseMediaType(ct)
	return err == nil && mt == "application/json"
}

// accepts reads the Accept header: whether it allows an SSE answer, and
// whether it allows any answer this handler gives. A missing header
// allows JSON.
func accepts(values []string) (sse, ok bool) {
	if len(values) == 0 {
		return false, true
	}
	if len(values) == 1 {
		switch values[0] { // what clients send, spelled out
		case "application/json, text/event-stream", "text/event-stream, application/json", "application/json,text/event-stream":
			return true, true
		case "application/json":
			return false, true
		}
	}
	for _, v := range values {
		for part := range strings.SplitSeq(v, ",") {
			mt, params, err := mime.ParseMediaType(strings.TrimSpace(part))
			if err != nil || refused(params["q"]) {
				continue
			}
			switch mt {
			case "text/event-stream":
				sse, ok = true, true
			case "application/json", "application/*", "*/*":
				ok = true
			}
		}
	}
	return sse, ok
}

// refused reports whether a quality value, "0" or "0.000" alike, refuses
// its media type.
func refused(q string) bool {
	f, err := strconv.ParseFloat(q, 64)
	return err == nil && f == 0
}

// checkOrigin guards against DNS rebinding and cross-site calls: a request
// that reached a loopback address must name a loopback host (or an allowed
// one), and a browser's Origin must be the request's own host or an
// allowed origin.
func (h *Handler) checkOrigin(r *http.Request) (string, bool) {
	if h.hostCheck {
		if la, ok := r.Context().Value(http.LocalAddrContextKey).(net.Addr); ok && isLoopbackAddr(la) {
			if !isLoopbackHost(r.Host) && !h.allowedHosts[strings.ToLower(r.Host)] && !h.allowedHosts[strings.ToLower(hostOnly(r.Host))] {
				return "Forbidden: this server on a loopback address answers only requests to localhost; list other host names in Options.AllowedHosts", false
			}
		}
	}
	origin := canonicalHeader(r, "Origin")
	if origin == "" {
		return "", true
	}
	if h.allowedOrigins[strings.ToLower(strings.TrimSuffix(origin, "/"))] {
		return "", true
	}
	u, err := url.Parse(origin)
	if err == nil && u.Host != "" && strings.EqualFold(u.Host, r.Host) && (u.Scheme == "http" || u.Scheme == "https") {
		return "", true
	}
	return "Forbidden: requests from origin " + strconv.Quote(wire.Truncate(origin, 100)) + " are not allowed; list it in Options.AllowedOrigins", false
}

func isLoopbackAddr(a net.Addr) bool {
	switch a := a.(type) {
	case *net.TCPAddr:
		return a.IP.IsLoopback()
	}
	host := hostOnly(a.String())
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// hostOnly strips the port from a host[:port].
func hostOnly(hostport string) string {
	if h, _, err := net.SplitHostPort(hostport); err == nil {
		return h
	}
	return strings.TrimSuffix(strings.TrimPrefix(hostport, "["), "]")
}

// isLoopbackHost reports whether a Host header names this machine: localhost,
// a name under .localhost, or a loopback address. It allocates nothing,
// as it runs for every request that reaches a loopback listener.
func isLoopbackHost(hostport string) bool {
	h := hostOnly(hostport)
	const suffix = ".localhost"
	if strings.EqualFold(h, "localhost") || len(h) > len(suffix) && strings.EqualFold(h[len(h)-len(suffix):], suffix) {
		return true
	}
	ip, err := netip.ParseAddr(h)
	return err == nil && ip.Unmap().IsLoopback()
}

// sseStream answers a call with an SSE stream once the tool sends its first
// notification; until then the answer is still a plain JSON response.
type sseStream struct {
	w       http.ResponseWriter
	r       *http.Request
	started bool
}

func (s *sseStream) send(msg []byte) {
	s.start()
	s.event(msg)
}

// start writes the stream's headers, once.
func (s *sseStream) start() {
	if s.started {
		return
	}
	h := s.w.Header()
	h.Set("Content-Type", "text/event-stream")
	h.Set("Cache-Control", "no-cache")
	h.Set("X-Accel-Buffering", "no")
	s.w.WriteHeader(http.StatusOK)
	s.started = true
}

// eventID writes msg as an event with an ID, which a client that loses
// the stream resumes from (Last-Event-ID).
func (s *sseStream) eventID(msg []byte, id string) {
	if id == "" {
		s.event(msg)
		return
	}
	out := make([]byte, 0, len(msg)+len(id)+30)
	out = append(out, "id: "...)
	out = append(out, id...)
	out = append(out, "\nevent: message\ndata: "...)
	out = append(out, msg...)
	out = append(out, "\n\n"...)
	s.write(out)
}

func (s *sseStream) event(msg []byte) {
	out := make([]byte, 0, len(msg)+24)
	out = append(out, "event: message\ndata: "...)
	out = append(out, msg...)
	out = append(out, "\n\n"...)
	s.write(out)
}

// write writes and flushes what the stream carries next.
func (s *sseStream) write(b []byte) {
	// A tool may report, or ask, long after the request came in: each
	// write restarts the server's WriteTimeout, as the answer does.
	wire.ArmWriteDeadline(s.w, s.r)
	if _, err := s.w.Write(b); err == nil {
		_ = http.NewResponseController(s.w).Flush()
	}
}

func writeJSON(w http.ResponseWriter, status int, body []byte) {
	wire.SetJSONHeaders(w.Header(), len(body), false)
	w.WriteHeader(status)
	_, _ = w.Write(body)
}

// writeResult answers with a JSON-RPC response whose result is result,
// in one write from a pooled buffer (a ResponseWriter keeps nothing it is
// given, so the buffer is free again when Write returns). A large result
// (a long tools/list page) is written as it is, between the envelope's
// head and tail, rather than copied.
func writeResult(w http.ResponseWriter, id, result []byte) {
	buf := wire.GetBuffer()
	defer wire.ReleaseBuffer(buf)
	head := jsonrpc.AppendResultHead(buf.AvailableBuffer(), id)
	n := len(head) + len(result) + 1
	wire.SetJSONHeaders(w.Header(), n, false)
	w.WriteHeader(http.StatusOK)
	if len(result) < 8<<10 {
		b := append(head, result...)
		b = append(b, '}')
		_, _ = w.Write(b)
		buf.Write(b) // keeps the grown array for the pool
		return
	}
	for _, p := range [...][]byte{head, result, closeBrace} {
		if _, err := w.Write(p); err != nil {
			return // the client has gone
		}
	}
}

// closeBrace ends writeResult's answer. Writers must not keep or change
// what they are given (io.Writer), so it is shared.
var closeBrace = []byte{'}'}

// writeHTTPError answers with a JSON-RPC error response.
func writeHTTPError(w http.ResponseWriter, status int, id []byte, e *rpcError) {
	writeJSON(w, status, jsonrpc.AppendErrorResponse(nil, id, e))
}
