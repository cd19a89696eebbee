package otc

import (
	"bytes"
	"encoding/json"
	"slices"
)

// This file applies the default values an input schema declares for its
// optional parameters: a parameter the call leaves out (or sends as null,
// unless the registry has StrictNulls) reaches the function with its
// default, so that what the schema tells the model and what the function
// sees agree.

// parameterDefault is the default of one top-level optional parameter.
type parameterDefault struct {
	name   string
	member []byte // `"name":value`, ready to append to the input
	onNull bool   // null, when sent, is replaced too
}

// parameterDefaults lists the defaults of the top-level optional
// properties of a parameters schema, in the schema's order.
func parameterDefaults(params json.RawMessage, strictNulls bool) []parameterDefault {
	var schema struct {
		Properties map[string]struct {
			Default json.RawMessage `json:"default"`
		} `json:"properties"`
		Required []string `json:"required"`
	}
	if json.Unmarshal(params, &schema) != nil {
		return nil
	}
	var out []parameterDefault
	for _, name := range sortedKeys(schema.Properties) {
		def := schema.Properties[name].Default
		if def == nil || slices.Contains(schema.Required, name) {
			continue
		}
		var member bytes.Buffer
		if json.Compact(&member, def) != nil {
			continue
		}
		key, _ := json.Marshal(name)
		out = append(out, parameterDefault{
			name:   name,
			member: append(append(key, ':'), member.Bytes()...),
			onNull: !strictNulls,
		})
	}
	return out
}

// applyDefaults returns input, a validated JSON object (node root of doc,
// possibly edited since), with the defaults of the parameters it leaves
// out appended. A parameter sent as null gets its default as well when
// the default says so; encoding/json keeps the last of repeated names, so
// the appended member wins. input is returned unchanged when no default
// applies.
func applyDefaults(defaults []parameterDefault, doc *document, root int32, input []byte) []byte {
	var out []byte
	for i := range defaults {
		d := &defaults[i]
		if m := doc.member(root, d.name); m >= 0 && !(d.onNull && doc.kind(m) == kindNull) {
			continue
		}
		if out == nil {
			trimmed := bytes.TrimRight(input, " \t\r\n")
			out = make([]byte, 0, len(trimmed)+64)
			out = bytes.TrimRight(append(out, trimmed[:len(trimmed)-1]...), " \t\r\n") // without its '}'
		}
		if out[len(out)-1] != '{' { // the object has members: separate
			out = append(out, ',')
		}
		out = append(out, d.member...)
	}
	if out == nil {
		return input
	}
	return append(out, '}')
}
