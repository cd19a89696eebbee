// Package eino turns the tools of a remote tool server into tools of Eino
// (github.com/cloudwego/eino), the agent framework, so that an Eino agent
// calls them: each tool keeps its name, description and input schema, and
// a call goes to the server through package client.
//
//	c, err := client.New("https://tools.example.com/otc", nil)
//	...
//	tools, err := eino.Tools(ctx, c)
//	...
//	agent, err := react.NewAgent(ctx, &react.AgentConfig{
//		ToolCallingModel: model,
//		ToolsConfig:      compose.ToolsNodeConfig{Tools: tools},
//	})
//
// What the model reads of a call is [client.ModelText]'s: a string value
// as its text, a tool error with its hint and whether and when to try
// again, invalid input with each parameter to fix. Those reach the model
// as the tool's result, so that it can correct itself; only a failure the
// model cannot act on (the server unreachable) ends the agent's run as an
// error.
//
// It is a module of its own, so that only programs that use Eino download
// it.
package eino

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/cloudwego/eino/components/tool"
	"github.com/cloudwego/eino/schema"
	"github.com/eino-contrib/jsonschema"

	"github.com/otcgo/otc"
	"github.com/otcgo/otc/client"
	"github.com/otcgo/otc/export"
)

// Tools lists the tools of the server c talks to and returns them as Eino
// tools, one per tool name (the highest version of a tool listed in
// several, as [export.New] keeps).
func Tools(ctx context.Context, c *client.Client) ([]tool.BaseTool, error) {
	defs, err := c.ListTools(ctx)
	if err != nil {
		return nil, err
	}
	ts, err := export.New(defs, nil)
	if err != nil {
		return nil, err
	}
	out := make([]tool.BaseTool, 0, len(ts.Definitions()))
	for _, d := range ts.Definitions() {
		t, err := NewTool(c, d)
		if err != nil {
			return nil, err
		}
		out = append(out, t)
	}
	return out, nil
}

// Finder returns the two tools of [client.FinderTools] as Eino tools, for
// a server whose catalog is too large to hand a model whole: the model
// searches the server's tools by what it wants done (search_tools) and
// calls what it found by name (call_tool), and is shown two schemas
// rather than the catalog's. The server must search (an otc server over
// OTC, an MCP server in search mode).
func Finder(c *client.Client) ([]tool.BaseTool, error) {
	var out []tool.BaseTool
	for _, d := range client.FinderTools() {
		t, err := NewTool(c, d)
		if err != nil {
			return nil, err
		}
		name := d.Name
		t.run = func(ctx context.Context, args json.RawMessage) (string, error) { return c.FinderText(ctx, name, args) }
		out = append(out, t)
	}
	return out, nil
}

// Tool is one remote tool as an Eino InvokableTool.
type Tool struct {
	c    *client.Client
	def  otc.ToolDefinition
	info *schema.ToolInfo
	// run, for the finder's tools, runs the tool in place of a call.
	run func(context.Context, json.RawMessage) (string, error)
}

var _ tool.InvokableTool = (*Tool)(nil)

// NewTool returns the Eino tool of the definition d, called through c. It
// fails when d's input schema is not a JSON Schema object.
func NewTool(c *client.Client, d otc.ToolDefinition) (*Tool, error) {
	params := d.InputSchema.Parameters
	if len(params) == 0 {
		params = json.RawMessage(`{"type":"object","properties":{}}`)
	}
	var s jsonschema.Schema
	if err := json.Unmarshal(params, &s); err != nil {
		return nil, fmt.Errorf("eino: tool %q: its input schema is not a JSON Schema object: %w", d.Name, err)
	}
	return &Tool{c: c, def: d, info: &schema.ToolInfo{
		Name:        d.Name,
		Desc:        d.Description,
		ParamsOneOf: schema.NewParamsOneOfByJSONSchema(&s),
	}}, nil
}

// Info returns the tool's name, description and input schema.
func (t *Tool) Info(context.Context) (*schema.ToolInfo, error) { return t.info, nil }

// InvokableRun calls the tool with the arguments the model wrote, and
// returns what the model should read of the outcome: its value, or its
// tool error or invalid input in words the model can act on, as are
// arguments that are not a JSON object ([client.Client.CallText]'s words,
// which every adapter shares). It returns an error only for a failure the
// model cannot act on.
func (t *Tool) InvokableRun(ctx context.Context, argumentsInJSON string, _ ...tool.Option) (string, error) {
	run := t.run
	if run == nil {
		run = func(ctx context.Context, args json.RawMessage) (string, error) {
			return t.c.CallText(ctx, t.def.ID, args)
		}
	}
	text, err := run(ctx, json.RawMessage(argumentsInJSON))
	if err != nil {
		return "", fmt.Errorf("eino: calling tool %q: %w", t.def.Name, err)
	}
	return text, nil
}
