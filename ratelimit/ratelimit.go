// Package ratelimit limits how many calls each caller makes, over every
// wire format at once: a middleware of the registry
// ([otc.RegistryOptions.Middleware]) that admits a caller's call while
// the caller is within its limit, and refuses it otherwise with an
// [*otc.Error] of class [otc.CodeRateLimited] saying when to try again.
// Each format renders the refusal in its own shape: 429 with Retry-After
// over OTC and the REST view, a tool error the model may retry after the
// delay over MCP, and a failed task saying so over A2A. The call log and
// the OpenTelemetry middleware count such calls under the outcome
// [otc.OutcomeRateLimited].
//
//	limit, err := ratelimit.New(&ratelimit.Options{
//		All:   ratelimit.Limit{Rate: 10, Burst: 20},                 // 10 calls/s per caller, 20 at once
//		Tools: map[string]ratelimit.Limit{"Payments.Refund": {Rate: 1}}, // and 1/s for refunds
//	})
//	reg := otc.NewRegistry(&otc.RegistryOptions{Middleware: []otc.Middleware{limit}})
//
// The limits are kept by the generic cell rate algorithm (GCRA): a caller
// may make Burst calls at once, and then one each 1/Rate seconds; a call
// refused takes nothing from the allowance. The state is one timestamp
// per caller and limit, kept in a [Store]: in the process
// ([NewMemoryStore], the default), or in Redis for every replica at once
// (redisstore.NewRateStore in module github.com/otcgo/otc/redisstore), so
// that a caller's limit holds however a balancer spreads its calls.
//
// # Who is a caller
//
// A caller that authenticated is its identity (the key tasks.Owner gives
// it: the token's issuer and subject, or the API key's name). A caller
// without one is its client address: the TCP peer's address, or, when
// that peer is one of Options.TrustedProxies (a load balancer), the
// address the proxies say they received the request from in
// X-Forwarded-For (the rightmost address not itself a trusted proxy).
// X-Forwarded-For is never read from a peer that is not a trusted proxy,
// since any client can write it. Behind a balancer that is not listed,
// every anonymous caller is the balancer, and shares one limit. A call
// that did not come over HTTP and names no identity is the caller
// "local".
package ratelimit

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math"
	"net"
	"net/http"
	"net/netip"
	"strings"
	"time"

	"github.com/otcgo/otc"
	"github.com/otcgo/otc/tasks"
)

// Limit is a rate limit: Rate calls per second on average, and Burst at
// once.
type Limit struct {
	// Rate is how many calls per second a caller makes on average. Zero
	// means no limit.
	Rate float64
	// Burst is how many calls a caller may make at once, above the rate,
	// after a quiet spell. Zero or less means 1.
	Burst int
}

// PerMinute returns the limit of n calls a minute, up to n at once.
func PerMinute(n int) Limit { return Limit{Rate: float64(n) / 60, Burst: n} }

// Options configures [New].
type Options struct {
	// All limits every caller's calls, whatever the tool. The zero
	// value means no such limit.
	All Limit
	// Tools limits every caller's calls of a tool, by tool id without a
	// version ("Payments.Refund"), in addition to All: a call must fit
	// both. A call to a tool not named here counts against All only.
	Tools map[string]Limit
	// Store keeps the limits' state. Nil means a [MemoryStore] of this
	// process with its defaults; several replicas share one in Redis.
	Store Store
	// TrustedProxies are the peers (load balancers, reverse proxies)
	// whose X-Forwarded-For header names the client of an anonymous call.
	// Nil means none: an anonymous caller is its TCP peer.
	TrustedProxies []netip.Prefix
	// FailOpen admits a call when the store fails (Redis unreachable),
	// logging it; the default refuses it as unavailable, so that a
	// failing store cannot lift the limit.
	FailOpen bool
	// Logger receives the store's failures. Nil means slog.Default().
	Logger *slog.Logger
}

// A Store keeps the state of rate limits: when each caller's next call
// fits its limit (GCRA's "theoretical arrival time").
type Store interface {
	// Take takes one call from key's allowance under limit l, and
	// reports whether the call fits; when it does not, retryAfter is how
	// long until it would. A refused call takes nothing.
	Take(ctx context.Context, key string, l Limit) (ok bool, retryAfter time.Duration, err error)
}

// New returns the middleware that applies opts's limits.
func New(opts *Options) (otc.Middleware, error) {
	if opts == nil {
		opts = &Options{}
	}
	if err := checkLimit("All", opts.All); err != nil {
		return nil, err
	}
	for id, l := range opts.Tools {
		if err := checkLimit(fmt.Sprintf("Tools[%q]", id), l); err != nil {
			return nil, err
		}
		if strings.Contains(id, "@") {
			return nil, fmt.Errorf("ratelimit: Tools[%q]: name the tool by its id without a version: every version shares the limit", id)
		}
	}
	rl := &limiter{all: opts.All, tools: opts.Tools, store: opts.Store, proxies: opts.TrustedProxies, failOpen: opts.FailOpen, logger: opts.Logger}
	if rl.store == nil {
		rl.store = NewMemoryStore(nil)
	}
	if rl.logger == nil {
		rl.logger = slog.Default()
	}
	return rl.middleware, nil
}

