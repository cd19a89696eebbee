package mcp

import (
	"context"
	"encoding/json"
	"fmt"
	"sync"
)

// callState is what a tool can learn about, and tell, the MCP request it
// serves.
type callState struct {
	caps  json.RawMessage // the client's declared capabilities; nil when unknown
	mu    sync.Mutex
	needs string // a capability the tool required and the client lacks
	// round is what the function asked and was answered, in 2026-07-28
	// (see mrtr.go); nil until the request brings answers or the function
	// asks.
	round *round
}

type stateKey struct{}

func stateFrom(ctx context.Context) *callState {
	s, _ := ctx.Value(stateKey{}).(*callState)
	return s
}

// ClientCapabilities returns the capabilities the client declared, as the
// JSON object MCP carries them in ({"sampling": {}, "elicitation": {}}).
// known is false outside an MCP call, and for a client of the
// initialize era over HTTP, whose declaration this server, keeping no
// sessions, does not see again.
func ClientCapabilities(ctx context.Context) (caps json.RawMessage, known bool) {
	s := stateFrom(ctx)
	if s == nil || s.caps == nil {
		return nil, false
	}
	return s.caps, true
}

// RequireClientCapability returns an error when the client is known not
// to have declared the capability name ("sampling", "elicitation",
// "roots"), and nil otherwise. A tool that cannot work without it returns
// that error; the call is then answered with MCP's missing-capability
// error (-32021, and 400 over HTTP) naming it, rather than with a tool
// error, so that the client can tell its user what to enable.
func RequireClientCapability(ctx context.Context, name string) error {
	caps, known := ClientCapabilities(ctx)
	if !known {
		return nil
	}
	var declared map[string]json.RawMessage
	if json.Unmarshal(caps, &declared) == nil {
		if _, ok := declared[name]; ok {
			return nil
		}
	}
	s := stateFrom(ctx)
	s.mu.Lock()
	if s.needs == "" {
		s.needs = name
	}
	s.mu.Unlock()
	return &MissingCapabilityError{Capability: name}
}

// MissingCapabilityError is the error of [RequireClientCapability].
type MissingCapabilityError struct {
	// Capability is the capability the client did not declare.
	Capability string
}

func (e *MissingCapabilityError) Error() string {
	return fmt.Sprintf("this tool needs the client capability %q, which the client did not declare", e.Capability)
}

// missingCapability is the JSON-RPC error of a call whose tool required a
// capability the client lacks.
func missingCapability(name string) *rpcError {
	return &rpcError{
		Code:    codeMissingCapability,
		Message: fmt.Sprintf("Missing required client capability: %s", name),
		Data:    map[string]any{"requiredCapabilities": map[string]any{name: map[string]any{}}},
		status:  400,
	}
}
