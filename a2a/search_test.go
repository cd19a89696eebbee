package a2a_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/otcgo/otc/a2a"
	"github.com/otcgo/otc/search"
)

// foundSkills reads the skills a search answered, checking the message's
// form: a succeeded outcome, the value as data and as text.
func foundSkills(t *testing.T, a answer) []map[string]any {
	t.Helper()
	r := decodeRPC(t, a)
	require.Nil(t, r.Error, "%s", a.body)
	out := replyOf(t, r.Result)
	assert.JSONEq(t, `{"io.github.otcgo/outcome":"succeeded"}`, string(out.Metadata))
	require.Len(t, out.Parts, 2)
	require.NotNil(t, out.Parts[1].Text)
	assert.JSONEq(t, string(out.Parts[0].Data), *out.Parts[1].Text)
	var v struct {
		Skills []map[string]any `json:"skills"`
	}
	require.NoError(t, json.Unmarshal(out.Parts[0].Data, &v))
	return v.Skills
}

// TestSearchSkill: with Options.Search the card lists the search skill
// first, with its schemas; a call of it answers the skills the words
// describe, which the caller may call over A2A, each callable as found.
func TestSearchSkill(t *testing.T) {
	s := newServer(t, &a2a.Options{Search: true})
	var card struct {
		Skills []struct {
			ID, Name string
		} `json:"skills"`
		Capabilities struct {
			Extensions []struct {
				URI    string `json:"uri"`
				Params struct {
					Skills map[string]json.RawMessage `json:"skills"`
				} `json:"params"`
			} `json:"extensions"`
		} `json:"capabilities"`
	}
	a := s.get(t, "/.well-known/agent-card.json")
	require.NoError(t, json.Unmarshal(a.body, &card))
	require.NotEmpty(t, card.Skills)
	assert.Equal(t, a2a.SearchSkill, card.Skills[0].ID)
	require.Len(t, card.Capabilities.Extensions, 1)
	assert.Contains(t, string(card.Capabilities.Extensions[0].Params.Skills[a2a.SearchSkill]), `"query"`)

	found := foundSkills(t, s.send(t, "m-search", `[{"data":{"tool":"search_tools","input":{"query":"add two numbers","limit":2}}}]`))
	require.NotEmpty(t, found)
	assert.LessOrEqual(t, len(found), 2)
	assert.Equal(t, "Calculator.Add@1.0.0", found[0]["id"])
	assert.Equal(t, "Calculator_Add", found[0]["name"])
	assert.Contains(t, fmt.Sprint(found[0]["inputSchema"]), "first number")
	// What it found is called by the name it gave.
	r := decodeRPC(t, s.send(t, "m-add", fmt.Sprintf(`[{"data":{"tool":%q,"input":{"a":2,"b":2}}}]`, found[0]["name"])))
	require.Nil(t, r.Error)
	assert.JSONEq(t, `4`, string(replyOf(t, r.Result).Parts[0].Data))

	for _, f := range foundSkills(t, s.send(t, "m-only", `[{"data":{"tool":"search_tools","input":{"query":"only over mcp","limit":10}}}]`)) {
		assert.NotEqual(t, "Mcp_Only", f["name"], "a tool kept off A2A is never found")
	}

	for name, input := range map[string]string{
		"no query":     `{}`,
		"not a string": `{"query":3}`,
		"limit 0":      `{"query":"add","limit":0}`,
		"limit huge":   `{"query":"add","limit":1000000000}`,
		"other member": `{"query":"add","regex":".*"}`,
		"too long":     fmt.Sprintf(`{"query":%q}`, strings.Repeat("a", search.MaxQueryBytes+1)),
	} {
		r := decodeRPC(t, s.send(t, "m-bad-"+name, `[{"data":{"tool":"search_tools","input":`+input+`}}]`))
		require.NotNil(t, r.Error, name)
		assert.Equal(t, -32602, r.Error.Code, name)
	}

	// Without the option, there is no such skill.
	plain := newServer(t, nil)
	r = decodeRPC(t, plain.send(t, "m-none", `[{"data":{"tool":"search_tools","input":{"query":"add"}}}]`))
	require.NotNil(t, r.Error)
	assert.Equal(t, -32602, r.Error.Code)
	assert.Equal(t, http.StatusOK, plain.get(t, "/.well-known/agent-card.json").status)
	assert.NotContains(t, string(plain.get(t, "/.well-known/agent-card.json").body), a2a.SearchSkill)
}
