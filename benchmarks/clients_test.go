package benchmarks

import (
	"bufio"
	"context"
	"flag"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	mcpgoclient "github.com/mark3labs/mcp-go/client"
	mcpgotransport "github.com/mark3labs/mcp-go/client/transport"
	mcpgo "github.com/mark3labs/mcp-go/mcp"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/require"

	"github.com/otcgo/otc"
	"github.com/otcgo/otc/client"
	"github.com/otcgo/otc/mount"
)

var (
	clientRounds = flag.Int("clients.rounds", 8, "BenchmarkClients: rounds, each of which runs every client once")
	clientTime   = flag.Duration("clients.time", 250*time.Millisecond, "BenchmarkClients: how long each client runs in a round")
	clientConc   = flag.Int("clients.conc", 8, "BenchmarkClients: goroutines calling through each client at once")
)

// clientServerEnv, set, makes the test binary the server of
// BenchmarkClients: every format of one registry on 127.0.0.1, its URL
// on standard output. The server runs in a process of its own, so that
// the allocations the benchmark counts are the client's alone.
const clientServerEnv = "OTC_BENCH_CLIENT_SERVER"

func TestMain(m *testing.M) {
	switch os.Getenv(clientServerEnv) {
	case "":
	case "sdk":
		os.Exit(serveSDK())
	default:
		os.Exit(serveForClients())
	}
	os.Exit(m.Run())
}

// serveForClients serves Calculator.Add on every format until killed.
func serveForClients() int {
	reg := otc.NewRegistry(nil)
	err := otc.Register(reg, otc.Tool{ID: "Calculator.Add", Version: "1.0.0", Description: "Adds two numbers."},
		func(_ context.Context, in struct {
			A float64 `json:"a" jsonschema:"description=The first number."`
			B float64 `json:"b" jsonschema:"description=The second number."`
		}) (float64, error) {
			return in.A + in.B, nil
		})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	mux := http.NewServeMux()
	mount.All(mux, reg, nil)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	fmt.Println("http://" + ln.Addr().String())
	_ = (&http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}).Serve(ln)
	return 0
}

// caller makes one call of Calculator_Add through one client.
type caller struct {
	name string
	call func(ctx context.Context) error
}

// BenchmarkClients calls one MCP server (this module's, in a process of
// its own, over loopback) through otc's client, mcp-go's and the MCP Go
// SDK's, at protocol version 2025-11-25 with a session each; and otc's
// client over the negotiated 2026-07-28, OTC and A2A beside them. It runs
// clients.rounds rounds, in each every client for clients.time with
// clients.conc goroutines, in an order that rotates from round to round,
// and reports per client: calls/s (the median over rounds), x-best (the
// median of the per-round ratios of its calls/s to the faster of mcp-go's
// and the SDK's in that round), and allocs/call, B/call and µs-cpu/call
// (the median over rounds of this process's CPU time a call), in this
// process, so the client's alone. Run it with -benchtime 1x.
func BenchmarkClients(b *testing.B) {
	url := startClientServer(b)
	ctx := b.Context()
	tr := &http.Transport{MaxIdleConnsPerHost: *clientConc, DisableCompression: true}
	b.Cleanup(tr.CloseIdleConnections)
	hc := &http.Client{Transport: tr}
	args := map[string]any{"a": 1, "b": 2}

	var callers []caller
	otcClient := func(name string, opts *client.Options, u, tool string) {
		opts.HTTPClient = hc
		c, err := client.New(u, opts)
		require.NoError(b, err)
		b.Cleanup(func() { _ = c.Close() })
		_, err = c.Call(ctx, tool, args, nil)
		require.NoError(b, err, name)
		callers = append(callers, caller{name, func(ctx context.Context) error {
			_, err := c.Call(ctx, tool, args, nil)
			return err
		}})
	}
	otcClient("otc-mcp-2025-11-25", &client.Options{Format: client.FormatMCP, MCPVersion: "2025-11-25"}, url+mount.PrefixMCP, "Calculator_Add")

	mg, err := mcpgoclient.NewStreamableHttpClient(url+mount.PrefixMCP, mcpgotransport.WithHTTPBasicClient(hc))
	require.NoError(b, err)
	require.NoError(b, mg.Start(ctx))
	b.Cleanup(func() { _ = mg.Close() })
	init := mcpgo.InitializeRequest{}
	init.Params.ProtocolVersion = "2025-11-25"
	init.Params.ClientInfo = mcpgo.Implementation{Name: "bench", Version: "1"}
	_, err = mg.Initialize(ctx, init)
	require.NoError(b, err)
	callers = append(callers, caller{"mcp-go", func(ctx context.Context) error {
		req := mcpgo.CallToolRequest{}
		req.Params.Name, req.Params.Arguments = "Calculator_Add", args
		res, err := mg.CallTool(ctx, req)
		if err == nil && res.IsError {
			err = fmt.Errorf("tool error: %v", res.Content)
		}
		return err
	}})

	sc := sdk.NewClient(&sdk.Implementation{Name: "bench", Version: "1"}, nil)
	sess, err := sc.Connect(ctx, &sdk.StreamableClientTransport{Endpoint: url + mount.PrefixMCP, HTTPClient: hc, DisableStandaloneSSE: true}, nil)
	require.NoError(b, err)
	b.Cleanup(func() { _ = sess.Close() })
	callers = append(callers, caller{"go-sdk", func(ctx context.Context) error {
		res, err := sess.CallTool(ctx, &sdk.CallToolParams{Name: "Calculator_Add", Arguments: args})
		if err == nil && res.IsError {
			err = fmt.Errorf("tool error: %v", res.Content)
		}
		return err
	}})
	for _, c := range callers[1:] {
		require.NoError(b, c.call(ctx), c.name)
	}

	otcClient("otc-mcp-2026-07-28", &client.Options{Format: client.FormatMCP}, url+mount.PrefixMCP, "Calculator_Add")
	otcClient("otc-otc", &client.Options{}, url+mount.PrefixOTC, "Calculator.Add")
	otcClient("otc-a2a", &client.Options{Format: client.FormatA2A}, url+mount.PrefixA2A, "Calculator_Add")

	// Warm up every client's connections.
	for _, c := range callers {
		runCaller(b, c, 100*time.Millisecond)
	}
	rates := make([][]float64, len(callers))
	ratios := make([][]float64, len(callers))
	var allocs, bytes = make([]float64, len(callers)), make([]float64, len(callers))
	cpus := make([][]float64, len(callers))
	for r := range *clientRounds {
		round := make([]float64, len(callers))
		for k := range callers {
			i := (k + r) % len(callers)
			res := runCaller(b, callers[i], *clientTime)
			round[i] = res.rate
			allocs[i] += res.allocs / float64(*clientRounds)
			cpus[i] = append(cpus[i], res.cpu)
			bytes[i] += res.bytes / float64(*clientRounds)
		}
		best := max(round[1], round[2]) // mcp-go, go-sdk
		for i, rate := range round {
			rates[i] = append(rates[i], rate)
			ratios[i] = append(ratios[i], rate/best)
		}
	}
	for i, c := range callers {
		b.Run("client="+c.name, func(b *testing.B) {
			rate := median(rates[i])
			b.ReportMetric(1e9/rate, "ns/op")
			b.ReportMetric(rate, "calls/s")
			b.ReportMetric(median(ratios[i]), "x-best")
			b.ReportMetric(allocs[i], "allocs/call")
			b.ReportMetric(bytes[i], "B/call")
			b.ReportMetric(median(cpus[i]), "µs-cpu/call")
		})
	}
}

