package mcp

import (
	"bytes"
	"context"
	"encoding/json"
	"log/slog"
	"net/http"
	"strconv"
	"strings"
	"sync"

	"github.com/otcgo/otc"
	"github.com/otcgo/otc/internal/jsonrpc"
	"github.com/otcgo/otc/internal/mcpwire"
	"github.com/otcgo/otc/internal/primitive"
	"github.com/otcgo/otc/internal/viewcache"
	"github.com/otcgo/otc/internal/wire"
)

// server is what the HTTP and stdio transports share: the registry, the
// options, and the methods.
type server struct {
	reg    *otc.Registry
	logger *slog.Logger
	lists  listings
	// sealer seals the requestState of 2026-07-28 (rounds.go).
	sealer *sealer
	// views holds the names each set of visible tools lists, by
	// visibility key, for the callers who see only some of the tools.
	views    viewcache.Cache[[]string]
	pageSize int
	logLevel slog.Level
	maxBody  int64
	maxRead  int // what a read, a render or a completion answers, at most
	// asks holds the requests to clients awaiting answers (ask.go).
	asks *askTable

	// Encoded once.
	info []byte // the Implementation object of serverInfo
	// initTail is what an initialize result has after its capabilities,
	// and initVersions the versions it may settle on.
	initTail     string
	initVersions map[string]bool
	discover     []byte // the server/discover result
	// discoverSkills is the server/discover result of a registry with
	// skills, which declares the skills extension.
	discoverSkills []byte
	listExtra      []byte // the 2026-07-28 fields of a tools/list result
	readExtra      []byte // the 2026-07-28 fields of a resources/read result
	infoMeta       []byte // the serverInfo member of a 2026-07-28 result's _meta

	tasks *taskManager // the tasks extension (tasks.go)
	// search is search mode (searchmode.go); nil when off.
	search *searchMode

	// listens counts the open subscriptions/listen streams, in all and by
	// caller (subscriptions.go); closing is closed when the server ends
	// them, until resumed.
	listens *listenCounts
	// table and hub keep the sessions over HTTP (sessions.go, hub.go);
	// nil when the server keeps none (Options.Stateless, and stdio).
	table    *sessionTable
	hub      *hub
	drainMu  sync.Mutex
	closing  chan struct{}
	draining bool
}

// endListens ends the subscriptions/listen streams, each with its
// result, and any opened later at once, until resumeListens.
func (s *server) endListens() {
	s.drainMu.Lock()
	defer s.drainMu.Unlock()
	if !s.draining {
		close(s.closing)
		s.draining = true
	}
}

// resumeListens lets subscriptions/listen streams run again.
func (s *server) resumeListens() {
	s.drainMu.Lock()
	defer s.drainMu.Unlock()
	if s.draining {
		s.closing, s.draining = make(chan struct{}), false
	}
}

// closingChan is what a listen stream ends on.
func (s *server) closingChan() <-chan struct{} {
	s.drainMu.Lock()
	defer s.drainMu.Unlock()
	return s.closing
}

// callExtra is the 2026-07-28 field of every result that is not a list.
const callExtra = `,"resultType":"complete"`

