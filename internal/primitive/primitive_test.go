package primitive

import (
	"fmt"
	"strings"
	"testing"

	"github.com/otcgo/otc/internal/uritemplate"
)

func template(t *testing.T, raw string, rank int) *Template {
	t.Helper()
	tp, err := uritemplate.Parse(raw)
	if err != nil {
		t.Fatal(err)
	}
	return &Template{Template: tp, Origin: Origin{Upstream: fmt.Sprint("u", rank), Rank: rank}}
}

func all(*Template) bool { return true }

// TestMatchByOrigin: a URI goes to the first template of the source that
// comes first (the registry's own, then the upstreams in order), not to
// the first template in byte order.
func TestMatchByOrigin(t *testing.T) {
	s := &Set{listeners: map[*func(Change)]struct{}{}}
	s.cur.Store(&Snapshot{})
	own := template(t, "calc://notes/{path*}", 0)
	own.Origin = Origin{}
	first, second := template(t, "calc://notes/{a}", 1), template(t, "calc://{x}", 2)
	for _, x := range []*Template{second, first, own} {
		if err := s.AddTemplate(x); err != nil {
			t.Fatal(err)
		}
	}
	if got, _ := s.Snapshot().Match("calc://notes/x", all); got != own {
		t.Fatalf("calc://notes/x went to %s, not the registry's own", got.Template)
	}
	if !s.Remove(own) {
		t.Fatal("not removed")
	}
	if got, _ := s.Snapshot().Match("calc://notes/x", all); got != first {
		t.Fatalf("calc://notes/x went to %v, not the first upstream's", got.Template)
	}
	if got, _ := s.Snapshot().Match("calc://other", all); got != second {
		t.Fatalf("calc://other went to %v", got)
	}
}

// TestAddResourceByOrigin: a resource of a source that comes first takes
// the URI of one that comes later; not the other way round.
func TestAddResourceByOrigin(t *testing.T) {
	s := &Set{listeners: map[*func(Change)]struct{}{}}
	s.cur.Store(&Snapshot{})
	late := &Resource{URI: "calc://state", Origin: Origin{Upstream: "u", Rank: 2}}
	early := &Resource{URI: "calc://state", Origin: Origin{Upstream: "v", Rank: 1}}
	own := &Resource{URI: "calc://state"}
	for _, r := range []*Resource{late, early, own} {
		if err := s.AddResource(r); err != nil {
			t.Fatal(err)
		}
		if got := s.Snapshot().Resource("calc://state"); got != r {
			t.Fatalf("the URI is %v's, not %v's", got.Origin, r.Origin)
		}
	}
	err := s.AddResource(late)
	if err == nil || !strings.Contains(err.Error(), "registered already") {
		t.Fatalf("a later source took the URI of the registry's own: %v", err)
	}
}

// TestMatchWork: a URI is matched against the templates whose literal
// prefix it begins with, within MaxMatchWork: against 2,000 templates of
// 64 variables, a URI of 4 KB is given up after a few tries, and one of
// another prefix tries none.
func TestMatchWork(t *testing.T) {
	s := &Set{listeners: map[*func(Change)]struct{}{}}
	s.cur.Store(&Snapshot{})
	vars := make([]string, 64)
	for i := range vars {
		vars[i] = fmt.Sprintf("{v%d}", i)
	}
	for i := range 2000 {
		if err := s.AddTemplate(template(t, fmt.Sprintf("h://x/%04d/", i)+strings.Join(vars, "/"), 1)); err != nil {
			t.Fatal(err)
		}
	}
	last := template(t, "h://x/9999/{rest}", 1)
	if err := s.AddTemplate(last); err != nil {
		t.Fatal(err)
	}
	tried := 0
	count := func(*Template) bool { tried++; return true }
	long := "h://x/" + strings.Repeat("a", 4000)
	if got, _ := s.Snapshot().Match(long, count); got != nil {
		t.Fatalf("matched %s", got.Template)
	}
	if want := MaxMatchWork/(len(long)*65) + 1; tried > want {
		t.Fatalf("%d templates tried for a URI of %d bytes, more than the %d the budget allows", tried, len(long), want)
	}
	tried = 0
	if got, _ := s.Snapshot().Match("h://x/9999/y", count); got != last {
		t.Fatalf("h://x/9999/y went to %v", got)
	}
	if tried != 1 {
		t.Fatalf("%d templates tried, where one has the URI's prefix", tried)
	}
}

// BenchmarkMatchHostile: a read of a 4 KB URI that matches none of an
// upstream's 1,000 templates of 64 variables, all of one literal prefix:
// every template's regular expression run (each/, what a read cost
// before the bound) against the bounded match (bounded/).
func BenchmarkMatchHostile(b *testing.B) {
	s := &Set{listeners: map[*func(Change)]struct{}{}}
	s.cur.Store(&Snapshot{})
	vars := make([]string, 64)
	for i := range vars {
		vars[i] = fmt.Sprintf("{v%d}", i)
	}
	for i := range 1000 {
		tp, err := uritemplate.Parse("h://x/" + strings.Join(vars, "/") + fmt.Sprintf("/%d", i))
		if err != nil {
			b.Fatal(err)
		}
		if err := s.AddTemplate(&Template{Template: tp, Origin: Origin{Upstream: "u", Rank: 1}}); err != nil {
			b.Fatal(err)
		}
	}
	sn := s.Snapshot()
	uri := "h://x/" + strings.Repeat("a/", 2000)
	b.Run("each", func(b *testing.B) {
		for b.Loop() {
			for _, t := range sn.Templates {
				if _, ok := t.Template.Match(uri); ok {
					b.Fatal("matched")
				}
			}
		}
	})
	b.Run("bounded", func(b *testing.B) {
		for b.Loop() {
			if t, _ := sn.Match(uri, all); t != nil {
				b.Fatal("matched")
			}
		}
	})
}
