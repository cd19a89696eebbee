package jsonparse

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"strconv"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The parser is checked against encoding/json: it accepts exactly the
// texts encoding/json accepts that are valid UTF-8 and nested no deeper
// than MaxDepth, unescapes strings as encoding/json does, and flags
// exactly the objects that repeat a member name.

func TestParseAcceptsAndRefuses(t *testing.T) {
	t.Parallel()
	good := []string{
		`{}`, `[]`, `0`, `-0`, `1.5e-3`, `-12.0E+4`, `"a\u00e9\ud83d\ude00\n\"\\\/"`, `true`, `false`, `null`,
		` { "a" : [ 1 , { "b" : null } ] } `, `"\ud800"`, `{"":1}`, `[[[[]]]]`, "\"\u2028\"",
	}
	for _, s := range good {
		d, err := Parse([]byte(s))
		if assert.NoError(t, err, "%s", s) {
			Release(d)
		}
	}
	bad := map[string]string{
		``:              "unexpected end",
		`{`:             "unexpected end",
		`{"a"}`:         "after an object key",
		`{"a":1,}`:      "beginning of an object key",
		`[1,]`:          "beginning of a value",
		`01`:            "after the top-level value",
		`1.`:            "unexpected end",
		`1.x`:           "in numeric literal",
		`1e`:            "unexpected end",
		`-`:             "unexpected end",
		`+1`:            "beginning of a value",
		`"a`:            "in a string",
		"\"a\tb\"":      "control character",
		`"\x"`:          "invalid escape",
		`"\u12g4"`:      "\\u escape",
		`tru`:           "unexpected end",
		`nul1`:          "in literal null",
		`{} {}`:         "after the top-level value",
		"\"\xff\"":      "UTF-8",
		`[1 2]`:         "after an array element",
		`{"a":1 "b":2}`: "after an object member",
		`{1:2}`:         "beginning of an object key",
		`NaN`:           "beginning of a value",
		strings.Repeat("[", MaxDepth+1) + strings.Repeat("]", MaxDepth+1): "nested deeper",
	}
	for s, want := range bad {
		_, err := Parse([]byte(s))
		if assert.Error(t, err, "%q", s) {
			assert.Contains(t, err.Error(), want, "%q", s)
		}
	}
	d, err := Parse([]byte(strings.Repeat("[", MaxDepth) + strings.Repeat("]", MaxDepth)))
	require.NoError(t, err, "exactly maxJSONDepth levels")
	Release(d)
}

func TestParseRepeatedNames(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		text     string
		repeated bool
	}{
		{`{"a":1,"b":2}`, false},
		{`{"a":1,"a":2}`, true},
		{`{"a":1,"\u0061":2}`, true},
		{`{"a":{"a":1},"b":{"a":1}}`, false},
		{`[{"a":1},{"a":1}]`, false},
		{`{"x":[{"k":1,"k":1}]}`, true},
		{`{"A":1,"a":2}`, false},
		// Past linearKeys members the names go in a map.
		{`{` + numberedKeys(40) + `}`, false},
		{`{` + numberedKeys(40) + `,"k7":1}`, true},
		{`{` + numberedKeys(40) + `,"k\u0037":1}`, true},
		{`{"o":{` + numberedKeys(40) + `},"p":{` + numberedKeys(40) + `}}`, false},
	} {
		d, err := Parse([]byte(tt.text))
		require.NoError(t, err, tt.text)
		assert.Equal(t, tt.repeated, d.Repeated, tt.text)
		Release(d)
	}
}

func numberedKeys(n int) string {
	var b strings.Builder
	for i := range n {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(`"k` + strconv.Itoa(i) + `":1`)
	}
	return b.String()
}

// jsonDepth is the deepest nesting of arrays and objects in a valid text.
func jsonDepth(data []byte) int {
	dec := json.NewDecoder(bytes.NewReader(data))
	depth, deepest := 0, 0
	for {
		tok, err := dec.Token()
		if err != nil {
			return deepest
		}
		switch tok {
		case json.Delim('['), json.Delim('{'):
			depth++
			deepest = max(deepest, depth)
		case json.Delim(']'), json.Delim('}'):
			depth--
		}
	}
}

// hasRepeatedName reports, using encoding/json's tokenizer, whether some
// object in a valid text repeats a member name.
func hasRepeatedName(data []byte) bool {
	dec := json.NewDecoder(bytes.NewReader(data))
	type frame struct {
		object bool
		names  map[string]bool
		key    bool // the next string token is a key
	}
	var stack []*frame
	for {
		tok, err := dec.Token()
		if err == io.EOF || err != nil {
			return false
		}
		var top *frame
		if len(stack) > 0 {
			top = stack[len(stack)-1]
		}
		isKey := top != nil && top.object && top.key
		if top != nil && top.object {
			top.key = !top.key
		}
		switch v := tok.(type) {
		case json.Delim:
			switch v {
			case '{':
				stack = append(stack, &frame{object: true, names: map[string]bool{}, key: true})
			case '[':
				stack = append(stack, &frame{})
			default:
				stack = stack[:len(stack)-1]
				if len(stack) > 0 && stack[len(stack)-1].object {
					stack[len(stack)-1].key = true
				}
				continue
			}
			if top != nil && top.object {
				top.key = true
			}
		case string:
			if isKey {
				if top.names[v] {
					return true
				}
				top.names[v] = true
			}
		}
	}
}

