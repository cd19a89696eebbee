package client

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/otcgo/otc"
	"github.com/otcgo/otc/internal/modeltext"
	"github.com/otcgo/otc/internal/wire"
)

// The MCP protocol versions the client speaks, newest first. They are
// spelled as the mcp package spells them; the client does not import the
// server.
const (
	mcpV20260728 = "2026-07-28"
	mcpV20251125 = "2025-11-25"
	mcpV20250618 = "2025-06-18"
)

// MCP _meta keys an otc server reads, as the mcp package names them.
const (
	metaCallID     = "io.github.otcgo/call_id"
	metaContext    = "io.github.otcgo/context"
	metaError      = "io.github.otcgo/error"
	metaVersion    = "io.modelcontextprotocol/protocolVersion"
	metaCaps       = "io.modelcontextprotocol/clientCapabilities"
	metaLogLevel   = "io.modelcontextprotocol/logLevel"
	metaClientInfo = "io.modelcontextprotocol/clientInfo"
	extTasks       = "io.modelcontextprotocol/tasks"
)

// clientInfo is the client's Implementation, sent with initialize and,
// in 2026-07-28, in every request's _meta (encoded once).
var clientInfo = json.RawMessage(`{"name":"otc-go-client","version":"1.0"}`)

// rpcRequest is a JSON-RPC request.
type rpcRequest struct {
	JSONRPC string         `json:"jsonrpc"`
	ID      int64          `json:"id"`
	Method  string         `json:"method"`
	Params  map[string]any `json:"params"`
}

// codeUnsupportedVersion is 2026-07-28's UnsupportedProtocolVersion,
// whose data lists the versions the server speaks.
const codeUnsupportedVersion = -32022

// offers reports whether an UnsupportedProtocolVersion error's data lists
// version among those the server speaks.
func offers(data json.RawMessage, version string) bool {
	var d struct {
		Supported []string `json:"supported"`
	}
	return json.Unmarshal(data, &d) == nil && slices.Contains(d.Supported, version)
}

// checkMCPVersion checks Options.MCPVersion.
func checkMCPVersion(v string) error {
	switch v {
	case "", mcpV20260728, mcpV20251125, mcpV20250618:
		return nil
	}
	return fmt.Errorf("otc client: Options.MCPVersion %q is not one the client speaks: %s, %s or %s", v, mcpV20260728, mcpV20251125, mcpV20250618)
}

// Bounds of an MCP exchange.
const (
	// mcpMaxPages bounds tools/list pagination against a server that
	// never ends.
	mcpMaxPages = 100
	// mcpMaxRounds bounds the input_required rounds of one call.
	mcpMaxRounds = 16
	// mcpCancelWait bounds the sending of notifications/cancelled and
	// tasks/cancel after the call's context ended.
	mcpCancelWait = 2 * time.Second
	// Bounds of a task's polling interval, whatever the server suggests.
	minPoll, maxPoll = 20 * time.Millisecond, 30 * time.Second
)

// mcpConn carries MCP messages: Streamable HTTP or a stdio pipe.
type mcpConn interface {
	// roundTrip sends request id and returns its response message; any
	// other message that arrives meanwhile goes to s.incoming.
	roundTrip(ctx context.Context, s *mcpSession, id int64, method, name string, body []byte) ([]byte, error)
	// send sends a notification, or a response to a server's request.
	send(ctx context.Context, s *mcpSession, body []byte) error
	// reset forgets the session, after the server said it expired.
	reset()
	// started is told that the handshake settled version.
	started(s *mcpSession, version string)
	close() error
}

// mcpSession speaks MCP to one server.
type mcpSession struct {
	c    *Client
	conn mcpConn

	mu      sync.Mutex // held by the handshake
	version atomic.Pointer[string]
	caps    map[string]any // the client capabilities declared
	// capsJSON is caps in 2026-07-28, with the tasks extension, encoded
	// once (modernCaps).
	capsOnce sync.Once
	capsJSON json.RawMessage
	tasks    bool // the server offers the tasks extension

	nextID   atomic.Int64
	progress sync.Map // progress token → func(Progress)
	headers  sync.Map // tool name → []paramHeader, in 2026-07-28
}

