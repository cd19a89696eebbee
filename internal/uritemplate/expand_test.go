package uritemplate

import (
	"errors"
	"fmt"
	"strings"
	"testing"
)

// rfcValues are the variables of RFC 6570's examples (§3.2).
var rfcValues = Values{
	"count":      []string{"one", "two", "three"},
	"dom":        []string{"example", "com"},
	"dub":        "me/too",
	"hello":      "Hello World!",
	"half":       "50%",
	"var":        "value",
	"who":        "fred",
	"base":       "http://example.com/home/",
	"path":       "/foo/bar",
	"list":       []string{"red", "green", "blue"},
	"keys":       []Pair{{"semi", ";"}, {"dot", "."}, {"comma", ","}},
	"v":          "6",
	"x":          "1024",
	"y":          "768",
	"empty":      "",
	"empty_keys": []Pair{},
	"undef":      nil,
}

// TestExpandRFC: every example of RFC 6570 §3.2, levels 1 to 4.
func TestExpandRFC(t *testing.T) {
	for tmpl, want := range map[string]string{
		// §3.2.2 simple
		"{var}": "value", "{hello}": "Hello%20World%21", "{half}": "50%25", "O{empty}X": "OX", "O{undef}X": "OX",
		"{x,y}": "1024,768", "{x,hello,y}": "1024,Hello%20World%21,768", "?{x,empty}": "?1024,", "?{x,undef}": "?1024",
		"?{undef,y}": "?768", "{var:3}": "val", "{var:30}": "value", "{list}": "red,green,blue", "{list*}": "red,green,blue",
		"{keys}": "semi,%3B,dot,.,comma,%2C", "{keys*}": "semi=%3B,dot=.,comma=%2C",
		// §3.2.3 reserved
		"{+var}": "value", "{+hello}": "Hello%20World!", "{+half}": "50%25", "{base}index": "http%3A%2F%2Fexample.com%2Fhome%2Findex",
		"{+base}index": "http://example.com/home/index", "O{+empty}X": "OX", "O{+undef}X": "OX", "{+path}/here": "/foo/bar/here",
		"here?ref={+path}": "here?ref=/foo/bar", "up{+path}{var}/here": "up/foo/barvalue/here", "{+x,hello,y}": "1024,Hello%20World!,768",
		"{+path,x}/here": "/foo/bar,1024/here", "{+path:6}/here": "/foo/b/here", "{+list}": "red,green,blue", "{+list*}": "red,green,blue",
		"{+keys}": "semi,;,dot,.,comma,,", "{+keys*}": "semi=;,dot=.,comma=,",
		// §3.2.4 fragment
		"{#var}": "#value", "{#hello}": "#Hello%20World!", "{#half}": "#50%25", "foo{#empty}": "foo#", "foo{#undef}": "foo",
		"{#x,hello,y}": "#1024,Hello%20World!,768", "{#path,x}/here": "#/foo/bar,1024/here", "{#path:6}/here": "#/foo/b/here",
		"{#list}": "#red,green,blue", "{#list*}": "#red,green,blue", "{#keys}": "#semi,;,dot,.,comma,,", "{#keys*}": "#semi=;,dot=.,comma=,",
		// §3.2.5 label
		"{.who}": ".fred", "{.who,who}": ".fred.fred", "{.half,who}": ".50%25.fred", "www{.dom*}": "www.example.com", "X{.var}": "X.value",
		"X{.empty}": "X.", "X{.undef}": "X", "X{.var:3}": "X.val", "X{.list}": "X.red,green,blue", "X{.list*}": "X.red.green.blue",
		"X{.keys}": "X.semi,%3B,dot,.,comma,%2C", "X{.keys*}": "X.semi=%3B.dot=..comma=%2C", "X{.empty_keys}": "X", "X{.empty_keys*}": "X",
		// §3.2.6 path segments
		"{/who}": "/fred", "{/who,who}": "/fred/fred", "{/half,who}": "/50%25/fred", "{/who,dub}": "/fred/me%2Ftoo", "{/var}": "/value",
		"{/var,empty}": "/value/", "{/var,undef}": "/value", "{/var,x}/here": "/value/1024/here", "{/var:1,var}": "/v/value",
		"{/list}": "/red,green,blue", "{/list*}": "/red/green/blue", "{/list*,path:4}": "/red/green/blue/%2Ffoo",
		"{/keys}": "/semi,%3B,dot,.,comma,%2C", "{/keys*}": "/semi=%3B/dot=./comma=%2C",
		// §3.2.7 path-style parameters
		"{;who}": ";who=fred", "{;half}": ";half=50%25", "{;empty}": ";empty", "{;v,empty,who}": ";v=6;empty;who=fred",
		"{;v,bar,who}": ";v=6;who=fred", "{;x,y}": ";x=1024;y=768", "{;x,y,empty}": ";x=1024;y=768;empty", "{;x,y,undef}": ";x=1024;y=768",
		"{;hello:5}": ";hello=Hello", "{;list}": ";list=red,green,blue", "{;list*}": ";list=red;list=green;list=blue",
		"{;keys}": ";keys=semi,%3B,dot,.,comma,%2C", "{;keys*}": ";semi=%3B;dot=.;comma=%2C",
		// §3.2.8 query
		"{?who}": "?who=fred", "{?half}": "?half=50%25", "{?x,y}": "?x=1024&y=768", "{?x,y,empty}": "?x=1024&y=768&empty=",
		"{?x,y,undef}": "?x=1024&y=768", "{?var:3}": "?var=val", "{?list}": "?list=red,green,blue", "{?list*}": "?list=red&list=green&list=blue",
		"{?keys}": "?keys=semi,%3B,dot,.,comma,%2C", "{?keys*}": "?semi=%3B&dot=.&comma=%2C",
		// §3.2.9 query continuation
		"{&who}": "&who=fred", "{&half}": "&half=50%25", "?fixed=yes{&x}": "?fixed=yes&x=1024", "{&x,y,empty}": "&x=1024&y=768&empty=",
		"{&var:3}": "&var=val", "{&list}": "&list=red,green,blue", "{&list*}": "&list=red&list=green&list=blue",
		"{&keys}": "&keys=semi,%3B,dot,.,comma,%2C", "{&keys*}": "&semi=%3B&dot=.&comma=%2C",
		// §1.2's levels
		"http://example.com/~{username}/": "http://example.com/~/", "{count}": "one,two,three", "{count*}": "one,two,three",
		"{/count}": "/one,two,three", "{/count*}": "/one/two/three", "{;count}": ";count=one,two,three", "{;count*}": ";count=one;count=two;count=three",
		"{?count}": "?count=one,two,three", "{?count*}": "?count=one&count=two&count=three", "{&count*}": "&count=one&count=two&count=three",
	} {
		tp, err := Parse(tmpl)
		if err != nil {
			t.Errorf("Parse(%q): %v", tmpl, err)
			continue
		}
		if got := tp.Expand(rfcValues); got != want {
			t.Errorf("%s: got %q, want %q", tmpl, got, want)
		}
	}
}

