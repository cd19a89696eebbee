package client

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"

	"github.com/otcgo/otc"
	"github.com/otcgo/otc/internal/jsonparse"
)

// Client talks to one tool server. It is safe for concurrent use. A
// client of an MCP server over stdio, or of one that keeps sessions,
// holds a process or a session: [Client.Close] ends it.
type Client struct {
	format Format
	t      transport
	opts   Options // a copy, for what the transports read
	base   string  // without a trailing slash
	http   Doer
	agent  string
	// agentValue is agent as a header's value, made once.
	agentValue []string
	schema     string
	maxBytes   int64
	retry      *RetryPolicy
	apiKey     string
	bearer     string
	jwt        *JWTSigner
	exchange   *exchanger // Options.TokenExchange's, shared by sessions
	// reach is the transport of an MCP server's sessions, shared by the
	// client and its sessions; nil for the other formats.
	reach *reach
}

// New returns a client for the tool server at baseURL, an http or https
// URL, which speaks Options.Format (OTC when it is empty). It makes no
// request. For OTC, baseURL may carry a path prefix
// ("https://tools.example.com/otc"), and the endpoints /tools, /tools/call
// and /health are appended to it; for MCP it is the endpoint itself; for
// REST the URL the view is mounted at (its /tools below it); for A2A the
// agent's URL, below which its card is found. opts may be nil. To find
// the format of a URL, use [Dial].
func New(baseURL string, opts *Options) (*Client, error) {
	u, err := url.Parse(baseURL)
	if err != nil {
		return nil, fmt.Errorf("otc client: base URL %q: %w", baseURL, err)
	}
	if u.Scheme != "http" && u.Scheme != "https" || u.Host == "" {
		return nil, fmt.Errorf("otc client: base URL %q must be an absolute http or https URL", baseURL)
	}
	if u.RawQuery != "" || u.Fragment != "" {
		return nil, fmt.Errorf("otc client: base URL %q must not carry a query or fragment", baseURL)
	}
	if opts == nil {
		opts = &Options{}
	}
	c := &Client{
		base:   strings.TrimRight(u.String(), "/"),
		http:   opts.HTTPClient,
		agent:  opts.UserAgent,
		schema: opts.Schema,
		apiKey: opts.APIKey,
		bearer: opts.BearerToken,
	}
	if opts.JWT != nil {
		if opts.BearerToken != "" {
			return nil, errors.New("otc client: set Options.BearerToken or Options.JWT, not both")
		}
		if len(opts.JWT.Secret) == 0 {
			return nil, errors.New("otc client: Options.JWT has no Secret")
		}
		j := *opts.JWT
		c.jwt = &j
	}
	c.http = withRedirectRule(c.http)
	if c.agent == "" {
		c.agent = DefaultUserAgent
	}
	c.agentValue = []string{c.agent}
	if opts.TokenExchange != nil {
		x, err := newExchanger(opts.TokenExchange, c.http, c.agent)
		if err != nil {
			return nil, err
		}
		c.exchange = x
	}
	if opts.OAuth != nil {
		if opts.BearerToken != "" || opts.JWT != nil {
			return nil, errors.New("otc client: set Options.OAuth, or BearerToken or JWT, not both")
		}
		d, err := newOAuthDoer(c.http, opts.OAuth, c.base, c.agent)
		if err != nil {
			return nil, err
		}
		c.http = d
	}
	switch c.schema {
	case "":
		c.schema = otc.SchemaOTC
	case otc.SchemaOTC, otc.SchemaOXP, otc.SchemaOpenAPI:
	default:
		return nil, fmt.Errorf("otc client: Options.Schema %q is not a spelling of protocol 1.0; use otc.SchemaOTC or otc.SchemaOXP", c.schema)
	}
	c.keep(opts)
	switch opts.Format {
	case "", FormatOTC:
		c.format, c.t = FormatOTC, otcWire{c}
	case FormatMCP:
		if err := opts.CheckMCP(); err != nil {
			return nil, err
		}
		c.format, c.reach = FormatMCP, &reach{t: StreamableHTTP{URL: c.base}}
		if opts.MCPTransport == transportSSE {
			c.reach.t = SSE{URL: c.base}
		}
		_ = c.newSession() // over HTTP, it makes no request and cannot fail
	case FormatREST:
		c.format, c.t = FormatREST, &restWire{c: c}
	case FormatA2A:
		c.format, c.t = FormatA2A, &a2aWire{c: c}
	default:
		return nil, fmt.Errorf("otc client: Options.Format %w", opts.Format.Check())
	}
	return c, nil
}

