package export

import (
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
)

// This file and gemini.go rewrite a tool's parameters schema for
// the model APIs whose function declarations accept only a subset of JSON
// Schema: OpenAI's strict mode (here) and Gemini's OpenAPI-based Schema.
// Keywords a format cannot carry are dropped, and the constraints among
// them that a model should still know (a length, a default) are added to
// the description instead.

// The keywords OpenAI's strict mode accepts, by the JSON type they apply
// to, besides type, description, title, enum, const and anyOf; the string
// formats it knows.
var (
	openAIKeywords = map[string][]string{
		"string":  {"pattern", "format"},
		"number":  {"multipleOf", "minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum"},
		"integer": {"multipleOf", "minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum"},
		"array":   {"items", "minItems", "maxItems"},
		"object":  {"properties", "required", "additionalProperties"},
	}
	openAIFormats = []string{"date-time", "time", "date", "duration", "email", "hostname", "ipv4", "ipv6", "uuid"}
)

// OpenAIStrictParameters rewrites a parameters schema (as
// [otc.ToolDefinition.InputSchema] holds it) for a function declared with
// "strict": true to OpenAI's APIs: every property is listed in required,
// an optional one becomes {"anyOf": [S, {"type": "null"}]} (unless it
// already takes null), every object has "additionalProperties": false,
// oneOf becomes anyOf, and the keywords strict mode does not accept are
// removed, those a model should know (lengths, uniqueness, a default)
// restated in the description. It fails for a schema strict mode cannot
// express: an object with free-form members (a map), or allOf, not, or
// if/then/else; declare such a tool without strict.
func OpenAIStrictParameters(params json.RawMessage) (json.RawMessage, error) {
	root, order, err := decodeOrdered(params)
	if err != nil {
		return nil, err
	}
	if root["type"] != "object" {
		return nil, errors.New("strict mode needs an object at the root")
	}
	out, err := strictRewriter{order}.node(root, "#")
	if err != nil {
		return nil, err
	}
	var size strictSize
	if err := size.measure(out, "#", 1); err != nil {
		return nil, err
	}
	return json.Marshal(out)
}

// The size limits of a strict schema, from OpenAI's Structured Outputs
// guide: object properties in all, levels of nesting, enum values in all,
// characters of all property names, enum and const values, and
// characters of one string enum of more than 250 values.
const (
	strictMaxProperties   = 5000
	strictMaxDepth        = 10
	strictMaxEnumValues   = 1000
	strictMaxStringLength = 120000
	strictMaxLongEnumText = 15000
	strictLongEnum        = 250
)

// strictSize counts what the limits bound, over a whole schema.
type strictSize struct {
	properties, enumValues, stringLength int
}

// measure adds the schema s, an object nested depth levels deep, to the
// counts, and fails at the first limit passed.
func (z *strictSize) measure(s map[string]any, at string, depth int) error {
	if s["type"] == "object" && depth > strictMaxDepth {
		return fmt.Errorf("%s nests objects %d levels deep, beyond the %d strict mode allows", at, depth, strictMaxDepth)
	}
	props := propertiesOf(s)
	z.properties += len(props)
	if z.properties > strictMaxProperties {
		return fmt.Errorf("the schema has more than %d properties, which strict mode does not allow", strictMaxProperties)
	}
	enumText := 0
	for _, v := range anyList(s["enum"]) {
		z.enumValues++
		if str, ok := v.(string); ok {
			enumText += len(str)
		}
	}
	if len(anyList(s["enum"])) > strictLongEnum && enumText > strictMaxLongEnumText {
		return fmt.Errorf("%s has an enum of %d values and %d characters, beyond the %d characters strict mode allows an enum of more than %d values", at, len(anyList(s["enum"])), enumText, strictMaxLongEnumText, strictLongEnum)
	}
	if z.enumValues > strictMaxEnumValues {
		return fmt.Errorf("the schema has more than %d enum values, which strict mode does not allow", strictMaxEnumValues)
	}
	z.stringLength += enumText
	if c, ok := s["const"].(string); ok {
		z.stringLength += len(c)
	}
	for _, name := range slices.Sorted(maps.Keys(props)) {
		z.stringLength += len(name)
		if p, ok := props[name].(map[string]any); ok {
			next := depth
			if isObjectSchema(p) {
				next++
			}
			if err := z.measure(p, at+"/properties/"+name, next); err != nil {
				return err
			}
		}
	}
	if z.stringLength > strictMaxStringLength {
		return fmt.Errorf("the property names, enum and const values of the schema are longer than the %d characters strict mode allows", strictMaxStringLength)
	}
	if items, ok := s["items"].(map[string]any); ok {
		next := depth
		if isObjectSchema(items) {
			next++
		}
		if err := z.measure(items, at+"/items", next); err != nil {
			return err
		}
	}
	for i, b := range anyList(s["anyOf"]) {
		if bm, ok := b.(map[string]any); ok {
			if err := z.measure(bm, fmt.Sprintf("%s/anyOf/%d", at, i), depth); err != nil {
				return err
			}
		}
	}
	return nil
}

// isObjectSchema reports whether s describes an object, possibly null.
func isObjectSchema(s map[string]any) bool {
	if s["type"] == "object" {
		return true
	}
	for _, b := range anyList(s["anyOf"]) {
		if bm, ok := b.(map[string]any); ok && bm["type"] == "object" {
			return true
		}
	}
	return false
}

// strictRewriter rewrites schema nodes for strict mode, keeping each
// object's properties in the order the schema lists them, which is the
// order in which the model writes the arguments.
type strictRewriter struct{ order keyOrder }

