package ratelimit_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/otcgo/otc"
	"github.com/otcgo/otc/caller"
	"github.com/otcgo/otc/internal/testkit"
	"github.com/otcgo/otc/ratelimit"
)

// clock is a settable clock.
type clock struct{ t atomic.Int64 }

func (c *clock) now() time.Time          { return time.Unix(0, c.t.Load()) }
func (c *clock) advance(d time.Duration) { c.t.Add(int64(d)) }

// TestMemoryStoreGCRA: Burst calls at once, then one per 1/Rate; a refused
// call says how long until one fits, and takes nothing.
func TestMemoryStoreGCRA(t *testing.T) {
	c := &clock{}
	c.t.Store(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC).UnixNano())
	s := ratelimit.NewMemoryStore(&ratelimit.MemoryStoreOptions{Now: c.now})
	ctx := context.Background()
	l := ratelimit.Limit{Rate: 2, Burst: 3} // one each 500ms, 3 at once
	for i := range 3 {
		ok, _, err := s.Take(ctx, "k", l)
		require.NoError(t, err)
		assert.True(t, ok, "call %d of the burst", i+1)
	}
	ok, after, err := s.Take(ctx, "k", l)
	require.NoError(t, err)
	assert.False(t, ok)
	assert.Equal(t, 500*time.Millisecond, after)
	for range 5 { // refused calls take nothing
		ok, after, _ = s.Take(ctx, "k", l)
		assert.False(t, ok)
		assert.Equal(t, 500*time.Millisecond, after)
	}
	c.advance(499 * time.Millisecond)
	ok, after, _ = s.Take(ctx, "k", l)
	assert.False(t, ok)
	assert.Equal(t, time.Millisecond, after)
	c.advance(time.Millisecond)
	ok, _, _ = s.Take(ctx, "k", l)
	assert.True(t, ok, "one more after 1/Rate")
	ok, _, _ = s.Take(ctx, "other", l)
	assert.True(t, ok, "each key has its own allowance")
	c.advance(10 * time.Second)
	for range 3 {
		ok, _, _ = s.Take(ctx, "k", l)
		assert.True(t, ok, "a quiet spell gives the burst back, no more")
	}
	ok, _, _ = s.Take(ctx, "k", l)
	assert.False(t, ok)

	_, _, err = s.Take(ctx, "k", ratelimit.Limit{})
	assert.ErrorIs(t, err, ratelimit.ErrBadLimit)
}

// TestMemoryStoreBounded: the store keeps at most MaxKeys keys, dropping
// those whose allowance is full first.
func TestMemoryStoreBounded(t *testing.T) {
	c := &clock{}
	s := ratelimit.NewMemoryStore(&ratelimit.MemoryStoreOptions{MaxKeys: 64 * 4, Now: c.now})
	ctx := context.Background()
	l := ratelimit.Limit{Rate: 1}
	for i := range 10000 {
		ok, _, err := s.Take(ctx, string(rune('a'+i%26))+time.Duration(i).String(), l)
		require.NoError(t, err)
		require.True(t, ok)
	}
	assert.LessOrEqual(t, s.Len(), 64*4)
}

// TestMemoryStoreConcurrent: callers taking at once from one allowance
// are admitted exactly Burst times.
func TestMemoryStoreConcurrent(t *testing.T) {
	s := ratelimit.NewMemoryStore(nil)
	var admitted atomic.Int64
	var wg sync.WaitGroup
	for range 200 {
		wg.Go(func() {
			if ok, _, _ := s.Take(context.Background(), "k", ratelimit.Limit{Rate: 0.001, Burst: 50}); ok {
				admitted.Add(1)
			}
		})
	}
	wg.Wait()
	assert.Equal(t, int64(50), admitted.Load())
}

