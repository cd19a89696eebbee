package main

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/otcgo/otc/mount"
)

// TestA2A: otc tools --a2a lists an A2A agent's skills by name, and otc
// call --a2a calls one with key=value pairs, reads a tool error with its
// hint and exit code, and invalid input with its parameters.
func TestA2A(t *testing.T) {
	mux := http.NewServeMux()
	mount.All(mux, registryOf(t), nil)
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)

	code, out, errOut := otcRun(t, srv.URL, "", nil, "tools", "--a2a", "URL/a2a")
	require.Equal(t, exitOK, code, errOut)
	assert.Contains(t, out, "NAME")
	assert.Contains(t, out, "Calculator_Add  Adds two numbers together.")

	code, out, errOut = otcRun(t, srv.URL, "", nil, "call", "--a2a", "URL/a2a", "Calculator_Add", "a=1", "b=2", "--json")
	require.Equal(t, exitOK, code, errOut)
	var got struct {
		Success bool            `json:"success"`
		Value   json.RawMessage `json:"value"`
	}
	require.NoError(t, json.Unmarshal([]byte(out), &got), out)
	assert.True(t, got.Success)
	assert.JSONEq(t, `3`, string(got.Value))

	code, out, _ = otcRun(t, srv.URL, "", nil, "call", "--a2a", "URL/a2a", "Doorbell_Ring")
	assert.Equal(t, exitToolError, code)
	assert.Contains(t, out, "Tool error: Doorbell not found")
	assert.Contains(t, out, "hint: ids: d1, d2")
	assert.Contains(t, out, "may succeed if tried again after 500ms")

	code, _, errOut = otcRun(t, srv.URL, "", nil, "call", "--a2a", "URL/a2a", "Calculator_Add", `{"a":"x","b":1}`)
	assert.Equal(t, exitBadInput, code, errOut)
	assert.Contains(t, errOut, "Must be a number")

	code, _, errOut = otcRun(t, srv.URL, "", nil, "tools", "--a2a", "--mcp", "URL/a2a")
	assert.Equal(t, exitBadInput, code)
	assert.Contains(t, errOut, "give one of --mcp, --rest and --a2a")
}
