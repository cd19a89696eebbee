package mcp

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/otcgo/otc"
	"github.com/otcgo/otc/caller"
	"github.com/otcgo/otc/internal/jsonrpc"
	"github.com/otcgo/otc/internal/wire"
)

// This file is how a tool asks its client something in the middle of a
// call in protocol versions 2025-06-18 and 2025-11-25 ([otc.Ask]): the
// server sends the client a JSON-RPC request (elicitation/create,
// sampling/createMessage, roots/list) and the tool waits for the answer.
//
//   - Over HTTP the request travels on the SSE stream of the tools/call's
//     own POST, which switches to text/event-stream when the tool asks (as
//     it does for progress), and the client answers with a POST of its own
//     carrying the JSON-RPC response. The server keeps no sessions, so the
//     answer finds its call through a table of the requests awaiting
//     answers, in this process: a deployment with several replicas must
//     route the answer to the replica that asked (see the MCP guide).
//   - Over stdio the request is a line on the pipe, and the answer a line
//     back.
//
// The ids of these requests are random (128 bits), so that no one can
// answer a request they did not receive, and an answer over HTTP is taken
// only from the identity the call was made by. Every request awaiting an
// answer holds a place in a table bounded per server and per caller, and
// leaves it when answered, when the wait times out, or when the call ends
// (its client gone, cancelled, or past the tool's timeout).
//
// 2026-07-28 asks without waiting, through input_required results; its
// calls are not served here.

// Defaults of the asking options of [Options].
const (
	// DefaultAskTimeout bounds how long a tool waits for the client to
	// answer one of its questions: a person reading an elicitation may take
	// a while, and a call should not hold its place forever.
	DefaultAskTimeout = 10 * time.Minute
	// DefaultMaxPendingAsks bounds the questions awaiting answers on one
	// Handler, or one stdio connection, at once.
	DefaultMaxPendingAsks = 1024
	// DefaultMaxPendingAsksPerCaller bounds the questions awaiting answers
	// from one caller at once: one authenticated identity, or, for callers
	// without one, one remote IP address.
	DefaultMaxPendingAsksPerCaller = 16
)

// askTable holds the server-to-client requests awaiting answers, by id.
type askTable struct {
	timeout      time.Duration // zero: no limit but the call's
	keepAlive    time.Duration // between comments on a waiting SSE stream
	max          int
	maxPerCaller int

	mu        sync.Mutex
	pending   map[string]*pendingAsk
	perCaller map[string]int
}

// pendingAsk is one request awaiting its answer.
type pendingAsk struct {
	id     string
	method string
	owner  string // the caller (caller.Key) the answer must come from, who the per-caller limit counts; "" on stdio
	reply  chan askReply
}

// askReply is the client's answer: a result, or an error.
type askReply struct {
	result json.RawMessage
	err    *rpcError
}

func newAskTable(opts *Options) *askTable {
	t := &askTable{
		timeout:      opts.AskTimeout,
		keepAlive:    askKeepAlive,
		max:          opts.MaxPendingAsks,
		maxPerCaller: opts.MaxPendingAsksPerCaller,
		pending:      map[string]*pendingAsk{},
		perCaller:    map[string]int{},
	}
	switch {
	case t.timeout == 0:
		t.timeout = DefaultAskTimeout
	case t.timeout < 0:
		t.timeout = 0
	}
	if t.max <= 0 {
		t.max = DefaultMaxPendingAsks
	}
	if t.maxPerCaller <= 0 {
		t.maxPerCaller = DefaultMaxPendingAsksPerCaller
	}
	return t
}

// codeUnsupportedMethod is the code the Go SDK's client answers a
// sampling request with when it has no handler for it.
const codeUnsupportedMethod = -31001

// errAskBusy is returned when a table limit refuses a question.
var errAskBusy = errors.New("too many questions await answers")

// reserve adds n requests for one caller, all or none.
func (t *askTable) reserve(methods []string, owner string) ([]*pendingAsk, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	n := len(methods)
	if len(t.pending)+n > t.max {
		return nil, fmt.Errorf("%w: the questions awaiting answers on this server would pass its limit of %d (Options.MaxPendingAsks); try again once some calls have ended", errAskBusy, t.max)
	}
	if t.perCaller[owner]+n > t.maxPerCaller {
		return nil, fmt.Errorf("%w: the questions awaiting this caller's answers would pass its limit of %d (Options.MaxPendingAsksPerCaller); answer those first", errAskBusy, t.maxPerCaller)
	}
	out := make([]*pendingAsk, n)
	for i, m := range methods {
		p := &pendingAsk{id: "otc-" + rand.Text(), method: m, owner: owner, reply: make(chan askReply, 1)}
		t.pending[p.id] = p
		out[i] = p
	}
	t.perCaller[owner] += n
	return out, nil
}

// release removes requests that are still pending.
func (t *askTable) release(ps []*pendingAsk) {
	t.mu.Lock()
	defer t.mu.Unlock()
	for _, p := range ps {
		if t.pending[p.id] == p {
			t.drop(p)
		}
	}
}

