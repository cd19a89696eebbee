package testkit

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// AssertQuoteSchema checks the input schema of the example server's
// Shipping.Quote as a model was given it: the nested object and its
// pattern, the enum's values, the bounds, and only "to" required.
func AssertQuoteSchema(t *testing.T, raw []byte) {
	t.Helper()
	var s struct {
		Required   []string `json:"required"`
		Properties struct {
			To struct {
				Properties struct {
					Country struct {
						Pattern string `json:"pattern"`
					} `json:"country"`
				} `json:"properties"`
			} `json:"to"`
			Speed struct {
				Enum []string `json:"enum"`
			} `json:"speed"`
			Parcels struct {
				Minimum *float64 `json:"minimum"`
				Maximum *float64 `json:"maximum"`
			} `json:"parcels"`
		} `json:"properties"`
	}
	require.NoError(t, json.Unmarshal(raw, &s), "%s", raw)
	assert.Equal(t, []string{"to"}, s.Required, "%s", raw)
	assert.Equal(t, "^[A-Z]{2}$", s.Properties.To.Properties.Country.Pattern, "%s", raw)
	assert.Equal(t, []string{"standard", "express"}, s.Properties.Speed.Enum, "%s", raw)
	if assert.NotNil(t, s.Properties.Parcels.Minimum, "%s", raw) && assert.NotNil(t, s.Properties.Parcels.Maximum, "%s", raw) {
		assert.Equal(t, 1.0, *s.Properties.Parcels.Minimum, "%s", raw)
		assert.Equal(t, 10.0, *s.Properties.Parcels.Maximum, "%s", raw)
	}
}

// AgentCall is a call that a scripted model of an agent framework's test
// makes of the example server, and the text the model must then read.
type AgentCall struct {
	Name, Tool, Args, Want string
}

// AgentCalls are the calls of the framework adapters' tests: a string
// result, a tool error with its hint and retry delay, and invalid input.
var AgentCalls = []AgentCall{
	{"string_result", "Shipping_Quote", `{"to":{"country":"FR"},"speed":"express","parcels":2}`, "express to FR: 2 parcel(s), 25.00 EUR"},
	{"tool_error", "Doorbell_Ring", `{"doorbell_id":"doorbell1"}`, "Doorbell ID not found\n\nids: doorbell42,doorbell84\n\nThis may succeed if tried again after 500ms."},
	{"invalid_input", "Shipping_Quote", `{"to":{"country":"france"}}`, "The arguments are invalid:\n- to.country: Must match the pattern ^[A-Z]{2}$\nCorrect these arguments and call the tool again."},
}

// CheckFinder checks an adapter's finder tools against the example
// server: run runs the adapter's tool of the name given with the
// arguments a model wrote. A search for a shipping quote finds
// Shipping.Quote, and the call tool calls it by the name found, as
// AgentCalls' first call does. Arguments the model got wrong are
// answered in words it can act on, unless the framework checks them
// against the schema itself (validates), and refuses them before the tool
// runs.
func CheckFinder(t *testing.T, run func(tool, args string) (string, error), validates bool) {
	t.Helper()
	text, err := run("search_tools", `{"query":"how much to ship parcels abroad","limit":3}`)
	require.NoError(t, err)
	var found struct {
		Tools []struct {
			Name string `json:"name"`
		} `json:"tools"`
	}
	require.NoError(t, json.Unmarshal([]byte(text), &found), text)
	require.NotEmpty(t, found.Tools, text)
	require.Contains(t, found.Tools[0].Name, "Shipping", text)
	args, err := json.Marshal(map[string]any{"name": found.Tools[0].Name, "arguments": json.RawMessage(AgentCalls[0].Args)})
	require.NoError(t, err)
	text, err = run("call_tool", string(args))
	require.NoError(t, err)
	require.Equal(t, AgentCalls[0].Want, text)
	text, err = run("search_tools", `{"limit":3}`)
	if validates {
		require.ErrorContains(t, err, "query")
		return
	}
	require.NoError(t, err, "arguments the model got wrong are the model's to fix")
	require.Contains(t, text, "query")
}