func newServer(reg *otc.Registry, opts *Options, private bool) *server {
	if opts == nil {
		opts = &Options{}
	}
	s := &server{reg: reg, logger: opts.Logger, pageSize: opts.PageSize, logLevel: opts.LogLevel, maxBody: opts.MaxBodyBytes,
		closing: make(chan struct{})}
	if s.logger == nil {
		s.logger = reg.Logger()
	}
	switch {
	case s.pageSize == 0:
		s.pageSize = DefaultPageSize
	case s.pageSize < 0:
		s.pageSize = 0
	}
	s.maxBody, _ = wire.BodyLimits(s.maxBody, 0)
	if s.maxRead = opts.MaxReadBytes; s.maxRead <= 0 {
		s.maxRead = DefaultMaxReadBytes
	}
	s.asks = newAskTable(opts)
	s.listens = newListenCounts(opts)
	name, version := opts.Name, opts.Version
	if name == "" {
		name = "otc"
	}
	if version == "" {
		version = "0.0.0"
	}
	s.info, _ = json.Marshal(map[string]string{"name": name, "version": version})
	ttl := opts.ListTTL
	switch {
	case ttl == 0:
		ttl = DefaultListTTL
	case ttl < 0:
		ttl = 0
	}
	scope := "public"
	if private {
		scope = "private"
	}
	cache := `,"ttlMs":` + strconv.FormatInt(ttl.Milliseconds(), 10) + `,"cacheScope":"` + scope + `"`
	s.infoMeta = []byte(`"io.modelcontextprotocol/serverInfo":` + string(s.info))
	meta := `,"_meta":{` + string(s.infoMeta) + `}`
	s.listExtra = []byte(callExtra + cache + meta)
	// A resource's contents may change at any time and may be the
	// caller's own: a client is not told to keep them.
	s.readExtra = []byte(callExtra + `,"ttlMs":0,"cacheScope":"private"` + meta)

	var instr string
	if opts.Instructions != "" {
		b, _ := json.Marshal(opts.Instructions)
		instr = `,"instructions":` + string(b)
	}
	versions, _ := json.Marshal(supportedVersions)
	s.search = newSearchMode(opts.Search)
	discover := func(extensions string) []byte {
		return []byte(`{"supportedVersions":` + string(versions) +
			`,"capabilities":{"completions":{},"extensions":{"` + ExtensionTasks + `":{}` + extensions + `},"prompts":{"listChanged":true},"resources":{"subscribe":true,"listChanged":true},"tools":{"listChanged":true` + s.dynamic() + `}}` + instr + callExtra + cache + meta + `}`)
	}
	s.discover, s.discoverSkills = discover(""), discover(","+skillsCapability)
	s.tasks = newTaskManager(s, opts.Tasks)
	s.initTail = `,"serverInfo":` + string(s.info) + instr + `}`
	s.initVersions = map[string]bool{}
	for _, v := range mcpwire.Served {
		if !v.Stateless {
			s.initVersions[v.Name] = true
		}
	}
	s.sealer = newSealer(opts.RequestStateKeys, opts.RequestStateTTL)
	return s
}

// detach gives the body back before the request ends, and keeps of the
// message only its id and method: a request that goes on long after it
// was read (a listen stream) calls it once it has read what it needs, so
// as not to hold the body for its life. It does nothing on stdio.
func (x *exchange) detach() {
	if x.held == nil {
		return
	}
	m := x.msg
	m.releaseArgs()
	*m = message{id: bytes.Clone(m.id), method: m.method, hasID: m.hasID, jsonrpc: m.jsonrpc, parsedOK: m.parsedOK}
	x.body = nil
	wire.ReleaseBuffer(x.held)
	x.held = nil
}

// exchange is one request as a transport hands it to the server.
type exchange struct {
	msg  *message
	body []byte // the exact bytes the message came in
	// held is where the transport keeps the pooled buffer body is in, to
	// give back when the request ends (nil once detached); nil on stdio.
	held    *bytes.Buffer
	gen     generation    // the generation of the request (generationFor)
	request *http.Request // nil on stdio

	// version is the protocol version of an initialize-era request, when
	// known: its MCP-Protocol-Version header over HTTP, the version the
	// connection's initialize settled on over stdio; "" when unknown.
	version string

	// out, when not nil, carries a notification to the client; the
	// transport serializes it with the answer.
	out sender
	// notifier is the call's, set by the server for tools/call; the
	// transport writes the answer through its finish.
	notifier *callNotifier
	// logLevel is the level a legacy client set with logging/setLevel on
	// this connection; nil when it set none, or cannot (HTTP).
	logLevel *slog.LevelVar
	// caps are the capabilities the client declared in initialize on this
	// connection (stdio); nil when unknown.
	caps clientCaps
	// subs are the resources the connection subscribed to (stdio); nil
	// over HTTP, where session is the request's.
	subs *subscriptions
	// session is the session of a request over HTTP (its
	// Mcp-Session-Id); nil when it named none.
	session *session
	// writer, when not nil, is the HTTP response of a client that accepts
	// an SSE answer; a tools/call then sets stream, the SSE stream it may
	// answer on (nil otherwise, and on stdio), and out to it.
	writer http.ResponseWriter
	stream *sseStream

	// wantResponse asks the server to build a call's whole JSON-RPC
	// response around its result, in response, which the transport then
	// writes as it is rather than copying the result into one, and gives
	// back with releaseResponse once written.
	wantResponse bool
	response     []byte
	responseBuf  *[]byte // the pooled buffer response was built in
}

