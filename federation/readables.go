package federation

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"unicode"

	"github.com/otcgo/otc"
	"github.com/otcgo/otc/client"
	"github.com/otcgo/otc/internal/hook"
	"github.com/otcgo/otc/internal/hophdr"
	"github.com/otcgo/otc/internal/jsonrpc"
	"github.com/otcgo/otc/internal/mcpwire"
	"github.com/otcgo/otc/internal/primitive"
	"github.com/otcgo/otc/internal/uritemplate"
	"github.com/otcgo/otc/internal/wire"
)

// seam is what package otc lends the packages beside it (internal/hook).
var seam = hook.Of[otc.Registry, otc.Policy, otc.ToolDefinition, otc.CallRequest, otc.Identity, otc.Error]()

// This file carries what an MCP upstream offers beside its tools: its
// resources, resource templates and prompts, served from the registry
// (package mcp serves them) and forwarded to the upstream when read,
// rendered or completed.
//
// A resource keeps its URI and a template its text: a URI names a
// resource wherever it is written (in a tool's result, a prompt's
// embedded resource, a resource link), and a read of it through the
// gateway reaches the upstream that serves it, found by the URI itself.
//
// Each carried entry is owned by its upstream (primitive.Origin), and
// the sources come in order: the registry's own, then the upstreams in
// the order they are given. A read goes to the resource at its URI, else
// to the first template of that order that matches it, so that no
// upstream can take the reads of the registry's URIs or of an upstream
// before it. An upstream's entry that another source before it already
// serves or may match (the same URI; a URI one of its templates matches;
// a template whose literal prefix runs into another's) is left out and
// named in its Health, as is one that the checks of a local registration
// refuse, one outside its URIPrefixes, and a template whose URIs have no
// scheme of their own (it would match every URI). A prompt is served, as
// a tool is, under its upstream's name: the prompt "summarize" of the
// upstream "notes" is "notes_summarize".

// maxSubscribed bounds the upstream resources the gateway subscribes to,
// to relay their updates.
const maxSubscribed = 1000

// readable is one entry the upstream serves through the registry.
type readable struct {
	print []byte // what the upstream listed: a change registers it anew
	entry any    // *primitive.Resource, *primitive.Template or *primitive.Prompt
}

// readKey names a listed entry among the upstream's.
func readKey(kind, name string) string { return kind + "\x00" + name }

// refreshReadables reads the resources and prompts of an MCP upstream and
// serves them in place of the last ones read. A server that has neither
// (a method it does not know) serves none; one whose lists cannot be read
// keeps the last good ones.
func (u *upstream) refreshReadables(ctx context.Context, main *client.Client) error {
	cl := main.MCP()
	if cl == nil {
		return nil
	}
	resources, err := cl.ListResources(ctx)
	if err != nil && !methodMissing(err) {
		return fmt.Errorf("reading its resources: %w", err)
	}
	prompts, err := cl.ListPrompts(ctx)
	if err != nil && !methodMissing(err) {
		return fmt.Errorf("reading its prompts: %w", err)
	}
	if n := len(resources) + len(prompts); n > u.cfg.MaxResources {
		err := fmt.Errorf("federation: upstream %q lists %d resources, templates and prompts, more than %d (Upstream.MaxResources); they are not applied: raise max_resources", u.cfg.Name, n, u.cfg.MaxResources)
		u.mu.Lock()
		u.skippedReads = []string{err.Error()}
		u.mu.Unlock()
		return err
	}
	next := map[string]*readable{}
	skipped, copied := u.refreshSkills(ctx, cl) // skills.go
	for _, r := range resources {
		if copied[r.URI] {
			continue // a file of a skill served as the gateway's copy
		}
		if !u.chosenAs(resourcePrefix, r.URI+r.URITemplate) {
			continue // include and exclude's "resource:" patterns
		}
		print, _ := json.Marshal(r)
		if r.URITemplate == "" {
			if problem := u.uriProblem(r.URI); problem != "" {
				skipped = append(skipped, fmt.Sprintf("resource %s: %s", wire.Truncate(strconv.Quote(r.URI), 200), problem))
				continue
			}
			next[readKey("r", r.URI)] = &readable{print: print, entry: u.resourceEntry(r)}
			continue
		}
		t, err := u.templateEntry(r)
		if err != nil {
			skipped = append(skipped, fmt.Sprintf("resource template %s: %v", wire.Truncate(strconv.Quote(r.URITemplate), 200), err))
			continue
		}
		next[readKey("t", r.URITemplate)] = &readable{print: print, entry: t}
	}
	for _, p := range prompts {
		if !u.chosenAs(promptPrefix, p.Name) {
			continue // include and exclude's "prompt:" patterns
		}
		if problem := primitive.PromptNameProblem(u.promptName(p.Name)); problem != "" {
			skipped = append(skipped, fmt.Sprintf("prompt %s: %s", wire.Truncate(strconv.Quote(p.Name), 200), problem))
			continue
		}
		print, _ := json.Marshal(p)
		next[readKey("p", p.Name)] = &readable{print: print, entry: u.promptEntry(p)}
	}
	f := u.f
	subscribe, skipped := u.applyReadables(next, skipped)
	for _, s := range skipped {
		f.logger.Warn("federation: a resource or prompt of the upstream is left out", "upstream", u.cfg.Name, "why", s)
	}
	// Outside the federation's lock: these are requests to the upstream.
	u.subscribe(ctx, cl, subscribe)
	return nil
}

