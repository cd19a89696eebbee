package inline

import (
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"net/url"
	"slices"
	"strconv"
	"strings"

	"github.com/otcgo/otc/internal/jsonparse"
	"github.com/otcgo/otc/internal/wire"
)

// dialect2020 is the only $schema a hand-written schema may name. With or
// without its empty fragment it means the same.
const dialect2020 = "https://json-schema.org/draft/2020-12/schema"

// maxInlinedSchema caps the inlined form of a schema, in bytes. Definitions
// that each use the next twice double at every step; past the cap the
// schema is refused rather than grown without bound.
const maxInlinedSchema = 1 << 20

// localRefForms lists the references the inliner follows, for messages.
const localRefForms = `"#", "#/$defs/name", "#/definitions/name" or "#anchor"`

// refusedKeywords are the 2020-12 keywords that cannot be inlined, each with
// the reason a registration error gives.
var refusedKeywords = []struct{ name, why string }{
	{"$id", `a schema with its own base URI cannot be inlined; share definitions with "$defs" and local references instead`},
	{"$dynamicRef", "a dynamic reference is resolved at validation time and cannot be inlined"},
	{"$dynamicAnchor", "dynamic anchors serve dynamic references, which cannot be inlined"},
	{"$recursiveRef", "a recursive reference is resolved at validation time and cannot be inlined"},
	{"$recursiveAnchor", "recursive anchors serve recursive references, which cannot be inlined"},
}

// inlinedAway are the keywords the inlined copy leaves out: they only tie
// a schema to the definitions and references the copy no longer has.
var inlinedAway = []string{"$ref", "$defs", "definitions", "$anchor", "$schema"}

