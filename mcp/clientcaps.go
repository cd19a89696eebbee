package mcp

import (
	"bytes"
	"encoding/json"
	"fmt"

	"github.com/otcgo/otc"
	"github.com/otcgo/otc/internal/jsonparse"
)

// clientCaps are the capabilities a client declared (its
// ClientCapabilities object), read once, with the message that carries
// them: a 2026-07-28 request's _meta, or the initialize of a stdio
// session. Every question the server would put to the client is checked
// against them with allows, whichever way it is asked (on the call's
// stream, in an input_required round, or through a task).
//
// It is kept small (it travels in every call's state): the elicitation
// object, whose modes only an elicitation in another mode than form
// reads, is found again in raw then.
type clientCaps struct {
	raw json.RawMessage // as declared; nil when unknown
	has uint8           // the capabilities below that are declared
}

// The capabilities a question, or a task, needs.
const (
	capElicitation uint8 = 1 << iota
	capSampling
	capRoots
	capTasks // the tasks extension, under extensions
)

// readClientCaps reads a ClientCapabilities object. A capability is
// declared by a member whose value is an object ({} declares it with no
// options): any other value, and a raw that is not an object, declare
// nothing. It keeps raw, which must outlive the caps.
func readClientCaps(raw []byte) clientCaps {
	c := clientCaps{raw: raw}
	if len(raw) == 0 || raw[0] != '{' {
		return c
	}
	s := scanner{jsonparse.Scanner{Data: raw}}
	_ = s.members(func(key, val []byte) *rpcError {
		if val[0] != '{' {
			return nil
		}
		switch string(key) {
		case "elicitation":
			c.has |= capElicitation
		case "sampling":
			c.has |= capSampling
		case "roots":
			c.has |= capRoots
		case "extensions":
			if v := memberOf(val, ExtensionTasks); len(v) > 0 && v[0] == '{' {
				c.has |= capTasks
			}
		}
		return nil
	})
	return c
}

// memberOf returns the raw value of the member name of a JSON object, or
// nil.
func memberOf(obj []byte, name string) []byte {
	var out []byte
	s := scanner{jsonparse.Scanner{Data: obj}}
	_ = s.members(func(key, val []byte) *rpcError {
		if out == nil && string(key) == name {
			out = val
		}
		return nil
	})
	return out
}

// known reports whether the client's capabilities are known: an older
// client that never said stays unknown, and is asked anyway.
func (c clientCaps) known() bool { return c.raw != nil }

// clone copies the caps for a call that outlives its request, whose
// buffers are reused.
func (c clientCaps) clone() clientCaps {
	if c.raw == nil {
		return c
	}
	return readClientCaps(bytes.Clone(c.raw))
}

// declares reports whether the client declared the capability name
// ("elicitation", "sampling", "roots", or another member of its
// capabilities), with an object.
func (c clientCaps) declares(name string) bool {
	switch name {
	case "elicitation":
		return c.has&capElicitation != 0
	case "sampling":
		return c.has&capSampling != 0
	case "roots":
		return c.has&capRoots != 0
	}
	v := memberOf(c.raw, name)
	return len(v) > 0 && v[0] == '{'
}

// inputCapability names the capability a question's method needs.
func inputCapability(method string) (name string, bit uint8, ok bool) {
	switch method {
	case otc.MethodElicit:
		return "elicitation", capElicitation, true
	case otc.MethodSample:
		return "sampling", capSampling, true
	case otc.MethodListRoots:
		return "roots", capRoots, true
	}
	return "", 0, false
}

// allows says whether r may be put to the client: nil when it may (or the
// capabilities are unknown: the client then refuses if it must), a
// *MissingCapabilityError (which wraps otc.ErrInputUnsupported) naming
// the capability the client did not declare, or an error for a method no
// client answers. An elicitation in a mode other than form needs that
// mode declared too ({"elicitation": {"url": {}}}).
func (c clientCaps) allows(r otc.InputRequest) error {
	name, bit, ok := inputCapability(r.Method)
	if !ok {
		return fmt.Errorf("mcp: ask: %q is not a request a server sends its client; use otc.MethodElicit, otc.MethodSample or otc.MethodListRoots", r.Method)
	}
	if !c.known() {
		return nil
	}
	if c.has&bit == 0 {
		return &MissingCapabilityError{Capability: name}
	}
	if bit == capElicitation && len(r.Params) > 0 {
		mode, _ := jsonString(memberOf(r.Params, "mode"))
		if mode != "" && mode != "form" && memberOf(memberOf(c.raw, "elicitation"), mode) == nil {
			return &MissingCapabilityError{Capability: name}
		}
	}
	return nil
}
