package oauth

import (
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/otcgo/otc"
	"github.com/otcgo/otc/internal/wire"
)

// This file serves the Protected Resource Metadata document (RFC 9728):
// what an MCP client reads, from the URL of a 401 challenge or a
// well-known URL, to find the authorization servers to ask for a token.

// WellKnownPath is the path at which a protected resource's metadata is
// served, for a resource at the root of its host (RFC 9728 §3).
const WellKnownPath = "/.well-known/oauth-protected-resource"

// metadataMaxAge is how long clients and caches may keep the document.
// Short, because the scopes follow the registry; revalidation with the
// ETag costs a 304.
const metadataMaxAge = 300

// MetadataURL returns the URL of the metadata document of the protected
// resource whose identifier is resource (RFC 9728 §3.1): the well-known
// path inserted between the host and the path, a lone "/" after the host
// dropped. "https://tools.example.com/mcp" gives
// "https://tools.example.com/.well-known/oauth-protected-resource/mcp",
// "https://tools.example.com" and "https://tools.example.com/" give
// "https://tools.example.com/.well-known/oauth-protected-resource". It
// fails for a resource that is not an absolute URL, or has a query or
// fragment.
func MetadataURL(resource string) (string, error) {
	u, err := url.Parse(resource)
	switch {
	case err != nil || !u.IsAbs() || u.Host == "" || u.Opaque != "":
		return "", fmt.Errorf("otc/oauth: resource %q is not an absolute URL", wire.Truncate(resource, 200))
	case u.RawQuery != "" || u.ForceQuery || u.Fragment != "" || strings.Contains(resource, "#"):
		return "", fmt.Errorf("otc/oauth: resource %q has a query or fragment", wire.Truncate(resource, 200))
	}
	path := u.EscapedPath()
	if path == "/" {
		path = ""
	}
	return u.Scheme + "://" + u.Host + WellKnownPath + path, nil
}

// MetadataOptions configures the document of [Authenticator.MetadataHandler].
// The zero value, and nil, give a document with the required members and
// the registry's scopes.
type MetadataOptions struct {
	// Scopes are further scopes to list in "scopes_supported", beside
	// those the registry's tools require (scopes that a client should ask
	// for to use the server at all, such as a general "tools:read").
	Scopes []string

	// ResourceName is a human-readable name of this server, for a client
	// to show when asking its user ("resource_name"). Empty means none.
	ResourceName string

	// ResourceDocumentation, ResourcePolicyURI and ResourceTOSURI are URLs
	// of the server's documentation, its data-use policy and its terms of
	// service ("resource_documentation", "resource_policy_uri",
	// "resource_tos_uri"). Empty means none; others must be absolute
	// http(s) URLs.
	ResourceDocumentation string
	ResourcePolicyURI     string
	ResourceTOSURI        string
}

// MetadataHandler serves this server's Protected Resource Metadata (RFC
// 9728), a JSON document such as:
//
//	{
//	  "resource": "https://tools.example.com/mcp",
//	  "authorization_servers": ["https://login.example.com"],
//	  "scopes_supported": ["counter:write"],
//	  "bearer_methods_supported": ["header"],
//	  "resource_name": "Example tools"
//	}
//
// "resource" is [Options.Resource] exactly, as RFC 9728 §3.3 asks,
// "authorization_servers" the issuers in the order configured,
// "scopes_supported" the union, sorted, of the RequiredScopes of the
// registry's tools and [MetadataOptions.Scopes] (left out when empty, and
// never listing "offline_access", which is no requirement of a resource),
// and "bearer_methods_supported" ["header"], the only way tokens are read.
// With [Options.DPoP] it also has "dpop_signing_alg_values_supported" and,
// where bound tokens are required, "dpop_bound_access_tokens_required".
// The document is built once per revision of the registry.
//
// It answers GET and HEAD on any path it is mounted at (see Mount) with
// Cache-Control "public, max-age=300" and an ETag (If-None-Match gives
// 304); OPTIONS with a CORS preflight answer; anything else 405. Every
// answer allows any origin (Access-Control-Allow-Origin: *): the document
// is public, carries no credentials, and the MCP clients that run in a
// browser read it from another origin, some with an MCP-Protocol-Version
// header, which the preflight allows.
type MetadataHandler struct {
	reg  *otc.Registry
	head metadataDoc // every member but scopes_supported
	path string      // the path of the resource's own metadata URL
	mu   sync.Mutex  // held while the document is rebuilt
	doc  atomic.Pointer[builtMetadata]
}

