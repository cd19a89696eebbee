package export_test

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/otcgo/otc"
	"github.com/otcgo/otc/export"
)

var updateExports = flag.Bool("update-exports", false, "rewrite testdata/exports from the current output")

// orderInput has nested, optional, enum, nullable and array fields.
type orderInput struct {
	Customer struct {
		Name  string `json:"name" jsonschema:"description=The customer's name.,minLength=1,maxLength=80"`
		Email string `json:"email,omitempty" jsonschema:"description=Where to send the receipt.,format=email"`
	} `json:"customer" jsonschema:"description=Who orders."`
	Items []struct {
		SKU      string `json:"sku" jsonschema:"description=The product code.,pattern=^[A-Z]{3}-[0-9]{4}$"`
		Quantity int    `json:"quantity" jsonschema:"description=How many.,minimum=1,maximum=99"`
	} `json:"items" jsonschema:"description=What is ordered.,minItems=1,maxItems=20"`
	Shipping string   `json:"shipping,omitempty" jsonschema:"description=How to ship.,enum=standard,enum=express,default=standard"`
	Priority int      `json:"priority,omitempty" jsonschema:"description=Handling priority.,enum=1,enum=2,enum=3"`
	Note     *string  `json:"note" jsonschema:"description=A note for the packer or null.,nullable"`
	Tags     []string `json:"tags,omitempty" jsonschema:"description=Labels.,uniqueItems=true"`
	Gift     *struct {
		Message string `json:"message" jsonschema:"description=The card's text.,maxLength=200"`
		Wrap    string `json:"wrap,omitempty" jsonschema:"description=The paper.,enum=plain,enum=festive,default=plain"`
	} `json:"gift,omitempty" jsonschema:"description=Gift options; null for none."`
	Hold time.Duration `json:"hold,omitempty" jsonschema:"description=How long to hold the stock.,default=15m"`
}

func exportToolset(t *testing.T) *export.Toolset {
	t.Helper()
	reg := otc.NewRegistry(nil)
	require.NoError(t, otc.Register(reg, otc.Tool{ID: "Shop.PlaceOrder", Version: "1.2.0", Description: "Places an order."},
		func(context.Context, orderInput) (string, error) { return "", nil }))
	return mustToolset(t, reg.Tools())
}

// TestExportsGolden compares each declaration format with its golden
// file. Run with -update-exports to rewrite them, then read the diff.
func TestExportsGolden(t *testing.T) {
	ts := exportToolset(t)
	for name, v := range map[string]any{
		"openai":        ts.OpenAI(),
		"openai_strict": ts.OpenAIStrict(),
		"anthropic":     ts.Anthropic(),
		"gemini":        ts.Gemini(),
		"mcp":           ts.MCP(),
	} {
		t.Run(name, func(t *testing.T) {
			got, err := json.MarshalIndent(v, "", "  ")
			require.NoError(t, err)
			path := filepath.Join("testdata", "exports", name+".json")
			if *updateExports {
				require.NoError(t, os.MkdirAll(filepath.Dir(path), 0o755))
				require.NoError(t, os.WriteFile(path, append(got, '\n'), 0o644))
				return
			}
			want, err := os.ReadFile(path)
			require.NoError(t, err, "run go test -run TestExportsGolden -update-exports ./client")
			assert.JSONEq(t, string(want), string(got))
		})
	}
}

// The keywords OpenAI's strict mode accepts, as its Structured Outputs
// guide lists them: the generic ones and those of each type.
var strictAllowed = map[string]bool{
	"type": true, "description": true, "title": true, "enum": true, "const": true, "anyOf": true,
	"properties": true, "required": true, "additionalProperties": true, "items": true,
	"pattern": true, "format": true,
	"multipleOf": true, "minimum": true, "maximum": true, "exclusiveMinimum": true, "exclusiveMaximum": true,
	"minItems": true, "maxItems": true,
}

// fieldOrder is the order of orderInput's fields.
var fieldOrder = []any{"customer", "items", "shipping", "priority", "note", "tags", "gift", "hold"}

// topLevelKeys returns the names of the members of the object under key
// in the JSON object raw, in the order the text has them.
func topLevelKeys(t *testing.T, raw json.RawMessage, key string) []any {
	t.Helper()
	var top map[string]json.RawMessage
	require.NoError(t, json.Unmarshal(raw, &top))
	dec := json.NewDecoder(bytes.NewReader(top[key]))
	tok, err := dec.Token()
	require.NoError(t, err)
	require.Equal(t, json.Delim('{'), tok)
	var names []any
	for dec.More() {
		name, err := dec.Token()
		require.NoError(t, err)
		names = append(names, name)
		var skip json.RawMessage
		require.NoError(t, dec.Decode(&skip))
	}
	return names
}

// The string formats strict mode accepts, as the guide lists them.
var strictFormats = []any{"date-time", "time", "date", "duration", "email", "hostname", "ipv4", "ipv6", "uuid"}

