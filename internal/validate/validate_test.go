package validate

import (
	"encoding/json"
	"fmt"
	"math/big"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/otcgo/otc/internal/jsonparse"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/xeipuuv/gojsonschema"
)

// The validator is checked three ways: its exact decimal arithmetic
// against math/big, its verdicts against gojsonschema (an independent
// implementation of the same drafts) on fuzzed inputs, and its messages
// against a table.

// ratOf reads a JSON number exactly.
func ratOf(t testing.TB, lit string) *big.Rat {
	r, ok := new(big.Rat).SetString(lit)
	require.True(t, ok, lit)
	return r
}

// randomNumber writes a JSON number with few digits and a small exponent,
// so that many pairs compare equal or close.
func randomNumber(r *rand.Rand) string {
	var b strings.Builder
	if r.IntN(3) == 0 {
		b.WriteByte('-')
	}
	if r.IntN(4) == 0 {
		b.WriteByte('0')
	} else {
		b.WriteByte(byte('1' + r.IntN(9)))
		for range r.IntN(3) {
			b.WriteByte(byte('0' + r.IntN(10)))
		}
	}
	if r.IntN(2) == 0 {
		b.WriteByte('.')
		for range 1 + r.IntN(3) {
			b.WriteByte(byte('0' + r.IntN(10)))
		}
	}
	if r.IntN(2) == 0 {
		fmt.Fprintf(&b, "e%d", r.IntN(9)-4)
	}
	return b.String()
}

func TestDecimalAgainstBigRat(t *testing.T) {
	t.Parallel()
	r := rand.New(rand.NewPCG(1, 2))
	for range 20000 {
		a, b := randomNumber(r), randomNumber(r)
		da, db := ParseDecimal([]byte(a), nil), ParseDecimal([]byte(b), nil)
		ra, rb := ratOf(t, a), ratOf(t, b)
		require.Equal(t, ra.Cmp(rb), da.cmp(db), "cmp(%s, %s)", a, b)
		require.Equal(t, ra.IsInt(), da.integral(), "integral(%s)", a)
		if rb.Sign() > 0 {
			q := new(big.Rat).Quo(ra, rb)
			require.Equal(t, q.IsInt(), da.multipleOf(db), "multipleOf(%s, %s)", a, b)
		}
		if text, ok := da.IntegerText(nil); ok {
			require.True(t, ra.IsInt())
			require.Equal(t, ra.Num().String(), string(text), "integerText(%s)", a)
		}
	}
}

func TestDecimalEdges(t *testing.T) {
	t.Parallel()
	cmp := []struct {
		a, b string
		want int
	}{
		{"0", "-0.0e5", 0},
		{"1e999999999999999999999", "1e999999999999999999998", 0}, // both saturate: equally huge
		{"1e400", "1e300", 1},
		{"-1e400", "1e-400", -1},
		{"10000.0000000000000000000001", "10000", 1},
		{"123456789012345678901234567890", "123456789012345678901234567891", -1},
	}
	for _, c := range cmp {
		assert.Equal(t, c.want, ParseDecimal([]byte(c.a), nil).cmp(ParseDecimal([]byte(c.b), nil)), "cmp(%s, %s)", c.a, c.b)
	}
	multiple := []struct {
		v, m string
		want bool
	}{
		{"1.5e20", "7", false}, // float64 would say yes
		{"1.4e20", "7", true},
		{"0.3", "0.1", true}, // float64 would say no
		{"1e300", "0.01", true},
		{"1e-300", "0.01", false},
		{"123456789012345678901234567890", "1234567890123456789012345", false}, // a divisor past uint64
		{"1234567890123456789012345e5", "1234567890123456789012345", true},
		{"1e1000000000", "3", false},
		{"3e1000000000", "3", true},
		{"0", "0.7", true},
	}
	for _, c := range multiple {
		assert.Equal(t, c.want, ParseDecimal([]byte(c.v), nil).multipleOf(ParseDecimal([]byte(c.m), nil)), "multipleOf(%s, %s)", c.v, c.m)
	}
	for _, c := range []struct {
		lit, want string
		ok        bool
	}{
		{"5.0", "5", true}, {"1e3", "1000", true}, {"-2.50e1", "-25", true}, {"1.5", "", false},
		{"18446744073709551615", "18446744073709551615", true}, {"1e19", "10000000000000000000", true}, {"1e20", "", false},
	} {
		text, ok := ParseDecimal([]byte(c.lit), nil).IntegerText(nil)
		assert.Equal(t, c.ok, ok, c.lit)
		if ok {
			assert.Equal(t, c.want, string(text), c.lit)
		}
	}
}

