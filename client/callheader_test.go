package client_test

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/otcgo/otc"
	"github.com/otcgo/otc/client"
	"github.com/otcgo/otc/mcp"
)

// TestCallHeader: a call's own headers go with every request the call
// makes, on every format, in place of the client's credentials; the
// requests outside the call carry the client's own.
func TestCallHeader(t *testing.T) {
	urls, _, _ := formatServer(t, nil)
	type format struct {
		name    string
		f       client.Format
		version string
	}
	formats := []format{
		{"otc", client.FormatOTC, ""},
		{"rest", client.FormatREST, ""},
		{"a2a", client.FormatA2A, ""},
		{"mcp-" + mcp.Version20251125, client.FormatMCP, mcp.Version20251125},
		{"mcp-" + mcp.Version20260728, client.FormatMCP, mcp.Version20260728},
	}
	for _, tc := range formats {
		t.Run(tc.name, func(t *testing.T) {
			rec := &recordingDoer{next: http.DefaultClient}
			c, err := client.New(urls[tc.f], &client.Options{Format: tc.f, MCPVersion: tc.version, HTTPClient: rec, APIKey: "gateway-key"})
			require.NoError(t, err)
			t.Cleanup(func() { _ = c.Close() })
			hdr := http.Header{"X-Trace": {"t-1"}, "Authorization": {"Bearer user-token"}}
			// The call is the client's first request: an MCP handshake it
			// begins carries the call's headers too.
			id := "Math.Add@1"
			if tc.f != client.FormatOTC {
				id = "Math_Add"
			}
			sum, err := client.CallAs[float64](t.Context(), c, id, addInput{A: 1, B: 2}, &client.CallOptions{Header: hdr})
			require.NoError(t, err)
			assert.Equal(t, 3.0, sum)
			during := len(rec.requests())
			_, err = c.ListTools(t.Context())
			require.NoError(t, err)
			reqs := rec.requests()
			require.Greater(t, len(reqs), during)
			for i, r := range reqs {
				if i < during {
					assert.Equal(t, "t-1", r.Header.Get("X-Trace"), "request %d of the call (%s %s)", i, r.Method, r.Path)
					assert.Equal(t, "Bearer user-token", r.Header.Get("Authorization"), "request %d of the call", i)
					assert.Empty(t, r.Header.Get(otc.HeaderAPIKey), "the call's token, not the client's key (request %d)", i)
					continue
				}
				assert.Empty(t, r.Header.Get("X-Trace"), "request %d, after the call (%s %s)", i, r.Method, r.Path)
				assert.Empty(t, r.Header.Get("Authorization"), "request %d, after the call", i)
				assert.Equal(t, "gateway-key", r.Header.Get(otc.HeaderAPIKey), "request %d, after the call", i)
			}
		})
	}
}

// TestHandlerFailureInCallError: a handler that fails to answer a
// server's question during a call over MCP's HTTP stream is in the call's
// error, where errors.Is and errors.As find it (how a gateway learns that
// its own caller was asked).
func TestHandlerFailureInCallError(t *testing.T) {
	reg := askRegistry(t, otc.TasksForbidden)
	srv := httptest.NewServer(mcp.NewHandler(reg, nil))
	t.Cleanup(srv.Close)
	errAway := errors.New("the user is away")
	for _, version := range []string{mcp.Version20251125, mcp.Version20260728} {
		t.Run(version, func(t *testing.T) {
			c, err := client.New(srv.URL, &client.Options{Format: client.FormatMCP, MCPVersion: version, Handlers: &client.Handlers{
				Elicit: func(context.Context, *client.ElicitRequest) (*client.ElicitResult, error) { return nil, errAway },
			}})
			require.NoError(t, err)
			t.Cleanup(func() { _ = c.Close() })
			_, err = c.Call(t.Context(), "Greet_Ask", nil, nil)
			require.Error(t, err)
			assert.ErrorIs(t, err, errAway, "the handler's own error, not only its text")
		})
	}
}
