package mcp_test

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

	"github.com/otcgo/otc/mcp"
)

// listenStream opens subscriptions/listen over HTTP with the filter
// given, and returns its messages as they come.
func listenStream(t *testing.T, url string, id any, filter obj) <-chan json.RawMessage {
	t.Helper()
	body := request(id, "subscriptions/listen", obj{"_meta": modernMeta(nil), "notifications": filter})
	req := newPost(t, url, body)
	for k, v := range modernHeaders("subscriptions/listen", "") {
		req.Header.Set(k, v)
	}
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	resp, err := http.DefaultClient.Do(req.WithContext(ctx))
	require.NoError(t, err)
	require.Equal(t, http.StatusOK, resp.StatusCode)
	require.Equal(t, "text/event-stream", resp.Header.Get("Content-Type"))
	out := make(chan json.RawMessage, 16)
	go func() {
		defer resp.Body.Close()
		defer close(out)
		sc := bufio.NewScanner(resp.Body)
		for sc.Scan() {
			if data, ok := strings.CutPrefix(sc.Text(), "data: "); ok {
				out <- json.RawMessage(data)
			}
		}
	}()
	return out
}

// TestListen: a subscriptions/listen stream (2026-07-28) acknowledges
// what it will send, sends each change it agreed to with its
// subscription id, and ends with its result when the handler drains.
func TestListen(t *testing.T) {
	t.Parallel()
	reg, text, _ := resourceRegistry(t)
	h := mcp.NewHandler(reg, &mcp.Options{Authenticator: claimsAuth()})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		r.Header.Set("X-Test-Claims", `{}`)
		h.ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)
	msgs := listenStream(t, srv.URL, "L1", obj{"toolsListChanged": true, "resourcesListChanged": true,
		"resourceSubscriptions": []string{"test://text", "test://secret", "test://nothing"}})
	next := func() map[string]any {
		raw := recvWithin(t, msgs, "a message of the listen stream")
		var m map[string]any
		require.NoError(t, json.Unmarshal(raw, &m), "%s", raw)
		return m
	}
	meta := map[string]any{"io.modelcontextprotocol/subscriptionId": "L1"}

	ack := next()
	assert.Equal(t, "notifications/subscriptions/acknowledged", ack["method"])
	assert.Equal(t, map[string]any{"_meta": meta, "notifications": map[string]any{
		"toolsListChanged": true, "resourcesListChanged": true,
		"resourceSubscriptions": []any{"test://text"}, // not what the caller may not read, nor what is not there
	}}, ack["params"])

	addTool(t, reg, "Late.Tool", func(context.Context, struct{}) (string, error) { return "", nil })
	assert.Equal(t, map[string]any{"jsonrpc": "2.0", "method": "notifications/tools/list_changed", "params": map[string]any{"_meta": meta}}, next())
	text.Changed()
	assert.Equal(t, map[string]any{"uri": "test://text", "_meta": meta}, next()["params"])

	h.SetDraining(true)
	end := next()
	assert.Equal(t, "L1", end["id"])
	assert.Equal(t, "complete", end["result"].(map[string]any)["resultType"])
	assert.Equal(t, "L1", end["result"].(map[string]any)["_meta"].(map[string]any)["io.modelcontextprotocol/subscriptionId"])
	_, open := <-msgs
	assert.False(t, open, "the stream ends after its result")
	h.SetDraining(false)
	again := listenStream(t, srv.URL, 2, obj{"toolsListChanged": true})
	assert.Contains(t, string(recvWithin(t, again, "the ack of a stream opened after draining")), "acknowledged")
}

