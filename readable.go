package otc

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"runtime/debug"
	"time"

	"github.com/otcgo/otc/internal/callin"
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

// The kinds of calls the pipeline runs.
const (
	// CallTool is a call of a tool: Call.ToolID names it.
	CallTool CallKind = "tool"
	// CallRead is a read of a resource (MCP's resources/read): Call.Target
	// is its URI.
	CallRead CallKind = "read"
	// CallRender is a prompt rendered (MCP's prompts/get): Call.Target is
	// the prompt's name.
	CallRender CallKind = "render"
	// CallComplete is the completion of an argument (MCP's
	// completion/complete): Call.Target names what is completed, a
	// resource template's text or "prompt:" and a prompt's name.
	CallComplete CallKind = "complete"
)

// readable is the function of a read, render or completion, and what it
// returned.
type readable struct {
	fn      func(context.Context) (json.RawMessage, error)
	timeout time.Duration
	// What fn returned: its value, or its error as it returned it, for
	// the adapter to word.
	value json.RawMessage
	err   error
}

// errReadableDeadline is the cause of a read's, render's or completion's
// context ending at its timeout.
var errReadableDeadline = errors.New("otc: the timeout passed")

// What a read, a render or a completion returns that ran past its
// timeout (see [RegistryOptions.DefaultTimeout]), or whose function
// panicked (the panic and its stack go to the registry's logger).
var (
	errReadableTimedOut = errors.New("it did not finish within its timeout")
	errReadablePanicked = errors.New("the function failed unexpectedly (the server's log has the details)")
)

func init() {
	callin.RunReadable = func(ctx context.Context, reg any, kind, target, protocol string, r *http.Request, timeout time.Duration,
		fn func(context.Context) (json.RawMessage, error)) (json.RawMessage, error) {
		return reg.(*Registry).serveReadable(ctx, CallKind(kind), target, protocol, r, timeout, fn)
	}
}

// serveReadable runs fn, the function of a read, render or completion of
// target, through the middleware and the core, within timeout (zero:
// the registry's DefaultTimeout). It returns what fn returned, or the
// error a middleware refused it with, errReadableTimedOut, or
// errReadablePanicked.
func (r *Registry) serveReadable(ctx context.Context, kind CallKind, target, protocol string, hr *http.Request, timeout time.Duration,
	fn func(context.Context) (json.RawMessage, error)) (json.RawMessage, error) {
	info := &callInfo{request: hr}
	rd := &info.readable
	rd.fn, rd.timeout = fn, timeout
	c := &info.call
	*c = Call{Kind: kind, Target: target, Protocol: protocol, Identity: CallerIdentity(ctx), info: info, readable: rd}
	// The function, and middleware, find the request in the context
	// (HTTPRequest): a gateway's read passes the caller's token on.
	ctx = withCallInfo(ctx, info)
	var res CallResult
	var err error
	if r.wrapped {
		c.CallID = NewCallID() // for middleware: a log's, a span's
		res, err = r.chain(ctx, c)
	} else {
		res, err = r.core(ctx, c)
	}
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
	start := time.Now()
	res := CallResult{CallID: c.CallID}
	timeout := rd.timeout
	if timeout == 0 {
		timeout = r.timeout
	}
	var value json.RawMessage
	var err error
	if timeout <= 0 {
		value, err = r.runReadableFunc(ctx, c)
	} else {
		value, err = r.runReadableWithin(ctx, c, timeout, start)
	}
	res.Duration = time.Since(start)
	rd.value, rd.err = value, err
	switch {
	case err == nil:
		res.Value = value
	case errors.Is(err, errReadableTimedOut):
		res.Error, res.outcome = &ToolError{Message: err.Error(), CanRetry: true}, OutcomeTimeout
	case errors.Is(err, errReadablePanicked):
		res.Error, res.Unexpected = &ToolError{Message: err.Error()}, true
	case ctx.Err() != nil:
		res.Error, res.outcome = &ToolError{Message: err.Error()}, OutcomeCanceled
	default:
		if e, ok := errors.AsType[*Error](err); ok {
			// Invalid input, a refusal: the call's error, as for a tool's
			// input (its class from OutcomeOf).
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
	type ran struct {
		value json.RawMessage
		err   error
	}
	done := make(chan ran, 1)
	go func() {
		v, err := r.runReadableFunc(ctx, c)
		done <- ran{v, err}
	}()
	select {
	case out := <-done:
		if context.Cause(ctx) == errReadableDeadline || time.Since(start) >= timeout {
			return nil, fmt.Errorf("%w (%s)", errReadableTimedOut, timeout)
		}
		return out.value, out.err
	case <-ctx.Done():
		if context.Cause(ctx) == errReadableDeadline {
			return nil, fmt.Errorf("%w (%s)", errReadableTimedOut, timeout)
		}
		return nil, context.Cause(ctx)
	}
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
	return c.readable.fn(ctx)
}
