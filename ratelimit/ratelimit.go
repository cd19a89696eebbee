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
// A caller is what package github.com/otcgo/otc/caller says it is: its
// identity when it authenticated (the token's issuer and subject, the
// API key's name), else its client, the network it calls from: its
// address (IPv4) or /64 (IPv6), read from X-Forwarded-For only behind
// the proxies that [caller.Handler] trusts. Behind a balancer that is not
// trusted, every anonymous caller is the balancer, and shares one limit.
// A call that did not come over HTTP and names no identity is one caller.
//
// A refusal tells the caller which limit it reached and when to try
// again; what the limiter keeps of the caller goes to the server's log
// (at debug level, with the call id), never into the answer.
package ratelimit

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/otcgo/otc"
	"github.com/otcgo/otc/caller"
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

// ParseLimit reads a limit as configuration writes it: "N/s", "N/m" or
// "N/h" (N a positive number of calls a second, minute or hour), with an
// optional ",burst=N", the calls at once (N by default, at least 1). The
// example server's OTC_RATE_LIMIT and otc gateway read it so.
func ParseLimit(spec string) (Limit, error) {
	rate, rest, _ := strings.Cut(spec, ",")
	n, unit, ok := strings.Cut(strings.TrimSpace(rate), "/")
	count, err := strconv.ParseFloat(n, 64)
	per := map[string]float64{"s": 1, "m": 60, "h": 3600}[unit]
	if !ok || err != nil || per == 0 || count <= 0 || math.IsInf(count, 0) {
		return Limit{}, fmt.Errorf("%q is not a rate such as 20/s, 600/m or 3600/h, with an optional ,burst=N", spec)
	}
	l := Limit{Rate: count / per, Burst: max(int(min(count, math.MaxInt32)), 1)}
	if rest = strings.TrimSpace(rest); rest != "" {
		b, ok := strings.CutPrefix(rest, "burst=")
		burst, err := strconv.Atoi(b)
		if !ok || err != nil || burst < 1 {
			return Limit{}, fmt.Errorf("%q: after the rate (such as 20/s), only ,burst=N (a whole number, 1 or more)", spec)
		}
		l.Burst = burst
	}
	return l, nil
}

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

// A Charger is a [Store] that also charges a key for work found out after
// its call was admitted: Charge takes n calls more from key's allowance
// under l, whether or not they fit, so that the key's next calls wait the
// longer; the allowance goes at most one burst below nothing. Package
// search charges a caller so for a search that cost more than one. Both
// of the module's stores are Chargers.
type Charger interface {
	Store
	Charge(ctx context.Context, key string, l Limit, n float64) error
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
	rl := &limiter{all: opts.All, tools: opts.Tools, store: opts.Store, failOpen: opts.FailOpen, logger: opts.Logger}
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
		who, _ := caller.Key(ctx, otc.HTTPRequest(ctx)) // a credential that names no one counts as its client
		if rl.all.Rate > 0 {
			if err := rl.take(ctx, call, who, "*", rl.all, "calls"); err != nil {
				return otc.CallResult{}, err
			}
		}
		if hasTool && perTool.Rate > 0 {
			if err := rl.take(ctx, call, who, "t:"+tool, perTool, "calls of "+tool); err != nil {
				return otc.CallResult{}, err
			}
		}
		return next(ctx, call)
	}
}

// take takes a call from the allowance of caller who under l, or returns
// the refusal. The refusal says which limit and when; the caller's key
// and the store's failure go to the log, with the call id.
func (rl *limiter) take(ctx context.Context, call *otc.Call, who, what string, l Limit, words string) error {
	ok, after, err := rl.store.Take(ctx, who+"|"+what, l)
	switch {
	case err != nil && rl.failOpen:
		rl.logger.WarnContext(ctx, "ratelimit: the store failed; the call is admitted (FailOpen)", slog.String("call_id", call.CallID), slog.String("error", err.Error()))
		return nil
	case err != nil:
		rl.logger.ErrorContext(ctx, "ratelimit: the store failed; the call is refused", slog.String("call_id", call.CallID), slog.String("error", err.Error()))
		return &otc.Error{Code: otc.CodeUnavailable, Message: "The server could not check the caller's rate limit just now; try again shortly", RetryAfter: time.Second}
	case ok:
		return nil
	}
	after = max(after, time.Millisecond)
	rl.logger.DebugContext(ctx, "ratelimit: a call over its caller's limit is refused", slog.String("call_id", call.CallID), slog.String("caller", who), slog.String("limit", what))
	return &otc.Error{Code: otc.CodeRateLimited, RetryAfter: after,
		Message: fmt.Sprintf("Too many calls: this caller may make %s; try again in %s", describe(l, words), after.Round(time.Millisecond))}
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

// ErrBadLimit is returned by a store for a limit New would refuse.
var ErrBadLimit = errors.New("ratelimit: the limit's rate is not a positive number of calls per second")
