// Package prompt registers prompts on an [otc.Registry]: templates of
// messages a user picks (a slash command, a menu entry) and fills in,
// which the server renders for a model. A prompt's arguments are the
// fields of a struct, declared as a tool's are (a description and,
// unless optional, required, from their tags), converted from the text a
// client sends to the fields' types and validated; its function renders
// them.
//
// The registry carries its prompts, under the same [otc.Policy] as its
// tools, and every server of it serves them: the MCP server lists them,
// renders them, and completes their arguments (see package mcp). A
// caller the policy does not admit sees nothing of a prompt.
//
// What the function returns becomes the prompt's messages: a string is
// one user message of text, a [Message] or []Message the messages, and a
// [Result] (or *Result) the messages with a description. A function may
// ask its caller questions as a tool's may ([otc.Elicit]).
package prompt

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"strings"
	"time"

	"github.com/otcgo/otc"
	"github.com/otcgo/otc/internal/hook"
	"github.com/otcgo/otc/internal/mcpwire"
	"github.com/otcgo/otc/internal/params"
	"github.com/otcgo/otc/internal/primitive"
	"github.com/otcgo/otc/internal/uritemplate"
)

// seam is what package otc lends the packages beside it (internal/hook).
var seam = hook.Of[otc.Registry, otc.Policy, otc.ToolDefinition, otc.CallRequest, otc.Identity, otc.Error]()

// Prompt describes a prompt whose arguments are the fields of In (a
// struct, or struct{} for none).
type Prompt[In any] struct {
	// Name identifies the prompt; required, unique in the registry, and
	// without white space.
	Name string
	// Title is its name for people; optional, one line.
	Title string
	// Description says what the prompt is for; optional.
	Description string
	// Policy restricts who may list and render the prompt, as a tool's
	// does its calls; nil means anyone the server lets in. A capability
	// token's audience is ResourceURI, or the prompt's name.
	Policy *otc.Policy
	// Timeout bounds a render: past it, the caller is answered with an
	// error that says so, whatever the function does. Zero means the
	// registry's DefaultTimeout; a negative value, none.
	Timeout time.Duration
	// MaxConcurrent bounds the renders under way at once: one more is
	// answered at once with an error that says to try again. Zero means
	// the registry's DefaultMaxConcurrent; a negative value, none.
	MaxConcurrent int
	// Complete, when set, suggests values for the argument that begin
	// with prefix, given the arguments chosen already (those that fit
	// their fields). At most 100 are answered. Nil, or nil values,
	// suggests the values of the field's enum that begin with prefix.
	Complete func(ctx context.Context, argument, prefix string, chosen In) ([]string, error)
}

// Role is who a message is from.
type Role = mcpwire.Role

// The roles of a prompt's messages.
const (
	User      Role = mcpwire.RoleUser
	Assistant Role = mcpwire.RoleAssistant
)

// Message is one message of a rendered prompt (Role, and Content: text,
// an image, audio or an embedded resource: [otc.TextContent],
// [otc.ImageContent], [otc.AudioContent], [otc.ResourceContent]…). It is
// the type the client reads it as (client.PromptMessage).
type Message = mcpwire.PromptMessage

// Result is a rendered prompt: its messages (Messages), and a
// description of them (Description). It is the type the client reads it
// as (client.PromptResult).
type Result = mcpwire.PromptResult

// Rendered is what a prompt's function may return: a string (one user
// message of text), a Message, a []Message, or a Result (or *Result),
// checked by the compiler.
type Rendered interface {
	string | Message | []Message | Result | *Result
}

// Handle is a registered prompt.
type Handle struct {
	set    *primitive.Set
	prompt *primitive.Prompt
}

// Remove removes the prompt from the registry, and reports whether it was
// there. Servers announce the change of the list.
func (h *Handle) Remove() bool { return h.set.Remove(h.prompt) }

