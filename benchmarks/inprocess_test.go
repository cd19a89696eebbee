package benchmarks

import (
	"bytes"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/otcgo/otc"
	"github.com/otcgo/otc/mcp"
	"github.com/otcgo/otc/rest"
)

// The in-process benchmarks hand each server a shallow copy of one
// prepared request, with its body rewound, and a fresh recorder per call:
// no network, so the figures are the servers' own cost. Compare the
// servers with benchstat's -col /server (see the Makefile's bench-peers).

// prepare returns the request s is sent, with its session's headers when
// it has one, after checking once that s answers it correctly.
func prepare(tb testing.TB, s server) *http.Request {
	tb.Helper()
	header := s.header
	if s.open != nil {
		session, err := s.open(inProcess(s.handler))
		require.NoError(tb, err)
		header = merge(header, session)
	}
	req := httptest.NewRequest(http.MethodPost, s.path, nil)
	req.Header = header
	req.ContentLength = int64(len(s.body))
	rec := serve(s.handler, req, bytes.NewReader(s.body))
	require.Equal(tb, http.StatusOK, rec.Code, "%s", rec.Body.Bytes())
	require.Regexp(tb, s.want, rec.Body.String())
	return req
}

func serve(h http.Handler, proto *http.Request, body io.Reader) *httptest.ResponseRecorder {
	req := *proto
	req.Body = io.NopCloser(body)
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, &req)
	return rec
}

func benchServe(b *testing.B, h http.Handler, proto *http.Request, body []byte) {
	rd := bytes.NewReader(body)
	b.ReportAllocs()
	for b.Loop() {
		rd.Reset(body)
		if rec := serve(h, proto, rd); rec.Code != http.StatusOK {
			b.Fatalf("status %d: %.300s", rec.Code, rec.Body.Bytes())
		}
	}
}

// BenchmarkInProcess times one call through each server's http.Handler.
func BenchmarkInProcess(b *testing.B) {
	for _, s := range servers(b) {
		proto := prepare(b, s)
		b.Run("server="+s.name, func(b *testing.B) { benchServe(b, s.handler, proto, s.body) })
	}
}

// sizedRegistries keeps the registries of BenchmarkRegistrySize from one
// run to the next (-count): registering 30,000 tools takes seconds.
var sizedRegistries sync.Map // int → *otc.Registry

func sizedRegistry(tb testing.TB, n int) *otc.Registry {
	if reg, ok := sizedRegistries.Load(n); ok {
		return reg.(*otc.Registry)
	}
	reg := newRegistry(tb, n, "1.0.0", "1.1.0", "2.0.0")
	require.Len(tb, reg.Tools(), 1+(n-1)*3)
	sizedRegistries.Store(n, reg)
	return reg
}

// BenchmarkRegistrySize times the call of BenchmarkInProcess through the
// OTC handler as the registry grows: Calculator.Add@1.0.0 alone, then
// beside up to 9,999 other tools of three versions each. interleaved runs
// the smallest and the largest in alternating blocks of 256 calls and
// reports the ratio of their times ("10000/1").
func BenchmarkRegistrySize(b *testing.B) {
	sizes := []int{1, 100, 10_000}
	handlers := make([]http.Handler, len(sizes))
	var proto *http.Request
	for i, n := range sizes {
		reg := sizedRegistry(b, n)
		s := server{name: "otc", handler: otc.NewHandler(reg, nil), path: "/call", body: []byte(otcCall), header: jsonHeader(), want: wantOTC}
		proto = prepare(b, s)
		handlers[i] = s.handler
		b.Run("tools="+strconv.Itoa(n), func(b *testing.B) { benchServe(b, s.handler, proto, s.body) })
	}
	b.Run("interleaved", func(b *testing.B) {
		body := []byte(otcCall)
		small, large := handlers[0], handlers[len(handlers)-1]
		rd := bytes.NewReader(nil)
		const block = 256
		var tSmall, tLarge time.Duration
		for n := 0; b.Loop(); n++ {
			if n%block != 0 {
				continue
			}
			for k := range 2 {
				h, spent := small, &tSmall
				if (k+n/block)%2 == 1 {
					h, spent = large, &tLarge
				}
				start := time.Now()
				for range block {
					rd.Reset(body)
					serve(h, proto, rd)
				}
				*spent += time.Since(start)
			}
		}
		if tSmall > 0 {
			b.ReportMetric(float64(tLarge)/float64(tSmall), strconv.Itoa(sizes[len(sizes)-1])+"/1")
		}
	})
}

