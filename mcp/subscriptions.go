package mcp

import (
	"context"
	"encoding/json"
	"net/http"
	"sync"
	"time"

	"github.com/otcgo/otc"
	"github.com/otcgo/otc/caller"
	"github.com/otcgo/otc/internal/jsonrpc"
	"github.com/otcgo/otc/internal/mcpwire"
	"github.com/otcgo/otc/internal/primitive"
	"github.com/otcgo/otc/internal/uritemplate"
)

// subscriptions are what a client is to be told of the registry's
// changes: a stdio connection (before 2026-07-28) or one
// subscriptions/listen stream (2026-07-28). Changes reach it through a
// goroutine of its own, coalesced while it writes, so that a change
// never waits on a slow client.
type subscriptions struct {
	mu      sync.Mutex
	want    primitive.Change // the list changes it is told of
	uris    map[string]struct{}
	lists   primitive.Change // list changes not yet sent
	updated map[string]struct{}
	wake    chan struct{}
	// meta is the _meta member a listen stream's notifications carry
	// (its subscription id), with a trailing comma; nil for a connection.
	meta []byte
	// last is the ID of the last message of the sessions' log noted (a
	// session's stream), which the next notifications are sent under.
	last string
	// admits is the subscriber's view of a policy: an update of an entry
	// it may not see is not passed on, whichever URI it subscribed
	// through. Nil admits everything (set by the first subscription).
	admits func(primitive.Admits) bool
}

// mayKnow reports whether the subscriber may be told of a change of
// entry (a *primitive.Resource or *primitive.Template, or nil).
func (s *subscriptions) mayKnow(entry any) bool {
	a := primitive.AdmitsOf(entry)
	return a == nil || s.admits == nil || s.admits(a)
}

func newSubscriptions(want primitive.Change) *subscriptions {
	return &subscriptions{want: want, uris: map[string]struct{}{}, updated: map[string]struct{}{}, wake: make(chan struct{}, 1)}
}

// watch has s told of the changes of reg until stop is called.
func (s *subscriptions) watch(reg *otc.Registry) (stop func()) {
	stopSet := primitive.Of(reg).Listen(s.note)
	stopTools := seam.WatchTools(reg, func() { s.note(primitive.Change{Tools: true}) })
	return func() { stopSet(); stopTools() }
}

// add subscribes to uri for a subscriber that sees what admits admits;
// false when the connection holds the most it may.
func (s *subscriptions) add(uri string, admits func(primitive.Admits) bool) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.admits == nil {
		s.admits = admits
	}
	if _, ok := s.uris[uri]; !ok && len(s.uris) >= maxSubscriptions {
		return false
	}
	s.uris[uri] = struct{}{}
	return true
}

func (s *subscriptions) remove(uri string) {
	s.mu.Lock()
	delete(s.uris, uri)
	delete(s.updated, uri)
	s.mu.Unlock()
}

// note records change c for the client, and wakes its sender.
func (s *subscriptions) note(c primitive.Change) {
	s.mu.Lock()
	s.lists.Tools = s.lists.Tools || c.Tools && s.want.Tools
	s.lists.Resources = s.lists.Resources || c.Resources && s.want.Resources
	s.lists.Prompts = s.lists.Prompts || c.Prompts && s.want.Prompts
	switch {
	case (c.Updated != "" || c.Template != nil) && !s.mayKnow(c.Entry):
		// A hidden entry's change, though the URI was subscribed to
		// through one the subscriber may see.
	case c.Updated != "":
		if _, ok := s.uris[c.Updated]; ok {
			s.updated[c.Updated] = struct{}{}
		}
	case c.Template != nil:
		for uri := range s.uris {
			if _, ok := c.Template.Template.Match(uri); ok {
				s.updated[uri] = struct{}{}
			}
		}
	}
	s.mu.Unlock()
	select {
	case s.wake <- struct{}{}:
	default:
	}
}

// seen records id as the last message of the sessions' log noted.
func (s *subscriptions) seen(id string) {
	if id == "" {
		return
	}
	s.mu.Lock()
	s.last = id
	s.mu.Unlock()
}

// lastSeen is the ID of the last message of the sessions' log noted.
func (s *subscriptions) lastSeen() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.last
}

// noteAll notes that anything may have changed: every list the
// subscriber wants, and every resource it subscribed to that sn still
// serves.
func (s *subscriptions) noteAll(sn *primitive.Snapshot) {
	s.note(primitive.Change{Tools: true, Resources: true, Prompts: true})
	s.mu.Lock()
	uris := make([]string, 0, len(s.uris))
	for u := range s.uris {
		uris = append(uris, u)
	}
	s.mu.Unlock()
	for _, u := range uris {
		if entry := entryAt(sn, u); entry != nil {
			s.note(primitive.Change{Updated: u, Entry: entry})
		}
	}
}

