package otc

import (
	"context"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"math"
	"strconv"
	"time"

	"github.com/otcgo/otc/internal/jsonparse"
)

// This file makes call_id an idempotency key. With a store in
// RegistryOptions.Idempotency, the core claims the key (caller, call id)
// after the input has been validated and before the function runs; the
// first call of a key runs and records its outcome, and a later call with
// the same key is answered with that outcome instead of running again.

// IdempotencyStore records the calls a registry runs by their call id, so
// that a call retried with the same id is answered with the outcome of
// its first run instead of running the tool again (see
// [RegistryOptions.Idempotency]). idempotency.MemoryStore keeps the record in the
// process; the github.com/otcgo/otc/redisstore module shares it between
// replicas.
//
// A key is held by at most one call at a time: Claim is atomic, so of
// several calls that claim one key at once, one gets the claim and the
// others the record it made. The registry builds keys and fingerprints,
// and encodes outcomes; a store treats all three as opaque.
//
// A store that keeps its record in this process says so with a method
// InProcess() bool, as idempotency.MemoryStore does: the registry then
// waits on it without a deadline, and keeps single-use tokens in a ledger
// of its own rather than in the store.
type IdempotencyStore interface {
	// Claim claims key for a call whose content is summed up by
	// fingerprint, when no live record holds key; it returns the claim,
	// which the caller ends with Complete or Release once the call has
	// run. When a record holds key, in flight or done, Claim returns it
	// and a nil claim.
	Claim(ctx context.Context, key, fingerprint string) (*IdempotencyRecord, IdempotencyClaim, error)

	// Wait blocks until the call that holds key is no longer in flight:
	// its outcome was recorded, its claim released, or its claim lapsed
	// (a store with leases). It returns at once when key is not in
	// flight, and ctx's error when ctx ends first. The registry bounds
	// the wait with [RegistryOptions.IdempotencyWait].
	Wait(ctx context.Context, key string) error
}

// IdempotencyClaim is the hold a running call has on its key. Exactly one
// of Complete and Release ends it.
type IdempotencyClaim interface {
	// Complete records the call's outcome under the key for the store's
	// retention period. The store keeps outcome, which the caller must
	// not modify afterwards. An outcome larger than the store keeps is
	// not recorded: Complete then releases the key and returns
	// [ErrOutcomeTooLarge]. Complete returns [ErrClaimLost] when the
	// claim lapsed and the key was claimed by another call meanwhile.
	//
	// A store that could not record the outcome yet, but keeps the key
	// claimed and goes on trying in the background, returns an error
	// wrapping [ErrOutcomePending]: a retry meanwhile waits, and is then
	// answered with the outcome; it does not run the call. Any other
	// error means that the outcome is not recorded and that the key is
	// freed, at once or when the claim lapses, so that a retry runs the
	// call again.
	Complete(ctx context.Context, outcome []byte) error

	// Release gives up the key without recording an outcome, so that
	// the next call with it runs.
	Release(ctx context.Context) error
}

// IdempotencyRecord is what a store holds for a key.
type IdempotencyRecord struct {
	// Fingerprint is the fingerprint given to the Claim that made the
	// record.
	Fingerprint string
	// Done is true once an outcome has been recorded; false while the
	// call that claimed the key is still running.
	Done bool
	// Outcome is the recorded outcome when Done. It is shared with the
	// store and must not be modified.
	Outcome []byte
}

