package claims

import (
	"slices"
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestScopes(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		claims  map[string]any
		want    []string
		problem string // a part of ScopeProblem's answer; "" for none
	}{
		{map[string]any{"scope": "a b"}, []string{"a", "b"}, ""},
		{map[string]any{"scope": " a  b "}, []string{"a", "b"}, ""},
		{map[string]any{"scope": ""}, nil, ""},
		{map[string]any{"scope": "calc:read\tcounter:write"}, nil, "U+0009"},
		{map[string]any{"scope": "a\nb"}, nil, "U+000A"},
		{map[string]any{"scope": "a\u00a0b"}, nil, "U+00A0"},
		{map[string]any{"scope": "a\u2003b"}, nil, "U+2003"},
		{map[string]any{"scope": "a\x00"}, nil, "U+0000"},
		{map[string]any{"scope": "a\xff"}, nil, "not UTF-8"},
		{map[string]any{"scope": 7}, nil, "not a string"},
		{map[string]any{"scope": "a", "scp": []any{"b"}}, []string{"a"}, ""},
		{map[string]any{"scp": "a b"}, []string{"a", "b"}, ""},
		{map[string]any{"scp": []any{"a", "b"}}, []string{"a", "b"}, ""},
		{map[string]any{"scp": []string{"a"}}, []string{"a"}, ""},
		{map[string]any{"scp": []any{"a b"}}, nil, "holds a space"},
		{map[string]any{"scp": []any{"a", 3}}, nil, "element 1"},
		{map[string]any{"scp": []any{""}}, nil, "is empty"},
		{map[string]any{"scp": map[string]any{}}, nil, "neither a string nor an array"},
		{nil, nil, ""},
	} {
		got := slices.Collect(Scopes(c.claims))
		assert.Equal(t, c.want, got, "%v", c.claims)
		if c.problem == "" {
			assert.Empty(t, ScopeProblem(c.claims), "%v", c.claims)
		} else {
			assert.Contains(t, ScopeProblem(c.claims), c.problem, "%v", c.claims)
		}
		for _, s := range []string{"a", "b", "counter:write", "a b"} {
			assert.Equal(t, slices.Contains(c.want, s), Granted(c.claims, s), "%v grants %q", c.claims, s)
		}
	}
}

func TestResourceKey(t *testing.T) {
	t.Parallel()
	const r = "https://tools.example.com/mcp"
	for in, same := range map[string]bool{
		r:                                        true,
		"HTTPS://Tools.Example.COM/mcp":          true,
		"https://tools.example.com:443/mcp":      true,
		"https://tools.example.com/MCP":          false,
		"https://x@tools.example.com/mcp":        false,
		"https://x:y@tools.example.com/mcp":      false,
		"https://tools.example.com/mcp#frag":     false,
		"https://tools.example.com/mcp#":         false,
		"https://tools.example.com:8443/mcp":     false,
		"https://tools.example.com/mcp/":         false,
		"https://tools.example.com/mcp?":         false,
		"https://tools.example.com/other/../mcp": false,
		"tools.example.com/mcp":                  false,
	} {
		assert.Equal(t, same, ResourceKey(in) == ResourceKey(r), "%q", in)
	}
	assert.Equal(t, ResourceKey("https://h"), ResourceKey("https://h/"))
}

func TestTypeIs(t *testing.T) {
	t.Parallel()
	assert.True(t, TypeIs("at+jwt", false, "at+jwt"))
	assert.True(t, TypeIs("application/AT+JWT", false, "at+jwt"))
	assert.False(t, TypeIs("at+jwt", true, "jwt"))
	assert.True(t, TypeIs(nil, true, "jwt"))
	assert.False(t, TypeIs(nil, false, "jwt"))
	assert.False(t, TypeIs(7, true, "jwt"))
	assert.False(t, TypeIs("dpop+jwt", true, "jwt"))
}

func TestSubject(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		claims     map[string]any
		kind, name string
	}{
		{map[string]any{"sub": "alice", "client_id": "app"}, "sub", "alice"},
		{map[string]any{"client_id": "alice"}, "client_id", "alice"},
		{map[string]any{"sub": "", "client_id": "app"}, "client_id", "app"},
		{map[string]any{"sub": 7}, "", ""},
		{map[string]any{}, "", ""},
	} {
		kind, name := Subject(c.claims)
		assert.Equal(t, c.kind, kind, "%v", c.claims)
		assert.Equal(t, c.name, name, "%v", c.claims)
	}
}

func TestStringsAndHas(t *testing.T) {
	for _, c := range []struct {
		v    any
		want []string
		ok   bool
	}{
		{"a", []string{"a"}, true},
		{[]string{"a", "b"}, []string{"a", "b"}, true},
		{[]any{"a", "b"}, []string{"a", "b"}, true},
		{[]any{"a", 1.0}, []string{"a"}, false},
		{nil, nil, false},
		{3.0, nil, false},
	} {
		got, ok := Strings(c.v)
		if !slices.Equal(got, c.want) || ok != c.ok {
			t.Errorf("Strings(%#v) = %q, %v; want %q, %v", c.v, got, ok, c.want, c.ok)
		}
		for _, s := range []string{"a", "b", "c"} {
			if Has(c.v, s) != slices.Contains(got, s) {
				t.Errorf("Has(%#v, %q) disagrees with Strings", c.v, s)
			}
		}
	}
}
