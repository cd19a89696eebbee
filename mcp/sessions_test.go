package mcp_test

import (
	"bufio"
	"context"
	"crypto/rand"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/otcgo/otc"
	"github.com/otcgo/otc/mcp"
	"github.com/otcgo/otc/resource"
	"github.com/otcgo/otc/sessions"
)

// replica is one replica of a deployment in a test: its registry (with
// the resource test://text, whose handle says it changed), its URL, and
// its server.
type replica struct {
	reg  *otc.Registry
	text *resource.Handle
	url  string
	srv  *httptest.Server
}

// replicas starts n replicas sharing a session store and sealing keys.
func replicas(t *testing.T, n int, store sessions.Store, opts mcp.Options) []*replica {
	t.Helper()
	key := make([]byte, mcp.RequestStateKeySize)
	_, _ = rand.Read(key)
	opts.Sessions, opts.RequestStateKeys = store, [][]byte{key}
	var out []*replica
	for range n {
		reg, text, _ := resourceRegistry(t)
		o := opts
		srv := httptest.NewServer(mcp.NewHandler(reg, &o))
		t.Cleanup(func() { srv.CloseClientConnections(); srv.Close() })
		out = append(out, &replica{reg: reg, text: text, url: srv.URL, srv: srv})
	}
	return out
}

// initSession begins a session at version and returns its id.
func initSession(t *testing.T, url, version string, hdr map[string]string) string {
	t.Helper()
	a := post(t, url, request(1, "initialize", obj{"protocolVersion": version, "capabilities": obj{}, "clientInfo": obj{"name": "t", "version": "1"}}), hdr)
	a.result(t)
	sid := a.header.Get("Mcp-Session-Id")
	require.NotEmpty(t, sid, "a session begins at initialize")
	return sid
}

// withSession returns hdr with the session's id and version.
func withSession(sid, version string, hdr map[string]string) map[string]string {
	out := map[string]string{"Mcp-Session-Id": sid, "Mcp-Protocol-Version": version}
	for k, v := range hdr {
		out[k] = v
	}
	return out
}

// sseEvent is an event of a session's stream.
type sseEvent struct {
	id   string
	data string
}

// openSessionStream opens a session's stream, and returns its events as they
// come, and the status it was answered with.
func openSessionStream(t *testing.T, url string, hdr map[string]string) (<-chan sseEvent, int, context.CancelFunc) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	require.NoError(t, err)
	req.Header.Set("Accept", "text/event-stream")
	for k, v := range hdr {
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	if resp.StatusCode != http.StatusOK {
		resp.Body.Close()
		return nil, resp.StatusCode, cancel
	}
	require.Equal(t, "text/event-stream", resp.Header.Get("Content-Type"))
	out := make(chan sseEvent, 64)
	go func() {
		defer resp.Body.Close()
		defer close(out)
		sc := bufio.NewScanner(resp.Body)
		var ev sseEvent
		for sc.Scan() {
			line := sc.Text()
			switch {
			case line == "":
				if ev.id != "" || ev.data != "" {
					out <- ev
				}
				ev = sseEvent{}
			case strings.HasPrefix(line, "id: "):
				ev.id = line[4:]
			case strings.HasPrefix(line, "data: "):
				ev.data = line[6:]
			}
		}
	}()
	return out, http.StatusOK, cancel
}

// nextNotification returns the next event of the stream that carries a
// message, skipping the priming event.
func nextNotification(t *testing.T, ev <-chan sseEvent) (map[string]any, string) {
	t.Helper()
	for {
		e, ok := <-recvChan(t, ev)
		require.True(t, ok, "the stream ended")
		if strings.TrimSpace(e.data) == "" {
			continue
		}
		var m map[string]any
		require.NoError(t, json.Unmarshal([]byte(e.data), &m), e.data)
		return m, e.id
	}
}

// recvChan waits (at most five seconds) for ch to have something.
func recvChan[T any](t *testing.T, ch <-chan T) <-chan T {
	t.Helper()
	out := make(chan T, 1)
	select {
	case v, ok := <-ch:
		if ok {
			out <- v
		}
		close(out)
	case <-time.After(5 * time.Second):
		t.Fatal("nothing came within 5s")
	}
	return out
}