// TestOpenAIStrictFollowsTheRules walks the strict declaration keyword by
// keyword: only accepted keywords, every object closed with every
// property required, optional ones nullable, oneOf gone.
func TestOpenAIStrictFollowsTheRules(t *testing.T) {
	tools := exportToolset(t).OpenAIStrict()
	require.Len(t, tools, 1)
	require.True(t, tools[0].Function.Strict)
	var root map[string]any
	require.NoError(t, json.Unmarshal(tools[0].Function.Parameters, &root))
	assert.Equal(t, "object", root["type"], "the root is an object, not anyOf")
	var walk func(s map[string]any, at string)
	walk = func(s map[string]any, at string) {
		for k := range s {
			assert.True(t, strictAllowed[k], "%s: keyword %q is not accepted in strict mode", at, k)
		}
		if f, ok := s["format"]; ok {
			assert.Contains(t, strictFormats, f, "%s: format", at)
		}
		_, typed := s["type"]
		_, union := s["anyOf"]
		assert.True(t, typed || union, "%s: every schema has a type, or is a union", at)
		if s["type"] == "object" {
			assert.Equal(t, false, s["additionalProperties"], "%s: additionalProperties", at)
			props, _ := s["properties"].(map[string]any)
			var names []string
			for n := range props {
				names = append(names, n)
			}
			slices.Sort(names)
			var required []string
			for _, r := range s["required"].([]any) {
				required = append(required, r.(string))
			}
			slices.Sort(required)
			assert.Equal(t, names, required, "%s: every property is required", at)
			for n, p := range props {
				walk(p.(map[string]any), at+"/properties/"+n)
			}
		}
		if items, ok := s["items"].(map[string]any); ok {
			walk(items, at+"/items")
		}
		if branches, ok := s["anyOf"].([]any); ok {
			for _, b := range branches {
				walk(b.(map[string]any), at+"/anyOf")
			}
		}
	}
	walk(root, "#")
	assert.Equal(t, fieldOrder, topLevelKeys(t, tools[0].Function.Parameters, "properties"),
		"properties in the order of the Go fields, which is the order in which the model writes them")
	assert.Equal(t, fieldOrder, root["required"])

	props := root["properties"].(map[string]any)
	shipping := props["shipping"].(map[string]any)
	assert.Contains(t, shipping["description"], "default \"standard\"", "the default, restated")
	name := props["customer"].(map[string]any)["properties"].(map[string]any)["name"].(map[string]any)
	assert.Equal(t, "The customer's name. (at least 1 character; at most 80 characters)", name["description"])
}

func TestOpenAIStrictFallsBackForAMap(t *testing.T) {
	reg := otc.NewRegistry(nil)
	type in struct {
		Labels map[string]string `json:"labels" jsonschema:"description=Free-form labels."`
	}
	require.NoError(t, otc.Register(reg, otc.Tool{ID: "Shop.Label", Version: "1.0.0", Description: "Labels."},
		func(context.Context, in) (string, error) { return "", nil }))
	tools := mustToolset(t, reg.Tools()).OpenAIStrict()
	assert.False(t, tools[0].Function.Strict, "a map cannot be strict")
	assert.JSONEq(t, string(reg.Tools()[0].InputSchema.Parameters), string(tools[0].Function.Parameters))
	_, err := export.OpenAIStrictParameters(reg.Tools()[0].InputSchema.Parameters)
	assert.ErrorContains(t, err, "#/properties/labels takes members of any name (a map)")
}

func TestGeminiUsesItsSchema(t *testing.T) {
	fns := exportToolset(t).Gemini()
	require.Len(t, fns, 1)
	var root map[string]any
	require.NoError(t, json.Unmarshal(fns[0].Parameters, &root))
	assert.Equal(t, "OBJECT", root["type"])
	props := root["properties"].(map[string]any)
	note := props["note"].(map[string]any)
	assert.Equal(t, "STRING", note["type"])
	assert.Equal(t, true, note["nullable"], "anyOf with null becomes nullable")
	priority := props["priority"].(map[string]any)
	assert.NotContains(t, priority, "enum", "Gemini enums are strings")
	assert.Contains(t, priority["description"], "one of 1,2,3")
	assert.Equal(t, fieldOrder, root["propertyOrdering"], "the order of the Go fields")
	assert.Equal(t, fieldOrder, topLevelKeys(t, fns[0].Parameters, "properties"))
	var walk func(s map[string]any)
	walk = func(s map[string]any) {
		assert.NotContains(t, s, "additionalProperties")
		assert.NotContains(t, s, "oneOf")
		if p, ok := s["properties"].(map[string]any); ok {
			for _, v := range p {
				walk(v.(map[string]any))
			}
		}
		if items, ok := s["items"].(map[string]any); ok {
			walk(items)
		}
	}
	walk(root)
}