// Schema returns raw, a compact hand-written JSON Schema, with its
// references inlined and $schema, $defs, definitions and $anchor left out.
// It returns nil when raw uses none of these keywords, so that the caller
// keeps raw itself. Every reference must resolve, including those inside
// definitions nothing uses, and none may lead back to a schema that
// contains it: a recursive schema has no inline form.
func Schema(raw json.RawMessage) (json.RawMessage, error) {
	d, err := jsonparse.Parse(raw)
	if err != nil {
		return nil, fmt.Errorf("is not valid JSON: %v", err)
	}
	defer jsonparse.Release(d)
	in := &inliner{
		d:       d,
		at:      map[int32]string{},
		anchors: map[string]int32{},
		refs:    map[int32]reference{},
	}
	if err := in.walk(0, "#"); err != nil {
		return nil, err
	}
	if !in.needed {
		return nil, nil
	}
	if in.repeated != "" {
		return nil, fmt.Errorf("%s: which of the values is meant is a guess, so the schema cannot be inlined", in.repeated)
	}
	sites := slices.Sorted(maps.Keys(in.refs))
	for _, site := range sites {
		if err := in.resolve(site); err != nil {
			return nil, err
		}
	}
	in.memo = map[int32][]byte{}
	in.active = map[int32]bool{}
	out, err := in.target(-1, 0)
	if err != nil {
		return nil, err
	}
	// References inside definitions that nothing uses are checked too, so
	// that the full schema other wire formats carry has no broken or
	// recursive reference either.
	for _, site := range sites {
		if _, err := in.target(site, in.refs[site].target); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// inliner holds the state of one inlineSchema.
type inliner struct {
	d        *jsonparse.Document
	at       map[int32]string // every schema location: node → its JSON Pointer
	anchors  map[string]int32
	refs     map[int32]reference // schema object → its $ref
	needed   bool                // the schema uses a keyword inlining removes
	repeated string              // the first repeated member name met, described

	memo   map[int32][]byte // schema node → its inlined form
	active map[int32]bool   // schemas being inlined, to catch recursion
}

// reference is one $ref: its text, the node of its value, and the node it
// resolves to (-1 until resolved).
type reference struct {
	text   string
	value  int32
	target int32
}

// walk records schema node i, found at JSON Pointer ptr, and the schemas
// below it: its anchors and references, and whether it needs inlining. It
// descends through schema keywords only, so that a property merely named
// "$ref", or a "$ref" inside a const, is not taken for the keyword.
func (in *inliner) walk(i int32, ptr string) error {
	d := in.d
	switch d.Kind(i) {
	case jsonparse.KindTrue, jsonparse.KindFalse:
		in.at[i] = ptr
		return nil
	case jsonparse.KindObject:
	default:
		return nil // not a schema; the metaschema check reports it if it matters
	}
	in.at[i] = ptr
	if name := d.RepeatedName(i); name != "" && in.repeated == "" {
		in.repeated = fmt.Sprintf("repeats the member %q at %s", wire.Truncate(name, 64), ptr)
	}
	for k, v := range d.Members(i) {
		name := d.StringValue(k)
		for _, r := range refusedKeywords {
			if name == r.name {
				return fmt.Errorf("uses %q at %s: %s", name, ptr, r.why)
			}
		}
		switch name {
		case "$schema":
			in.needed = true
			if i != 0 {
				return fmt.Errorf(`uses "$schema" at %s: only the root of the schema may name its dialect`, ptr)
			}
			if s := in.str(v); s != dialect2020 && s != dialect2020+"#" {
				return fmt.Errorf(`names the dialect %s in "$schema": only JSON Schema 2020-12 is accepted, as %q`,
					wire.Truncate(string(d.Raw(v)), 100), dialect2020)
			}
		case "$anchor":
			in.needed = true
			a := in.str(v)
			if !isAnchorName(a) {
				return fmt.Errorf(`has the "$anchor" %s at %s, which is not a plain name: it must start with a letter or "_" and go on with letters, digits, "-", "_" and "."`,
					wire.Truncate(string(d.Raw(v)), 100), ptr)
			}
			if prev, ok := in.anchors[a]; ok {
				return fmt.Errorf(`has the "$anchor" %q at %s and at %s: an anchor names one schema`, a, in.at[prev], ptr)
			}
			in.anchors[a] = i
		case "$ref":
			in.needed = true
			if d.Kind(v) != jsonparse.KindString {
				return fmt.Errorf(`has a "$ref" at %s that is not a string`, ptr)
			}
			in.refs[i] = reference{text: d.StringValue(v), value: v, target: -1}
		case "$defs", "definitions":
			in.needed = true
			if d.Kind(v) != jsonparse.KindObject {
				return fmt.Errorf("has %q at %s that is not an object of schemas", name, ptr)
			}
			if err := in.walkMap(v, ptr+"/"+name); err != nil {
				return err
			}
		}
		if err := in.walkKeyword(name, v, ptr); err != nil {
			return err
		}
	}
	return nil
}

// walkKeyword walks the schemas in the value v of member name of a schema
// at ptr.
func (in *inliner) walkKeyword(name string, v int32, ptr string) error {
	d, at := in.d, ptr+"/"+escapePointer(name)
	switch {
	case slices.Contains(schemaListKeywords, name) && d.Kind(v) == jsonparse.KindArray:
		for j, e := range d.Elements(v) {
			if err := in.walk(e, at+"/"+strconv.Itoa(j)); err != nil {
				return err
			}
		}
	case slices.Contains(schemaKeywords, name):
		return in.walk(v, at)
	case slices.Contains(schemaMapKeywords, name) && d.Kind(v) == jsonparse.KindObject:
		return in.walkMap(v, at)
	}
	return nil
}

// walkMap walks the schemas of object v, a map from names to schemas at
// ptr ("properties", "$defs").
func (in *inliner) walkMap(v int32, ptr string) error {
	if name := in.d.RepeatedName(v); name != "" && in.repeated == "" {
		in.repeated = fmt.Sprintf("repeats the member %q at %s", wire.Truncate(name, 64), ptr)
	}
	for k, sub := range in.d.Members(v) {
		if err := in.walk(sub, ptr+"/"+escapePointer(in.d.StringValue(k))); err != nil {
			return err
		}
	}
	return nil
}

// resolve finds the schema the $ref of schema site points at.
func (in *inliner) resolve(site int32) error {
	ref := in.refs[site]
	fail := func(problem string) error {
		return fmt.Errorf(`has the "$ref" %q at %s, which %s`, wire.Truncate(ref.text, 200), in.at[site], problem)
	}
	frag, local := strings.CutPrefix(ref.text, "#")
	if !local {
		return fail("refers outside the schema: only local references are accepted, " + localRefForms)
	}
	frag, err := url.PathUnescape(frag)
	if err != nil {
		return fail("is not a valid URI fragment")
	}
	target := int32(0)
	switch {
	case frag == "":
	case frag[0] == '/':
		for tok := range strings.SplitSeq(frag[1:], "/") {
			name, ok := unescapePointer(tok)
			if !ok {
				return fail(`is not a valid JSON Pointer: "~" must be followed by "0" or "1"`)
			}
			target = in.step(target, name)
			if target < 0 {
				return fail("points at nothing in the schema")
			}
		}
		if _, ok := in.at[target]; !ok {
			return fail("points at something that is not a schema")
		}
	default:
		if !isAnchorName(frag) {
			return fail("is neither a JSON Pointer nor the name of an anchor: only local references are accepted, " + localRefForms)
		}
		a, ok := in.anchors[frag]
		if !ok {
			return fail(`names no "$anchor" of the schema`)
		}
		target = a
	}
	ref.target = target
	in.refs[site] = ref
	return nil
}

// step returns the member name of object i, or the element it numbers of
// array i, or -1.
func (in *inliner) step(i int32, name string) int32 {
	d := in.d
	switch d.Kind(i) {
	case jsonparse.KindObject:
		return d.Member(i, name)
	case jsonparse.KindArray:
		n, err := strconv.Atoi(name)
		if err != nil || n < 0 || strconv.Itoa(n) != name {
			return -1
		}
		for j, e := range d.Elements(i) {
			if j == n {
				return e
			}
		}
	}
	return -1
}

// target returns the inlined form of schema node t, which the $ref of
// schema site points at (site is -1 for the root), computing it once.
func (in *inliner) target(site, t int32) ([]byte, error) {
	if b, ok := in.memo[t]; ok {
		return b, nil
	}
	if in.active[t] {
		return nil, fmt.Errorf(`has the "$ref" %q at %s, which is recursive: it leads back to a schema that contains it, and a recursive schema has no inline form`,
			wire.Truncate(in.refs[site].text, 200), in.at[site])
	}
	in.active[t] = true
	b, err := in.emit(nil, t)
	delete(in.active, t)
	if err != nil {
		return nil, err
	}
	in.memo[t] = b
	return b, nil
}

// emit appends the inlined form of node i to dst. An object is copied
// member by member, without the keywords inlining removes, with its
// schemas inlined in turn. A $ref alone becomes the schema it points at;
// a $ref beside other keywords becomes those keywords plus the schema in
// "allOf", which applies both as 2020-12 does.
func (in *inliner) emit(dst []byte, i int32) ([]byte, error) {
	d := in.d
	if d.Kind(i) != jsonparse.KindObject {
		return append(dst, d.Raw(i)...), nil
	}
	var resolved []byte
	ref, hasRef := in.refs[i]
	if hasRef {
		var err error
		if resolved, err = in.target(i, ref.target); err != nil {
			return nil, err
		}
	}
	start := len(dst)
	dst = append(dst, '{')
	written, wroteAllOf := 0, false
	for k, v := range d.Members(i) {
		name := d.StringValue(k)
		if slices.Contains(inlinedAway, name) {
			continue
		}
		if written > 0 {
			dst = append(dst, ',')
		}
		written++
		dst = append(append(dst, d.Raw(k)...), ':')
		var err error
		switch {
		case slices.Contains(schemaListKeywords, name) && d.Kind(v) == jsonparse.KindArray:
			dst = append(dst, '[')
			for j, e := range d.Elements(v) {
				if j > 0 {
					dst = append(dst, ',')
				}
				if dst, err = in.emit(dst, e); err != nil {
					return nil, err
				}
			}
			if name == "allOf" && hasRef {
				if d.Nodes[v].Count > 0 {
					dst = append(dst, ',')
				}
				dst = append(dst, resolved...)
				wroteAllOf = true
			}
			dst = append(dst, ']')
		case name == "allOf" && hasRef:
			return nil, fmt.Errorf(`has "allOf" at %s that is not an array of schemas`, in.at[i])
		case slices.Contains(schemaKeywords, name):
			dst, err = in.emit(dst, v)
		case slices.Contains(schemaMapKeywords, name) && d.Kind(v) == jsonparse.KindObject:
			dst = append(dst, '{')
			first := true
			for mk, mv := range d.Members(v) {
				if !first {
					dst = append(dst, ',')
				}
				first = false
				dst = append(append(dst, d.Raw(mk)...), ':')
				if dst, err = in.emit(dst, mv); err != nil {
					return nil, err
				}
			}
			dst = append(dst, '}')
		default:
			dst = append(dst, d.Raw(v)...)
		}
		if err != nil {
			return nil, err
		}
		if len(dst) > maxInlinedSchema {
			return nil, fmt.Errorf("grows past %d bytes once its references are inlined", maxInlinedSchema)
		}
	}
	switch {
	case hasRef && written == 0:
		dst = append(dst[:start], resolved...)
	case hasRef && !wroteAllOf:
		if written > 0 {
			dst = append(dst, ',')
		}
		dst = append(append(append(dst, `"allOf":[`...), resolved...), ']')
		fallthrough
	default:
		dst = append(dst, '}')
	}
	if len(dst) > maxInlinedSchema {
		return nil, fmt.Errorf("grows past %d bytes once its references are inlined", maxInlinedSchema)
	}
	return dst, nil
}

// str returns the value of string node i, or "" for a node of another
// kind.
func (in *inliner) str(i int32) string {
	if in.d.Kind(i) != jsonparse.KindString {
		return ""
	}
	return in.d.StringValue(i)
}

// isAnchorName reports whether s is a plain-name fragment as "$anchor"
// takes it in 2020-12: ^[A-Za-z_][-A-Za-z0-9._]*$.
func isAnchorName(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c >= 'A' && c <= 'Z', c >= 'a' && c <= 'z', c == '_':
		case i > 0 && (c >= '0' && c <= '9' || c == '-' || c == '.'):
		default:
			return false
		}
	}
	return true
}

