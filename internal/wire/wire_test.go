package wire

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"testing/iotest"
	"time"
	"unicode/utf8"

	"github.com/stretchr/testify/assert"
)

func TestTruncate(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		s    string
		n    int
		want string
	}{
		{"shorter", "abc", 5, "abc"},
		{"exact", "abcde", 5, "abcde"},
		{"ascii_cut", "abcdef", 5, "abcde…"},
		{"empty", "", 0, ""},
		{"zero_budget", "abc", 0, "…"},
		// é is two bytes (c3 a9): a cut inside it backs up to its start.
		{"inside_two_byte_rune", "hé!", 2, "h…"},
		{"after_two_byte_rune", "hé!", 3, "hé…"},
		// € is three bytes, 😀 four.
		{"inside_three_byte_rune_1", "a€b", 2, "a…"},
		{"inside_three_byte_rune_2", "a€b", 3, "a…"},
		{"after_three_byte_rune", "a€b", 4, "a€…"},
		{"inside_four_byte_rune", "😀😀", 7, "😀…"},
		{"exact_multibyte", "😀😀", 8, "😀😀"},
		{"first_rune_too_long", "😀", 3, "…"},
		// Invalid UTF-8 is cut like any byte; the result adds no new
		// invalid sequence.
		{"invalid_utf8", "ab\xffcd", 3, "ab\xff…"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got := Truncate(tt.s, tt.n)
			assert.Equal(t, tt.want, got)
			prefix := strings.TrimSuffix(got, "…")
			assert.LessOrEqual(t, len(prefix), tt.n, "the kept part fits in n bytes")
			assert.True(t, strings.HasPrefix(tt.s, prefix))
			if utf8.ValidString(tt.s) {
				assert.True(t, utf8.ValidString(got), "a cut never splits a rune")
			}
		})
	}
}

func TestTruncateNeverSplitsRunes(t *testing.T) {
	t.Parallel()
	s := strings.Repeat("aé€😀", 20)
	for n := 0; n <= len(s)+1; n++ {
		got := Truncate(s, n)
		if !utf8.ValidString(got) {
			t.Fatalf("truncate(%q, %d) = %q is not valid UTF-8", s, n, got)
		}
		if prefix := strings.TrimSuffix(got, "…"); len(prefix) > n {
			t.Fatalf("truncate(_, %d) kept %d bytes", n, len(prefix))
		}
	}
}

func TestJWTParts(t *testing.T) {
	t.Parallel()
	enc := func(s string) string { return base64.RawURLEncoding.EncodeToString([]byte(s)) }
	head, claims := enc(`{"alg":"ES256","kid":"k1"}`), enc(`{"sub":"agent"}`)
	for _, tc := range []struct {
		name          string
		token         string
		header, claim bool
	}{
		{"jwt", head + "." + claims + ".sig", true, true},
		{"two_parts", head + "." + claims, false, false},
		{"four_parts", head + "." + claims + ".sig.x", false, false},
		{"claims_not_base64url", head + ".not*b64.sig", true, false},
		{"claims_not_an_object", head + "." + enc(`[1]`) + ".sig", true, false},
		{"header_padded_base64", base64.URLEncoding.EncodeToString([]byte(`{"alg":"x"}`)) + "." + claims + ".s", false, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h, c := JWTParts(tc.token)
			assert.Equal(t, tc.header, h != nil, "header")
			assert.Equal(t, tc.claim, c != nil, "claims")
		})
	}
	h, c := JWTParts(head + "." + claims + ".sig")
	assert.Equal(t, "k1", h["kid"])
	assert.Equal(t, "agent", c["sub"])
}

func TestReadAnswer(t *testing.T) {
	t.Parallel()
	b, err := ReadAnswer(strings.NewReader(strings.Repeat("a", 10)), 10, "the key set")
	assert.NoError(t, err)
	assert.Len(t, b, 10)
	_, err = ReadAnswer(strings.NewReader(strings.Repeat("a", 11)), 10, "the key set")
	assert.EqualError(t, err, "the key set is over 10 bytes")
	_, err = ReadAnswer(iotest.ErrReader(errors.New("reset")), 10, "the answer")
	assert.EqualError(t, err, "reading the answer: reset")
}

// TestRetryAfter: seconds and HTTP dates, bounded; anything else is no
// wait.
func TestRetryAfter(t *testing.T) {
	now := time.Date(2026, 11, 28, 12, 0, 0, 0, time.UTC)
	for _, c := range []struct {
		v    string
		want time.Duration
	}{
		{"", 0}, {"3", 3 * time.Second}, {" 120 ", 2 * time.Minute}, {"0", 0}, {"-5", 0}, {"1.5", 0}, {"soon", 0},
		{"99999999999999999", MaxRetryAfter}, {"Sat, 28 Nov 2026 12:00:30 GMT", 30 * time.Second},
		{"Sat, 28 Nov 2026 11:00:00 GMT", 0}, {"Sun, 28 Nov 2027 12:00:00 GMT", MaxRetryAfter},
	} {
		if got := RetryAfter(c.v, now); got != c.want {
			t.Errorf("RetryAfter(%q) = %v, want %v", c.v, got, c.want)
		}
	}
}

// TestTruncateOnARune: a cut never splits a character, so that the text
// stays valid UTF-8.
func TestTruncateOnARune(t *testing.T) {
	s := "añb€c"
	for n := range len(s) + 1 {
		got := Truncate(s, n)
		if !utf8.ValidString(got) {
			t.Errorf("Truncate(%q, %d) = %q: not UTF-8", s, n, got)
		}
	}
	if got := Truncate("añb", 2); got != "a…" {
		t.Errorf("Truncate cut inside ñ: %q", got)
	}
}

// FuzzAppendString holds AppendString to encoding/json: valid JSON, on
// one line, holding the string encoding/json's writing holds (invalid
// UTF-8 as U+FFFD), and a string that needs no escape as it is.
func FuzzAppendString(f *testing.F) {
	for _, s := range []string{"", "plain text, longer than eight bytes", "q\"b\\c\n\r\t\x00\x1f\x7f", "é\u2028\u2029x", "\xff\xfe bad", "12345678\"", "1234567\xc3"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		got := AppendString([]byte("x"), s)[1:]
		if !json.Valid(got) || bytes.ContainsAny(got, "\r\n") {
			t.Fatalf("AppendString(%q) = %s: not JSON on one line", s, got)
		}
		ref, _ := json.Marshal(s)
		var back, want string
		if json.Unmarshal(got, &back) != nil || json.Unmarshal(ref, &want) != nil || back != want {
			t.Fatalf("AppendString(%q) = %s, holding %q; encoding/json's holds %q", s, got, back, want)
		}
		if string(ref) == `"`+s+`"` && string(got) != string(ref) {
			t.Fatalf("AppendString(%q) = %s, escaping what needs no escape", s, got)
		}
	})
}
