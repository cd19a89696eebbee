package decode

import (
	"encoding/json"
	"net"
	"reflect"
	"testing"
	"time"

	"github.com/otcgo/otc/internal/jsonparse"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

type directCelsius float64

// directInput has a field of every kind the direct decoder sets, and the
// field shapes encoding/json treats specially.
type directInput struct {
	B        bool          `json:"b"`
	S        string        `json:"s"`
	I        int           `json:"i"`
	I8       int8          `json:"i8"`
	I64      int64         `json:"i64"`
	U        uint          `json:"u"`
	U8       uint8         `json:"u8"`
	F        float64       `json:"f"`
	F32      float32       `json:"f32"`
	C        directCelsius `json:"c"`
	PF       *float64      `json:"pf,omitempty"`
	PS       *string       `json:"ps"`
	PB       *bool         `json:"pb"`
	Untagged int
	Skipped  int `json:"-"`
}

// decodeBoth decodes input, prepared by the decode plan as the pipeline
// prepares it, directly and with encoding/json, and returns whether the
// direct decoder took it and both results.
func decodeBoth(t *testing.T, input string) (ok bool, direct, reference directInput, refErr error) {
	t.Helper()
	doc, err := jsonparse.Parse([]byte(input))
	if err != nil {
		t.Skip("not JSON")
	}
	defer jsonparse.Release(doc)
	data := doc.Raw(0)
	plan := NewPlan(reflect.TypeFor[directInput]())
	if edits := plan.Edits(doc, 0, nil); edits != nil {
		data = ApplyEdits(doc, 0, edits)
	}
	dd := NewDirect(reflect.TypeFor[directInput]())
	require.NotNil(t, dd)
	ok = dd.decode(data, reflect.ValueOf(&direct).Elem())
	refErr = json.Unmarshal(data, &reference)
	return ok, direct, reference, refErr
}

func TestDirectDecoderMatchesEncodingJSON(t *testing.T) {
	for _, tc := range []struct {
		input  string
		direct bool // whether the direct decoder takes it
	}{
		{`{}`, true},
		{`{"b":true,"s":"plain","i":-42,"i8":127,"i64":-9007199254740993,"u":7,"u8":255,"f":10,"f32":1.5,"c":-40}`, true},
		{` { "f" : 1.25e2 , "i" : 3 } `, true},
		{`{"f":-0}`, true},
		{`{"f":123456789012345}`, true},
		{`{"f":1234567890123456789}`, true},
		{`{"f":0.1}`, true},
		{`{"pf":2.5,"ps":"x","pb":false}`, true},
		{`{"pf":null,"ps":null,"pb":null,"i":null,"s":null}`, true},
		{`{"Untagged":5,"-":6,"Skipped":9}`, true},
		{`{"unknown":{"deep":[1,{"x":"]}"}]},"i":1}`, true},
		{`{"i":1,"i":2}`, true},
		{`{"s":"héllo wörld"}`, true},
		{`{"i":5.0}`, true},       // rewritten in integer form by the plan
		{`{"I":5,"S":"x"}`, true}, // dropped by the plan: encoding/json would fold case
		// Left to encoding/json.
		{`{"s":"tab\there"}`, false},
		{`{"s":"\u00e9"}`, false},
		{`{"i8":128}`, false},
		{`{"u8":-1}`, false},
		{`{"u":-1}`, false},
		{`{"i":1.5}`, false},
		{`{"i":"1"}`, false},
		{`{"b":1}`, false},
		{`{"s":1}`, false},
		{`{"f":"1"}`, false},
		{`{"f":1e400}`, false},
		{`{"f32":1e40}`, false},
		{`{"i64":12345678901234567890}`, false},
		{`{"pf":"x"}`, false},
		{`{"k\u0065y":1}`, false},
		{`[1]`, false},
		{`null`, false},
	} {
		t.Run(tc.input, func(t *testing.T) {
			ok, direct, reference, refErr := decodeBoth(t, tc.input)
			assert.Equal(t, tc.direct, ok, "whether the direct decoder takes it")
			if ok {
				require.NoError(t, refErr, "encoding/json refuses what the direct decoder took")
				assert.Equal(t, reference, direct)
			}
		})
	}
}

// FuzzDirectDecode checks that whatever the direct decoder takes, it
// decodes as encoding/json does.
func FuzzDirectDecode(f *testing.F) {
	for _, s := range []string{
		`{"b":true,"s":"x","i":-1,"u8":200,"f":1e-7,"f32":3.4e38,"c":2,"pf":1,"ps":"y","pb":true}`,
		`{"i":1e2,"u":0.0,"Untagged":-0}`,
		`{"f":-0.0,"s":"\ud83d\ude00","x":[{"a":"}"}]}`,
		`{"pf":null,"i64":-999999999999999999}`,
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, input string) {
		if !json.Valid([]byte(input)) {
			return
		}
		ok, direct, reference, refErr := decodeBoth(t, input)
		if ok {
			require.NoError(t, refErr, "encoding/json refuses what the direct decoder took")
			require.Equal(t, reference, direct)
		}
	})
}

