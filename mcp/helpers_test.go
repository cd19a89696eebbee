package mcp_test

// Shared fixtures of the black-box tests: a registry of small tools, each
// built to exercise one path of the server, served over httptest or over
// pipes, and helpers that send raw messages and check the parts of every
// answer the transport fixes (status, Content-Type, one JSON-RPC message).

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/otcgo/otc"
	"github.com/otcgo/otc/internal/testkit"
	"github.com/otcgo/otc/mcp"
)

// waitTimeout bounds every wait on a channel, so that a broken test fails
// rather than hangs. It is a failure deadline, never a pause a test relies
// on.
const waitTimeout = 20 * time.Second

// obj is a JSON object under construction.
type obj = map[string]any

type pointInput struct {
	X float64 `json:"x" jsonschema:"description=The x coordinate."`
	Y float64 `json:"y" jsonschema:"description=The y coordinate."`
}

type pointOutput struct {
	X     float64 `json:"x"`
	Y     float64 `json:"y"`
	Label string  `json:"label"`
}

type orderInput struct {
	Zip   string `json:"zip" jsonschema:"description=Five-digit postal code.,pattern=^[0-9]{5}$"`
	Count int    `json:"count" jsonschema:"description=How many parcels.,minimum=1"`
}

type inspectOutput struct {
	CallID string `json:"call_id"`
	UserID string `json:"user_id"`
	HTTP   bool   `json:"http"`
	Caller string `json:"caller,omitempty"`
}

type vaultOutput struct {
	HasKey bool   `json:"has_key"`
	UserID string `json:"user_id"`
}

// secretValue is the API_KEY that Vault.Read expects.
const secretValue = "k-123-secret"

// geoSchema is a hand-written input schema whose parameters a 2026-07-28
// client mirrors into Mcp-Param-* headers.
const geoSchema = `{"type":"object","properties":{` +
	`"region":{"type":"string","description":"The region to look in.","x-mcp-header":"Region"},` +
	`"limit":{"type":"integer","description":"How many results.","x-mcp-header":"Limit"},` +
	`"query":{"type":"string","description":"What to look for."}},"required":["query"]}`

// The tools of newRegistry, by the names MCP lists them under, sorted.
var fixtureNames = []string{
	"Agent_Sample", "Calculator_Add", "Geo_Lookup", "Geometry_Point", "Log_Emit", "Media_Chart",
	"Meta_Inspect", "Order_Place", "Progress_Count", "Util_Fail", "Util_Noop", "Vault_Read",
}

// addTool registers fn as version 1.0.0 of id, failing the test if it
// cannot.
func addTool[In, Out any](t testing.TB, reg *otc.Registry, id string, fn func(context.Context, In) (Out, error)) {
	t.Helper()
	require.NoError(t, otc.Register(reg, otc.Tool{ID: id, Version: "1.0.0", Description: "A tool of the tests: " + id + "."}, fn))
}

