package otc

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"runtime/debug"
	"strconv"
	"time"

	"github.com/otcgo/otc/internal/hook"
	"github.com/otcgo/otc/internal/wire"
)

// This file runs what a registry serves beside its tools (the resources,
// templates and prompts of packages resource and prompt) through the call
// pipeline: a read, a render and a completion pass the registry's
// middleware as a tool call does, as a [Call] whose Kind says which, and
// run within the registry's DefaultTimeout (or the entry's own), with a
// panic recovered and logged.

// CallKind says what a [Call] runs.
type CallKind string

// The kinds of calls the pipeline runs: a tool's (Call.ToolID names it),
// a read of a resource (MCP's resources/read; Call.Target is its URI), a
// prompt rendered (prompts/get; the prompt's name), an argument completed
// (completion/complete; a resource template's text, or "prompt:" and a
// prompt's name), and a list of resources, templates or prompts (the
// method, "resources/list"; no timeout or limit: a budget's middleware).
const (
	CallTool     CallKind = "tool"
	CallRead     CallKind = "read"
	CallRender   CallKind = "render"
	CallComplete CallKind = "complete"
	CallList     CallKind = "list"
)

// readable is a read, render or completion as its adapter gave it, its
// guard, and what its function returned, as it returned it, for the
// adapter to word.
type readable struct {
	hook.Readable
	guard *readableGuard
	held  bool // the run holds a place in Running
	value []byte
	err   error
}

// The cause of a read's, render's or completion's context ending at its
// timeout; what it returns that ran past its timeout, or whose function
// panicked (the panic and its stack go to the registry's logger).
var (
	errReadableDeadline = errors.New("otc: the timeout passed")
	errReadableTimedOut = errors.New("it did not finish within its timeout")
	errReadablePanicked = errors.New("the function failed unexpectedly (the server's log has the details)")
)

// serveReadable runs a read, render or completion through the middleware
// and the core (the seam's RunReadable).
func (r *Registry) serveReadable(ctx context.Context, rr hook.Readable) (json.RawMessage, error) {
	info := &callInfo{request: rr.Request}
	rd := &info.readable
	rd.Readable = rr
	rd.guard, _ = rr.Guard.(*readableGuard)
	c := &info.call
	*c = Call{Kind: CallKind(rr.Kind), Target: rr.Target, Protocol: rr.Protocol, CallID: NewCallID(), Identity: CallerIdentity(ctx), info: info, readable: rd}
	ctx = withCallInfo(ctx, info) // HTTPRequest: a gateway passes the caller's token on
	res, err := r.chain(ctx, c)   // r.core itself when there is no middleware
	switch {
	case err != nil:
		return nil, err
	case rd.err != nil:
		return nil, rd.err
	case res.Error != nil: // a middleware's own answer
		return nil, errors.New(res.Error.Message)
	}
	if rd.value != nil {
		return rd.value, nil
	}
	return res.Value, nil
}

// runReadable is the core of a read, render or completion: its function,
// within its timeout, a panic recovered.
func (r *Registry) runReadable(ctx context.Context, c *Call) (CallResult, error) {
	rd := c.readable
	if rd.guard != nil {
		if err := r.checkReadable(ctx, c, rd.guard, rd.Body); err != nil {
			return CallResult{}, err
		}
	}
	res := CallResult{CallID: c.CallID}
	if max := int64(cmp.Or(rd.MaxConcurrent, r.maxConcurrent)); max > 0 && rd.Running != nil {
		if rd.held = rd.Running.Add(1) <= max; !rd.held {
			rd.Running.Add(-1)
			return res, &Error{Code: CodeUnavailable, RetryAfter: r.busyRetryAfter, outcome: OutcomeBusy,
				Message: fmt.Sprintf("The %s of %s is busy (%d under way, its limit); try again shortly", c.Kind, wire.Truncate(c.Target, 200), max)}
		}
	}
	start := time.Now()
	timeout := cmp.Or(rd.Timeout, r.timeout)
	var err error
	if timeout > 0 {
		rd.value, err = r.runReadableWithin(ctx, c, timeout, start)
	} else {
		rd.value, err = r.runReadableFunc(ctx, c)
	}
	res.Duration = time.Since(start)
	rd.err = err
	switch {
	case err == nil:
		res.Value = rd.value
	case errors.Is(err, errReadableTimedOut):
		res.Error, res.outcome = &ToolError{Message: err.Error(), CanRetry: true}, OutcomeTimeout
	case errors.Is(err, errReadablePanicked):
		res.Error, res.Unexpected = &ToolError{Message: err.Error()}, true
	case ctx.Err() != nil:
		res.Error, res.outcome = &ToolError{Message: err.Error()}, OutcomeCanceled
	default:
		if e, ok := errors.AsType[*Error](err); ok { // invalid input, a refusal: as a tool's
			return CallResult{}, e
		}
		res.Error = &ToolError{Message: err.Error()}
	}
	return res, nil
}

