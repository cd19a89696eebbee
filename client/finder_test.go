package client_test

import (
	"context"
	"encoding/json"
	"net/http/httptest"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/otcgo/otc"
	"github.com/otcgo/otc/client"
	"github.com/otcgo/otc/internal/testkit"
	"github.com/otcgo/otc/search"
	_ "github.com/otcgo/otc/search" // the server's GET /tools?q=
)

// TestFinder: the two tools a client hands a model in place of a catalog
// find a tool by what the model describes and call it by the name found;
// arguments the model got wrong are answered in words it can act on; a
// server that does not search is the agent's error, not the model's.
func TestFinder(t *testing.T) {
	t.Parallel()
	reg := otc.NewRegistry(nil)
	require.NoError(t, otc.Register(reg, otc.Tool{ID: "Calculator.Add", Version: "1.0.0", Description: "Adds two numbers together."}, testkit.Add))
	require.NoError(t, otc.Register(reg, otc.Tool{ID: "Files.read_file", Version: "1.0.0", Description: "Reads a file."},
		func(context.Context, struct {
			Path string `json:"path" jsonschema:"description=The file's path."`
		}) (string, error) {
			return "", nil
		}))
	srv := httptest.NewServer(otc.NewHandler(reg, &otc.HandlerOptions{Search: search.Query}))
	t.Cleanup(srv.Close)
	c, err := client.New(srv.URL, nil)
	require.NoError(t, err)
	ctx := context.Background()

	defs := client.FinderTools()
	require.Len(t, defs, 2)
	assert.Equal(t, client.FinderSearch, defs[0].Name)
	assert.Equal(t, client.FinderCall, defs[1].Name)
	for _, d := range defs {
		assert.True(t, json.Valid(d.InputSchema.Parameters), d.Name)
	}

	text, err := c.FinderText(ctx, client.FinderSearch, json.RawMessage(`{"query":"sum of two numbers","limit":1}`))
	require.NoError(t, err)
	var found struct {
		Tools []struct {
			Name        string          `json:"name"`
			Description string          `json:"description"`
			InputSchema json.RawMessage `json:"input_schema"`
		} `json:"tools"`
	}
	require.NoError(t, json.Unmarshal([]byte(text), &found), text)
	require.Len(t, found.Tools, 1)
	assert.Equal(t, "Calculator.Add@1.0.0", found.Tools[0].Name)
	assert.Contains(t, string(found.Tools[0].InputSchema), `"a"`)

	args, _ := json.Marshal(map[string]any{"name": found.Tools[0].Name, "arguments": map[string]int{"a": 2, "b": 3}})
	text, err = c.FinderText(ctx, client.FinderCall, args)
	require.NoError(t, err)
	assert.Equal(t, "5", text)

	for _, bad := range []struct{ tool, args, names string }{
		{client.FinderSearch, `{}`, "query"},
		{client.FinderSearch, `{"query":"add","limit":0}`, "limit"},
		{client.FinderSearch, `{"query":"add","regex":".*"}`, "regex"},
		{client.FinderSearch, `"add"`, "object"},
		{client.FinderCall, `{}`, "name"},
		{client.FinderCall, `{"name":"Calculator.Add","arguments":{"a":"x","b":1}}`, "a"},
	} {
		text, err := c.FinderText(ctx, bad.tool, json.RawMessage(bad.args))
		require.NoError(t, err, bad.args)
		assert.Contains(t, text, bad.names, bad.args)
	}
	_, err = c.FinderText(ctx, "other_tool", nil)
	assert.Error(t, err)

	r, err := client.New(srv.URL+"/v1", &client.Options{Format: client.FormatREST})
	require.NoError(t, err)
	_, err = r.FinderText(ctx, client.FinderSearch, json.RawMessage(`{"query":"add"}`))
	assert.ErrorIs(t, err, client.ErrNoSearch)
}
