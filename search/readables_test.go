package search_test

import (
	"context"
	"testing"
	"testing/fstest"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/otcgo/otc"
	"github.com/otcgo/otc/prompt"
	"github.com/otcgo/otc/resource"
	"github.com/otcgo/otc/search"
	"github.com/otcgo/otc/skill"
)

// readablesRegistry holds a resource, a template, a prompt and a skill on
// different subjects, one resource only for callers with the scope
// "finance" and one only over MCP.
func readablesRegistry(t *testing.T) *otc.Registry {
	t.Helper()
	reg := otc.NewRegistry(nil)
	read := func(context.Context) (string, error) { return "", nil }
	_, err := resource.Register(reg, resource.Resource{URI: "notes://holidays", Name: "holidays", Description: "The company's public holidays for this year."}, read)
	require.NoError(t, err)
	_, err = resource.Register(reg, resource.Resource{URI: "ledger://payroll", Name: "payroll", Description: "Salaries paid this month.",
		Policy: &otc.Policy{RequiredScopes: []string{"finance"}}}, read)
	require.NoError(t, err)
	_, err = resource.Register(reg, resource.Resource{URI: "notes://standup", Name: "standup", Description: "Notes of the daily standup meeting.",
		Policy: &otc.Policy{Protocols: []string{otc.ProtocolMCP}}}, read)
	require.NoError(t, err)
	type city struct {
		City string `json:"city" jsonschema:"description=The city"`
	}
	_, err = resource.RegisterTemplate(reg, resource.Template[city]{URITemplate: "weather://{city}", Name: "weather", Description: "Today's forecast for a city."},
		func(context.Context, city) (string, error) { return "", nil })
	require.NoError(t, err)
	type review struct {
		Diff string `json:"diff" jsonschema:"description=The change to look at"`
	}
	_, err = prompt.Register(reg, prompt.Prompt[review]{Name: "code_review", Description: "Review a change to the code for bugs."},
		func(context.Context, review) (string, error) { return "", nil })
	require.NoError(t, err)
	_, err = skill.Register(reg, fstest.MapFS{
		"expense-reports/SKILL.md":       {Data: []byte("---\nname: expense-reports\ndescription: How to file an expense report for a business trip\n---\n\nAttach every receipt.\n")},
		"expense-reports/receipts.md":    {Data: []byte("Receipts for the holidays are not expenses.\n")},
		"expense-reports/nested/note.md": {Data: []byte("trip trip trip\n")},
	}, nil)
	require.NoError(t, err)
	return reg
}

func keys(rs []search.Readable) []string {
	out := make([]string, len(rs))
	for i, r := range rs {
		out[i] = string(r.Kind) + " " + r.Key
	}
	return out
}

// TestReadables: the resources, templates, prompts and skills are found
// by their words, each kind by what it says, a skill's files through the
// skill, under each one's policy.
func TestReadables(t *testing.T) {
	reg := readablesRegistry(t)
	ctx := context.Background()
	find := func(ctx context.Context, q string, protocol string, kinds ...search.Kind) []string {
		t.Helper()
		rs, err := search.Readables(ctx, reg, q, &search.Options{Protocol: protocol}, kinds...)
		require.NoError(t, err)
		return keys(rs)
	}
	assert.Equal(t, []string{"resource notes://holidays"}, find(ctx, "when are the public holidays", ""))
	assert.Equal(t, []string{"template weather://{city}"}, find(ctx, "what is the weather forecast in Paris", ""))
	assert.Equal(t, []string{"prompt code_review"}, find(ctx, "review my code", ""))
	// The skill, by its front matter; its files are not results of their own.
	assert.Equal(t, []string{"skill skill://expense-reports/SKILL.md"}, find(ctx, "file expenses for a business trip", ""))
	assert.Empty(t, find(ctx, "receipts", ""), "a skill's file is found through its skill")
	// Kinds.
	assert.Empty(t, find(ctx, "holidays", "", search.KindPrompt, search.KindSkill))
	assert.Equal(t, []string{"resource notes://holidays"}, find(ctx, "holidays", "", search.KindResource))
	// Policy: a scope, a protocol.
	assert.Empty(t, find(ctx, "salaries payroll", ""), "the payroll needs the scope finance")
	finance := otc.WithIdentity(ctx, &otc.Identity{Method: "api_key", Name: "accounts", Claims: map[string]any{"scope": "finance"}})
	assert.Equal(t, []string{"resource ledger://payroll"}, find(finance, "salaries payroll", ""))
	assert.Empty(t, find(ctx, "daily standup meeting", otc.ProtocolA2A), "MCP only")
	assert.Equal(t, []string{"resource notes://standup"}, find(ctx, "daily standup meeting", otc.ProtocolMCP))
	// A change is searched at once: removed, it is gone.
	h, err := resource.Register(reg, resource.Resource{URI: "notes://offsite", Name: "offsite", Description: "The plan of the team offsite."},
		func(context.Context) (string, error) { return "", nil })
	require.NoError(t, err)
	assert.Equal(t, []string{"resource notes://offsite"}, find(ctx, "offsite plan", ""))
	h.Remove()
	assert.Empty(t, find(ctx, "offsite plan", ""))
	// Bad queries are refused as Tools refuses them.
	_, err = search.Readables(ctx, reg, string([]byte{0xff}), nil)
	var e *otc.Error
	require.ErrorAs(t, err, &e)
	assert.Equal(t, otc.CodeInvalidInput, e.Code)
	_, err = search.Readables(ctx, reg, "x", &search.Options{Limit: search.MaxLimit + 1})
	require.ErrorAs(t, err, &e)
	rs, err := search.Readables(ctx, reg, "the of", nil)
	require.NoError(t, err)
	assert.Empty(t, rs)
}
