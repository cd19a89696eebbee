package otc

import (
	"context"
	"encoding/json"
	"reflect"
	"sync"
	"time"

	"github.com/otcgo/otc/internal/decode"
	"github.com/otcgo/otc/internal/hook"
	"github.com/otcgo/otc/internal/jsonparse"
	"github.com/otcgo/otc/internal/params"
)

// This file lends the packages beside this one what they need of a
// registry, a policy or a call, through the typed seam of internal/hook.

func init() {
	hook.Lend(&hook.Seam[Registry, Policy, ToolDefinition, CallRequest, Identity, Error]{
		Attached: func(r *Registry) *sync.Map { return &r.attached },
		WatchTools: func(r *Registry, f func()) func() {
			key := &f
			r.watchers.Store(key, struct{}{})
			return func() { r.watchers.Delete(key) }
		},
		Input: prepareInput,
		Definitions: func(r *Registry) (uint64, []*ToolDefinition) {
			cat := r.current.Load()
			return cat.revision, cat.definitions()
		},
		PolicyProblem: policyProblem,
		Admits: func(p *Policy, subject string) func(ctx context.Context, protocol string) bool {
			admits := clonePolicy(p).admitter(subject)
			return func(ctx context.Context, protocol string) bool { return admits(CallerIdentity(ctx), protocol) }
		},
		Guard: func(p *Policy, subject string) hook.Guard {
			if g := newReadableGuard(p, subject); g != nil {
				return g
			}
			return nil // not a typed nil: no guard
		},
		InvalidInput: func(problems map[string]string, message string) error {
			return &Error{Code: CodeInvalidInput, Message: invalidInputMessage, ParameterErrors: problems, DeveloperMessage: message}
		},
		Protocol: func(ctx context.Context) string { return callInfoFrom(ctx).call.Protocol },
		SetParsed: func(req *CallRequest, doc *jsonparse.Document, node int32) {
			req.doc, req.root = doc, node
		},
		SpendOnce:   spendOnce,
		SetAdmitted: func(req *CallRequest, admitted func() error) { req.admitted = admitted },
		Resolve: func(r *Registry, req *CallRequest) (uint8, time.Duration, bool) {
			t, err := r.resolveRequest(req)
			if err != nil {
				return 0, 0, false
			}
			req.tool = t
			return uint8(t.def.Tasks), t.def.AskBeforeTask, true
		},
		CheckAnswer: checkAnswer,
		RunReadable: func(ctx context.Context, r *Registry, rr hook.Readable) (json.RawMessage, error) {
			return r.serveReadable(ctx, rr)
		},
		Refusal: func(message, reason string, cause error) *Error {
			e := unauthenticated(message, cause)
			e.Reason = reason
			return e
		},
		CapabilityIdentity: func(name string, claims map[string]any, revoked func(ctx context.Context, jti string) (bool, error), leeway time.Duration) *Identity {
			return &Identity{Method: MethodCapability, Name: name, Claims: claims, revoked: revoked, leeway: leeway}
		},
	})
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

// prepareInput is the seam's Input.
func prepareInput(r *Registry, in reflect.Type) (*hook.Input, error) {
	schema, _, validator, err := inputSchema(Tool{}, in, r.strictNulls)
	if err != nil {
		return nil, err
	}
	plan := decode.NewPlan(in)
	defaults, err := decode.Defaults(schema, in, plan, r.strictNulls)
	if err != nil {
		return nil, err
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
	ps, err := params.Read(schema)
	if err != nil {
		return nil, err
	}
	return &hook.Input{Schema: schema, Params: ps, Prepare: prepare}, nil
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
