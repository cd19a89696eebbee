package otc

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"maps"
	"mime"
	"net/url"
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/otcgo/otc/internal/wire"
)

// ToolAnnotations are hints about what a tool does to the world, which MCP
// clients read from tools/list: a hosted assistant, for one, asks its user
// to confirm before it calls a tool that may destroy something. They are
// MCP's ToolAnnotations, and they are hints: they describe the tool, they
// enforce nothing (its [Policy] does that), and a client should trust
// them only as far as it trusts the server.
//
// Each hint is a pointer so that a hint left unset (nil) stays unset on
// the wire, where a client applies the protocol's default; write
// new(true) or new(false) to state one. The zero value, and nil, state
// nothing: a client then assumes a tool that may change anything,
// destructively, more than once, and that reaches outside the server.
//
// MCP's annotations.title is not here: [Tool.Title] is the tool's title,
// which MCP lists as "title", the field clients read first.
type ToolAnnotations struct {
	// ReadOnlyHint true says the tool does not modify its environment.
	// MCP's default is false.
	ReadOnlyHint *bool `json:"readOnlyHint,omitempty"`
	// DestructiveHint true says the tool may perform destructive updates
	// (delete, overwrite, pay out); false says its updates are only
	// additive. It means something only for a tool that is not read-only.
	// MCP's default is true.
	DestructiveHint *bool `json:"destructiveHint,omitempty"`
	// IdempotentHint true says calling the tool again with the same
	// arguments has no further effect on its environment. It means
	// something only for a tool that is not read-only. MCP's default is
	// false.
	IdempotentHint *bool `json:"idempotentHint,omitempty"`
	// OpenWorldHint true says the tool may interact with an open world of
	// external entities (the web, a payment network); false says its
	// domain is closed (this server's own data). MCP's default is true.
	OpenWorldHint *bool `json:"openWorldHint,omitempty"`
}

// Icon is an image a client may show beside a tool: MCP's Icon, listed
// in tools/list from protocol version 2025-11-25 on.
type Icon struct {
	// Src is the image: an https URL, or a data: URI holding the image in
	// base64 ("data:image/png;base64,iVBOR..."). Other schemes, plain
	// http included, are refused at registration: MCP's security
	// considerations (2025-11-25) have clients accept only these two.
	Src string `json:"src"`
	// MIMEType optionally names the image's type ("image/png",
	// "image/svg+xml") when Src does not tell it well. Empty means the
	// type Src gives.
	MIMEType string `json:"mimeType,omitempty"`
	// Sizes lists the sizes at which the icon can be used, each "WxH" in
	// pixels ("48x48") or "any" for a scalable image. Nil means any size.
	Sizes []string `json:"sizes,omitempty"`
	// Theme is "light" for an icon made for a light background, "dark"
	// for a dark one, or empty for either.
	Theme string `json:"theme,omitempty"`
}

// metaPrefix is the _meta prefix of this library's own keys, which tools
// may not use, so that the library may add keys of its own to a tool's
// _meta without meeting a tool's.
const metaPrefix = "io.github.otcgo/"

// toolMetadata checks a tool's title, annotations, icons and meta, and
// returns the copies its definition holds: annotations that state nothing
// and empty lists become nil, and meta becomes its JSON object.
func toolMetadata(t Tool) (ann *ToolAnnotations, icons []Icon, meta json.RawMessage, problem string) {
	if p := titleProblem(t.Title); p != "" {
		return nil, nil, nil, p
	}
	if p := annotationsProblem(t.Annotations); p != "" {
		return nil, nil, nil, p
	}
	for i, ic := range t.Icons {
		if p := iconProblem(ic); p != "" {
			return nil, nil, nil, fmt.Sprintf("Icons[%d].%s", i, p)
		}
	}
	meta, p := encodeMeta(t.Meta)
	if p != "" {
		return nil, nil, nil, p
	}
	return cloneAnnotations(t.Annotations), cloneIcons(t.Icons), meta, ""
}

// titleProblem describes what is wrong with a title, or returns "".
func titleProblem(title string) string {
	switch {
	case title == "":
		return ""
	case !utf8.ValidString(title):
		return "Title is not valid UTF-8"
	case strings.TrimSpace(title) == "":
		return "Title is blank: leave it empty for none, or give the tool a name for people"
	case strings.IndexFunc(title, unicode.IsControl) >= 0:
		return fmt.Sprintf("Title %q holds a control character: a title is one line of text", wire.Truncate(title, 80))
	}
	return ""
}

