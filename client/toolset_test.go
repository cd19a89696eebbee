package client_test

// Handing a catalog to a model: the function-calling declarations of the
// OpenAI Chat Completions API ({"type": "function", "function": {"name",
// "description", "parameters"}}) and the Anthropic Messages API ({"name",
// "description", "input_schema"}), one per tool name, and the way back
// from a chosen name to the tool id.

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/otcgo/otc"
	"github.com/otcgo/otc/client"
	"github.com/otcgo/otc/internal/testkit"
)

func def(id, name, version, description, params string) otc.ToolDefinition {
	d := otc.ToolDefinition{ID: id, Name: name, Version: version, Description: description}
	if params != "" {
		d.InputSchema.Parameters = json.RawMessage(params)
	}
	return d
}

// catalog is a catalog as ListTools returns it: the seed's two tools,
// three versions of one tool listed out of order, a tool without input
// (once with no parameters at all, once with null), and a definition
// without a name.
func catalog() []otc.ToolDefinition {
	return []otc.ToolDefinition{
		def("Calculator.Add@1.0.0", "Calculator_Add", "1.0.0", "Adds two numbers together.", seedAddParams),
		def("Weather.Get@9.0.0", "Weather_Get", "9.0.0", "Weather, v9.", `{"type":"object","properties":{"city":{"type":"string","description":"City v9."}}}`),
		def("Doorbell.Ring@0.1.0", "Doorbell_Ring", "0.1.0", "Rings a doorbell given a doorbell ID.", seedRingParams),
		def("Weather.Get@10.0.0", "Weather_Get", "10.0.0", "Weather, v10.", `{"type":"object","properties":{"city":{"type":"string","description":"City v10."}},"required":["city"]}`),
		def("Clock.Now@1.0.0", "Clock_Now", "1.0.0", "Tells the time.", ""),
		def("Weather.Get@2.0.0", "Weather_Get", "2.0.0", "Weather, v2.", `{"type":"object","properties":{}}`),
		def("Files.List@1.0.0", "", "1.0.0", "Lists files.", `null`),
	}
}

func TestToolset_OpenAI(t *testing.T) {
	t.Parallel()
	got, err := json.Marshal(client.NewToolset(catalog()).OpenAI())
	require.NoError(t, err)
	// Written from the Chat Completions API reference: each entry of
	// "tools" is {"type": "function", "function": {...}}.
	want := `[
		{"type": "function", "function": {
			"name": "Calculator_Add",
			"description": "Adds two numbers together.",
			"parameters": {
				"type": "object",
				"properties": {
					"a": {"type": "number", "description": "The first number to add."},
					"b": {"type": "number", "description": "The second number to add."}
				},
				"required": ["a", "b"]
			}
		}},
		{"type": "function", "function": {
			"name": "Weather_Get",
			"description": "Weather, v10.",
			"parameters": {"type": "object", "properties": {"city": {"type": "string", "description": "City v10."}}, "required": ["city"]}
		}},
		{"type": "function", "function": {
			"name": "Doorbell_Ring",
			"description": "Rings a doorbell given a doorbell ID.",
			"parameters": {
				"type": "object",
				"properties": {"doorbell_id": {"type": "string", "description": "The ID of the doorbell to ring."}},
				"required": ["doorbell_id"]
			}
		}},
		{"type": "function", "function": {
			"name": "Clock_Now",
			"description": "Tells the time.",
			"parameters": {"type": "object", "properties": {}}
		}},
		{"type": "function", "function": {
			"name": "Files_List",
			"description": "Lists files.",
			"parameters": {"type": "object", "properties": {}}
		}}
	]`
	assert.JSONEq(t, want, string(got))
}