// responsePool recycles the buffers of call responses (exchange.response).
var responsePool = sync.Pool{New: func() any { b := make([]byte, 0, 512); return &b }}

// maxPooledResponse bounds the buffers kept: one large answer does not pin
// its memory.
const maxPooledResponse = 16 << 10

// releaseResponse gives the response's buffer back to the pool; nothing
// may use the response, or the result within it, afterwards.
func (x *exchange) releaseResponse() {
	if bp := x.responseBuf; bp != nil {
		x.response, x.responseBuf = nil, nil
		if cap(*bp) <= maxPooledResponse {
			responsePool.Put(bp)
		}
	}
}

// isSupportedVersion reports whether v is one of supportedVersions.
func isSupportedVersion(v string) bool { return mcpwire.LookupServed(v) != nil }

// unsupportedVersion is the error for a request naming a version this
// server does not speak, in its MCP-Protocol-Version header (inHeader) or
// in its _meta, where only 2026-07-28 may be named. It is 2026-07-28's
// UnsupportedProtocolVersion, answered 400, with the supported versions in
// the message and in data; a client of an earlier version reads the
// message and the status, which is what its version asks for.
func unsupportedVersion(requested string, inHeader bool) *rpcError {
	requested = wire.Truncate(requested, 32) // a client's string, echoed
	msg := "Unsupported protocol version " + strconv.Quote(requested) + " in the MCP-Protocol-Version header: this server speaks " + supportedList
	if !inHeader {
		msg = "Unsupported protocol version " + strconv.Quote(requested) + " in _meta: a request that names its version there is served as " +
			mcpwire.Latest.Name + "; " + initializeList + " begin with initialize"
	}
	return &rpcError{
		Code:    codeUnsupportedProtocol,
		Message: msg,
		Data:    mcpwire.UnsupportedVersionData{Supported: supportedVersions, Requested: requested},
		Status:  http.StatusBadRequest,
	}
}

// supportedList names supportedVersions in a sentence.
var supportedList = mcpwire.Names(mcpwire.Served, "and")

// initializeList names the versions that begin with initialize.
var initializeList = func() string {
	var names []string
	for _, v := range mcpwire.Served {
		if !v.Stateless {
			names = append(names, v.Name)
		}
	}
	return strings.Join(names, " and ")
}()

// methodNotFound is the error for a method this server does not have.
// It carries no status: the generation answers it 404 in 2026-07-28 and 200,
// as every other error of a well-formed request, in the initialize era,
// whose clients take a 404 for an expired session.
func methodNotFound(method string) *rpcError {
	return &rpcError{Code: codeMethodNotFound, Message: "Method not found: " + wire.Truncate(method, 64)}
}

