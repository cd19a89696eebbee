package mcp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"time"

	"github.com/otcgo/otc"
	"github.com/otcgo/otc/internal/mcpwire"
	"github.com/otcgo/otc/internal/searchargs"
	"github.com/otcgo/otc/search"
)

// The tools of search mode, and their defaults.
const (
	// SearchToolName is the name of the tool that searches the catalog in
	// search mode.
	SearchToolName = "search_tools"
	// CallToolName is the name of the tool that calls a tool by its name
	// in search mode.
	CallToolName = "call_tool"
	// DefaultSearchLimit is how many tools the search tool answers when
	// its caller gives no limit.
	DefaultSearchLimit = searchargs.DefaultLimit
)

// SearchMode shows a caller who may see many tools a short list instead
// of the whole catalog: the pinned tools, a tool that searches the
// catalog (SearchToolName) and a tool that calls a tool by its name
// (CallToolName). A model pays for the few schemas it is shown, finds the
// tools it needs by describing what it wants done, and calls them. Every
// tool stays callable by its own name with tools/call, listed or not; a
// registered tool named as one of the two is reached through the call
// tool while its caller is in search mode.
//
// With search mode set, tools/list also takes a "query" (a string, as the
// MCP proposal SEP-1821 sketches it) and answers the tools a search for
// it finds, in any mode: search.DefaultLimit of them, or the "limit" it
// gives (1 to search.MaxLimit, an addition of otc's). The server declares
// it with the capability tools.dynamic. A tools/list whose _meta holds
// MetaFullCatalog lists every tool the caller may see, as without
// search mode.
//
// The search is package search's: BM25 over the tools' names,
// descriptions and parameters, over the tools the caller may see.
type SearchMode = search.Mode

// searchMode is a server's SearchMode, ready.
type searchMode struct {
	threshold int
	pinned    []string // sorted, without duplicates
	// tools are the Tool objects of the search and call tools, encoded
	// once, with the comma that joins them to what comes before.
	tools []byte
}

func newSearchMode(opts *SearchMode) *searchMode {
	if opts == nil {
		return nil
	}
	sm := &searchMode{threshold: max(opts.Threshold, 0), pinned: slices.Compact(slices.Sorted(slices.Values(opts.Pinned)))}
	sm.tools = append(append(sm.tools, searchTool...), ',')
	sm.tools = append(sm.tools, callTool...)
	return sm
}

// The Tool objects of search mode.
var (
	searchTool = mustMarshal(mcpwire.Tool{Name: SearchToolName, Title: "Search tools",
		Description:  "Finds the tools of this server that can do what you describe, best first, with their full definitions: name, description and input schema. Search before you call a tool you were not shown; call what you find by its name, or through " + CallToolName + ".",
		InputSchema:  searchargs.SearchSchema("tools", search.MaxLimit),
		OutputSchema: json.RawMessage(`{"type":"object","properties":{"tools":{"type":"array","items":{"type":"object"}}},"required":["tools"]}`),
		Annotations:  &otc.ToolAnnotations{ReadOnlyHint: new(true), IdempotentHint: new(true), OpenWorldHint: new(false)}})
	callTool = mustMarshal(mcpwire.Tool{Name: CallToolName, Title: "Call a tool",
		Description: "Calls a tool of this server by its name, with arguments as its input schema describes them. Find the tool and its schema with " + SearchToolName + " first.",
		InputSchema: searchargs.CallSchema(SearchToolName)})
)

func mustMarshal(t mcpwire.Tool) []byte {
	b, err := json.Marshal(t)
	if err != nil {
		panic(err)
	}
	return b
}

// visible returns the listing and the names of the tools in it that the
// caller of ctx may see.
func (s *server) visible(ctx context.Context) (*listing, []string) {
	l := s.lists.get(s.reg)
	names := l.names
	if v := s.reg.Visibility(otc.CallerIdentity(ctx), otc.ProtocolMCP); v.Key() != "" {
		if v.Revision() == l.revision {
			names = s.views.Get(l.revision, v.Key(), func() []string { return l.visibleNames(v) })
		} else { // a registration came between the two reads: served, not kept
			names = l.visibleNames(v)
		}
	}
	return l, names
}

// searching reports whether the caller of ctx is in search mode.
func (s *server) searching(ctx context.Context) bool {
	if s.search == nil {
		return false
	}
	_, names := s.visible(ctx)
	return len(names) > s.search.threshold
}

// searchModePage is the tools/list result of search mode: the pinned tools
// the caller sees, then the search and call tools, on one page.
func (s *server) searchModePage(l *listing, names []string, version string, extra []byte) []byte {
	b := append(make([]byte, 0, 1024+len(extra)), `{"tools":[`...)
	for _, name := range s.search.pinned {
		if _, ok := slices.BinarySearch(names, name); ok {
			b = append(b, l.tool(name, version)...)
			b = append(b, ',')
		}
	}
	b = append(b, s.search.tools...)
	b = append(b, ']')
	b = append(b, extra...)
	return append(b, '}')
}

