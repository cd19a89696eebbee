package client

import (
	"bufio"
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/otcgo/otc"
	"github.com/otcgo/otc/internal/backoff"
	"github.com/otcgo/otc/internal/jsonrpc"
	"github.com/otcgo/otc/internal/mcpwire"
	"github.com/otcgo/otc/internal/wire"
)

// mcpHTTP carries MCP over Streamable HTTP: each request a POST whose
// answer is a JSON body or an SSE stream, the server's requests on that
// stream answered with POSTs of their own.
type mcpHTTP struct {
	c   *Client
	url string

	mu      sync.Mutex
	session string // Mcp-Session-Id, when the server keeps sessions
	// sessionValue is session as a header's value, made once.
	sessionValue []string
	// stopListen ends the session's own event stream (listen).
	stopListen context.CancelFunc
	// streamHeader is what the session's own stream carries beside the
	// client's: the headers of the call that began the session, if one
	// did, whose credentials the session is of.
	streamHeader http.Header
}

// started opens the session's own event stream, when the server keeps a
// session and the client has something to hear on it
// (Options.OnNotification, or Options.Handlers for the server's
// requests): the notifications and requests of the server's that belong
// to no request of the client's come there.
func (h *mcpHTTP) started(s *mcpSession, version string, header http.Header) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.session == "" || h.stopListen != nil || h.c.opts.OnNotification == nil && h.c.opts.Handlers == nil {
		return
	}
	h.streamHeader = header
	ctx, cancel := context.WithCancel(context.Background())
	h.stopListen = cancel
	ready := make(chan struct{})
	go h.listen(ctx, s, version, ready)
	// The first requests of the session may lead the server to ask
	// something on this stream: it is open (or refused) before they go.
	h.mu.Unlock()
	select {
	case <-ready:
	case <-time.After(listenWait):
	}
	h.mu.Lock()
}

// listenWait bounds the wait for the session's own stream to open.
const listenWait = 2 * time.Second

func (h *mcpHTTP) sessionID() string {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.session
}

func (h *mcpHTTP) reset() {
	h.mu.Lock()
	h.session = ""
	if h.stopListen != nil {
		h.stopListen()
		h.stopListen = nil
	}
	h.mu.Unlock()
}

// versionHeaders are the versions' names as header values, made once.
var versionHeaders = func() map[*mcpwire.Version][]string {
	m := map[*mcpwire.Version][]string{}
	for _, v := range mcpwire.Versions {
		m[v] = []string{v.Name}
	}
	return m
}()

// post sends one message. version is the protocol version of its
// headers (nil before initialize has settled one); k is the call it is
// part of, nil for none, whose own headers it carries (and, for the
// call's tools/call, the headers mirrored from its arguments).
func (h *mcpHTTP) post(ctx context.Context, k *call, version *mcpwire.Version, method, tool string, body []byte) (*http.Response, error) {
	req, err := h.c.newRequest(ctx, http.MethodPost, h.url, "application/json, text/event-stream", body, k.header())
	if err != nil {
		return nil, err
	}
	if version != nil {
		hv := versionHeaders[version]
		if hv == nil {
			hv = []string{version.Name}
		}
		req.Header["Mcp-Protocol-Version"] = hv
	}
	stateless := version != nil && version.Stateless
	if stateless && method != "" {
		req.Header["Mcp-Method"] = []string{method}
		if tool != "" && !strings.ContainsAny(tool, "\r\n") {
			req.Header["Mcp-Name"] = []string{tool}
		}
	}
	if !stateless {
		h.mu.Lock()
		if h.session != "" {
			req.Header["Mcp-Session-Id"] = h.sessionValue
		}
		h.mu.Unlock()
	}
	if k != nil && method == "tools/call" {
		for key, v := range k.mirrored {
			req.Header[key] = v
		}
	}
	return h.c.roundTrip(req, method)
}

