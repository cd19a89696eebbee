package otc

import (
	"encoding/json"
	"fmt"
	"reflect"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/otcgo/otc/internal/decode"
	"github.com/otcgo/otc/internal/nearest"
)

// This file checks the `jsonschema` struct tags of the types a tool's
// schemas are reflected from. The reflector skips what it does not
// understand without a word: a misspelt keyword, a bound that is not a
// number, an enum value of the wrong type. The schema is the contract a
// model reads, so Register refuses such a tag instead, naming the field.

// Keywords the reflector reads from a jsonschema tag, for any field and
// for each JSON type. Bare words (no "=") are listed in tagFlags.
var (
	tagGeneric = []string{"title", "description", "type", "anchor",
		"oneof_required", "anyof_required", "oneof_ref", "oneof_type", "anyof_ref", "anyof_type"}
	tagByType = map[string][]string{
		"string":  {"minLength", "maxLength", "pattern", "format", "readOnly", "writeOnly", "default", "example", "enum"},
		"number":  {"multipleOf", "minimum", "maximum", "exclusiveMaximum", "exclusiveMinimum", "default", "example", "enum"},
		"integer": {"multipleOf", "minimum", "maximum", "exclusiveMaximum", "exclusiveMinimum", "default", "example", "enum"},
		"array":   {"minItems", "maxItems", "uniqueItems", "default", "format", "pattern"},
		"boolean": {"default"},
		"object":  {},
	}
	tagFlags = []string{"required", "nullable"}
)

// checkFieldTags checks the jsonschema tag of struct field f, at path, of
// a type read as a tool's input (input) or written as its output: the
// reflector gives some Go types a different JSON type in each direction
// (time.Duration is a string in, an integer out), and the tags apply to
// that JSON type.
func checkFieldTags(f reflect.StructField, path string, input bool) error {
	tag, ok := f.Tag.Lookup("jsonschema")
	if !ok || tag == "" {
		return nil
	}
	parts := splitTag(tag)
	if parts[0] == "-" {
		return nil
	}
	jsonType, item := tagJSONType(f, input)
	// The reflector reads type= before the other keywords, wherever it
	// stands in the tag.
	for _, part := range parts {
		if name, value, ok := strings.Cut(part, "="); ok && name == "type" {
			jsonType, item = value, ""
		}
	}
	fail := func(part, format string, args ...any) error {
		return fmt.Errorf("field %s: jsonschema tag %q: %s", path, part, fmt.Sprintf(format, args...))
	}
	for i, part := range parts {
		if part == "" {
			continue
		}
		name, value, hasValue := strings.Cut(part, "=")
		if !hasValue {
			if slices.Contains(tagFlags, name) {
				continue
			}
			if name == "uniqueItems" {
				return fail(part, "the reflector reads uniqueItems only with a value: write uniqueItems=true")
			}
			if isTagKeyword(name) {
				return fail(part, "%q needs a value: write %s=…", name, name)
			}
			hint := keywordHint(name, jsonType, item)
			if i > 0 && !strings.HasPrefix(hint, "did you mean") {
				prev, _, _ := strings.Cut(parts[i-1], "=")
				if prev == "description" || prev == "title" {
					return fail(part, "a comma ends the %s, and %q is not a keyword; write the comma as \\\\, in the struct tag, or put the text in a jsonschema_description tag", prev, strings.TrimSpace(part))
				}
			}
			return fail(part, "%q is not a keyword the schema reflector knows (%s)", name, hint)
		}
		if slices.Contains(tagGeneric, name) {
			continue
		}
		kind := jsonType
		if jsonType == "array" && !slices.Contains(tagByType["array"], name) && item != "" {
			kind = item // the reflector applies the rest to the items
		}
		if kind == "" {
			return fail(part, "%q has no effect: the schema of a field of type %s has no JSON type (it accepts any value), so the reflector drops type keywords; set the type with type=, or describe the value in the description", name, f.Type)
		}
		allowed, known := tagByType[kind]
		if !known {
			continue // a type with a schema of its own: trusted
		}
		if !slices.Contains(allowed, name) {
			return fail(part, "%q is not a keyword of %s (%s)", name, describeType(jsonType, item), keywordHint(name, jsonType, item))
		}
		if kind != "string" && strings.Contains(value, "=") {
			// The reflector splits these at every "=" and drops the
			// keyword when there is more than one.
			return fail(part, "the reflector drops the keyword of %s when its value contains \"=\"", describeType(jsonType, item))
		}
		if jsonType == "array" && name == "default" && item != "string" {
			return fail(part, "the reflector writes an array's default as a list of strings, which %s refuses: apply this default in the function", describeType(jsonType, item))
		}
		if err := checkTagValue(name, value, kind, jsonType); err != nil {
			return fail(part, "%s", err)
		}
		if name == "format" && input {
			if err := checkFormat(value, f.Type); err != nil {
				return fail(part, "%s", err)
			}
		}
		if kind == "integer" {
			if err := checkIntRange(name, value, f.Type, jsonType == "array"); err != nil {
				return fail(part, "%s", err)
			}
		}
	}
	return nil
}

