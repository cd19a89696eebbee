package client

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"slices"
	"sync"
	"time"
)

// DefaultStdioGrace is how long [Client.Close] waits for a stdio server to
// exit after its standard input is closed, before it kills the process.
const DefaultStdioGrace = 2 * time.Second

// DefaultStdioWriteTimeout bounds the writing of one message to a stdio
// server: see [Options].StdioWriteTimeout.
const DefaultStdioWriteTimeout = 30 * time.Second

// stderrTail is how much of a stdio server's standard error is kept for
// error messages: its last bytes.
const stderrTail = 4 << 10

// NewStdio returns a client of the MCP server that cmd runs, speaking to
// it over the process's standard input and output (one JSON message per
// line). It starts the process; cmd must not have been started, and its
// Stdin, Stdout and Stderr must be nil (the client takes all three, and
// keeps the end of the standard error to explain a failure). The
// handshake comes with the first request. [Client.Close] stops the
// process: it closes its standard input, then after half of
// [DefaultStdioGrace] sends SIGTERM, and after the other half SIGKILL, to
// the process and the processes it started (on Unix the process runs in a
// process group of its own, unless cmd.SysProcAttr is set). A process that exits fails the calls in flight with an error
// that quotes its standard error. opts may be nil; its HTTP settings and
// credentials do not apply.
func NewStdio(cmd *exec.Cmd, opts *Options) (*Client, error) {
	if cmd == nil || cmd.Path == "" {
		return nil, errors.New("otc client: NewStdio needs a command to run")
	}
	if cmd.Stdin != nil || cmd.Stdout != nil || cmd.Stderr != nil || cmd.Process != nil {
		return nil, errors.New("otc client: NewStdio takes a command not yet started, with Stdin, Stdout and Stderr nil")
	}
	o := Options{}
	if opts != nil {
		o = *opts
	}
	if err := (&Options{MCPVersion: o.MCPVersion}).CheckMCP(); err != nil {
		return nil, err
	}
	c := &Client{format: FormatMCP, agent: DefaultUserAgent, reach: &reach{t: Command{Cmd: copyCommand(cmd)}}}
	c.keep(&o)
	if err := c.startStdio(cmd); err != nil {
		return nil, err
	}
	return c, nil
}

// startStdio starts cmd and makes the client's session its pipes.
func (c *Client) startStdio(cmd *exec.Cmd) error {
	// The pipes are the client's own, not exec's, so that a write can be
	// given a deadline and the reading ended whatever the process does.
	inR, inW, err := os.Pipe()
	if err != nil {
		return fmt.Errorf("otc client: %w", err)
	}
	outR, outW, err := os.Pipe()
	if err != nil {
		inR.Close()
		inW.Close()
		return fmt.Errorf("otc client: %w", err)
	}
	st := &stdioConn{cmd: cmd, stdin: inW, stdout: outR, in: newInbox(), stderr: &tailBuffer{max: stderrTail},
		wsem: make(chan struct{}, 1), closing: make(chan struct{}), writeTimeout: c.opts.StdioWriteTimeout}
	switch {
	case st.writeTimeout == 0:
		st.writeTimeout = DefaultStdioWriteTimeout
	case st.writeTimeout < 0:
		st.writeTimeout = 0
	}
	cmd.Stdin, cmd.Stdout, cmd.Stderr = inR, outW, st.stderr
	if cmd.WaitDelay == 0 {
		// A process the group lost that holds the standard error open
		// does not hold up the end of the session.
		cmd.WaitDelay = DefaultStdioGrace
	}
	ownGroup(cmd)
	err = cmd.Start()
	// The process has its ends of the pipes; the client keeps none.
	inR.Close()
	outW.Close()
	if err != nil {
		inW.Close()
		outR.Close()
		return fmt.Errorf("otc client: starting %s: %w", cmd.Path, err)
	}
	s := newMCPSession(c, st)
	c.t = s
	go st.read(outR, c.maxBytes, s)
	return nil
}

