package search

import (
	"context"
	"net/http"
	"time"

	"github.com/otcgo/otc"
	"github.com/otcgo/otc/caller"
	"github.com/otcgo/otc/ratelimit"
)

// Default bounds of the searches one caller makes through a server's
// handlers (GET /tools?q=, the REST view's, MCP's search tool and
// tools/list with a query): a caller who searches faster than CallerRate a
// second, after a burst of CallerBurst, is refused until its allowance
// comes back. A search costs as many searches of the allowance as its work
// is ordinary searches' (see workPerSearch), so that the bound keeps one
// caller to about a hundredth of a core whatever it asks, with an identity
// and policies or without. [Bound] sets other bounds, or a store shared by
// replicas.
const (
	CallerRate  = 20
	CallerBurst = 40
)

// Bounds are the bounds of a registry's searches per caller.
type Bounds struct {
	// Limit is each caller's allowance of searches. A zero Rate means
	// CallerRate, with a burst of CallerBurst.
	Limit ratelimit.Limit
	// Store keeps the callers' allowances. Nil means a
	// ratelimit.MemoryStore of the registry's own (the bound holds per
	// replica); redisstore.NewRateStore holds it across replicas. A
	// ratelimit.Charger is charged the extra work of costly searches;
	// another store counts searches only. Its keys start with "search|",
	// so it may be the store of the registry's call limits too.
	Store ratelimit.Store
	// FailOpen admits a search when the store fails. False refuses it,
	// with an *otc.Error of code otc.CodeUnavailable.
	FailOpen bool
}

// Bound sets the bounds of reg's searches per caller, which every
// handler's search of reg (Query, MCP's search mode, A2A's search skill)
// applies through [Admit]. b may be nil for the defaults. A program sets
// them before it serves reg.
func Bound(reg *otc.Registry, b *Bounds) {
	seam.Attached(reg).Store(floodKey{}, newFloodBounds(b))
}

// newFloodBounds makes b (nil for the defaults) ready.
func newFloodBounds(b *Bounds) *floodBounds {
	fb := &floodBounds{limit: ratelimit.Limit{Rate: CallerRate, Burst: CallerBurst}}
	if b != nil {
		if b.Limit.Rate > 0 {
			fb.limit = b.Limit
		}
		fb.store, fb.failOpen = b.Store, b.FailOpen
	}
	if fb.store == nil {
		fb.store = ratelimit.NewMemoryStore(nil)
	}
	fb.charger, _ = fb.store.(ratelimit.Charger)
	return fb
}

// floodKey is the key of a registry's bounds on the seam's Attached.
type floodKey struct{}

// floodBounds are Bounds made ready.
type floodBounds struct {
	limit    ratelimit.Limit
	store    ratelimit.Store
	charger  ratelimit.Charger
	failOpen bool
}

// boundsOf returns reg's bounds, the defaults when Bound was not called.
func boundsOf(reg *otc.Registry) *floodBounds {
	m := seam.Attached(reg)
	if v, ok := m.Load(floodKey{}); ok {
		return v.(*floodBounds)
	}
	v, _ := m.LoadOrStore(floodKey{}, newFloodBounds(nil))
	return v.(*floodBounds)
}

// Admit reports whether the caller of a search that came in r (its
// identity in ctx, or its address: caller.Key) may search now, taking
// one search from its allowance: nil, or an *otc.Error of code
// otc.CodeRateLimited whose RetryAfter says when it may search again (or
// of code otc.CodeUnavailable when the store of [Bounds] failed). A
// search that did not come over HTTP (r nil: MCP over stdio, a program's
// own) is always admitted. The servers' handlers call it before
// searching; a program calling Tools itself bounds its own callers.
func Admit(ctx context.Context, reg *otc.Registry, r *http.Request) error {
	if r == nil {
		return nil
	}
	key, _ := caller.Key(ctx, r) // an unnamed caller is counted with its address
	b := boundsOf(reg)
	ok, wait, err := b.store.Take(ctx, "search|"+key, b.limit)
	switch {
	case err != nil && b.failOpen:
		return nil
	case err != nil:
		return &otc.Error{Code: otc.CodeUnavailable, RetryAfter: time.Second,
			Message: "The server could not check the caller's search allowance just now; try again shortly"}
	case !ok:
		return &otc.Error{Code: otc.CodeRateLimited, RetryAfter: max(wait, time.Millisecond),
			Message: "Too many searches: search again after the time Retry-After says, or list the tools once"}
	}
	return nil
}

// workPerSearch is the work of an ordinary search (the postings read and
// the tools weighed): about what a query of a few words costs in a
// catalog of ten thousand tools, a fifth of a millisecond of CPU. A
// caller's allowance is charged a search for each workPerSearch of a
// search's work, so that CallerRate bounds its CPU, not only its count
// of searches: a query of 32 common words in such a catalog reads some
// 40,000 postings, and costs four searches.
const workPerSearch = 10_000

// charge charges the caller of r the work of a search beyond the one
// search Admit took, when the store can be charged.
func charge(ctx context.Context, reg *otc.Registry, r *http.Request, work int) {
	extra := float64(work)/workPerSearch - 1
	if extra <= 0 {
		return
	}
	b := boundsOf(reg)
	if b.charger == nil {
		return
	}
	key, _ := caller.Key(ctx, r)
	_ = b.charger.Charge(ctx, "search|"+key, b.limit, extra) // a failed charge costs the caller nothing more
}
