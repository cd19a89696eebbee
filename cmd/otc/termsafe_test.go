package main

import (
	"bytes"
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/otcgo/otc"
	"github.com/otcgo/otc/mcp"
	"github.com/otcgo/otc/resource"
)

// hostileText holds what a terminal acts on: the clipboard (OSC 52), a
// link (OSC 8), a clear screen, an 8-bit CSI (C1) and a carriage return.
const hostileText = "a\x1b]52;c;cm0gLXJmIH4=\x07b \x1b]8;;https://evil.example\x07here\x1b]8;;\x07 \x1b[2J\u009b31m\rend"

// escapes are the marks of hostileText that must not reach a terminal.
var escapes = []string{"\x1b]", "\x1b[2J", "\u009b", "\x07", "\rend"}

// TestTerminalEscapes: what a server says reaches a terminal made
// harmless, in every command that prints it (tools, a tool's
// description, call, its tool error, read); to a pipe, and with --json,
// it is written as it is.
func TestTerminalEscapes(t *testing.T) {
	t.Parallel()
	reg := otc.NewRegistry(nil)
	require.NoError(t, otc.Register(reg, otc.Tool{ID: "Evil.Say", Version: "1.0.0", Description: "Says " + hostileText},
		func(context.Context, struct{}) (string, error) { return hostileText, nil }))
	require.NoError(t, otc.Register(reg, otc.Tool{ID: "Evil.Fail", Version: "1.0.0", Description: "Fails."},
		func(context.Context, struct{}) (string, error) { return "", &otc.ToolError{Message: hostileText} }))
	_, err := resource.Register(reg, resource.Resource{URI: "evil://text", Name: "text"}, func(context.Context) (string, error) { return hostileText, nil })
	require.NoError(t, err)
	mux := http.NewServeMux()
	mux.Handle("/mcp", mcp.NewHandler(reg, nil))
	mux.Handle("/", otc.NewHandler(reg, nil))
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)

	for name, args := range map[string][]string{
		"tools":    {"tools", srv.URL},
		"describe": {"tools", srv.URL, "Evil.Say"},
		"call":     {"call", srv.URL, "Evil.Say"},
		"error":    {"call", srv.URL, "Evil.Fail"},
		"read":     {"read", srv.URL + "/mcp", "evil://text"},
	} {
		t.Run(name, func(t *testing.T) {
			var out, errOut bytes.Buffer
			runOn(t.Context(), args, strings.NewReader(""), &out, &errOut, func(string) string { return "" },
				terminalFeatures{stdoutTTY: true, stderrTTY: true})
			all := out.String() + errOut.String()
			assert.Contains(t, all, "a?]52;c;", "the text is there, made printable")
			for _, esc := range escapes {
				assert.NotContains(t, all, esc, "to a terminal")
			}
			// To a pipe, as it is.
			out.Reset()
			errOut.Reset()
			run(context.Background(), args, strings.NewReader(""), &out, &errOut, func(string) string { return "" })
			if name != "tools" { // the table shortens a description
				assert.Contains(t, out.String()+errOut.String(), "\x1b]52;c;", "to a pipe")
			}
		})
	}
	var out bytes.Buffer
	runOn(t.Context(), []string{"call", srv.URL, "Evil.Say", "--json"}, strings.NewReader(""), &out, &bytes.Buffer{}, func(string) string { return "" },
		terminalFeatures{stdoutTTY: true, stderrTTY: true})
	assert.Contains(t, out.String(), `\u001b]52;c;`, "--json is JSON as it is")
	assert.Contains(t, out.String(), "\u009b", "--json is JSON as it is")
}

// TestTermTextKeepsOwnEscapes: otc's own styles and spinner pass.
func TestTermTextKeepsOwnEscapes(t *testing.T) {
	in := styleBold + "NAME" + styleReset + "\n\r\x1b[K⠋ calling\t" + styleRed + "x" + styleReset + " é\xff\u2028"
	assert.Equal(t, styleBold+"NAME"+styleReset+"\n\r\x1b[K⠋ calling\t"+styleRed+"x"+styleReset+" é??", string(termText([]byte(in))))
}
