package search

import (
	"context"
	"net/http"
	"sync"
	"time"

	"github.com/otcgo/otc"
	"github.com/otcgo/otc/caller"
)

// Bounds of the searches one caller makes through a server's handlers
// (GET /tools?q=, the REST view's, MCP's search tool and tools/list with
// a query): a caller who searches faster than CallerRate a second, after
// a burst of CallerBurst, is refused until its budget refills. A search
// costs as many searches of the budget as its work is ordinary
// searches' (see workPerSearch), so that the bound keeps one caller to
// about a hundredth of a core whatever it asks, with an identity and
// policies or without.
const (
	CallerRate  = 20
	CallerBurst = 40
	// maxCallers bounds the callers whose budgets are kept for each
	// registry; the oldest full budgets are forgotten first.
	maxCallers = 4096
)

// Admit reports whether the caller of a search that came in r (its
// identity in ctx, or its address: caller.Key) may search now, taking
// one search from its budget: nil, or an *otc.Error of code
// otc.CodeRateLimited whose RetryAfter says when it may search again. A
// search that did not come over HTTP (r nil: MCP over stdio, a program's
// own) is always admitted. The servers' handlers call it before
// searching; a program calling Tools itself bounds its own callers.
func Admit(ctx context.Context, reg *otc.Registry, r *http.Request) error {
	if r == nil {
		return nil
	}
	key, _ := caller.Key(ctx, r) // an unnamed caller is counted with its address
	m := seam.Attached(reg)
	v, ok := m.Load(floodKey{})
	if !ok {
		v, _ = m.LoadOrStore(floodKey{}, &budgets{byCaller: map[string]*budget{}})
	}
	if wait := v.(*budgets).take(key, time.Now()); wait > 0 {
		return &otc.Error{Code: otc.CodeRateLimited, RetryAfter: wait,
			Message: "Too many searches: search again after the time Retry-After says, or list the tools once"}
	}
	return nil
}

// workPerSearch is the work of an ordinary search (the postings read and
// the tools weighed): about what a query of a few words costs in a
// catalog of ten thousand tools, a fifth of a millisecond of CPU. A
// caller's budget is charged a search for each workPerSearch of a
// search's work, so that CallerRate bounds its CPU, not only its count
// of searches: a query of 32 common words in such a catalog reads some
// 40,000 postings, and costs four searches.
const workPerSearch = 10_000

// charge charges the caller of r the work of a search beyond the one
// search Admit took.
func charge(ctx context.Context, reg *otc.Registry, r *http.Request, work int) {
	extra := float64(work)/workPerSearch - 1
	if extra <= 0 {
		return
	}
	key, _ := caller.Key(ctx, r)
	v, ok := seam.Attached(reg).Load(floodKey{})
	if !ok {
		return // not admitted: nothing to charge
	}
	v.(*budgets).charge(key, extra)
}

// charge takes n more searches from key's budget, which may go below
// nothing: the caller then waits until it has refilled past one.
func (bs *budgets) charge(key string, n float64) {
	bs.mu.Lock()
	defer bs.mu.Unlock()
	if b := bs.byCaller[key]; b != nil {
		b.tokens = max(b.tokens-n, -CallerBurst)
	}
}

// floodKey is the key of a registry's budgets in hook.Attached.
type floodKey struct{}

// budgets are the callers' budgets of searches: token buckets.
type budgets struct {
	mu       sync.Mutex
	byCaller map[string]*budget
}

type budget struct {
	tokens float64
	at     time.Time
}

// take takes one search from key's budget at now, and returns 0, or how
// long until it has one.
func (bs *budgets) take(key string, now time.Time) time.Duration {
	bs.mu.Lock()
	defer bs.mu.Unlock()
	b := bs.byCaller[key]
	if b == nil {
		if len(bs.byCaller) >= maxCallers {
			bs.forget(now)
		}
		b = &budget{tokens: CallerBurst, at: now}
		bs.byCaller[key] = b
	}
	b.tokens = min(CallerBurst, b.tokens+now.Sub(b.at).Seconds()*CallerRate)
	b.at = now
	if b.tokens < 1 {
		return time.Duration((1 - b.tokens) / CallerRate * float64(time.Second))
	}
	b.tokens--
	return 0
}

// forget makes room for a caller: the budgets refilled by now go first,
// and if none has, the one least recently used.
func (bs *budgets) forget(now time.Time) {
	var oldest string
	var at time.Time
	for k, b := range bs.byCaller {
		if b.tokens+now.Sub(b.at).Seconds()*CallerRate >= CallerBurst {
			delete(bs.byCaller, k)
			continue
		}
		if oldest == "" || b.at.Before(at) {
			oldest, at = k, b.at
		}
	}
	if len(bs.byCaller) >= maxCallers {
		delete(bs.byCaller, oldest)
	}
}
