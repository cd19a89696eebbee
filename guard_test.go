package otc_test

import (
	"context"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/otcgo/otc"
	"github.com/otcgo/otc/auth"
	"github.com/otcgo/otc/mount"
	"github.com/otcgo/otc/ratelimit"
)

// clientAt returns an HTTP client whose connections come from the
// loopback address ip, so that a server on 127.0.0.1 sees a caller of
// its own at each address.
func clientAt(ip string) *http.Client {
	d := &net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP(ip)}}
	return &http.Client{Transport: &http.Transport{DialContext: d.DialContext}}
}

// guardRequests are one request to each format that authenticates.
var guardRequests = []struct{ format, method, path, body string }{
	{"otc", http.MethodGet, "/otc/tools", ""},
	{"rest", http.MethodGet, "/v1/tools", ""},
	{"registry", http.MethodGet, "/registry/v1/tools", ""},
	{"mcp", http.MethodPost, "/mcp", `{"jsonrpc":"2.0","id":1,"method":"tools/list"}`},
	{"a2a", http.MethodPost, "/a2a", `{"jsonrpc":"2.0","id":1,"method":"SendMessage","params":{"message":{"messageId":"m1","role":"ROLE_USER","parts":[{"text":"hi"}]}}}`},
	{"a2a_rest", http.MethodPost, "/a2a/message:send", `{"message":{"messageId":"m2","role":"ROLE_USER","parts":[{"text":"hi"}]}}`},
}

// TestFailedAuthenticationsBounded: ratelimit.Guard bounds the failed
// authentications of each client address over every format at once: once
// an address has spent its allowance, each format answers it 429 with
// Retry-After, good key or not (a guess cannot be confirmed meanwhile);
// another address, and requests that carry no credentials, are not
// affected.
func TestFailedAuthenticationsBounded(t *testing.T) {
	keys, err := auth.NewAPIKeyAuth(map[string]string{"ci": authKeyCI})
	require.NoError(t, err)
	guarded, err := ratelimit.Guard(keys, &ratelimit.GuardOptions{Failures: ratelimit.Limit{Rate: 0.001, Burst: 3}, Logger: slog.New(slog.DiscardHandler)})
	require.NoError(t, err)
	reg := newAuthRegistry(t)
	mux := http.NewServeMux()
	mount.All(mux, reg, &mount.Options{Authenticator: guarded})
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)

	send := func(c *http.Client, i int, key string) (int, http.Header, string) {
		t.Helper()
		r := guardRequests[i]
		req, err := http.NewRequestWithContext(context.Background(), r.method, srv.URL+r.path, strings.NewReader(r.body))
		require.NoError(t, err)
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		req.Header.Set("MCP-Protocol-Version", "2025-11-25")
		req.Header.Set("A2A-Version", "1.0")
		if key != "" {
			req.Header.Set(otc.HeaderAPIKey, key)
		}
		resp, err := c.Do(req)
		require.NoError(t, err)
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, resp.Header, string(b)
	}
	a, b := clientAt("127.0.0.1"), clientAt("127.0.0.2")

	for i := range guardRequests { // no credentials: not a guess
		status, _, _ := send(a, i, "")
		assert.Equal(t, http.StatusUnauthorized, status, guardRequests[i].format)
	}
	for i := range 3 { // three wrong keys, on three formats
		status, _, _ := send(a, i, "wrong-key-"+guardRequests[i].format)
		assert.Equal(t, http.StatusUnauthorized, status, guardRequests[i].format)
	}
	for i, r := range guardRequests {
		status, hdr, body := send(a, i, "wrong-key")
		assert.Equal(t, http.StatusTooManyRequests, status, "%s: %s", r.format, body)
		assert.NotEmpty(t, hdr.Get("Retry-After"), r.format)
		assert.Contains(t, body, "Too many failed authentications", r.format)
		status, _, body = send(a, i, authKeyCI)
		assert.Equal(t, http.StatusTooManyRequests, status, "%s: the good key is not checked meanwhile: %s", r.format, body)
	}
	for i, r := range guardRequests {
		status, _, body := send(b, i, authKeyCI)
		assert.Equal(t, http.StatusOK, status, "%s: another address is not affected: %s", r.format, body)
	}
	status, _, _ := send(b, 0, "wrong-key")
	assert.Equal(t, http.StatusUnauthorized, status, "another address has its own allowance")
}