func newMCPSession(c *Client, conn mcpConn) *mcpSession {
	s := &mcpSession{c: c, conn: conn, caps: map[string]any{}}
	if h := c.opts.Handlers; h != nil {
		if h.Elicit != nil {
			s.caps["elicitation"] = map[string]any{"form": map[string]any{}, "url": map[string]any{}}
		}
		if h.Sample != nil {
			s.caps["sampling"] = map[string]any{}
		}
		if h.Roots != nil {
			s.caps["roots"] = map[string]any{}
		}
	}
	return s
}

// ver is the negotiated version, "" before the handshake.
func (s *mcpSession) ver() string {
	if v := s.version.Load(); v != nil {
		return *v
	}
	return ""
}

// modernCaps are the client capabilities a 2026-07-28 request sends:
// those of the handlers, and the tasks extension when Options.Tasks asks
// for it, encoded once.
func (s *mcpSession) modernCaps() json.RawMessage {
	s.capsOnce.Do(func() {
		caps := maps.Clone(s.caps)
		if s.c.opts.Tasks {
			caps["extensions"] = map[string]any{extTasks: map[string]any{}}
		}
		s.capsJSON, _ = json.Marshal(caps)
	})
	return s.capsJSON
}

// ensure makes the handshake once: server/discover for 2026-07-28, which
// is stateless, else initialize (with its session, over HTTP, when the
// server keeps one) and notifications/initialized.
func (s *mcpSession) ensure(ctx context.Context) error {
	if s.ver() != "" {
		return nil
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.ver() != "" {
		return nil
	}
	d := s.c.opts.HandshakeTimeout
	if d == 0 {
		d = DefaultHandshakeTimeout
	}
	if d < 0 {
		return s.handshake(ctx)
	}
	hctx, cancel := context.WithTimeoutCause(ctx, d,
		fmt.Errorf("the server did not answer the MCP handshake within %s (Options.HandshakeTimeout): %w", d, context.DeadlineExceeded))
	defer cancel()
	err := s.handshake(hctx)
	if err != nil && ctx.Err() == nil && hctx.Err() != nil {
		return context.Cause(hctx) // the bound, not the transport's words for it
	}
	return err
}

// handshake is ensure's handshake, s.mu held.
func (s *mcpSession) handshake(ctx context.Context) error {
	pinned := s.c.opts.MCPVersion
	var discoverErr error
	if pinned == "" || pinned == mcpV20260728 {
		var d struct {
			SupportedVersions []string `json:"supportedVersions"`
			Capabilities      struct {
				Extensions map[string]json.RawMessage `json:"extensions"`
			} `json:"capabilities"`
		}
		discoverErr = s.rpc(ctx, mcpV20260728, "server/discover", map[string]any{}, &d)
		if e, ok := errors.AsType[*RPCError](discoverErr); ok && e.Code == codeUnsupportedVersion && offers(e.Data, mcpV20260728) {
			// Refused, though the server names this version among those
			// it speaks: asked once more, as the version's negotiation
			// says.
			discoverErr = s.rpc(ctx, mcpV20260728, "server/discover", map[string]any{}, &d)
		}
		if discoverErr == nil && slices.Contains(d.SupportedVersions, mcpV20260728) {
			_, s.tasks = d.Capabilities.Extensions[extTasks]
			v := mcpV20260728
			s.version.Store(&v)
			return nil
		}
		if ctx.Err() != nil {
			return discoverErr
		}
		if pinned == mcpV20260728 {
			if discoverErr == nil {
				discoverErr = fmt.Errorf("server/discover lists versions %q", d.SupportedVersions)
			}
			return fmt.Errorf("the server does not speak MCP %s (Options.MCPVersion): %w", mcpV20260728, discoverErr)
		}
		if e, ok := errors.AsType[*otc.Error](discoverErr); ok && e.Code != otc.CodeServerError {
			return discoverErr // a refusal of the caller, which initialize would get too
		}
	}
	want := pinned
	if want == "" {
		want = mcpV20251125
	}
	var init struct {
		ProtocolVersion string `json:"protocolVersion"`
	}
	params := map[string]any{
		"protocolVersion": want,
		"capabilities":    s.caps,
		"clientInfo":      clientInfo,
	}
	if err := s.rpc(ctx, "", "initialize", params, &init); err != nil {
		if discoverErr != nil {
			return fmt.Errorf("%w (and server/discover: %v)", err, discoverErr)
		}
		return err
	}
	switch v := init.ProtocolVersion; {
	case v == mcpV20251125 || v == mcpV20250618:
		if pinned != "" && v != pinned {
			return fmt.Errorf("the server answered initialize with MCP version %q, not %s (Options.MCPVersion)", v, pinned)
		}
	default:
		return fmt.Errorf("the server answered initialize with MCP version %q, which the client does not speak (it speaks %s, %s and %s)",
			truncate(v, 32), mcpV20260728, mcpV20251125, mcpV20250618)
	}
	v := init.ProtocolVersion
	s.version.Store(&v)
	body, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "method": "notifications/initialized"})
	if err := s.conn.send(ctx, s, body); err != nil {
		return err
	}
	s.conn.started(s, v)
	if l := s.c.opts.LogLevel; l != "" {
		// A server without logging refuses it; its messages, if any,
		// still come.
		_ = s.rpc(ctx, v, "logging/setLevel", map[string]any{"level": l}, nil)
	}
	return nil
}