// copyCommand is a command not yet started that runs what cmd runs, as
// cmd was given: what a session of its own starts (see
// [Client.NewSession]).
func copyCommand(cmd *exec.Cmd) *exec.Cmd {
	return &exec.Cmd{Path: cmd.Path, Args: slices.Clone(cmd.Args), Env: slices.Clone(cmd.Env), Dir: cmd.Dir,
		SysProcAttr: cmd.SysProcAttr, WaitDelay: cmd.WaitDelay}
}

// stdioConn carries MCP over a process's standard input and output.
type stdioConn struct {
	cmd    *exec.Cmd
	stdin  *os.File
	stdout *os.File
	stderr *tailBuffer
	in     *inbox

	// wsem is held while a message is written, one at a time; a writer
	// waits for it no longer than its context, so that a process that
	// reads nothing holds up no caller.
	wsem chan struct{}
	// writeTimeout bounds the writing of one message.
	writeTimeout time.Duration

	closing   chan struct{} // closed when close begins
	closeOnce sync.Once
	closeErr  error
	killOnce  sync.Once
	brokenMu  sync.Mutex
	brokenErr error // why kill ended the session
}

// read reads the process's messages, one a line, into the inbox until
// its output ends, and then says why it ended. A server that stops
// reading the answers to its requests makes the reading wait, at most
// as long as a write may take.
func (st *stdioConn) read(out io.Reader, max int64, s *mcpSession) {
	sc := bufio.NewScanner(out)
	sc.Buffer(make([]byte, 0, 4096), int(min(max, 1<<30)))
	ctx, cancel := context.WithCancel(context.WithValue(context.Background(), readingKey{}, true))
	defer cancel()
	for sc.Scan() {
		if line := bytes.TrimSpace(sc.Bytes()); len(line) != 0 {
			st.in.deliver(ctx, s, bytes.Clone(line))
		}
	}
	err := sc.Err()
	if errors.Is(err, bufio.ErrTooLong) {
		err = fmt.Errorf("the server wrote a message over %d bytes", max)
		_ = st.cmd.Process.Kill()
	}
	if broken := st.broken(); broken != nil {
		err = broken
	}
	wait := st.cmd.Wait()
	switch {
	case err != nil:
	case wait != nil:
		err = fmt.Errorf("the server process exited (%w)", wait)
	default:
		err = errors.New("the server process exited")
	}
	if tail := st.stderr.String(); tail != "" {
		err = fmt.Errorf("%w; its standard error ends: %q", err, tail)
	}
	st.in.end(err)
}

// kill ends the session: the process and its group are killed and the
// reading ended, for a reason the calls in flight are told. A message
// written in part leaves nothing to say on the pipe but half a line.
func (st *stdioConn) kill(why error) {
	st.killOnce.Do(func() {
		st.brokenMu.Lock()
		st.brokenErr = why
		st.brokenMu.Unlock()
		signalGroup(st.cmd, sigKill)
		_ = st.stdin.Close()
		// A process of the group that escaped it may hold the output
		// open: the client stops reading all the same.
		_ = st.stdout.Close()
	})
}

// broken is the reason kill was given, or nil.
func (st *stdioConn) broken() error {
	st.brokenMu.Lock()
	defer st.brokenMu.Unlock()
	return st.brokenErr
}

