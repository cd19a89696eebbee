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

	"github.com/otcgo/otc/client"
)

// listeningPattern finds the URL in the example server's "serving OTC
// tools" log line.
var listeningPattern = regexp.MustCompile(`msg="calculator: serving OTC tools" url=(http://\S+)`)

// ExampleBinary builds the example server (examples/calculator, found
// from root, the repository's root directory) for the test, and returns
// the path of the binary: "bin -stdio" serves its tools over MCP on
// standard input and output.
func ExampleBinary(t *testing.T, root string) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "calculator")
	// Built in its own module's directory, so that it builds with or
	// without the workspace.
	build := exec.Command("go", "build", "-o", bin, ".")
	build.Dir = filepath.Join(root, "examples", "calculator")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("building the example server: %v\n%s", err, out)
	}
	return bin
}

// ExampleServer builds the example server (examples/calculator, found from
// root, the repository's root directory) and starts it on a free loopback
// port with env added to its environment, for the test's lifetime. It
// returns the server's base URL: OTC at the root, MCP at /mcp, the REST
// view at /v1.
func ExampleServer(t *testing.T, root string, env ...string) string {
	t.Helper()
	return exampleServerOf(t, ExampleBinary(t, root), env...)
}

// exampleServerOf starts the example server's binary, as ExampleServer
// does.
func exampleServerOf(t *testing.T, bin string, env ...string) string {
	t.Helper()
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

// ExampleClients starts the example server and returns a client of it in
// each format an agent meets: "otc", "mcp" (Streamable HTTP), "stdio"
// (MCP, over a process of its own, started with -stdio) and "a2a". They
// list the same tools under the same names, which the adapters' tests
// call through each.
func ExampleClients(t *testing.T, root string) map[string]*client.Client {
	t.Helper()
	bin := ExampleBinary(t, root)
	url := exampleServerOf(t, bin)
	out := map[string]*client.Client{}
	for name, f := range map[string]client.Format{"otc": client.FormatOTC, "mcp": client.FormatMCP, "a2a": client.FormatA2A} {
		u := url
		if name != "otc" {
			u += "/" + name
		}
		c, err := client.New(u, &client.Options{Format: f})
		if err != nil {
			t.Fatal(err)
		}
		out[name] = c
	}
	c, err := client.NewStdio(exec.Command(bin, "-stdio"), nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Close() })
	out["stdio"] = c
	return out
}
