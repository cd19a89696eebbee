package otc

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"runtime/debug"
	"strings"
	"time"

	"github.com/otcgo/otc/internal/decode"
	"github.com/otcgo/otc/internal/jsonparse"
	"github.com/otcgo/otc/internal/runner"
	"github.com/otcgo/otc/internal/wire"
)

// This file is the call pipeline: the one path every call takes, whatever
// wire format it came through. An adapter (the OTC handler, the REST view,
// the MCP server, or a direct Registry.Call) turns its request into a
// CallRequest; the pipeline resolves the tool, runs the registry's
// middleware around the core, and the core checks requirements, validates
// the input, applies the tool's limits and runs the function. The adapter
// renders what comes back in its own shape.

// The wire formats of this library, as [Call.Protocol] names them. Other
// adapters may use names of their own.
const (
	// ProtocolOTC is the OTC/OXP handler, [Handler].
	ProtocolOTC = "otc"
	// ProtocolHTTP is the REST view (package github.com/otcgo/otc/rest).
	ProtocolHTTP = "http"
	// ProtocolMCP is the Model Context Protocol server.
	ProtocolMCP = "mcp"
	// ProtocolA2A is the Agent2Agent server (package
	// github.com/otcgo/otc/a2a). A policy that lists "a2a/2025-draft-01",
	// the universal registry's name for it, allows it too.
	ProtocolA2A = "a2a"
)

// Call is one call of a tool as middleware sees it. The registry builds it
// once the tool has been resolved, or has failed to resolve, and passes it
// down the middleware chain. Its fields describe the call and must not be
// modified: changing them does not change the call.
type Call struct {
	// Kind says what the call runs: a tool (CallTool), or a read, render
	// or completion (CallRead, CallRender, CallComplete), whose Target
	// says of what; for those Tool is nil, ToolID and Input empty.
	Kind   CallKind
	Target string

	// Protocol is the wire format the call came through: ProtocolOTC,
	// ProtocolHTTP, ProtocolMCP, or what CallRequest.Protocol said for a
	// direct call (empty unless set).
	Protocol string

	// ToolID is the tool as the caller named it: a tool id, with or
	// without a version, over OTC; a tool name over the REST view and MCP.
	ToolID string

	// Tool is the definition of the tool version the call resolved to. It
	// is nil when the call names no registered tool; the call then fails
	// with an error wrapping [ErrToolNotFound] (or another [*Error] for a
	// malformed request) when it reaches the end of the chain. It is
	// shared with the catalog and must not be modified.
	Tool *ToolDefinition

	// CallID is the caller's call id, or the one the registry generated.
	// It is empty only when the caller's id was refused as too long.
	CallID string

	// TraceID is the caller's trace id, or "".
	TraceID string

	// Identity is who the request proved to be (see [CallerIdentity]), or
	// nil when the server does not authenticate.
	Identity *Identity

	// Input is the input as the caller sent it: a JSON object, or empty
	// when it sent none. It may hold anything the caller chose to send,
	// secrets included; log it only on purpose.
	Input json.RawMessage

	tool     *registeredTool // nil when err is set
	req      *CallRequest
	info     *callInfo
	err      error     // why the call cannot run, found before the chain
	readable *readable // of a read, render or completion; nil for a tool call
}

// CallFunc runs a call: the rest of the chain, ending in the tool
// function. It returns what [Registry.Call] returns: a [CallResult] once
// the function has run (or was refused by its limits), or an error, an
// [*Error], when the call failed before the function ran.
type CallFunc func(ctx context.Context, call *Call) (CallResult, error)

// Middleware wraps every call the registry runs, over every wire format.
// It is given the next step of the chain and returns a step that does its
// own work around it:
//
//   - before next: read the call, add values to the context passed on (the
//     tool function receives that context), or refuse the call by returning
//     an [*Error] without calling next;
//   - after next: observe the outcome, with [OutcomeOf] for its class.
//
// Each adapter renders a refusal in its own shape, as it renders the
// registry's own errors: an [*Error] with CodeServerError is a 400 over
// OTC, for example. An error that is not an *Error is rendered as a 400
// server error whose developer message is the error's text.
//
// Middleware runs after the tool is resolved and before its requirements
// are checked and its input validated: a call that fails resolution still
// passes through the chain, with a nil [Call.Tool], so that it is
// observed. See [RegistryOptions.Middleware] for the order.
type Middleware func(next CallFunc) CallFunc

