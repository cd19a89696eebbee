// Package mcp serves the tools of an [otc.Registry] over the Model Context
// Protocol, beside the OTC handler and the REST view of the same registry.
// Calls go through the registry's pipeline, so validation, requirements,
// limits, middleware and errors are the same on every wire format.
//
//	mux.Handle("/mcp", mcp.NewHandler(reg, nil))
//
// or, for a client that launches the server as a process:
//
//	err := mcp.ServeStdio(ctx, reg, nil)
//
// The server offers tools only: no resources, prompts, completion, sampling,
// elicitation or tasks.
//
// # Versions
//
// Protocol versions 2025-06-18 and 2025-11-25 begin with the initialize
// handshake; 2026-07-28 is stateless, each request naming its version in
// its _meta, and is found with server/discover. The server speaks all three
// on one endpoint and decides per request: a request whose _meta names a
// protocol version, or whose MCP-Protocol-Version header is 2026-07-28, is
// served as 2026-07-28; any other as the version the client negotiated. A
// header naming a version the server does not speak is answered 400 with
// error -32022, whose message and data name the supported versions. The
// server issues no session ids: every request stands on its own, so any
// replica behind a load balancer can answer it.
//
// # Limits on messages
//
// A message is UTF-8 throughout: one with other bytes, anywhere, is a
// parse error (-32700, id null), so that every answer, which may echo
// parts of the request, is UTF-8 JSON too. Request ids and progress tokens
// are held to [MaxIDLength]. On stdio, a request whose id is held by a
// request still in flight is refused with -32600; the first is answered,
// and notifications/cancelled naming the id still reaches it.
//
// # Tools
//
// tools/list lists the highest version of each tool under the tool's name
// ([otc.Tool.Name]), a page at a time. A call may still reach an older
// version by naming it "name@x" or "name@x.y.z", as [otc.CallRequest.ToolName]
// resolves it; such names are for applications that pin a version, as
// models see only the listed ones.
//
// A tool's value becomes the call's structuredContent and a text block of
// its JSON; a value that is not a JSON object is wrapped as {"result": v},
// and the listed output schema says so. A tool that returns [otc.Content]
// answers with its content blocks instead. A tool error, invalid input and
// missing requirements are results with isError true whose text tells the
// model what to fix; retry hints and what is missing also travel in the
// result's _meta under [MetaError]. An unknown tool is JSON-RPC error
// -32602.
//
// # Call context
//
// The secrets, authorization tokens and user id a tool requires travel in
// the request's _meta under [MetaContext], in the shape of the OTC context
// object:
//
//	"_meta": {"io.github.otcgo/context": {"secrets": [{"id": "API_KEY", "value": "…"}], "user_id": "u1"}}
//
// # Progress and logs
//
// A tool reports progress with [otc.ReportProgress] and sends log messages
// with [otc.LogToClient]. Over MCP they become notifications/progress, when
// the request carried a progressToken, and notifications/message; over
// HTTP the answer then switches to an SSE stream, if the client accepts
// one. Log messages go out at or above the client's level: the level in
// the request's _meta (2026-07-28, which sends none without it), the one
// set with logging/setLevel (stdio), or [Options.LogLevel].
package mcp

import (
	"log/slog"
	"time"

	"github.com/otcgo/otc"
)

// The protocol versions this package speaks.
const (
	Version20250618 = "2025-06-18"
	Version20251125 = "2025-11-25"
	Version20260728 = "2026-07-28"
)

// supportedVersions lists the versions in the order server/discover and the
// unsupported-version error name them: newest first.
var supportedVersions = []string{Version20260728, Version20251125, Version20250618}

// Keys of the _meta objects this package reads and writes.
const (
	// MetaContext is the _meta key of a call's context: the secrets,
	// authorization tokens and user id the tool requires, as the OTC
	// context object {"secrets": [...], "authorization": [...],
	// "user_id": "..."} carries them.
	MetaContext = "io.github.otcgo/context"
	// MetaCallID is the _meta key of a call's id, handed to the tool as
	// [otc.CallID]. Without it, the registry generates one. With an
	// idempotency store ([otc.RegistryOptions.Idempotency]) it is the
	// call's idempotency key: a client that retries a tools/call sends the
	// same id, and gets the first call's result without the tool running
	// again. (JSON-RPC request ids cannot serve: a retry is a new request.)
	MetaCallID = "io.github.otcgo/call_id"
	// MetaError is the _meta key, on a result whose isError is true, of
	// what a client program (rather than the model) can act on:
	// {"code": "tool_error", "can_retry": true, "retry_after_ms": 1000}, the
	// parameter errors of invalid input, or the missing requirements.
	MetaError = "io.github.otcgo/error"
)

