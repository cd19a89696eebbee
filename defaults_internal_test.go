package otc

import (
	"context"
	"encoding/json"
	"fmt"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/otcgo/otc/internal/jsonparse"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestApplyDefaults(t *testing.T) {
	mapInput := reflect.TypeFor[map[string]any]()
	defaults, err := parameterDefaults([]byte(`{"type":"object","properties":{
		"a":{"type":"integer","default":1},
		"b":{"anyOf":[{"type":"string"},{"type":"null"}],"default":"x y"},
		"c":{"type":"integer","default":3},
		"d":{"type":"integer"}},"required":["c"]}`), mapInput, nil, false)
	require.NoError(t, err)
	require.Len(t, defaults, 2, "required and undefaulted properties have none")
	for in, want := range map[string]string{
		`{}`:                 `{"a":1,"b":"x y"}`,
		` { } `:              `{"a":1,"b":"x y"}`,
		`{"a":5}`:            `{"a":5,"b":"x y"}`,
		`{"a":null,"b":"z"}`: `{"a":null,"b":"z","a":1}`,
		`{"a":2,"b":"z"}`:    `{"a":2,"b":"z"}`,
		"{\"d\":4\n}":        `{"d":4,"a":1,"b":"x y"}`,
	} {
		d, err := jsonparse.Parse([]byte(in))
		require.NoError(t, err)
		assert.Equal(t, want, string(applyDefaults(defaults, d, 0, d.Raw(0))), "input %s", in)
		jsonparse.Release(d)
	}
	strict, err := parameterDefaults([]byte(`{"properties":{"a":{"default":1}}}`), mapInput, nil, true)
	require.NoError(t, err)
	d, err := jsonparse.Parse([]byte(`{"a":null}`))
	require.NoError(t, err)
	assert.Equal(t, `{"a":null}`, string(applyDefaults(strict, d, 0, d.Raw(0))), "with StrictNulls a null is a value")
}

// TestPlanDefaults: the decode plan inserts the defaults of the members
// an object lacks, and replaces a null, at every depth, keeping the text
// valid JSON whatever the object held and whatever else was edited.
func TestPlanDefaults(t *testing.T) {
	type inner struct {
		A int    `json:"a"`
		B string `json:"b"`
	}
	type outer struct {
		A int              `json:"a"`
		B string           `json:"b"`
		C int              `json:"c"`
		N *inner           `json:"n"`
		L []inner          `json:"l"`
		M map[string]inner `json:"m"`
	}
	// A hand-written schema that lets unknown members through, so that
	// a member differing only in case reaches the plan, which drops it.
	object := `{"type":"object","properties":{"a":{"type":"integer","default":1},"b":{"type":"string","default":"x"}}}`
	schema := `{"type":"object","properties":{"a":{"type":"integer","default":1},"b":{"type":"string","default":"x"},"c":{"type":"integer"},
		"n":{"anyOf":[` + object + `,{"type":"null"}]},"l":{"type":"array","items":` + object + `},"m":{"type":"object","additionalProperties":` + object + `}}}`
	in := reflect.TypeFor[outer]()
	plan := newDecodePlan(in)
	top, err := parameterDefaults([]byte(schema), in, plan, false)
	require.NoError(t, err)
	require.Nil(t, top, "a struct input's defaults are on its plan")
	for input, want := range map[string]string{
		`{}`:                       `{"a":1,"b":"x"}`,
		` { } `:                    `{ "a":1,"b":"x"}`,
		`{"A":5}`:                  `{"a":1,"b":"x"}`,
		`{"a":null, "B":"y"}`:      `{"a":1,"b":"x"}`,
		`{ "c": 3 }`:               `{ "c": 3 ,"a":1,"b":"x"}`,
		`{"a":2,"b":"y"}`:          `{"a":2,"b":"y"}`,
		`{"a":2,"b":"y","n":{}}`:   `{"a":2,"b":"y","n":{"a":1,"b":"x"}}`,
		`{"a":2,"b":"y","n":null}`: `{"a":2,"b":"y","n":null}`,
		`{"a":2,"b":"y","l":[{},{"a":3,"b":null}]}`: `{"a":2,"b":"y","l":[{"a":1,"b":"x"},{"a":3,"b":"x"}]}`,
		`{"a":2,"b":"y","m":{"k":{"b":"z"}}}`:       `{"a":2,"b":"y","m":{"k":{"b":"z","a":1}}}`,
		`{"a":2.0,"b":"y","n":{"a":1e1}}`:           `{"a":2,"b":"y","n":{"a":10,"b":"x"}}`,
	} {
		d, err := jsonparse.Parse([]byte(input))
		require.NoError(t, err)
		got := d.Raw(0)
		if edits := plan.edits(d, 0, nil); edits != nil {
			got = applyEdits(d, 0, edits)
		}
		assert.Equal(t, want, string(got), "input %s", input)
		var o outer
		assert.NoError(t, json.Unmarshal(got, &o), "input %s", input)
		jsonparse.Release(d)
	}

	t.Run("more than 64 defaults", func(t *testing.T) {
		var fields []reflect.StructField
		var props []string
		for i := range 70 {
			fields = append(fields, reflect.StructField{Name: fmt.Sprintf("F%d", i), Type: reflect.TypeFor[int](), Tag: reflect.StructTag(fmt.Sprintf(`json:"f%d"`, i))})
			props = append(props, fmt.Sprintf(`"f%d":{"type":"integer","default":%d}`, i, i))
		}
		in := reflect.StructOf(fields)
		plan := newDecodePlan(in)
		_, err := parameterDefaults([]byte(`{"type":"object","properties":{`+strings.Join(props, ",")+`}}`), in, plan, false)
		require.NoError(t, err)
		d, err := jsonparse.Parse([]byte(`{"f1":-1,"f66":-66,"f67":null}`))
		require.NoError(t, err)
		defer jsonparse.Release(d)
		var got map[string]int
		require.NoError(t, json.Unmarshal(applyEdits(d, 0, plan.edits(d, 0, nil)), &got))
		assert.Len(t, got, 70)
		assert.Equal(t, -1, got["f1"])
		assert.Equal(t, 0, got["f0"])
		assert.Equal(t, 65, got["f65"])
		assert.Equal(t, -66, got["f66"])
		assert.Equal(t, 67, got["f67"])
		assert.Equal(t, 69, got["f69"])
	})
}

