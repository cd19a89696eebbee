package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"

	"github.com/otcgo/otc"
	"github.com/otcgo/otc/a2a"
	"github.com/otcgo/otc/client"
)

// a2aServer talks to an A2A agent at protocol version 1.0 over its
// JSON-RPC binding: its Agent Card lists the skills (each a tool), and
// SendMessage with a data part {"tool", "input"} calls one, as this
// module's a2a package serves them.
type a2aServer struct {
	url    string // the agent's base URL: the card is below it, JSON-RPC at it
	apiKey string
	bearer string
	http   *http.Client
}

// a2aCard is what the command reads of an Agent Card.
type a2aCard struct {
	SupportedInterfaces []struct {
		URL             string `json:"url"`
		ProtocolBinding string `json:"protocolBinding"`
	} `json:"supportedInterfaces"`
	Skills []struct {
		ID          string   `json:"id"`
		Name        string   `json:"name"`
		Description string   `json:"description"`
		Examples    []string `json:"examples"`
	} `json:"skills"`
	Capabilities struct {
		Extensions []struct {
			URI    string `json:"uri"`
			Params struct {
				Skills map[string]struct {
					InputSchema  json.RawMessage `json:"inputSchema"`
					OutputSchema json.RawMessage `json:"outputSchema"`
				} `json:"skills"`
			} `json:"params"`
		} `json:"extensions"`
	} `json:"capabilities"`
}

// card fetches the Agent Card.
func (s *a2aServer) card(ctx context.Context) (*a2aCard, error) {
	u := strings.TrimSuffix(s.url, "/") + "/.well-known/agent-card.json"
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return nil, err
	}
	setCredentials(req.Header, s.apiKey, s.bearer)
	resp, err := s.http.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(io.LimitReader(resp.Body, maxMCPAnswer))
	if err != nil {
		return nil, err
	}
	var c a2aCard
	if resp.StatusCode != http.StatusOK || json.Unmarshal(raw, &c) != nil || c.Skills == nil {
		return nil, &client.ResponseError{Method: http.MethodGet, URL: u, StatusCode: resp.StatusCode, ContentType: resp.Header.Get("Content-Type"),
			Body: raw[:min(len(raw), 256)], Err: errors.New("not an A2A Agent Card")}
	}
	return &c, nil
}

// list lists the agent's skills as tools, with the schemas the card's
// skill-schemas extension gives (a2a.ExtensionSkillSchemas); a skill
// without one has the parameters of its example.
func (s *a2aServer) list(ctx context.Context) ([]otc.ToolDefinition, error) {
	c, err := s.card(ctx)
	if err != nil {
		return nil, err
	}
	defs := make([]otc.ToolDefinition, 0, len(c.Skills))
	for _, sk := range c.Skills {
		d := otc.ToolDefinition{ID: sk.Name, Name: sk.Name, Description: sk.Description}
		for _, ext := range c.Capabilities.Extensions {
			if sch, ok := ext.Params.Skills[sk.ID]; ok && ext.URI == a2a.ExtensionSkillSchemas && len(sch.InputSchema) > 0 {
				d.InputSchema.Parameters, d.OutputSchema = sch.InputSchema, sch.OutputSchema
			}
		}
		if d.InputSchema.Parameters == nil && len(sk.Examples) > 0 {
			d.InputSchema.Parameters = exampleSchema(sk.Examples[0])
		}
		defs = append(defs, d)
	}
	return defs, nil
}

// exampleSchema is a schema whose properties are those of a skill's
// example call, typed as the example's values are.
func exampleSchema(example string) json.RawMessage {
	var ex struct {
		Input map[string]any `json:"input"`
	}
	if json.Unmarshal([]byte(example), &ex) != nil {
		return nil
	}
	props := map[string]any{}
	for k, v := range ex.Input {
		t := "string"
		switch v.(type) {
		case float64:
			t = "number"
		case bool:
			t = "boolean"
		case map[string]any:
			t = "object"
		case []any:
			t = "array"
		}
		props[k] = map[string]any{"type": t}
	}
	b, _ := json.Marshal(map[string]any{"type": "object", "properties": props})
	return b
}

func (s *a2aServer) describe(ctx context.Context, tool string) (otc.ToolDefinition, bool, error) {
	return describeFromList(ctx, s, tool)
}

// endpoint returns the URL of the agent's JSON-RPC binding, as its card
// names it (the card may be served at a host's root, the agent elsewhere),
// or the agent's URL when the card names none. Credentials and calls go
// only to the origin the user gave: an interface on another origin is not
// used, and when the card names no other, the error says which URL it
// named and how to call it there.
func (s *a2aServer) endpoint(ctx context.Context) (string, error) {
	c, err := s.card(ctx)
	if err != nil {
		return "", err
	}
	var elsewhere error
	for _, i := range c.SupportedInterfaces {
		if i.ProtocolBinding != "JSONRPC" || i.URL == "" {
			continue
		}
		u, err := client.CheckOrigin(s.url, i.URL, "the JSON-RPC interface its Agent Card names")
		if err == nil {
			return u, nil
		}
		if elsewhere == nil {
			elsewhere = fmt.Errorf("%w: --a2a %s", err, i.URL)
		}
	}
	if elsewhere != nil {
		return "", elsewhere
	}
	return s.url, nil
}

