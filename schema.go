package otc

import (
	"bytes"
	"encoding"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/url"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/invopop/jsonschema"
	"github.com/xeipuuv/gojsonschema"
)

// This file turns Go types into the inline JSON Schemas of SPEC §3, checks
// hand-written schemas, compiles input validators, and turns validation
// failures into the parameter_errors of SPEC §6. Everything here runs at
// registration except the two error translators at the bottom.

// anySchema is the output schema of a tool whose value may be any JSON.
var anySchema = json.RawMessage(`{}`)

// Types the reflector writes as strings, whatever their Go structure.
var (
	timeType       = reflect.TypeFor[time.Time]()
	urlType        = reflect.TypeFor[url.URL]()
	ipType         = reflect.TypeFor[net.IP]()
	rawMessageType = reflect.TypeFor[json.RawMessage]()
	noOutputType   = reflect.TypeFor[NoOutput]()
	textMarshaler  = reflect.TypeFor[encoding.TextMarshaler]()
	// customSchema is the reflector's hook for a type that writes its own
	// schema; such a type is trusted to be inline and checked afterwards.
	customSchema = reflect.TypeFor[interface{ JSONSchema() *jsonschema.Schema }]()
)

// checkInlineType reports why the schema of t cannot be written inline: a
// type that contains itself, or a value with no JSON form (channel, func,
// complex number). The schema reflector, told not to use references,
// recurses forever on a recursive type, so this walk must come first. It
// follows the fields the reflector follows: exported ones and embedded
// structs, minus those tagged json:"-" or jsonschema:"-".
func checkInlineType(t reflect.Type) error {
	return walkType(t, t.String(), map[reflect.Type]bool{})
}

func walkType(t reflect.Type, path string, visiting map[reflect.Type]bool) error {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	switch {
	case t == timeType || t == urlType || t == ipType || t == rawMessageType:
		return nil
	case t.Implements(customSchema) || reflect.PointerTo(t).Implements(customSchema):
		return nil
	}
	switch t.Kind() {
	case reflect.Chan, reflect.Func, reflect.Complex64, reflect.Complex128,
		reflect.UnsafePointer, reflect.Uintptr:
		return fmt.Errorf("%s has type %s, which has no JSON form", path, t)
	case reflect.Slice, reflect.Array:
		return walkType(t.Elem(), path+"[]", visiting)
	case reflect.Map:
		switch t.Key().Kind() {
		case reflect.String,
			reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
			reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		default:
			if !t.Key().Implements(textMarshaler) {
				return fmt.Errorf("%s is a map with %s keys, which JSON objects cannot have", path, t.Key())
			}
		}
		return walkType(t.Elem(), path+"[key]", visiting)
	case reflect.Struct:
		if visiting[t] {
			return fmt.Errorf("%s refers back to %s: a recursive type cannot be written as an inline schema", path, t)
		}
		visiting[t] = true
		defer delete(visiting, t)
		for f := range t.Fields() {
			if !f.IsExported() && !f.Anonymous {
				continue
			}
			if tagName(f.Tag.Get("json")) == "-" || tagName(f.Tag.Get("jsonschema")) == "-" {
				continue
			}
			if err := walkType(f.Type, path+"."+f.Name, visiting); err != nil {
				return err
			}
		}
	}
	return nil
}

// tagName returns the first comma-separated element of a struct tag value.
func tagName(tag string) string {
	name, _, _ := strings.Cut(tag, ",")
	return name
}

// reflectSchema reflects the inline schema of t, without $schema or $id.
// The reflector panics on types it does not know; checkInlineType rules
// those out, and the recover turns anything left into an error rather than
// a crash at startup.
func reflectSchema(t reflect.Type, description string) (schema json.RawMessage, err error) {
	if err := checkInlineType(t); err != nil {
		return nil, err
	}
	defer func() {
		if v := recover(); v != nil {
			err = fmt.Errorf("cannot reflect a schema from %s: %v", t, v)
		}
	}()
	r := &jsonschema.Reflector{DoNotReference: true, Anonymous: true}
	s := r.ReflectFromType(t)
	s.Version = ""
	s.ID = ""
	s.Definitions = nil
	if description != "" {
		s.Description = description
	}
	if s.Properties != nil {
		for pair := s.Properties.Oldest(); pair != nil; pair = pair.Next() {
			hoistNullableDescription(pair.Value)
		}
	}
	b, err := json.Marshal(s)
	if err != nil {
		return nil, fmt.Errorf("cannot encode the schema of %s: %w", t, err)
	}
	if string(b) == "true" { // the reflector's spelling of "anything"
		return anySchema, nil
	}
	return b, nil
}

