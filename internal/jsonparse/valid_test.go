package jsonparse

import (
	"encoding/json"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/stretchr/testify/require"
)

// validJSONInUTF8 is what Valid promises to agree with.
func validJSONInUTF8(b []byte) bool { return json.Valid(b) && utf8.Valid(b) }

func TestValidAgreesWithEncodingJSON(t *testing.T) {
	for _, s := range []string{
		``, ` `, `{}`, `[]`, ` { } `, `[ ]`, `{"a":1}`, `{"a":1,}`, `{,"a":1}`, `{"a" 1}`, `{"a":}`, `{1:2}`,
		`[1,2]`, `[1,]`, `[,1]`, `[1 2]`, `[1}`, `{"a":1]`, `{"a":[1,{"b":null}],"c":"d"}`,
		`"x"`, `"\"\\\/\b\f\n\r\t\u00e9"`, `"\x"`, `"\u00g0"`, `"\u00e"`, "\"a\tb\"", "\"\xff\xfe\"", `"unterminated`,
		// UTF-8 inside strings: valid runes of each length, and the
		// sequences utf8.Valid refuses (a stray continuation byte, a
		// truncated rune, an overlong form, a surrogate, past U+10FFFF).
		"\"é€😀\"", `{"é":"€"}`, "\"\x80\"", "\"\xc3\"", "\"\xc3\"x", "\"\xe2\x82\"", "\"\xc0\xaf\"",
		"\"\xed\xa0\x80\"", "\"\xf4\x90\x80\x80\"", "{\"\xff\":1}", "[\"a\",\"\xfe\"]", "\xef\xbb\xbf{}", `"\ud800"`,
		`true`, `false`, `null`, `tru`, `nul`, `truex`, `True`,
		`0`, `-0`, `01`, `-`, `1.`, `.5`, `1.5`, `1e5`, `1E+5`, `1e-5`, `1e`, `1e+`, `-1.5e-3`, `+1`, `0x1`, `1 2`,
		strings.Repeat("[", 10000) + strings.Repeat("]", 10000),
		strings.Repeat("[", 10001) + strings.Repeat("]", 10001),
		strings.Repeat("[", 9999) + "{}" + strings.Repeat("]", 9999),
		strings.Repeat("[", 10000) + "{}" + strings.Repeat("]", 10000),
		strings.Repeat(`{"a":`, 10000) + "1" + strings.Repeat("}", 10000),
		strings.Repeat(`{"a":`, 10001) + "1" + strings.Repeat("}", 10001),
	} {
		if got, want := Valid([]byte(s)), validJSONInUTF8([]byte(s)); got != want {
			t.Errorf("Valid(%.60q) = %v, json.Valid && utf8.Valid say %v", s, got, want)
		}
	}
}

func FuzzValid(f *testing.F) {
	for _, s := range []string{`{"a":[1,-2.5e3,true,null,"\u00e9"]}`, `[{}]`, `"\"`, `1e`, `{"a":1,}`, "{\"id\":\"\xff\"}", "\"é\xe2\x82\""} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if got, want := Valid([]byte(s)), validJSONInUTF8([]byte(s)); got != want {
			t.Fatalf("Valid(%q) = %v, json.Valid && utf8.Valid say %v", s, got, want)
		}
	})
}

func BenchmarkValid(b *testing.B) {
	body := []byte(`{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"Calculator_Add","arguments":{"a":10,"b":5},` +
		`"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{},` +
		`"io.modelcontextprotocol/clientInfo":{"name":"bench","version":"1.0.0"}}}}`)
	b.Run("wire", func(b *testing.B) {
		for b.Loop() {
			Valid(body)
		}
	})
	b.Run("encoding_json", func(b *testing.B) {
		for b.Loop() {
			json.Valid(body)
		}
	})
}

// TestSkipStopsAfterTheValue checks that Skip ends where its value ends,
// whatever follows, and refuses what Valid refuses in the value itself.
func TestSkipStopsAfterTheValue(t *testing.T) {
	for _, c := range []struct {
		data string
		at   int
		want int
	}{
		{`{"a":[1,2]} trailing`, 0, 11},
		{`  "s\"q",`, 0, 8},
		{`[1, 2]]`, 0, 6},
		{`x:12e3}`, 2, 6},
		{`x: true,`, 2, 7},
		{`{"a":1,}`, 0, -1},
		{`{"a" 1}`, 0, -1},
		{"\"\xff\"", 0, -1},
		{`[1,2`, 0, -1},
		{``, 0, -1},
		{`   `, 0, -1},
	} {
		require.Equal(t, c.want, Skip([]byte(c.data), c.at), "Skip(%q, %d)", c.data, c.at)
	}
}

// FuzzSkip checks Skip against Valid: a text is valid exactly when Skip
// takes its first value and only white space follows.
func FuzzSkip(f *testing.F) {
	for _, s := range []string{`{"a":[1,-2.5e3,true,null,"\u00e9"]} `, `[{}]x`, `"\"`, `1 2`, `{"a":1,}`, "{\"id\":\"\xff\"}"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		data := []byte(s)
		end := Skip(data, 0)
		whole := end >= 0 && strings.TrimLeft(s[end:], " \t\r\n") == ""
		if got, want := whole, Valid(data); got != want {
			t.Fatalf("Skip(%q, 0) = %d, Valid says %v", s, end, want)
		}
		if end >= 0 && !Valid(data[:end]) {
			t.Fatalf("Skip(%q, 0) = %d, but the text up to there is not valid", s, end)
		}
	})
}

// TestValidFindsEachByteInLongStrings puts each byte a string may not
// hold as it is at every offset of a long string, where Valid and Parse
// look at eight bytes at a time, and checks both against encoding/json.
func TestValidFindsEachByteInLongStrings(t *testing.T) {
	for _, special := range []string{`"`, `\`, `\n`, `\u00e9`, "\x00", "\x1f", "\x7f", "\x80", "é", "\xe2\x82", "€", " ", "~", "!", "#", "[", "]", "]"} {
		for at := 0; at <= 24; at++ {
			s := `["` + strings.Repeat("a", at) + special + strings.Repeat("b", 17) + `"]`
			want := validJSONInUTF8([]byte(s))
			require.Equal(t, want, Valid([]byte(s)), "Valid(%q)", s)
			d, err := Parse([]byte(s))
			require.Equal(t, want, err == nil, "Parse(%q): %v", s, err)
			Release(d)
		}
	}
}
