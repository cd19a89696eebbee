package mcp

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"strconv"
	"sync"
	"sync/atomic"

	"github.com/otcgo/otc"
	"github.com/otcgo/otc/internal/jsonrpc"
	"github.com/otcgo/otc/internal/primitive"
)

// ServeStdio serves reg over MCP's stdio transport: newline-delimited
// JSON-RPC messages on standard input, answers and notifications on
// standard output. Nothing else may write to standard output; logs belong
// on standard error, where slog.Default writes. It returns nil when
// standard input ends, once the calls in flight have been answered, and
// ctx's error when ctx ends first, after cancelling them.
func ServeStdio(ctx context.Context, reg *otc.Registry, opts *Options) error {
	return Serve(ctx, reg, os.Stdin, os.Stdout, opts)
}

// Serve serves reg over the stdio transport on any pair of streams, such
// as a pipe or a socket: it reads one JSON-RPC message per line from in and
// writes one per line to out. See [ServeStdio].
//
// Requests run concurrently, up to Options.MaxConcurrent, so that a slow
// tool does not hold up the others; notifications/cancelled cancels the
// context of the call it names. A line longer than Options.MaxBodyBytes is
// answered with error -32600 and skipped.
func Serve(ctx context.Context, reg *otc.Registry, in io.Reader, out io.Writer, opts *Options) error {
	if reg == nil {
		return errors.New("mcp: Serve called with a nil *otc.Registry")
	}
	if opts == nil {
		opts = &Options{}
	}
	c := &stdioConn{
		s:        newServer(reg, opts, false),
		out:      bufio.NewWriter(out),
		inflight: map[string]context.CancelFunc{},
		subs:     newSubscriptions(primitive.Change{Tools: true, Resources: true, Prompts: true}),
	}
	c.level.Set(c.s.logLevel)
	limit := opts.MaxConcurrent
	if limit <= 0 {
		limit = DefaultMaxConcurrent
	}
	c.sem = make(chan struct{}, limit)
	// The reader may outlive Serve, blocked in a Read of in that nothing
	// can interrupt; what it reads then is not answered.
	defer c.stopWriting()

	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	stopWatching := c.subs.watch(reg)
	defer stopWatching()
	told := make(chan struct{})
	go func() {
		defer close(told)
		c.tell(ctx)
	}()
	defer func() { cancel(); <-told }()
	lines := make(chan []byte)
	readErr := make(chan error, 1)
	go func() {
		readErr <- c.read(ctx, in, lines)
	}()
	for {
		select {
		case <-ctx.Done():
			cancel()
			c.s.endListens()
			c.wg.Wait()
			return context.Cause(ctx)
		case err := <-readErr:
			c.s.endListens()
			c.wg.Wait()
			if errors.Is(err, io.EOF) {
				return c.writeErr()
			}
			return err
		case line := <-lines:
			c.dispatch(ctx, line)
		}
	}
}

// stdioConn is one client on a pair of streams.
type stdioConn struct {
	s     *server
	level slog.LevelVar // set by logging/setLevel
	sem   chan struct{}
	wg    sync.WaitGroup

	// version is the protocol version initialize settled on, nil before.
	version atomic.Pointer[string]
	// caps are the capabilities initialize declared, nil before.
	caps atomic.Pointer[clientCaps]

	outMu   sync.Mutex
	out     *bufio.Writer
	outErr  error
	stopped bool // Serve has returned: out is no longer the server's

	mu sync.Mutex
	// inflight holds the requests not yet answered, by raw id, with what
	// cancels each (nil for initialize).
	inflight map[string]context.CancelFunc

	// subs are the resources the client subscribed to, and the changes
	// it is to be told of.
	subs *subscriptions
}

// tell sends the client the changes of the registry's resources and
// prompts, once it has settled a version that has such notifications,
// until ctx ends.
func (c *stdioConn) tell(ctx context.Context) {
	for {
		select {
		case <-ctx.Done():
			return
		case <-c.subs.wake:
		}
		msgs := c.subs.take()
		if c.version.Load() == nil {
			continue // before initialize: nothing to tell yet
		}
		for _, msg := range msgs {
			c.write(msg)
		}
	}
}

// read sends each line of in to lines, answering over-long ones itself.
func (c *stdioConn) read(ctx context.Context, in io.Reader, lines chan<- []byte) error {
	r := bufio.NewReaderSize(in, 64<<10)
	for {
		line, tooLong, err := readLine(r, c.s.maxBody)
		if tooLong {
			c.write(jsonrpc.AppendErrorResponse(nil, nil, &rpcError{Code: codeInvalidRequest,
				Message: "The message is longer than the limit of " + strconv.FormatInt(c.s.maxBody, 10) + " bytes"}))
		} else if len(bytes.TrimSpace(line)) > 0 {
			select {
			case lines <- line:
			case <-ctx.Done():
				return ctx.Err()
			}
		}
		if err != nil {
			return err
		}
	}
}

// readLine reads up to the next newline. A line over limit is read to its
// end and dropped.
func readLine(r *bufio.Reader, limit int64) (line []byte, tooLong bool, err error) {
	for {
		chunk, err := r.ReadSlice('\n')
		if !tooLong {
			if int64(len(line)+len(chunk)) > limit+1 { // +1: the newline
				tooLong, line = true, nil
			} else {
				line = append(line, chunk...)
			}
		}
		if errors.Is(err, bufio.ErrBufferFull) {
			continue
		}
		return line, tooLong, err
	}
}

