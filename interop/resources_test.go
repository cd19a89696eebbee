package interop

import (
	"context"
	"encoding/json"
	"os/exec"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/otcgo/otc/client"
	"github.com/otcgo/otc/federation"
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
			require.Len(t, resources.Resources, 3)
			assert.Equal(t, "calc://constants", resources.Resources[0].URI)
			assert.Equal(t, "calc://memory", resources.Resources[1].URI)
			assert.Equal(t, "skill://using-the-calculator/SKILL.md", resources.Resources[2].URI)
			assert.Equal(t, "application/json", resources.Resources[0].MIMEType)

			read, err := cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: "calc://constants"})
			require.NoError(t, err)
			require.Len(t, read.Contents, 1)
			var constants map[string]float64
			require.NoError(t, json.Unmarshal([]byte(read.Contents[0].Text), &constants))
			assert.InDelta(t, 3.14159, constants["pi"], 1e-5)

			templates, err := cs.ListResourceTemplates(ctx, nil)
			require.NoError(t, err)
			require.Len(t, templates.ResourceTemplates, 2)
			assert.Equal(t, "calc://notes/{path*}", templates.ResourceTemplates[0].URITemplate)
			assert.Equal(t, "calc://tables/{op}/{n}{?upto}", templates.ResourceTemplates[1].URITemplate)

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

// TestTypeScriptClientReadsCalculator: the official MCP TypeScript SDK's
// client lists, reads, completes and renders the calculator's resources,
// templates and prompt over Streamable HTTP, directly and through otc's
// gateway (where the prompt is named after the upstream).
func TestTypeScriptClientReadsCalculator(t *testing.T) {
	node, dir := frameworkScripts(t)
	_, gw := federate(t, []federation.Upstream{{Name: "calc", URL: sharedServer.url + "/mcp", Format: client.FormatMCP}}, nil)
	for name, c := range map[string]struct{ url, prefix string }{
		"direct":  {sharedServer.url + "/mcp", ""},
		"gateway": {gw + "/mcp", "calc_"},
	} {
		t.Run(name, func(t *testing.T) {
			cmd := exec.CommandContext(t.Context(), node, "client-mcp-ts-readables.mjs", c.url, c.prefix)
			cmd.Dir = dir
			var stderr strings.Builder
			cmd.Stderr = &stderr
			out, err := cmd.Output()
			require.NoError(t, err, "stderr: %s", stderr.String())
			checkTSReadables(t, out, c.prefix)
		})
	}
}

// checkTSReadables checks what client-mcp-ts-readables.mjs printed.
func checkTSReadables(t *testing.T, out []byte, prefix string) {
	t.Helper()
	var got struct {
		Capabilities map[string]any     `json:"capabilities"`
		Resources    []string           `json:"resources"`
		Templates    []string           `json:"templates"`
		Constants    map[string]float64 `json:"constants"`
		Table        string             `json:"table"`
		Completion   []string           `json:"completion"`
		Prompts      []struct {
			Name string   `json:"name"`
			Args []string `json:"args"`
		} `json:"prompts"`
		Prompt  []string `json:"prompt"`
		Refused string   `json:"refused"`
	}
	require.NoError(t, json.Unmarshal(out, &got), "%s", out)
	assert.Contains(t, got.Capabilities, "resources")
	assert.Contains(t, got.Capabilities, "prompts")
	assert.Contains(t, got.Capabilities, "completions")
	skillMD := "skill://using-the-calculator/SKILL.md"
	if prefix != "" { // through the gateway, its copy under the upstream's name
		skillMD = "skill://" + strings.TrimSuffix(prefix, "_") + "/using-the-calculator/SKILL.md"
	}
	assert.Equal(t, []string{"calc://constants", "calc://memory", skillMD}, got.Resources)
	assert.Equal(t, []string{"calc://notes/{path*}", "calc://tables/{op}/{n}{?upto}"}, got.Templates)
	assert.InDelta(t, 2.71828, got.Constants["e"], 1e-5)
	assert.Equal(t, "2 + 1 = 3\n2 + 2 = 4\n", got.Table)
	assert.Equal(t, []string{"add"}, got.Completion)
	require.Len(t, got.Prompts, 1)
	assert.Equal(t, prefix+"explain_expression", got.Prompts[0].Name)
	assert.Equal(t, []string{"expression*", "audience"}, got.Prompts[0].Args)
	require.Len(t, got.Prompt, 1)
	assert.Contains(t, got.Prompt[0], "user: Explain, step by step and for a child, how 2 + 2")
	assert.Equal(t, "-32602", got.Refused, "a wrong op is invalid params")
}

// TestReadablesOfTypeScriptServer: otc's client reads the resources,
// template and prompt of the official TypeScript SDK's server, directly
// and through otc's gateway (where the prompt is named after the
// upstream, and the resources keep their URIs).
func TestReadablesOfTypeScriptServer(t *testing.T) {
	url, _ := nodeServer(t, "server-mcp-ts.mjs")
	_, base := federate(t, []federation.Upstream{{Name: "ts", URL: url, Format: client.FormatMCP}}, nil)
	for name, c := range map[string]struct{ url, prompt string }{
		"direct":  {url, "greet"},
		"gateway": {base + "/mcp", "ts_greet"},
	} {
		t.Run(name, func(t *testing.T) {
			cl, err := client.New(c.url, &client.Options{Format: client.FormatMCP})
			require.NoError(t, err)
			t.Cleanup(func() { _ = cl.Close() })
			ctx := t.Context()
			list, err := cl.MCP().ListResources(ctx)
			require.NoError(t, err)
			require.Len(t, list, 2)
			assert.Equal(t, "ts://readme", list[0].URI)
			assert.Equal(t, "ts://chapters/{n}", list[1].URITemplate)
			contents, err := cl.MCP().ReadResource(ctx, "ts://readme")
			require.NoError(t, err)
			assert.Equal(t, "read me", contents[0].Text)
			contents, err = cl.MCP().ReadResource(ctx, "ts://chapters/12")
			require.NoError(t, err)
			assert.Equal(t, "chapter 12", contents[0].Text)
			values, _, err := cl.MCP().Complete(ctx, client.TemplateRef("ts://chapters/{n}"), "n", "1", nil)
			require.NoError(t, err)
			assert.Equal(t, []string{"1", "12"}, values)
			prompts, err := cl.MCP().ListPrompts(ctx)
			require.NoError(t, err)
			require.Len(t, prompts, 1)
			assert.Equal(t, c.prompt, prompts[0].Name)
			values, _, err = cl.MCP().Complete(ctx, client.PromptRef(c.prompt), "who", "a", nil)
			require.NoError(t, err)
			assert.Equal(t, []string{"ada", "alan"}, values)
			got, err := cl.MCP().GetPrompt(ctx, c.prompt, map[string]string{"who": "ada"})
			require.NoError(t, err)
			assert.Equal(t, "Greet ada.", got.Messages[0].Content.Text)
		})
	}
}