// applyReadables serves next in place of the entries served, and returns
// the URIs of the resources new to the registry and skipped, with what
// could not be served added.
func (u *upstream) applyReadables(next map[string]*readable, skipped []string) (subscribe, _ []string) {
	f := u.f
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.ctx.Err() != nil {
		return nil, skipped
	}
	set := primitive.Of(f.reg)
	old := u.reads
	kept := map[string]*readable{}
	for key, was := range old {
		if now, ok := next[key]; ok && bytes.Equal(now.print, was.print) {
			kept[key] = was
			continue
		}
		set.Remove(was.entry)
	}
	for _, key := range slices.Sorted(maps.Keys(next)) {
		if _, ok := kept[key]; ok {
			continue
		}
		r := next[key]
		var err error
		switch e := r.entry.(type) {
		case *primitive.Resource:
			if err = u.resourceClash(set.Snapshot(), e); err == nil {
				err = set.AddResource(e)
			}
			if err == nil {
				subscribe = append(subscribe, e.URI)
			}
		case *primitive.Template:
			if err = u.templateClash(set.Snapshot(), e); err == nil {
				err = set.AddTemplate(e)
			}
		case *primitive.Prompt:
			err = set.AddPrompt(e)
		}
		if err != nil {
			skipped = append(skipped, fmt.Sprintf("%v: it is left out", err))
			continue
		}
		kept[key] = r
	}
	u.reads = kept
	u.mu.Lock()
	u.skippedReads = skipped
	u.mu.Unlock()
	return subscribe, skipped
}

// uriProblem says why the upstream may not serve a resource at uri (or
// a template whose literal prefix is uri), or "": the checks of a local
// registration, and its URIPrefixes.
func (u *upstream) uriProblem(uri string) string {
	if problem := primitive.URIProblem(uri); problem != "" {
		return problem
	}
	if len(u.cfg.URIPrefixes) > 0 && !slices.ContainsFunc(u.cfg.URIPrefixes, func(p string) bool { return strings.HasPrefix(uri, p) }) {
		return "URI is outside the upstream's uri_prefixes"
	}
	return ""
}

// before reports whether o is a source that comes before the upstream:
// the registry's own, or an upstream given before it.
func (u *upstream) before(o primitive.Origin) bool {
	return o != u.origin && o.Rank <= u.origin.Rank
}

// resourceClash says why r may not be served beside what sn holds, or
// nil: a template of a source before the upstream matches its URI, and
// a read of it would go there.
func (u *upstream) resourceClash(sn *primitive.Snapshot, r *primitive.Resource) error {
	t, _ := sn.Match(r.URI, func(t *primitive.Template) bool { return u.before(t.Origin) })
	if t != nil {
		return fmt.Errorf("resource %s: the resource template %s%s matches its URI", r.URI, t.Template, originText(t.Origin))
	}
	return nil
}

