package jsonparse

import (
	"bytes"
	"fmt"
	"iter"
	"sync"
	"unicode/utf16"
	"unicode/utf8"
)

// MaxDepth caps the nesting of arrays and objects. No tool input or
// envelope needs more than a few levels; the cap keeps the recursive steps
// that follow the parse shallow.
const MaxDepth = 1000

// Kind is the JSON type of a node.
type Kind uint8

const (
	KindNull Kind = iota + 1
	KindFalse
	KindTrue
	KindNumber
	KindString
	KindArray
	KindObject
)

// Node flags.
const (
	FlagEscaped  uint8 = 1 << iota // a string with escape sequences
	FlagFraction                   // a number with a decimal point
	FlagExponent                   // a number with an exponent
	FlagRepeated                   // an object in which a member name is repeated
)

// Node is one JSON value. An array's elements follow it in the list, each
// with its own subtree; an object's members follow it as pairs of a key
// (a string Node) and a value subtree.
type Node struct {
	Start, End int32 // the value's text, data[start:end]; quotes included for a string
	Next       int32 // index of the first node after this value's subtree
	Count      int32 // elements of an array, members of an object
	Kind       Kind
	Flags      uint8
}

// Document is a parsed JSON text. Node 0 is the top-level value.
type Document struct {
	Data     []byte
	Nodes    []Node
	Repeated bool // some object repeats a member name

	// keys is the parser's list of key indices, kept with the pooled
	// document so that a parse does not allocate it anew.
	keys []int32
}

// SyntaxError is a JSON text that cannot be parsed. It names the byte
// offset and never quotes the text beyond one character.
type SyntaxError struct {
	Offset int
	Msg    string
	UTF8   bool // the text is not valid UTF-8
}

func (e *SyntaxError) Error() string { return fmt.Sprintf("%s (at byte %d)", e.Msg, e.Offset) }

// docPool recycles documents, so that parsing a body allocates nothing
// once the pool is warm. Documents that grew large are dropped.
var docPool = sync.Pool{New: func() any { return &Document{Nodes: make([]Node, 0, 64)} }}

const maxPooledNodes = 16 << 10

// maxPooledKeys bounds the key list a pooled document keeps: one object
// with many members does not pin its list.
const maxPooledKeys = 1 << 10

// Parse parses data, which must hold exactly one JSON value. The
// document refers to data, which must not change while it is in use.
// Release it with Release.
func Parse(data []byte) (*Document, error) {
	d, _, err := parse(data, 0, true)
	return d, err
}

// ParseValue parses the one JSON value that starts at data[i], after any
// white space, and returns its document and the index just after the
// value; what follows the value is not looked at. The document's Data is
// the whole of data, and its nodes' offsets are offsets in data: node 0
// is the value. A reader that walks a message itself parses the one
// member it hands on this way, without a second pass over its text.
func ParseValue(data []byte, i int) (*Document, int, error) {
	return parse(data, i, false)
}

func parse(data []byte, i int, whole bool) (*Document, int, error) {
	d := docPool.Get().(*Document)
	d.Data, d.Nodes, d.Repeated = data, d.Nodes[:0], false
	p := parser{doc: d, data: data, pos: i, list: d.Nodes[:0], keys: d.keys[:0]}
	err := p.value()
	if err == nil && whole {
		p.space()
		if p.pos < len(data) {
			err = p.fail("invalid character " + quoteByte(data[p.pos]) + " after the top-level value")
		}
	}
	d.Nodes = p.list
	if cap(p.keys) <= maxPooledKeys {
		d.keys = p.keys[:0]
	}
	if err != nil {
		Release(d)
		return nil, 0, err
	}
	return d, p.pos, nil
}

// Release returns d to the pool. d may be nil.
func Release(d *Document) {
	if d == nil || cap(d.Nodes) > maxPooledNodes {
		return
	}
	d.Data = nil
	docPool.Put(d)
}

// parser holds the state of one parse.
type parser struct {
	doc   *Document
	data  []byte
	pos   int
	depth int
	list  []Node // the nodes so far; becomes doc.nodes
	// keys holds the key node indices of the objects being parsed,
	// innermost last, for finding repeated names.
	keys []int32
	// sets holds, per depth, the names of an object too large for a
	// linear search, reused from one object to the next.
	sets []map[string]struct{}
}

