package uritemplate

import (
	"reflect"
	"strings"
	"testing"
)

// TestMatchRoundTrip: what a template expands to matches it, and binds
// the values it was expanded with.
func TestMatchRoundTrip(t *testing.T) {
	for _, tc := range []struct {
		tmpl string
		vs   Values
	}{
		{"file:///{name}", Values{"name": "notes.txt"}},
		{"file:///{name}", Values{"name": "a b&c"}},
		{"file:///{+path}", Values{"path": "docs/a/b.md"}},
		{"file:///{path*}", Values{"path": "docs/a/b.md"}},
		{"file:///{+path*}", Values{"path": "docs/a b/c.md"}},
		{"repo://{owner}/{repo}/issues/{n}", Values{"owner": "otcgo", "repo": "otc", "n": "49"}},
		{"users/{id}/posts{/post}", Values{"id": "7", "post": "hello"}},
		{"users/{id}/posts{/post}", Values{"id": "7"}},
		{"search{?q,limit}", Values{"q": "go mcp", "limit": "5"}},
		{"search{?q,limit}", Values{"limit": "5"}},
		{"search{?q,limit}", Values{}},
		{"weather://{city}{?units}", Values{"city": "Zürich", "units": "metric"}},
		{"tags{?tag*}", Values{"tag": []string{"a", "b", "c"}}},
		{"seg{/list*}", Values{"list": []string{"red", "green", "blue"}}},
		{"X{.list*}", Values{"list": []string{"red", "green"}}},
		{"m{;x,y}", Values{"x": "1024", "y": "768"}},
		{"m{;list*}", Values{"list": []string{"red", "green"}}},
		{"m{;empty}", Values{"empty": ""}},
		{"a{#frag}", Values{"frag": "section-2"}},
		{"?fixed=yes{&x}", Values{"x": "1024"}},
		{"{x,y}", Values{"x": "1024", "y": "768"}},
	} {
		tp, err := Parse(tc.tmpl)
		if err != nil {
			t.Fatalf("Parse(%q): %v", tc.tmpl, err)
		}
		uri := tp.Expand(tc.vs)
		got, ok := tp.Match(uri)
		if !ok {
			t.Errorf("%s: %q does not match", tc.tmpl, uri)
			continue
		}
		want := Values{}
		for k, v := range tc.vs {
			want[k] = v
		}
		if want["empty"] == "" && tc.tmpl == "m{;empty}" {
			delete(want, "empty") // ";empty" reads as nothing given
		}
		if !reflect.DeepEqual(got, want) {
			t.Errorf("%s: %q binds %v, want %v", tc.tmpl, uri, got, want)
		}
	}
}

// TestMatch: URIs as clients write them, matched or not.
func TestMatch(t *testing.T) {
	for _, tc := range []struct {
		tmpl, uri string
		want      Values // nil for no match
	}{
		// queries in any order, partial, absent; nothing unknown
		{"search{?q,limit}", "search?limit=5&q=x", Values{"q": "x", "limit": "5"}},
		{"search{?q,limit}", "search?q=x", Values{"q": "x"}},
		{"search{?q,limit}", "search", Values{}},
		{"search{?q,limit}", "search?", Values{}},
		{"search{?q,limit}", "search?q=x&page=2", nil},
		{"search{?q,limit}", "search?q=x&q=y", nil},
		{"search{?q}", "search?q=", Values{"q": ""}},
		{"{?q}", "?q=a%20b", Values{"q": "a b"}},
		{"tags{?tag*}", "tags?tag=a&tag=b", Values{"tag": []string{"a", "b"}}},
		{"?fixed=yes{&x}", "?x=1&fixed=yes", Values{"x": "1"}},
		{"?fixed=yes{&x}", "?fixed=no&x=1", nil},
		{"?fixed=yes{&x}", "?x=1", nil},
		// a simple value is one segment; a reserved or wildcard one a path
		{"users/{id}", "users/a%2Fb", Values{"id": "a/b"}},
		{"users/{id}", "users/a/b", nil},
		{"users/{id}", "users/", nil},
		{"users/{id}/posts", "users/7/posts", Values{"id": "7"}},
		{"users/{id}/posts", "users/7/comments", nil},
		{"file:///{+path}", "file:///a/b/c.md", Values{"path": "a/b/c.md"}},
		{"file:///{path*}", "file:///a/b%2Fc/d.md", Values{"path": "a/b/c/d.md"}},
		{"file:///{path*}", "file:///", nil},
		{"{+path}/here", "/foo/bar/here", Values{"path": "/foo/bar"}},
		// text is percent-decoded, and a broken escape matches nothing
		{"files/{name}", "files/a%20b", Values{"name": "a b"}},
		{"files/{name}", "files/a%zzb", nil},
		{"files/{name}", "files/50%", nil},
		// a query or fragment the template has no room for
		{"files/{name}", "files/a?x=1", nil},
		{"files/{name}", "files/a#top", nil},
		{"a{#frag}", "a#x/y?z", Values{"frag": "x/y?z"}},
		// literals as they are
		{"weather://{city}", "weather://", nil},
		{"weather://{city}", "weathers://paris", nil},
		{"X{.list*}", "X.a.b.c", Values{"list": []string{"a", "b", "c"}}},
		{"m{;x,y}", "m;x=1;y=2", Values{"x": "1", "y": "2"}},
		{"m{;x,y}", "m;x=1", Values{"x": "1"}},
		// a URI over MaxURI is not read
		{"file:///{+path}", "file:///" + strings.Repeat("a", MaxURI), nil},
		{"file:///{+path}", "file:///" + strings.Repeat("a", MaxURI-len("file:///")), Values{"path": strings.Repeat("a", MaxURI-len("file:///"))}},
	} {
		tp, err := Parse(tc.tmpl)
		if err != nil {
			t.Fatalf("Parse(%q): %v", tc.tmpl, err)
		}
		got, ok := tp.Match(tc.uri)
		switch {
		case tc.want == nil && ok:
			t.Errorf("%s matches %q, binding %v; it should not", tc.tmpl, tc.uri, got)
		case tc.want != nil && !ok:
			t.Errorf("%s does not match %q", tc.tmpl, tc.uri)
		case tc.want != nil && !reflect.DeepEqual(got, tc.want):
			t.Errorf("%s: %q binds %v, want %v", tc.tmpl, tc.uri, got, tc.want)
		}
	}
}

