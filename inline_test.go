package otc_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/otcgo/otc"
)

// The tests in this file pin down hand-written schemas that use the
// references of JSON Schema 2020-12 ($defs, $anchor, local $ref): the OTC
// catalog and the validator get the inlined copy (SPEC §3: inline only),
// ToolDefinition.FullInputSchema keeps the original, and what has no
// inline form is a registration error.

// inlineProbeID is the id of the tool the tests of this file register.
const inlineProbeID = "Inline.Probe"

// registerInline registers Inline.Probe@1.0.0 on a fresh registry with the
// given hand-written input schema (and output schema, unless ""), taking
// any JSON object and returning it.
func registerInline(input, output string) (*otc.Registry, error) {
	reg := otc.NewRegistry(nil)
	tool := otc.Tool{ID: inlineProbeID, Version: "1.0.0", Description: "Echoes its input.", InputSchema: json.RawMessage(input)}
	if output != "" {
		tool.OutputSchema = json.RawMessage(output)
	}
	err := otc.Register(reg, tool, func(_ context.Context, in map[string]any) (map[string]any, error) { return in, nil })
	return reg, err
}

// contactSchema is the MCP conformance suite's tool schema with 2020-12
// keywords, with the description of each top-level property the library
// requires.
const contactSchema = `{
	"$schema": "https://json-schema.org/draft/2020-12/schema",
	"type": "object",
	"$defs": {"address": {"$anchor": "addressDef", "type": "object", "properties": {"street": {"type": "string"}, "city": {"type": "string"}}}},
	"properties": {
		"name": {"type": "string", "description": "Who to contact."},
		"address": {"$ref": "#/$defs/address", "description": "Where they live."},
		"contactMethod": {"type": "string", "enum": ["phone", "email"], "description": "How to reach them."},
		"phone": {"type": "string", "description": "Their phone number."},
		"email": {"type": "string", "description": "Their email address."}
	},
	"allOf": [{"anyOf": [{"required": ["phone"]}, {"required": ["email"]}]}],
	"if": {"properties": {"contactMethod": {"const": "phone"}}, "required": ["contactMethod"]},
	"then": {"required": ["phone"]},
	"else": {"required": ["email"]},
	"additionalProperties": false
}`

// contactInlined is contactSchema as the OTC catalog serves it.
const contactInlined = `{
	"type": "object",
	"properties": {
		"name": {"type": "string", "description": "Who to contact."},
		"address": {"description": "Where they live.", "allOf": [{"type": "object", "properties": {"street": {"type": "string"}, "city": {"type": "string"}}}]},
		"contactMethod": {"type": "string", "enum": ["phone", "email"], "description": "How to reach them."},
		"phone": {"type": "string", "description": "Their phone number."},
		"email": {"type": "string", "description": "Their email address."}
	},
	"allOf": [{"anyOf": [{"required": ["phone"]}, {"required": ["email"]}]}],
	"if": {"properties": {"contactMethod": {"const": "phone"}}, "required": ["contactMethod"]},
	"then": {"required": ["phone"]},
	"else": {"required": ["email"]},
	"additionalProperties": false
}`

// dollarKeys returns every member name starting with "$" anywhere in the
// JSON value v.
func dollarKeys(v any) []string {
	var keys []string
	switch v := v.(type) {
	case map[string]any:
		for k, sub := range v {
			if strings.HasPrefix(k, "$") {
				keys = append(keys, k)
			}
			keys = append(keys, dollarKeys(sub)...)
		}
	case []any:
		for _, sub := range v {
			keys = append(keys, dollarKeys(sub)...)
		}
	}
	return keys
}

