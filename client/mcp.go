package client

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/otcgo/otc"
	"github.com/otcgo/otc/internal/jsonrpc"
	"github.com/otcgo/otc/internal/mcpwire"
	"github.com/otcgo/otc/internal/wire"
)

// clientInfo is the client's Implementation, sent with initialize and,
// in 2026-07-28, in every request's _meta (encoded once).
var clientInfo any = jsonrpc.Verbatim(`{"name":"otc-go-client","version":"1.0"}`)

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
	roundTrip(ctx context.Context, s *mcpSession, k *call, id int64, method, name string, body []byte) ([]byte, error)
	// send sends a notification, or a response to a server's request.
	send(ctx context.Context, s *mcpSession, k *call, body []byte) error
	// reset forgets the session, after the server said it expired.
	reset()
	// started is told that the handshake settled version.
	started(s *mcpSession, version string, header http.Header)
	close() error
}

// mcpSession speaks MCP to one server.
type mcpSession struct {
	c *Client
	// link holds the mcpConn the session speaks over: set once, and
	// replaced only by the handshake's fallback to HTTP+SSE.
	link atomic.Pointer[connRef]

	// shaking is held by the handshake: a lock a request waits for
	// within its own context, since the handshake is on the network.
	shaking chan struct{}
	version atomic.Pointer[mcpwire.Version]
	caps    map[string]any // the client capabilities declared
	// capsJSON is caps in 2026-07-28, with the tasks extension, encoded
	// once (statelessCaps).
	capsOnce sync.Once
	capsJSON any  // a jsonrpc.Verbatim
	tasks    bool // the server offers the tasks extension
	// dynamic says the server declared tools.dynamic: a tools/list with a
	// query searches.
	dynamic atomic.Bool
	// skills says the server declared the skills extension.
	skills atomic.Bool

	// listen keeps the subscriptions of a version without
	// resources/subscribe (listen.go).
	listen listening
	// subscribed are the URIs subscribed to with resources/subscribe,
	// subscribed to again in a new session when the server forgot the
	// last one.
	subsMu     sync.Mutex
	subscribed map[string]struct{}

	nextID   atomic.Int64
	progress sync.Map // progress token → func(Progress)
	headers  sync.Map // tool name → []paramHeader, in 2026-07-28

	callsMu sync.Mutex
	// calls are the calls under way, with their contexts and the order
	// they began in: a request of the server's that comes on no call's
	// own stream (over stdio, or on the session's stream) belongs to one
	// of them (callFor).
	calls map[*call]underWay
	begun uint64
}

// underWay is a call under way: its context, and when it began.
type underWay struct {
	ctx context.Context
	seq uint64
}

// enter notes that call k is under way with ctx, until leave.
func (s *mcpSession) enter(ctx context.Context, k *call) {
	s.callsMu.Lock()
	if s.calls == nil {
		s.calls = map[*call]underWay{}
	}
	s.begun++
	s.calls[k] = underWay{ctx: ctx, seq: s.begun}
	s.callsMu.Unlock()
}

func (s *mcpSession) leave(k *call) {
	s.callsMu.Lock()
	delete(s.calls, k)
	s.callsMu.Unlock()
}

// callFor is the call a request of the server's that names none is of,
// and its context: the call under way when there is one; when there are
// several, the latest to begin, provided all were made for one caller
// (the same identity in their contexts, as a gateway's per-caller
// sessions make them), whose question it then is whichever call asked;
// nil otherwise.
func (s *mcpSession) callFor() (*call, context.Context) {
	s.callsMu.Lock()
	defer s.callsMu.Unlock()
	var latest *call
	var at underWay
	key := ""
	for k, u := range s.calls {
		id := callerOf(u.ctx)
		if len(s.calls) > 1 && (id == "" || latest != nil && id != key) {
			return nil, nil // several calls, not one caller's: whose is it?
		}
		key = id
		if latest == nil || u.seq > at.seq {
			latest, at = k, u
		}
	}
	if latest == nil {
		return nil, nil
	}
	return latest, at.ctx
}