// keep sets what every client takes from its options, whatever its
// transport: the body limit, the retry policy, and a copy of the options
// for the transports to read (without the credentials' objects).
func (c *Client) keep(opts *Options) {
	c.maxBytes = opts.MaxResponseBytes
	if c.maxBytes <= 0 {
		c.maxBytes = DefaultMaxResponseBytes
	}
	if opts.Retry != nil {
		p := *opts.Retry
		c.retry = &p
	}
	c.opts = *opts
	c.opts.Retry, c.opts.JWT, c.opts.OAuth, c.opts.TokenExchange = nil, nil, nil, nil
}

// KeepsState reports whether the client's server may keep state per
// session or per process, which its callers should then not share: an
// MCP server's (over HTTP, a session; over stdio, a process). A program
// that calls for many users gives each a session of its own
// ([Client.NewSession]).
func (c *Client) KeepsState() bool { return c.format == FormatMCP }

// DeduplicatesCalls reports whether the client's server runs a call sent
// again with the same call id once, by its protocol: an OTC server (its
// call_id). A call that failed in transport, which may or may not have
// reached the tool, is then safe to send again. Other servers may
// deduplicate too (an otc server of any format does), but nothing in
// their protocol says so.
func (c *Client) DeduplicatesCalls() bool { return c.format == FormatOTC }

// NotifiesListChanges reports whether the client's server says when its
// catalog changes, to [Options.OnNotification]
// (notifications/tools/list_changed): an MCP server may. A program that
// keeps a copy of a catalog that is not notified reads it again from
// time to time.
func (c *Client) NotifiesListChanges() bool { return c.format == FormatMCP }

// Format is the wire format a client speaks.
func (c *Client) Format() Format { return c.format }

// URL is the URL the client calls: the base URL of an OTC server, the
// endpoint of an MCP server, the REST view's URL or the A2A agent's; ""
// for a server over stdio.
func (c *Client) URL() string { return c.base }

// Close ends what the client holds: a stdio server's process (asked to
// exit by closing its standard input, then sent SIGTERM and SIGKILL after a
// grace, with the processes it started), or an
// MCP session (ended with DELETE). It is safe to call more than once; a
// client of a format that holds nothing has nothing to close.
func (c *Client) Close() error { return c.t.close() }

// ListTools returns the server's catalog. It reads the catalog under the
// key "tools" or "items", or as a bare array, and accepts input schemas
// with or without the "parameters" wrapper; unknown fields are ignored.
func (c *Client) ListTools(ctx context.Context) ([]otc.ToolDefinition, error) {
	return c.t.list(ctx)
}

// SearchTools asks the server for its tools that match query, best first,
// at most limit of them (0 for the server's default, 10 for otc): an OTC
// server that searches (otc's, with package search linked in, answers
// GET /tools?q=…&limit=…), or an MCP server that declares the capability
// tools.dynamic, asked with a tools/list that carries the query
// (SEP-1821; otc's MCP server in search mode, mcp.SearchMode). The tools
// are those the client's credentials may see. A query or limit the
// server refuses is an error naming it (an *otc.Error of code
// otc.CodeInvalidInput naming "q" or "limit" from an OTC server); for a
// server that does not search (an OTC server that answers 400, or its
// whole catalog, more tools than the limit), and for other formats,
// SearchTools returns an error wrapping ErrNoSearch.
func (c *Client) SearchTools(ctx context.Context, query string, limit int) ([]otc.ToolDefinition, error) {
	switch w := c.t.(type) {
	case otcWire:
		return w.search(ctx, query, limit)
	case *mcpSession:
		return w.search(ctx, query, limit)
	}
	return nil, ErrNoSearch
}

// ErrNoSearch is SearchTools' error for a server that does not search,
// or whose search the client does not speak: list its tools with
// ListTools.
var ErrNoSearch = errors.New("otc client: the server offers no search the client speaks (an OTC server's GET /tools?q=, an MCP server's tools.dynamic); list its tools with ListTools")

// Health returns nil when the server is up and answers as its format
// does, and an error otherwise. An OTC server is asked GET /health, and
// one that is up but not taking calls answers a [*ResponseError] with
// StatusCode 503; an MCP server is pinged, a REST view's catalog is
// read, and an A2A agent's card, which must name an endpoint the client
// may call (an [*OriginError] otherwise).
func (c *Client) Health(ctx context.Context) error {
	return c.t.health(ctx)
}