// Outcome is the class of a call's outcome, as [OutcomeOf] reports it.
type Outcome string

// The outcome classes. The first five are calls that reached the tool's
// limits or its function; the others failed before it ran.
const (
	// OutcomeSuccess: the function returned a value.
	OutcomeSuccess Outcome = "success"
	// OutcomeToolError: the function returned an error.
	OutcomeToolError Outcome = "tool_error"
	// OutcomeFault: the function panicked or returned a value that cannot
	// be encoded as JSON.
	OutcomeFault Outcome = "fault"
	// OutcomeTimeout: the function ran past the tool's timeout.
	OutcomeTimeout Outcome = "timeout"
	// OutcomeBusy: the function did not run, and the call may be sent
	// again shortly: the tool was already running its maximum number of
	// concurrent calls, the idempotency store (or the record of spent
	// execution-bound tokens) could not be reached, or a duplicate waited
	// its limit for the call with its id to end.
	OutcomeBusy Outcome = "busy"
	// OutcomeCanceled: the caller went away, or its deadline passed, while
	// the function ran.
	OutcomeCanceled Outcome = "canceled"

	// OutcomeNotFound: no registered tool or version matches the call.
	OutcomeNotFound Outcome = "not_found"
	// OutcomeBadRequest: the call is malformed: a malformed tool id, an
	// input that is not an object, an id that is too long.
	OutcomeBadRequest Outcome = "bad_request"
	// OutcomeMissingRequirements: the call context lacks a secret, an
	// authorization token or the user id that the tool requires.
	OutcomeMissingRequirements Outcome = "missing_requirements"
	// OutcomeInvalidInput: the input does not match the tool's schema.
	OutcomeInvalidInput Outcome = "invalid_input"
	// OutcomeUnauthenticated: the call was refused for its credentials.
	OutcomeUnauthenticated Outcome = "unauthenticated"
	// OutcomeRefused: middleware refused the call.
	OutcomeRefused Outcome = "refused"
	// OutcomeRateLimited: middleware refused the call because its caller
	// is over its rate limit (an [*Error] with CodeRateLimited).
	OutcomeRateLimited Outcome = "rate_limited"
	// OutcomeConflict: the call id was already used, by the same caller,
	// for a call of another tool or with other input (see
	// [RegistryOptions.Idempotency]).
	OutcomeConflict Outcome = "conflict"
)

// OutcomeOf classifies what a [CallFunc] returned. Middleware calls it on
// the outcome of next.
func OutcomeOf(res CallResult, err error) Outcome {
	if err == nil {
		switch {
		case res.outcome != "":
			return res.outcome
		case res.Error == nil:
			return OutcomeSuccess
		case res.Unexpected:
			return OutcomeFault
		}
		return OutcomeToolError
	}
	if errors.Is(err, ErrToolNotFound) {
		return OutcomeNotFound
	}
	e, ok := errors.AsType[*Error](err)
	switch {
	case !ok:
		return OutcomeRefused
	case e.outcome != "":
		return e.outcome
	case e.Code == CodeInvalidInput:
		return OutcomeInvalidInput
	case e.Code == CodeUnauthenticated:
		return OutcomeUnauthenticated
	case e.Code == CodeRateLimited:
		return OutcomeRateLimited
	case e.MissingRequirements != nil:
		return OutcomeMissingRequirements
	}
	return OutcomeRefused
}