func (w strictRewriter) node(s map[string]any, at string) (map[string]any, error) {
	for _, k := range []string{"allOf", "not", "if", "then", "else", "patternProperties", "dependentSchemas", "dependentRequired", "prefixItems", "contains", "propertyNames", "unevaluatedProperties", "unevaluatedItems"} {
		if _, ok := s[k]; ok {
			return nil, fmt.Errorf("%s uses %q, which strict mode cannot express", at, k)
		}
	}
	if _, ok := s["items"].([]any); ok {
		return nil, fmt.Errorf("%s lists its items by position (a tuple), which strict mode cannot express", at)
	}
	_, typed := s["type"]
	_, hasEnum := s["enum"]
	_, hasConst := s["const"]
	if !typed && !hasEnum && !hasConst && s["anyOf"] == nil && s["oneOf"] == nil {
		return nil, fmt.Errorf("%s accepts any JSON value, which strict mode cannot express", at)
	}
	out := map[string]any{}
	var notes []string
	typ := strictType(s["type"])
	for k, v := range s {
		switch {
		case k == "type" || k == "description" || k == "title" || k == "enum" || k == "const":
			out[k] = v
		case k == "anyOf" || k == "oneOf":
			branches, err := eachBranch(v, at+"/"+k, w.node)
			if err != nil {
				return nil, err
			}
			out["anyOf"] = append(anyList(out["anyOf"]), branches...)
		case slices.Contains(openAIKeywords[typ], k):
			switch k {
			case "format":
				if f, _ := v.(string); slices.Contains(openAIFormats, f) {
					out[k] = v
				}
			case "properties", "required", "additionalProperties", "items":
				// Rebuilt below.
			default:
				out[k] = v
			}
		default:
			if note := restate(k, v); note != "" {
				notes = append(notes, note)
			}
		}
	}
	if items, ok := s["items"].(map[string]any); ok && typ == "array" {
		si, err := w.node(items, at+"/items")
		if err != nil {
			return nil, err
		}
		out["items"] = si
	}
	if typ == "object" {
		if ap, ok := s["additionalProperties"]; ok && ap != false {
			return nil, fmt.Errorf("%s takes members of any name (a map), which strict mode cannot express", at)
		}
		props, _ := s["properties"].(map[string]any)
		required := stringList(s["required"])
		names := w.order.keys(props)
		sp := make(map[string]any, len(props))
		for _, name := range names {
			pm, ok := props[name].(map[string]any)
			if !ok {
				return nil, fmt.Errorf("%s/properties/%s is not a schema object", at, name)
			}
			p, err := w.node(pm, at+"/properties/"+name)
			if err != nil {
				return nil, err
			}
			if !slices.Contains(required, name) && !takesNull(p) {
				p = orNull(p)
			}
			sp[name] = p
		}
		out["properties"] = orderedObject{names, sp}
		out["required"] = names
		out["additionalProperties"] = false
	}
	addNotes(out, notes)
	return out, nil
}

// strictType is the type whose keywords a schema may use: its "type",
// or, for a list such as ["string", "null"], its one type besides null.
func strictType(v any) string {
	if t, ok := v.(string); ok {
		return t
	}
	var found string
	for _, t := range anyList(v) {
		if name, _ := t.(string); name != "null" {
			if found != "" {
				return ""
			}
			found = name
		}
	}
	return found
}

// orNull lets a strict property be null, moving its description beside
// the anyOf.
func orNull(p map[string]any) map[string]any {
	w := map[string]any{"anyOf": []any{p, map[string]any{"type": "null"}}}
	if d, ok := p["description"]; ok {
		w["description"] = d
		delete(p, "description")
	}
	return w
}

// takesNull reports whether a schema already lets null in.
func takesNull(p map[string]any) bool {
	if p["type"] == "null" || slices.Contains(anyList(p["type"]), any("null")) {
		return true
	}
	for _, b := range anyList(p["anyOf"]) {
		if bm, ok := b.(map[string]any); ok && bm["type"] == "null" {
			return true
		}
	}
	return false
}

// restate turns a keyword a declaration format drops into words for the
// description, or "" for one a model need not know.
func restate(k string, v any) string {
	text := jsonText
	switch k {
	case "minLength":
		return "at least " + count(v, "character")
	case "maxLength":
		return "at most " + count(v, "character")
	case "minItems":
		return "at least " + count(v, "item")
	case "maxItems":
		return "at most " + count(v, "item")
	case "uniqueItems":
		if v == true {
			return "items must be unique"
		}
	case "default":
		return "default " + text(v)
	case "minimum":
		return "at least " + text(v)
	case "maximum":
		return "at most " + text(v)
	case "exclusiveMinimum":
		return "more than " + text(v)
	case "exclusiveMaximum":
		return "less than " + text(v)
	case "multipleOf":
		return "a multiple of " + text(v)
	case "pattern":
		return "matching " + text(v)
	case "contentEncoding":
		return text(v) + " encoded"
	}
	return ""
}

// eachBranch rewrites each schema of a list of alternatives (anyOf,
// oneOf) at at with rewrite.
func eachBranch(v any, at string, rewrite func(map[string]any, string) (map[string]any, error)) ([]any, error) {
	var out []any
	for i, b := range anyList(v) {
		bm, ok := b.(map[string]any)
		if !ok {
			return nil, fmt.Errorf("%s/%d is not a schema object", at, i)
		}
		r, err := rewrite(bm, fmt.Sprintf("%s/%d", at, i))
		if err != nil {
			return nil, err
		}
		out = append(out, r)
	}
	return out, nil
}

func anyList(v any) []any {
	l, _ := v.([]any)
	return l
}

func stringList(v any) []string {
	var out []string
	for _, x := range anyList(v) {
		if s, ok := x.(string); ok {
			out = append(out, s)
		}
	}
	return out
}
