package main

import (
	"context"
	"os"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/otcgo/otc"
	"github.com/otcgo/otc/mcp"
)

// stdioServerEnv, set, makes the test binary an MCP server over stdio of
// one tool: the server that --stdio starts in these tests.
const stdioServerEnv = "OTC_CMD_TEST_STDIO"

func TestMain(m *testing.M) {
	if os.Getenv(stdioServerEnv) != "" {
		reg := otc.NewRegistry(nil)
		err := otc.Register(reg, otc.Tool{ID: "Calculator.Add", Version: "1.0.0", Description: "Adds two numbers."},
			func(_ context.Context, in addInput) (float64, error) { return in.A + in.B, nil })
		if err == nil {
			err = mcp.ServeStdio(context.Background(), reg, nil)
		}
		if err != nil {
			os.Exit(1)
		}
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// TestStdioFlag: --stdio in place of the URL runs the command line as an
// MCP server, for tools and call; a server that cannot start says why.
func TestStdioFlag(t *testing.T) {
	t.Setenv(stdioServerEnv, "1")
	self := "'" + os.Args[0] + "' -test.run='^$'"
	code, out, errOut := otcRun(t, "", "", nil, "tools", "--stdio", self)
	require.Equal(t, exitOK, code, errOut)
	assert.Contains(t, out, "Calculator_Add  Adds two numbers.")

	code, out, errOut = otcRun(t, "", "", nil, "call", "--stdio", self, "Calculator_Add", "a=2", "b=5")
	require.Equal(t, exitOK, code, errOut)
	assert.Equal(t, "7\n", out)

	code, _, errOut = otcRun(t, "", "", nil, "tools", "--stdio", `sh -c "echo no such database >&2; exit 2"`)
	assert.Equal(t, exitTransport, code)
	assert.Contains(t, errOut, "exit status 2")
	assert.Contains(t, errOut, "no such database")

	code, _, errOut = otcRun(t, "", "", nil, "tools", "--stdio", `"unclosed`)
	assert.Equal(t, exitBadInput, code)
	assert.Contains(t, errOut, "a double quote is not closed")

	code, _, errOut = otcRun(t, "http://127.0.0.1:1", "", nil, "tools", "--stdio", self, "--mcp", "URL")
	assert.Equal(t, exitBadInput, code)
	assert.Contains(t, errOut, "give one of")
}

func TestSplitCommand(t *testing.T) {
	for in, want := range map[string][]string{
		`node server.js stdio`:            {"node", "server.js", "stdio"},
		`  a   b  `:                       {"a", "b"},
		`cmd 'a b' "c d" e\ f`:            {"cmd", "a b", "c d", "e f"},
		`cmd "say \"hi\" \$HOME" '$HOME'`: {"cmd", `say "hi" $HOME`, "$HOME"},
		`cmd a""b ''`:                     {"cmd", "ab", ""},
		`cmd "a\nb"`:                      {"cmd", `a\nb`},
	} {
		got, err := splitCommand(in)
		require.NoError(t, err, in)
		assert.Equal(t, want, got, in)
	}
	for _, bad := range []string{``, `   `, `'open`, `"open`} {
		_, err := splitCommand(bad)
		assert.Error(t, err, bad)
	}
}
