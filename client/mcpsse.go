package client

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// transportSSE is the value of Options.MCPTransport for MCP's HTTP+SSE
// transport, of protocol version 2024-11-05.
const transportSSE = "sse"

// errNoEventStream is a GET that opens no event stream: no HTTP+SSE
// server is at the URL.
var errNoEventStream = errors.New("a GET opens no HTTP+SSE event stream here")

// mcpSSE carries MCP over the HTTP+SSE transport of protocol version
// 2024-11-05, which many servers still serve: a GET opens an event
// stream, whose endpoint event names the URL the client POSTs its
// messages to, and every message of the server's, answers included,
// comes on that stream. A stream is a session: when it ends, the next
// request begins another.
type mcpSSE struct {
	c   *Client
	url string

	mu  sync.Mutex
	cur *sseStream
	// opening is closed when the stream being opened (outside mu: a GET,
	// and up to endpointWait for its endpoint) is open or failed.
	opening chan struct{}
}

// sseStream is one event stream of an HTTP+SSE server and the endpoint
// it named.
type sseStream struct {
	c        *Client
	endpoint string
	in       *inbox
	cancel   context.CancelFunc
	heard    atomic.Int64 // when the stream last carried a message (Unix ns)
}

// Bounds of the HTTP+SSE transport.
const (
	// maxEndpoint bounds the length of the endpoint an event names.
	maxEndpoint = 2048
	// endpointWait bounds the wait for the endpoint event, the first of
	// the stream, once the stream is open.
	endpointWait = 10 * time.Second
	// ssePostBody bounds what is read of a POST's answer, which carries
	// nothing (202 Accepted).
	ssePostBody = 64 << 10
)

// stream returns the session's stream, opening one when there is none.
// A stream that ended is a session that expired (errSessionExpired),
// unless method begins a session. One request opens a stream at a time,
// without holding the lock across the network; the others wait for it
// within their own contexts.
func (h *mcpSSE) stream(ctx context.Context, s *mcpSession, method string) (*sseStream, error) {
	for {
		h.mu.Lock()
		if cur := h.cur; cur != nil {
			select {
			case <-cur.in.done:
				h.cur = nil
				if method != "initialize" {
					h.mu.Unlock()
					return nil, errSessionExpired
				}
			default:
				h.mu.Unlock()
				return cur, nil
			}
		}
		if wait := h.opening; wait != nil {
			h.mu.Unlock()
			select {
			case <-wait:
				continue
			case <-ctx.Done():
				return nil, context.Cause(ctx)
			}
		}
		done := make(chan struct{})
		h.opening = done
		h.mu.Unlock()
		st, err := h.open(ctx, s)
		h.mu.Lock()
		h.opening = nil
		if err == nil {
			h.cur = st
		}
		h.mu.Unlock()
		close(done)
		return st, err
	}
}

// open opens an event stream with GET and waits, within ctx, for the
// endpoint it names, which must be of the stream's origin: the client
// sends its credentials there.
func (h *mcpSSE) open(ctx context.Context, s *mcpSession) (*sseStream, error) {
	sctx, cancel := context.WithCancel(context.Background())
	st := &sseStream{c: h.c, in: newInbox(), cancel: cancel}
	// Until the endpoint is known, the caller's context bounds the
	// stream; then the stream lives until the session ends.
	detach := context.AfterFunc(ctx, cancel)
	req, err := h.c.newRequest(sctx, http.MethodGet, h.url, "text/event-stream", nil, nil)
	if err != nil {
		cancel()
		return nil, err
	}
	resp, err := h.c.roundTrip(req, "HTTP+SSE stream")
	if err != nil {
		cancel()
		if ctx.Err() != nil {
			return nil, context.Cause(ctx)
		}
		return nil, err
	}
	ct := resp.Header.Get("Content-Type")
	if resp.StatusCode != http.StatusOK || !strings.HasPrefix(ct, "text/event-stream") {
		data, _ := io.ReadAll(io.LimitReader(resp.Body, ssePostBody))
		resp.Body.Close()
		cancel()
		r := responseOf(resp, http.MethodGet, h.url, data, FormatMCP)
		if _, refused := refusalCode(resp.StatusCode); refused {
			return nil, r.rpcFailure()
		}
		return nil, r.unexpected(errNoEventStream)
	}
	endpoint := make(chan string, 1)
	go st.read(sctx, s, resp.Body, h.url, endpoint)
	wait := time.NewTimer(endpointWait)
	defer wait.Stop()
	select {
	case <-wait.C:
		detach()
		cancel()
		return nil, fmt.Errorf("GET %s: the event stream named no endpoint within %s (the first event of MCP's HTTP+SSE transport): %w", h.url, endpointWait, errNoEventStream)
	case e := <-endpoint:
		if !detach() {
			cancel()
			return nil, context.Cause(ctx)
		}
		st.endpoint = e
		return st, nil
	case <-st.in.done:
		detach()
		if ctx.Err() != nil {
			return nil, context.Cause(ctx)
		}
		return nil, fmt.Errorf("GET %s: %w", h.url, st.in.ended())
	}
}

