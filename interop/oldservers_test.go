package interop

import (
	"bufio"
	"context"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/otcgo/otc"
	"github.com/otcgo/otc/client"
	"github.com/otcgo/otc/federation"
	"github.com/otcgo/otc/internal/testkit"
	"github.com/otcgo/otc/mount"
)

// Servers of the protocol's earlier versions that people still run, from
// npm (installed by .ci/frameworks-deps.sh): the server-everything of
// January 2025 and the archived GitHub server, both built on the
// TypeScript SDK 1.0.1, which speaks 2024-11-05 alone; the TypeScript SDK
// 1.11.0, whose servers speak 2025-03-26 (testdata/frameworks/
// server-mcp-2025-03-26.mjs); and today's server-everything, in its
// HTTP+SSE mode.

// oldServers are the scripts of those servers.
type oldServers struct {
	node, dir                       string // dir holds the scripts, node_modules beside them
	everything2024, github, sdk2025 string
	everything                      string // today's
}

func findOldServers(t *testing.T) oldServers {
	t.Helper()
	node, dir := frameworkScripts(t)
	modules := filepath.Join(dir, "node_modules")
	s := oldServers{node: node, dir: dir,
		everything2024: filepath.Join(modules, "everything-2024-11-05", "dist", "index.js"),
		github:         filepath.Join(modules, "@modelcontextprotocol", "server-github", "dist", "index.js"),
		sdk2025:        filepath.Join(dir, "server-mcp-2025-03-26.mjs"),
		everything:     filepath.Join(modules, "@modelcontextprotocol", "server-everything", "dist", "index.js"),
	}
	for _, p := range []string{s.everything2024, s.github, s.everything, filepath.Join(modules, "sdk-2025-03-26", "package.json")} {
		_, err := os.Stat(p)
		require.NoError(t, err, "run .ci/frameworks-deps.sh again: a server of an earlier version is missing")
	}
	return s
}

// startHTTP runs a node server and returns its root URL once its port
// answers (port > 0: the server listens on PORT) or the URL it prints
// first (port 0). It is stopped when the test ends.
func startHTTP(t *testing.T, s oldServers, port int, args ...string) string {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	cmd := exec.CommandContext(ctx, s.node, args...)
	cmd.Dir = s.dir
	cmd.Env = append(os.Environ(), "PORT="+strconv.Itoa(port))
	var stderr testkit.SyncBuffer // the process writes it while the test reads
	cmd.Stderr = &stderr
	out, err := cmd.StdoutPipe()
	require.NoError(t, err)
	require.NoError(t, cmd.Start())
	t.Cleanup(func() { cancel(); _ = cmd.Wait() })
	lines := make(chan string, 16)
	go func() {
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			select {
			case lines <- sc.Text():
			default:
			}
		}
	}()
	if port == 0 {
		select {
		case u := <-lines:
			return u
		case <-time.After(frameworkTimeout):
			t.Fatalf("%v printed no URL; stderr: %s", args, stderr.String())
		}
	}
	addr := "127.0.0.1:" + strconv.Itoa(port)
	for deadline := time.Now().Add(frameworkTimeout); ; time.Sleep(50 * time.Millisecond) {
		c, err := net.DialTimeout("tcp", addr, 100*time.Millisecond)
		if err == nil {
			c.Close()
			return "http://" + addr
		}
		if time.Now().After(deadline) {
			t.Fatalf("%v did not listen on %s; stderr: %s", args, addr, stderr.String())
		}
	}
}

