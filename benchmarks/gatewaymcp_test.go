package benchmarks

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"syscall"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/require"

	"github.com/otcgo/otc"
	"github.com/otcgo/otc/client"
	"github.com/otcgo/otc/federation"
	"github.com/otcgo/otc/mount"
)

// processCPU is the CPU time, user and system, this process has spent.
func processCPU() time.Duration {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
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
			ctx := b.Context()
			reg := otc.NewRegistry(nil)
			fed, err := federation.Mount(ctx, reg, []federation.Upstream{{Name: "calc", URL: upstream, Format: client.FormatMCP,
				Client: &client.Options{MCPVersion: "2025-11-25"}}}, nil)
			require.NoError(b, err)
			b.Cleanup(func() { _ = fed.Close() })
			mux := http.NewServeMux()
			mount.All(mux, reg, nil)
			gw := httptest.NewServer(mux)
			b.Cleanup(gw.Close)

			tr := &http.Transport{MaxIdleConnsPerHost: *clientConc, DisableCompression: true}
			b.Cleanup(tr.CloseIdleConnections)
			args := map[string]any{"a": 1, "b": 2}
			newCaller := func(name, url, tool string) caller {
				c, err := client.New(url, &client.Options{Format: client.FormatMCP, MCPVersion: "2025-11-25", HTTPClient: &http.Client{Transport: tr}})
				require.NoError(b, err)
				b.Cleanup(func() { _ = c.Close() })
				call := func(ctx context.Context) error {
					_, err := c.Call(ctx, tool, args, nil)
					return err
				}
				require.NoError(b, call(ctx), name)
				return caller{name, call}
			}
			direct := newCaller("direct", upstream, kind.tool)
			gateway := newCaller("gateway", gw.URL+mount.PrefixMCP, "calc_"+kind.tool)
			for _, c := range []caller{direct, gateway} {
				runCaller(b, c, 100*time.Millisecond)
			}
			var ratios, p50s, p99s, cpus, allocs []float64
			for r := range *gatewayRounds {
				order := []caller{direct, gateway}
				if r%2 == 1 {
					order = []caller{gateway, direct}
				}
				res := map[string]callerResult{}
				lat := map[string][]time.Duration{}
				for _, c := range order {
					res[c.name] = runCaller(b, c, *clientTime)
					lat[c.name] = latencies(b, c, 300)
				}
				ratios = append(ratios, res["gateway"].rate/res["direct"].rate)
				p50s = append(p50s, ms(pct(lat["gateway"], 50)-pct(lat["direct"], 50)))
				p99s = append(p99s, ms(pct(lat["gateway"], 99)-pct(lat["direct"], 99)))
				cpus = append(cpus, res["gateway"].cpu-res["direct"].cpu)
				allocs = append(allocs, res["gateway"].allocs-res["direct"].allocs)
			}
			b.ReportMetric(median(ratios), "x-direct")
			b.ReportMetric(median(p50s), "ms-added-p50")
			b.ReportMetric(median(p99s), "ms-added-p99")
			b.ReportMetric(median(cpus), "µs-cpu-hop")
			b.ReportMetric(median(allocs), "allocs-hop")
		})
	}
}