// found returns the names of the tools a search for query finds among
// those the caller of ctx sees in l, at most limit of them, best first;
// r, the request it came in (nil on stdio), is charged its work.
func (s *server) found(ctx context.Context, r *http.Request, l *listing, names []string, query string, limit int) ([]string, error) {
	rs, err := search.Tools(ctx, s.reg, query, &search.Options{Limit: limit, Protocol: otc.ProtocolMCP, Request: r})
	if err != nil {
		return nil, err
	}
	out := make([]string, 0, len(rs))
	for _, r := range rs {
		name := r.Tool.Name
		// The version MCP lists is the one a call by the name reaches:
		// a tool whose listed version the caller may not see is left out,
		// as tools/list leaves it out.
		if _, ok := slices.BinarySearch(names, name); ok && l.ids[name] != "" && !slices.Contains(out, name) {
			out = append(out, name)
		}
	}
	return out, nil
}

// listQuery answers a tools/list with a query (SEP-1821): the tools a
// search for it finds, on one page.
func (s *server) listQuery(ctx context.Context, x *exchange, version string, extra []byte) ([]byte, *rpcError) {
	m := x.msg
	query, ok := jsonString(m.query)
	if !ok {
		return nil, newError(codeInvalidParams, `Invalid params: "query" must be a string`)
	}
	limit := search.DefaultLimit
	if m.limit != nil {
		n, err := strconv.Atoi(string(m.limit))
		if err != nil || n < 1 || n > search.MaxLimit {
			return nil, newError(codeInvalidParams, `Invalid params: "limit" must be a whole number from 1 to %d`, search.MaxLimit)
		}
		limit = n
	}
	if err := search.Admit(ctx, s.reg, x.request); err != nil {
		return nil, rateLimited(err)
	}
	l, names := s.visible(ctx)
	found, err := s.found(ctx, x.request, l, names, query, limit)
	if err != nil {
		return nil, newError(codeInvalidParams, "Invalid params: %s", searchProblem(err, "query"))
	}
	return l.page(found, "", false, 0, version, extra)
}

// searchProblem says what is wrong with a search's parameters, naming
// them as the request does (param for the query).
func searchProblem(err error, param string) string {
	var e *otc.Error
	if errors.As(err, &e) {
		for k, v := range e.ParameterErrors {
			if k == "q" {
				k = param
			}
			return fmt.Sprintf("%q %s", k, v)
		}
	}
	return err.Error()
}

// searchCall answers a call of the search tool: {"tools": [...]}, the Tool
// objects of what it finds, as structured content and as text.
func (s *server) searchCall(ctx context.Context, x *exchange) ([]byte, *rpcError) {
	m := x.msg
	info := x.gen.meta(s)
	query, limit, p := searchargs.Search(m.arguments, search.MaxLimit)
	if p != nil {
		return appendCallResult(nil, otc.CallResult{}, invalidArg(p), info)
	}
	if err := search.Admit(ctx, s.reg, x.request); err != nil {
		return appendCallResult(nil, otc.CallResult{}, err, info)
	}
	l, names := s.visible(ctx)
	found, err := s.found(ctx, x.request, l, names, query, limit)
	if err != nil {
		var e *otc.Error
		if errors.As(err, &e) && e.ParameterErrors["q"] != "" {
			return appendCallResult(nil, otc.CallResult{}, invalidArg(&searchargs.Problem{Param: "query", Text: e.ParameterErrors["q"]}), info)
		}
		return appendCallResult(nil, otc.CallResult{}, err, info)
	}
	version := x.gen.version(x.version)
	v := append(make([]byte, 0, 512), `{"tools":[`...)
	for i, name := range found {
		if i > 0 {
			v = append(v, ',')
		}
		v = append(v, l.tool(name, version)...)
	}
	v = append(v, "]}"...)
	return appendCallResult(make([]byte, 0, 2*len(v)+256), otc.CallResult{Value: v}, nil, info)
}

// unwrapCall turns a call of the call tool into the call it asks for:
// m's name and arguments become those its arguments give. It returns the
// error that refuses arguments of another shape.
func unwrapCall(m *message) error {
	name, args, p := searchargs.Call(m.arguments, SearchToolName)
	if p != nil {
		return invalidArg(p)
	}
	m.releaseArgs() // they were the call tool's; the tool's are parsed by the registry
	m.name, m.arguments = name, args
	return nil
}

// invalidArg is the invalid input of a model's arguments to one of the
// two tools.
func invalidArg(p *searchargs.Problem) error {
	return &otc.Error{Code: otc.CodeInvalidInput, Message: "The arguments are invalid", ParameterErrors: map[string]string{p.Param: p.Text}}
}

// tool returns the encoded Tool object of a listed tool, as protocol
// version lists it ("" for the latest of the initialize era).
func (l *listing) tool(name, version string) []byte {
	if v := mcpwire.LookupServed(version); v != nil && !v.Icons {
		if b, ok := l.iconless[name]; ok {
			return b
		}
	}
	return l.encoded[name]
}

// rateLimited is the error of a tools/list with a query from a caller who
// searched too often (search.Admit): -32000, 429 over HTTP, with the
// wait in data.
func rateLimited(err error) *rpcError {
	e := &rpcError{Code: codeServerBusy, Message: err.Error(), Status: http.StatusTooManyRequests}
	var oe *otc.Error
	if errors.As(err, &oe) {
		e.Message = oe.Message
		e.Data = mcpwire.BusyData{RetryAfterMS: (oe.RetryAfter + time.Millisecond - 1).Milliseconds()}
	}
	return e
}