func TestDirectDecoderTypes(t *testing.T) {
	type embedded struct{ A int }
	for _, tc := range []struct {
		name string
		typ  reflect.Type
		ok   bool
	}{
		{"scalars", reflect.TypeFor[directInput](), true},
		{"empty struct", reflect.TypeFor[struct{}](), true},
		{"not a struct", reflect.TypeFor[map[string]any](), false},
		{"pointer to struct", reflect.TypeFor[*directInput](), false},
		{"embedded struct", reflect.TypeFor[struct{ embedded }](), false},
		{"nested struct", reflect.TypeFor[struct{ In directInput }](), false},
		{"slice", reflect.TypeFor[struct{ X []int }](), false},
		{"duration", reflect.TypeFor[struct{ D time.Duration }](), true},
		{"time", reflect.TypeFor[struct{ T time.Time }](), false},
		{"text unmarshaler", reflect.TypeFor[struct{ IP net.IP }](), false},
		{"string option", reflect.TypeFor[struct {
			N int `json:"n,string"`
		}](), false},
		{"odd tag name", reflect.TypeFor[struct {
			N int `json:"n m"`
		}](), false},
		{"shared name", reflect.StructOf([]reflect.StructField{ // built, for vet refuses it written
			{Name: "A", Type: reflect.TypeFor[int](), Tag: `json:"x"`},
			{Name: "B", Type: reflect.TypeFor[int](), Tag: `json:"x"`},
		}), false},
		{"interface", reflect.TypeFor[struct{ V any }](), false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			assert.Equal(t, tc.ok, NewDirect(tc.typ) != nil)
		})
	}
}

// TestDirectDecoderFieldLookup decodes through both ways of finding a
// field: comparing names in turn (few fields) and the map (many).
func TestDirectDecoderFieldLookup(t *testing.T) {
	type few struct {
		A float64 `json:"a"`
		B float64 `json:"b"`
	}
	d := NewDirect(reflect.TypeFor[few]())
	require.NotNil(t, d)
	assert.Nil(t, d.index, "two fields are compared in turn")
	var f few
	require.True(t, d.decode([]byte(`{"x":1,"b":5,"a":10}`), reflect.ValueOf(&f).Elem()))
	assert.Equal(t, few{A: 10, B: 5}, f)

	d = NewDirect(reflect.TypeFor[directInput]())
	require.NotNil(t, d.index, "fourteen fields are looked up in a map")
	var in directInput
	require.True(t, d.decode([]byte(`{"x":1,"pb":true,"Untagged":3,"-":4}`), reflect.ValueOf(&in).Elem()))
	assert.Equal(t, directInput{PB: new(true), Untagged: 3}, in)
}