// annotationsProblem describes hints that contradict each other, or
// returns "". A read-only tool changes nothing, so it can be neither
// destructive nor anything but idempotent; MCP says the two hints mean
// nothing for it, and a tool that states them otherwise has one of the
// three wrong.
func annotationsProblem(a *ToolAnnotations) string {
	if a == nil || a.ReadOnlyHint == nil || !*a.ReadOnlyHint {
		return ""
	}
	switch {
	case a.DestructiveHint != nil && *a.DestructiveHint:
		return "Annotations: ReadOnlyHint and DestructiveHint are both true: a read-only tool destroys nothing"
	case a.IdempotentHint != nil && !*a.IdempotentHint:
		return "Annotations: ReadOnlyHint is true and IdempotentHint false: a read-only tool has no effect to repeat"
	}
	return ""
}

// iconProblem describes what is wrong with an icon, starting with the
// field at fault, or returns "".
func iconProblem(ic Icon) string {
	if p := iconSrcProblem(ic.Src); p != "" {
		return "Src " + p
	}
	if ic.MIMEType != "" {
		mt, _, err := mime.ParseMediaType(ic.MIMEType)
		if err != nil || !strings.HasPrefix(mt, "image/") {
			return fmt.Sprintf("MIMEType %q is not an image type such as image/png", ic.MIMEType)
		}
	}
	for _, s := range ic.Sizes {
		if !isIconSize(s) {
			return fmt.Sprintf("Sizes holds %q: each size is WxH in pixels (\"48x48\") or \"any\"", s)
		}
	}
	switch ic.Theme {
	case "", "light", "dark":
	default:
		return fmt.Sprintf("Theme %q is not \"light\", \"dark\" or empty", ic.Theme)
	}
	return ""
}

// iconSrcProblem describes what is wrong with an icon's source, or returns
// "". MCP's security considerations for icons (2025-11-25) have clients
// ensure a source is https or data: and fetch it without credentials, so
// a source they would refuse, or one that carries credentials, is refused
// here first.
func iconSrcProblem(src string) string {
	if src == "" {
		return "is empty: give an https URL or a data: URI"
	}
	quoted := fmt.Sprintf("%q", wire.Truncate(src, 80))
	if len(src) >= 5 && strings.EqualFold(src[:5], "data:") {
		header, payload, ok := strings.Cut(src[5:], ",")
		mediaType, isBase64 := strings.CutSuffix(header, ";base64")
		switch {
		case !ok || !isBase64:
			return quoted + " is not a base64 data: URI (data:image/png;base64,...)"
		case !strings.HasPrefix(strings.ToLower(mediaType), "image/"):
			return quoted + " does not name an image type (data:image/png;base64,...)"
		case payload == "":
			return quoted + " holds no image"
		}
		if _, err := base64.StdEncoding.DecodeString(payload); err != nil {
			return quoted + " does not hold valid base64"
		}
		return ""
	}
	u, err := url.Parse(src)
	switch {
	case err != nil:
		return quoted + " is not a URI"
	case u.Scheme != "https":
		return quoted + " is not an https URL or a data: URI, the only sources MCP has clients accept"
	case u.Host == "":
		return quoted + " has no host"
	case u.User != nil:
		return quoted + " carries credentials: clients fetch icons without them, and would show them to anyone"
	}
	return ""
}

// isIconSize reports whether s is "any" or "WxH" with positive integers
// without leading zeros.
func isIconSize(s string) bool {
	if s == "any" {
		return true
	}
	w, h, ok := strings.Cut(s, "x")
	return ok && isNumber(w) && isNumber(h) && w != "0" && h != "0"
}

