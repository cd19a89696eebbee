package registryview

import (
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"sync/atomic"

	"github.com/otcgo/otc"
	"github.com/otcgo/otc/internal/viewcache"
	"github.com/otcgo/otc/internal/wire"
)

// Options configures a [Handler]. The zero value, and nil,
// give the defaults described on each field.
type Options struct {
	// Authenticator, when set, must accept every request, as for the OTC
	// [otc.Handler]; a refusal is answered 401 with the WWW-Authenticate value
	// of [otc.Challenge]. Nil means no authentication: the listing names
	// tools and policies, not secrets, but a server that hides its other
	// views should hide this one too.
	Authenticator otc.Authenticator
	// Logger receives faults of the view itself. Nil means the registry's
	// logger, or slog.Default() without a registry.
	Logger *slog.Logger
}

// Handler serves an [otc.Registry]'s catalog as a tool registry's listing:
//
//	GET /v1/tools[?protocol=NAME]  every tool version, optionally only those callable through NAME
//	GET /v1/mcp/tools              the tools callable over MCP, the same as ?protocol=mcp
//	GET /v1/tools/{tool_id}        one tool version
//
// Paths are relative to where the view is mounted:
//
//	mux.Handle("/registry/", http.StripPrefix("/registry", registryview.NewHandler(reg, nil)))
//
// An entry is a JSON object with "tool_id" (the OTC id with its version,
// "Payments.Refund@1.0.0"), "name", "description", "version" and
// "protocols", followed by the fields of the tool's [Policy] that are set:
// "resource_uri", "required_capabilities", "max_blast_radius",
// "requires_execution", "allowed_operations", "allowed_targets" and
// "required_scopes" (the OAuth scopes a caller's token must grant) and
// "requires_bound_token" (no bearer tokens), and then, when the tool has them, its "title", "annotations" and "icons"
// ([otc.Tool.Title], [otc.Tool.Annotations], [otc.Tool.Icons]) in MCP's
// shapes, so that a registry can show the tools and tell a client which
// may destroy something. A tool's _meta, MCP's own extension data, is
// left to MCP.
// "protocols" is always written: a tool whose policy names no protocols
// lists this library's four wire formats, ["otc", "http", "mcp", "a2a"],
// because the registries this shape comes from read a missing list as
// ["mcp"] alone. Entries come in catalog order (by id, then version).
//
// The protocol filter compares names, without versions, on both sides:
// "a2a" selects a tool listing "a2a/2025-draft-01", and so does
// "a2a/2025-draft-01". A tool without a protocol list matches only the
// four names it lists.
//
// {tool_id} resolves as a call's tool_id does over OTC: "Payments.Refund"
// is its highest version, "Payments.Refund@1" is 1.0.0, and
// "Payments.Refund@1.0.0" is that version.
//
// Errors are {"error": code, "error_description": text}, with the codes of
// the registry API this view follows: invalid_request (400: an empty or
// repeated protocol, a malformed query or tool id), access_denied (401,
// refused by the Authenticator), not_found (404: an unknown path or tool),
// method_not_allowed (405, with "Allow: GET") and server_error (503 when
// the view has no registry; 500 if the view itself fails).
type Handler struct {
	reg    *otc.Registry
	auth   otc.Authenticator
	logger *slog.Logger
	// faultBody answers a panic of the view itself (wire.Recover).
	faultBody []byte
	cache     atomic.Pointer[registryListing]
	// views holds the arrays of the callers who see only some of the
	// tools, by visibility key: of every entry ([0]), and filtered by
	// each of defaultProtocols in turn.
	views [1 + len(defaultProtocols)]viewcache.Cache[[]byte]
}

var _ http.Handler = (*Handler)(nil)

