package client

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/otcgo/otc"
	"github.com/otcgo/otc/internal/hophdr"
)

// This file reads what an MCP server offers beside its tools: resources
// and resource templates, prompts, and the completion of their arguments.
// The other formats have none of them: their methods answer an error
// wrapping errors.ErrUnsupported.

// Resource is a resource or a resource template a server offers: one of
// URI (a resource) and URITemplate (an RFC 6570 template whose URIs the
// server reads) is set.
type Resource struct {
	URI         string `json:"uri,omitempty"`
	URITemplate string `json:"uriTemplate,omitempty"`
	Name        string `json:"name"`
	Title       string `json:"title,omitempty"`
	Description string `json:"description,omitempty"`
	MIMEType    string `json:"mimeType,omitempty"`
	// Size is the size of the contents in bytes; zero when unknown.
	Size int64 `json:"size,omitempty"`
	// Annotations are the server's hints (audience, priority,
	// lastModified) as it sent them; nil for none.
	Annotations json.RawMessage `json:"annotations,omitempty"`
}

// Prompt is a prompt a server offers, with the arguments [Client.GetPrompt]
// fills in.
type Prompt struct {
	Name        string           `json:"name"`
	Title       string           `json:"title,omitempty"`
	Description string           `json:"description,omitempty"`
	Arguments   []PromptArgument `json:"arguments,omitempty"`
}

// PromptArgument is an argument of a [Prompt].
type PromptArgument struct {
	Name        string `json:"name"`
	Description string `json:"description,omitempty"`
	Required    bool   `json:"required,omitempty"`
}

// PromptResult is a rendered prompt: its messages, each from "user" or
// "assistant", and a description of them.
type PromptResult struct {
	Description string `json:"description,omitempty"`
	Messages    []struct {
		Role    string           `json:"role"`
		Content otc.ContentBlock `json:"content"`
	} `json:"messages"`
}

// session returns the MCP session of c, or an error for op saying that
// c's format has no such thing.
func (c *Client) session(op string) (*mcpSession, error) {
	if s, ok := c.t.(*mcpSession); ok {
		return s, nil
	}
	return nil, fmt.Errorf("otc client: %s: the server speaks %s, which has no resources or prompts (MCP has): %w", op, c.format, errors.ErrUnsupported)
}

// ListResources lists the resources of an MCP server, then its resource
// templates, following the cursors of both lists.
func (c *Client) ListResources(ctx context.Context) ([]Resource, error) {
	s, err := c.session("list resources")
	if err != nil {
		return nil, err
	}
	out, err := pages[Resource](ctx, s, "resources/list", "resources")
	if err != nil {
		return nil, fmt.Errorf("otc client: list resources: %w", err)
	}
	templates, err := pages[Resource](ctx, s, "resources/templates/list", "resourceTemplates")
	if err != nil {
		return nil, fmt.Errorf("otc client: list resource templates: %w", err)
	}
	return append(out, templates...), nil
}

// ReadResource reads the resource at uri, a resource's URI or one of a
// template's. A URI nothing is at is an [*RPCError] (code -32002, or
// -32602 in MCP 2026-07-28) whose Data names the URI.
func (c *Client) ReadResource(ctx context.Context, uri string) ([]otc.EmbeddedResource, error) {
	s, err := c.session("read " + truncate(uri, 200))
	if err != nil {
		return nil, err
	}
	var res struct {
		Contents []otc.EmbeddedResource `json:"contents"`
	}
	if err := s.request(ctx, hopCall(ctx), "resources/read", map[string]any{"uri": uri}, &res); err != nil {
		return nil, fmt.Errorf("otc client: read %s: %w", truncate(uri, 200), err)
	}
	return res.Contents, nil
}

