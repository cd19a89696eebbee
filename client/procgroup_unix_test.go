//go:build unix

package client_test

import (
	"context"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/otcgo/otc/client"
	"github.com/otcgo/otc/internal/testkit"
	"github.com/otcgo/otc/mcp"
)

// stubbornServer is an MCP server over stdio (the test binary, run with
// stdioEnv=stubborn) that ignores SIGTERM and starts a child that ignores
// it too and holds the server's standard output open, writing the child's
// pid to the file OTC_CLIENT_TEST_PIDFILE names.
func stubbornServer() {
	signal.Ignore(syscall.SIGTERM)
	child := exec.Command(os.Args[0], "-test.run=^$")
	child.Env = append(os.Environ(), stdioEnv+"=sleeper")
	child.Stdout = os.Stdout // the pipe to the client, held open
	if err := child.Start(); err != nil {
		os.Exit(3)
	}
	_ = os.WriteFile(os.Getenv("OTC_CLIENT_TEST_PIDFILE"), []byte(strconv.Itoa(child.Process.Pid)), 0o600)
	reg, _ := formatsRegistry(nil)
	_ = mcp.ServeStdio(context.Background(), reg, nil)
	select {} // and does not exit when its input ends
}

// sleeper ignores SIGTERM and waits.
func sleeper() {
	signal.Ignore(syscall.SIGTERM)
	time.Sleep(time.Hour)
}

// alive reports whether process pid exists and is not a zombie.
func alive(pid int) bool {
	b, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "stat"))
	if err != nil {
		return syscall.Kill(pid, 0) == nil // no /proc: whether it can be signalled
	}
	fields := strings.Fields(string(b[strings.LastIndexByte(string(b), ')')+1:]))
	return len(fields) > 0 && fields[0] != "Z"
}

// TestStdioLeavesNothing: Close stops a stdio server that ignores SIGTERM
// and does not exit when its input ends, and the process it started,
// which ignores SIGTERM too and holds the server's output open: nothing
// is left running.
func TestStdioLeavesNothing(t *testing.T) {
	pidFile := filepath.Join(t.TempDir(), "child.pid")
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), stdioEnv+"=stubborn", "OTC_CLIENT_TEST_PIDFILE="+pidFile)
	c, err := client.NewStdio(cmd, nil)
	require.NoError(t, err)
	_, err = c.ListTools(t.Context())
	require.NoError(t, err)
	b, err := os.ReadFile(pidFile)
	require.NoError(t, err)
	child, err := strconv.Atoi(string(b))
	require.NoError(t, err)
	require.True(t, alive(child))

	done := make(chan error, 1)
	go func() { done <- c.Close() }()
	select {
	case <-done:
	case <-time.After(client.DefaultStdioGrace + 20*time.Second):
		t.Fatal("Close did not return: something holds the server's output open")
	}
	assert.False(t, alive(cmd.Process.Pid), "the server")
	require.Eventually(t, func() bool { return !alive(child) }, 10*time.Second, 20*time.Millisecond, "the process it started")
}

// runTestProcess runs the test binary as one of this file's processes,
// and reports whether it was one.
func runTestProcess(mode string) bool {
	switch mode {
	case "stubborn":
		stubbornServer()
	case "sleeper":
		sleeper()
	case "deaf":
		deafServer()
	default:
		return false
	}
	return true
}

// deafServer is an MCP server over stdio (the test binary, run with
// stdioEnv=deaf) that answers initialize, then writes 100,000 pings and
// never reads its input again, so that the client's answers fill the
// pipe; it ignores SIGTERM, and writes its pid to the file
// OTC_CLIENT_TEST_PIDFILE names.
func deafServer() {
	signal.Ignore(syscall.SIGTERM)
	_ = os.WriteFile(os.Getenv("OTC_CLIENT_TEST_PIDFILE"), []byte(strconv.Itoa(os.Getpid())), 0o600)
	testkit.DeafMCPServer(os.Stdin, os.Stdout)
}

// TestStdioDeafServer: a server that floods pings and reads nothing
// holds the client up no longer than a call's context, and Close ends it
// (process and all) at once, although the client's answers fill the
// pipe. (Before, the answer to a ping blocked on the full pipe holding
// the write lock, and the call, its cancellation and Close all waited
// for that lock for ever.)
func TestStdioDeafServer(t *testing.T) {
	pidFile := filepath.Join(t.TempDir(), "deaf.pid")
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), stdioEnv+"=deaf", "OTC_CLIENT_TEST_PIDFILE="+pidFile)
	c, err := client.NewStdio(cmd, &client.Options{MCPVersion: "2025-11-25"})
	require.NoError(t, err)

	ctx, cancel := context.WithTimeout(t.Context(), 2*time.Second)
	defer cancel()
	errs := make(chan error, 1)
	go func() {
		_, err := c.ListTools(ctx)
		errs <- err
	}()
	select {
	case err := <-errs:
		require.Error(t, err, "a server that reads nothing answered")
	case <-time.After(30 * time.Second):
		t.Fatal("the call outlived its context by 28 s: a write to the server holds it")
	}
	b, err := os.ReadFile(pidFile)
	require.NoError(t, err)
	pid, err := strconv.Atoi(string(b))
	require.NoError(t, err)
	require.True(t, alive(pid))

	done := make(chan error, 1)
	go func() { done <- c.Close() }()
	select {
	case <-done:
	case <-time.After(client.DefaultStdioGrace + 20*time.Second):
		t.Fatal("Close did not return: a write to the server holds it")
	}
	assert.False(t, alive(pid), "the server is left running")
}

// TestStdioWriteTimeout: a server that reads none of its input for
// longer than Options.StdioWriteTimeout is taken for hung: its session
// ends, the process is killed, and a call says why.
func TestStdioWriteTimeout(t *testing.T) {
	pidFile := filepath.Join(t.TempDir(), "deaf.pid")
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), stdioEnv+"=deaf", "OTC_CLIENT_TEST_PIDFILE="+pidFile)
	c, err := client.NewStdio(cmd, &client.Options{MCPVersion: "2025-11-25", StdioWriteTimeout: 300 * time.Millisecond})
	require.NoError(t, err)
	t.Cleanup(func() { _ = c.Close() })
	_, err = c.ListTools(t.Context()) // no deadline of its own
	require.Error(t, err)
	assert.Contains(t, err.Error(), "read none of its input for 300ms")
	b, err := os.ReadFile(pidFile)
	require.NoError(t, err)
	pid, err := strconv.Atoi(string(b))
	require.NoError(t, err)
	require.Eventually(t, func() bool { return !alive(pid) }, 10*time.Second, 20*time.Millisecond, "the hung server is killed")
}