// updatedURI is the URI of a notifications/resources/updated, or "".
func updatedURI(m map[string]any) string {
	if m["method"] != "notifications/resources/updated" {
		return ""
	}
	p, _ := m["params"].(map[string]any)
	uri, _ := p["uri"].(string)
	return uri
}

// TestSessionsAcrossReplicas: a client subscribes on one replica and
// holds its stream on another; a change made on a third reaches it, with
// no sticky routing; the session ends on every replica when the client
// ends it.
func TestSessionsAcrossReplicas(t *testing.T) {
	t.Parallel()
	rs := replicas(t, 3, sessions.NewMemoryStore(nil), mcp.Options{})
	a, b, c := rs[0], rs[1], rs[2]
	v := mcp.Version20251125
	sid := initSession(t, a.url, v, nil)
	hdr := withSession(sid, v, nil)

	events, status, _ := openSessionStream(t, b.url, hdr)
	require.Equal(t, http.StatusOK, status)
	post(t, c.url, request(2, "resources/subscribe", obj{"uri": "test://text"}), hdr).result(t)

	require.Eventually(t, func() bool {
		a.text.Changed() // made on a, which holds neither the stream nor the subscription
		select {
		case e := <-events:
			var m map[string]any
			if json.Unmarshal([]byte(e.data), &m) == nil && updatedURI(m) == "test://text" {
				assert.NotEmpty(t, e.id, "an update carries an ID to resume from")
				return true
			}
		default:
		}
		return false
	}, 5*time.Second, 50*time.Millisecond, "the update reaches the stream on b")

	// A tool registered on a: b's stream is told the list changed. (On
	// a, whose updates above it follows in the log: each replica
	// publishes in order, the replicas' publications interleave.)
	addTool(t, a.reg, "Late.Tool", func(context.Context, struct{}) (string, error) { return "", nil })
	for {
		m, _ := nextNotification(t, events)
		if m["method"] == "notifications/tools/list_changed" {
			break
		}
	}

	// Unsubscribed on a: no more updates for it (the list change after
	// shows the stream still runs, and was told of the unsubscription
	// first, in the log's order).
	post(t, a.url, request(3, "resources/unsubscribe", obj{"uri": "test://text"}), hdr).result(t)
	c.text.Changed()
	addTool(t, c.reg, "Later.Tool", func(context.Context, struct{}) (string, error) { return "", nil })
	for {
		m, _ := nextNotification(t, events)
		require.Empty(t, updatedURI(m), "unsubscribed")
		if m["method"] == "notifications/tools/list_changed" {
			break
		}
	}

	// Ended on c: every replica refuses it, 404, and b's stream ends.
	req, err := http.NewRequest(http.MethodDelete, c.url, nil)
	require.NoError(t, err)
	req.Header.Set("Mcp-Session-Id", sid)
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	resp.Body.Close()
	assert.Equal(t, http.StatusNoContent, resp.StatusCode)
	e, _ := post(t, c.url, request(4, "tools/list", nil), hdr).rpcErr(t, http.StatusNotFound, -32600)
	assert.Contains(t, e.Message, "initialize", "says what to do")
	for _, r := range rs { // the others, once they read the end from the log
		require.Eventually(t, func() bool {
			return post(t, r.url, request(4, "tools/list", nil), hdr).status == http.StatusNotFound
		}, 5*time.Second, 5*time.Millisecond)
	}
	// b's stream ends: its channel closes (what is left is drained).
	ended := make(chan struct{})
	go func() {
		for range events {
		}
		close(ended)
	}()
	select {
	case <-ended:
	case <-time.After(5 * time.Second):
		t.Fatal("the stream of the ended session did not end")
	}
	_, status, _ = openSessionStream(t, a.url, hdr)
	assert.Equal(t, http.StatusNotFound, status)
}

