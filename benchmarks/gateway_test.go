package benchmarks

import (
	"context"
	"flag"
	"net/http"
	"net/http/httptest"
	"slices"
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
// ones (x-direct) and what the gateway adds to p50 and p99, in ms.
func BenchmarkGateway(b *testing.B) {
	upstream := startClientServer(b)
	ctx := b.Context()

	reg := otc.NewRegistry(nil)
	fed, err := federation.Mount(ctx, reg, []federation.Upstream{{Name: "calc", URL: upstream + mount.PrefixOTC, Format: client.FormatOTC}}, nil)
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
		c, err := client.New(url, &client.Options{HTTPClient: &http.Client{Transport: tr}})
		require.NoError(b, err)
		b.Cleanup(func() { _ = c.Close() })
		call := func(ctx context.Context) error {
			_, err := c.Call(ctx, tool, args, nil)
			return err
		}
		require.NoError(b, call(ctx), name)
		return caller{name, call}
	}
	direct := newCaller("direct", upstream+mount.PrefixOTC, "Calculator.Add")
	gateway := newCaller("gateway", gw.URL+mount.PrefixOTC, "calc.Calculator_Add")
	for _, c := range []caller{direct, gateway} {
		runCaller(b, c, 100*time.Millisecond)
	}

	var ratios, p50s, p99s []float64
	for r := range *gatewayRounds {
		order := []caller{direct, gateway}
		if r%2 == 1 {
			order = []caller{gateway, direct}
		}
		rate := map[string]float64{}
		lat := map[string][]time.Duration{}
		for _, c := range order {
			rate[c.name] = runCaller(b, c, *clientTime).rate
			lat[c.name] = latencies(b, c, 300)
		}
		ratios = append(ratios, rate["gateway"]/rate["direct"])
		p50s = append(p50s, ms(pct(lat["gateway"], 50)-pct(lat["direct"], 50)))
		p99s = append(p99s, ms(pct(lat["gateway"], 99)-pct(lat["direct"], 99)))
	}
	b.ReportMetric(median(ratios), "x-direct")
	b.ReportMetric(median(p50s), "ms-added-p50")
	b.ReportMetric(median(p99s), "ms-added-p99")
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
