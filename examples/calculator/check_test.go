package main

import (
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestOTCCheckPasses runs "otc check" (cmd/otc, built from the root
// module) against the program, naming Calculator.Add as the tool it may
// call; then otc tools and otc call over OTC, REST and MCP.
func TestOTCCheckPasses(t *testing.T) {
	if testing.Short() {
		t.Skip("builds cmd/otc")
	}
	t.Parallel()
	bin := filepath.Join(t.TempDir(), "otc")
	out, err := exec.CommandContext(t.Context(), "go", "build", "-C", "../..", "-o", bin, "./cmd/otc").CombinedOutput()
	require.NoError(t, err, "building cmd/otc: %s", out)

	_, lines := startMain(t, "-addr 127.0.0.1:0")
	base := listeningURL(t, nextLine(t, lines))
	out, err = exec.CommandContext(t.Context(), bin, "check", base, "--tool", "Calculator.Add@1.0.0", "--input", `{"a":1,"b":2}`).CombinedOutput()
	require.NoError(t, err, "otc check: %s", out)
	assert.Contains(t, string(out), "20 passed, 0 failed, 1 skipped")

	// tools and call, over each protocol the program serves.
	for _, tc := range []struct {
		name string
		args []string
		want string
	}{
		{"otc tools", []string{"tools", base}, "Counter.Increment@1.0.0  Counter_Increment"},
		{"otc call", []string{"call", base, "Calculator.Add", "a=10", "b=5"}, "15\n"},
		{"rest tools", []string{"tools", "--rest", base + "/v1"}, "Calculator_Add"},
		{"rest call", []string{"call", "--rest", base + "/v1", "Calculator_Add", "a=10", "b=5"}, "15\n"},
		{"mcp tools", []string{"tools", "--mcp", base + "/mcp", "Timer_Wait"}, "ms  integer, required; >= 0; <= 10000"},
		{"mcp call", []string{"call", "--mcp", base + "/mcp", "Calculator_Add", "a=10", "b=5"}, "15\n"},
	} {
		out, err := exec.CommandContext(t.Context(), bin, tc.args...).CombinedOutput()
		require.NoError(t, err, "%s: %s", tc.name, out)
		assert.Contains(t, string(out), tc.want, tc.name)
	}
}
