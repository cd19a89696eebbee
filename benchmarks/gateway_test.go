package benchmarks

import (
	"context"
	"flag"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/otcgo/otc"
	"github.com/otcgo/otc/client"
	"github.com/otcgo/otc/federation"
	"github.com/otcgo/otc/mount"
)

var gatewayRounds = flag.Int("gateway.rounds", 6, "BenchmarkGateway: rounds, each of which runs the direct and the gateway caller once")

// BenchmarkGateway calls Calculator.Add of an otc server (a process of
// its own, on loopback) directly and through a federation gateway in this
// process, in interleaved rounds: the calls/s of each with
// clients.conc goroutines, and the latency of one caller at a time, p50
// and p99. It reports the gateway's calls/s as a ratio to the direct
// ones (x-direct), what the gateway adds to p50 and p99, in ms, and what
// it spends a call, as BenchmarkGatewayMCP does.
func BenchmarkGateway(b *testing.B) {
	upstream := startClientServer(b)
	gw := serveGateway(b, federation.Upstream{Name: "calc", URL: upstream + mount.PrefixOTC, Format: client.FormatOTC})
	tr := gatewayTransport(b)
	direct := benchCaller(b, tr, "direct", upstream+mount.PrefixOTC, "Calculator.Add", nil)
	gateway := benchCaller(b, tr, "gateway", gw+mount.PrefixOTC, "calc.Calculator_Add", nil)
	m := compareGateway(b, direct, gateway, nil)
	b.ReportMetric(median(m.ratios), "x-direct")
	b.ReportMetric(median(m.p50s), "ms-added-p50")
	b.ReportMetric(median(m.p99s), "ms-added-p99")
	b.ReportMetric(median(m.cpus), "µs-cpu-hop")
	b.ReportMetric(median(m.allocs), "allocs-hop")
}

// serveGateway mounts up in a fresh registry served on every format, and
// returns the gateway's URL.
func serveGateway(b *testing.B, up federation.Upstream) string {
	b.Helper()
	reg := otc.NewRegistry(nil)
	fed, err := federation.Mount(b.Context(), reg, []federation.Upstream{up}, nil)
	require.NoError(b, err)
	b.Cleanup(func() { _ = fed.Close() })
	mux := http.NewServeMux()
	mount.All(mux, reg, nil)
	gw := httptest.NewServer(mux)
	b.Cleanup(gw.Close)
	return gw.URL
}

// gatewayTransport is the callers' transport, which keeps a connection
// for each goroutine that calls.
func gatewayTransport(b *testing.B) *http.Transport {
	tr := &http.Transport{MaxIdleConnsPerHost: *clientConc, DisableCompression: true}
	b.Cleanup(tr.CloseIdleConnections)
	return tr
}

// benchCaller is a caller of tool (adding 1 and 2) at url through otc's
// client with opts (nil for OTC) over tr, checked with one call.
func benchCaller(b *testing.B, tr *http.Transport, name, url, tool string, opts *client.Options) caller {
	b.Helper()
	o := client.Options{}
	if opts != nil {
		o = *opts
	}
	o.HTTPClient = &http.Client{Transport: tr}
	c, err := client.New(url, &o)
	require.NoError(b, err)
	b.Cleanup(func() { _ = c.Close() })
	args := map[string]any{"a": 1, "b": 2}
	call := func(ctx context.Context) error {
		_, err := c.Call(ctx, tool, args, nil)
		return err
	}
	require.NoError(b, call(b.Context()), name)
	return caller{name, call}
}

// gatewayRuns is what compareGateway measures, a value per round: the
// gateway's calls/s as a ratio to direct, the latency it adds at p50 and
// p99 (ms), and the CPU (µs) and allocations a call through it costs this
// process beyond a direct call's; with a floor, its calls/s as a ratio to
// direct, the CPU a call through it costs beyond a direct call's, and the
// gateway's CPU over it.
type gatewayRuns struct {
	ratios, p50s, p99s, cpus, allocs  []float64
	floorCPUs, overFloor, floorRatios []float64
}