// TestNewRefuses: limits that cannot be kept are refused when the
// middleware is made, saying why.
func TestNewRefuses(t *testing.T) {
	for _, c := range []struct {
		opts ratelimit.Options
		want string
	}{
		{ratelimit.Options{All: ratelimit.Limit{Rate: -1}}, "All.Rate is -1"},
		{ratelimit.Options{Tools: map[string]ratelimit.Limit{"Pay.Refund@1.0.0": {Rate: 1}}}, "without a version"},
		{ratelimit.Options{All: ratelimit.Limit{Rate: 1e-9}}, "less than one in 11 days"},
		{ratelimit.Options{All: ratelimit.Limit{Rate: 1, Burst: 2_000_000}}, "at most 1,000,000"},
	} {
		_, err := ratelimit.New(&c.opts)
		require.Error(t, err)
		assert.Contains(t, err.Error(), c.want)
	}
}

// serve serves reg over OTC: anonymous callers, or, withKeys, callers
// named by their API key; behind proxies, when given.
func serve(t *testing.T, reg *otc.Registry, withKeys bool, proxies ...netip.Prefix) *httptest.Server {
	t.Helper()
	opts := &otc.HandlerOptions{}
	if withKeys {
		opts.Authenticator = otc.AuthenticatorFunc(func(r *http.Request) (*otc.Identity, error) {
			return &otc.Identity{Method: "api_key", Name: r.Header.Get(otc.HeaderAPIKey)}, nil
		})
	}
	srv := httptest.NewServer(caller.Handler(otc.NewHandler(reg, opts), &caller.Options{TrustedProxies: proxies}))
	t.Cleanup(srv.Close)
	return srv
}

// statuses makes n calls of Calculator.Add with header kv, and returns
// their statuses.
func statuses(t *testing.T, url string, n int, kv ...string) []int {
	t.Helper()
	var out []int
	for range n {
		req, err := http.NewRequest(http.MethodPost, url+"/tools/call", strings.NewReader(`{"request":{"tool_id":"Calculator.Add","input":{"a":1,"b":2}}}`))
		require.NoError(t, err)
		req.Header.Set("Content-Type", "application/json")
		for i := 0; i+1 < len(kv); i += 2 {
			req.Header.Set(kv[i], kv[i+1])
		}
		resp, err := http.DefaultClient.Do(req)
		require.NoError(t, err)
		resp.Body.Close()
		out = append(out, resp.StatusCode)
	}
	return out
}

// TestCallers: each identity has its allowance; anonymous callers are
// their address, read from X-Forwarded-For only when the peer is a
// trusted proxy.
func TestCallers(t *testing.T) {
	limited := func(withKeys bool, proxies ...netip.Prefix) *httptest.Server {
		mw, err := ratelimit.New(&ratelimit.Options{All: ratelimit.Limit{Rate: 0.01, Burst: 2}})
		require.NoError(t, err)
		return serve(t, testkit.NewAddRegistry(t, mw), withKeys, proxies...)
	}
	const ok, over = http.StatusOK, http.StatusTooManyRequests

	srv := limited(true)
	assert.Equal(t, []int{ok, ok, over}, statuses(t, srv.URL, 3, otc.HeaderAPIKey, "alice"))
	assert.Equal(t, []int{ok, ok, over}, statuses(t, srv.URL, 3, otc.HeaderAPIKey, "bob"), "bob's allowance is his own")

	srv = limited(false)
	assert.Equal(t, []int{ok, ok, over}, statuses(t, srv.URL, 3), "anonymous: the peer's address")
	assert.Equal(t, []int{over}, statuses(t, srv.URL, 1, "X-Forwarded-For", "203.0.113.9"), "X-Forwarded-For from an untrusted peer is ignored")

	srv = limited(false, netip.MustParsePrefix("127.0.0.0/8"))
	assert.Equal(t, []int{ok, ok, over}, statuses(t, srv.URL, 3, "X-Forwarded-For", "203.0.113.9"))
	assert.Equal(t, []int{ok, ok, over}, statuses(t, srv.URL, 3, "X-Forwarded-For", "203.0.113.10"), "another client behind the trusted proxy")
	assert.Equal(t, []int{over}, statuses(t, srv.URL, 1, "X-Forwarded-For", "203.0.113.10, 127.0.0.5"), "the rightmost address that is not a trusted proxy")
	assert.Equal(t, []int{ok}, statuses(t, srv.URL, 1, "X-Forwarded-For", "203.0.113.9, 198.51.100.7"), "a client cannot pose as another by writing the header's left part")

	// The forms proxies write: with a port, bracketed IPv6.
	assert.Equal(t, []int{over}, statuses(t, srv.URL, 1, "X-Forwarded-For", "203.0.113.10:5555"), "an address with a port is that address")
	assert.Equal(t, []int{ok, ok, over}, statuses(t, srv.URL, 3, "X-Forwarded-For", "[2001:db8:1:2::1]:443"))
	// An entry that is no address is its own caller, never the proxy:
	// it cannot starve the proxy's other clients, nor they it.
	assert.Equal(t, []int{ok, ok, over}, statuses(t, srv.URL, 3, "X-Forwarded-For", "010.0.0.1"))
	assert.Equal(t, []int{ok, ok, over}, statuses(t, srv.URL, 3, "X-Forwarded-For", "0x7f.1"))
	assert.Equal(t, []int{ok, ok}, statuses(t, srv.URL, 2, "X-Forwarded-For", "unknown"))
	assert.Equal(t, []int{ok, ok, over}, statuses(t, srv.URL, 3), "the proxy's own allowance is untouched")
}