// TestListenRefusals: a listen without a filter, or one that cannot
// stream, is refused.
func TestListenRefusals(t *testing.T) {
	t.Parallel()
	url := serve(t, newRegistry(t), nil)
	params := obj{"_meta": modernMeta(nil)}
	e, _ := post(t, url, request(1, "subscriptions/listen", params), modernHeaders("subscriptions/listen", "")).rpcErr(t, http.StatusBadRequest, -32602)
	assert.Contains(t, e.Message, "params.notifications")
	params["notifications"] = obj{"toolsListChanged": true}
	hdr := modernHeaders("subscriptions/listen", "")
	hdr["Accept"] = "application/json"
	e, _ = post(t, url, request(1, "subscriptions/listen", params), hdr).rpcErr(t, http.StatusBadRequest, -32600)
	assert.Contains(t, e.Message, "Accept: text/event-stream")
}

// TestListenStdio: over stdio a listen stream shares the connection; a
// cancelled one is not answered, and one open when the input ends is
// answered with its result.
func TestListenStdio(t *testing.T) {
	t.Parallel()
	reg := newRegistry(t)
	c := startStdio(t, t.Context(), reg, nil)
	listen := func(id string) {
		c.send(request(id, "subscriptions/listen", obj{"_meta": modernMeta(nil), "notifications": obj{"toolsListChanged": true, "promptsListChanged": true}}))
	}
	listen("a")
	ack := decodeNotification(t, c.recv())
	assert.Equal(t, "notifications/subscriptions/acknowledged", ack.Method)
	assert.Equal(t, map[string]any{"toolsListChanged": true}, ack.Params["notifications"], "no prompts: not agreed")
	c.send(request(nil, "notifications/cancelled", obj{"requestId": "a"}))
	listen("b")
	assert.Contains(t, string(c.recv()), `"io.modelcontextprotocol/subscriptionId":"b"`)
	time.Sleep(50 * time.Millisecond) // the cancel of "a" is in
	addTool(t, reg, "Late.Tool", func(context.Context, struct{}) (string, error) { return "", nil })
	n := decodeNotification(t, c.recv())
	assert.Equal(t, "notifications/tools/list_changed", n.Method)
	assert.Equal(t, map[string]any{"io.modelcontextprotocol/subscriptionId": "b"}, n.Params["_meta"], "only b, a was cancelled")
	require.NoError(t, c.closeAndWait())
	rest := c.rest()
	require.Len(t, rest, 1, "b's result, and nothing for a")
	r := decodeResponse(t, rest[0])
	assert.Equal(t, `"b"`, string(r.ID))
	assert.Contains(t, string(r.Result), `"resultType":"complete"`)
}

// TestListenKeepAlive: an idle listen stream sends SSE comments, as often
// as half the server's WriteTimeout, so that no proxy takes it for dead.
func TestListenKeepAlive(t *testing.T) {
	t.Parallel()
	reg := newRegistry(t)
	srv := httptest.NewUnstartedServer(mcp.NewHandler(reg, nil))
	srv.Config.WriteTimeout = 300 * time.Millisecond
	srv.Start()
	t.Cleanup(srv.Close)
	body := request(1, "subscriptions/listen", obj{"_meta": modernMeta(nil), "notifications": obj{"toolsListChanged": true}})
	req := newPost(t, srv.URL, body)
	for k, v := range modernHeaders("subscriptions/listen", "") {
		req.Header.Set(k, v)
	}
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	resp, err := http.DefaultClient.Do(req.WithContext(ctx))
	require.NoError(t, err)
	defer resp.Body.Close()
	lines := make(chan string, 64)
	go func() {
		sc := bufio.NewScanner(resp.Body)
		for sc.Scan() {
			lines <- sc.Text()
		}
	}()
	comments := 0
	for deadline := time.After(2 * time.Second); comments < 2; {
		select {
		case l := <-lines:
			if l == ": keep-alive" {
				comments++
			}
		case <-deadline:
			t.Fatalf("%d keep-alive comments in 2s of an idle stream; want at least 2", comments)
		}
	}
	addTool(t, reg, "Late.Tool", func(context.Context, struct{}) (string, error) { return "", nil })
	for {
		select {
		case l := <-lines:
			if strings.Contains(l, "notifications/tools/list_changed") {
				return
			}
		case <-time.After(waitTimeout):
			t.Fatal("no change after the keep-alives")
		}
	}
}
