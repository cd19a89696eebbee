// Package genkit turns the tools of a remote tool server into tools of
// Genkit Go (github.com/firebase/genkit/go), so that a Genkit generation
// calls them: each tool keeps its name, its description and its input
// schema as the server publishes them, and a call goes to the server
// through package client.
//
//	c, err := client.New("https://tools.example.com/otc", nil)
//	...
//	tools, err := genkit.Tools(ctx, c)
//	...
//	resp, err := gk.Generate(ctx, g, ai.WithModelName("googleai/gemini-2.5-flash"),
//		ai.WithTools(genkit.Refs(tools)...), ai.WithPrompt("..."))
//
// (gk is github.com/firebase/genkit/go/genkit.) What the model reads of a
// call is [client.ModelText]'s: a string value as its text, a tool error
// with its hint and whether and when to try again. Those reach the model
// as the tool's output, so that it can correct itself; a failure the model
// cannot act on (the server unreachable) ends the generation as an error.
// Unlike the other adapters', a model's invalid arguments never reach the
// server: Genkit checks a tool's input against its schema itself, before
// the call, and ends the generation with its own error naming the field.
//
// It is a module of its own, so that only programs that use Genkit
// download it; it builds beside the root module because the root requires
// the invopop/jsonschema version Genkit's prompt library is written
// against (v0.13).
package genkit

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/firebase/genkit/go/ai"

	"github.com/otcgo/otc"
	"github.com/otcgo/otc/client"
	"github.com/otcgo/otc/export"
)

// Tools lists the tools of the server c talks to and returns them as
// Genkit tools, not registered (give them to a generation with
// ai.WithTools), one per tool name (the highest version of a tool listed
// in several, as [export.New] keeps).
func Tools(ctx context.Context, c *client.Client) ([]ai.Tool, error) {
	defs, err := c.ListTools(ctx)
	if err != nil {
		return nil, err
	}
	ts, err := export.New(defs, nil)
	if err != nil {
		return nil, err
	}
	out := make([]ai.Tool, 0, len(ts.Definitions()))
	for _, d := range ts.Definitions() {
		t, err := NewTool(c, d)
		if err != nil {
			return nil, err
		}
		out = append(out, t)
	}
	return out, nil
}

// NewTool returns the Genkit tool of the definition d, called through c:
// its input schema is d's, and its output the text a model reads of the
// call ([client.CallText]).
func NewTool(c *client.Client, d otc.ToolDefinition) (ai.Tool, error) {
	return newTool(d, func(ctx context.Context, args json.RawMessage) (string, error) { return c.CallText(ctx, d.ID, args) })
}

// Finder returns the two tools of [client.FinderTools] as Genkit tools,
// not registered, for a server whose catalog is too large to hand a model
// whole: the model searches the server's tools by what it wants done
// (search_tools) and calls what it found by name (call_tool), and is shown
// two schemas rather than the catalog's. The server must search (an otc
// server over OTC, an MCP server in search mode).
func Finder(c *client.Client) ([]ai.Tool, error) {
	var out []ai.Tool
	for _, d := range client.FinderTools() {
		t, err := newTool(d, func(ctx context.Context, args json.RawMessage) (string, error) {
			return c.FinderText(ctx, d.Name, args)
		})
		if err != nil {
			return nil, err
		}
		out = append(out, t)
	}
	return out, nil
}

// newTool returns the Genkit tool of d, which run runs with the model's
// arguments.
func newTool(d otc.ToolDefinition, run func(context.Context, json.RawMessage) (string, error)) (ai.Tool, error) {
	schema := map[string]any{}
	if len(d.InputSchema.Parameters) > 0 {
		if err := json.Unmarshal(d.InputSchema.Parameters, &schema); err != nil {
			return nil, fmt.Errorf("genkit: tool %q: its input schema is not a JSON object: %w", d.Name, err)
		}
	}
	call := func(tc *ai.ToolContext, in any) (string, error) {
		args, err := json.Marshal(in)
		if err != nil {
			return "", fmt.Errorf("genkit: tool %q: encoding the arguments: %w", d.Name, err)
		}
		if in == nil {
			args = nil
		}
		text, err := run(tc, args)
		if err != nil {
			return "", fmt.Errorf("genkit: calling tool %q: %w", d.Name, err)
		}
		return text, nil
	}
	return ai.NewTool(d.Name, d.Description, call, ai.WithInputSchema(schema)), nil
}

// Refs returns tools as the references ai.WithTools takes.
func Refs(tools []ai.Tool) []ai.ToolRef {
	out := make([]ai.ToolRef, len(tools))
	for i, t := range tools {
		out[i] = t
	}
	return out
}