// TestClientOldServers: the client lists and calls the tools of servers
// of 2024-11-05 and 2025-03-26, over stdio, Streamable HTTP and HTTP+SSE,
// negotiating the version (and, pinned to the server's version, getting
// it: the server speaks no other).
func TestClientOldServers(t *testing.T) {
	s := findOldServers(t)
	type check struct {
		tool string
		args map[string]any
		want string
	}
	stdio := []struct {
		name, version string
		args          []string
		lists         string
		call          *check
	}{
		{"everything of 2024-11-05", "2024-11-05", []string{s.everything2024, "stdio"}, "longRunningOperation", &check{"echo", map[string]any{"message": "hi"}, "Echo: hi"}},
		{"github of 2024-11-05", "2024-11-05", []string{s.github}, "search_repositories", nil},
		{"sdk of 2025-03-26", "2025-03-26", []string{s.sdk2025}, "whoami", &check{"add", map[string]any{"a": 2, "b": 3}, "5"}},
	}
	for _, c := range stdio {
		t.Run(c.name, func(t *testing.T) {
			for _, pin := range []string{"", c.version} {
				cmd := exec.Command(s.node, c.args...)
				cmd.Dir = s.dir
				cl, err := client.NewStdio(cmd, &client.Options{MCPVersion: pin})
				require.NoError(t, err)
				defs, err := cl.ListTools(t.Context())
				require.NoError(t, err, "pinned to %q", pin)
				assert.Contains(t, names(defs), c.lists)
				if c.call != nil {
					res, err := cl.Call(t.Context(), c.call.tool, c.call.args, nil)
					require.NoError(t, err)
					assert.Contains(t, string(res.Raw), c.call.want)
				}
				require.NoError(t, cl.Close())
			}
		})
	}

	t.Run("sdk of 2025-03-26 over Streamable HTTP", func(t *testing.T) {
		u := startHTTP(t, s, 0, s.sdk2025, "http")
		for _, pin := range []string{"", "2025-03-26"} {
			cl, err := client.Dial(t.Context(), u, &client.Options{MCPVersion: pin})
			require.NoError(t, err, "pinned to %q", pin)
			assert.Equal(t, client.FormatMCP, cl.Format())
			res, err := cl.Call(t.Context(), "add", map[string]any{"a": 20, "b": 22}, nil)
			require.NoError(t, err)
			assert.Contains(t, string(res.Raw), "42")
			require.NoError(t, cl.Close())
		}
	})
	t.Run("sdk of 2025-03-26 over HTTP+SSE", func(t *testing.T) {
		u := startHTTP(t, s, 0, s.sdk2025, "sse")
		for _, opts := range []*client.Options{{Format: client.FormatMCP, MCPTransport: "sse", MCPVersion: "2025-03-26"}, {Format: client.FormatMCP}} {
			cl, err := client.New(u, opts)
			require.NoError(t, err)
			res, err := cl.Call(t.Context(), "whoami", nil, nil)
			require.NoError(t, err, "%+v", opts)
			assert.Contains(t, string(res.Raw), "sdk-2025-03-26")
			require.NoError(t, cl.Close())
		}
	})
	t.Run("everything of 2024-11-05 over HTTP+SSE, found below its root", func(t *testing.T) {
		// This server holds one session for its life, and exits when it
		// ends: one client, found by Dial at the server's root, pinned.
		root := startHTTP(t, s, freePort(t), filepath.Join(filepath.Dir(s.everything2024), "sse.js"))
		cl, err := client.Dial(t.Context(), root, &client.Options{MCPVersion: "2024-11-05"})
		require.NoError(t, err)
		assert.Equal(t, client.FormatMCP, cl.Format())
		assert.Equal(t, root+"/sse", cl.URL())
		res, err := cl.Call(t.Context(), "add", map[string]any{"a": 1, "b": 2}, nil)
		require.NoError(t, err)
		assert.Contains(t, string(res.Raw), "3")
		require.NoError(t, cl.Close())
	})
	t.Run("everything of today over HTTP+SSE", func(t *testing.T) {
		root := startHTTP(t, s, freePort(t), s.everything, "sse")
		cl, err := client.Dial(t.Context(), root+"/sse", nil)
		require.NoError(t, err)
		res, err := cl.Call(t.Context(), "echo", map[string]any{"message": "hello"}, nil)
		require.NoError(t, err)
		assert.Contains(t, string(res.Raw), "hello")
		require.NoError(t, cl.Close())
	})
}

