package jsonparse

import (
	"math/bits"
	"unicode/utf8"
)

// maxDepth is the deepest nesting Valid accepts, encoding/json's.
const maxDepth = 10000

// Valid reports whether data is one JSON value in UTF-8, with white space
// around it: exactly json.Valid(data) && utf8.Valid(data) (nesting deeper
// than 10,000 is refused, as json.Valid does), in a fraction of the time
// of either: one loop over the bytes, with no call per ASCII byte.
//
// json.Valid alone accepts bytes that are not UTF-8 inside strings. A
// server that echoes part of a message it accepted, such as a JSON-RPC id,
// would then answer with text that is not JSON, so Valid refuses them.
func Valid(data []byte) bool {
	i := Skip(data, 0)
	return i >= 0 && skipSpace(data, i) == len(data)
}

// Skip checks the one JSON value that starts at data[i], after any white
// space, as Valid checks a whole text, and returns the index just after
// it, or -1 when no valid value starts there. What follows the value is
// not looked at: a reader that walks a text's outer structure itself
// skips the values it has no use for with Skip, and has then checked the
// text in the same pass.
func Skip(data []byte, i int) int {
	var buf [64]byte
	stack := buf[:0] // the open containers, '{' or '['
value:
	i = skipSpace(data, i)
	if i >= len(data) {
		return -1
	}
	switch data[i] {
	case '{', '[':
		if len(stack) >= maxDepth {
			return -1
		}
		open := data[i]
		i = skipSpace(data, i+1)
		if i < len(data) && data[i] == open+2 { // '}' or ']'
			i++
			break
		}
		stack = append(stack, open)
		if open == '{' {
			if i = member(data, i); i < 0 {
				return -1
			}
		}
		goto value
	case '"':
		if i = skipString(data, i); i < 0 {
			return -1
		}
	case 't':
		if i = literal(data, i, "true"); i < 0 {
			return -1
		}
	case 'f':
		if i = literal(data, i, "false"); i < 0 {
			return -1
		}
	case 'n':
		if i = literal(data, i, "null"); i < 0 {
			return -1
		}
	default:
		if i = skipNumber(data, i); i < 0 {
			return -1
		}
	}
	// After a value: the end, or what follows it in its container.
	for {
		if len(stack) == 0 {
			return i
		}
		i = skipSpace(data, i)
		if i >= len(data) {
			return -1
		}
		top := stack[len(stack)-1]
		switch c := data[i]; {
		case c == ',':
			i = skipSpace(data, i+1)
			if top == '{' {
				if i = member(data, i); i < 0 {
					return -1
				}
			}
			goto value
		case c == top+2:
			stack = stack[:len(stack)-1]
			i++
		default:
			return -1
		}
	}
}

// member reads an object member's key and colon at i, and returns the
// index after them, or -1.
func member(data []byte, i int) int {
	if i >= len(data) || data[i] != '"' {
		return -1
	}
	if i = skipString(data, i); i < 0 {
		return -1
	}
	i = skipSpace(data, i)
	if i >= len(data) || data[i] != ':' {
		return -1
	}
	return i + 1
}

func skipSpace(data []byte, i int) int {
	for i < len(data) {
		switch data[i] {
		case ' ', '\t', '\n', '\r':
			i++
		default:
			return i
		}
	}
	return i
}

// SkipString is Skip for a value that starts at data[i] with a quote: it
// returns the index just after the string, or -1 when it is not a valid
// one.
func SkipString(data []byte, i int) int { return skipString(data, i) }

// skipString returns the index after the string at i, or -1 if it is not
// a valid one: a control character, a bad escape, or bytes that are not
// UTF-8 (outside strings JSON is ASCII, so this is the only place they can
// hide).
func skipString(data []byte, i int) int {
	for i++; i < len(data); i++ {
		i = plainRun(data, i) // most bytes of most strings
		if i >= len(data) {
			break
		}
		switch c := data[i]; {
		case c == '"':
			return i + 1
		case c < 0x20:
			return -1
		case c >= utf8.RuneSelf:
			r, size := utf8.DecodeRune(data[i:])
			if r == utf8.RuneError && size == 1 {
				return -1
			}
			i += size - 1
		case c == '\\':
			i++
			if i >= len(data) {
				return -1
			}
			switch data[i] {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
			case 'u':
				if i+4 >= len(data) {
					return -1
				}
				for _, h := range data[i+1 : i+5] {
					if !IsHex(h) {
						return -1
					}
				}
				i += 4
			default:
				return -1
			}
		}
	}
	return -1
}

func literal(data []byte, i int, word string) int {
	if len(data)-i < len(word) || string(data[i:i+len(word)]) != word {
		return -1
	}
	return i + len(word)
}

// skipNumber returns the index after the number at i, or -1 if it is not
// a valid one.
func skipNumber(data []byte, i int) int {
	if i < len(data) && data[i] == '-' {
		i++
	}
	switch {
	case i >= len(data):
		return -1
	case data[i] == '0':
		i++
	case data[i] >= '1' && data[i] <= '9':
		i = skipDigits(data, i+1)
	default:
		return -1
	}
	if i < len(data) && data[i] == '.' {
		j := skipDigits(data, i+1)
		if j == i+1 {
			return -1
		}
		i = j
	}
	if i < len(data) && (data[i] == 'e' || data[i] == 'E') {
		i++
		if i < len(data) && (data[i] == '+' || data[i] == '-') {
			i++
		}
		j := skipDigits(data, i)
		if j == i {
			return -1
		}
		i = j
	}
	return i
}

func skipDigits(data []byte, i int) int {
	for i < len(data) && data[i] >= '0' && data[i] <= '9' {
		i++
	}
	return i
}

// plainRun returns the index of the first byte at or after i that a
// string does not hold as it is (a quote, a backslash, a control
// character, or a byte of a multi-byte sequence), or len(data). It looks
// at eight bytes at a time, and at the last few one by one.
func plainRun(data []byte, i int) int { return PlainRun(data, i) }

// PlainRun is plainRun for a string or bytes: a writer of JSON strings
// copies such a run as it is.
func PlainRun[T ~string | ~[]byte](data T, i int) int {
	const (
		ones  = 0x0101010101010101
		highs = 0x8080808080808080
	)
	for ; i+8 <= len(data); i += 8 {
		// One load, little-endian (the compiler combines the bytes).
		x := uint64(data[i]) | uint64(data[i+1])<<8 | uint64(data[i+2])<<16 | uint64(data[i+3])<<24 |
			uint64(data[i+4])<<32 | uint64(data[i+5])<<40 | uint64(data[i+6])<<48 | uint64(data[i+7])<<56
		q := x ^ ('"' * ones)  // a zero byte where a quote is
		b := x ^ ('\\' * ones) // a zero byte where a backslash is
		// The high bit of a byte is set by some term where that byte is a
		// quote, a backslash, below 0x20, or 0x80 and above. A term may
		// also set it in a byte above one that is (a borrow carries up),
		// never below: the lowest bit set is the first such byte.
		if m := ((q-ones)&^q | (b-ones)&^b | (x-0x20*ones)&^x | x) & highs; m != 0 {
			return i + bits.TrailingZeros64(m)/8
		}
	}
	for i < len(data) && plainByte[data[i]] {
		i++
	}
	return i
}

// plainByte marks the bytes a string holds as they are, needing no check
// beyond their own: printable ASCII other than the quote and the backslash.
var plainByte = func() (t [256]bool) {
	for c := 0x20; c < utf8.RuneSelf; c++ {
		t[c] = c != '"' && c != '\\'
	}
	return t
}()
