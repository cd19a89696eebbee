package client

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/otcgo/otc"
	"github.com/otcgo/otc/internal/hophdr"
	"github.com/otcgo/otc/internal/mcpwire"
)

// This file reads what an MCP server offers beside its tools: resources
// and resource templates, prompts, and the completion of their arguments.
// The other formats have none of them: their methods answer an error
// wrapping errors.ErrUnsupported.

// Resource is a resource or a resource template a server offers: one of
// URI (a resource) and URITemplate (an RFC 6570 template whose URIs the
// server reads) is set; Size is the contents' size in bytes (zero when
// unknown), Annotations the server's hints (audience, priority,
// lastModified) as it sent them. It is the type the server writes.
type Resource = mcpwire.Resource

// Prompt is a prompt a server offers, with the arguments
// [Session.GetPrompt] fills in.
type Prompt = mcpwire.Prompt

// PromptArgument is an argument of a [Prompt].
type PromptArgument = mcpwire.PromptArgument

// PromptMessage is one message of a rendered prompt: its Role ("user" or
// "assistant") and its Content.
type PromptMessage = mcpwire.PromptMessage

// PromptResult is a rendered prompt: its Messages, and a Description of
// them.
type PromptResult = mcpwire.PromptResult

// CompletionRef is what [Session.Complete] completes the arguments of: a
// prompt ([PromptRef]) or a resource template ([TemplateRef]).
type CompletionRef = mcpwire.CompletionRef

// PromptRef is the reference of the prompt named name, to complete its
// arguments.
func PromptRef(name string) CompletionRef {
	return CompletionRef{Type: mcpwire.RefPrompt, Name: name}
}

// TemplateRef is the reference of the resource template uriTemplate, to
// complete its variables.
func TemplateRef(uriTemplate string) CompletionRef {
	return CompletionRef{Type: mcpwire.RefResource, URI: uriTemplate}
}

// ListResources lists the resources of an MCP server, then its resource
// templates, following the cursors of both lists.
func (ss *Session) ListResources(ctx context.Context) ([]Resource, error) {
	s := ss.s
	out, err := pages[Resource](ctx, s, "resources/list", mcpwire.MemberResources)
	if err != nil {
		return nil, fmt.Errorf("otc client: list resources: %w", err)
	}
	templates, err := pages[Resource](ctx, s, "resources/templates/list", mcpwire.MemberResourceTemplates)
	if err != nil {
		return nil, fmt.Errorf("otc client: list resource templates: %w", err)
	}
	return append(out, templates...), nil
}

// ReadResource reads the resource at uri, a resource's URI or one of a
// template's. A URI nothing is at is an [*RPCError] (code -32002, or
// -32602 in MCP 2026-07-28) whose Data names the URI.
func (ss *Session) ReadResource(ctx context.Context, uri string) ([]otc.EmbeddedResource, error) {
	var res mcpwire.ReadResult
	if err := ss.s.request(ctx, hopCall(ctx), "resources/read", mcpwire.URIParams{URI: uri}.Map(), &res); err != nil {
		return nil, fmt.Errorf("otc client: read %s: %w", truncate(uri, 200), err)
	}
	return res.Contents, nil
}

// Subscribe asks an MCP server to tell the client when the resource at
// uri changes: its notifications/resources/updated reach
// [Options.OnNotification]. Before MCP 2026-07-28 it is
// resources/subscribe, which a server keeps for its session (one that
// keeps none, a stateless HTTP server, may acknowledge it and tell
// nothing). In 2026-07-28, which has no resources/subscribe, the session
// keeps one subscriptions/listen stream naming every URI subscribed
// (opened again when the set changes, and when it ends, until the session
// closes), and Subscribe returns once the server acknowledged uri: an
// error when it will not tell of it. Such a stream also brings the
// changes of the server's lists (notifications/…/list_changed). A change
// made while the stream opens again (a new URI, another unsubscribed, a
// stream that ended) may go untold: read the resource once Subscribe
// returns.
func (ss *Session) Subscribe(ctx context.Context, uri string) error {
	if err := ss.s.ensure(ctx, nil); err != nil {
		return fmt.Errorf("otc client: subscribe %s: %w", truncate(uri, 200), err)
	}
	if ss.s.ver().Stateless {
		if err := ss.s.subscribeListen(ctx, uri); err != nil {
			return fmt.Errorf("otc client: subscribe %s: %w", truncate(uri, 200), err)
		}
		return nil
	}
	if err := ss.subscription(ctx, "resources/subscribe", uri); err != nil {
		return err
	}
	ss.s.subscription(uri, true)
	return nil
}

// Unsubscribe undoes [Session.Subscribe].
func (ss *Session) Unsubscribe(ctx context.Context, uri string) error {
	if v := ss.s.ver(); v != nil && v.Stateless {
		ss.s.unsubscribeListen(uri)
		return nil
	}
	ss.s.subscription(uri, false)
	return ss.subscription(ctx, "resources/unsubscribe", uri)
}

