package redistest

import (
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// Cluster is a running Redis Cluster, each node a redis-server on a free
// loopback port, joined with redis-cli --cluster create.
type Cluster struct {
	// Addrs are the nodes' host:port: the masters, then their replicas,
	// as redis-cli --cluster create assigns them at the start.
	Addrs   []string
	servers []*Server
	dir     string
	cli     string
}

// StartCluster starts a Redis Cluster of masters (at least 3, as
// redis-cli requires), each with replicas replicas of its own, and waits
// until it serves every slot and every replica has synchronised.
func StartCluster(masters, replicas int) (*Cluster, error) {
	n := masters * (1 + replicas)
	bin, err := exec.LookPath("redis-server")
	if err != nil {
		return nil, errors.New("redis-server is not on PATH (apt-get install redis-server)")
	}
	cli, err := exec.LookPath("redis-cli")
	if err != nil {
		return nil, errors.New("redis-cli is not on PATH (apt-get install redis-tools)")
	}
	dir, err := os.MkdirTemp("", "otc-redis-cluster-")
	if err != nil {
		return nil, err
	}
	c := &Cluster{dir: dir, cli: cli}
	for i := range n {
		s, err := c.startNode(bin, i)
		if err != nil {
			c.Stop()
			return nil, err
		}
		c.servers = append(c.servers, s)
		c.Addrs = append(c.Addrs, s.Addr)
	}
	args := append([]string{"--cluster", "create"}, c.Addrs...)
	args = append(args, "--cluster-replicas", strconv.Itoa(replicas), "--cluster-yes")
	if out, err := exec.Command(cli, args...).CombinedOutput(); err != nil {
		c.Stop()
		return nil, fmt.Errorf("redis-cli --cluster create: %v: %s", err, out)
	}
	deadline := time.Now().Add(20 * time.Second)
	for time.Now().Before(deadline) {
		if c.ready(cli) && c.synced(masters*replicas) {
			return c, nil
		}
		time.Sleep(50 * time.Millisecond)
	}
	c.Stop()
	return nil, errors.New("the Redis Cluster did not reach cluster_state:ok")
}

// startNode starts the i-th node in cluster mode on a free port.
func (c *Cluster) startNode(bin string, i int) (*Server, error) {
	return startFree(func(port int) []string {
		return []string{bin, "--port", strconv.Itoa(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no",
			"--cluster-enabled", "yes", "--cluster-node-timeout", "2000",
			"--cluster-config-file", filepath.Join(c.dir, fmt.Sprintf("nodes-%d-%d.conf", i, port)),
			"--dir", c.dir}
	})
}

// ready reports whether every node says the cluster serves every slot.
func (c *Cluster) ready(cli string) bool {
	for _, a := range c.Addrs {
		host, port, _ := net.SplitHostPort(a)
		out, err := exec.Command(cli, "-h", host, "-p", port, "cluster", "info").Output()
		if err != nil || !strings.Contains(string(out), "cluster_state:ok") {
			return false
		}
	}
	return true
}

// synced reports whether want replicas are connected to their masters
// with their first synchronisation done.
func (c *Cluster) synced(want int) bool {
	if want == 0 {
		return true
	}
	got := 0
	for _, a := range c.Addrs {
		out, err := c.Do(a, "INFO", "replication")
		if err == nil && strings.Contains(out, "role:slave") && strings.Contains(out, "master_link_status:up") && !strings.Contains(out, "master_sync_in_progress:1") {
			got++
		}
	}
	return got == want
}

// Do runs a command on the node at addr with redis-cli, and returns its
// output.
func (c *Cluster) Do(addr string, args ...string) (string, error) {
	host, port, _ := net.SplitHostPort(addr)
	out, err := exec.Command(c.cli, append([]string{"-h", host, "-p", port}, args...)...).CombinedOutput()
	return string(out), err
}

// Pids are the nodes' process ids (0 for one that is not running).
func (c *Cluster) Pids() []int {
	out := make([]int, len(c.servers))
	for i, s := range c.servers {
		if s.cmd != nil {
			out[i] = s.cmd.Process.Pid
		}
	}
	return out
}

// Kill kills the node at addr, as a crash does.
func (c *Cluster) Kill(addr string) {
	for _, s := range c.servers {
		if s.Addr == addr {
			s.Stop()
		}
	}
}

// Stop kills every node and removes their files.
func (c *Cluster) Stop() {
	for _, s := range c.servers {
		s.Stop()
	}
	if c.dir != "" {
		_ = os.RemoveAll(c.dir)
	}
}
