package federation_test

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/otcgo/otc"
	"github.com/otcgo/otc/client"
	"github.com/otcgo/otc/federation"
	"github.com/otcgo/otc/internal/testkit"
	"github.com/otcgo/otc/mcp"
	"github.com/otcgo/otc/mount"
)

// TestFederation_SSEUpstream: an upstream of MCP's HTTP+SSE transport of
// 2024-11-05 is served on every format, found by itself (its URL given
// as an MCP endpoint, or given bare) or named in the config
// (transport: sse).
func TestFederation_SSEUpstream(t *testing.T) {
	t.Parallel()
	up := otc.NewRegistry(nil)
	require.NoError(t, otc.Register(up, otc.Tool{ID: "Echo.Say", Version: "1.0.0", Description: "Says the text back."},
		func(_ context.Context, in struct {
			Text string `json:"text" jsonschema:"description=What to say."`
		}) (string, error) {
			return in.Text, nil
		}))
	l := testkit.NewLegacySSE(t, func(ctx context.Context, in io.Reader, out io.Writer) { _ = mcp.Serve(ctx, up, in, out, nil) })

	config := filepath.Join(t.TempDir(), "gateway.yaml")
	require.NoError(t, os.WriteFile(config, []byte("upstreams:\n  - name: named\n    mcp: {url: \""+l.URL+"/sse\", transport: sse}\n"), 0o600))
	cfg, err := federation.LoadConfig(config, func(string) string { return "" })
	require.NoError(t, err)
	named := cfg.Upstreams
	require.Len(t, named, 1)
	require.NotNil(t, named[0].Client)
	assert.Equal(t, "sse", named[0].Client.MCPTransport)

	ups := append(named,
		federation.Upstream{Name: "found", URL: l.URL + "/sse", Format: client.FormatMCP},
		federation.Upstream{Name: "dialed", URL: l.URL})
	reg := otc.NewRegistry(nil)
	fed, err := federation.Mount(t.Context(), reg, ups, &federation.Options{Strict: true})
	require.NoError(t, err)
	t.Cleanup(func() { _ = fed.Close() })
	for _, h := range fed.Health() {
		assert.Equal(t, federation.StateUp, h.State, h.Name)
	}

	mux := http.NewServeMux()
	mount.All(mux, reg, nil)
	gw := httptest.NewServer(mux)
	t.Cleanup(gw.Close)
	for _, f := range []client.Format{client.FormatOTC, client.FormatMCP, client.FormatREST, client.FormatA2A} {
		c, err := client.Dial(t.Context(), gw.URL+map[client.Format]string{client.FormatOTC: mount.PrefixOTC, client.FormatMCP: mount.PrefixMCP,
			client.FormatREST: mount.PrefixREST, client.FormatA2A: mount.PrefixA2A}[f], &client.Options{Format: f})
		require.NoError(t, err)
		defs, err := c.ListTools(t.Context())
		require.NoError(t, err, f)
		for _, name := range []string{"named", "found", "dialed"} {
			id := ""
			for _, d := range defs {
				if d.Name == name+"_Echo_Say" || d.ID == name+".Echo_Say" || d.Name == name+".Echo_Say" {
					id = d.ID
				}
			}
			require.NotEmpty(t, id, "%s lists %s's tool: %v", f, name, defs)
			res, err := c.Call(t.Context(), id, map[string]any{"text": "via " + name}, nil)
			require.NoError(t, err, "%s %s", f, id)
			assert.Contains(t, string(res.Value)+string(res.Raw), "via "+name)
		}
		_ = c.Close()
	}
}
