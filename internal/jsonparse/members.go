package jsonparse

import "bytes"

// EachMember calls f with each member of the JSON object that data holds
// (white space around it allowed), in the text's order: its name,
// unescaped, and its value's raw text, a slice of data. The text is
// checked as Valid checks it, in the same pass, and nothing is allocated
// unless a name holds escapes. It stops when f returns false, and reports
// whether data is one valid object as far as it was read.
//
// It is for a reader of a small message that wants a few of its members
// (a JSON-RPC answer's id and result, say) without building nodes: each
// value is skipped, and the reader decodes the ones it uses.
func EachMember(data []byte, f func(name, value []byte) bool) bool {
	s := Scanner{Data: data}
	stopped := false
	ok := s.Object(func(name []byte) bool {
		v := s.Value()
		if v == nil {
			return false
		}
		if !f(name, v) {
			stopped = true
			return false
		}
		return true
	})
	if stopped {
		return true
	}
	s.Space()
	return ok && s.Pos == len(data)
}

// EachElement is EachMember for an array: it calls f with the raw text of
// each element.
func EachElement(data []byte, f func(value []byte) bool) bool {
	i := skipSpace(data, 0)
	if i >= len(data) || data[i] != '[' {
		return false
	}
	i = skipSpace(data, i+1)
	if i < len(data) && data[i] == ']' {
		return skipSpace(data, i+1) == len(data)
	}
	for {
		start := i
		if i = Skip(data, start); i < 0 {
			return false
		}
		if !f(data[start:i]) {
			return true
		}
		var more bool
		if i, more = next(data, i, ']'); !more {
			return i == len(data)
		}
	}
}

// next reads what follows a member or element that ends at i: a comma,
// after which it returns the next one's start and more, or end, the
// container's close, after which it returns where the text's trailing
// white space ends (len(data) when nothing else follows). Anything else
// returns -1.
func next(data []byte, i int, end byte) (int, bool) {
	i = skipSpace(data, i)
	switch {
	case i >= len(data):
		return -1, false
	case data[i] == ',':
		return skipSpace(data, i+1), true
	case data[i] == end:
		return skipSpace(data, i+1), false
	}
	return -1, false
}

// String returns the string that raw, a JSON string value as EachMember
// hands it (checked already), holds, unescaped; ok is false when raw is
// not a string.
func String(raw []byte) (s string, ok bool) {
	if len(raw) < 2 || raw[0] != '"' || raw[len(raw)-1] != '"' {
		return "", false
	}
	inner := raw[1 : len(raw)-1]
	if bytes.IndexByte(inner, '\\') < 0 {
		return string(inner), true
	}
	return string(Unescape(nil, inner)), true
}
