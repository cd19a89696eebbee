package main

import (
	"bytes"
	"context"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"regexp"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/otcgo/otc"
	"github.com/otcgo/otc/internal/testkit"
	"github.com/otcgo/otc/mcp"
)

// stdioServerEnv, set, makes the test binary an MCP server over stdio of
// one tool: the server that --stdio starts in these tests.
const stdioServerEnv = "OTC_CMD_TEST_STDIO"

func TestMain(m *testing.M) {
	if os.Getenv(stdioServerEnv) == "deaf" {
		deafServer()
	}
	if os.Getenv(stdioServerEnv) != "" {
		reg := otc.NewRegistry(nil)
		err := otc.Register(reg, otc.Tool{ID: "Calculator.Add", Version: "1.0.0", Description: "Adds two numbers."},
			func(_ context.Context, in addInput) (float64, error) { return in.A + in.B, nil })
		if err == nil {
			err = mcp.ServeStdio(context.Background(), reg, nil)
		}
		if err != nil {
			os.Exit(1)
		}
		os.Exit(0)
	}
	waitNotice = time.Hour // a test that wants the notice shortens it
	os.Exit(m.Run())
}

// TestStdioFlag: --stdio in place of the URL runs the command line as an
// MCP server, for tools and call; a server that cannot start says why.
func TestStdioFlag(t *testing.T) {
	t.Setenv(stdioServerEnv, "1")
	self := "'" + os.Args[0] + "' -test.run='^$'"
	code, out, errOut := otcRun(t, "", "", nil, "tools", "--stdio", self)
	require.Equal(t, exitOK, code, errOut)
	assert.Contains(t, out, "Calculator_Add  Adds two numbers.")

	code, out, errOut = otcRun(t, "", "", nil, "call", "--stdio", self, "Calculator_Add", "a=2", "b=5")
	require.Equal(t, exitOK, code, errOut)
	assert.Equal(t, "7\n", out)

	code, _, errOut = otcRun(t, "", "", nil, "tools", "--stdio", `sh -c "echo no such database >&2; exit 2"`)
	assert.Equal(t, exitTransport, code)
	assert.Contains(t, errOut, "exit status 2")
	assert.Contains(t, errOut, "no such database")

	code, _, errOut = otcRun(t, "", "", nil, "tools", "--stdio", `"unclosed`)
	assert.Equal(t, exitBadInput, code)
	assert.Contains(t, errOut, "a double quote is not closed")

	code, _, errOut = otcRun(t, "http://127.0.0.1:1", "", nil, "tools", "--stdio", self, "--mcp", "URL")
	assert.Equal(t, exitBadInput, code)
	assert.Contains(t, errOut, "give one of")
}

func TestSplitCommand(t *testing.T) {
	for in, want := range map[string][]string{
		`node server.js stdio`:            {"node", "server.js", "stdio"},
		`  a   b  `:                       {"a", "b"},
		`cmd 'a b' "c d" e\ f`:            {"cmd", "a b", "c d", "e f"},
		`cmd "say \"hi\" \$HOME" '$HOME'`: {"cmd", `say "hi" $HOME`, "$HOME"},
		`cmd a""b ''`:                     {"cmd", "ab", ""},
		`cmd "a\nb"`:                      {"cmd", `a\nb`},
	} {
		got, err := splitCommand(in)
		require.NoError(t, err, in)
		assert.Equal(t, want, got, in)
	}
	for _, bad := range []string{``, `   `, `'open`, `"open`} {
		_, err := splitCommand(bad)
		assert.Error(t, err, bad)
	}
}

// noticeWriter is a standard error that closes seen when a line with
// want is written.
type noticeWriter struct {
	want string
	seen chan struct{}
	once sync.Once
	mu   sync.Mutex
	b    strings.Builder
}

func (w *noticeWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.b.Write(p)
	if strings.Contains(w.b.String(), w.want) {
		w.once.Do(func() { close(w.seen) })
	}
	return len(p), nil
}

func (w *noticeWriter) String() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.b.String()
}

// TestStdioSilentServer: a process that never answers the handshake is
// not waited on in silence: otc says on standard error that it waits and
// for how long it will, and Ctrl-C then ends the command with 130.
func TestStdioSilentServer(t *testing.T) {
	defer func(d time.Duration) { waitNotice = d }(waitNotice)
	waitNotice = 50 * time.Millisecond
	errOut := &noticeWriter{want: "otc: waiting for the server to answer", seen: make(chan struct{})}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() { <-errOut.seen; cancel() }()
	e := &cli{stdin: strings.NewReader(""), stdout: &strings.Builder{}, stderr: errOut, getenv: func(string) string { return "" }}
	code := e.call(ctx, []string{"--stdio", "sh -c 'cat >/dev/null'", "Anything", "{}"})
	assert.Equal(t, exitInterrupted, code, errOut.String())
	assert.Contains(t, errOut.String(), "is given up after 1m0s")
	assert.True(t, strings.HasSuffix(errOut.String(), "otc call: interrupted\n"), errOut.String())
}

// deafServer is an MCP server over stdio that answers initialize, then
// writes 100,000 pings and reads nothing more, so that the answers to
// them fill its input pipe; it ignores SIGTERM and interrupts.
func deafServer() {
	signal.Ignore(syscall.SIGTERM, os.Interrupt)
	testkit.DeafMCPServer(os.Stdin, os.Stdout)
	os.Exit(0)
}

// TestStdioDeafServer: otc tools --stdio against a server that floods
// pings and reads nothing ends when it is stopped (SIGTERM ends the
// context run is given), and takes the server with it.
func TestStdioDeafServer(t *testing.T) {
	t.Setenv(stdioServerEnv, "deaf")
	self := "'" + os.Args[0] + "' -test.run='^$'"
	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(time.Second, cancel) // the SIGTERM
	done := make(chan int, 1)
	var errOut bytes.Buffer
	go func() {
		done <- run(ctx, []string{"tools", "--stdio", self}, strings.NewReader(""), io.Discard, &errOut, os.Getenv)
	}()
	select {
	case code := <-done:
		assert.NotEqual(t, exitOK, code, errOut.String())
	case <-time.After(30 * time.Second):
		t.Fatal("otc tools --stdio outlived its SIGTERM by 29 s: a write to the server holds it")
	}
	out, _ := exec.Command("pgrep", "-f", "-x", regexp.QuoteMeta(os.Args[0])+" -test.run=\\^\\$").Output()
	assert.Empty(t, strings.TrimSpace(string(out)), "the server is left running")
}
