// Package redistest starts a redis-server for tests: on a free port of
// the loopback interface, without persistence, stopped by the returned
// function. Tests that need one and find none skip, unless the
// environment sets OTC_REQUIRE_REDIS=1 (as .ci/run does), when they fail.
package redistest

import (
	"bufio"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"strconv"
	"testing"
	"time"
)

// Server is a running redis-server.
type Server struct {
	// Addr is its host:port.
	Addr string
	cmd  *exec.Cmd
}

// Start starts a redis-server and waits until it answers PING.
func Start() (*Server, error) {
	bin, err := exec.LookPath("redis-server")
	if err != nil {
		return nil, errors.New("redis-server is not on PATH (apt-get install redis-server)")
	}
	for range 5 {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return nil, err
		}
		port := ln.Addr().(*net.TCPAddr).Port
		ln.Close()
		cmd := exec.Command(bin, "--port", strconv.Itoa(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no")
		if err := cmd.Start(); err != nil {
			return nil, fmt.Errorf("starting redis-server: %w", err)
		}
		s := &Server{Addr: net.JoinHostPort("127.0.0.1", strconv.Itoa(port)), cmd: cmd}
		deadline := time.Now().Add(10 * time.Second)
		for time.Now().Before(deadline) {
			if ping(s.Addr) {
				return s, nil
			}
			time.Sleep(20 * time.Millisecond)
		}
		s.Stop() // the port was taken meanwhile: try another
	}
	return nil, errors.New("redis-server did not answer on any of 5 ports")
}

// ping reports whether a Redis server at addr answers PING.
func ping(addr string) bool {
	conn, err := net.DialTimeout("tcp", addr, time.Second)
	if err != nil {
		return false
	}
	defer conn.Close()
	_ = conn.SetDeadline(time.Now().Add(time.Second))
	if _, err := conn.Write([]byte("PING\r\n")); err != nil {
		return false
	}
	line, err := bufio.NewReader(conn).ReadString('\n')
	return err == nil && line == "+PONG\r\n"
}

// Stop kills the server and waits for it.
func (s *Server) Stop() {
	_ = s.cmd.Process.Kill()
	_ = s.cmd.Wait()
}

// Need returns the address of srv, started by Start with the error
// startErr, or ends the test: it skips, or fails when OTC_REQUIRE_REDIS
// is 1.
func Need(tb testing.TB, srv *Server, startErr error) string {
	tb.Helper()
	if srv == nil {
		if os.Getenv("OTC_REQUIRE_REDIS") == "1" {
			tb.Fatalf("OTC_REQUIRE_REDIS=1 but no redis-server could be started: %v", startErr)
		}
		tb.Skipf("no redis-server: %v", startErr)
	}
	return srv.Addr
}
