package mcp

import (
	"bufio"
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/otcgo/otc"
)

// TestAskKeepAlive checks that a stream waiting for the client's answer
// carries comments, which clients ignore, so that idle-closing proxies
// keep it open; and that they stop with the answer.
func TestAskKeepAlive(t *testing.T) {
	t.Parallel()
	reg := otc.NewRegistry(nil)
	require.NoError(t, otc.Register(reg, otc.Tool{ID: "Ask.Roots", Version: "1.0.0", Description: "Asks for the roots."},
		func(ctx context.Context, _ struct{}) (string, error) {
			a, err := otc.Ask(ctx, otc.InputRequest{Method: otc.MethodListRoots})
			if err != nil {
				return "", err
			}
			return string(a[0]), nil
		}))
	h := NewHandler(reg, nil)
	h.s.asks.keepAlive = 10 * time.Millisecond
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)

	post := func(body string) *http.Response {
		req, err := http.NewRequestWithContext(t.Context(), http.MethodPost, srv.URL, strings.NewReader(body))
		require.NoError(t, err)
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		req.Header.Set("MCP-Protocol-Version", Version20251125)
		resp, err := http.DefaultClient.Do(req)
		require.NoError(t, err)
		return resp
	}
	resp := post(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"Ask_Roots"}}`)
	defer resp.Body.Close()
	r := bufio.NewReader(resp.Body)
	line := func() string {
		l, err := r.ReadString('\n')
		require.NoError(t, err)
		return strings.TrimSuffix(l, "\n")
	}
	require.Equal(t, "event: message", line())
	data, ok := strings.CutPrefix(line(), "data: ")
	require.True(t, ok)
	var req struct {
		ID string `json:"id"`
	}
	require.NoError(t, json.Unmarshal([]byte(data), &req))
	require.Equal(t, "", line())
	comments := 0
	for comments < 3 {
		l := line()
		if l == "" {
			continue
		}
		assert.Equal(t, ": waiting for the client's answer", l)
		comments++
	}
	a := post(`{"jsonrpc":"2.0","id":"` + req.ID + `","result":{"roots":[]}}`)
	a.Body.Close()
	require.Equal(t, http.StatusAccepted, a.StatusCode)
	// The answer comes after at most one more comment, and ends the stream.
	var rest []string
	for {
		l, err := r.ReadString('\n')
		if l != "" && l != "\n" {
			rest = append(rest, strings.TrimSuffix(l, "\n"))
		}
		if err != nil {
			break
		}
	}
	require.NotEmpty(t, rest)
	for _, l := range rest[:len(rest)-2] {
		assert.Equal(t, ": waiting for the client's answer", l)
	}
	assert.Equal(t, "event: message", rest[len(rest)-2])
	assert.Contains(t, rest[len(rest)-1], `"result":{"content":[{"type":"text","text":"{\"roots\":[]}"}]`)
}