// request sends a request after the handshake and decodes its result.
// A session the server says expired is begun again, once.
func (s *mcpSession) request(ctx context.Context, method string, params map[string]any, out any) error {
	if err := s.ensure(ctx); err != nil {
		return err
	}
	err := s.rpc(ctx, s.ver(), method, params, out)
	if errors.Is(err, errSessionExpired) {
		s.version.Store(nil)
		s.conn.reset()
		if err = s.ensure(ctx); err != nil {
			return err
		}
		err = s.rpc(ctx, s.ver(), method, params, out)
	}
	return err
}

// errSessionExpired is a 404 to a request of a session: the server has
// forgotten it.
var errSessionExpired = errors.New("the MCP session expired")

// rpc sends one request in version (which adds its _meta in 2026-07-28)
// and decodes its result into out. When ctx ends first, the server is
// told with notifications/cancelled.
func (s *mcpSession) rpc(ctx context.Context, version, method string, params map[string]any, out any) error {
	id := s.nextID.Add(1)
	name := ""
	if params != nil {
		name, _ = params["name"].(string)
		if t, ok := params["taskId"].(string); ok {
			name = t
		}
		if version == mcpV20260728 {
			meta, _ := params["_meta"].(map[string]any)
			if meta == nil {
				meta = map[string]any{}
			}
			meta[metaVersion] = mcpV20260728
			meta[metaCaps] = s.modernCaps()
			meta[metaClientInfo] = clientInfo
			if l := s.c.opts.LogLevel; l != "" {
				meta[metaLogLevel] = l
			}
			params["_meta"] = meta
		}
	}
	body, err := json.Marshal(rpcRequest{JSONRPC: "2.0", ID: id, Method: method, Params: params})
	if err != nil {
		return fmt.Errorf("encoding %s: %w", method, err)
	}
	raw, err := s.conn.roundTrip(ctx, s, id, method, name, body)
	if err != nil {
		if ctx.Err() != nil && method != "initialize" && method != "server/discover" {
			s.cancelled(ctx, id)
		}
		return err
	}
	var answer struct {
		Result json.RawMessage `json:"result"`
		Error  *RPCError       `json:"error"`
	}
	if err := json.Unmarshal(raw, &answer); err != nil {
		return fmt.Errorf("%s: the answer is not JSON-RPC: %w", method, err)
	}
	if answer.Error != nil {
		answer.Error.Method = method
		return answer.Error.asError()
	}
	if answer.Result == nil {
		return fmt.Errorf("%s: the answer has neither result nor error", method)
	}
	if out == nil {
		return nil
	}
	if err := json.Unmarshal(answer.Result, out); err != nil {
		return fmt.Errorf("%s: the result: %w", method, err)
	}
	return nil
}

// cancelled tells the server that request id is no longer wanted.
func (s *mcpSession) cancelled(ctx context.Context, id int64) {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), mcpCancelWait)
	defer cancel()
	body, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "method": "notifications/cancelled",
		"params": map[string]any{"requestId": id, "reason": "the client's context ended"}})
	_ = s.conn.send(ctx, s, body)
}

// RPCError is a JSON-RPC error answer of an MCP server or an A2A agent
// that the client does not map to an [*otc.Error]: a method the server
// does not have, say. A refusal of the caller (-32001, -32002, -32003),
// and a tools/call refused before the tool ran (-32600, -32602: an
// unknown tool, malformed arguments), become an *otc.Error instead.
type RPCError struct {
	Code    int             `json:"code"`
	Message string          `json:"message"`
	Data    json.RawMessage `json:"data,omitempty"`
	// Method is the request's method.
	Method string `json:"-"`
}