// An agent in the same process as its tools declares them from the
// registry's own catalog, and runs the call the model chose through
// Registry.Call: no HTTP in between.
func ExampleToolset_inProcess() {
	reg := otc.NewRegistry(nil)
	type addInput struct {
		A float64 `json:"a" jsonschema:"description=The first number."`
		B float64 `json:"b" jsonschema:"description=The second number."`
	}
	_ = otc.Register(reg, otc.Tool{ID: "Calculator.Add", Version: "1.0.0", Description: "Adds two numbers."},
		func(_ context.Context, in addInput) (float64, error) { return in.A + in.B, nil })

	ts, err := export.New(reg.Tools(), nil)
	if err != nil {
		panic(err)
	}
	decl, _ := json.Marshal(ts.OpenAIStrict()) // the request's "tools"
	fmt.Println(len(decl) > 0)

	// The model answered with a call of Calculator_Add.
	def, _ := ts.Lookup("Calculator_Add")
	res, err := reg.Call(context.Background(), &otc.CallRequest{ToolID: def.ID, Input: json.RawMessage(`{"a":2,"b":3}`)})
	fmt.Println(string(res.Value), err)
	// Output:
	// true
	// 5 <nil>
}

// TestOpenAIStrictRefusesWhatItCannotExpress: schemas strict mode
// cannot take, or whose size passes its limits, are refused with the
// reason (and declared without strict by the Toolset).
func TestOpenAIStrictRefusesWhatItCannotExpress(t *testing.T) {
	object := func(props string) string {
		return `{"type":"object","properties":{` + props + `},"required":[],"additionalProperties":false}`
	}
	deep := `{"type":"string"}`
	for range 11 {
		deep = object(`"d":` + deep)
	}
	enum := func(n, size int) string {
		var values []string
		for i := range n {
			values = append(values, fmt.Sprintf("%q", fmt.Sprintf("%0*d", size, i)))
		}
		return `{"type":"string","enum":[` + strings.Join(values, ",") + `]}`
	}
	var many []string
	for i := range 5001 {
		many = append(many, fmt.Sprintf(`"p%d":{"type":"integer"}`, i))
	}
	for name, tc := range map[string]struct{ schema, message string }{
		"any value":        {object(`"v":{"description":"Anything."}`), "#/properties/v accepts any JSON value"},
		"tuple":            {object(`"v":{"type":"array","items":[{"type":"string"}]}`), "#/properties/v lists its items by position (a tuple)"},
		"allOf":            {object(`"v":{"allOf":[{"type":"string"}]}`), `#/properties/v uses "allOf"`},
		"a map":            {object(`"v":{"type":"object","additionalProperties":{"type":"string"}}`), "#/properties/v takes members of any name (a map)"},
		"11 levels":        {deep, "nests objects 11 levels deep, beyond the 10 strict mode allows"},
		"1001 enum values": {object(`"v":` + enum(1001, 1)), "more than 1000 enum values"},
		"a long enum":      {object(`"v":` + enum(251, 60)), "an enum of 251 values and 15060 characters"},
		"5001 properties":  {object(strings.Join(many, ",")), "more than 5000 properties"},
	} {
		t.Run(name, func(t *testing.T) {
			_, err := export.OpenAIStrictParameters(json.RawMessage(tc.schema))
			assert.ErrorContains(t, err, tc.message)
		})
	}

	t.Run("within the limits", func(t *testing.T) {
		shallow := `{"type":"string"}`
		for range 10 {
			shallow = object(`"d":` + shallow)
		}
		for _, schema := range []string{shallow, object(`"v":` + enum(1000, 1)), object(`"v":` + enum(250, 60))} {
			_, err := export.OpenAIStrictParameters(json.RawMessage(schema))
			assert.NoError(t, err)
		}
	})

	t.Run("a type list with null", func(t *testing.T) {
		p, err := export.OpenAIStrictParameters(json.RawMessage(object(`"v":{"type":["string","null"],"pattern":"^a","description":"V."}`)))
		require.NoError(t, err)
		assert.JSONEq(t, `{"type":"object","properties":{"v":{"type":["string","null"],"pattern":"^a","description":"V."}},"required":["v"],"additionalProperties":false}`, string(p),
			"kept as it is: already nullable, and its type's keywords kept")
	})
}

// TestExportsKeepNumbersExact: bounds and enum values pass through the
// rewriting as the schema wrote them, not rounded through float64.
func TestExportsKeepNumbersExact(t *testing.T) {
	schema := json.RawMessage(`{"type":"object","properties":{"n":{"type":"integer","description":"N.","maximum":9007199254740993,"enum":[9007199254740993]}},"required":["n"]}`)
	strict, err := export.OpenAIStrictParameters(schema)
	require.NoError(t, err)
	assert.Contains(t, string(strict), `"maximum":9007199254740993`)
	gemini, err := export.GeminiParameters(schema)
	require.NoError(t, err)
	assert.Contains(t, string(gemini), `"maximum":9007199254740993`)
	assert.Contains(t, string(gemini), `one of 9007199254740993`)
}