// compareGateway warms the callers, then runs them in gateway.rounds
// rounds whose order rotates: the calls/s of each with clients.conc
// goroutines, and the latency of one call at a time. floor, when not
// nil, is a hand-written proxy in front of the same upstream.
func compareGateway(b *testing.B, direct, gateway caller, floor *caller) gatewayRuns {
	callers := []caller{direct, gateway}
	if floor != nil {
		callers = append(callers, *floor)
	}
	for _, c := range callers {
		runCaller(b, c, 100*time.Millisecond)
	}
	var m gatewayRuns
	for r := range *gatewayRounds {
		order := append(slices.Clone(callers[r%len(callers):]), callers[:r%len(callers)]...)
		if r%2 == 1 {
			slices.Reverse(order)
		}
		res := map[string]callerResult{}
		lat := map[string][]time.Duration{}
		for _, c := range order {
			res[c.name] = runCaller(b, c, *clientTime)
			lat[c.name] = latencies(b, c, 300)
		}
		g, d := res[gateway.name], res[direct.name]
		m.ratios = append(m.ratios, g.rate/d.rate)
		m.p50s = append(m.p50s, ms(pct(lat[gateway.name], 50)-pct(lat[direct.name], 50)))
		m.p99s = append(m.p99s, ms(pct(lat[gateway.name], 99)-pct(lat[direct.name], 99)))
		m.cpus = append(m.cpus, g.cpu-d.cpu)
		m.allocs = append(m.allocs, g.allocs-d.allocs)
		if floor != nil {
			f := res[floor.name]
			m.floorCPUs = append(m.floorCPUs, f.cpu-d.cpu)
			m.overFloor = append(m.overFloor, (g.cpu-d.cpu)/(f.cpu-d.cpu))
			m.floorRatios = append(m.floorRatios, f.rate/d.rate)
		}
	}
	return m
}

// serveProxy serves the least a gateway in front of upstream can do: each
// request's body posted to upstream with the headers MCP's Streamable
// HTTP needs, and the answer's status, type, session and body copied
// back, with no reading of either. It returns the proxy's URL.
func serveProxy(b *testing.B, upstream string) string {
	b.Helper()
	tr := &http.Transport{MaxIdleConnsPerHost: 64, DisableCompression: true}
	b.Cleanup(tr.CloseIdleConnections)
	hc := &http.Client{Transport: tr}
	forwarded := []string{"Content-Type", "Accept", "Mcp-Protocol-Version", "Mcp-Session-Id"}
	proxy := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		req, err := http.NewRequestWithContext(r.Context(), r.Method, upstream, r.Body)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadGateway)
			return
		}
		req.ContentLength = r.ContentLength
		for _, h := range forwarded {
			if v := r.Header.Get(h); v != "" {
				req.Header.Set(h, v)
			}
		}
		resp, err := hc.Do(req)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadGateway)
			return
		}
		defer resp.Body.Close()
		for _, h := range []string{"Content-Type", "Mcp-Session-Id"} {
			if v := resp.Header.Get(h); v != "" {
				w.Header().Set(h, v)
			}
		}
		if resp.ContentLength >= 0 {
			w.Header().Set("Content-Length", strconv.FormatInt(resp.ContentLength, 10))
		}
		w.WriteHeader(resp.StatusCode)
		_, _ = io.Copy(w, resp.Body)
	}))
	b.Cleanup(proxy.Close)
	return proxy.URL
}

// latencies times n calls through c, one at a time.
func latencies(b *testing.B, c caller, n int) []time.Duration {
	out := make([]time.Duration, n)
	for i := range out {
		start := time.Now()
		if err := c.call(b.Context()); err != nil {
			b.Fatalf("%s: %v", c.name, err)
		}
		out[i] = time.Since(start)
	}
	return out
}

// pct is the p-th percentile of ds.
func pct(ds []time.Duration, p int) time.Duration {
	s := slices.Clone(ds)
	slices.Sort(s)
	return s[min(len(s)-1, len(s)*p/100)]
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }
