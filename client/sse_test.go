package client_test

// MCP's HTTP+SSE transport of 2024-11-05: a GET event stream that names
// the endpoint to POST messages to, every answer on the stream.

import (
	"cmp"
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/otcgo/otc"
	"github.com/otcgo/otc/client"
	"github.com/otcgo/otc/internal/testkit"
	"github.com/otcgo/otc/mcp"
)

// newLegacyServer serves reg over MCP's HTTP+SSE transport.
func newLegacyServer(t *testing.T, reg *otc.Registry) *testkit.LegacySSE {
	return testkit.NewLegacySSE(t, func(ctx context.Context, in io.Reader, out io.Writer) { _ = mcp.Serve(ctx, reg, in, out, nil) })
}

// TestSSETransport: a client of an HTTP+SSE server (Options.MCPTransport
// "sse") lists and calls its tools, gets progress and answers its
// questions on the stream, at the versions its server speaks; Close
// ends the session's stream.
func TestSSETransport(t *testing.T) {
	reg, _ := formatsRegistry(nil)
	l := newLegacyServer(t, reg)
	for _, version := range []string{"", mcp.Version20250618} {
		t.Run(cmp.Or(version, "negotiated"), func(t *testing.T) {
			c, err := client.New(l.URL+"/sse", &client.Options{Format: client.FormatMCP, MCPTransport: "sse", MCPVersion: version})
			require.NoError(t, err)
			defs, err := c.ListTools(t.Context())
			require.NoError(t, err)
			assert.Len(t, defs, 5)
			res, err := c.Call(t.Context(), "Math_Add", map[string]any{"a": 2, "b": 3}, nil)
			require.NoError(t, err)
			assert.Contains(t, string(res.Value)+string(res.Raw), "5")
			_, err = c.Call(t.Context(), "Flaky_Fail", nil, nil)
			var te *otc.ToolError
			require.ErrorAs(t, err, &te, "a tool's error, read off the stream")
			assert.Contains(t, te.Message, "The backend is down")

			// Progress, on the stream, to the call's callback; then the
			// call cancelled by its context.
			ctx, cancel := context.WithCancel(t.Context())
			got := make(chan client.Progress, 4)
			done := make(chan error, 1)
			go func() {
				_, err := c.Call(ctx, "Slow_Wait", nil, &client.CallOptions{Progress: func(p client.Progress) { got <- p }})
				done <- err
			}()
			select {
			case p := <-got:
				assert.Equal(t, "half way", p.Message)
			case <-time.After(10 * time.Second):
				t.Fatal("no progress came on the stream")
			}
			cancel()
			require.ErrorIs(t, <-done, context.Canceled)

			require.Equal(t, 1, l.Open(), "one session, one stream")
			require.NoError(t, c.Close())
			require.Eventually(t, func() bool { return l.Open() == 0 }, 5*time.Second, 10*time.Millisecond, "Close ends the stream")
		})
	}

	// A question of the server's, on the stream, answered with a POST.
	asks := newLegacyServer(t, askRegistry(t, otc.TasksForbidden))
	c, err := client.New(asks.URL+"/sse", &client.Options{Format: client.FormatMCP, MCPTransport: "sse", Handlers: &client.Handlers{
		Elicit: func(_ context.Context, req *client.ElicitRequest) (*client.ElicitResult, error) {
			return &client.ElicitResult{Action: "accept", Content: map[string]any{"name": "Ada"}}, nil
		},
	}})
	require.NoError(t, err)
	t.Cleanup(func() { _ = c.Close() })
	res, err := c.Call(t.Context(), "Greet_Ask", nil, nil)
	require.NoError(t, err)
	assert.JSONEq(t, `"hello Ada"`, string(res.Value))

	_, err = client.New(l.URL+"/sse", &client.Options{Format: client.FormatMCP, MCPTransport: "websocket"})
	var oe *client.OptionError
	require.ErrorAs(t, err, &oe)
	assert.Equal(t, "MCPTransport", oe.Option)
	assert.Contains(t, oe.Problem, `"websocket" is not a transport`)
	_, err = client.New(l.URL+"/sse", &client.Options{Format: client.FormatMCP, MCPTransport: "sse", MCPVersion: mcp.Version20260728})
	require.ErrorContains(t, err, "not spoken over HTTP+SSE")
}

