package ratelimit_test

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/otcgo/otc"
	"github.com/otcgo/otc/auth"
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
	alternate(b, otc.NewHandler(testkit.NewAddRegistry(b), nil), otc.NewHandler(testkit.NewAddRegistry(b, limit), nil), nil, "limited/bare")
}

// BenchmarkGuard times an OTC call with a good API key, in process,
// authenticated by the API keys alone and by them behind Guard, in
// alternating blocks, and reports the guarded call's time as a ratio to
// the other's: what the bound on failed authentications costs a good
// call.
//
//	go test -run '^$' -bench Guard ./ratelimit
func BenchmarkGuard(b *testing.B) {
	keys, err := auth.NewAPIKeyAuth(map[string]string{"ci": "bench-key-7d1e0c9a4b2f5863"})
	if err != nil {
		b.Fatal(err)
	}
	guarded, err := ratelimit.Guard(keys, nil)
	if err != nil {
		b.Fatal(err)
	}
	reg := testkit.NewAddRegistry(b)
	alternate(b, otc.NewHandler(reg, &otc.HandlerOptions{Authenticator: keys}), otc.NewHandler(reg, &otc.HandlerOptions{Authenticator: guarded}),
		http.Header{otc.HeaderAPIKey: {"bench-key-7d1e0c9a4b2f5863"}}, "guarded/keys")
}

// alternate calls Calculator.Add through base and other in alternating
// blocks of 256 calls, with header, and reports other's time as a ratio
// to base's under metric.
func alternate(b *testing.B, base, other http.Handler, header http.Header, metric string) {
	const body = `{"request":{"tool_id":"Calculator.Add","input":{"a":10,"b":5}}}`
	call := func(h http.Handler) {
		req := httptest.NewRequest(http.MethodPost, "/tools/call", strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		for k, v := range header {
			req.Header.Set(k, v[0])
		}
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		if rec.Code != http.StatusOK {
			b.Fatalf("status %d: %s", rec.Code, rec.Body.String())
		}
	}
	const block = 256
	var tBase, tOther time.Duration
	for i := 0; b.Loop(); i++ {
		if i%block != 0 {
			continue
		}
		start := time.Now()
		for range block {
			call(base)
		}
		mid := time.Now()
		for range block {
			call(other)
		}
		tBase, tOther = tBase+mid.Sub(start), tOther+time.Since(mid)
	}
	if tBase > 0 {
		b.ReportMetric(float64(tOther)/float64(tBase), metric)
	}
}
