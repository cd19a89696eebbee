package mcp_test

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/otcgo/otc"
	"github.com/otcgo/otc/mcp"
	"github.com/otcgo/otc/resource"
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

// tryListen opens subscriptions/listen with params through client, with
// the headers hdr besides the usual ones. On 200 it returns the stream's
// messages and a function that hangs up; otherwise the error answer.
func tryListen(t *testing.T, client *http.Client, url string, id any, params obj, hdr map[string]string) (<-chan json.RawMessage, func(), *rpcErrorBody) {
	t.Helper()
	if params["_meta"] == nil {
		params["_meta"] = modernMeta(nil)
	}
	req := newPost(t, url, request(id, "subscriptions/listen", params))
	for k, v := range modernHeaders("subscriptions/listen", "") {
		req.Header.Set(k, v)
	}
	for k, v := range hdr {
		req.Header.Set(k, v)
	}
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	resp, err := client.Do(req.WithContext(ctx))
	require.NoError(t, err)
	if resp.StatusCode != http.StatusOK {
		defer resp.Body.Close()
		var env struct {
			Error *rpcErrorBody `json:"error"`
		}
		require.NoError(t, json.NewDecoder(resp.Body).Decode(&env))
		require.NotNil(t, env.Error, "status %d without an error", resp.StatusCode)
		cancel()
		return nil, nil, env.Error
	}
	out := make(chan json.RawMessage, 16)
	go func() {
		defer resp.Body.Close()
		defer close(out)
		sc := bufio.NewScanner(resp.Body)
		sc.Buffer(nil, 1<<20)
		for sc.Scan() {
			if data, ok := strings.CutPrefix(sc.Text(), "data: "); ok {
				out <- json.RawMessage(data)
			}
		}
	}()
	return out, cancel, nil
}

type rpcErrorBody struct {
	Code    int    `json:"code"`
	Message string `json:"message"`
}

// clientFrom is an HTTP client whose connections come from the loopback
// address ip, so that a server without authentication tells it apart.
func clientFrom(ip string) *http.Client {
	d := &net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP(ip)}}
	return &http.Client{Transport: &http.Transport{DialContext: d.DialContext}}
}

// TestListenPerCaller: one caller keeps at most MaxListensPerCaller
// listen streams open, so that it cannot take every stream of the
// server from the others; the server's own bound still holds, and a
// stream that ends is counted no more. Callers are told apart by
// identity, and without one by address.
func TestListenPerCaller(t *testing.T) {
	t.Parallel()
	h := mcp.NewHandler(newRegistry(t), &mcp.Options{MaxListens: 6, MaxListensPerCaller: 2})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if name := r.Header.Get("X-Test-Name"); name != "" { // an authenticated caller
			r = r.WithContext(otc.WithIdentity(r.Context(), &otc.Identity{Method: "api_key", Name: name}))
		}
		h.ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)
	filter := func() obj { return obj{"notifications": obj{"toolsListChanged": true}} }
	as := func(name string) map[string]string { return map[string]string{"X-Test-Name": name} }
	opened := func(c *http.Client, hdr map[string]string) func() {
		t.Helper()
		msgs, hangUp, e := tryListen(t, c, srv.URL, 1, filter(), hdr)
		require.Nil(t, e, "refused: %+v", e)
		assert.Contains(t, string(recvWithin(t, msgs, "the ack")), "acknowledged")
		return hangUp
	}
	refused := func(c *http.Client, hdr map[string]string, why string) {
		t.Helper()
		_, _, e := tryListen(t, c, srv.URL, 1, filter(), hdr)
		require.NotNil(t, e, "a stream past the bound was opened")
		assert.Equal(t, -32000, e.Code)
		assert.Contains(t, e.Message, why)
	}
	alice := clientFrom("127.0.0.1")
	aliceHangUp := opened(alice, as("alice"))
	opened(alice, as("alice"))
	refused(alice, as("alice"), "this caller has 2 streams")
	// Another identity from the same address is another caller; so is
	// an anonymous caller from another address.
	opened(alice, as("bob"))
	opened(clientFrom("127.0.0.2"), nil)
	opened(clientFrom("127.0.0.2"), nil)
	refused(clientFrom("127.0.0.2"), nil, "this caller has 2 streams")
	opened(clientFrom("127.0.0.3"), nil)
	// Six are open: the server's bound.
	refused(clientFrom("127.0.0.4"), nil, "6 streams of subscriptions/listen are open")
	// Once one of alice's ends, she (or anyone) may open one again.
	aliceHangUp()
	require.Eventually(t, func() bool {
		msgs, _, e := tryListen(t, alice, srv.URL, 1, filter(), as("alice"))
		if e != nil {
			return false
		}
		<-msgs
		return true
	}, waitTimeout, 10*time.Millisecond)
}