// dispatch handles one line: notifications at once, requests on their own
// goroutine within the concurrency limit.
func (c *stdioConn) dispatch(ctx context.Context, line []byte) {
	m := new(message)
	if e := readMessage(line, m, "line"); e != nil {
		m.releaseArgs()
		c.write(jsonrpc.AppendErrorResponse(nil, m.id, e))
		return
	}
	served := false // from then on the request's goroutine releases them
	defer func() {
		if !served {
			m.releaseArgs()
		}
	}()
	if m.isReply {
		// The answer to what a tool asked (ask.go); one to nothing pending
		// (answered already, or given up on) has no one to go to.
		if id, r, ok := parseReply(line); ok {
			c.s.asks.deliver(id, "", r)
		}
		return
	}
	if !m.hasID {
		if m.method == "notifications/cancelled" && m.requestID != nil {
			c.mu.Lock()
			cancel := c.inflight[string(m.requestID)]
			c.mu.Unlock()
			if cancel != nil {
				cancel()
			}
		}
		return
	}
	// An id names one request until it is answered: a second request with
	// it would share its answers and its cancellation with the first, so
	// it is refused, and the first runs on, still cancellable by its id.
	// (Only this goroutine adds ids, so the check holds until the add.)
	key := string(m.id)
	c.mu.Lock()
	_, inUse := c.inflight[key]
	c.mu.Unlock()
	if inUse {
		c.write(jsonrpc.AppendErrorResponse(nil, m.id, &rpcError{Code: codeInvalidRequest,
			Message: "Invalid request: id " + key + " is in use by a request still in flight on this connection; give each request an id of its own"}))
		return
	}
	select {
	case c.sem <- struct{}{}:
	default:
		// Answered at once rather than waited for, so that the lines
		// behind it, notifications/cancelled among them, are still read.
		c.write(jsonrpc.AppendErrorResponse(nil, m.id, &rpcError{Code: codeServerBusy,
			Message: fmt.Sprintf("Server busy: %d requests are already running on this connection; retry once one has been answered", cap(c.sem))}))
		return
	}
	callCtx, cancel := context.WithCancel(ctx)
	// What notifications/cancelled calls; nothing for initialize, which
	// must not be cancelled.
	var stop context.CancelFunc
	if m.method != "initialize" {
		stop = cancel
	}
	c.mu.Lock()
	c.inflight[key] = stop
	c.mu.Unlock()
	served = true
	c.wg.Go(func() {
		defer func() {
			m.releaseArgs()
			cancel()
			<-c.sem
		}()
		c.serve(callCtx, m, line, key)
	})
}

// serve answers one request. Its id is released from inflight just before
// the answer is written, never after: a client may reuse an id once it has
// the answer, and the new request's entry must not be removed by the old.
func (c *stdioConn) serve(ctx context.Context, m *message, line []byte, key string) {
	x := exchange{msg: m, body: line, logLevel: &c.level, out: c, subs: c.subs}
	x.gen = generationFor(m, "")
	if v := c.version.Load(); v != nil {
		x.version = *v
	}
	if caps := c.caps.Load(); caps != nil {
		x.caps = *caps
	}
	result, e := c.s.handle(ctx, &x)
	if m.method == "initialize" && !x.gen.stateless() && e == nil {
		// Kept before the answer is written: the client sends nothing
		// else until it has it.
		c.version.Store(new(c.s.negotiate(m.version)))
		c.caps.Store(new(readClientCaps(initializeCapabilities(m.params))))
	}
	out := make([]byte, 0, len(result)+48)
	if e != nil {
		out = jsonrpc.AppendErrorResponse(out, m.id, e)
	} else {
		out = jsonrpc.AppendResponse(out, m.id, result)
	}
	answer := func() {
		c.release(key)
		c.write(out)
	}
	if ctx.Err() != nil && (m.method == "tools/call" || m.method == "subscriptions/listen") && errors.Is(context.Cause(ctx), context.Canceled) ||
		e == nil && result == nil {
		// A cancelled request is not answered, nor a listen stream the
		// client ended.
		answer = func() { c.release(key) }
	}
	if x.notifier != nil {
		x.notifier.finish(answer)
	} else {
		answer()
	}
}

// release ends the reservation of a request id.
func (c *stdioConn) release(key string) {
	c.mu.Lock()
	delete(c.inflight, key)
	c.mu.Unlock()
}

// send is write, as the sender of a call's notifications.
func (c *stdioConn) send(msg []byte) { c.write(msg) }

// write sends one message as a line.
func (c *stdioConn) write(msg []byte) {
	c.outMu.Lock()
	defer c.outMu.Unlock()
	if c.outErr != nil || c.stopped {
		return
	}
	c.out.Write(msg)
	c.out.WriteByte('\n')
	c.outErr = c.out.Flush()
}

// stopWriting makes every later write a no-op.
func (c *stdioConn) stopWriting() {
	c.outMu.Lock()
	c.stopped = true
	c.outMu.Unlock()
}

func (c *stdioConn) writeErr() error {
	c.outMu.Lock()
	defer c.outMu.Unlock()
	return c.outErr
}
