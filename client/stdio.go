package client

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os/exec"
	"slices"
	"sync"
	"time"
)

// DefaultStdioGrace is how long [Client.Close] waits for a stdio server to
// exit after its standard input is closed, before it kills the process.
const DefaultStdioGrace = 2 * time.Second

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
	if err := checkMCPVersion(o.MCPVersion); err != nil {
		return nil, err
	}
	c := &Client{format: FormatMCP, agent: DefaultUserAgent, command: copyCommand(cmd)}
	c.keep(&o)
	if err := c.startStdio(cmd); err != nil {
		return nil, err
	}
	return c, nil
}

// startStdio starts cmd and makes the client's session its pipes.
func (c *Client) startStdio(cmd *exec.Cmd) error {
	in, err := cmd.StdinPipe()
	if err != nil {
		return fmt.Errorf("otc client: %w", err)
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		return fmt.Errorf("otc client: %w", err)
	}
	st := &stdioConn{cmd: cmd, stdin: in, in: newInbox(), stderr: &tailBuffer{max: stderrTail}}
	cmd.Stderr = st.stderr
	ownGroup(cmd)
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("otc client: starting %s: %w", cmd.Path, err)
	}
	s := newMCPSession(c, st)
	c.t = s
	go st.read(out, c.maxBytes, s)
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
	stdin  io.WriteCloser
	stderr *tailBuffer
	in     *inbox

	wmu sync.Mutex // one message written at a time

	closeOnce sync.Once
	closeErr  error
}

// read reads the process's messages, one a line, into the inbox until
// its output ends, and then says why it ended. A server that stops
// reading the answers to its requests makes the reading wait.
func (st *stdioConn) read(out io.Reader, max int64, s *mcpSession) {
	sc := bufio.NewScanner(out)
	sc.Buffer(make([]byte, 0, 4096), int(min(max, 1<<30)))
	ctx, cancel := context.WithCancel(context.Background())
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

func (st *stdioConn) write(body []byte) error {
	st.wmu.Lock()
	defer st.wmu.Unlock()
	select {
	case <-st.in.done:
		return st.in.ended()
	default:
	}
	if _, err := st.stdin.Write(append(body, '\n')); err != nil {
		// A broken pipe is most often a process that exited: once its
		// output has ended too, say why it did.
		select {
		case <-st.in.done:
			return st.in.ended()
		case <-time.After(stdioExitWait):
		}
		return fmt.Errorf("writing to the server process: %w", err)
	}
	return nil
}

// stdioExitWait bounds the wait, after a write to the process failed, for
// its output to end, so that the error says why it exited.
const stdioExitWait = 5 * time.Second

func (st *stdioConn) roundTrip(ctx context.Context, _ *mcpSession, _ *call, id int64, _, _ string, body []byte) ([]byte, error) {
	ch := st.in.expect(id)
	if err := st.write(body); err != nil {
		st.in.forget(id)
		return nil, err
	}
	return st.in.await(ctx, id, ch)
}

func (st *stdioConn) send(_ context.Context, _ *mcpSession, _ *call, body []byte) error {
	return st.write(body)
}

// reset does nothing: a process has one session, for its life.
func (st *stdioConn) reset() {}

// started does nothing: every message of the server's comes on the pipe.
func (st *stdioConn) started(*mcpSession, string) {}

// close ends the process: its standard input closed, then, after half of
// DefaultStdioGrace, SIGTERM, and after the other half SIGKILL, to it and
// to the processes it started (its process group), whatever of them is
// left; so that none is left behind, nor holds its output open.
func (st *stdioConn) close() error {
	st.closeOnce.Do(func() {
		st.wmu.Lock()
		_ = st.stdin.Close()
		st.wmu.Unlock()
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
		<-st.in.done
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