// Subscribe asks an MCP server to tell the client when the resource at
// uri changes: its notifications/resources/updated reach
// [Options.OnNotification]. A server keeps a subscription for its
// session; one that keeps none (a stateless HTTP server) may acknowledge
// it and tell nothing. MCP 2026-07-28 has no resources/subscribe (its
// subscriptions/listen, which this client does not speak yet, replaces
// it): pin an earlier Options.MCPVersion to subscribe.
func (c *Client) Subscribe(ctx context.Context, uri string) error {
	return c.subscription(ctx, "resources/subscribe", uri)
}

// Unsubscribe undoes [Client.Subscribe].
func (c *Client) Unsubscribe(ctx context.Context, uri string) error {
	return c.subscription(ctx, "resources/unsubscribe", uri)
}

func (c *Client) subscription(ctx context.Context, method, uri string) error {
	s, err := c.session(method)
	if err != nil {
		return err
	}
	if err := s.request(ctx, nil, method, map[string]any{"uri": uri}, nil); err != nil {
		return fmt.Errorf("otc client: %s %s: %w", method, truncate(uri, 200), err)
	}
	return nil
}

// ListPrompts lists the prompts of an MCP server, following cursors.
func (c *Client) ListPrompts(ctx context.Context) ([]Prompt, error) {
	s, err := c.session("list prompts")
	if err != nil {
		return nil, err
	}
	out, err := pages[Prompt](ctx, s, "prompts/list", "prompts")
	if err != nil {
		return nil, fmt.Errorf("otc client: list prompts: %w", err)
	}
	return out, nil
}

// GetPrompt renders the prompt name with args. A server's question while
// it renders (an elicitation) goes to [Options.Handlers], as a call's
// does.
func (c *Client) GetPrompt(ctx context.Context, name string, args map[string]string) (*PromptResult, error) {
	s, err := c.session("get prompt " + truncate(name, 64))
	if err != nil {
		return nil, err
	}
	params := map[string]any{"name": name}
	if args != nil {
		params["arguments"] = args
	}
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
// prefix, given the arguments chosen already (nil for none): of the
// prompt named ref, or, when ref holds a '{', of the resource template
// ref. more says the server has more values than it sent (it sends at
// most 100).
func (c *Client) Complete(ctx context.Context, ref, argument, prefix string, chosen map[string]string) (values []string, more bool, err error) {
	s, err := c.session("complete " + truncate(argument, 64))
	if err != nil {
		return nil, false, err
	}
	r := map[string]string{"type": "ref/prompt", "name": ref}
	if strings.ContainsRune(ref, '{') {
		r = map[string]string{"type": "ref/resource", "uri": ref}
	}
	params := map[string]any{"ref": r, "argument": map[string]string{"name": argument, "value": prefix}}
	if chosen != nil {
		params["context"] = map[string]any{"arguments": chosen}
	}
	var res struct {
		Completion struct {
			Values  []string `json:"values"`
			HasMore bool     `json:"hasMore"`
		} `json:"completion"`
	}
	if err := s.request(ctx, hopCall(ctx), "completion/complete", params, &res); err != nil {
		return nil, false, fmt.Errorf("otc client: complete %s of %s: %w", truncate(argument, 64), truncate(ref, 200), err)
	}
	return res.Completion.Values, res.Completion.HasMore, nil
}

// pages reads every page of a list method's member.
func pages[T any](ctx context.Context, s *mcpSession, method, member string) ([]T, error) {
	var out []T
	cursor := ""
	for range mcpMaxPages {
		params := map[string]any{}
		if cursor != "" {
			params["cursor"] = cursor
		}
		var page map[string]json.RawMessage
		if err := s.request(ctx, nil, method, params, &page); err != nil {
			return nil, err
		}
		var items []T
		if raw := page[member]; raw != nil {
			if err := json.Unmarshal(raw, &items); err != nil {
				return nil, fmt.Errorf("%s: the %s: %w", method, member, err)
			}
		}
		out = append(out, items...)
		var next string
		if raw := page["nextCursor"]; raw != nil {
			_ = json.Unmarshal(raw, &next)
		}
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
