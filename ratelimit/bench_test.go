package ratelimit_test

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/otcgo/otc"
	"github.com/otcgo/otc/internal/testkit"
	"github.com/otcgo/otc/ratelimit"
)

// BenchmarkLimiter times an OTC call of Calculator.Add through the
// handler, in process, without a rate limit and with one in memory
// (never reached): a limit of every call ("all"), and that and a limit
// of the tool ("all+tool"). It runs them in alternating blocks of 256
// calls, and reports each limited call's time as a ratio to the bare
// one's.
//
//	go test -run '^$' -bench Limiter ./ratelimit
func BenchmarkLimiter(b *testing.B) {
	high := ratelimit.Limit{Rate: 1e9, Burst: 1_000_000}
	for _, c := range []struct {
		name string
		opts ratelimit.Options
	}{
		{"all", ratelimit.Options{All: high}},
		{"all+tool", ratelimit.Options{All: high, Tools: map[string]ratelimit.Limit{"Calculator.Add": high}}},
	} {
		b.Run(c.name, func(b *testing.B) { benchLimiter(b, &c.opts) })
	}
}

func benchLimiter(b *testing.B, opts *ratelimit.Options) {
	limit, err := ratelimit.New(opts)
	if err != nil {
		b.Fatal(err)
	}
	bare := otc.NewHandler(testkit.NewAddRegistry(b), nil)
	limited := otc.NewHandler(testkit.NewAddRegistry(b, limit), nil)
	const body = `{"request":{"tool_id":"Calculator.Add","input":{"a":10,"b":5}}}`
	call := func(h http.Handler) {
		req := httptest.NewRequest(http.MethodPost, "/tools/call", strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		if rec.Code != http.StatusOK {
			b.Fatalf("status %d: %s", rec.Code, rec.Body.String())
		}
	}
	const block = 256
	var tBare, tLimited time.Duration
	for i := 0; b.Loop(); i++ {
		if i%block != 0 {
			continue
		}
		start := time.Now()
		for range block {
			call(bare)
		}
		mid := time.Now()
		for range block {
			call(limited)
		}
		tBare, tLimited = tBare+mid.Sub(start), tLimited+time.Since(mid)
	}
	if tBare > 0 {
		b.ReportMetric(float64(tLimited)/float64(tBare), "limited/bare")
	}
}
