package otc_test

import (
	"context"
	"encoding/json"
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/otcgo/otc"
)

// The tests in this file pin down how struct tags become the input schema
// of SPEC §3, and that the reflected schema is also what validates a call.
// Each case registers a tool on a one- or two-field struct, reads its
// parameters back from Registry.Tools, and compares the fragment the tag
// controls.

// parametersSchema is the decoded input_schema.parameters of a tool.
type parametersSchema struct {
	Type                 string                     `json:"type"`
	Properties           map[string]json.RawMessage `json:"properties"`
	Required             []string                   `json:"required"`
	AdditionalProperties *bool                      `json:"additionalProperties"`
}

// schemaProbeID is the id of the one tool every schema probe registers.
const schemaProbeID = "Schema.Probe"

// registerSchemaProbe registers Schema.Probe@1.0.0, a tool taking In that
// returns nothing, on a fresh registry.
func registerSchemaProbe[In any](t *testing.T) *otc.Registry {
	t.Helper()
	reg := otc.NewRegistry(nil)
	err := otc.Register(reg, otc.Tool{ID: schemaProbeID, Version: "1.0.0", Description: "Probes the schema of its input."},
		func(context.Context, In) (otc.NoOutput, error) { return otc.NoOutput{}, nil })
	require.NoError(t, err)
	return reg
}

// onlyTool returns the single definition of reg.
func onlyTool(t *testing.T, reg *otc.Registry) otc.ToolDefinition {
	t.Helper()
	defs := reg.Tools()
	require.Len(t, defs, 1)
	return defs[0]
}

// decodeParameters decodes the parameters schema of the single tool of reg.
func decodeParameters(t *testing.T, reg *otc.Registry) parametersSchema {
	t.Helper()
	var p parametersSchema
	require.NoError(t, json.Unmarshal(onlyTool(t, reg).InputSchema.Parameters, &p))
	return p
}

// invalidParameters calls the probe with input and returns the parameter
// errors of the CodeInvalidInput it must fail with.
func invalidParameters(t *testing.T, reg *otc.Registry, input string) map[string]string {
	t.Helper()
	_, err := reg.Call(context.Background(), &otc.CallRequest{ToolID: schemaProbeID, Input: json.RawMessage(input)})
	var e *otc.Error
	require.ErrorAs(t, err, &e, "input %s", input)
	require.Equal(t, otc.CodeInvalidInput, e.Code, "input %s: %v", input, err)
	return e.ParameterErrors
}

// SchemaEmbeddedBase is exported because encoding/json cannot allocate an
// embedded pointer to an unexported struct type.
type SchemaEmbeddedBase struct {
	Region string `json:"region" jsonschema:"description=The region from the embedded struct."`
}

type schemaAddress struct {
	Zip string `json:"zip" jsonschema:"description=The postal code."`
}

