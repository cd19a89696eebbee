// Package langchaingo turns the tools of a remote tool server into tools
// of LangChainGo (github.com/tmc/langchaingo), so that a LangChainGo agent
// calls them: each tool keeps its name and description, and a call goes to
// the server through package client.
//
// LangChainGo's function-calling agent declares every tool to the model
// with one string parameter, whatever the tool takes. [Tools] therefore
// returns the agent's model wrapped with [WithSchemas] beside the tools:
// through it the model is given each tool's input schema, as the server
// publishes it, and writes the arguments as a JSON object, which the agent
// hands the tool as it is:
//
//	c, err := client.New("https://tools.example.com/otc", nil)
//	...
//	model, tools, err := langchaingo.Tools(ctx, c, llm)
//	...
//	agent := agents.NewOpenAIFunctionsAgent(model, tools)
//	answer, err := chains.Run(ctx, agents.NewExecutor(agent), "...")
//
// What the model reads of a call is [client.ModelText]'s: a string value
// as its text, a tool error with its hint and whether and when to try
// again, invalid input with each parameter to fix. Those reach the model
// as the tool's result, so that it can correct itself; only a failure the
// model cannot act on (the server unreachable) ends the run as an error.
//
// It is a module of its own, so that only programs that use LangChainGo
// download it.
package langchaingo

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/tmc/langchaingo/llms"
	"github.com/tmc/langchaingo/tools"

	"github.com/otcgo/otc"
	"github.com/otcgo/otc/client"
	"github.com/otcgo/otc/export"
)

// Tools lists the tools of the server c talks to and returns them as
// LangChainGo tools, one per tool name (the highest version of a tool
// listed in several, as [export.New] keeps), with the agent's model
// m wrapped by [WithSchemas] so that the model is given the tools' schemas:
// give an agent the model returned, not m, or the model sees each tool
// with one string parameter.
func Tools(ctx context.Context, c *client.Client, m llms.Model) (llms.Model, []tools.Tool, error) {
	defs, err := c.ListTools(ctx)
	if err != nil {
		return nil, nil, err
	}
	ts, err := export.New(defs, nil)
	if err != nil {
		return nil, nil, err
	}
	out := make([]tools.Tool, 0, len(ts.Definitions()))
	for _, d := range ts.Definitions() {
		out = append(out, NewTool(c, d))
	}
	return WithSchemas(m, out), out, nil
}

// Finder returns the two tools of [client.FinderTools] as LangChainGo
// tools, with m wrapped by [WithSchemas] as [Tools] does, for a server
// whose catalog is too large to hand a model whole: the model searches the
// server's tools by what it wants done (search_tools) and calls what it
// found by name (call_tool), and is shown two schemas rather than the
// catalog's. The server must search (an otc server over OTC, an MCP server
// in search mode).
func Finder(c *client.Client, m llms.Model) (llms.Model, []tools.Tool) {
	var out []tools.Tool
	for _, d := range client.FinderTools() {
		out = append(out, &Tool{c: c, def: d, finder: true})
	}
	return WithSchemas(m, out), out
}

// Tool is one remote tool as a LangChainGo tool.
type Tool struct {
	c      *client.Client
	def    otc.ToolDefinition
	finder bool // one of the finder's tools, run by the client
}

var _ tools.Tool = (*Tool)(nil)

// NewTool returns the LangChainGo tool of the definition d, called
// through c.
func NewTool(c *client.Client, d otc.ToolDefinition) *Tool { return &Tool{c: c, def: d} }

// Name returns the tool's name, as the model calls it.
func (t *Tool) Name() string { return t.def.Name }

// Description returns the tool's description.
func (t *Tool) Description() string { return t.def.Description }

// Schema returns the tool's input schema, as the server publishes it.
func (t *Tool) Schema() json.RawMessage {
	if len(t.def.InputSchema.Parameters) == 0 {
		return json.RawMessage(`{"type":"object","properties":{}}`)
	}
	return t.def.InputSchema.Parameters
}

// Call calls the tool with input, the arguments as a JSON object, and
// returns what the model should read of the outcome: its value, or its
// tool error or invalid input in words the model can act on. Input that
// is not a JSON object is answered in words too, so that the model writes
// it again ([client.Client.CallText]'s words, which every adapter
// shares). It returns an error only for a failure the model cannot act
// on.
func (t *Tool) Call(ctx context.Context, input string) (string, error) {
	var text string
	var err error
	if t.finder {
		text, err = t.c.FinderText(ctx, t.def.Name, json.RawMessage(input))
	} else {
		text, err = t.c.CallText(ctx, t.def.ID, json.RawMessage(input))
	}
	if err != nil {
		return "", fmt.Errorf("langchaingo: calling tool %q: %w", t.def.Name, err)
	}
	return text, nil
}

// WithSchemas wraps m so that when an agent declares the tools of ts to it
// as functions, each of ts's [*Tool]s is declared with its input schema
// rather than the agent's one string parameter. Other functions, and
// other tools, are declared as the agent wrote them.
func WithSchemas(m llms.Model, ts []tools.Tool) llms.Model {
	schemas := make(map[string]json.RawMessage, len(ts))
	for _, t := range ts {
		if rt, ok := t.(*Tool); ok {
			schemas[rt.Name()] = rt.Schema()
		}
	}
	return &schemaModel{Model: m, schemas: schemas}
}

// schemaModel is a model whose function declarations carry the schemas of
// the remote tools.
type schemaModel struct {
	llms.Model
	schemas map[string]json.RawMessage
}

func (s *schemaModel) GenerateContent(ctx context.Context, messages []llms.MessageContent, options ...llms.CallOption) (*llms.ContentResponse, error) {
	var opts llms.CallOptions
	for _, o := range options {
		o(&opts)
	}
	if len(opts.Functions) > 0 {
		fns := make([]llms.FunctionDefinition, len(opts.Functions))
		for i, f := range opts.Functions {
			if schema, ok := s.schemas[f.Name]; ok {
				f.Parameters = schema
			}
			fns[i] = f
		}
		options = append(options, llms.WithFunctions(fns))
	}
	return s.Model.GenerateContent(ctx, messages, options...)
}