// CallRequest is one call of a tool, independent of any wire format.
type CallRequest struct {
	// ToolID is "Toolkit.Tool", "Toolkit.Tool@x" or "Toolkit.Tool@x.y.z".
	ToolID string
	// ToolName, used when ToolID is empty, names the tool as a model sees
	// it, with an optional version: "Calculator_Add", "Calculator_Add@1",
	// "Calculator_Add@1.0.0". Adapters of wire formats that address tools
	// by name (MCP, the REST view) set it instead of ToolID.
	ToolName string
	// CallID identifies the call; empty means the registry generates a
	// random (version 4) UUID.
	CallID string
	// TraceID is handed to the tool function, read with [TraceID].
	TraceID string
	// Input is the JSON object of parameters. Empty or JSON null means {}.
	Input json.RawMessage
	// Context carries the secrets, authorization tokens and user id the
	// caller sends for the tool (see [Requirements]).
	Context CallContext

	// Protocol names the wire format the call came through, for
	// middleware ([Call.Protocol]). Adapters set it; a direct call may
	// leave it empty.
	Protocol string
	// HTTPRequest is the HTTP request the call arrived in, for
	// [HTTPRequest]; nil for a call that did not come over HTTP.
	HTTPRequest *http.Request
	// RequestBody is the exact bytes of the request that carried the call
	// (the HTTP body, or the line on stdio), which a tool whose [Policy]
	// requires execution binding compares with the token's inp_hash.
	// Adapters set it; it is read only during the call.
	RequestBody []byte

	// Asker, when not nil, puts the questions of the call's function to
	// its caller (see [Ask]), as [WithAsker] on the call's context would,
	// without the context value: an adapter that has a value of its own
	// per call anyway can serve both with it. An Asker installed with
	// WithAsker takes precedence.
	Asker Asker

	root int32 // of doc (below); here, beside the bool, where the struct has room

	// CallIDGenerated says that CallID is one the adapter generated (with
	// NewCallID), not one the caller sent. Such a call is never looked up
	// in, nor recorded by, the idempotency store: only a caller's own id
	// identifies a retry. An adapter that must know a call's id before the
	// call, to put it in a response header say, generates one and sets
	// this; others leave CallID empty and let the registry generate it.
	CallIDGenerated bool

	// AsTask says that the call runs as a task: the adapter answered its
	// caller with a task handle and runs the call in the background (MCP's
	// tasks extension). A tool whose [Tool.Tasks] is TasksRequired runs
	// only for such a call; any other is answered with a tool error that
	// says so (see [TasksRequired]).
	AsTask bool

	// doc, when set by a handler that parsed the body already, holds the
	// input at node root; Input is then its text.
	doc *jsonparse.Document

	admitted func() error // runs once the call is admitted (the seam's SetAdmitted)

	// tool, when set, is the tool the request names, resolved by the wire
	// format (the seam's Resolve), which Call then runs. (A resolution that
	// failed is not kept: Call resolves again, and answers why.)
	tool *registeredTool
}

// LogValue hides the secrets and tokens of the call context, which
// slog's JSON handler would otherwise encode with their values.
func (r CallRequest) LogValue() slog.Value {
	return slog.GroupValue(
		slog.String("tool_id", r.ToolID),
		slog.String("call_id", r.CallID),
		slog.String("trace_id", r.TraceID),
		slog.Any("context", r.Context))
}

// MaxIDLength is the longest call id or trace id a call may carry, in
// bytes. A call id is echoed in the answer and both go to logs, so the
// server bounds them; 128 bytes holds a UUID, a W3C trace id and the ids
// agents generate. A longer one is refused before the tool is resolved.
const MaxIDLength = 128

// checkIDs refuses a call or trace id longer than MaxIDLength.
func checkIDs(callID, traceID string) error {
	if err := checkID("call_id", callID); err != nil {
		return err
	}
	return checkID("trace_id", traceID)
}

// checkID refuses an id longer than MaxIDLength; name is where the caller
// sent it (call_id, or the REST view's X-Request-Id header).
func checkID(name, id string) error {
	if len(id) > MaxIDLength {
		return badRequest(fmt.Sprintf("%s is longer than %d bytes", name, MaxIDLength),
			fmt.Sprintf("%s is echoed back and logged, so it is limited to %d bytes: send a UUID or another short id", name, MaxIDLength))
	}
	return nil
}

// CallResult is the outcome of a call that reached the tool function, or
// its limits.
type CallResult struct {
	// CallID is the request's call id, or the one generated for it.
	CallID string
	// Duration runs from the start of input validation to the function's
	// return, or to the end of the wait for it.
	Duration time.Duration
	// Value is the function's result as JSON when it succeeded. It is nil
	// for a tool that returns nothing.
	Value json.RawMessage
	// Error is set when the call failed: the function returned an error,
	// panicked or returned a value that cannot be encoded, ran past its
	// timeout, or did not run because the tool was busy.
	Error *ToolError
	// Unexpected is true when the failure was not an error the function
	// returned but a fault: a panic, or a value that cannot be encoded.
	// Adapters whose wire format tells the two apart use it.
	Unexpected bool
	// Content is true when Value is the JSON array of a [Content] the tool
	// returned, as [ToolDefinition.Content] says of the tool.
	Content bool
	// Replayed is true when the function did not run for this call: an
	// earlier call with the same call id ran it, and this is the outcome
	// it recorded (see [RegistryOptions.Idempotency]). Duration is then
	// the earlier call's.
	Replayed bool

	outcome Outcome // set for the outcomes Error and Unexpected cannot tell apart
}

