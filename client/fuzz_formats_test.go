package client_test

// Fuzzing of every response reader but OTC's (FuzzCall): whatever an MCP
// server (a JSON body or an event stream), an A2A agent or a REST view
// answers, the client must not panic, must read no more than
// MaxResponseBytes, and must end in one of the documented outcomes.

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/otcgo/otc"
	"github.com/otcgo/otc/client"
)

// fuzzLimit is the response limit of the fuzzed clients.
const fuzzLimit = 64 << 10

// hostile answers every request of the client's handshake and discovery
// well, and the requests under test with status, contentType and body.
type hostile struct {
	status      int
	contentType string
	body        []byte
	// read counts the bytes the client read of the hostile bodies.
	read *int64
}

// countingReader counts what is read of it.
type countingReader struct {
	r io.Reader
	n *int64
}

func (c countingReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	*c.n += int64(n)
	return n, err
}

func (h hostile) Do(r *http.Request) (*http.Response, error) {
	answer := func(status int, ct, body string) (*http.Response, error) {
		return &http.Response{StatusCode: status, Header: http.Header{"Content-Type": {ct}}, Body: io.NopCloser(strings.NewReader(body)), Request: r}, nil
	}
	var msg struct {
		ID     json.RawMessage `json:"id"`
		Method string          `json:"method"`
	}
	if r.Body != nil {
		b, _ := io.ReadAll(r.Body)
		_ = json.Unmarshal(b, &msg)
	}
	switch {
	case msg.Method == "server/discover":
		return answer(200, "application/json", `{"jsonrpc":"2.0","id":`+string(msg.ID)+`,"error":{"code":-32601,"message":"no"}}`)
	case msg.Method == "initialize":
		return answer(200, "application/json", `{"jsonrpc":"2.0","id":`+string(msg.ID)+`,"result":{"protocolVersion":"2025-11-25","capabilities":{}}}`)
	case strings.HasPrefix(msg.Method, "notifications/"), r.Method == http.MethodGet && r.Header.Get("Accept") == "text/event-stream":
		return answer(http.StatusMethodNotAllowed, "text/plain", "")
	case strings.HasSuffix(r.URL.Path, "/.well-known/agent-card.json"):
		return answer(200, "application/json", `{"supportedInterfaces":[{"url":"http://fuzz.invalid","protocolBinding":"JSONRPC"}],
			"skills":[{"id":"t","name":"t","description":"typed"},{"id":"x","name":"x","description":"text"}],
			"capabilities":{"extensions":[{"uri":"https://github.com/otcgo/otc/blob/main/docs/a2a.md#skill-schemas-v1","params":{"skills":{"t":{"inputSchema":{"type":"object"}}}}}]}}`)
	case r.Method == http.MethodGet && r.URL.Path == "/tools":
		return answer(200, "application/json", `[{"name":"t","description":"d"}]`)
	}
	return &http.Response{StatusCode: h.status, Header: http.Header{"Content-Type": {h.contentType}, "Retry-After": {"5"}},
		Body: io.NopCloser(countingReader{bytes.NewReader(h.body), h.read}), Request: r}, nil
}

// fuzzFormat calls a tool, and lists the tools, of a server of format f
// that answers with the fuzzer's response, and checks the outcome.
func fuzzFormat(t *testing.T, f client.Format, status int, contentType string, body []byte, tool string, input any) {
	if status < 100 || status > 999 {
		return
	}
	var read int64
	c, err := client.New("http://fuzz.invalid", &client.Options{Format: f, MaxResponseBytes: fuzzLimit,
		HTTPClient: hostile{status: status, contentType: contentType, body: body, read: &read}})
	require.NoError(t, err)
	res, err := c.Call(t.Context(), tool, input, nil)
	checkOutcome(t, res, err)
	_, _ = c.ListTools(t.Context())
	// Each request reads at most the limit and a byte more to know it is
	// over; a task followed to its end reads one answer per poll.
	require.LessOrEqual(t, read, int64(64*(fuzzLimit+1)), "read beyond the limit")
}

// checkOutcome holds a call's outcome to the documented ones.
func checkOutcome(t *testing.T, res *client.Result, err error) {
	if err == nil {
		require.NotNil(t, res)
		if res.Value != nil {
			require.True(t, json.Valid(res.Value), "%q", res.Value)
		}
		return
	}
	if te, ok := errors.AsType[*otc.ToolError](err); ok {
		require.NotNil(t, res, "a tool error comes with its Result")
		require.NotEmpty(t, te.Message)
		require.GreaterOrEqual(t, te.RetryAfter, time.Duration(0))
		require.LessOrEqual(t, te.RetryAfter, 24*time.Hour)
		return
	}
	require.Nil(t, res, "a failure that is not the tool's has no Result: %v", err)
	if e, ok := errors.AsType[*otc.Error](err); ok {
		require.NotEmpty(t, e.Message)
		require.GreaterOrEqual(t, e.RetryAfter, time.Duration(0))
		require.LessOrEqual(t, e.RetryAfter, 24*time.Hour)
	}
	require.NotEmpty(t, err.Error())
}