func TestSchemaFromStructTags(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name     string
		register func(*testing.T) *otc.Registry
		// props is the exact set of top-level properties.
		props []string
		// property is the one whose schema want describes.
		property string
		want     string
		required bool
		// accept are inputs the validator lets through; reject maps
		// inputs it refuses to the parameter_errors key it must name.
		accept []string
		reject map[string]string
	}{
		{
			name: "json_name",
			register: registerSchemaProbe[struct {
				City string `json:"city" jsonschema:"description=The city."`
			}],
			props: []string{"city"}, property: "city", required: true,
			want:   `{"type":"string","description":"The city."}`,
			accept: []string{`{"city":"Oslo"}`},
			reject: map[string]string{`{"City":"Oslo"}`: "City", `{}`: "city"},
		},
		{
			name: "omitempty_makes_optional",
			register: registerSchemaProbe[struct {
				Note string `json:"note,omitempty" jsonschema:"description=An optional note."`
			}],
			props: []string{"note"}, property: "note", required: false,
			// An optional parameter may be null, meaning not given.
			want:   `{"type":"string","description":"An optional note."}`,
			accept: []string{`{}`, `{"note":"hi"}`, `{"note":null}`},
			reject: map[string]string{`{"note":1}`: "note"},
		},
		{
			name: "jsonschema_description",
			register: registerSchemaProbe[struct {
				Q string `json:"q" jsonschema:"description=The search query."`
			}],
			props: []string{"q"}, property: "q", required: true,
			want: `{"type":"string","description":"The search query."}`,
		},
		{
			name: "jsonschema_description_tag",
			register: registerSchemaProbe[struct {
				Q string `json:"q" jsonschema_description:"The query, with commas, and = signs."`
			}],
			props: []string{"q"}, property: "q", required: true,
			want: `{"type":"string","description":"The query, with commas, and = signs."}`,
		},
		{
			// The jsonschema tag splits on commas; a backslash keeps one.
			name: "description_with_escaped_comma",
			register: registerSchemaProbe[struct {
				Q string `json:"q" jsonschema:"description=The query\\, in English."`
			}],
			props: []string{"q"}, property: "q", required: true,
			want: `{"type":"string","description":"The query, in English."}`,
		},
		{
			name: "enum_strings",
			register: registerSchemaProbe[struct {
				Color string `json:"color" jsonschema:"description=A color.,enum=red,enum=green"`
			}],
			props: []string{"color"}, property: "color", required: true,
			want:   `{"type":"string","enum":["red","green"],"description":"A color."}`,
			accept: []string{`{"color":"red"}`, `{"color":"green"}`},
			reject: map[string]string{`{"color":"pink"}`: "color", `{"color":"Red"}`: "color"},
		},
		{
			name: "enum_integers",
			register: registerSchemaProbe[struct {
				Level int `json:"level" jsonschema:"description=A level.,enum=1,enum=2"`
			}],
			props: []string{"level"}, property: "level", required: true,
			want:   `{"type":"integer","enum":[1,2],"description":"A level."}`,
			accept: []string{`{"level":2}`},
			reject: map[string]string{`{"level":3}`: "level", `{"level":"1"}`: "level"},
		},
		{
			name: "enum_numbers",
			register: registerSchemaProbe[struct {
				Ratio float64 `json:"ratio" jsonschema:"description=A ratio.,enum=0.5,enum=1.5"`
			}],
			props: []string{"ratio"}, property: "ratio", required: true,
			want:   `{"type":"number","enum":[0.5,1.5],"description":"A ratio."}`,
			accept: []string{`{"ratio":1.5}`},
			reject: map[string]string{`{"ratio":1}`: "ratio"},
		},
		{
			name: "minimum_maximum",
			register: registerSchemaProbe[struct {
				Count int `json:"count" jsonschema:"description=How many.,minimum=1,maximum=10"`
			}],
			props: []string{"count"}, property: "count", required: true,
			want:   `{"type":"integer","minimum":1,"maximum":10,"description":"How many."}`,
			accept: []string{`{"count":1}`, `{"count":10}`},
			reject: map[string]string{`{"count":0}`: "count", `{"count":11}`: "count"},
		},
		{
			name: "exclusive_minimum",
			register: registerSchemaProbe[struct {
				Price float64 `json:"price" jsonschema:"description=A price.,exclusiveMinimum=0"`
			}],
			props: []string{"price"}, property: "price", required: true,
			// Draft 6 and later: a number, not a boolean beside "minimum".
			want:   `{"type":"number","exclusiveMinimum":0,"description":"A price."}`,
			accept: []string{`{"price":0.01}`},
			reject: map[string]string{`{"price":0}`: "price", `{"price":-1}`: "price"},
		},
		{
			name: "exclusive_maximum",
			register: registerSchemaProbe[struct {
				Share float64 `json:"share" jsonschema:"description=A share.,exclusiveMaximum=1"`
			}],
			props: []string{"share"}, property: "share", required: true,
			want:   `{"type":"number","exclusiveMaximum":1,"description":"A share."}`,
			accept: []string{`{"share":0.99}`},
			reject: map[string]string{`{"share":1}`: "share"},
		},
		{
			name: "min_max_length",
			register: registerSchemaProbe[struct {
				Code string `json:"code" jsonschema:"description=A code.,minLength=2,maxLength=4"`
			}],
			props: []string{"code"}, property: "code", required: true,
			want: `{"type":"string","minLength":2,"maxLength":4,"description":"A code."}`,
			// Lengths count characters, not bytes.
			accept: []string{`{"code":"ab"}`, `{"code":"éééé"}`},
			reject: map[string]string{`{"code":"a"}`: "code", `{"code":"abcde"}`: "code"},
		},
		{
			name: "pattern",
			register: registerSchemaProbe[struct {
				Slug string `json:"slug" jsonschema:"description=A slug.,pattern=^[a-z]+$"`
			}],
			props: []string{"slug"}, property: "slug", required: true,
			want:   `{"type":"string","pattern":"^[a-z]+$","description":"A slug."}`,
			accept: []string{`{"slug":"abc"}`},
			reject: map[string]string{`{"slug":"ABC"}`: "slug", `{"slug":""}`: "slug"},
		},
		{
			name: "default",
			register: registerSchemaProbe[struct {
				Limit int `json:"limit,omitempty" jsonschema:"description=Page size.,default=20"`
			}],
			props: []string{"limit"}, property: "limit", required: false,
			want:   `{"type":"integer","default":20,"description":"Page size."}`,
			accept: []string{`{}`, `{"limit":null}`, `{"limit":5}`},
		},
		{
			name: "format_email",
			register: registerSchemaProbe[struct {
				Email string `json:"email" jsonschema:"description=An address.,format=email"`
			}],
			props: []string{"email"}, property: "email", required: true,
			want:   `{"type":"string","format":"email","description":"An address."}`,
			accept: []string{`{"email":"ada@example.com"}`},
			reject: map[string]string{`{"email":"not an address"}`: "email"},
		},
		{
			name: "format_date_time",
			register: registerSchemaProbe[struct {
				When string `json:"when" jsonschema:"description=A moment.,format=date-time"`
			}],
			props: []string{"when"}, property: "when", required: true,
			want:   `{"type":"string","format":"date-time","description":"A moment."}`,
			accept: []string{`{"when":"2025-03-01T10:00:00Z"}`},
			reject: map[string]string{`{"when":"tomorrow"}`: "when"},
		},
		{
			name: "title",
			register: registerSchemaProbe[struct {
				Q string `json:"q" jsonschema:"title=Query,description=The query."`
			}],
			props: []string{"q"}, property: "q", required: true,
			want: `{"type":"string","title":"Query","description":"The query."}`,
		},
		{
			name: "example",
			register: registerSchemaProbe[struct {
				Q string `json:"q" jsonschema:"description=The query.,example=weather,example=news"`
			}],
			props: []string{"q"}, property: "q", required: true,
			want: `{"type":"string","examples":["weather","news"],"description":"The query."}`,
		},
		{
			name: "nested_struct",
			register: registerSchemaProbe[struct {
				Address schemaAddress `json:"address" jsonschema:"description=Where to deliver."`
			}],
			props: []string{"address"}, property: "address", required: true,
			want: `{"type":"object","description":"Where to deliver.",
				"properties":{"zip":{"type":"string","description":"The postal code."}},
				"required":["zip"],"additionalProperties":false}`,
			accept: []string{`{"address":{"zip":"0150"}}`},
			reject: map[string]string{
				`{"address":{}}`:                       "address.zip",
				`{"address":{"zip":1}}`:                "address.zip",
				`{"address":{"zip":"1","extra":true}}`: "address.extra",
			},
		},
		{
			name: "slice",
			register: registerSchemaProbe[struct {
				Tags []string `json:"tags" jsonschema:"description=Labels.,minItems=1,maxItems=3,uniqueItems=true"`
			}],
			props: []string{"tags"}, property: "tags", required: true,
			want:   `{"type":"array","items":{"type":"string"},"minItems":1,"maxItems":3,"uniqueItems":true,"description":"Labels."}`,
			accept: []string{`{"tags":["a","b"]}`},
			reject: map[string]string{
				`{"tags":["a",2]}`:           "tags.1",
				`{"tags":[]}`:                "tags",
				`{"tags":["a","a"]}`:         "tags",
				`{"tags":["a","b","c","d"]}`: "tags",
				`{"tags":"a"}`:               "tags",
			},
		},
		{
			name: "map",
			register: registerSchemaProbe[struct {
				Scores map[string]int `json:"scores" jsonschema:"description=Score by player."`
			}],
			props: []string{"scores"}, property: "scores", required: true,
			want:   `{"type":"object","additionalProperties":{"type":"integer"},"description":"Score by player."}`,
			accept: []string{`{"scores":{}}`, `{"scores":{"ada":3}}`},
			reject: map[string]string{`{"scores":{"ada":"three"}}`: "scores.ada"},
		},
		{
			name: "pointer_to_struct",
			register: registerSchemaProbe[struct {
				Address *schemaAddress `json:"address" jsonschema:"description=Where to deliver."`
			}],
			props: []string{"address"}, property: "address", required: true,
			// The same schema as the non-pointer case above.
			want: `{"type":"object","description":"Where to deliver.",
				"properties":{"zip":{"type":"string","description":"The postal code."}},
				"required":["zip"],"additionalProperties":false}`,
			accept: []string{`{"address":{"zip":"0150"}}`},
			reject: map[string]string{`{"address":{}}`: "address.zip"},
		},
		{
			name: "pointer_to_scalar",
			register: registerSchemaProbe[struct {
				Count *int `json:"count,omitempty" jsonschema:"description=How many."`
			}],
			props: []string{"count"}, property: "count", required: false,
			want:   `{"type":"integer","description":"How many."}`,
			accept: []string{`{}`, `{"count":0}`, `{"count":null}`},
			reject: map[string]string{`{"count":"0"}`: "count"},
		},
		{
			name: "time_time",
			register: registerSchemaProbe[struct {
				At time.Time `json:"at" jsonschema:"description=When it happens."`
			}],
			props: []string{"at"}, property: "at", required: true,
			want:   `{"type":"string","format":"date-time","description":"When it happens."}`,
			accept: []string{`{"at":"2025-03-01T10:00:00+01:00"}`},
			reject: map[string]string{`{"at":"March 1st"}`: "at", `{"at":1740819600}`: "at"},
		},
		{
			name: "required_overrides_omitempty",
			register: registerSchemaProbe[struct {
				Q string `json:"q,omitempty" jsonschema:"required,description=The query."`
			}],
			props: []string{"q"}, property: "q", required: true,
			want:   `{"type":"string","description":"The query."}`,
			reject: map[string]string{`{}`: "q"},
		},
		{
			name: "json_dash_skipped",
			register: registerSchemaProbe[struct {
				Q        string `json:"q" jsonschema:"description=The query."`
				Internal string `json:"-"`
			}],
			props: []string{"q"}, property: "q", required: true,
			want: `{"type":"string","description":"The query."}`,
			// With the field out of the schema, sending it is an error.
			reject: map[string]string{`{"q":"x","Internal":"y"}`: "Internal", `{"q":"x","-":"y"}`: "-"},
		},
		{
			name: "jsonschema_dash_skipped",
			register: registerSchemaProbe[struct {
				Q      string `json:"q" jsonschema:"description=The query."`
				Hidden string `json:"hidden" jsonschema:"-"`
			}],
			props: []string{"q"}, property: "q", required: true,
			want: `{"type":"string","description":"The query."}`,
		},
		{
			name: "unexported_skipped",
			register: registerSchemaProbe[struct {
				Q     string `json:"q" jsonschema:"description=The query."`
				cache string // unexported: not a parameter
			}],
			props: []string{"q"}, property: "q", required: true,
			want: `{"type":"string","description":"The query."}`,
		},
		{
			name: "embedded_struct_flattened",
			register: registerSchemaProbe[struct {
				SchemaEmbeddedBase
				Q string `json:"q" jsonschema:"description=The query."`
			}],
			props: []string{"region", "q"}, property: "region", required: true,
			want:   `{"type":"string","description":"The region from the embedded struct."}`,
			accept: []string{`{"region":"eu","q":"x"}`},
			reject: map[string]string{`{"q":"x"}`: "region"},
		},
		{
			name: "embedded_pointer_flattened",
			register: registerSchemaProbe[struct {
				*SchemaEmbeddedBase
				Q string `json:"q" jsonschema:"description=The query."`
			}],
			props: []string{"region", "q"}, property: "region", required: true,
			want:   `{"type":"string","description":"The region from the embedded struct."}`,
			accept: []string{`{"region":"eu","q":"x"}`},
		},
		{
			// As in encoding/json, a json name on an embedded struct makes
			// it an ordinary nested field.
			name: "embedded_struct_with_json_name_nested",
			register: registerSchemaProbe[struct {
				SchemaEmbeddedBase `json:"base" jsonschema:"description=The base."`
			}],
			props: []string{"base"}, property: "base", required: true,
			want: `{"type":"object","description":"The base.",
				"properties":{"region":{"type":"string","description":"The region from the embedded struct."}},
				"required":["region"],"additionalProperties":false}`,
		},
		{
			name: "nullable",
			register: registerSchemaProbe[struct {
				Parent *string `json:"parent" jsonschema:"description=The parent id or null for a root.,nullable"`
			}],
			props: []string{"parent"}, property: "parent", required: true,
			// anyOf, as OpenAI's strict mode requires; the description
			// sits on the property, not inside anyOf.
			want:   `{"anyOf":[{"type":"string"},{"type":"null"}],"description":"The parent id or null for a root."}`,
			accept: []string{`{"parent":null}`, `{"parent":"p1"}`},
			reject: map[string]string{`{"parent":1}`: "parent", `{}`: "parent"},
		},
		{
			name: "nullable_nested",
			register: registerSchemaProbe[struct {
				Items []struct {
					Note *string `json:"note" jsonschema:"description=A note or null.,nullable"`
				} `json:"items" jsonschema:"description=The items."`
			}],
			props: []string{"items"}, property: "items", required: true,
			want: `{"type":"array","description":"The items.","items":{"type":"object",
				"properties":{"note":{"anyOf":[{"type":"string"},{"type":"null"}],"description":"A note or null."}},
				"required":["note"],"additionalProperties":false}}`,
			accept: []string{`{"items":[{"note":null},{"note":"n"}]}`},
			reject: map[string]string{`{"items":[{"note":2}]}`: "items.0.note"},
		},
		{
			name: "no_json_tag_uses_field_name",
			register: registerSchemaProbe[struct {
				Query string `jsonschema:"description=The query."`
			}],
			props: []string{"Query"}, property: "Query", required: true,
			want:   `{"type":"string","description":"The query."}`,
			accept: []string{`{"Query":"x"}`},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			reg := tt.register(t)
			p := decodeParameters(t, reg)

			assert.Equal(t, "object", p.Type)
			require.NotNil(t, p.AdditionalProperties, "a struct's parameters must close additionalProperties")
			assert.False(t, *p.AdditionalProperties)
			assert.ElementsMatch(t, tt.props, keysOf(p.Properties))
			require.Contains(t, p.Properties, tt.property)
			assert.JSONEq(t, tt.want, string(p.Properties[tt.property]))
			if tt.required {
				assert.Contains(t, p.Required, tt.property)
			} else {
				assert.NotContains(t, p.Required, tt.property)
			}

			for _, in := range tt.accept {
				_, err := reg.Call(context.Background(), &otc.CallRequest{ToolID: schemaProbeID, Input: json.RawMessage(in)})
				assert.NoError(t, err, "input %s", in)
			}
			for in, key := range tt.reject {
				errs := invalidParameters(t, reg, in)
				assert.Contains(t, errs, key, "input %s", in)
			}
		})
	}
}

