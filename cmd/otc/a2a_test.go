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

// TestA2A: otc tools --a2a lists an A2A agent's skills by name, beside
// the ids their card gives them, and otc
// call --a2a calls one with key=value pairs, reads a tool error with its
// hint and exit code, and invalid input with its parameters.
func TestA2A(t *testing.T) {
	mux := http.NewServeMux()
	mount.All(mux, registryOf(t), nil)
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)

	code, out, errOut := otcRun(t, srv.URL, "", nil, "tools", "--a2a", "URL/a2a")
	require.Equal(t, exitOK, code, errOut)
	assert.Contains(t, out, "NAME            SKILL ID")
	assert.Contains(t, out, "Calculator_Add  Calculator.Add@1.0.0  Adds two numbers together.")

	// The skill-schemas extension gives each parameter its type, whether
	// it is required, and its description, as over OTC.
	code, out, errOut = otcRun(t, srv.URL, "", nil, "tools", "--a2a", "URL/a2a", "Calculator_Add")
	require.Equal(t, exitOK, code, errOut)
	assert.Contains(t, out, "a  number, required\n      The first number.")

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
	assert.Contains(t, errOut, "give one of --mcp, --rest, --a2a and --stdio")
}

// TestInspectA2A: otc inspect --a2a lists an A2A agent's skills and
// proxies calls to it: a value, invalid input with the parameter to fix,
// a tool error with its hint.
func TestInspectA2A(t *testing.T) {
	mux := http.NewServeMux()
	mount.All(mux, registryOf(t), nil)
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	a := newInspectAPI(t, startInspect(t, nil, "--a2a", srv.URL+"/a2a"))

	resp, body := a.do(t, "GET", "/api/info", "", nil)
	require.Equal(t, http.StatusOK, resp.StatusCode, body)
	assert.Contains(t, body, `{"kind":"a2a","url":"`+srv.URL+`/a2a"}`)

	resp, body = a.do(t, "GET", "/api/tools?server=a2a", "", nil)
	require.Equal(t, http.StatusOK, resp.StatusCode, body)
	var got struct{ Tools []inspectTool }
	require.NoError(t, json.Unmarshal([]byte(body), &got))
	byName := map[string]inspectTool{}
	for _, tool := range got.Tools {
		byName[tool.Name] = tool
	}
	add, ok := byName["Calculator_Add"]
	require.True(t, ok, body)
	assert.Equal(t, "Calculator", add.Toolkit)
	assert.Contains(t, string(add.InputSchema), `"a"`, "the parameters of the skill's example")

	_, res := a.callEvents(t, `{"server":"a2a","tool":"`+add.Call+`","input":{"a":10,"b":5}}`)
	require.True(t, res.OK, "%+v", res.Error)
	assert.JSONEq(t, `15`, string(res.Value))
	assert.Equal(t, "a2a", res.Server)
	require.NotEmpty(t, res.Exchanges)

	_, res = a.callEvents(t, `{"server":"a2a","tool":"`+add.Call+`","input":{"a":1,"b":"infinity"}}`)
	assert.False(t, res.OK)
	require.NotNil(t, res.Error)
	assert.Equal(t, "invalid_input", res.Error.Code)
	assert.Contains(t, res.Error.ParameterErrors, "b")

	_, res = a.callEvents(t, `{"server":"a2a","tool":"Doorbell_Ring","input":{}}`)
	require.NotNil(t, res.ToolError, "%+v", res)
	assert.Equal(t, "Doorbell not found", res.ToolError.Message)
	assert.Equal(t, "ids: d1, d2", res.ToolError.AdditionalPromptContent)
}