func TestInlineContactSchemaOverHTTP(t *testing.T) {
	t.Parallel()
	reg, err := registerInline(contactSchema, "")
	require.NoError(t, err)
	srv := httptest.NewServer(otc.NewHandler(reg, nil))
	t.Cleanup(srv.Close)

	t.Run("catalog_serves_the_inlined_schema", func(t *testing.T) {
		req, err := http.NewRequest(http.MethodGet, srv.URL+"/tools", nil)
		require.NoError(t, err)
		r := wireSend(t, srv.Client(), req)
		require.Equal(t, http.StatusOK, r.status, "body %s", r.body)
		var catalog struct {
			Tools []struct {
				ID          string `json:"id"`
				InputSchema struct {
					Parameters json.RawMessage `json:"parameters"`
				} `json:"input_schema"`
			} `json:"tools"`
		}
		require.NoError(t, json.Unmarshal(r.body, &catalog))
		require.Len(t, catalog.Tools, 1)
		params := catalog.Tools[0].InputSchema.Parameters
		assert.JSONEq(t, contactInlined, string(params))
		var doc any
		require.NoError(t, json.Unmarshal(params, &doc))
		assert.Empty(t, dollarKeys(doc), "the catalog's schema is inline: %s", params)
		// The copy keeps the author's order of properties.
		order := []string{`"name"`, `"address"`, `"contactMethod"`, `"phone"`, `"email"`}
		for i := 1; i < len(order); i++ {
			assert.Less(t, strings.Index(string(params), order[i-1]), strings.Index(string(params), order[i]),
				"%s before %s in %s", order[i-1], order[i], params)
		}
		assert.NotContains(t, string(r.body), "addressDef", "the full schema stays out of the OTC catalog")
	})

	t.Run("full_schema_keeps_every_keyword", func(t *testing.T) {
		def := onlyTool(t, reg)
		assert.JSONEq(t, contactSchema, string(def.FullInputSchema))
		for _, kw := range []string{`"$schema"`, `"$defs"`, `"$anchor"`, `"$ref":"#/$defs/address"`, `"allOf"`, `"anyOf"`, `"if"`, `"then"`, `"else"`, `"const"`, `"additionalProperties":false`} {
			assert.Contains(t, string(def.FullInputSchema), kw)
		}
		assert.NotContains(t, string(def.FullInputSchema), "\n\t", "the full schema is compacted")
		assert.Nil(t, def.FullOutputSchema, "the output schema was reflected")
	})

	call := func(t *testing.T, input string) wireResponse {
		t.Helper()
		return wireSend(t, srv.Client(), mustRequest(t, srv.URL+"/tools/call",
			`{"request":{"tool_id":"`+inlineProbeID+`","input":`+input+`}}`))
	}

	t.Run("valid_inputs_pass", func(t *testing.T) {
		for _, in := range []string{
			`{"name":"Ada","contactMethod":"phone","phone":"+44 20","address":{"street":"1 Main St","city":"London"}}`,
			`{"email":"ada@example.com"}`,
			`{"contactMethod":"email","email":"ada@example.com","address":{}}`,
		} {
			assert.JSONEq(t, in, string(call(t, in).success(t)), "input %s", in)
		}
	})

	tests := []struct {
		name  string
		input string
		want  map[string]string
	}{
		{"city_not_a_string", `{"email":"ada@example.com","address":{"street":"1 Main St","city":5}}`,
			map[string]string{"address.city": "Must be a string"}},
		{"address_not_an_object", `{"email":"ada@example.com","address":"London"}`,
			map[string]string{"address": "Must be an object"}},
		{"phone_missing_when_contact_method_is_phone", `{"contactMethod":"phone","email":"ada@example.com"}`,
			map[string]string{"phone": "Is required"}},
		{"contact_method_not_in_enum", `{"contactMethod":"fax","email":"ada@example.com"}`,
			map[string]string{"contactMethod": "Must be one of: \"phone\", \"email\""}},
		{"extra_property", `{"email":"ada@example.com","extra":1}`,
			map[string]string{"extra": "Is not an accepted parameter"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := call(t, tt.input).errorBody(t, http.StatusUnprocessableEntity)
			assert.Equal(t, tt.want, e.ParameterErrors)
		})
	}

	t.Run("neither_phone_nor_email", func(t *testing.T) {
		// Without contactMethod the else branch asks for an email, and
		// the anyOf fails on the input as a whole.
		e := call(t, `{"name":"Ada"}`).errorBody(t, http.StatusUnprocessableEntity)
		assert.Equal(t, "Is required", e.ParameterErrors["email"])
		assert.Len(t, e.ParameterErrors, 2, "%v", e.ParameterErrors)
	})
}

// mustRequest builds a POST of a JSON body.
func mustRequest(t *testing.T, url, body string) *http.Request {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, url, strings.NewReader(body))
	require.NoError(t, err)
	return req
}