// escapePointer escapes a member name as a JSON Pointer token.
func escapePointer(name string) string {
	if !strings.ContainsAny(name, "~/") {
		return name
	}
	return strings.ReplaceAll(strings.ReplaceAll(name, "~", "~0"), "/", "~1")
}

// unescapePointer reads a JSON Pointer token (RFC 6901: "~1" is "/" and
// "~0" is "~"). It reports false for a "~" followed by anything else.
func unescapePointer(tok string) (string, bool) {
	if !strings.Contains(tok, "~") {
		return tok, true
	}
	var b strings.Builder
	for i := 0; i < len(tok); i++ {
		if tok[i] != '~' {
			b.WriteByte(tok[i])
			continue
		}
		if i+1 == len(tok) || tok[i+1] != '0' && tok[i+1] != '1' {
			return "", false
		}
		if tok[i+1] == '0' {
			b.WriteByte('~')
		} else {
			b.WriteByte('/')
		}
		i++
	}
	return b.String(), true
}

// Check checks that raw is a JSON Schema that can appear inline in a
// catalog (the protocol's List Tools): a JSON object (or a boolean), using
// no $ref, $dynamicRef, $defs, definitions or $schema anywhere. A
// hand-written schema gets here after Schema has replaced those, so for it
// this is a last guard. It returns the decoded schema for further checks.
func Check(raw json.RawMessage) (any, error) {
	var doc any
	if err := json.Unmarshal(raw, &doc); err != nil {
		return nil, fmt.Errorf("is not valid JSON: %w", err)
	}
	switch doc.(type) {
	case map[string]any, bool:
	default:
		return nil, errors.New("is not a JSON Schema: it must be a JSON object")
	}
	if err := walkSchema(doc, "#"); err != nil {
		return nil, err
	}
	return doc, nil
}

