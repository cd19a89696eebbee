package benchmarks

import (
	"bytes"
	"context"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"regexp"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

var (
	loopRounds = flag.Int("loopback.rounds", 10, "BenchmarkLoopback: rounds, each of which runs every server once")
	loopTime   = flag.Duration("loopback.time", 300*time.Millisecond, "BenchmarkLoopback: how long each server runs in a round")
	loopConns  = flag.Int("loopback.conns", 16, "BenchmarkLoopback: concurrent keep-alive connections per server")
	loopOnly   = flag.String("loopback.servers", "", "BenchmarkLoopback: a regular expression choosing the servers besides the floor (for profiling one)")
)

// BenchmarkLoopback serves each server on a real TCP listener on
// 127.0.0.1 and calls it from this process over loopback.conns keep-alive
// connections, each a goroutine sending one call after another. It runs
// loopback.rounds rounds; in each, every server runs for loopback.time, in
// an order that rotates from round to round, so that a slow spell of a
// shared machine falls on all of them alike.
//
// It runs once whatever -benchtime says (use -benchtime 1x) and reports,
// per server: calls/s, the median over rounds; x-floor, the median of the
// per-round ratios of its calls/s to the floor's in the same round; and
// p50-µs and p99-µs, the latency percentiles of all its calls. Its ns/op
// is 1e9 / calls/s, the time per call at that concurrency.
func BenchmarkLoopback(b *testing.B) {
	ss := servers(b)
	if *loopOnly != "" {
		re := regexp.MustCompile(*loopOnly)
		ss = slices.DeleteFunc(ss, func(s server) bool { return s.name != "floor" && !re.MatchString(s.name) })
	}
	compare(b, ss, "x-floor")
}

// compare runs the loopback comparison of servers ss (see
// BenchmarkLoopback), each ratio (metric ratio) to the first server's
// calls/s in the same round.
func compare(b *testing.B, ss []server, ratio string) {
	targets := make([]*loopTarget, len(ss))
	for i, s := range ss {
		targets[i] = startTarget(b, s, *loopConns)
	}
	// Warm up: open every connection and let each server settle.
	for _, t := range targets {
		t.run(b, 100*time.Millisecond)
	}
	rates := make([][]float64, len(targets))  // per server, per round
	ratios := make([][]float64, len(targets)) // per server, per round, to the first
	latencies := make([][]time.Duration, len(targets))
	for r := range *loopRounds {
		round := make([]float64, len(targets))
		for k := range targets {
			i := (k + r) % len(targets)
			rate, lat := targets[i].run(b, *loopTime)
			round[i] = rate
			latencies[i] = append(latencies[i], lat...)
		}
		for i, rate := range round {
			rates[i] = append(rates[i], rate)
			ratios[i] = append(ratios[i], rate/round[0])
		}
	}
	for i, t := range targets {
		rate := median(rates[i])
		x := median(ratios[i])
		slices.Sort(latencies[i])
		p50, p99 := percentile(latencies[i], 0.50), percentile(latencies[i], 0.99)
		b.Run("server="+t.s.name, func(b *testing.B) {
			b.ReportMetric(1e9/rate, "ns/op")
			b.ReportMetric(rate, "calls/s")
			b.ReportMetric(x, ratio)
			b.ReportMetric(float64(p50.Nanoseconds())/1e3, "p50-µs")
			b.ReportMetric(float64(p99.Nanoseconds())/1e3, "p99-µs")
		})
	}
}

// loopTarget is one server listening on loopback, and its clients.
type loopTarget struct {
	s       server
	url     string
	client  *http.Client
	headers []http.Header // per connection, with its session's when it has one
}

func startTarget(b *testing.B, s server, conns int) *loopTarget {
	b.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(b, err)
	srv := &http.Server{Handler: s.handler, ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = srv.Serve(ln) }()
	b.Cleanup(func() { _ = srv.Shutdown(context.Background()) })

	tr := &http.Transport{MaxIdleConnsPerHost: conns, MaxConnsPerHost: conns, DisableCompression: true}
	b.Cleanup(tr.CloseIdleConnections)
	t := &loopTarget{s: s, url: "http://" + ln.Addr().String(), client: &http.Client{Transport: tr}}
	for range conns {
		h := s.header
		if s.open != nil {
			session, err := s.open(overHTTP(t.client, t.url))
			require.NoError(b, err, s.name)
			h = merge(h, session)
		}
		t.headers = append(t.headers, h)
	}
	return t
}

// run calls the server from every connection's goroutine for d and
// returns the calls completed per second and each call's latency.
func (t *loopTarget) run(b *testing.B, d time.Duration) (float64, []time.Duration) {
	var (
		wg    sync.WaitGroup
		mu    sync.Mutex
		all   []time.Duration
		fails []error
	)
	start := time.Now()
	deadline := start.Add(d)
	for _, h := range t.headers {
		wg.Go(func() {
			lat, err := t.loop(h, deadline)
			mu.Lock()
			defer mu.Unlock()
			all = append(all, lat...)
			if err != nil {
				fails = append(fails, err)
			}
		})
	}
	wg.Wait()
	elapsed := time.Since(start)
	if len(fails) > 0 {
		b.Fatalf("%s: %v", t.s.name, fails[0])
	}
	return float64(len(all)) / elapsed.Seconds(), all
}

// loop sends calls one after another until deadline, checking every
// status and the first answer's body.
func (t *loopTarget) loop(h http.Header, deadline time.Time) ([]time.Duration, error) {
	lat := make([]time.Duration, 0, 1024)
	var buf bytes.Buffer
	body := bytes.NewReader(t.s.body)
	for first := true; time.Now().Before(deadline); first = false {
		body.Reset(t.s.body)
		req, err := http.NewRequest(http.MethodPost, t.url+t.s.path, body)
		if err != nil {
			return lat, err
		}
		req.Header = h
		began := time.Now()
		resp, err := t.client.Do(req)
		if err != nil {
			return lat, err
		}
		buf.Reset()
		_, err = io.Copy(&buf, resp.Body)
		resp.Body.Close()
		lat = append(lat, time.Since(began))
		switch {
		case err != nil:
			return lat, err
		case resp.StatusCode != http.StatusOK:
			return lat, fmt.Errorf("status %d: %.200s", resp.StatusCode, buf.Bytes())
		case first && !t.s.want.Match(buf.Bytes()):
			return lat, fmt.Errorf("unexpected answer: %.200s", buf.Bytes())
		}
	}
	return lat, nil
}

func median(xs []float64) float64 {
	s := slices.Sorted(slices.Values(xs))
	if n := len(s); n%2 == 1 {
		return s[n/2]
	} else {
		return (s[n/2-1] + s[n/2]) / 2
	}
}

// percentile returns the p-quantile of sorted, by the nearest rank.
func percentile(sorted []time.Duration, p float64) time.Duration {
	if len(sorted) == 0 {
		return 0
	}
	i := int(p*float64(len(sorted))+0.5) - 1
	return sorted[max(0, min(i, len(sorted)-1))]
}
