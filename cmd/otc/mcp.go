package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"

	"github.com/otcgo/otc"
	"github.com/otcgo/otc/client"
	"github.com/otcgo/otc/mcp"
)

// mcpServer talks to an MCP endpoint over Streamable HTTP, one JSON-RPC
// request per POST, at protocol version 2025-11-25, without a session:
// the requests otc needs (tools/list, tools/call) carry all they need.
type mcpServer struct {
	url    string
	apiKey string
	bearer string
	http   *http.Client
	nextID int
	// notify, when not nil, gets each notification the server sends
	// while a call runs (progress, logs), and calls ask for progress.
	notify func(msg json.RawMessage)
	// result, when not nil, gets the raw result of each tools/call.
	result func(res json.RawMessage)
	// ask, when not nil, answers the requests the server sends while a
	// call runs (ask.go); the call then declares the elicitation
	// capability. Nil answers every such request with an error.
	ask *inputAnswerer
	// status, when not nil, is shown each status a polled task reports.
	status func(taskStatus)
	// modern speaks protocol version 2026-07-28 with the tasks extension
	// declared (task.go), for otc call --task.
	modern bool
}

// errNotProtocol is a server answer that is not MCP's.
var errNotProtocol = errors.New("not an MCP answer")

// rpcFailure is a JSON-RPC error answer.
type rpcFailure struct {
	Code    int             `json:"code"`
	Message string          `json:"message"`
	Data    json.RawMessage `json:"data"`
}

func (e *rpcFailure) Error() string { return fmt.Sprintf("%s (JSON-RPC error %d)", e.Message, e.Code) }

// maxMCPAnswer bounds an answer, as the client package bounds its own.
const maxMCPAnswer = client.DefaultMaxResponseBytes

// request sends one JSON-RPC request and decodes its result into out.
func (m *mcpServer) request(ctx context.Context, method string, params any, out any) error {
	m.nextID++
	name := ""
	if p, ok := params.(map[string]any); ok {
		meta, _ := p["_meta"].(map[string]any)
		if m.modern {
			if meta == nil {
				meta = map[string]any{}
			}
			meta["io.modelcontextprotocol/protocolVersion"] = mcp.Version20260728
			meta["io.modelcontextprotocol/clientCapabilities"] = m.capabilities()
		} else if meta != nil && method == "tools/call" {
			meta["io.modelcontextprotocol/clientCapabilities"] = m.capabilities()
		}
		if meta != nil {
			p["_meta"] = meta
		}
		name, _ = p["name"].(string)
		if id, ok := p["taskId"].(string); ok {
			name = id
		}
	}
	body, err := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": m.nextID, "method": method, "params": params})
	if err != nil {
		return err
	}
	ctx, stop := context.WithCancel(ctx)
	defer stop()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, m.url, bytes.NewReader(body))
	if err != nil {
		return err
	}
	m.headers(req.Header)
	if m.modern {
		req.Header.Set("Mcp-Method", method)
		if name != "" {
			req.Header.Set("Mcp-Name", name)
		}
	}
	resp, err := m.http.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode == http.StatusUnauthorized || resp.StatusCode == http.StatusForbidden {
		return &otc.Error{Code: otc.CodeUnauthenticated, Message: fmt.Sprintf("The MCP server refused the credentials (%d %s)", resp.StatusCode, http.StatusText(resp.StatusCode)),
			DeveloperMessage: "give --api-key or --bearer"}
	}
	raw, err := readAnswer(resp, m.nextID, func(msg json.RawMessage) {
		if m.serverRequest(ctx, msg) {
			stop() // a question otc could not put to its user: the call ends here
		}
	})
	if m.ask != nil && m.ask.refused != nil {
		return m.ask.refused
	}
	if err != nil {
		return fmt.Errorf("POST %s (%s): %w", m.url, method, err)
	}
	var answer struct {
		Result json.RawMessage `json:"result"`
		Error  *rpcFailure     `json:"error"`
	}
	if err := json.Unmarshal(raw, &answer); err != nil {
		return fmt.Errorf("POST %s (%s): %w: %v", m.url, method, errNotProtocol, err)
	}
	if answer.Error != nil {
		return answer.Error
	}
	return json.Unmarshal(answer.Result, out)
}

