package resource_test

import (
	"context"
	"net/http/httptest"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/otcgo/otc"
	"github.com/otcgo/otc/client"
	"github.com/otcgo/otc/mcp"
	"github.com/otcgo/otc/prompt"
	"github.com/otcgo/otc/resource"
)

// TestContents: what each kind of value a read function returns becomes,
// read back by a client; and a function's failures.
func TestContents(t *testing.T) {
	t.Parallel()
	reg := otc.NewRegistry(nil)
	add := func(uri string, read func(context.Context) (any, error)) {
		_, err := resource.Register(reg, resource.Resource{URI: uri, Name: uri, MIMEType: "text/x-test"}, read)
		require.NoError(t, err)
	}
	one := otc.EmbeddedResource{URI: "x://elsewhere", Text: "kept"}
	add("x://one", func(context.Context) (any, error) { return one, nil })
	add("x://pointer", func(context.Context) (any, error) { return &otc.EmbeddedResource{Blob: []byte{9}}, nil })
	add("x://nil", func(context.Context) (any, error) { return (*otc.EmbeddedResource)(nil), nil })
	add("x://many", func(context.Context) (any, error) {
		return []otc.EmbeddedResource{{Text: "a"}, {Text: ""}, {MIMEType: "image/png", Blob: []byte{1}}}, nil
	})
	add("x://none", func(context.Context) (any, error) { return []otc.EmbeddedResource{}, nil })
	add("x://unencodable", func(context.Context) (any, error) { return func() {}, nil })
	add("x://gone", func(context.Context) (any, error) { return nil, resource.ErrNotFound })
	srv := httptest.NewServer(mcp.NewHandler(reg, nil))
	t.Cleanup(srv.Close)
	c, err := client.New(srv.URL, &client.Options{Format: client.FormatMCP})
	require.NoError(t, err)
	t.Cleanup(func() { _ = c.Close() })
	ctx := t.Context()

	got, err := c.MCP().ReadResource(ctx, "x://one")
	require.NoError(t, err)
	assert.Equal(t, []otc.EmbeddedResource{{URI: "x://elsewhere", MIMEType: "text/x-test", Text: "kept"}}, got, "its URI kept, the MIME type filled in")
	got, err = c.MCP().ReadResource(ctx, "x://pointer")
	require.NoError(t, err)
	assert.Equal(t, []otc.EmbeddedResource{{URI: "x://pointer", MIMEType: "text/x-test", Blob: []byte{9}}}, got)
	got, err = c.MCP().ReadResource(ctx, "x://many")
	require.NoError(t, err)
	assert.Equal(t, []otc.EmbeddedResource{
		{URI: "x://many", MIMEType: "text/x-test", Text: "a"},
		{URI: "x://many", MIMEType: "text/x-test"},
		{URI: "x://many", MIMEType: "image/png", Blob: []byte{1}},
	}, got)
	for uri, want := range map[string]string{
		"x://nil":         "nil *otc.EmbeddedResource",
		"x://none":        "returned no contents",
		"x://unencodable": "cannot be encoded as JSON",
	} {
		_, err := c.MCP().ReadResource(ctx, uri)
		var rpc *client.RPCError
		require.ErrorAs(t, err, &rpc, uri)
		assert.Equal(t, -32603, rpc.Code)
		assert.Contains(t, rpc.Message, want)
	}
	_, err = c.MCP().ReadResource(ctx, "x://gone")
	var rpc *client.RPCError
	require.ErrorAs(t, err, &rpc)
	assert.JSONEq(t, `{"uri":"x://gone"}`, string(rpc.Data), "ErrNotFound reads as nothing there")
}

// TestPromptRemove: a removed prompt is gone, and its name free again.
func TestPromptRemove(t *testing.T) {
	t.Parallel()
	reg := otc.NewRegistry(nil)
	say := func(context.Context, struct{}) (string, error) { return "hi", nil }
	h, err := prompt.Register(reg, prompt.Prompt[struct{}]{Name: "p"}, say)
	require.NoError(t, err)
	assert.True(t, h.Remove())
	assert.False(t, h.Remove(), "removed once")
	_, err = prompt.Register(reg, prompt.Prompt[struct{}]{Name: "p"}, say)
	assert.NoError(t, err, "the name is free again")
}
