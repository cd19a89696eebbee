package mcp

import (
	"cmp"
	"context"
	"crypto/rand"
	"encoding/base64"
	"errors"
	"net/http"
	"sync"
	"time"

	"github.com/otcgo/otc/caller"
	"github.com/otcgo/otc/internal/primitive"
	"github.com/otcgo/otc/sessions"
)

// sessionStream is a session's stream (GET) on this replica: what the
// session is to be told, and the signal that ends it.
type sessionStream struct {
	session *session
	nonce   string // tells this stream from another of the session
	subs    *subscriptions
	done    chan struct{}
	once    sync.Once
}

// end ends the stream (the session ended, or another stream took over).
func (st *sessionStream) end() { st.once.Do(func() { close(st.done) }) }

// maxLastEventID bounds the Last-Event-ID header this server reads.
const maxLastEventID = 128

// sessionHeader is the session id of a request, as sent.
func sessionHeader(r *http.Request) string { return canonicalHeader(r, "Mcp-Session-Id") }

// serveStream answers a GET: the session's stream, on which the server
// sends what belongs to no request (the changes of the lists, and of the
// resources the session subscribed to), from whichever replica the change
// came, until the client goes, the session ends, another stream of the
// session opens, or the server drains.
func (h *Handler) serveStream(w http.ResponseWriter, r *http.Request) {
	ctx := r.Context()
	sid := sessionHeader(r)
	if sid == "" {
		writeHTTPError(w, http.StatusBadRequest, nil, &rpcError{Code: codeInvalidRequest,
			Message: "Bad request: GET opens a session's stream; send the Mcp-Session-Id that the answer to initialize gave"})
		return
	}
	sess, e := h.s.table.check(ctx, r, sid)
	if e == nil && sess == nil {
		e = errNoSession // another replica's: its stream is there
	}
	if e != nil {
		writeHTTPError(w, e.Status, nil, e)
		return
	}
	if sse, _ := accepts(r.Header["Accept"]); !sse {
		writeHTTPError(w, http.StatusNotAcceptable, nil, &rpcError{Code: codeInvalidRequest, Message: "Not acceptable: a session's stream is text/event-stream; accept it"})
		return
	}
	owner, _ := caller.Key(ctx, r)
	if e := h.s.listens.acquire(owner); e != nil {
		writeHTTPError(w, http.StatusServiceUnavailable, nil, e)
		return
	}
	defer h.s.listens.release(owner)

	sn := primitive.Current(h.s.reg)
	subs := newSubscriptions(primitive.Change{Tools: true, Resources: len(sn.Resources)+len(sn.Templates) > 0, Prompts: len(sn.Prompts) > 0})
	subs.admits = func(a primitive.Admits) bool { return a(ctx, "mcp") }
	var nonce [12]byte
	_, _ = rand.Read(nonce[:])
	st := &sessionStream{session: sess, nonce: base64.RawURLEncoding.EncodeToString(nonce[:]), subs: subs, done: make(chan struct{})}
	hub, store := h.s.hub, h.s.table.store
	head := hub.attach(sess.ID, st)
	defer hub.detach(sess.ID, st)
	_ = hub.publish(ctx, event{Kind: eventStream, Session: sess.ID, URI: st.nonce}) // logged when it fails

	// The subscriptions are read once the stream is attached: one made
	// meanwhile is in the store, or its event reaches the stream.
	uris, err := store.Subscriptions(ctx, sess.ref())
	switch {
	case errors.Is(err, sessions.ErrNotFound):
		h.s.table.markEnded(sess.ID)
		writeHTTPError(w, http.StatusNotFound, nil, errNoSession)
		return
	case err != nil:
		e := storeFailed(err)
		writeHTTPError(w, e.Status, nil, e)
		return
	}
	for _, uri := range uris {
		subs.add(uri, subs.admits)
	}
	if last := r.Header.Get("Last-Event-ID"); last != "" && len(last) <= maxLastEventID {
		// A stream resumed, on this replica or another: what was
		// published since, when the log still holds it; else everything
		// it may have missed is said to have changed.
		subs.seen(last)
		msgs, complete, err := store.Since(ctx, last)
		if err != nil || !complete {
			subs.noteAll(sn)
		}
		for _, m := range msgs {
			hub.applyData(m, st)
		}
	}

	out := &sseStream{w: w, r: r}
	out.start()
	prime := cmp.Or(subs.lastSeen(), head)
	switch {
	case sess.Version >= Version20251125 && prime != "":
		// An event with an ID and no data, so that a client that loses
		// the stream before any notification resumes from here.
		out.write([]byte("id: " + prime + "\ndata: \n\n"))
	default:
		out.write([]byte(": open\n\n")) // the headers go now
	}
	// The stream says something every so often (for proxies that take a
	// silent stream for a dead one), and keeps its session alive.
	every := min(listenKeepAlive, max(h.s.table.idle/3, time.Millisecond))
	if srv, _ := r.Context().Value(http.ServerContextKey).(*http.Server); srv != nil && srv.WriteTimeout > 0 && srv.WriteTimeout/2 < every {
		every = srv.WriteTimeout / 2
	}
	keep := time.NewTicker(every)
	defer keep.Stop()
	closing := h.s.closingChan()
	for {
		select {
		case <-ctx.Done():
			return
		case <-st.done:
			return
		case <-closing:
			return // draining: the client opens its stream again, on another replica
		case <-subs.wake:
			msgs, last := subs.takeID()
			for i, msg := range msgs {
				if i == len(msgs)-1 {
					out.eventID(msg, last)
				} else {
					out.event(msg)
				}
			}
		case <-keep.C:
			out.write([]byte(": keep-alive\n\n"))
			tctx, cancel := context.WithTimeout(ctx, publishTimeout)
			err := store.Touch(tctx, sess.ref(), h.s.table.idle)
			cancel()
			if errors.Is(err, sessions.ErrNotFound) {
				h.s.table.markEnded(sess.ID)
				return
			}
		}
	}
}

// endSession answers a DELETE: the session ends, on every replica.
func (h *Handler) endSession(w http.ResponseWriter, r *http.Request) {
	sid := sessionHeader(r)
	if sid == "" {
		writeHTTPError(w, http.StatusBadRequest, nil, &rpcError{Code: codeInvalidRequest,
			Message: "Bad request: DELETE ends a session; send its Mcp-Session-Id"})
		return
	}
	sess, e := h.s.table.check(r.Context(), r, sid)
	switch {
	case e == nil && sess == nil:
		e = errNoSession
	case e == nil:
		e = h.s.table.end(r.Context(), sess, h.s.hub)
	}
	if e != nil {
		writeHTTPError(w, e.Status, nil, e)
		return
	}
	w.WriteHeader(http.StatusNoContent)
}
