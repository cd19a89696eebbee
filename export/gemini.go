package export

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
)

// This file rewrites a tool's parameters schema for Gemini's function
// declarations (an OpenAPI 3.0 subset).

// The keywords of Gemini's Schema (an OpenAPI 3.0 subset), by the JSON
// type they apply to, besides type, description, title, nullable and
// anyOf.
var geminiKeywords = map[string][]string{
	"string":  {"enum", "format", "minLength", "maxLength", "pattern", "default", "example"},
	"number":  {"minimum", "maximum", "default", "example"},
	"integer": {"minimum", "maximum", "default", "example"},
	"boolean": {"default", "example"},
	"array":   {"items", "minItems", "maxItems", "default", "example"},
	"object":  {"properties", "required", "minProperties", "maxProperties", "default", "example"},
}

// GeminiParameters rewrites a parameters schema for a Gemini function
// declaration, whose Schema is a subset of OpenAPI 3.0: types are written
// in capitals ("OBJECT"), {"anyOf": [S, {"type": "null"}]} becomes S with
// "nullable": true, enum lists only strings (an enum of numbers is
// restated in the description), and keywords the Schema lacks
// (additionalProperties, const, exclusive bounds, multipleOf, formats
// other than date-time) are removed, restated in the description where a
// model should know them. properties keep their order in
// "propertyOrdering".
func GeminiParameters(params json.RawMessage) (json.RawMessage, error) {
	root, order, err := decodeOrdered(params)
	if err != nil {
		return nil, err
	}
	out, err := geminiRewriter{order}.node(root, "#")
	if err != nil {
		return nil, err
	}
	return json.Marshal(out)
}

// geminiRewriter rewrites schema nodes for Gemini, keeping each object's
// properties in the order the schema lists them.
type geminiRewriter struct{ order keyOrder }

func (w geminiRewriter) node(s map[string]any, at string) (map[string]any, error) {
	// {"anyOf": [S, {"type": "null"}]} is S, nullable.
	if branches := anyList(s["anyOf"]); len(branches) == 2 {
		if nb, ok := branches[1].(map[string]any); ok && nb["type"] == "null" {
			if sb, ok := branches[0].(map[string]any); ok {
				merged := map[string]any{}
				for k, v := range sb {
					merged[k] = v
				}
				for k, v := range s {
					if k != "anyOf" {
						merged[k] = v
					}
				}
				out, err := w.node(merged, at)
				if err != nil {
					return nil, err
				}
				out["nullable"] = true
				return out, nil
			}
		}
	}
	typ, _ := s["type"].(string)
	out := map[string]any{}
	var notes []string
	for k, v := range s {
		switch {
		case k == "type":
			out[k] = strings.ToUpper(typ)
		case k == "description" || k == "title":
			out[k] = v
		case k == "anyOf" || k == "oneOf":
			branches, err := eachBranch(v, at+"/"+k, w.node)
			if err != nil {
				return nil, err
			}
			out["anyOf"] = append(anyList(out["anyOf"]), branches...)
		case k == "enum" && typ != "string":
			notes = append(notes, "one of "+strings.Trim(jsonText(v), "[]"))
		case k == "const":
			if str, ok := v.(string); ok && typ == "string" {
				out["enum"] = []any{str}
			} else {
				notes = append(notes, "exactly "+jsonText(v))
			}
		case k == "format":
			if v == "date-time" {
				out[k] = v
			} else if f, ok := v.(string); ok {
				notes = append(notes, "format "+f)
			}
		case slices.Contains(geminiKeywords[typ], k):
			switch k {
			case "properties", "required", "items":
			default:
				out[k] = v
			}
		case k == "examples":
			if l := anyList(v); len(l) > 0 {
				out["example"] = l[0]
			}
		default:
			if note := restate(k, v); note != "" {
				notes = append(notes, note)
			}
		}
	}
	if items, ok := s["items"].(map[string]any); ok {
		gi, err := w.node(items, at+"/items")
		if err != nil {
			return nil, err
		}
		out["items"] = gi
	}
	if props, ok := s["properties"].(map[string]any); ok {
		gp := make(map[string]any, len(props))
		var order []string
		for _, name := range w.order.keys(props) {
			pm, ok := props[name].(map[string]any)
			if !ok {
				return nil, fmt.Errorf("%s/properties/%s is not a schema object", at, name)
			}
			p, err := w.node(pm, at+"/properties/"+name)
			if err != nil {
				return nil, err
			}
			gp[name] = p
			order = append(order, name)
		}
		out["properties"] = orderedObject{order, gp}
		out["propertyOrdering"] = order
		if req := stringList(s["required"]); len(req) > 0 {
			out["required"] = req
		}
	}
	addNotes(out, notes)
	return out, nil
}
