package genkit_test

import (
	"context"
	"encoding/json"
	"sync"
	"testing"

	"github.com/firebase/genkit/go/ai"
	gk "github.com/firebase/genkit/go/genkit"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/otcgo/otc"
	"github.com/otcgo/otc/adapters/genkit"
	"github.com/otcgo/otc/client"
	"github.com/otcgo/otc/export"
	"github.com/otcgo/otc/internal/testkit"
)

// script is a Genkit model that follows a script: its first turn asks for
// tool with args, its next ends the generation. It keeps the tools it was
// declared and the tool outputs it read.
type script struct {
	tool string
	args map[string]any

	mu       sync.Mutex
	declared map[string]*ai.ToolDefinition
	seen     []string
}

func (s *script) generate(_ context.Context, req *ai.ModelRequest, _ ai.ModelStreamCallback) (*ai.ModelResponse, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.declared = map[string]*ai.ToolDefinition{}
	for _, d := range req.Tools {
		s.declared[d.Name] = d
	}
	var outputs []string
	for _, m := range req.Messages {
		for _, p := range m.Content {
			if p.ToolResponse != nil {
				outputs = append(outputs, p.ToolResponse.Output.(string))
			}
		}
	}
	if len(outputs) == 0 {
		return &ai.ModelResponse{Message: &ai.Message{Role: ai.RoleModel, Content: []*ai.Part{
			ai.NewToolRequestPart(&ai.ToolRequest{Name: s.tool, Input: s.args, Ref: "call-1"})}}}, nil
	}
	s.seen = append(s.seen, outputs...)
	return &ai.ModelResponse{Message: ai.NewModelTextMessage("done")}, nil
}

// TestGenerateCallsTools: a Genkit generation, with a scripted model, calls
// the example server's tools through the adapter; the model is declared
// each tool with its schema as the server publishes it, and reads a string
// result as its text, a tool error with its hint and retry delay, and
// invalid input with the parameter to fix. Genkit and this module build
// into one program.
func TestGenerateCallsTools(t *testing.T) {
	// Over OTC, MCP over HTTP and over stdio, and A2A alike.
	for format, c := range testkit.ExampleClients(t, "../..") {
		t.Run(format, func(t *testing.T) { generateCallsTools(t, c) })
	}
}

func generateCallsTools(t *testing.T, c *client.Client) {
	tools, err := genkit.Tools(t.Context(), c)
	require.NoError(t, err)
	g := gk.Init(t.Context())

	for i, tc := range testkit.AgentCalls {
		t.Run(tc.Name, func(t *testing.T) {
			var args map[string]any
			require.NoError(t, json.Unmarshal([]byte(tc.Args), &args))
			s := &script{tool: tc.Tool, args: args}
			m := gk.DefineModel(g, "test/script-"+string(rune('a'+i)), &ai.ModelOptions{Supports: &ai.ModelSupports{Tools: true, Multiturn: true}}, s.generate)
			resp, err := gk.Generate(t.Context(), g, ai.WithModel(m), ai.WithTools(genkit.Refs(tools)...), ai.WithPrompt("Use the tool."))
			if tc.Name == "invalid_input" {
				// Genkit checks a tool's input against its schema itself,
				// before the call: the generation ends with its error,
				// naming the field, and the server is not asked.
				require.Error(t, err)
				assert.Contains(t, err.Error(), "to.country")
				assert.Empty(t, s.seen)
			} else {
				require.NoError(t, err)
				assert.Equal(t, "done", resp.Text())
				assert.Equal(t, []string{tc.Want}, s.seen)
			}

			quote := s.declared["Shipping_Quote"]
			require.NotNil(t, quote, "the model was declared the tools")
			b, err := json.Marshal(quote.InputSchema)
			require.NoError(t, err)
			testkit.AssertQuoteSchema(t, b)
		})
	}
}

// TestUnreachable: a server the adapter cannot reach fails the tool with
// an error, not an output the model would read.
func TestUnreachable(t *testing.T) {
	c, err := client.New(testkit.ExampleServer(t, "../.."), nil)
	require.NoError(t, err)
	dead, err := client.New("http://127.0.0.1:1", nil)
	require.NoError(t, err)
	tool, err := genkit.NewTool(dead, otcDefinition(t, c, "Shipping_Quote"))
	require.NoError(t, err)
	_, err = tool.RunRaw(t.Context(), map[string]any{"to": map[string]any{"country": "FR"}})
	require.Error(t, err)
	assert.Contains(t, err.Error(), "Shipping_Quote")
}

// otcDefinition is the definition of the tool named name on c's server.
func otcDefinition(t *testing.T, c *client.Client, name string) otc.ToolDefinition {
	t.Helper()
	defs, err := c.ListTools(t.Context())
	require.NoError(t, err)
	ts, err := export.New(defs, nil)
	require.NoError(t, err)
	for _, d := range ts.Definitions() {
		if d.Name == name {
			return d
		}
	}
	t.Fatalf("no tool %s", name)
	return otc.ToolDefinition{}
}

// TestFinder: the finder's two tools, as Genkit runs them, find the
// example server's shipping quote by what a model wants done and call it
// by the name found. Genkit checks a tool's input against its schema
// before running it.
func TestFinder(t *testing.T) {
	c := testkit.ExampleClients(t, "../..")["otc"]
	tools, err := genkit.Finder(c)
	require.NoError(t, err)
	byName := map[string]ai.Tool{}
	for _, tl := range tools {
		byName[tl.Name()] = tl
	}
	require.Len(t, byName, 2)
	testkit.CheckFinder(t, func(name, args string) (string, error) {
		var in any
		if err := json.Unmarshal([]byte(args), &in); err != nil {
			return "", err
		}
		out, err := byName[name].RunRaw(t.Context(), in)
		if err != nil {
			return "", err
		}
		s, _ := out.(string)
		return s, nil
	}, true)
}