// referenceSchemas exercise every keyword the validator implements. They
// avoid number-valued enum, const and uniqueItems, where gojsonschema
// compares numbers by their text (1.0 ≠ 1) and JSON Schema, like this
// validator, by value; and formats, where this validator is deliberately
// stricter.
var referenceSchemas = []string{
	`{"type":"object","properties":{"a":{"type":"number"},"b":{"type":"number"}},"required":["a","b"],"additionalProperties":false}`,
	`{"type":"object","properties":{"n":{"type":"integer","minimum":-3,"exclusiveMaximum":100.5,"multipleOf":0.5}}}`,
	`{"type":"object","properties":{"n":{"type":"number","exclusiveMinimum":0,"maximum":1e3,"multipleOf":3}}}`,
	`{"type":"object","properties":{"s":{"type":"string","minLength":2,"maxLength":5,"pattern":"^[a-zé]+$"}}}`,
	`{"type":"object","properties":{"e":{"enum":["red","green",null,true,{"k":"v"},["x"]]},"c":{"const":{"a":["b",null]}}}}`,
	`{"type":"object","properties":{"v":{"oneOf":[{"type":"string"},{"type":"null"}]},"w":{"anyOf":[{"type":"integer","minimum":1},{"type":"string","maxLength":2}]}}}`,
	`{"type":"object","properties":{"x":{"allOf":[{"type":"array"},{"minItems":1},{"maxItems":3}]},"y":{"not":{"type":"string"}}}}`,
	`{"type":"object","if":{"properties":{"kind":{"const":"a"}},"required":["kind"]},"then":{"required":["a"]},"else":{"required":["b"]}}`,
	`{"type":"object","patternProperties":{"^x-":{"type":"string"},"^n":{"type":"number"}},"additionalProperties":{"type":"boolean"},"propertyNames":{"maxLength":6}}`,
	`{"type":"object","minProperties":1,"maxProperties":3,"dependencies":{"a":["b"],"c":{"required":["d"]}}}`,
	`{"type":"object","properties":{"t":{"type":"array","items":[{"type":"string"},{"type":"integer"}],"additionalItems":false},"u":{"type":"array","items":{"type":"string"},"uniqueItems":true},"w":{"type":"array","contains":{"type":"integer","minimum":10}}}}`,
	`{"type":"object","properties":{"deep":{"type":"object","properties":{"list":{"type":"array","items":{"type":"object","properties":{"id":{"type":"string"}},"required":["id"],"additionalProperties":false}}},"required":["list"]}}}`,
	`{"type":"object","properties":{"f":false,"t":true,"m":{"type":"object","additionalProperties":{"type":"integer"}}}}`,
	`{"type":["object","null"],"properties":{"a":{"type":["string","integer"]}}}`,
}

// referenceValid validates data against schema with gojsonschema.
func referenceValid(t testing.TB, schema *gojsonschema.Schema, data []byte) bool {
	res, err := schema.Validate(gojsonschema.NewBytesLoader(data))
	require.NoError(t, err)
	return res.Valid()
}

// compileBoth compiles schema with this validator and with gojsonschema.
func compileBoth(t testing.TB, schema string) (*Schema, *gojsonschema.Schema) {
	mine, err := Compile(json.RawMessage(schema))
	require.NoError(t, err, schema)
	sl := gojsonschema.NewSchemaLoader()
	sl.Draft = gojsonschema.Draft7
	sl.AutoDetect = false
	ref, err := sl.Compile(gojsonschema.NewStringLoader(schema))
	require.NoError(t, err, schema)
	return mine, ref
}

// comparable reports whether gojsonschema's verdict on d can be compared
// with this validator's: no repeated names (refused here, last-wins
// there) and no exponent so large that gojsonschema's exact rationals
// would take seconds.
func comparable(d *jsonparse.Document) bool {
	if d.Repeated {
		return false
	}
	for i := range d.Nodes {
		if d.Nodes[i].Kind == jsonparse.KindNumber {
			if p := ParseDecimal(d.Raw(int32(i)), nil).point; p > 400 || p < -400 {
				return false
			}
		}
	}
	return true
}