func FuzzMCPResponse(f *testing.F) {
	for _, s := range []string{
		`{"jsonrpc":"2.0","id":2,"result":{"content":[{"type":"text","text":"hi"}]}}`,
		`{"jsonrpc":"2.0","id":2,"result":{"isError":true,"content":[{"type":"text","text":"m\n\nhint"}],"_meta":{"io.github.otcgo/error":{"code":"rate_limited","retry_after_ms":1e300}}}}`,
		`{"jsonrpc":"2.0","id":2,"result":{"structuredContent":{"result":[1,2]}}}`,
		`{"jsonrpc":"2.0","id":2,"error":{"code":-32602,"message":"Unknown tool"}}`,
		`{"jsonrpc":"2.0","id":2,"result":{"tools":[{"name":"a","inputSchema":{"type":"object"}}],"nextCursor":"x"}}`,
	} {
		f.Add(200, []byte(s))
	}
	f.Add(429, []byte(`{"jsonrpc":"2.0","id":null,"error":{"code":-32000,"message":"slow down"}}`))
	f.Fuzz(func(t *testing.T, status int, body []byte) {
		fuzzFormat(t, client.FormatMCP, status, "application/json", body, "a", nil)
	})
}

func FuzzMCPEvents(f *testing.F) {
	for _, s := range []string{
		"event: message\ndata: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/progress\",\"params\":{\"progressToken\":\"x\",\"progress\":1}}\n\ndata: {\"jsonrpc\":\"2.0\",\"id\":2,\"result\":{\"content\":[]}}\n\n",
		"id: 1\nretry: 1\ndata: \n\n",
		"data: {\"jsonrpc\":\"2.0\",\"id\":9,\"method\":\"elicitation/create\",\"params\":{}}\n\n",
		": comment\ndata: {\"jsonrpc\":\"2.0\",\ndata: \"id\":2,\"result\":{}}\n\n",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		fuzzFormat(t, client.FormatMCP, 200, "text/event-stream", body, "a", nil)
	})
}

func FuzzA2AResponse(f *testing.F) {
	for _, s := range []string{
		`{"jsonrpc":"2.0","id":1,"result":{"message":{"parts":[{"data":3}],"metadata":{"io.github.otcgo/outcome":"succeeded"}}}}`,
		`{"jsonrpc":"2.0","id":1,"result":{"task":{"id":"t","status":{"state":"TASK_STATE_WORKING"}}}}`,
		`{"jsonrpc":"2.0","id":1,"result":{"task":{"id":"t","status":{"state":"TASK_STATE_FAILED","message":{"parts":[{"text":"no"},{"data":{"code":"rate_limited","retry_after_ms":-5}}]}}}}}`,
		`{"jsonrpc":"2.0","id":1,"result":{"task":{"id":"t","status":{"state":"TASK_STATE_INPUT_REQUIRED","message":{"parts":[{"data":{"input_requests":{"k":{"method":"elicitation/create"}}}}]}}}}}`,
		`{"jsonrpc":"2.0","id":1,"error":{"code":-32602,"message":"bad","data":[{"fieldViolations":[{"field":"a","description":"d"}]}]}}`,
	} {
		f.Add(200, []byte(s), true)
	}
	f.Fuzz(func(t *testing.T, status int, body []byte, typed bool) {
		tool, input := "x", any(map[string]any{"text": "hi"})
		if typed {
			tool, input = "t", nil
		}
		fuzzFormat(t, client.FormatA2A, status, "application/json", body, tool, input)
	})
}

func FuzzRESTResponse(f *testing.F) {
	for _, s := range []struct {
		status int
		body   string
	}{
		{200, `{"ok":true,"result":5}`},
		{422, `{"ok":false,"error":{"code":"tool.invalid_args","message":"m","details":{"parameter_errors":{"a":"b"}}}}`},
		{429, `{"ok":false,"error":{"code":"request.rate_limited","message":"m","retryable":true,"details":{"retry_after_ms":1e20}}}`},
		{200, `{"ok":false,"error":{"code":"tool.execution_error","message":"","retryable":true}}`},
		{200, `{"name":"t","parameters":{"type":"object"}}`},
	} {
		f.Add(s.status, []byte(s.body))
	}
	f.Fuzz(func(t *testing.T, status int, body []byte) {
		fuzzFormat(t, client.FormatREST, status, "application/json", body, "t", nil)
	})
}