// Register adds a prompt that get renders (see [Rendered] for what Out
// may be). It fails, naming the prompt and the culprit, when the name is
// empty, holds white space or is taken, the title is more than a line,
// get is nil, In is a type Register
// of a tool would refuse (a parameter without a description…), or one of
// its fields is an object, which no argument's text can be.
func Register[In any, Out Rendered](reg *otc.Registry, p Prompt[In], get func(context.Context, In) (Out, error)) (*Handle, error) {
	fail := func(format string, args ...any) (*Handle, error) {
		return nil, fmt.Errorf("prompt: %q: %s", p.Name, fmt.Sprintf(format, args...))
	}
	switch {
	case reg == nil:
		return fail("Register called with a nil *otc.Registry")
	case get == nil:
		return fail("the function is nil")
	case primitive.PromptNameProblem(p.Name) != "":
		return fail("%s", primitive.PromptNameProblem(p.Name))
	case strings.ContainsAny(p.Title, "\r\n"):
		return fail("Title must be one line")
	}
	if problem := seam.PolicyProblem(p.Policy); problem != "" {
		return fail("Policy: %s", problem)
	}
	input, err := seam.Input(reg, reflect.TypeFor[In]())
	if err != nil {
		return fail("input type %s: %v", reflect.TypeFor[In](), err)
	}
	args, err := arguments(input.Params)
	if err != nil {
		return fail("input type %s: %v", reflect.TypeFor[In](), err)
	}
	encoded, err := json.Marshal(mcpwire.Prompt{Name: p.Name, Title: p.Title, Description: p.Description, Arguments: args})
	if err != nil {
		return fail("%v", err)
	}
	binding := primitive.NewBinding[In](input)
	pp := &primitive.Prompt{Name: p.Name, Entry: encoded, Admits: seam.Admits(p.Policy, p.Name), Guard: seam.Guard(p.Policy, p.Name), Timeout: p.Timeout, MaxConcurrent: p.MaxConcurrent,
		Complete: primitive.NewCompleter(input.Params, p.Complete),
		Get: func(ctx context.Context, args map[string]string) (json.RawMessage, error) {
			vs := make(uritemplate.Values, len(args))
			for k, v := range args {
				vs[k] = v
			}
			in, err := binding.Bind(vs)
			if err != nil {
				return nil, err
			}
			out, err := get(ctx, in)
			if err != nil {
				return nil, err
			}
			return render(any(out))
		}}
	set := primitive.Of(reg)
	if err := set.AddPrompt(pp); err != nil {
		return fail("%v", err)
	}
	return &Handle{set: set, prompt: pp}, nil
}

// arguments are a prompt's arguments as prompts/list shows them, in the
// order of the input's properties.
func arguments(ps params.List) ([]mcpwire.PromptArgument, error) {
	var out []mcpwire.PromptArgument
	for _, p := range ps {
		if p.Type == "object" {
			return nil, fmt.Errorf("the argument %q is an object, which the text of a prompt argument cannot be: use a string, number, integer, boolean or a list of them", p.Name)
		}
		out = append(out, mcpwire.PromptArgument{Name: p.Name, Description: p.Description, Required: p.Required})
	}
	return out, nil
}

// render encodes what a prompt function returned as a GetPromptResult's
// members.
func render(out any) (json.RawMessage, error) {
	var res Result
	switch v := out.(type) {
	case string: // the usual prompt, written as it is
		return mcpwire.AppendTextPrompt(make([]byte, 0, 64+len(v)), v), nil
	case Message:
		res.Messages = []Message{v}
	case []Message:
		res.Messages = v
	case Result:
		res = v
	case *Result:
		if v == nil {
			return nil, errors.New("the prompt function returned a nil *Result")
		}
		res = *v
	}
	if res.Messages == nil {
		res.Messages = []Message{}
	}
	for i, m := range res.Messages {
		if m.Role != User && m.Role != Assistant {
			return nil, fmt.Errorf("message %d has role %q: it is %q or %q", i, m.Role, User, Assistant)
		}
		switch m.Content.Type {
		case "text", "image", "audio", "resource":
		default:
			return nil, fmt.Errorf("message %d has content of type %q: build it with otc.TextContent, ImageContent, AudioContent or ResourceContent", i, m.Content.Type)
		}
	}
	return json.Marshal(res)
}
