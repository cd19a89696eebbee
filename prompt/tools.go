package prompt

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/otcgo/otc"
	"github.com/otcgo/otc/internal/primitive"
	"github.com/otcgo/otc/internal/wire"
)

// ToolsOptions configures [RegisterTools]. The zero value, and nil, give
// the defaults described on each field.
type ToolsOptions struct {
	// Toolkit is the toolkit of the two tools: "Prompts" when empty, whose
	// tools a model sees as Prompts_List and Prompts_Get.
	Toolkit string
	// Policy is the tools' own policy, checked before a prompt's: nil
	// means anyone the server lets in.
	Policy *otc.Policy
}

type listed struct {
	Prompts []json.RawMessage `json:"prompts" jsonschema_description:"The prompts, each as MCP lists it: name, and optionally title, description and arguments (name, description, required)."`
}

type getInput struct {
	Name      string            `json:"name" jsonschema:"required,minLength=1,maxLength=128" jsonschema_description:"The prompt's name, as the list tool names it."`
	Arguments map[string]string `json:"arguments,omitempty" jsonschema_description:"The prompt's arguments, by name, as text."`
}

// rendered is what the get tool answers: the rendered prompt.
type rendered struct {
	Description string            `json:"description,omitempty" jsonschema:"description=What the messages are for."`
	Messages    []json.RawMessage `json:"messages" jsonschema_description:"The messages, each with its role (user or assistant) and content."`
}

// RegisterTools serves the registry's prompts as two tools, for the
// callers whose format has tools only (OTC, the REST view, A2A, and MCP
// clients that list no prompts): Toolkit.List lists the prompts the
// caller may see, and Toolkit.Get renders one. Each prompt's policy
// applies as it does over MCP, with the protocol the call came through.
// It fails as [otc.Register] does, for a toolkit taken already, say.
func RegisterTools(reg *otc.Registry, opts *ToolsOptions) error {
	if opts == nil {
		opts = &ToolsOptions{}
	}
	kit := opts.Toolkit
	if kit == "" {
		kit = "Prompts"
	}
	return primitive.ToolPair[listed, getInput, rendered]{
		Kit: kit, Get: "Get", Policy: opts.Policy,
		ListDescription: "Lists the prompts you can render: templates of messages, with the arguments each takes.",
		GetDescription:  fmt.Sprintf("Renders a prompt that %s_List names with its arguments, and answers its messages.", kit),
		List: func(sn *primitive.Snapshot, admits func(primitive.Admits) bool) listed {
			out := listed{Prompts: []json.RawMessage{}}
			for _, p := range sn.Prompts {
				if admits(p.Admits) {
					out.Prompts = append(out.Prompts, p.Entry)
				}
			}
			return out
		},
		Read: func(ctx context.Context, sn *primitive.Snapshot, admits func(primitive.Admits) bool, in getInput) (rendered, error) {
			p := sn.Prompt(in.Name)
			if p == nil || !admits(p.Admits) {
				return rendered{}, &otc.ToolError{Message: fmt.Sprintf("There is no prompt named %q.", wire.Truncate(in.Name, 64)), AdditionalPromptContent: kit + "_List names them."}
			}
			args := in.Arguments
			if args == nil {
				args = map[string]string{}
			}
			raw, err := p.Get(ctx, args)
			if err != nil {
				return rendered{}, err
			}
			var out rendered
			if err := json.Unmarshal(raw, &out); err != nil {
				return rendered{}, err
			}
			return out, nil
		},
	}.Register(reg)
}
