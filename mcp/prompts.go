package mcp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"

	"github.com/otcgo/otc"
	"github.com/otcgo/otc/internal/wire"
)

// This file is the little this server does with prompts: it lists and
// renders the prompts of Options.Prompts, whose function may ask the
// client as a tool does (in 2026-07-28, prompts/get answers input_required
// too). It has no list-changed notifications, no completion of arguments,
// and no pagination: a server with many prompts, or prompts that change,
// runs the official SDK's server (see the mcpsdk module).

// Prompt is a prompt template the server offers its clients
// (prompts/list, prompts/get).
type Prompt struct {
	// Name identifies the prompt. Required, and unique.
	Name string
	// Title and Description are shown to the user; both are optional.
	Title       string
	Description string
	// Arguments are the prompt's arguments, strings the client fills in.
	Arguments []PromptArgument
	// Get renders the prompt with the client's arguments, every required
	// one present. It may ask the client (otc.Elicit, otc.Sample,
	// otc.ListRoots) and must then return the error they return, as a tool
	// does; another error is answered as an internal error, with its text.
	Get func(ctx context.Context, args map[string]string) (*PromptResult, error)
}

// PromptArgument is an argument of a [Prompt].
type PromptArgument struct {
	Name        string `json:"name"`
	Description string `json:"description,omitempty"`
	Required    bool   `json:"required,omitempty"`
}

// PromptResult is a rendered prompt: its messages, and optionally a
// description.
type PromptResult struct {
	Description string          `json:"description,omitempty"`
	Messages    []PromptMessage `json:"messages"`
}

// PromptMessage is one message of a rendered prompt.
type PromptMessage struct {
	Role    string           `json:"role"` // "user" or "assistant"
	Content otc.ContentBlock `json:"content"`
}

// prompts are a server's prompts, ready to serve.
type prompts struct {
	byName map[string]*Prompt
	list   []byte // the prompts member of prompts/list, encoded once
}

// newPrompts checks the prompts of the options. It panics on a setup
// mistake, naming the culprit.
func newPrompts(ps []Prompt) *prompts {
	if len(ps) == 0 {
		return nil
	}
	out := &prompts{byName: make(map[string]*Prompt, len(ps))}
	type listed struct {
		Name        string           `json:"name"`
		Title       string           `json:"title,omitempty"`
		Description string           `json:"description,omitempty"`
		Arguments   []PromptArgument `json:"arguments,omitempty"`
	}
	var list []listed
	for i := range ps {
		p := &ps[i]
		switch {
		case p.Name == "":
			panic(fmt.Sprintf("mcp: Options.Prompts[%d] has no name", i))
		case p.Get == nil:
			panic(fmt.Sprintf("mcp: prompt %q has no Get function", p.Name))
		case out.byName[p.Name] != nil:
			panic(fmt.Sprintf("mcp: prompt %q is given twice", p.Name))
		}
		out.byName[p.Name] = p
		list = append(list, listed{p.Name, p.Title, p.Description, p.Arguments})
	}
	out.list, _ = json.Marshal(list) // strings and bools: cannot fail
	return out
}

// servePrompts answers prompts/list and prompts/get when the server has
// prompts; ok is false for any other request.
func (s *server) servePrompts(ctx context.Context, x *exchange) (b []byte, e *rpcError, ok bool) {
	if s.prompts == nil {
		return nil, nil, false
	}
	switch x.msg.method {
	case "prompts/list":
		return s.listPrompts(generationOf(x).listExtra(s)), nil, true
	case "prompts/get":
		b, e = s.getPrompt(ctx, x)
		return b, e, true
	}
	return nil, nil, false
}

// listPrompts answers prompts/list, with the generation's extra.
func (s *server) listPrompts(extra []byte) []byte {
	b := append([]byte(`{"prompts":`), s.prompts.list...)
	b = append(b, extra...)
	return append(b, '}')
}

// getPrompt answers prompts/get.
func (s *server) getPrompt(ctx context.Context, x *exchange) ([]byte, *rpcError) {
	m := x.msg
	p := s.prompts.byName[m.name]
	if !m.hasName || p == nil {
		return nil, newError(codeInvalidParams, "Invalid params: no prompt is named %q; prompts/list names them", wire.Truncate(m.name, 64))
	}
	args := map[string]string{}
	if m.arguments != nil {
		if err := json.Unmarshal(m.arguments, &args); err != nil {
			return nil, newError(codeInvalidParams, "Invalid params: the arguments of a prompt are strings: %v", err)
		}
	}
	for _, a := range p.Arguments {
		if _, ok := args[a.Name]; a.Required && !ok {
			return nil, newError(codeInvalidParams, "Invalid params: prompt %q needs the argument %q", p.Name, a.Name)
		}
	}
	state := &callState{request: x.request}
	subject := "prompt:" + p.Name
	gen := generationOf(x)
	ctx, e := gen.preparePrompt(s, ctx, state, m, subject)
	if e != nil {
		return nil, e
	}
	ctx = context.WithValue(ctx, stateKey{}, state)
	res, err := p.Get(ctx, args)
	if err != nil {
		if b, e, ok := gen.promptFailed(s, ctx, state, m, subject, err); ok {
			return b, e
		}
		var mce *MissingCapabilityError
		if errors.As(err, &mce) {
			return nil, missingCapability(mce.Capability)
		}
		return nil, &rpcError{Code: codeInternalError, Message: "The prompt could not be rendered: " + err.Error()}
	}
	if res == nil || res.Messages == nil {
		res = &PromptResult{Messages: []PromptMessage{}}
	}
	for i, msg := range res.Messages {
		if msg.Role != "user" && msg.Role != "assistant" {
			return nil, &rpcError{Code: codeInternalError, Message: fmt.Sprintf("The prompt could not be rendered: its message %d has role %q", i, msg.Role)}
		}
	}
	b, err := json.Marshal(res)
	if err != nil {
		return nil, &rpcError{Code: codeInternalError, Message: "The prompt could not be rendered: " + err.Error()}
	}
	if extra := gen.resultExtra(s); extra != nil {
		b = slices.Concat(b[:len(b)-1], extra, []byte("}"))
	}
	return b, nil
}
