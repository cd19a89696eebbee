package otc

import (
	"context"
	"net/http"
	"sync/atomic"
)

// callKey is the context key under which a call's metadata is stored.
type callKey struct{}

// callInfo is what middleware and a tool function can read about their
// call. One value is stored per call, holding the Call that middleware
// sees, so the accessors cost a single context lookup and a call one
// allocation.
type callInfo struct {
	call    Call
	toolID  string // "Toolkit.Tool@x.y.z"; empty when unresolved
	userID  string
	request *http.Request
	// secrets and tokens hold only what the tool declared, once its
	// requirements are met; nil until then, and when it declared nothing.
	secrets map[string]string
	tokens  map[string]string
	// asked counts the questions of the call that had no key of their
	// own, to name them (see InputRequest.Key).
	asked atomic.Int32
	// readable is the function of a read, render or completion, and what
	// it returned (readable.go); unused by a tool call.
	readable readable
}

func withCallInfo(ctx context.Context, info *callInfo) context.Context {
	return context.WithValue(ctx, callKey{}, info)
}

// noCall is what the accessors read outside a tool call.
var noCall callInfo

func callInfoFrom(ctx context.Context) *callInfo {
	if info, _ := ctx.Value(callKey{}).(*callInfo); info != nil {
		return info
	}
	return &noCall
}

// CallID returns the id of the call being served: the caller's call_id, or
// one the server generated. It is empty outside a tool call.
func CallID(ctx context.Context) string { return callInfoFrom(ctx).call.CallID }

// TraceID returns the caller's trace_id, or "" when it sent none.
func TraceID(ctx context.Context) string { return callInfoFrom(ctx).call.TraceID }

// UserID returns the user id from the call context, or "" when the caller
// sent none.
func UserID(ctx context.Context) string { return callInfoFrom(ctx).userID }

// ToolID returns the full id of the tool being called, "Toolkit.Tool@x.y.z",
// or "" outside a tool call.
func ToolID(ctx context.Context) string { return callInfoFrom(ctx).toolID }

// Secret returns the value of the secret id that the caller sent, when the
// tool declared it in its [Requirements]. A secret the tool did not declare
// is never visible, even if the caller sent it.
func Secret(ctx context.Context, id string) (string, bool) {
	v, ok := callInfoFrom(ctx).secrets[id]
	return v, ok
}

// AuthorizationToken returns the caller's token for the authorization
// provider id, when the tool declared that provider in its [Requirements].
func AuthorizationToken(ctx context.Context, id string) (string, bool) {
	v, ok := callInfoFrom(ctx).tokens[id]
	return v, ok
}

// HTTPRequest returns the HTTP request a call arrived in, for tools and
// middleware that need its headers or the client's address, or nil for a
// call that did not come over HTTP (a direct [Registry.Call], MCP over
// stdio). The request's body has been read already, and the request must
// not be kept after the call returns.
func HTTPRequest(ctx context.Context) *http.Request { return callInfoFrom(ctx).request }