func FuzzParse(f *testing.F) {
	for _, s := range []string{
		`{"request":{"tool_id":"Calculator.Add","input":{"a":1,"b":2.5e3}}}`,
		`{"a":"\u00e9\ud83d\ude00\n","a":[1,-0.0,true,null]}`, `[[[{"":{}}]]]`, `"\ud800x"`, `1e999999999999`, `{"k\u0041":1,"kA":2}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		want := json.Valid(data) && utf8.Valid(data)
		if want && jsonDepth(data) > MaxDepth {
			want = false
		}
		d, err := Parse(data)
		if !want {
			if err == nil {
				Release(d)
				t.Fatalf("parsed text that encoding/json refuses (or too deep, or not UTF-8): %q", data)
			}
			return
		}
		if err != nil {
			t.Fatalf("refused valid JSON %q: %v", data, err)
		}
		defer Release(d)
		if got, want := d.Repeated, hasRepeatedName(data); got != want {
			t.Fatalf("repeated = %v, want %v for %q", got, want, data)
		}
		for i := range d.Nodes {
			n := &d.Nodes[i]
			raw := d.Raw(int32(i))
			if !json.Valid(raw) {
				t.Fatalf("node %d spans %q, not a JSON value", i, raw)
			}
			if n.Kind == KindString {
				var s string
				require.NoError(t, json.Unmarshal(raw, &s))
				if got := d.StringValue(int32(i)); got != s {
					t.Fatalf("string %q unescaped to %q, encoding/json says %q", raw, got, s)
				}
			}
		}
	})
}

// TestParseLargeDocuments parses documents large enough for the node list
// to grow many times, of shapes whose density changes along the body, and
// checks the tree read back through the accessors against encoding/json.
func TestParseLargeDocuments(t *testing.T) {
	t.Parallel()
	var mixed strings.Builder
	mixed.WriteString(`{"head":"` + strings.Repeat("x", 50000) + `","tail":[`)
	for i := range 30000 {
		if i > 0 {
			mixed.WriteByte(',')
		}
		fmt.Fprintf(&mixed, `{"k%d":[%d,[],{}]}`, i, i)
	}
	mixed.WriteString(`]}`)
	for name, doc := range map[string]string{
		"keys":    `{` + numberedKeys(40000) + `}`,
		"nested":  `[` + strings.Repeat(`[`+strings.Repeat("[", 500)+strings.Repeat("]", 500)+`],`, 200) + `0]`,
		"numbers": `[` + strings.Repeat(`1e300,`, 100000) + `2]`,
		"mixed":   mixed.String(),
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			d, err := Parse([]byte(doc))
			require.NoError(t, err)
			defer Release(d)
			var want any
			require.NoError(t, json.Unmarshal([]byte(doc), &want))
			require.Equal(t, want, treeOf(d, 0))
		})
	}
}

// treeOf reads node i back as encoding/json would decode it into an any.
func treeOf(d *Document, i int32) any {
	switch d.Kind(i) {
	case KindObject:
		m := map[string]any{}
		for k, v := range d.Members(i) {
			m[d.StringValue(k)] = treeOf(d, v)
		}
		return m
	case KindArray:
		a := []any{}
		for _, e := range d.Elements(i) {
			a = append(a, treeOf(d, e))
		}
		return a
	case KindString:
		return d.StringValue(i)
	}
	var v any
	if err := json.Unmarshal(d.Raw(i), &v); err != nil {
		panic(err)
	}
	return v
}

// TestParseValueReadsOneValueInPlace checks that ParseValue parses the
// value at an offset, reports where it ends, and keeps the offsets of the
// whole text, so that Raw returns the value's own bytes.
func TestParseValueReadsOneValueInPlace(t *testing.T) {
	data := []byte(`{"arguments": {"a":[1,{"b":"c"}],"n":null} ,"x":1}`)
	at := bytes.Index(data, []byte(`{"a"`))
	d, end, err := ParseValue(data, at-1) // white space before the value is skipped
	require.NoError(t, err)
	defer Release(d)
	require.Equal(t, `{"a":[1,{"b":"c"}],"n":null}`, string(d.Raw(0)))
	require.Equal(t, at+len(`{"a":[1,{"b":"c"}],"n":null}`), end)
	require.Equal(t, map[string]any{"a": []any{1.0, map[string]any{"b": "c"}}, "n": nil}, treeOf(d, 0))

	_, _, err = ParseValue([]byte(`{"a":[1,}`), 0)
	var se *SyntaxError
	require.ErrorAs(t, err, &se)
	require.Equal(t, 8, se.Offset)
}