// hoistNullableDescription moves the description of a property tagged
// jsonschema:"nullable" from inside its oneOf to the property itself, where
// models and the description check look for it.
func hoistNullableDescription(p *jsonschema.Schema) {
	if p.Description == "" && len(p.OneOf) == 2 && p.OneOf[0].Description != "" {
		p.Description = p.OneOf[0].Description
		p.OneOf[0].Description = ""
	}
}

// checkInlineSchema checks that raw is a JSON Schema that can appear inline
// in a catalog (SPEC §3): a JSON object (or a boolean), using no $ref,
// $dynamicRef, $defs, definitions or $schema anywhere. It returns the
// decoded schema for further checks.
func checkInlineSchema(raw json.RawMessage) (any, error) {
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
		for _, name := range sortedKeys(m) {
			if err := walkSchema(m[name], path+"/"+k+"/"+name); err != nil {
				return err
			}
		}
	}
	return nil
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

// checkParameters checks the extra rules of an input schema (SPEC §3): it
// describes an object, and each top-level property carries a description.
// It returns the name of an undescribed property, if any, so the caller
// can point at the Go field.
func checkParameters(doc any) (undescribed string, err error) {
	obj, _ := doc.(map[string]any)
	if obj == nil || obj["type"] != "object" {
		return "", errors.New(`must describe an object: its "type" must be "object"`)
	}
	props, _ := obj["properties"].(map[string]any)
	for _, name := range sortedKeys(props) {
		p, _ := props[name].(map[string]any)
		if d, _ := p["description"].(string); strings.TrimSpace(d) == "" {
			return name, nil
		}
	}
	return "", nil
}

// compileValidator compiles an input schema for validation. Schemas are
// read as JSON Schema draft 7, which the validator knows best; the
// keywords the reflector writes mean the same there as in 2020-12. The
// schema is first checked against the draft 7 metaschema (bundled with the
// validator, so nothing is fetched), which catches malformed hand-written
// schemas at registration.
func compileValidator(schema json.RawMessage) (*gojsonschema.Schema, error) {
	sl := gojsonschema.NewSchemaLoader()
	sl.Draft = gojsonschema.Draft7
	sl.AutoDetect = false
	sl.Validate = true
	v, err := sl.Compile(gojsonschema.NewBytesLoader(schema))
	if err != nil {
		return nil, fmt.Errorf("is not a valid JSON Schema: %s", strings.TrimSpace(err.Error()))
	}
	return v, nil
}

// goFieldName finds the Go field of struct type t (or a struct it embeds)
// that holds the JSON property name, for error messages. It returns "" when
// t is not a struct or nothing matches.
func goFieldName(t reflect.Type, name string) string {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if t.Kind() != reflect.Struct {
		return ""
	}
	for f := range t.Fields() {
		jsonName := tagName(f.Tag.Get("json"))
		switch {
		case jsonName == name || jsonName == "" && f.Name == name && !f.Anonymous:
			return t.Name() + "." + f.Name
		case f.Anonymous && jsonName == "":
			if n := goFieldName(f.Type, name); n != "" {
				return n
			}
		}
	}
	return ""
}

