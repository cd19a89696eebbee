package otc

import (
	"encoding/json"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// checkAppendJSONString checks appendJSONString(prefix, s) against
// encoding/json: both must decode to the same string. The two encodings
// need not be byte-equal (encoding/json also escapes <, > and & for HTML),
// but the hand-written one must be valid JSON, keep the prefix, and leave
// no raw control character or line separator in the output.
func checkAppendJSONString(t *testing.T, s string) {
	t.Helper()
	const prefix = `{"x":`
	out := appendJSONString([]byte(prefix), s)
	if !strings.HasPrefix(string(out), prefix) {
		t.Fatalf("appendJSONString dropped the prefix: %q", out)
	}
	enc := out[len(prefix):]
	if !json.Valid(enc) {
		t.Fatalf("appendJSONString(%q) = %s is not valid JSON", s, enc)
	}
	if !utf8.Valid(enc) {
		t.Fatalf("appendJSONString(%q) = %q is not valid UTF-8", s, enc)
	}
	for _, r := range string(enc) {
		if r < 0x20 || r == '\u2028' || r == '\u2029' {
			t.Fatalf("appendJSONString(%q) = %q holds the raw character %U", s, enc, r)
		}
	}
	var got string
	if err := json.Unmarshal(enc, &got); err != nil {
		t.Fatalf("decoding %s: %v", enc, err)
	}
	want, err := json.Marshal(s)
	if err != nil {
		t.Fatal(err)
	}
	var wantDecoded string
	if err := json.Unmarshal(want, &wantDecoded); err != nil {
		t.Fatal(err)
	}
	if got != wantDecoded {
		t.Fatalf("appendJSONString(%q) decodes to %q; encoding/json gives %q", s, got, wantDecoded)
	}
}

// jsonStringSeeds are the strings both tests below start from.
var jsonStringSeeds = []string{
	"",
	"plain ascii",
	`quote " and backslash \ and slash /`,
	"\x00\x01\x07\x08\x0b\x0c\x1f\x7f",
	"tab\tnewline\ncarriage\rreturn",
	"line\u2028separator\u2029paragraph",
	"<html> & 'quotes'",
	"é€😀 multibyte",
	"invalid \xff byte",
	"truncated rune \xe2\x82",
	"lone continuation \x80\x80",
	"surrogate half \xed\xa0\x80",
	"overlong \xc0\xaf",
	"\ufffd already a replacement",
	"\ufeffbyte order mark",
	"ends in backslash \\",
}

func TestAppendJSONString(t *testing.T) {
	t.Parallel()
	for _, s := range jsonStringSeeds {
		checkAppendJSONString(t, s)
	}
	// Every single byte, alone and between text.
	for b := range 256 {
		checkAppendJSONString(t, string([]byte{byte(b)}))
		checkAppendJSONString(t, "a"+string([]byte{byte(b)})+"z")
	}
}

func TestAppendJSONStringExactBytes(t *testing.T) {
	t.Parallel()
	// The escapes a reader of a raw response sees.
	tests := map[string]string{
		"a\"b":         `"a\"b"`,
		`a\b`:          `"a\\b"`,
		"a\nb\rc\td":   `"a\nb\rc\td"`,
		"\x00\x1f":     `"\u0000\u001f"`,
		"\u2028\u2029": `"\u2028\u2029"`,
		"\xff":         `"\ufffd"`,
		"é":            `"é"`,
		"":             `""`,
	}
	for in, want := range tests {
		assert.Equal(t, want, string(appendJSONString(nil, in)), "%q", in)
	}
}

func TestAppendJSONStringAppends(t *testing.T) {
	t.Parallel()
	buf := make([]byte, 0, 64)
	buf = append(buf, "start:"...)
	buf = appendJSONString(buf, "one")
	buf = append(buf, ',')
	buf = appendJSONString(buf, "t\"wo")
	require.Equal(t, `start:"one","t\"wo"`, string(buf))
}

func FuzzAppendJSONString(f *testing.F) {
	for _, s := range jsonStringSeeds {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		checkAppendJSONString(t, s)
	})
}
