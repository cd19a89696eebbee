package redisstore_test

import (
	"bufio"
	"context"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/require"

	"github.com/otcgo/otc"
	"github.com/otcgo/otc/internal/redistest"
	"github.com/otcgo/otc/redisstore"
)

// The tests run against a real redis-server that TestMain starts on a
// free port (see internal/redistest).

// redisSrv is the test's redis-server, nil when none could be started
// (for the reason in redisError).
var (
	redisSrv   *redistest.Server
	redisError error
	redisAddr  string
)

// Environment of a child process serving a registry (see serveChild).
const (
	serveEnv  = "REDISSTORE_TEST_SERVE"  // the Redis address
	prefixEnv = "REDISSTORE_TEST_PREFIX" // the store's prefix; the run counter is prefix+"runs"
	leaseEnv  = "REDISSTORE_TEST_LEASE"  // the lease, in milliseconds
	hangEnv   = "REDISSTORE_TEST_HANG"   // "1": Count.Up counts, then never returns
)

func TestMain(m *testing.M) {
	if addr := os.Getenv(serveEnv); addr != "" {
		if err := serveChild(addr); err != nil {
			fmt.Fprintln(os.Stderr, "child:", err)
			os.Exit(1)
		}
		os.Exit(0)
	}
	redisSrv, redisError = redistest.Start()
	if redisSrv != nil {
		redisAddr = redisSrv.Addr
	}
	code := m.Run()
	if redisSrv != nil {
		redisSrv.Stop()
	}
	plainCluster.stop()
	replicatedCluster.stop()
	os.Exit(code)
}

// needRedis returns a client of the test's redis-server, or ends the test.
func needRedis(t testing.TB) *redis.Client {
	t.Helper()
	c := redis.NewClient(&redis.Options{Addr: redistest.Need(t, redisSrv, redisError)})
	t.Cleanup(func() { c.Close() })
	return c
}

// freshPrefix returns a key prefix of the test's own, made from its name,
// after deleting what an earlier run of the test (go test -count) left
// under it.
func freshPrefix(t *testing.T, client *redis.Client) string {
	t.Helper()
	prefix := strings.ReplaceAll(t.Name(), "/", ":") + ":"
	ctx := context.Background()
	iter := client.Scan(ctx, 0, prefix+"*", 100).Iterator()
	for iter.Next(ctx) {
		require.NoError(t, client.Del(ctx, iter.Val()).Err())
	}
	require.NoError(t, iter.Err())
	return prefix
}

// countInput is the input of Count.Up.
type countInput struct {
	Sleep int    `json:"sleep_ms,omitempty" jsonschema:"description=How long to take in milliseconds."`
	Label string `json:"label,omitempty" jsonschema:"description=Any label."`
}

// newCountingRegistry registers Count.Up, which counts its runs in the
// Redis key counter (so that runs in several processes add up), takes
// sleep_ms, and returns the count.
func newCountingRegistry(client redis.UniversalClient, store otc.IdempotencyStore, counter string) (*otc.Registry, error) {
	hang := os.Getenv(hangEnv) == "1"
	reg := otc.NewRegistry(&otc.RegistryOptions{Logger: slog.New(slog.DiscardHandler), Idempotency: store})
	err := otc.Register(reg, otc.Tool{ID: "Count.Up", Version: "1.0.0", Description: "Counts its runs."},
		func(ctx context.Context, in countInput) (int64, error) {
			n, err := client.Incr(ctx, counter).Result()
			if err != nil {
				return 0, err
			}
			time.Sleep(time.Duration(in.Sleep) * time.Millisecond)
			if hang {
				select {}
			}
			return n, nil
		})
	return reg, err
}

// serveChild serves Count.Up over OTC with a store in Redis at addr,
// prints "ADDR http://..." and serves until standard input closes.
func serveChild(addr string) error {
	client := redis.NewClient(&redis.Options{Addr: addr})
	prefix := os.Getenv(prefixEnv)
	lease, _ := strconv.Atoi(os.Getenv(leaseEnv))
	store := redisstore.NewIdempotencyStore(client, &redisstore.IdempotencyOptions{
		Prefix:       prefix,
		Lease:        time.Duration(lease) * time.Millisecond,
		PollInterval: 20 * time.Millisecond,
		Logger:       slog.New(slog.DiscardHandler),
	})
	reg, err := newCountingRegistry(client, store, prefix+"runs")
	if err != nil {
		return err
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return err
	}
	srv := &http.Server{Handler: otc.NewHandler(reg, nil), ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = srv.Serve(ln) }()
	fmt.Printf("ADDR http://%s\n", ln.Addr())
	_, _ = bufio.NewReader(os.Stdin).ReadString('\n') // until the test closes stdin
	return srv.Close()
}

// startChild runs serveChild in a new process, a replica whose store
// has the given prefix and lease (zero: the default), and returns its
// URL. With hang, its Count.Up counts its run and then never returns.
func startChild(t *testing.T, prefix string, lease time.Duration, hang bool) (string, *exec.Cmd) {
	t.Helper()
	exe, err := os.Executable()
	require.NoError(t, err)
	cmd := exec.Command(exe, "-test.run=^$")
	cmd.Env = append(os.Environ(),
		serveEnv+"="+redisAddr,
		prefixEnv+"="+prefix,
		fmt.Sprintf("%s=%d", leaseEnv, lease.Milliseconds()))
	if hang {
		cmd.Env = append(cmd.Env, hangEnv+"=1")
	}
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		stdin.Close()
		_ = cmd.Wait()
	})
	line, err := bufio.NewReader(stdout).ReadString('\n')
	if err != nil || !strings.HasPrefix(line, "ADDR ") {
		t.Fatalf("the child did not say where it listens: %q, %v", line, err)
	}
	return strings.TrimSpace(strings.TrimPrefix(line, "ADDR ")), cmd
}
