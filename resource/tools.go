package resource

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/otcgo/otc"
	"github.com/otcgo/otc/internal/primitive"
	"github.com/otcgo/otc/internal/wire"
)

// ToolsOptions configures [RegisterTools]. The zero value, and nil, give
// the defaults described on each field.
type ToolsOptions struct {
	// Toolkit is the toolkit of the two tools: "Resources" when empty,
	// whose tools a model sees as Resources_List and Resources_Read.
	Toolkit string
	// Policy is the tools' own policy, checked before a resource's: nil
	// means anyone the server lets in.
	Policy *otc.Policy
}

// listed is what the list tool answers.
type listed struct {
	Resources []json.RawMessage `json:"resources" jsonschema_description:"The resources, each as MCP lists it: uri, name, and optionally title, description, mimeType, size."`
	Templates []json.RawMessage `json:"templates" jsonschema_description:"The resource templates, each with its uriTemplate (RFC 6570): a URI of one is read with the read tool."`
}

// readInput is the read tool's input.
type readInput struct {
	URI string `json:"uri" jsonschema:"required,minLength=1,maxLength=4096" jsonschema_description:"The URI of the resource to read: one the list tool names, or one of a template's."`
}

// RegisterTools serves the registry's resources as two tools, for the
// callers whose format has tools only (OTC, the REST view, A2A, and MCP
// clients that list no resources): Toolkit.List lists the resources and
// templates the caller may see, and Toolkit.Read reads one, its contents
// as content blocks (an embedded resource each). Each resource's policy
// applies as it does over MCP, with the protocol the call came through:
// what a caller may not see is neither listed nor read. It fails as
// [otc.Register] does, for a toolkit taken already, say.
func RegisterTools(reg *otc.Registry, opts *ToolsOptions) error {
	if opts == nil {
		opts = &ToolsOptions{}
	}
	kit := opts.Toolkit
	if kit == "" {
		kit = "Resources"
	}
	return primitive.ToolPair[listed, readInput, otc.Content]{
		Kit: kit, Get: "Read", Policy: opts.Policy,
		ListDescription: "Lists the resources you can read (data by URI: files, records, documents) and the URI templates of more.",
		GetDescription:  fmt.Sprintf("Reads the resource at a URI that %s_List names, or one of its templates' URIs, and answers its contents.", kit),
		List: func(sn *primitive.Snapshot, admits func(primitive.Admits) bool) listed {
			out := listed{Resources: []json.RawMessage{}, Templates: []json.RawMessage{}}
			for _, r := range sn.Resources {
				if admits(r.Admits) {
					out.Resources = append(out.Resources, r.Entry)
				}
			}
			for _, t := range sn.Templates {
				if admits(t.Admits) {
					out.Templates = append(out.Templates, t.Entry)
				}
			}
			return out
		},
		Read: func(ctx context.Context, sn *primitive.Snapshot, admits func(primitive.Admits) bool, in readInput) (otc.Content, error) {
			r, t, vs := sn.Find(in.URI, admits)
			var raw json.RawMessage
			var err error
			switch {
			case r != nil:
				raw, err = r.Read(ctx, in.URI)
			case t != nil:
				raw, err = t.Read(ctx, in.URI, vs)
			default:
				err = primitive.ErrNotFound
			}
			if err != nil {
				return nil, readFailure(in.URI, kit, err)
			}
			var contents []otc.EmbeddedResource
			if err := json.Unmarshal(raw, &contents); err != nil {
				return nil, err
			}
			out := make(otc.Content, 0, len(contents))
			for _, c := range contents {
				if c.Blob == nil {
					out = append(out, otc.ResourceContent(c.URI, c.MIMEType, c.Text))
				} else {
					out = append(out, otc.BlobResourceContent(c.URI, c.MIMEType, c.Blob))
				}
			}
			return out, nil
		},
	}.Register(reg)
}

// readFailure is the tool error of a read that failed: what a model can
// act on (nothing there, a variable that does not fit), in its words.
func readFailure(uri, kit string, err error) error {
	if errors.Is(err, primitive.ErrNotFound) {
		return &otc.ToolError{Message: fmt.Sprintf("Nothing is at %s.", wire.Truncate(uri, 200)), AdditionalPromptContent: kit + "_List names what can be read."}
	}
	var oe *otc.Error
	if errors.As(err, &oe) && oe.Code == otc.CodeInvalidInput {
		var b strings.Builder
		for _, k := range slices.Sorted(maps.Keys(oe.ParameterErrors)) {
			fmt.Fprintf(&b, "%s: %s\n", k, oe.ParameterErrors[k])
		}
		return &otc.ToolError{Message: fmt.Sprintf("The URI %s does not fit its template.", wire.Truncate(uri, 200)), AdditionalPromptContent: strings.TrimSpace(b.String())}
	}
	return err
}
