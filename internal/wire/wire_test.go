package wire

import (
	"strings"
	"testing"
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