// runReadableWithin runs the function in a goroutine of its own, so that
// one that ignores its context's deadline is answered on time all the
// same.
func (r *Registry) runReadableWithin(ctx context.Context, c *Call, timeout time.Duration, start time.Time) (json.RawMessage, error) {
	ctx, cancel := context.WithTimeoutCause(ctx, timeout, errReadableDeadline)
	defer cancel()
	done := make(chan struct{})
	var value json.RawMessage
	var err error
	go func() { value, err = r.runReadableFunc(ctx, c); close(done) }()
	select {
	case <-done: // by the clock too: the timer may not have run yet
		if context.Cause(ctx) != errReadableDeadline && time.Since(start) < timeout {
			return value, err
		}
	case <-ctx.Done():
		if context.Cause(ctx) != errReadableDeadline {
			return nil, context.Cause(ctx)
		}
	}
	return nil, fmt.Errorf("%w (%s)", errReadableTimedOut, timeout)
}

// runReadableFunc runs the function, a panic recovered and logged.
func (r *Registry) runReadableFunc(ctx context.Context, c *Call) (value json.RawMessage, err error) {
	defer func() {
		if v := recover(); v != nil {
			r.logger.ErrorContext(ctx, "otc: function panicked",
				slog.String("of", string(c.Kind)+" "+c.Target),
				slog.String("panic", wire.DescribePanic(v)),
				slog.String("stack", string(debug.Stack())))
			value, err = nil, errReadablePanicked
		}
	}()
	if rd := c.readable; rd.held { // until it returns: one that ignores its timeout keeps its place
		defer rd.Running.Add(-1)
	}
	return c.readable.Fn(ctx)
}

// readableGuard is what a read or a render of an entry checks of its
// caller beyond the entry's listing (Policy.Admits, which the server
// applies before: what a caller may not see reads as not found): the
// checks that depend on the request and the moment, as a tool call
// makes them (checkPolicy, spendToken).
type readableGuard struct {
	p       *Policy
	subject string
	needs   *callerNeeds
}

// GuardsReadable marks g as a hook.Guard.
func (*readableGuard) GuardsReadable() {}

// newReadableGuard is the seam's Guard: nil for a policy that asks nothing of
// a read beyond its listing.
func newReadableGuard(p *Policy, subject string) *readableGuard {
	n := needsOf(p, subject) // nil for a nil policy
	if n == nil || !n.capability {
		return nil // scopes and protocols: the listing checked them
	}
	return &readableGuard{p: clonePolicy(p), subject: subject, needs: n}
}

// checkReadable applies g to the call c of a read or a render, whose
// request came as body.
func (r *Registry) checkReadable(ctx context.Context, c *Call, g *readableGuard, body []byte) error {
	id := CallerIdentity(ctx)
	what := string(c.Kind) + " of " + wire.Truncate(g.subject, 200)
	if id == nil || id.Claims == nil {
		return refuse(ReasonMissingToken, "The "+what+" needs a capability token", "")
	} else if err := r.checkRevoked(ctx, id, g.subject); err != nil || !g.p.RequiresExecution {
		return err
	}
	claims := id.Claims
	jti, exp, problem := tokenID(claims)
	if problem != "" {
		return refuse(ReasonInvalidToken, problem, "")
	}
	if msg := checkBinding(g.p, claims, &CallRequest{RequestBody: body, HTTPRequest: c.info.request}); msg != "" {
		return refuse(ReasonExecBindingInvalid, "The token is not bound to this "+what, msg)
	}
	iss, _ := claims["iss"].(string)
	key := "j" + strconv.Itoa(len(iss)) + ":" + iss + jti // the key a tool call spends: one token, one use
	fresh, err := r.tokens.spend(ctx, key, "", exp.Add(max(id.leeway, 0)+spentMargin))
	switch {
	case err != nil:
		r.logger.ErrorContext(ctx, "otc: the record of spent token ids failed; the "+string(c.Kind)+" was not run", "of", g.subject, "error", err.Error())
		return &Error{Code: CodeUnavailable, RetryAfter: r.busyRetryAfter,
			Message: "The " + what + " could not be run just now; try again shortly with the same token"}
	case !fresh:
		return refuse(ReasonTokenReplayed, "The token was already used",
			"an execution-bound token is good for one request; ask its issuer for a new token")
	}
	return nil
}