// NewHandler returns a view of reg's catalog. opts may be nil. reg may
// be nil too, for a server that mounts the view before it has a registry
// to show: every catalog route then answers 503 server_error, "Tool
// registry not initialised".
func NewHandler(reg *otc.Registry, opts *Options) *Handler {
	if opts == nil {
		opts = &Options{}
	}
	v := &Handler{reg: reg, auth: opts.Authenticator, logger: opts.Logger}
	if v.logger == nil {
		if reg != nil {
			v.logger = reg.Logger()
		} else {
			v.logger = slog.Default()
		}
	}
	v.faultBody, _ = json.Marshal(registryError{Error: registryServerError, Description: "The tool registry failed unexpectedly"})
	return v
}

// The error codes of the registry view.
const (
	registryInvalidRequest   = "invalid_request"
	registryAccessDenied     = "access_denied"
	registryNotFound         = "not_found"
	registryMethodNotAllowed = "method_not_allowed"
	registryServerError      = "server_error"
	registryRateLimited      = "rate_limited"
)

// registryEntry is one tool version in the listing.
type registryEntry struct {
	ToolID               string   `json:"tool_id"`
	Name                 string   `json:"name"`
	Description          string   `json:"description"`
	Version              string   `json:"version"`
	Protocols            []string `json:"protocols"`
	ResourceURI          string   `json:"resource_uri,omitempty"`
	RequiredCapabilities []string `json:"required_capabilities,omitempty"`
	MaxBlastRadius       string   `json:"max_blast_radius,omitempty"`
	RequiresExecution    bool     `json:"requires_execution,omitempty"`
	AllowedOperations    []string `json:"allowed_operations,omitempty"`
	AllowedTargets       []string `json:"allowed_targets,omitempty"`
	RequiredScopes       []string `json:"required_scopes,omitempty"`
	RequiresBoundToken   bool     `json:"requires_bound_token,omitempty"`

	// The tool's, in MCP's shapes.
	Title       string               `json:"title,omitempty"`
	Annotations *otc.ToolAnnotations `json:"annotations,omitempty"`
	Icons       []otc.Icon           `json:"icons,omitempty"`
}

// defaultProtocols is the protocol list of a tool whose policy names none:
// the wire formats this library serves.
var defaultProtocols = [...]string{otc.ProtocolOTC, otc.ProtocolHTTP, otc.ProtocolMCP, otc.ProtocolA2A}

// registryListing is the listing of one revision of the registry,
// encoded once: each entry alone, for lookups and arbitrary filters, and
// the arrays of the common requests whole.
type registryListing struct {
	revision uint64
	entries  [][]byte          // in catalog order
	ids      []string          // the versioned tool id of each entry
	names    [][]string        // the protocol names of each entry
	index    map[string]int    // position in entries, by versioned tool id
	all      []byte            // every entry
	byName   map[string][]byte // the arrays filtered by otc, http and mcp
}

// listing returns the listing of the registry's current catalog, building
// it when the catalog has changed since the last one. Two requests that
// race to build it both do, and the last one kept wins; both are right.
func (v *Handler) listing() *registryListing {
	rev := v.reg.Revision()
	if l := v.cache.Load(); l != nil && l.revision == rev {
		return l
	}
	defs := v.reg.Tools()
	l := &registryListing{
		revision: rev,
		entries:  make([][]byte, len(defs)),
		ids:      make([]string, len(defs)),
		names:    make([][]string, len(defs)),
		index:    make(map[string]int, len(defs)),
		byName:   make(map[string][]byte, len(defaultProtocols)),
	}
	for i := range defs {
		l.entries[i], l.names[i] = encodeRegistryEntry(&defs[i])
		l.ids[i] = defs[i].ID
		l.index[defs[i].ID] = i
	}
	l.all = l.filter("", otc.Visibility{})
	for _, p := range defaultProtocols {
		l.byName[p] = l.filter(p, otc.Visibility{})
	}
	v.cache.Store(l)
	return l
}

