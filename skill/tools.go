package skill

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
	// Toolkit is the toolkit of the two tools: "Skills" when empty, whose
	// tools a model sees as Skills_List and Skills_Load.
	Toolkit string
	// Policy is the tools' own policy, checked before a skill's: nil
	// means anyone the server lets in.
	Policy *otc.Policy
}

// listedSkills is what the list tool answers.
type listedSkills struct {
	Skills []json.RawMessage `json:"skills" jsonschema_description:"The skills, each with its uri (of its SKILL.md), its frontmatter (name, description…) and its files (uri, digest, size)."`
}

// loadInput is the load tool's input.
type loadInput struct {
	URI string `json:"uri" jsonschema:"required,minLength=1,maxLength=4096" jsonschema_description:"The URI of the skill's SKILL.md, as the list tool gives it."`
}

// RegisterTools serves the registry's skills (a gateway's upstreams'
// among them) as two tools, for the callers whose format has tools only
// (OTC, the REST view, A2A, and MCP clients that know no skills):
// Toolkit.List lists the skills the caller may see, and Toolkit.Load
// answers one's SKILL.md, with the URIs of its other files, which the
// resources' read tool reads (resource.RegisterTools). A skill's policy
// applies as it does over MCP. It fails as [otc.Register] does, for a
// toolkit taken already, say.
func RegisterTools(reg *otc.Registry, opts *ToolsOptions) error {
	if opts == nil {
		opts = &ToolsOptions{}
	}
	kit := opts.Toolkit
	if kit == "" {
		kit = "Skills"
	}
	return primitive.ToolPair[listedSkills, loadInput, otc.Content]{
		Kit: kit, Get: "Load", Policy: opts.Policy,
		ListDescription: "Lists the skills you can load: instructions for a task, each a SKILL.md with files beside it.",
		GetDescription:  fmt.Sprintf("Loads a skill that %s_List names: answers its SKILL.md, and the URIs of its other files.", kit),
		List: func(sn *primitive.Snapshot, admits func(primitive.Admits) bool) listedSkills {
			out := listedSkills{Skills: []json.RawMessage{}}
			for _, s := range sn.Skills {
				if admits(s.Admits) {
					out.Skills = append(out.Skills, s.Entry)
				}
			}
			return out
		},
		Read: func(ctx context.Context, sn *primitive.Snapshot, admits func(primitive.Admits) bool, in loadInput) (otc.Content, error) {
			sk := sn.Skill(in.URI)
			md := sn.Resource(in.URI)
			if sk == nil || md == nil || !admits(sk.Admits) || !admits(md.Admits) {
				return nil, &otc.ToolError{Message: fmt.Sprintf("No skill is at %s.", wire.Truncate(in.URI, 200)), AdditionalPromptContent: kit + "_List names the skills."}
			}
			raw, err := md.Read(ctx, in.URI)
			if err != nil {
				return nil, err
			}
			var contents []otc.EmbeddedResource
			if err := json.Unmarshal(raw, &contents); err != nil {
				return nil, err
			}
			var entry struct {
				Resources []struct {
					URI string `json:"uri"`
				} `json:"resources"`
			}
			_ = json.Unmarshal(sk.Entry, &entry)
			out := otc.Content{}
			for _, c := range contents {
				out = append(out, otc.ResourceContent(c.URI, c.MIMEType, c.Text))
			}
			files := "Its files:"
			for _, f := range entry.Resources {
				files += "\n" + f.URI
			}
			return append(out, otc.TextContent(files)), nil
		},
	}.Register(reg)
}