// handle answers a request (a message with an id) with its result or an
// error.
func (s *server) handle(ctx context.Context, x *exchange) ([]byte, *rpcError) {
	m := x.msg
	if gen := x.gen; gen.stateless() {
		if err := gen.checkMeta(m); err != nil {
			return nil, err
		}
		if v := gen.version(""); m.metaVersion != v {
			return nil, unsupportedVersion(m.metaVersion, false)
		}
		switch m.method {
		case "server/discover":
			if len(primitive.Current(s.reg).Skills) > 0 {
				return s.discoverSkills, nil
			}
			return s.discover, nil
		case "tools/list":
			return s.list(ctx, x, gen.version(""), gen.listExtra(s))
		case "tools/call":
			return s.call(ctx, x)
		case "tasks/get", "tasks/update", "tasks/cancel":
			return s.handleTask(ctx, m, x.request)
		case "subscriptions/listen":
			return s.listen(ctx, x) // subscriptions.go
		}
		if b, e, ok := s.servePrimitives(ctx, x); ok { // primitives.go
			return b, e
		}
		return nil, methodNotFound(m.method)
	}
	switch m.method {
	case "initialize":
		return s.initializeResult(s.negotiate(m.version), x.subs != nil || x.request != nil && s.table != nil), nil
	case "ping":
		return []byte("{}"), nil
	case "logging/setLevel":
		l, ok := parseLevel(m.level)
		if !ok {
			return nil, newError(codeInvalidParams, "Invalid params: level %q is not one of debug, info, notice, warning, error, critical, alert, emergency", wire.Truncate(m.level, 32))
		}
		if x.logLevel != nil {
			x.logLevel.Set(l)
		}
		return []byte("{}"), nil
	case "tools/list":
		return s.list(ctx, x, x.version, x.gen.listExtra(s))
	case "tools/call":
		return s.call(ctx, x)
	}
	if b, e, ok := s.servePrimitives(ctx, x); ok { // primitives.go
		return b, e
	}
	return nil, methodNotFound(m.method)
}

// initializeResult is the result of an initialize that settled on
// version. Its capabilities are what the registry holds at the time:
// resources when it has resources or templates, prompts when it has
// prompts, completions when it has either of what completes; over stdio
// (changes) the connection is told of changes of their lists and of the
// resources it subscribes to.
func (s *server) initializeResult(version string, changes bool) []byte {
	sn := primitive.Current(s.reg)
	b := []byte(`{"protocolVersion":"` + version + `","capabilities":{`)
	if len(sn.Templates) > 0 || len(sn.Prompts) > 0 {
		b = append(b, `"completions":{},`...)
	}
	b = append(b, `"logging":{},`...)
	if len(sn.Skills) > 0 {
		b = append(b, `"extensions":{`+skillsCapability+`},`...)
	}
	switch {
	case len(sn.Prompts) > 0 && changes:
		b = append(b, `"prompts":{"listChanged":true},`...)
	case len(sn.Prompts) > 0:
		b = append(b, `"prompts":{},`...)
	}
	switch {
	case len(sn.Resources)+len(sn.Templates) > 0 && changes:
		b = append(b, `"resources":{"subscribe":true,"listChanged":true},`...)
	case len(sn.Resources)+len(sn.Templates) > 0:
		b = append(b, `"resources":{},`...)
	}
	if changes {
		b = append(b, `"tools":{"listChanged":true`+s.dynamic()+`}}`...)
	} else if s.search != nil {
		b = append(b, `"tools":{"dynamic":true}}`...)
	} else {
		b = append(b, `"tools":{}}`...)
	}
	return append(b, s.initTail...)
}

// negotiate returns the version an initialize asking for requested
// settles on: that one when the server speaks it in this era, otherwise
// the latest this era has, and the client decides whether it can speak it.
func (s *server) negotiate(requested string) string {
	if s.initVersions[requested] {
		return requested
	}
	return Version20251125
}

// list answers tools/list in a protocol version ("" when unknown), with
// the tools the caller may see ([otc.Registry.Visibility]) and the
// generation's extra.
func (s *server) list(ctx context.Context, x *exchange, version string, extra []byte) ([]byte, *rpcError) {
	m := x.msg
	if s.search != nil && m.query != nil {
		return s.listQuery(ctx, x, version, extra)
	}
	l, names := s.visible(ctx)
	if s.search != nil && !m.fullCatalog && len(names) > s.search.threshold {
		return s.searchModePage(l, names, version, extra), nil
	}
	return l.page(names, m.cursor, m.hasCursor, s.pageSize, version, extra)
}

