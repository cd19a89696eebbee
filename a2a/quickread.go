package a2a

import (
	"bytes"
	"unicode/utf8"

	"github.com/otcgo/otc/internal/jsonparse"
)

// This file reads the commonest request in one pass over its body: a
// SendMessage (0.3: message/send) whose message calls one tool with one
// data part {"tool", "input"} and says nothing else. Only the input is
// parsed into a document, the one the registry validates and decodes;
// the rest is walked and checked byte by byte. Any other request, and
// anything in this one the walk does not read exactly as readEnvelope
// and readSend would (a member it does not know, a repeated name, an
// escape in a name or in a string it reads, a null, JSON it cannot walk),
// goes the whole-document way, which reads it or says what is wrong.

// quickSend is a request readQuick read: the JSON-RPC id as sent, the
// method and the message.
type quickSend struct {
	id     []byte
	method string
	in     incoming
}

// Members of the objects readQuick walks, as bits of the set it has seen.
const (
	seenJSONRPC = 1 << iota
	seenID
	seenMethod
	seenParams
)

// readQuick reads body as a quickSend, or reports false; the input's
// document, in q.in.doc, is the caller's to release.
func readQuick(body []byte) (q quickSend, ok bool) {
	s := quickScanner{b: body}
	q.in = incoming{input: -1, answers: -1, data: -1, push: -1, partsNode: -1, history: historyAll}
	seen := 0
	ok = s.object(func(name []byte) bool {
		switch string(name) {
		case "jsonrpc":
			return once(&seen, seenJSONRPC) && bytes.Equal(s.plainString(), []byte(`"2.0"`))
		case "id":
			if !once(&seen, seenID) {
				return false
			}
			if s.peek() == '"' {
				q.id = s.plainString()
			} else if c := s.peek(); c == '-' || '0' <= c && c <= '9' {
				q.id = s.skip()
			}
			return q.id != nil && len(q.id) <= maxIDBytes
		case "method":
			if !once(&seen, seenMethod) {
				return false
			}
			switch string(s.plainString()) {
			case `"SendMessage"`:
				q.method = "SendMessage"
			case `"message/send"`:
				q.method = "message/send"
			default:
				return false
			}
			return true
		case "params":
			return once(&seen, seenParams) && s.params(&q.in)
		}
		return false
	})
	if ok && seen == seenJSONRPC|seenID|seenMethod|seenParams {
		s.space()
		if s.i == len(body) {
			return q, true
		}
	}
	jsonparse.Release(q.in.doc)
	q.in.doc = nil
	return q, false
}

// params reads a SendMessageRequest that holds its message alone.
func (s *quickScanner) params(in *incoming) bool {
	seen := 0
	return s.object(func(name []byte) bool {
		return string(name) == "message" && once(&seen, 1) && s.message(in)
	}) && seen == 1
}

// message reads a message with ids, a role, a kind (0.3's "message") and
// one data part that calls a tool.
func (s *quickScanner) message(in *incoming) bool {
	const (
		seenMessageID = 1 << iota
		seenContextID
		seenRole
		seenKind
		seenParts
	)
	seen := 0
	return s.object(func(name []byte) bool {
		switch string(name) {
		case "messageId":
			return once(&seen, seenMessageID) && s.text(&in.messageID)
		case "contextId":
			return once(&seen, seenContextID) && s.text(&in.contextID)
		case "role":
			return once(&seen, seenRole) && s.plainString() != nil
		case "kind":
			return once(&seen, seenKind) && s.plainString() != nil
		case "parts":
			return once(&seen, seenParts) && s.parts(in)
		}
		return false
	}) && seen&seenParts != 0
}

// parts reads an array of one part, {"data": {"tool": ..., "input": {...}}}
// with 0.3's "kind" beside "data" or not.
func (s *quickScanner) parts(in *incoming) bool {
	if s.peek() != '[' {
		return false
	}
	s.i++
	s.space()
	if s.peek() != '{' {
		return false
	}
	seen := 0
	ok := s.object(func(name []byte) bool {
		switch string(name) {
		case "kind":
			return once(&seen, 1) && s.plainString() != nil
		case "data":
			return once(&seen, 2) && s.data(in)
		}
		return false
	})
	if !ok || seen&2 == 0 {
		return false
	}
	s.space()
	if s.peek() != ']' {
		return false
	}
	s.i++
	in.parts, in.found = 1, true
	return true
}

// data reads a call part's data: the tool's name and its input, an
// object, which is parsed into in.doc.
func (s *quickScanner) data(in *incoming) bool {
	if s.peek() != '{' {
		return false
	}
	start := s.i
	seen := 0
	ok := s.object(func(name []byte) bool {
		switch string(name) {
		case "tool":
			return once(&seen, 1) && s.text(&in.tool)
		case "input":
			if !once(&seen, 2) || s.peek() != '{' {
				return false
			}
			d, end, err := jsonparse.ParseValue(s.b, s.i)
			if err != nil {
				return false
			}
			s.i = end
			if d.Repeated {
				jsonparse.Release(d)
				return false
			}
			in.doc, in.input = d, 0
			return true
		}
		return false
	})
	if !ok || seen != 3 {
		return false
	}
	in.dataRaw = s.b[start:s.i]
	return true
}

// quickScanner walks a JSON text for readQuick.
type quickScanner struct {
	b []byte
	i int
}

func (s *quickScanner) peek() byte {
	if s.i < len(s.b) {
		return s.b[s.i]
	}
	return 0
}

func (s *quickScanner) space() {
	for s.i < len(s.b) && jsonparse.IsSpace(s.b[s.i]) {
		s.i++
	}
}

// once marks bit in *seen, and reports false when it was marked already:
// a repeated member name.
func once(seen *int, bit int) bool {
	if *seen&bit != 0 {
		return false
	}
	*seen |= bit
	return true
}

// object calls f at the value of each member of the object at the
// scanner's position, with the member's name; f reads the value, leaving
// the scanner after it, or reports false. A name with an escape reports
// false.
func (s *quickScanner) object(f func(name []byte) bool) bool {
	s.space()
	if s.peek() != '{' {
		return false
	}
	s.i++
	s.space()
	if s.peek() == '}' {
		s.i++
		return true
	}
	for {
		s.space()
		raw := s.plainString()
		if raw == nil {
			return false
		}
		s.space()
		if s.peek() != ':' {
			return false
		}
		s.i++
		s.space()
		if !f(raw[1 : len(raw)-1]) {
			return false
		}
		s.space()
		switch s.peek() {
		case ',':
			s.i++
		case '}':
			s.i++
			return true
		default:
			return false
		}
	}
}

// plainString reads a string without escapes at the scanner's position,
// quotes included, or returns nil. (Its own loop: the strings it reads
// are short, names and ids, and one with an escape is not read at all.)
func (s *quickScanner) plainString() []byte {
	if s.peek() != '"' {
		return nil
	}
	b := s.b
	for i := s.i + 1; i < len(b); i++ {
		switch c := b[i]; {
		case c == '"':
			raw := b[s.i : i+1]
			s.i = i + 1
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

// text reads a string without escapes into *v.
func (s *quickScanner) text(v *string) bool {
	raw := s.plainString()
	if raw == nil {
		return false
	}
	*v = string(raw[1 : len(raw)-1])
	return true
}

// skip reads any value, checked, and returns its text, or nil.
func (s *quickScanner) skip() []byte {
	end := jsonparse.Skip(s.b, s.i)
	if end < 0 {
		return nil
	}
	raw := s.b[s.i:end]
	s.i = end
	return raw
}