// drop removes p; t.mu is held.
func (t *askTable) drop(p *pendingAsk) {
	delete(t.pending, p.id)
	if t.perCaller[p.owner]--; t.perCaller[p.owner] <= 0 {
		delete(t.perCaller, p.owner)
	}
}

// deliver hands an answer to the request with id, when one is pending and
// owner is the identity it waits for. It reports whether it did.
func (t *askTable) deliver(id, owner string, r askReply) bool {
	t.mu.Lock()
	p := t.pending[id]
	if p == nil || p.owner != owner {
		t.mu.Unlock()
		return false
	}
	t.drop(p)
	t.mu.Unlock()
	p.reply <- r // buffered, and sent to once: it leaves the table here
	return true
}

// parseReply reads a JSON-RPC response that may answer one of the
// server's requests: its id, when a string (the server's ids are), and its
// result or error. body is valid JSON.
func parseReply(body []byte) (id string, r askReply, ok bool) {
	var msg struct {
		ID     json.RawMessage `json:"id"`
		Result json.RawMessage `json:"result"`
		Error  *rpcError       `json:"error"`
	}
	if json.Unmarshal(body, &msg) != nil {
		return "", r, false
	}
	id, ok = jsonString(msg.ID)
	if !ok {
		return "", r, false
	}
	switch {
	case msg.Error != nil:
		r.err = msg.Error
	case len(msg.Result) > 0 && msg.Result[0] == '{':
		r.result = msg.Result
	default:
		r.err = &rpcError{Code: codeInvalidParams, Message: "the answer's result is not a JSON object"}
	}
	return id, r, true
}

// replier names the sender of an answer for deliver, as caller.Key
// names the caller asked; a caller whose credential names no one matches
// no question (none was asked of it).
func replier(r *http.Request) string {
	key, err := caller.Key(r.Context(), r)
	if err != nil {
		return "\x00nobody"
	}
	return key
}

// allow checks a question against the client's capabilities
// (clientCaps.allows), and records a capability the client lacks with
// markNeeds. s.mu must not be held.
func (s *callState) allow(r otc.InputRequest) error {
	err := s.caps.allows(r)
	if mc, ok := errors.AsType[*MissingCapabilityError](err); ok {
		s.markNeeds(mc.Capability)
	}
	return err
}

// markNeeds records that the tool needed a capability the client lacks:
// a call that then fails is answered with the missing-capability error.
func (s *callState) markNeeds(capability string) {
	s.mu.Lock()
	if s.needs == "" {
		s.needs = capability
	}
	s.mu.Unlock()
}

// Ask puts the tool's questions to the client as server-to-client
// requests, and waits for the answers. It implements [otc.Asker] for the
// calls of protocol versions 2025-06-18 and 2025-11-25.
func (s *callState) Ask(ctx context.Context, reqs []otc.InputRequest) ([]json.RawMessage, error) {
	n := s.notifier
	if s.asks == nil || n == nil || n.out == nil {
		return nil, fmt.Errorf("mcp: ask: %w: the request's Accept header does not allow text/event-stream, the only way this server can send a request to its client during a call", otc.ErrInputUnsupported)
	}
	methods := make([]string, len(reqs))
	params := make([][]byte, len(reqs))
	for i, r := range reqs {
		// Compacted, as the message travels on one line (stdio) or one
		// data field (SSE).
		var buf bytes.Buffer
		if len(bytes.TrimSpace(r.Params)) > 0 {
			if json.Compact(&buf, r.Params) != nil || buf.Bytes()[0] != '{' {
				return nil, fmt.Errorf("mcp: ask: the params of %s must be a JSON object", r.Method)
			}
		}
		params[i] = buf.Bytes()
		if err := s.allow(r); err != nil {
			return nil, err
		}
		methods[i] = r.Method
	}
	owner := "" // on stdio, the connection is the one client
	if s.request != nil {
		var err error
		if owner, err = caller.Key(ctx, s.request); err != nil {
			return nil, fmt.Errorf("mcp: ask: %w: %w", otc.ErrInputUnsupported, err)
		}
	}
	ps, err := s.asks.reserve(methods, owner)
	if err != nil {
		return nil, fmt.Errorf("mcp: ask: %w", err)
	}
	defer s.asks.release(ps)
	for i, p := range ps {
		if !n.sendRequest(jsonrpc.AppendRequest(nil, p.id, p.method, params[i])) {
			// A goroutine the tool left running, or a task going on after
			// its call was answered: no one is listening any more.
			return nil, fmt.Errorf("mcp: ask: %w: the call has already been answered, so its client can no longer be asked; ask before returning", otc.ErrInputUnsupported)
		}
	}
	var timeout <-chan time.Time
	if s.asks.timeout > 0 {
		t := time.NewTimer(s.asks.timeout)
		defer t.Stop()
		timeout = t.C
	}
	var tick <-chan time.Time
	if s.stream != nil {
		t := time.NewTicker(s.asks.keepAlive)
		defer t.Stop()
		tick = t.C
	}
	out := make([]json.RawMessage, len(ps))
	for i := 0; i < len(ps); {
		p := ps[i]
		select {
		case r := <-p.reply:
			if r.err != nil {
				s.cancel(ps[i+1:], "another request of the call failed")
				return nil, s.clientError(p, r.err)
			}
			out[i] = r.result
			i++
		case <-tick:
			s.keepAlive()
		case <-ctx.Done():
			s.cancel(ps[i:], "the call ended")
			return nil, fmt.Errorf("mcp: ask: the call ended before the client answered %s: %w", p.method, context.Cause(ctx))
		case <-timeout:
			s.cancel(ps[i:], "no answer in time")
			return nil, fmt.Errorf("mcp: ask: the client did not answer %s within %s (Options.AskTimeout)", p.method, s.asks.timeout)
		}
	}
	return out, nil
}