// TestDefaultsCheckedAtRegistration: a default the parameter's own schema
// refuses, or that does not decode into its field, fails registration,
// naming the parameter; a duration's default reaches the decoder as its
// nanoseconds.
func TestDefaultsCheckedAtRegistration(t *testing.T) {
	type nested struct {
		N int `json:"n,omitempty" jsonschema:"description=N.,minimum=1,default=0"`
	}
	for name, tc := range map[string]struct {
		register func(r *Registry) error
		message  string
	}{
		"below the minimum": {typeTool[struct {
			N int `json:"n,omitempty" jsonschema:"description=N.,minimum=1,default=0"`
		}], `the default of parameter v.n, 0, is refused by the parameter's own schema (Must be at least 1)`},
		"outside the enum": {typeTool[struct {
			S string `json:"s,omitempty" jsonschema:"description=S.,enum=a,enum=b,default=c"`
		}], `the default of parameter v.s, "c", is refused by the parameter's own schema (Must be one of: "a", "b")`},
		"not a duration": {typeTool[struct {
			D time.Duration `json:"d,omitempty" jsonschema:"description=D.,default=5 minutes"`
		}], `the default of parameter v.d, "5 minutes", is refused by the parameter's own schema (Must be a duration such as`},
		"refused by UnmarshalText": {typeTool[struct {
			L level `json:"l,omitempty" jsonschema:"description=L.,default=medium"`
		}], `the default of parameter v.l, "medium", cannot be read as the field's type otc.level: unknown level "medium"`},
		"inside an array": {typeTool[[]nested], `the default of parameter v[].n, 0, is refused`},
		"an enum value refused by UnmarshalText": {typeTool[struct {
			L level `json:"l" jsonschema:"description=L.,enum=low,enum=medium"`
		}], `the enum value "medium" of parameter v.l cannot be read as otc.level: unknown level "medium"; list only values the type reads`},
		"an item enum value refused by UnmarshalText": {typeTool[struct {
			L []level `json:"l,omitempty" jsonschema:"description=L.,enum=low,enum=medium"`
		}], `the enum value "medium" of parameter v.l cannot be read as otc.level`},
		"hand-written": {func(r *Registry) error {
			return Register(r, Tool{ID: "Types.Probe", Version: "1.0.0", Description: "Probes.",
				InputSchema: json.RawMessage(`{"type":"object","properties":{"a":{"type":"integer","description":"A.","default":"x"}}}`)},
				func(context.Context, map[string]any) (string, error) { return "", nil })
		}, `the default of parameter a, "x", is refused by the parameter's own schema (Must be an integer)`},
	} {
		t.Run(name, func(t *testing.T) {
			err := tc.register(NewRegistry(nil))
			require.Error(t, err)
			assert.Contains(t, err.Error(), tc.message)
		})
	}

	r := NewRegistry(nil)
	require.NoError(t, typeTool[struct {
		D time.Duration `json:"d,omitempty" jsonschema:"description=D.,default=90s"`
	}](r))
	res, err := r.Call(context.Background(), &CallRequest{ToolID: "Types.Probe", Input: json.RawMessage(`{"v":{}}`)})
	require.NoError(t, err)
	assert.JSONEq(t, `"{1m30s}"`, string(res.Value))
}
