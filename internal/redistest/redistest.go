package redistest

import (
	"bufio"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"regexp"
	"strconv"
	"testing"
	"time"
)

// Server is a running redis-server.
type Server struct {
	// Addr is its host:port.
	Addr string
	args []string
	cmd  *exec.Cmd
}

// Start starts a redis-server and waits until it answers PING.
func Start() (*Server, error) {
	bin, err := exec.LookPath("redis-server")
	if err != nil {
		return nil, errors.New("redis-server is not on PATH (apt-get install redis-server)")
	}
	return startFree(func(port int) []string {
		args := []string{bin, "--port", strconv.Itoa(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no"}
		if debugNeedsEnabling(bin) {
			args = append(args, "--enable-debug-command", "local")
		}
		return args
	})
}

// startFree starts a redis-server with the arguments args gives for a
// free port of 127.0.0.1, and tries another port, up to five, when one is
// taken between its choice and the server's bind.
func startFree(args func(port int) []string) (*Server, error) {
	for range 5 {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return nil, err
		}
		port := ln.Addr().(*net.TCPAddr).Port
		ln.Close()
		s := &Server{Addr: net.JoinHostPort("127.0.0.1", strconv.Itoa(port)), args: args(port)}
		if err := s.start(); err == nil {
			return s, nil
		} else if s.cmd == nil {
			return nil, err
		}
		s.Stop() // the port was taken meanwhile: try another
	}
	return nil, errors.New("redis-server did not answer on any of 5 ports")
}

// start runs the server and waits until it answers PING.
func (s *Server) start() error {
	s.cmd = nil
	cmd := exec.Command(s.args[0], s.args[1:]...)
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("starting redis-server: %w", err)
	}
	s.cmd = cmd
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		if ping(s.Addr) {
			return nil
		}
		time.Sleep(20 * time.Millisecond)
	}
	return fmt.Errorf("redis-server did not answer on %s", s.Addr)
}

// debugNeedsEnabling reports whether the redis-server at bin is version
// 7 or later, which refuses DEBUG unless enable-debug-command allows it
// (and refuses that option when older).
func debugNeedsEnabling(bin string) bool {
	out, err := exec.Command(bin, "--version").Output()
	if err != nil {
		return false
	}
	m := regexp.MustCompile(`v=(\d+)\.`).FindSubmatch(out)
	if m == nil {
		return false
	}
	major, _ := strconv.Atoi(string(m[1]))
	return major >= 7
}

// Restart stops the server if it runs, and starts it again on the same
// address. Without persistence, it comes back empty, as a Redis that
// restarted without saving does.
func (s *Server) Restart() error {
	s.Stop()
	return s.start()
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

// Stop kills the server and waits for it. It does nothing when the
// server is not running.
func (s *Server) Stop() {
	if s.cmd == nil {
		return
	}
	_ = s.cmd.Process.Kill()
	_ = s.cmd.Wait()
	s.cmd = nil
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
