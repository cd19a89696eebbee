package main

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/otcgo/otc/mount"
)

// TestDetectFormat: without --mcp or --rest, the command speaks OTC to a
// URL that answers as an OTC server, finds an MCP endpoint or a REST view
// given in its place and goes on with it, finds the OTC handler below a
// mux's root at its documented mount, and otherwise fails naming the flags
// and the URLs to try.
func TestDetectFormat(t *testing.T) {
	url := serveTools(t, "") // OTC at /, MCP at /mcp, REST at /v1
	mux := http.NewServeMux()
	mount.All(mux, registryOf(t), nil)
	mounted := httptest.NewServer(mux)
	t.Cleanup(mounted.Close)
	nothing := httptest.NewServer(http.NotFoundHandler())
	t.Cleanup(nothing.Close)

	for _, tc := range []struct {
		name     string
		url      string
		args     []string
		code     int
		out      string // a piece of stdout
		note     string // a piece of stderr; "" for none
		noteNone bool
	}{
		{name: "otc", url: url, args: []string{"call", "URL", "Calculator.Add", "a=1", "b=2"}, code: exitOK, out: "3", noteNone: true},
		{name: "mcp_endpoint", url: url, args: []string{"call", "URL/mcp", "Calculator_Add", "a=1", "b=2"}, code: exitOK, out: "3",
			note: "URL/mcp is an MCP endpoint, not an OTC server; going on as with --mcp"},
		{name: "mcp_endpoint_trailing_slash", url: mounted.URL, args: []string{"tools", "URL/mcp/"}, code: exitOK, out: "Calculator_Add",
			note: "URL/mcp/ is an MCP endpoint"},
		{name: "rest_view", url: url, args: []string{"call", "URL/v1", "Calculator_Add", "a=1", "b=2"}, code: exitOK, out: "3",
			note: "URL/v1 is a REST view, not an OTC server; going on as with --rest"},
		{name: "mux_root", url: mounted.URL, args: []string{"call", "URL", "Calculator.Add", "a=1", "b=2"}, code: exitOK, out: "3",
			note: "URL is not a tool server, but URL/otc is an OTC server; going on with that URL (give URL/otc next time)"},
		{name: "nothing", url: nothing.URL, args: []string{"tools", "URL"}, code: exitTransport,
			note: "no tool server answers at URL: GET URL/tools answered 404 Not Found, not an OTC catalog, and no MCP endpoint, REST view or A2A agent answers there or at URL/otc, URL/mcp, URL/v1 or URL/a2a"},
		{name: "a2a_agent", url: mounted.URL, args: []string{"call", "URL/a2a", "Calculator_Add", "a=1", "b=2"}, code: exitOK, out: "3",
			note: "URL/a2a is an A2A agent, not an OTC server; going on as with --a2a"},
		{name: "a2a_card_at_root", url: mounted.URL, args: []string{"call", "--a2a", "URL", "Calculator_Add", "a=1", "b=2"}, code: exitOK, out: "3", noteNone: true},
		{name: "flag_given", url: url, args: []string{"tools", "--mcp", "URL/mcp"}, code: exitOK, out: "Calculator_Add", noteNone: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, out, errOut := otcRun(t, tc.url, "", nil, tc.args...)
			errOut = strings.ReplaceAll(errOut, tc.url, "URL")
			require.Equal(t, tc.code, code, "stdout: %s\nstderr: %s", out, errOut)
			assert.Contains(t, out, tc.out)
			if tc.noteNone {
				assert.Empty(t, errOut)
			}
			assert.Contains(t, errOut, tc.note)
		})
	}
}
