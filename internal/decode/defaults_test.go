package decode

import (
	"encoding/json"
	"fmt"
	"reflect"
	"strings"
	"testing"

	"github.com/otcgo/otc/internal/jsonparse"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestApplyDefaults(t *testing.T) {
	mapInput := reflect.TypeFor[map[string]any]()
	defaults, err := Defaults([]byte(`{"type":"object","properties":{
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
		assert.Equal(t, want, string(ApplyDefaults(defaults, d, 0, d.Raw(0))), "input %s", in)
		jsonparse.Release(d)
	}
	strict, err := Defaults([]byte(`{"properties":{"a":{"default":1}}}`), mapInput, nil, true)
	require.NoError(t, err)
	d, err := jsonparse.Parse([]byte(`{"a":null}`))
	require.NoError(t, err)
	assert.Equal(t, `{"a":null}`, string(ApplyDefaults(strict, d, 0, d.Raw(0))), "with StrictNulls a null is a value")
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
	plan := NewPlan(in)
	top, err := Defaults([]byte(schema), in, plan, false)
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
		if edits := plan.Edits(d, 0, nil); edits != nil {
			got = ApplyEdits(d, 0, edits)
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
		plan := NewPlan(in)
		_, err := Defaults([]byte(`{"type":"object","properties":{`+strings.Join(props, ",")+`}}`), in, plan, false)
		require.NoError(t, err)
		d, err := jsonparse.Parse([]byte(`{"f1":-1,"f66":-66,"f67":null}`))
		require.NoError(t, err)
		defer jsonparse.Release(d)
		var got map[string]int
		require.NoError(t, json.Unmarshal(ApplyEdits(d, 0, plan.Edits(d, 0, nil)), &got))
		assert.Len(t, got, 70)
		assert.Equal(t, -1, got["f1"])
		assert.Equal(t, 0, got["f0"])
		assert.Equal(t, 65, got["f65"])
		assert.Equal(t, -66, got["f66"])
		assert.Equal(t, 67, got["f67"])
		assert.Equal(t, 69, got["f69"])
	})
}
