package client_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/otcgo/otc/client"
	"github.com/otcgo/otc/mcp"
)

// TestConnect: a session over each transport value, its handshake done
// by Connect: Streamable HTTP, HTTP+SSE, a command over stdio, and
// Streamable HTTP at a server of HTTP+SSE, found once; a URL that serves
// neither fails at Connect, naming the transport.
func TestConnect(t *testing.T) {
	reg, _ := formatsRegistry(nil)
	srv := httptest.NewServer(mcp.NewHandler(reg, nil))
	t.Cleanup(srv.Close)
	l := newLegacyServer(t, reg)
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), stdioEnv+"=1")
	for name, tr := range map[string]client.Transport{
		"streamable":  client.StreamableHTTP{URL: srv.URL},
		"sse":         client.SSE{URL: l.URL + "/sse"},
		"command":     client.Command{Cmd: cmd},
		"found_sse":   client.StreamableHTTP{URL: l.URL + "/sse"},
		"pinned_2025": client.StreamableHTTP{URL: srv.URL},
	} {
		t.Run(name, func(t *testing.T) {
			var opts *client.Options
			if name == "pinned_2025" {
				opts = &client.Options{MCPVersion: "2025-11-25"}
			}
			s, err := client.Connect(t.Context(), tr, opts)
			require.NoError(t, err)
			t.Cleanup(func() { _ = s.Close() })
			assert.NotEmpty(t, s.ProtocolVersion(), "the handshake is done")
			if name == "pinned_2025" {
				assert.Equal(t, "2025-11-25", s.ProtocolVersion())
			}
			res, err := s.Call(t.Context(), "Echo_Say", map[string]any{"text": name}, nil)
			require.NoError(t, err)
			assert.JSONEq(t, `"`+name+`"`, string(res.Value))
		})
	}
	none := httptest.NewServer(http.NotFoundHandler())
	t.Cleanup(none.Close)
	_, err := client.Connect(t.Context(), client.StreamableHTTP{URL: none.URL + "/mcp"}, nil)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "connecting over Streamable HTTP at "+none.URL+"/mcp")
	_, err = client.Connect(t.Context(), nil, nil)
	assert.ErrorContains(t, err, "Connect needs a transport")
}

// TestWaitsHoldNoLock: while one request of a session waits on the
// network to open its HTTP+SSE stream (a GET whose endpoint comes late),
// another gives up at its own deadline, not when the first is done: no
// lock is held across the network, neither the handshake's nor the
// stream's.
func TestWaitsHoldNoLock(t *testing.T) {
	release := make(chan struct{})
	var gets atomic.Int32
	slow := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		gets.Add(1)
		w.Header().Set("Content-Type", "text/event-stream")
		w.(http.Flusher).Flush()
		select {
		case <-release:
		case <-r.Context().Done():
		}
	}))
	t.Cleanup(slow.Close)
	t.Cleanup(func() { close(release) })
	c, err := client.New(slow.URL+"/sse", &client.Options{Format: client.FormatMCP, MCPTransport: "sse", HandshakeTimeout: time.Minute})
	require.NoError(t, err)
	t.Cleanup(func() { _ = c.Close() })
	first := make(chan error, 1)
	go func() {
		_, err := c.ListTools(context.Background())
		first <- err
	}()
	require.Eventually(t, func() bool { return gets.Load() == 1 }, 10*time.Second, 5*time.Millisecond, "the first request opens the stream")
	ctx, cancel := context.WithTimeout(t.Context(), 200*time.Millisecond)
	defer cancel()
	start := time.Now()
	_, err = c.ListTools(ctx)
	require.Error(t, err)
	assert.ErrorIs(t, err, context.DeadlineExceeded)
	assert.Less(t, time.Since(start), 5*time.Second, "the second request left at its deadline")
	select {
	case err := <-first:
		t.Fatalf("the first request ended early: %v", err)
	default:
	}
	assert.EqualValues(t, 1, gets.Load(), "the second request opened no stream of its own")
}

// TestFormatRules: the formats' one rule (Check), where an otc server
// serves each (Path) and how a sentence names each (Title).
func TestFormatRules(t *testing.T) {
	for f, want := range map[client.Format][2]string{
		client.FormatOTC: {"/otc", "an OTC"}, client.FormatMCP: {"/mcp", "an MCP"},
		client.FormatREST: {"/v1", "a REST"}, client.FormatA2A: {"/a2a", "an A2A"},
	} {
		assert.NoError(t, f.Check())
		assert.Equal(t, want[0], f.Path())
		assert.Equal(t, want[1], f.Title())
	}
	assert.NoError(t, client.Format("").Check(), "empty: New's default, Dial's finding")
	err := client.Format("grpc").Check()
	assert.ErrorContains(t, err, `"grpc" is not one of otc, mcp, rest and a2a`)
	assert.Empty(t, client.Format("grpc").Path())
	_, err = client.New("http://127.0.0.1:1", &client.Options{Format: "grpc"})
	assert.ErrorContains(t, err, `Options.Format "grpc" is not one of`)
}
