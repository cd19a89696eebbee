package a2a

import (
	"bytes"

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
	s := quickScanner{jsonparse.Scanner{Data: body}}
	q.in = incoming{input: -1, answers: -1, data: -1, push: -1, partsNode: -1, history: historyAll}
	seen := 0
	ok = s.Object(func(name []byte) bool {
		switch string(name) {
		case "jsonrpc":
			return once(&seen, seenJSONRPC) && bytes.Equal(s.PlainString(), []byte(`"2.0"`))
		case "id":
			if !once(&seen, seenID) {
				return false
			}
			if s.Peek() == '"' {
				q.id = s.PlainString()
			} else if c := s.Peek(); c == '-' || '0' <= c && c <= '9' {
				q.id = s.Value()
			}
			return q.id != nil && len(q.id) <= maxIDBytes
		case "method":
			if !once(&seen, seenMethod) {
				return false
			}
			switch string(s.PlainString()) {
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
		s.Space()
		if s.Pos == len(body) {
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
	return s.Object(func(name []byte) bool {
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
	return s.Object(func(name []byte) bool {
		switch string(name) {
		case "messageId":
			return once(&seen, seenMessageID) && s.text(&in.messageID)
		case "contextId":
			return once(&seen, seenContextID) && s.text(&in.contextID)
		case "role":
			return once(&seen, seenRole) && s.PlainString() != nil
		case "kind":
			return once(&seen, seenKind) && s.PlainString() != nil
		case "parts":
			return once(&seen, seenParts) && s.parts(in)
		}
		return false
	}) && seen&seenParts != 0
}

// parts reads an array of one part, {"data": {"tool": ..., "input": {...}}}
// with 0.3's "kind" beside "data" or not.
func (s *quickScanner) parts(in *incoming) bool {
	if s.Peek() != '[' {
		return false
	}
	s.Pos++
	s.Space()
	if s.Peek() != '{' {
		return false
	}
	seen := 0
	ok := s.Object(func(name []byte) bool {
		switch string(name) {
		case "kind":
			return once(&seen, 1) && s.PlainString() != nil
		case "data":
			return once(&seen, 2) && s.data(in)
		}
		return false
	})
	if !ok || seen&2 == 0 {
		return false
	}
	s.Space()
	if s.Peek() != ']' {
		return false
	}
	s.Pos++
	in.parts, in.found = 1, true
	return true
}

// data reads a call part's data: the tool's name and its input, an
// object, which is parsed into in.doc.
func (s *quickScanner) data(in *incoming) bool {
	if s.Peek() != '{' {
		return false
	}
	start := s.Pos
	seen := 0
	ok := s.Object(func(name []byte) bool {
		switch string(name) {
		case "tool":
			return once(&seen, 1) && s.text(&in.tool)
		case "input":
			if !once(&seen, 2) || s.Peek() != '{' {
				return false
			}
			d, end, err := jsonparse.ParseValue(s.Data, s.Pos)
			if err != nil {
				return false
			}
			s.Pos = end
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
	in.dataRaw = s.Data[start:s.Pos]
	return true
}

// quickScanner is the JSON scanner of internal/jsonparse, with what
// readQuick reads of it.
type quickScanner struct{ jsonparse.Scanner }

// once marks bit in *seen, and reports false when it was marked already:
// a repeated member name.
func once(seen *int, bit int) bool {
	if *seen&bit != 0 {
		return false
	}
	*seen |= bit
	return true
}

// text reads a string without escapes into *v.
func (s *quickScanner) text(v *string) bool {
	raw := s.PlainString()
	if raw == nil {
		return false
	}
	*v = string(raw[1 : len(raw)-1])
	return true
}