// templateClash says why t may not be served beside what sn holds, or
// nil: a resource or template of a source before the upstream has a URI
// that t could match (its URI or literal prefix runs into t's).
func (u *upstream) templateClash(sn *primitive.Snapshot, t *primitive.Template) error {
	prefix := t.Template.Prefix()
	overlaps := func(other string) bool { return strings.HasPrefix(other, prefix) || strings.HasPrefix(prefix, other) }
	for _, o := range sn.Templates {
		if u.before(o.Origin) && overlaps(o.Template.Prefix()) {
			return fmt.Errorf("resource template %s: it could match the URIs of the resource template %s%s", t.Template, o.Template, originText(o.Origin))
		}
	}
	for _, o := range sn.Resources {
		if u.before(o.Origin) && strings.HasPrefix(o.URI, prefix) {
			if _, ok := t.Template.Match(o.URI); ok {
				return fmt.Errorf("resource template %s: it matches the URI of the resource %s%s", t.Template, o.URI, originText(o.Origin))
			}
		}
	}
	return nil
}

// originText names a source in a Health message.
func originText(o primitive.Origin) string {
	if o.Upstream == "" {
		return " (the gateway's own)"
	}
	return " (of the upstream " + o.Upstream + ")"
}

// updated passes on the upstream's word that the resource at uri
// changed, when a read of uri through the gateway reaches the upstream:
// an upstream is not heard on another's resources, nor on the
// registry's.
func (u *upstream) updated(uri string) {
	set := primitive.Of(u.f.reg)
	r, t, _ := set.Snapshot().Find(uri, func(primitive.Admits) bool { return true })
	switch {
	case r != nil && r.Origin == u.origin:
		set.Updated(uri, nil, r)
	case r == nil && t != nil && t.Origin == u.origin:
		set.Updated(uri, nil, t)
	}
}

// subscribe subscribes the upstream's main client to the resources of
// uris, so that their updates reach the registry's subscribers, while the
// upstream takes subscriptions (2026-07-28 has none, and a server may
// not offer them) and up to maxSubscribed.
func (u *upstream) subscribe(ctx context.Context, cl *client.Session, uris []string) {
	for _, uri := range uris {
		if u.subscribed.Load() >= maxSubscribed || u.noSubscribe.Load() {
			return
		}
		if err := cl.Subscribe(ctx, uri); err != nil {
			if methodMissing(err) {
				u.noSubscribe.Store(true)
			}
			continue
		}
		u.subscribed.Add(1)
	}
}

// removeReadables takes the upstream's entries out of the registry.
func (u *upstream) removeReadables() {
	set := primitive.Peek(u.f.reg)
	if set == nil {
		return
	}
	for _, r := range u.reads {
		set.Remove(r.entry)
	}
	u.reads = nil
	u.dropSkills(nil)
}

// methodMissing reports whether err is a server's answer that it has no
// such method: a server without resources, prompts or subscriptions.
func methodMissing(err error) bool {
	var rpc *client.RPCError
	return errors.As(err, &rpc) && rpc.Code == jsonrpc.CodeMethodNotFound
}

// admits is the upstream's local policy, for an entry named subject.
func (u *upstream) admits(subject string) primitive.Admits {
	return seam.Admits(u.cfg.Policy, subject)
}

// guard is what a read or a render of the upstream's entry named
// subject checks beyond its listing: its local policy's call-time rules.
func (u *upstream) guard(subject string) hook.Guard {
	return seam.Guard(u.cfg.Policy, subject)
}

// resourceEntry serves the upstream's resource r.
func (u *upstream) resourceEntry(r client.Resource) *primitive.Resource {
	listed, _ := json.Marshal(r)
	return &primitive.Resource{URI: r.URI, Origin: u.origin, Entry: listed, Admits: u.admits(r.URI), Guard: u.guard(r.URI),
		Read: func(ctx context.Context, uri string) (json.RawMessage, error) { return u.read(ctx, uri) }}
}