func TestInlineSchemaForms(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name  string
		input string
		want  string // the parameters of the catalog
	}{
		{"pointer_escapes",
			`{"type":"object","$defs":{"a/b":{"type":"string"},"c~d":{"type":"integer"}},"properties":{
				"x":{"$ref":"#/$defs/a~1b","description":"X."},
				"y":{"$ref":"#/$defs/c~0d","description":"Y."}}}`,
			`{"type":"object","properties":{
				"x":{"description":"X.","allOf":[{"type":"string"}]},
				"y":{"description":"Y.","allOf":[{"type":"integer"}]}}}`},
		{"percent_encoded_pointer",
			`{"type":"object","$defs":{"a b":{"type":"string","description":"A."}},"properties":{"x":{"$ref":"#/%24defs/a%20b"}}}`,
			`{"type":"object","properties":{"x":{"type":"string","description":"A."}}}`},
		{"anchor",
			`{"type":"object","$defs":{"d":{"$anchor":"zip","type":"string","pattern":"^[0-9]{5}$"}},"properties":{"zip":{"$ref":"#zip","description":"Postal code."}}}`,
			`{"type":"object","properties":{"zip":{"description":"Postal code.","allOf":[{"type":"string","pattern":"^[0-9]{5}$"}]}}}`},
		{"anchor_outside_defs",
			`{"type":"object","properties":{"a":{"$anchor":"s","type":"string","description":"A."},"b":{"$ref":"#s"}}}`,
			`{"type":"object","properties":{"a":{"type":"string","description":"A."},"b":{"type":"string","description":"A."}}}`},
		{"nested_refs",
			`{"type":"object","$defs":{
				"city":{"type":"string","minLength":1},
				"address":{"type":"object","properties":{"city":{"$ref":"#/$defs/city"}}},
				"person":{"type":"object","properties":{"home":{"$ref":"#/$defs/address"},"work":{"$ref":"#/$defs/address"}}}},
			"properties":{"who":{"$ref":"#/$defs/person","description":"Who."}}}`,
			`{"type":"object","properties":{"who":{"description":"Who.","allOf":[{"type":"object","properties":{
				"home":{"type":"object","properties":{"city":{"type":"string","minLength":1}}},
				"work":{"type":"object","properties":{"city":{"type":"string","minLength":1}}}}}]}}}`},
		{"definitions",
			`{"type":"object","definitions":{"n":{"type":"number"}},"properties":{"n":{"description":"N.","$ref":"#/definitions/n"}}}`,
			`{"type":"object","properties":{"n":{"description":"N.","allOf":[{"type":"number"}]}}}`},
		{"ref_beside_allof_appends",
			`{"type":"object","$defs":{"pos":{"minimum":0}},"properties":{"n":{"description":"N.","allOf":[{"type":"integer"}],"$ref":"#/$defs/pos"}}}`,
			`{"type":"object","properties":{"n":{"description":"N.","allOf":[{"type":"integer"},{"minimum":0}]}}}`},
		{"root_ref",
			`{"$ref":"#/$defs/in","$defs":{"in":{"type":"object","properties":{"q":{"type":"string","description":"Q."}}}}}`,
			`{"type":"object","properties":{"q":{"type":"string","description":"Q."}}}`},
		{"pointer_into_a_definition",
			`{"type":"object","$defs":{"a":{"type":"object","properties":{"city":{"type":"string","description":"City."}}}},"properties":{"c":{"$ref":"#/$defs/a/properties/city"}}}`,
			`{"type":"object","properties":{"c":{"type":"string","description":"City."}}}`},
		{"pointer_into_an_array",
			`{"type":"object","properties":{"a":{"description":"A.","anyOf":[{"type":"string"},{"type":"null"}]},"b":{"$ref":"#/properties/a/anyOf/1","description":"B."}}}`,
			`{"type":"object","properties":{"a":{"description":"A.","anyOf":[{"type":"string"},{"type":"null"}]},"b":{"description":"B.","allOf":[{"type":"null"}]}}}`},
		{"boolean_definition",
			`{"type":"object","$defs":{"none":false},"properties":{},"additionalProperties":{"$ref":"#/$defs/none"}}`,
			`{"type":"object","properties":{},"additionalProperties":false}`},
		{"items_and_defs_inside_a_subschema",
			`{"type":"object","properties":{"l":{"description":"L.","type":"array","$defs":{"e":{"type":"string"}},"items":{"$ref":"#/properties/l/$defs/e"}}}}`,
			`{"type":"object","properties":{"l":{"description":"L.","type":"array","items":{"type":"string"}}}}`},
		{"schema_keyword_only",
			`{"$schema":"https://json-schema.org/draft/2020-12/schema#","type":"object","properties":{}}`,
			`{"type":"object","properties":{}}`},
		{"unused_definition_dropped",
			`{"type":"object","$defs":{"unused":{"type":"string"}},"properties":{}}`,
			`{"type":"object","properties":{}}`},
		{"annotations_kept",
			`{"type":"object","$defs":{"r":{"type":"string","x-mcp-header":"Region"}},"properties":{"region":{"$ref":"#/$defs/r","description":"Region.","x-mcp-header":"Region"}},"x-vendor":{"$ref":"not a keyword here"}}`,
			`{"type":"object","properties":{"region":{"description":"Region.","x-mcp-header":"Region","allOf":[{"type":"string","x-mcp-header":"Region"}]}},"x-vendor":{"$ref":"not a keyword here"}}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			reg, err := registerInline(tt.input, "")
			require.NoError(t, err)
			def := onlyTool(t, reg)
			assert.JSONEq(t, tt.want, string(def.InputSchema.Parameters))
			assert.JSONEq(t, tt.input, string(def.FullInputSchema))
		})
	}
}

func TestInlineNothingToInline(t *testing.T) {
	t.Parallel()
	// Keywords only look like references where they are not schema
	// keywords: as property names, or inside a const or an annotation.
	tests := []struct {
		name  string
		input string
	}{
		{"plain", `{"type":"object","properties":{"q":{"type":"string","description":"Q."}}}`},
		{"properties_named_like_keywords", `{"type":"object","properties":{"$ref":{"type":"string","description":"R."},"$defs":{"type":"string","description":"D."}}}`},
		{"ref_inside_const", `{"type":"object","properties":{"q":{"description":"Q.","const":{"$ref":"#/nowhere"}}}}`},
		{"mcp_header_annotation", `{"type":"object","properties":{"region":{"type":"string","description":"Region.","x-mcp-header":"Region"}}}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			reg, err := registerInline(tt.input, "")
			require.NoError(t, err)
			def := onlyTool(t, reg)
			assert.JSONEq(t, tt.input, string(def.InputSchema.Parameters), "served as written")
			assert.Nil(t, def.FullInputSchema, "nothing to inline: FullInputSchema is nil")
		})
	}

	t.Run("annotation_does_not_change_validation", func(t *testing.T) {
		t.Parallel()
		reg, err := registerInline(tests[3].input, "")
		require.NoError(t, err)
		_, err = reg.Call(context.Background(), &otc.CallRequest{ToolID: inlineProbeID, Input: json.RawMessage(`{"region":"eu"}`)})
		require.NoError(t, err)
		_, err = reg.Call(context.Background(), &otc.CallRequest{ToolID: inlineProbeID, Input: json.RawMessage(`{"region":1}`)})
		var e *otc.Error
		require.ErrorAs(t, err, &e)
		assert.Equal(t, map[string]string{"region": "Must be a string"}, e.ParameterErrors)
	})
}

