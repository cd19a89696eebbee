package client

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os/exec"
	"slices"
	"strconv"
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
	st := &stdioConn{cmd: cmd, stdin: in, pending: map[int64]chan []byte{}, done: make(chan struct{}), stderr: &tailBuffer{max: stderrTail},
		answering: make(chan struct{}, maxServerRequests)}
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

	wmu sync.Mutex // one message written at a time

	mu      sync.Mutex
	pending map[int64]chan []byte
	done    chan struct{} // closed when reading ends
	err     error         // why it ended

	closeOnce sync.Once
	closeErr  error

	// answering holds a token for each request of the server's being
	// answered on a goroutine of its own.
	answering chan struct{}
}

// maxServerRequests bounds the requests of a server's (questions for the
// user or a model, which may take long) that one connection answers at
// once; past it, a request is refused at once with an error. A ping is
// answered as it is read.
const maxServerRequests = 16

// read reads the process's messages until its output ends: responses go
// to their requests, requests of the server's are answered (a ping as it
// is read; others each on its own goroutine, as a handler may wait on its
// user, at most maxServerRequests at once), notifications are handed on.
// A server that floods the client with requests, or stops reading its
// answers, costs it a bounded number of goroutines: the reading waits.
func (st *stdioConn) read(out io.Reader, max int64, s *mcpSession) {
	sc := bufio.NewScanner(out)
	sc.Buffer(make([]byte, 0, 4096), int(min(max, 1<<30)))
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	for sc.Scan() {
		line := bytes.TrimSpace(sc.Bytes())
		if len(line) == 0 {
			continue
		}
		var m struct {
			ID     json.RawMessage `json:"id"`
			Method string          `json:"method"`
		}
		if json.Unmarshal(line, &m) != nil {
			continue // a line that is not a message: a server's stray output
		}
		msg := bytes.Clone(line)
		switch {
		case m.Method == "":
			id, err := strconv.ParseInt(string(m.ID), 10, 64)
			if err != nil {
				continue
			}
			st.mu.Lock()
			ch := st.pending[id]
			delete(st.pending, id)
			st.mu.Unlock()
			if ch != nil {
				ch <- msg
			}
		case len(m.ID) > 0 && string(m.ID) != "null":
			if m.Method == "ping" {
				s.incoming(ctx, nil, msg)
				continue
			}
			select {
			case st.answering <- struct{}{}:
				go func() {
					defer func() { <-st.answering }()
					s.incoming(ctx, nil, msg)
				}()
			default:
				s.refuse(ctx, m.ID, fmt.Sprintf("the client is answering %d requests of the server's already; try again when one is answered", maxServerRequests))
			}
		default:
			s.notification(m.Method, notificationParams(msg))
		}
	}
	err := sc.Err()
	if errors.Is(err, bufio.ErrTooLong) {
		err = fmt.Errorf("the server wrote a message over %d bytes", max)
		_ = st.cmd.Process.Kill()
	}
	wait := st.cmd.Wait()
	st.mu.Lock()
	switch {
	case err != nil:
		st.err = err
	case wait != nil:
		st.err = fmt.Errorf("the server process exited (%w)", wait)
	default:
		st.err = errors.New("the server process exited")
	}
	if tail := st.stderr.String(); tail != "" {
		st.err = fmt.Errorf("%w; its standard error ends: %q", st.err, tail)
	}
	st.mu.Unlock()
	close(st.done)
}

// notificationParams is a notification's params.
func notificationParams(msg []byte) json.RawMessage {
	var n struct {
		Params json.RawMessage `json:"params"`
	}
	_ = json.Unmarshal(msg, &n)
	return n.Params
}

// ended returns why reading ended.
func (st *stdioConn) ended() error {
	st.mu.Lock()
	defer st.mu.Unlock()
	return st.err
}

func (st *stdioConn) write(body []byte) error {
	st.wmu.Lock()
	defer st.wmu.Unlock()
	select {
	case <-st.done:
		return st.ended()
	default:
	}
	if _, err := st.stdin.Write(append(body, '\n')); err != nil {
		// A broken pipe is most often a process that exited: once its
		// output has ended too, say why it did.
		select {
		case <-st.done:
			return st.ended()
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
	ch := make(chan []byte, 1)
	st.mu.Lock()
	st.pending[id] = ch
	st.mu.Unlock()
	forget := func() {
		st.mu.Lock()
		delete(st.pending, id)
		st.mu.Unlock()
	}
	if err := st.write(body); err != nil {
		forget()
		return nil, err
	}
	select {
	case msg := <-ch:
		return msg, nil
	case <-ctx.Done():
		forget()
		return nil, context.Cause(ctx)
	case <-st.done:
		forget()
		select {
		case msg := <-ch: // answered just before the end
			return msg, nil
		default:
		}
		return nil, st.ended()
	}
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
		case <-st.done:
		case <-time.After(half):
		}
		if signalGroup(st.cmd, sigTerm) { // something of it is left
			select {
			case <-st.done:
			case <-time.After(half):
			}
			signalGroup(st.cmd, sigKill)
		}
		<-st.done
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
