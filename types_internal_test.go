package otc

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/url"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/otcgo/otc/internal/jsonparse"
	"github.com/otcgo/otc/internal/validate"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// level is read from a JSON string by UnmarshalText.
type level int

func (l *level) UnmarshalText(b []byte) error {
	switch string(b) {
	case "low":
		*l = 1
	case "high":
		*l = 2
	default:
		return fmt.Errorf("unknown level %q", b)
	}
	return nil
}

// typeRow is a Go type as a tool's parameter "v": the schema the
// registry gives it, inputs it accepts and inputs it refuses (with the
// message the model gets).
type typeRow struct {
	name    string
	tool    func(r *Registry) error
	schema  string
	accept  []string
	refuse  map[string]string
	refuses string // a registration error, instead of the above
	output  bool   // schema is the tool's output schema
	// variants are tools with the type in other positions, for the
	// fuzz test: see variants.
	variants []probe
}

// probe is a tool with a parameter of the type under test, and how a
// value of that type is placed in its input.
type probe struct {
	register func(r *Registry) error
	wrap     func(value string) string
	path     string // the value's path in parameter_errors
}

// variants returns probes with T as a required parameter, an optional
// one (null is "not given"), the element of an array, and the field of a
// nested object.
func variants[T any]() []probe {
	type optional struct {
		O T `json:"o,omitempty" jsonschema:"description=The value if any."`
	}
	type nested struct {
		N struct {
			V T `json:"v" jsonschema:"description=The value."`
		} `json:"n" jsonschema:"description=An object holding the value."`
	}
	return []probe{
		{typeTool[T], func(v string) string { return `{"v":` + v + `}` }, "v"},
		{inputTool[optional], func(v string) string { return `{"o":` + v + `}` }, "o"},
		{typeTool[[]T], func(v string) string { return `{"v":[` + v + `]}` }, "v.0"},
		{inputTool[nested], func(v string) string { return `{"n":{"v":` + v + `}}` }, "n.v"},
	}
}

// inputTool registers a tool whose input is In.
func inputTool[In any](r *Registry) error {
	return Register(r, Tool{ID: "Types.Probe", Version: "1.0.0", Description: "Probes a type."},
		func(_ context.Context, x In) (string, error) { return fmt.Sprint(x), nil })
}

func typeTool[T any](r *Registry) error {
	type in struct {
		V T `json:"v" jsonschema:"description=The value."`
	}
	return Register(r, Tool{ID: "Types.Probe", Version: "1.0.0", Description: "Probes a type."},
		func(_ context.Context, x in) (string, error) { return fmt.Sprint(x.V), nil })
}

