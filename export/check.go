package export

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/url"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/otcgo/otc"
	"github.com/otcgo/otc/internal/modeltext"
)

// A remote server's catalog reaches a model through a [Toolset] (and
// through the agent-framework adapters, which build on one): every name,
// description and schema in it is the server's to choose. These are the
// checks a Toolset makes of it, written once for every adapter and the
// command.

// Defaults of [Options].
const (
	// DefaultMaxDescriptionBytes bounds a tool's description as a model
	// reads it; a longer one is cut at a character boundary, with "…".
	DefaultMaxDescriptionBytes = 8 << 10
	// DefaultMaxSchemaBytes bounds a tool's input schema; a larger one is
	// refused.
	DefaultMaxSchemaBytes = 256 << 10
	// DefaultMaxSchemaDepth bounds how deeply a tool's input schema nests
	// objects and arrays; a deeper one is refused.
	DefaultMaxSchemaDepth = 32
)

// Options bounds what a [Toolset] takes of a catalog. The zero
// value, and nil, give the defaults described on each field.
type Options struct {
	// MaxDescriptionBytes bounds each description: a longer one is cut.
	// Zero or less means DefaultMaxDescriptionBytes.
	MaxDescriptionBytes int
	// MaxSchemaBytes bounds each input schema: a larger one is refused.
	// Zero or less means DefaultMaxSchemaBytes.
	MaxSchemaBytes int
	// MaxSchemaDepth bounds how deeply each input schema nests: a deeper
	// one is refused. Zero or less means DefaultMaxSchemaDepth.
	MaxSchemaDepth int
	// Prefer chooses between two tools of one name with different ids,
	// returning the one to keep (two versions of one tool are not a
	// collision: the highest is kept). Nil makes such a collision an
	// error naming both.
	Prefer func(a, b otc.ToolDefinition) otc.ToolDefinition
}

// CatalogError is a tool of a catalog that a [Toolset] cannot declare to
// a model: its name, its schema, or a collision with another tool's name.
type CatalogError struct {
	// ID and Name are the tool's, as the server listed them.
	ID, Name string
	// Other is the id of the tool whose name it shares, for a collision.
	Other string
	// Problem says what is wrong, and what to do.
	Problem string
}

// Error names the tool (its name quoted, as a hostile one may hold line
// breaks) and the problem.
func (e *CatalogError) Error() string {
	return fmt.Sprintf("client: tool %q (id %q): %s", e.Name, e.ID, e.Problem)
}

// checkName refuses a name the model APIs cannot take: 1 to 64 letters,
// digits, underscores and hyphens (what OpenAI, Anthropic and Gemini all
// accept).
func checkName(d otc.ToolDefinition) *CatalogError {
	if modeltext.IsFunctionName(d.Name) {
		return nil
	}
	return &CatalogError{ID: d.ID, Name: d.Name, Problem: fmt.Sprintf("its name is not 1 to %d letters, digits, underscores and hyphens, which a model's function names are; the server must rename it", modeltext.MaxNameLength)}
}

// cutDescription cuts s to at most n bytes, at a character boundary, with
// "…" at the end when it cut.
func cutDescription(s string, n int) string {
	if len(s) <= n {
		return s
	}
	s = s[:max(n-len("…"), 0)]
	for len(s) > 0 && !utf8.ValidString(s) {
		s = s[:len(s)-1]
	}
	return s + "…"
}

