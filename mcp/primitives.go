package mcp

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"strings"

	"github.com/otcgo/otc"
	"github.com/otcgo/otc/internal/hook"
	"github.com/otcgo/otc/internal/jsonparse"
	"github.com/otcgo/otc/internal/mcpwire"
	"github.com/otcgo/otc/internal/primitive"
	"github.com/otcgo/otc/internal/uritemplate"
	"github.com/otcgo/otc/internal/wire"
	"github.com/otcgo/otc/search"
	"github.com/otcgo/otc/sessions"
)

// seam is what package otc lends the packages beside it (internal/hook).
var seam = hook.Of[otc.Registry, otc.Policy, otc.ToolDefinition, otc.CallRequest, otc.Identity, otc.Error]()

// This file serves what a registry holds beside its tools: the resources
// and templates of package resource, the prompts of package prompt, and
// the completion of their arguments. Each list and each read is filtered
// by the caller's identity through the entries' policies: what a caller
// may not see is neither listed nor served, and reads as absent.

// codeResourceNotFound is the code of a read of a URI nothing is at, in
// the versions before 2026-07-28; that version answers -32602 (SEP-2164).
const codeResourceNotFound = mcpwire.CodeResourceNotFound

// primitiveParams are the params of the methods of this file.
type primitiveParams struct {
	URI       *string
	Name      string
	Arguments map[string]string
	Ref       *struct{ Type, Name, URI string }
	Argument  *struct{ Name, Value string }
	Context   *struct{ Arguments map[string]string }
}

// readPrimitiveParams reads the params of the methods of this file with
// the parser tool inputs go through, not by reflection: a member of the
// wrong kind is invalid params, naming it; members it does not know are
// left.
func readPrimitiveParams(raw []byte) (primitiveParams, *rpcError) {
	var p primitiveParams
	if raw == nil {
		return p, nil
	}
	d, err := jsonparse.Parse(raw)
	if err != nil {
		return p, newError(codeInvalidParams, "Invalid params: %v", err)
	}
	defer jsonparse.Release(d)
	bad := func(member, want string, i int32) (primitiveParams, *rpcError) {
		return p, newError(codeInvalidParams, "Invalid params: %s is %s, not a JSON %s", member, want, d.KindName(i))
	}
	str := func(obj int32, name string) (string, int32, bool) {
		i := d.Member(obj, name)
		if i < 0 {
			return "", i, true
		}
		if d.Kind(i) != jsonparse.KindString {
			return "", i, false
		}
		return d.StringValue(i), i, true
	}
	stringMap := func(i int32) (map[string]string, bool) {
		if d.Kind(i) != jsonparse.KindObject {
			return nil, false
		}
		m := map[string]string{}
		for k, v := range d.Members(i) {
			if d.Kind(v) != jsonparse.KindString {
				return nil, false
			}
			m[d.StringValue(k)] = d.StringValue(v)
		}
		return m, true
	}
	if i := d.Member(0, "uri"); i >= 0 {
		if d.Kind(i) != jsonparse.KindString {
			return bad("params.uri", "a string", i)
		}
		uri := d.StringValue(i)
		p.URI = &uri
	}
	if s, i, ok := str(0, "name"); !ok {
		return bad("params.name", "a string", i)
	} else {
		p.Name = s
	}
	if i := d.Member(0, "arguments"); i >= 0 && d.Kind(i) != jsonparse.KindNull {
		m, ok := stringMap(i)
		if !ok {
			return p, newError(codeInvalidParams, "Invalid params: params.arguments maps names to strings: the arguments are strings")
		}
		p.Arguments = m
	}
	if i := d.Member(0, "ref"); i >= 0 {
		if d.Kind(i) != jsonparse.KindObject {
			return bad("params.ref", "an object", i)
		}
		p.Ref = &struct{ Type, Name, URI string }{}
		for _, f := range []struct {
			name string
			to   *string
		}{{"type", &p.Ref.Type}, {"name", &p.Ref.Name}, {"uri", &p.Ref.URI}} {
			s, j, ok := str(i, f.name)
			if !ok {
				return bad("params.ref."+f.name, "a string", j)
			}
			*f.to = s
		}
	}
	if i := d.Member(0, "argument"); i >= 0 {
		if d.Kind(i) != jsonparse.KindObject {
			return bad("params.argument", "an object", i)
		}
		p.Argument = &struct{ Name, Value string }{}
		for _, f := range []struct {
			name string
			to   *string
		}{{"name", &p.Argument.Name}, {"value", &p.Argument.Value}} {
			s, j, ok := str(i, f.name)
			if !ok {
				return bad("params.argument."+f.name, "a string", j)
			}
			*f.to = s
		}
	}
	if i := d.Member(0, "context"); i >= 0 && d.Kind(i) == jsonparse.KindObject {
		if j := d.Member(i, "arguments"); j >= 0 {
			m, ok := stringMap(j)
			if !ok {
				return p, newError(codeInvalidParams, "Invalid params: params.context.arguments maps names to strings")
			}
			p.Context = &struct{ Arguments map[string]string }{m}
		}
	}
	return p, nil
}