func typeRows() []typeRow {
	return []typeRow{
		{name: "int8", tool: typeTool[int8], variants: variants[int8](), schema: `{"type":"integer","minimum":-128,"maximum":127,"description":"The value."}`,
			accept: []string{`-128`, `127`, `5.0`}, refuse: map[string]string{`128`: "Must be at most 127", `"1"`: "Must be an integer"}},
		{name: "uint8", tool: typeTool[uint8], variants: slices.Delete(variants[uint8](), 2, 3) /* a []uint8 is base64 text */, schema: `{"type":"integer","minimum":0,"maximum":255,"description":"The value."}`,
			accept: []string{`0`, `255`}, refuse: map[string]string{`-1`: "Must be at least 0", `256`: "Must be at most 255"}},
		{name: "uint", tool: typeTool[uint], variants: variants[uint](), schema: `{"type":"integer","minimum":0,"description":"The value."}`,
			accept: []string{`0`, `18446744073709551615`}, refuse: map[string]string{`-1`: "Must be at least 0"}},
		{name: "int64", tool: typeTool[int64], variants: variants[int64](), schema: `{"type":"integer","description":"The value."}`,
			accept: []string{`-9223372036854775808`, `1e3`}, refuse: map[string]string{`9223372036854775808`: "Must be an integer in the accepted range"}},
		{name: "float32", tool: typeTool[float32], variants: variants[float32](), schema: `{"type":"number","description":"The value."}`,
			accept: []string{`1.5`, `-3e38`}, refuse: map[string]string{`1e39`: "Must be a number in the accepted range"}},
		{name: "time.Duration", tool: typeTool[time.Duration], variants: variants[time.Duration](), schema: `{"type":"string","pattern":` + mustJSON(validate.DurationPattern) + `,"description":"The value."}`,
			accept: []string{`"90s"`, `"1h30m"`, `"250ms"`, `"0"`, `"-1.5h"`}, refuse: map[string]string{`300`: "Must be a duration string such as", `"5 minutes"`: "Must be a duration", `"PT5M"`: "Must be a duration"}},
		{name: "[]byte", tool: typeTool[[]byte], variants: variants[[]byte](), schema: `{"type":"string","contentEncoding":"base64","description":"The value."}`,
			accept: []string{`"aGVsbG8="`, `""`}, refuse: map[string]string{`"not base64!"`: "Must be base64 text", `[1,2]`: "Must be a string"}},
		{name: "json.RawMessage", tool: typeTool[json.RawMessage], variants: variants[json.RawMessage](), schema: `{"description":"The value."}`,
			accept: []string{`{"a":[1]}`, `null`, `"s"`}},
		{name: "net.IP", tool: typeTool[net.IP], variants: variants[net.IP](), schema: `{"type":"string","anyOf":[{"format":"ipv4"},{"format":"ipv6"}],"description":"The value."}`,
			accept: []string{`"192.0.2.1"`, `"2001:db8::1"`}, refuse: map[string]string{`"nope"`: "Does not match any of the accepted forms", `1`: "Must be a string"}},
		{name: "time.Time", tool: typeTool[time.Time], variants: variants[time.Time](), schema: `{"type":"string","format":"date-time","description":"The value."}`,
			accept: []string{`"2026-11-22T10:00:00Z"`, `"2026-11-22T10:00:00.5+01:00"`}, refuse: map[string]string{`"2026-11-22"`: "RFC 3339", `"10:00:00"`: "RFC 3339"}},
		{name: "TextUnmarshaler", tool: typeTool[level], variants: variants[level](), schema: `{"type":"string","description":"The value."}`,
			accept: []string{`"low"`, `"high"`}, refuse: map[string]string{`2`: "Must be a string", `"medium"`: `Cannot be read: unknown level "medium"`}},
		{name: "[2]int", tool: typeTool[[2]int], variants: variants[[2]int](), schema: `{"type":"array","items":{"type":"integer"},"minItems":2,"maxItems":2,"description":"The value."}`,
			accept: []string{`[1,2]`}, refuse: map[string]string{`[1]`: "Must have at least 2 items"}},
		{name: "map[int]string", tool: typeTool[map[int]string], variants: variants[map[int]string](), schema: `{"type":"object","patternProperties":{"^[0-9]+$":{"type":"string"}},"additionalProperties":false,"description":"The value."}`,
			accept: []string{`{"1":"a"}`}, refuse: map[string]string{`{"x":"a"}`: "Is not an accepted parameter"}},
		{name: "json.Number", tool: typeTool[json.Number], variants: variants[json.Number](), schema: `{"type":"number","description":"The value."}`,
			accept: []string{`12`, `-1.5e300`}, refuse: map[string]string{`"12"`: "Must be a number", `"abc"`: "Must be a number"}},
		{name: "interface with methods", tool: typeTool[fmt.Stringer], refuses: `has type fmt.Stringer, an interface with methods, which encoding/json cannot decode into`},
		{name: "url.URL", tool: typeTool[url.URL], variants: variants[url.URL](), refuses: `url.URL, which encoding/json cannot read from a string: use a string with jsonschema:"format=uri"`},
		{name: "json.Unmarshaler", tool: typeTool[ownJSON], variants: variants[ownJSON](), refuses: `reads JSON its own way (UnmarshalJSON)`},
		{name: "json.Marshaler output", tool: outputTool[writesJSON], refuses: `writes JSON its own way (MarshalJSON)`},
		{name: "TextMarshaler output", tool: outputTool[label], output: true, schema: `{"type":"string"}`},
		{name: "time.Duration output", tool: outputTool[time.Duration], output: true, schema: `{"type":"integer"}`},
		{name: "MarshalJSON input", tool: typeTool[writesJSON], variants: variants[writesJSON](), schema: `{"type":"object","properties":{"X":{"type":"integer"}},"required":["X"],"additionalProperties":false,"description":"The value."}`,
			accept: []string{`{"X":1}`}, refuse: map[string]string{`1`: "Must be an object"}},
	}
}

// writesJSON writes JSON its own way.
type writesJSON struct{ X int }

func (w writesJSON) MarshalJSON() ([]byte, error) { return json.Marshal(w.X) }

// label is written as text.
type label struct{ parts []string }

func (l label) MarshalText() ([]byte, error) { return []byte(strings.Join(l.parts, "/")), nil }

// outputTool registers a tool whose output is T.
func outputTool[T any](r *Registry) error {
	return Register(r, Tool{ID: "Types.Probe", Version: "1.0.0", Description: "Probes a type."},
		func(context.Context, struct{}) (T, error) { var zero T; return zero, nil })
}

// ownJSON reads JSON its own way and says nothing of it in a schema.
type ownJSON struct{ X int }

