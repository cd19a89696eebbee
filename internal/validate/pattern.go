package validate

import (
	"regexp"
	"regexp/syntax"
	"slices"
	"unicode/utf8"
)

// pattern is a compiled "pattern" keyword. Most patterns in tool schemas
// say that the whole string is characters of one class, a number of times
// (^[a-z]+$, ^[0-9]{5}$, ^[A-Za-z0-9_-]{1,64}$). Those are matched by a
// loop over the string, many times faster than the regexp engine, which
// matters when a client sends megabytes against one; every other pattern
// goes to package regexp. Both read the string the same way: a byte that
// is not valid UTF-8 is U+FFFD.
type pattern struct {
	re *regexp.Regexp
	// The one-class form, when class is not nil: between min and max
	// (-1: no limit) characters, each in class (sorted, inclusive rune
	// ranges as pairs), with the ASCII ones also in the ascii bitmap.
	class    []rune
	ascii    [2]uint64
	min, max int
}

func compilePattern(src string) (*pattern, error) {
	re, err := regexp.Compile(src)
	if err != nil {
		return nil, err
	}
	p := &pattern{re: re}
	if tree, err := syntax.Parse(src, syntax.Perl); err == nil {
		p.oneClass(tree)
	}
	return p, nil
}

// oneClass recognizes ^X$ where X repeats a single character class, and
// fills in the fast form.
func (p *pattern) oneClass(tree *syntax.Regexp) {
	if tree.Op != syntax.OpConcat || len(tree.Sub) != 3 ||
		tree.Sub[0].Op != syntax.OpBeginText || tree.Sub[2].Op != syntax.OpEndText {
		return
	}
	item, lo, hi := tree.Sub[1], 1, 1
	switch rep := item; rep.Op {
	case syntax.OpStar:
		item, lo, hi = rep.Sub[0], 0, -1
	case syntax.OpPlus:
		item, lo, hi = rep.Sub[0], 1, -1
	case syntax.OpQuest:
		item, lo, hi = rep.Sub[0], 0, 1
	case syntax.OpRepeat:
		item, lo, hi = rep.Sub[0], rep.Min, rep.Max
	}
	var class []rune
	switch c := item; c.Op {
	case syntax.OpCharClass:
		class = slices.Clone(c.Rune)
	case syntax.OpLiteral:
		if len(c.Rune) != 1 || c.Flags&syntax.FoldCase != 0 {
			return
		}
		class = []rune{c.Rune[0], c.Rune[0]}
	case syntax.OpAnyCharNotNL:
		class = []rune{0, '\n' - 1, '\n' + 1, utf8.MaxRune}
	case syntax.OpAnyChar:
		class = []rune{0, utf8.MaxRune}
	default:
		return
	}
	p.class, p.min, p.max = class, lo, hi
	for i := 0; i < len(class); i += 2 {
		for r := class[i]; r <= class[i+1] && r < utf8.RuneSelf; r++ {
			p.ascii[r/64] |= 1 << (r % 64)
		}
	}
}

// match reports whether the whole of s matches.
func (p *pattern) match(s []byte) bool {
	if p.class == nil {
		return p.re.Match(s)
	}
	n := 0
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			if p.ascii[c/64]&(1<<(c%64)) == 0 {
				return false
			}
			i++
		} else {
			r, size := utf8.DecodeRune(s[i:])
			if !p.inClass(r) {
				return false
			}
			i += size
		}
		n++
		if p.max >= 0 && n > p.max {
			return false
		}
	}
	return n >= p.min
}

func (p *pattern) inClass(r rune) bool {
	lo, hi := 0, len(p.class)/2 // the ranges are sorted and disjoint
	for lo < hi {
		m := (lo + hi) / 2
		switch {
		case r < p.class[2*m]:
			hi = m
		case r > p.class[2*m+1]:
			lo = m + 1
		default:
			return true
		}
	}
	return false
}

// String returns the pattern as written.
func (p *pattern) String() string { return p.re.String() }