// TestGatewayOldServers: otc's gateway serves the tools of servers of
// 2024-11-05 and 2025-03-26 over stdio, Streamable HTTP and HTTP+SSE (the
// last found by itself) on every format, and when it closes no process it
// started is left: the server of 2024-11-05, which does not exit when its
// standard input closes, included.
func TestGatewayOldServers(t *testing.T) {
	s := findOldServers(t)
	sdkHTTP := startHTTP(t, s, 0, s.sdk2025, "http")
	sdkSSE := startHTTP(t, s, 0, s.sdk2025, "sse")
	everythingSSE := startHTTP(t, s, freePort(t), s.everything, "sse")
	ups := []federation.Upstream{
		{Name: "everything24", Command: []string{s.node, s.everything2024, "stdio"}, Dir: s.dir},
		{Name: "github", Command: []string{s.node, s.github}, Dir: s.dir},
		{Name: "sdk25", Command: []string{s.node, s.sdk2025}, Dir: s.dir},
		{Name: "sdk25http", URL: sdkHTTP},
		{Name: "sdk25sse", URL: sdkSSE, Format: client.FormatMCP},
		{Name: "everythingsse", URL: everythingSSE},
	}
	for i := range ups {
		ups[i].Timeouts.Start = frameworkTimeout
	}
	reg := otc.NewRegistry(nil)
	fed, err := federation.Mount(t.Context(), reg, ups, &federation.Options{Strict: true})
	require.NoError(t, err)
	closed := false
	t.Cleanup(func() {
		if !closed {
			_ = fed.Close()
		}
	})
	for _, h := range fed.Health() {
		assert.Equal(t, federation.StateUp, h.State, "%s: %s", h.Name, h.LastError)
		assert.Positive(t, h.Tools, h.Name)
	}

	mux := http.NewServeMux()
	mount.All(mux, reg, nil)
	gw := httptest.NewServer(mux)
	t.Cleanup(gw.Close)
	calls := []struct{ tool, want string }{
		{"everything24_echo", "Echo: via the gateway"},
		{"sdk25_add", "42"},
		{"sdk25http_add", "42"},
		{"sdk25sse_add", "42"},
		{"everythingsse_echo", "via the gateway"},
	}
	for _, f := range []client.Format{client.FormatMCP, client.FormatOTC} {
		prefix := map[client.Format]string{client.FormatMCP: mount.PrefixMCP, client.FormatOTC: mount.PrefixOTC}[f]
		cl, err := client.New(gw.URL+prefix, &client.Options{Format: f})
		require.NoError(t, err)
		defs, err := cl.ListTools(t.Context())
		require.NoError(t, err)
		assert.Contains(t, names(defs), "github_search_repositories", "the GitHub server's tools are listed without a token")
		for _, c := range calls {
			id := ""
			for _, d := range defs {
				if d.Name == c.tool {
					id = d.ID
				}
			}
			require.NotEmpty(t, id, "%s lists %s", f, c.tool)
			args := map[string]any{"a": 40, "b": 2}
			if strings.HasSuffix(c.tool, "echo") {
				args = map[string]any{"message": "via the gateway"}
			}
			res, err := cl.Call(t.Context(), id, args, nil)
			require.NoError(t, err, "%s %s", f, c.tool)
			assert.Contains(t, string(res.Value)+string(res.Raw), c.want, "%s %s", f, c.tool)
		}
		_ = cl.Close()
	}

	for _, up := range ups[:3] {
		require.NotEmpty(t, processesRunning(up.Command), "%s's process is seen while the gateway runs", up.Name)
	}
	require.NoError(t, fed.Close())
	closed = true
	for _, up := range ups[:3] {
		assert.Empty(t, processesRunning(up.Command), "%s is left running after the gateway closed", up.Name)
	}
}

// names are the catalog's tool names.
func names(defs []otc.ToolDefinition) []string {
	var out []string
	for _, d := range defs {
		out = append(out, d.Name)
	}
	return out
}

// processesRunning lists the processes whose command line is argv (read
// from /proc), with their pids.
func processesRunning(argv []string) []string {
	want := strings.Join(argv, "\x00") + "\x00"
	var out []string
	entries, _ := os.ReadDir("/proc")
	for _, e := range entries {
		if _, err := strconv.Atoi(e.Name()); err != nil {
			continue
		}
		b, err := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
		if err != nil {
			continue
		}
		if string(b) == want {
			out = append(out, fmt.Sprintf("%s: %s", e.Name(), strings.ReplaceAll(string(b), "\x00", " ")))
		}
	}
	return out
}
