package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"
)

// The deployment under test: one redis-server, the example server's
// replicas and HAProxy in front of them, each a process of its own started
// from this program, on ports of 127.0.0.1 chosen at start.

// proc is one running process and what it printed.
type proc struct {
	name string
	cmd  *exec.Cmd
	out  *syncBuffer
	done chan struct{} // closed when the process has exited
	err  error         // Wait's error, once done is closed
}

// syncBuffer is a bytes.Buffer safe for the writes of a process's output
// and the reads of a report.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// start starts bin with args and env (added to this process's).
func start(name, bin string, args, env []string) (*proc, error) {
	p := &proc{name: name, cmd: exec.Command(bin, args...), out: &syncBuffer{}, done: make(chan struct{})}
	p.cmd.Env = append(os.Environ(), env...)
	p.cmd.Stdout, p.cmd.Stderr = p.out, p.out
	if err := p.cmd.Start(); err != nil {
		return nil, fmt.Errorf("starting %s: %w", name, err)
	}
	go func() {
		p.err = p.cmd.Wait()
		close(p.done)
	}()
	return p, nil
}

// signal sends sig, and waits for the exit up to wait (none for zero).
func (p *proc) signal(sig syscall.Signal, wait time.Duration) error {
	if err := p.cmd.Process.Signal(sig); err != nil && !errors.Is(err, os.ErrProcessDone) {
		return err
	}
	if wait == 0 {
		return nil
	}
	select {
	case <-p.done:
		return nil
	case <-time.After(wait):
		return fmt.Errorf("%s did not exit within %v of %v", p.name, wait, sig)
	}
}

// stop kills the process, if it still runs, and waits for it.
func (p *proc) stop() {
	if p == nil {
		return
	}
	_ = p.cmd.Process.Kill()
	<-p.done
}

// freePort returns a port of 127.0.0.1 that was free a moment ago.
func freePort() (int, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port, nil
}

