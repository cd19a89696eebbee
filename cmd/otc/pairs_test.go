package main

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/otcgo/otc"
	"github.com/otcgo/otc/mcp"
	"github.com/otcgo/otc/rest"
)

// shipInput nests an object, an array of objects and a field whose name
// holds a dot.
type shipInput struct {
	To struct {
		Street string `json:"street" jsonschema:"description=The street."`
		City   string `json:"city" jsonschema:"description=The city."`
		Floor  int    `json:"floor,omitempty" jsonschema:"description=The floor."`
	} `json:"to" jsonschema:"description=Where to ship."`
	Items []struct {
		SKU string `json:"sku" jsonschema:"description=The article."`
		Qty int    `json:"qty,omitempty" jsonschema:"description=How many."`
	} `json:"items,omitempty" jsonschema:"description=What to ship."`
	Tags    []string `json:"tags,omitempty" jsonschema:"description=Labels."`
	Dotted  string   `json:"a.b,omitempty" jsonschema:"description=A name with a dot."`
	Express bool     `json:"express,omitempty" jsonschema:"description=Ship fast."`
}

// serveShip serves Shop.Ship, which returns its input, on OTC (/), MCP
// (/mcp) and REST (/v1).
func serveShip(t *testing.T) string {
	t.Helper()
	reg := otc.NewRegistry(nil)
	require.NoError(t, otc.Register(reg, otc.Tool{ID: "Shop.Ship", Version: "1.0.0", Description: "Ships an order."},
		func(_ context.Context, in shipInput) (shipInput, error) { return in, nil }))
	mux := http.NewServeMux()
	mux.Handle("/mcp", mcp.NewHandler(reg, nil))
	mux.Handle("/v1/", http.StripPrefix("/v1", rest.NewHandler(reg, nil)))
	mux.Handle("/", otc.NewHandler(reg, nil))
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	return srv.URL
}

// TestCallDottedPairs: key=value pairs reach nested fields and array
// elements by dotted paths, on every wire format, with each value read as
// its field's type; the mistakes a path can hold are refused with exit 2
// and a message naming the path.
func TestCallDottedPairs(t *testing.T) {
	url := serveShip(t)
	for _, w := range []struct{ name, flag, url, tool string }{
		{"otc", "", "URL", "Shop.Ship"},
		{"mcp", "--mcp", "URL/mcp", "Shop_Ship"},
		{"rest", "--rest", "URL/v1", "Shop_Ship"},
	} {
		t.Run(w.name, func(t *testing.T) {
			args := func(pairs ...string) []string {
				a := []string{"call", "--json"}
				if w.flag != "" {
					a = append(a, w.flag)
				}
				return append(append(a, w.url, w.tool), pairs...)
			}
			code, out, errOut := otcRun(t, url, "", nil, args("to.street=1 Main St", "to.city=Paris", "to.floor=3",
				"items.0.sku=a", "items.1.sku=b", "items.1.qty=2", "tags.0=x", "a.b=dot", "express=true")...)
			require.Equal(t, exitOK, code, "stdout: %s\nstderr: %s", out, errOut)
			var got struct {
				Value json.RawMessage `json:"value"`
			}
			require.NoError(t, json.Unmarshal([]byte(out), &got), "stdout: %s", out)
			assert.JSONEq(t, `{"to":{"street":"1 Main St","city":"Paris","floor":3},"items":[{"sku":"a"},{"sku":"b","qty":2}],"tags":["x"],"a.b":"dot","express":true}`, string(got.Value))

			for _, tc := range []struct {
				name  string
				pairs []string
				want  string
			}{
				{"unknown_nested_field", []string{"to.street=x", "to.town=P"}, `has no parameter "to.town"`},
				{"index_on_an_object", []string{"to.0=x"}, `has no parameter "to.0"`},
				{"field_on_a_scalar", []string{"express.x=1"}, `has no parameter "express.x"`},
				{"nested_type", []string{"to.street=x", "to.city=P", "to.floor=third"}, `to.floor: "third" is not an integer`},
				{"gap_in_an_array", []string{"to.street=x", "to.city=P", "items.1.sku=b"}, "items.0 is missing"},
				{"whole_and_parts", []string{`to={"street":"x","city":"P"}`, "to.city=Q"}, "to is given whole and in parts"},
				{"twice", []string{"to.city=P", "to.city=Q"}, "to.city is given more than once"},
				{"index_too_large", []string{"items.100000.sku=a"}, "past 9999"},
				{"negative_index", []string{"items.-1.sku=a"}, `has no parameter "items.-1.sku"`},
			} {
				t.Run(tc.name, func(t *testing.T) {
					code, out, errOut := otcRun(t, url, "", nil, args(tc.pairs...)...)
					assert.Equal(t, exitBadInput, code, "stdout: %s\nstderr: %s", out, errOut)
					assert.Contains(t, errOut, tc.want)
				})
			}
		})
	}
}