func (h *mcpHTTP) roundTrip(ctx context.Context, s *mcpSession, k *call, id int64, method, name string, body []byte) ([]byte, error) {
	version := s.ver()
	if method == "server/discover" {
		version = mcpwire.Latest
	}
	hadSession := h.sessionID() != ""
	ctx, stop := h.idle(ctx)
	defer stop(nil)
	resp, err := h.post(ctx, k, version, method, name, body)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	if method == "initialize" {
		if sid := resp.Header.Get("Mcp-Session-Id"); sid != "" && resp.StatusCode == http.StatusOK {
			h.mu.Lock()
			h.session, h.sessionValue = sid, []string{sid}
			h.mu.Unlock()
		}
	}
	ct := resp.Header.Get("Content-Type")
	if resp.StatusCode == http.StatusOK && strings.HasPrefix(ct, "text/event-stream") {
		other := func(msg []byte) {
			stop(msg)
			s.incoming(ctx, k, msg)
		}
		var st sseState
		msg, err := readSSE(io.LimitReader(resp.Body, h.c.maxBytes+1), h.c.maxBytes, id, other, &st)
		// A stream that ends before its answer, having named its events,
		// is resumed with GET and Last-Event-ID, after the wait it asked
		// for: the answer comes there.
		for tries := 0; errors.Is(err, errStreamEnded) && st.lastID != "" && tries < maxResumes; tries++ {
			if serr := sleep(ctx, cmp.Or(st.retry, defaultSSERetry)); serr != nil {
				return nil, serr
			}
			msg, err = h.resume(ctx, vname(version), id, other, &st)
		}
		return msg, err
	}
	data, rerr := readBody(resp, h.c.maxBytes)
	if rerr != nil {
		return nil, fmt.Errorf("POST %s (%s): reading the answer: %w", h.url, method, rerr)
	}
	r := responseOf(resp, http.MethodPost, h.url, data, FormatMCP)
	r.rpcMethod = method
	if int64(len(data)) > h.c.maxBytes {
		r.body = data[:h.c.maxBytes]
		return nil, r.unexpected(fmt.Errorf("%w (limit %d bytes)", ErrResponseTooLarge, h.c.maxBytes))
	}
	if resp.StatusCode == http.StatusNotFound && hadSession {
		return nil, errSessionExpired
	}
	if method == "initialize" && !hadSession && legacyRefusal(resp.StatusCode) && !isRPCAnswer(data) {
		return nil, &legacyRefused{failed: r.rpcFailure()}
	}
	if resp.StatusCode != http.StatusOK || !strings.HasPrefix(ct, "application/json") {
		return nil, r.rpcFailure()
	}
	// The answer to this request, as over a stream or stdio: another id
	// is another request's answer (an error about a request that could
	// not be read has none).
	if head, ok := jsonrpc.ReadEnvelope(data); ok && !isID(head.ID, id) && !(head.Err != nil && (len(head.ID) == 0 || string(head.ID) == "null")) {
		return nil, r.unexpected(fmt.Errorf("the answer is to request %s, not to this one (%d): it is not taken", truncate(string(head.ID), 64), id))
	}
	return data, nil
}

// isID reports whether raw, a message's id as it came, is id: the number,
// or its text as a string.
func isID(raw []byte, id int64) bool {
	var buf [24]byte
	want := strconv.AppendInt(buf[:0], id, 10)
	if len(raw) == len(want)+2 && raw[0] == '"' && raw[len(raw)-1] == '"' {
		raw = raw[1 : len(raw)-1]
	}
	return string(raw) == string(want)
}

// legacyRefusal reports whether a server refused the POST of initialize
// as a server of the HTTP+SSE transport would, whose event stream is
// opened with GET.
func legacyRefusal(status int) bool {
	return status == http.StatusNotFound || status == http.StatusMethodNotAllowed || status == http.StatusBadRequest
}

// isRPCAnswer reports whether a body is a JSON-RPC error answer: the
// server speaks Streamable HTTP, and refused the request itself.
func isRPCAnswer(data []byte) bool {
	var m struct {
		Error json.RawMessage `json:"error"`
	}
	return json.Unmarshal(data, &m) == nil && len(m.Error) > 0
}

// legacyRefused is a refusal of initialize's POST of the kind a server
// of the HTTP+SSE transport gives (whose event stream is opened with
// GET): the session's handshake then tries that transport (fallback).
type legacyRefused struct{ failed error }