// newRegistry returns a registry of the fixture tools, with mw as its
// middleware.
func newRegistry(t testing.TB, mw ...otc.Middleware) *otc.Registry {
	t.Helper()
	reg := otc.NewRegistry(&otc.RegistryOptions{Logger: slog.New(slog.DiscardHandler), Middleware: mw})
	// Two versions of one tool: only the higher is listed.
	require.NoError(t, otc.Register(reg, otc.Tool{ID: "Calculator.Add", Version: "1.0.0", Description: "Adds two numbers (old)."},
		func(_ context.Context, in testkit.AddInput) (float64, error) { return -(in.A + in.B), nil }))
	require.NoError(t, otc.Register(reg, otc.Tool{ID: "Calculator.Add", Version: "2.0.0", Description: "Adds two numbers together.", OutputDescription: "The sum."},
		testkit.Add))
	addTool(t, reg, "Geometry.Point", func(_ context.Context, in pointInput) (pointOutput, error) {
		return pointOutput{X: in.X, Y: in.Y, Label: fmt.Sprintf("(%g, %g)", in.X, in.Y)}, nil
	})
	addTool(t, reg, "Media.Chart", func(context.Context, struct{}) (otc.Content, error) {
		return otc.Content{otc.TextContent("The chart:"), otc.ImageContent([]byte{1, 2, 3}, "image/png")}, nil
	})
	addTool(t, reg, "Util.Noop", testkit.Noop)
	addTool(t, reg, "Util.Fail", func(context.Context, struct{}) (string, error) {
		return "", &otc.ToolError{
			Message:                 "The weather service is down",
			DeveloperMessage:        "upstream 503 from weather.internal",
			CanRetry:                true,
			RetryAfter:              1500 * time.Millisecond,
			AdditionalPromptContent: "Ask for a smaller region.",
		}
	})
	addTool(t, reg, "Order.Place", func(_ context.Context, in orderInput) (int, error) { return in.Count, nil })
	addTool(t, reg, "Meta.Inspect", func(ctx context.Context, _ struct{}) (inspectOutput, error) {
		out := inspectOutput{CallID: otc.CallID(ctx), UserID: otc.UserID(ctx), HTTP: otc.HTTPRequest(ctx) != nil}
		if id := otc.CallerIdentity(ctx); id != nil {
			out.Caller = id.Method + ":" + id.Name
		}
		return out, nil
	})
	require.NoError(t, otc.Register(reg, otc.Tool{
		ID: "Vault.Read", Version: "1.0.0", Description: "Reads the vault.",
		Requirements: &otc.Requirements{Secrets: []otc.SecretRequirement{{ID: "API_KEY"}}, UserID: true},
	}, func(ctx context.Context, _ struct{}) (vaultOutput, error) {
		key, _ := otc.Secret(ctx, "API_KEY")
		return vaultOutput{HasKey: key == secretValue, UserID: otc.UserID(ctx)}, nil
	}))
	require.NoError(t, otc.Register(reg, otc.Tool{
		ID: "Geo.Lookup", Version: "1.0.0", Description: "Looks a place up.",
		InputSchema: json.RawMessage(geoSchema),
	}, func(_ context.Context, in map[string]any) (map[string]any, error) { return in, nil }),
		"a hand-written schema with x-mcp-header must register")
	addTool(t, reg, "Agent.Sample", func(ctx context.Context, _ struct{}) (map[string]any, error) {
		if err := mcp.RequireClientCapability(ctx, "sampling"); err != nil {
			return nil, err
		}
		caps, known := mcp.ClientCapabilities(ctx)
		return map[string]any{"known": known, "caps": caps}, nil
	})
	addTool(t, reg, "Progress.Count", func(ctx context.Context, _ struct{}) (string, error) {
		for i := 1; i <= 3; i++ {
			otc.ReportProgress(ctx, float64(i), 3, fmt.Sprintf("step %d", i))
		}
		return "done", nil
	})
	addTool(t, reg, "Log.Emit", func(ctx context.Context, _ struct{}) (string, error) {
		otc.LogToClient(ctx, slog.LevelDebug, "debug message")
		otc.LogToClient(ctx, slog.LevelInfo, "info message")
		otc.LogToClient(ctx, slog.LevelInfo+2, "notice message")
		otc.LogToClient(ctx, slog.LevelWarn, "warning message")
		otc.LogToClient(ctx, slog.LevelError, map[string]any{"error": "error message"})
		return "logged", nil
	})
	return reg
}

// serve serves reg over httptest and returns the server's URL.
func serve(t testing.TB, reg *otc.Registry, opts *mcp.Options) string {
	t.Helper()
	srv := httptest.NewServer(mcp.NewHandler(reg, opts))
	t.Cleanup(srv.Close)
	return srv.URL
}

// request encodes a JSON-RPC request; a nil id makes a notification.
func request(id any, method string, params any) string {
	m := obj{"jsonrpc": "2.0", "method": method}
	if id != nil {
		m["id"] = id
	}
	if params != nil {
		m["params"] = params
	}
	b, err := json.Marshal(m)
	if err != nil {
		panic(err)
	}
	return string(b)
}

// modernMeta returns the _meta of a 2026-07-28 request, with extra
// members added.
func modernMeta(extra obj) obj {
	m := obj{
		"io.modelcontextprotocol/protocolVersion":    mcp.Version20260728,
		"io.modelcontextprotocol/clientCapabilities": obj{},
	}
	for k, v := range extra {
		m[k] = v
	}
	return m
}

// modernHeaders returns the headers of a 2026-07-28 request; name is the
// Mcp-Name, sent when not empty.
func modernHeaders(method, name string) map[string]string {
	h := map[string]string{"MCP-Protocol-Version": mcp.Version20260728, "Mcp-Method": method}
	if name != "" {
		h["Mcp-Name"] = name
	}
	return h
}

// callParams returns the params of a tools/call.
func callParams(name string, args any, meta obj) obj {
	p := obj{"name": name}
	if args != nil {
		p["arguments"] = args
	}
	if meta != nil {
		p["_meta"] = meta
	}
	return p
}

