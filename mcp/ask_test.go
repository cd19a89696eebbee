package mcp_test

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/otcgo/otc"
	"github.com/otcgo/otc/auth"
	"github.com/otcgo/otc/mcp"
)

// askInput is the input of the asking tool of these tests: the requests
// it puts to its client in one otc.Ask.
type askInput struct {
	Requests []askRequest `json:"requests" jsonschema:"description=The requests to put to the client."`
}

type askRequest struct {
	Method string         `json:"method" jsonschema:"description=The request's method."`
	Params map[string]any `json:"params,omitempty" jsonschema:"description=The request's params."`
}

// askRegistry returns a registry with Ask.Echo, which asks what its input
// says and returns the answers as a JSON array, or fails with a message
// that says whether the error wraps otc.ErrInputUnsupported. Each error of
// Ask is also sent to errs when it is not nil.
func askRegistry(t testing.TB, errs chan<- error) *otc.Registry {
	t.Helper()
	reg := otc.NewRegistry(&otc.RegistryOptions{Logger: slog.New(slog.DiscardHandler)})
	addTool(t, reg, "Ask.Echo", func(ctx context.Context, in askInput) (otc.Content, error) {
		reqs := make([]otc.InputRequest, len(in.Requests))
		for i, r := range in.Requests {
			reqs[i].Method = r.Method
			if r.Params != nil {
				b, err := json.Marshal(r.Params)
				if err != nil {
					return nil, err
				}
				reqs[i].Params = b
			}
		}
		answers, err := otc.Ask(ctx, reqs...)
		if err != nil {
			if errs != nil {
				errs <- err
			}
			return nil, fmt.Errorf("unsupported=%v: %w", errors.Is(err, otc.ErrInputUnsupported), err)
		}
		b, err := json.Marshal(answers)
		if err != nil {
			return nil, err
		}
		return otc.Content{otc.TextContent(string(b))}, nil
	})
	return reg
}

var (
	elicitReq = askRequest{Method: otc.MethodElicit, Params: map[string]any{"message": "Refund 250 €?",
		"requestedSchema": map[string]any{"type": "object", "properties": map[string]any{"ok": map[string]any{"type": "boolean"}}}}}
	sampleReq = askRequest{Method: otc.MethodSample, Params: map[string]any{"maxTokens": 10,
		"messages": []any{map[string]any{"role": "user", "content": map[string]any{"type": "text", "text": "hi"}}}}}
	rootsReq = askRequest{Method: otc.MethodListRoots}
)

// askCall is the tools/call of Ask.Echo asking reqs, with _meta meta.
func askCall(id any, meta obj, reqs ...askRequest) string {
	return request(id, "tools/call", callParams("Ask_Echo", askInput{Requests: reqs}, meta))
}

// stream is a POST whose answer is read event by event as it comes.
type stream struct {
	t      testing.TB
	status int
	header http.Header
	msgs   chan json.RawMessage // closed at the end of the body
	cancel context.CancelFunc
}

