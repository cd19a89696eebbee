package otc

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestApplyDefaults(t *testing.T) {
	defaults := parameterDefaults([]byte(`{"type":"object","properties":{
		"a":{"type":"integer","default":1},
		"b":{"anyOf":[{"type":"string"},{"type":"null"}],"default":"x y"},
		"c":{"type":"integer","default":3},
		"d":{"type":"integer"}},"required":["c"]}`), false)
	require.Len(t, defaults, 2, "required and undefaulted properties have none")
	for in, want := range map[string]string{
		`{}`:                 `{"a":1,"b":"x y"}`,
		` { } `:              `{"a":1,"b":"x y"}`,
		`{"a":5}`:            `{"a":5,"b":"x y"}`,
		`{"a":null,"b":"z"}`: `{"a":null,"b":"z","a":1}`,
		`{"a":2,"b":"z"}`:    `{"a":2,"b":"z"}`,
		"{\"d\":4\n}":        `{"d":4,"a":1,"b":"x y"}`,
	} {
		d, err := parseJSON([]byte(in))
		require.NoError(t, err)
		assert.Equal(t, want, string(applyDefaults(defaults, d, 0, d.raw(0))), "input %s", in)
		releaseDocument(d)
	}
	strict := parameterDefaults([]byte(`{"properties":{"a":{"default":1}}}`), true)
	d, err := parseJSON([]byte(`{"a":null}`))
	require.NoError(t, err)
	assert.Equal(t, `{"a":null}`, string(applyDefaults(strict, d, 0, d.raw(0))), "with StrictNulls a null is a value")
}