// checkLimit refuses a limit that cannot be kept.
func checkLimit(name string, l Limit) error {
	switch {
	case l.Rate < 0 || math.IsNaN(l.Rate) || math.IsInf(l.Rate, 0):
		return fmt.Errorf("ratelimit: %s.Rate is %v; it is calls per second, zero for no limit", name, l.Rate)
	case l.Rate > 0 && l.Rate < 1e-6:
		return fmt.Errorf("ratelimit: %s.Rate is %v calls per second, less than one in 11 days; use zero for none, or a larger rate", name, l.Rate)
	case l.Burst > 1_000_000:
		return fmt.Errorf("ratelimit: %s.Burst is %d; at most 1,000,000", name, l.Burst)
	}
	return nil
}

type limiter struct {
	all      Limit
	tools    map[string]Limit
	store    Store
	proxies  []netip.Prefix
	failOpen bool
	logger   *slog.Logger
}

func (rl *limiter) middleware(next otc.CallFunc) otc.CallFunc {
	return func(ctx context.Context, call *otc.Call) (otc.CallResult, error) {
		tool := ""
		if call.Tool != nil {
			tool, _, _ = strings.Cut(call.Tool.ID, "@") // every version shares the tool's limit
		}
		perTool, hasTool := rl.tools[tool]
		if rl.all.Rate == 0 && (!hasTool || perTool.Rate == 0) {
			return next(ctx, call)
		}
		who := rl.caller(ctx, call)
		if rl.all.Rate > 0 {
			if err := rl.take(ctx, who, "*", rl.all, "calls"); err != nil {
				return otc.CallResult{}, err
			}
		}
		if hasTool && perTool.Rate > 0 {
			if err := rl.take(ctx, who, "t:"+tool, perTool, "calls of "+tool); err != nil {
				return otc.CallResult{}, err
			}
		}
		return next(ctx, call)
	}
}

// take takes a call from the allowance of caller who under l, or returns
// the refusal.
func (rl *limiter) take(ctx context.Context, who, what string, l Limit, words string) error {
	ok, after, err := rl.store.Take(ctx, who+"|"+what, l)
	switch {
	case err != nil && rl.failOpen:
		rl.logger.WarnContext(ctx, "ratelimit: the store failed; the call is admitted (FailOpen)", slog.String("error", err.Error()))
		return nil
	case err != nil:
		rl.logger.ErrorContext(ctx, "ratelimit: the store failed; the call is refused", slog.String("error", err.Error()))
		return &otc.Error{Code: otc.CodeUnavailable, Message: "The server could not check the caller's rate limit just now; try again shortly",
			DeveloperMessage: err.Error(), RetryAfter: time.Second}
	case ok:
		return nil
	}
	after = max(after, time.Millisecond)
	return &otc.Error{Code: otc.CodeRateLimited, RetryAfter: after,
		Message:          fmt.Sprintf("Too many calls: this caller may make %s; try again in %s", describe(l, words), after.Round(time.Millisecond)),
		DeveloperMessage: "rate limit " + what + " of caller " + who}
}

// describe says a limit in words: "10 calls a second, 20 at once".
func describe(l Limit, words string) string {
	burst := max(l.Burst, 1)
	var rate string
	switch {
	case l.Rate >= 1:
		rate = fmt.Sprintf("%g %s a second", l.Rate, words)
	case l.Rate*60 >= 1:
		rate = fmt.Sprintf("%g %s a minute", l.Rate*60, words)
	default:
		rate = fmt.Sprintf("%g %s an hour", l.Rate*3600, words)
	}
	return fmt.Sprintf("%s, %d at once", rate, burst)
}

// caller is the key of the caller of call: its identity, else its client
// address, else "local".
func (rl *limiter) caller(ctx context.Context, call *otc.Call) string {
	if call.Identity != nil {
		if owner, err := tasks.Owner(call.Identity); err == nil {
			return "id:" + owner
		}
	}
	if r := otc.HTTPRequest(ctx); r != nil {
		if len(rl.proxies) == 0 { // the peer, as the server read it
			if host, _, err := net.SplitHostPort(r.RemoteAddr); err == nil {
				return "ip:" + host
			}
		}
		if addr, ok := clientAddr(r, rl.proxies); ok {
			return "ip:" + addr.String()
		}
	}
	return "local"
}

// clientAddr is the address of the client of r: its peer, or, when the
// peer is a trusted proxy, the rightmost address of X-Forwarded-For that
// is not one.
func clientAddr(r *http.Request, proxies []netip.Prefix) (netip.Addr, bool) {
	host, _, err := net.SplitHostPort(r.RemoteAddr)
	if err != nil {
		host = r.RemoteAddr
	}
	peer, err := netip.ParseAddr(host)
	if err != nil {
		return netip.Addr{}, false
	}
	peer = peer.Unmap()
	if !trusted(peer, proxies) {
		return peer, true
	}
	hops := r.Header.Values("X-Forwarded-For")
	for i := len(hops) - 1; i >= 0; i-- {
		parts := strings.Split(hops[i], ",")
		for j := len(parts) - 1; j >= 0; j-- {
			a, err := netip.ParseAddr(strings.TrimSpace(parts[j]))
			if err != nil {
				return peer, true // a hop the proxies did not write: stop at the last trusted one
			}
			a = a.Unmap()
			if !trusted(a, proxies) {
				return a, true
			}
			peer = a
		}
	}
	return peer, true
}

// trusted reports whether a is one of the proxies.
func trusted(a netip.Addr, proxies []netip.Prefix) bool {
	for _, p := range proxies {
		if p.Contains(a) {
			return true
		}
	}
	return false
}

// ErrBadLimit is returned by a store for a limit New would refuse.
var ErrBadLimit = errors.New("ratelimit: the limit's rate is not a positive number of calls per second")
