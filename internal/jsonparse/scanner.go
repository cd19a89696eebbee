package jsonparse

import (
	"bytes"
	"unicode/utf8"
)

// Scanner walks the members of JSON objects in one text and checks the
// JSON as it goes, each byte once: a value it skips is checked by Skip,
// and what is not JSON stops it. It is the one hand-written reader of the
// servers' fast paths (MCP's envelope, A2A's messages), which read the
// few members they need where they are and skip the rest.
type Scanner struct {
	Data []byte
	Pos  int
}

// Peek is the byte at the position, or 0 at the end.
func (s *Scanner) Peek() byte {
	if s.Pos < len(s.Data) {
		return s.Data[s.Pos]
	}
	return 0
}

// Space moves past white space.
func (s *Scanner) Space() {
	for s.Pos < len(s.Data) && IsSpace(s.Data[s.Pos]) {
		s.Pos++
	}
}

// Object calls f at the value of each member of the object at the
// position (after white space), with the member's name, unquoted (a name
// with escapes decoded); f reads the value, leaving the scanner after it,
// or reports false. Object reports false where the text is not an object
// or f did; it leaves the scanner after the object.
func (s *Scanner) Object(f func(name []byte) bool) bool {
	s.Space()
	if s.Peek() != '{' {
		return false
	}
	s.Pos++
	for first := true; ; first = false {
		s.Space()
		if first && s.Peek() == '}' {
			s.Pos++
			return true
		}
		raw := s.String()
		if raw == nil {
			return false
		}
		name := raw[1 : len(raw)-1]
		if bytes.IndexByte(name, '\\') >= 0 {
			name = Unescape(nil, name)
		}
		s.Space()
		if s.Peek() != ':' {
			return false
		}
		s.Pos++
		s.Space()
		if !f(name) {
			return false
		}
		s.Space()
		switch s.Peek() {
		case ',':
			s.Pos++
		case '}':
			s.Pos++
			return true
		default:
			return false
		}
	}
}

// String reads the string at the position, checked, and returns it with
// its quotes, or nil where no string starts.
func (s *Scanner) String() []byte {
	if s.Peek() != '"' {
		return nil
	}
	end := SkipString(s.Data, s.Pos)
	if end < 0 {
		return nil
	}
	raw := s.Data[s.Pos:end]
	s.Pos = end
	return raw
}

// PlainString reads a string without escapes at the position, quotes
// included, or returns nil (a string with an escape too, which a fast
// path leaves to a full parse). Its own loop: the strings it reads are
// short, names and ids.
func (s *Scanner) PlainString() []byte {
	if s.Peek() != '"' {
		return nil
	}
	b := s.Data
	for i := s.Pos + 1; i < len(b); i++ {
		switch c := b[i]; {
		case c == '"':
			raw := b[s.Pos : i+1]
			s.Pos = i + 1
			return raw
		case c == '\\' || c < 0x20:
			return nil
		case c >= utf8.RuneSelf:
			r, size := utf8.DecodeRune(b[i:])
			if r == utf8.RuneError && size == 1 {
				return nil
			}
			i += size - 1
		}
	}
	return nil
}

// Value reads any value at the position, checked, and returns its text,
// or nil where no value starts.
func (s *Scanner) Value() []byte {
	if s.Peek() == '"' {
		return s.String()
	}
	end := Skip(s.Data, s.Pos)
	if end < 0 {
		return nil
	}
	raw := s.Data[s.Pos:end]
	s.Pos = end
	return raw
}
