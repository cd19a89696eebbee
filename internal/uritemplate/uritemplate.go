// Package uritemplate reads URI templates (RFC 6570, all four levels),
// expands them with values, and matches URIs against them, binding the
// variables a URI names: what a server of resource templates needs to
// route a read to its template and hand the handler its variables.
//
// Expansion follows the RFC to the letter. Matching is its inverse where
// the expansion can be read back, with one reading of otc's own, as
// other MCP servers have it: a variable exploded by the simple or
// reserved operator ("{path*}", "{+path*}") matches the rest of a path,
// slashes included, as one string ("docs/a/b.txt"), which is what a
// string value expands to. Expressions with an operator that leads their
// text ("{/post}", "{.ext}", "{;v}", "{#f}") may be absent; a simple or
// reserved one names its first value. Query expressions ("{?a,b}",
// "{&c}") match a query whose parameters come in any order, each
// optional.
package uritemplate

import (
	"fmt"
	"strconv"
	"strings"
	"sync"
)

// MaxLength bounds a template, and MaxVariables the variables its
// expressions name (a name used twice counts twice).
const (
	MaxLength    = 4 << 10
	MaxVariables = 64
	// MaxURI bounds a URI that Match reads.
	MaxURI = 8 << 10
)

// Template is a parsed URI template. It is immutable and safe for
// concurrent use.
type Template struct {
	raw   string
	parts []part
	names []string // each variable once, in order
	// prefix and variables are Prefix and Variables, worked out once:
	// a match reads them for every template it tries.
	prefix    string
	variables int

	once sync.Once
	m    *matcher // compiled for matching, on first use
}

// part is a literal, or an expression when op is set.
type part struct {
	literal string
	op      *operator
	vars    []varSpec
}

// varSpec is one variable of an expression: its name, and its modifier
// (a prefix length, or explode).
type varSpec struct {
	name    string
	prefix  int // 0 for none
	explode bool
}

// operator is how an expression expands (RFC 6570 §3.2.1, Appendix A).
type operator struct {
	char     byte   // 0 for simple
	first    string // what precedes the first value
	sep      string // what separates values
	named    bool   // values are name=value
	ifEmpty  string // what follows the name of an empty value
	reserved bool   // reserved and pct-encoded characters pass as they are
}

var operators = map[byte]*operator{
	0:   {sep: ","},
	'+': {char: '+', sep: ",", reserved: true},
	'#': {char: '#', first: "#", sep: ",", reserved: true},
	'.': {char: '.', first: ".", sep: "."},
	'/': {char: '/', first: "/", sep: "/"},
	';': {char: ';', first: ";", sep: ";", named: true},
	'?': {char: '?', first: "?", sep: "&", named: true, ifEmpty: "="},
	'&': {char: '&', first: "&", sep: "&", named: true, ifEmpty: "="},
}

// Error is a template that cannot be parsed, with where.
type Error struct {
	Template string
	// Offset is the byte the problem is at.
	Offset  int
	Message string
}

func (e *Error) Error() string {
	return fmt.Sprintf("URI template %q, at byte %d: %s", e.Template, e.Offset, e.Message)
}

// Parse reads a URI template.
func Parse(s string) (*Template, error) {
	fail := func(at int, format string, args ...any) error {
		return &Error{Template: s, Offset: at, Message: fmt.Sprintf(format, args...)}
	}
	if len(s) > MaxLength {
		return nil, fail(MaxLength, "longer than %d bytes", MaxLength)
	}
	t := &Template{raw: s}
	seen := map[string]bool{}
	specs := 0 // every variable of every expression, a name used twice counted twice
	for i := 0; i < len(s); {
		open := strings.IndexByte(s[i:], '{')
		if closing := strings.IndexByte(s[i:], '}'); closing >= 0 && (open < 0 || closing < open) {
			return nil, fail(i+closing, "a '}' closes no expression")
		}
		if open < 0 {
			if err := checkLiteral(s[i:]); err != "" {
				return nil, fail(i, "%s", err)
			}
			t.parts = append(t.parts, part{literal: s[i:]})
			break
		}
		if open > 0 {
			if err := checkLiteral(s[i : i+open]); err != "" {
				return nil, fail(i, "%s", err)
			}
			t.parts = append(t.parts, part{literal: s[i : i+open]})
		}
		start := i + open
		end := strings.IndexByte(s[start:], '}')
		if end < 0 {
			return nil, fail(start, "an expression is not closed with '}'")
		}
		body := s[start+1 : start+end]
		p, err := parseExpression(body)
		if err != "" {
			return nil, fail(start, "%s", err)
		}
		for _, v := range p.vars {
			if !seen[v.name] {
				seen[v.name] = true
				t.names = append(t.names, v.name)
			}
		}
		if specs += len(p.vars); specs > MaxVariables {
			return nil, fail(start, "more than %d variables", MaxVariables)
		}
		t.parts = append(t.parts, p)
		i = start + end + 1
	}
	t.prefix, t.variables = t.literalPrefix(), t.countVariables()
	return t, nil
}