// entryAt is what serves uri in sn, whoever asks: its *primitive.Resource
// or *primitive.Template, or nil.
func entryAt(sn *primitive.Snapshot, uri string) any {
	r, t, _ := sn.Find(uri, func(primitive.Admits) bool { return true })
	switch {
	case r != nil:
		return r
	case t != nil:
		return t
	}
	return nil
}

// take returns the notifications due, and forgets them.
func (s *subscriptions) take() [][]byte {
	out, _ := s.takeID()
	return out
}

// takeID returns the notifications due, and forgets them, with the ID of
// the last message of the sessions' log they follow from.
func (s *subscriptions) takeID() (out [][]byte, last string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	last = s.last
	// The updates first: a list's change, which often follows an
	// update's cause, is told after it.
	for uri := range s.updated {
		member := mcpwire.AppendURIMember(nil, uri)
		out = append(out, notification("notifications/resources/updated", s.params(member)))
	}
	for _, l := range []struct {
		due    bool
		method string
	}{
		{s.lists.Tools, "notifications/tools/list_changed"},
		{s.lists.Resources, "notifications/resources/list_changed"},
		{s.lists.Prompts, "notifications/prompts/list_changed"},
	} {
		if l.due {
			out = append(out, notification(l.method, s.params(nil)))
		}
	}
	s.lists = primitive.Change{}
	clear(s.updated)
	return out, last
}

// params are a notification's params: member (a JSON member, or nil)
// and the stream's _meta.
func (s *subscriptions) params(member []byte) []byte {
	b := append([]byte{'{'}, s.meta...)
	if member == nil && len(s.meta) > 0 {
		b = b[:len(b)-1] // the meta's trailing comma
	}
	b = append(b, member...)
	return append(b, '}')
}

// notification is a notification of method with params.
func notification(method string, params []byte) []byte {
	return append(append(jsonrpc.AppendNotificationHead(nil, method), params...), '}')
}

// metaSubscriptionID is the _meta key naming the listen stream a message
// belongs to: the id of its subscriptions/listen request.
const metaSubscriptionID = mcpwire.MetaSubscriptionID

// listenKeepAlive is how often an idle listen stream over HTTP sends an
// SSE comment, at most (half the server's WriteTimeout when that is
// shorter).
const listenKeepAlive = 15 * time.Second

// listenCounts counts the open subscriptions/listen streams of a
// Handler, in all and by caller, against their limits.
type listenCounts struct {
	max, perCaller, maxURIBytes int

	mu       sync.Mutex
	open     int
	byCaller map[string]int
}

func newListenCounts(opts *Options) *listenCounts {
	c := &listenCounts{max: opts.MaxListens, perCaller: opts.MaxListensPerCaller, maxURIBytes: opts.MaxListenURIBytes, byCaller: map[string]int{}}
	if c.max <= 0 {
		c.max = DefaultMaxListens
	}
	if c.perCaller <= 0 {
		c.perCaller = DefaultMaxListensPerCaller
	}
	if c.maxURIBytes <= 0 {
		c.maxURIBytes = DefaultMaxListenURIBytes
	}
	return c
}

// acquire counts one more stream of owner ("" on stdio, which only the
// total bounds), or says why not.
func (c *listenCounts) acquire(owner string) *rpcError {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.open >= c.max {
		return newError(codeServerBusy, "Server busy: %d streams of subscriptions/listen are open, the most this server keeps; try again later", c.max)
	}
	if owner != "" && c.byCaller[owner] >= c.perCaller {
		return newError(codeServerBusy, "Server busy: this caller has %d streams of subscriptions/listen open, the most one caller may; end one (one stream can name every notification wanted) and try again", c.perCaller)
	}
	c.open++
	if owner != "" {
		c.byCaller[owner]++
	}
	return nil
}

// release counts a stream of owner ended.
func (c *listenCounts) release(owner string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.open--
	if owner != "" {
		if c.byCaller[owner]--; c.byCaller[owner] <= 0 {
			delete(c.byCaller, owner)
		}
	}
}

// listenParams are the params of subscriptions/listen.
type listenParams = mcpwire.ListenParams