// encodeMeta checks the keys of a tool's _meta against MCP's rules and
// encodes it as a JSON object, nil when it is empty.
func encodeMeta(meta map[string]any) (json.RawMessage, string) {
	if len(meta) == 0 {
		return nil, ""
	}
	for _, k := range slices.Sorted(maps.Keys(meta)) {
		if p := metaKeyProblem(k); p != "" {
			return nil, fmt.Sprintf("Meta key %q %s", wire.Truncate(k, 80), p)
		}
		if _, err := json.Marshal(meta[k]); err != nil {
			return nil, fmt.Sprintf("Meta[%q] cannot be encoded as JSON: %v", wire.Truncate(k, 80), err)
		}
	}
	b, err := json.Marshal(meta)
	if err != nil { // each value encoded alone; kept for safety
		return nil, fmt.Sprintf("Meta cannot be encoded as JSON: %v", err)
	}
	return b, ""
}

// metaKeyProblem describes what makes k an invalid _meta key, or returns
// "". A key is an optional prefix, labels joined by dots and followed by
// a slash ("com.example/"), then a name. MCP reserves the prefixes whose
// second label is "modelcontextprotocol" or "mcp" (2025-11-25 on), and
// those with either as any label but the last (2025-06-18); both are
// refused, as is this library's own prefix, io.github.otcgo/.
func metaKeyProblem(k string) string {
	if k == "" {
		return "is empty: a key is a name, with an optional prefix (\"com.example/owner\")"
	}
	prefix, name, hasPrefix := strings.Cut(k, "/")
	if !hasPrefix {
		prefix, name = "", k
	}
	if hasPrefix {
		labels := strings.Split(prefix, ".")
		for i, l := range labels {
			if !isMetaLabel(l) {
				return fmt.Sprintf("has a malformed prefix: label %q must start with a letter, end with a letter or digit, and hold only letters, digits and hyphens", l)
			}
			reserved := strings.EqualFold(l, "modelcontextprotocol") || strings.EqualFold(l, "mcp")
			if reserved && (i == 1 || i < len(labels)-1) {
				return "has a prefix MCP reserves for itself (one whose labels name modelcontextprotocol or mcp): use your own, in reverse DNS (\"com.example/\")"
			}
		}
		if strings.EqualFold(prefix+"/", metaPrefix) {
			return "has the prefix io.github.otcgo/, which this library keeps for its own keys"
		}
	}
	if name != "" && !isMetaName(name) {
		return "has a malformed name: it must start and end with a letter or digit, and hold only letters, digits, hyphens, underscores and dots"
	}
	return ""
}

// isMetaLabel reports whether l is a label of a _meta prefix.
func isMetaLabel(l string) bool {
	if l == "" || !isASCIILetter(l[0]) || !isASCIIAlnum(l[len(l)-1]) {
		return false
	}
	for i := 1; i < len(l)-1; i++ {
		if !isASCIIAlnum(l[i]) && l[i] != '-' {
			return false
		}
	}
	return true
}

// isMetaName reports whether n, not empty, is the name of a _meta key.
func isMetaName(n string) bool {
	if !isASCIIAlnum(n[0]) || !isASCIIAlnum(n[len(n)-1]) {
		return false
	}
	for i := 1; i < len(n)-1; i++ {
		c := n[i]
		if !isASCIIAlnum(c) && c != '-' && c != '_' && c != '.' {
			return false
		}
	}
	return true
}

func isASCIILetter(c byte) bool { return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' }
func isASCIIAlnum(c byte) bool  { return isASCIILetter(c) || '0' <= c && c <= '9' }

// cloneAnnotations copies a so that the caller's later changes do not
// reach the registry. Annotations that state nothing become nil.
func cloneAnnotations(a *ToolAnnotations) *ToolAnnotations {
	if a == nil || *a == (ToolAnnotations{}) {
		return nil
	}
	clone := func(p *bool) *bool {
		if p == nil {
			return nil
		}
		return new(*p)
	}
	return &ToolAnnotations{
		ReadOnlyHint:    clone(a.ReadOnlyHint),
		DestructiveHint: clone(a.DestructiveHint),
		IdempotentHint:  clone(a.IdempotentHint),
		OpenWorldHint:   clone(a.OpenWorldHint),
	}
}

// cloneIcons copies icons, their sizes included. An empty list becomes
// nil.
func cloneIcons(icons []Icon) []Icon {
	if len(icons) == 0 {
		return nil
	}
	out := slices.Clone(icons)
	for i := range out {
		out[i].Sizes = slices.Clone(out[i].Sizes)
	}
	return out
}