func (o *ownJSON) UnmarshalJSON(b []byte) error { return json.Unmarshal(b, &o.X) }

func mustJSON(s string) string {
	b, err := json.Marshal(s)
	if err != nil {
		panic(err)
	}
	return string(b)
}

// TestGoTypes: each type's schema, and the validator and the decoder
// agreeing on inputs accepted and refused, with the type as a required
// parameter, an optional one, an array's element and a nested field; a
// refusal is always reported under the value's path, never as an input
// that cannot be read.
func TestGoTypes(t *testing.T) {
	for _, row := range typeRows() {
		t.Run(row.name, func(t *testing.T) {
			r := NewRegistry(nil)
			err := row.tool(r)
			if row.refuses != "" {
				require.Error(t, err)
				assert.Contains(t, err.Error(), row.refuses)
				return
			}
			require.NoError(t, err)
			if row.output {
				assert.JSONEq(t, row.schema, string(r.Tools()[0].OutputSchema))
				return
			}
			var params struct {
				Properties map[string]json.RawMessage `json:"properties"`
			}
			require.NoError(t, json.Unmarshal(r.Tools()[0].InputSchema.Parameters, &params))
			assert.JSONEq(t, row.schema, string(params.Properties["v"]))
			for _, p := range row.variants {
				path := p.path
				r := NewRegistry(nil)
				require.NoError(t, p.register(r))
				accept := row.accept
				if path == "o" {
					accept = append(slices.Clone(accept), "null") // not given
				}
				for _, in := range accept {
					res, err := r.Call(context.Background(), &CallRequest{ToolID: "Types.Probe", Input: json.RawMessage(p.wrap(in))})
					require.NoError(t, err, "input %s at %s", in, path)
					assert.Nil(t, res.Error, "input %s at %s", in, path)
				}
				for in, msg := range row.refuse {
					_, err := r.Call(context.Background(), &CallRequest{ToolID: "Types.Probe", Input: json.RawMessage(p.wrap(in))})
					var e *Error
					require.True(t, errors.As(err, &e), "input %s at %s: %v", in, path, err)
					assert.Equal(t, CodeInvalidInput, e.Code, "input %s at %s", in, path)
					found := false
					for k, m := range e.ParameterErrors {
						found = found || (k == path || strings.HasPrefix(k, path+".")) && strings.Contains(m, msg)
					}
					assert.True(t, found, "input %s: want %q under %s, got %v", in, msg, path, e.ParameterErrors)
				}
			}
		})
	}
}

// FuzzValidatedInputDecodes checks the invariant between the validator
// and the decoder: every value the validator accepts, with the type of
// a row of the table as a required parameter, an optional one, an
// array's element or a nested field, decodes into the function's input
// type. The exceptions, which a schema cannot express, are refused under
// the value's path: a number beyond the range of a Go type the schema
// does not bound (int64, uint64, float32), and a string a TextUnmarshaler
// refuses.
func FuzzValidatedInputDecodes(f *testing.F) {
	type target struct {
		rt   *registeredTool
		wrap func(string) string
		path string // where the value's errors are reported
	}
	var targets []target
	for _, row := range typeRows() {
		if row.refuses != "" || row.output {
			continue
		}
		for i, p := range row.variants {
			r := NewRegistry(nil)
			if err := p.register(r); err != nil {
				f.Fatal(err)
			}
			rt, err := r.resolve("Types.Probe")
			if err != nil {
				f.Fatal(err)
			}
			path := p.path
			if path == "v.0" {
				path = "v" // the fuzzed text may hold several elements ("0,1e100")
			}
			targets = append(targets, target{rt, p.wrap, path})
			if i > 0 {
				continue // the seeds of the required parameter serve for all
			}
			for _, in := range row.accept {
				f.Add(uint8(len(targets)-1), in)
			}
			for in := range row.refuse {
				f.Add(uint8(len(targets)-1), in)
			}
		}
	}
	f.Fuzz(func(t *testing.T, which uint8, value string) {
		tg := targets[int(which)%len(targets)]
		doc, err := jsonparse.Parse([]byte(tg.wrap(value)))
		if err != nil {
			return
		}
		defer jsonparse.Release(doc)
		if tg.rt.validator.Validate(doc, 0) != nil {
			return
		}
		input := tg.rt.decoderInput(doc, 0)
		if _, err := tg.rt.invoke(context.Background(), input); err != nil {
			var ie *inputError
			if !errors.As(err, &ie) {
				return // the function's own error
			}
			perrs := locateDecodeError(tg.rt.inType, input, ie.err)
			for k, msg := range perrs {
				if (k == tg.path || strings.HasPrefix(k, tg.path+".")) &&
					(strings.HasSuffix(msg, "in the accepted range") || strings.HasPrefix(msg, "Cannot be read: ")) {
					continue
				}
				t.Fatalf("%s at %s: the validator accepted %s, which does not decode: %v (reported as %v)", tg.rt.inType, tg.path, value, ie.err, perrs)
			}
		}
	})
}