// listen answers subscriptions/listen (2026-07-28): it acknowledges the
// notifications it agrees to send (a list's changes when the registry
// has such a list, updates of the resources the caller may read), sends
// them as they come, each with the stream's subscription id in its
// _meta, until the client goes (no answer) or the server ends the
// stream (the result, with the subscription id): over HTTP an SSE
// stream, over stdio the connection.
func (s *server) listen(ctx context.Context, x *exchange) ([]byte, *rpcError) {
	var p listenParams
	if err := json.Unmarshal(x.msg.params, &p); err != nil || p.Notifications == nil {
		return nil, newError(codeInvalidParams, `Invalid params: subscriptions/listen names the notifications it wants in params.notifications ({"toolsListChanged": true, "resourceSubscriptions": ["…"], …})`)
	}
	f := p.Notifications
	uriBytes := 0
	for _, uri := range f.ResourceSubscriptions {
		uriBytes += len(uri)
	}
	if uriBytes > s.listens.maxURIBytes {
		return nil, newError(codeInvalidParams, "Invalid params: params.notifications.resourceSubscriptions names %d bytes of URIs, more than the %d one stream may (Options.MaxListenURIBytes); subscribe to fewer, or to a template's resources with resourcesListChanged", uriBytes, s.listens.maxURIBytes)
	}
	if len(f.ResourceSubscriptions) > maxSubscriptions {
		return nil, newError(codeInvalidParams, "Invalid params: params.notifications.resourceSubscriptions names %d URIs, more than the %d one stream may", len(f.ResourceSubscriptions), maxSubscriptions)
	}
	owner := "" // on stdio, the connection is the one client
	if x.request != nil {
		owner, _ = caller.Key(ctx, x.request) // an identity without a key counts as its client
	}
	if e := s.listens.acquire(owner); e != nil {
		return nil, e
	}
	defer s.listens.release(owner)
	// What the stream needs of the request is read: the body goes back
	// now, not when the stream ends.
	x.detach()
	var out sender
	switch {
	case x.request == nil:
		out = x.out
	case x.writer == nil:
		return nil, newError(codeInvalidRequest, "Invalid request: subscriptions/listen answers with a stream of events: send it with Accept: text/event-stream")
	default:
		x.stream = &sseStream{w: x.writer, r: x.request}
		out = x.stream
	}

	sn := primitive.Current(s.reg)
	want := primitive.Change{
		Tools:     f.ToolsListChanged,
		Resources: f.ResourcesListChanged && len(sn.Resources)+len(sn.Templates) > 0,
		Prompts:   f.PromptsListChanged && len(sn.Prompts) > 0,
	}
	subs := newSubscriptions(want)
	admits := func(a primitive.Admits) bool { return a(ctx, "mcp") }
	subs.admits = admits
	var agreed []string
	for _, uri := range f.ResourceSubscriptions {
		if ctx.Err() != nil {
			return nil, nil // the client went
		}
		if len(uri) > 0 && len(uri) <= uritemplate.MaxLength {
			if r, t, _ := sn.Find(uri, admits); (r != nil || t != nil) && subs.add(uri, admits) {
				agreed = append(agreed, uri)
			}
		}
	}
	id := x.msg.id
	subs.meta = append(append(append([]byte(`"_meta":{"`+metaSubscriptionID+`":`), id...), '}'), ',')
	if s.hub != nil {
		// Over HTTP with sessions, the stream is told of every replica's
		// changes, through the sessions' log, as a session's stream is.
		st := &sessionStream{subs: subs, done: make(chan struct{})}
		s.hub.attach("", st)
		defer s.hub.detach("", st)
	} else {
		stop := subs.watch(s.reg)
		defer stop()
	}

	ack := mcpwire.ListenFilter{ToolsListChanged: want.Tools, ResourcesListChanged: want.Resources, PromptsListChanged: want.Prompts, ResourceSubscriptions: agreed}
	closing := s.closingChan()
	// An SSE stream says something every so often, so that no proxy or
	// load balancer takes a stream with nothing to tell for a dead one.
	var keep <-chan time.Time
	if x.stream != nil {
		every := listenKeepAlive
		if srv, _ := x.request.Context().Value(http.ServerContextKey).(*http.Server); srv != nil && srv.WriteTimeout > 0 && srv.WriteTimeout/2 < every {
			every = srv.WriteTimeout / 2
		}
		t := time.NewTicker(every)
		defer t.Stop()
		keep = t.C
	}
	filter, _ := json.Marshal(ack)
	out.send(notification(mcpwire.MethodListenAcked, subs.params(append([]byte(`"notifications":`), filter...))))
	for {
		select {
		case <-ctx.Done():
			return nil, nil // the client went: nothing to answer
		case <-closing:
			b := append([]byte(`{"_meta":{"`+metaSubscriptionID+`":`), id...)
			b = append(b, ',')
			b = append(b, s.infoMeta...)
			return append(b, `}`+callExtra+`}`...), nil
		case <-subs.wake:
			for _, msg := range subs.take() {
				out.send(msg)
			}
		case <-keep:
			x.stream.write([]byte(": keep-alive\n\n"))
		}
	}
}
