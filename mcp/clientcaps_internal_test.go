package mcp

import (
	"encoding/json"
	"errors"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/otcgo/otc"
)

// TestClientCapsAllows: the one check every way of asking uses, on each
// shape of declared capabilities.
func TestClientCapsAllows(t *testing.T) {
	t.Parallel()
	form := otc.InputRequest{Method: otc.MethodElicit, Params: json.RawMessage(`{"mode":"form","message":"Name?"}`)}
	url := otc.InputRequest{Method: otc.MethodElicit, Params: json.RawMessage(`{"mode":"url","url":"https://example.com","message":"Sign in"}`)}
	sample := otc.InputRequest{Method: otc.MethodSample, Params: json.RawMessage(`{}`)}
	roots := otc.InputRequest{Method: otc.MethodListRoots}
	for _, tc := range []struct {
		caps    string // "" for unknown
		allowed []otc.InputRequest
		refused map[string]otc.InputRequest // the missing capability → a request
	}{
		{"", []otc.InputRequest{form, url, sample, roots}, nil},
		{`{}`, nil, map[string]otc.InputRequest{"elicitation": form, "sampling": sample, "roots": roots}},
		{`{"elicitation":{}}`, []otc.InputRequest{form}, map[string]otc.InputRequest{"elicitation": url, "sampling": sample}},
		{`{"elicitation":{"form":{},"url":{}},"sampling":{},"roots":{"listChanged":true}}`, []otc.InputRequest{form, url, sample, roots}, nil},
		// A value that is not an object declares nothing.
		{`{"elicitation":true,"sampling":null,"roots":[]}`, nil, map[string]otc.InputRequest{"elicitation": form, "sampling": sample, "roots": roots}},
		{`[]`, nil, map[string]otc.InputRequest{"elicitation": form}},
	} {
		var c clientCaps
		if tc.caps != "" {
			c = readClientCaps([]byte(tc.caps))
		}
		for _, r := range tc.allowed {
			assert.NoError(t, c.allows(r), "%s allows %s %s", tc.caps, r.Method, r.Params)
		}
		for name, r := range tc.refused {
			err := c.allows(r)
			var mc *MissingCapabilityError
			if assert.ErrorAs(t, err, &mc, "%s refuses %s %s", tc.caps, r.Method, r.Params) {
				assert.Equal(t, name, mc.Capability)
			}
			assert.True(t, errors.Is(err, otc.ErrInputUnsupported), "a missing capability is input the client cannot give")
		}
	}
	err := readClientCaps([]byte(`{}`)).allows(otc.InputRequest{Method: "ping"})
	assert.ErrorContains(t, err, `"ping" is not a request a server sends its client`)
	assert.False(t, errors.Is(err, otc.ErrInputUnsupported), "a method no client answers is the tool's mistake")

	tasks := readClientCaps([]byte(`{"extensions":{"io.modelcontextprotocol/tasks":{}}}`))
	assert.NotZero(t, tasks.has&capTasks)
	for _, caps := range []string{`{}`, `{"extensions":{"io.modelcontextprotocol/tasks":null}}`, `{"extensions":{"other":{}}}`} {
		assert.Zero(t, readClientCaps([]byte(caps)).has&capTasks, caps)
	}
	assert.True(t, readClientCaps([]byte(`{"experimental":{}}`)).declares("experimental"))
	assert.False(t, readClientCaps([]byte(`{"experimental":1}`)).declares("experimental"))
}