var _ http.Handler = (*MetadataHandler)(nil)

// metadataDoc is the document's JSON shape, in RFC 9728's order.
type metadataDoc struct {
	Resource              string   `json:"resource"`
	AuthorizationServers  []string `json:"authorization_servers"`
	ScopesSupported       []string `json:"scopes_supported,omitempty"`
	BearerMethods         []string `json:"bearer_methods_supported"`
	ResourceName          string   `json:"resource_name,omitempty"`
	ResourceDocumentation string   `json:"resource_documentation,omitempty"`
	ResourcePolicyURI     string   `json:"resource_policy_uri,omitempty"`
	ResourceTOSURI        string   `json:"resource_tos_uri,omitempty"`
	// RFC 9728 §2's DPoP members, where the server takes bound tokens.
	DPoPAlgs     []string `json:"dpop_signing_alg_values_supported,omitempty"`
	DPoPRequired bool     `json:"dpop_bound_access_tokens_required,omitempty"`

	extraScopes []string
}

// builtMetadata is the document of one registry revision.
type builtMetadata struct {
	revision uint64
	body     []byte
	etag     string
}

// MetadataHandler returns the handler of this server's metadata document,
// listing the scopes of reg's tools (nil for none) and what opts adds
// (nil for nothing). It fails when a URL of opts is not an absolute
// http(s) URL, or a scope is empty or holds a space or a quote.
func (a *Authenticator) MetadataHandler(reg *otc.Registry, opts *MetadataOptions) (*MetadataHandler, error) {
	if opts == nil {
		opts = &MetadataOptions{}
	}
	for _, f := range []struct{ name, value string }{
		{"ResourceDocumentation", opts.ResourceDocumentation},
		{"ResourcePolicyURI", opts.ResourcePolicyURI},
		{"ResourceTOSURI", opts.ResourceTOSURI},
	} {
		if f.value == "" {
			continue
		}
		if u, err := url.Parse(f.value); err != nil || !(u.Scheme == "https" || u.Scheme == "http") || u.Host == "" {
			return nil, fmt.Errorf("otc/oauth: MetadataHandler: %s %q is not an absolute http(s) URL", f.name, wire.Truncate(f.value, 200))
		}
	}
	for _, s := range opts.Scopes {
		if err := checkScope(s); err != nil {
			return nil, fmt.Errorf("otc/oauth: MetadataHandler: Scopes: %w", err)
		}
	}
	u, err := url.Parse(a.prmURL)
	if err != nil {
		return nil, fmt.Errorf("otc/oauth: MetadataHandler: %w", err)
	}
	h := &MetadataHandler{
		reg:  reg,
		path: u.Path,
		head: metadataDoc{
			Resource:              a.resource,
			AuthorizationServers:  a.Issuers(),
			BearerMethods:         []string{"header"},
			ResourceName:          opts.ResourceName,
			ResourceDocumentation: opts.ResourceDocumentation,
			ResourcePolicyURI:     opts.ResourcePolicyURI,
			ResourceTOSURI:        opts.ResourceTOSURI,
			extraScopes:           slices.Clone(opts.Scopes),
		},
	}
	if a.dpop != nil {
		h.head.DPoPAlgs, h.head.DPoPRequired = slices.Clone(a.dpop.Algorithms), a.dpop.Required
	}
	if _, err := h.current(); err != nil {
		return nil, err
	}
	return h, nil
}

// checkScope checks a scope token (RFC 6749 §3.3).
func checkScope(s string) error {
	if s == "" {
		return errors.New("a scope is empty")
	}
	for i := 0; i < len(s); i++ {
		if c := s[i]; c <= 0x20 || c == '"' || c == '\\' || c >= 0x7f {
			return fmt.Errorf("scope %q holds a character a scope may not (RFC 6749 §3.3)", wire.Truncate(s, 80))
		}
	}
	return nil
}

// Paths returns the paths the document is served at by Mount: the
// well-known path of the resource's own metadata URL, and, for a resource
// with a path, the root's too ("/.well-known/oauth-protected-resource"),
// which MCP clients try when a challenge names no metadata URL.
func (h *MetadataHandler) Paths() []string {
	if h.path == WellKnownPath {
		return []string{WellKnownPath}
	}
	return []string{h.path, WellKnownPath}
}