// Error says the method, the message and the code.
func (e *RPCError) Error() string {
	return fmt.Sprintf("%s: %s (JSON-RPC error %d)", e.Method, truncate(e.Message, 512), e.Code)
}

// asError maps the error codes MCP servers answer a refused caller with
// (-32001 and -32002/-32003, with the OAuth reason in data.error) to an
// *otc.Error of their class; others stay RPC errors.
func (e *RPCError) asError() error {
	var data struct {
		Error          string   `json:"error"`
		Description    string   `json:"error_description"`
		RequiredScopes []string `json:"required_scopes"`
	}
	_ = json.Unmarshal(e.Data, &data)
	code := otc.CodeServerError
	switch e.Code {
	case -32001:
		code = otc.CodeUnauthenticated
	case -32002, -32003:
		code = otc.CodeForbidden
	case -32602, -32600:
		if e.Method != "tools/call" {
			return e
		}
		// The server refused the call before running the tool: an
		// unknown tool, malformed arguments. OTC answers these 400.
		return &otc.Error{Code: otc.CodeServerError, Message: truncate(e.Message, 512),
			DeveloperMessage: fmt.Sprintf("MCP tools/call answered JSON-RPC error %d", e.Code)}
	default:
		return e
	}
	return &otc.Error{Code: code, Message: e.Message, DeveloperMessage: data.Description, Reason: data.Error,
		RequiredScopes: data.RequiredScopes}
}

// incoming handles a message of the server that is not the answer being
// waited for: a notification, or a request of the server's, which is
// answered.
func (s *mcpSession) incoming(ctx context.Context, msg []byte) {
	var m struct {
		ID     json.RawMessage `json:"id"`
		Method string          `json:"method"`
		Params json.RawMessage `json:"params"`
	}
	if json.Unmarshal(msg, &m) != nil || m.Method == "" {
		return
	}
	if len(m.ID) == 0 || string(m.ID) == "null" {
		if f, ok := ctx.Value(callNotifyKey{}).(func(string, json.RawMessage)); ok {
			f(m.Method, m.Params)
		}
		s.notification(m.Method, m.Params)
		return
	}
	result, rerr := s.c.answer(ctx, m.Method, m.Params)
	reply := map[string]any{"jsonrpc": "2.0", "id": m.ID}
	if rerr != nil {
		reply["error"] = rerr
	} else {
		reply["result"] = result
	}
	body, err := json.Marshal(reply)
	if err != nil {
		body, _ = json.Marshal(map[string]any{"jsonrpc": "2.0", "id": m.ID, "error": &RPCError{Code: -32603, Message: "the client's answer could not be encoded"}})
	}
	_ = s.conn.send(ctx, s, body)
}

// refuse answers request id of the server's with an error saying why
// the client will not answer it.
func (s *mcpSession) refuse(ctx context.Context, id json.RawMessage, why string) {
	body, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": id, "error": &RPCError{Code: -32603, Message: why}})
	_ = s.conn.send(ctx, s, body)
}

// callNotifyKey carries a call's CallOptions.OnNotification to the
// reading of the call's own stream.
type callNotifyKey struct{}

// notification hands a notification to its progress callback and to
// Options.OnNotification.
func (s *mcpSession) notification(method string, params json.RawMessage) {
	if method == "notifications/progress" {
		var p struct {
			Token    json.RawMessage `json:"progressToken"`
			Progress float64         `json:"progress"`
			Total    float64         `json:"total"`
			Message  string          `json:"message"`
		}
		if json.Unmarshal(params, &p) == nil {
			if f, ok := s.progress.Load(tokenKey(p.Token)); ok {
				f.(func(Progress))(Progress{Progress: p.Progress, Total: p.Total, Message: p.Message})
			}
		}
	}
	if f := s.c.opts.OnNotification; f != nil {
		f(method, params)
	}
}

// tokenKey is a progress token as a map key: a string's value, a
// number's text.
func tokenKey(raw json.RawMessage) string {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	return string(raw)
}

