package otc

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

	"github.com/otcgo/otc/internal/wire"
)

// This file serves a registry's catalog as the listing of a universal tool
// registry: one entry per tool version, with the protocols it accepts and
// the policy a capability token must satisfy, for registries and gateways
// that route calls by protocol rather than call the tools themselves.

// RegistryViewOptions configures a [RegistryView]. The zero value, and nil,
// give the defaults described on each field.
type RegistryViewOptions struct {
	// Authenticator, when set, must accept every request, as for the OTC
	// [Handler]; a refusal is answered 401 with the WWW-Authenticate value
	// of [WWWAuthenticate]. Nil means no authentication: the listing names
	// tools and policies, not secrets, but a server that hides its other
	// views should hide this one too.
	Authenticator Authenticator
	// Logger receives faults of the view itself. Nil means the registry's
	// logger, or slog.Default() without a registry.
	Logger *slog.Logger
}

// RegistryView serves a [Registry]'s catalog as a tool registry's listing:
//
//	GET /v1/tools[?protocol=NAME]  every tool version, optionally only those callable through NAME
//	GET /v1/mcp/tools              the tools callable over MCP, the same as ?protocol=mcp
//	GET /v1/tools/{tool_id}        one tool version
//
// Paths are relative to where the view is mounted:
//
//	mux.Handle("/registry/", http.StripPrefix("/registry", otc.NewRegistryView(reg, nil)))
//
// An entry is a JSON object with "tool_id" (the OTC id with its version,
// "Payments.Refund@1.0.0"), "name", "description", "version" and
// "protocols", followed by the fields of the tool's [Policy] that are set:
// "resource_uri", "required_capabilities", "max_blast_radius",
// "requires_execution", "allowed_operations" and "allowed_targets".
// "protocols" is always written: a tool whose policy names no protocols
// lists this library's three wire formats, ["otc", "http", "mcp"],
// because the registries this shape comes from read a missing list as
// ["mcp"] alone. Entries come in catalog order (by id, then version).
//
// The protocol filter compares names, without versions, on both sides:
// "a2a" selects a tool listing "a2a/2025-draft-01", and so does
// "a2a/2025-draft-01". A tool without a protocol list matches only the
// three names it lists.
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
type RegistryView struct {
	reg    *Registry
	auth   Authenticator
	logger *slog.Logger
	cache  atomic.Pointer[registryListing]
}

var _ http.Handler = (*RegistryView)(nil)

// NewRegistryView returns a view of reg's catalog. opts may be nil. reg may
// be nil too, for a server that mounts the view before it has a registry
// to show: every catalog route then answers 503 server_error, "Tool
// registry not initialised".
func NewRegistryView(reg *Registry, opts *RegistryViewOptions) *RegistryView {
	if opts == nil {
		opts = &RegistryViewOptions{}
	}
	v := &RegistryView{reg: reg, auth: opts.Authenticator, logger: opts.Logger}
	if v.logger == nil {
		if reg != nil {
			v.logger = reg.logger
		} else {
			v.logger = slog.Default()
		}
	}
	return v
}

// The error codes of the registry view.
const (
	registryInvalidRequest   = "invalid_request"
	registryAccessDenied     = "access_denied"
	registryNotFound         = "not_found"
	registryMethodNotAllowed = "method_not_allowed"
	registryServerError      = "server_error"
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
}

// defaultProtocols is the protocol list of a tool whose policy names none:
// the wire formats this library serves.
var defaultProtocols = []string{ProtocolOTC, ProtocolHTTP, ProtocolMCP}

// registryListing is the listing of one catalog snapshot, encoded once:
// each entry alone, for lookups and arbitrary filters, and the arrays of
// the common requests whole.
type registryListing struct {
	cat     *catalog
	entries [][]byte                // in cat.list order
	names   [][]string              // the protocol names of each entry
	index   map[*registeredTool]int // position in entries
	all     []byte                  // every entry
	byName  map[string][]byte       // the arrays filtered by otc, http and mcp
}

// listing returns the listing of the registry's current catalog, building
// it when the catalog has changed since the last one. Two requests that
// race to build it both do, and the last one kept wins; both are right.
func (v *RegistryView) listing() *registryListing {
	cat := v.reg.current.Load()
	if l := v.cache.Load(); l != nil && l.cat == cat {
		return l
	}
	l := &registryListing{
		cat:     cat,
		entries: make([][]byte, len(cat.list)),
		names:   make([][]string, len(cat.list)),
		index:   make(map[*registeredTool]int, len(cat.list)),
		byName:  make(map[string][]byte, len(defaultProtocols)),
	}
	for i, t := range cat.list {
		l.entries[i], l.names[i] = encodeRegistryEntry(&t.def)
		l.index[t] = i
	}
	l.all = l.filter("")
	for _, p := range defaultProtocols {
		l.byName[p] = l.filter(p)
	}
	v.cache.Store(l)
	return l
}