// servePrimitives answers the methods of resources, prompts and
// completion; ok is false for any other method.
func (s *server) servePrimitives(ctx context.Context, x *exchange) (b []byte, e *rpcError, ok bool) {
	switch x.msg.method {
	case "resources/list", "resources/templates/list", "prompts/list", "resources/read", "prompts/get",
		"completion/complete", methodSkillsList, methodSkillsGet, methodDirectoryRead:
	case "resources/subscribe", "resources/unsubscribe":
		if !x.gen.subscriptions() { // 2026-07-28 removed them, for subscriptions/listen
			return nil, nil, false
		}
	default:
		return nil, nil, false
	}
	p, e := readPrimitiveParams(x.msg.params)
	if e != nil {
		return nil, e, true
	}
	sn := primitive.Current(s.reg)
	admits := func(a primitive.Admits) bool { return a(ctx, otc.ProtocolMCP) }
	q := pageQuery{cursor: x.msg.cursor, hasCursor: x.msg.hasCursor, extra: x.gen.listExtra(s)}
	if kind, member, ok := readableKind(x.msg.method); ok && s.search != nil && x.msg.query != nil {
		// The closure takes what it reads of x, not x, which would then
		// escape for every method this function sees.
		query, limit, req := x.msg.query, x.msg.limit, x.request
		b, e = s.listReadables(ctx, x, func() ([]byte, *rpcError) {
			return s.readablesQuery(ctx, req, query, limit, kind, member, q.extra)
		})
		return b, e, true
	}
	switch x.msg.method {
	case "resources/list":
		b, e = s.listReadables(ctx, x, func() ([]byte, *rpcError) {
			return listPage(s, q, mcpwire.MemberResources, sn.Resources, func(r *primitive.Resource) (string, json.RawMessage, bool) {
				return r.URI, r.Entry, admits(r.Admits)
			})
		})
	case "resources/templates/list":
		b, e = s.listReadables(ctx, x, func() ([]byte, *rpcError) {
			return listPage(s, q, mcpwire.MemberResourceTemplates, sn.Templates, func(t *primitive.Template) (string, json.RawMessage, bool) {
				return t.Template.String(), t.Entry, admits(t.Admits)
			})
		})
	case "prompts/list":
		b, e = s.listReadables(ctx, x, func() ([]byte, *rpcError) {
			return listPage(s, q, mcpwire.MemberPrompts, sn.Prompts, func(p *primitive.Prompt) (string, json.RawMessage, bool) {
				return p.Name, p.Entry, admits(p.Admits)
			})
		})
	case "resources/read":
		b, e = s.readResource(ctx, x, sn, &p, admits)
	case "resources/subscribe", "resources/unsubscribe":
		b, e = s.subscribe(ctx, x, sn, &p, admits)
	case "prompts/get":
		b, e = s.getPrompt(ctx, x, sn, &p, admits)
	case "completion/complete":
		b, e = s.complete(ctx, x, sn, &p, admits)
	case methodSkillsList:
		b, e = s.listReadables(ctx, x, func() ([]byte, *rpcError) {
			return listPage(s, q, mcpwire.MemberSkills, sn.Skills, func(sk *primitive.Skill) (string, json.RawMessage, bool) {
				return sk.URI, sk.Entry, admits(sk.Admits)
			})
		})
	case methodSkillsGet:
		b, e = s.getSkill(x, sn, &p, admits) // skills.go
	case methodDirectoryRead:
		b, e = s.readDirectory(ctx, x, sn, &p, q, admits) // skills.go
	}
	return b, e, true
}