// write writes one message. It waits for the pipe no longer than ctx;
// a message not taken whole within the write timeout, or whose writing
// ctx cut short, ends the session, since the line half written cannot
// be taken back.
func (st *stdioConn) write(ctx context.Context, body []byte) error {
	select {
	case st.wsem <- struct{}{}:
	case <-ctx.Done():
		return context.Cause(ctx)
	case <-st.in.done:
		return st.in.ended()
	}
	defer func() { <-st.wsem }()
	select {
	case <-st.in.done: // first: the reason the session ended says most
		return st.in.ended()
	default:
	}
	select {
	case <-st.closing:
		return errors.New("otc client: the client is closed")
	default:
	}
	if st.writeTimeout > 0 {
		_ = st.stdin.SetWriteDeadline(time.Now().Add(st.writeTimeout))
	}
	// A context that ends cuts the write short through its deadline;
	// the next write sets its own once this one is sure to be over.
	cut := make(chan struct{})
	stop := context.AfterFunc(ctx, func() {
		defer close(cut)
		_ = st.stdin.SetWriteDeadline(time.Unix(1, 0))
	})
	n, err := st.stdin.Write(append(body, '\n'))
	if !stop() {
		<-cut
	}
	if err == nil {
		return nil
	}
	select {
	case <-st.in.done:
		return st.in.ended()
	case <-st.closing:
		return errors.New("otc client: the client is closed")
	default:
	}
	switch {
	case errors.Is(err, os.ErrDeadlineExceeded) && ctx.Err() != nil:
		if n > 0 {
			st.kill(fmt.Errorf("a message to the server was cut short (%w), which leaves its input unreadable", context.Cause(ctx)))
		}
		return context.Cause(ctx)
	case errors.Is(err, os.ErrDeadlineExceeded):
		err = fmt.Errorf("the server process read none of its input for %v (Options.StdioWriteTimeout)", st.writeTimeout)
		st.kill(err)
		return fmt.Errorf("otc client: %w", err)
	}
	if why := st.broken(); why != nil {
		return fmt.Errorf("otc client: %w", why)
	}
	// A broken pipe is most often a process that exited: once its output
	// has ended too, say why it did. The reading itself (answering a
	// ping) cannot wait for its own end.
	if reading, _ := ctx.Value(readingKey{}).(bool); !reading {
		select {
		case <-st.in.done:
			return st.in.ended()
		case <-time.After(stdioExitWait):
		}
	}
	return fmt.Errorf("writing to the server process: %w", err)
}

// readingKey marks the context of a stdio session's reading, which
// answers the server's pings.
type readingKey struct{}

// stdioExitWait bounds the wait, after a write to the process failed, for
// its output to end, so that the error says why it exited.
const stdioExitWait = 5 * time.Second

func (st *stdioConn) roundTrip(ctx context.Context, _ *mcpSession, _ *call, id int64, _, _ string, body []byte) ([]byte, error) {
	ch := st.in.expect(id)
	if err := st.write(ctx, body); err != nil {
		st.in.forget(id)
		return nil, err
	}
	return st.in.await(ctx, id, ch)
}

func (st *stdioConn) send(ctx context.Context, _ *mcpSession, _ *call, body []byte) error {
	return st.write(ctx, body)
}

// reset does nothing: a process has one session, for its life.
func (st *stdioConn) reset() {}

// started does nothing: every message of the server's comes on the pipe.
func (st *stdioConn) started(*mcpSession, string, http.Header) {}

// close ends the process: its standard input closed, then, after half of
// DefaultStdioGrace, SIGTERM, and after the other half SIGKILL, to it and
// to the processes it started (its process group), whatever of them is
// left; so that none is left behind, nor holds its output open. A write
// blocked on a process that reads nothing holds none of this up: it is
// cut short.
func (st *stdioConn) close() error {
	st.closeOnce.Do(func() {
		close(st.closing)
		_ = st.stdin.SetWriteDeadline(time.Unix(1, 0))
		_ = st.stdin.Close()
		half := DefaultStdioGrace / 2
		select {
		case <-st.in.done:
		case <-time.After(half):
		}
		if signalGroup(st.cmd, sigTerm) { // something of it is left
			select {
			case <-st.in.done:
			case <-time.After(half):
			}
			signalGroup(st.cmd, sigKill)
		}
		select {
		case <-st.in.done:
		case <-time.After(half):
			// Something outside the group holds the output open.
			_ = st.stdout.Close()
			<-st.in.done
		}
	})
	return st.closeErr
}

// tailBuffer keeps the last max bytes written to it.
type tailBuffer struct {
	mu  sync.Mutex
	max int
	b   []byte
}

func (t *tailBuffer) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.b = append(t.b, p...)
	if over := len(t.b) - t.max; over > 0 {
		t.b = append(t.b[:0], t.b[over:]...)
	}
	return len(p), nil
}

func (t *tailBuffer) String() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return string(bytes.TrimSpace(t.b))
}
