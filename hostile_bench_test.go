package otc_test

import (
	"context"
	"encoding/json"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/otcgo/otc"
)

// BenchmarkHostile times the worst bodies we could build under the 4 MiB
// limit through the handler (otc), beside json.Unmarshal of the same
// bytes into an any (baseline): the cost of merely decoding a body of
// that size. The target is a ratio of at most 3 for every body.

type hostileInput struct {
	A      float64   `json:"a" jsonschema:"description=A number."`
	Values []float64 `json:"values,omitempty" jsonschema:"description=Numbers."`
	Counts []int     `json:"counts,omitempty" jsonschema:"description=Whole numbers."`
	Code   string    `json:"code,omitempty" jsonschema:"description=Lower-case letters.,pattern=^[a-z]+$"`
	Codes  []string  `json:"codes,omitempty" jsonschema:"description=Postal codes.,pattern=^[0-9]{5}$"`
	Data   any       `json:"data,omitempty" jsonschema:"description=Anything."`
}

// hostileBodies builds each body: a call of Hostile.Take whose input is
// filled to just under the limit with fill, written n times between head
// and tail.
func hostileBodies() map[string][]byte {
	const limit = otc.DefaultMaxBodyBytes - 256
	build := func(head, fill, tail string) []byte {
		var b strings.Builder
		b.WriteString(`{"request":{"tool_id":"Hostile.Take","input":{"a":1,` + head)
		for b.Len()+len(fill)+len(tail)+8 < limit {
			b.WriteString(fill)
		}
		b.WriteString(tail + `}}}`)
		return []byte(b.String())
	}
	keys := func() []byte {
		var b strings.Builder
		b.WriteString(`{"request":{"tool_id":"Hostile.Take","input":{"a":1`)
		for i := 0; b.Len() < limit-32; i++ {
			b.WriteString(`,"k` + strconv.Itoa(i) + `":1`)
		}
		b.WriteString(`}}}`)
		return []byte(b.String())
	}
	return map[string][]byte{
		// Every key is unexpected: one parameter error each, were they all reported.
		"unknown_keys": keys(),
		// 1e300 parses slowly as an exact rational.
		"big_exponents": build(`"values":[1e300`, `,1e300`, `]`),
		// Whole numbers written as floats, for an []int: decoded twice.
		"float_integers": build(`"counts":[1.0e2`, `,1.0e2`, `]`),
		// One string of 4 MiB matched against a pattern.
		"long_pattern_string": build(`"code":"`, `abcdefghij`, `"`),
		// Many short strings, each against a pattern.
		"many_pattern_strings": build(`"codes":["12345"`, `,"12345"`, `]`),
		// Every element is wrong: a parameter error each.
		"many_parameter_errors": build(`"values":["x"`, `,"x"`, `]`),
		// Arrays nested 990 deep, over and over.
		"deep_arrays": build(`"data":[0`, `,`+strings.Repeat("[", 990)+strings.Repeat("]", 990), `]`),
		// The same key, over and over.
		"duplicate_keys": build(`"x":1`, `,"x":1`, ``),
	}
}

func BenchmarkHostile(b *testing.B) {
	reg := otc.NewRegistry(&otc.RegistryOptions{Logger: slog.New(slog.DiscardHandler)})
	require.NoError(b, otc.Register(reg, otc.Tool{ID: "Hostile.Take", Version: "1.0.0", Description: "Takes anything."},
		func(_ context.Context, in hostileInput) (int, error) {
			return len(in.Values) + len(in.Counts) + len(in.Codes) + len(in.Code), nil
		}))
	h := otc.NewHandler(reg, nil)
	proto := httptest.NewRequest(http.MethodPost, "/tools/call", nil)
	proto.Header.Set("Content-Type", "application/json")

	bodies := hostileBodies()
	for _, name := range []string{"unknown_keys", "big_exponents", "float_integers", "long_pattern_string",
		"many_pattern_strings", "many_parameter_errors", "deep_arrays", "duplicate_keys"} {
		body := bodies[name]
		require.Less(b, len(body), otc.DefaultMaxBodyBytes, name)
		require.True(b, json.Valid(body), name)
		req := *proto
		req.ContentLength = int64(len(body))
		rec := serveOnce(h, &req, body)
		require.Contains(b, []int{http.StatusOK, http.StatusUnprocessableEntity}, rec.Code, "%s: %.300s", name, rec.Body.Bytes())
		b.Run(name+"/otc", func(b *testing.B) {
			b.SetBytes(int64(len(body)))
			benchServeStatus(b, h, &req, body, rec.Code)
		})
		b.Run(name+"/baseline", func(b *testing.B) {
			b.SetBytes(int64(len(body)))
			b.ReportAllocs()
			for b.Loop() {
				var v any
				if err := json.Unmarshal(body, &v); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