// TestListenURIBytes: a listen stream may name at most
// MaxListenURIBytes of resource URIs, so that a stream cannot hold
// megabytes of a request; under the bound it is acknowledged.
func TestListenURIBytes(t *testing.T) {
	t.Parallel()
	reg, _, _ := resourceRegistry(t)
	url := serve(t, reg, &mcp.Options{MaxListenURIBytes: 4096})
	uris := func(n, size int) []string {
		out := make([]string, n)
		for i := range out {
			u := fmt.Sprintf("test://text/%d/", i)
			out[i] = u + strings.Repeat("x", size-len(u))
		}
		return out
	}
	_, _, e := tryListen(t, http.DefaultClient, url, 1, obj{"notifications": obj{"resourceSubscriptions": uris(40, 128)}}, nil)
	require.NotNil(t, e, "5,120 bytes of URIs were taken")
	assert.Equal(t, -32602, e.Code)
	assert.Contains(t, e.Message, "5120 bytes of URIs, more than the 4096")
	msgs, _, e := tryListen(t, http.DefaultClient, url, 1, obj{"notifications": obj{"resourceSubscriptions": append(uris(20, 128), "test://text")}}, nil)
	require.Nil(t, e, "%+v", e)
	ack := string(recvWithin(t, msgs, "the ack"))
	assert.Contains(t, ack, `"resourceSubscriptions":["test://text"]`)
}

// TestListenDropsBody: a listen stream does not hold its request for
// its life. Ten streams each sent with 3 MB of params the server does
// not read leave the heap as it was, once their acks are in.
// Not parallel: it reads the process's heap.
func TestListenDropsBody(t *testing.T) {
	url := serve(t, newRegistry(t), &mcp.Options{MaxListensPerCaller: 20})
	heap := func() uint64 {
		runtime.GC()
		var ms runtime.MemStats
		runtime.ReadMemStats(&ms)
		return ms.HeapAlloc
	}
	before := heap()
	for i := range 10 {
		// The body is made as it is sent, so that the client keeps
		// none of it.
		head := request(i, "subscriptions/listen", obj{"_meta": modernMeta(nil), "notifications": obj{"toolsListChanged": true}, "padding": "PAD"})
		pre, post, _ := strings.Cut(head, "PAD")
		body := io.MultiReader(strings.NewReader(pre), io.LimitReader(repeatByte('p'), 3<<20), strings.NewReader(post))
		req, err := http.NewRequest(http.MethodPost, url, body)
		require.NoError(t, err)
		req.Header.Set("Content-Type", "application/json")
		for k, v := range modernHeaders("subscriptions/listen", "") {
			req.Header.Set(k, v)
		}
		req.Header.Set("Accept", "text/event-stream")
		resp, err := http.DefaultClient.Do(req)
		require.NoError(t, err)
		t.Cleanup(func() { resp.Body.Close() })
		require.Equal(t, http.StatusOK, resp.StatusCode)
		line, err := bufio.NewReader(resp.Body).ReadString('\n')
		require.NoError(t, err)
		require.Equal(t, "event: message\n", line)
	}
	grown := int64(heap()) - int64(before)
	assert.Less(t, grown, int64(8<<20), "10 open streams hold %d bytes: their 3 MB bodies are kept", grown)
}

// repeatByte reads as an endless run of one byte.
type repeatByte byte

func (b repeatByte) Read(p []byte) (int, error) {
	for i := range p {
		p[i] = byte(b)
	}
	return len(p), nil
}

// TestListenHiddenUpdate: a change of a resource the subscriber may not
// see is not passed on, though it subscribed to the URI through a
// template it may see; the template's own changes are.
func TestListenHiddenUpdate(t *testing.T) {
	t.Parallel()
	reg := newRegistry(t)
	type nameArgs struct {
		Name string `json:"name" jsonschema:"description=A name."`
	}
	files, err := resource.RegisterTemplate(reg, resource.Template[nameArgs]{URITemplate: "test://files/{name}", Name: "file"},
		func(_ context.Context, in nameArgs) (string, error) { return in.Name, nil })
	require.NoError(t, err)
	secret, err := resource.Register(reg, resource.Resource{URI: "test://files/secret", Name: "secret", Policy: &otc.Policy{RequiredScopes: []string{"secrets:read"}}},
		func(context.Context) (string, error) { return "the secret", nil })
	require.NoError(t, err)
	h := mcp.NewHandler(reg, &mcp.Options{Authenticator: claimsAuth()})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		r.Header.Set("X-Test-Claims", `{"sub":"nobody"}`)
		h.ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)
	msgs := listenStream(t, srv.URL, "L", obj{"toolsListChanged": true, "resourceSubscriptions": []string{"test://files/secret"}})
	assert.Contains(t, string(recvWithin(t, msgs, "the ack")), `"resourceSubscriptions":["test://files/secret"]`, "agreed through the template")

	secret.Changed()
	addTool(t, reg, "Late.Tool", func(context.Context, struct{}) (string, error) { return "", nil })
	next := string(recvWithin(t, msgs, "the next message"))
	assert.Contains(t, next, "notifications/tools/list_changed")
	// What was due went out with the list's change, in one batch.
	select {
	case m := <-msgs:
		t.Fatalf("the hidden resource's update was passed on: %s", m)
	case <-time.After(300 * time.Millisecond):
	}
	files.Changed()
	next = string(recvWithin(t, msgs, "the template's update"))
	assert.Contains(t, next, `"uri":"test://files/secret"`)
	assert.Contains(t, next, "notifications/resources/updated")
}
