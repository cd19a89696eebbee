package main

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/otcgo/otc/client"
	"github.com/otcgo/otc/mcp"
)

// roundRobin is a load balancer with no sticky routing: each request goes
// to the next replica, whatever session it belongs to.
func roundRobin(t *testing.T, replicas ...string) string {
	t.Helper()
	var proxies []*httputil.ReverseProxy
	for _, r := range replicas {
		u, err := url.Parse(r)
		require.NoError(t, err)
		p := httputil.NewSingleHostReverseProxy(u)
		p.FlushInterval = -1 // event streams go through as they come
		proxies = append(proxies, p)
	}
	var next atomic.Uint64
	lb := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		proxies[next.Add(1)%uint64(len(proxies))].ServeHTTP(w, r)
	}))
	t.Cleanup(func() { lb.CloseClientConnections(); lb.Close() })
	return lb.URL
}

// TestMemoryAcrossReplicas: two replicas sharing Redis behind a load
// balancer with no sticky routing. A client subscribed to calc://memory,
// whose requests and stream land on either replica, is told of each
// Memory.Store, whichever replica ran it, at each protocol version, and
// reads the number stored on either.
func TestMemoryAcrossReplicas(t *testing.T) {
	t.Parallel()
	env := []string{"OTC_REDIS_URL=redis://" + needRedis(t) + "/0", "OTC_REQUEST_STATE_KEYS=" + strings.Repeat("ef", 32)}
	start := func() string {
		_, lines := startMainEnv(t, "-addr 127.0.0.1:0", env...)
		return listeningURL(t, nextLine(t, lines))
	}
	a, b := start(), start()
	lb := roundRobin(t, a+"/mcp", b+"/mcp")
	for _, version := range []string{mcp.Version20250618, mcp.Version20251125, mcp.Version20260728} {
		t.Run(version, func(t *testing.T) {
			updates := make(chan string, 16)
			sub, err := client.New(lb, &client.Options{Format: client.FormatMCP, MCPVersion: version,
				OnNotification: func(method string, params json.RawMessage) {
					if method == "notifications/resources/updated" {
						var p struct{ URI string }
						_ = json.Unmarshal(params, &p)
						updates <- p.URI
					}
				}})
			require.NoError(t, err)
			t.Cleanup(func() { _ = sub.Close() })
			require.NoError(t, sub.MCP().Subscribe(t.Context(), "calc://memory"))

			for i, replica := range []string{a, b, a, b} {
				store, err := client.New(replica+"/mcp", &client.Options{Format: client.FormatMCP})
				require.NoError(t, err)
				value := float64(version[9]-'0')*100 + float64(i) // a number of this run's own
				stored, err := client.CallAs[float64](t.Context(), store, "Memory_Store", map[string]any{"value": value}, nil)
				require.NoError(t, err)
				assert.Equal(t, value, stored)
				_ = store.Close()
				select {
				case uri := <-updates:
					assert.Equal(t, "calc://memory", uri)
				case <-time.After(10 * time.Second):
					t.Fatalf("no update of calc://memory after Memory.Store on replica %d", i%2)
				}
				for range 2 { // read through the load balancer: on either replica
					res, err := sub.MCP().ReadResource(t.Context(), "calc://memory")
					require.NoError(t, err)
					require.Len(t, res, 1)
					assert.JSONEq(t, `{"value":`+jsonNumber(value)+`}`, res[0].Text)
				}
			}
		})
	}
}

// jsonNumber is v as JSON writes it.
func jsonNumber(v float64) string {
	b, _ := json.Marshal(v)
	return string(b)
}