// compactJSON returns raw without insignificant whitespace.
func compactJSON(raw json.RawMessage) (json.RawMessage, error) {
	var buf bytes.Buffer
	if err := json.Compact(&buf, raw); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// maxParameterErrors caps the entries of parameter_errors, so that an input
// with thousands of unexpected keys does not produce an answer as large as
// the request. The entries kept are the first in key order.
const maxParameterErrors = 32

// maxEchoedKey caps how much of a parameter name taken from the input is
// echoed back in parameter_errors.
const maxEchoedKey = 128

// rootKey is the parameter_errors key for a failure of the input object as
// a whole, such as a minProperties rule in a hand-written schema. It is in
// parentheses so that it cannot be confused with a parameter name.
const rootKey = "(input)"

// parameterErrors turns a failed validation into parameter_errors (SPEC §6):
// each key is the parameter's name, or a dotted path below it, and each
// message is short, written for a model fixing its call, and never quotes
// the value it was sent.
func parameterErrors(errs []gojsonschema.ResultError) map[string]string {
	out := make(map[string]string, min(len(errs), maxParameterErrors))
	var alternatives []gojsonschema.ResultError
	for _, e := range errs {
		switch e.Type() {
		case "number_any_of", "number_one_of":
			// The branch that came closest reports its own errors too, and
			// those say more; these speak only where nothing else does.
			alternatives = append(alternatives, e)
			continue
		}
		addParameterError(out, e)
	}
	for _, e := range alternatives {
		addParameterError(out, e)
	}
	return capEntries(out, maxParameterErrors)
}

// addParameterError records e under its parameter's key, unless an earlier
// error already speaks for that parameter.
func addParameterError(out map[string]string, e gojsonschema.ResultError) {
	key := e.Field()
	if key == gojsonschema.STRING_CONTEXT_ROOT {
		key = ""
	}
	switch e.Type() {
	case "required", "additional_property_not_allowed":
		// Reported on the object; the parameter is the one named.
		if p, ok := e.Details()["property"].(string); ok {
			key = joinPath(key, p)
		}
	}
	if key == "" {
		key = rootKey
	}
	key = truncate(key, maxEchoedKey)
	if _, seen := out[key]; !seen {
		out[key] = parameterMessage(e)
	}
}

func joinPath(parent, name string) string {
	if parent == "" {
		return name
	}
	return parent + "." + name
}

// capEntries keeps the n smallest keys of m, so that the answer to the same
// input is the same every time.
func capEntries(m map[string]string, n int) map[string]string {
	if len(m) <= n {
		return m
	}
	for _, k := range sortedKeys(m)[n:] {
		delete(m, k)
	}
	return m
}

// truncate shortens s to at most n bytes, on a rune boundary, marking the
// cut with an ellipsis.
func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	cut := n
	for cut > 0 && cut < len(s) && s[cut]&0xC0 == 0x80 {
		cut--
	}
	return s[:cut] + "…"
}

// parameterMessage writes the message for one validation failure.
func parameterMessage(e gojsonschema.ResultError) string {
	d := e.Details()
	switch e.Type() {
	case "invalid_type":
		return "Must be " + typeNames(fmt.Sprint(d["expected"]))
	case "required":
		return "Is required"
	case "additional_property_not_allowed":
		return "Is not an accepted parameter"
	case "enum":
		return fmt.Sprintf("Must be one of: %v", d["allowed"])
	case "const":
		return fmt.Sprintf("Must be %v", d["allowed"])
	case "number_gte":
		return fmt.Sprintf("Must be at least %v", d["min"])
	case "number_gt":
		return fmt.Sprintf("Must be greater than %v", d["min"])
	case "number_lte":
		return fmt.Sprintf("Must be at most %v", d["max"])
	case "number_lt":
		return fmt.Sprintf("Must be less than %v", d["max"])
	case "multiple_of":
		return fmt.Sprintf("Must be a multiple of %v", d["multiple"])
	case "string_gte":
		return fmt.Sprintf("Must be at least %v characters long", d["min"])
	case "string_lte":
		return fmt.Sprintf("Must be at most %v characters long", d["max"])
	case "pattern":
		return fmt.Sprintf("Must match the pattern %v", d["pattern"])
	case "format":
		return fmt.Sprintf("Must be a valid %v", d["format"])
	case "array_min_items":
		return fmt.Sprintf("Must have at least %v items", d["min"])
	case "array_max_items":
		return fmt.Sprintf("Must have at most %v items", d["max"])
	case "unique":
		return "Must not contain duplicate items"
	case "array_min_properties":
		return fmt.Sprintf("Must have at least %v properties", d["min"])
	case "array_max_properties":
		return fmt.Sprintf("Must have at most %v properties", d["max"])
	case "number_any_of", "number_one_of":
		return "Does not match any of the accepted forms"
	case "number_all_of", "number_not", "condition_then", "condition_else", "false":
		return "Is not accepted by the schema"
	case "missing_dependency":
		return fmt.Sprintf("Requires %v to be present too", d["dependency"])
	}
	// The validator's own wording for the rest; it describes the rule,
	// not the value.
	return e.Description()
}

