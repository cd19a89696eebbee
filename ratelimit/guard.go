package ratelimit

import (
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	"github.com/otcgo/otc"
	"github.com/otcgo/otc/caller"
)

// DefaultFailures is the bound of [Guard] on the failed authentications
// of one client: 20 at once, then one every 3 seconds (20 a minute).
var DefaultFailures = PerMinute(20)

// GuardOptions configures [Guard]. The zero value, and nil, give the
// defaults described on each field.
type GuardOptions struct {
	// Failures bounds the failed authentications of one client (its
	// address, or its /64 for IPv6; see package
	// github.com/otcgo/otc/caller). The zero value means
	// DefaultFailures.
	Failures Limit
	// Store counts the failures. Nil means a [MemoryStore] of this
	// process; replicas that share one in Redis bound a client once,
	// whichever replica it reaches.
	Store Store
	// Logger receives the store's failures and the clients refused. Nil
	// means slog.Default().
	Logger *slog.Logger
}

// Guard returns an authenticator that authenticates with a, bounding the
// failed authentications of each client: the brute-force guard of an API
// gateway, over every wire format that a takes requests for. A request
// whose credentials a refuses counts against its client's allowance of
// failures; once the allowance is spent, the client's requests are
// refused, whatever they carry, with an [*otc.Error] of class
// [otc.CodeRateLimited] saying when to try again (429 with Retry-After,
// in each format's shape), without their credentials being checked, so
// that a guess made meanwhile cannot be told right from wrong. A request
// that carried no credentials (wrapping [otc.ErrNoCredentials]) is not a
// guess, and is not counted; nor is a refusal that does not judge the
// credentials (an [*otc.Error] of another class than
// otc.CodeUnauthenticated: the server cannot check them now).
//
// Good credentials cost nothing: a request is looked up only when this
// process refuses a client at the time, and counted only when its
// credentials fail. Callers at other addresses are never affected; a
// caller with good credentials at the address of one that guesses is
// refused with it, since the two cannot be told apart (trust the proxies
// in front with caller.Handler, so that clients are told apart behind
// them).
//
// The returned authenticator passes on a's challenges ([otc.Challenger]),
// and Unwrap returns a.
func Guard(a otc.Authenticator, opts *GuardOptions) (*Guarded, error) {
	if a == nil {
		return nil, errors.New("ratelimit: Guard: the authenticator is nil; give the one to guard")
	}
	g := &Guarded{a: a, limit: DefaultFailures, blocked: map[string]time.Time{}}
	if opts != nil {
		if opts.Failures != (Limit{}) {
			g.limit = opts.Failures
		}
		g.store, g.logger = opts.Store, opts.Logger
	}
	if g.limit.Rate <= 0 {
		return nil, fmt.Errorf("ratelimit: Guard: Failures.Rate is %v; it is failures per second, more than zero", g.limit.Rate)
	}
	if err := checkLimit("Failures", g.limit); err != nil {
		return nil, err
	}
	if g.store == nil {
		g.store = NewMemoryStore(nil)
	}
	if g.logger == nil {
		g.logger = slog.Default()
	}
	return g, nil
}

// maxBlocked bounds the clients a [Guarded] refuses at once in this
// process; past it, the ones whose refusal ends soonest are forgotten (the
// store refuses them again at their next failure).
const maxBlocked = 10_000

// Guarded is an authenticator with its failures bounded per client; see
// [Guard].
type Guarded struct {
	a      otc.Authenticator
	limit  Limit
	store  Store
	logger *slog.Logger

	refusing atomic.Int64 // len(blocked): zero lets a request pass without a lookup
	mu       sync.Mutex
	blocked  map[string]time.Time // client → until when its requests are refused
}

var (
	_ otc.Authenticator = (*Guarded)(nil)
	_ otc.Challenger    = (*Guarded)(nil)
)

// Authenticate authenticates r with the guarded authenticator, unless r's
// client has spent its allowance of failures.
func (g *Guarded) Authenticate(r *http.Request) (*otc.Identity, error) {
	client := ""
	if g.refusing.Load() > 0 {
		client = caller.Client(r)
		if left := g.refusedFor(client); left > 0 {
			return nil, refusal(left)
		}
	}
	id, err := g.a.Authenticate(r)
	if err == nil && id != nil || errors.Is(err, otc.ErrNoCredentials) {
		return id, err
	}
	if e, ok := errors.AsType[*otc.Error](err); ok && e.Code != otc.CodeUnauthenticated {
		return id, err // not a refusal of the credentials (the server cannot check them now)
	}
	if client == "" {
		client = caller.Client(r)
	}
	ok, after, serr := g.store.Take(r.Context(), "f|"+client, g.limit)
	switch {
	case serr != nil:
		g.logger.ErrorContext(r.Context(), "ratelimit: the store of failed authentications failed; the failure is not counted", slog.String("error", serr.Error()))
	case !ok:
		after = max(after, time.Millisecond)
		g.refuse(client, after)
		g.logger.WarnContext(r.Context(), "ratelimit: a client's failed authentications passed their bound; its requests are refused", slog.String("client", client), slog.Duration("for", after))
		return nil, refusal(after)
	}
	return id, err
}

// Challenge passes on the guarded authenticator's challenge.
func (g *Guarded) Challenge(e *otc.Error) string {
	if c, ok := g.a.(otc.Challenger); ok {
		return c.Challenge(e)
	}
	return ""
}

// Unwrap returns the guarded authenticator.
func (g *Guarded) Unwrap() otc.Authenticator { return g.a }

// refusal is the answer to a client refused for its failures.
func refusal(after time.Duration) *otc.Error {
	return &otc.Error{Code: otc.CodeRateLimited, RetryAfter: after,
		Message: fmt.Sprintf("Too many failed authentications from this client; try again in %s", after.Round(time.Second))}
}

// refusedFor returns how long client's requests are still refused, or 0.
func (g *Guarded) refusedFor(client string) time.Duration {
	g.mu.Lock()
	defer g.mu.Unlock()
	until, ok := g.blocked[client]
	if !ok {
		return 0
	}
	left := time.Until(until)
	if left <= 0 {
		delete(g.blocked, client)
		g.refusing.Store(int64(len(g.blocked)))
		return 0
	}
	return left
}

// refuse refuses client's requests for d.
func (g *Guarded) refuse(client string, d time.Duration) {
	now := time.Now()
	g.mu.Lock()
	defer g.mu.Unlock()
	if len(g.blocked) >= maxBlocked {
		for c, until := range g.blocked {
			if until.Before(now) {
				delete(g.blocked, c)
			}
		}
		for c := range g.blocked { // still full: forget one, any
			if len(g.blocked) < maxBlocked {
				break
			}
			delete(g.blocked, c)
		}
	}
	g.blocked[client] = now.Add(d)
	g.refusing.Store(int64(len(g.blocked)))
}
