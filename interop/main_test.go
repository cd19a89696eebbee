package interop

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/otcgo/otc/internal/testkit"
)

// The calculator example, built once for the package's tests, and the one
// HTTP server they share. Each stdio test starts its own process from
// calculatorBin.
var (
	calculatorBin string
	sharedServer  *httpServer
)

// raceEnabled is set by race_test.go when the tests run with -race; the
// calculator is then built with -race too, so that a data race in the
// server fails its exit status, which TestMain checks.
var raceEnabled bool

// Startup and shutdown bounds. They only cap a wait that polls or blocks
// on an event: a healthy run takes a fraction of each.
const (
	buildTimeout    = 5 * time.Minute
	startTimeout    = 30 * time.Second
	shutdownTimeout = 30 * time.Second
)

func TestMain(m *testing.M) {
	if os.Getenv(askStdioEnv) == "1" {
		os.Exit(serveAskingStdio())
	}
	if which := os.Getenv(foreignStdioEnv); which != "" {
		os.Exit(serveForeignStdio(which))
	}
	os.Exit(runMain(m))
}

// runMain builds the calculator, starts its HTTP server, runs the tests
// and stops the server. A server that fails to shut down cleanly (exit
// status not 0, or a data race under -race) fails the run.
func runMain(m *testing.M) int {
	dir, err := os.MkdirTemp("", "otc-interop-")
	if err != nil {
		fmt.Fprintln(os.Stderr, "interop:", err)
		return 1
	}
	defer os.RemoveAll(dir)

	calculatorBin = filepath.Join(dir, "calculator")
	if err := buildCalculator(calculatorBin); err != nil {
		fmt.Fprintln(os.Stderr, "interop: building the calculator:", err)
		return 1
	}

	// Webhooks on this machine may be told of tasks (A2A push notifications).
	srv, err := startHTTPServerWith(calculatorBin, "127.0.0.1:0", []string{"OTC_PUSH_ALLOWED_NETWORKS=127.0.0.0/8"})
	if err != nil {
		fmt.Fprintln(os.Stderr, "interop: starting the calculator:", err)
		return 1
	}
	sharedServer = srv

	code := m.Run()
	if err := srv.stop(); err != nil {
		fmt.Fprintln(os.Stderr, "interop: stopping the calculator:", err)
		fmt.Fprintln(os.Stderr, "interop: its log:\n"+srv.log.String())
		if code == 0 {
			code = 1
		}
	}
	return code
}

func buildCalculator(out string) error {
	ctx, cancel := context.WithTimeout(context.Background(), buildTimeout)
	defer cancel()
	// The calculator is a module of its own: build it in its directory.
	args := []string{"build", "-C", "../examples/calculator", "-o", out}
	if raceEnabled {
		args = append(args, "-race")
	}
	args = append(args, ".")
	// go test puts the toolchain's bin directory first on PATH, so "go" is
	// the go that runs these tests.
	cmd := exec.CommandContext(ctx, "go", args...)
	cmd.Stdout, cmd.Stderr = os.Stderr, os.Stderr
	return cmd.Run()
}

// serverEnv is the environment of a calculator: the test's, without the
// variables that would turn authentication on, and with the call log on,
// so that tests can see how each call ended on the server.
func serverEnv() []string {
	var env []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "OTC_") {
			env = append(env, kv)
		}
	}
	return append(env, "OTC_LOG_CALLS=1")
}

// httpServer is a calculator serving HTTP on a port the kernel chose.
type httpServer struct {
	cmd    *exec.Cmd
	url    string
	log    *testkit.SyncBuffer
	exited chan error
}

// urlPattern finds the address in the calculator's "serving OTC tools"
// log line, written once its listener is open.
var urlPattern = regexp.MustCompile(`msg="calculator: serving OTC tools" url=(http://\S+)`)

// startHTTPServerWith starts the calculator on addr (127.0.0.1:0 lets the
// kernel pick a free port, so that parallel runs never collide), with env
// added to its environment, reads the address it got from its log, and
// polls /health until it answers.
func startHTTPServerWith(bin, addr string, env []string) (*httpServer, error) {
	cmd := exec.Command(bin, "-addr", addr)
	cmd.Env = append(serverEnv(), env...)
	stderr, err := cmd.StderrPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	s := &httpServer{cmd: cmd, log: &testkit.SyncBuffer{}, exited: make(chan error, 1)}
	found := make(chan string, 1)
	scanned := make(chan struct{})
	go func() {
		defer close(scanned)
		sc := bufio.NewScanner(stderr)
		for sc.Scan() {
			line := sc.Text()
			s.log.WriteString(line + "\n")
			if m := urlPattern.FindStringSubmatch(line); m != nil {
				select {
				case found <- m[1]:
				default:
				}
			}
		}
		_, _ = io.Copy(io.Discard, stderr)
	}()
	go func() {
		<-scanned // Wait must not run before the pipe is drained
		s.exited <- cmd.Wait()
	}()

	fail := func(err error) (*httpServer, error) {
		_ = cmd.Process.Kill()
		<-s.exited
		return nil, fmt.Errorf("%w; its log:\n%s", err, s.log.String())
	}
	deadline := time.NewTimer(startTimeout)
	defer deadline.Stop()
	select {
	case s.url = <-found:
	case err := <-s.exited:
		s.exited <- err
		return fail(fmt.Errorf("it exited before listening: %v", err))
	case <-deadline.C:
		return fail(errors.New("it did not log its address in time"))
	}
	if err := waitHealthy(s.url, deadline.C); err != nil {
		return fail(err)
	}
	return s, nil
}

// waitHealthy polls GET /health until it answers 200.
func waitHealthy(url string, deadline <-chan time.Time) error {
	tick := time.NewTicker(10 * time.Millisecond)
	defer tick.Stop()
	for {
		resp, err := http.Get(url + "/health")
		if err == nil {
			_ = resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return nil
			}
		}
		select {
		case <-tick.C:
		case <-deadline:
			return fmt.Errorf("%s/health did not answer 200 in time (last error: %v)", url, err)
		}
	}
}

// stop sends SIGINT, which starts the calculator's graceful shutdown, and
// waits for it to exit 0.
func (s *httpServer) stop() error {
	if err := s.cmd.Process.Signal(os.Interrupt); err != nil {
		return err
	}
	t := time.NewTimer(shutdownTimeout)
	defer t.Stop()
	select {
	case err := <-s.exited:
		if err != nil {
			return fmt.Errorf("it exited with %v", err)
		}
		return nil
	case <-t.C:
		_ = s.cmd.Process.Kill()
		<-s.exited
		return errors.New("it did not shut down in time")
	}
}
