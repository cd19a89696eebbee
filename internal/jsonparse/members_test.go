package jsonparse

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// membersAgree checks EachMember and EachElement against encoding/json on
// one text: they accept exactly the valid objects (arrays) in UTF-8, and
// hand over the members (elements) encoding/json reads, in order.
func membersAgree(t *testing.T, s string) {
	t.Helper()
	var names []string
	var values []string
	ok := EachMember([]byte(s), func(name, value []byte) bool {
		names = append(names, string(name))
		values = append(values, string(value))
		return true
	})
	trimmed := strings.TrimLeft(s, " \t\r\n")
	isObject := validJSONInUTF8([]byte(s)) && strings.HasPrefix(trimmed, "{")
	require.Equal(t, isObject, ok, "EachMember(%q)", s)
	if ok {
		// encoding/json keeps the last of a repeated name: so must a
		// reader that assigns as it goes.
		var want map[string]json.RawMessage
		require.NoError(t, json.Unmarshal([]byte(s), &want))
		got := map[string]string{}
		for i, n := range names {
			got[n] = values[i]
		}
		require.Len(t, got, len(want))
		for n, v := range want {
			require.JSONEq(t, string(v), got[n], "member %q of %q", n, s)
		}
	}

	var elems []string
	ok = EachElement([]byte(s), func(value []byte) bool {
		elems = append(elems, string(value))
		return true
	})
	isArray := validJSONInUTF8([]byte(s)) && strings.HasPrefix(trimmed, "[")
	require.Equal(t, isArray, ok, "EachElement(%q)", s)
	if ok {
		var want []json.RawMessage
		require.NoError(t, json.Unmarshal([]byte(s), &want))
		require.Len(t, elems, len(want))
		for i := range want {
			require.JSONEq(t, string(want[i]), elems[i])
		}
	}
}

func TestEachMemberAgreesWithEncodingJSON(t *testing.T) {
	for _, s := range []string{
		``, `{}`, ` { } `, `[]`, `[ ]`, `{"a":1}`, ` {"a" : 1 , "b":[1,{"c":2}]} `, `{"a":1,}`, `{,"a":1}`, `{"a" 1}`,
		`{"a":}`, `{1:2}`, `{"a":1}x`, `{"a":1}}`, `{"a":1`, `{"a":1 "b":2}`, `{"a":1,"a":2}`, `{"\u0061":1,"a":2}`,
		`{"` + strings.Repeat(`\u00e9`, 40) + `":true}`, "{\"\xff\":1}", `{"a":"\x"}`, `[1,2]`, `[1,]`, `[,1]`, `[1 2]`,
		`[1}`, `["a",{"b":[]},null]`, `"x"`, `1`, `null`, `{"jsonrpc":"2.0","id":7,"result":{"content":[]}}`,
	} {
		membersAgree(t, s)
	}
}

func TestEachMemberStops(t *testing.T) {
	n := 0
	require.True(t, EachMember([]byte(`{"a":1,"b":2,"c":3}`), func(name, _ []byte) bool {
		n++
		return string(name) != "b"
	}))
	require.Equal(t, 2, n)
}

func TestString(t *testing.T) {
	for raw, want := range map[string]string{`"x"`: "x", `""`: "", `"a\nb\u00e9"`: "a\nbé", `"\ud83d\ude00"`: "😀"} {
		s, ok := String([]byte(raw))
		require.True(t, ok, raw)
		require.Equal(t, want, s)
	}
	for _, raw := range []string{`1`, `null`, `"`, ``, `{}`} {
		_, ok := String([]byte(raw))
		require.False(t, ok, raw)
	}
}

func FuzzEachMember(f *testing.F) {
	for _, s := range []string{`{"a":[1,-2.5e3,true,null,"\u00e9"]}`, `[{}]`, `{"a":1,"a":2}`, `{"\u0061":1}`, `{"a":1,}`, "{\"id\":\"\xff\"}", `[1,[2]]`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) { membersAgree(t, s) })
}