// tree is a recursive type, which only a hand-written schema can serve.
type tree struct {
	L level  `json:"l,omitempty"`
	C []tree `json:"c,omitempty"`
}

// TestDecodeErrorInARecursiveType: the walk that locates a decode failure
// stops descending after maxLocateDepth levels, so that a deep input of a
// recursive type costs a bounded number of decodings; the failure is
// still reported under a path, never as "(input)".
func TestDecodeErrorInARecursiveType(t *testing.T) {
	r := NewRegistry(nil)
	require.NoError(t, Register(r, Tool{ID: "Types.Tree", Version: "1.0.0", Description: "Walks a tree.",
		InputSchema: json.RawMessage(`{"type":"object","properties":{"c":{"type":"array","description":"Children."},"l":{"type":"string","description":"Level."}}}`)},
		func(context.Context, tree) (string, error) { return "", nil }))
	input := `{"l":"nope"}`
	for range 200 {
		input = `{"c":[{},` + input + `]}`
	}
	_, err := r.Call(context.Background(), &CallRequest{ToolID: "Types.Tree", Input: json.RawMessage(input)})
	var e *Error
	require.True(t, errors.As(err, &e), "%v", err)
	require.Len(t, e.ParameterErrors, 1)
	for k, msg := range e.ParameterErrors {
		assert.Equal(t, strings.Repeat("c.1.", maxLocateDepth/2-1)+"c.1", k, "cut at the depth limit")
		assert.Equal(t, `Cannot be read: unknown level "nope"`, msg)
	}

	_, err = r.Call(context.Background(), &CallRequest{ToolID: "Types.Tree", Input: json.RawMessage(`{"c":[{"c":[{"l":"nope"}]}]}`)})
	require.True(t, errors.As(err, &e), "%v", err)
	assert.Equal(t, map[string]string{"c.0.c.0.l": `Cannot be read: unknown level "nope"`}, e.ParameterErrors)
}

// TestOmitzeroIsOptional: a field whose JSON tag has omitzero is optional
// in the reflected schema, at any depth (a nested struct, behind a
// pointer, in a slice's or a map's elements, an embedded struct's), as
// encoding/json leaves it out when zero; the other fields stay required.
func TestOmitzeroIsOptional(t *testing.T) {
	type inner struct {
		At   time.Time `json:"at,omitzero" jsonschema:"description=When."`
		Must string    `json:"must" jsonschema:"description=Needed."`
	}
	type Base struct {
		Z int `json:"z,omitzero" jsonschema:"description=Z."`
	}
	type in struct {
		Base
		Top   time.Time        `json:"top,omitzero" jsonschema:"description=Top."`
		Kept  string           `json:"kept" jsonschema:"description=Kept."`
		Ptr   *inner           `json:"ptr" jsonschema:"description=Ptr."`
		List  []inner          `json:"list" jsonschema:"description=List."`
		ByKey map[string]inner `json:"by_key" jsonschema:"description=By key."`
	}
	raw, err := reflectSchema(reflect.TypeFor[in](), "")
	require.NoError(t, err)
	var s struct {
		Required   []string `json:"required"`
		Properties map[string]struct {
			Required []string `json:"required"`
			AnyOf    []struct {
				Required []string `json:"required"`
			} `json:"anyOf"`
			Items struct {
				Required []string `json:"required"`
			} `json:"items"`
			AdditionalProperties json.RawMessage `json:"additionalProperties"`
		} `json:"properties"`
	}
	require.NoError(t, json.Unmarshal(raw, &s), "%s", raw)
	assert.ElementsMatch(t, []string{"kept", "ptr", "list", "by_key"}, s.Required, "%s", raw)
	assert.Contains(t, s.Properties, "z", "the embedded struct's field is the parent's")
	ptr := s.Properties["ptr"].Required
	if len(s.Properties["ptr"].AnyOf) > 0 {
		ptr = s.Properties["ptr"].AnyOf[0].Required
	}
	assert.Equal(t, []string{"must"}, ptr, "%s", raw)
	assert.Equal(t, []string{"must"}, s.Properties["list"].Items.Required)
	var elem struct {
		Required []string `json:"required"`
	}
	require.NoError(t, json.Unmarshal(s.Properties["by_key"].AdditionalProperties, &elem))
	assert.Equal(t, []string{"must"}, elem.Required)
}