// readableKind is the kind of readable a list method lists, and the
// member of its result that holds them.
func readableKind(method string) (search.Kind, string, bool) {
	switch method {
	case "resources/list":
		return search.KindResource, mcpwire.MemberResources, true
	case "resources/templates/list":
		return search.KindTemplate, mcpwire.MemberResourceTemplates, true
	case "prompts/list":
		return search.KindPrompt, mcpwire.MemberPrompts, true
	case methodSkillsList:
		return search.KindSkill, mcpwire.MemberSkills, true
	}
	return "", "", false
}

// readablesQuery answers a list of resources, templates, prompts or skills
// with a query, as a tools/list with one is answered (SEP-1821, where the
// server searches): those of the kind a search for it finds among what
// the caller may read, best first, on one page ("limit", 1 to
// search.MaxLimit, search.DefaultLimit when absent).
func (s *server) readablesQuery(ctx context.Context, r *http.Request, rawQuery, rawLimit []byte, kind search.Kind, member string, extra []byte) ([]byte, *rpcError) {
	query, ok := jsonString(rawQuery)
	if !ok {
		return nil, newError(codeInvalidParams, `Invalid params: "query" must be a string`)
	}
	limit := search.DefaultLimit
	if rawLimit != nil {
		n, err := strconv.Atoi(string(rawLimit))
		if err != nil || n < 1 || n > search.MaxLimit {
			return nil, newError(codeInvalidParams, `Invalid params: "limit" must be a whole number from 1 to %d`, search.MaxLimit)
		}
		limit = n
	}
	if err := search.Admit(ctx, s.reg, r); err != nil {
		return nil, rateLimited(err)
	}
	found, err := search.Readables(ctx, s.reg, query, &search.Options{Limit: limit, Protocol: otc.ProtocolMCP, Request: r}, kind)
	if err != nil {
		return nil, newError(codeInvalidParams, "Invalid params: %s", searchProblem(err, "query"))
	}
	b := append(make([]byte, 0, 256), `{"`...)
	b = append(b, member...)
	b = append(b, `":[`...)
	for i, r := range found {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, r.Entry...)
	}
	b = append(b, ']')
	b = append(b, extra...)
	return append(b, '}'), nil
}

// run runs rr, a read, a render or a completion, through the registry's
// pipeline (callin.RunReadable): its middleware, the entry's policy
// (rr.Guard, checked against the request's body: an execution-bound
// token is spent, as a call's is), its limit, its timeout, a panic
// recovered and logged. What it answers is bounded by
// Options.MaxReadBytes.
func (s *server) run(ctx context.Context, x *exchange, rr hook.Readable) (json.RawMessage, error) {
	rr.Protocol, rr.Request, rr.Body = otc.ProtocolMCP, x.request, x.body
	b, err := seam.RunReadable(ctx, s.reg, rr)
	if err == nil && len(b) > s.maxRead {
		return nil, fmt.Errorf("its answer is %d bytes, more than the %d this server sends (mcp.Options.MaxReadBytes)", len(b), s.maxRead)
	}
	return b, err
}

// listReadables answers a list of resources, templates or prompts with page, as
// a call of the pipeline (otc.CallList, its Target the method), so that
// the caller's budget (a rate limit's middleware) counts it: it runs
// inline, with no timeout or limit of its own.
func (s *server) listReadables(ctx context.Context, x *exchange, page func() ([]byte, *rpcError)) ([]byte, *rpcError) {
	var failed *rpcError
	b, err := s.run(ctx, x, hook.Readable{Kind: string(otc.CallList), Target: x.msg.method, Timeout: -1, MaxConcurrent: -1,
		Fn: func(context.Context) (json.RawMessage, error) {
			b, e := page()
			if e != nil {
				failed = e
				return nil, errors.New(e.Message)
			}
			return b, nil
		}})
	switch {
	case failed != nil:
		return nil, failed
	case err != nil:
		return nil, primitiveError(x, "The list could not be read", err)
	}
	return b, nil
}

// withExtra adds the generation's extra to a result object b that is not
// a list.
func (s *server) withExtra(x *exchange, b []byte) []byte {
	extra := x.gen.resultExtra(s)
	if extra == nil {
		return b
	}
	if string(b) == "{}" {
		extra = extra[1:] // its leading comma
	}
	return slices.Concat(b[:len(b)-1], extra, []byte("}"))
}