// openStream posts body with hdr and reads the answer's SSE events, or
// its JSON body as one message.
func openStream(t testing.TB, url, body string, hdr map[string]string) *stream {
	t.Helper()
	ctx, cancel := context.WithCancel(t.Context())
	t.Cleanup(cancel)
	req := newPost(t, url, body).WithContext(ctx)
	for k, v := range hdr {
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	s := &stream{t: t, status: resp.StatusCode, header: resp.Header, msgs: make(chan json.RawMessage, 16), cancel: cancel}
	go func() {
		defer close(s.msgs)
		defer resp.Body.Close()
		r := bufio.NewReader(resp.Body)
		if resp.Header.Get("Content-Type") != "text/event-stream" {
			var m json.RawMessage
			if json.NewDecoder(r).Decode(&m) == nil {
				s.msgs <- m
			}
			return
		}
		for {
			line, err := r.ReadString('\n')
			if data, ok := strings.CutPrefix(strings.TrimRight(line, "\n"), "data: "); ok {
				s.msgs <- json.RawMessage(data)
			}
			if err != nil {
				return
			}
		}
	}()
	return s
}

// next returns the next message of the stream.
func (s *stream) next() json.RawMessage {
	s.t.Helper()
	m, ok := <-s.msgs
	require.True(s.t, ok, "the stream ended")
	requireWellFormed(s.t, m)
	return m
}

// serverRequest is a request the server sent its client.
type serverRequest struct {
	ID     json.RawMessage `json:"id"`
	Method string          `json:"method"`
	Params json.RawMessage `json:"params"`
}

// nextRequest returns the next message, which must be a request.
func (s *stream) nextRequest() serverRequest {
	s.t.Helper()
	return decodeServerRequest(s.t, s.next())
}

func decodeServerRequest(t testing.TB, b []byte) serverRequest {
	t.Helper()
	var members map[string]json.RawMessage
	require.NoError(t, json.Unmarshal(b, &members), "%s", b)
	assert.Equal(t, `"2.0"`, string(members["jsonrpc"]), "%s", b)
	var r serverRequest
	require.NoError(t, json.Unmarshal(b, &r))
	require.NotEmpty(t, r.Method, "a request: %s", b)
	var id string
	require.NoError(t, json.Unmarshal(r.ID, &id), "the id is a string: %s", b)
	require.True(t, strings.HasPrefix(id, "otc-") && len(id) >= 20, "an id of 128 random bits: %s", id)
	return r
}

// reply is the client's JSON-RPC response to a server request.
func reply(id json.RawMessage, result any) string {
	b, _ := json.Marshal(obj{"jsonrpc": "2.0", "id": id, "result": result})
	return string(b)
}

func replyError(id json.RawMessage, code int, message string) string {
	b, _ := json.Marshal(obj{"jsonrpc": "2.0", "id": id, "error": obj{"code": code, "message": message}})
	return string(b)
}

// toolText returns the text of a call result's single text block, and
// whether the result is an error.
func toolText(t testing.TB, r response) (string, bool) {
	t.Helper()
	require.Nil(t, r.Error, "a result, not an error: %+v", r.Error)
	var res struct {
		Content []struct {
			Text string `json:"text"`
		} `json:"content"`
		IsError bool `json:"isError"`
	}
	require.NoError(t, json.Unmarshal(r.Result, &res))
	require.NotEmpty(t, res.Content, "%s", r.Result)
	return res.Content[0].Text, res.IsError
}

// accepted checks that the server took an answer: 202, no body.
func accepted(t testing.TB, a answer) {
	t.Helper()
	assert.Equal(t, http.StatusAccepted, a.status, "%s", a.body)
	assert.Empty(t, a.body)
}

// notAwaited checks that the server refused an answer no request awaits.
func notAwaited(t testing.TB, a answer) {
	t.Helper()
	e, id := a.rpcErr(t, http.StatusBadRequest, -32600)
	assert.Equal(t, "null", id)
	assert.Contains(t, e.Message, "No request of this server awaits this answer")
	assert.Contains(t, e.Message, "replica")
}

var legacy = map[string]string{"MCP-Protocol-Version": mcp.Version20251125}

func TestAskOverHTTP(t *testing.T) {
	t.Parallel()
	url := serve(t, askRegistry(t, nil), nil)

	t.Run("elicitation", func(t *testing.T) {
		t.Parallel()
		s := openStream(t, url, askCall(1, nil, elicitReq), legacy)
		require.Equal(t, http.StatusOK, s.status)
		require.Equal(t, "text/event-stream", s.header.Get("Content-Type"))
		r := s.nextRequest()
		assert.Equal(t, otc.MethodElicit, r.Method)
		want, _ := json.Marshal(elicitReq.Params)
		assert.JSONEq(t, string(want), string(r.Params))
		accepted(t, post(t, url, reply(r.ID, obj{"action": "accept", "content": obj{"ok": true}}), legacy))
		resp := decodeResponse(t, s.next())
		assert.Equal(t, "1", string(resp.ID))
		text, isErr := toolText(t, resp)
		assert.False(t, isErr)
		assert.JSONEq(t, `[{"action":"accept","content":{"ok":true}}]`, text)
		_, more := <-s.msgs
		assert.False(t, more, "the stream ends with the answer")
		// Answered once: a second answer finds nothing awaiting it.
		notAwaited(t, post(t, url, reply(r.ID, obj{"action": "decline"}), legacy))
	})

	t.Run("several_requests_answered_out_of_order", func(t *testing.T) {
		t.Parallel()
		s := openStream(t, url, askCall("a", nil, sampleReq, rootsReq, elicitReq), legacy)
		r1, r2, r3 := s.nextRequest(), s.nextRequest(), s.nextRequest()
		assert.Equal(t, []string{otc.MethodSample, otc.MethodListRoots, otc.MethodElicit}, []string{r1.Method, r2.Method, r3.Method})
		assert.Empty(t, r2.Params, "roots/list has no params")
		assert.NotEqual(t, string(r1.ID), string(r2.ID))
		accepted(t, post(t, url, reply(r3.ID, obj{"action": "cancel"}), legacy))
		accepted(t, post(t, url, reply(r2.ID, obj{"roots": []any{obj{"uri": "file:///src"}}}), legacy))
		accepted(t, post(t, url, reply(r1.ID, obj{"role": "assistant", "model": "m", "content": obj{"type": "text", "text": "yo"}}), legacy))
		text, _ := toolText(t, decodeResponse(t, s.next()))
		assert.JSONEq(t, `[{"role":"assistant","model":"m","content":{"type":"text","text":"yo"}},{"roots":[{"uri":"file:///src"}]},{"action":"cancel"}]`, text)
	})

	t.Run("client_without_the_method", func(t *testing.T) {
		t.Parallel()
		// A client that declared no elicitation capability answers -32601;
		// the tool fails with Ask's error, and the call is answered with
		// the missing-capability error, 200 as the initialize era answers.
		s := openStream(t, url, askCall(2, nil, elicitReq), legacy)
		r := s.nextRequest()
		accepted(t, post(t, url, replyError(r.ID, -32601, "Method not found"), legacy))
		resp := decodeResponse(t, s.next())
		require.NotNil(t, resp.Error, "%s", resp.Result)
		assert.Equal(t, -32021, resp.Error.Code)
		assert.Equal(t, "Missing required client capability: elicitation", resp.Error.Message)
		assert.JSONEq(t, `{"requiredCapabilities":{"elicitation":{}}}`, string(resp.Error.Data))
	})

	t.Run("client_error", func(t *testing.T) {
		t.Parallel()
		s := openStream(t, url, askCall(3, nil, sampleReq), legacy)
		r := s.nextRequest()
		accepted(t, post(t, url, replyError(r.ID, -32603, "the model is down"), legacy))
		text, isErr := toolText(t, decodeResponse(t, s.next()))
		assert.True(t, isErr)
		assert.Contains(t, text, "unsupported=false")
		assert.Contains(t, text, `the client answered sampling/createMessage with an error: "the model is down" (JSON-RPC error -32603)`)
	})

	t.Run("client_error_cancels_the_others", func(t *testing.T) {
		t.Parallel()
		s := openStream(t, url, askCall(31, nil, sampleReq, rootsReq, elicitReq), legacy)
		r1, r2, r3 := s.nextRequest(), s.nextRequest(), s.nextRequest()
		accepted(t, post(t, url, reply(r3.ID, obj{"action": "cancel"}), legacy))
		accepted(t, post(t, url, replyError(r1.ID, -32603, "the model is down"), legacy))
		// The third is answered already; the second is given up on.
		n := decodeNotification(t, s.next())
		assert.Equal(t, "notifications/cancelled", n.Method)
		id, _ := json.Marshal(n.Params["requestId"])
		assert.Equal(t, string(r2.ID), string(id))
		assert.Equal(t, "another request of the call failed", n.Params["reason"])
		text, isErr := toolText(t, decodeResponse(t, s.next()))
		assert.True(t, isErr)
		assert.Contains(t, text, "the model is down")
		notAwaited(t, post(t, url, reply(r2.ID, obj{"roots": []any{}}), legacy))
	})

	t.Run("result_not_an_object", func(t *testing.T) {
		t.Parallel()
		s := openStream(t, url, askCall(4, nil, rootsReq), legacy)
		r := s.nextRequest()
		accepted(t, post(t, url, reply(r.ID, []int{1}), legacy))
		text, isErr := toolText(t, decodeResponse(t, s.next()))
		assert.True(t, isErr)
		assert.Contains(t, text, "the answer's result is not a JSON object")
	})

	t.Run("capabilities_in_meta", func(t *testing.T) {
		t.Parallel()
		// A request that carries its client's capabilities, as 2026-07-28
		// does, is held to them: nothing is sent to the client.
		meta := obj{"io.modelcontextprotocol/clientCapabilities": obj{"sampling": obj{}}}
		a := post(t, url, askCall(5, meta, elicitReq), legacy)
		e, id := a.rpcErr(t, http.StatusOK, -32021)
		assert.Equal(t, "5", id)
		assert.Equal(t, "Missing required client capability: elicitation", e.Message)
		// URL mode needs its own declaration.
		meta = obj{"io.modelcontextprotocol/clientCapabilities": obj{"elicitation": obj{}}}
		urlReq := askRequest{Method: otc.MethodElicit, Params: map[string]any{"mode": "url", "message": "Sign in", "url": "https://example.com", "elicitationId": "e1"}}
		a = post(t, url, askCall(6, meta, urlReq), legacy)
		a.rpcErr(t, http.StatusOK, -32021)
		// Declared: asked.
		meta = obj{"io.modelcontextprotocol/clientCapabilities": obj{"sampling": obj{}}}
		s := openStream(t, url, askCall(7, meta, sampleReq), legacy)
		assert.Equal(t, otc.MethodSample, s.nextRequest().Method)
	})

	t.Run("no_event_stream", func(t *testing.T) {
		t.Parallel()
		a := post(t, url, askCall(8, nil, elicitReq), map[string]string{"MCP-Protocol-Version": mcp.Version20251125, "Accept": "application/json"})
		text, isErr := toolText(t, a.rpc(t))
		assert.True(t, isErr)
		assert.Contains(t, text, "unsupported=true")
		assert.Contains(t, text, "Accept header does not allow text/event-stream")
	})

	t.Run("not_a_request_to_a_client", func(t *testing.T) {
		t.Parallel()
		a := post(t, url, askCall(9, nil, askRequest{Method: "tools/list"}), legacy)
		text, isErr := toolText(t, a.rpc(t))
		assert.True(t, isErr)
		assert.Contains(t, text, `"tools/list" is not a request a server sends its client`)
	})

	t.Run("answers_to_nothing", func(t *testing.T) {
		t.Parallel()
		for _, body := range []string{
			`{"jsonrpc":"2.0","id":"otc-AAAAAAAAAAAAAAAAAAAAAAAAAA","result":{}}`,
			`{"jsonrpc":"2.0","id":9,"result":{}}`,
			`{"jsonrpc":"2.0","id":9,"error":{"code":-1,"message":"no"}}`,
		} {
			notAwaited(t, post(t, url, body, legacy))
		}
	})
}

func TestAskAnswerBoundToCaller(t *testing.T) {
	t.Parallel()
	auth, err := auth.NewAPIKeyAuth(map[string]string{"alice": "key-a", "bob": "key-b"})
	require.NoError(t, err)
	url := serve(t, askRegistry(t, nil), &mcp.Options{Authenticator: auth})
	as := func(key string) map[string]string {
		return map[string]string{"MCP-Protocol-Version": mcp.Version20251125, otc.HeaderAPIKey: key}
	}
	s := openStream(t, url, askCall(1, nil, elicitReq), as("key-a"))
	r := s.nextRequest()
	// Bob has the id (it leaked), but the question was Alice's.
	notAwaited(t, post(t, url, reply(r.ID, obj{"action": "accept", "content": obj{"ok": true}}), as("key-b")))
	a := post(t, url, reply(r.ID, obj{"action": "decline"}), nil)
	assert.Equal(t, http.StatusUnauthorized, a.status, "an answer is authenticated like any message")
	accepted(t, post(t, url, reply(r.ID, obj{"action": "decline"}), as("key-a")))
	text, _ := toolText(t, decodeResponse(t, s.next()))
	assert.JSONEq(t, `[{"action":"decline"}]`, text)
}

func TestAskTimeout(t *testing.T) {
	t.Parallel()
	errs := make(chan error, 1)
	url := serve(t, askRegistry(t, errs), &mcp.Options{AskTimeout: 50 * time.Millisecond})
	s := openStream(t, url, askCall(1, nil, elicitReq), legacy)
	r := s.nextRequest()
	cancelled := decodeNotification(t, s.next())
	assert.Equal(t, "notifications/cancelled", cancelled.Method)
	id, _ := json.Marshal(cancelled.Params["requestId"])
	assert.Equal(t, string(r.ID), string(id))
	assert.Equal(t, "no answer in time", cancelled.Params["reason"])
	text, isErr := toolText(t, decodeResponse(t, s.next()))
	assert.True(t, isErr)
	assert.Contains(t, text, "the client did not answer elicitation/create within 50ms (Options.AskTimeout)")
	assert.NotErrorIs(t, <-errs, otc.ErrInputUnsupported)
	notAwaited(t, post(t, url, reply(r.ID, obj{"action": "accept"}), legacy))
}

func TestAskLimits(t *testing.T) {
	t.Parallel()
	t.Run("per_caller", func(t *testing.T) {
		t.Parallel()
		url := serve(t, askRegistry(t, nil), &mcp.Options{MaxPendingAsksPerCaller: 2})
		s := openStream(t, url, askCall(1, nil, elicitReq, elicitReq), legacy)
		r := s.nextRequest()
		s.nextRequest()
		// The caller's two places are taken: a third question is refused
		// at once, without reaching the client.
		a := post(t, url, askCall(2, nil, sampleReq), legacy)
		text, isErr := toolText(t, a.rpc(t))
		assert.True(t, isErr)
		assert.Contains(t, text, "too many questions await answers: the questions awaiting this caller's answers would pass its limit of 2 (Options.MaxPendingAsksPerCaller)")
		// Once the first call has ended, its places are free again.
		s.cancel()
		require.Eventually(t, func() bool {
			b := post(t, url, reply(r.ID, obj{"action": "accept"}), legacy)
			return b.status == http.StatusBadRequest
		}, waitTimeout, 10*time.Millisecond, "the ended call's questions are dropped")
		s2 := openStream(t, url, askCall(3, nil, sampleReq), legacy)
		assert.Equal(t, otc.MethodSample, s2.nextRequest().Method)
	})
	t.Run("per_server", func(t *testing.T) {
		t.Parallel()
		auth, err := auth.NewAPIKeyAuth(map[string]string{"alice": "key-a", "bob": "key-b"})
		require.NoError(t, err)
		url := serve(t, askRegistry(t, nil), &mcp.Options{Authenticator: auth, MaxPendingAsks: 1})
		s := openStream(t, url, askCall(1, nil, elicitReq), map[string]string{"MCP-Protocol-Version": mcp.Version20251125, otc.HeaderAPIKey: "key-a"})
		s.nextRequest()
		a := post(t, url, askCall(2, nil, elicitReq), map[string]string{"MCP-Protocol-Version": mcp.Version20251125, otc.HeaderAPIKey: "key-b"})
		text, isErr := toolText(t, a.rpc(t))
		assert.True(t, isErr)
		assert.Contains(t, text, "the questions awaiting answers on this server would pass its limit of 1 (Options.MaxPendingAsks)")
	})
}

func TestAskClientGone(t *testing.T) {
	t.Parallel()
	errs := make(chan error, 1)
	url := serve(t, askRegistry(t, errs), nil)
	s := openStream(t, url, askCall(1, nil, elicitReq), legacy)
	r := s.nextRequest()
	s.cancel()
	err := recvWithin(t, errs, "Ask to return")
	assert.ErrorIs(t, err, context.Canceled)
	assert.Contains(t, err.Error(), "the call ended before the client answered elicitation/create")
	notAwaited(t, post(t, url, reply(r.ID, obj{"action": "accept"}), legacy))
}

func TestAskModernNotServedHere(t *testing.T) {
	t.Parallel()
	// 2026-07-28 asks through input_required results, not on the stream:
	// this transport does not send it server requests.
	url := serve(t, askRegistry(t, nil), nil)
	meta := modernMeta(obj{"io.modelcontextprotocol/clientCapabilities": obj{"elicitation": obj{}}})
	a := post(t, url, askCall(1, meta, elicitReq), modernHeaders("tools/call", "Ask_Echo"))
	msgs := splitMessages(t, a)
	require.Len(t, msgs, 1, "one answer, no server request before it")
	var m struct {
		Method string `json:"method"`
		Result struct {
			ResultType    string                     `json:"resultType"`
			InputRequests map[string]json.RawMessage `json:"inputRequests"`
		} `json:"result"`
	}
	require.NoError(t, json.Unmarshal(msgs[0], &m))
	assert.Empty(t, m.Method, "not a server request: %s", msgs[0])
	assert.Equal(t, "input_required", m.Result.ResultType, "%s", msgs[0])
	assert.NotEmpty(t, m.Result.InputRequests)
}

// splitMessages returns the messages of an answer, SSE or JSON.
func splitMessages(t testing.TB, a answer) []json.RawMessage {
	t.Helper()
	if a.header.Get("Content-Type") == "text/event-stream" {
		return a.events(t)
	}
	return []json.RawMessage{a.body}
}

// initialize is the initialize request of a stdio client declaring caps.
func initialize(caps obj) string {
	return request(0, "initialize", obj{"protocolVersion": mcp.Version20251125, "capabilities": caps,
		"clientInfo": obj{"name": "test", "version": "1"}})
}

func TestAskOverStdio(t *testing.T) {
	t.Parallel()
	t.Run("answered", func(t *testing.T) {
		t.Parallel()
		c := startStdio(t, t.Context(), askRegistry(t, nil), nil)
		c.send(initialize(obj{"elicitation": obj{}, "sampling": obj{}}))
		c.recvResponse()
		c.send(askCall(1, nil, elicitReq, sampleReq))
		r1, r2 := decodeServerRequest(t, c.recv()), decodeServerRequest(t, c.recv())
		assert.Equal(t, otc.MethodElicit, r1.Method)
		assert.Equal(t, otc.MethodSample, r2.Method)
		// An answer to nothing is dropped; the call goes on waiting.
		c.send(`{"jsonrpc":"2.0","id":"otc-nothing","result":{}}`)
		c.send(reply(r2.ID, obj{"role": "assistant", "model": "m", "content": obj{"type": "text", "text": "yo"}}))
		c.send(reply(r1.ID, obj{"action": "accept", "content": obj{"ok": false}}))
		resp := c.recvResponse()
		assert.Equal(t, "1", string(resp.ID))
		text, isErr := toolText(t, resp)
		assert.False(t, isErr)
		assert.JSONEq(t, `[{"action":"accept","content":{"ok":false}},{"role":"assistant","model":"m","content":{"type":"text","text":"yo"}}]`, text)
	})
	t.Run("capability_not_declared", func(t *testing.T) {
		t.Parallel()
		errs := make(chan error, 1)
		c := startStdio(t, t.Context(), askRegistry(t, errs), nil)
		c.send(initialize(obj{"sampling": obj{}}))
		c.recvResponse()
		c.send(askCall(1, nil, rootsReq))
		resp := c.recvResponse() // no request reaches the client
		require.NotNil(t, resp.Error)
		assert.Equal(t, -32021, resp.Error.Code)
		assert.Equal(t, "Missing required client capability: roots", resp.Error.Message)
		err := recvWithin(t, errs, "Ask's error")
		assert.ErrorIs(t, err, otc.ErrInputUnsupported)
		var mc *mcp.MissingCapabilityError
		require.ErrorAs(t, err, &mc)
		assert.Equal(t, "roots", mc.Capability)
	})
	t.Run("cancelled_while_waiting", func(t *testing.T) {
		t.Parallel()
		errs := make(chan error, 1)
		c := startStdio(t, t.Context(), askRegistry(t, errs), &mcp.Options{MaxPendingAsksPerCaller: 1})
		c.send(initialize(obj{"elicitation": obj{}}))
		c.recvResponse()
		c.send(askCall(1, nil, elicitReq))
		r := decodeServerRequest(t, c.recv())
		// The connection's one place is taken.
		c.send(askCall(5, nil, elicitReq))
		text, isErr := toolText(t, c.recvResponse())
		assert.True(t, isErr)
		assert.Contains(t, text, "would pass its limit of 1 (Options.MaxPendingAsksPerCaller)")
		assert.NotErrorIs(t, recvWithin(t, errs, "Ask's error"), otc.ErrInputUnsupported, "the client could answer, later")
		c.send(request(nil, "notifications/cancelled", obj{"requestId": 1}))
		assert.ErrorIs(t, recvWithin(t, errs, "Ask to return"), context.Canceled)
		n := decodeNotification(t, c.recv())
		assert.Equal(t, "notifications/cancelled", n.Method, "the client may take its prompt down")
		// The place is free again: the next call asks.
		c.send(askCall(2, nil, elicitReq))
		r2 := decodeServerRequest(t, c.recv())
		assert.NotEqual(t, string(r.ID), string(r2.ID))
		c.send(reply(r.ID, obj{"action": "accept"})) // late: dropped
		c.send(reply(r2.ID, obj{"action": "decline"}))
		resp := c.recvResponse()
		assert.Equal(t, "2", string(resp.ID))
		text, _ = toolText(t, resp)
		assert.JSONEq(t, `[{"action":"decline"}]`, text)
	})
}

func TestAskAfterWriteTimeout(t *testing.T) {
	t.Parallel()
	// The server's WriteTimeout starts when the request comes in; a tool
	// that asks later than that still reaches its client, and answers.
	reg := askRegistry(t, nil)
	addTool(t, reg, "Ask.Later", func(ctx context.Context, _ struct{}) (string, error) {
		time.Sleep(300 * time.Millisecond)
		answers, err := otc.Ask(ctx, otc.InputRequest{Method: otc.MethodListRoots})
		if err != nil {
			return "", err
		}
		return string(answers[0]), nil
	})
	srv := httptest.NewUnstartedServer(mcp.NewHandler(reg, nil))
	srv.Config.WriteTimeout = 100 * time.Millisecond
	srv.Start()
	t.Cleanup(srv.Close)
	s := openStream(t, srv.URL, request(1, "tools/call", callParams("Ask_Later", nil, nil)), legacy)
	r := s.nextRequest()
	time.Sleep(200 * time.Millisecond) // the user takes longer than WriteTimeout
	accepted(t, post(t, srv.URL, reply(r.ID, obj{"roots": []any{}}), legacy))
	text, isErr := toolText(t, decodeResponse(t, s.next()))
	assert.False(t, isErr)
	assert.Equal(t, `{"roots":[]}`, text)
}

func TestAskAfterAnswer(t *testing.T) {
	t.Parallel()
	// A goroutine the tool leaves behind asks once the call is answered:
	// nothing reaches the client, and Ask says it cannot be asked.
	errs := make(chan error, 1)
	reg := otc.NewRegistry(&otc.RegistryOptions{Logger: slog.New(slog.DiscardHandler)})
	addTool(t, reg, "Ask.Later", func(ctx context.Context, _ struct{}) (string, error) {
		go func() {
			time.Sleep(50 * time.Millisecond)
			_, err := otc.Ask(context.WithoutCancel(ctx), otc.InputRequest{Method: otc.MethodListRoots})
			errs <- err
		}()
		return "done", nil
	})
	c := startStdio(t, t.Context(), reg, nil)
	c.send(initialize(obj{"roots": obj{}}))
	c.recvResponse()
	c.send(request(1, "tools/call", callParams("Ask_Later", nil, nil)))
	text, _ := toolText(t, c.recvResponse())
	assert.Equal(t, `done`, text)
	err := recvWithin(t, errs, "the late Ask")
	assert.ErrorIs(t, err, otc.ErrInputUnsupported)
	assert.Contains(t, err.Error(), "the call has already been answered")
	c.send(request(2, "ping", nil))
	assert.Equal(t, "2", string(c.recvResponse().ID), "the next line is the ping's answer, not a request")
}

func TestClientCapabilitiesLegacy(t *testing.T) {
	t.Parallel()
	// In the initialize era the capabilities are known over stdio (from
	// initialize) and over HTTP when the request carries them in _meta.
	reg := otc.NewRegistry(&otc.RegistryOptions{Logger: slog.New(slog.DiscardHandler)})
	addTool(t, reg, "Caps.Sampling", func(ctx context.Context, _ struct{}) (string, error) {
		if err := mcp.RequireClientCapability(ctx, "sampling"); err != nil {
			return "", err
		}
		caps, known := mcp.ClientCapabilities(ctx)
		return fmt.Sprintf("known=%v %s", known, caps), nil
	})
	call := func(id int, meta obj) string {
		return request(id, "tools/call", callParams("Caps_Sampling", nil, meta))
	}

	t.Run("stdio", func(t *testing.T) {
		t.Parallel()
		c := startStdio(t, t.Context(), reg, nil)
		c.send(initialize(obj{"elicitation": obj{}}))
		c.recvResponse()
		c.send(call(1, nil))
		r := c.recvResponse()
		require.NotNil(t, r.Error)
		assert.Equal(t, -32021, r.Error.Code)
		assert.JSONEq(t, `{"requiredCapabilities":{"sampling":{}}}`, string(r.Error.Data))

		c2 := startStdio(t, t.Context(), reg, nil)
		c2.send(initialize(obj{"sampling": obj{}}))
		c2.recvResponse()
		c2.send(call(1, nil))
		text, _ := toolText(t, c2.recvResponse())
		assert.Equal(t, `known=true {"sampling":{}}`, text)
	})
	t.Run("http", func(t *testing.T) {
		t.Parallel()
		url := serve(t, reg, nil)
		text, _ := toolText(t, post(t, url, call(1, nil), legacy).rpc(t))
		assert.Equal(t, `known=false `, text, "unknown: the server keeps no sessions")
		e, _ := post(t, url, call(2, obj{"io.modelcontextprotocol/clientCapabilities": obj{}}), legacy).rpcErr(t, http.StatusOK, -32021)
		assert.Equal(t, "Missing required client capability: sampling", e.Message)
	})
}