func (p *parser) fail(msg string) error { return &SyntaxError{Offset: p.pos, Msg: msg} }

func (p *parser) space() {
	for p.pos < len(p.data) {
		switch p.data[p.pos] {
		case ' ', '\t', '\r', '\n':
			p.pos++
		default:
			return
		}
	}
}

// push appends a node and returns its index. The list doubles when full:
// append grows large slices by a quarter at a time, which for a body of a
// million values copies the list some thirty times.
func (p *parser) push(kind Kind, start int) int32 {
	if len(p.list) == cap(p.list) {
		// Not slices.Grow, whose rounding for large slices adds up to a
		// fifth more than asked for.
		list := make([]Node, len(p.list), len(p.list)+p.growth(start))
		copy(list, p.list)
		p.list = list
	}
	p.list = append(p.list, Node{Kind: kind, Start: int32(start)})
	return int32(len(p.list) - 1)
}

// growth is how many nodes to add to a full list when a node starts at
// pos: the list's length (doubling it), but no more than the nodes the
// rest of the body would hold at the density seen so far, plus an eighth.
// A body of one repeated shape thus ends with a list at most an eighth
// too large, rather than up to twice the size it needs.
func (p *parser) growth(pos int) int {
	n := len(p.list)
	if n < 1024 || pos <= 0 {
		return max(n, 64)
	}
	rest := int(int64(n) * int64(len(p.data)-pos) / int64(pos))
	return max(min(n, rest+rest/8), 1024)
}

// finish closes node i at the current position.
func (p *parser) finish(i int32) {
	n := &p.list[i]
	n.End = int32(p.pos)
	n.Next = int32(len(p.list))
}

func (p *parser) value() error {
	p.space()
	if p.pos >= len(p.data) {
		return p.fail("unexpected end of JSON input")
	}
	switch c := p.data[p.pos]; c {
	case '{':
		return p.object()
	case '[':
		return p.array()
	case '"':
		return p.string()
	case 't':
		return p.literal("true", KindTrue)
	case 'f':
		return p.literal("false", KindFalse)
	case 'n':
		return p.literal("null", KindNull)
	default:
		if c == '-' || '0' <= c && c <= '9' {
			return p.number()
		}
		return p.fail("invalid character " + quoteByte(c) + " looking for the beginning of a value")
	}
}

func (p *parser) literal(word string, kind Kind) error {
	if !bytes.HasPrefix(p.data[p.pos:], []byte(word)) {
		for i := 0; i < len(word); i++ {
			if p.pos+i >= len(p.data) {
				p.pos += i
				return p.fail("unexpected end of JSON input")
			}
			if p.data[p.pos+i] != word[i] {
				p.pos += i
				return p.fail("invalid character " + quoteByte(p.data[p.pos]) + " in literal " + word)
			}
		}
	}
	i := p.push(kind, p.pos)
	p.pos += len(word)
	p.finish(i)
	return nil
}

func (p *parser) number() error {
	i := p.push(KindNumber, p.pos)
	data := p.data
	if data[p.pos] == '-' {
		p.pos++
	}
	digits := func() error {
		start := p.pos
		for p.pos < len(data) && '0' <= data[p.pos] && data[p.pos] <= '9' {
			p.pos++
		}
		if p.pos == start {
			if p.pos >= len(data) {
				return p.fail("unexpected end of JSON input")
			}
			return p.fail("invalid character " + quoteByte(data[p.pos]) + " in numeric literal")
		}
		return nil
	}
	if p.pos < len(data) && data[p.pos] == '0' {
		p.pos++
	} else if err := digits(); err != nil {
		return err
	}
	var flags uint8
	if p.pos < len(data) && data[p.pos] == '.' {
		p.pos++
		flags |= FlagFraction
		if err := digits(); err != nil {
			return err
		}
	}
	if p.pos < len(data) && (data[p.pos] == 'e' || data[p.pos] == 'E') {
		p.pos++
		flags |= FlagExponent
		if p.pos < len(data) && (data[p.pos] == '+' || data[p.pos] == '-') {
			p.pos++
		}
		if err := digits(); err != nil {
			return err
		}
	}
	p.list[i].Flags = flags
	p.finish(i)
	return nil
}