func TestInlineOutputSchema(t *testing.T) {
	t.Parallel()
	const output = `{"$schema":"https://json-schema.org/draft/2020-12/schema","type":"object","$defs":{"n":{"type":"number"}},"properties":{"total":{"$ref":"#/$defs/n"}}}`
	reg, err := registerInline(`{"type":"object","properties":{}}`, output)
	require.NoError(t, err)
	def := onlyTool(t, reg)
	assert.JSONEq(t, `{"type":"object","properties":{"total":{"type":"number"}}}`, string(def.OutputSchema))
	assert.JSONEq(t, output, string(def.FullOutputSchema))
	assert.Nil(t, def.FullInputSchema)

	var catalog map[string]any
	b, err := json.Marshal(def)
	require.NoError(t, err)
	require.NoError(t, json.Unmarshal(b, &catalog))
	assert.NotContains(t, catalog, "FullInputSchema", "the full schemas are not part of the OTC catalog entry")
	assert.NotContains(t, catalog, "FullOutputSchema")
}

func TestInlineToolsReturnsCopies(t *testing.T) {
	t.Parallel()
	reg, err := registerInline(contactSchema, `{"$defs":{"s":{"type":"string"}},"$ref":"#/$defs/s"}`)
	require.NoError(t, err)
	first := onlyTool(t, reg)
	require.NotEmpty(t, first.FullInputSchema)
	require.NotEmpty(t, first.FullOutputSchema)
	for i := range first.FullInputSchema {
		first.FullInputSchema[i] = ' '
	}
	for i := range first.FullOutputSchema {
		first.FullOutputSchema[i] = ' '
	}
	again := onlyTool(t, reg)
	assert.JSONEq(t, contactSchema, string(again.FullInputSchema))
	assert.JSONEq(t, `{"$defs":{"s":{"type":"string"}},"$ref":"#/$defs/s"}`, string(again.FullOutputSchema))
	assert.JSONEq(t, `{"type":"string"}`, string(again.OutputSchema))
}