// answer answers a request of a server's (MCP's elicitation/create,
// sampling/createMessage, roots/list, ping) with the handlers.
func (c *Client) answer(ctx context.Context, method string, params json.RawMessage) (any, *RPCError) {
	h := c.opts.Handlers
	if h == nil {
		h = &Handlers{}
	}
	fail := func(err error) *RPCError { return &RPCError{Code: -32603, Message: err.Error()} }
	switch method {
	case "ping":
		return map[string]any{}, nil
	case "elicitation/create":
		if h.Elicit != nil {
			var req ElicitRequest
			if err := json.Unmarshal(params, &req); err != nil {
				return nil, &RPCError{Code: -32602, Message: "Invalid params: " + err.Error()}
			}
			res, err := h.Elicit(ctx, &req)
			if err != nil {
				return nil, fail(err)
			}
			if res == nil {
				res = &ElicitResult{Action: "cancel"}
			}
			if res.Action == "accept" {
				res.Content = withDefaults(res.Content, req.RequestedSchema)
			}
			return res, nil
		}
	case "sampling/createMessage":
		if h.Sample != nil {
			res, err := h.Sample(ctx, params)
			if err != nil {
				return nil, fail(err)
			}
			return res, nil
		}
	case "roots/list":
		if h.Roots != nil {
			roots, err := h.Roots(ctx)
			if err != nil {
				return nil, fail(err)
			}
			if roots == nil {
				roots = []Root{}
			}
			return map[string]any{"roots": roots}, nil
		}
	}
	return nil, &RPCError{Code: -32601, Message: "Method not found: the client has no handler for " + truncate(method, 64)}
}

// withDefaults fills in the form's defaults for the fields an accepted
// answer leaves out, as the server asked for them.
func withDefaults(content map[string]any, schema json.RawMessage) map[string]any {
	var form struct {
		Properties map[string]struct {
			Default json.RawMessage `json:"default"`
		} `json:"properties"`
	}
	if json.Unmarshal(schema, &form) != nil {
		return content
	}
	for name, p := range form.Properties {
		if _, given := content[name]; given || len(p.Default) == 0 {
			continue
		}
		var v any
		if json.Unmarshal(p.Default, &v) == nil {
			if content == nil {
				content = map[string]any{}
			}
			content[name] = v
		}
	}
	return content
}

// list lists the tools, following cursors.
func (s *mcpSession) list(ctx context.Context) ([]otc.ToolDefinition, error) {
	var defs []otc.ToolDefinition
	cursor := ""
	for range mcpMaxPages {
		params := map[string]any{}
		if cursor != "" {
			params["cursor"] = cursor
		}
		var page struct {
			Tools []struct {
				Name         string               `json:"name"`
				Title        string               `json:"title"`
				Description  string               `json:"description"`
				InputSchema  json.RawMessage      `json:"inputSchema"`
				OutputSchema json.RawMessage      `json:"outputSchema"`
				Annotations  *otc.ToolAnnotations `json:"annotations"`
				Meta         json.RawMessage      `json:"_meta"`
			} `json:"tools"`
			NextCursor string `json:"nextCursor"`
		}
		if err := s.request(ctx, "tools/list", params, &page); err != nil {
			return nil, fmt.Errorf("otc client: list tools: %w", err)
		}
		for _, t := range page.Tools {
			if s.ver() == mcpV20260728 {
				hs, ok := paramHeaders(t.InputSchema)
				if !ok {
					continue // its x-mcp-header is invalid: it must not be called
				}
				s.headers.Store(t.Name, hs)
			}
			defs = append(defs, otc.ToolDefinition{ID: t.Name, Name: t.Name, Title: t.Title, Description: t.Description,
				InputSchema: otc.InputSchema{Parameters: t.InputSchema}, OutputSchema: t.OutputSchema,
				Annotations: t.Annotations, Meta: t.Meta})
		}
		if page.NextCursor == "" {
			return defs, nil
		}
		cursor = page.NextCursor
	}
	return nil, fmt.Errorf("otc client: list tools: tools/list gave more than %d pages", mcpMaxPages)
}

// health pings the server (2026-07-28 has no ping: server/discover).
func (s *mcpSession) health(ctx context.Context) error {
	if err := s.ensure(ctx); err != nil {
		return fmt.Errorf("otc client: health: %w", err)
	}
	method := "ping"
	if s.ver() == mcpV20260728 {
		method = "server/discover"
	}
	if err := s.request(ctx, method, map[string]any{}, nil); err != nil {
		return fmt.Errorf("otc client: health: %w", err)
	}
	return nil
}