func (ss *Session) subscription(ctx context.Context, method, uri string) error {
	if err := ss.s.request(ctx, nil, method, mcpwire.URIParams{URI: uri}.Map(), nil); err != nil {
		return fmt.Errorf("otc client: %s %s: %w", method, truncate(uri, 200), err)
	}
	return nil
}

// ListPrompts lists the prompts of an MCP server, following cursors.
func (ss *Session) ListPrompts(ctx context.Context) ([]Prompt, error) {
	out, err := pages[Prompt](ctx, ss.s, "prompts/list", mcpwire.MemberPrompts)
	if err != nil {
		return nil, fmt.Errorf("otc client: list prompts: %w", err)
	}
	return out, nil
}

// GetPrompt renders the prompt name with args. A server's question while
// it renders (an elicitation) goes to [Options.Handlers], as a call's
// does.
func (ss *Session) GetPrompt(ctx context.Context, name string, args map[string]string) (*PromptResult, error) {
	s, c := ss.s, ss.c
	params := mcpwire.GetPromptParams{Name: name, Arguments: args}.Map()
	fail := func(err error) (*PromptResult, error) {
		return nil, fmt.Errorf("otc client: get prompt %s: %w", truncate(name, 64), err)
	}
	for round := 0; ; round++ {
		var raw json.RawMessage
		if err := s.request(ctx, hopCall(ctx), "prompts/get", params, &raw); err != nil {
			return fail(err)
		}
		var head callAnswer
		if err := json.Unmarshal(raw, &head); err != nil {
			return fail(fmt.Errorf("prompts/get: the result: %w", err))
		}
		if head.ResultType != "input_required" {
			var res PromptResult
			if err := json.Unmarshal(raw, &res); err != nil {
				return fail(fmt.Errorf("prompts/get: the result: %w", err))
			}
			return &res, nil
		}
		// In 2026-07-28 the prompt asks through input_required rounds, as
		// a tool does.
		if round >= mcpMaxRounds {
			return fail(fmt.Errorf("the prompt asked for input %d times; the client stops there", mcpMaxRounds))
		}
		answers, err := c.answerAll(ctx, head.InputRequests)
		if err != nil {
			return fail(err)
		}
		params["inputResponses"] = answers
		delete(params, "requestState")
		if head.RequestState != nil {
			params["requestState"] = *head.RequestState
		}
	}
}

// Complete asks an MCP server for the values of argument that begin with
// prefix, given the arguments chosen already (nil for none), of ref: a
// prompt ([PromptRef]) or a resource template ([TemplateRef]). more says
// the server has more values than it sent (it sends at most 100).
func (ss *Session) Complete(ctx context.Context, ref CompletionRef, argument, prefix string, chosen map[string]string) (values []string, more bool, err error) {
	var p mcpwire.CompleteParams
	p.Ref = ref
	p.Argument.Name, p.Argument.Value = argument, prefix
	if chosen != nil {
		p.Context = &mcpwire.CompleteContext{Arguments: chosen}
	}
	what := ref.Name
	if ref.Type == mcpwire.RefResource {
		what = ref.URI
	}
	var res mcpwire.CompleteResult
	if err := ss.s.request(ctx, hopCall(ctx), "completion/complete", p.Map(), &res); err != nil {
		return nil, false, fmt.Errorf("otc client: complete %s of %s: %w", truncate(argument, 64), truncate(what, 200), err)
	}
	return res.Completion.Values, res.Completion.HasMore, nil
}

// pages reads every page of a list method's member.
func pages[T any](ctx context.Context, s *mcpSession, method, member string) ([]T, error) {
	return pagesOf[T](ctx, s, method, member, nil)
}

// pagesOf is pages of a request whose params are base (nil for none)
// beside the cursor.
func pagesOf[T any](ctx context.Context, s *mcpSession, method, member string, base map[string]any) ([]T, error) {
	var out []T
	cursor := ""
	for range mcpMaxPages {
		params := map[string]any{}
		for k, v := range base {
			params[k] = v
		}
		if cursor != "" {
			params["cursor"] = cursor
		}
		var page json.RawMessage
		if err := s.request(ctx, nil, method, params, &page); err != nil {
			return nil, err
		}
		raw, next, err := mcpwire.ListResult(page, member)
		if err != nil {
			return nil, fmt.Errorf("%s: the result: %w", method, err)
		}
		var items []T
		if raw != nil {
			if err := json.Unmarshal(raw, &items); err != nil {
				return nil, fmt.Errorf("%s: the %s: %w", method, member, err)
			}
		}
		out = append(out, items...)
		if next == "" {
			return out, nil
		}
		cursor = next
	}
	return nil, fmt.Errorf("%s gave more than %d pages", method, mcpMaxPages)
}

// hopCall is the call whose headers a read, a render or a completion
// sends: those a gateway put on ctx for the request it forwards (the
// caller's token, the trace context: internal/hophdr), or nil.
func hopCall(ctx context.Context) *call {
	h := hophdr.From(ctx)
	if h == nil {
		return nil
	}
	return &call{opts: CallOptions{Header: h}}
}