// Call runs one call through the pipeline: resolve the tool and version
// (the protocol's Tool Version Resolution), run the middleware, check the
// tool's requirements against the call context, validate the input, then
// run the function within the tool's limits and time it.
//
// A failure before the function runs is returned as an [*Error]: a
// CodeServerError for a malformed tool id, an unknown tool or version
// (wrapping [ErrToolNotFound]), an input that is not a JSON object, or
// missing requirements; a CodeInvalidInput, with its parameter errors, for
// input the schema rejects; or what a middleware refused the call with.
// Once the function has run, or was kept from running by its limits, the
// error is nil and a failure is reported in [CallResult.Error].
//
// ctx is passed to the function, with the call's metadata added; its
// cancellation is the function's signal to stop.
func (r *Registry) Call(ctx context.Context, req *CallRequest) (CallResult, error) {
	if req == nil {
		return CallResult{}, serverError("The call request is missing", "Registry.Call was given a nil *CallRequest")
	}
	var t *registeredTool
	err := checkIDs(req.CallID, req.TraceID)
	if err == nil && !isObjectOrNull(req.Input) {
		err = errInputNotObject
	}
	named := req.ToolID
	if named == "" && req.ToolName != "" {
		named = req.ToolName
	}
	switch {
	case err != nil:
	case req.tool != nil: // by the wire format, once (the seam's Resolve)
		t = req.tool
	default:
		t, err = r.resolveRequest(req)
	}
	return r.serve(ctx, req, named, t, err)
}

// resolveRequest resolves the tool req names: by its ToolName, or its
// ToolID, for its Protocol.
func (r *Registry) resolveRequest(req *CallRequest) (*registeredTool, error) {
	if req.ToolID == "" && req.ToolName != "" {
		return r.resolveNameFor(req.ToolName, req.Protocol)
	}
	return r.resolveFor(req.ToolID, req.Protocol)
}

// serve runs a call whose tool an adapter has resolved (t), or failed to
// resolve (err), through the middleware and the core. named is the tool
// as the caller named it.
func (r *Registry) serve(ctx context.Context, req *CallRequest, named string, t *registeredTool, err error) (CallResult, error) {
	info := &callInfo{userID: req.Context.UserID, request: req.HTTPRequest}
	c := &info.call
	*c = Call{
		Kind:     CallTool,
		Protocol: req.Protocol,
		ToolID:   named,
		CallID:   req.CallID,
		TraceID:  req.TraceID,
		Identity: CallerIdentity(ctx),
		Input:    req.Input,
		tool:     t,
		req:      req,
		info:     info,
		err:      err,
	}
	if t == nil && err == nil {
		c.err = serverError("The tool could not be resolved", "the adapter passed neither a tool nor an error")
	}
	if t != nil && c.err == nil {
		c.Tool = &t.def
		info.toolID = t.def.ID
	}
	if len(c.CallID) > MaxIDLength {
		c.CallID = "" // refused by checkIDs; never logged
	} else if c.CallID == "" {
		c.CallID = NewCallID()
	}
	if len(c.TraceID) > MaxIDLength {
		c.TraceID = ""
	}
	res, err := r.chain(withCallInfo(ctx, info), c)
	if errors.Is(err, ErrToolNotFound) {
		err = r.withSuggestions(err, named, c.Identity, req.Protocol)
	}
	if err != nil {
		if _, ok := errors.AsType[*Error](err); !ok {
			err = &Error{
				Code:             CodeServerError,
				Message:          "The call was refused",
				DeveloperMessage: err.Error(),
				cause:            err,
				outcome:          OutcomeRefused,
			}
		}
		return CallResult{}, err
	}
	return res, nil
}

// errForeignCall is the error for a Call that middleware built itself
// rather than passing on the one it was given.
var errForeignCall = badRequest("The call could not be run", "a middleware passed on a Call the registry did not build; pass on the *Call you were given (a copy of it is fine)")