// call sends a message calling tool, and reads the task that answers it.
func (s *a2aServer) call(ctx context.Context, tool string, input json.RawMessage, opts *client.CallOptions) (json.RawMessage, string, *otc.ToolError, error) {
	callID := opts.CallID
	if callID == "" {
		callID = otc.NewCallID()
	}
	endpoint, err := s.endpoint(ctx)
	if err != nil {
		return nil, callID, nil, err
	}
	if len(opts.Secrets) > 0 || opts.UserID != "" {
		return nil, callID, nil, errors.New("A2A carries no secrets or user id: call the tool over OTC or MCP")
	}
	body, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": 1, "method": "SendMessage", "params": map[string]any{
		"message": map[string]any{"messageId": callID, "role": "ROLE_USER", "parts": []any{map[string]any{"data": map[string]any{"tool": tool, "input": input}}}},
	}})
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, endpoint, bytes.NewReader(body))
	if err != nil {
		return nil, callID, nil, err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("A2A-Version", "1.0")
	setCredentials(req.Header, s.apiKey, s.bearer)
	resp, err := s.http.Do(req)
	if err != nil {
		return nil, callID, nil, err
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(io.LimitReader(resp.Body, maxMCPAnswer))
	if err != nil {
		return nil, callID, nil, err
	}
	var answer struct {
		Result *struct {
			Task *struct {
				Status struct {
					State   string      `json:"state"`
					Message *a2aMessage `json:"message"`
				} `json:"status"`
				Artifacts []struct {
					Parts []struct {
						Data json.RawMessage `json:"data"`
					} `json:"parts"`
				} `json:"artifacts"`
			} `json:"task"`
			Message *a2aMessage `json:"message"`
		} `json:"result"`
		Error *struct {
			Code    int    `json:"code"`
			Message string `json:"message"`
			Data    []struct {
				FieldViolations []struct {
					Field       string `json:"field"`
					Description string `json:"description"`
				} `json:"fieldViolations"`
			} `json:"data"`
		} `json:"error"`
	}
	if err := json.Unmarshal(raw, &answer); err != nil || answer.Result == nil && answer.Error == nil {
		return nil, callID, nil, &client.ResponseError{Method: http.MethodPost, URL: endpoint, StatusCode: resp.StatusCode,
			ContentType: resp.Header.Get("Content-Type"), Body: raw[:min(len(raw), 256)], Err: errors.New("not an A2A JSON-RPC answer")}
	}
	if e := answer.Error; e != nil {
		oe := &otc.Error{Code: otc.CodeServerError, Message: e.Message}
		switch e.Code {
		case -32602:
			for _, d := range e.Data {
				for _, v := range d.FieldViolations {
					if oe.ParameterErrors == nil {
						oe.Code, oe.ParameterErrors = otc.CodeInvalidInput, map[string]string{}
					}
					oe.ParameterErrors[v.Field] = v.Description
				}
			}
			if oe.ParameterErrors != nil {
				oe.Message = "Some input parameters are invalid"
			}
		case -31401:
			oe.Code = otc.CodeUnauthenticated
		case -31403:
			oe.Code = otc.CodeForbidden
		}
		return nil, callID, nil, oe
	}
	if resp.StatusCode == http.StatusUnauthorized {
		return nil, callID, nil, &otc.Error{Code: otc.CodeUnauthenticated, Message: "Authentication required"}
	}
	res := answer.Result
	if m := res.Message; res.Task == nil && m != nil {
		// A call answered within its message: its outcome is in the
		// message's metadata, its value or failure in the parts.
		switch string(m.Metadata["io.github.otcgo/outcome"]) {
		case `"succeeded"`:
			for _, p := range m.Parts {
				if len(p.Data) > 0 {
					return p.Data, callID, nil, nil
				}
			}
			return nil, callID, nil, nil
		case `"failed"`:
			return nil, callID, m.toolError(), nil
		}
		return nil, callID, nil, fmt.Errorf("the agent answered with a message, not a call's outcome: %s", m.text())
	}
	if res.Task == nil {
		return nil, callID, nil, errors.New("the agent answered with neither a task nor a message")
	}
	t := res.Task
	switch t.Status.State {
	case "TASK_STATE_COMPLETED":
		if len(t.Artifacts) > 0 && len(t.Artifacts[0].Parts) > 0 {
			return t.Artifacts[0].Parts[0].Data, callID, nil, nil
		}
		return nil, callID, nil, nil
	case "TASK_STATE_FAILED":
		if t.Status.Message == nil {
			return nil, callID, &otc.ToolError{Message: "The task failed"}, nil
		}
		return nil, callID, t.Status.Message.toolError(), nil
	}
	return nil, callID, nil, fmt.Errorf("the task ended in state %s", t.Status.State)
}

// a2aMessage is what the command reads of an A2A message: its parts and
// metadata.
type a2aMessage struct {
	Parts []struct {
		Text *string         `json:"text"`
		Data json.RawMessage `json:"data"`
	} `json:"parts"`
	Metadata map[string]json.RawMessage `json:"metadata"`
}

// text is the message's first text part.
func (m *a2aMessage) text() string {
	for _, p := range m.Parts {
		if p.Text != nil {
			return *p.Text
		}
	}
	return ""
}

// toolError reads a message that says how a call failed: the tool
// error's words in the text part (before the hint), whether and when to
// retry and the hint in the data part.
func (m *a2aMessage) toolError() *otc.ToolError {
	te := &otc.ToolError{Message: "The call failed"}
	for _, p := range m.Parts {
		switch {
		case p.Text != nil:
			te.Message, _, _ = strings.Cut(*p.Text, "\n\n")
		case len(p.Data) > 0:
			var info struct {
				CanRetry     bool   `json:"can_retry"`
				RetryAfterMS int64  `json:"retry_after_ms"`
				Hint         string `json:"additional_prompt_content"`
			}
			_ = json.Unmarshal(p.Data, &info)
			te.CanRetry, te.RetryAfter, te.AdditionalPromptContent = info.CanRetry, time.Duration(info.RetryAfterMS)*time.Millisecond, info.Hint
		}
	}
	return te
}
