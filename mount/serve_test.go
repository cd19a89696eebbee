package mount_test

// Tests of Serve over real TCP connections. Events are ordered with
// channels: handlers say when a request has arrived and wait for the test
// to release it, the listener says when it is closed, and a Drainable says
// when it has been marked not ready. The only timeouts are guards that
// keep a broken Serve from hanging the test.

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"net"
	"net/http"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/otcgo/otc"
	"github.com/otcgo/otc/internal/testkit"
	"github.com/otcgo/otc/mount"
)

// serveGuard bounds every wait, so that a broken Serve fails the test
// instead of hanging it. A working one takes milliseconds.
const serveGuard = time.Minute

// serveRecv waits for a value on ch.
func serveRecv[T any](t *testing.T, ch <-chan T, what string) T {
	t.Helper()
	select {
	case v := <-ch:
		return v
	case <-time.After(serveGuard):
		t.Fatalf("gave up waiting for %s", what)
		var zero T
		return zero
	}
}

// serveNotYet fails if ch is ready now.
func serveNotYet[T any](t *testing.T, ch <-chan T, what string) {
	t.Helper()
	select {
	case v := <-ch:
		t.Fatalf("%s happened too early: %v", what, v)
	default:
	}
}

// serveListener is a real TCP listener that reports when it is closed
// and, once broken is closed, fails every Accept with errBroken.
type serveListener struct {
	net.Listener
	closed    chan struct{}
	closeOnce sync.Once
	broken    chan struct{}
}

var errBroken = errors.New("the listener is broken")

func newServeListener(t *testing.T) *serveListener {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	l := &serveListener{Listener: ln, closed: make(chan struct{}), broken: make(chan struct{})}
	t.Cleanup(func() { _ = l.Close() })
	return l
}

func (l *serveListener) Accept() (net.Conn, error) {
	type accepted struct {
		c   net.Conn
		err error
	}
	got := make(chan accepted, 1)
	go func() {
		c, err := l.Listener.Accept()
		got <- accepted{c, err}
	}()
	select {
	case a := <-got:
		return a.c, a.err
	case <-l.broken:
		// The pending Accept ends when Close closes the real listener.
		return nil, errBroken
	}
}

func (l *serveListener) Close() error {
	err := l.Listener.Close()
	l.closeOnce.Do(func() { close(l.closed) })
	return err
}

func (l *serveListener) url() string { return "http://" + l.Addr().String() }

// serveSlow is a handler whose /slow requests say they have started, then
// wait until the test releases them (answering 200 "done") or their
// context is cancelled (reported on cancelled). Other paths answer 200
// "fast".
type serveSlow struct {
	started   chan struct{}
	release   chan struct{}
	cancelled chan struct{}
}

func newServeSlow() *serveSlow {
	return &serveSlow{started: make(chan struct{}, 1), release: make(chan struct{}), cancelled: make(chan struct{}, 1)}
}

func (s *serveSlow) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.URL.Path != "/slow" {
		_, _ = io.WriteString(w, "fast")
		return
	}
	s.started <- struct{}{}
	select {
	case <-s.release:
		_, _ = io.WriteString(w, "done")
	case <-r.Context().Done():
		s.cancelled <- struct{}{}
	}
}

// serveResponse is the outcome of a request sent in the background.
type serveResponse struct {
	status int
	body   string
	err    error
}

// serveGet sends GET url on a connection of its own and returns its
// outcome on the channel.
func serveGet(url string) <-chan serveResponse {
	out := make(chan serveResponse, 1)
	go func() {
		c := &http.Client{Transport: &http.Transport{DisableKeepAlives: true}}
		resp, err := c.Get(url)
		if err != nil {
			out <- serveResponse{err: err}
			return
		}
		defer resp.Body.Close()
		b, err := io.ReadAll(resp.Body)
		out <- serveResponse{status: resp.StatusCode, body: string(b), err: err}
	}()
	return out
}

// runServe runs mount.Serve in the background and returns its result on the
// channel.
func runServe(ctx context.Context, srv *http.Server, ln net.Listener, opts *mount.ServeOptions) <-chan error {
	done := make(chan error, 1)
	go func() { done <- mount.Serve(ctx, srv, ln, opts) }()
	return done
}

// serveLogger is a text logger for Serve writing to logs, which collects
// its lines while Serve writes from its goroutine.
func serveLogger(logs *testkit.SyncBuffer) *slog.Logger {
	return slog.New(slog.NewTextHandler(logs, nil))
}

// drainSignal is a Drainable that passes SetReady on and then reports it.
type drainSignal struct {
	next mount.Drainable
	set  chan bool
}

func (d *drainSignal) SetReady(ready bool) {
	d.next.SetReady(ready)
	d.set <- ready
}

// drainingSignal is a drainSignal with SetDraining, as a *otc.Handler
// has: Serve calls that instead of SetReady, and reports true here.
type drainingSignal struct {
	next *otc.Handler
	set  chan bool
}