// TestIPv6Networks: the addresses of one IPv6 /64 are one caller, so a
// host cannot buy fresh allowances with fresh addresses; another /64 is
// another caller. IPv4 callers are their address.
func TestIPv6Networks(t *testing.T) {
	mw, err := ratelimit.New(&ratelimit.Options{All: ratelimit.Limit{Rate: 0.01, Burst: 2}})
	require.NoError(t, err)
	srv := serve(t, testkit.NewAddRegistry(t, mw), false, netip.MustParsePrefix("127.0.0.0/8"))
	admitted := 0
	for i := range 40 {
		if s := statuses(t, srv.URL, 1, "X-Forwarded-For", fmt.Sprintf("2001:db8:aa:bb:%x::%x", i, i+1)); s[0] == http.StatusOK {
			admitted++
		}
	}
	assert.Equal(t, 2, admitted, "40 addresses of one /64: its burst of 2")
	assert.Equal(t, []int{http.StatusOK}, statuses(t, srv.URL, 1, "X-Forwarded-For", "2001:db8:aa:bc::1"), "the next /64 is another caller")
	assert.Equal(t, []int{http.StatusOK}, statuses(t, srv.URL, 1, "X-Forwarded-For", "198.51.100.1"))
	assert.Equal(t, []int{http.StatusOK}, statuses(t, srv.URL, 1, "X-Forwarded-For", "198.51.100.2"), "IPv4: each address")
}

// body makes one call of Calculator.Add, and returns its answer's body.
func body(t *testing.T, url string) string {
	t.Helper()
	resp, err := http.Post(url+"/tools/call", "application/json", strings.NewReader(`{"request":{"tool_id":"Calculator.Add","input":{"a":1,"b":2}}}`))
	require.NoError(t, err)
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	return string(b)
}

// TestRefusalsShowNoInternals: a refusal says which limit and when to try
// again, never the key the limiter keeps for the caller, nor the store's
// error; both go to the log with the call id.
func TestRefusalsShowNoInternals(t *testing.T) {
	var logs testkit.SyncBuffer
	logger := slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	mw, err := ratelimit.New(&ratelimit.Options{All: ratelimit.Limit{Rate: 0.001, Burst: 1}, Logger: logger})
	require.NoError(t, err)
	srv := serve(t, testkit.NewAddRegistry(t, mw), false)
	body(t, srv.URL)
	b := body(t, srv.URL)
	assert.Contains(t, b, "1 at once; try again in")
	assert.NotContains(t, b, "127.0.0.1")
	assert.NotContains(t, b, "a:")
	assert.Contains(t, logs.String(), "caller=a:127.0.0.1")
	assert.Contains(t, logs.String(), "call_id=")

	mw, err = ratelimit.New(&ratelimit.Options{All: ratelimit.Limit{Rate: 1}, Store: failing{}, Logger: logger})
	require.NoError(t, err)
	srv = serve(t, testkit.NewAddRegistry(t, mw), false)
	b = body(t, srv.URL)
	assert.Contains(t, b, "could not check the caller's rate limit just now")
	assert.NotContains(t, b, "connection refused")
	assert.Contains(t, logs.String(), `error="connection refused"`)
}

