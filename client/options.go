package client

import (
	"encoding/json"
	"fmt"
	"net/http"
	"time"

	"github.com/otcgo/otc/internal/mcpwire"
)

// Doer sends an HTTP request. *http.Client is one; a wrapper that adds
// tracing or signs requests is another.
type Doer interface {
	Do(*http.Request) (*http.Response, error)
}

// DefaultMaxResponseBytes is the default limit on a response body: 16 MiB.
const DefaultMaxResponseBytes = 16 << 20

// DefaultUserAgent is the User-Agent header sent when Options.UserAgent is
// empty.
const DefaultUserAgent = "otc-go-client/1.0"

// Options configures a [Client]. The zero value, and nil, give the
// defaults described on each field.
type Options struct {
	// HTTPClient sends the requests. Nil means a client with the
	// settings of http.DefaultClient. Give calls a deadline through their
	// context, or a Timeout here. An *http.Client is used through a copy
	// that follows redirects by [CheckRedirect]'s rule (reads within their
	// origin only, calls never); another Doer must not follow redirects
	// itself, and a redirect it hands back is refused.
	HTTPClient Doer

	// UserAgent is sent in the User-Agent header. Empty means
	// DefaultUserAgent.
	UserAgent string

	// Schema is the $schema spelling sent with calls: otc.SchemaOTC (the
	// default, when empty), otc.SchemaOXP or otc.SchemaOpenAPI.
	Schema string

	// MaxResponseBytes bounds how much of a response body is read, so that
	// a hostile or broken server cannot exhaust memory. Zero or less means
	// DefaultMaxResponseBytes.
	MaxResponseBytes int64

	// StdioWriteTimeout bounds the writing of one message to an MCP
	// server over stdio ([NewStdio]): a process that reads none of its
	// input for that long is taken for hung, and its session ends (the
	// process group is killed). Zero means DefaultStdioWriteTimeout; a
	// negative value means no bound but the call's context.
	StdioWriteTimeout time.Duration

	// Retry turns on retries of tool errors that say they can be retried.
	// Nil means no retries.
	Retry *RetryPolicy

	// APIKey, when set, is sent in the OXP-API-Key header, as OXP names it.
	APIKey string

	// BearerToken, when set, is sent as "Authorization: Bearer <token>".
	BearerToken string

	// JWT, when set, signs a fresh HS256 token for every request and sends
	// it as a bearer token. It cannot be combined with BearerToken.
	JWT *JWTSigner

	// OAuth, when set, gets the bearer token from the server's
	// authorization server, as MCP's authorization specifies, when the
	// server asks for one (401). It cannot be combined with BearerToken
	// or JWT.
	OAuth *OAuth

	// TokenExchange, when set, lets [Client.ExchangeToken] get tokens for
	// the server in exchange for its users' (RFC 8693), for calls made on
	// their behalf. Over HTTP only.
	TokenExchange *TokenExchange

	// Format is the wire format the server speaks. Empty means FormatOTC
	// for [New]; [Dial] finds it.
	Format Format

	// MCPVersion pins the MCP protocol version: mcp.Version20260728,
	// Version20251125 or Version20250618, or "2025-03-26" or "2024-11-05",
	// which many servers people run still speak (the client speaks them;
	// what they lack is simply absent). Empty negotiates the latest both
	// sides speak.
	MCPVersion string

	// MCPTransport is how an MCP server is reached over HTTP. Empty is
	// Streamable HTTP, falling back, as MCP's backward compatibility
	// asks, to the HTTP+SSE transport of 2024-11-05 when the server
	// refuses the POST of initialize with a 4xx and a GET of the URL opens
	// an event stream that names the endpoint to POST to. "sse" is
	// HTTP+SSE alone, the URL that of its event stream (often /sse).
	// Over HTTP+SSE the client speaks the versions of sessions, not
	// 2026-07-28.
	MCPTransport string

	// Tasks declares MCP's tasks extension (protocol version 2026-07-28):
	// a call of a tool that may run as a task then runs as one, which the
	// client polls to its end (reporting its status to
	// CallOptions.Progress), answers the questions of, and cancels when
	// the call's context ends. Without it such a tool runs within its
	// request, and one that must run as a task is refused by the server.
	Tasks bool

	// Handlers answer what an MCP server asks in the middle of a call
	// (elicitation, sampling, roots) and an A2A agent's questions. The
	// client declares a capability only for the handlers set. Nil answers
	// nothing: the server is told the client cannot.
	Handlers *Handlers

	// OnNotification, when set, gets every notification an MCP server
	// sends (progress, log messages, list changes), by method. It must not
	// block for long: it runs on the reading of the server's messages.
	OnNotification func(method string, params json.RawMessage)

	// LogLevel, when set ("debug", "info", … "emergency"), asks an MCP
	// server for its log messages at that level and above, which reach
	// OnNotification: in each request's _meta in 2026-07-28, with
	// logging/setLevel after initialize before it. Empty asks for none
	// (the server may send its default).
	LogLevel string

	// IdleTimeout fails an MCP request over HTTP that hears nothing from
	// its server (no answer, progress or other message; a stream's
	// comments are not messages) for that long; each message restarts
	// the clock. Zero means DefaultIdleTimeout, negative no bound. The
	// call's context bounds the whole call.
	IdleTimeout time.Duration

	// HandshakeTimeout bounds the MCP handshake (server/discover, or
	// initialize), over HTTP and stdio: a server that never answers it
	// fails the first request after that long, saying so. Zero means
	// DefaultHandshakeTimeout, negative no bound.
	HandshakeTimeout time.Duration
}

// Defaults of [Options.IdleTimeout] and [Options.HandshakeTimeout].
const (
	DefaultIdleTimeout      = 5 * time.Minute
	DefaultHandshakeTimeout = time.Minute
)

// OptionError is an option a client cannot be made with: which one
// (Options' field name) and what is wrong with it.
type OptionError struct {
	Option, Problem string
}

func (e *OptionError) Error() string { return "otc client: Options." + e.Option + ": " + e.Problem }

// CheckMCP checks the options of a client of an MCP server, as [New] and
// [NewStdio] do: MCPVersion is a version the client speaks (or empty), and
// MCPTransport empty or "sse", with a version of sessions. A problem is an
// *OptionError naming the option. A program that takes these options from
// a file (a gateway's) checks them so before it makes the client.
func (o *Options) CheckMCP() error {
	v := mcpwire.Lookup(o.MCPVersion)
	switch {
	case o.MCPVersion != "" && v == nil:
		return &OptionError{"MCPVersion", fmt.Sprintf("%q is not an MCP protocol version the client speaks: %s", o.MCPVersion, mcpwire.Names(nil, "or"))}
	case o.MCPTransport != "" && o.MCPTransport != transportSSE:
		return &OptionError{"MCPTransport", fmt.Sprintf("%q is not a transport: set %q for a server of MCP's HTTP+SSE transport (its URL that of the event stream, often /sse), or leave it empty for Streamable HTTP, which falls back to HTTP+SSE by itself", o.MCPTransport, transportSSE)}
	case o.MCPTransport == transportSSE && v != nil && v.Stateless:
		return &OptionError{"MCPVersion", fmt.Sprintf("%s is not spoken over HTTP+SSE (MCPTransport): pin a version of sessions, or none", v.Name)}
	}
	return nil
}