// Keywords whose value is a schema, a list of schemas, or a map from names
// to schemas. walkSchema descends through these only, so that a property
// merely named "$ref" is not mistaken for the keyword.
var (
	schemaKeywords = []string{"additionalItems", "additionalProperties", "contains", "contentSchema",
		"else", "if", "items", "not", "propertyNames", "then", "unevaluatedItems", "unevaluatedProperties"}
	schemaListKeywords = []string{"allOf", "anyOf", "oneOf", "prefixItems", "items"}
	schemaMapKeywords  = []string{"dependentSchemas", "patternProperties", "properties", "dependencies"}
	notInlineKeywords  = []string{"$defs", "$dynamicRef", "$recursiveRef", "$ref", "$schema", "definitions"}
)

func walkSchema(node any, path string) error {
	obj, ok := node.(map[string]any)
	if !ok {
		return nil
	}
	for _, k := range notInlineKeywords {
		if _, ok := obj[k]; ok {
			return fmt.Errorf("uses %q at %s: the schema must be inline, without references or definitions", k, path)
		}
	}
	for _, k := range schemaKeywords {
		if err := walkSchema(obj[k], path+"/"+k); err != nil {
			return err
		}
	}
	for _, k := range schemaListKeywords {
		list, _ := obj[k].([]any)
		for i, sub := range list {
			if err := walkSchema(sub, fmt.Sprintf("%s/%s/%d", path, k, i)); err != nil {
				return err
			}
		}
	}
	for _, k := range schemaMapKeywords {
		m, _ := obj[k].(map[string]any)
		for _, name := range slices.Sorted(maps.Keys(m)) {
			if err := walkSchema(m[name], path+"/"+k+"/"+name); err != nil {
				return err
			}
		}
	}
	return nil
}