// clientError is what Ask returns for a client's error answer: one
// wrapping otc.ErrInputUnsupported when the client refused the method as
// one it does not support, as a client without the capability does.
// Clients say so differently: JSON-RPC's -32601 (Method not found, the
// TypeScript SDK), or an error whose message says it does not support it
// (the Go SDK: -32602 for elicitation, -31001 for sampling).
func (s *callState) clientError(p *pendingAsk, e *rpcError) error {
	msg := wire.Truncate(e.Message, 200)
	if e.Code == codeMethodNotFound || e.Code == codeUnsupportedMethod || strings.Contains(strings.ToLower(msg), "not support") {
		capability, _, _ := inputCapability(p.method)
		s.markNeeds(capability)
		return fmt.Errorf("mcp: ask: %w: the client answered %s with %q (JSON-RPC error %d): it has no %s capability",
			otc.ErrInputUnsupported, p.method, msg, e.Code, capability)
	}
	return fmt.Errorf("mcp: ask: the client answered %s with an error: %q (JSON-RPC error %d)", p.method, msg, e.Code)
}

// cancel tells the client that the requests it has not answered are no
// longer awaited, so that it can take down their prompts.
func (s *callState) cancel(ps []*pendingAsk, reason string) {
	for _, p := range ps {
		if len(p.reply) > 0 {
			continue // answered, though not yet read
		}
		b := make([]byte, 0, 128)
		b = jsonrpc.AppendNotificationHead(b, "notifications/cancelled")
		b = append(b, `{"requestId":`...)
		b = wire.AppendString(b, p.id)
		b = append(b, `,"reason":`...)
		b = wire.AppendString(b, reason)
		b = append(b, "}}"...)
		s.notifier.sendRequest(b)
	}
}

// askKeepAlive is how often a stream whose call waits for its client
// carries a comment, so that proxies and load balancers that close idle
// connections (often after 60 seconds) keep it open while a person reads.
const askKeepAlive = 20 * time.Second

// keepAlive writes an SSE comment on the call's stream, which clients
// ignore, unless the call has been answered.
func (s *callState) keepAlive() {
	n := s.notifier
	n.mu.Lock()
	defer n.mu.Unlock()
	if !n.done && s.stream.started {
		s.stream.write([]byte(": waiting for the client's answer\n\n"))
	}
}

// sendRequest sends a message the server starts (a request, or the
// cancellation of one) on the call's stream, unless the call has been
// answered. It reports whether it did.
func (n *callNotifier) sendRequest(msg []byte) bool {
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.done || n.out == nil {
		return false
	}
	n.out.send(msg)
	return true
}

// initializeCapabilities returns the capabilities object of an initialize
// request's params, or "{}" when it has none.
func initializeCapabilities(params []byte) []byte {
	var p struct {
		Capabilities json.RawMessage `json:"capabilities"`
	}
	if json.Unmarshal(params, &p) != nil || len(p.Capabilities) == 0 || p.Capabilities[0] != '{' {
		return []byte("{}")
	}
	return p.Capabilities
}

// answer takes a POST carrying a JSON-RPC response: the client's answer to
// a request a tool sent on a call's stream. It is answered 202 when a
// request of this server awaited it from this caller, and 400 otherwise,
// as the transport answers a message it cannot accept: no request awaits
// that id here (it was answered, or given up on, or another replica of the
// server sent it), or it awaits another caller's answer. Both read the
// same, so that the answer tells no one what others were asked.
func (h *Handler) answer(w http.ResponseWriter, r *http.Request, body []byte) {
	if id, rep, ok := parseReply(body); ok && h.s.asks.deliver(id, replier(r), rep) {
		w.WriteHeader(http.StatusAccepted)
		return
	}
	writeHTTPError(w, http.StatusBadRequest, nil, &rpcError{Code: codeInvalidRequest,
		Message: "No request of this server awaits this answer: it was answered already, or waited for too long, or the call that asked has ended, " +
			"or another server replica asked it (route a client's answers to the replica that sent the request), or it was asked of another caller"})
}