func (p *parser) string() error {
	i := p.push(KindString, p.pos)
	data := p.data
	p.pos++ // the opening quote
	var flags uint8
	for {
		p.pos = plainRun(data, p.pos)
		if p.pos >= len(data) {
			return p.fail("unexpected end of JSON input in a string")
		}
		switch c := data[p.pos]; {
		case c == '"':
			p.pos++
			p.list[i].Flags = flags
			p.finish(i)
			return nil
		case c == '\\':
			flags |= FlagEscaped
			if p.pos+1 >= len(data) {
				p.pos++
				return p.fail("unexpected end of JSON input in a string")
			}
			switch data[p.pos+1] {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
				p.pos += 2
			case 'u':
				p.pos += 2
				for range 4 {
					if p.pos >= len(data) {
						return p.fail("unexpected end of JSON input in a string")
					}
					if !IsHex(data[p.pos]) {
						return p.fail("invalid character " + quoteByte(data[p.pos]) + " in a \\u escape")
					}
					p.pos++
				}
			default:
				p.pos++
				return p.fail("invalid escape " + quoteByte(data[p.pos]) + " in a string")
			}
		case c < 0x20:
			return p.fail("invalid control character " + quoteByte(c) + " in a string: escape it")
		default:
			r, size := utf8.DecodeRune(data[p.pos:])
			if r == utf8.RuneError && size == 1 {
				return &SyntaxError{Offset: p.pos, Msg: "invalid UTF-8 in a string", UTF8: true}
			}
			p.pos += size
		}
	}
}

// IsSpace reports whether c is JSON white space.
func IsSpace(c byte) bool { return c == ' ' || c == '\t' || c == '\r' || c == '\n' }

// IsHex reports whether c is a hexadecimal digit.
func IsHex(c byte) bool {
	return '0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F'
}

func (p *parser) array() error {
	if p.depth++; p.depth > MaxDepth {
		return p.fail(fmt.Sprintf("arrays and objects are nested deeper than %d levels", MaxDepth))
	}
	i := p.push(KindArray, p.pos)
	p.pos++
	p.space()
	var count int32
	if p.pos < len(p.data) && p.data[p.pos] == ']' {
		p.pos++
	} else {
		for {
			if err := p.value(); err != nil {
				return err
			}
			count++
			p.space()
			if p.pos >= len(p.data) {
				return p.fail("unexpected end of JSON input in an array")
			}
			if c := p.data[p.pos]; c == ',' {
				p.pos++
				continue
			} else if c != ']' {
				return p.fail("invalid character " + quoteByte(c) + " after an array element")
			}
			p.pos++
			break
		}
	}
	p.list[i].Count = count
	p.finish(i)
	p.depth--
	return nil
}

// linearKeys is the number of members up to which an object's names are
// compared one by one; past it they go in a map.
const linearKeys = 16

func (p *parser) object() error {
	if p.depth++; p.depth > MaxDepth {
		return p.fail(fmt.Sprintf("arrays and objects are nested deeper than %d levels", MaxDepth))
	}
	i := p.push(KindObject, p.pos)
	p.pos++
	p.space()
	base := len(p.keys)
	var set map[string]struct{}
	var count int32
	if p.pos < len(p.data) && p.data[p.pos] == '}' {
		p.pos++
	} else {
		for {
			p.space()
			if p.pos >= len(p.data) {
				return p.fail("unexpected end of JSON input in an object")
			}
			if c := p.data[p.pos]; c != '"' {
				return p.fail("invalid character " + quoteByte(c) + " looking for the beginning of an object key")
			}
			k := int32(len(p.list))
			if err := p.string(); err != nil {
				return err
			}
			if p.list[i].Flags&FlagRepeated == 0 {
				switch {
				case set != nil:
					set = p.addKey(set, k, i)
				case count < linearKeys:
					for _, prev := range p.keys[base:] {
						if p.doc.SameString(prev, k, p.list) {
							p.list[i].Flags |= FlagRepeated
							p.doc.Repeated = true
							break
						}
					}
					p.keys = append(p.keys, k)
				default:
					set = p.keySet()
					for _, prev := range p.keys[base:] {
						set[p.doc.StringValueIn(prev, p.list)] = struct{}{}
					}
					set = p.addKey(set, k, i)
				}
			}
			p.space()
			if p.pos >= len(p.data) {
				return p.fail("unexpected end of JSON input in an object")
			}
			if c := p.data[p.pos]; c != ':' {
				return p.fail("invalid character " + quoteByte(c) + " after an object key")
			}
			p.pos++
			if err := p.value(); err != nil {
				return err
			}
			count++
			p.space()
			if p.pos >= len(p.data) {
				return p.fail("unexpected end of JSON input in an object")
			}
			if c := p.data[p.pos]; c == ',' {
				p.pos++
				continue
			} else if c != '}' {
				return p.fail("invalid character " + quoteByte(c) + " after an object member")
			}
			p.pos++
			break
		}
	}
	p.keys = p.keys[:base]
	p.list[i].Count = count
	p.finish(i)
	p.depth--
	return nil
}

