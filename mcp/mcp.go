package mcp

import (
	"log/slog"
	"time"

	"github.com/otcgo/otc"
	"github.com/otcgo/otc/internal/mcpwire"
	"github.com/otcgo/otc/sessions"
	"github.com/otcgo/otc/tasks"
)

// The protocol versions this package speaks.
const (
	Version20250618 = mcpwire.V20250618
	Version20251125 = mcpwire.V20251125
	Version20260728 = mcpwire.V20260728
)

// supportedVersions lists the versions in the order server/discover and the
// unsupported-version error name them: newest first.
var supportedVersions = func() []string {
	var names []string
	for _, v := range mcpwire.Served {
		names = append(names, v.Name)
	}
	return names
}()

// Keys of the _meta objects this package reads and writes.
const (
	// MetaContext is the _meta key of a call's context: the secrets,
	// authorization tokens and user id the tool requires, as the OTC
	// context object {"secrets": [...], "authorization": [...],
	// "user_id": "..."} carries them.
	MetaContext = mcpwire.MetaContext
	// MetaCallID is the _meta key of a call's id, handed to the tool as
	// [otc.CallID]. Without it, the registry generates one. With an
	// idempotency store ([otc.RegistryOptions.Idempotency]) it is the
	// call's idempotency key: a client that retries a tools/call sends the
	// same id, and gets the first call's result without the tool running
	// again. (JSON-RPC request ids cannot serve: a retry is a new request.)
	MetaCallID = mcpwire.MetaCallID
	// MetaError is the _meta key, on a result whose isError is true, of
	// what a client program (rather than the model) can act on:
	// {"code": "tool_error", "can_retry": true, "retry_after_ms": 1000}, the
	// parameter errors of invalid input, or the missing requirements.
	MetaError = mcpwire.MetaError
	// MetaFullCatalog is the _meta key ("io.github.otcgo/full_catalog":
	// true) of a tools/list that asks for the whole catalog, also of a
	// caller in search mode (see [SearchMode]): a program that mirrors
	// the catalog, as otc's client does, rather than a model choosing
	// tools.
	MetaFullCatalog = mcpwire.MetaFullCatalog
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
	// DefaultMaxListens bounds the subscriptions/listen streams a Handler
	// keeps open at once.
	DefaultMaxListens = 1000
	// DefaultMaxListensPerCaller bounds the subscriptions/listen streams
	// one caller keeps open on a Handler at once.
	DefaultMaxListensPerCaller = 8
	// DefaultMaxListenURIBytes bounds the bytes of the resource URIs one
	// subscriptions/listen request names.
	DefaultMaxListenURIBytes = 64 << 10
	// DefaultMaxReadBytes bounds what a read, a render or a completion
	// answers.
	DefaultMaxReadBytes = 16 << 20
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

	// RequestStateKeys seal the requestState of the input_required results
	// of protocol version 2026-07-28, when a tool asks its caller
	// something (see [otc.Elicit]): AES-256-GCM, so that the client can
	// neither read nor alter what the state holds. Each key is
	// RequestStateKeySize (32) random bytes. The first seals; all of them
	// open, so that a key can be rotated in ahead of use and out after
	// RequestStateTTL. Nil means a random key made once per process: a
	// deployment of several replicas behind a load balancer must give them
	// all the same keys, or the next round of a call that reaches another
	// replica is refused. A key of another size panics in NewHandler.
	RequestStateKeys [][]byte
	// RequestStateTTL is how long a requestState is accepted after it was
	// issued. Zero means DefaultRequestStateTTL.
	RequestStateTTL time.Duration

	// Stateless, true, keeps no sessions over HTTP at any protocol
	// version: initialize gives no Mcp-Session-Id, GET and DELETE are
	// answered 405, and resources/subscribe is refused (the
	// capabilities say the server tells of no change). By default, a
	// client of 2025-03-26, 2025-06-18 or 2025-11-25 gets a session at
	// initialize, opens its stream with GET, and is told there of the
	// changes of the lists and of the resources it subscribes to,
	// whichever replica made the change (see Sessions). 2026-07-28 has no
	// sessions (subscriptions/listen), and stdio is one session.
	Stateless bool
	// Sessions keeps the sessions: which are alive, what each subscribed
	// to, and the log of what they must be told, which every replica
	// follows. Nil keeps them in this process (a sessions.MemoryStore of
	// the Handler's own). The replicas of a deployment share one store
	// (redisstore.NewSessionStore) and the same RequestStateKeys, which
	// seal the session ids as well: any replica then answers any request
	// of a session, and a change made on one reaches the stream another
	// holds, with no sticky routing.
	Sessions sessions.Store
	// SessionIdleTimeout ends a session that made no request and held no
	// stream for this long. Zero means DefaultSessionIdleTimeout.
	SessionIdleTimeout time.Duration
	// MaxSessions bounds the sessions of the store (of every replica
	// sharing it), and MaxSessionsPerCaller those of one caller; an
	// initialize past either is answered 503 with error -32000 ("Server
	// busy"). Zero means DefaultMaxSessions and
	// DefaultMaxSessionsPerCaller.
	MaxSessions          int
	MaxSessionsPerCaller int

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

	// AskTimeout bounds how long a tool waits for the client to answer
	// what it asks ([otc.Ask]) in protocol versions 2025-06-18 and
	// 2025-11-25; the call's own timeout applies as well. Zero means
	// DefaultAskTimeout; a negative value means no limit but the call's.
	AskTimeout time.Duration
	// MaxPendingAsks bounds the questions awaiting answers on a Handler (or
	// a stdio connection) at once; a tool that asks one more gets an
	// error. Zero means DefaultMaxPendingAsks.
	MaxPendingAsks int
	// MaxPendingAsksPerCaller bounds the questions awaiting answers from
	// one caller at once: one authenticated identity, or one remote IP
	// address for callers without one (behind a proxy that is the proxy's
	// address: authenticate callers, or raise the limit). Zero means
	// DefaultMaxPendingAsksPerCaller.
	MaxPendingAsksPerCaller int

	// MaxListens bounds the subscriptions/listen streams (2026-07-28) a
	// Handler keeps open at once; one more is answered with error -32000
	// ("Server busy"). Zero means DefaultMaxListens.
	MaxListens int
	// MaxListensPerCaller bounds the subscriptions/listen streams one
	// caller keeps open on a Handler at once (one authenticated identity,
	// or one client address for callers without one; see package caller),
	// so that one caller cannot take every stream. Zero means
	// DefaultMaxListensPerCaller. It does not apply to stdio, whose one
	// client is bounded by MaxConcurrent.
	MaxListensPerCaller int
	// MaxListenURIBytes bounds the bytes of the resource URIs one
	// subscriptions/listen request subscribes to, all URIs together; a
	// request naming more is refused with -32602. Zero means
	// DefaultMaxListenURIBytes.
	MaxListenURIBytes int
	// MaxReadBytes bounds the answer of a read (its contents, base64
	// included), a render or a completion, as encoded: a function that
	// returns more is answered with an error that says so (-32603), and
	// nothing of it is sent. Zero means DefaultMaxReadBytes.
	MaxReadBytes int

	// Logger receives faults of the server itself. Nil means the
	// registry's logger ([otc.Registry.Logger]), as for the other handlers.
	Logger *slog.Logger

	// Search, when set, turns search mode on (see [SearchMode]): a caller
	// who may see more tools than its threshold lists a few of them, a
	// search tool and a call tool. Nil lists every tool.
	Search *SearchMode

	// Tasks configures the tasks extension (see [tasks.Options]): where
	// tasks are kept and how many run at once. Nil means the defaults.
	Tasks *tasks.Options
}