// encodeRegistryEntry encodes a tool version's entry, and returns the
// names of the protocols it lists.
func encodeRegistryEntry(d *ToolDefinition) ([]byte, []string) {
	e := registryEntry{
		ToolID:      d.ID,
		Name:        d.Name,
		Description: d.Description,
		Version:     d.Version,
		Protocols:   defaultProtocols,
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
	}
	names := make([]string, len(e.Protocols))
	for i, p := range e.Protocols {
		names[i] = protocolName(p)
	}
	// Strings, booleans and string slices: encoding cannot fail.
	b, _ := json.Marshal(e)
	return b, names
}

// filter joins the entries that list the protocol name into a JSON array;
// "" joins them all.
func (l *registryListing) filter(name string) []byte {
	n := 2
	for _, e := range l.entries {
		n += len(e) + 1
	}
	buf := make([]byte, 0, n)
	buf = append(buf, '[')
	for i, e := range l.entries {
		if name != "" && !slices.Contains(l.names[i], name) {
			continue
		}
		if len(buf) > 1 {
			buf = append(buf, ',')
		}
		buf = append(buf, e...)
	}
	return append(buf, ']')
}

// byProtocol returns the array of the entries that list the protocol name.
func (l *registryListing) byProtocol(name string) []byte {
	if b, ok := l.byName[name]; ok {
		return b
	}
	return l.filter(name)
}

// ServeHTTP routes a request: the path first (404), then the method (405),
// then authentication (401), so that a client learns what exists before
// proving who it is, as the other handlers of this package answer.
func (v *RegistryView) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	defer v.recoverFault(w, r)

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
	r, err := Authenticate(v.auth, r)
	if err != nil {
		if c := WWWAuthenticate(v.auth); c != "" {
			w.Header().Set("WWW-Authenticate", c)
		}
		v.fail(w, http.StatusUnauthorized, registryAccessDenied, err.Message)
		return
	}
	if v.reg == nil {
		v.fail(w, http.StatusServiceUnavailable, registryServerError, "Tool registry not initialised")
		return
	}
	serve(w, r)
}

// list answers GET /v1/tools.
func (v *RegistryView) list(w http.ResponseWriter, r *http.Request) {
	query, err := url.ParseQuery(r.URL.RawQuery)
	if err != nil {
		v.fail(w, http.StatusBadRequest, registryInvalidRequest, "The query string is malformed")
		return
	}
	protocols, filtered := query["protocol"]
	if !filtered {
		writeBody(w, http.StatusOK, v.listing().all)
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
	writeBody(w, http.StatusOK, v.listing().byProtocol(name))
}

// listMCP answers GET /v1/mcp/tools, the alias of ?protocol=mcp that MCP
// clients of older registries call.
func (v *RegistryView) listMCP(w http.ResponseWriter, _ *http.Request) {
	writeBody(w, http.StatusOK, v.listing().byProtocol(ProtocolMCP))
}

// describe answers GET /v1/tools/{tool_id}.
func (v *RegistryView) describe(w http.ResponseWriter, id string) {
	t, err := v.reg.resolve(id)
	if err != nil {
		if errors.Is(err, ErrToolNotFound) {
			v.fail(w, http.StatusNotFound, registryNotFound, fmt.Sprintf("Tool '%s' was not found", wire.Truncate(id, 80)))
			return
		}
		v.fail(w, http.StatusBadRequest, registryInvalidRequest,
			fmt.Sprintf("Tool ID '%s' is malformed: send Toolkit.Tool, Toolkit.Tool@x or Toolkit.Tool@x.y.z", wire.Truncate(id, 80)))
		return
	}
	l := v.listing()
	if i, ok := l.index[t]; ok {
		writeBody(w, http.StatusOK, l.entries[i])
		return
	}
	// Registered after the listing was built.
	b, _ := encodeRegistryEntry(&t.def)
	writeBody(w, http.StatusOK, b)
}

// registryError is the error document of the registry view.
type registryError struct {
	Error       string `json:"error"`
	Description string `json:"error_description,omitempty"`
}

// fail writes an error answer.
func (v *RegistryView) fail(w http.ResponseWriter, status int, code, description string) {
	b, _ := json.Marshal(registryError{Error: code, Description: description}) // two strings: cannot fail
	writeBody(w, status, b)
}

// recoverFault answers a JSON 500 if the view itself panics.
func (v *RegistryView) recoverFault(w http.ResponseWriter, r *http.Request) {
	p := recover()
	if p == nil {
		return
	}
	logFault(v.logger, r, p)
	v.fail(w, http.StatusInternalServerError, registryServerError, "The tool registry failed unexpectedly")
}