// isTagKeyword reports whether name is a keyword of some JSON type.
func isTagKeyword(name string) bool {
	if slices.Contains(tagGeneric, name) {
		return true
	}
	for _, list := range tagByType {
		if slices.Contains(list, name) {
			return true
		}
	}
	return false
}

// checkFormat refuses a format that a Go type with a fixed text form
// does not read: the validator would accept values the decoder refuses.
func checkFormat(format string, t reflect.Type) error {
	switch decode.Deref(t) {
	case timeType:
		if format != "date-time" {
			return fmt.Errorf("a time.Time reads only RFC 3339 date-times, so format=%s would promise values it refuses: for a %s, use a string with format=%s and time.Parse it in the function", format, format, format)
		}
	case durationType:
		return fmt.Errorf("a time.Duration reads Go duration strings (\"90s\"), which its schema's pattern says; a format would contradict it (format=duration means ISO 8601, \"PT90S\")")
	}
	return nil
}

// checkIntRange checks that a bound, enum value, default or example
// given to an integer field (or, for an array, to its items) is within
// the range of its Go type: a schema that promises -500 to a field of
// type int8 promises what the decoder then refuses.
func checkIntRange(name, value string, t reflect.Type, items bool) error {
	switch name {
	case "minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum", "enum", "default", "example":
	default:
		return nil
	}
	if items && name == "default" {
		return nil // the array's own default, not an item's
	}
	for t.Kind() == reflect.Pointer || items && (t.Kind() == reflect.Slice || t.Kind() == reflect.Array) {
		if t.Kind() != reflect.Pointer {
			items = false
		}
		t = t.Elem()
	}
	bounds := typeSchema(t, true)
	if bounds == nil || bounds.Type != "integer" {
		return nil
	}
	v, err := strconv.ParseFloat(value, 64)
	if err != nil {
		return nil // checkTagValue has refused it already, or it is not a number
	}
	lo, _ := bounds.Minimum.Float64()
	hi, noMax := bounds.Maximum.Float64()
	switch {
	case noMax != nil && v < lo: // uint, uint64: minimum 0 only
		return fmt.Errorf("the field's type %s holds no negative number, so %s=%s promises values the function cannot receive", t, name, value)
	case noMax == nil && (v < lo || v > hi):
		return fmt.Errorf("the field's type %s holds %s to %s, so %s=%s promises values the function cannot receive", t, bounds.Minimum, bounds.Maximum, name, value)
	}
	return nil
}

// checkTagValue checks that value can be read as the keyword's value for
// a field of JSON type kind (the item type, for an array's item keywords).
func checkTagValue(name, value, kind, fieldType string) error {
	switch name {
	case "minLength", "maxLength", "minItems", "maxItems":
		if _, err := strconv.ParseUint(value, 10, 64); err != nil {
			return fmt.Errorf("%s must be a whole number, not %q", name, value)
		}
	case "multipleOf", "minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum":
		if !isJSONNumber(value) {
			return fmt.Errorf("%s must be a number, not %q", name, value)
		}
	case "uniqueItems":
		if value != "true" {
			return fmt.Errorf("the reflector sets uniqueItems whatever its value: write uniqueItems=true, or leave it out")
		}
	case "readOnly", "writeOnly":
		if _, err := strconv.ParseBool(value); err != nil {
			return fmt.Errorf("%s must be true or false, not %q", name, value)
		}
	case "pattern":
		if _, err := regexp.Compile(value); err != nil {
			return fmt.Errorf("the pattern does not compile: %v", err)
		}
	case "default", "example", "enum":
		if fieldType == "array" && name == "default" {
			return nil // see checkFieldTags
		}
		switch kind {
		case "integer":
			if _, err := strconv.ParseInt(value, 10, 64); err != nil {
				return fmt.Errorf("the field is an integer, and %q is not one", value)
			}
		case "number":
			if !isJSONNumber(value) {
				return fmt.Errorf("the field is a number, and %q is not one", value)
			}
		case "boolean":
			if value != "true" && value != "false" {
				return fmt.Errorf("the field is a boolean: write %s=true or %s=false", name, name)
			}
		}
	}
	return nil
}