// CallOptions carries the per-call fields of a request (the protocol's Call Tool). The
// zero value, and nil, send none of them.
type CallOptions struct {
	// CallID identifies the call; the server echoes it. Empty means the
	// client generates a random UUID, so that retries reuse one id. It is
	// sent as each format's idempotency key: OTC's call_id, the A2A
	// message's messageId, and MCP's _meta "io.github.otcgo/call_id",
	// which an otc server dedupes by (others ignore it).
	CallID string
	// TraceID is handed to the tool for tracing.
	TraceID string
	// UserID names the user the call acts for.
	UserID string
	// Secrets are the secrets a tool may require, by id.
	Secrets []otc.ToolSecret
	// Authorization holds tokens for the providers a tool may require.
	Authorization []otc.ToolAuthorization
	// Progress, when set, gets the call's progress reports (MCP progress
	// notifications, A2A task status updates), in order.
	Progress func(Progress)
	// OnNotification, when set, gets the notifications an MCP server
	// sends on this call's own stream (over Streamable HTTP, the response
	// to the call's request): its log messages (notifications/message)
	// above all, which belong to no progress token. It runs on the
	// reading of the stream, before Options.OnNotification, and must not
	// block for long. Those on the session's own stream reach it too when
	// the call is the only one under way in the session; over stdio,
	// notifications reach Options.OnNotification only.
	OnNotification func(method string, params json.RawMessage)
	// Header holds headers sent with each HTTP request the call makes
	// (its request, a handshake it begins, its task's polls and answers
	// to the server's questions), after the client's own, which a value
	// here replaces: a gateway's trace context, or the token of the user
	// it calls for. A call whose Header carries an Authorization sends no
	// Options.APIKey either. A server over stdio gets none of them.
	Header http.Header
	// Idempotent says that running the call twice does no harm (a tool
	// that only reads, or one its annotations call idempotent): a call
	// that failed in transport may then be sent again under a
	// [RetryPolicy] with Transport set, as a call to a server that
	// deduplicates calls always may.
	Idempotent bool
}

// Result is the outcome of a call that reached the tool.
type Result struct {
	// CallID is the call's id, as the server reported it.
	CallID string
	// Duration is the run time the server reported.
	Duration time.Duration
	// Value is the tool's result as JSON; nil for a tool that returns
	// nothing, and after a tool error.
	Value json.RawMessage
	// Raw is an MCP server's CallToolResult as it came, for a program
	// that shows it or reads its content blocks; nil for other formats.
	Raw json.RawMessage
}

// Call calls the tool toolID ("Toolkit.Tool", "Toolkit.Tool@x" or
// "Toolkit.Tool@x.y.z") with input, which may be anything that encodes as a
// JSON object, a json.RawMessage or []byte holding one (a model's
// arguments, say), or nil for no input. opts may be nil.
//
// When the tool fails, Call returns both the Result (for its call id and
// duration) and an error wrapping the [*otc.ToolError]. Any other error
// comes with a nil Result; see the package documentation for the kinds.
func (c *Client) Call(ctx context.Context, toolID string, input any, opts *CallOptions) (*Result, error) {
	call, err := c.newCall(toolID, input, opts)
	if err != nil {
		return nil, err
	}
	for attempt := 1; ; attempt++ {
		res, err := c.t.call(ctx, call)
		if err != nil {
			err = fmt.Errorf("otc client: call %s: %w", toolID, err)
		}
		if err == nil || c.retry == nil || attempt >= c.retry.maxAttempts() {
			return res, err
		}
		after, again := c.retry.again(c, call, err)
		if !again {
			return res, err
		}
		if werr := sleep(ctx, c.retry.wait(attempt, after)); werr != nil {
			return res, fmt.Errorf("%w; not retried: %w", err, werr)
		}
	}
}

// retryAfterOf reports whether a call that failed with err may succeed if
// sent again, and how long its server asked to wait (zero for no word): a
// tool error that can be retried, a rate limit, a busy server.
func retryAfterOf(err error) (time.Duration, bool) {
	if te, ok := errors.AsType[*otc.ToolError](err); ok {
		return te.RetryAfter, te.CanRetry
	}
	if e, ok := errors.AsType[*otc.Error](err); ok && retryable(e.Code) {
		return e.RetryAfter, true
	}
	return 0, false
}