// readAnswer returns the JSON-RPC response of request id: the body, or
// the matching event of an SSE stream, whose other messages go to notify.
func readAnswer(resp *http.Response, id int, notify func(json.RawMessage)) ([]byte, error) {
	body := io.LimitReader(resp.Body, maxMCPAnswer)
	ct := resp.Header.Get("Content-Type")
	switch {
	case strings.HasPrefix(ct, "text/event-stream"):
		sc := bufio.NewScanner(body)
		sc.Buffer(nil, maxMCPAnswer)
		var data bytes.Buffer
		for sc.Scan() {
			line := sc.Text()
			if rest, ok := strings.CutPrefix(line, "data:"); ok {
				data.WriteString(strings.TrimPrefix(rest, " "))
				continue
			}
			if line == "" && data.Len() > 0 {
				var msg struct {
					ID json.RawMessage `json:"id"`
				}
				if json.Unmarshal(data.Bytes(), &msg) == nil && string(msg.ID) == fmt.Sprint(id) {
					return data.Bytes(), nil
				}
				if json.Valid(data.Bytes()) {
					notify(bytes.Clone(data.Bytes()))
				}
				data.Reset()
			}
		}
		return nil, fmt.Errorf("%w: the event stream ended without the answer", errNotProtocol)
	case strings.HasPrefix(ct, "application/json"):
		return io.ReadAll(body)
	}
	head, _ := io.ReadAll(io.LimitReader(body, 200))
	return nil, fmt.Errorf("%w: status %d, Content-Type %q: %q", errNotProtocol, resp.StatusCode, ct, head)
}

// headers sets the headers of every request to the server.
func (m *mcpServer) headers(h http.Header) {
	h.Set("Content-Type", "application/json")
	h.Set("Accept", "application/json, text/event-stream")
	if m.modern {
		h.Set("MCP-Protocol-Version", mcp.Version20260728)
	} else {
		h.Set("MCP-Protocol-Version", mcp.Version20251125)
	}
	setCredentials(h, m.apiKey, m.bearer)
}

// capabilities are the client capabilities otc declares: elicitation
// when it may answer one (even where it cannot prompt, so that a tool
// that asks before it acts does not act unasked), and the tasks
// extension when it speaks 2026-07-28.
func (m *mcpServer) capabilities() map[string]any {
	caps := map[string]any{}
	if m.ask != nil {
		caps["elicitation"] = map[string]any{}
	}
	if m.modern {
		caps["extensions"] = map[string]any{mcp.ExtensionTasks: map[string]any{}}
	}
	return caps
}

// serverRequest handles a message of a call's stream that is not its
// answer: a notification goes to m.notify, a request of the server
// (elicitation/create, sampling/createMessage, …) is answered with a POST
// of its own. It reports whether the call should stop: the tool asked
// its user something otc cannot ask.
func (m *mcpServer) serverRequest(ctx context.Context, msg json.RawMessage) bool {
	var r struct {
		ID     json.RawMessage `json:"id"`
		Method string          `json:"method"`
		Params json.RawMessage `json:"params"`
	}
	if json.Unmarshal(msg, &r) != nil || r.Method == "" {
		return false
	}
	if len(r.ID) == 0 || string(r.ID) == "null" {
		if m.notify != nil {
			m.notify(msg)
		}
		return false
	}
	var result json.RawMessage
	err := error(&errDeclined{code: -32601, message: "otc call answers no requests here"})
	if m.ask != nil {
		result, err = m.ask.answer(r.Method, r.Params)
	}
	reply := map[string]any{"jsonrpc": "2.0", "id": r.ID}
	if err != nil {
		code := -32603
		var d *errDeclined
		if errors.As(err, &d) {
			code = d.code
		}
		reply["error"] = map[string]any{"code": code, "message": err.Error()}
	} else {
		reply["result"] = result
	}
	body, _ := json.Marshal(reply)
	req, rerr := http.NewRequestWithContext(ctx, http.MethodPost, m.url, bytes.NewReader(body))
	if rerr == nil {
		m.headers(req.Header)
		if resp, derr := m.http.Do(req); derr == nil {
			_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 4096))
			resp.Body.Close()
		}
	}
	return m.ask != nil && m.ask.refused != nil
}

// maxPages bounds tools/list pagination against a server that never ends.
const maxPages = 100

// list lists the tools, following cursors.
func (m *mcpServer) list(ctx context.Context) ([]otc.ToolDefinition, error) {
	raw, err := m.listRaw(ctx)
	if err != nil {
		return nil, err
	}
	defs := make([]otc.ToolDefinition, 0, len(raw))
	for _, r := range raw {
		var t struct {
			Name        string          `json:"name"`
			Description string          `json:"description"`
			InputSchema json.RawMessage `json:"inputSchema"`
		}
		if err := json.Unmarshal(r, &t); err != nil {
			return nil, fmt.Errorf("%w: a tool of tools/list: %v", errNotProtocol, err)
		}
		defs = append(defs, otc.ToolDefinition{ID: t.Name, Name: t.Name, Description: t.Description,
			InputSchema: otc.InputSchema{Parameters: t.InputSchema}})
	}
	return defs, nil
}

