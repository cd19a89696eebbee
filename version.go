package otc

import (
	"strings"

	"golang.org/x/mod/semver"
)

// Spellings of protocol version 1.0 accepted in a request's $schema field.
// A response echoes the spelling the client sent.
const (
	// SchemaOTC is the OTC spelling, and the default of [HandlerOptions.Schema].
	SchemaOTC = "otc://1.0"
	// SchemaOXP is the spelling used since the protocol was renamed OXP.
	SchemaOXP = "urn:oxp:1.0"
	// SchemaOpenAPI is the address of the 1.0 OpenAPI file, which some
	// clients send as their version.
	SchemaOpenAPI = "https://github.com/OpenToolCalling/Specification/tree/main/spec/http/1.0/openapi.json"
)

// supportedSchema reports whether s is one of the accepted spellings.
func supportedSchema(s string) bool {
	return s == SchemaOTC || s == SchemaOXP || s == SchemaOpenAPI
}

// maxToolIDLength caps the length of a tool id, version included. The
// protocol sets no limit; this one keeps hostile ids out of maps and error
// messages. A default name (Toolkit_Tool, at most 64 bytes) stays well
// within it.
const maxToolIDLength = 256

// isIdentPart reports whether s matches [A-Za-z0-9_]+.
func isIdentPart(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '_') {
			return false
		}
	}
	return true
}

// isToolKey reports whether s is "Toolkit.Tool".
func isToolKey(s string) bool {
	toolkit, tool, ok := strings.Cut(s, ".")
	return ok && isIdentPart(toolkit) && isIdentPart(tool)
}

// isNumber reports whether s is a non-negative decimal integer without
// leading zeros, as semantic versioning requires of each part.
func isNumber(s string) bool {
	if s == "" || len(s) > 1 && s[0] == '0' {
		return false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}

// isVersion reports whether s is "x.y.z", the protocol's tool version.
func isVersion(s string) bool {
	x, rest, ok := strings.Cut(s, ".")
	if !ok {
		return false
	}
	y, z, ok := strings.Cut(rest, ".")
	return ok && isNumber(x) && isNumber(y) && isNumber(z)
}

// compareVersions orders two valid "x.y.z" versions numerically, so that
// 10.0.0 sorts after 9.0.0.
func compareVersions(a, b string) int {
	return semver.Compare("v"+a, "v"+b)
}

// parseToolID splits a tool id from a call into its tool key
// ("Toolkit.Tool") and the exact version it asks for, following the protocol's Tool Version Resolution:
// "@x.y.z" is that version, "@x" is x.0.0, and no "@" leaves version empty,
// meaning the highest one registered. Anything else is malformed.
func parseToolID(id string) (key, version string, ok bool) {
	if len(id) > maxToolIDLength {
		return "", "", false
	}
	key, version, hasVersion := strings.Cut(id, "@")
	if !isToolKey(key) {
		return "", "", false
	}
	if !hasVersion {
		return key, "", true
	}
	switch {
	case isNumber(version):
		return key, version + ".0.0", true
	case isVersion(version):
		return key, version, true
	}
	return "", "", false
}