// TestSessionRefusals: an id this deployment never issued, another
// caller's, one sealed with a key the replicas do not share, and a
// subscription made without a session are each refused, saying what to do.
func TestSessionRefusals(t *testing.T) {
	t.Parallel()
	store := sessions.NewMemoryStore(nil) // a store the program chose: it knows every session
	reg, _, _ := resourceRegistry(t)
	h := mcp.NewHandler(reg, &mcp.Options{Authenticator: claimsAuth(), Sessions: store})
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	other := serve(t, reg, &mcp.Options{Sessions: store}) // another key of its own
	v := mcp.Version20250618
	alice := map[string]string{"X-Test-Claims": `{"sub":"alice"}`}
	bob := map[string]string{"X-Test-Claims": `{"sub":"bob"}`}
	sid := initSession(t, srv.URL, v, alice)
	post(t, srv.URL, request(2, "tools/list", nil), withSession(sid, v, alice)).result(t)

	for name, tc := range map[string]struct {
		url string
		hdr map[string]string
	}{
		"forged":          {srv.URL, withSession("not-a-session-id", v, alice)},
		"altered":         {srv.URL, withSession(sid[:len(sid)-2]+"AA", v, alice)},
		"another_caller":  {srv.URL, withSession(sid, v, bob)},
		"another_key":     {other, withSession(sid, v, nil)},
		"too_long":        {srv.URL, withSession(strings.Repeat("a", mcp.MaxSessionIDBytes+1), v, alice)},
		"on_a_stream_too": {srv.URL, withSession("not-a-session-id", v, alice)},
	} {
		t.Run(name, func(t *testing.T) {
			if name == "on_a_stream_too" {
				_, status, _ := openSessionStream(t, tc.url, tc.hdr)
				assert.Equal(t, http.StatusNotFound, status)
				return
			}
			e, _ := post(t, tc.url, request(3, "tools/list", nil), tc.hdr).rpcErr(t, http.StatusNotFound, -32600)
			assert.Contains(t, e.Message, "begin a new one with initialize")
		})
	}

	t.Run("subscribe_without_a_session", func(t *testing.T) {
		e, _ := post(t, srv.URL, request(4, "resources/subscribe", obj{"uri": "test://text"}), alice).rpcErr(t, http.StatusBadRequest, -32600)
		assert.Contains(t, e.Message, "Mcp-Session-Id")
	})
	t.Run("stateless", func(t *testing.T) {
		url := serve(t, reg, &mcp.Options{Stateless: true})
		e, _ := post(t, url, request(4, "resources/subscribe", obj{"uri": "test://text"}), nil).rpcErr(t, http.StatusOK, -32601)
		assert.Contains(t, e.Message, "keeps no sessions")
	})
	t.Run("subscribe_to_nothing", func(t *testing.T) {
		e, _ := post(t, srv.URL, request(5, "resources/subscribe", obj{"uri": "test://nothing"}), withSession(sid, v, alice)).rpcErr(t, http.StatusOK, -32002)
		assert.Contains(t, e.Message, "test://nothing")
	})
}

