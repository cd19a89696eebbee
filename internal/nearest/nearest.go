// Package nearest finds the names nearest to one that was not found, for
// the "did you mean" of an error: by edit distance, after folding case
// and the separators people mix up ('-', ' ', '.', '_').
package nearest

import (
	"iter"
	"slices"
	"strings"
)

// MaxCandidates bounds the names a search weighs, so that a caller who
// sends unknown names cannot make each cost more than that.
const MaxCandidates = 10_000

// Distance is the Levenshtein distance of a and b, in bytes.
func Distance(a, b string) int {
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}

// fold is s as it is compared: lower case, with its separators one.
func fold(s string) string {
	return strings.Map(func(r rune) rune {
		switch r {
		case '-', ' ', '.':
			return '_'
		}
		if r >= 'A' && r <= 'Z' {
			return r + ('a' - 'A')
		}
		return r
	}, s)
}

// Names returns up to n of candidates near enough to s to be what was
// meant, nearest first (then in order of name): those equal to it but
// for case and separators, then those a few edits away (a quarter of its
// length at most, and never more than two). It weighs MaxCandidates
// candidates at most, and stops the sequence there.
func Names(s string, n int, candidates iter.Seq[string]) []string {
	type scored struct {
		name string
		d    int
	}
	want := fold(s)
	limit := min(2, max(1, len(want)/4))
	var found []scored
	read := 0
	for c := range candidates {
		if read++; read > MaxCandidates {
			break
		}
		if c == s {
			continue
		}
		fc := fold(c)
		if abs(len(fc)-len(want)) > limit {
			continue
		}
		if d := Distance(want, fc); d <= limit {
			found = append(found, scored{c, d})
		}
	}
	slices.SortFunc(found, func(a, b scored) int {
		if a.d != b.d {
			return a.d - b.d
		}
		return strings.Compare(a.name, b.name)
	})
	out := make([]string, 0, min(n, len(found)))
	for _, f := range found[:min(n, len(found))] {
		out = append(out, f.name)
	}
	return out
}

func abs(x int) int {
	if x < 0 {
		return -x
	}
	return x
}