func TestToolset_Anthropic(t *testing.T) {
	t.Parallel()
	got, err := json.Marshal(client.NewToolset(catalog()).Anthropic())
	require.NoError(t, err)
	// Written from the Messages API reference: each entry of "tools" is
	// {"name", "description", "input_schema"}.
	want := `[
		{
			"name": "Calculator_Add",
			"description": "Adds two numbers together.",
			"input_schema": {
				"type": "object",
				"properties": {
					"a": {"type": "number", "description": "The first number to add."},
					"b": {"type": "number", "description": "The second number to add."}
				},
				"required": ["a", "b"]
			}
		},
		{
			"name": "Weather_Get",
			"description": "Weather, v10.",
			"input_schema": {"type": "object", "properties": {"city": {"type": "string", "description": "City v10."}}, "required": ["city"]}
		},
		{
			"name": "Doorbell_Ring",
			"description": "Rings a doorbell given a doorbell ID.",
			"input_schema": {
				"type": "object",
				"properties": {"doorbell_id": {"type": "string", "description": "The ID of the doorbell to ring."}},
				"required": ["doorbell_id"]
			}
		},
		{"name": "Clock_Now", "description": "Tells the time.", "input_schema": {"type": "object", "properties": {}}},
		{"name": "Files_List", "description": "Lists files.", "input_schema": {"type": "object", "properties": {}}}
	]`
	assert.JSONEq(t, want, string(got))
}

func TestToolset_Empty(t *testing.T) {
	t.Parallel()
	ts := client.NewToolset(nil)
	for name, v := range map[string]any{"openai": ts.OpenAI(), "anthropic": ts.Anthropic()} {
		got, err := json.Marshal(v)
		require.NoError(t, err)
		assert.JSONEq(t, `[]`, string(got), "%s: an empty array, never null", name)
	}
	_, ok := ts.Lookup("Calculator_Add")
	assert.False(t, ok)
}

func TestToolset_Lookup(t *testing.T) {
	t.Parallel()
	ts := client.NewToolset(catalog())
	for _, tc := range []struct {
		name   string
		wantID string // "" when not found
	}{
		{"Calculator_Add", "Calculator.Add@1.0.0"},
		{"Weather_Get", "Weather.Get@10.0.0"},
		{"Doorbell_Ring", "Doorbell.Ring@0.1.0"},
		{"Clock_Now", "Clock.Now@1.0.0"},
		{"Files_List", "Files.List@1.0.0"},
		{"Calculator.Add", ""}, // an id is not a name
		{"calculator_add", ""},
		{"", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			d, ok := ts.Lookup(tc.name)
			assert.Equal(t, tc.wantID != "", ok)
			assert.Equal(t, tc.wantID, d.ID)
			if ok {
				assert.Equal(t, tc.name, d.Name, "the definition carries the name the model used")
			}
		})
	}
}

// TestToolset_HighestVersion: of several versions of one tool the Toolset
// declares the highest by semantic-version order (SPEC §5), whatever the
// catalog order.
func TestToolset_HighestVersion(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name     string
		versions []string
		want     string
	}{
		{"10_beats_9", []string{"9.0.0", "10.0.0"}, "10.0.0"},
		{"10_beats_9_reversed", []string{"10.0.0", "9.0.0"}, "10.0.0"},
		{"minor_numeric", []string{"1.10.0", "1.9.9", "1.2.0"}, "1.10.0"},
		{"patch_numeric", []string{"0.0.10", "0.0.9"}, "0.0.10"},
		{"valid_beats_malformed", []string{"not-a-version", "0.1.0"}, "0.1.0"},
		{"valid_beats_malformed_reversed", []string{"0.1.0", "v99"}, "0.1.0"},
		{"single", []string{"3.1.4"}, "3.1.4"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			var defs []otc.ToolDefinition
			for _, v := range tc.versions {
				defs = append(defs, def("Weather.Get@"+v, "Weather_Get", v, "Weather "+v+".", ""))
			}
			ts := client.NewToolset(defs)
			require.Len(t, ts.OpenAI(), 1, "one declaration per name")
			require.Len(t, ts.Anthropic(), 1)
			assert.Equal(t, "Weather "+tc.want+".", ts.OpenAI()[0].Function.Description)
			d, ok := ts.Lookup("Weather_Get")
			require.True(t, ok)
			assert.Equal(t, "Weather.Get@"+tc.want, d.ID)
			require.Len(t, ts.Definitions(), 1)
			assert.Equal(t, tc.want, ts.Definitions()[0].Version)
		})
	}
}