// TestSessionBounds: sessions per caller and in all, subscriptions per
// session, and idle sessions expire.
func TestSessionBounds(t *testing.T) {
	t.Parallel()
	v := mcp.Version20251125
	t.Run("per_caller_and_in_all", func(t *testing.T) {
		t.Parallel()
		reg, _, _ := resourceRegistry(t)
		h := mcp.NewHandler(reg, &mcp.Options{Authenticator: claimsAuth(), MaxSessionsPerCaller: 2, MaxSessions: 3})
		srv := httptest.NewServer(h)
		t.Cleanup(srv.Close)
		alice := map[string]string{"X-Test-Claims": `{"sub":"alice"}`}
		first := initSession(t, srv.URL, v, alice)
		initSession(t, srv.URL, v, alice)
		init := request(1, "initialize", obj{"protocolVersion": v, "capabilities": obj{}, "clientInfo": obj{"name": "t", "version": "1"}})
		e, _ := post(t, srv.URL, init, alice).rpcErr(t, http.StatusServiceUnavailable, -32000)
		assert.Contains(t, e.Message, "this caller has 2 sessions")
		initSession(t, srv.URL, v, map[string]string{"X-Test-Claims": `{"sub":"bob"}`})
		e, _ = post(t, srv.URL, init, map[string]string{"X-Test-Claims": `{"sub":"carol"}`}).rpcErr(t, http.StatusServiceUnavailable, -32000)
		assert.Contains(t, e.Message, "3 sessions are open")
		// Ending one makes room.
		req, _ := http.NewRequest(http.MethodDelete, srv.URL, nil)
		req.Header.Set("Mcp-Session-Id", first)
		req.Header.Set("X-Test-Claims", `{"sub":"alice"}`)
		resp, err := http.DefaultClient.Do(req)
		require.NoError(t, err)
		resp.Body.Close()
		require.Equal(t, http.StatusNoContent, resp.StatusCode)
		initSession(t, srv.URL, v, alice)
	})
	t.Run("subscriptions", func(t *testing.T) {
		t.Parallel()
		reg := newRegistry(t)
		type nArgs struct {
			N string `json:"n" jsonschema:"description=Any."`
		}
		_, err := resource.RegisterTemplate(reg, resource.Template[nArgs]{URITemplate: "n://{n}", Name: "n"},
			func(_ context.Context, in nArgs) (string, error) { return in.N, nil })
		require.NoError(t, err)
		url := serve(t, reg, nil)
		sid := initSession(t, url, v, nil)
		hdr := withSession(sid, v, nil)
		for i := range 1000 {
			post(t, url, request(i, "resources/subscribe", obj{"uri": fmt.Sprintf("n://%d", i)}), hdr).result(t)
		}
		e, _ := post(t, url, request(1000, "resources/subscribe", obj{"uri": "n://1000"}), hdr).rpcErr(t, http.StatusOK, -32602)
		assert.Contains(t, e.Message, "1000 resources already")
	})
	t.Run("idle", func(t *testing.T) {
		t.Parallel()
		reg, _, _ := resourceRegistry(t)
		url := serve(t, reg, &mcp.Options{SessionIdleTimeout: time.Second})
		sid := initSession(t, url, v, nil)
		hdr := withSession(sid, v, nil)
		for range 4 { // requests keep it alive past its idle timeout
			time.Sleep(300 * time.Millisecond)
			post(t, url, request(2, "ping", nil), hdr).result(t)
		}
		time.Sleep(2 * time.Second)
		post(t, url, request(3, "ping", nil), hdr).rpcErr(t, http.StatusNotFound, -32600)
	})
}

// TestSessionResume: a client that lost its stream opens it again, on
// another replica, with Last-Event-ID, and gets what was published
// meanwhile; from past the log's window, it is told that everything it
// subscribed to may have changed.
func TestSessionResume(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name    string
		logSize int
	}{{"within_the_window", 0}, {"past_the_window", 3}} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			rs := replicas(t, 2, sessions.NewMemoryStore(&sessions.MemoryOptions{LogSize: tc.logSize}), mcp.Options{})
			a, b := rs[0], rs[1]
			v := mcp.Version20251125
			sid := initSession(t, a.url, v, nil)
			hdr := withSession(sid, v, nil)
			post(t, a.url, request(2, "resources/subscribe", obj{"uri": "test://text"}), hdr).result(t)
			events, _, stop := openSessionStream(t, a.url, hdr)
			var last string
			require.Eventually(t, func() bool {
				a.text.Changed()
				select {
				case e := <-events:
					var m map[string]any
					if json.Unmarshal([]byte(e.data), &m) == nil && updatedURI(m) != "" {
						last = e.id
						return true
					}
				default:
				}
				return false
			}, 5*time.Second, 50*time.Millisecond)
			stop()
			// Meanwhile: the resource changes, and (past the window) the
			// log moves on with other sessions' events.
			time.Sleep(50 * time.Millisecond)
			b.text.Changed()
			for i := range 5 {
				other := initSession(t, b.url, v, nil)
				post(t, b.url, request(i, "resources/subscribe", obj{"uri": "test://blob"}), withSession(other, v, nil)).result(t)
			}
			resumed, status, _ := openSessionStream(t, b.url, withSession(sid, v, map[string]string{"Last-Event-ID": last}))
			require.Equal(t, http.StatusOK, status)
			m, id := nextNotification(t, resumed)
			for updatedURI(m) == "" { // past the window, the lists are said to have changed too
				m, id = nextNotification(t, resumed)
			}
			assert.Equal(t, "test://text", updatedURI(m), "what changed while the stream was down")
			assert.NotEqual(t, last, id)
		})
	}
}