// callerOf names the caller a call is made for, by the identity in its
// context (its method, issuer and name); "" for none.
func callerOf(ctx context.Context) string {
	id := otc.CallerIdentity(ctx)
	if id == nil {
		return ""
	}
	iss, _ := id.Claims["iss"].(string)
	return id.Method + "\x00" + iss + "\x00" + id.Name
}

// connRef holds an mcpConn, for an atomic pointer.
type connRef struct{ mcpConn }

// conn is the connection the session speaks over.
func (s *mcpSession) conn() mcpConn { return s.link.Load().mcpConn }

func newMCPSession(c *Client, conn mcpConn) *mcpSession {
	s := &mcpSession{c: c, caps: map[string]any{}, shaking: make(chan struct{}, 1)}
	s.link.Store(&connRef{conn})
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

// ver is the negotiated version, nil before the handshake.
func (s *mcpSession) ver() *mcpwire.Version { return s.version.Load() }

// versionValues are the versions' names as _meta values, boxed once
// (a string made an interface at each request costs an allocation).
var versionValues = func() map[*mcpwire.Version]any {
	m := map[*mcpwire.Version]any{}
	for _, v := range mcpwire.Versions {
		m[v] = v.Name
	}
	return m
}()

// vname is a version's name; "" for none.
func vname(v *mcpwire.Version) string {
	if v == nil {
		return ""
	}
	return v.Name
}

// statelessCaps are the client capabilities a 2026-07-28 request sends:
// those of the handlers, and the tasks extension when Options.Tasks asks
// for it, encoded once.
// They are boxed once, as an interface value: a slice made one at each
// request costs an allocation.
func (s *mcpSession) statelessCaps() any {
	s.capsOnce.Do(func() {
		caps := maps.Clone(s.caps)
		if s.c.opts.Tasks {
			caps["extensions"] = map[string]any{mcpwire.ExtensionTasks: map[string]any{}}
		}
		b, _ := json.Marshal(caps)
		s.capsJSON = jsonrpc.Verbatim(b)
	})
	return s.capsJSON
}

// request sends a request after the handshake and decodes its result.
// A session the server says expired is begun again, once.
func (s *mcpSession) request(ctx context.Context, k *call, method string, params any, out any) error {
	if err := s.ensure(ctx, k); err != nil {
		return err
	}
	err := s.rpc(ctx, k, s.ver(), method, params, out)
	if errors.Is(err, errSessionExpired) {
		if err = s.renew(ctx, k); err != nil {
			return err
		}
		err = s.rpc(ctx, k, s.ver(), method, params, out)
	}
	return err
}

// renew begins a session again, the server having forgotten the last,
// and subscribes to what the last one had.
func (s *mcpSession) renew(ctx context.Context, k *call) error {
	s.version.Store(nil)
	s.conn().reset()
	if err := s.ensure(ctx, k); err != nil {
		return err
	}
	s.subsMu.Lock()
	uris := make([]string, 0, len(s.subscribed))
	for u := range s.subscribed {
		uris = append(uris, u)
	}
	s.subsMu.Unlock()
	for _, u := range uris {
		// A resource gone since is no longer subscribed to.
		if s.rpc(ctx, k, s.ver(), "resources/subscribe", mcpwire.URIParams{URI: u}.Map(), nil) != nil {
			s.subscription(u, false)
		}
	}
	return nil
}

// subscription records that uri is subscribed to (on) or no more.
func (s *mcpSession) subscription(uri string, on bool) {
	s.subsMu.Lock()
	defer s.subsMu.Unlock()
	if !on {
		delete(s.subscribed, uri)
		return
	}
	if s.subscribed == nil {
		s.subscribed = map[string]struct{}{}
	}
	s.subscribed[uri] = struct{}{}
}

// renewWait bounds the new handshake of a session whose stream the
// server refused (it forgot the session).
const renewWait = 30 * time.Second

// streamExpired begins the session again when the server answered its
// stream 404: it forgot the session, while no request of the client's
// would have said so. A handshake that fails is made again by the next
// request, which would have found the session gone.
func (s *mcpSession) streamExpired() {
	ctx, cancel := context.WithTimeout(context.Background(), renewWait)
	defer cancel()
	_ = s.renew(ctx, nil)
}

// errSessionExpired is a 404 to a request of a session: the server has
// forgotten it.
var errSessionExpired = errors.New("the MCP session expired")

// rpc sends one request in version (nil before one is settled), which
// adds its _meta in the stateless generation, and decodes its result
// into out. params are a map, or a tools/call's *callParams. When ctx
// ends first, the server is told with notifications/cancelled.
func (s *mcpSession) rpc(ctx context.Context, k *call, version *mcpwire.Version, method string, p any, out any) error {
	id := s.nextID.Add(1)
	name := ""
	switch params := p.(type) {
	case *callParams:
		name, params.stateless = params.name, statelessMeta{}
		if version != nil && version.Stateless {
			params.stateless = statelessMeta{version: versionValues[version], caps: s.statelessCaps(), logLevel: s.c.opts.LogLevel}
		}
	case map[string]any:
		if params == nil {
			break
		}
		name, _ = params["name"].(string)
		if t, ok := params["taskId"].(string); ok {
			name = t
		}
		if version != nil && version.Stateless {
			meta, _ := params["_meta"].(map[string]any)
			if meta == nil {
				meta = map[string]any{}
			}
			meta[mcpwire.MetaProtocolVersion] = versionValues[version]
			meta[mcpwire.MetaClientCapabilities] = s.statelessCaps()
			meta[mcpwire.MetaClientInfo] = clientInfo
			if l := s.c.opts.LogLevel; l != "" {
				meta[mcpwire.MetaLogLevel] = l
			}
			params["_meta"] = meta
		}
	}
	body, err := jsonrpc.Request(id, method, p)
	if err != nil {
		return fmt.Errorf("encoding %s: %w", method, err)
	}
	raw, err := s.conn().roundTrip(ctx, s, k, id, method, name, body)
	if err != nil {
		if ctx.Err() != nil && method != "initialize" && method != "server/discover" {
			s.cancelled(ctx, k, id)
		}
		return err
	}
	env, ok := jsonrpc.ReadEnvelope(raw)
	if !ok {
		return fmt.Errorf("%s: the answer is not JSON-RPC: it is not a JSON object", method)
	}
	if env.Err != nil {
		var e RPCError
		if err := json.Unmarshal(env.Err, &e); err != nil {
			return fmt.Errorf("%s: the answer is not JSON-RPC: its error: %w", method, err)
		}
		e.Method = method
		return asError(&e)
	}
	if env.Result == nil {
		return fmt.Errorf("%s: the answer has neither result nor error", method)
	}
	switch out := out.(type) {
	case nil:
		return nil
	case *json.RawMessage:
		*out = env.Result // the answer is this request's own copy
		return nil
	}
	if err := json.Unmarshal(env.Result, out); err != nil {
		return fmt.Errorf("%s: the result: %w", method, err)
	}
	return nil
}

// cancelled tells the server that request id is no longer wanted.
func (s *mcpSession) cancelled(ctx context.Context, k *call, id int64) {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), mcpCancelWait)
	defer cancel()
	body, _ := jsonrpc.Notification("notifications/cancelled", map[string]any{"requestId": id, "reason": "the client's context ended"})
	_ = s.conn().send(ctx, s, k, body)
}