func (s *mcpSession) close() error { return s.conn.close() }

// call calls a tool: tools/call, through 2026-07-28's input_required
// rounds and tasks.
func (s *mcpSession) call(ctx context.Context, k *call) (*Result, error) {
	return s.runTask(ctx, k, nil)
}

// start begins a call, and returns its task without waiting for it; a
// call the server answers within its request is done at once.
func (s *mcpSession) start(ctx context.Context, k *call) (*Task, error) {
	t := &Task{c: s.c, k: k}
	res, err := s.runTask(ctx, k, t)
	if t.ID == "" {
		t.done, t.res, t.err = true, res, err
		if err != nil && res == nil {
			return nil, err
		}
	}
	return t, nil
}

// runTask makes a call: tools/call through its input_required rounds;
// a task it becomes is followed to its end, or, when detached is not
// nil, handed back in it.
func (s *mcpSession) runTask(ctx context.Context, k *call, detached *Task) (*Result, error) {
	if f := k.opts.OnNotification; f != nil {
		ctx = context.WithValue(ctx, callNotifyKey{}, f)
	}
	meta := map[string]any{metaCallID: k.opts.CallID}
	if f := k.opts.Progress; f != nil {
		meta["progressToken"] = k.opts.CallID
		s.progress.Store(k.opts.CallID, f)
		defer s.progress.Delete(k.opts.CallID)
	}
	if o := k.opts; o.UserID != "" || len(o.Secrets) > 0 || len(o.Authorization) > 0 {
		meta[metaContext] = otc.CallContext{UserID: o.UserID, Secrets: o.Secrets, Authorization: o.Authorization}
	}
	args := k.input
	if args == nil {
		args = json.RawMessage(`{}`)
	}
	params := map[string]any{"name": k.toolID, "arguments": args, "_meta": meta}
	if hs, ok := s.headers.Load(k.toolID); ok {
		if h := mirrored(hs.([]paramHeader), args); len(h) > 0 {
			ctx = withHeaders(ctx, h)
		}
	}
	for round := 0; ; round++ {
		var raw json.RawMessage
		if err := s.request(ctx, "tools/call", params, &raw); err != nil {
			return nil, err
		}
		var head callAnswer
		if err := json.Unmarshal(raw, &head); err != nil {
			return nil, fmt.Errorf("tools/call: the result is not a CallToolResult: %w", err)
		}
		switch head.ResultType {
		case "input_required":
			if round >= mcpMaxRounds {
				return nil, fmt.Errorf("the tool asked for input %d times; the client stops there", mcpMaxRounds)
			}
			answers, err := s.c.answerAll(ctx, head.InputRequests)
			if err != nil {
				return nil, err
			}
			params["inputResponses"] = answers
			delete(params, "requestState")
			if head.RequestState != nil {
				params["requestState"] = *head.RequestState
			}
		case "task":
			if head.TaskID == "" {
				return nil, errors.New("tools/call: a task without a taskId")
			}
			first := time.Duration(head.PollIntervalMs) * time.Millisecond
			if head.Status != "working" && head.Status != "input_required" {
				first = 0
			}
			if detached != nil {
				detached.ID, detached.poll = head.TaskID, first
				return nil, nil
			}
			if f := k.opts.Progress; f != nil {
				f(Progress{TaskID: head.TaskID, State: head.Status}) // named before its first poll
			}
			raw, err := s.awaitTask(ctx, k, head.TaskID, first, time.Duration(head.PollIntervalMs)*time.Millisecond)
			if err != nil {
				return nil, err
			}
			return decodeCallResult(k.opts.CallID, raw)
		default:
			return head.result(k.opts.CallID, raw)
		}
	}
}

// answerAll answers the questions of an input_required result or task,
// by their keys. A round has no way to decline a request: a question
// without a handler fails the call.
func (c *Client) answerAll(ctx context.Context, reqs map[string]json.RawMessage) (map[string]any, error) {
	if len(reqs) == 0 {
		return nil, errors.New("input_required without inputRequests")
	}
	out := make(map[string]any, len(reqs))
	for _, key := range slices.Sorted(maps.Keys(reqs)) {
		var r struct {
			Method string          `json:"method"`
			Params json.RawMessage `json:"params"`
		}
		if err := json.Unmarshal(reqs[key], &r); err != nil {
			return nil, fmt.Errorf("input request %q: %w", truncate(key, 64), err)
		}
		res, rerr := c.answer(ctx, r.Method, r.Params)
		if rerr != nil && ctx.Err() != nil {
			return nil, ctx.Err() // the call ended while its handler answered
		}
		if rerr != nil {
			return nil, fmt.Errorf("the tool asked for %s, and the client cannot answer: %s (set a handler in Options.Handlers)", truncate(r.Method, 64), rerr.Message)
		}
		out[key] = res
	}
	return out, nil
}

