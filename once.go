package otc

import (
	"container/heap"
	"context"
	"errors"
	"fmt"
	"hash/maphash"
	"log/slog"
	"strconv"
	"sync"
	"time"
)

// This file makes an execution-bound capability token single-use: the
// token id ("jti") of a token that a tool with Policy.RequiresExecution
// accepted is spent just before the function runs, and a token whose id
// is spent never runs a tool again.
//
// Where the record lives: in the registry's idempotency store when it is
// one that replicas share (anything but one in process, such as
// idempotency.MemoryStore), so that a token
// spent on one replica is spent on all; otherwise in a ledger of the
// registry's own, in memory, which never forgets an id before its token
// has expired. A store in process is not used for it because it drops its
// oldest records when full, and a caller able to fill it could then
// replay a token.

// Limits of the token ledger.
const (
	// maxTokenIDBytes bounds a jti: it becomes a key of the record.
	maxTokenIDBytes = 256
	// maxSpentTokens caps the ids the in-memory ledger holds; when all
	// are unexpired, a new execution-bound call is refused, retryable,
	// rather than an id forgotten early.
	maxSpentTokens = 100_000
	// spentMargin is kept past a token's expiry plus its authenticator's
	// leeway, for clock steps.
	spentMargin = time.Minute
)

// spentMarker is the outcome recorded under a spent token id in a shared
// store. Token keys start with 'j' and call keys with 'a' or 'i', so the
// two never meet and the marker is never read as a call's outcome.
var spentMarker = []byte("spent")

// tokenID reads the jti and expiry of an execution-bound token, or says
// what is missing. The ledger needs both: the id to spend, the expiry to
// know how long to remember it.
func tokenID(claims map[string]any) (jti string, exp time.Time, problem string) {
	jti, _ = claims["jti"].(string)
	switch {
	case jti == "":
		return "", exp, "The token has no token id (jti): a tool that requires an execution-bound token runs once per token, and needs its jti to tell"
	case len(jti) > maxTokenIDBytes:
		return "", exp, fmt.Sprintf("The token's id (jti) is longer than %d bytes", maxTokenIDBytes)
	}
	var secs float64
	switch v := claims["exp"].(type) {
	case float64:
		secs = v
	case int64:
		secs = float64(v)
	case int:
		secs = float64(v)
	default:
		return "", exp, "The token has no expiry (exp): an execution-bound token must expire"
	}
	return jti, time.Unix(int64(secs), 0), ""
}

// spendToken spends the token id of the call's execution-bound token,
// just before the function runs. It returns nil, nil when the id was
// fresh; an [*Error] with ReasonTokenReplayed when it was spent before;
// or, when the record cannot be reached or is full, the busy outcome the
// call is answered with, as a limit answers: the function must not run
// unless its token is known to be spent.
func (r *Registry) spendToken(ctx context.Context, c *Call) (*limitedOutcome, error) {
	id := c.Identity
	if id == nil {
		return nil, refuse(ReasonMissingToken, fmt.Sprintf("Tool '%s' needs a capability token", c.tool.def.Name), "")
	}
	jti, exp, problem := tokenID(id.Claims)
	if problem != "" { // checkPolicy refused such a token already
		return nil, refuse(ReasonInvalidToken, problem, "")
	}
	iss, _ := id.Claims["iss"].(string)
	b := make([]byte, 0, 8+len(iss)+len(jti))
	b = append(b, 'j')
	b = strconv.AppendInt(b, int64(len(iss)), 10)
	b = append(b, ':')
	b = append(b, iss...)
	b = append(b, jti...)
	key := string(b)

	fresh, err := r.tokens.spend(ctx, key, "", exp.Add(max(id.leeway, 0)+spentMargin))
	switch {
	case err != nil:
		r.logger.ErrorContext(ctx, "otc: the record of spent token ids failed; the call was not run",
			slog.String("tool", c.tool.def.ID),
			slog.String("call_id", c.CallID),
			slog.String("error", err.Error()))
		return &limitedOutcome{outcome: OutcomeBusy, err: &ToolError{
			Message:          fmt.Sprintf("Tool '%s' could not be run just now; try again shortly with the same token", c.tool.def.Name),
			DeveloperMessage: "the record of spent execution-bound token ids could not be written, and the call is not run unless its token is known to be spent; the server's log has the store's error under this call id",
			CanRetry:         true,
			RetryAfter:       r.busyRetryAfter,
		}}, nil
	case !fresh:
		return nil, refuse(ReasonTokenReplayed,
			fmt.Sprintf("The token was already used to call tool '%s'", c.tool.def.Name),
			"an execution-bound token runs its tool once; ask its issuer for a new token, or resend the first request with its call_id to get its recorded outcome")
	}
	return nil, nil
}

// ledger records single-use keys: spend records key as used until the
// given time and reports whether it was fresh; a key spent by holder (not
// empty) is fresh again to the same holder. A registry has two: one for
// execution-bound token ids (keys starting with 'j'), one for other
// single-use things (a requestState, through the seam's SpendOnce; keys
// starting with 'o'). Both are the registry's idempotency store when
// replicas share it (sharedLedger), and in memory otherwise (tokenLedger).
type ledger interface {
	spend(ctx context.Context, key, holder string, until time.Time) (bool, error)
}