// TestMatchable: a template whose path goes on after its query cannot be
// read back, and matches nothing.
func TestMatchable(t *testing.T) {
	for tmpl, want := range map[string]bool{
		"search{?q}":        true,
		"{?q}/path":         false,
		"a{#f}b":            false,
		"a{#f}":             true,
		"x?fixed=1{&y}":     true,
		"x?fixed=1{&y}{/z}": false,
		"{x}{y}":            false,
		"{x}{/y}":           true,
		"{&y}":              false,
		"{?q,q}":            false,
	} {
		tp, err := Parse(tmpl)
		if err != nil {
			t.Fatalf("Parse(%q): %v", tmpl, err)
		}
		if got := tp.Matchable(); got != want {
			t.Errorf("Matchable(%q) = %v, want %v", tmpl, got, want)
		}
		if !want {
			if _, ok := tp.Match(tp.Expand(Values{"q": "1", "f": "2", "y": "3", "z": "4"})); ok {
				t.Errorf("%s matched its expansion", tmpl)
			}
		}
	}
}

// TestNames: a template's variables, each once.
func TestNames(t *testing.T) {
	tp, err := Parse("repo://{owner}/{repo}{/path*}{?ref,owner}")
	if err != nil {
		t.Fatal(err)
	}
	if got, want := tp.Names(), []string{"owner", "repo", "path", "ref"}; !reflect.DeepEqual(got, want) {
		t.Errorf("Names = %v, want %v", got, want)
	}
	if tp.String() != "repo://{owner}/{repo}{/path*}{?ref,owner}" {
		t.Error("String is the template as written")
	}
}

// FuzzMatch: no template and URI make Parse, Expand or Match panic, and
// a matchable template matches what it expands to from plain values.
func FuzzMatch(f *testing.F) {
	for _, s := range []string{"file:///{path*}", "search{?q,limit}", "{+a}/{b}{;c}{.d*}", "x{#y}", "{/a,b}", "?x=1{&y}"} {
		f.Add(s, "v", "a/b")
	}
	f.Fuzz(func(t *testing.T, tmpl, a, b string) {
		tp, err := Parse(tmpl)
		if err != nil || len(a) > 1<<10 {
			return // (a long value times many variables: an expansion of megabytes, the test's own cost)
		}
		vs := Values{}
		for _, n := range tp.Names() {
			vs[n] = a
		}
		uri := tp.Expand(vs)
		specs := 0
		for _, p := range tp.parts {
			specs += len(p.vars)
		}
		// (Expressions side by side, or a variable named twice, may split
		// a value elsewhere than it was joined.)
		if _, ok := tp.Match(uri); !ok && tp.Matchable() && plain(a) && !strings.Contains(tmpl, "}{") && specs == len(tp.Names()) {
			t.Errorf("%q does not match its expansion %q", tmpl, uri)
		}
		tp.Match(b)
	})
}

// plain reports whether s is a non-empty run of letters and digits.
func plain(s string) bool {
	for _, c := range []byte(s) {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9') {
			return false
		}
	}
	return s != ""
}

// TestPrefix: a template's prefix is its literal text up to its first
// expression or query, and every URI it matches begins with it.
func TestPrefix(t *testing.T) {
	for tmpl, want := range map[string]string{
		"calc://notes/{path*}":      "calc://notes/",
		"{+base}/x":                 "",
		"file:///{name}.txt":        "file:///",
		"http://h/p?fixed=1{&q}":    "http://h/p",
		"http://h/p#frag{x}":        "http://h/p",
		"urn:example:animal:ferret": "urn:example:animal:ferret",
	} {
		tp, err := Parse(tmpl)
		if err != nil {
			t.Fatalf("%s: %v", tmpl, err)
		}
		if got := tp.Prefix(); got != want {
			t.Errorf("%s: Prefix() = %q, want %q", tmpl, got, want)
		}
	}
	tp, _ := Parse("calc://notes/{path*}")
	for _, uri := range []string{"calc://notes/a/b", "calc://notes/x"} {
		if _, ok := tp.Match(uri); !ok || !strings.HasPrefix(uri, tp.Prefix()) {
			t.Errorf("%s: matched %v, prefix %q", uri, ok, tp.Prefix())
		}
	}
}
