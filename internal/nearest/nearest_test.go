package nearest

import (
	"reflect"
	"slices"
	"testing"
)

func TestDistance(t *testing.T) {
	for _, tc := range []struct {
		a, b string
		d    int
	}{{"", "", 0}, {"a", "", 1}, {"kitten", "sitting", 3}, {"get_sum", "get_sum", 0}, {"comand", "command", 1}} {
		if got := Distance(tc.a, tc.b); got != tc.d {
			t.Errorf("Distance(%q, %q) = %d, want %d", tc.a, tc.b, got, tc.d)
		}
	}
}

func TestNames(t *testing.T) {
	for _, tc := range []struct {
		s     string
		names []string
		want  []string
	}{
		{"get-sum", []string{"get_sum", "get_sums", "other"}, []string{"get_sum", "get_sums"}},
		{"Calculator.Ad", []string{"Calculator.Add", "Calculator.Sub", "Doorbell.Ring"}, []string{"Calculator.Add"}},
		{"calculator_add", []string{"Calculator.Add"}, []string{"Calculator.Add"}},
		{"xyz", []string{"Calculator_Add"}, []string{}},
		{"ab", []string{"ac", "ab"}, []string{"ac"}}, // the name itself is not a suggestion
	} {
		if got := Names(tc.s, 3, slices.Values(tc.names)); !reflect.DeepEqual(got, tc.want) {
			t.Errorf("Names(%q) = %q, want %q", tc.s, got, tc.want)
		}
	}
	// A flood of candidates reads MaxCandidates at most.
	read := 0
	Names("a", 3, func(yield func(string) bool) {
		for {
			read++
			if !yield("zzzzzz") {
				return
			}
		}
	})
	if read != MaxCandidates+1 { // the one past the bound is where it stops
		t.Errorf("read %d candidates, want %d", read, MaxCandidates)
	}
}
