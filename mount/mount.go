// Package mount serves every wire format of one registry on one
// [http.ServeMux], each under the prefix this module documents, with one
// authenticator for all:
//
//	mux := http.NewServeMux()
//	mount.All(mux, reg, &mount.Options{Authenticator: auth})
//
// serves
//
//	/otc/       OTC/OXP: /otc/tools, /otc/tools/call, /otc/health
//	/mcp        MCP over HTTP (Streamable HTTP), at /mcp and /mcp/
//	/v1/        the REST view: /v1/tools, /v1/tools/{name}:invoke
//	/registry/  the registry view: /registry/v1/tools
//	/a2a        A2A: the JSON-RPC binding at /a2a, the HTTP+JSON one below
//	            it, the Agent Card at /a2a/.well-known/agent-card.json and
//	            at the host's /.well-known/agent-card.json
//
// A server that wants other prefixes, or only some of the formats, mounts
// the handlers itself, as [All] does: each handler's package says how.
//
// [Serve] then runs the server until a context ends (a signal), and shuts
// it down as a load balancer expects: health checks fail first, the
// listener closes, and the calls in flight finish within a grace period.
package mount

import (
	"log/slog"
	"net/http"
	"reflect"
	"strings"

	"github.com/otcgo/otc"
	"github.com/otcgo/otc/a2a"
	"github.com/otcgo/otc/caller"
	"github.com/otcgo/otc/internal/wire"
	"github.com/otcgo/otc/mcp"
	"github.com/otcgo/otc/registryview"
	"github.com/otcgo/otc/rest"
	"github.com/otcgo/otc/search"
)

// The prefixes [All] mounts the wire formats under.
const (
	PrefixOTC      = wire.PathOTC
	PrefixMCP      = wire.PathMCP
	PrefixREST     = wire.PathREST
	PrefixRegistry = wire.PathRegistry
	PrefixA2A      = wire.PathA2A
)

// Options configures [All]. The zero value, and nil, serve every format
// with its defaults and no authentication.
type Options struct {
	// Authenticator, when set, is the authenticator of every format whose
	// own options below do not set one. Wrap it in ratelimit.Guard to
	// bound each client's failed authentications.
	Authenticator otc.Authenticator
	// Logger, when set, is the logger of every format whose own options
	// do not set one. Nil means the registry's.
	Logger *slog.Logger
	// URL is the absolute URL clients reach the mux at
	// ("https://tools.example.com"), below which the formats that name
	// their own URLs say they are served: the Agent Card names
	// URL+PrefixA2A (unless the A2A options set a URL of their own).
	// Empty means each request's Host, which a proxy in front may let a
	// client choose: set it behind one.
	URL string
	// Callers, when set, says how every format reads the client of a
	// request (the proxies whose X-Forwarded-For to trust, how IPv6
	// clients are grouped): for the rate limits, the bound on failed
	// authentications and an anonymous caller's tasks. Nil means the TCP
	// peer, as caller.Handler says.
	Callers *caller.Options
	// NoSearch leaves GET /tools?q= of the OTC handler and the REST view
	// unanswered (400: the server does not search). By default All gives
	// both search.Query, unless their own options set a Search.
	NoSearch bool

	// The options of each format's handler; nil means its defaults (with
	// Authenticator and Logger above).
	OTC      *otc.HandlerOptions
	MCP      *mcp.Options
	REST     *rest.Options
	Registry *registryview.Options
	A2A      *a2a.Options
}

// Handlers are the handlers [All] mounted, for what a server does with
// them afterwards: [mount.ServeOptions].Drain takes the OTC handler, so that
// health checks fail while a shutdown drains, and the MCP handler, so that
// its subscriptions/listen streams end rather than hold the shutdown.
type Handlers struct {
	OTC      *otc.Handler
	MCP      *mcp.Handler
	REST     *rest.Handler
	Registry *registryview.Handler
	A2A      *a2a.Handler
}

// All mounts the OTC, MCP, REST, registry view and A2A handlers of reg on
// mux, under PrefixOTC, PrefixMCP, PrefixREST, PrefixRegistry and
// PrefixA2A. MCP answers
// at PrefixMCP with and without a trailing slash (clients write both),
// and at nothing below it. Like [http.ServeMux.Handle], it panics when a
// pattern conflicts with one already on mux; it is meant for a server's
// setup, as Handle is.
func All(mux *http.ServeMux, reg *otc.Registry, opts *Options) *Handlers {
	if opts == nil {
		opts = &Options{}
	}
	o, m, r, v, x := shared(opts.OTC, opts), shared(opts.MCP, opts), shared(opts.REST, opts), shared(opts.Registry, opts), shared(opts.A2A, opts)
	if !opts.NoSearch {
		if o.Search == nil {
			o.Search = search.Query
		}
		if r.Search == nil {
			r.Search = search.Query
		}
	}
	if x.URL == "" && opts.URL != "" {
		x.URL = strings.TrimSuffix(opts.URL, "/") + PrefixA2A
	}

	h := &Handlers{
		OTC:      otc.NewHandler(reg, o),
		MCP:      mcp.NewHandler(reg, m),
		REST:     rest.NewHandler(reg, r),
		Registry: registryview.NewHandler(reg, v),
		A2A:      a2a.NewHandler(reg, x),
	}
	at := func(h http.Handler) http.Handler { return caller.Handler(h, opts.Callers) }
	mux.Handle(PrefixOTC+"/", at(http.StripPrefix(PrefixOTC, h.OTC)))
	mh := at(h.MCP)
	mux.Handle(PrefixMCP, mh)
	mux.Handle(PrefixMCP+"/{$}", mh)
	mux.Handle(PrefixREST+"/", at(http.StripPrefix(PrefixREST, h.REST)))
	mux.Handle(PrefixRegistry+"/", at(http.StripPrefix(PrefixRegistry, h.Registry)))
	a := at(http.StripPrefix(PrefixA2A, h.A2A))
	mux.Handle(PrefixA2A, a)
	mux.Handle(PrefixA2A+"/", a)
	mux.Handle("/.well-known/agent-card.json", h.A2A.Card(PrefixA2A))
	return h
}

// shared returns a copy of a format's options *p (the zero options when p
// is nil, so that All never changes the options it is given), with
// opts's Authenticator and Logger in place of its own where it has none.
// Every format's options name the two fields alike.
func shared[T any](p *T, opts *Options) *T {
	var c T
	if p != nil {
		c = *p
	}
	v := reflect.ValueOf(&c).Elem()
	if f := v.FieldByName("Authenticator"); f.IsNil() && opts.Authenticator != nil {
		f.Set(reflect.ValueOf(opts.Authenticator))
	}
	if f := v.FieldByName("Logger"); f.IsNil() && opts.Logger != nil {
		f.Set(reflect.ValueOf(opts.Logger))
	}
	return &c
}