// listPage answers a list method with the entries of list the caller may
// see, a page at a time: the cursor is the key of the last entry of the
// page before, so that a page follows on whatever was added or removed
// meanwhile.
func listPage[T any](s *server, q pageQuery, member string, list []T, entry func(T) (key string, raw json.RawMessage, visible bool)) ([]byte, *rpcError) {
	after := ""
	if q.hasCursor {
		k, err := base64.RawURLEncoding.DecodeString(q.cursor)
		if err != nil || len(k) == 0 {
			return nil, newError(codeInvalidParams, "Invalid params: the cursor %q is not one this server gave; list from the start without one", wire.Truncate(q.cursor, 64))
		}
		after = string(k)
	}
	b := append(make([]byte, 0, 256), `{"`...)
	b = append(b, member...)
	b = append(b, `":[`...)
	n, next, lastKey := 0, "", ""
	for _, t := range list {
		key, raw, visible := entry(t)
		if !visible || after != "" && key <= after {
			continue
		}
		if s.pageSize > 0 && n == s.pageSize {
			next = base64.RawURLEncoding.EncodeToString([]byte(lastKey))
			break
		}
		if n > 0 {
			b = append(b, ',')
		}
		b = append(b, raw...)
		lastKey = key
		n++
	}
	b = append(b, ']')
	if next != "" {
		b = mcpwire.AppendNextCursor(b, next)
	}
	b = append(b, q.extra...)
	return append(b, '}'), nil
}

// pageQuery is what a list request asks of its page: the cursor it
// sent, and what its generation adds to a list's result. The page is
// made from it, not from the request, which then need not outlive it.
type pageQuery struct {
	cursor    string
	hasCursor bool
	extra     []byte
}

// notFound is the error of a read, a subscription or a completion naming
// a URI that nothing the caller may read is at: in 2026-07-28 -32602
// (SEP-2164), before it -32002; both carry the URI in data.
func notFoundURI(x *exchange, uri string) *rpcError {
	return &rpcError{Code: x.gen.notFoundCode(), Message: "Resource not found: nothing is at " + wire.Truncate(uri, 200) + "; resources/list and resources/templates/list say what is",
		Data: mcpwire.ErrorData{URI: wire.Truncate(uri, uritemplate.MaxLength)}}
}

// checkURI checks the uri of a request.
func checkURI(p *primitiveParams) *rpcError {
	switch {
	case p.URI == nil || *p.URI == "":
		return newError(codeInvalidParams, "Invalid params: params.uri names the resource")
	case len(*p.URI) > uritemplate.MaxLength:
		return newError(codeInvalidParams, "Invalid params: the URI is longer than %d bytes", uritemplate.MaxLength)
	}
	return nil
}

// readResource answers resources/read.
func (s *server) readResource(ctx context.Context, x *exchange, sn *primitive.Snapshot, p *primitiveParams, admits func(primitive.Admits) bool) ([]byte, *rpcError) {
	if e := checkURI(p); e != nil {
		return nil, e
	}
	uri := *p.URI
	r, t, vs := sn.Find(uri, admits)
	var contents json.RawMessage
	var err error
	switch {
	case r != nil:
		contents, err = s.run(ctx, x, hook.Readable{Kind: "read", Target: uri, Guard: r.Guard, Timeout: r.Timeout, MaxConcurrent: r.MaxConcurrent, Running: &r.Running,
			Fn: func(ctx context.Context) (json.RawMessage, error) { return r.Read(ctx, uri) }})
	case t != nil:
		contents, err = s.run(ctx, x, hook.Readable{Kind: "read", Target: uri, Guard: t.Guard, Timeout: t.Timeout, MaxConcurrent: t.MaxConcurrent, Running: &t.Running,
			Fn: func(ctx context.Context) (json.RawMessage, error) { return t.Read(ctx, uri, vs) }})
	default:
		return nil, notFoundURI(x, uri)
	}
	if errors.Is(err, primitive.ErrNotFound) {
		return nil, notFoundURI(x, uri)
	}
	if err != nil {
		return nil, primitiveError(x, "The resource could not be read", err)
	}
	b := mcpwire.AppendReadResult(make([]byte, 0, len(contents)+64), contents)
	b = append(b, x.gen.readExtra(s)...)
	return append(b, '}'), nil
}