func (e *legacyRefused) Error() string { return e.failed.Error() }
func (e *legacyRefused) Unwrap() error { return e.failed }

// Bounds of resuming a stream.
const (
	// maxResumes bounds the reconnections of one request's stream.
	maxResumes = 5
	// defaultSSERetry is the wait before reconnecting when the server
	// named none.
	defaultSSERetry = time.Second
)

// get opens the session's event stream with GET, from after lastID when
// it is not empty.
func (h *mcpHTTP) get(ctx context.Context, version, lastID string) (*http.Response, error) {
	h.mu.Lock()
	header := h.streamHeader
	h.mu.Unlock()
	req, err := h.c.newRequest(ctx, http.MethodGet, h.url, "text/event-stream", nil, header)
	if err != nil {
		return nil, err
	}
	if version != "" {
		req.Header.Set("MCP-Protocol-Version", version)
	}
	if sid := h.sessionID(); sid != "" {
		req.Header.Set("Mcp-Session-Id", sid)
	}
	if lastID != "" {
		req.Header.Set("Last-Event-ID", lastID)
	}
	resp, err := h.c.roundTrip(req, "")
	if err != nil {
		return nil, err
	}
	if resp.StatusCode == http.StatusNotFound && req.Header.Get("Mcp-Session-Id") != "" {
		resp.Body.Close()
		return nil, errSessionExpired
	}
	if resp.StatusCode != http.StatusOK || !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
		resp.Body.Close()
		return nil, fmt.Errorf("GET %s: status %d, Content-Type %q: no event stream to resume", h.url, resp.StatusCode, resp.Header.Get("Content-Type"))
	}
	return resp, nil
}

// resume reads a request's stream again from after st.lastID, up to its
// answer.
func (h *mcpHTTP) resume(ctx context.Context, version string, id int64, other func([]byte), st *sseState) ([]byte, error) {
	resp, err := h.get(ctx, version, st.lastID)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	return readSSE(io.LimitReader(resp.Body, h.c.maxBytes+1), h.c.maxBytes, id, other, st)
}

// listen reads the session's own event stream, on which a server that
// keeps sessions sends the requests and notifications that belong to no
// request of the client's, until the session ends. A server that offers
// no such stream (405) is not asked again.
func (h *mcpHTTP) listen(ctx context.Context, s *mcpSession, version string, ready chan struct{}) {
	var st sseState
	signal := sync.OnceFunc(func() { close(ready) })
	defer signal()
	// A stream that ends (a replica draining or gone, a proxy's timeout)
	// is opened again, from its last event, for as long as the session
	// lasts; maxResumes refusals in a row end the listening, as does the
	// first, from a server that never opened one.
	opened, failures := false, 0
	for ctx.Err() == nil {
		resp, err := h.get(ctx, version, st.lastID)
		signal()
		if errors.Is(err, errSessionExpired) && ctx.Err() == nil {
			go s.streamExpired()
			return
		}
		if err != nil {
			if failures++; !opened || failures >= maxResumes {
				return
			}
			if sleep(ctx, backoff.Delay(cmp.Or(st.retry, defaultSSERetry), maxStreamWait, failures)) != nil {
				return
			}
			continue
		}
		opened, failures = true, 0
		_, _ = readSSE(io.LimitReader(resp.Body, h.c.maxBytes+1), h.c.maxBytes, -1, func(msg []byte) { s.incoming(ctx, nil, msg) }, &st)
		resp.Body.Close()
		if sleep(ctx, cmp.Or(st.retry, defaultSSERetry)) != nil {
			return
		}
	}
}

// maxStreamWait bounds the wait before the session's stream is opened
// again after refusals.
const maxStreamWait = 30 * time.Second