var referenceInputs = []string{
	`{}`, `{"a":1,"b":2}`, `{"a":1}`, `{"a":1,"b":2,"c":3}`, `{"a":"1","b":2}`, `null`, `[]`, `"x"`,
	`{"n":4.5}`, `{"n":-3}`, `{"n":-3.5}`, `{"n":100.5}`, `{"n":100}`, `{"n":9}`, `{"n":0}`, `{"n":1e3}`, `{"n":1.5e2}`,
	`{"s":"ab"}`, `{"s":"a"}`, `{"s":"abcdef"}`, `{"s":"éé"}`, `{"s":"AB"}`, `{"s":"\u00e9\u00e9"}`,
	`{"e":"red"}`, `{"e":"blue"}`, `{"e":null}`, `{"e":{"k":"v"}}`, `{"e":["x"]}`, `{"c":{"a":["b",null]}}`, `{"c":{"a":["b"]}}`,
	`{"v":null}`, `{"v":"s"}`, `{"v":1}`, `{"w":1}`, `{"w":0}`, `{"w":"ab"}`, `{"w":"abc"}`, `{"w":1.5}`,
	`{"x":[1]}`, `{"x":[]}`, `{"x":[1,2,3,4]}`, `{"y":"s"}`, `{"y":1}`,
	`{"kind":"a","a":1}`, `{"kind":"a","b":1}`, `{"kind":"b","b":1}`, `{"b":1}`,
	`{"x-a":"s","n1":2,"z":true}`, `{"x-a":1}`, `{"z":"s"}`, `{"toolongname":true}`,
	`{"a":1,"b":2}`, `{"a":1}`, `{"c":1,"d":2}`, `{"c":1}`, `{"a":1,"b":1,"c":1,"d":1}`,
	`{"t":["s",1]}`, `{"t":["s",1,2]}`, `{"t":[1,"s"]}`, `{"u":["a","b"]}`, `{"u":["a","a"]}`, `{"w":[1,10]}`, `{"w":[1,2]}`,
	`{"deep":{"list":[{"id":"x"},{"id":1}]}}`, `{"deep":{"list":[{"id":"x","extra":1}]}}`, `{"deep":{}}`,
	`{"f":1}`, `{"t":1}`, `{"m":{"a":1,"b":"x"}}`, `{"a":"s"}`, `{"a":1.5}`,
}

func TestValidateAgreesWithReference(t *testing.T) {
	t.Parallel()
	for _, schema := range referenceSchemas {
		mine, ref := compileBoth(t, schema)
		for _, in := range referenceInputs {
			d, err := jsonparse.Parse([]byte(in))
			require.NoError(t, err)
			errs := mine.Validate(d, 0)
			assert.Equal(t, referenceValid(t, ref, []byte(in)), errs == nil, "schema %s\ninput %s\nerrors %v", schema, in, errs)
			jsonparse.Release(d)
		}
	}
}

func FuzzValidate(f *testing.F) {
	for _, in := range referenceInputs {
		f.Add(uint8(0), []byte(in))
	}
	mine := make([]*Schema, len(referenceSchemas))
	refs := make([]*gojsonschema.Schema, len(referenceSchemas))
	for i, s := range referenceSchemas {
		mine[i], refs[i] = compileBoth(f, s)
	}
	f.Fuzz(func(t *testing.T, which uint8, data []byte) {
		d, err := jsonparse.Parse(data)
		if err != nil {
			return
		}
		defer jsonparse.Release(d)
		if !comparable(d) {
			return
		}
		i := int(which) % len(mine)
		errs := mine[i].Validate(d, 0)
		if want := referenceValid(t, refs[i], data); want != (errs == nil) {
			t.Fatalf("schema %s\ninput %s\nreference valid: %v; errors here: %v", referenceSchemas[i], data, want, errs)
		}
	})
}