func keysOf[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

func TestSchemaRequiredOrderFollowsFields(t *testing.T) {
	t.Parallel()
	reg := registerSchemaProbe[struct {
		B string `json:"b" jsonschema:"description=Second letter."`
		A string `json:"a" jsonschema:"description=First letter."`
		C string `json:"c,omitempty" jsonschema:"description=Third letter."`
	}](t)
	// The seeds list required parameters in declaration order.
	assert.Equal(t, []string{"b", "a"}, decodeParameters(t, reg).Required)
}

func TestSchemaSameTypeTwiceIsNotRecursion(t *testing.T) {
	t.Parallel()
	// Two fields of one struct type share no path: the recursion check must
	// not mistake them for a cycle.
	reg := registerSchemaProbe[struct {
		From schemaAddress   `json:"from" jsonschema:"description=Origin."`
		To   schemaAddress   `json:"to" jsonschema:"description=Destination."`
		Via  []schemaAddress `json:"via" jsonschema:"description=Stops."`
	}](t)
	p := decodeParameters(t, reg)
	assert.JSONEq(t, string(p.Properties["from"]), replaceDescription(t, p.Properties["to"], "Origin."))
}

// replaceDescription returns schema with its description set to d.
func replaceDescription(t *testing.T, schema json.RawMessage, d string) string {
	t.Helper()
	var m map[string]any
	require.NoError(t, json.Unmarshal(schema, &m))
	m["description"] = d
	b, err := json.Marshal(m)
	require.NoError(t, err)
	return string(b)
}

func TestSchemaWithoutParameters(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name     string
		register func(*testing.T) *otc.Registry
		want     string
	}{
		{
			// SPEC §3: parameters is present even for a tool with no input.
			name:     "empty_struct",
			register: registerSchemaProbe[struct{}],
			want:     `{"type":"object","properties":{},"additionalProperties":false}`,
		},
		{
			name:     "no_output_as_input",
			register: registerSchemaProbe[otc.NoOutput],
			want:     `{"type":"object","properties":{},"additionalProperties":false}`,
		},
		{
			// A map accepts any object, so it leaves additionalProperties open.
			name:     "map_of_any",
			register: registerSchemaProbe[map[string]any],
			want:     `{"type":"object"}`,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			reg := tt.register(t)
			assert.JSONEq(t, tt.want, string(onlyTool(t, reg).InputSchema.Parameters))
			for _, in := range []string{``, `null`, `{}`} {
				_, err := reg.Call(context.Background(), &otc.CallRequest{ToolID: schemaProbeID, Input: json.RawMessage(in)})
				assert.NoError(t, err, "input %q", in)
			}
		})
	}
}