// emptyInput is the parsed input of a call that sent none. It is shared
// and never released.
var emptyInput = func() *jsonparse.Document {
	d, err := jsonparse.Parse([]byte(`{}`))
	if err != nil {
		panic(err)
	}
	return d
}()

// core is the end of the middleware chain: requirements, input
// validation, the tool's limits and the function.
func (r *Registry) core(ctx context.Context, c *Call) (CallResult, error) {
	if c.err != nil {
		return CallResult{}, c.err
	}
	if c.readable != nil {
		if c.info == nil {
			return CallResult{}, errForeignCall
		}
		return r.runReadable(ctx, c)
	}
	t, req, info := c.tool, c.req, c.info
	if t == nil || req == nil || info == nil {
		return CallResult{}, errForeignCall
	}
	if err := r.checkPolicy(ctx, t, c); err != nil {
		return CallResult{}, err
	}
	if err := r.checkRequirements(ctx, t, req, info); err != nil {
		return CallResult{}, err
	}
	if t.def.Tasks == TasksRequired && !req.AsTask {
		return taskRequired(c), nil
	}

	start := time.Now()
	doc, root := req.doc, req.root
	switch {
	case doc == nil && isNull(req.Input), doc != nil && doc.Kind(root) == jsonparse.KindNull:
		doc, root = emptyInput, 0
	case doc == nil:
		d, err := jsonparse.Parse(req.Input)
		if err != nil {
			return CallResult{}, badRequest("The input is not valid JSON", err.Error())
		}
		defer jsonparse.Release(d)
		doc, root = d, 0
	}
	if doc.Kind(root) != jsonparse.KindObject {
		return CallResult{}, errInputNotObject
	}
	if errs := t.validator.Validate(doc, root); errs != nil {
		return CallResult{}, &Error{Code: CodeInvalidInput, Message: invalidInputMessage, ParameterErrors: errs}
	}

	input := t.decoderInput(doc, root)
	if req.admitted != nil { // every refusal is behind: the adapter may keep the call now
		if err := req.admitted(); err != nil {
			return CallResult{}, err
		}
	}

	// With an idempotency store, a call that brought its own call id runs
	// only if it is the first with that id; a repeat is answered with the
	// first one's outcome (see idempotency.go).
	if r.idem == nil || req.CallID == "" || req.CallIDGenerated {
		res, _, err := r.execute(ctx, c, input, start, nil)
		return res, err
	}
	replay, claim, err := r.dedupe(ctx, c, doc, root)
	if err != nil || claim == nil {
		return replay, err
	}
	var late func(json.RawMessage, error)
	if t.timeout > 0 {
		late = r.finishLate(ctx, claim, t, c.CallID, start)
	}
	res, end, err := r.execute(ctx, c, input, start, late)
	// The claim is settled here, once, as execute says: the outcome
	// recorded, the key released for a call that did not run to an
	// outcome that stands, or left to late once the function returns.
	switch end {
	case settleRecord:
		r.finishClaim(ctx, claim, &res, t.def.ID)
	case settleRelease:
		r.releaseClaim(ctx, claim, c.CallID, t.def.ID)
	}
	return res, err
}

// claimEnd says how a call's idempotency claim is settled once execute
// returns.
type claimEnd uint8

const (
	settleRecord  claimEnd = iota // the result stands: record it (finishClaim decides whether it may)
	settleRelease                 // the function did not run to a result: release the key
	settleLate                    // the function outran its timeout: late settles it when it returns
)