func TestValidateMessages(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		name, schema, input string
		want                map[string]string
	}{
		{"type", `{"type":"object","properties":{"a":{"type":"number"}}}`, `{"a":"x"}`, map[string]string{"a": "Must be a number"}},
		{"nullable_wrong_type", `{"type":"object","properties":{"a":{"oneOf":[{"type":"string"},{"type":"null"}]}}}`, `{"a":1}`, map[string]string{"a": "Must be a string or null"}},
		{"nullable_inner_rule", `{"type":"object","properties":{"a":{"anyOf":[{"type":"integer","minimum":1},{"type":"null"}]}}}`, `{"a":0}`, map[string]string{"a": "Must be at least 1"}},
		{"two_candidates", `{"type":"object","properties":{"a":{"anyOf":[{"type":"integer","minimum":5},{"type":"number","maximum":-5}]}}}`, `{"a":0}`, map[string]string{"a": "Does not match any of the accepted forms"}},
		{"one_of_both", `{"type":"object","properties":{"a":{"oneOf":[{"type":"integer"},{"type":"number"}]}}}`, `{"a":1}`, map[string]string{"a": "Matches more than one of the accepted forms"}},
		{"enum", `{"type":"object","properties":{"a":{"enum":["x","y"]}}}`, `{"a":"z"}`, map[string]string{"a": `Must be one of: "x", "y"`}},
		{"enum_numbers_by_value", `{"type":"object","properties":{"a":{"enum":[1,2.5]}}}`, `{"a":1.0}`, nil},
		{"enum_number_miss", `{"type":"object","properties":{"a":{"enum":[1,2.5]}}}`, `{"a":2}`, map[string]string{"a": "Must be one of: 1, 2.5"}},
		{"const", `{"type":"object","properties":{"a":{"const":"x"}}}`, `{"a":"y"}`, map[string]string{"a": `Must be "x"`}},
		{"bounds", `{"type":"object","properties":{"a":{"minimum":1},"b":{"exclusiveMinimum":0},"c":{"maximum":10},"d":{"exclusiveMaximum":10},"e":{"multipleOf":0.25}}}`,
			`{"a":0,"b":0,"c":11,"d":10,"e":0.3}`, map[string]string{"a": "Must be at least 1", "b": "Must be greater than 0", "c": "Must be at most 10", "d": "Must be less than 10", "e": "Must be a multiple of 0.25"}},
		{"strings", `{"type":"object","properties":{"a":{"minLength":3},"b":{"maxLength":1},"c":{"pattern":"^[0-9]+$"},"d":{"format":"date-time"}}}`,
			`{"a":"é","b":"ab","c":"1a","d":"2026-11-22"}`, map[string]string{"a": "Must be at least 3 characters long", "b": "Must be at most 1 character long", "c": "Must match the pattern ^[0-9]+$", "d": "Must be a date-time in RFC 3339 form, such as 2026-11-22T10:00:00Z"}},
		{"arrays", `{"type":"object","properties":{"a":{"minItems":2},"b":{"maxItems":0},"c":{"uniqueItems":true},"d":{"contains":{"const":1}}}}`,
			`{"a":[1],"b":[1],"c":[1,1.0],"d":[2]}`, map[string]string{"a": "Must have at least 2 items", "b": "Must have at most 0 items", "c": "Must not contain duplicate items", "d": "Must contain at least one item of the accepted form"}},
		{"nested_paths", `{"type":"object","properties":{"o":{"type":"object","properties":{"l":{"type":"array","items":{"type":"integer"}}}}}}`,
			`{"o":{"l":[1,"x",3]}}`, map[string]string{"o.l.1": "Must be an integer"}},
		{"required_and_extra", `{"type":"object","properties":{"a":{}},"required":["a"],"additionalProperties":false}`,
			`{"b":1}`, map[string]string{"a": "Is required", "b": "Is not an accepted parameter"}},
		{"object_rules", `{"type":"object","minProperties":3,"propertyNames":{"maxLength":1},"dependencies":{"a":["b"]}}`,
			`{"a":1,"cc":2}`, map[string]string{"(input)": "Must have at least 3 properties", "cc": "Is not an accepted parameter name", "a": `Requires "b" to be present too`}},
		{"false_schema", `{"type":"object","properties":{"a":false}}`, `{"a":1}`, map[string]string{"a": "Is not accepted by the schema"}},
		{"not", `{"type":"object","properties":{"a":{"not":{"type":"string"}}}}`, `{"a":"s"}`, map[string]string{"a": "Is not accepted by the schema"}},
		{"if_then_else", `{"type":"object","if":{"required":["a"]},"then":{"required":["b"]},"else":{"required":["c"]}}`, `{"a":1}`, map[string]string{"b": "Is required"}},
		{"repeated_first", `{"type":"object","properties":{"a":{"type":"number"}}}`, `{"a":"x","a":1}`, map[string]string{"a": "Is given more than once"}},
		{"escaped_key", `{"type":"object","properties":{"é":{"type":"number"}}}`, `{"\u00e9":"x"}`, map[string]string{"é": "Must be a number"}},
		{"long_key_cut", `{"type":"object","additionalProperties":false}`, `{"` + strings.Repeat("k", 300) + `":1}`, map[string]string{strings.Repeat("k", MaxEchoedKey) + "…": "Is not an accepted parameter"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			v, err := Compile(json.RawMessage(tt.schema))
			require.NoError(t, err)
			d, err := jsonparse.Parse([]byte(tt.input))
			require.NoError(t, err)
			defer jsonparse.Release(d)
			assert.Equal(t, tt.want, v.Validate(d, 0))
		})
	}
}