func TestSchemaParametersCarryNoReferences(t *testing.T) {
	t.Parallel()
	// A type used twice is written out twice, not as a $ref to $defs
	// (SPEC §3: inline only, no $schema inside).
	reg := registerSchemaProbe[struct {
		From schemaAddress  `json:"from" jsonschema:"description=Origin."`
		To   *schemaAddress `json:"to" jsonschema:"description=Destination."`
	}](t)
	params := string(onlyTool(t, reg).InputSchema.Parameters)
	for _, kw := range []string{`"$ref"`, `"$defs"`, `"definitions"`, `"$schema"`, `"$id"`} {
		assert.NotContains(t, params, kw)
	}
}

// handWrittenInput is a valid hand-written input schema.
const handWrittenInput = `{
	"type": "object",
	"properties": {
		"q": {"type": "string", "description": "The query.", "minLength": 1},
		"$ref": {"type": "string", "description": "A parameter that happens to be named $ref."}
	},
	"required": ["q"]
}`

func TestHandWrittenInputSchema(t *testing.T) {
	t.Parallel()
	reg := otc.NewRegistry(nil)
	var got map[string]any
	err := otc.Register(reg, otc.Tool{
		ID: "Search.Query", Version: "1.0.0", Description: "Searches.",
		InputSchema: json.RawMessage(handWrittenInput),
	}, func(_ context.Context, in map[string]any) (otc.NoOutput, error) {
		got = in
		return otc.NoOutput{}, nil
	})
	require.NoError(t, err)

	t.Run("catalog_uses_it_verbatim", func(t *testing.T) {
		assert.JSONEq(t, handWrittenInput, string(onlyTool(t, reg).InputSchema.Parameters))
	})
	t.Run("validation_follows_it", func(t *testing.T) {
		call := func(in string) error {
			_, err := reg.Call(context.Background(), &otc.CallRequest{ToolID: "Search.Query", Input: json.RawMessage(in)})
			return err
		}
		var e *otc.Error
		require.ErrorAs(t, call(`{}`), &e)
		assert.Equal(t, otc.CodeInvalidInput, e.Code)
		assert.Contains(t, e.ParameterErrors, "q")

		require.ErrorAs(t, call(`{"q":""}`), &e)
		assert.Contains(t, e.ParameterErrors, "q")

		// The schema leaves additionalProperties open, so an extra key passes
		// and reaches the function.
		require.NoError(t, call(`{"q":"go","extra":1}`))
		assert.Equal(t, map[string]any{"q": "go", "extra": 1.0}, got)
	})
}