// spendOnce is the seam's SpendOnce.
func spendOnce(ctx context.Context, r *Registry, key, callID string, until time.Time) (bool, error) {
	if r.idem == nil {
		callID = "" // without a record of call ids, a second use runs again
	} else if callID != "" {
		callID = "c" + callID
	}
	return r.once.spend(ctx, "o"+key, callID, until.Add(spentMargin))
}

// sharedLedger is a ledger in the registry's idempotency store, shared by
// replicas: a key is spent by a claim, at once completed with the marker.
// The keys of spent ids start with 'j' or 'o' and call keys with 'a' or
// 'i', so the two never meet.
type sharedLedger struct{ store IdempotencyStore }

// spend implements ledger: a key that a claim holds, done or in flight,
// is spent, unless holder made the claim. The store keeps it for its own
// retention, whatever until says.
func (l sharedLedger) spend(ctx context.Context, key, holder string, _ time.Time) (bool, error) {
	fingerprint := "jti"
	if holder != "" {
		fingerprint = "h" + holder
	}
	rec, claim, err := l.store.Claim(ctx, key, fingerprint)
	switch {
	case err != nil:
		return false, err
	case claim == nil && rec == nil:
		return false, errors.New("the idempotency store's Claim returned neither a claim nor a record")
	case claim == nil:
		return holder != "" && rec.Fingerprint == fingerprint, nil
	}
	switch err := claim.Complete(context.WithoutCancel(ctx), spentMarker); {
	case errors.Is(err, ErrClaimLost):
		// The claim lapsed before it was recorded and another call took
		// the id: that call spent it.
		return false, nil
	case errors.Is(err, ErrOutcomePending):
		// The store holds the id under this call's claim, renewing it,
		// and writes the marker in the background: no other call can
		// spend it meanwhile, so this call has. Refusing it instead would
		// leave the token spent, once the marker is written, without its
		// call having run.
		return true, nil
	case err != nil:
		// The id stays claimed while the store keeps the claim, so it
		// cannot be spent twice meanwhile; this call does not run.
		return false, err
	}
	return true, nil
}

// tokenLedger is the in-memory record of spent token ids: each id kept
// until its token has expired, in a map, with a heap of expiries so that
// the expired are dropped first. It never drops an unexpired id: when it
// holds maxSpentTokens of them, spend fails.
type tokenLedger struct {
	mu     sync.Mutex
	seeds  [2]maphash.Seed
	until  map[memKey]int64  // Unix nanoseconds
	holder map[memKey]uint64 // a hash of the holder, for keys spent by one
	order  ledgerHeap
	max    int
	now    func() time.Time
	inited bool
}

// errLedgerFull is the failure of a spend when the ledger is full of
// unexpired ids.
var errLedgerFull = fmt.Errorf("the in-memory record of spent token ids holds %d unexpired ids, its limit", maxSpentTokens)

// memKey is a key, hashed: two 64-bit hashes under random seeds, so that
// map lookups compare 16 bytes and no one can pick keys that collide.
type memKey [2]uint64

type ledgerEntry struct {
	until int64
	key   memKey
}

type ledgerHeap []ledgerEntry

func (h ledgerHeap) Len() int           { return len(h) }
func (h ledgerHeap) Less(i, j int) bool { return h[i].until < h[j].until }
func (h ledgerHeap) Swap(i, j int)      { h[i], h[j] = h[j], h[i] }
func (h *ledgerHeap) Push(x any)        { *h = append(*h, x.(ledgerEntry)) }
func (h *ledgerHeap) Pop() any {
	old := *h
	e := old[len(old)-1]
	*h = old[:len(old)-1]
	return e
}

// spend implements ledger.
func (l *tokenLedger) spend(_ context.Context, key, holder string, until time.Time) (bool, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if !l.inited {
		l.seeds = [2]maphash.Seed{maphash.MakeSeed(), maphash.MakeSeed()}
		l.until = make(map[memKey]int64)
		l.holder = make(map[memKey]uint64)
		if l.max <= 0 {
			l.max = maxSpentTokens
		}
		if l.now == nil {
			l.now = time.Now
		}
		l.inited = true
	}
	now := l.now().UnixNano()
	for len(l.order) > 0 && l.order[0].until <= now {
		e := heap.Pop(&l.order).(ledgerEntry)
		if l.until[e.key] == e.until {
			delete(l.until, e.key)
			delete(l.holder, e.key)
		}
	}
	k := memKey{maphash.String(l.seeds[0], key), maphash.String(l.seeds[1], key)}
	var h uint64
	if holder != "" {
		h = maphash.String(l.seeds[0], holder) | 1 // never 0, which is no holder
	}
	if u, ok := l.until[k]; ok && u > now {
		return h != 0 && l.holder[k] == h, nil
	}
	if len(l.until) >= l.max {
		return false, errLedgerFull
	}
	u := max(until.UnixNano(), now+1)
	l.until[k] = u
	if h != 0 {
		l.holder[k] = h
	}
	heap.Push(&l.order, ledgerEntry{until: u, key: k})
	return true, nil
}