// idle bounds the silence of an exchange by Options.IdleTimeout: every
// message heard (stop(msg)) restarts the clock; stop(nil) ends it.
func (h *mcpHTTP) idle(ctx context.Context) (context.Context, func(msg []byte)) {
	d := h.c.opts.IdleTimeout
	if d == 0 {
		d = DefaultIdleTimeout
	}
	if d < 0 || endsWithin(ctx, d) {
		return ctx, func([]byte) {}
	}
	ctx, cancel := context.WithCancelCause(ctx)
	t := time.AfterFunc(d, func() {
		cancel(fmt.Errorf("the server sent nothing for %s (Options.IdleTimeout): %w", d, context.DeadlineExceeded))
	})
	return ctx, func(msg []byte) {
		if msg == nil {
			t.Stop()
			cancel(nil)
			return
		}
		t.Reset(d)
	}
}

// endsWithin reports whether ctx ends within d from now: then a bound on
// silence of d cannot fire before ctx does, and need not be kept.
func endsWithin(ctx context.Context, d time.Duration) bool {
	deadline, ok := ctx.Deadline()
	return ok && time.Until(deadline) <= d
}

func (h *mcpHTTP) send(ctx context.Context, s *mcpSession, k *call, body []byte) error {
	var m struct {
		Method string `json:"method"`
	}
	_ = json.Unmarshal(body, &m) // a notification's method, for its header; "" for an answer
	resp, err := h.post(ctx, k, s.ver(), m.Method, "", body)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
	if resp.StatusCode >= 300 {
		return fmt.Errorf("POST %s: a notification or answer was refused with status %d", h.url, resp.StatusCode)
	}
	return nil
}

// close ends the session, if the server keeps one, with DELETE.
func (h *mcpHTTP) close() error {
	h.mu.Lock()
	sid := h.session
	h.session = ""
	if h.stopListen != nil {
		h.stopListen()
		h.stopListen = nil
	}
	h.mu.Unlock()
	if sid == "" {
		return nil
	}
	ctx, cancel := context.WithTimeout(context.Background(), mcpCancelWait)
	defer cancel()
	req, err := h.c.newRequest(ctx, http.MethodDelete, h.url, "application/json", nil, nil)
	if err != nil {
		return err
	}
	req.Header.Set("Mcp-Session-Id", sid)
	resp, err := h.c.roundTrip(req, "")
	if err != nil {
		return fmt.Errorf("otc client: ending the MCP session: %w", err)
	}
	resp.Body.Close()
	return nil // 405 says the server lets sessions lapse: nothing to do
}

// rpcFailure turns an HTTP answer that is not a JSON-RPC response into
// an error: a refusal of the caller or a busy server as an *otc.Error of
// its class (its message from the JSON-RPC error body, if any), a
// JSON-RPC error the server answered with a 4xx (or a 500 carrying an
// internal error) as what it says, and anything else as a *ResponseError.
func (r *response) rpcFailure() error {
	var body struct {
		Error *RPCError `json:"error"`
	}
	hasRPC := json.Unmarshal(r.body, &body) == nil && body.Error != nil
	if hasRPC {
		body.Error.Method = r.rpcMethod
	}
	code, ok := refusalCode(r.status)
	if !ok {
		// A 4xx with a JSON-RPC error, and in 2026-07-28 a 500 with an
		// internal error (-32603), are the server's answer; other 5xx
		// answers are the transport's.
		if hasRPC && (r.status >= 400 && r.status < 500 || r.status == http.StatusInternalServerError && body.Error.Code == jsonrpc.CodeInternalError) {
			return asError(body.Error)
		}
		return r.unexpected(nil)
	}
	e := &otc.Error{Code: code, Message: http.StatusText(r.status)}
	if hasRPC {
		rpc := asError(body.Error)
		if oe, ok := errors.AsType[*otc.Error](rpc); ok {
			e.Reason, e.RequiredScopes, e.DeveloperMessage = oe.Reason, oe.RequiredScopes, oe.DeveloperMessage
		}
		e.Message = truncate(body.Error.Message, 512)
	}
	if r.challenge != "" {
		reason, scopes := readChallenge(r.challenge)
		if e.Reason == "" {
			e.Reason = reason
		}
		if len(e.RequiredScopes) == 0 {
			e.RequiredScopes = scopes
		}
	}
	if retryable(code) {
		e.RetryAfter = r.retryAfter
	}
	return r.withStatus(e)
}