// dynamic is what the tools capability adds in search mode: the
// capability of a tools/list with a query (SEP-1821).
func (s *server) dynamic() string {
	if s.search == nil {
		return ""
	}
	return `,"dynamic":true`
}

// call answers tools/call through the registry's pipeline.
func (s *server) call(ctx context.Context, x *exchange) ([]byte, *rpcError) {
	m := x.msg
	if !m.hasName || m.name == "" {
		return nil, newError(codeInvalidParams, "Invalid params: tools/call names the tool in params.name")
	}
	if s.search != nil && (m.name == SearchToolName || m.name == CallToolName) && s.searching(ctx) {
		if m.name == SearchToolName {
			return s.searchCall(ctx, x)
		}
		if err := unwrapCall(m); err != nil {
			return appendCallResult(nil, otc.CallResult{}, err, x.gen.meta(s))
		}
	}
	// The request, its notifier and its state all outlive this frame (the
	// registry and the context keep them): one allocation holds the three.
	f := new(callFrame)
	req := &f.req
	*req = otc.CallRequest{
		ToolName:    m.name,
		CallID:      m.callID,
		Input:       m.arguments,
		Protocol:    otc.ProtocolMCP,
		HTTPRequest: x.request,
		RequestBody: x.body,
	}
	if m.argsDoc != nil {
		seam.SetParsed(req, m.argsDoc, 0)
	}
	if m.contextRaw != nil {
		if err := json.Unmarshal(m.contextRaw, &req.Context); err != nil {
			return nil, newError(codeInvalidParams, "Invalid params: _meta[%q] must be the OTC context object {\"secrets\": [{\"id\", \"value\"}], \"authorization\": [{\"id\", \"token\"}], \"user_id\"}: %v", MetaContext, err)
		}
	}
	metaLevel, e := x.gen.metaLogLevel(m)
	if e != nil {
		return nil, e
	}
	if r, e, done := s.startTask(ctx, x, req); done {
		return r, e
	}
	if x.writer != nil {
		// In the frame, not pooled: a tool that outlives its request may
		// still hold it.
		f.stream = sseStream{w: x.writer, r: x.request}
		x.stream, x.out = &f.stream, &f.stream
	}
	g := x.gen
	n := &f.notifier
	n.progressToken = m.progressToken
	x.notifier = n
	if x.out == nil {
		n.progressToken = nil
	}
	site := siteOf(x)
	g.notifications(s, site, n, metaLevel)
	n.out = x.out
	if n.progressToken != nil || n.logs {
		ctx = otc.WithNotifier(ctx, n)
	}
	state := &f.state
	state.Context = ctx
	ctx, refused := g.prepare(s, site, state, req)
	if refused != nil {
		return nil, refused
	}
	res, err := s.reg.Call(ctx, req)
	if b, e, ok := g.finish(s, site, state, res); ok {
		return b, e
	}
	info := g.meta(s)
	if !x.wantResponse {
		// Sized for the result's usual shape (its value twice: as text and
		// as structured content) and the 2026-07-28 _meta and resultType,
		// so that it is allocated once.
		return appendCallResult(make([]byte, 0, 128+len(res.Value)*2+len(info)+len(callExtra)), res, err, info)
	}
	// With the response around it, in a pooled buffer, when the transport
	// writes that as it is (x.response).
	bp := responsePool.Get().(*[]byte)
	out := jsonrpc.AppendResultHead((*bp)[:0], m.id)
	head := len(out)
	out, e = appendCallResult(out, res, err, info)
	if e != nil {
		responsePool.Put(bp)
		return nil, e
	}
	out = append(out, '}')
	*bp = out // grown, if it had to: kept so
	x.response, x.responseBuf = out, bp
	return out[head : len(out)-1], nil
}

// callFrame holds what one tools/call keeps beyond server.call.
type callFrame struct {
	req      otc.CallRequest
	notifier callNotifier
	state    callState
	stream   sseStream
}