func (d *drainingSignal) SetReady(ready bool) {
	d.next.SetReady(ready)
	d.set <- !ready
}

func (d *drainingSignal) SetDraining(draining bool) {
	d.next.SetDraining(draining)
	d.set <- draining
}

// TestServe_FinishesInFlightRequests: once shutdown begins, the listener
// closes and new connections are refused, but a request already running
// finishes with its answer, and only then does Serve return nil.
func TestServe_FinishesInFlightRequests(t *testing.T) {
	t.Parallel()
	ln := newServeListener(t)
	h := newServeSlow()
	var logs testkit.SyncBuffer
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	done := runServe(ctx, &http.Server{Handler: h}, ln, &mount.ServeOptions{Logger: serveLogger(&logs)})

	slow := serveGet(ln.url() + "/slow")
	serveRecv(t, h.started, "the slow request to start")
	cancel()
	serveRecv(t, ln.closed, "the listener to close")

	_, err := net.Dial("tcp", ln.Addr().String())
	require.Error(t, err, "a new connection after shutdown began")
	assert.ErrorIs(t, err, syscall.ECONNREFUSED)
	serveNotYet(t, done, "Serve returning while a request runs")
	serveNotYet(t, slow, "the slow request's answer before it was released")

	close(h.release)
	resp := serveRecv(t, slow, "the slow request's answer")
	require.NoError(t, resp.err)
	assert.Equal(t, http.StatusOK, resp.status)
	assert.Equal(t, "done", resp.body)
	assert.NoError(t, serveRecv(t, done, "Serve to return"))
	assert.Contains(t, logs.String(), `msg="otc: shutting down"`)
	assert.Contains(t, logs.String(), `msg="otc: shut down cleanly"`)
	assert.Contains(t, logs.String(), "grace_period="+mount.DefaultGracePeriod.String(), "zero GracePeriod means the default")
}

// TestServe_DrainDelay: during the drain delay, the handler answers /health
// 503 and still serves the calls that come, the listener stays open, and
// the program can end the delay by closing the server.
func TestServe_DrainDelay(t *testing.T) {
	t.Parallel()
	reg := otc.NewRegistry(&otc.RegistryOptions{Logger: slog.New(slog.DiscardHandler)})
	require.NoError(t, otc.Register(reg, otc.Tool{ID: "Calculator.Add", Version: "1.0.0", Description: "Adds two numbers together."},
		func(ctx context.Context, in exampleAddInput) (float64, error) { return in.A + in.B, nil }))
	handler := otc.NewHandler(reg, nil)
	drained := &drainingSignal{next: handler, set: make(chan bool, 1)}
	ln := newServeListener(t)
	srv := &http.Server{Handler: handler}
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	done := runServe(ctx, srv, ln, &mount.ServeOptions{
		Drain: []mount.Drainable{nil, drained}, // nil entries are skipped
		// Longer than the test: it ends when the test closes srv.
		DrainDelay: time.Hour,
		Logger:     slog.New(slog.DiscardHandler),
	})

	before := serveRecv(t, serveGet(ln.url()+"/health"), "/health before shutdown")
	require.NoError(t, before.err)
	assert.Equal(t, http.StatusOK, before.status)

	cancel()
	assert.True(t, serveRecv(t, drained.set, "SetDraining"), "SetDraining(true), not SetReady(false)")

	health := serveRecv(t, serveGet(ln.url()+"/health"), "/health while draining")
	require.NoError(t, health.err, "the listener still accepts during the drain delay")
	assert.Equal(t, http.StatusServiceUnavailable, health.status)
	assert.JSONEq(t, `{"$schema":"otc://1.0","status":"unavailable","message":"The tool server is not taking calls"}`, health.body)

	c := &http.Client{Transport: &http.Transport{DisableKeepAlives: true}}
	resp, err := c.Post(ln.url()+"/call", "application/json",
		strings.NewReader(`{"request":{"tool_id":"Calculator.Add","input":{"a":1,"b":2}}}`))
	require.NoError(t, err)
	body, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	require.NoError(t, err)
	assert.Equal(t, http.StatusOK, resp.StatusCode, "a call during the drain delay is served: %s", body)
	assert.Contains(t, string(body), `"value":3`)

	serveNotYet(t, ln.closed, "the listener closing during the drain delay")
	serveNotYet(t, done, "Serve returning during the drain delay")

	require.NoError(t, srv.Close())
	assert.NoError(t, serveRecv(t, done, "Serve to return once the program closed the server"))
	serveRecv(t, ln.closed, "the listener to close")
}