// Errors a store returns.
var (
	// ErrOutcomeTooLarge is returned by [IdempotencyClaim.Complete] for an
	// outcome larger than the store keeps. The key is released: the call
	// is not deduplicated.
	ErrOutcomeTooLarge = errors.New("otc: the outcome is larger than the idempotency store keeps")
	// ErrClaimLost is returned by [IdempotencyClaim.Complete] and
	// [IdempotencyClaim.Release] when the claim's lease lapsed and the
	// key was claimed again.
	ErrClaimLost = errors.New("otc: the idempotency claim was lost")
	// ErrOutcomePending is wrapped by the error [IdempotencyClaim.Complete]
	// returns when the store could not record the outcome yet (Redis
	// full, restarting or too slow to answer) and keeps trying in the
	// background while it holds the key: a retry meanwhile is told to
	// ask again later, and never runs the call a second time.
	ErrOutcomePending = errors.New("otc: the idempotency store has not recorded the outcome yet and keeps trying")
	// ErrStoreFull is returned by [IdempotencyStore.Claim] when the store
	// holds as many calls in flight as it may and can make no room.
	ErrStoreFull = errors.New("otc: the idempotency store is full of calls in flight")
	// ErrCallIDReused is wrapped by the [*Error] a call is refused with
	// when its call id was already used, by the same caller, for a call
	// of another tool or with other input. Match it with errors.Is.
	ErrCallIDReused = errors.New("otc: call_id reused for a different call")
)

// keyAndFingerprint returns the store key of a call and its fingerprint,
// made in one allocation.
//
// The key is the caller's identity and the call id. Each part of the
// identity is length-prefixed, so that no identity can be made to spell
// another's key. A call without authentication is anonymous.
//
// The fingerprint sums up what the call asks for: the versioned tool id,
// and a SHA-256 of the input in a canonical form, in which the order of
// object members, white space, string escapes and the spelling of numbers
// make no difference.
func keyAndFingerprint(id *Identity, callID, toolID string, doc *jsonparse.Document, root int32) (key, fp string) {
	var buf [384]byte
	b := buf[:0]
	if id == nil {
		b = append(b, 'a')
	} else {
		b = append(b, 'i')
		iss, _ := id.Claims["iss"].(string)
		for _, s := range [...]string{id.Method, iss, id.Name} {
			b = strconv.AppendInt(b, int64(len(s)), 10)
			b = append(b, ':')
			b = append(b, s...)
		}
	}
	b = append(b, '/')
	b = append(b, callID...)
	n := len(b)

	var cbuf [512]byte
	sum := sha256.Sum256(jsonparse.AppendCanonical(cbuf[:0], doc, root))
	b = append(b, toolID...)
	b = append(b, ' ')
	b = hex.AppendEncode(b, sum[:])
	both := string(b)
	return both[:n], both[n:]
}

// fingerprintTool returns the tool id part of a fingerprint.
func fingerprintTool(fp string) string {
	for i := len(fp) - 1; i >= 0; i-- {
		if fp[i] == ' ' {
			return fp[:i]
		}
	}
	return fp
}

// Outcome encoding: a version byte, the duration in nanoseconds, a flags
// byte, the outcome class, then the value and the tool error when the
// flags say so. Strings are length-prefixed.
const (
	outcomeVersion = 1

	outcomeHasValue   = 1 << 0
	outcomeHasError   = 1 << 1
	outcomeUnexpected = 1 << 2
	outcomeContent    = 1 << 3
	outcomeCanRetry   = 1 << 4
)

// encodeOutcome encodes what a replay must give back.
func encodeOutcome(res *CallResult) []byte {
	size := 16 + len(res.Value) + len(res.outcome)
	if te := res.Error; te != nil {
		size += 24 + len(te.Message) + len(te.DeveloperMessage) + len(te.AdditionalPromptContent)
	}
	b := make([]byte, 0, size)
	b = append(b, outcomeVersion)
	b = binary.AppendUvarint(b, uint64(max(res.Duration, 0)))
	var flags byte
	if res.Value != nil {
		flags |= outcomeHasValue
	}
	if res.Error != nil {
		flags |= outcomeHasError
		if res.Error.CanRetry {
			flags |= outcomeCanRetry
		}
	}
	if res.Unexpected {
		flags |= outcomeUnexpected
	}
	if res.Content {
		flags |= outcomeContent
	}
	b = append(b, flags)
	b = appendBytes(b, []byte(res.outcome))
	if res.Value != nil {
		b = appendBytes(b, res.Value)
	}
	if te := res.Error; te != nil {
		b = appendBytes(b, []byte(te.Message))
		b = appendBytes(b, []byte(te.DeveloperMessage))
		b = appendBytes(b, []byte(te.AdditionalPromptContent))
		b = binary.AppendUvarint(b, uint64(max(te.RetryAfter, 0)))
	}
	return b
}