// templateEntry serves the upstream's resource template r, which this
// server must be able to match a URI against.
func (u *upstream) templateEntry(r client.Resource) (*primitive.Template, error) {
	t, err := uritemplate.Parse(r.URITemplate)
	if err != nil {
		return nil, err
	}
	if !t.Matchable() {
		return nil, errors.New("a URI of its expansion could be read back two ways, so no read can be routed to it")
	}
	if strings.ContainsFunc(r.URITemplate, unicode.IsSpace) {
		return nil, errors.New("a template holds no white space")
	}
	scheme, _, ok := strings.Cut(t.Prefix(), ":")
	if !ok || scheme == "" || strings.ContainsAny(scheme, "/?#") {
		return nil, errors.New("its URIs have no scheme of their own (scheme:… before its first expression): it would match the URIs of every scheme")
	}
	if problem := u.uriProblem(t.Prefix() + "x"); problem != "" {
		return nil, errors.New(problem)
	}
	listed, _ := json.Marshal(r)
	raw := r.URITemplate
	return &primitive.Template{Template: t, Origin: u.origin, Entry: listed, Admits: u.admits(raw), Guard: u.guard(raw),
		Read: func(ctx context.Context, uri string, _ uritemplate.Values) (json.RawMessage, error) {
			return u.read(ctx, uri)
		},
		Complete: func(ctx context.Context, argument, prefix string, chosen map[string]string) ([]string, int, bool, error) {
			return u.complete(ctx, client.TemplateRef(raw), argument, prefix, chosen)
		}}, nil
}

// promptEntry serves the upstream's prompt p under the upstream's name.
func (u *upstream) promptEntry(p client.Prompt) *primitive.Prompt {
	remote := p.Name
	p.Name = u.promptName(remote)
	listed, _ := json.Marshal(p)
	return &primitive.Prompt{Name: p.Name, Entry: listed, Admits: u.admits(p.Name), Guard: u.guard(p.Name),
		Get: func(ctx context.Context, args map[string]string) (json.RawMessage, error) {
			var res *client.PromptResult
			err := u.forward(ctx, func(ctx context.Context, cl *client.Session) (err error) {
				res, err = cl.GetPrompt(ctx, remote, args)
				return err
			})
			if err != nil {
				return nil, err
			}
			return json.Marshal(res)
		},
		Complete: func(ctx context.Context, argument, prefix string, chosen map[string]string) ([]string, int, bool, error) {
			return u.complete(ctx, client.PromptRef(remote), argument, prefix, chosen)
		}}
}

// promptName is the name the gateway serves the upstream's prompt named
// remote under: the upstream's name and the prompt's, folded as a tool's
// name is ("args-prompt" of "everything" is "everything_args_prompt"),
// or the name rename gives "prompt:" and its name.
func (u *upstream) promptName(remote string) string {
	if local, ok := u.cfg.Rename[promptPrefix+remote]; ok {
		remote = local
	}
	return u.cfg.Name + "_" + fold(remote)
}

// read reads the resource at uri from the upstream.
func (u *upstream) read(ctx context.Context, uri string) (json.RawMessage, error) {
	var contents []otc.EmbeddedResource
	err := u.forward(ctx, func(ctx context.Context, cl *client.Session) (err error) {
		contents, err = cl.ReadResource(ctx, uri)
		return err
	})
	if err != nil {
		return nil, err
	}
	out := make([]any, len(contents))
	for i, c := range contents {
		out[i] = mcpwire.BlobContents{URI: c.URI, MIMEType: c.MIMEType, Blob: c.Blob}
		if c.Blob == nil {
			out[i] = mcpwire.TextContents{URI: c.URI, MIMEType: c.MIMEType, Text: c.Text} // an empty text is still text
		}
	}
	return json.Marshal(out)
}

// errForwardTimeout is the cause of a forwarded request's context ending
// at the upstream's call timeout.
var errForwardTimeout = errors.New("federation: the upstream's call timeout passed")

