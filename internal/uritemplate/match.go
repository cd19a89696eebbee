package uritemplate

import (
	"net/url"
	"reflect"
	"regexp"
	"slices"
	"strings"
)

// A match reads a URI back into the variables that would expand to it.
// The part of the template before its query is compiled into a regular
// expression, once; the query is read apart, so that its parameters may
// come in any order and each be left out.

// matcher is a template compiled for matching.
type matcher struct {
	re *regexp.Regexp
	// groups are the regular expression's groups, each a variable with
	// how its text is split into a list (0 for a single value).
	groups []group
	// query are the query's variables, and fixed its literal parameters
	// ("?fixed=yes{&x}"), which a URI must carry as they are.
	query []varSpec
	fixed url.Values
	// hasQuery says the template has a query (an expression, or a literal
	// '?'); fragment that it has a fragment (an expression at its end, or
	// a literal '#'), which the regular expression matches.
	hasQuery, fragment bool
}

// group is one captured variable.
type group struct {
	name  string
	split byte // the separator of an exploded list, 0 for none
	named bool // the values are name=value (path-style parameters)
}

// Match reports whether uri is an expansion of the template, and the
// variables it binds: a string each, or for an exploded variable of a
// list operator ("{/list*}", "{.list*}", "{;list*}", "{?list*}") the
// list of its values ([]string). Text is percent-decoded. A query
// variable the URI leaves out is left out of the values; a query
// parameter the template does not name makes the URI not match.
//
// A URI over MaxURI bytes matches nothing: matching costs time in its
// length times the template's, and a client's URI is the server's input.
func (t *Template) Match(uri string) (Values, bool) {
	m := t.compiled()
	if m == nil || len(uri) > MaxURI {
		return nil, false
	}
	path, query, hasQuery := uri, "", false
	if !m.fragment {
		if strings.IndexByte(uri, '#') >= 0 {
			return nil, false
		}
		path, query, hasQuery = strings.Cut(uri, "?")
	}
	sub := m.re.FindStringSubmatch(path)
	if sub == nil {
		return nil, false
	}
	vs := Values{}
	for i, g := range m.groups {
		raw := sub[i+1]
		if raw == "" {
			continue
		}
		before, again := vs[g.name]
		if !readGroup(vs, g, raw) {
			return nil, false
		}
		if again && !reflect.DeepEqual(before, vs[g.name]) {
			return nil, false // a variable named twice, with two values
		}
	}
	if !m.hasQuery {
		return vs, !hasQuery
	}
	return vs, readQuery(vs, m, query)
}

// readGroup decodes a captured variable into vs.
func readGroup(vs Values, g group, raw string) bool {
	if g.split == 0 {
		v, err := url.PathUnescape(raw)
		if err != nil {
			return false
		}
		vs[g.name] = v
		return true
	}
	var list []string
	for _, item := range strings.Split(strings.TrimPrefix(raw, string(g.split)), string(g.split)) {
		if g.named {
			_, item, _ = strings.Cut(item, "=")
		}
		v, err := url.PathUnescape(item)
		if err != nil {
			return false
		}
		list = append(list, v)
	}
	vs[g.name] = list
	return true
}

// readQuery reads the query's variables into vs, and reports whether the
// query is one the template expands to.
func readQuery(vs Values, m *matcher, query string) bool {
	params := url.Values{}
	if !readParams(params, query) {
		return false
	}
	for k, want := range m.fixed {
		if !slices.Equal(params[k], want) {
			return false
		}
		delete(params, k)
	}
	for _, v := range m.query {
		got, ok := params[v.name]
		if !ok {
			continue
		}
		delete(params, v.name)
		if v.explode {
			vs[v.name] = got
			continue
		}
		if len(got) != 1 {
			return false
		}
		vs[v.name] = got[0]
	}
	return len(params) == 0
}

// compiled is the template compiled for matching, once; nil for one
// whose shape cannot be read back (a query expression before the end).
func (t *Template) compiled() *matcher {
	t.once.Do(func() { t.m = compile(t) })
	return t.m
}

// Matchable reports whether URIs can be matched against the template:
// its query expressions (and literal query) come last, after its path,
// and a fragment expression, if any, is its very end.
func (t *Template) Matchable() bool { return t.compiled() != nil }

// The text a variable matches, by operator, when it is one value; an
// exploded one repeats it after the operator's separator.
const (
	segment = `[^/?#,]+` // a simple value: no slash, and no comma (the list separator)
	rest    = `[^?#]+`   // a reserved value, or a wildcard path: slashes included
)