// awaitTask polls task id until it ends, answering its questions, and
// returns its result. When ctx ends, the task is cancelled.
func (s *mcpSession) awaitTask(ctx context.Context, k *call, id string, first, poll time.Duration) (json.RawMessage, error) {
	wait := min(first, maxPoll)
	for {
		poll = min(max(poll, minPoll), maxPoll)
		if err := sleep(ctx, wait); err != nil {
			return nil, s.cancelTask(ctx, id, err)
		}
		wait = poll
		var t struct {
			Status         string                     `json:"status"`
			StatusMessage  string                     `json:"statusMessage"`
			PollIntervalMs int64                      `json:"pollIntervalMs"`
			InputRequests  map[string]json.RawMessage `json:"inputRequests"`
			Result         json.RawMessage            `json:"result"`
			Error          *RPCError                  `json:"error"`
		}
		if err := s.request(ctx, "tasks/get", map[string]any{"taskId": id}, &t); err != nil {
			if ctx.Err() != nil {
				return nil, s.cancelTask(ctx, id, err)
			}
			return nil, err
		}
		if t.PollIntervalMs > 0 {
			poll = time.Duration(t.PollIntervalMs) * time.Millisecond
		}
		if f := k.opts.Progress; f != nil {
			f(Progress{TaskID: id, State: t.Status, Message: t.StatusMessage})
		}
		switch t.Status {
		case "completed":
			if len(t.Result) == 0 {
				return nil, fmt.Errorf("task %s completed without its result", id)
			}
			return t.Result, nil
		case "failed":
			if t.Error != nil {
				t.Error.Method = "tasks/get"
				return nil, t.Error.asError()
			}
			return nil, &otc.Error{Code: otc.CodeServerError, Message: "The task failed: " + t.StatusMessage}
		case "cancelled":
			return nil, &otc.Error{Code: otc.CodeServerError, Message: "The task was cancelled"}
		case "input_required":
			answers, err := s.c.answerAll(ctx, t.InputRequests)
			if err != nil {
				return nil, s.cancelTask(ctx, id, err)
			}
			if err := s.request(ctx, "tasks/update", map[string]any{"taskId": id, "inputResponses": answers}, nil); err != nil {
				if ctx.Err() != nil {
					return nil, s.cancelTask(ctx, id, err)
				}
				return nil, err
			}
			wait = 0
		case "working":
		default:
			return nil, fmt.Errorf("task %s: status %q is not one of MCP's", id, truncate(t.Status, 32))
		}
	}
}

// wait follows the task id to its end.
func (s *mcpSession) wait(ctx context.Context, t *Task) (*Result, error) {
	raw, err := s.awaitTask(ctx, t.k, t.ID, t.poll, t.poll)
	if err != nil {
		return nil, err
	}
	return decodeCallResult(t.k.opts.CallID, raw)
}

// status reads the task's status once.
func (s *mcpSession) status(ctx context.Context, id string) (TaskStatus, error) {
	var t struct {
		Status        string `json:"status"`
		StatusMessage string `json:"statusMessage"`
	}
	if err := s.request(ctx, "tasks/get", map[string]any{"taskId": id}, &t); err != nil {
		return TaskStatus{}, err
	}
	return TaskStatus{State: t.Status, Message: t.StatusMessage}, nil
}

// cancel cancels the task.
func (s *mcpSession) cancel(ctx context.Context, id string) error {
	return s.request(ctx, "tasks/cancel", map[string]any{"taskId": id}, nil)
}

// cancelTask sends tasks/cancel for a task whose call ends with cause,
// and returns cause (joined with the failure to cancel, if any).
func (s *mcpSession) cancelTask(ctx context.Context, id string, cause error) error {
	cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), mcpCancelWait)
	defer cancel()
	if err := s.rpc(cctx, s.ver(), "tasks/cancel", map[string]any{"taskId": id}, nil); err != nil {
		return errors.Join(cause, fmt.Errorf("cancelling task %s: %w", id, err))
	}
	return cause
}