func TestHandWrittenInputSchemaWithStructInput(t *testing.T) {
	t.Parallel()
	type in struct {
		Q string `json:"q"`
	}
	reg := otc.NewRegistry(nil)
	var got in
	err := otc.Register(reg, otc.Tool{
		ID: "Search.Query", Version: "1.0.0", Description: "Searches.",
		// The hand-written schema replaces the reflected one, so the Go
		// field needs no description tag.
		InputSchema: json.RawMessage(`{"type":"object","properties":{"q":{"type":"string","description":"The query."}},"required":["q"],"additionalProperties":false}`),
	}, func(_ context.Context, v in) (otc.NoOutput, error) {
		got = v
		return otc.NoOutput{}, nil
	})
	require.NoError(t, err)
	_, err = reg.Call(context.Background(), &otc.CallRequest{ToolID: "Search.Query", Input: json.RawMessage(`{"q":"go"}`)})
	require.NoError(t, err)
	assert.Equal(t, "go", got.Q)
}

func TestOutputSchema(t *testing.T) {
	t.Parallel()
	type sum struct {
		Total float64 `json:"total" jsonschema:"description=The total."`
	}
	tests := []struct {
		name     string
		register func(*otc.Registry) error
		want     string // the output_schema as it appears in the catalog
		value    string // the value of a successful call; "" when absent
	}{
		{
			name: "reflected_scalar",
			register: func(r *otc.Registry) error {
				return otc.Register(r, otc.Tool{ID: "Out.Probe", Version: "1.0.0", Description: "d"},
					func(context.Context, otc.NoOutput) (float64, error) { return 15, nil })
			},
			want: `{"type":"number"}`, value: `15`,
		},
		{
			// The seed's Calculator.Add: {"type":"number","description":"The sum of the two numbers."}.
			name: "output_description",
			register: func(r *otc.Registry) error {
				return otc.Register(r, otc.Tool{ID: "Out.Probe", Version: "1.0.0", Description: "d", OutputDescription: "The sum of the two numbers."},
					func(context.Context, otc.NoOutput) (float64, error) { return 15, nil })
			},
			want: `{"type":"number","description":"The sum of the two numbers."}`, value: `15`,
		},
		{
			name: "output_description_on_struct",
			register: func(r *otc.Registry) error {
				return otc.Register(r, otc.Tool{ID: "Out.Probe", Version: "1.0.0", Description: "d", OutputDescription: "The result."},
					func(context.Context, otc.NoOutput) (sum, error) { return sum{Total: 2}, nil })
			},
			want: `{"type":"object","description":"The result.","properties":{"total":{"type":"number","description":"The total."}},
				"required":["total"],"additionalProperties":false}`,
			value: `{"total":2}`,
		},
		{
			name: "no_output",
			register: func(r *otc.Registry) error {
				return otc.Register(r, otc.Tool{ID: "Out.Probe", Version: "1.0.0", Description: "d", OutputDescription: "ignored"},
					func(context.Context, otc.NoOutput) (otc.NoOutput, error) { return otc.NoOutput{}, nil })
			},
			want: `null`,
		},
		{
			name: "empty_struct_output",
			register: func(r *otc.Registry) error {
				return otc.Register(r, otc.Tool{ID: "Out.Probe", Version: "1.0.0", Description: "d"},
					func(context.Context, otc.NoOutput) (struct{}, error) { return struct{}{}, nil })
			},
			want: `null`,
		},
		{
			name: "any_output",
			register: func(r *otc.Registry) error {
				return otc.Register(r, otc.Tool{ID: "Out.Probe", Version: "1.0.0", Description: "d"},
					func(context.Context, otc.NoOutput) (any, error) { return []any{"a", 1}, nil })
			},
			want: `{}`, value: `["a",1]`,
		},
		{
			name: "output_schema_null",
			register: func(r *otc.Registry) error {
				return otc.Register(r, otc.Tool{ID: "Out.Probe", Version: "1.0.0", Description: "d", OutputSchema: json.RawMessage(`null`)},
					func(context.Context, otc.NoOutput) (float64, error) { return 15, nil })
			},
			// The declared schema wins: the value is not sent.
			want: `null`,
		},
		{
			name: "output_schema_custom",
			register: func(r *otc.Registry) error {
				return otc.Register(r, otc.Tool{
					ID: "Out.Probe", Version: "1.0.0", Description: "d",
					OutputSchema:      json.RawMessage(`{ "type": "integer", "minimum": 0, "description": "A count." }`),
					OutputDescription: "ignored when OutputSchema is set",
				}, func(context.Context, otc.NoOutput) (int, error) { return 3, nil })
			},
			want: `{"type":"integer","minimum":0,"description":"A count."}`, value: `3`,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			reg := otc.NewRegistry(nil)
			require.NoError(t, tt.register(reg))
			def := onlyTool(t, reg)
			encoded, err := json.Marshal(def)
			require.NoError(t, err)
			var wire struct {
				OutputSchema json.RawMessage `json:"output_schema"`
			}
			require.NoError(t, json.Unmarshal(encoded, &wire))
			assert.JSONEq(t, tt.want, string(wire.OutputSchema))

			res, err := reg.Call(context.Background(), &otc.CallRequest{ToolID: "Out.Probe"})
			require.NoError(t, err)
			require.Nil(t, res.Error)
			if tt.value == "" {
				assert.Nil(t, res.Value)
			} else {
				assert.JSONEq(t, tt.value, string(res.Value))
			}
		})
	}
}