func appendBytes(dst, s []byte) []byte {
	dst = binary.AppendUvarint(dst, uint64(len(s)))
	return append(dst, s...)
}

var errBadOutcome = errors.New("otc: the idempotency store returned an outcome this version cannot read")

// decodeOutcome reads an outcome encodeOutcome wrote. The result's value
// is a copy, so that it outlives the store's record.
func decodeOutcome(b []byte) (CallResult, error) {
	var res CallResult
	if len(b) < 3 || b[0] != outcomeVersion {
		return res, errBadOutcome
	}
	b = b[1:]
	d, n := binary.Uvarint(b)
	if n <= 0 || d > math.MaxInt64 {
		return res, errBadOutcome
	}
	res.Duration = time.Duration(d)
	b = b[n:]
	if len(b) == 0 {
		return res, errBadOutcome
	}
	flags := b[0]
	b = b[1:]
	if flags&^(outcomeHasValue|outcomeHasError|outcomeUnexpected|outcomeContent|outcomeCanRetry) != 0 ||
		flags&(outcomeHasError|outcomeCanRetry) == outcomeCanRetry {
		return res, errBadOutcome
	}
	next := func() ([]byte, bool) {
		l, n := binary.Uvarint(b)
		if n <= 0 || l > uint64(len(b)-n) {
			return nil, false
		}
		s := b[n : n+int(l)]
		b = b[n+int(l):]
		return s, true
	}
	oc, ok := next()
	if !ok {
		return res, errBadOutcome
	}
	res.outcome = Outcome(oc)
	if flags&outcomeHasValue != 0 {
		v, ok := next()
		if !ok {
			return res, errBadOutcome
		}
		res.Value = append(make([]byte, 0, len(v)), v...)
	}
	if flags&outcomeHasError != 0 {
		var parts [3][]byte
		for i := range parts {
			if parts[i], ok = next(); !ok {
				return res, errBadOutcome
			}
		}
		ra, n := binary.Uvarint(b)
		if n <= 0 || ra > math.MaxInt64 {
			return res, errBadOutcome
		}
		b = b[n:]
		res.Error = &ToolError{
			Message:                 string(parts[0]),
			DeveloperMessage:        string(parts[1]),
			AdditionalPromptContent: string(parts[2]),
			CanRetry:                flags&outcomeCanRetry != 0,
			RetryAfter:              time.Duration(ra),
		}
	}
	if len(b) != 0 {
		return res, errBadOutcome
	}
	res.Unexpected = flags&outcomeUnexpected != 0
	res.Content = flags&outcomeContent != 0
	return res, nil
}

// recordable reports whether an outcome is one a retry must be given
// rather than run again: a success, or a failure that running again would
// not change (can_retry false). A call the caller abandoned, that was
// busy, or that timed out is not.
func recordable(res *CallResult) bool {
	switch {
	case res.Error == nil:
		return true
	case res.Error.CanRetry:
		return false
	}
	return res.outcome != OutcomeCanceled
}