// isJSONNumber reports whether s is a number as the reflector reads one.
func isJSONNumber(s string) bool {
	if _, err := json.Number(s).Int64(); err == nil {
		return true
	}
	_, err := json.Number(s).Float64()
	return err == nil
}

// tagJSONType returns the JSON type the reflector gives field f, and for
// an array the type of its items; "" when it is not one the tags apply to
// (a type with a schema of its own, json.RawMessage, an interface).
func tagJSONType(f reflect.StructField, input bool) (string, string) {
	if jsonOptions(f.Tag.Get("json"), "string") {
		switch jsonTypeOf(f.Type, input) {
		case "integer", "number", "boolean":
			return "string", ""
		}
	}
	t := f.Type
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	typ := jsonTypeOf(t, input)
	if typ == "array" {
		return typ, jsonTypeOf(t.Elem(), input)
	}
	return typ, ""
}

// jsonTypeOf is the JSON type of Go type t, as the reflector writes it
// for an input (input) or an output: "" for a schema without a type (any
// value), "?" for a type that writes its own schema.
func jsonTypeOf(t reflect.Type, input bool) string {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if s := typeSchema(t, input); s != nil {
		return s.Type
	}
	switch {
	case t.Implements(customSchema), reflect.PointerTo(t).Implements(customSchema):
		return "?"
	case t == timeType || t == urlType:
		return "string"
	case t == rawMessageType:
		return ""
	}
	switch t.Kind() {
	case reflect.String:
		return "string"
	case reflect.Bool:
		return "boolean"
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return "integer"
	case reflect.Float32, reflect.Float64:
		return "number"
	case reflect.Slice:
		if t.Elem().Kind() == reflect.Uint8 {
			return "string" // []byte is base64 text
		}
		return "array"
	case reflect.Array:
		return "array"
	case reflect.Struct, reflect.Map:
		return "object"
	}
	return ""
}

// jsonOptions reports whether a json tag has the option opt.
func jsonOptions(tag, opt string) bool {
	_, rest, _ := strings.Cut(tag, ",")
	return slices.Contains(strings.Split(rest, ","), opt)
}

func describeType(typ, item string) string {
	switch {
	case typ == "array" && item != "":
		return "an array of " + item + "s"
	case typ == "integer":
		return "an integer field"
	case typ == "array", typ == "object":
		return "an " + typ + " field"
	}
	return "a " + typ + " field"
}

// keywordHint names the keyword closest to name that fits the field, or
// lists those that do.
func keywordHint(name, typ, item string) string {
	var fits []string
	fits = append(fits, tagGeneric[:4]...)
	fits = append(fits, tagByType[typ]...)
	if typ == "array" {
		fits = append(fits, tagByType[item]...)
	}
	fits = append(fits, tagFlags...)
	best, bestDist := "", 3
	for _, k := range fits {
		if d := nearest.Distance(strings.ToLower(name), strings.ToLower(k)); d < bestDist {
			best, bestDist = k, d
		}
	}
	if best != "" {
		return fmt.Sprintf("did you mean %q?", best)
	}
	slices.Sort(fits)
	return "this field takes " + strings.Join(slices.Compact(fits), ", ")
}

// splitTag splits a jsonschema tag at the commas not escaped as "\,", as
// the reflector does.
func splitTag(tag string) []string {
	var parts []string
	var cur strings.Builder
	for i := 0; i < len(tag); i++ {
		switch {
		case tag[i] == '\\' && i+1 < len(tag) && tag[i+1] == ',':
			cur.WriteByte(',')
			i++
		case tag[i] == ',':
			parts = append(parts, cur.String())
			cur.Reset()
		default:
			cur.WriteByte(tag[i])
		}
	}
	return append(parts, cur.String())
}