func compile(t *Template) *matcher {
	m := &matcher{fixed: url.Values{}}
	var re strings.Builder
	re.WriteString(`^`)
	inQuery := false
	for i, p := range t.parts {
		if p.op == nil {
			lit := p.literal
			if strings.IndexByte(lit, '#') >= 0 {
				if inQuery || strings.IndexByte(lit, '?') >= 0 {
					return nil // a fragment beside a query: not read back
				}
				m.fragment = true // the regular expression matches it
			}
			if m.fragment && strings.IndexByte(lit, '?') >= 0 {
				return nil // a query in the fragment
			}
			if !inQuery {
				before, q, found := strings.Cut(lit, "?")
				re.WriteString(regexp.QuoteMeta(before))
				if !found {
					continue
				}
				inQuery, lit = true, q
			} else if !strings.HasPrefix(lit, "&") {
				return nil // a path after the query
			}
			if !readParams(m.fixed, lit) {
				return nil
			}
			continue
		}
		switch p.op.char {
		case '?', '&':
			if m.fragment || p.op.char == '&' && !inQuery || p.op.char == '?' && inQuery {
				// A query in the fragment, a continuation of no query, or a
				// second query: not read back.
				return nil
			}
			inQuery = true
			for _, v := range p.vars {
				if slices.ContainsFunc(m.query, func(q varSpec) bool { return q.name == v.name }) {
					return nil // a query parameter named twice
				}
				m.query = append(m.query, v)
			}
			continue
		case '#':
			if i != len(t.parts)-1 {
				return nil
			}
			m.fragment = true
		}
		if inQuery {
			return nil // a path expression after the query
		}
		if i > 0 && t.parts[i-1].op != nil && t.parts[i-1].op.first == "" && p.op.first == "" {
			return nil // two simple or reserved expressions side by side: where one ends is anyone's guess
		}
		writeExpression(&re, m, p)
	}
	re.WriteString(`$`)
	m.hasQuery = inQuery
	for _, v := range m.query {
		if _, ok := m.fixed[v.name]; ok {
			return nil // a variable named as a literal parameter
		}
	}
	r, err := regexp.Compile(re.String())
	if err != nil {
		return nil
	}
	m.re = r
	return m
}

// readParams reads a query ("a=1&b=2", a URI's or the literal query of
// a template), each name and value percent-decoded as a path's are ('+'
// is itself), into into; false for a broken escape.
func readParams(into url.Values, q string) bool {
	for _, kv := range strings.Split(q, "&") {
		if kv == "" {
			continue
		}
		k, v, _ := strings.Cut(kv, "=")
		k, err1 := url.PathUnescape(k)
		v, err2 := url.PathUnescape(v)
		if err1 != nil || err2 != nil {
			return false
		}
		into.Add(k, v)
	}
	return true
}

// writeExpression writes the regular expression of an expression of the
// path: each variable a group, the first required and the others
// optional, as an expansion leaves out undefined ones.
func writeExpression(re *strings.Builder, m *matcher, p part) {
	op := p.op
	for i, v := range p.vars {
		lead := op.sep
		if i == 0 {
			lead = op.first
		}
		g := group{name: v.name}
		var body string
		switch op.char {
		case 0, '+':
			body = segment
			if op.char == '+' || v.explode {
				body = rest // {+path}, and the wildcard {path*}: one string
			}
		case '#':
			body = `.*`
		case '.':
			body = `[^/?#.]+`
			if v.explode {
				body, g.split = `[^/?#.]+(?:\.[^/?#.]+)*`, '.'
			}
		case '/':
			body = `[^/?#]+`
			if v.explode {
				body, g.split = `[^/?#]+(?:/[^/?#]+)*`, '/'
			}
		case ';':
			name := regexp.QuoteMeta(v.name)
			if v.explode {
				body, g.split, g.named = name+`(?:=[^;/?#]*)?(?:;`+name+`(?:=[^;/?#]*)?)*`, ';', true
				break
			}
			// ";name" alone is the empty value.
			m.groups = append(m.groups, g)
			re.WriteString(`(?:` + regexp.QuoteMeta(lead) + name + `(?:=([^;/?#]*))?)?`)
			continue
		}
		m.groups = append(m.groups, g)
		if i == 0 && op.first == "" {
			re.WriteString(`(` + body + `)`) // a simple or reserved expression names its first value
		} else {
			re.WriteString(`(?:` + regexp.QuoteMeta(lead) + `(` + body + `))?`)
		}
	}
}

// Prefix is the literal text that every URI the template matches begins
// with: the template's text before its first expression and before any
// query ("" when it begins with an expression). Checked before the
// regular expression, it rules most templates out of a match at the cost
// of a comparison.
func (t *Template) Prefix() string { return t.prefix }

func (t *Template) literalPrefix() string {
	if len(t.parts) == 0 || t.parts[0].op != nil {
		return ""
	}
	lit := t.parts[0].literal
	if i := strings.IndexAny(lit, "?#"); i >= 0 {
		lit = lit[:i]
	}
	return lit
}