// TestServe_GracePeriodRunsOut: a request still running when the grace
// period ends is cut off (its connection closed, its context cancelled)
// and Serve says so.
func TestServe_GracePeriodRunsOut(t *testing.T) {
	t.Parallel()
	ln := newServeListener(t)
	h := newServeSlow()
	t.Cleanup(func() { close(h.release) })
	var logs testkit.SyncBuffer
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	// The request is never released, so it outlives any grace period;
	// a short one only keeps the test quick.
	done := runServe(ctx, &http.Server{Handler: h}, ln, &mount.ServeOptions{GracePeriod: 50 * time.Millisecond, Logger: serveLogger(&logs)})

	slow := serveGet(ln.url() + "/slow")
	serveRecv(t, h.started, "the slow request to start")
	cancel()

	err := serveRecv(t, done, "Serve to return")
	require.Error(t, err)
	assert.ErrorIs(t, err, context.DeadlineExceeded)
	assert.Contains(t, err.Error(), "requests still running 50ms after the listener closed were cut off")
	assert.Contains(t, err.Error(), "ServeOptions.GracePeriod")

	serveRecv(t, h.cancelled, "the slow request's context to be cancelled")
	resp := serveRecv(t, slow, "the slow request to fail")
	assert.Error(t, resp.err, "the client sees its connection closed, not an answer")
	assert.Contains(t, logs.String(), "were cut off")
	assert.NotContains(t, logs.String(), "shut down cleanly")
}

// TestServe_ListenerFails: when the listener breaks before ctx is done,
// Serve marks the handlers not ready, lets the request already running
// finish, and returns the listener's error.
func TestServe_ListenerFails(t *testing.T) {
	t.Parallel()
	ln := newServeListener(t)
	h := newServeSlow()
	drained := &drainSignal{next: otc.NewHandler(otc.NewRegistry(nil), nil), set: make(chan bool, 1)}
	var logs testkit.SyncBuffer
	done := runServe(t.Context(), &http.Server{Handler: h}, ln, &mount.ServeOptions{
		Drain:      []mount.Drainable{drained},
		DrainDelay: time.Hour, // skipped: nothing is accepted any more
		Logger:     serveLogger(&logs),
	})

	slow := serveGet(ln.url() + "/slow")
	serveRecv(t, h.started, "the slow request to start")
	close(ln.broken)
	assert.False(t, serveRecv(t, drained.set, "SetReady"), "SetReady(false)")
	serveNotYet(t, done, "Serve returning while a request runs")

	close(h.release)
	resp := serveRecv(t, slow, "the slow request's answer")
	require.NoError(t, resp.err)
	assert.Equal(t, http.StatusOK, resp.status)
	assert.Equal(t, "done", resp.body)

	err := serveRecv(t, done, "Serve to return")
	require.Error(t, err)
	assert.ErrorIs(t, err, errBroken)
	assert.Contains(t, err.Error(), "mount: Serve: serving stopped: the listener is broken")
	assert.Contains(t, logs.String(), "level=ERROR")
	assert.Contains(t, logs.String(), "the listener is broken")
}

// TestServe_ServerClosedByProgram: a program that shuts its server down
// itself gets nil from Serve, as from http.Server.Serve.
func TestServe_ServerClosedByProgram(t *testing.T) {
	t.Parallel()
	ln := newServeListener(t)
	srv := &http.Server{Handler: newServeSlow()}
	done := runServe(t.Context(), srv, ln, nil)

	resp := serveRecv(t, serveGet(ln.url()+"/"), "an answer")
	require.NoError(t, resp.err)
	assert.Equal(t, "fast", resp.body)

	require.NoError(t, srv.Shutdown(t.Context()))
	assert.NoError(t, serveRecv(t, done, "Serve to return"))
}

// TestServe_ContextAlreadyDone: Serve shuts down at once, without
// serving, and closes the listener.
func TestServe_ContextAlreadyDone(t *testing.T) {
	t.Parallel()
	ln := newServeListener(t)
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	assert.NoError(t, serveRecv(t, runServe(ctx, &http.Server{}, ln, &mount.ServeOptions{Logger: slog.New(slog.DiscardHandler)}), "Serve to return"))
	serveRecv(t, ln.closed, "the listener to close")
}

func TestServe_Misuse(t *testing.T) {
	t.Parallel()
	ln := newServeListener(t)
	for _, tc := range []struct {
		name string
		srv  *http.Server
		ln   net.Listener
		want string
	}{
		{"nil_server", nil, ln, "mount: Serve: the *http.Server is nil"},
		{"nil_listener", &http.Server{}, nil, "mount: Serve: the listener is nil; pass the one net.Listen returned"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			err := mount.Serve(t.Context(), tc.srv, tc.ln, nil)
			require.Error(t, err)
			assert.Equal(t, tc.want, err.Error())
		})
	}
}

// exampleAddInput is Calculator.Add's input.
type exampleAddInput struct {
	A float64 `json:"a" jsonschema:"description=The first number to add."`
	B float64 `json:"b" jsonschema:"description=The second number to add."`
}