// execute runs a resolved, validated call: its place in the tool's
// concurrency limit, its execution-bound token, and the function within
// its timeout. It returns the call's result or error, and how its
// idempotency claim, if any, is to be settled.
func (r *Registry) execute(ctx context.Context, c *Call, input []byte, start time.Time, late func(json.RawMessage, error)) (CallResult, claimEnd, error) {
	t := c.tool
	res := CallResult{CallID: c.CallID}
	limitedBy := func(l *limitedOutcome) CallResult {
		res.Duration = time.Since(start)
		res.Error, res.outcome = l.err, l.outcome
		return res
	}
	if busy := r.acquire(t); busy != nil {
		return limitedBy(busy), settleRelease, nil
	}
	// An execution-bound token is spent once the call holds its place and
	// nothing is left between it and the function, so that a busy tool
	// does not use up a token.
	if p := t.def.Policy; p != nil && p.RequiresExecution {
		if unspent, err := r.spendToken(ctx, c); unspent != nil || err != nil {
			r.releaseSlot(t)
			if err != nil {
				return CallResult{}, settleRelease, err
			}
			return limitedBy(unspent), settleRelease, nil
		}
	}
	value, limited, err := r.runLimited(ctx, t, input, late)
	switch {
	case limited != nil:
		return limitedBy(limited), settleLate, nil
	case err == nil:
		res.Value, res.Content = value, t.def.Content
	default:
		if ie, ok := err.(*inputError); ok {
			return CallResult{}, settleRelease, &Error{
				Code:            CodeInvalidInput,
				Message:         invalidInputMessage,
				ParameterErrors: locateDecodeError(t.inType, input, ie.err),
			}
		}
		res.Error, res.Unexpected = r.toolError(t, err)
		if !res.Unexpected && ctx.Err() != nil {
			res.outcome = OutcomeCanceled
		}
	}
	res.Duration = time.Since(start)
	return res, settleRecord, nil
}

// errInputNotObject is the error for an input that is JSON of another kind.
var errInputNotObject = badRequest("The input must be a JSON object", "input maps parameter names to values; send {} or leave it out for a tool without parameters")

// limitedOutcome is the result of a call its limits ended: the tool was
// busy, or the function ran past its timeout.
type limitedOutcome struct {
	err     *ToolError
	outcome Outcome
}

// acquire takes a place in the tool's concurrency limit for a call, or
// returns the busy outcome of a call over the limit, which is answered at
// once, without running. A place taken is given back by runLimited, or
// by releaseSlot when the call does not run after all.
func (r *Registry) acquire(t *registeredTool) *limitedOutcome {
	if t.maxConcurrent > 0 && t.running.Add(1) > t.maxConcurrent {
		t.running.Add(-1)
		return &limitedOutcome{outcome: OutcomeBusy, err: &ToolError{
			Message:          fmt.Sprintf("Tool '%s' is busy; try again shortly", t.def.Name),
			DeveloperMessage: fmt.Sprintf("%s is already running its limit of %d concurrent calls", t.def.ID, t.maxConcurrent),
			CanRetry:         true,
			RetryAfter:       r.busyRetryAfter,
		}}
	}
	return nil
}

// releaseSlot gives back the place acquire took, for a call that does not
// run after all.
func (r *Registry) releaseSlot(t *registeredTool) {
	if t.maxConcurrent > 0 {
		t.running.Add(-1)
	}
}

// longRun is the run time past which a tool's runs go on goroutines kept
// between runs (runner.Go): an in-memory tool takes microseconds, a call
// to another server a tenth of a millisecond or more.
const longRun = 50 * time.Microsecond

