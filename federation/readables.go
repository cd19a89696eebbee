package federation

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"

	"github.com/otcgo/otc"
	"github.com/otcgo/otc/client"
	"github.com/otcgo/otc/internal/hook"
	"github.com/otcgo/otc/internal/primitive"
	"github.com/otcgo/otc/internal/uritemplate"
	"github.com/otcgo/otc/internal/wire"
)

// This file carries what an MCP upstream offers beside its tools: its
// resources, resource templates and prompts, served from the registry
// (package mcp serves them) and forwarded to the upstream when read,
// rendered or completed.
//
// A resource keeps its URI and a template its text: a URI names a
// resource wherever it is written (in a tool's result, a prompt's
// embedded resource, a resource link), and a read of it through the
// gateway reaches the upstream that serves it, found by the URI itself.
// Two upstreams (or an upstream and the registry) that serve the same URI
// or template: the first registered keeps it, and the other's is left
// out and named in its Health. A prompt is served, as a tool is, under
// its upstream's name: the prompt "summarize" of the upstream "notes" is
// "notes_summarize".

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
func (u *upstream) refreshReadables(ctx context.Context, cl *client.Client) error {
	if cl.Format() != client.FormatMCP {
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
	next := map[string]*readable{}
	var skipped []string
	for _, r := range resources {
		print, _ := json.Marshal(r)
		if r.URITemplate == "" {
			next[readKey("r", r.URI)] = &readable{print: print, entry: u.resourceEntry(r)}
			continue
		}
		t, err := u.templateEntry(r)
		if err != nil {
			skipped = append(skipped, fmt.Sprintf("resource template %s: %v", wire.Truncate(r.URITemplate, 200), err))
			continue
		}
		next[readKey("t", r.URITemplate)] = &readable{print: print, entry: t}
	}
	for _, p := range prompts {
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
			if err = set.AddResource(e); err == nil {
				subscribe = append(subscribe, e.URI)
			}
		case *primitive.Template:
			err = set.AddTemplate(e)
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

// subscribe subscribes the upstream's main client to the resources of
// uris, so that their updates reach the registry's subscribers, while the
// upstream takes subscriptions (2026-07-28 has none, and a server may
// not offer them) and up to maxSubscribed.
func (u *upstream) subscribe(ctx context.Context, cl *client.Client, uris []string) {
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
}

// methodMissing reports whether err is a server's answer that it has no
// such method: a server without resources, prompts or subscriptions.
func methodMissing(err error) bool {
	var rpc *client.RPCError
	return errors.As(err, &rpc) && rpc.Code == -32601
}

// admits is the upstream's local policy, for an entry named subject.
func (u *upstream) admits(subject string) primitive.Admits {
	return hook.Admits(u.cfg.Policy, subject)
}

// resourceEntry serves the upstream's resource r.
func (u *upstream) resourceEntry(r client.Resource) *primitive.Resource {
	listed, _ := json.Marshal(r)
	return &primitive.Resource{URI: r.URI, Entry: listed, Admits: u.admits(r.URI),
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
	listed, _ := json.Marshal(r)
	raw := r.URITemplate
	return &primitive.Template{Template: t, Entry: listed, Admits: u.admits(raw),
		Read: func(ctx context.Context, uri string, _ uritemplate.Values) (json.RawMessage, error) {
			return u.read(ctx, uri)
		},
		Complete: func(ctx context.Context, argument, prefix string, chosen map[string]string) ([]string, int, bool, error) {
			return u.complete(ctx, raw, argument, prefix, chosen)
		}}, nil
}

// promptEntry serves the upstream's prompt p under the upstream's name.
func (u *upstream) promptEntry(p client.Prompt) *primitive.Prompt {
	remote := p.Name
	p.Name = u.cfg.Name + "_" + remote
	listed, _ := json.Marshal(p)
	return &primitive.Prompt{Name: p.Name, Entry: listed, Admits: u.admits(p.Name),
		Get: func(ctx context.Context, args map[string]string) (json.RawMessage, error) {
			var res *client.PromptResult
			err := u.forward(ctx, func(cl *client.Client) (err error) {
				res, err = cl.GetPrompt(ctx, remote, args)
				return err
			})
			if err != nil {
				return nil, err
			}
			return json.Marshal(res)
		},
		Complete: func(ctx context.Context, argument, prefix string, chosen map[string]string) ([]string, int, bool, error) {
			return u.complete(ctx, remote, argument, prefix, chosen)
		}}
}

// read reads the resource at uri from the upstream.
func (u *upstream) read(ctx context.Context, uri string) (json.RawMessage, error) {
	var contents []otc.EmbeddedResource
	err := u.forward(ctx, func(cl *client.Client) (err error) {
		contents, err = cl.ReadResource(ctx, uri)
		return err
	})
	if err != nil {
		return nil, err
	}
	type text struct {
		URI      string `json:"uri"`
		MIMEType string `json:"mimeType,omitempty"`
		Text     string `json:"text"`
	}
	out := make([]any, len(contents))
	for i, c := range contents {
		out[i] = c
		if c.Blob == nil {
			out[i] = text{c.URI, c.MIMEType, c.Text} // an empty text is still text
		}
	}
	return json.Marshal(out)
}

// complete asks the upstream to complete an argument of ref (a template,
// or a prompt's remote name).
func (u *upstream) complete(ctx context.Context, ref, argument, prefix string, chosen map[string]string) ([]string, int, bool, error) {
	var values []string
	var more bool
	err := u.forward(ctx, func(cl *client.Client) (err error) {
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
func (u *upstream) forward(ctx context.Context, f func(cl *client.Client) error) error {
	if _, ok := u.brk.allow(); !ok {
		return fmt.Errorf("the server %s is not answering just now; try again later", u.cfg.Name)
	}
	cl, release, err := u.clientFor(ctx)
	if err != nil {
		return err
	}
	err = f(cl)
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
		var data struct {
			URI    string            `json:"uri"`
			Params map[string]string `json:"parameter_errors"`
		}
		_ = json.Unmarshal(rpc.Data, &data)
		switch {
		case rpc.Code == -32002 || rpc.Code == -32602 && data.URI != "":
			return fmt.Errorf("%s: %w", u.cfg.Name, primitive.ErrNotFound)
		case rpc.Code == -32602 && len(data.Params) > 0:
			return hook.InvalidInput(data.Params, "")
		case rpc.Code == -32602:
			return hook.InvalidInput(map[string]string{"params": wire.Truncate(rpc.Message, 300)}, "")
		}
		return fmt.Errorf("the server %s answered: %s", u.cfg.Name, wire.Truncate(rpc.Message, 300))
	}
	return err
}