// TestOneStreamPerSession: a session's second stream, on any replica,
// ends the first, so that no change is told twice.
func TestOneStreamPerSession(t *testing.T) {
	t.Parallel()
	rs := replicas(t, 2, sessions.NewMemoryStore(nil), mcp.Options{})
	v := mcp.Version20250618
	sid := initSession(t, rs[0].url, v, nil)
	hdr := withSession(sid, v, nil)
	first, _, _ := openSessionStream(t, rs[0].url, hdr)
	time.Sleep(50 * time.Millisecond)
	second, status, _ := openSessionStream(t, rs[1].url, hdr)
	require.Equal(t, http.StatusOK, status)
	var wg sync.WaitGroup
	wg.Go(func() {
		for range first {
		}
	})
	done := make(chan struct{})
	go func() { wg.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		t.Fatal("the first stream did not end")
	}
	post(t, rs[0].url, request(2, "resources/subscribe", obj{"uri": "test://text"}), hdr).result(t)
	require.Eventually(t, func() bool {
		rs[0].text.Changed()
		select {
		case e := <-second:
			var m map[string]any
			return json.Unmarshal([]byte(e.data), &m) == nil && updatedURI(m) == "test://text"
		default:
			return false
		}
	}, 5*time.Second, 50*time.Millisecond, "the second stream is told")
}

// TestSessionsOfAnotherReplica: replicas that keep their sessions each in
// its own memory, behind a load balancer with no sticky routing, answer a
// request of another's session as one of no session (as a server without
// sessions would, which they were before), refuse its stream, 404 (the
// client begins a session there), and say why a subscription fails.
func TestSessionsOfAnotherReplica(t *testing.T) {
	t.Parallel()
	reg, _, _ := resourceRegistry(t)
	key := make([]byte, mcp.RequestStateKeySize)
	_, _ = rand.Read(key)
	for name, keys := range map[string][][]byte{"own_keys": nil, "shared_keys": {key}} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			a := serve(t, reg, &mcp.Options{RequestStateKeys: keys})
			b := serve(t, reg, &mcp.Options{RequestStateKeys: keys})
			v := mcp.Version20251125
			hdr := withSession(initSession(t, a, v, nil), v, nil)
			post(t, b, request(2, "tools/list", nil), hdr).result(t)
			_, status, _ := openSessionStream(t, b, hdr)
			assert.Equal(t, http.StatusNotFound, status)
			e, _ := post(t, b, request(3, "resources/subscribe", obj{"uri": "test://text"}), hdr).rpcErr(t, http.StatusBadRequest, -32600)
			assert.Contains(t, e.Message, "Options.Sessions")
			post(t, a, request(4, "resources/subscribe", obj{"uri": "test://text"}), hdr).result(t)
		})
	}
}

// TestSessionResumeAgain: a stream resumed from an event older than the
// opening of another stream of the session stays open: that opening, read
// again as the stream catches up, does not end it (only a stream opened
// after it does).
func TestSessionResumeAgain(t *testing.T) {
	t.Parallel()
	rs := replicas(t, 2, sessions.NewMemoryStore(nil), mcp.Options{})
	v := mcp.Version20251125
	sid := initSession(t, rs[0].url, v, nil)
	post(t, rs[0].url, request(2, "resources/subscribe", obj{"uri": "test://text"}), withSession(sid, v, nil)).result(t)
	first, _, stop := openSessionStream(t, rs[0].url, withSession(sid, v, nil))
	time.Sleep(50 * time.Millisecond)
	rs[1].text.Changed()
	m, last := nextNotification(t, first)
	require.Equal(t, "test://text", updatedURI(m))
	stop()
	// Another stream opens, and goes, after that event.
	_, status, stop := openSessionStream(t, rs[1].url, withSession(sid, v, nil))
	require.Equal(t, http.StatusOK, status)
	time.Sleep(50 * time.Millisecond)
	stop()
	events, status, _ := openSessionStream(t, rs[0].url, withSession(sid, v, map[string]string{"Last-Event-ID": last}))
	require.Equal(t, http.StatusOK, status)
	time.Sleep(100 * time.Millisecond)
	rs[1].text.Changed()
	for {
		m, _ := nextNotification(t, events)
		if updatedURI(m) == "test://text" {
			return
		}
	}
}
