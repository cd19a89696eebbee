package interop

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"os/exec"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/otcgo/otc"
	"github.com/otcgo/otc/internal/testkit"
	otcmcp "github.com/otcgo/otc/mcp"
)

// callTimeout bounds one test's exchange with the server; a healthy one
// takes milliseconds.
const callTimeout = 30 * time.Second

// connection is one way for the SDK client to reach the calculator.
type connection struct {
	name string
	// version is the protocol version the client asks for; empty lets the
	// SDK choose, which v1.8.0 does by probing server/discover for
	// 2026-07-28.
	version string
	// want is the version the session must end up speaking.
	want string
	// transport returns a new transport to the server, and the server's
	// standard error, which holds its call log.
	transport func() (mcp.Transport, *testkit.SyncBuffer)
}

func connections() []connection {
	httpTransport := func() (mcp.Transport, *testkit.SyncBuffer) {
		// MaxRetries -1: a failed request is an error here, not retried.
		return &mcp.StreamableClientTransport{Endpoint: sharedServer.url + "/mcp", MaxRetries: -1}, sharedServer.log
	}
	stdioTransport := func() (mcp.Transport, *testkit.SyncBuffer) {
		cmd := exec.Command(calculatorBin, "-stdio")
		cmd.Env = serverEnv()
		stderr := &testkit.SyncBuffer{}
		cmd.Stderr = stderr
		return &mcp.CommandTransport{Command: cmd}, stderr
	}
	return []connection{
		{name: "http", want: otcmcp.Version20260728, transport: httpTransport},
		{name: "http_2025-11-25", version: otcmcp.Version20251125, want: otcmcp.Version20251125, transport: httpTransport},
		{name: "http_2025-06-18", version: otcmcp.Version20250618, want: otcmcp.Version20250618, transport: httpTransport},
		{name: "stdio", want: otcmcp.Version20260728, transport: stdioTransport},
		{name: "stdio_2025-11-25", version: otcmcp.Version20251125, want: otcmcp.Version20251125, transport: stdioTransport},
		{name: "stdio_2025-06-18", version: otcmcp.Version20250618, want: otcmcp.Version20250618, transport: stdioTransport},
	}
}

// progressRouter hands each progress notification to the test that sent
// its token.
type progressRouter struct {
	mu    sync.Mutex
	byTok map[string]chan *mcp.ProgressNotificationParams
}

func (r *progressRouter) subscribe(t *testing.T, token string) <-chan *mcp.ProgressNotificationParams {
	ch := make(chan *mcp.ProgressNotificationParams, 64)
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.byTok == nil {
		r.byTok = map[string]chan *mcp.ProgressNotificationParams{}
	}
	r.byTok[token] = ch
	t.Cleanup(func() {
		r.mu.Lock()
		defer r.mu.Unlock()
		delete(r.byTok, token)
	})
	return ch
}

func (r *progressRouter) handle(_ context.Context, req *mcp.ProgressNotificationClientRequest) {
	tok, _ := req.Params.ProgressToken.(string)
	r.mu.Lock()
	defer r.mu.Unlock()
	if ch, ok := r.byTok[tok]; ok {
		select {
		case ch <- req.Params:
		default: // more than the test can want; it fails on what it got
		}
	}
}

// connect opens a session of the SDK client over c and closes it when the
// test ends. It also returns the server's standard error.
func connect(t *testing.T, c connection) (*mcp.ClientSession, *progressRouter, *testkit.SyncBuffer) {
	t.Helper()
	router := &progressRouter{}
	client := mcp.NewClient(&mcp.Implementation{Name: "otc-interop", Version: "0.0.0"}, &mcp.ClientOptions{
		ProgressNotificationHandler: router.handle,
	})
	ctx, cancel := context.WithTimeout(t.Context(), callTimeout)
	defer cancel()
	var opts *mcp.ClientSessionOptions
	if c.version != "" {
		opts = &mcp.ClientSessionOptions{ProtocolVersion: c.version}
	}
	transport, stderr := c.transport()
	cs, err := client.Connect(ctx, transport, opts)
	require.NoError(t, err, "connecting over %s", c.name)
	t.Cleanup(func() { assert.NoError(t, cs.Close(), "closing the session") })
	return cs, router, stderr
}

