package interop

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestSDKClientReadsResources: the official Go SDK's client lists and
// reads the calculator's resources, reads its template typed, completes
// the template's variables and the prompt's arguments, and renders the
// prompt, over each connection and version.
func TestSDKClientReadsResources(t *testing.T) {
	t.Parallel()
	for _, c := range connections() {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			cs, _, _ := connect(t, c)
			ctx, cancel := context.WithTimeout(t.Context(), callTimeout)
			defer cancel()

			caps := cs.InitializeResult().Capabilities
			require.NotNil(t, caps.Resources, "resources declared")
			require.NotNil(t, caps.Prompts, "prompts declared")
			require.NotNil(t, caps.Completions, "completions declared")

			resources, err := cs.ListResources(ctx, nil)
			require.NoError(t, err)
			require.Len(t, resources.Resources, 1)
			assert.Equal(t, "calc://constants", resources.Resources[0].URI)
			assert.Equal(t, "application/json", resources.Resources[0].MIMEType)

			read, err := cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: "calc://constants"})
			require.NoError(t, err)
			require.Len(t, read.Contents, 1)
			var constants map[string]float64
			require.NoError(t, json.Unmarshal([]byte(read.Contents[0].Text), &constants))
			assert.InDelta(t, 3.14159, constants["pi"], 1e-5)

			templates, err := cs.ListResourceTemplates(ctx, nil)
			require.NoError(t, err)
			require.Len(t, templates.ResourceTemplates, 1)
			assert.Equal(t, "calc://tables/{op}/{n}{?upto}", templates.ResourceTemplates[0].URITemplate)

			table, err := cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: "calc://tables/multiply/7?upto=3"})
			require.NoError(t, err)
			require.Len(t, table.Contents, 1)
			assert.Equal(t, "7 × 1 = 7\n7 × 2 = 14\n7 × 3 = 21\n", table.Contents[0].Text)

			_, err = cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: "calc://tables/divide/7"})
			require.Error(t, err, "op is add or multiply")
			assert.Contains(t, err.Error(), "op")
			_, err = cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: "calc://nothing"})
			require.Error(t, err)

			done, err := cs.Complete(ctx, &mcp.CompleteParams{
				Ref:      &mcp.CompleteReference{Type: "ref/resource", URI: "calc://tables/{op}/{n}{?upto}"},
				Argument: mcp.CompleteParamsArgument{Name: "op", Value: "mu"},
			})
			require.NoError(t, err)
			assert.Equal(t, []string{"multiply"}, done.Completion.Values)

			prompts, err := cs.ListPrompts(ctx, nil)
			require.NoError(t, err)
			require.Len(t, prompts.Prompts, 1)
			p := prompts.Prompts[0]
			assert.Equal(t, "explain_expression", p.Name)
			require.Len(t, p.Arguments, 2)
			assert.True(t, p.Arguments[0].Required)
			assert.Equal(t, "expression", p.Arguments[0].Name)

			got, err := cs.GetPrompt(ctx, &mcp.GetPromptParams{Name: "explain_expression", Arguments: map[string]string{"expression": "1 + 2 * 3", "audience": "child"}})
			require.NoError(t, err)
			require.Len(t, got.Messages, 1)
			assert.Equal(t, mcp.Role("user"), got.Messages[0].Role)
			text, ok := got.Messages[0].Content.(*mcp.TextContent)
			require.True(t, ok)
			assert.True(t, strings.Contains(text.Text, "for a child") && strings.Contains(text.Text, "1 + 2 * 3"), text.Text)

			_, err = cs.GetPrompt(ctx, &mcp.GetPromptParams{Name: "explain_expression", Arguments: map[string]string{"audience": "child"}})
			require.Error(t, err, "expression is required")
			assert.Contains(t, err.Error(), "expression")
		})
	}
}