func TestDefinitionFields(t *testing.T) {
	t.Parallel()
	reg := otc.NewRegistry(nil)
	err := otc.Register(reg, otc.Tool{ID: "Calculator.Add", Version: "1.0.0", Description: "Adds two numbers together.", OutputDescription: "The sum of the two numbers."},
		func(_ context.Context, in struct {
			A float64 `json:"a" jsonschema:"description=The first number to add."`
			B float64 `json:"b" jsonschema:"description=The second number to add."`
		}) (float64, error) {
			return in.A + in.B, nil
		})
	require.NoError(t, err)
	encoded, err := json.Marshal(onlyTool(t, reg))
	require.NoError(t, err)
	// The seed's catalog entry for Calculator.Add (000_…), plus the
	// additionalProperties the reflector adds to a struct.
	assert.JSONEq(t, `{
		"id": "Calculator.Add@1.0.0",
		"name": "Calculator_Add",
		"description": "Adds two numbers together.",
		"version": "1.0.0",
		"input_schema": {"parameters": {
			"type": "object",
			"properties": {
				"a": {"type": "number", "description": "The first number to add."},
				"b": {"type": "number", "description": "The second number to add."}
			},
			"required": ["a", "b"],
			"additionalProperties": false
		}},
		"output_schema": {"type": "number", "description": "The sum of the two numbers."}
	}`, string(encoded))
}