// runLimited runs the function of a call that holds its place in the
// tool's concurrency limit (see acquire), within the tool's timeout, and
// gives the place back when the function returns. With a timeout, the
// function runs in its own goroutine, so that a function that ignores its
// context's deadline still gets its answer on time; it keeps its place in
// the concurrency limit until it returns, so that runaway functions cannot
// pile up.
//
// late, when not nil, is given what the function returned if the call was
// answered by its timeout instead: at once if the function had returned,
// or from another goroutine when it does.
func (r *Registry) runLimited(ctx context.Context, t *registeredTool, input []byte, late func(json.RawMessage, error)) (json.RawMessage, *limitedOutcome, error) {
	if t.timeout <= 0 {
		defer r.releaseSlot(t)
		value, err := r.run(ctx, t, input)
		return value, nil, err
	}

	// The input may point into a pooled request buffer that the adapter
	// reuses once the call returns, which may be before the function does.
	input = bytes.Clone(input)
	start := time.Now()
	ctx, cancel := context.WithTimeoutCause(ctx, t.timeout, errToolTimeout)
	type ran struct {
		value json.RawMessage
		err   error
	}
	done := make(chan ran, 1)
	run := func() {
		defer cancel()
		defer r.releaseSlot(t)
		v, err := r.run(ctx, t, input)
		if !t.long.Load() && time.Since(start) > longRun {
			t.long.Store(true)
		}
		done <- ran{v, err}
	}
	if t.long.Load() {
		// On a goroutine kept between runs: a tool that takes long is
		// most often one that calls out (another server's, through an
		// HTTP client), deep enough that a fresh goroutine's stack would
		// be copied to a larger one two or three times on each run.
		runner.Go(ctx, run)
	} else {
		go run() // a quick tool: a fresh goroutine is the cheaper hand-over
	}
	abandon := func() {
		if late != nil {
			go func() {
				out := <-done
				late(out.value, out.err)
			}()
		}
	}
	select {
	case out := <-done:
		// By the clock, not only by the context: on a busy machine the
		// function may return before the timer that ends its context has
		// run.
		if context.Cause(ctx) == errToolTimeout || time.Since(start) >= t.timeout {
			if late != nil {
				late(out.value, out.err)
			}
			return nil, r.timedOut(t), nil
		}
		return out.value, nil, out.err
	case <-ctx.Done():
		if context.Cause(ctx) == errToolTimeout {
			abandon()
			return nil, r.timedOut(t), nil
		}
	}
	// The caller went away first. Its cancellation reached the function,
	// which is given until the tool's deadline to return, as it would be
	// without a timeout; its answer then goes back as usual.
	deadline := time.NewTimer(time.Until(start.Add(t.timeout)))
	defer deadline.Stop()
	select {
	case out := <-done:
		return out.value, nil, out.err
	case <-deadline.C:
		abandon()
		return nil, r.timedOut(t), nil
	}
}

// errToolTimeout is the cause of a tool function's context ending at the
// tool's timeout.
var errToolTimeout = errors.New("otc: the tool's timeout passed")

// timedOut is the outcome of a call that ran past its tool's timeout.
func (r *Registry) timedOut(t *registeredTool) *limitedOutcome {
	return &limitedOutcome{outcome: OutcomeTimeout, err: &ToolError{
		Message:          fmt.Sprintf("Tool '%s' did not finish within %s", t.def.Name, t.timeout),
		DeveloperMessage: fmt.Sprintf("%s ran past its timeout of %s", t.def.ID, t.timeout),
		CanRetry:         true,
	}}
}

// checkRequirements fills the call's metadata with the secrets and tokens
// the tool declared, or reports what the call context lacks.
func (r *Registry) checkRequirements(ctx context.Context, t *registeredTool, req *CallRequest, info *callInfo) error {
	need := t.requirements
	if need == nil {
		return nil
	}
	var missing []string
	var mr MissingRequirements
	for _, s := range need.Secrets {
		v := firstValue(req.Context.Secrets, s.ID, func(s ToolSecret) (string, string) { return s.ID, s.Value })
		if v == "" {
			missing = append(missing, "secret "+s.ID)
			mr.Secrets = append(mr.Secrets, s)
			continue
		}
		if info.secrets == nil {
			info.secrets = make(map[string]string, len(need.Secrets))
		}
		info.secrets[s.ID] = v
	}
	for _, a := range need.Authorization {
		v := firstValue(req.Context.Authorization, a.ID, func(a ToolAuthorization) (string, string) { return a.ID, a.Token })
		if v == "" {
			missing = append(missing, "authorization "+a.ID)
			if r.challenge != nil {
				if c := r.challenge(ctx, t.def.ID, a, req.Context.UserID); c != nil {
					mr.Authorization = append(mr.Authorization, *c)
				}
			}
			continue
		}
		if info.tokens == nil {
			info.tokens = make(map[string]string, len(need.Authorization))
		}
		info.tokens[a.ID] = v
	}
	if need.UserID && req.Context.UserID == "" {
		missing = append(missing, "a user id")
		mr.UserID = true
	}
	if len(missing) == 0 {
		return nil
	}
	info.secrets, info.tokens = nil, nil
	return &Error{
		Code:                CodeServerError,
		Message:             fmt.Sprintf("Tool '%s' cannot run without %s", t.def.Name, strings.Join(missing, ", ")),
		DeveloperMessage:    fmt.Sprintf("%s requires %s in the call context", t.def.ID, strings.Join(missing, ", ")),
		MissingRequirements: &mr,
	}
}

// firstValue returns the first non-empty value sent for id.
func firstValue[T any](items []T, id string, split func(T) (string, string)) string {
	for _, it := range items {
		if k, v := split(it); k == id && v != "" {
			return v
		}
	}
	return ""
}