// callAnswer is a tools/call result: a CallToolResult, or in 2026-07-28
// an input_required round or a task.
type callAnswer struct {
	ResultType     string                     `json:"resultType"`
	InputRequests  map[string]json.RawMessage `json:"inputRequests"`
	RequestState   *string                    `json:"requestState"`
	TaskID         string                     `json:"taskId"`
	Status         string                     `json:"status"`
	PollIntervalMs int64                      `json:"pollIntervalMs"`

	Content []struct {
		Type string `json:"type"`
		Text string `json:"text"`
	} `json:"content"`
	Structured json.RawMessage            `json:"structuredContent"`
	IsError    bool                       `json:"isError"`
	Meta       map[string]json.RawMessage `json:"_meta"`
}

// decodeCallResult reads a CallToolResult: the tool's value, its error,
// or the refusal it reports.
func decodeCallResult(callID string, raw json.RawMessage) (*Result, error) {
	var res callAnswer
	if err := json.Unmarshal(raw, &res); err != nil {
		return nil, fmt.Errorf("tools/call: the result is not a CallToolResult: %w", err)
	}
	return res.result(callID, raw)
}

// result is the outcome a CallToolResult reports: the tool's value, its
// error, or the refusal. A value is the structuredContent (unwrapped from
// {"result": v} when that is all it holds), else the text blocks joined,
// as a JSON string.
func (res *callAnswer) result(callID string, raw json.RawMessage) (*Result, error) {
	out := &Result{CallID: callID, Raw: raw}
	var text []string
	for _, c := range res.Content {
		if c.Type == "text" {
			text = append(text, c.Text)
		}
	}
	if res.IsError {
		var info struct {
			Code                string                   `json:"code"`
			CanRetry            bool                     `json:"can_retry"`
			RetryAfterMS        int64                    `json:"retry_after_ms"`
			ParameterErrors     map[string]string        `json:"parameter_errors"`
			MissingRequirements *otc.MissingRequirements `json:"missing_requirements"`
		}
		if m, ok := res.Meta[metaError]; ok {
			_ = json.Unmarshal(m, &info)
		}
		msg := strings.Join(text, "\n")
		after := retryMS(info.RetryAfterMS)
		switch info.Code {
		case otc.CodeInvalidInput.String():
			return nil, &otc.Error{Code: otc.CodeInvalidInput, Message: "Some input parameters are invalid", ParameterErrors: info.ParameterErrors}
		case otc.CodeRateLimited.String(), otc.CodeUnavailable.String():
			code := otc.CodeRateLimited
			if info.Code == otc.CodeUnavailable.String() {
				code = otc.CodeUnavailable
			}
			return nil, &otc.Error{Code: code, Message: firstParagraph(msg), RetryAfter: after}
		}
		if info.MissingRequirements != nil {
			return nil, &otc.Error{Code: otc.CodeServerError, Message: firstParagraph(msg), MissingRequirements: info.MissingRequirements}
		}
		te := &otc.ToolError{CanRetry: info.CanRetry, RetryAfter: after}
		// The text is for a model: the message, then any further
		// paragraphs (a hint; the retry sentence, which CanRetry says).
		paras := strings.Split(msg, "\n\n")
		if n := len(paras); n > 1 && info.CanRetry && strings.HasPrefix(paras[n-1], modeltext.RetrySentence) {
			paras = paras[:n-1]
		}
		te.Message = paras[0]
		if te.Message == "" {
			te.Message = "the tool failed without a message"
		}
		te.AdditionalPromptContent = strings.Join(paras[1:], "\n\n")
		return out, te
	}
	if len(res.Structured) > 0 && string(res.Structured) != "null" {
		out.Value = unwrapResult(res.Structured)
		return out, nil
	}
	if len(text) > 0 {
		out.Value, _ = json.Marshal(strings.Join(text, "\n"))
	}
	return out, nil
}

// firstParagraph is a model's text up to its first blank line.
func firstParagraph(s string) string {
	p, _, _ := strings.Cut(s, "\n\n")
	return p
}

// truncate cuts a server's string for a message, on a character
// boundary.
func truncate(s string, n int) string { return wire.Truncate(s, n) }