// MaxIDLength is the longest JSON-RPC request id and progressToken the
// server accepts, in bytes as the message writes them: what lies between a
// string's quotes (escapes as sent), or an integer's digits. It is
// [otc.MaxIDLength], the cap on call ids, for the same reason: ids are
// echoed in answers and notifications. A request whose id is longer is
// refused with -32600 and id null; a longer progressToken is ignored, so
// the call runs and is answered without progress notifications.
const MaxIDLength = otc.MaxIDLength

// Defaults of [Options].
const (
	// DefaultPageSize is how many tools a tools/list page holds.
	DefaultPageSize = 100
	// DefaultListTTL is how long a 2026-07-28 client may cache the tool
	// list (its ttlMs).
	DefaultListTTL = time.Minute
	// DefaultMaxConcurrent bounds the requests a stdio server runs at once.
	DefaultMaxConcurrent = 64
)

// Options configures a [Handler] or a stdio server. The zero value, and
// nil, give the defaults described on each field.
type Options struct {
	// Name and Version identify the server in its serverInfo. Empty means
	// "otc" and "0.0.0".
	Name    string
	Version string
	// Instructions, when set, tell the client how to use the server's
	// tools; they are sent with initialize and server/discover.
	Instructions string

	// PageSize is how many tools a tools/list page holds. Zero means
	// DefaultPageSize; a negative value lists every tool on one page.
	PageSize int
	// ListTTL is how long a 2026-07-28 client may cache the tool list and
	// the server/discover result. Zero means DefaultListTTL; a negative
	// value means not at all (ttlMs 0). Tools registered later reach
	// clients once their copy expires.
	ListTTL time.Duration

	// LogLevel is the lowest level of the messages a tool sends with
	// [otc.LogToClient] that reach a client which has not set a level of
	// its own. Zero means slog.LevelInfo, MCP's "info".
	LogLevel slog.Level

	// MaxBodyBytes limits the size of a request (an HTTP body, or a line on
	// stdio); a larger one is answered 413, or with error -32600 on stdio.
	// Zero or less means otc.DefaultMaxBodyBytes.
	MaxBodyBytes int64
	// BodyReadTimeout bounds the time an HTTP client may take to send a
	// request body, as [otc.HandlerOptions.BodyReadTimeout] does. Zero
	// means otc.DefaultBodyReadTimeout; a negative value means no limit.
	BodyReadTimeout time.Duration

	// Authenticator, when set, must accept every HTTP request, as for the
	// OTC handler: a refusal is answered 401 with WWW-Authenticate when the
	// authenticator has a challenge. It does not apply to stdio, whose
	// client is the process that started the server.
	Authenticator otc.Authenticator

	// AllowedOrigins lists the origins ("https://app.example.com"), besides
	// the request's own host, from which a browser may call the HTTP
	// handler. A request whose Origin header names another is answered 403.
	AllowedOrigins []string
	// AllowedHosts lists the Host header values, besides localhost,
	// 127.0.0.1 and [::1] (with any port), accepted on a connection to a
	// loopback address. A request to a loopback address naming another host
	// is answered 403: that is a page on another site reaching a local
	// server through DNS rebinding. A server on loopback behind a reverse
	// proxy lists its public host names here.
	AllowedHosts []string
	// DisableHostCheck turns the loopback Host check off.
	DisableHostCheck bool

	// MaxConcurrent bounds the requests a stdio server runs at once; one
	// more is answered at once with JSON-RPC error -32000 ("Server busy"),
	// so that the connection keeps reading, and a cancellation still gets
	// through. Zero means DefaultMaxConcurrent.
	MaxConcurrent int

	// Logger receives faults of the server itself. Nil means slog.Default().
	Logger *slog.Logger
}