// failing is a store that cannot be reached.
type failing struct{}

func (failing) Take(context.Context, string, ratelimit.Limit) (bool, time.Duration, error) {
	return false, 0, errors.New("connection refused")
}

// TestStoreFails: a store that fails refuses the call as unavailable
// (503), unless FailOpen admits it.
func TestStoreFails(t *testing.T) {
	for _, open := range []bool{false, true} {
		mw, err := ratelimit.New(&ratelimit.Options{All: ratelimit.Limit{Rate: 1}, Store: failing{}, FailOpen: open, Logger: slog.New(slog.DiscardHandler)})
		require.NoError(t, err)
		srv := serve(t, testkit.NewAddRegistry(t, mw), false)
		want := http.StatusServiceUnavailable
		if open {
			want = http.StatusOK
		}
		assert.Equal(t, []int{want}, statuses(t, srv.URL, 1), "FailOpen %v", open)
	}
}

func TestParseLimit(t *testing.T) {
	for _, bad := range []string{"", "20", "20/d", "x/s", "0/s", "-1/s", "Inf/s", "20/s,burst=0", "20/s,max=3", "20/s,burst=x"} {
		l, err := ratelimit.ParseLimit(bad)
		assert.Error(t, err, "%q gave %+v", bad, l)
		assert.Contains(t, err.Error(), "such as 20/s", bad)
	}
	for spec, want := range map[string]ratelimit.Limit{
		"20/s":           {Rate: 20, Burst: 20},
		" 600/m ":        {Rate: 10, Burst: 600},
		"3600/h,burst=5": {Rate: 1, Burst: 5},
		"0.5/s":          {Rate: 0.5, Burst: 1},
		"1e12/s":         {Rate: 1e12, Burst: math.MaxInt32},
	} {
		l, err := ratelimit.ParseLimit(spec)
		require.NoError(t, err, spec)
		assert.Equal(t, want, l, spec)
	}
}

// TestMemoryCharge: a charge takes from a key's allowance whether or not
// it fits, never more than one burst below nothing, and the key's next
// calls wait the longer; another key is untouched.
func TestMemoryCharge(t *testing.T) {
	t.Parallel()
	now := time.Unix(1_000_000, 0)
	s := ratelimit.NewMemoryStore(&ratelimit.MemoryStoreOptions{Now: func() time.Time { return now }})
	l := ratelimit.Limit{Rate: 10, Burst: 4}
	ctx := t.Context()
	require.NoError(t, s.Charge(ctx, "a", l, 2))
	for i := range 2 {
		ok, _, err := s.Take(ctx, "a", l)
		require.NoError(t, err)
		assert.True(t, ok, "call %d of what the charge left", i+1)
	}
	ok, after, err := s.Take(ctx, "a", l)
	require.NoError(t, err)
	assert.False(t, ok)
	assert.Equal(t, 100*time.Millisecond, after)

	require.NoError(t, s.Charge(ctx, "a", l, 1000), "charged far past its burst")
	_, after, _ = s.Take(ctx, "a", l)
	assert.Equal(t, 500*time.Millisecond, after, "one burst below nothing at most: (4+4+1-4) intervals")
	ok, _, _ = s.Take(ctx, "b", l)
	assert.True(t, ok, "another key's allowance is its own")
	assert.ErrorIs(t, s.Charge(ctx, "a", ratelimit.Limit{}, 1), ratelimit.ErrBadLimit)
}