// CallAs calls a tool like [Client.Call] and decodes its value into Out:
//
//	sum, err := client.CallAs[float64](ctx, c, "Calculator.Add", AddInput{A: 1, B: 2}, nil)
//
// A tool that returns nothing leaves Out at its zero value.
func CallAs[Out any](ctx context.Context, c Caller, toolID string, input any, opts *CallOptions) (Out, error) {
	var out Out
	res, err := c.Call(ctx, toolID, input, opts)
	if err != nil {
		return out, err
	}
	if len(res.Value) == 0 {
		return out, nil
	}
	if err := json.Unmarshal(res.Value, &out); err != nil {
		return out, fmt.Errorf("otc client: call %s: decoding the value as %T: %w", toolID, out, err)
	}
	return out, nil
}

// call is one call, as every attempt sends it: the same call id each
// time, so that a server that dedupes by it runs the tool once.
type call struct {
	toolID string
	input  json.RawMessage // a JSON object, or nil for none
	opts   CallOptions     // CallID set
	// otcBody is the OTC request body, encoded once.
	otcBody []byte
	// mirrored are the headers an MCP 2026-07-28 tools/call mirrors from
	// its arguments.
	mirrored http.Header

	mu sync.Mutex
	// failed is the first error a handler answered one of the server's
	// requests on the call's stream with, for the call's error.
	failed error
}

// header is the call's own headers; nil for no call.
func (k *call) header() http.Header {
	if k == nil {
		return nil
	}
	return k.opts.Header
}

// handlerFailed keeps err, the failure of a handler answering one of the
// server's requests during the call, if it is the first.
func (k *call) handlerFailed(err error) {
	k.mu.Lock()
	if k.failed == nil {
		k.failed = err
	}
	k.mu.Unlock()
}

// withHandlerError returns err, the call's failure, wrapping the failure
// of a handler that could not answer the server during the call: a
// program that asked its caller and was told to wait finds that in the
// call's error.
func (k *call) withHandlerError(err error) error {
	k.mu.Lock()
	failed := k.failed
	k.mu.Unlock()
	if err == nil || failed == nil || errors.Is(err, failed) {
		return err
	}
	return fmt.Errorf("%w (after the client could not answer the server: %w)", err, failed)
}

// newCall checks and encodes a call.
func (c *Client) newCall(toolID string, input any, opts *CallOptions) (*call, error) {
	k := &call{toolID: toolID}
	if opts != nil {
		k.opts = *opts
	}
	if k.opts.CallID == "" {
		k.opts.CallID = otc.NewCallID()
	}
	if input != nil {
		raw, ok := input.(json.RawMessage)
		if b, isBytes := input.([]byte); isBytes {
			raw, ok = b, true // JSON, as a json.RawMessage is (not base64)
		}
		if !ok {
			var err error
			if raw, err = json.Marshal(input); err != nil {
				return nil, fmt.Errorf("otc client: call %s: encoding the input: %w", toolID, err)
			}
		}
		t := bytes.TrimSpace(raw)
		if len(t) == 0 || t[0] != '{' && string(t) != "null" {
			return nil, fmt.Errorf("otc client: call %s: the input must encode as a JSON object, not %s", toolID, kindOf(t))
		}
		if t[0] == '{' {
			// What json.Marshal wrote is JSON; raw bytes are checked (by the
			// faster check first, which also asks for UTF-8, as json.Valid
			// does not).
			if ok && !jsonparse.Valid(t) && !json.Valid(t) {
				return nil, fmt.Errorf("otc client: call %s: encoding the input: it is not valid JSON", toolID)
			}
			k.input = t
		}
	}
	if c.format != FormatOTC {
		return k, nil
	}
	o := &k.opts
	req := wireRequest{ToolID: toolID, CallID: o.CallID, TraceID: o.TraceID, Input: k.input}
	if o.UserID != "" || len(o.Secrets) > 0 || len(o.Authorization) > 0 {
		req.Context = &otc.CallContext{UserID: o.UserID, Secrets: o.Secrets, Authorization: o.Authorization}
	}
	b, err := json.Marshal(wireCall{Schema: c.schema, Request: req})
	if err != nil {
		return nil, fmt.Errorf("otc client: call %s: encoding the request: %w", toolID, err)
	}
	k.otcBody = b
	return k, nil
}

// kindOf names the kind of a JSON value by its first byte, for messages.
func kindOf(v []byte) string {
	if len(v) == 0 {
		return "nothing"
	}
	switch v[0] {
	case '{':
		return "an object"
	case '[':
		return "an array"
	case '"':
		return "a string"
	case 't', 'f':
		return "a boolean"
	case 'n':
		return "null"
	}
	return "a number"
}
