package uritemplate

import "strings"

// Values are the variables of an expansion, by name. A value is a string,
// a list ([]string) or an associative array ([]Pair, in its order); a
// name without a value, a nil one, and an empty list or array are
// undefined, and expand to nothing (RFC 6570 §2.3). A value of another
// type is undefined too.
type Values map[string]any

// Pair is a member of an associative array.
type Pair struct{ Key, Value string }

// Expand expands the template with vs (RFC 6570 §3).
func (t *Template) Expand(vs Values) string {
	var b strings.Builder
	for _, p := range t.parts {
		if p.op == nil {
			b.WriteString(p.literal)
			continue
		}
		expand(&b, p, vs)
	}
	return b.String()
}

// expand writes one expression (RFC 6570 Appendix A).
func expand(b *strings.Builder, p part, vs Values) {
	op := p.op
	first := true
	for _, v := range p.vars {
		val, ok := defined(vs[v.name])
		if !ok {
			continue
		}
		if first {
			b.WriteString(op.first)
			first = false
		} else {
			b.WriteString(op.sep)
		}
		switch x := val.(type) {
		case string:
			if op.named {
				b.WriteString(v.name)
				if x == "" {
					b.WriteString(op.ifEmpty)
					continue
				}
				b.WriteByte('=')
			}
			if v.prefix > 0 {
				x = prefix(x, v.prefix)
			}
			encode(b, x, op.reserved)
		case []string:
			expandList(b, op, v, x)
		case []Pair:
			expandPairs(b, op, v, x)
		}
	}
}

// expandList writes a list's values.
func expandList(b *strings.Builder, op *operator, v varSpec, list []string) {
	if !v.explode {
		if op.named {
			b.WriteString(v.name)
			b.WriteByte('=')
		}
		for i, item := range list {
			if i > 0 {
				b.WriteByte(',')
			}
			encode(b, item, op.reserved)
		}
		return
	}
	for i, item := range list {
		if i > 0 {
			b.WriteString(op.sep)
		}
		if op.named {
			b.WriteString(v.name)
			if item == "" {
				b.WriteString(op.ifEmpty)
				continue
			}
			b.WriteByte('=')
		}
		encode(b, item, op.reserved)
	}
}

// expandPairs writes an associative array's members.
func expandPairs(b *strings.Builder, op *operator, v varSpec, pairs []Pair) {
	if !v.explode {
		if op.named {
			b.WriteString(v.name)
			b.WriteByte('=')
		}
		for i, kv := range pairs {
			if i > 0 {
				b.WriteByte(',')
			}
			encode(b, kv.Key, op.reserved)
			b.WriteByte(',')
			encode(b, kv.Value, op.reserved)
		}
		return
	}
	for i, kv := range pairs {
		if i > 0 {
			b.WriteString(op.sep)
		}
		encode(b, kv.Key, op.reserved)
		if op.named && kv.Value == "" {
			b.WriteString(op.ifEmpty)
			continue
		}
		b.WriteByte('=')
		encode(b, kv.Value, op.reserved)
	}
}

// defined returns a value that is defined, and whether it is.
func defined(v any) (any, bool) {
	switch x := v.(type) {
	case string:
		return x, true
	case []string:
		return x, len(x) > 0
	case []Pair:
		return x, len(x) > 0
	}
	return nil, false
}

// prefix is the first n characters of s (characters, not bytes).
func prefix(s string, n int) string {
	for i := range s {
		if n == 0 {
			return s[:i]
		}
		n--
	}
	return s
}

// encode writes s: unreserved characters as they are, with reserved set
// also reserved characters and percent-encoded triplets, and every other
// byte percent-encoded.
func encode(b *strings.Builder, s string, reserved bool) {
	const hex = "0123456789ABCDEF"
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case isUnreserved(c):
			b.WriteByte(c)
		case reserved && isReserved(c):
			b.WriteByte(c)
		case reserved && c == '%' && i+2 < len(s) && isHex(s[i+1]) && isHex(s[i+2]):
			b.WriteString(s[i : i+3])
			i += 2
		default:
			b.WriteByte('%')
			b.WriteByte(hex[c>>4])
			b.WriteByte(hex[c&15])
		}
	}
}

func isUnreserved(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' || c == '.' || c == '_' || c == '~'
}

// isReserved reports whether c is a gen-delim or a sub-delim (RFC 3986
// §2.2).
func isReserved(c byte) bool {
	return strings.IndexByte(":/?#[]@!$&'()*+,;=", c) >= 0
}
