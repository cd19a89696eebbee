package mcp

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"errors"
	"maps"
	"slices"
	"sort"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/otcgo/otc"
	"github.com/otcgo/otc/internal/jsonrpc"
	"github.com/otcgo/otc/internal/mcpwire"
	"github.com/otcgo/otc/internal/modeltext"
	"github.com/otcgo/otc/internal/wire"
)

// listing is the MCP view of one revision of the registry's catalog: the
// highest version of each tool, by name, encoded once.
type listing struct {
	revision uint64
	names    []string          // sorted
	encoded  map[string][]byte // name → the MCP Tool object
	ids      map[string]string // name → the versioned id of the version listed
	// iconless holds, for the tools with icons, the Tool object without
	// them, as 2025-06-18 (which has no icons) lists it.
	iconless map[string][]byte
	headers  map[string][]headerParam
}

// headerParam is a parameter whose value a 2026-07-28 client mirrors into
// the Mcp-Param-{Name} header (the x-mcp-header schema extension).
type headerParam struct {
	header string   // the {Name} part
	path   []string // the chain of properties from the root
}

// listings caches the listing of a registry, rebuilt when the registry's
// revision moves on. Reading it takes no lock; rebuilding does, so that
// one rebuild serves every request that finds the cache stale.
type listings struct {
	mu      sync.Mutex
	current atomic.Pointer[listing]
}

func (l *listings) get(reg *otc.Registry) *listing {
	rev := reg.Revision()
	if cur := l.current.Load(); cur != nil && cur.revision == rev {
		return cur
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if cur := l.current.Load(); cur != nil && cur.revision == rev {
		return cur
	}
	cur := buildListing(reg, rev)
	l.current.Store(cur)
	return cur
}

// buildListing encodes the tools of the registry as MCP lists them.
func buildListing(reg *otc.Registry, rev uint64) *listing {
	defs := reg.Tools()
	latest := make(map[string]otc.ToolDefinition, len(defs))
	for _, d := range defs { // catalog order: ascending versions
		if d.Policy.AllowsProtocol(otc.ProtocolMCP) { // a tool kept off MCP is not listed
			latest[d.Name] = d
		}
	}
	l := &listing{
		revision: rev,
		names:    slices.Sorted(maps.Keys(latest)),
		encoded:  make(map[string][]byte, len(latest)),
		ids:      make(map[string]string, len(latest)),
		iconless: map[string][]byte{},
		headers:  map[string][]headerParam{},
	}
	for name, d := range latest {
		l.encoded[name] = EncodeTool(d)
		l.ids[name] = d.ID
		if d.Icons != nil {
			l.iconless[name] = mcpwire.EncodeTool(d, false)
		}
		if hp := headerParams(d.InputSchema.Parameters); hp != nil {
			l.headers[name] = hp
		}
	}
	return l
}

// EncodeTool returns the MCP Tool object of a registry tool: its name,
// title, description, input schema and, when the tool returns a value that
// is not [otc.Content], its output schema (a schema of anything but an
// object is wrapped as {"result": ...}, as the call's structuredContent
// is), then its annotations (the hints it states, and no others), icons
// and _meta. Empty fields are left out. This is the object of protocol
// versions 2025-11-25 and 2026-07-28; tools/list leaves the icons out for
// a 2025-06-18 client, whose version has none. The bridge to the official
// SDK lists tools with it.
func EncodeTool(def otc.ToolDefinition) json.RawMessage {
	return mcpwire.EncodeTool(def, true)
}

// headerParams finds the x-mcp-header annotations of an input schema:
// those on properties reached from the root through "properties" alone.
func headerParams(schema json.RawMessage) []headerParam {
	if !bytes.Contains(schema, []byte(`"x-mcp-header"`)) {
		return nil
	}
	var root map[string]any
	if json.Unmarshal(schema, &root) != nil {
		return nil
	}
	var out []headerParam
	var walk func(node map[string]any, path []string)
	walk = func(node map[string]any, path []string) {
		props, _ := node["properties"].(map[string]any)
		for _, name := range slices.Sorted(maps.Keys(props)) {
			p, _ := props[name].(map[string]any)
			if p == nil {
				continue
			}
			at := append(slices.Clone(path), name)
			if h, ok := p["x-mcp-header"].(string); ok && h != "" {
				out = append(out, headerParam{header: h, path: at})
			}
			walk(p, at)
		}
	}
	walk(root, nil)
	return out
}

// visibleNames returns the names of the listing whose listed version v
// sees, sorted. A tool whose listed version the caller may not see is
// left out, even when it may see an older one: a call by the bare name
// reaches the listed version, and would be refused.
func (l *listing) visibleNames(v otc.Visibility) []string {
	names := make([]string, 0, len(l.names))
	for _, name := range l.names {
		if v.Sees(l.ids[name]) {
			names = append(names, name)
		}
	}
	return names
}

// page returns the encoded tools/list result for a cursor, over names (the
// listing's, or those a caller sees), in protocol version, or in the
// latest of the initialize era when version is "".
func (l *listing) page(names []string, cursor string, hasCursor bool, size int, version string, extra []byte) ([]byte, *rpcError) {
	v := mcpwire.LookupServed(version) // once, not for each tool
	iconless := v != nil && !v.Icons
	tool := func(name string) []byte {
		if iconless {
			if b, ok := l.iconless[name]; ok {
				return b
			}
		}
		return l.encoded[name]
	}
	start := 0
	if hasCursor {
		after, err := base64.RawURLEncoding.DecodeString(cursor)
		if err != nil || len(after) == 0 {
			return nil, newError(codeInvalidParams, "Invalid cursor: pass the nextCursor of the previous page, or no cursor for the first page")
		}
		start = sort.SearchStrings(names, string(after))
		if start < len(names) && names[start] == string(after) {
			start++
		}
	}
	end := len(names)
	if size > 0 && end-start > size {
		end = start + size
	}
	n := 64 + len(extra)
	for _, name := range names[start:end] {
		n += len(tool(name)) + 1
	}
	b := make([]byte, 0, n) // one allocation, however long the page
	b = append(b, `{"`+mcpwire.MemberTools+`":[`...)
	for i, name := range names[start:end] {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, tool(name)...)
	}
	b = append(b, ']')
	if end < len(names) {
		b = mcpwire.AppendNextCursor(b, base64.RawURLEncoding.EncodeToString([]byte(names[end-1])))
	}
	b = append(b, extra...)
	return append(b, '}'), nil
}