// TestSDKClient runs the SDK's client against the calculator over each
// connection: the handshake, tools/list and tools/call in the cases a
// model meets.
func TestSDKClient(t *testing.T) {
	t.Parallel()
	for _, c := range connections() {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			cs, router, stderr := connect(t, c)
			testSession(t, c, cs, router, stderr)
		})
	}
}

func testSession(t *testing.T, c connection, cs *mcp.ClientSession, router *progressRouter, stderr *testkit.SyncBuffer) {
	t.Run("negotiated_version", func(t *testing.T) {
		init := cs.InitializeResult()
		require.NotNil(t, init)
		assert.Equal(t, c.want, init.ProtocolVersion)
		require.NotNil(t, init.ServerInfo, "serverInfo")
		assert.Equal(t, "calculator", init.ServerInfo.Name)
		assert.Equal(t, "1.0.0", init.ServerInfo.Version)
		require.NotNil(t, init.Capabilities)
		assert.NotNil(t, init.Capabilities.Tools, "the tools capability")
	})

	t.Run("list_tools", func(t *testing.T) {
		t.Parallel()
		ctx, cancel := context.WithTimeout(t.Context(), callTimeout)
		defer cancel()
		res, err := cs.ListTools(ctx, nil)
		require.NoError(t, err)
		assert.Empty(t, res.NextCursor)
		tools := map[string]*mcp.Tool{}
		for _, tool := range res.Tools {
			tools[tool.Name] = tool
		}
		// Not Payments_Refund: it needs a capability token, and the
		// catalog is the caller's, which has none.
		require.ElementsMatch(t, []string{"Calculator_Add", "Counter_Increment", "Doorbell_Ring", "Math_Evaluate", "Memory_Store", "Shipping_Quote", "Signer_Sign", "Timer_Wait"}, keys(tools))

		add := tools["Calculator_Add"]
		assert.Equal(t, "Adds two numbers together.", add.Description)
		assert.JSONEq(t, `{
			"type": "object",
			"properties": {
				"a": {"type": "number", "description": "The first number to add."},
				"b": {"type": "number", "description": "The second number to add."}
			},
			"required": ["a", "b"],
			"additionalProperties": false
		}`, marshal(t, add.InputSchema))
		assert.JSONEq(t, `{
			"type": "object",
			"properties": {"result": {"type": "number", "description": "The sum of the two numbers."}},
			"required": ["result"]
		}`, marshal(t, add.OutputSchema))

		ring := tools["Doorbell_Ring"]
		assert.Equal(t, "Rings a doorbell given a doorbell ID.", ring.Description)
		assert.JSONEq(t, `{
			"type": "object",
			"properties": {"doorbell_id": {"type": "string", "description": "The ID of the doorbell to ring."}},
			"required": ["doorbell_id"],
			"additionalProperties": false
		}`, marshal(t, ring.InputSchema))
		assert.Nil(t, ring.OutputSchema, "a tool that returns nothing has no output schema")

		sign := tools["Signer_Sign"]
		assert.Contains(t, sign.Description, "SIGNING_KEY")
		assert.JSONEq(t, `{
			"type": "object",
			"properties": {"message": {"type": "string", "description": "The text to sign."}},
			"required": ["message"],
			"additionalProperties": false
		}`, marshal(t, sign.InputSchema))
		assert.JSONEq(t, `{
			"type": "object",
			"properties": {"signature": {"type": "string", "description": "The hex HMAC-SHA256 of the message under the SIGNING_KEY secret."}},
			"required": ["signature"],
			"additionalProperties": false
		}`, marshal(t, sign.OutputSchema))

		wait := tools["Timer_Wait"]
		assert.Contains(t, wait.Description, "Waits the given number of milliseconds")
		assert.JSONEq(t, `{
			"type": "object",
			"properties": {"ms": {"type": "integer", "minimum": 0, "maximum": 10000, "description": "How many milliseconds to wait: 0 to 10000."}},
			"required": ["ms"],
			"additionalProperties": false
		}`, marshal(t, wait.InputSchema))
		assert.JSONEq(t, `{
			"type": "object",
			"properties": {"result": {"type": "integer", "description": "The number of milliseconds waited."}},
			"required": ["result"]
		}`, marshal(t, wait.OutputSchema))
	})

	t.Run("list_tool_metadata", func(t *testing.T) {
		t.Parallel()
		ctx, cancel := context.WithTimeout(t.Context(), callTimeout)
		defer cancel()
		res, err := cs.ListTools(ctx, nil)
		require.NoError(t, err)
		tools := map[string]*mcp.Tool{}
		for _, tool := range res.Tools {
			tools[tool.Name] = tool
		}
		// The SDK holds readOnlyHint and idempotentHint, whose default is
		// false, as plain booleans; the other two as pointers.
		readOnly := &mcp.ToolAnnotations{ReadOnlyHint: true, IdempotentHint: true, OpenWorldHint: new(false)}
		for name, want := range map[string]struct {
			title       string
			annotations *mcp.ToolAnnotations
		}{
			"Calculator_Add":    {"Add two numbers", readOnly},
			"Signer_Sign":       {"Sign a message", readOnly},
			"Timer_Wait":        {"Wait a while", readOnly},
			"Counter_Increment": {"Increment the counter", &mcp.ToolAnnotations{DestructiveHint: new(false), OpenWorldHint: new(false)}},
			"Doorbell_Ring":     {"Ring a doorbell", &mcp.ToolAnnotations{DestructiveHint: new(false), OpenWorldHint: new(true)}},
			// Payments_Refund is not in this caller's list (it needs a
			// capability token); the example's TestToolMetadata checks its
			// hints in the list of a token that may refund.
		} {
			tool := tools[name]
			require.NotNil(t, tool, name)
			assert.Equal(t, want.title, tool.Title, name)
			assert.Equal(t, want.annotations, tool.Annotations, name)
		}
		// Icons came with 2025-11-25; the server leaves them out of the
		// lists of a 2025-06-18 session.
		add := tools["Calculator_Add"]
		if c.want == otcmcp.Version20250618 {
			assert.Nil(t, add.Icons)
		} else {
			require.Len(t, add.Icons, 1)
			assert.True(t, strings.HasPrefix(add.Icons[0].Source, "data:image/svg+xml;base64,"), add.Icons[0].Source)
			assert.Equal(t, "image/svg+xml", add.Icons[0].MIMEType)
			assert.Equal(t, []string{"any"}, add.Icons[0].Sizes)
		}
	})

	t.Run("call_add", func(t *testing.T) {
		t.Parallel()
		res := callTool(t, cs, &mcp.CallToolParams{Name: "Calculator_Add", Arguments: map[string]any{"a": 2, "b": 3.5}})
		assert.False(t, res.IsError)
		assert.Equal(t, map[string]any{"result": 5.5}, res.StructuredContent)
		assert.Equal(t, "5.5", onlyText(t, res))
	})

	t.Run("call_ring", func(t *testing.T) {
		t.Parallel()
		res := callTool(t, cs, &mcp.CallToolParams{Name: "Doorbell_Ring", Arguments: map[string]any{"doorbell_id": "doorbell42"}})
		assert.False(t, res.IsError)
		assert.Empty(t, res.Content, "a tool that returns nothing answers with no content")
		assert.Nil(t, res.StructuredContent)
	})

	t.Run("tool_error", func(t *testing.T) {
		t.Parallel()
		res := callTool(t, cs, &mcp.CallToolParams{Name: "Doorbell_Ring", Arguments: map[string]any{"doorbell_id": "doorbell1"}})
		assert.True(t, res.IsError)
		text := onlyText(t, res)
		assert.Contains(t, text, "Doorbell ID not found")
		assert.Contains(t, text, "ids: doorbell42,doorbell84", "the additional prompt content reaches the model")
		assert.JSONEq(t, `{"code": "tool_error", "can_retry": true, "retry_after_ms": 500}`, marshal(t, res.Meta[otcmcp.MetaError]))
	})

	t.Run("invalid_input", func(t *testing.T) {
		t.Parallel()
		for _, tc := range []struct {
			name   string
			args   map[string]any
			params map[string]string // parameter → the substring its error holds
		}{
			{"wrong_type", map[string]any{"a": "two", "b": 3}, map[string]string{"a": "number"}},
			{"missing", map[string]any{"a": 2}, map[string]string{"b": "required"}},
			{"unknown_parameter", map[string]any{"a": 2, "b": 3, "c": 4}, map[string]string{"c": "not an accepted parameter"}},
		} {
			t.Run(tc.name, func(t *testing.T) {
				t.Parallel()
				res := callTool(t, cs, &mcp.CallToolParams{Name: "Calculator_Add", Arguments: tc.args})
				assert.True(t, res.IsError)
				assert.Nil(t, res.StructuredContent)
				text := onlyText(t, res)
				var meta struct {
					Code            string            `json:"code"`
					ParameterErrors map[string]string `json:"parameter_errors"`
				}
				require.NoError(t, json.Unmarshal([]byte(marshal(t, res.Meta[otcmcp.MetaError])), &meta))
				assert.Equal(t, "invalid_input", meta.Code)
				assert.Len(t, meta.ParameterErrors, len(tc.params))
				for p, want := range tc.params {
					assert.Contains(t, text, "- "+p+": ", "the text names the parameter")
					assert.Contains(t, meta.ParameterErrors[p], want)
				}
			})
		}
	})

	t.Run("unknown_tool", func(t *testing.T) {
		t.Parallel()
		ctx, cancel := context.WithTimeout(t.Context(), callTimeout)
		defer cancel()
		res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "Calculator_Subtract", Arguments: map[string]any{"a": 1, "b": 2}})
		require.Error(t, err, "an unknown tool is a protocol error, not a result")
		assert.Nil(t, res)
		rpcErr, ok := errors.AsType[*jsonrpc.Error](err)
		require.True(t, ok, "a JSON-RPC error, got %T: %v", err, err)
		assert.Equal(t, int64(jsonrpc.CodeInvalidParams), rpcErr.Code)
		assert.Contains(t, rpcErr.Message, "Calculator_Subtract")
	})

	t.Run("missing_secret", func(t *testing.T) {
		t.Parallel()
		res := callTool(t, cs, &mcp.CallToolParams{Name: "Signer_Sign", Arguments: map[string]any{"message": "hello"}})
		assert.True(t, res.IsError)
		text := onlyText(t, res)
		assert.Contains(t, text, "SIGNING_KEY")
		assert.Contains(t, text, otcmcp.MetaContext, "the text says where the secret goes")
		assert.JSONEq(t, `{"code": "server_error", "can_retry": false, "missing_requirements": {"secrets": [{"id": "SIGNING_KEY"}]}}`,
			marshal(t, res.Meta[otcmcp.MetaError]))
	})

	t.Run("secret_in_meta", func(t *testing.T) {
		t.Parallel()
		const key, msg = "interop-key", "hello"
		res := callTool(t, cs, &mcp.CallToolParams{
			Name:      "Signer_Sign",
			Arguments: map[string]any{"message": msg},
			Meta: mcp.Meta{otcmcp.MetaContext: otc.CallContext{
				Secrets: []otc.ToolSecret{{ID: "SIGNING_KEY", Value: key}},
			}},
		})
		require.False(t, res.IsError, "text: %v", res.Content)
		mac := hmac.New(sha256.New, []byte(key))
		mac.Write([]byte(msg))
		want := hex.EncodeToString(mac.Sum(nil))
		assert.Equal(t, map[string]any{"signature": want}, res.StructuredContent)
		assert.JSONEq(t, `{"signature": "`+want+`"}`, onlyText(t, res))
	})

	t.Run("progress", func(t *testing.T) {
		t.Parallel()
		token := t.Name()
		notes := router.subscribe(t, token)
		params := &mcp.CallToolParams{Name: "Timer_Wait", Arguments: map[string]any{"ms": 200}}
		params.SetProgressToken(token)
		res := callTool(t, cs, params)
		require.False(t, res.IsError, "text: %v", res.Content)
		assert.Equal(t, map[string]any{"result": 200.0}, res.StructuredContent)
		assert.Equal(t, "200", onlyText(t, res))

		// The SDK hands notifications to the handler in the order they
		// arrive, but may return the call's result before the handler has
		// seen the last of them: read until the one that reaches the
		// total. (Its message is "done", unless the tool's ticker reported
		// the total first: then the server drops the "done" report, which
		// would not move forward, as MCP requires.)
		var got []*mcp.ProgressNotificationParams
		timeout := time.NewTimer(callTimeout)
		defer timeout.Stop()
		for len(got) == 0 || got[len(got)-1].Progress < 200 {
			select {
			case p := <-notes:
				got = append(got, p)
			case <-timeout.C:
				require.Failf(t, "no progress notification reached the total", "got %d: %s", len(got), marshal(t, got))
			}
		}
		first, last := got[0], got[len(got)-1]
		assert.Equal(t, token, first.ProgressToken)
		assert.Equal(t, 0.0, first.Progress)
		assert.Equal(t, "waiting", first.Message)
		assert.Equal(t, 200.0, last.Progress)
		assert.Equal(t, 200.0, last.Total)
		for i := 1; i < len(got); i++ {
			assert.Greater(t, got[i].Progress, got[i-1].Progress, "progress grows with each notification")
			assert.Equal(t, 200.0, got[i].Total)
		}
	})

	t.Run("no_progress_token", func(t *testing.T) {
		t.Parallel()
		res := callTool(t, cs, &mcp.CallToolParams{Name: "Timer_Wait", Arguments: map[string]any{"ms": 0}})
		require.False(t, res.IsError, "text: %v", res.Content)
		assert.Equal(t, map[string]any{"result": 0.0}, res.StructuredContent)
	})

	t.Run("call_id", func(t *testing.T) {
		t.Parallel()
		id := "interop-" + t.Name()
		res := callTool(t, cs, &mcp.CallToolParams{Name: "Calculator_Add", Arguments: map[string]any{"a": 1, "b": 1},
			Meta: mcp.Meta{otcmcp.MetaCallID: id}})
		require.False(t, res.IsError, "text: %v", res.Content)
		rec := waitCallRecord(t, stderr, id)
		assert.Equal(t, "Calculator.Add@1.0.0", rec.ToolID)
		assert.Equal(t, "mcp", rec.Protocol)
		assert.Equal(t, "success", rec.Outcome)
	})

	t.Run("call_id_retry", func(t *testing.T) {
		t.Parallel()
		// The server deduplicates by the call id in _meta: the SDK's
		// client, retrying a call with its id, gets the first count back.
		id := "interop-" + t.Name()
		count := func(id string) float64 {
			res := callTool(t, cs, &mcp.CallToolParams{Name: "Counter_Increment", Arguments: map[string]any{},
				Meta: mcp.Meta{otcmcp.MetaCallID: id}})
			require.False(t, res.IsError, "text: %v", res.Content)
			n, ok := res.StructuredContent.(map[string]any)["result"].(float64)
			require.True(t, ok, "structuredContent: %v", res.StructuredContent)
			return n
		}
		first := count(id)
		assert.Equal(t, first, count(id), "a retry with the call id is not counted again")
		assert.Greater(t, count(id+"-next"), first, "a new call id counts")

		// The id reused for another call is refused, never answered with
		// the first call's result.
		ctx, cancel := context.WithTimeout(t.Context(), callTimeout)
		defer cancel()
		_, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "Calculator_Add", Arguments: map[string]any{"a": 1, "b": 2},
			Meta: mcp.Meta{otcmcp.MetaCallID: id}})
		require.Error(t, err)
		assert.Contains(t, err.Error(), "The call_id was already used for a different call")
	})

	t.Run("cancel", func(t *testing.T) {
		t.Parallel()
		// A wait of 10 s runs into the tool's 2 s timeout unless the
		// cancellation reaches the server: the call log tells the two
		// apart without timing anything.
		id := "interop-" + t.Name()
		notes := router.subscribe(t, id)
		params := &mcp.CallToolParams{Name: "Timer_Wait", Arguments: map[string]any{"ms": 10000},
			Meta: mcp.Meta{otcmcp.MetaCallID: id}}
		params.SetProgressToken(id)
		ctx, cancel := context.WithCancel(t.Context())
		defer cancel()
		done := make(chan error, 1)
		go func() {
			_, err := cs.CallTool(ctx, params)
			done <- err
		}()
		select {
		case p := <-notes:
			require.Equal(t, "waiting", p.Message, "the tool is running")
		case err := <-done:
			require.Failf(t, "the call ended before it was cancelled", "%v", err)
		case <-time.After(callTimeout):
			require.Fail(t, "the tool did not report that it started")
		}
		cancel()
		select {
		case err := <-done:
			assert.ErrorIs(t, err, context.Canceled)
		case <-time.After(callTimeout):
			require.Fail(t, "the cancelled call did not return")
		}
		rec := waitCallRecord(t, stderr, id)
		assert.Equal(t, "Timer.Wait@1.0.0", rec.ToolID)
		assert.Equal(t, "canceled", rec.Outcome, "the server saw the cancellation (a timeout would say it did not)")
	})

	t.Run("ping", func(t *testing.T) {
		if c.want >= otcmcp.Version20260728 {
			// 2026-07-28 has no ping; the SDK's own server answers it
			// "method not found" there.
			t.Skip("ping is a method of the versions before 2026-07-28")
		}
		t.Parallel()
		ctx, cancel := context.WithTimeout(t.Context(), callTimeout)
		defer cancel()
		assert.NoError(t, cs.Ping(ctx, nil))
	})
}

