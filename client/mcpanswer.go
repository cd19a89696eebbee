package client

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"

	"github.com/otcgo/otc"
	"github.com/otcgo/otc/internal/jsonrpc"
	"github.com/otcgo/otc/internal/mcpwire"
)

// This file answers what an MCP server sends of its own: its requests
// (questions for the user or a model, roots, ping), with the client's
// handlers, and its notifications.

// incoming handles a message of the server that is not the answer being
// waited for: a notification, or a request of the server's, which is
// answered. k is the call on whose stream it came, nil for none (stdio,
// the session's own stream), when it is the call under way if there is
// only one: the message names none, and a server asks in the middle of
// a call. The call's OnNotification sees the notification, its handlers
// answer with its context, its headers go with the answer, and a
// handler's failure to answer is kept for the call's error.
func (s *mcpSession) incoming(ctx context.Context, k *call, msg []byte) {
	if k == nil {
		if only, cctx := s.callFor(); only != nil {
			k, ctx = only, cctx
		}
	}
	var m struct {
		ID     json.RawMessage `json:"id"`
		Method string          `json:"method"`
		Params json.RawMessage `json:"params"`
	}
	if json.Unmarshal(msg, &m) != nil || m.Method == "" {
		return
	}
	if len(m.ID) == 0 || string(m.ID) == "null" {
		if k != nil && k.opts.OnNotification != nil {
			k.opts.OnNotification(m.Method, m.Params)
		}
		s.notification(m.Method, m.Params)
		return
	}
	result, rerr, cause := s.c.answer(ctx, m.Method, m.Params)
	var body []byte
	if rerr != nil {
		body = jsonrpc.Response(m.ID, nil, rerr)
		if cause != nil && k != nil {
			k.handlerFailed(cause)
		}
	} else {
		body = jsonrpc.Response(m.ID, result, nil)
	}
	_ = s.conn().send(ctx, s, k, body)
}

// refuse answers request id of the server's with an error saying why
// the client will not answer it.
func (s *mcpSession) refuse(ctx context.Context, id json.RawMessage, why string) {
	body := jsonrpc.Response(id, nil, &RPCError{Code: jsonrpc.CodeInternalError, Message: why})
	_ = s.conn().send(ctx, s, nil, body)
}

// notification hands a notification to its progress callback and to
// Options.OnNotification.
func (s *mcpSession) notification(method string, params json.RawMessage) {
	if method == "notifications/progress" {
		var p struct {
			Token    json.RawMessage `json:"progressToken"`
			Progress float64         `json:"progress"`
			Total    float64         `json:"total"`
			Message  string          `json:"message"`
		}
		if json.Unmarshal(params, &p) == nil {
			if f, ok := s.progress.Load(tokenKey(p.Token)); ok {
				f.(func(Progress))(Progress{Progress: p.Progress, Total: p.Total, Message: p.Message})
			}
		}
	}
	if method == mcpwire.MethodListenAcked {
		s.listenAcked(params)
	}
	if f := s.c.opts.OnNotification; f != nil {
		f(method, params)
	}
}

// tokenKey is a progress token as a map key: a string's value, a
// number's text.
func tokenKey(raw json.RawMessage) string {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	return string(raw)
}

// answer answers a request of a server's (MCP's elicitation/create,
// sampling/createMessage, roots/list, ping) with the handlers: a result,
// or the error to answer with and, when a handler failed, its error.
func (c *Client) answer(ctx context.Context, method string, params json.RawMessage) (any, *RPCError, error) {
	h := c.opts.Handlers
	if h == nil {
		h = &Handlers{}
	}
	fail := func(err error) (any, *RPCError, error) {
		return nil, &RPCError{Code: jsonrpc.CodeInternalError, Message: err.Error()}, err
	}
	switch method {
	case "ping":
		return map[string]any{}, nil, nil
	case "elicitation/create":
		if h.Elicit != nil {
			var req ElicitRequest
			if err := json.Unmarshal(params, &req); err != nil {
				return nil, &RPCError{Code: jsonrpc.CodeInvalidParams, Message: "Invalid params: " + err.Error()}, nil
			}
			res, err := h.Elicit(ctx, &req)
			if err != nil {
				return fail(err)
			}
			if res == nil {
				res = &ElicitResult{Action: otc.ElicitCancel}
			}
			if res.Action == otc.ElicitAccept {
				res.Content = withDefaults(res.Content, req.RequestedSchema)
			}
			return res, nil, nil
		}
	case "sampling/createMessage":
		if h.Sample != nil {
			res, err := h.Sample(ctx, params)
			if err != nil {
				return fail(err)
			}
			return res, nil, nil
		}
	case "roots/list":
		if h.Roots != nil {
			roots, err := h.Roots(ctx)
			if err != nil {
				return fail(err)
			}
			if roots == nil {
				roots = []otc.Root{}
			}
			return map[string]any{"roots": roots}, nil, nil
		}
	}
	return nil, &RPCError{Code: jsonrpc.CodeMethodNotFound, Message: "Method not found: the client has no handler for " + truncate(method, 64)}, nil
}

// withDefaults fills in the form's defaults for the fields an accepted
// answer leaves out, as the server asked for them.
func withDefaults(content map[string]any, schema json.RawMessage) map[string]any {
	var form struct {
		Properties map[string]struct {
			Default json.RawMessage `json:"default"`
		} `json:"properties"`
	}
	if json.Unmarshal(schema, &form) != nil {
		return content
	}
	for name, p := range form.Properties {
		if _, given := content[name]; given || len(p.Default) == 0 {
			continue
		}
		var v any
		if json.Unmarshal(p.Default, &v) == nil {
			if content == nil {
				content = map[string]any{}
			}
			content[name] = v
		}
	}
	return content
}

// answerAll answers the questions of an input_required result or task,
// by their keys. A round has no way to decline a request: a question
// without a handler fails the call.
func (c *Client) answerAll(ctx context.Context, reqs map[string]json.RawMessage) (map[string]any, error) {
	if len(reqs) == 0 {
		return nil, errors.New("input_required without inputRequests")
	}
	out := make(map[string]any, len(reqs))
	for _, key := range slices.Sorted(maps.Keys(reqs)) {
		var r struct {
			Method string          `json:"method"`
			Params json.RawMessage `json:"params"`
		}
		if err := json.Unmarshal(reqs[key], &r); err != nil {
			return nil, fmt.Errorf("input request %q: %w", truncate(key, 64), err)
		}
		res, rerr, cause := c.answer(ctx, r.Method, r.Params)
		if rerr != nil && ctx.Err() != nil {
			return nil, ctx.Err() // the call ended while its handler answered
		}
		if cause != nil {
			return nil, fmt.Errorf("the tool asked for %s, and the handler failed: %w", truncate(r.Method, 64), cause)
		}
		if rerr != nil {
			return nil, fmt.Errorf("the tool asked for %s, and the client cannot answer: %s (set a handler in Options.Handlers)", truncate(r.Method, 64), rerr.Message)
		}
		out[key] = res
	}
	return out, nil
}
