package mcp

import (
	"context"
	"log/slog"
	"net/http"
	"slices"

	"github.com/otcgo/otc"
	"github.com/otcgo/otc/internal/wire"
)

// generation is how one generation of the protocol serves a tools/call,
// as the rest of the call is the same for all: which notifications the
// call sends, how its tool asks the client, and how the call ends when
// the tool asked or lacked a capability. server.call picks one per
// request; each generation is one implementation.
type generation interface {
	// metaLogLevel reads the log level a call's _meta asks for (zero for
	// none), or the error that refuses a level that is not MCP's; it is
	// checked whether or not the transport can send logs, so that the
	// same request is refused the same way everywhere.
	metaLogLevel(m *message) (slog.Level, *rpcError)
	// notifications sets up the call's notifier n; metaLevel is the log
	// level the request's _meta asked for, if it did.
	notifications(s *server, c callSite, n *callNotifier, metaLevel slog.Level)
	// tasks reports whether a call may run as a task (the tasks
	// extension is 2026-07-28's).
	tasks() bool
	// prepare readies the call's state, and its asker, for a call whose
	// context is state: it returns the context the call runs in, or the
	// error that refuses the request.
	prepare(s *server, c callSite, state *callState, req *otc.CallRequest) (context.Context, *rpcError)
	// finish answers a call that ended with res: with ok false, as any
	// call is answered, and otherwise with b or e.
	finish(s *server, c callSite, state *callState, res otc.CallResult) (b []byte, e *rpcError, ok bool)
	// meta is the _meta every result carries, without braces.
	meta(s *server) []byte
	// listExtra is what a list result adds after its list (nil for
	// nothing), and resultExtra what any other result adds after its
	// fields: its _meta and result type, each with its leading comma.
	listExtra(s *server) []byte
	resultExtra(s *server) []byte
	// preparePrompt readies a prompts/get whose prompt is subject, as
	// prepare does a call: the context it is rendered in, or the error
	// that refuses it. promptFailed answers a prompt whose Get failed
	// with err, as finish does a call (ok false: as any failure).
	preparePrompt(s *server, ctx context.Context, state *callState, m *message, subject string) (context.Context, *rpcError)
	promptFailed(s *server, ctx context.Context, state *callState, m *message, subject string, err error) (b []byte, e *rpcError, ok bool)

	// checkHTTP checks the headers of a request over HTTP, whose
	// MCP-Protocol-Version header is hv, against its body m; it returns
	// the error that refuses the request, or nil.
	checkHTTP(h *Handler, r *http.Request, m *message, hv string) *rpcError
	// httpStatus is the HTTP status of an error answer over HTTP.
	httpStatus(e *rpcError) int

	// stateless reports whether the generation has no handshake: every
	// request carries its version and capabilities in _meta, which
	// checkMeta checks (nil: nothing to check), and server/discover,
	// not initialize, says what the server speaks.
	stateless() bool
	checkMeta(m *message) *rpcError
	// subscriptions reports whether the generation has
	// resources/subscribe (2026-07-28 has subscriptions/listen instead).
	subscriptions() bool
	// notFoundCode is the code of a read of a URI nothing is at:
	// -32002, or in 2026-07-28 -32602 (SEP-2164).
	notFoundCode() int
	// readExtra is what a resources/read result adds after its contents.
	readExtra(s *server) []byte
	// forbiddenCode is the code of a refusal by a policy.
	forbiddenCode() int
	// version is the version a result names, the request's negotiated
	// one (as the transport knows it) in the generation of sessions.
	version(negotiated string) string
}

// generationFor is the generation of a request: 2026-07-28's when its
// _meta names a version (which only that generation sends), it is
// server/discover, or its MCP-Protocol-Version header (hv, "" over stdio)
// says so; else the generation of sessions.
func generationFor(m *message, hv string) generation {
	if m.hasMetaVersion || m.method == "server/discover" || hv == Version20260728 {
		return rounds{}
	}
	return handshakes{}
}

// forbiddenCodeOf is the code of a refusal by a policy in the generation
// whose results carry the _meta info (nil in the generation of sessions).
func forbiddenCodeOf(info []byte) int {
	if info != nil {
		return rounds{}.forbiddenCode()
	}
	return handshakes{}.forbiddenCode()
}

