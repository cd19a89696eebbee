package otc

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
)

// This file is the tool author's side of asking the caller something in
// the middle of a call: the user (elicitation), the client's model
// (sampling) or the client's roots. A tool asks through [Ask], [Elicit],
// [Sample] or [ListRoots]; the wire format that serves the call puts an
// [Asker] in the call's context with [WithAsker], and decides how the
// question travels:
//
//   - MCP 2026-07-28 ends the call with an input_required result and runs
//     the function again when the client answers (so a function may run
//     several times for one call, and should ask before it acts);
//   - MCP 2025-06-18 and 2025-11-25 send server-to-client requests on the
//     call's stream, or on the stdio pipe, and the function waits;
//   - OTC and the REST view have no such round trip: the call ends with a
//     tool error that names what the tool needed, and the caller calls
//     again with the answers supplied.

// Input methods: what a tool can ask of its caller, named as MCP names
// the server-to-client requests.
const (
	MethodElicit    = "elicitation/create"
	MethodSample    = "sampling/createMessage"
	MethodListRoots = "roots/list"
)

// An InputRequest is one question a tool puts to its caller: an MCP
// server-to-client request, its method and its params.
type InputRequest struct {
	Method string          // MethodElicit, MethodSample or MethodListRoots
	Params json.RawMessage // the request's params, as MCP defines them for Method
	// Key names the question for the wire formats that send questions
	// and answers as a map (MCP 2026-07-28's inputRequests and
	// inputResponses, OTC's context.input_responses). Empty lets the
	// Asker name it by its place among the questions of the call: "q1",
	// "q2", and so on, which stays the same when the function runs again
	// and asks the same questions in the same order. Asker
	// implementations that send requests one by one may ignore it.
	Key string
}

// An Asker puts a tool's questions to its client. The adapter of each wire
// format installs one in the context of the calls it serves, with
// [WithAsker]. It must be safe for concurrent use.
type Asker interface {
	// Ask puts reqs to the client and returns its answers, one result
	// per request in order, each the JSON result MCP defines for the
	// request's method. It returns an *InputRequiredError when the
	// answers cannot be had within this run of the function (the call
	// will end and be resumed), and an *Error with CodeUnsupported
	// semantics (see ErrInputUnsupported) when the client cannot answer
	// such a request at all.
	Ask(ctx context.Context, reqs []InputRequest) ([]json.RawMessage, error)
}

type askerKey struct{}

// WithAsker returns a context whose calls ask their questions through a.
// Adapters call it on the context they pass to [Registry.Call].
func WithAsker(ctx context.Context, a Asker) context.Context {
	return context.WithValue(ctx, askerKey{}, a)
}

// ErrInputUnsupported is returned (wrapped) by [Ask] and the functions
// built on it when the call's caller cannot answer the question: it
// declared no such capability, or its wire format has no way to ask. A
// tool may go on without the answer, or return the error.
var ErrInputUnsupported = errors.New("the caller cannot answer this kind of request")

// InputRequiredError ends a run of a tool function whose questions are
// not answered yet. The wire format sends Requests to the client, and
// runs the function again with the answers. A function must return it
// (wrapped or not) as its error: a function that goes on without its
// answer would act on nothing.
type InputRequiredError struct {
	// Requests are the questions of this run, keyed by the names the
	// answers come back under.
	Requests map[string]InputRequest
}

func (e *InputRequiredError) Error() string {
	names := make([]string, 0, len(e.Requests))
	for k, r := range e.Requests {
		names = append(names, k+" ("+r.Method+")")
	}
	return "the tool needs input from the caller before it can go on: " + strings.Join(names, ", ")
}

// Ask puts reqs to the caller and returns its answers in order. Tools
// usually call [Elicit], [Sample] or [ListRoots] instead. Outside a call,
// or on a wire format that cannot ask, it returns an error wrapping
// [ErrInputUnsupported].
func Ask(ctx context.Context, reqs ...InputRequest) ([]json.RawMessage, error) {
	a := askerFrom(ctx)
	if a == nil {
		return nil, fmt.Errorf("otc: ask: %w: no wire format serves this call", ErrInputUnsupported)
	}
	if len(reqs) == 0 {
		return nil, nil
	}
	return a.Ask(ctx, reqs)
}

// askerFrom finds the Asker of the call served with ctx: one installed
// with [WithAsker], else the one its adapter passed in
// [CallRequest.Asker], else, for a call over OTC or the REST view, the
// one that answers from the call context's input_responses (see
// retryAsker); nil when there is none.
func askerFrom(ctx context.Context) Asker {
	if a, _ := ctx.Value(askerKey{}).(Asker); a != nil {
		return a
	}
	info := callInfoFrom(ctx)
	if info.call.req == nil {
		return nil
	}
	if a := info.call.req.Asker; a != nil {
		return a
	}
	switch info.call.Protocol {
	case ProtocolOTC, ProtocolHTTP:
		return retryAsker{info.call.req}
	}
	return nil
}
