package mcp

import (
	"context"
	"encoding/json"
	"sync"
	"time"

	"github.com/otcgo/otc/internal/backoff"
	"github.com/otcgo/otc/internal/primitive"
	"github.com/otcgo/otc/sessions"
)

// event is one entry of the sessions' log: what a session must be told,
// or what changed of a session, published once by the replica where it
// happened and applied by every replica to the streams it holds.
type event struct {
	Kind    string `json:"k"`
	Session string `json:"s,omitempty"` // the session a session's event is of
	URI     string `json:"u,omitempty"` // a resource's URI, a template, a stream's nonce
	Lists   uint8  `json:"l,omitempty"` // the lists that changed (listTools…)
}

// The kinds of event.
const (
	eventUpdated      = "u" // the resource at URI changed
	eventTemplate     = "t" // the resources of the template URI changed
	eventLists        = "l" // the lists Lists changed
	eventAll          = "a" // anything may have changed (a backlog too large to keep)
	eventSubscribed   = "+" // Session subscribed to URI
	eventUnsubscribed = "-" // Session unsubscribed from URI
	eventEnded        = "x" // Session ended
	eventStream       = "s" // Session opened the stream URI: any other ends
)

// The lists of eventLists.
const (
	listTools uint8 = 1 << iota
	listResources
	listPrompts
)

// maxOutbox bounds the events a replica holds while its store cannot
// take them: past it, they are replaced by one eventAll.
const maxOutbox = 10000

// hub carries the sessions' events between the replicas, through the
// store's log: it publishes the changes of this replica's registry, and
// follows the log while it holds streams, applying each event to them.
type hub struct {
	s     *server
	table *sessionTable

	mu      sync.Mutex
	streams map[string]map[*sessionStream]struct{} // by session
	count   int
	stop    context.CancelFunc // ends the follower; nil when none runs
	// lastActive is when this replica last served a session, or held a
	// stream: the follower runs until an idle timeout after.
	lastActive time.Time
	lastID     string // the last message the follower read
	outbox     []event
	queued     map[event]struct{}
	sending    bool
}

func newHub(s *server, table *sessionTable) *hub {
	return &hub{s: s, table: table, streams: map[string]map[*sessionStream]struct{}{}, queued: map[event]struct{}{}}
}

// watch has the registry's changes published, from now on; NewHandler
// calls it once.
func (h *hub) watch() {
	primitive.Of(h.s.reg).Listen(h.changed)
	seam.WatchTools(h.s.reg, func() { h.changed(primitive.Change{Tools: true}) })
}

// changed turns a change of the registry into the events that say it.
func (h *hub) changed(c primitive.Change) {
	var lists uint8
	if c.Tools {
		lists |= listTools
	}
	if c.Resources {
		lists |= listResources
	}
	if c.Prompts {
		lists |= listPrompts
	}
	if lists != 0 {
		h.enqueue(event{Kind: eventLists, Lists: lists})
	}
	switch {
	case c.Updated != "":
		h.enqueue(event{Kind: eventUpdated, URI: c.Updated})
	case c.Template != nil:
		h.enqueue(event{Kind: eventTemplate, URI: c.Template.Template.String()})
	}
}

// enqueue queues ev for publication (once, however often it comes before
// it goes), and has a sender publish the queue.
func (h *hub) enqueue(ev event) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if _, ok := h.queued[ev]; ok {
		return
	}
	if len(h.outbox) >= maxOutbox {
		h.outbox, h.queued = nil, map[event]struct{}{}
		ev = event{Kind: eventAll}
	}
	h.outbox = append(h.outbox, ev)
	h.queued[ev] = struct{}{}
	if !h.sending {
		h.sending = true
		go h.send()
	}
}

// send publishes the outbox, in order, until it is empty; a store that
// fails is tried again, with a backoff, and nothing is dropped.
func (h *hub) send() {
	failures := 0
	for {
		h.mu.Lock()
		if len(h.outbox) == 0 {
			h.sending = false
			h.mu.Unlock()
			return
		}
		ev := h.outbox[0]
		h.mu.Unlock()
		if err := h.publish(context.Background(), ev); err != nil {
			failures++
			time.Sleep(backoff.Delay(retryFirst, retryLimit, failures))
			continue
		}
		failures = 0
		h.mu.Lock()
		if len(h.outbox) > 0 && h.outbox[0] == ev {
			h.outbox = h.outbox[1:]
			delete(h.queued, ev)
		}
		h.mu.Unlock()
	}
}

// The backoff of a store that fails: the first wait, and the longest.
const (
	retryFirst = 100 * time.Millisecond
	retryLimit = 5 * time.Second
)

// publishTimeout bounds one publication.
const publishTimeout = 5 * time.Second

// publish appends ev to the log.
func (h *hub) publish(ctx context.Context, ev event) error {
	data, _ := json.Marshal(ev)
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), publishTimeout)
	defer cancel()
	err := h.table.store.Publish(ctx, data)
	if err != nil {
		h.s.logger.Warn("mcp: the session store failed to publish an event; it is tried again", "error", err)
	}
	return err
}

// active records that this replica serves a session now: it follows the
// log (so that a session ended on another replica is refused here at
// once) until it has held no stream and served no session for the idle
// timeout.
func (h *hub) active() {
	h.mu.Lock()
	h.lastActive = time.Now()
	h.mu.Unlock()
	h.start()
}