// typeNames turns the validator's "number" or "[string,null]" into
// "a number" or "a string or null".
func typeNames(expected string) string {
	names := strings.Split(strings.Trim(expected, "[]"), ",")
	for i, n := range names {
		switch n {
		case "null":
		case "array", "integer", "object":
			names[i] = "an " + n
		default:
			names[i] = "a " + n
		}
	}
	return strings.Join(names, " or ")
}

// Limits on the numbers of an input. The validator reads every number into
// an exact rational, whose cost grows with the number's digits and
// exponent: "1e999999" alone takes a fifth of a second, "1e999" some 30µs
// against well under 1µs for an everyday number, so a body full of them
// would tie up the server. No Go number type needs a number beyond float64's
// exponent range (about ±308), so only a few such numbers are let through
// to be reported against their parameter; the rest of the input is refused
// before validation.
const (
	maxNumberLength    = 1000 // bytes in one number
	maxNumberExponent  = 1000 // magnitude of one number's decimal exponent
	hugeExponent       = 300  // an exponent beyond this is costly
	maxHugeExponents   = 16   // numbers per input with such an exponent
	numberLimitMessage = "Contains numbers too large to process: a number may have at most 1000 characters and an exponent within ±1000, and at most 16 numbers may have an exponent beyond ±300"
)

// withinNumberLimits reports whether the numbers of the JSON text data are
// within the limits above. It is one pass over the bytes, skipping strings.
func withinNumberLimits(data []byte) bool {
	inString := false
	huge := 0
	for i := 0; i < len(data); i++ {
		c := data[i]
		if inString {
			switch c {
			case '\\':
				i++
			case '"':
				inString = false
			}
			continue
		}
		if c == '"' {
			inString = true
			continue
		}
		if c != '-' && (c < '0' || c > '9') {
			continue
		}
		j := i
		exp := -1 // index where the exponent's digits start
		for ; j < len(data); j++ {
			d := data[j]
			if d == 'e' || d == 'E' {
				exp = j + 1
			} else if !(d >= '0' && d <= '9' || d == '-' || d == '+' || d == '.') {
				break
			}
		}
		if j-i > maxNumberLength {
			return false
		}
		if exp >= 0 {
			digits := bytes.TrimLeft(bytes.TrimLeft(data[exp:j], "+-"), "0")
			n, err := strconv.Atoi(string(digits))
			switch {
			case len(digits) > 9 || err == nil && n > maxNumberExponent:
				return false
			case n > hugeExponent:
				if huge++; huge > maxHugeExponents {
					return false
				}
			}
		}
		i = j - 1
	}
	return true
}

// decodeParameterErrors explains why validated input still could not be
// decoded into the function's input type: a number out of the Go type's
// range (1e400 for a float64, 1e20 for an int) or a fraction for an
// integer. The schema cannot see these; they are still the caller's
// mistake, so they are reported like validation errors.
func decodeParameterErrors(err error) map[string]string {
	var te *json.UnmarshalTypeError
	if errors.As(err, &te) {
		key := te.Field
		if key == "" {
			key = rootKey
		}
		msg := "Must be " + jsonKindOf(te.Type)
		if strings.HasPrefix(te.Value, "number") {
			msg += " in the accepted range"
		}
		return map[string]string{truncate(key, maxEchoedKey): msg}
	}
	return map[string]string{rootKey: "Cannot be read as the tool's input"}
}

// jsonKindOf names the JSON value a Go type decodes from, for messages.
func jsonKindOf(t reflect.Type) string {
	switch t.Kind() {
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return "an integer"
	case reflect.Float32, reflect.Float64:
		return "a number"
	case reflect.String:
		return "a string"
	case reflect.Bool:
		return "a boolean"
	case reflect.Slice, reflect.Array:
		return "an array"
	case reflect.Struct, reflect.Map:
		return "an object"
	}
	return "a valid value"
}
