package client

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/otcgo/otc/internal/backoff"
	"github.com/otcgo/otc/internal/mcpwire"
)

// listening keeps a session's subscriptions at a version without
// resources/subscribe (2026-07-28): one subscriptions/listen stream names
// every URI subscribed, and is opened again with the new set when it
// changes, and again, with backoff, when it ends, until the session
// closes or nothing is subscribed. Its notifications (the updates, and
// the lists' changes) reach Options.OnNotification as any other's.
type listening struct {
	mu   sync.Mutex
	uris []string // subscribed, in the order they were
	// stop ends the stream under way (nil: none), and acked is told what
	// it acknowledged.
	stop  context.CancelFunc
	acked chan mcpwire.ListenFilter
	// ackSeen says the stream under way was acknowledged.
	ackSeen bool
	// closed says the session ended: no stream opens again.
	closed bool
}

// ErrNotTold is Subscribe's error, in MCP 2026-07-28, for a URI the
// server's subscriptions/listen stream did not agree to tell of: nothing
// the caller may read is there.
var ErrNotTold = errors.New("the server does not tell of this URI")

// errListenEnded is a listen stream's end that is not a failure: another
// took its place, or the session closed.
var errListenEnded = errors.New("the listen stream was replaced")

// listenWaitAck bounds the wait for a new stream's acknowledgement.
const listenWaitAck = 30 * time.Second

// subscribeListen adds uri to the session's listen stream (opening it
// again with the whole set), and returns once the server acknowledged
// it: an error when it did not agree to tell of uri (nothing the caller
// may read is there), or the stream could not open.
func (s *mcpSession) subscribeListen(ctx context.Context, uri string) error {
	l := &s.listen
	l.mu.Lock()
	if slices.Contains(l.uris, uri) {
		l.mu.Unlock()
		return nil
	}
	l.uris = append(l.uris, uri)
	acked := s.restartListen()
	l.mu.Unlock()
	select {
	case f, ok := <-acked:
		if ok && slices.Contains(f.ResourceSubscriptions, uri) {
			return nil
		}
		if !ok {
			s.unsubscribeListen(uri)
			return errors.New("the listen stream (subscriptions/listen) could not be opened; see the error of the next request")
		}
		// The stream goes on for the others, naming uri in vain: it is
		// not opened again for that.
		s.forgetListen(uri)
		return fmt.Errorf("%w: %s: nothing you may read is there (resources/list and resources/templates/list say what is)", ErrNotTold, truncate(uri, 200))
	case <-ctx.Done():
		s.unsubscribeListen(uri)
		return context.Cause(ctx)
	case <-time.After(listenWaitAck):
		s.unsubscribeListen(uri)
		return fmt.Errorf("the server did not acknowledge subscriptions/listen within %s", listenWaitAck)
	}
}

// unsubscribeListen takes uri out of the stream, which opens again with
// what is left, or ends when nothing is.
func (s *mcpSession) unsubscribeListen(uri string) { s.dropListen(uri, true) }

// forgetListen takes uri out of the set, leaving the stream as it is.
func (s *mcpSession) forgetListen(uri string) { s.dropListen(uri, false) }

// dropListen takes uri out of the set, and, with restart, opens the
// stream again with what is left.
func (s *mcpSession) dropListen(uri string, restart bool) {
	l := &s.listen
	l.mu.Lock()
	defer l.mu.Unlock()
	i := slices.Index(l.uris, uri)
	if i < 0 {
		return
	}
	l.uris = slices.Delete(l.uris, i, i+1)
	if restart {
		s.restartListen()
	}
}

// closeListen ends the stream for good: the session closes.
func (s *mcpSession) closeListen() {
	l := &s.listen
	l.mu.Lock()
	defer l.mu.Unlock()
	l.closed = true
	if l.stop != nil {
		l.stop()
		l.stop = nil
	}
}

// restartListen ends the stream under way and opens one naming l.uris,
// if any; it returns the channel its acknowledgement comes on (closed
// when it fails before one). l.mu is held.
func (s *mcpSession) restartListen() chan mcpwire.ListenFilter {
	l := &s.listen
	if l.stop != nil {
		l.stop()
		l.stop = nil
	}
	acked := make(chan mcpwire.ListenFilter, 1)
	if len(l.uris) == 0 || l.closed {
		close(acked)
		return acked
	}
	ctx, stop := context.WithCancelCause(context.Background())
	l.stop = func() { stop(errListenEnded) }
	l.acked, l.ackSeen = acked, false
	go s.runListen(ctx, slices.Clone(l.uris), acked)
	return acked
}

// runListen keeps one stream for uris open until ctx ends.
func (s *mcpSession) runListen(ctx context.Context, uris []string, acked chan mcpwire.ListenFilter) {
	params := mcpwire.ListenParams{Notifications: &mcpwire.ListenFilter{
		ToolsListChanged: true, ResourcesListChanged: true, PromptsListChanged: true, ResourceSubscriptions: uris,
	}}
	first := true
	for attempt := 0; ctx.Err() == nil; attempt++ {
		// The stream ends when the server closes it, it goes quiet, or the
		// network fails: it is opened again.
		_ = s.request(ctx, nil, mcpwire.MethodListen, params.Map(), nil)
		if ctx.Err() != nil {
			return
		}
		if first {
			s.listen.mu.Lock()
			if s.listen.acked == acked && !s.listen.ackSeen {
				// It failed before it was acknowledged: the subscriber is
				// told, and the stream is not tried again for it.
				s.listen.acked = nil
				close(acked)
				s.listen.mu.Unlock()
				return
			}
			s.listen.mu.Unlock()
		}
		first = false
		select {
		case <-time.After(backoff.Delay(100*time.Millisecond, 30*time.Second, attempt)):
		case <-ctx.Done():
			return
		}
	}
}

// listenAcked takes a stream's acknowledgement (params of
// notifications/subscriptions/acknowledged) to the subscriber waiting
// for it.
func (s *mcpSession) listenAcked(params json.RawMessage) {
	var p mcpwire.ListenParams
	if json.Unmarshal(params, &p) != nil || p.Notifications == nil {
		return
	}
	s.listen.mu.Lock()
	defer s.listen.mu.Unlock()
	if ch := s.listen.acked; ch != nil {
		s.listen.ackSeen = true
		select {
		case ch <- *p.Notifications:
		default:
		}
	}
}