// readChallenge reads the error and scope of a Bearer WWW-Authenticate
// challenge (RFC 6750 §3).
func readChallenge(h string) (reason string, scopes []string) {
	p := challengeParams(h)
	if p["scope"] != "" {
		scopes = strings.Fields(p["scope"])
	}
	return p["error"], scopes
}

// splitParams splits auth-params at the commas outside quotes.
func splitParams(h string) []string {
	var out []string
	quoted, start := false, 0
	for i := 0; i < len(h); i++ {
		switch h[i] {
		case '\\':
			i++
		case '"':
			quoted = !quoted
		case ',':
			if !quoted {
				out = append(out, h[start:i])
				start = i + 1
			}
		}
	}
	return append(out, h[start:])
}

// sseState is what an SSE stream said about resuming it: the id of the
// last event, and the wait its server asked for before reconnecting.
type sseState struct {
	lastID string
	retry  time.Duration
}

// errStreamEnded is a stream that ended before the answer came.
var errStreamEnded = errors.New("the event stream ended without the answer")

// maxSSERetry bounds the wait a server's retry field may ask for.
const maxSSERetry = 30 * time.Second

// readSSE reads an SSE stream of JSON-RPC messages up to the response to
// request id (id < 0: to the end), handing every other message to other
// and recording in st what it needs to resume. The stream is read within
// max bytes in all (the reader is limited) and per event.
func readSSE(r io.Reader, max int64, id int64, other func([]byte), st *sseState) ([]byte, error) {
	var buf [24]byte
	want := strconv.AppendInt(buf[:0], id, 10)
	var answer []byte
	err := eachEvent(r, max, st, func(_ string, msg []byte) bool {
		m, ok := jsonrpc.ReadEnvelope(msg)
		if !ok || m.BadMethod {
			return true // not JSON (a priming event): not a message of MCP's
		}
		if id >= 0 && m.Method == "" && string(m.ID) == string(want) {
			answer = msg
			return false
		}
		other(msg)
		return true
	})
	switch {
	case answer != nil:
		return answer, nil
	case err != nil:
		return nil, err
	}
	return nil, errStreamEnded
}

// eachEvent reads an SSE stream's events, handing each one's name and
// data (its own copy) to f, until f returns false or the stream ends
// (nil), and records in st what resuming it needs. An event's data, as a
// line, is bounded by max bytes.
func eachEvent(r io.Reader, max int64, st *sseState, f func(name string, data []byte) bool) error {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 4096), int(min(max, 1<<30)))
	var data bytes.Buffer
	name := ""
	for sc.Scan() {
		line := sc.Bytes()
		field, value, _ := bytes.Cut(line, []byte(":"))
		value = bytes.TrimPrefix(value, []byte(" "))
		switch string(field) {
		case "data":
			if data.Len() > 0 {
				data.WriteByte('\n')
			}
			data.Write(value)
			if int64(data.Len()) > max {
				return fmt.Errorf("an event of the stream is over %d bytes", max)
			}
			continue
		case "event":
			name = wire.Truncate(string(value), 64)
			continue
		case "id":
			if len(value) <= 256 && !bytes.ContainsRune(value, 0) {
				st.lastID = string(value)
			}
			continue
		case "retry":
			if ms, err := strconv.ParseInt(string(value), 10, 64); err == nil && ms >= 0 {
				st.retry = min(time.Duration(ms)*time.Millisecond, maxSSERetry)
			}
			continue
		}
		if len(line) != 0 {
			continue // a comment
		}
		if data.Len() == 0 {
			name = "" // an event without data is not dispatched
			continue
		}
		msg := bytes.Clone(data.Bytes())
		data.Reset()
		ev := name
		name = ""
		if !f(ev, msg) {
			return nil
		}
	}
	if err := sc.Err(); err != nil {
		if errors.Is(err, bufio.ErrTooLong) {
			return fmt.Errorf("the event stream has a line over %d bytes", max)
		}
		return fmt.Errorf("reading the event stream: %w", err)
	}
	return nil
}
