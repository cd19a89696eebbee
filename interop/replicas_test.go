package interop

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/otcgo/otc/internal/redistest"
)

// TestTypeScriptClientSubscribesAcrossReplicas: the official MCP
// TypeScript SDK's client, the one most hosts ship (2025-11-25), behind a
// load balancer with no sticky routing in front of two calculators that
// share Redis: its session, begun on one replica, is answered by either;
// it subscribes to calc://memory, and each Memory_Store, run by either
// replica, reaches it on its session's stream, held by one of them.
func TestTypeScriptClientSubscribesAcrossReplicas(t *testing.T) {
	node, dir := frameworkScripts(t)
	srv, err := redistest.Start()
	addr := redistest.Need(t, srv, err)
	t.Cleanup(srv.Stop)
	env := []string{"OTC_REDIS_URL=redis://" + addr + "/0", "OTC_REQUEST_STATE_KEYS=" + strings.Repeat("5a", 32)}
	var backends []*httputil.ReverseProxy
	for range 2 {
		s, err := startHTTPServerWith(calculatorBin, "127.0.0.1:0", env)
		require.NoError(t, err)
		t.Cleanup(func() { _ = s.stop() })
		u, err := url.Parse(s.url + "/mcp")
		require.NoError(t, err)
		p := httputil.NewSingleHostReverseProxy(u)
		p.FlushInterval = -1 // the session's stream goes through as it comes
		backends = append(backends, p)
	}
	var next atomic.Uint64
	var byReplica [2]atomic.Int64
	lb := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		i := next.Add(1) % 2
		byReplica[i].Add(1)
		backends[i].ServeHTTP(w, r)
	}))
	t.Cleanup(func() { lb.CloseClientConnections(); lb.Close() })

	out := runScript(t, node, dir, "client-mcp-ts-subscribe.mjs", lb.URL)
	var got struct {
		ProtocolVersion string         `json:"protocolVersion"`
		Session         bool           `json:"session"`
		Capabilities    map[string]any `json:"capabilities"`
		StreamOpened    bool           `json:"streamOpened"`
		Updates         []string       `json:"updates"`
		Values          []float64      `json:"values"`
	}
	require.NoError(t, json.Unmarshal(out, &got), "%s", out)
	assert.Equal(t, "2025-11-25", got.ProtocolVersion)
	assert.True(t, got.Session, "the server gave a session")
	assert.Equal(t, map[string]any{"subscribe": true, "listChanged": true}, got.Capabilities)
	assert.True(t, got.StreamOpened, "the first store's update came")
	assert.Equal(t, []float64{1.5, 2.5, 3.5, 4.5}, got.Values, "each number read back, from either replica")
	for _, u := range got.Updates {
		assert.Equal(t, "calc://memory", u)
	}
	assert.GreaterOrEqual(t, len(got.Updates), 5)
	assert.Positive(t, byReplica[0].Load())
	assert.Positive(t, byReplica[1].Load())
}

// TestSDKClientSubscribes: the official Go SDK's client subscribes to
// calc://memory over each connection of a version with
// resources/subscribe, and is told of a Memory_Store: over HTTP on its
// session's stream, over stdio on the connection.
func TestSDKClientSubscribes(t *testing.T) {
	t.Parallel()
	for _, c := range connections() {
		if c.version == "" {
			continue // 2026-07-28 has subscriptions/listen instead
		}
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			updates := make(chan string, 16)
			cl := mcp.NewClient(&mcp.Implementation{Name: "otc-interop", Version: "0.0.0"}, &mcp.ClientOptions{
				ResourceUpdatedHandler: func(_ context.Context, req *mcp.ResourceUpdatedNotificationRequest) {
					updates <- req.Params.URI
				},
			})
			ctx, cancel := context.WithTimeout(t.Context(), callTimeout)
			defer cancel()
			transport, _ := c.transport()
			cs, err := cl.Connect(ctx, transport, &mcp.ClientSessionOptions{ProtocolVersion: c.version})
			require.NoError(t, err)
			t.Cleanup(func() { _ = cs.Close() })
			require.NoError(t, cs.Subscribe(ctx, &mcp.SubscribeParams{URI: "calc://memory"}))
			// The stream opens on its own after the handshake: a store
			// is made again until its update comes.
			for i := 0; ; i++ {
				_, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "Memory_Store", Arguments: map[string]any{"value": float64(i)}})
				require.NoError(t, err)
				select {
				case uri := <-updates:
					assert.Equal(t, "calc://memory", uri)
					return
				case <-time.After(250 * time.Millisecond):
				case <-ctx.Done():
					t.Fatal("no notifications/resources/updated")
				}
			}
		})
	}
}
