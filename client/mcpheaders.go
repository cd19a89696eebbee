package client

import (
	"encoding/base64"
	"encoding/json"
	"net/http"
	"strings"
)

// This file is the x-mcp-header annotation of MCP 2026-07-28: a tool's
// input schema may name, on a top-level parameter of type string,
// integer or boolean, a header in which the client repeats the
// parameter's value (Mcp-Param-{Name}), for proxies that route on it
// without reading the body.

// paramHeader is one parameter a tool mirrors into a header.
type paramHeader struct {
	param, header string
}

// paramHeaders reads the x-mcp-header annotations of a tool's input
// schema. ok is false when one is invalid: not a non-empty token, not
// unique (case-insensitively), or on a parameter of another type; the
// client then must not call the tool, and leaves it out of the catalog.
func paramHeaders(schema json.RawMessage) (hs []paramHeader, ok bool) {
	var s struct {
		Properties map[string]map[string]json.RawMessage `json:"properties"`
	}
	if json.Unmarshal(schema, &s) != nil {
		return nil, true // no properties to read: nothing to mirror
	}
	seen := map[string]bool{}
	for name, p := range s.Properties {
		raw, has := p["x-mcp-header"]
		if !has {
			continue
		}
		var h string
		if json.Unmarshal(raw, &h) != nil || !isToken(h) || seen[strings.ToLower(h)] {
			return nil, false
		}
		var typ string
		if json.Unmarshal(p["type"], &typ) != nil || typ != "string" && typ != "integer" && typ != "boolean" {
			return nil, false
		}
		seen[strings.ToLower(h)] = true
		hs = append(hs, paramHeader{param: name, header: "Mcp-Param-" + h})
	}
	return hs, true
}

// isToken reports whether s is an HTTP token (RFC 9110 §5.6.2).
func isToken(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		ok := c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || strings.IndexByte("!#$%&'*+-.^_`|~", c) >= 0
		if !ok {
			return false
		}
	}
	return true
}

// headerValue is a parameter's value as its header carries it: a string
// as itself, a number or boolean as its JSON; Base64 in =?base64?…?= when
// the text has bytes a header cannot (control characters, non-ASCII) or
// leading or trailing white space. ok is false for null and for values
// not mirrored.
func headerValue(raw json.RawMessage) (string, bool) {
	var v any
	if json.Unmarshal(raw, &v) != nil {
		return "", false
	}
	var text string
	switch x := v.(type) {
	case string:
		text = x
	case float64, bool:
		text = strings.TrimSpace(string(raw))
	default:
		return "", false
	}
	if text != strings.TrimSpace(text) || strings.ContainsFunc(text, func(r rune) bool { return r < 0x20 || r > 0x7e }) {
		return "=?base64?" + base64.StdEncoding.EncodeToString([]byte(text)) + "?=", true
	}
	return text, true
}

// mirrored returns the headers of a call of a tool whose parameters hs
// are mirrored, for the arguments args.
func mirrored(hs []paramHeader, args json.RawMessage) http.Header {
	if len(hs) == 0 {
		return nil
	}
	var in map[string]json.RawMessage
	if json.Unmarshal(args, &in) != nil {
		return nil
	}
	h := http.Header{}
	for _, p := range hs {
		if v, ok := headerValue(in[p.param]); ok && in[p.param] != nil {
			h[p.header] = []string{v}
		}
	}
	return h
}
