package federation_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/otcgo/otc"
	"github.com/otcgo/otc/client"
	"github.com/otcgo/otc/federation"
	"github.com/otcgo/otc/mcp"
	"github.com/otcgo/otc/mount"
)

// TestFederation_ProgressOverA2A: an MCP upstream's progress reaches a
// caller of the gateway over A2A, in the status messages of the stream
// its client follows.
func TestFederation_ProgressOverA2A(t *testing.T) {
	t.Parallel()
	up := otc.NewRegistry(nil)
	require.NoError(t, otc.Register(up, otc.Tool{ID: "Steps.Run", Version: "1.0.0", Description: "Runs two steps."},
		func(ctx context.Context, _ struct{}) (string, error) {
			otc.ReportProgress(ctx, 1, 2, "first")
			otc.ReportProgress(ctx, 2, 2, "second")
			return "done", nil
		}))
	upSrv := httptest.NewServer(mcp.NewHandler(up, nil))
	t.Cleanup(upSrv.Close)

	reg := otc.NewRegistry(nil)
	fed, err := federation.Mount(t.Context(), reg, []federation.Upstream{{Name: "up", URL: upSrv.URL, Format: client.FormatMCP}}, &federation.Options{Strict: true})
	require.NoError(t, err)
	t.Cleanup(func() { _ = fed.Close() })
	mux := http.NewServeMux()
	mount.All(mux, reg, nil)
	gw := httptest.NewServer(mux)
	t.Cleanup(gw.Close)

	c, err := client.New(gw.URL+mount.PrefixA2A, &client.Options{Format: client.FormatA2A})
	require.NoError(t, err)
	var mu sync.Mutex
	var said []string
	res, err := c.Call(t.Context(), "up_Steps_Run", nil, &client.CallOptions{Progress: func(p client.Progress) {
		mu.Lock()
		defer mu.Unlock()
		if p.Message != "" {
			said = append(said, p.Message)
		}
	}})
	require.NoError(t, err)
	assert.Contains(t, string(res.Value), "done")
	mu.Lock()
	defer mu.Unlock()
	assert.Equal(t, []string{"1 of 2: first", "2 of 2: second"}, said)
}
