package client_test

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/otcgo/otc/client"
	"github.com/otcgo/otc/mount"
)

// plainAgent serves formatsRegistry's A2A agent behind a card stripped of
// what otc adds (the skill-schemas extension, the examples), as another
// agent's card reads, with the default input modes given.
func plainAgent(t *testing.T, modes []string) string {
	reg, _ := formatsRegistry(nil)
	mux := http.NewServeMux()
	mount.All(mux, reg, nil)
	inner := httptest.NewServer(mux)
	t.Cleanup(inner.Close)
	resp, err := http.Get(inner.URL + mount.PrefixA2A + "/.well-known/agent-card.json")
	require.NoError(t, err)
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	var card map[string]any
	require.NoError(t, json.Unmarshal(b, &card))
	delete(card, "capabilities")
	card["defaultInputModes"] = modes
	for _, sk := range card["skills"].([]any) {
		delete(sk.(map[string]any), "examples")
		delete(sk.(map[string]any), "inputModes")
	}
	var srv *httptest.Server
	srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/.well-known/agent-card.json" {
			card["supportedInterfaces"] = []map[string]any{{"url": srv.URL, "protocolBinding": "JSONRPC", "protocolVersion": "1.0"}}
			_ = json.NewEncoder(w).Encode(card)
			return
		}
		r.URL.Path = mount.PrefixA2A
		mux.ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)
	return srv.URL
}

// TestA2AAnyAgent: a skill whose card gives no schema is callable as its
// card says: one that takes no text gets any object as its data part;
// one that takes text gets {"text", "data"}, and an object without text
// as its data part (a plain object, or {"data": …}) rather than a refusal.
func TestA2AAnyAgent(t *testing.T) {
	call := map[string]any{"tool": "Math_Add", "input": map[string]any{"a": 2, "b": 3}}

	c, err := client.New(plainAgent(t, []string{"application/json"}), &client.Options{Format: client.FormatA2A})
	require.NoError(t, err)
	defs, err := c.ListTools(t.Context())
	require.NoError(t, err)
	add := toolID(t, defs, "Math_Add")
	for _, d := range defs {
		if d.Name == "Math_Add" {
			assert.NotContains(t, string(d.InputSchema.Parameters), `"required":["text"]`, "a skill without text takes no text")
		}
	}
	sum, err := client.CallAs[float64](t.Context(), c, add, call, nil)
	require.NoError(t, err, "a plain object is the data part")
	assert.Equal(t, 5.0, sum)
	_, err = c.Call(t.Context(), add, nil, nil)
	require.Error(t, err, "no data")

	c, err = client.New(plainAgent(t, []string{"text/plain", "application/json"}), &client.Options{Format: client.FormatA2A})
	require.NoError(t, err)
	defs, err = c.ListTools(t.Context())
	require.NoError(t, err)
	add = toolID(t, defs, "Math_Add")
	for _, input := range []any{call, map[string]any{"data": call}} {
		sum, err := client.CallAs[float64](t.Context(), c, add, input, nil)
		require.NoError(t, err, "%v", input)
		assert.Equal(t, 5.0, sum)
	}
	_, err = c.Call(t.Context(), add, map[string]any{}, nil)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "text")
}