// complete asks the upstream to complete an argument of ref (a template,
// or a prompt by its remote name).
func (u *upstream) complete(ctx context.Context, ref client.CompletionRef, argument, prefix string, chosen map[string]string) ([]string, int, bool, error) {
	var values []string
	var more bool
	err := u.forward(ctx, func(ctx context.Context, cl *client.Session) (err error) {
		values, more, err = cl.Complete(ctx, ref, argument, prefix, chosen)
		return err
	})
	if len(values) > primitive.MaxCompletions {
		values, more = values[:primitive.MaxCompletions], true
	}
	return values, len(values), more, err
}

// forward runs f with the caller's client of the upstream, within the
// breaker, and words its failure for the caller: the upstream's refusal
// of an argument as invalid input, a URI it has nothing at as not found,
// and a failure to reach it as such.
//
// It goes as a call of the upstream's tools does: with the caller's
// token where the upstream takes it (pass_through, token_exchange), never
// the gateway's in its place, and the trace context; within the
// upstream's Timeouts.Call; and cancelled upstream when the caller goes.
func (u *upstream) forward(ctx context.Context, f func(ctx context.Context, cl *client.Session) error) error {
	header := http.Header{}
	u.f.propagate(ctx, header)
	switch {
	case u.cfg.Credentials.PassThrough:
		tok, err := passThrough(ctx, u.cfg.Credentials.Audience)
		if err != nil {
			return err
		}
		header.Set("Authorization", "Bearer "+tok)
	case u.cfg.Credentials.TokenExchange != nil:
		if _, err := callerToken(ctx, "token_exchange needs the caller's bearer token to exchange"); err != nil {
			return err // refused before any request
		}
	}
	if _, ok := u.brk.allow(); !ok {
		return fmt.Errorf("the server %s is not answering just now; try again later", u.cfg.Name)
	}
	if t := u.cfg.Timeouts.Call; t > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeoutCause(ctx, t, errForwardTimeout)
		defer cancel()
	}
	cl, release, err := u.clientFor(ctx)
	if err != nil {
		return err
	}
	if u.cfg.Credentials.TokenExchange != nil {
		tok, err := exchangeFor(ctx, cl, u.cfg.Name)
		if err != nil {
			release(false)
			return err
		}
		header.Set("Authorization", "Bearer "+tok)
	}
	s := mcpOf(cl)
	if s == nil { // an upstream that stopped speaking MCP since its entries were read
		release(false)
		return fmt.Errorf("the server %s no longer speaks MCP", u.cfg.Name)
	}
	err = f(hophdr.With(ctx, header), s)
	if context.Cause(ctx) == errForwardTimeout {
		release(false)
		u.brk.failure()
		return fmt.Errorf("the server %s did not answer within %s (its call timeout); try again", u.cfg.Name, u.cfg.Timeouts.Call)
	}
	unreached := err != nil && cl.Unreached(err)
	release(unreached && ctx.Err() == nil)
	if err == nil {
		u.brk.success()
		return nil
	}
	if unreached {
		u.brk.failure()
		u.kick()
		return fmt.Errorf("the server %s could not be reached; try again", u.cfg.Name)
	}
	u.brk.success()
	var rpc *client.RPCError
	if errors.As(err, &rpc) {
		var data mcpwire.ErrorData
		_ = json.Unmarshal(rpc.Data, &data)
		switch {
		case rpc.Code == mcpwire.CodeResourceNotFound || rpc.Code == jsonrpc.CodeInvalidParams && data.URI != "":
			return fmt.Errorf("%s: %w", u.cfg.Name, primitive.ErrNotFound)
		case rpc.Code == jsonrpc.CodeInvalidParams && len(data.ParameterErrors) > 0:
			return seam.InvalidInput(data.ParameterErrors, "")
		case rpc.Code == jsonrpc.CodeInvalidParams:
			return seam.InvalidInput(map[string]string{"params": wire.Truncate(rpc.Message, 300)}, "")
		}
		return fmt.Errorf("the server %s answered: %s", u.cfg.Name, wire.Truncate(rpc.Message, 300))
	}
	return err
}
