package uritemplate

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/otcgo/otc/internal/params"
)

const repoSchema = `{"type":"object","properties":{
	"owner":{"type":"string"},
	"repo":{"type":"string"},
	"number":{"type":"integer"},
	"path":{"type":"string"},
	"labels":{"type":"array","items":{"type":"string"}},
	"limit":{"type":["integer","null"]},
	"draft":{"type":"boolean"},
	"score":{"type":"number"}
},"required":["owner","repo"]}`

// TestCheck: a template and the input it binds to must agree, and each
// disagreement is named with the variable and what to do.
func TestCheck(t *testing.T) {
	for tmpl, want := range map[string]string{
		"repo://{owner}/{repo}/issues/{number}{?limit,draft}": "",
		"repo://{owner}/{repo}/tree{/labels*}":                "",
		"repo://{owner}/{repo}/blob/{path*}":                  "",
		"repo://{owner}/{repo}/{nope}":                        `the variable "nope" has no property of that name`,
		"repo://{owner}/issues":                               `the input requires "repo", which the template has no variable for`,
		"repo://{owner}{?repo}":                               `the input requires "repo", which a URI may leave out ({?repo})`,
		"repo://{owner}/{repo}{?labels}":                      `binds to a list, but the template gives it one value: explode it (labels*)`,
		"repo://{owner}/{repo}{/number*}":                     `is exploded into a list (number*), but its property is of type integer`,
	} {
		tp, err := Parse(tmpl)
		if err != nil {
			t.Fatalf("Parse(%q): %v", tmpl, err)
		}
		err = tp.Check(read(t, repoSchema))
		switch {
		case want == "" && err != nil:
			t.Errorf("%s: %v", tmpl, err)
		case want != "" && (err == nil || !strings.Contains(err.Error(), want)):
			t.Errorf("%s: %v, want it to say %q", tmpl, err, want)
		case want != "" && !strings.Contains(err.Error(), tmpl):
			t.Errorf("%s: %v does not name the template", tmpl, err)
		}
	}
	tp, _ := Parse("x://{o}")
	if err := tp.Check(read(t, `{"type":"object","properties":{"o":{"type":"object"}}}`)); err == nil || !strings.Contains(err.Error(), "which no URI text reads as") {
		t.Errorf("an object property: %v", err)
	}
	if _, err := params.Read(json.RawMessage(`[`)); err == nil {
		t.Error("a broken schema was read")
	}
}

// read reads the parameters of schema.
func read(t *testing.T, schema string) params.List {
	t.Helper()
	ps, err := params.Read(json.RawMessage(schema))
	if err != nil {
		t.Fatal(err)
	}
	return ps
}

// TestInput: the variables of a matched URI become the function's input,
// typed as its schema says; a variable of the wrong kind is named.
func TestInput(t *testing.T) {
	tp, err := Parse("repo://{owner}/{repo}/issues/{number}{/labels*}{?limit,draft,score}")
	if err != nil {
		t.Fatal(err)
	}
	vs, ok := tp.Match("repo://otcgo/otc/issues/50/bug/good%20first?draft=true&limit=5&score=0.5")
	if !ok {
		t.Fatal("no match")
	}
	in, err := NewBinder(read(t, repoSchema)).Input(vs)
	if err != nil {
		t.Fatal(err)
	}
	var got map[string]any
	if err := json.Unmarshal(in, &got); err != nil {
		t.Fatal(err)
	}
	want := map[string]any{"owner": "otcgo", "repo": "otc", "number": 50.0, "labels": []any{"bug", "good first"}, "draft": true, "limit": 5.0, "score": 0.5}
	if js, _ := json.Marshal(got); string(js) != mustJSON(want) {
		t.Errorf("input %s, want %s", js, mustJSON(want))
	}
	for uri, bad := range map[string]string{
		"repo://otcgo/otc/issues/fifty":          "number",
		"repo://otcgo/otc/issues/5?draft=yes":    "draft",
		"repo://otcgo/otc/issues/5?score=NaN":    "score",
		"repo://otcgo/otc/issues/5?limit=1.5":    "limit",
		"repo://otcgo/otc/issues/5?score=0x10p1": "score",
	} {
		vs, ok := tp.Match(uri)
		if !ok {
			t.Fatalf("%s: no match", uri)
		}
		_, err := NewBinder(read(t, repoSchema)).Input(vs)
		var pe *ParamError
		if !errors.As(err, &pe) || pe.Name != bad {
			t.Errorf("%s: %v, want an error naming %q", uri, err, bad)
		}
	}
	lt, _ := Parse("x://{/n*}")
	vs, _ = lt.Match("x:///1/2/x")
	_, err = NewBinder(read(t, `{"type":"object","properties":{"n":{"type":"array","items":{"type":"integer"}}}}`)).Input(vs)
	var pe *ParamError
	if !errors.As(err, &pe) || pe.Name != "n[2]" {
		t.Errorf("a list's bad item: %v, want it named n[2]", err)
	}
}

func mustJSON(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}