// TestExpandUnicode: a prefix counts characters, and non-ASCII text is
// percent-encoded as UTF-8.
func TestExpandUnicode(t *testing.T) {
	tp, err := Parse("{name:2}/{+name}")
	if err != nil {
		t.Fatal(err)
	}
	if got, want := tp.Expand(Values{"name": "Ünïcode"}), "%C3%9Cn/%C3%9Cn%C3%AFcode"; got != want {
		t.Errorf("got %q, want %q", got, want)
	}
}

// TestParseErrors: what a template may not be, each refused naming where.
func TestParseErrors(t *testing.T) {
	for tmpl, want := range map[string]string{
		"{":            "not closed",
		"a}":           "closes no expression",
		"{}":           "empty expression",
		"{=x}":         "reserved for future",
		"{a b}":        "not a variable name",
		"{a..b}":       "not a variable name",
		"{.a.}":        "not a variable name",
		"{a:0}":        "not a length",
		"{a:10000}":    "not a length",
		"{a:x}":        "not a length",
		"x y{a}":       "may not appear",
		"50%{a}":       "percent-encoded",
		"{a,}":         "not a variable name",
		"{%zz}":        "not a variable name",
		"<{a}>":        "may not appear",
		"file:///{a}}": "closes no expression",
	} {
		_, err := Parse(tmpl)
		if err == nil {
			t.Errorf("Parse(%q): no error", tmpl)
			continue
		}
		var e *Error
		if !errors.As(err, &e) || !strings.Contains(e.Error(), want) {
			t.Errorf("Parse(%q): %v, want it to say %q", tmpl, err, want)
		}
	}
	var names []string
	for i := range MaxVariables + 1 {
		names = append(names, fmt.Sprintf("v%d", i))
	}
	if _, err := Parse("x{" + strings.Join(names, ",") + "}"); err == nil {
		t.Error("a template with too many variables was taken")
	}
	if _, err := Parse("x{" + strings.Join(names[:MaxVariables], ",") + "}"); err != nil {
		t.Errorf("a template of MaxVariables variables: %v", err)
	}
	if _, err := Parse(strings.Repeat("a", MaxLength+1)); err == nil {
		t.Error("a template over MaxLength was taken")
	}
}