func TestInlineRefusals(t *testing.T) {
	t.Parallel()
	// Each case wraps a property schema p, or replaces the whole schema.
	withProperty := func(p string) string {
		return `{"type":"object","$defs":{"s":{"type":"string"}},"properties":{"p":` + p + `}}`
	}
	// doubling builds definitions that each use the next twice, so that
	// the inlined form doubles at each step.
	doubling := func(n int) string {
		var b strings.Builder
		b.WriteString(`{"type":"object","$defs":{`)
		for i := range n {
			b.WriteString(`"d` + string(rune('a'+i)) + `":{"allOf":[{"$ref":"#/$defs/d` + string(rune('a'+i+1)) + `"},{"$ref":"#/$defs/d` + string(rune('a'+i+1)) + `"}]},`)
		}
		b.WriteString(`"d` + string(rune('a'+n)) + `":{"type":"string","description":"` + strings.Repeat("x", 100) + `"}},"properties":{"p":{"$ref":"#/$defs/da"}}}`)
		return b.String()
	}
	tests := []struct {
		name   string
		input  string
		output string
		want   []string // substrings of the error besides the tool id
	}{
		{"remote_ref", withProperty(`{"description":"P.","$ref":"https://example.com/schemas/address.json"}`), "",
			[]string{"InputSchema", `"$ref"`, "https://example.com/schemas/address.json", "#/properties/p", "outside the schema", "#/$defs/name"}},
		{"relative_file_ref", withProperty(`{"description":"P.","$ref":"address.json#/$defs/a"}`), "",
			[]string{"InputSchema", `"address.json#/$defs/a"`, "outside the schema"}},
		{"draft_07_schema", `{"$schema":"http://json-schema.org/draft-07/schema#","type":"object","properties":{}}`, "",
			[]string{"InputSchema", `"$schema"`, "draft-07", "2020-12", "https://json-schema.org/draft/2020-12/schema"}},
		{"schema_not_a_string", `{"$schema":7,"type":"object","properties":{}}`, "",
			[]string{"InputSchema", `"$schema"`, "2020-12"}},
		{"schema_below_the_root", withProperty(`{"description":"P.","$schema":"https://json-schema.org/draft/2020-12/schema"}`), "",
			[]string{"InputSchema", `"$schema"`, "#/properties/p", "root"}},
		{"direct_cycle", `{"type":"object","$defs":{"node":{"type":"object","properties":{"next":{"$ref":"#/$defs/node"}}}},"properties":{"p":{"description":"P.","$ref":"#/$defs/node"}}}`, "",
			[]string{"InputSchema", `"#/$defs/node"`, "#/$defs/node/properties/next", "recursive"}},
		{"indirect_cycle", `{"type":"object","$defs":{"a":{"items":{"$ref":"#/$defs/b"}},"b":{"items":{"$ref":"#/$defs/a"}}},"properties":{"p":{"description":"P.","$ref":"#/$defs/a"}}}`, "",
			[]string{"InputSchema", "recursive"}},
		{"root_cycle", withProperty(`{"description":"P.","$ref":"#"}`), "",
			[]string{"InputSchema", `"$ref" "#"`, "#/properties/p", "recursive"}},
		{"anchor_cycle", `{"type":"object","properties":{"p":{"$anchor":"p","description":"P.","items":{"$ref":"#p"}}}}`, "",
			[]string{"InputSchema", `"#p"`, "#/properties/p/items", "recursive"}},
		{"cycle_in_unused_definitions", `{"type":"object","$defs":{"a":{"$ref":"#/$defs/b"},"b":{"$ref":"#/$defs/a"}},"properties":{}}`, "",
			[]string{"InputSchema", "recursive"}},
		{"missing_definition", withProperty(`{"description":"P.","$ref":"#/$defs/missing"}`), "",
			[]string{"InputSchema", `"#/$defs/missing"`, "#/properties/p", "points at nothing"}},
		{"missing_anchor", withProperty(`{"description":"P.","$ref":"#nowhere"}`), "",
			[]string{"InputSchema", `"#nowhere"`, `"$anchor"`}},
		{"pointer_at_a_non_schema", withProperty(`{"description":"P.","$ref":"#/$defs"}`), "",
			[]string{"InputSchema", `"#/$defs"`, "not a schema"}},
		{"bad_pointer_escape", withProperty(`{"description":"P.","$ref":"#/$defs/~2"}`), "",
			[]string{"InputSchema", "JSON Pointer", "~"}},
		{"ref_not_a_string", withProperty(`{"description":"P.","$ref":["#/$defs/s"]}`), "",
			[]string{"InputSchema", `"$ref"`, "#/properties/p", "not a string"}},
		{"duplicate_anchor", `{"type":"object","$defs":{"a":{"$anchor":"x"},"b":{"$anchor":"x"}},"properties":{}}`, "",
			[]string{"InputSchema", `"$anchor" "x"`, "#/$defs/a", "#/$defs/b"}},
		{"invalid_anchor", `{"type":"object","$defs":{"a":{"$anchor":"1x"}},"properties":{}}`, "",
			[]string{"InputSchema", `"$anchor"`, `"1x"`, "plain name"}},
		{"dynamic_ref", withProperty(`{"description":"P.","$dynamicRef":"#meta"}`), "",
			[]string{"InputSchema", `"$dynamicRef"`, "#/properties/p", "dynamic"}},
		{"dynamic_anchor", `{"type":"object","$dynamicAnchor":"meta","properties":{}}`, "",
			[]string{"InputSchema", `"$dynamicAnchor"`}},
		{"recursive_ref", withProperty(`{"description":"P.","$recursiveRef":"#"}`), "",
			[]string{"InputSchema", `"$recursiveRef"`}},
		{"id", `{"$id":"https://example.com/contact.json","type":"object","properties":{}}`, "",
			[]string{"InputSchema", `"$id"`, "at #:", "base URI"}},
		{"id_in_a_definition", `{"type":"object","$defs":{"a":{"$id":"a.json"}},"properties":{}}`, "",
			[]string{"InputSchema", `"$id"`, "#/$defs/a"}},
		{"repeated_member", `{"type":"object","$defs":{},"properties":{"p":{"description":"P.","type":"string","type":"number"}}}`, "",
			[]string{"InputSchema", `"type"`, "#/properties/p", "repeats"}},
		{"allof_not_an_array_beside_ref", withProperty(`{"description":"P.","$ref":"#/$defs/s","allOf":{}}`), "",
			[]string{"InputSchema", `"allOf"`, "#/properties/p"}},
		{"exponential_growth", doubling(16), "",
			[]string{"InputSchema", "grows past"}},
		// The rules that apply to every input schema apply to the
		// inlined one.
		{"inlined_root_not_an_object", `{"$ref":"#/$defs/s","$defs":{"s":{"type":"string"}}}`, "",
			[]string{"InputSchema", `"type" must be "object"`}},
		{"inlined_property_without_description", withProperty(`{"$ref":"#/$defs/s"}`), "",
			[]string{`"p"`, "description"}},
		{"inlined_schema_invalid", `{"type":"object","$defs":{"bad":{"type":"text"}},"properties":{"p":{"description":"P.","$ref":"#/$defs/bad"}}}`, "",
			// The path is the inlined schema's: the definition is
			// checked where it is used.
			[]string{"InputSchema", "not a valid JSON Schema", "properties.p.allOf.0.type"}},
		{"output_remote_ref", `{"type":"object","properties":{}}`, `{"$ref":"https://example.com/out.json"}`,
			[]string{"OutputSchema", "outside the schema"}},
		{"output_unknown_schema", `{"type":"object","properties":{}}`, `{"$schema":"https://json-schema.org/draft/2019-09/schema"}`,
			[]string{"OutputSchema", `"$schema"`, "2019-09"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			_, err := registerInline(tt.input, tt.output)
			require.Error(t, err)
			msg := err.Error()
			assert.True(t, strings.HasPrefix(msg, `otc: tool "`+inlineProbeID+`@1.0.0": `), "error names the tool: %s", msg)
			for _, want := range tt.want {
				assert.Contains(t, msg, want)
			}
		})
	}
}