// Mount registers the handler on mux at each of [MetadataHandler.Paths],
// for every method (the handler answers the ones it serves). It panics,
// as mux does, when mux already has a pattern for one of them. A server
// whose public paths differ from the mux's (behind a proxy that rewrites
// them) registers the handler itself instead.
func (h *MetadataHandler) Mount(mux *http.ServeMux) {
	for _, p := range h.Paths() {
		if strings.HasSuffix(p, "/") {
			p += "{$}"
		}
		mux.Handle(p, h)
	}
}

// ServeHTTP answers as the type's doc says.
func (h *MetadataHandler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	hdr := w.Header()
	hdr.Set("Access-Control-Allow-Origin", "*")
	switch r.Method {
	case http.MethodGet, http.MethodHead:
	case http.MethodOptions:
		hdr.Set("Access-Control-Allow-Methods", "GET, HEAD, OPTIONS")
		if req := r.Header.Get("Access-Control-Request-Headers"); req != "" && len(req) <= 1024 && headerList(req) {
			hdr.Set("Access-Control-Allow-Headers", req)
			hdr.Add("Vary", "Access-Control-Request-Headers")
		}
		hdr.Set("Access-Control-Max-Age", "86400")
		w.WriteHeader(http.StatusNoContent)
		return
	default:
		hdr.Set("Allow", "GET, HEAD, OPTIONS")
		http.Error(w, "method not allowed: the resource metadata is read with GET", http.StatusMethodNotAllowed)
		return
	}
	doc, err := h.current()
	if err != nil {
		http.Error(w, "the resource metadata could not be built", http.StatusInternalServerError)
		return
	}
	hdr.Set("Cache-Control", "public, max-age="+strconv.Itoa(metadataMaxAge))
	hdr.Set("ETag", doc.etag)
	if match := r.Header.Get("If-None-Match"); match != "" && etagMatches(match, doc.etag) {
		w.WriteHeader(http.StatusNotModified)
		return
	}
	wire.SetJSONHeaders(hdr, len(doc.body), true)
	w.WriteHeader(http.StatusOK)
	if r.Method == http.MethodGet {
		_, _ = w.Write(doc.body)
	}
}

// current returns the document of the registry's current revision,
// building it when the revision has moved on.
func (h *MetadataHandler) current() (*builtMetadata, error) {
	var rev uint64
	if h.reg != nil {
		rev = h.reg.Revision()
	}
	if d := h.doc.Load(); d != nil && d.revision == rev {
		return d, nil
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	if d := h.doc.Load(); d != nil && d.revision == rev {
		return d, nil
	}
	doc := h.head
	scopes := slices.Clone(h.head.extraScopes)
	if h.reg != nil {
		for _, t := range h.reg.Tools() {
			if t.Policy != nil {
				scopes = append(scopes, t.Policy.RequiredScopes...)
			}
		}
	}
	slices.Sort(scopes)
	scopes = slices.Compact(scopes)
	doc.ScopesSupported = slices.DeleteFunc(scopes, func(s string) bool { return s == "offline_access" || s == "" })
	body, err := json.Marshal(doc)
	if err != nil {
		return nil, fmt.Errorf("otc/oauth: encoding the resource metadata: %w", err)
	}
	sum := sha256.Sum256(body)
	d := &builtMetadata{revision: rev, body: body, etag: `"` + base64.RawURLEncoding.EncodeToString(sum[:18]) + `"`}
	h.doc.Store(d)
	return d, nil
}

// etagMatches reports whether an If-None-Match value names etag, or is
// "*" (weak comparison, RFC 9110 §13.1.2).
func etagMatches(header, etag string) bool {
	for part := range strings.SplitSeq(header, ",") {
		part = strings.TrimPrefix(strings.TrimSpace(part), "W/")
		if part == "*" || part == etag {
			return true
		}
	}
	return false
}

// headerList reports whether s is a list of header names, which a
// preflight answer may repeat.
func headerList(s string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z', '0' <= c && c <= '9':
		case c == '-' || c == '_' || c == ',' || c == ' ':
		default:
			return false
		}
	}
	return true
}