// waitFor polls check every 50 ms until it returns nil or within passes.
func waitFor(within time.Duration, what string, check func() error) error {
	deadline := time.Now().Add(within)
	for {
		err := check()
		if err == nil {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("%s: not within %v: %w", what, within, err)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// findRepo returns the repository's root: the folder above dir holding
// go.work, or the go.mod of module github.com/otcgo/otc.
func findRepo(dir string) (string, error) {
	for d := dir; ; d = filepath.Dir(d) {
		if b, err := os.ReadFile(filepath.Join(d, "go.mod")); err == nil && strings.Contains(string(b), "module github.com/otcgo/otc\n") {
			return d, nil
		}
		if filepath.Dir(d) == d {
			return "", fmt.Errorf("no otc repository above %s", dir)
		}
	}
}

// prepare finds redis-server and haproxy on PATH, and builds the example
// server into dir.
func prepare(ctx context.Context, dir string) (calc string, bins map[string]string, err error) {
	wd, err := os.Getwd()
	if err != nil {
		return "", nil, err
	}
	repo, err := findRepo(wd)
	if err != nil {
		return "", nil, err
	}
	bins = map[string]string{}
	for _, name := range []string{"redis-server", "haproxy"} {
		if bins[name], err = exec.LookPath(name); err != nil {
			return "", nil, fmt.Errorf("%s is not on PATH (apt-get install %s): %w", name, name, err)
		}
	}
	calc, err = buildCalculator(ctx, repo, dir)
	return calc, bins, err
}

// buildCalculator builds the example server into dir.
func buildCalculator(ctx context.Context, repo, dir string) (string, error) {
	bin := filepath.Join(dir, "calculator")
	cmd := exec.CommandContext(ctx, "go", "build", "-o", bin, ".")
	cmd.Dir = filepath.Join(repo, "examples", "calculator")
	if out, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("building examples/calculator: %w\n%s", err, out)
	}
	return bin, nil
}

// redisServer is the Redis the replicas share. It writes every change to
// its append-only file before answering (appendfsync always), so that a
// restart forgets nothing: the test restarts it to see calls fail closed,
// not to see it lose data, which no store can survive (see the
// redisstore package).
type redisServer struct {
	bin, dir string
	port     int
	p        *proc
	// args are the durability arguments; nil means an append-only file
	// written before each answer (appendfsync always).
	args []string
}

func (r *redisServer) addr() string { return "127.0.0.1:" + strconv.Itoa(r.port) }

func (r *redisServer) start() error {
	durability := r.args
	if durability == nil {
		durability = []string{"--appendonly", "yes", "--appendfsync", "always"}
	}
	p, err := start("redis-server", r.bin, append([]string{
		"--bind", "127.0.0.1", "--port", strconv.Itoa(r.port), "--dir", r.dir, "--save", "",
	}, durability...), nil)
	if err != nil {
		return err
	}
	r.p = p
	return waitFor(10*time.Second, "redis-server to listen", func() error {
		c, err := net.DialTimeout("tcp", r.addr(), time.Second)
		if err != nil {
			return err
		}
		defer c.Close()
		if _, err := c.Write([]byte("PING\r\n")); err != nil {
			return err
		}
		buf := make([]byte, 7)
		_ = c.SetReadDeadline(time.Now().Add(time.Second))
		n, err := c.Read(buf)
		if err != nil {
			return err
		}
		if string(buf[:n]) != "+PONG\r\n" {
			return fmt.Errorf("answered %q", buf[:n])
		}
		return nil
	})
}

// replica is one example server.
type replica struct {
	name  string
	bin   string
	port  int
	env   []string
	drain time.Duration
	p     *proc
}

func (r *replica) url() string { return "http://127.0.0.1:" + strconv.Itoa(r.port) }

func (r *replica) start() error {
	p, err := start(r.name, r.bin, []string{"-addr", "127.0.0.1:" + strconv.Itoa(r.port), "-drain-delay", r.drain.String()}, r.env)
	if err != nil {
		return err
	}
	r.p = p
	return waitFor(15*time.Second, r.name+" to answer /health", func() error {
		select {
		case <-p.done:
			return fmt.Errorf("it exited: %v\n%s", p.err, p.out.String())
		default:
		}
		resp, err := http.Get(r.url() + "/health")
		if err != nil {
			return err
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			return fmt.Errorf("status %d", resp.StatusCode)
		}
		return nil
	})
}

// balancer is HAProxy in front of the replicas: health checks on /health
// every 200 ms (down after two failures, up after two successes), and
// retries elsewhere of what never reached a replica's tool: a connection
// that failed, and a 503, which a draining replica answers before it
// runs anything.
type balancer struct {
	bin, dir string
	port     int
	p        *proc
}

// haproxyConfig is the configuration for the replicas' ports.
func haproxyConfig(port, statsPort int, replicas []*replica) string {
	var b strings.Builder
	fmt.Fprintf(&b, `global
    maxconn 4096
    log stdout format raw local0 info

defaults
    mode http
    log global
    option httplog
    option dontlog-normal
    timeout connect 1s
    timeout client 30s
    timeout server 30s
    timeout http-keep-alive 10s
    retries 3
    option redispatch
    retry-on conn-failure 503

frontend tools
    bind 127.0.0.1:%d
    default_backend replicas

frontend stats
    bind 127.0.0.1:%d
    http-request return status 200 content-type text/plain string ok if { path /ready }

backend replicas
    balance roundrobin
    option httpchk GET /health
    http-check expect status 200
    default-server check inter 200ms fall 2 rise 2
`, port, statsPort)
	for _, r := range replicas {
		fmt.Fprintf(&b, "    server %s 127.0.0.1:%d\n", r.name, r.port)
	}
	return b.String()
}

// start starts HAProxy. A port taken between freePort and the bind (by
// another program of the machine) is replaced by another, a few times.
func (lb *balancer) start(replicas []*replica) error {
	var err error
	for range 5 {
		if err = lb.startOnce(replicas); err == nil || !strings.Contains(err.Error(), "Address already in use") {
			return err
		}
		if lb.port, err = freePort(); err != nil {
			return err
		}
	}
	return err
}

func (lb *balancer) startOnce(replicas []*replica) error {
	statsPort, err := freePort()
	if err != nil {
		return err
	}
	cfg := filepath.Join(lb.dir, "haproxy.cfg")
	if err := os.WriteFile(cfg, []byte(haproxyConfig(lb.port, statsPort, replicas)), 0o644); err != nil {
		return err
	}
	p, err := start("haproxy", lb.bin, []string{"-db", "-f", cfg}, nil)
	if err != nil {
		return err
	}
	lb.p = p
	return waitFor(10*time.Second, "haproxy to listen", func() error {
		select {
		case <-p.done:
			return fmt.Errorf("it exited: %v\n%s", p.err, p.out.String())
		default:
		}
		resp, err := http.Get("http://127.0.0.1:" + strconv.Itoa(statsPort) + "/ready")
		if err != nil {
			return err
		}
		resp.Body.Close()
		return nil
	})
}

func (lb *balancer) url() string { return "http://127.0.0.1:" + strconv.Itoa(lb.port) }