// encodeRegistryEntry encodes a tool version's entry, and returns the
// names of the protocols it lists.
func encodeRegistryEntry(d *otc.ToolDefinition) ([]byte, []string) {
	e := registryEntry{
		ToolID:      d.ID,
		Name:        d.Name,
		Description: d.Description,
		Version:     d.Version,
		Protocols:   defaultProtocols[:],
		Title:       d.Title,
		Annotations: d.Annotations,
		Icons:       d.Icons,
	}
	if p := d.Policy; p != nil {
		if len(p.Protocols) > 0 {
			e.Protocols = p.Protocols
		}
		e.ResourceURI = p.ResourceURI
		e.RequiredCapabilities = p.RequiredCapabilities
		e.MaxBlastRadius = p.MaxBlastRadius
		e.RequiresExecution = p.RequiresExecution
		e.AllowedOperations = p.AllowedOperations
		e.AllowedTargets = p.AllowedTargets
		e.RequiredScopes = p.RequiredScopes
		e.RequiresBoundToken = p.RequiresBoundToken
	}
	names := make([]string, len(e.Protocols))
	for i, p := range e.Protocols {
		names[i] = protocolName(p)
	}
	// Strings, booleans and slices of them: encoding cannot fail.
	b, _ := json.Marshal(e)
	return b, names
}

// filter joins the entries that list the protocol name, and that v sees,
// into a JSON array; "" joins them all, and the zero Visibility sees
// every entry.
func (l *registryListing) filter(name string, v otc.Visibility) []byte {
	n := 2
	for _, e := range l.entries {
		n += len(e) + 1
	}
	buf := make([]byte, 0, n)
	buf = append(buf, '[')
	for i, e := range l.entries {
		if name != "" && !slices.Contains(l.names[i], name) || !v.Sees(l.ids[i]) {
			continue
		}
		if len(buf) > 1 {
			buf = append(buf, ',')
		}
		buf = append(buf, e...)
	}
	return append(buf, ']')
}

// array returns the array of the entries that list the protocol name
// ("" for all) and that the caller sees, by its visibility v: the
// arrays of every entry and of this library's protocols are built once
// per revision, and for a caller who sees only some of the tools once per
// revision and key; those of other protocols are joined per request.
func (v *Handler) array(l *registryListing, name string, vis otc.Visibility) []byte {
	if vis.Key() == "" {
		if name == "" {
			return l.all
		}
		if b, ok := l.byName[name]; ok {
			return b
		}
		return l.filter(name, vis)
	}
	cache := -1
	if name == "" {
		cache = 0
	}
	for i, p := range defaultProtocols {
		if p == name {
			cache = 1 + i
		}
	}
	if cache < 0 || vis.Revision() != l.revision {
		// Another protocol, or a registration came between the reads of
		// the listing and of the visibility: served, not kept.
		return l.filter(name, vis)
	}
	return v.views[cache].Get(l.revision, vis.Key(), func() []byte { return l.filter(name, vis) })
}

// visibility returns what the caller of r may see of the registry: its
// tools across protocols, as the listing spans them.
func (v *Handler) visibility(r *http.Request) otc.Visibility {
	return v.reg.Visibility(otc.CallerIdentity(r.Context()), "")
}

// ServeHTTP routes a request: the path first (404), then the method (405),
// then authentication (401), so that a client learns what exists before
// proving who it is, as the other handlers of this package answer.
func (v *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	defer wire.Recover(v.logger, w, r, v.faultBody)

	path := r.URL.Path
	var serve func(w http.ResponseWriter, r *http.Request)
	switch {
	case path == "/v1/tools":
		serve = v.list
	case path == "/v1/mcp/tools":
		serve = v.listMCP
	default:
		id, ok := strings.CutPrefix(path, "/v1/tools/")
		if !ok || id == "" || strings.Contains(id, "/") {
			v.fail(w, http.StatusNotFound, registryNotFound, fmt.Sprintf("No route for '%s'", wire.Truncate(path, 80)))
			return
		}
		serve = func(w http.ResponseWriter, r *http.Request) { v.describe(w, id) }
	}
	if r.Method != http.MethodGet {
		w.Header().Set("Allow", http.MethodGet)
		v.fail(w, http.StatusMethodNotAllowed, registryMethodNotAllowed,
			fmt.Sprintf("Method %s is not allowed here; use GET", wire.Truncate(r.Method, 32)))
		return
	}
	r, err := otc.Authenticate(v.auth, r)
	if err != nil {
		if c := otc.Challenge(v.auth, err); c != "" {
			w.Header().Set("WWW-Authenticate", c)
		}
		switch err.Code {
		case otc.CodeUnavailable:
			wire.SetRetryAfter(w.Header(), err.RetryAfter)
			v.fail(w, http.StatusServiceUnavailable, registryServerError, err.Message)
		case otc.CodeRateLimited: // too many failed authentications
			wire.SetRetryAfter(w.Header(), err.RetryAfter)
			v.fail(w, http.StatusTooManyRequests, registryRateLimited, err.Message)
		default:
			v.fail(w, http.StatusUnauthorized, registryAccessDenied, err.Message)
		}
		return
	}
	if v.reg == nil {
		v.fail(w, http.StatusServiceUnavailable, registryServerError, "Tool registry not initialised")
		return
	}
	serve(w, r)
}

