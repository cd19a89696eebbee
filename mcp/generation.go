package mcp

import (
	"context"
	"log/slog"

	"github.com/otcgo/otc"
)

// generation is how one generation of the protocol serves a tools/call,
// as the rest of the call is the same for all: which notifications the
// call sends, how its tool asks the client, and how the call ends when
// the tool asked or lacked a capability. server.call picks one per
// request; each generation is one implementation.
type generation interface {
	// notifications sets up the call's notifier n; metaLevel is the log
	// level the request's _meta asked for, if it did.
	notifications(s *server, x *exchange, n *callNotifier, metaLevel slog.Level)
	// prepare readies the call's state, and its asker, for a call whose
	// context is state: it returns the context the call runs in, or the
	// error that refuses the request.
	prepare(s *server, x *exchange, state *callState, req *otc.CallRequest) (context.Context, *rpcError)
	// finish answers a call that ended with res: with ok false, as any
	// call is answered, and otherwise with b or e.
	finish(s *server, x *exchange, state *callState, res otc.CallResult) (b []byte, e *rpcError, ok bool)
	// meta is the _meta every result carries, without braces.
	meta(s *server) []byte
}

// generationOf returns the generation of a request.
func generationOf(x *exchange) generation {
	if x.modern {
		return rounds{}
	}
	return sessions{}
}

// sessions is the generation of the initialize handshake (2025-06-18 and
// 2025-11-25): logs at the session's level, questions asked on the call's
// stream (ask.go), and the errors of a request answered 200.
type sessions struct{}

func (sessions) notifications(s *server, x *exchange, n *callNotifier, _ slog.Level) {
	if x.out == nil {
		return
	}
	n.logs, n.logLevel = true, s.logLevel
	if x.logLevel != nil {
		n.logLevel = x.logLevel.Level()
	}
}

func (sessions) prepare(s *server, x *exchange, state *callState, _ *otc.CallRequest) (context.Context, *rpcError) {
	m := x.msg
	state.caps = x.caps
	if m.clientCaps != nil && !m.clientCapsWrong {
		state.caps = m.caps
	}
	state.asks, state.notifier, state.request, state.stream = s.asks, x.notifier, x.request, x.stream
	return otc.WithAsker(state, state), nil
}

func (sessions) finish(_ *server, _ *exchange, state *callState, res otc.CallResult) ([]byte, *rpcError, bool) {
	if e := state.missing(res); e != nil {
		e.status = 0 // this generation answers a request's errors 200
		return nil, e, true
	}
	return nil, nil, false
}

func (sessions) meta(*server) []byte { return nil }

// rounds is the generation of 2026-07-28, which keeps no connection open
// for a question: logs only when the request's _meta asks, questions
// asked in input_required rounds (rounds.go), and the server's info in
// every result's _meta.
type rounds struct{}

func (rounds) notifications(_ *server, x *exchange, n *callNotifier, metaLevel slog.Level) {
	if x.out != nil && x.msg.metaLogLevel != "" {
		n.logs, n.logLevel = true, metaLevel
	}
}

func (rounds) prepare(s *server, x *exchange, state *callState, req *otc.CallRequest) (context.Context, *rpcError) {
	m := x.msg
	state.caps = m.caps
	req.Asker = (*roundAsker)(state)
	if m.roundTrip {
		if e := s.resume(state, state, m, m.name); e != nil {
			return nil, e
		}
	}
	return state, nil
}

func (rounds) finish(s *server, x *exchange, state *callState, res otc.CallResult) ([]byte, *rpcError, bool) {
	if b, e, ok := s.finishRound(state, state, x.msg, res); ok {
		return b, e, true
	}
	if e := state.missing(res); e != nil {
		return nil, e, true
	}
	return nil, nil, false
}

func (rounds) meta(s *server) []byte { return s.infoMeta }

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