// checkLiteral reports what a literal holds that a template may not.
func checkLiteral(s string) string {
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c <= ' ', c == '"', c == '\'', c == '<', c == '>', c == '\\', c == '^', c == '`', c == '|', c == 0x7f:
			return fmt.Sprintf("the character %q may not appear outside an expression", c)
		case c == '%':
			if i+2 >= len(s) || !isHex(s[i+1]) || !isHex(s[i+2]) {
				return "a '%' that does not begin a percent-encoded byte"
			}
		}
	}
	return ""
}

// parseExpression reads what is between the braces.
func parseExpression(body string) (part, string) {
	if body == "" {
		return part{}, "an empty expression"
	}
	op := operators[0]
	if o, ok := operators[body[0]]; ok && body[0] != 0 {
		op, body = o, body[1:]
	} else if strings.IndexByte("=,!@|", body[0]) >= 0 {
		return part{}, fmt.Sprintf("the operator %q is reserved for future extensions", body[0])
	}
	p := part{op: op}
	for _, spec := range strings.Split(body, ",") {
		v := varSpec{name: spec}
		if name, ok := strings.CutSuffix(spec, "*"); ok {
			v.name, v.explode = name, true
		} else if name, n, ok := strings.Cut(spec, ":"); ok {
			l, err := strconv.Atoi(n)
			if err != nil || l <= 0 || l >= 10000 || n[0] == '0' {
				return part{}, fmt.Sprintf("the prefix %q of %q is not a length from 1 to 9999", n, name)
			}
			v.name, v.prefix = name, l
		}
		if !validName(v.name) {
			return part{}, fmt.Sprintf("%q is not a variable name (letters, digits, '_', '.' between them, and percent-encoded bytes)", v.name)
		}
		p.vars = append(p.vars, v)
	}
	return p, ""
}

// validName reports whether s is a varname (RFC 6570 §2.3).
func validName(s string) bool {
	if s == "" || s[0] == '.' || s[len(s)-1] == '.' {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c >= '0' && c <= '9', c == '_':
		case c == '.':
			if s[i-1] == '.' {
				return false
			}
		case c == '%':
			if i+2 >= len(s) || !isHex(s[i+1]) || !isHex(s[i+2]) {
				return false
			}
			i += 2
		default:
			return false
		}
	}
	return true
}

func isHex(c byte) bool {
	return c >= '0' && c <= '9' || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F'
}

// String is the template as it was written.
func (t *Template) String() string { return t.raw }

// Names are the template's variables, each once, in the order they
// appear.
func (t *Template) Names() []string { return append([]string(nil), t.names...) }

// first is the expression that names name first, and name's place in
// it; ok false for a name the template does not have.
func (t *Template) first(name string) (p part, i int, ok bool) {
	for _, p := range t.parts {
		for i, v := range p.vars {
			if v.name == name {
				return p, i, true
			}
		}
	}
	return part{}, 0, false
}

// Variables is how many variables the template's expressions name (a
// name named twice counts twice).
func (t *Template) Variables() int { return t.variables }

func (t *Template) countVariables() int {
	n := 0
	for _, p := range t.parts {
		n += len(p.vars)
	}
	return n
}