// dedupe looks the call up in the store. It returns a claim when the call
// is to run; otherwise what the call is answered with: the recorded
// outcome, a refusal for a call id reused with other content, or a
// retryable failure when the store cannot be reached, or the call was
// still in flight when the duplicate's context ended or its wait
// (RegistryOptions.IdempotencyWait) did.
func (r *Registry) dedupe(ctx context.Context, c *Call, doc *jsonparse.Document, root int32) (CallResult, IdempotencyClaim, error) {
	key, fp := keyAndFingerprint(c.Identity, c.CallID, c.tool.def.ID, doc, root)
	// waitCtx bounds the waiting, all of it, so that a duplicate of a call
	// that runs long, or whose outcome the store is still trying to
	// record, is answered in bounded time; made when the call is first
	// found in flight, so that the common path pays nothing for it.
	var waitCtx context.Context
	for {
		rec, claim, err := r.idem.Claim(ctx, key, fp)
		switch {
		case err != nil:
			return r.storeFailure(ctx, c, err), nil, nil
		case claim != nil:
			return CallResult{}, claim, nil
		case rec == nil:
			return r.storeFailure(ctx, c, errors.New("the idempotency store's Claim returned neither a claim nor a record")), nil, nil
		case rec.Fingerprint != fp:
			return CallResult{}, nil, callIDReused(c, fingerprintTool(rec.Fingerprint))
		case rec.Done:
			res, err := decodeOutcome(rec.Outcome)
			if err != nil {
				return r.storeFailure(ctx, c, err), nil, nil
			}
			res.CallID, res.Replayed = c.CallID, true
			return res, nil, nil
		}
		// In flight elsewhere: wait for it to end, then look again.
		if waitCtx == nil {
			var cancel context.CancelFunc
			waitCtx, cancel = context.WithTimeout(ctx, r.idemWait)
			defer cancel()
		}
		if err := r.idem.Wait(waitCtx, key); err != nil {
			if waitCtx.Err() == nil {
				return r.storeFailure(ctx, c, err), nil, nil
			}
			return r.stillRunning(ctx, c), nil, nil
		}
	}
}

// stillRunning is the answer to a duplicate that stopped waiting for the
// call in flight with its id: the call did not run, and may be sent again.
func (r *Registry) stillRunning(ctx context.Context, c *Call) CallResult {
	outcome := OutcomeCanceled
	dev := fmt.Sprintf("call_id %q of %s was in flight when the duplicate's context ended: %v", c.CallID, c.tool.def.ID, context.Cause(ctx))
	if ctx.Err() == nil {
		outcome = OutcomeBusy
		dev = fmt.Sprintf("call_id %q of %s was still in flight, or its outcome not yet recorded, after the duplicate had waited %v (RegistryOptions.IdempotencyWait)", c.CallID, c.tool.def.ID, r.idemWait)
	}
	return CallResult{CallID: c.CallID, outcome: outcome, Error: &ToolError{
		Message:          fmt.Sprintf("Tool '%s' is still running this call; ask again later for its result", c.tool.def.Name),
		DeveloperMessage: dev,
		CanRetry:         true,
		RetryAfter:       r.busyRetryAfter,
	}}
}

// storeFailure is the answer to a call whose record could not be read or
// made: it did not run, and may be sent again.
func (r *Registry) storeFailure(ctx context.Context, c *Call, err error) CallResult {
	r.logger.ErrorContext(ctx, "otc: idempotency store failed; the call was not run",
		slog.String("tool", c.tool.def.ID),
		slog.String("call_id", c.CallID),
		slog.String("error", err.Error()))
	return CallResult{CallID: c.CallID, outcome: OutcomeBusy, Error: &ToolError{
		Message:          fmt.Sprintf("Tool '%s' could not be run just now; try again shortly", c.tool.def.Name),
		DeveloperMessage: "the server's record of calls could not be reached, so the call did not run; the server's log has the store's error under this call id",
		CanRetry:         true,
		RetryAfter:       r.busyRetryAfter,
	}}
}

// callIDReused is the refusal of a call whose id the caller already used
// for another call: of tool firstTool, or of this tool with other input.
func callIDReused(c *Call, firstTool string) *Error {
	detail := "with different input"
	if firstTool != c.tool.def.ID {
		detail = "for tool " + firstTool
	}
	return &Error{
		Code:             CodeServerError,
		Message:          "The call_id was already used for a different call",
		DeveloperMessage: fmt.Sprintf("call_id %q was first used %s; a retry must resend the same tool and input, and a new call needs a new call_id", c.CallID, detail),
		cause:            ErrCallIDReused,
		outcome:          OutcomeConflict,
	}
}

