package main

import (
	"errors"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/otcgo/otc/client"
)

// The tests here run the program as a child process and signal it. Events
// are ordered by what the program logs: it logs where it listens once the
// listener is open, "Timer.Wait started" (at -log-level debug) once a call
// is running, and "otc: shutting down" once /health answers 503. Timeouts
// only keep a broken program from hanging the test.

// waitLine reads the child's stderr until a line containing want, and
// returns it.
func waitLine(t *testing.T, lines <-chan string, want string) string {
	t.Helper()
	for {
		if l := nextLine(t, lines); strings.Contains(l, want) {
			return l
		}
	}
}

// restLines reads the child's stderr to its end, which comes when the
// program exits.
func restLines(t *testing.T, lines <-chan string) []string {
	t.Helper()
	var rest []string
	guard := time.After(time.Minute)
	for {
		select {
		case l, ok := <-lines:
			if !ok {
				return rest
			}
			rest = append(rest, l)
		case <-guard:
			t.Fatalf("the program is still running a minute later; it logged %q", rest)
		}
	}
}

// getOnce sends GET on a connection of its own, so that it shows what a
// new client sees.
func getOnce(t *testing.T, url string) (int, string) {
	t.Helper()
	c := &http.Client{Transport: &http.Transport{DisableKeepAlives: true}}
	resp, err := c.Get(url)
	require.NoError(t, err)
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	return resp.StatusCode, string(b)
}

// waitRefused dials addr until the connection is refused. The listener
// closes just after the program logs that it is shutting down; the loop
// only bridges that moment, in which a dial may also be accepted, or be
// reset as the listener closes with it in its backlog.
func waitRefused(t *testing.T, addr string) error {
	t.Helper()
	deadline := time.Now().Add(time.Minute)
	for {
		c, err := net.Dial("tcp", addr)
		if err != nil && !errors.Is(err, syscall.ECONNRESET) {
			return err
		}
		if c != nil {
			_ = c.Close()
		}
		if time.Now().After(deadline) {
			t.Fatal("the program still accepts connections a minute after it began to shut down")
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// exitCode waits for the child and returns its exit code, or -1 with the
// signal that killed it.
func exitCode(t *testing.T, cmd *exec.Cmd) (int, syscall.Signal) {
	t.Helper()
	err := cmd.Wait()
	if err == nil {
		return 0, 0
	}
	var exit *exec.ExitError
	require.ErrorAs(t, err, &exit)
	if ws, ok := exit.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
		return -1, ws.Signal()
	}
	return exit.ExitCode(), 0
}

// TestMain_SIGTERMFinishesInFlightCall sends SIGTERM while a Timer.Wait
// call runs: the program stops accepting connections, the call still
// completes with its value, and the program exits 0.
func TestMain_SIGTERMFinishesInFlightCall(t *testing.T) {
	t.Parallel()
	cmd, lines := startMain(t, "-addr 127.0.0.1:0 -log-level debug")
	t.Cleanup(func() { _ = cmd.Process.Kill() })
	base := listeningURL(t, nextLine(t, lines))
	status, _ := getOnce(t, base+"/health")
	require.Equal(t, http.StatusOK, status, "/health before the signal")

	type outcome struct {
		ms  int
		err error
	}
	call := make(chan outcome, 1)
	go func() {
		c, err := client.New(base, nil)
		if err != nil {
			call <- outcome{err: err}
			return
		}
		ms, err := client.CallAs[int](t.Context(), c, "Timer.Wait@1.0.0", map[string]any{"ms": 1500}, nil)
		call <- outcome{ms, err}
	}()
	waitLine(t, lines, `msg="calculator: Timer.Wait started"`)

	require.NoError(t, cmd.Process.Signal(syscall.SIGTERM))
	line := waitLine(t, lines, `msg="otc: shutting down"`)
	assert.Contains(t, line, "grace_period=15s")
	u, err := url.Parse(base)
	require.NoError(t, err)
	err = waitRefused(t, u.Host)
	assert.True(t, errors.Is(err, syscall.ECONNREFUSED), "a new connection after the signal: want refused, got %v", err)

	var o outcome
	select {
	case o = <-call:
	case <-time.After(time.Minute):
		t.Fatal("the Timer.Wait call did not return")
	}
	require.NoError(t, o.err, "the call in flight when SIGTERM came")
	assert.Equal(t, 1500, o.ms)

	waitLine(t, lines, `msg="otc: shut down cleanly"`)
	assert.Empty(t, restLines(t, lines), "nothing is logged after the clean shutdown")
	code, sig := exitCode(t, cmd)
	assert.Equal(t, 0, code, "exit code (signal %v)", sig)
}

// TestMain_SIGINTWhenIdle: with nothing in flight, SIGINT stops the
// program at once, exit code 0.
func TestMain_SIGINTWhenIdle(t *testing.T) {
	t.Parallel()
	cmd, lines := startMain(t, "-addr 127.0.0.1:0")
	t.Cleanup(func() { _ = cmd.Process.Kill() })
	base := listeningURL(t, nextLine(t, lines))
	status, _ := getOnce(t, base+"/health")
	require.Equal(t, http.StatusOK, status)

	require.NoError(t, cmd.Process.Signal(os.Interrupt))
	assert.Contains(t, nextLine(t, lines), `msg="otc: shutting down"`)
	assert.Contains(t, nextLine(t, lines), `msg="otc: shut down cleanly"`)
	assert.Empty(t, restLines(t, lines))
	code, sig := exitCode(t, cmd)
	assert.Equal(t, 0, code, "exit code (signal %v)", sig)
}

// TestMain_DrainDelay: with -drain-delay, after SIGTERM the program keeps
// accepting connections and answers /health 503 on them, so that a load
// balancer sees it go, while it still serves the calls that come; a
// second signal stops it at once.
func TestMain_DrainDelay(t *testing.T) {
	t.Parallel()
	// An hour: the test ends the delay with its second signal.
	cmd, lines := startMain(t, "-addr 127.0.0.1:0 -drain-delay 1h")
	t.Cleanup(func() { _ = cmd.Process.Kill() })
	base := listeningURL(t, nextLine(t, lines))

	require.NoError(t, cmd.Process.Signal(syscall.SIGTERM))
	assert.Contains(t, waitLine(t, lines, `msg="otc: shutting down"`), "drain_delay=1h0m0s")

	status, body := getOnce(t, base+"/health")
	assert.Equal(t, http.StatusServiceUnavailable, status)
	assert.JSONEq(t, `{"$schema":"otc://1.0","status":"unavailable","message":"The tool server is not taking calls"}`, body)
	c, err := client.New(base, nil)
	require.NoError(t, err)
	sum, err := client.CallAs[float64](t.Context(), c, "Calculator.Add", map[string]any{"a": 1, "b": 2}, nil)
	require.NoError(t, err, "the calls a balancer sends before it notices are served")
	assert.Equal(t, 3.0, sum)

	require.NoError(t, cmd.Process.Signal(syscall.SIGTERM))
	assert.Empty(t, restLines(t, lines), "the second signal stops the program without a word")
	code, sig := exitCode(t, cmd)
	assert.Equal(t, -1, code)
	assert.Equal(t, syscall.SIGTERM, sig, "killed by the second signal")
}