// keySet returns the cleared name set of the current depth.
func (p *parser) keySet() map[string]struct{} {
	for len(p.sets) < p.depth {
		p.sets = append(p.sets, nil)
	}
	s := p.sets[p.depth-1]
	if s == nil {
		s = make(map[string]struct{}, 2*linearKeys)
		p.sets[p.depth-1] = s
	} else {
		clear(s)
	}
	return s
}

// addKey adds the name of key node k to set, flagging object obj when the
// name is already there.
func (p *parser) addKey(set map[string]struct{}, k, obj int32) map[string]struct{} {
	var buf [64]byte
	name := StringBytesIn(p.data, &p.list[k], buf[:0])
	if _, dup := set[string(name)]; dup { // a lookup that does not copy name
		p.list[obj].Flags |= FlagRepeated
		p.doc.Repeated = true
		return set
	}
	set[string(name)] = struct{}{}
	return set
}

// quoteByte shows one byte of the text in an error message.
func quoteByte(c byte) string {
	if c >= 0x20 && c < 0x7f {
		return "'" + string(c) + "'"
	}
	return fmt.Sprintf("0x%02x", c)
}

// The accessors below read the document.

// Kind returns the JSON type of node i.
func (d *Document) Kind(i int32) Kind { return d.Nodes[i].Kind }

// Raw returns the text of node i.
func (d *Document) Raw(i int32) []byte { n := &d.Nodes[i]; return d.Data[n.Start:n.End] }

// Members yields the key and value node indices of object i.
func (d *Document) Members(i int32) iter.Seq2[int32, int32] {
	return func(yield func(int32, int32) bool) {
		k := i + 1
		for range d.Nodes[i].Count {
			v := k + 1
			if !yield(k, v) {
				return
			}
			k = d.Nodes[v].Next
		}
	}
}

// Elements yields the index and node of each element of array i.
func (d *Document) Elements(i int32) iter.Seq2[int, int32] {
	return func(yield func(int, int32) bool) {
		e := i + 1
		for j := range int(d.Nodes[i].Count) {
			if !yield(j, e) {
				return
			}
			e = d.Nodes[e].Next
		}
	}
}

// Member returns the value node of the member of object i named name, or
// -1. With a repeated name it returns the first; callers that care check
// FlagRepeated.
func (d *Document) Member(i int32, name string) int32 {
	// The loop of Members, written out: the readers of envelopes call
	// Member a dozen times a message.
	nodes := d.Nodes
	k := i + 1
	for range nodes[i].Count {
		n := &nodes[k]
		if n.Flags&FlagEscaped == 0 {
			if int(n.End-n.Start-2) == len(name) && string(d.Data[n.Start+1:n.End-1]) == name {
				return k + 1
			}
		} else if d.StringIs(k, name) {
			return k + 1
		}
		k = nodes[k+1].Next
	}
	return -1
}

// StringBytes returns the content of string node i between its quotes,
// unescaped. When the string has no escapes it is a slice of the text,
// not a copy; otherwise it is appended to buf.
func (d *Document) StringBytes(i int32, buf []byte) []byte {
	return StringBytesIn(d.Data, &d.Nodes[i], buf)
}