// start starts the follower when none runs, from the log's head as it is
// now (or from the last message read, when one was): whatever is
// published once start returns is read, so that a stream attached
// before it misses nothing.
func (h *hub) start() {
	h.mu.Lock()
	running, from := h.stop != nil, h.lastID
	h.mu.Unlock()
	if running {
		return
	}
	if from == "" {
		ctx, cancel := context.WithTimeout(context.Background(), publishTimeout)
		head, err := h.table.store.Head(ctx)
		cancel()
		if err != nil {
			h.s.logger.Warn("mcp: the session store's log could not be read; following it from what comes next", "error", err)
		}
		from = head
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.stop != nil {
		return
	}
	if h.lastID == "" {
		h.lastID = from
	}
	ctx, cancel := context.WithCancel(context.Background())
	h.stop = cancel
	go h.follow(ctx, h.lastID)
	go h.retire(ctx)
}

// retire stops the follower once this replica has held no stream and
// served no session for the idle timeout.
func (h *hub) retire(ctx context.Context) {
	every := min(max(h.table.idle/2, 10*time.Millisecond), time.Minute)
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		h.mu.Lock()
		if h.count == 0 && time.Since(h.lastActive) > h.table.idle {
			h.stop()
			// The next follower reads from the head as it will be: what
			// was published meanwhile concerns no stream of this replica.
			h.stop, h.lastID = nil, ""
			h.mu.Unlock()
			return
		}
		h.mu.Unlock()
	}
}

// attach adds a stream of session id ("" for a subscriptions/listen
// stream), which the follower tells of what concerns it. It returns the
// ID of the last message read, where the stream begins.
func (h *hub) attach(id string, st *sessionStream) string {
	h.mu.Lock()
	set := h.streams[id]
	if set == nil {
		set = map[*sessionStream]struct{}{}
		h.streams[id] = set
	}
	set[st] = struct{}{}
	h.count++
	h.lastActive = time.Now()
	h.mu.Unlock()
	h.start()
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.lastID
}

// detach removes a stream.
func (h *hub) detach(id string, st *sessionStream) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if set := h.streams[id]; set != nil {
		if _, ok := set[st]; ok {
			delete(set, st)
			h.count--
		}
		if len(set) == 0 {
			delete(h.streams, id)
		}
	}
	h.lastActive = time.Now()
}

// follow reads the log from after, applying each message, until ctx
// ends; a store that fails is followed again from the last message read.
func (h *hub) follow(ctx context.Context, after string) {
	failures := 0
	for ctx.Err() == nil {
		err := h.table.store.Follow(ctx, after, func(m sessions.Message) {
			after = m.ID
			h.mu.Lock()
			h.lastID = m.ID
			h.mu.Unlock()
			h.applyData(m, nil)
			failures = 0
		})
		if err != nil && ctx.Err() == nil {
			failures++
			h.s.logger.Warn("mcp: following the session store's log failed; following again", "error", err)
			select {
			case <-ctx.Done():
			case <-time.After(backoff.Delay(retryFirst, retryLimit, failures)):
			}
		}
	}
}

// applyData applies the event of message m (to only, when not nil).
func (h *hub) applyData(m sessions.Message, only *sessionStream) {
	var ev event
	if json.Unmarshal(m.Data, &ev) == nil {
		h.apply(ev, m.ID, only)
	}
}

// apply applies ev, whose log ID is id, to the streams it concerns: to
// only when not nil (a stream catching up), else to every stream this
// replica holds.
func (h *hub) apply(ev event, id string, only *sessionStream) {
	if ev.Kind == eventEnded && only == nil {
		h.table.markEnded(ev.Session)
	}
	var targets []*sessionStream
	h.mu.Lock()
	switch {
	case only != nil:
		targets = append(targets, only)
	case ev.Session != "":
		for st := range h.streams[ev.Session] {
			targets = append(targets, st)
		}
	default:
		for _, set := range h.streams {
			for st := range set {
				targets = append(targets, st)
			}
		}
	}
	h.mu.Unlock()
	if len(targets) == 0 {
		return
	}
	sn := primitive.Current(h.s.reg)
	var c primitive.Change
	switch ev.Kind {
	case eventLists:
		c = primitive.Change{Tools: ev.Lists&listTools != 0, Resources: ev.Lists&listResources != 0, Prompts: ev.Lists&listPrompts != 0}
	case eventUpdated:
		c = primitive.Change{Updated: ev.URI, Entry: entryAt(sn, ev.URI)}
	case eventTemplate:
		for _, t := range sn.Templates {
			if t.Template.String() == ev.URI {
				c = primitive.Change{Template: t, Entry: t}
			}
		}
		if c.Template == nil {
			return // a template this replica does not serve
		}
	}
	for _, st := range targets {
		if ev.Session != "" && (st.session == nil || ev.Session != st.session.ID) {
			continue
		}
		switch ev.Kind {
		case eventSubscribed:
			st.subs.add(ev.URI, st.subs.admits)
		case eventUnsubscribed:
			st.subs.remove(ev.URI)
		case eventEnded:
			st.end()
		case eventStream:
			// Another stream of the session took over; one opened
			// before this one, read again as it catches up, did not.
			if ev.URI != st.nonce && only == nil {
				st.end()
			}
		case eventAll:
			st.subs.noteAll(sn)
		default:
			st.subs.note(c)
		}
		st.subs.seen(id)
	}
}
