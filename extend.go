package otc

import (
	"context"
	"encoding/json"
	"reflect"
	"sync"

	"github.com/otcgo/otc/internal/decode"
	"github.com/otcgo/otc/internal/hook"
	"github.com/otcgo/otc/internal/jsonparse"
)

// This file lends the packages beside this one (resource, prompt, mcp)
// what they need of a registry, through internal/hook: a place on it for
// what they register, and typed input prepared as a tool's is.

func init() {
	hook.Attached = func(reg any) *sync.Map { return &reg.(*Registry).attached }
	hook.WatchTools = func(reg any, f func()) func() {
		r := reg.(*Registry)
		key := &f
		r.watchers.Store(key, struct{}{})
		return func() { r.watchers.Delete(key) }
	}
	hook.Input = prepareInput
	hook.Protocol = func(ctx context.Context) string { return callInfoFrom(ctx).call.Protocol }
	hook.PolicyProblem = func(p any) string { return policyProblem(p.(*Policy)) }
	hook.Admits = func(p any, subject string) func(ctx context.Context, protocol string) bool {
		admits := clonePolicy(p.(*Policy)).admitter(subject)
		return func(ctx context.Context, protocol string) bool { return admits(CallerIdentity(ctx), protocol) }
	}
	hook.Definitions = func(reg any) (uint64, any) {
		cat := reg.(*Registry).current.Load()
		return cat.revision, cat.definitions()
	}
	hook.InvalidInput = func(params map[string]string, message string) error {
		return &Error{Code: CodeInvalidInput, Message: invalidInputMessage, ParameterErrors: params, DeveloperMessage: message}
	}
}

// definitions returns the catalog's definitions, in its order, shared
// with it: made once per snapshot.
func (c *catalog) definitions() []*ToolDefinition {
	c.defsOnce.Do(func() {
		c.defs = make([]*ToolDefinition, len(c.list))
		for i, t := range c.list {
			c.defs[i] = &t.def
		}
	})
	return c.defs
}

// changed tells the watchers that the catalog changed; it is called with
// r.mu held, and a watcher must not block.
func (r *Registry) changed() {
	r.watchers.Range(func(k, _ any) bool {
		(*k.(*func()))()
		return true
	})
}

// prepareInput is hook.Input.
func prepareInput(reg any, in reflect.Type) (json.RawMessage, func([]byte) ([]byte, error), error) {
	r := reg.(*Registry)
	params, _, validator, err := inputSchema(Tool{}, in, r.strictNulls)
	if err != nil {
		return nil, nil, err
	}
	plan := decode.NewPlan(in)
	defaults, err := decode.Defaults(params, in, plan, r.strictNulls)
	if err != nil {
		return nil, nil, err
	}
	t := &registeredTool{validator: validator, plan: plan, defaults: defaults}
	prepare := func(input []byte) ([]byte, error) {
		doc, err := jsonparse.Parse(input)
		if err != nil {
			return nil, badRequest("The input is not valid JSON", err.Error())
		}
		defer jsonparse.Release(doc)
		if doc.Kind(0) != jsonparse.KindObject {
			return nil, errInputNotObject
		}
		if errs := validator.Validate(doc, 0); errs != nil {
			return nil, &Error{Code: CodeInvalidInput, Message: invalidInputMessage, ParameterErrors: errs}
		}
		return append([]byte(nil), t.decoderInput(doc, 0)...), nil
	}
	return params, prepare, nil
}

// Admits reports whether a caller with identity id (nil for one that
// proved nothing), through protocol, passes the checks of p that do not
// depend on the exact call: the protocol, the kind of token, the
// audience, the scopes, the capabilities and the blast radius (checks 1
// to 6 of [Policy]), which are those by which a catalog lists a tool.
// subject is the audience a capability token must name when ResourceURI
// is empty. A nil policy admits everyone.
//
// Packages that guard something other than a tool with a Policy (the
// resources and prompts of packages resource and prompt) list it and
// serve it to the callers it admits.
func (p *Policy) Admits(id *Identity, protocol, subject string) bool {
	return p.admitter(subject)(id, protocol)
}

// admitter is Admits for one subject, with what the policy asks of its
// caller worked out once: what an entry registered with p checks for each
// request.
func (p *Policy) admitter(subject string) func(id *Identity, protocol string) bool {
	if p == nil {
		return func(*Identity, string) bool { return true }
	}
	n := needsOf(p, subject)
	return func(id *Identity, protocol string) bool {
		if !p.AllowsProtocol(protocol) {
			return false
		}
		if n == nil {
			return true
		}
		var who caller
		who.read(id)
		return n.firstFailed(&who, id, true) == ""
	}
}