func TestToolset_Definitions(t *testing.T) {
	t.Parallel()
	ts := client.NewToolset(catalog())
	defs := ts.Definitions()
	ids := make([]string, len(defs))
	for i, d := range defs {
		ids[i] = d.ID
	}
	assert.Equal(t, []string{"Calculator.Add@1.0.0", "Weather.Get@10.0.0", "Doorbell.Ring@0.1.0", "Clock.Now@1.0.0", "Files.List@1.0.0"}, ids,
		"one per name, in the order names first appear")
	assert.Equal(t, "Files_List", defs[4].Name, "a missing name is filled in from the id")

	defs[0].ID = "changed"
	d, _ := ts.Lookup("Calculator_Add")
	assert.Equal(t, "Calculator.Add@1.0.0", d.ID, "Definitions returns a copy")
}

// TestToolset_AgentLoop goes the whole way against the library's handler:
// list, declare, let "the model" pick a name and arguments, look the name
// up, call.
func TestToolset_AgentLoop(t *testing.T) {
	t.Parallel()
	reg := newRegistry(t)
	srv := serve(t, otc.NewHandler(reg, nil))
	c := newClient(t, srv.URL, nil)
	ctx := t.Context()

	defs, err := c.ListTools(ctx)
	require.NoError(t, err)
	ts := client.NewToolset(defs)

	var names []string
	for _, decl := range ts.OpenAI() {
		names = append(names, decl.Function.Name)
	}
	assert.ElementsMatch(t, []string{"Boom_Panic", "Ctx_Echo", "Door_Close", "Flaky_Fail", "Math_Add", "Null_Get", "Plain_Fail"}, names,
		"Math.Add is listed in three versions and declared once")

	var mathAdd *client.OpenAITool
	for i, decl := range ts.OpenAI() {
		if decl.Function.Name == "Math_Add" {
			mathAdd = &ts.OpenAI()[i]
		}
	}
	require.NotNil(t, mathAdd)
	assert.Equal(t, "function", mathAdd.Type)
	assert.Equal(t, "Adds two numbers.", mathAdd.Function.Description)
	var served otc.ToolDefinition
	for _, d := range reg.Tools() {
		if d.ID == "Math.Add@10.0.0" {
			served = d
		}
	}
	assert.JSONEq(t, string(served.InputSchema.Parameters), string(mathAdd.Function.Parameters))

	// The model answers with a name and its arguments as a JSON string.
	name, args := "Math_Add", `{"a": 40, "b": 2}`
	chosen, ok := ts.Lookup(name)
	require.True(t, ok)
	assert.Equal(t, "Math.Add@10.0.0", chosen.ID)
	sum, err := client.CallAs[float64](ctx, c, chosen.ID, json.RawMessage(args), nil)
	require.NoError(t, err)
	assert.Equal(t, 42.0, sum)
}

// TestToolsetMCPMetadata checks that a definition's title, annotations,
// icons and _meta, which an OTC catalog never carries but a registry's
// definitions may, reach its MCP Tool object.
func TestToolsetMCPMetadata(t *testing.T) {
	t.Parallel()
	ts := client.NewToolset(testkit.NewMetaRegistry(t).Tools())
	var refund map[string]json.RawMessage
	for _, raw := range ts.MCP() {
		var tool map[string]json.RawMessage
		require.NoError(t, json.Unmarshal(raw, &tool))
		if string(tool["name"]) == `"Payments_Refund"` {
			refund = tool
		}
	}
	require.NotNil(t, refund)
	assert.JSONEq(t, `"Refund an order"`, string(refund["title"]))
	assert.JSONEq(t, testkit.RefundAnnotations, string(refund["annotations"]))
	assert.JSONEq(t, testkit.RefundIcons, string(refund["icons"]))
	assert.JSONEq(t, testkit.RefundMeta, string(refund["_meta"]))
}
