package client_test

import (
	"context"
	"crypto/rand"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/otcgo/otc/client"
	"github.com/otcgo/otc/mcp"
	"github.com/otcgo/otc/resource"
	"github.com/otcgo/otc/sessions"
)

// TestSubscribeSessionStream: over HTTP before 2026-07-28, Subscribe is
// resources/subscribe in the session, whose stream brings the updates to
// Options.OnNotification. When the server forgets the session (a replica
// that restarted with its sessions in memory), the client begins another
// and subscribes again, and the updates come on.
func TestSubscribeSessionStream(t *testing.T) {
	reg := newRegistry(t)
	notes, err := resource.Register(reg, resource.Resource{URI: "notes://today", Name: "today"},
		func(context.Context) (string, error) { return "tea", nil })
	require.NoError(t, err)
	key := make([]byte, mcp.RequestStateKeySize)
	_, _ = rand.Read(key)
	handler := func() http.Handler {
		return mcp.NewHandler(reg, &mcp.Options{RequestStateKeys: [][]byte{key}, Sessions: sessions.NewMemoryStore(nil)})
	}
	var current atomic.Value
	current.Store(handler())
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		current.Load().(http.Handler).ServeHTTP(w, r)
	}))
	t.Cleanup(func() { srv.CloseClientConnections(); srv.Close() })

	updates := make(chan string, 16)
	c, err := client.New(srv.URL, &client.Options{Format: client.FormatMCP, MCPVersion: mcp.Version20251125,
		OnNotification: func(method string, params json.RawMessage) {
			if method == "notifications/resources/updated" {
				var p struct{ URI string }
				_ = json.Unmarshal(params, &p)
				updates <- p.URI
			}
		}})
	require.NoError(t, err)
	t.Cleanup(func() { _ = c.Close() })
	require.NoError(t, c.MCP().Subscribe(t.Context(), "notes://today"))
	told := func(what string) {
		t.Helper()
		deadline := time.After(10 * time.Second)
		for {
			notes.Changed()
			select {
			case uri := <-updates:
				require.Equal(t, "notes://today", uri)
				return
			case <-time.After(100 * time.Millisecond):
			case <-deadline:
				t.Fatal("no notifications/resources/updated " + what)
			}
		}
	}
	told("in the first session")

	// The server restarts, forgetting every session: the stream, opened
	// again, is refused 404; the client begins a new session and
	// subscribes again.
	current.Store(handler())
	srv.CloseClientConnections()
	for len(updates) > 0 {
		<-updates
	}
	told("in the new session")
}
