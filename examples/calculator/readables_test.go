package main

import (
	"encoding/json"
	"log/slog"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/otcgo/otc/client"
)

// TestReadables: the calculator's resource, templates and prompt over
// MCP, and no note path that climbs out of the notes folder, however it
// is written.
func TestReadables(t *testing.T) {
	logger := slog.New(slog.DiscardHandler)
	reg, err := newRegistry(logger, nil, nil, nil, false)
	require.NoError(t, err)
	handler, _, err := newServer(reg, credentials{}, shared{}, site{}, logger, nil)
	require.NoError(t, err)
	srv := httptest.NewServer(handler)
	t.Cleanup(srv.Close)
	c, err := client.New(srv.URL+"/mcp", &client.Options{Format: client.FormatMCP})
	require.NoError(t, err)
	t.Cleanup(func() { _ = c.Close() })
	ctx := t.Context()

	list, err := c.MCP().ListResources(ctx)
	require.NoError(t, err)
	var uris []string
	for _, r := range list {
		uris = append(uris, r.URI+r.URITemplate)
	}
	assert.Equal(t, []string{"calc://constants", "calc://memory", "skill://using-the-calculator/SKILL.md", "calc://notes/{path*}", "calc://tables/{op}/{n}{?upto}"}, uris)

	// The skill, its SKILL.md verified against its entry.
	skills, err := c.MCP().ListSkills(ctx)
	require.NoError(t, err)
	require.Len(t, skills, 1)
	assert.Equal(t, "using-the-calculator", skills[0].Name())
	md, err := c.MCP().ReadSkillFile(ctx, &skills[0], skills[0].URI)
	require.NoError(t, err)
	assert.Contains(t, string(md), "Math_Evaluate")

	for uri, want := range map[string]string{
		"calc://tables/add/40?upto=2":   "40 + 1 = 41\n40 + 2 = 42\n",
		"calc://tables/multiply/3":      "3 × 1 = 3\n3 × 2 = 6\n3 × 3 = 9\n3 × 4 = 12\n3 × 5 = 15\n3 × 6 = 18\n3 × 7 = 21\n3 × 8 = 24\n3 × 9 = 27\n3 × 10 = 30\n",
		"calc://notes/precedence.txt":   "Operator precedence",
		"calc://notes/guide/limits.txt": "Limits of the calculator",
	} {
		contents, err := c.MCP().ReadResource(ctx, uri)
		require.NoError(t, err, uri)
		require.Len(t, contents, 1)
		assert.True(t, strings.HasPrefix(contents[0].Text, want), "%s: %q", uri, contents[0].Text)
	}
	for _, uri := range []string{
		"calc://notes/../main.go",
		"calc://notes/%2e%2e/main.go",
		"calc://notes/%2E%2E%2Fmain.go",
		"calc://notes/guide/../../main.go",
		"calc://notes//etc/passwd",
		"calc://notes/%2Fetc%2Fpasswd",
		"calc://notes/guide",
		"calc://notes/missing.txt",
	} {
		_, err := c.MCP().ReadResource(ctx, uri)
		var rpc *client.RPCError
		require.ErrorAs(t, err, &rpc, uri)
		assert.JSONEq(t, `{"uri":`+jsonString(uri)+`}`, string(rpc.Data), "%s reads as nothing there", uri)
	}
	_, err = c.MCP().ReadResource(ctx, "calc://tables/divide/2")
	var rpc *client.RPCError
	require.ErrorAs(t, err, &rpc)
	assert.Contains(t, rpc.Message, "op")

	values, _, err := c.MCP().Complete(ctx, client.TemplateRef("calc://notes/{path*}"), "path", "gu", nil)
	require.NoError(t, err)
	assert.Equal(t, []string{"guide/limits.txt"}, values)
	values, _, err = c.MCP().Complete(ctx, client.PromptRef("explain_expression"), "audience", "", nil)
	require.NoError(t, err)
	assert.Equal(t, []string{"child", "student", "engineer"}, values, "an enum completes by itself")

	got, err := c.MCP().GetPrompt(ctx, "explain_expression", map[string]string{"expression": "(1 + 2) * 3"})
	require.NoError(t, err)
	assert.Contains(t, got.Messages[0].Content.Text, "for a student, how (1 + 2) * 3 is evaluated")
}

func jsonString(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}
