package benchmarks

import (
	"fmt"
	"net"
	"net/http"
	"os"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/otcgo/otc/client"
	"github.com/otcgo/otc/federation"
	"github.com/otcgo/otc/mount"
)

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

// BenchmarkGatewayMCP calls an MCP server over Streamable HTTP (otc's, and
// the MCP Go SDK's, each in a process of its own) directly and through a
// gateway (federation in this process) in one run, both over MCP
// 2025-11-25 with otc's client, in rounds whose order alternates. It
// reports the gateway's calls/s as a ratio to direct (x-direct), the
// latency it adds at p50 and p99, and what the gateway itself spends a
// call: the CPU (µs-cpu-hop, this process's CPU a call through the
// gateway less its CPU a direct call, which is the caller's) and the
// allocations (allocs-hop, likewise). Run it with -benchtime 1x.
func BenchmarkGatewayMCP(b *testing.B) {
	for _, kind := range []struct{ name, env, tool string }{
		{"otc", "1", "Calculator_Add"},
		{"sdk", "sdk", "Calculator_Add"},
	} {
		b.Run("upstream="+kind.name, func(b *testing.B) {
			upstream := startServerProcess(b, kind.env) + mount.PrefixMCP
			sessions := &client.Options{Format: client.FormatMCP, MCPVersion: "2025-11-25"}
			gw := serveGateway(b, federation.Upstream{Name: "calc", URL: upstream, Format: client.FormatMCP, Client: &client.Options{MCPVersion: "2025-11-25"}})
			tr := gatewayTransport(b)
			direct := benchCaller(b, tr, "direct", upstream, kind.tool, sessions)
			gateway := benchCaller(b, tr, "gateway", gw+mount.PrefixMCP, "calc_"+kind.tool, sessions)
			m := compareGateway(b, direct, gateway)
			b.ReportMetric(median(m.ratios), "x-direct")
			b.ReportMetric(median(m.p50s), "ms-added-p50")
			b.ReportMetric(median(m.p99s), "ms-added-p99")
			b.ReportMetric(median(m.cpus), "µs-cpu-hop")
			b.ReportMetric(median(m.allocs), "allocs-hop")
		})
	}
}