// answer is an HTTP answer as the tests read it.
type answer struct {
	status int
	header http.Header
	body   []byte
}

// newPost returns a POST of body with the headers an MCP client sends.
func newPost(t testing.TB, url, body string) *http.Request {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, url, strings.NewReader(body))
	require.NoError(t, err)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	return req
}

// do sends req and reads its whole answer.
func do(t testing.TB, req *http.Request) answer {
	t.Helper()
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	return answer{status: resp.StatusCode, header: resp.Header, body: b}
}

// post sends body with the usual headers, changed by hdr: a value ""
// removes a header.
func post(t testing.TB, url, body string, hdr map[string]string) answer {
	t.Helper()
	req := newPost(t, url, body)
	for k, v := range hdr {
		if v == "" {
			req.Header.Del(k)
			continue
		}
		req.Header.Set(k, v)
	}
	return do(t, req)
}

// response is one JSON-RPC response.
type response struct {
	ID     json.RawMessage `json:"id"`
	Result json.RawMessage `json:"result"`
	Error  *rpcError       `json:"error"`
}

type rpcError struct {
	Code    int             `json:"code"`
	Message string          `json:"message"`
	Data    json.RawMessage `json:"data"`
}

// requireWellFormed checks that a message the server wrote is one JSON
// value in UTF-8: encoding/json alone would read bytes that are not UTF-8
// as U+FFFD, and so would not notice an answer no strict client can read.
func requireWellFormed(t testing.TB, b []byte) {
	t.Helper()
	require.True(t, utf8.Valid(b), "the message is not UTF-8: %q", b)
	require.True(t, json.Valid(b), "the message is not JSON: %q", b)
}

// decodeResponse decodes one JSON-RPC response and checks its envelope:
// one JSON value in UTF-8, jsonrpc "2.0", an id, and exactly one of result
// and error.
func decodeResponse(t testing.TB, b []byte) response {
	t.Helper()
	requireWellFormed(t, b)
	var members map[string]json.RawMessage
	require.NoError(t, json.Unmarshal(b, &members), "a JSON-RPC response must be one JSON object: %s", b)
	assert.Equal(t, `"2.0"`, string(members["jsonrpc"]), "jsonrpc: %s", b)
	assert.Contains(t, members, "id", "%s", b)
	_, hasResult := members["result"]
	_, hasError := members["error"]
	assert.True(t, hasResult != hasError, "exactly one of result and error: %s", b)
	assert.Len(t, members, 3, "%s", b)
	var r response
	require.NoError(t, json.Unmarshal(b, &r))
	return r
}

// rpc checks that the answer is a plain JSON response and decodes it.
func (a answer) rpc(t testing.TB) response {
	t.Helper()
	require.Equal(t, "application/json", a.header.Get("Content-Type"), "status %d, body %s", a.status, a.body)
	return decodeResponse(t, a.body)
}

// result checks that the answer is 200 with a result, and returns it.
func (a answer) result(t testing.TB) json.RawMessage {
	t.Helper()
	require.Equal(t, http.StatusOK, a.status, "body: %s", a.body)
	r := a.rpc(t)
	require.Nil(t, r.Error, "body: %s", a.body)
	return r.Result
}

// object decodes a result as an object.
func object(t testing.TB, raw json.RawMessage) map[string]any {
	t.Helper()
	var m map[string]any
	require.NoError(t, json.Unmarshal(raw, &m), "%s", raw)
	require.NotNil(t, m, "the result must be an object: %s", raw)
	return m
}

// rpcErr checks that the answer is a JSON-RPC error with status and code,
// and returns it with its id.
func (a answer) rpcErr(t testing.TB, status, code int) (rpcError, string) {
	t.Helper()
	require.Equal(t, status, a.status, "body: %s", a.body)
	r := a.rpc(t)
	require.NotNil(t, r.Error, "body: %s", a.body)
	assert.Equal(t, code, r.Error.Code, "body: %s", a.body)
	assert.NotEmpty(t, r.Error.Message)
	return *r.Error, string(r.ID)
}