// callerResult is one run of a client.
type callerResult struct {
	rate, allocs, bytes float64
	// cpu is this process's CPU time (user and system) a call, in µs.
	cpu float64
}

// runCaller calls through c from clients.conc goroutines for d.
func runCaller(b *testing.B, c caller, d time.Duration) callerResult {
	var n atomic.Int64
	var failed atomic.Value
	ctx, cancel := context.WithTimeout(b.Context(), d)
	defer cancel()
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	cpuBefore := processCPU()
	start := time.Now()
	var wg sync.WaitGroup
	for range *clientConc {
		wg.Go(func() {
			for ctx.Err() == nil {
				if err := c.call(b.Context()); err != nil {
					failed.Store(err)
					return
				}
				n.Add(1)
			}
		})
	}
	wg.Wait()
	elapsed := time.Since(start)
	cpu := processCPU() - cpuBefore
	runtime.ReadMemStats(&after)
	if err, _ := failed.Load().(error); err != nil {
		b.Fatalf("%s: %v", c.name, err)
	}
	calls := float64(n.Load())
	return callerResult{
		rate:   calls / elapsed.Seconds(),
		allocs: float64(after.Mallocs-before.Mallocs) / calls,
		bytes:  float64(after.TotalAlloc-before.TotalAlloc) / calls,
		cpu:    float64(cpu.Microseconds()) / calls,
	}
}

// startClientServer starts the test binary as the server, and returns
// its URL.
func startClientServer(b *testing.B) string {
	b.Helper()
	return startServerProcess(b, "1")
}

// startServerProcess starts this test binary as a server of the kind
// given ("sdk": the MCP Go SDK's server at /mcp; else otc's on every
// format) and returns its base URL.
func startServerProcess(b *testing.B, kind string) string {
	b.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^$", "-test.bench=^$")
	cmd.Env = append(os.Environ(), clientServerEnv+"="+kind)
	out, err := cmd.StdoutPipe()
	require.NoError(b, err)
	cmd.Stderr = os.Stderr
	require.NoError(b, cmd.Start())
	b.Cleanup(func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
	})
	line, err := bufio.NewReader(out).ReadString('\n')
	require.NoError(b, err)
	var u string
	_, err = fmt.Sscan(line, &u)
	require.NoError(b, err)
	return u
}