// listRaw lists the tools as the server sends them, following cursors.
func (m *mcpServer) listRaw(ctx context.Context) ([]json.RawMessage, error) {
	var tools []json.RawMessage
	cursor := ""
	for range maxPages {
		params := map[string]any{}
		if cursor != "" {
			params["cursor"] = cursor
		}
		var page struct {
			Tools      []json.RawMessage `json:"tools"`
			NextCursor string            `json:"nextCursor"`
		}
		if err := m.request(ctx, "tools/list", params, &page); err != nil {
			return nil, err
		}
		tools = append(tools, page.Tools...)
		if page.NextCursor == "" {
			return tools, nil
		}
		cursor = page.NextCursor
	}
	return nil, fmt.Errorf("%w: tools/list gave more than %d pages", errNotProtocol, maxPages)
}

// call calls a tool: its value, or the tool error, or a failure.
func (m *mcpServer) call(ctx context.Context, tool string, input json.RawMessage, opts *client.CallOptions) (json.RawMessage, string, *otc.ToolError, error) {
	callID := opts.CallID
	if callID == "" {
		callID = otc.NewCallID()
	}
	meta := map[string]any{mcp.MetaCallID: callID}
	if m.notify != nil {
		meta["progressToken"] = callID
	}
	if len(opts.Secrets) > 0 || opts.UserID != "" {
		meta[mcp.MetaContext] = otc.CallContext{Secrets: opts.Secrets, UserID: opts.UserID}
	}
	var raw json.RawMessage
	params := map[string]any{"name": tool, "arguments": input, "_meta": meta}
	var err error
	if m.modern {
		raw, err = m.callModern(ctx, params) // task.go
	} else {
		err = m.request(ctx, "tools/call", params, &raw)
	}
	if err == nil && m.result != nil {
		m.result(raw)
	}
	value, te, err := decodeResult(raw, err)
	return value, callID, te, err
}

// decodeResult reads a CallToolResult: the tool's value, its error, or
// the failure err or the result itself is.
func decodeResult(raw json.RawMessage, err error) (json.RawMessage, *otc.ToolError, error) {
	var res struct {
		Content []struct {
			Type string `json:"type"`
			Text string `json:"text"`
		} `json:"content"`
		Structured json.RawMessage `json:"structuredContent"`
		IsError    bool            `json:"isError"`
		Meta       map[string]struct {
			Code                string                   `json:"code"`
			CanRetry            bool                     `json:"can_retry"`
			RetryAfterMS        int64                    `json:"retry_after_ms"`
			ParameterErrors     map[string]string        `json:"parameter_errors"`
			MissingRequirements *otc.MissingRequirements `json:"missing_requirements"`
		} `json:"_meta"`
	}
	if err == nil {
		err = json.Unmarshal(raw, &res)
	}
	if err != nil {
		var rf *rpcFailure
		if errors.As(err, &rf) {
			return nil, nil, &otc.Error{Code: otc.CodeServerError, Message: rf.Message}
		}
		return nil, nil, err
	}
	var text []string
	for _, c := range res.Content {
		if c.Type == "text" {
			text = append(text, c.Text)
		}
	}
	if res.IsError {
		info := res.Meta[mcp.MetaError]
		switch {
		case info.Code == otc.CodeInvalidInput.String():
			return nil, nil, &otc.Error{Code: otc.CodeInvalidInput, Message: "Some input parameters are invalid", ParameterErrors: info.ParameterErrors}
		case info.MissingRequirements != nil:
			return nil, nil, &otc.Error{Code: otc.CodeServerError, Message: strings.Join(text, "\n"), MissingRequirements: info.MissingRequirements}
		}
		te := &otc.ToolError{CanRetry: info.CanRetry, RetryAfter: time.Duration(info.RetryAfterMS) * time.Millisecond}
		// The text is for a model: the message, then any further
		// paragraphs (a hint; a retry sentence, which CanRetry says).
		paras := strings.Split(strings.Join(text, "\n"), "\n\n")
		if n := len(paras); n > 1 && info.CanRetry && strings.HasPrefix(paras[n-1], "This may succeed") {
			paras = paras[:n-1]
		}
		te.Message = paras[0]
		te.AdditionalPromptContent = strings.Join(paras[1:], "\n\n")
		return nil, te, nil
	}
	if len(res.Structured) > 0 {
		var wrapped struct {
			Result json.RawMessage `json:"result"`
		}
		var obj map[string]json.RawMessage
		if json.Unmarshal(res.Structured, &obj) == nil && len(obj) == 1 && json.Unmarshal(res.Structured, &wrapped) == nil && wrapped.Result != nil {
			return wrapped.Result, nil, nil
		}
		return res.Structured, nil, nil
	}
	if len(text) == 0 {
		return nil, nil, nil
	}
	b, _ := json.Marshal(strings.Join(text, "\n"))
	return b, nil, nil
}