// events checks that the answer is an SSE stream and returns the data of
// its events, in order.
func (a answer) events(t testing.TB) []json.RawMessage {
	t.Helper()
	require.Equal(t, http.StatusOK, a.status, "body: %s", a.body)
	require.Equal(t, "text/event-stream", a.header.Get("Content-Type"), "body: %s", a.body)
	var out []json.RawMessage
	for block := range strings.SplitSeq(strings.TrimSuffix(string(a.body), "\n\n"), "\n\n") {
		lines := strings.Split(block, "\n")
		require.Len(t, lines, 2, "an event is an event line and a data line: %q", block)
		assert.Equal(t, "event: message", lines[0])
		data, ok := strings.CutPrefix(lines[1], "data: ")
		require.True(t, ok, "%q", block)
		requireWellFormed(t, []byte(data))
		out = append(out, json.RawMessage(data))
	}
	return out
}

// notification is a JSON-RPC notification the server sent.
type notification struct {
	Method string         `json:"method"`
	Params map[string]any `json:"params"`
}

// decodeNotification decodes a notification and checks its envelope.
func decodeNotification(t testing.TB, b []byte) notification {
	t.Helper()
	requireWellFormed(t, b)
	var members map[string]json.RawMessage
	require.NoError(t, json.Unmarshal(b, &members), "%s", b)
	assert.Equal(t, `"2.0"`, string(members["jsonrpc"]))
	assert.NotContains(t, members, "id", "a notification has no id: %s", b)
	var n notification
	require.NoError(t, json.Unmarshal(b, &n))
	require.NotEmpty(t, n.Method, "%s", b)
	return n
}

// splitStream separates the notifications of a stream from the response
// that ends it.
func splitStream(t testing.TB, msgs []json.RawMessage) ([]notification, response) {
	t.Helper()
	require.NotEmpty(t, msgs)
	var ns []notification
	for _, m := range msgs[:len(msgs)-1] {
		ns = append(ns, decodeNotification(t, m))
	}
	return ns, decodeResponse(t, msgs[len(msgs)-1])
}

// stdioClient drives a server started with mcp.Serve over pipes.
type stdioClient struct {
	t     testing.TB
	in    *io.PipeWriter
	lines chan []byte // the lines the server wrote, closed at the end
	done  chan error  // Serve's return
}

// startStdio runs mcp.Serve on pipes until the test ends.
func startStdio(t testing.TB, ctx context.Context, reg *otc.Registry, opts *mcp.Options) *stdioClient {
	t.Helper()
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	c := &stdioClient{t: t, in: inW, lines: make(chan []byte, 256), done: make(chan error, 1)}
	go func() {
		err := mcp.Serve(ctx, reg, inR, outW, opts)
		c.done <- err
		outW.Close()
		inR.Close()
	}()
	go func() {
		defer close(c.lines)
		sc := bufio.NewScanner(outR)
		sc.Buffer(nil, 16<<20)
		for sc.Scan() {
			c.lines <- append([]byte(nil), sc.Bytes()...)
		}
	}()
	t.Cleanup(func() {
		inW.Close()
		select {
		case <-c.done:
		case <-time.After(waitTimeout):
			t.Error("Serve did not return after stdin closed")
		}
	})
	return c
}

// send writes one line.
func (c *stdioClient) send(line string) {
	c.t.Helper()
	_, err := io.WriteString(c.in, line+"\n")
	require.NoError(c.t, err)
}

// recv returns the next line the server wrote.
func (c *stdioClient) recv() []byte {
	c.t.Helper()
	select {
	case l, ok := <-c.lines:
		require.True(c.t, ok, "the server's output ended")
		return l
	case <-time.After(waitTimeout):
		require.FailNow(c.t, "no line from the server")
		return nil
	}
}

// recvResponse returns the next line as a response.
func (c *stdioClient) recvResponse() response {
	c.t.Helper()
	return decodeResponse(c.t, c.recv())
}

// closeAndWait closes stdin and returns what Serve returned.
func (c *stdioClient) closeAndWait() error {
	c.t.Helper()
	c.in.Close()
	select {
	case err := <-c.done:
		c.done <- err // for the cleanup
		return err
	case <-time.After(waitTimeout):
		require.FailNow(c.t, "Serve did not return")
		return nil
	}
}

// rest returns the lines the server wrote after Serve returned.
func (c *stdioClient) rest() [][]byte {
	c.t.Helper()
	var out [][]byte
	for l := range c.lines {
		out = append(out, l)
	}
	return out
}

// recvWithin waits for a value on ch, failing the test after waitTimeout.
func recvWithin[T any](t testing.TB, ch <-chan T, what string) T {
	t.Helper()
	select {
	case v := <-ch:
		return v
	case <-time.After(waitTimeout):
		require.FailNow(t, "timed out waiting for "+what)
		var zero T
		return zero
	}
}