// callSite is what a generation reads of a tools/call's exchange: copies
// of its fields, so that the exchange itself, which the transport keeps
// on its stack, does not escape through the interface.
type callSite struct {
	msg      *message
	out      bool // the call can send notifications
	logLevel *slog.LevelVar
	caps     clientCaps // declared in initialize
	request  *http.Request
	stream   *sseStream
	notifier *callNotifier
}

// siteOf returns the call site of an exchange.
func siteOf(x *exchange) callSite {
	return callSite{msg: x.msg, out: x.out != nil, logLevel: x.logLevel, caps: x.caps, request: x.request, stream: x.stream, notifier: x.notifier}
}

// handshakes is the generation of the initialize handshake (2025-06-18 and
// 2025-11-25): logs at the session's level, questions asked on the call's
// stream (ask.go), and the errors of a request answered 200.
type handshakes struct{}

func (handshakes) metaLogLevel(*message) (slog.Level, *rpcError) { return 0, nil }

func (handshakes) tasks() bool { return false }

func (handshakes) notifications(s *server, c callSite, n *callNotifier, _ slog.Level) {
	if !c.out {
		return
	}
	n.logs, n.logLevel = true, s.logLevel
	if c.logLevel != nil {
		n.logLevel = c.logLevel.Level()
	}
}

func (handshakes) prepare(s *server, c callSite, state *callState, _ *otc.CallRequest) (context.Context, *rpcError) {
	m := c.msg
	state.caps = c.caps
	if m.clientCaps != nil && !m.clientCapsWrong {
		state.caps = m.caps
	}
	state.asks, state.notifier, state.request, state.stream = s.asks, c.notifier, c.request, c.stream
	return otc.WithAsker(state, state), nil
}

func (handshakes) finish(_ *server, _ callSite, state *callState, res otc.CallResult) ([]byte, *rpcError, bool) {
	if e := state.missing(res); e != nil {
		e.Status = 0 // this generation answers a request's errors 200
		return nil, e, true
	}
	return nil, nil, false
}

func (handshakes) meta(*server) []byte { return nil }

func (handshakes) listExtra(*server) []byte   { return nil }
func (handshakes) resultExtra(*server) []byte { return nil }

func (handshakes) preparePrompt(_ *server, ctx context.Context, _ *callState, _ *message, _ string) (context.Context, *rpcError) {
	return ctx, nil
}

func (handshakes) promptFailed(*server, context.Context, *callState, *message, string, error) ([]byte, *rpcError, bool) {
	return nil, nil, false
}

// checkHTTP checks nothing: this generation's headers carry no copy of
// the body (an unsupported MCP-Protocol-Version is refused before).
func (handshakes) checkHTTP(*Handler, *http.Request, *message, string) *rpcError { return nil }

func (handshakes) stateless() bool                  { return false }
func (handshakes) checkMeta(*message) *rpcError     { return nil }
func (handshakes) subscriptions() bool              { return true }
func (handshakes) notFoundCode() int                { return codeResourceNotFound }
func (handshakes) readExtra(*server) []byte         { return nil }
func (handshakes) forbiddenCode() int               { return codeForbiddenCall }
func (handshakes) version(negotiated string) string { return negotiated }

// httpStatus answers a well-formed request 200 whatever its outcome.
func (handshakes) httpStatus(e *rpcError) int {
	if st := transportStatus(e); st != 0 {
		return st
	}
	return http.StatusOK
}

// rounds is the generation of 2026-07-28, which keeps no connection open
// for a question: logs only when the request's _meta asks, questions
// asked in input_required rounds (rounds.go), and the server's info in
// every result's _meta.
type rounds struct{}

func (rounds) metaLogLevel(m *message) (slog.Level, *rpcError) {
	if m.metaLogLevel == "" {
		return 0, nil
	}
	l, ok := parseLevel(m.metaLogLevel)
	if !ok {
		return 0, newError(codeInvalidParams, "Invalid params: _meta log level %q is not an MCP log level", wire.Truncate(m.metaLogLevel, 32))
	}
	return l, nil
}

func (rounds) tasks() bool { return true }