// finishLate returns what ends the claim of a call answered by its
// timeout, once its function returns: the key stays claimed until then,
// so that a retry waits rather than runs a second copy, and only a
// success is worth recording for the retry; a failure then may owe to
// the deadline, so the key is released.
func (r *Registry) finishLate(ctx context.Context, claim IdempotencyClaim, t *registeredTool, callID string, start time.Time) func(json.RawMessage, error) {
	return func(value json.RawMessage, err error) {
		res := CallResult{CallID: callID, Duration: time.Since(start)}
		if err == nil {
			res.Value, res.Content = value, t.def.Content
		} else {
			res.Error = &ToolError{CanRetry: true}
		}
		r.finishClaim(ctx, claim, &res, t.def.ID)
	}
}

// releaseClaim gives up the claim of a call that did not run to an
// outcome: the next call with its id runs.
func (r *Registry) releaseClaim(ctx context.Context, claim IdempotencyClaim, callID, toolID string) {
	r.finishClaim(ctx, claim, &CallResult{CallID: callID, Error: &ToolError{CanRetry: true}}, toolID)
}

// finishClaim ends a claim once the function has returned: it records a
// recordable outcome and releases the key otherwise.
func (r *Registry) finishClaim(ctx context.Context, claim IdempotencyClaim, res *CallResult, toolID string) {
	if !r.idemInProcess { // a MemoryStore never looks at ctx
		ctx = context.WithoutCancel(ctx) // the outcome is recorded even if the caller has gone
	}
	var err error
	record := recordable(res)
	if record {
		err = claim.Complete(ctx, encodeOutcome(res))
	} else {
		err = claim.Release(ctx)
	}
	switch {
	case err == nil, errors.Is(err, ErrOutcomeTooLarge):
	case errors.Is(err, ErrClaimLost):
		r.logger.WarnContext(ctx, "otc: idempotency store: the claim on the call id lapsed while the call ran, and another call has claimed it since; the tool may run twice for this call id",
			slog.String("tool", toolID),
			slog.String("call_id", res.CallID),
			slog.String("error", err.Error()))
	case !record:
		r.logger.WarnContext(ctx, "otc: idempotency store: the call id could not be released; a retry is told to ask again later until the store's claim lapses",
			slog.String("tool", toolID),
			slog.String("call_id", res.CallID),
			slog.String("error", err.Error()))
	case errors.Is(err, ErrOutcomePending):
		r.logger.WarnContext(ctx, "otc: idempotency store: the outcome is not recorded yet; the store holds the call id and keeps trying, and a retry meanwhile is told to ask again later",
			slog.String("tool", toolID),
			slog.String("call_id", res.CallID),
			slog.String("error", err.Error()))
	default:
		r.logger.WarnContext(ctx, "otc: idempotency store: the outcome was not recorded; a retry of this call will run it again",
			slog.String("tool", toolID),
			slog.String("call_id", res.CallID),
			slog.String("error", err.Error()))
	}
}

// Defaults of the idempotency stores (the in-memory store of package
// idempotency, and Redis's).
const (
	// DefaultIdempotencyTTL is how long a recorded outcome is kept: a
	// day, long enough for any agent's retries, including one resumed
	// after a crash.
	DefaultIdempotencyTTL = 24 * time.Hour
	// DefaultMaxOutcomeBytes is the largest outcome a store records: 1
	// MiB. A call whose result is larger is not deduplicated.
	DefaultMaxOutcomeBytes = 1 << 20
	// DefaultIdempotencyWait is the default of
	// [RegistryOptions.IdempotencyWait]: ten seconds, longer than most
	// calls take, and short enough that, with a Redis store's operation
	// deadlines, a duplicate is answered within fifteen seconds even while
	// Redis stalls.
	DefaultIdempotencyWait = 10 * time.Second
)