// read reads the stream: its first endpoint event, checked, to endpoint;
// then its messages into the inbox, until it ends.
func (st *sseStream) read(ctx context.Context, s *mcpSession, body io.ReadCloser, base string, endpoint chan<- string) {
	defer body.Close()
	var state sseState
	named := false
	var bad error
	err := eachEvent(body, st.c.maxBytes, &state, func(name string, data []byte) bool {
		switch name {
		case "endpoint":
			if named {
				return true // named once: the session keeps it
			}
			e, err := endpointOf(base, string(data))
			if err != nil {
				bad = err
				return false
			}
			named = true
			endpoint <- e
		case "", "message":
			if !named {
				return true // the endpoint comes first
			}
			st.heard.Store(time.Now().UnixNano())
			st.in.deliver(ctx, s, data)
		}
		return true
	})
	switch {
	case bad != nil:
		err = bad
	case err == nil && !named:
		err = fmt.Errorf("the event stream ended before it named the endpoint to POST messages to, its first event in MCP's HTTP+SSE transport (%w)", errNoEventStream)
	case err == nil:
		err = errors.New("the server ended the HTTP+SSE event stream")
	case ctx.Err() != nil:
		err = errors.New("the HTTP+SSE session was closed")
	}
	st.in.end(err)
}

// endpointOf resolves the endpoint an event named against the stream's
// URL; it must be of the same origin, as the client's credentials go
// there.
func endpointOf(base, ref string) (string, error) {
	ref = strings.TrimSpace(ref)
	if len(ref) > maxEndpoint {
		return "", fmt.Errorf("the endpoint event names a URL over %d bytes", maxEndpoint)
	}
	e, err := CheckOrigin(base, ref, "the endpoint the HTTP+SSE stream names")
	if err != nil {
		return "", err
	}
	u, err := url.Parse(e)
	if err != nil || u.Scheme != "http" && u.Scheme != "https" {
		return "", fmt.Errorf("the endpoint event names no http URL (%q)", truncate(ref, 64))
	}
	u.Fragment = ""
	return u.String(), nil
}

func (h *mcpSSE) roundTrip(ctx context.Context, s *mcpSession, k *call, id int64, method, _ string, body []byte) ([]byte, error) {
	st, err := h.stream(ctx, s, method)
	if err != nil {
		return nil, err
	}
	ctx, stop := st.idle(ctx)
	defer stop()
	ch := st.in.expect(id)
	if err := h.post(ctx, st, k, method, body); err != nil {
		st.in.forget(id)
		return nil, err
	}
	return st.in.await(ctx, id, ch)
}

// idle bounds the silence of an exchange by Options.IdleTimeout: it fails
// when the stream has carried no message for that long.
func (st *sseStream) idle(ctx context.Context) (context.Context, func()) {
	d := st.c.opts.IdleTimeout
	if d == 0 {
		d = DefaultIdleTimeout
	}
	if d < 0 || endsWithin(ctx, d) {
		return ctx, func() {}
	}
	ctx, cancel := context.WithCancelCause(ctx)
	begun := time.Now().UnixNano()
	var t *time.Timer
	var mu sync.Mutex
	check := func() {
		last := time.Unix(0, max(begun, st.heard.Load()))
		if quiet := time.Since(last); quiet < d {
			mu.Lock()
			t.Reset(d - quiet)
			mu.Unlock()
			return
		}
		cancel(fmt.Errorf("the server sent nothing for %s (Options.IdleTimeout): %w", d, context.DeadlineExceeded))
	}
	mu.Lock()
	t = time.AfterFunc(d, check)
	mu.Unlock()
	return ctx, func() {
		mu.Lock()
		t.Stop()
		mu.Unlock()
		cancel(nil)
	}
}

// post sends one message to the stream's endpoint. A 404 says the server
// has forgotten the session: the stream is ended.
func (h *mcpSSE) post(ctx context.Context, st *sseStream, k *call, method string, body []byte) error {
	req, err := h.c.newRequest(ctx, http.MethodPost, st.endpoint, "application/json, text/event-stream", body, k.header())
	if err != nil {
		return err
	}
	resp, err := h.c.roundTrip(req, method)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	data, _ := io.ReadAll(io.LimitReader(resp.Body, ssePostBody))
	if resp.StatusCode >= 200 && resp.StatusCode < 300 {
		return nil
	}
	if resp.StatusCode == http.StatusNotFound {
		st.cancel()
		st.in.end(errSessionExpired)
		return errSessionExpired
	}
	r := responseOf(resp, http.MethodPost, st.endpoint, data, FormatMCP)
	r.rpcMethod = method
	return r.rpcFailure()
}

func (h *mcpSSE) send(ctx context.Context, _ *mcpSession, k *call, body []byte) error {
	h.mu.Lock()
	st := h.cur
	h.mu.Unlock()
	if st == nil {
		return errors.New("no HTTP+SSE session is open to send on")
	}
	select {
	case <-st.in.done:
		return st.in.ended()
	default:
	}
	return h.post(ctx, st, k, "", body)
}

// reset ends the stream: the next request opens another.
func (h *mcpSSE) reset() {
	h.mu.Lock()
	st := h.cur
	h.cur = nil
	h.mu.Unlock()
	if st != nil {
		st.cancel()
	}
}

// started does nothing: every message of the server's comes on the
// stream.
func (h *mcpSSE) started(*mcpSession, string, http.Header) {}

// close ends the session: closing its stream tells the server so.
func (h *mcpSSE) close() error {
	h.reset()
	return nil
}