// callRecord is a record of the calculator's call log (OTC_LOG_CALLS=1).
type callRecord struct {
	Msg      string `json:"msg"`
	ToolID   string `json:"tool_id"`
	CallID   string `json:"call_id"`
	Protocol string `json:"protocol"`
	Outcome  string `json:"outcome"`
}

// waitCallRecord polls the server's standard error until the call log has
// a record of the call id, and returns it.
func waitCallRecord(t *testing.T, stderr *testkit.SyncBuffer, callID string) callRecord {
	t.Helper()
	deadline := time.Now().Add(callTimeout)
	for {
		for line := range strings.Lines(stderr.String()) {
			var rec callRecord
			if json.Unmarshal([]byte(line), &rec) == nil && rec.Msg == "tool call" && rec.CallID == callID {
				return rec
			}
		}
		if time.Now().After(deadline) {
			require.Failf(t, "no call record", "call id %q; the server's log:\n%s", callID, stderr.String())
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// callTool calls a tool and requires a result rather than an error.
func callTool(t *testing.T, cs *mcp.ClientSession, params *mcp.CallToolParams) *mcp.CallToolResult {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), callTimeout)
	defer cancel()
	res, err := cs.CallTool(ctx, params)
	require.NoError(t, err, "calling %s", params.Name)
	require.NotNil(t, res)
	return res
}

// onlyText returns the text of a result that has one text block.
func onlyText(t *testing.T, res *mcp.CallToolResult) string {
	t.Helper()
	require.Len(t, res.Content, 1, "content: %s", marshal(t, res.Content))
	text, ok := res.Content[0].(*mcp.TextContent)
	require.True(t, ok, "a text block, got %T", res.Content[0])
	return text.Text
}

func marshal(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	require.NoError(t, err)
	return string(b)
}

func keys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	return out
}