// checkSchema refuses an input schema larger or deeper than the bounds,
// or with a $ref a model's framework cannot resolve: one that leaves the
// schema, names nothing in it, or leads back to itself (a recursive
// schema cannot be inlined).
func checkSchema(d otc.ToolDefinition, maxBytes, maxDepth int) *CatalogError {
	raw := d.InputSchema.Parameters
	fail := func(problem string) *CatalogError { return &CatalogError{ID: d.ID, Name: d.Name, Problem: problem} }
	if len(raw) > maxBytes {
		return fail(fmt.Sprintf("its input schema is %d bytes, more than the %d a toolset takes (Options.MaxSchemaBytes)", len(raw), maxBytes))
	}
	if isJSONNull(raw) {
		return nil
	}
	if depth := jsonDepth(raw); depth > maxDepth {
		return fail(fmt.Sprintf("its input schema nests deeper than the %d levels a toolset takes (Options.MaxSchemaDepth)", maxDepth))
	}
	var root any
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	if err := dec.Decode(&root); err != nil {
		return fail("its input schema is not JSON: " + err.Error())
	}
	if _, ok := root.(map[string]any); !ok {
		return fail("its input schema is not a JSON object")
	}
	if p := checkRefs(root, root, nil, map[string]bool{}); p != "" {
		return fail("its input schema " + p)
	}
	return nil
}

// jsonDepth is how deeply raw, valid or not, nests objects and arrays.
func jsonDepth(raw []byte) int {
	depth, deepest, inString, escaped := 0, 0, false, false
	for _, c := range raw {
		switch {
		case escaped:
			escaped = false
		case inString:
			escaped, inString = c == '\\', c != '"'
		case c == '"':
			inString = true
		case c == '{' || c == '[':
			depth++
			deepest = max(deepest, depth)
		case c == '}' || c == ']':
			depth--
		}
	}
	return deepest
}

// checkRefs follows every $ref below node, through the schemas it names,
// and says what is wrong with the first that cannot be resolved; "" when
// every one resolves to a part of root without leading back. path holds
// the refs being followed; done, those checked already, so that refs
// that share targets are followed once each, not once per way there.
func checkRefs(root, node any, path []string, done map[string]bool) string {
	switch n := node.(type) {
	case []any:
		for _, v := range n {
			if p := checkRefs(root, v, path, done); p != "" {
				return p
			}
		}
	case map[string]any:
		if ref, ok := n["$ref"].(string); ok && !done[ref] {
			for _, seen := range path {
				if seen == ref {
					return fmt.Sprintf("refers to itself through $ref %q: a recursive schema cannot be inlined for a model", ref)
				}
			}
			target, problem := resolveRef(root, ref)
			if problem != "" {
				return fmt.Sprintf("has $ref %q, which %s", ref, problem)
			}
			if p := checkRefs(root, target, append(path, ref), done); p != "" {
				return p
			}
			done[ref] = true
		}
		for k, v := range n {
			if k == "$ref" || k == "const" || k == "enum" || k == "default" || k == "examples" {
				continue // values, not schemas
			}
			if p := checkRefs(root, v, path, done); p != "" {
				return p
			}
		}
	}
	return ""
}

// resolveRef returns the part of root a local $ref ("#", "#/$defs/x")
// names, or says why it cannot.
func resolveRef(root any, ref string) (any, string) {
	frag, ok := strings.CutPrefix(ref, "#")
	if !ok {
		return nil, "points outside the schema (only local references, #/..., are taken)"
	}
	frag, err := url.PathUnescape(frag)
	if err != nil {
		return nil, "is not a JSON pointer"
	}
	if frag == "" {
		return root, ""
	}
	if frag[0] != '/' {
		return nil, "is not a JSON pointer"
	}
	node := root
	for _, tok := range strings.Split(frag[1:], "/") {
		tok = strings.ReplaceAll(strings.ReplaceAll(tok, "~1", "/"), "~0", "~")
		switch n := node.(type) {
		case map[string]any:
			v, ok := n[tok]
			if !ok {
				return nil, "names nothing in the schema"
			}
			node = v
		case []any:
			i, err := strconv.Atoi(tok)
			if err != nil || i < 0 || i >= len(n) {
				return nil, "names nothing in the schema"
			}
			node = n[i]
		default:
			return nil, "names nothing in the schema"
		}
	}
	return node, ""
}