// primitiveError answers a read, a prompt or a completion that failed
// with err: a refusal of the pipeline's as a call's (the policy's, 401 or
// 403 with its reason; a rate limit's or a busy entry's, -32000 and 429),
// the function's invalid input as invalid params, naming each parameter,
// a missing capability as such, anything else as an internal error with
// what the function said.
func primitiveError(x *exchange, what string, err error) *rpcError {
	var oe *otc.Error
	if errors.As(err, &oe) && oe.Code != otc.CodeInvalidInput {
		// A middleware's refusal, as a call's.
		switch {
		case oe.Reason != "":
			return policyError(oe, x.gen.forbiddenCode())
		case oe.Code == otc.CodeRateLimited || oe.Code == otc.CodeUnavailable:
			return rateLimited(oe)
		}
		return &rpcError{Code: codeInternalError, Message: what + ": " + oe.Message}
	}
	if errors.As(err, &oe) && oe.Code == otc.CodeInvalidInput {
		e := &rpcError{Code: codeInvalidParams, Message: "Invalid params: " + oe.Message}
		if len(oe.ParameterErrors) > 0 {
			e.Data = mcpwire.ErrorData{ParameterErrors: oe.ParameterErrors}
			var names []string
			for name, msg := range oe.ParameterErrors {
				names = append(names, name+": "+msg)
			}
			slices.Sort(names)
			e.Message += " (" + strings.Join(names, "; ") + ")"
		}
		return e
	}
	var mce *MissingCapabilityError
	if errors.As(err, &mce) {
		return missingCapability(mce.Capability)
	}
	return &rpcError{Code: codeInternalError, Message: what + ": " + err.Error()}
}

// maxSubscriptions bounds the URIs one connection may subscribe to.
const maxSubscriptions = 1000

// subscribe answers resources/subscribe and resources/unsubscribe. Over
// stdio the connection keeps the URI and is told of its updates; over
// HTTP the session does (sessions.go), whose stream is told, whichever
// replica holds it. A request of no session over HTTP is refused, saying
// why: nothing could tell it of an update.
func (s *server) subscribe(ctx context.Context, x *exchange, sn *primitive.Snapshot, p *primitiveParams, admits func(primitive.Admits) bool) ([]byte, *rpcError) {
	if e := checkURI(p); e != nil {
		return nil, e
	}
	uri := *p.URI
	unsubscribe := x.msg.method == "resources/unsubscribe"
	if !unsubscribe {
		if r, t, _ := sn.Find(uri, admits); r == nil && t == nil {
			return nil, notFoundURI(x, uri)
		}
	}
	switch {
	case x.subs != nil && unsubscribe:
		x.subs.remove(uri)
	case x.subs != nil:
		if !x.subs.add(uri, admits) {
			return nil, newError(codeInvalidParams, "Invalid params: this connection is subscribed to %d resources already, the most it may; unsubscribe from one first", maxSubscriptions)
		}
	case x.session != nil:
		if e := s.subscribeSession(ctx, x.session, uri, unsubscribe); e != nil {
			return nil, e
		}
	case unsubscribe:
		// Nothing to undo.
	case s.table == nil:
		return nil, newError(codeMethodNotFound, "Method not found: %s: this server keeps no sessions over HTTP, so nothing could tell the client of an update; read the resource again when its contents matter", x.msg.method)
	case sessionHeader(x.request) != "":
		return nil, newError(codeInvalidRequest, "Invalid request: %s: this server did not issue the session the Mcp-Session-Id names, and keeps its sessions in its own memory; replicas behind a load balancer with no sticky routing share a session store (Options.Sessions)", x.msg.method)
	default:
		return nil, newError(codeInvalidRequest, "Invalid request: %s needs a session, which tells the client of updates on its stream: send the Mcp-Session-Id header that the answer to initialize gave", x.msg.method)
	}
	return s.withExtra(x, []byte("{}")), nil
}

// subscribeSession adds uri to a session's subscriptions (or removes it),
// in the store every replica reads, and tells the replica holding the
// session's stream.
func (s *server) subscribeSession(ctx context.Context, sess *session, uri string, unsubscribe bool) *rpcError {
	store, kind := s.table.store, eventSubscribed
	var err error
	if unsubscribe {
		kind = eventUnsubscribed
		err = store.Unsubscribe(ctx, sess.ref(), uri)
	} else {
		err = store.Subscribe(ctx, sess.ref(), uri, maxSubscriptions)
	}
	switch {
	case errors.Is(err, sessions.ErrNotFound):
		s.table.markEnded(sess.ID)
		return errNoSession
	case errors.Is(err, sessions.ErrLimit):
		return newError(codeInvalidParams, "Invalid params: this session is subscribed to %d resources already, the most it may; unsubscribe from one first", maxSubscriptions)
	case err != nil:
		return storeFailed(err)
	}
	if err := s.hub.publish(ctx, event{Kind: kind, Session: sess.ID, URI: uri}); err != nil {
		return storeFailed(err)
	}
	return nil
}