// TestSSEFound: a client not told the transport falls back to HTTP+SSE
// when the POST of initialize is refused with a 404 and a GET opens an
// event stream, as MCP's backward compatibility asks; its sessions then
// speak HTTP+SSE without POSTing again; Dial finds the stream below a
// server's root; a URL that serves neither transport is refused as
// before.
func TestSSEFound(t *testing.T) {
	reg, _ := formatsRegistry(nil)
	l := newLegacyServer(t, reg)
	c, err := client.New(l.URL+"/sse", &client.Options{Format: client.FormatMCP})
	require.NoError(t, err)
	t.Cleanup(func() { _ = c.Close() })
	res, err := c.Call(t.Context(), "Echo_Say", map[string]any{"text": "hi"}, nil)
	require.NoError(t, err)
	assert.JSONEq(t, `"hi"`, string(res.Value))
	posts := l.Posts.Load()
	assert.Positive(t, posts, "Streamable HTTP was tried first")

	s, err := c.NewSession()
	require.NoError(t, err)
	t.Cleanup(func() { _ = s.Close() })
	_, err = s.Call(t.Context(), "Echo_Say", map[string]any{"text": "again"}, nil)
	require.NoError(t, err)
	assert.Equal(t, posts, l.Posts.Load(), "a session of a client that found HTTP+SSE speaks it at once")
	assert.Equal(t, 2, l.Open(), "the session has a stream of its own")

	d, err := client.Dial(t.Context(), l.URL, nil)
	require.NoError(t, err)
	t.Cleanup(func() { _ = d.Close() })
	assert.Equal(t, client.FormatMCP, d.Format())
	assert.Equal(t, l.URL+"/sse", d.URL())

	// Neither transport: the 404 of the POST is the answer.
	none := httptest.NewServer(http.NotFoundHandler())
	t.Cleanup(none.Close)
	n, err := client.New(none.URL+"/sse", &client.Options{Format: client.FormatMCP})
	require.NoError(t, err)
	_, err = n.ListTools(t.Context())
	var re *client.ResponseError
	require.ErrorAs(t, err, &re)
	assert.Equal(t, http.StatusNotFound, re.StatusCode)
	assert.Equal(t, http.MethodPost, re.Method)
}

// TestSSESessionEnds: a stream the server ended (a restart) is a session
// that expired: the next request begins another, once; a POST the server
// answers 404 (it forgot the session) likewise.
func TestSSESessionEnds(t *testing.T) {
	reg, _ := formatsRegistry(nil)
	l := newLegacyServer(t, reg)
	c, err := client.New(l.URL+"/sse", &client.Options{Format: client.FormatMCP, MCPTransport: "sse"})
	require.NoError(t, err)
	t.Cleanup(func() { _ = c.Close() })
	_, err = c.ListTools(t.Context())
	require.NoError(t, err)
	l.Drop()
	// The stream's end reaches the client asynchronously: until then the
	// POST's 404 says the session is gone. Either way it begins another.
	_, err = c.Call(t.Context(), "Echo_Say", map[string]any{"text": "after"}, nil)
	require.NoError(t, err)
	assert.Equal(t, int32(2), l.Opened.Load(), "one new stream for the new session")
	time.Sleep(50 * time.Millisecond)
	_, err = c.Call(t.Context(), "Echo_Say", map[string]any{"text": "still"}, nil)
	require.NoError(t, err)
	assert.Equal(t, int32(2), l.Opened.Load(), "the new session lasts")
}

// TestSSEHostile: what a server of HTTP+SSE cannot make the client do:
// POST its messages and credentials to another origin, hold the
// handshake open without naming an endpoint, or leave a request
// unanswered past the idle bound.
func TestSSEHostile(t *testing.T) {
	reg, _ := formatsRegistry(nil)

	elsewhere := atomic.Int32{}
	other := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { elsewhere.Add(1) }))
	t.Cleanup(other.Close)
	l := newLegacyServer(t, reg)
	l.Endpoint = other.URL + "/message"
	c, err := client.New(l.URL+"/sse", &client.Options{Format: client.FormatMCP, MCPTransport: "sse", BearerToken: "secret"})
	require.NoError(t, err)
	_, err = c.ListTools(t.Context())
	var oe *client.OriginError
	require.ErrorAs(t, err, &oe)
	assert.Contains(t, err.Error(), "HTTP+SSE")
	assert.Zero(t, elsewhere.Load(), "nothing was sent to the other origin")

	// A stream that never names its endpoint: bounded by the handshake.
	mute := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		w.(http.Flusher).Flush()
		<-r.Context().Done()
	}))
	t.Cleanup(mute.Close)
	c, err = client.New(mute.URL+"/sse", &client.Options{Format: client.FormatMCP, MCPTransport: "sse", HandshakeTimeout: 300 * time.Millisecond})
	require.NoError(t, err)
	start := time.Now()
	_, err = c.ListTools(t.Context())
	require.Error(t, err)
	assert.Contains(t, err.Error(), "HandshakeTimeout")
	assert.Less(t, time.Since(start), 5*time.Second)

	// A server that accepts messages and never answers them.
	silent := newLegacyServer(t, reg)
	silent.Silent.Store(true)
	c, err = client.New(silent.URL+"/sse", &client.Options{Format: client.FormatMCP, MCPTransport: "sse", IdleTimeout: 300 * time.Millisecond, HandshakeTimeout: -1})
	require.NoError(t, err)
	t.Cleanup(func() { _ = c.Close() })
	_, err = c.ListTools(t.Context())
	require.Error(t, err)
	assert.Contains(t, err.Error(), "IdleTimeout")

	// An event over the client's limit ends the stream, saying so.
	big := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodPost {
			w.WriteHeader(http.StatusAccepted)
			return
		}
		w.Header().Set("Content-Type", "text/event-stream")
		fmt.Fprintf(w, "event: endpoint\ndata: /message\n\nevent: message\ndata: %s\n\n", strings.Repeat("x", 4096))
		w.(http.Flusher).Flush()
		<-r.Context().Done()
	}))
	t.Cleanup(big.Close)
	c, err = client.New(big.URL+"/sse", &client.Options{Format: client.FormatMCP, MCPTransport: "sse", MaxResponseBytes: 1024})
	require.NoError(t, err)
	_, err = c.ListTools(t.Context())
	require.Error(t, err)
	assert.Contains(t, err.Error(), "over 1024 bytes")
}