func (rounds) notifications(_ *server, c callSite, n *callNotifier, metaLevel slog.Level) {
	if c.out && c.msg.metaLogLevel != "" {
		n.logs, n.logLevel = true, metaLevel
	}
}

func (rounds) prepare(s *server, c callSite, state *callState, req *otc.CallRequest) (context.Context, *rpcError) {
	m := c.msg
	state.caps, state.request = m.caps, c.request
	req.Asker = roundAsker{state}
	if m.roundTrip {
		if e := s.resume(state, state, m, m.name); e != nil {
			return nil, e
		}
	}
	return state, nil
}

func (rounds) finish(s *server, c callSite, state *callState, res otc.CallResult) ([]byte, *rpcError, bool) {
	if b, e, ok := s.finishRound(state, state, c.msg, res); ok {
		return b, e, true
	}
	if e := state.missing(res); e != nil {
		return nil, e, true
	}
	return nil, nil, false
}

func (rounds) meta(s *server) []byte { return s.infoMeta }

func (rounds) listExtra(s *server) []byte { return s.listExtra }

func (rounds) resultExtra(s *server) []byte {
	return slices.Concat([]byte(`,"_meta":{`), s.infoMeta, []byte("}"+callExtra))
}

func (rounds) preparePrompt(s *server, ctx context.Context, state *callState, m *message, subject string) (context.Context, *rpcError) {
	state.caps = m.caps
	ctx = otc.WithAsker(ctx, roundAsker{state})
	if m.roundTrip {
		if e := s.resume(ctx, state, m, subject); e != nil {
			return nil, e
		}
	}
	return ctx, nil
}

func (rounds) promptFailed(s *server, ctx context.Context, state *callState, m *message, subject string, err error) ([]byte, *rpcError, bool) {
	return s.finishAsking(ctx, state, m, subject, err)
}

func (rounds) stateless() bool            { return true }
func (rounds) subscriptions() bool        { return false }
func (rounds) notFoundCode() int          { return codeInvalidParams }
func (rounds) readExtra(s *server) []byte { return s.readExtra }
func (rounds) forbiddenCode() int         { return codeForbiddenModern }
func (rounds) version(string) string      { return Version20260728 }

// checkMeta checks the _meta fields every 2026-07-28 request carries.
func (rounds) checkMeta(m *message) *rpcError {
	switch {
	case !m.metaOK:
		return &rpcError{Code: codeInvalidParams, Message: `Invalid params: a request of protocol version 2026-07-28 carries params._meta with "io.modelcontextprotocol/protocolVersion" and "io.modelcontextprotocol/clientCapabilities"`, Status: http.StatusBadRequest}
	case !m.hasMetaVersion || m.metaVersionBad:
		return &rpcError{Code: codeInvalidParams, Message: `Invalid params: _meta lacks "io.modelcontextprotocol/protocolVersion", a string`, Status: http.StatusBadRequest}
	case m.clientCaps == nil || m.clientCapsWrong:
		return &rpcError{Code: codeInvalidParams, Message: `Invalid params: _meta lacks "io.modelcontextprotocol/clientCapabilities", an object ({} declares none)`, Status: http.StatusBadRequest}
	}
	return nil
}

func (rounds) checkHTTP(h *Handler, r *http.Request, m *message, hv string) *rpcError {
	return h.checkHeaders(r, m, hv)
}

// httpStatus gives the errors of 2026-07-28 statuses of their own: 404
// for an unknown method, 500 for an internal error, 400 otherwise.
func (rounds) httpStatus(e *rpcError) int {
	if st := transportStatus(e); st != 0 {
		return st
	}
	switch e.Code {
	case codeMethodNotFound:
		return http.StatusNotFound
	case codeInternalError:
		return http.StatusInternalServerError
	}
	return http.StatusBadRequest
}

// missing is the missing-capability error that answers a call whose tool
// failed for want of a capability the client did not declare, or nil.
func (s *callState) missing(res otc.CallResult) *rpcError {
	if res.Error == nil {
		return nil
	}
	s.mu.Lock()
	needs := s.needs
	s.mu.Unlock()
	if needs == "" {
		return nil
	}
	return missingCapability(needs)
}
