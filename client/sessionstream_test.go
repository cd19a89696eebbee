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

// TestSessionStreamOutlivesDrains: a session's stream that the server
// ends again and again with nothing to tell (replicas draining in turn)
// is opened again each time, and the next update comes.
func TestSessionStreamOutlivesDrains(t *testing.T) {
	reg := newRegistry(t)
	notes, err := resource.Register(reg, resource.Resource{URI: "notes://today", Name: "today"},
		func(context.Context) (string, error) { return "tea", nil })
	require.NoError(t, err)
	h := mcp.NewHandler(reg, nil)
	var streams atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodGet {
			streams.Add(1)
		}
		h.ServeHTTP(w, r)
	}))
	t.Cleanup(func() { srv.CloseClientConnections(); srv.Close() })
	updates := make(chan string, 64)
	c, err := client.New(srv.URL, &client.Options{Format: client.FormatMCP, MCPVersion: mcp.Version20250618,
		OnNotification: func(method string, _ json.RawMessage) {
			if method == "notifications/resources/updated" {
				updates <- method
			}
		}})
	require.NoError(t, err)
	t.Cleanup(func() { _ = c.Close() })
	require.NoError(t, c.MCP().Subscribe(t.Context(), "notes://today"))
	for i := range 7 {
		require.Eventually(t, func() bool { return streams.Load() == int64(i+1) }, 10*time.Second, 10*time.Millisecond, "stream %d opened", i+1)
		time.Sleep(20 * time.Millisecond) // the stream is attached
		h.SetDraining(true)               // it ends, with nothing told
		time.Sleep(20 * time.Millisecond)
		h.SetDraining(false)
	}
	require.Eventually(t, func() bool { return streams.Load() == 8 }, 10*time.Second, 10*time.Millisecond, "the stream is opened again after the seventh drain")
	deadline := time.After(10 * time.Second)
	for {
		notes.Changed()
		select {
		case <-updates:
			return
		case <-time.After(100 * time.Millisecond):
		case <-deadline:
			t.Fatal("no update after the drains")
		}
	}
}