// RPCError is a JSON-RPC error answer of an MCP server or an A2A agent
// that the client does not map to an [*otc.Error]: a method the server
// does not have, say. A refusal of the caller (-32001, -32002, -32003),
// and a tools/call refused before the tool ran (-32600, -32602: an
// unknown tool, malformed arguments), become an *otc.Error instead. Its
// Code, Message and Data (as it came) are the server's; Method is the
// request's. It is the JSON-RPC error type the servers of this module
// answer with too.
type RPCError = jsonrpc.ReadError

// asError maps the error codes MCP servers answer a refused caller with
// (-32001 and -32002/-32003, with the OAuth reason in data.error) to an
// *otc.Error of their class; others stay RPC errors.
func asError(e *RPCError) error {
	var data mcpwire.RefusalData
	_ = json.Unmarshal(e.Data, &data)
	code := otc.CodeServerError
	switch e.Code {
	case mcpwire.CodeUnauthorized:
		code = otc.CodeUnauthenticated
	case mcpwire.CodeForbidden, mcpwire.CodeForbiddenModern:
		if e.Code == mcpwire.CodeResourceNotFound && strings.HasPrefix(e.Method, "resources/") {
			return e // MCP's "resource not found"
		}
		code = otc.CodeForbidden
	case jsonrpc.CodeInvalidParams, jsonrpc.CodeInvalidRequest:
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

// list lists the tools, following cursors: the whole catalog, which a
// server in search mode (otc's mcp.SearchMode) lists when asked with
// MetaFullCatalog.
func (s *mcpSession) list(ctx context.Context) ([]otc.ToolDefinition, error) {
	var defs []otc.ToolDefinition
	cursor := ""
	for range mcpMaxPages {
		params := map[string]any{"_meta": map[string]any{mcpwire.MetaFullCatalog: true}}
		if cursor != "" {
			params["cursor"] = cursor
		}
		next, err := s.listPage(ctx, params, &defs)
		if err != nil {
			return nil, fmt.Errorf("otc client: list tools: %w", err)
		}
		if next == "" {
			return defs, nil
		}
		cursor = next
	}
	return nil, fmt.Errorf("otc client: list tools: tools/list gave more than %d pages", mcpMaxPages)
}

// search asks a server that declares the capability tools.dynamic for the
// tools a query finds, with a tools/list that carries it (SEP-1821) and
// the limit otc's server takes besides.
func (s *mcpSession) search(ctx context.Context, query string, limit int) ([]otc.ToolDefinition, error) {
	if err := s.ensure(ctx, nil); err != nil {
		return nil, fmt.Errorf("otc client: search tools: %w", err)
	}
	if !s.dynamic.Load() {
		return nil, ErrNoSearch
	}
	params := map[string]any{"query": query}
	if limit != 0 {
		params["limit"] = limit
	}
	var defs []otc.ToolDefinition
	if _, err := s.listPage(ctx, params, &defs); err != nil {
		return nil, fmt.Errorf("otc client: search tools: %w", err)
	}
	return defs, nil
}

// listPage asks for one page of tools/list with params, appends its tools
// to defs and returns its nextCursor.
func (s *mcpSession) listPage(ctx context.Context, params map[string]any, defs *[]otc.ToolDefinition) (string, error) {
	var page json.RawMessage
	if err := s.request(ctx, nil, "tools/list", params, &page); err != nil {
		return "", err
	}
	raw, next, err := mcpwire.ListResult(page, mcpwire.MemberTools)
	if err != nil {
		return "", fmt.Errorf("tools/list: the result: %w", err)
	}
	var tools []mcpwire.Tool
	if raw != nil {
		if err := json.Unmarshal(raw, &tools); err != nil {
			return "", fmt.Errorf("tools/list: the tools: %w", err)
		}
	}
	for _, t := range tools {
		if s.ver().Stateless {
			hs, ok := paramHeaders(t.InputSchema)
			if !ok {
				continue // its x-mcp-header is invalid: it must not be called
			}
			s.headers.Store(t.Name, hs)
		}
		// A tool without an output schema answers content blocks.
		*defs = append(*defs, otc.ToolDefinition{ID: t.Name, Name: t.Name, Title: t.Title, Description: t.Description,
			InputSchema: otc.InputSchema{Parameters: t.InputSchema}, OutputSchema: t.OutputSchema,
			Annotations: t.Annotations, Meta: t.Meta, Content: len(t.OutputSchema) == 0})
	}
	return next, nil
}

// health pings the server (the stateless generation has no ping:
// server/discover).
func (s *mcpSession) health(ctx context.Context) error {
	if err := s.ensure(ctx, nil); err != nil {
		return fmt.Errorf("otc client: health: %w", err)
	}
	method := "ping"
	if s.ver().Stateless {
		method = "server/discover"
	}
	if err := s.request(ctx, nil, method, map[string]any{}, nil); err != nil {
		return fmt.Errorf("otc client: health: %w", err)
	}
	return nil
}

func (s *mcpSession) close() error {
	s.closeListen()
	return s.conn().close()
}

// truncate cuts a server's string for a message, on a character
// boundary.
func truncate(s string, n int) string { return wire.Truncate(s, n) }