func TestDecodeErrorsAfterValidation(t *testing.T) {
	t.Parallel()
	// Values the schema accepts but the Go type cannot hold are still the
	// caller's mistake: a validation error, not a tool failure.
	reg := registerSchemaProbe[struct {
		N int     `json:"n,omitempty" jsonschema:"description=An int."`
		F float64 `json:"f,omitempty" jsonschema:"description=A float."`
		U uint8   `json:"u,omitempty" jsonschema:"description=A byte."`
	}](t)
	tests := []struct {
		input string
		key   string
	}{
		{`{"n":1e20}`, "n"},
		{`{"n":1.5}`, "n"},
		{`{"f":1e400}`, "f"},
		{`{"u":256}`, "u"},
		{`{"u":-1}`, "u"},
	}
	for _, tt := range tests {
		t.Run(tt.input, func(t *testing.T) {
			t.Parallel()
			errs := invalidParameters(t, reg, tt.input)
			assert.Contains(t, errs, tt.key)
			assert.NotContains(t, errs[tt.key], "1e", "the message must not echo the value")
		})
	}
}

func TestValidationErrorMessagesNeverEchoValues(t *testing.T) {
	t.Parallel()
	reg := registerSchemaProbe[struct {
		Code string `json:"code" jsonschema:"description=A code.,pattern=^[0-9]{4}$,maxLength=4"`
	}](t)
	const secretish = "sk-live-0123456789"
	errs := invalidParameters(t, reg, `{"code":"`+secretish+`"}`)
	require.Contains(t, errs, "code")
	assert.NotContains(t, errs["code"], secretish)
	_, err := reg.Call(context.Background(), &otc.CallRequest{ToolID: schemaProbeID, Input: json.RawMessage(`{"code":"` + secretish + `"}`)})
	assert.NotContains(t, err.Error(), secretish)
	assert.False(t, errors.Is(err, otc.ErrToolNotFound))
}
