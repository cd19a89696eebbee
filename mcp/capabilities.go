package mcp

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"sync"

	"github.com/otcgo/otc"
	"github.com/otcgo/otc/internal/mcpwire"
)

// callState is what a tool can learn about, and tell, the MCP request it
// serves. It is the call's context too, one that adds itself under
// stateKey: one allocation where a context.WithValue would make two.
type callState struct {
	context.Context
	caps  clientCaps // the client's declared capabilities
	mu    sync.Mutex
	needs string // a capability the tool required and the client lacks
	// round is what the function asked and was answered, in 2026-07-28
	// (see rounds.go); nil until the request brings answers or the function
	// asks.
	round *round

	// For asking the client (ask.go); asks is nil where this server does
	// not ask during a call (2026-07-28).
	asks     *askTable
	notifier *callNotifier
	request  *http.Request // nil on stdio
	stream   *sseStream    // the call's SSE stream over HTTP; nil on stdio
}

type stateKey struct{}

// Value returns the call's state for stateKey, and what the context it
// extends holds for any other key.
func (s *callState) Value(key any) any {
	if _, ok := key.(stateKey); ok {
		return s
	}
	return s.Context.Value(key)
}

func stateFrom(ctx context.Context) *callState {
	s, _ := ctx.Value(stateKey{}).(*callState)
	return s
}

// ClientCapabilities returns the capabilities the client declared, as the
// JSON object MCP carries them in ({"sampling": {}, "elicitation": {}}).
// In protocol version 2026-07-28 every request carries them; in the
// initialize era they are known over stdio (from initialize) and over HTTP
// when the request carries them in _meta as 2026-07-28 does. known is
// false outside an MCP call, and for a client of the initialize era over
// HTTP that sends them only in initialize, whose declaration this server,
// keeping no sessions, does not see again.
func ClientCapabilities(ctx context.Context) (caps json.RawMessage, known bool) {
	s := stateFrom(ctx)
	if s == nil || !s.caps.known() {
		return nil, false
	}
	return s.caps.raw, true
}

// RequireClientCapability returns an error when the client is known not
// to have declared the capability name ("sampling", "elicitation",
// "roots"), and nil otherwise. A tool that cannot work without it returns
// that error; the call is then answered with MCP's missing-capability
// error (-32021, and 400 over HTTP) naming it, rather than with a tool
// error, so that the client can tell its user what to enable.
func RequireClientCapability(ctx context.Context, name string) error {
	s := stateFrom(ctx)
	if s == nil || !s.caps.known() || s.caps.declares(name) {
		return nil
	}
	s.markNeeds(name)
	return &MissingCapabilityError{Capability: name}
}

// MissingCapabilityError is the error of [RequireClientCapability].
type MissingCapabilityError struct {
	// Capability is the capability the client did not declare.
	Capability string
}

// Unwrap returns [otc.ErrInputUnsupported]: a client without the
// capability cannot answer what the tool would ask of it.
func (e *MissingCapabilityError) Unwrap() error { return otc.ErrInputUnsupported }

func (e *MissingCapabilityError) Error() string {
	return fmt.Sprintf("this tool needs the client capability %q, which the client did not declare", e.Capability)
}

// missingCapability is the JSON-RPC error of a call whose tool required a
// capability the client lacks.
func missingCapability(name string) *rpcError {
	return &rpcError{
		Code:    codeMissingCapability,
		Message: fmt.Sprintf("Missing required client capability: %s", name),
		Data:    mcpwire.MissingCapabilityData{RequiredCapabilities: map[string]any{name: map[string]any{}}},
		Status:  400,
	}
}