// EncodeCallResult renders the outcome of [otc.Registry.Call] as an MCP
// CallToolResult. A value becomes structuredContent (wrapped as
// {"result": v} unless it is an object) and a text block: the string
// itself for a string, the value's JSON for anything else;
// [otc.Content] becomes its blocks. A tool error, invalid input, missing
// requirements or a refusal by middleware become a result whose isError is
// true, with text a model can act on and the details under [MetaError].
// An unknown tool is a protocol error: EncodeCallResult then returns a
// non-nil *Error instead (-32602), as it does for a call a tool's
// [otc.Policy] refused (-32001 or -32002, with the reason in Data) and for
// a call id reused for a different call (-32602, with data.error
// "call_id_reused"). Arguments that are not a JSON object are one too, but
// a server must refuse them before calling the registry, whose error for
// them is a plain refusal.
func EncodeCallResult(res otc.CallResult, err error) (json.RawMessage, *Error) {
	b, e := appendCallResult(nil, res, err, nil)
	if e != nil {
		return nil, e
	}
	return b, nil
}

// Error is a JSON-RPC error a tools/call is answered with instead of a
// result: its Code; its Message, safe to show to a user; and its Data,
// nil for none: for a refusal by a tool's policy, {"error": reason,
// "error_description": ...}, with "required_scopes" (an array of strings)
// when the refusal names the OAuth scopes to ask for. It is the JSON-RPC
// error type the server answers every request with.
type Error = jsonrpc.Error[any]

// appendCallResult appends the CallToolResult of a call. info, for a
// 2026-07-28 request, is the serverInfo member its result's _meta carries;
// the result then also has its resultType.
func appendCallResult(dst []byte, res otc.CallResult, err error, info []byte) ([]byte, *rpcError) {
	if err != nil {
		return appendCallError(dst, err, info)
	}
	if te := res.Error; te != nil {
		return appendToolError(dst, te, info), nil
	}
	switch {
	case res.Content:
		dst = append(dst, `{"content":`...)
		dst = append(dst, res.Value...)
	case res.Value == nil:
		dst = append(dst, `{"content":[]`...)
	default:
		dst = append(dst, `{"content":[{"type":"text","text":`...)
		if res.Value[0] == '"' {
			// A string is its own text: the JSON string that encodes the
			// value encodes the text block's text too.
			dst = append(dst, res.Value...)
		} else {
			dst = wire.AppendString(dst, string(res.Value))
		}
		dst = append(dst, `}],"structuredContent":`...)
		if res.Value[0] == '{' {
			dst = append(dst, res.Value...)
		} else {
			dst = append(dst, `{"result":`...)
			dst = append(dst, res.Value...)
			dst = append(dst, '}')
		}
	}
	if info != nil {
		dst = append(dst, `,"_meta":{`...)
		dst = append(dst, info...)
		dst = append(dst, '}')
	}
	return appendResultEnd(dst, info), nil
}

// appendResultEnd closes a call result, with its resultType in 2026-07-28.
func appendResultEnd(dst, info []byte) []byte {
	if info != nil {
		dst = append(dst, callExtra...)
	}
	return append(dst, '}')
}

