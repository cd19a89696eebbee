package testkit

import (
	"bufio"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"testing"
	"time"
)

// listeningPattern finds the URL in the example server's "serving OTC
// tools" log line.
var listeningPattern = regexp.MustCompile(`msg="calculator: serving OTC tools" url=(http://\S+)`)

// ExampleServer builds the example server (examples/calculator, found from
// root, the repository's root directory) and starts it on a free loopback
// port with env added to its environment, for the test's lifetime. It
// returns the server's base URL: OTC at the root, MCP at /mcp, the REST
// view at /v1.
func ExampleServer(t *testing.T, root string, env ...string) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "calculator")
	// Built in its own module's directory, so that it builds with or
	// without the workspace.
	build := exec.Command("go", "build", "-o", bin, ".")
	build.Dir = filepath.Join(root, "examples", "calculator")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("building the example server: %v\n%s", err, out)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cmd := exec.CommandContext(ctx, bin, "-addr", "127.0.0.1:0")
	cmd.Env = append(os.Environ(), env...)
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatalf("starting the example server: %v", err)
	}
	t.Cleanup(func() {
		cancel()
		_ = cmd.Wait()
	})
	found := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(stderr)
		for sc.Scan() {
			if m := listeningPattern.FindStringSubmatch(sc.Text()); m != nil {
				found <- m[1]
				break
			}
		}
		for sc.Scan() { // keep the pipe drained
		}
	}()
	select {
	case url := <-found:
		return url
	case <-time.After(30 * time.Second):
		t.Fatal("the example server did not say where it listens within 30 s")
		return ""
	}
}