// decoderInput returns the validated input at node root of doc as the
// function's input type is decoded from: parameters under their exact
// names only, whole numbers for integer fields in integer form, durations
// in nanoseconds, and the defaults of absent optional parameters filled
// in (see internal/decode/decode.go and internal/decode/defaults.go).
func (t *registeredTool) decoderInput(doc *jsonparse.Document, root int32) []byte {
	input := doc.Raw(root)
	if edits := t.plan.Edits(doc, root, nil); edits != nil {
		input = decode.ApplyEdits(doc, root, edits)
	}
	if t.defaults != nil {
		input = decode.ApplyDefaults(t.defaults, doc, root, input)
	}
	return input
}

// run invokes the tool function, turning a panic into an error. The panic
// value and stack go to the logger; the caller sees a fixed message.
func (r *Registry) run(ctx context.Context, t *registeredTool, input []byte) (value json.RawMessage, err error) {
	defer func() {
		if v := recover(); v != nil {
			desc := wire.DescribePanic(v)
			r.logger.ErrorContext(ctx, "otc: tool function panicked",
				slog.String("tool", t.def.ID),
				slog.String("call_id", CallID(ctx)),
				slog.String("panic", desc),
				slog.String("stack", string(debug.Stack())))
			err = &panicError{desc: desc}
		}
	}()
	return t.invoke(ctx, input)
}

// panicError is a recovered panic of a tool function.
type panicError struct{ desc string }

func (e *panicError) Error() string { return "panic: " + e.desc }

// toolError turns what a function run returned into the error of a failed
// call result (the protocol's Tool Execution Errors). unexpected is true
// for a panic or an unencodable value, false for an error the function
// returned.
func (r *Registry) toolError(t *registeredTool, err error) (te *ToolError, unexpected bool) {
	var pe *panicError
	var ee *encodeError
	switch {
	case errors.As(err, &pe):
		return &ToolError{
			Message:          fmt.Sprintf("Tool '%s' failed unexpectedly", t.def.Name),
			DeveloperMessage: fmt.Sprintf("%s panicked: %s", t.def.ID, pe.desc),
		}, true
	case errors.As(err, &ee):
		return &ToolError{
			Message:          fmt.Sprintf("Tool '%s' returned a value that cannot be sent as JSON", t.def.Name),
			DeveloperMessage: fmt.Sprintf("%s: encoding the result: %v", t.def.ID, ee.err),
		}, true
	case errors.As(err, &te):
		out := *te
		out.Err = nil
		if out.Message == "" {
			out.Message = fmt.Sprintf("Tool '%s' failed", t.def.Name)
		}
		return &out, false
	}
	if ire, ok := errors.AsType[*InputRequiredError](err); ok {
		return inputRequiredToolError(t.def.Name, ire), false
	}
	if iae, ok := errors.AsType[*InvalidAnswerError](err); ok {
		return &ToolError{
			Message:          fmt.Sprintf("Tool '%s' could not use an answer it asked for: %s", t.def.Name, iae.Error()),
			DeveloperMessage: err.Error(),
			CanRetry:         true,
			Err:              iae,
		}, false
	}
	msg := err.Error()
	if msg == "" {
		msg = fmt.Sprintf("Tool '%s' failed", t.def.Name)
	}
	return &ToolError{Message: msg}, false
}

// isObjectOrNull reports whether raw is absent, JSON null or a JSON object,
// judging by its first significant byte; the full syntax is checked when it
// is parsed.
func isObjectOrNull(raw []byte) bool {
	raw = bytes.TrimLeft(raw, " \t\r\n")
	return len(raw) == 0 || raw[0] == '{' || isNull(raw)
}

// isNull reports whether raw is empty or the JSON literal null.
func isNull(raw []byte) bool {
	raw = bytes.TrimSpace(raw)
	return len(raw) == 0 || string(raw) == "null"
}

// NewCallID returns a random version 4 UUID, the form of call id the
// registry generates for a call that brings none. Clients use it to give a
// call an id before the first attempt, so that retries reuse it.
func NewCallID() string {
	var b [16]byte
	_, _ = rand.Read(b[:]) // crypto/rand.Read never fails
	return wire.UUID(b)
}