// appendToolError appends the isError result of a failed tool function.
func appendToolError(dst []byte, te *otc.ToolError, info []byte) []byte {
	text := modeltext.ToolError(te.Message, te.AdditionalPromptContent, te.CanRetry, te.RetryAfter)
	meta := toolErrorMeta{Code: "tool_error", CanRetry: te.CanRetry}
	if te.RetryAfter > 0 {
		ms := (te.RetryAfter + time.Millisecond - 1) / time.Millisecond
		meta.RetryAfterMS = int64(ms)
	}
	return appendErrorResult(dst, text, meta, info)
}

type toolErrorMeta struct {
	Code                string                   `json:"code"`
	CanRetry            bool                     `json:"can_retry"`
	RetryAfterMS        int64                    `json:"retry_after_ms,omitempty"`
	ParameterErrors     map[string]string        `json:"parameter_errors,omitempty"`
	MissingRequirements *otc.MissingRequirements `json:"missing_requirements,omitempty"`
}

// appendCallError renders a failure before the function ran.
func appendCallError(dst []byte, err error, info []byte) ([]byte, *rpcError) {
	if errors.Is(err, otc.ErrToolNotFound) {
		e, _ := errors.AsType[*otc.Error](err)
		msg := "Unknown tool"
		if e != nil {
			msg = e.Message
		}
		return nil, &rpcError{Code: codeInvalidParams, Message: msg}
	}
	e, ok := errors.AsType[*otc.Error](err)
	if !ok {
		e = &otc.Error{Code: otc.CodeServerError, Message: "The call was refused"}
	}
	if errors.Is(err, otc.ErrCallIDReused) {
		// A client's mistake, not the model's: the call id in _meta names
		// an earlier call of another tool or with other arguments.
		return nil, &rpcError{Code: codeInvalidParams, Message: e.Message, Data: mcpwire.RefusalData{Error: "call_id_reused", Description: e.DeveloperMessage}}
	}
	if e.Reason != "" {
		return nil, policyError(e, forbiddenCodeOf(info))
	}
	meta := toolErrorMeta{Code: e.Code.String()}
	text := e.Message
	switch {
	case e.Code == otc.CodeInvalidInput && len(e.ParameterErrors) > 0:
		meta.ParameterErrors = e.ParameterErrors
		text = modeltext.InvalidArguments(e.ParameterErrors)
	case e.MissingRequirements != nil:
		meta.MissingRequirements = e.MissingRequirements
		text += ". The client sends them in _meta[\"" + MetaContext + "\"]."
	case e.Code == otc.CodeRateLimited || e.Code == otc.CodeUnavailable:
		// Over its rate limit, or the server cannot decide yet: a call
		// the model may make again, after the delay.
		meta.CanRetry = true
		meta.RetryAfterMS = (e.RetryAfter + time.Millisecond - 1).Milliseconds()
		text = modeltext.ToolError(e.Message, "", true, e.RetryAfter)
	}
	return appendErrorResult(dst, text, meta, info), nil
}

// JSON-RPC codes of a call refused by a tool's policy: -32001 for a
// missing or refused token, -32002 for a refusal by the policy itself, as
// other MCP gateways answer them. Protocol version 2026-07-28 reserves
// -32002, so its refusals use -32003.
const (
	codeUnauthorizedCall = mcpwire.CodeUnauthorized
	codeForbiddenCall    = mcpwire.CodeForbidden
	codeForbiddenModern  = mcpwire.CodeForbiddenModern
)

// policyError is the JSON-RPC error of a call refused by a tool's policy,
// with the refusal's reason in data.error, and 401 or 403 over HTTP.
func policyError(e *otc.Error, forbidden int) *rpcError {
	out := &rpcError{Code: forbidden, Message: e.Message, Status: 403, Refusal: e}
	if e.Code == otc.CodeUnauthenticated {
		out.Code, out.Status = codeUnauthorizedCall, 401
	}
	out.Data = refusalData(e)
	return out
}

// refusalData is the data member of a refusal that carries a reason:
// {"error": reason, "error_description": developer message,
// "required_scopes": [...]}, the last two when there is something to say.
// The names are OAuth's (RFC 6750 §3), as MCP clients that sign in read
// them; required_scopes is the scope of the WWW-Authenticate challenge,
// as an array.
func refusalData(e *otc.Error) mcpwire.RefusalData {
	return mcpwire.RefusalData{Error: e.Reason, Description: e.DeveloperMessage, RequiredScopes: e.RequiredScopes}
}

func appendErrorResult(dst []byte, text string, meta toolErrorMeta, info []byte) []byte {
	dst = append(dst, `{"content":[{"type":"text","text":`...)
	dst = wire.AppendString(dst, text)
	dst = append(dst, `}],"isError":true,"_meta":{"`+MetaError+`":`...)
	m, err := json.Marshal(meta)
	if err != nil {
		m = []byte(`{"code":` + strconv.Quote(meta.Code) + `}`)
	}
	dst = append(dst, m...)
	if info != nil {
		dst = append(dst, ',')
		dst = append(dst, info...)
	}
	dst = append(dst, '}')
	return appendResultEnd(dst, info)
}