// BenchmarkListTools times listing 1,000 tools: GET /tools of the OTC
// handler and of the REST view, MCP tools/list (every page), and a
// hand-written handler that marshals the definitions for each request.
func BenchmarkListTools(b *testing.B) {
	reg := newRegistry(b, 1000, "1.0.0")
	require.Len(b, reg.Tools(), 1000)
	get := func(name string, h http.Handler, path string) {
		proto := httptest.NewRequest(http.MethodGet, path, nil)
		rec := serve(h, proto, http.NoBody)
		require.Equal(b, http.StatusOK, rec.Code)
		b.Run("server="+name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if rec := serve(h, proto, http.NoBody); rec.Code != http.StatusOK {
					b.Fatalf("status %d", rec.Code)
				}
			}
		})
	}
	get("floor", floorListHandler(reg.Tools()), "/tools")
	get("otc", otc.NewHandler(reg, nil), "/tools")
	get("otc-rest", rest.NewHandler(reg, nil), "/tools")

	list := server{name: "otc-mcp", handler: mcp.NewHandler(reg, &mcp.Options{PageSize: -1}), path: "/mcp",
		body: []byte(`{"jsonrpc":"2.0","id":1,"method":"tools/list"}`), header: mcpHeader("2025-11-25")}
	proto := httptest.NewRequest(http.MethodPost, list.path, nil)
	proto.Header = list.header
	rec := serve(list.handler, proto, bytes.NewReader(list.body))
	require.Equal(b, http.StatusOK, rec.Code)
	require.Equal(b, 1000, bytes.Count(rec.Body.Bytes(), []byte(`"inputSchema"`)))
	b.Run("server=otc-mcp", func(b *testing.B) { benchServe(b, list.handler, proto, list.body) })
}

// BenchmarkInProcessRatio runs the floors and otc's handlers of
// BenchmarkInProcess in alternating blocks of 256 calls, in an order that
// rotates from block to block, and reports each one's time as a ratio to
// the floor's (metric "<server>/floor"), which drifts in the machine's
// speed during a run do not skew. The other libraries, tens of times
// slower, would make the blocks long; their ratios come from
// BenchmarkInProcess.
func BenchmarkInProcessRatio(b *testing.B) {
	var ss []server
	for _, s := range servers(b) {
		if strings.HasPrefix(s.name, "floor") || strings.HasPrefix(s.name, "otc") {
			ss = append(ss, s)
		}
	}
	protos := make([]*http.Request, len(ss))
	for i, s := range ss {
		protos[i] = prepare(b, s)
	}
	const block = 256
	spent := make([]time.Duration, len(ss))
	rd := bytes.NewReader(nil)
	for n := 0; b.Loop(); n++ {
		if n%block != 0 {
			continue
		}
		for k := range ss {
			i := (k + n/block) % len(ss)
			s := ss[i]
			start := time.Now()
			for range block {
				rd.Reset(s.body)
				if rec := serve(s.handler, protos[i], rd); rec.Code != http.StatusOK {
					b.Fatalf("%s: status %d: %.300s", s.name, rec.Code, rec.Body.Bytes())
				}
			}
			spent[i] += time.Since(start)
		}
	}
	if spent[0] > 0 {
		for i, s := range ss[1:] {
			b.ReportMetric(float64(spent[i+1])/float64(spent[0]), s.name+"/floor")
		}
	}
}

// BenchmarkA2AvsOTC times SendMessage to Calculator.Add against the OTC
// handler's call of it, in alternating blocks of 256 calls whose order
// rotates, and reports A2A's calls/s as a ratio to OTC's (metric
// "a2a/otc": 1 is as fast; issue 41 asks for at least 0.9).
func BenchmarkA2AvsOTC(b *testing.B) {
	var ss []server
	for _, s := range servers(b) {
		if s.name == "otc" || s.name == "otc-a2a" {
			ss = append(ss, s)
		}
	}
	require.Len(b, ss, 2)
	protos := []*http.Request{prepare(b, ss[0]), prepare(b, ss[1])}
	const block = 256
	var spent [2]time.Duration
	rd := bytes.NewReader(nil)
	for n := 0; b.Loop(); n++ {
		if n%block != 0 {
			continue
		}
		for k := range 2 {
			i := (k + n/block) % 2
			start := time.Now()
			for range block {
				rd.Reset(ss[i].body)
				if rec := serve(ss[i].handler, protos[i], rd); rec.Code != http.StatusOK {
					b.Fatalf("%s: status %d: %.300s", ss[i].name, rec.Code, rec.Body.Bytes())
				}
			}
			spent[i] += time.Since(start)
		}
	}
	if spent[1] > 0 {
		b.ReportMetric(float64(spent[0])/float64(spent[1]), "a2a/otc")
	}
}