// getPrompt answers prompts/get.
func (s *server) getPrompt(ctx context.Context, x *exchange, sn *primitive.Snapshot, p *primitiveParams, admits func(primitive.Admits) bool) ([]byte, *rpcError) {
	m := x.msg
	pr := sn.Prompt(p.Name)
	if !m.hasName || pr == nil || !admits(pr.Admits) {
		return nil, newError(codeInvalidParams, "Invalid params: no prompt is named %q; prompts/list names them", wire.Truncate(p.Name, 64))
	}
	args := p.Arguments
	if args == nil {
		args = map[string]string{}
	}
	state := &callState{request: x.request}
	subject := "prompt:" + pr.Name
	gen := x.gen
	ctx, e := gen.preparePrompt(s, ctx, state, m, subject)
	if e != nil {
		return nil, e
	}
	ctx = context.WithValue(ctx, stateKey{}, state)
	res, err := s.run(ctx, x, hook.Readable{Kind: "render", Target: pr.Name, Guard: pr.Guard, Timeout: pr.Timeout, MaxConcurrent: pr.MaxConcurrent, Running: &pr.Running,
		Fn: func(ctx context.Context) (json.RawMessage, error) { return pr.Get(ctx, args) }})
	if err != nil {
		if b, e, ok := gen.promptFailed(s, ctx, state, m, subject, err); ok {
			return b, e
		}
		return nil, primitiveError(x, "The prompt could not be rendered", err)
	}
	return s.withExtra(x, res), nil
}

// complete answers completion/complete.
func (s *server) complete(ctx context.Context, x *exchange, sn *primitive.Snapshot, p *primitiveParams, admits func(primitive.Admits) bool) ([]byte, *rpcError) {
	if p.Ref == nil || p.Argument == nil {
		return nil, newError(codeInvalidParams, "Invalid params: completion/complete names what to complete in params.ref and the argument in params.argument")
	}
	var complete primitive.Completer
	switch p.Ref.Type {
	case mcpwire.RefPrompt:
		pr := sn.Prompt(p.Ref.Name)
		if pr == nil || !admits(pr.Admits) {
			return nil, newError(codeInvalidParams, "Invalid params: no prompt is named %q; prompts/list names them", wire.Truncate(p.Ref.Name, 64))
		}
		complete = pr.Complete
	case mcpwire.RefResource:
		t := sn.Template(p.Ref.URI)
		if t == nil || !admits(t.Admits) {
			return nil, newError(codeInvalidParams, "Invalid params: no resource template is %q; resources/templates/list names them", wire.Truncate(p.Ref.URI, 200))
		}
		complete = t.Complete
	default:
		return nil, newError(codeInvalidParams, `Invalid params: params.ref.type is %q; it is %q or %q`, wire.Truncate(p.Ref.Type, 32), mcpwire.RefPrompt, mcpwire.RefResource)
	}
	var chosen map[string]string
	if p.Context != nil {
		chosen = p.Context.Arguments
	}
	target := p.Ref.URI
	if p.Ref.Type == mcpwire.RefPrompt {
		target = "prompt:" + p.Ref.Name
	}
	// A completion says what may be written, not what is there: the
	// listing's checks (admits) are all it takes, and it spends no token.
	b, err := s.run(ctx, x, hook.Readable{Kind: "complete", Target: target, Fn: func(ctx context.Context) (json.RawMessage, error) {
		values, total, more, err := complete(ctx, p.Argument.Name, p.Argument.Value, chosen)
		if err != nil {
			return nil, err
		}
		if values == nil {
			values = []string{}
		}
		return json.Marshal(mcpwire.CompleteResult{Completion: mcpwire.Completion{Values: values, Total: total, HasMore: more}})
	}})
	if err != nil {
		return nil, primitiveError(x, "The argument could not be completed", err)
	}
	return s.withExtra(x, b), nil
}