// StringBytesIn is StringBytes for string node n of a text data, for a
// caller that keeps nodes of its own.
func StringBytesIn(data []byte, n *Node, buf []byte) []byte {
	s := data[n.Start+1 : n.End-1]
	if n.Flags&FlagEscaped == 0 {
		return s
	}
	return Unescape(buf[:0], s)
}

// StringValue returns string node i as a Go string (a copy).
func (d *Document) StringValue(i int32) string {
	return d.StringValueIn(i, d.Nodes)
}

// StringValueIn is StringValue for node i of list, a copy of d's nodes.
func (d *Document) StringValueIn(i int32, list []Node) string {
	var buf [64]byte
	return string(StringBytesIn(d.Data, &list[i], buf[:0]))
}

// StringIs reports whether string node i equals s.
func (d *Document) StringIs(i int32, s string) bool {
	n := &d.Nodes[i]
	if n.Flags&FlagEscaped == 0 {
		return string(d.Data[n.Start+1:n.End-1]) == s
	}
	var buf [64]byte
	return string(Unescape(buf[:0], d.Data[n.Start+1:n.End-1])) == s
}

// SameString reports whether string nodes a and b (in list) hold the same
// text once unescaped.
func (d *Document) SameString(a, b int32, list []Node) bool {
	na, nb := &list[a], &list[b]
	if (na.Flags|nb.Flags)&FlagEscaped == 0 {
		return bytes.Equal(d.Data[na.Start+1:na.End-1], d.Data[nb.Start+1:nb.End-1])
	}
	var ba, bb [64]byte
	return bytes.Equal(StringBytesIn(d.Data, na, ba[:0]), StringBytesIn(d.Data, nb, bb[:0]))
}

// RepeatedName returns a member name that object i repeats, or "".
func (d *Document) RepeatedName(i int32) string {
	if d.Nodes[i].Flags&FlagRepeated == 0 {
		return ""
	}
	seen := make(map[string]bool, d.Nodes[i].Count)
	for k := range d.Members(i) {
		name := d.StringValue(k)
		if seen[name] {
			return name
		}
		seen[name] = true
	}
	return ""
}

// Unescape appends the unescaped form of s, the content of a valid JSON
// string, to dst. Invalid surrogates become U+FFFD, as encoding/json does.
func Unescape(dst, s []byte) []byte {
	for i := 0; i < len(s); {
		c := s[i]
		if c != '\\' {
			j := bytes.IndexByte(s[i:], '\\')
			if j < 0 {
				return append(dst, s[i:]...)
			}
			dst = append(dst, s[i:i+j]...)
			i += j
			continue
		}
		switch s[i+1] {
		case 'b':
			dst = append(dst, '\b')
		case 'f':
			dst = append(dst, '\f')
		case 'n':
			dst = append(dst, '\n')
		case 'r':
			dst = append(dst, '\r')
		case 't':
			dst = append(dst, '\t')
		case 'u':
			r := hex4(s[i+2 : i+6])
			i += 6
			if utf16.IsSurrogate(r) {
				if i+6 <= len(s) && s[i] == '\\' && s[i+1] == 'u' {
					if r2 := utf16.DecodeRune(r, hex4(s[i+2:i+6])); r2 != utf8.RuneError {
						dst = utf8.AppendRune(dst, r2)
						i += 6
						continue
					}
				}
				r = utf8.RuneError
			}
			dst = utf8.AppendRune(dst, r)
			continue
		default: // '"', '\\', '/'
			dst = append(dst, s[i+1])
		}
		i += 2
	}
	return dst
}

// hex4 reads four hex digits, already checked by the parser.
func hex4(b []byte) rune {
	var r rune
	for _, c := range b[:4] {
		switch {
		case c <= '9':
			c -= '0'
		case c >= 'a':
			c -= 'a' - 10
		default:
			c -= 'A' - 10
		}
		r = r<<4 | rune(c)
	}
	return r
}

// KindName names the JSON type of node i for messages: "null", "a
// boolean", "a number", "a string", "an array" or "an object".
func (d *Document) KindName(i int32) string {
	switch d.Kind(i) {
	case KindNull:
		return "null"
	case KindTrue, KindFalse:
		return "a boolean"
	case KindNumber:
		return "a number"
	case KindString:
		return "a string"
	case KindArray:
		return "an array"
	}
	return "an object"
}