// list answers GET /v1/tools.
func (v *Handler) list(w http.ResponseWriter, r *http.Request) {
	query, err := url.ParseQuery(r.URL.RawQuery)
	if err != nil {
		v.fail(w, http.StatusBadRequest, registryInvalidRequest, "The query string is malformed")
		return
	}
	protocols, filtered := query["protocol"]
	if !filtered {
		wire.WriteBody(w, http.StatusOK, v.array(v.listing(), "", v.visibility(r)))
		return
	}
	if len(protocols) > 1 {
		v.fail(w, http.StatusBadRequest, registryInvalidRequest, "protocol may be given once")
		return
	}
	name := protocolName(protocols[0])
	if name == "" {
		v.fail(w, http.StatusBadRequest, registryInvalidRequest,
			`protocol must name a protocol, as "name" or "name/version" ("mcp", "a2a/2025-draft-01")`)
		return
	}
	wire.WriteBody(w, http.StatusOK, v.array(v.listing(), name, v.visibility(r)))
}

// listMCP answers GET /v1/mcp/tools, the alias of ?protocol=mcp that MCP
// clients of older registries call.
func (v *Handler) listMCP(w http.ResponseWriter, r *http.Request) {
	wire.WriteBody(w, http.StatusOK, v.array(v.listing(), otc.ProtocolMCP, v.visibility(r)))
}

// describe answers GET /v1/tools/{tool_id}.
func (v *Handler) describe(w http.ResponseWriter, id string) {
	d, err := v.reg.Lookup(id, "")
	if err != nil {
		if errors.Is(err, otc.ErrToolNotFound) {
			v.fail(w, http.StatusNotFound, registryNotFound, fmt.Sprintf("Tool '%s' was not found", wire.Truncate(id, 80)))
			return
		}
		v.fail(w, http.StatusBadRequest, registryInvalidRequest,
			fmt.Sprintf("Tool ID '%s' is malformed: send Toolkit.Tool, Toolkit.Tool@x or Toolkit.Tool@x.y.z", wire.Truncate(id, 80)))
		return
	}
	l := v.listing()
	if i, ok := l.index[d.ID]; ok {
		wire.WriteBody(w, http.StatusOK, l.entries[i])
		return
	}
	// Registered after the listing was built.
	b, _ := encodeRegistryEntry(d)
	wire.WriteBody(w, http.StatusOK, b)
}

// registryError is the error document of the registry view.
type registryError struct {
	Error       string `json:"error"`
	Description string `json:"error_description,omitempty"`
}

// fail writes an error answer.
func (v *Handler) fail(w http.ResponseWriter, status int, code, description string) {
	b, _ := json.Marshal(registryError{Error: code, Description: description}) // two strings: cannot fail
	wire.WriteBody(w, status, b)
}

// protocolName strips the version of "name/version".
func protocolName(p string) string {
	name, _, _ := strings.Cut(p, "/")
	return strings.TrimSpace(name)
}