func TestValidateStopsAtTheCap(t *testing.T) {
	t.Parallel()
	v, err := Compile(json.RawMessage(`{"type":"object","properties":{"a":{"type":"number"}},"required":["a"],"additionalProperties":false}`))
	require.NoError(t, err)
	var b strings.Builder
	b.WriteString("{")
	for i := range 10000 {
		fmt.Fprintf(&b, `"k%05d":1,`, i)
	}
	b.WriteString(`"a":"x"}`)
	d, err := jsonparse.Parse([]byte(b.String()))
	require.NoError(t, err)
	defer jsonparse.Release(d)
	errs := v.Validate(d, 0)
	require.Len(t, errs, MaxErrors)
	for i := range MaxErrors {
		assert.Equal(t, "Is not an accepted parameter", errs[fmt.Sprintf("k%05d", i)], "the first keys in the input's order are kept")
	}
}

func TestCompileRefusesUnsupportedKeywords(t *testing.T) {
	t.Parallel()
	for _, schema := range []string{
		`{"type":"object","unevaluatedProperties":false}`,
		`{"type":"object","properties":{"a":{"type":"array","unevaluatedItems":false}}}`,
		`{"type":"object","properties":{"a":{"type":"number","multipleOf":0}}}`,
	} {
		_, err := Compile(json.RawMessage(schema))
		assert.Error(t, err, schema)
	}
}

// patternCases are patterns of the one-class form, which pattern matches
// without the regexp engine, and a few of other forms.
var patternCases = []string{
	`^[a-z]+$`, `^[0-9]{5}$`, `^[A-Za-z0-9_-]{1,64}$`, `^[^/]*$`, `^.+$`, `^x?$`, `^[é-ü]{2,}$`, `^\d{3,}$`,
	`^(?i)[a-c]+$`, `^(?s).{2}$`, `^\p{L}+$`, `^a$`, `[0-9]{5}`, `^[a-z]+`, `^(ab)+$`, `^$`,
}

func TestPatternFastPathAgreesWithRegexp(t *testing.T) {
	t.Parallel()
	fast := 0
	for _, src := range patternCases {
		p, err := compilePattern(src)
		require.NoError(t, err)
		if p.class != nil {
			fast++
		}
		for _, s := range []string{"", "a", "abc", "ABC", "12345", "1234", "123456", "a-b_C9", "é", "éü", "a/b", "x", "xx", "\n", "a\nb", "ab", "abab", "\xff", strings.Repeat("a", 65)} {
			assert.Equal(t, p.re.MatchString(s), p.match([]byte(s)), "pattern %s on %q", src, s)
		}
	}
	assert.Greater(t, fast, 8, "the one-class patterns take the fast path")
}

func FuzzPattern(f *testing.F) {
	for i := range patternCases {
		f.Add(uint8(i), "abc")
	}
	compiled := make([]*pattern, len(patternCases))
	for i, src := range patternCases {
		compiled[i], _ = compilePattern(src)
	}
	f.Fuzz(func(t *testing.T, which uint8, s string) {
		p := compiled[int(which)%len(compiled)]
		if got, want := p.match([]byte(s)), p.re.MatchString(s); got != want {
			t.Fatalf("pattern %s on %q: %v, regexp says %v", p, s, got, want)
		}
	})
}

func TestTypeMaskNames(t *testing.T) {
	t.Parallel()
	tests := map[TypeMask]string{
		typeNumber:                            "a number",
		typeInteger:                           "an integer",
		typeNumber | typeInteger:              "a number",
		typeObject:                            "an object",
		typeArray:                             "an array",
		typeString:                            "a string",
		typeBoolean:                           "a boolean",
		typeString | typeNull:                 "a string or null",
		typeInteger | typeNull:                "an integer or null",
		typeString | typeNumber | typeBoolean: "a string or a number or a boolean",
	}
	for in, want := range tests {
		assert.Equal(t, want, in.names(), "%b", in)
	}
}
