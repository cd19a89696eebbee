// Package claims reads the claims of a verified token the one way this
// module reads them: who the token names, which scopes it grants, which
// audiences match a resource and which explicit types it may carry. The
// authenticators (package otc and package oauth), the tool policy check
// and the per-caller catalogs all call it, so that each rule is written
// once.
package claims

import (
	"fmt"
	"iter"
	"net/url"
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Subject returns who a token names and by which claim: "sub" when it
// has a non-empty subject, else "client_id" for a token that names only
// the client (an OAuth client credentials grant). kind is "" when the
// token names no one.
func Subject(c map[string]any) (kind, name string) {
	if s, _ := c["sub"].(string); s != "" {
		return "sub", s
	}
	if s, _ := c["client_id"].(string); s != "" {
		return "client_id", s
	}
	return "", ""
}

// Issuer returns the token's "iss", or "".
func Issuer(c map[string]any) string {
	s, _ := c["iss"].(string)
	return s
}

// ScopeProblem says why a token's scopes are malformed, or returns "".
// The "scope" claim (and a "scp" written as one string) is a list of scope
// tokens separated by spaces (RFC 6749 section 3.3): a tab, a line break,
// any other space character or a control character makes it malformed; a
// run of spaces, or one at either end, separates nothing more. A "scp"
// array's elements are single scope tokens. A token whose scopes are
// malformed grants none: the authenticators refuse it.
func ScopeProblem(c map[string]any) string {
	if v, present := c["scope"]; present {
		s, ok := v.(string)
		if !ok {
			return "its scope claim is not a string"
		}
		return listProblem("scope", s)
	}
	switch v := c["scp"].(type) {
	case nil:
		return ""
	case string:
		return listProblem("scp", v)
	case []any:
		for i, x := range v {
			s, ok := x.(string)
			if !ok {
				return fmt.Sprintf("element %d of its scp claim is not a string", i)
			}
			if p := tokenProblem(s); p != "" {
				return fmt.Sprintf("element %d of its scp claim %s", i, p)
			}
		}
		return ""
	case []string:
		for i, s := range v {
			if p := tokenProblem(s); p != "" {
				return fmt.Sprintf("element %d of its scp claim %s", i, p)
			}
		}
		return ""
	}
	return "its scp claim is neither a string nor an array of strings"
}

// listProblem checks a space-separated list of scope tokens.
func listProblem(claim, s string) string {
	if s == "" {
		return ""
	}
	for tok := range strings.SplitSeq(s, " ") {
		if tok == "" {
			continue
		}
		if p := tokenProblem(tok); p != "" {
			return fmt.Sprintf("its %s claim %s", claim, p)
		}
	}
	return ""
}

// tokenProblem says why one scope token holds a character that no scope
// may hold, or returns "".
func tokenProblem(s string) string {
	if s == "" {
		return "is empty"
	}
	for i := 0; i < len(s); {
		r, n := utf8.DecodeRuneInString(s[i:])
		if r == ' ' {
			return "holds a space"
		}
		if r == utf8.RuneError && n == 1 {
			return fmt.Sprintf("holds a byte that is not UTF-8 at byte %d", i)
		}
		if unicode.IsSpace(r) || unicode.IsControl(r) {
			return fmt.Sprintf("holds %U at byte %d: scopes are separated by spaces (U+0020), and hold no other space or control character", r, i)
		}
		i += n
	}
	return ""
}

// Scopes yields the scopes a token grants: its "scope" claim split on
// spaces (and on nothing else), or its "scp" claim (one such string, or an array of
// strings). A token whose scopes are malformed ([ScopeProblem]) grants
// none. It does not allocate.
func Scopes(c map[string]any) iter.Seq[string] {
	return func(yield func(string) bool) {
		if ScopeProblem(c) != "" {
			return
		}
		text, ok := c["scope"].(string)
		if !ok {
			switch v := c["scp"].(type) {
			case string:
				text = v
			case []any:
				for _, x := range v {
					if !yield(x.(string)) {
						return
					}
				}
				return
			case []string:
				for _, s := range v {
					if !yield(s) {
						return
					}
				}
				return
			}
		}
		for s := range strings.SplitSeq(text, " ") {
			if s != "" && !yield(s) {
				return
			}
		}
	}
}

// Granted reports whether the token grants scope s.
func Granted(c map[string]any, s string) bool {
	for g := range Scopes(c) {
		if g == s {
			return true
		}
	}
	return false
}

// ResourceKey is the form in which resource identifiers and audiences are
// compared (RFC 8707, and the canonical URIs of the MCP authorization
// spec): the scheme and host in lower case, the scheme's default port and
// a path of "/" dropped, the rest as written. A resource identifier has no
// user information and no fragment: a value with either, or one that is not
// an absolute URL, is returned as it is, and so matches only itself.
func ResourceKey(s string) string {
	u, err := url.Parse(s)
	if err != nil || !u.IsAbs() || u.Host == "" || u.Opaque != "" || u.User != nil || strings.Contains(s, "#") {
		return s
	}
	scheme := strings.ToLower(u.Scheme)
	host := strings.ToLower(u.Host)
	if port := u.Port(); scheme == "https" && port == "443" || scheme == "http" && port == "80" {
		host = strings.ToLower(u.Hostname())
		if strings.Contains(host, ":") {
			host = "[" + host + "]"
		}
	}
	path := u.EscapedPath()
	if path == "/" {
		path = ""
	}
	out := scheme + "://" + host + path
	if u.RawQuery != "" || u.ForceQuery {
		out += "?" + u.RawQuery
	}
	return out
}

// TypeIs reports whether a JWT header's "typ" is one of want, compared as
// media types are (RFC 7515 section 4.1.9): without case, with or without
// "application/". want holds lower-case names ("at+jwt", "jwt"); an absent
// typ is one of them only when absentOK.
func TypeIs(typ any, absentOK bool, want ...string) bool {
	if typ == nil {
		return absentOK
	}
	s, ok := typ.(string)
	if !ok {
		return false
	}
	s = strings.TrimPrefix(strings.ToLower(s), "application/")
	for _, w := range want {
		if s == w {
			return true
		}
	}
	return false
}

// Binding lists the execution claims of a token bound to one call.
var Binding = []string{"exec_act", "inp_hash", "target", "htm", "htu"}

// Bound reports whether c holds any execution claim.
func Bound(c map[string]any) bool {
	for _, k := range Binding {
		if _, ok := c[k]; ok {
			return true
		}
	}
	return false
}

// Strings reads a claim that is a string or an array of strings (aud,
// caps): the strings it holds, and whether it was that (nil, or an array
// with an element of another type, is not; the strings found are still
// returned).
func Strings(v any) ([]string, bool) {
	switch v := v.(type) {
	case string:
		return []string{v}, true
	case []string:
		return v, true
	case []any:
		out := make([]string, 0, len(v))
		ok := true
		for _, x := range v {
			if s, isString := x.(string); isString {
				out = append(out, s)
			} else {
				ok = false
			}
		}
		return out, ok
	}
	return nil, false
}

// Has reports whether a claim that is a string or an array of strings
// holds s, as slices.Contains of Strings does, without allocating.
func Has(v any, s string) bool {
	switch v := v.(type) {
	case string:
		return v == s
	case []string:
		return slices.Contains(v, s)
	case []any:
		for _, x := range v {
			if x, ok := x.(string); ok && x == s {
				return true
			}
		}
	}
	return false
}

// WellFormedScope reports whether a token's blast radius is "*" or
// "scope:value" with neither part empty. A scope without a value
// ("tenant:") names no tenant at all, and must not be read as fitting
// "tenant:*".
func WellFormedScope(br string) bool {
	if br == "*" {
		return true
	}
	scope, value, ok := strings.Cut(br, ":")
	return ok && scope != "" && value != ""
}

// BlastRadiusFits reports whether a token's well-formed blast radius fits
// a tool's maximum.
func BlastRadiusFits(token, maximum string) bool {
	if maximum == "*" {
		return true
	}
	ts, tv, ok1 := strings.Cut(token, ":")
	ms, mv, ok2 := strings.Cut(maximum, ":")
	if !ok1 || !ok2 {
		return token == maximum
	}
	return ts == ms && (mv == "*" || tv == mv)
}

// KeyBound reports whether a token's claims bind it to a key its holder
// proved it holds: a "cnf" with DPoP's "jkt" (RFC 9449) or a TLS
// certificate's "x5t#S256" (RFC 8705).
func KeyBound(claims map[string]any) bool {
	cnf, _ := claims["cnf"].(map[string]any)
	jkt, _ := cnf["jkt"].(string)
	x5t, _ := cnf["x5t#S256"].(string)
	return jkt != "" || x5t != ""
}
