package jsonparse

import (
	"encoding/json"
	"testing"
	"unicode/utf8"
)

// TestScannerObject: Object reads exactly the objects encoding/json
// takes as valid, in UTF-8 (an object at the start, and nothing but white space
// after it), names with escapes decoded, and stops where f does.
func TestScannerObject(t *testing.T) {
	for _, text := range []string{
		`{}`, ` { } `, `{"a":1}`, `{"a":1,"b":[1,{"c":"d"}],"e":null}`, `{"a\u0062":"x"}`, `{"a":"\ud83d\ude00"}`,
		`{`, `}`, `{"a"}`, `{"a":}`, `{"a":1,}`, `{,}`, `{"a":1 "b":2}`, `{'a':1}`, `{"a":01}`, `{"a":1}x`, `[1]`, `"s"`, ``,
		"{\"a\":\"\x01\"}", "{\"a\xff\":1}", `{"a":tru}`, `{"a":1e}`,
	} {
		s := Scanner{Data: []byte(text)}
		var names []string
		ok := s.Object(func(name []byte) bool {
			names = append(names, string(name))
			return s.Value() != nil
		})
		s.Space()
		got := ok && s.Pos == len(text)
		var v map[string]any
		// encoding/json takes bad UTF-8 (it replaces it); JSON text is UTF-8.
		want := json.Unmarshal([]byte(text), &v) == nil && len(text) > 0 && text[len(text)-1] != 'x' && utf8.ValidString(text)
		if got != want {
			t.Errorf("%q: read %v, encoding/json says %v", text, got, want)
		}
		if text == `{"a\u0062":"x"}` && (len(names) != 1 || names[0] != "ab") {
			t.Errorf("%q: names %q, want the escape decoded", text, names)
		}
	}
	s := Scanner{Data: []byte(`{"a":1,"b":2,"c":3}`)}
	n := 0
	if s.Object(func([]byte) bool { n++; s.Value(); return n < 2 }) || n != 2 {
		t.Errorf("Object went on after f stopped it (%d members read)", n)
	}
}

// TestScannerPlainString: a string without escapes is read, quotes
// included; one with an escape, a control character or bad UTF-8 is not.
func TestScannerPlainString(t *testing.T) {
	for text, want := range map[string]string{`"abc" `: `"abc"`, `"é"`: `"é"`, `"a\"b"`: "", "\"a\x01\"": "", "\"\xff\"": "", `abc`: "", `"abc`: ""} {
		s := Scanner{Data: []byte(text)}
		if got := string(s.PlainString()); got != want {
			t.Errorf("PlainString(%q) = %q, want %q", text, got, want)
		}
	}
}
