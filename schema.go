package otc

import (
	"bytes"
	"encoding"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"net"
	"net/url"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/invopop/jsonschema"
	"github.com/otcgo/otc/internal/decode"
	"github.com/otcgo/otc/internal/validate"
	"github.com/otcgo/otc/internal/wire"
)

// This file turns Go types into the inline JSON Schemas of the protocol's tool definitions, checks
// hand-written schemas, compiles input validators, and turns validation
// failures into the parameter_errors of the protocol's input validation errors. Everything here runs at
// registration except the two error translators at the bottom.

// anySchema is the output schema of a tool whose value may be any JSON.
var anySchema = json.RawMessage(`{}`)

// Types the reflector writes as strings, whatever their Go structure.
var (
	timeType        = reflect.TypeFor[time.Time]()
	urlType         = reflect.TypeFor[url.URL]()
	ipType          = reflect.TypeFor[net.IP]()
	rawMessageType  = reflect.TypeFor[json.RawMessage]()
	durationType    = reflect.TypeFor[time.Duration]()
	numberType      = reflect.TypeFor[json.Number]()
	noOutputType    = reflect.TypeFor[NoOutput]()
	textMarshaler   = reflect.TypeFor[encoding.TextMarshaler]()
	textUnmarshaler = reflect.TypeFor[encoding.TextUnmarshaler]()
	jsonUnmarshaler = reflect.TypeFor[json.Unmarshaler]()
	jsonMarshaler   = reflect.TypeFor[json.Marshaler]()
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
func checkInlineType(t reflect.Type, input bool) error {
	return walkType(t, t.String(), input, map[reflect.Type]bool{})
}

func walkType(t reflect.Type, path string, input bool, visiting map[reflect.Type]bool) error {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	switch {
	case t == timeType || t == ipType || t == rawMessageType || t == durationType || t == contentType:
		return nil
	case t.Implements(customSchema) || reflect.PointerTo(t).Implements(customSchema):
		return nil
	case t == urlType:
		return fmt.Errorf("%s has type url.URL, which encoding/json cannot read from a string: use a string with jsonschema:\"format=uri\" and url.Parse it in the function", path)
	case input && t.Kind() == reflect.Interface && t.NumMethod() > 0:
		return fmt.Errorf("%s has type %s, an interface with methods, which encoding/json cannot decode into: use a concrete type, or json.RawMessage and decode it in the function", path, t)
	case input && reflect.PointerTo(t).Implements(jsonUnmarshaler):
		return fmt.Errorf("%s has type %s, which reads JSON its own way (UnmarshalJSON), so a schema reflected from its Go fields would not say what it accepts: give it a JSONSchema() *jsonschema.Schema method that does", path, t)
	case !input && reflect.PointerTo(t).Implements(jsonMarshaler):
		return fmt.Errorf("%s has type %s, which writes JSON its own way (MarshalJSON), so a schema reflected from its Go fields would not say what it produces: give it a JSONSchema() *jsonschema.Schema method that does", path, t)
	case input && reflect.PointerTo(t).Implements(textUnmarshaler), !input && reflect.PointerTo(t).Implements(textMarshaler):
		return nil // a string, see typeSchema
	}
	switch t.Kind() {
	case reflect.Chan, reflect.Func, reflect.Complex64, reflect.Complex128,
		reflect.UnsafePointer, reflect.Uintptr:
		return fmt.Errorf("%s has type %s, which has no JSON form", path, t)
	case reflect.Slice, reflect.Array:
		return walkType(t.Elem(), path+"[]", input, visiting)
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
		return walkType(t.Elem(), path+"[key]", input, visiting)
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
			if err := checkFieldTags(f, path+"."+f.Name, input); err != nil {
				return err
			}
			if err := walkType(f.Type, path+"."+f.Name, input, visiting); err != nil {
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

// inputTypeSchema and outputTypeSchema give the schema of the Go types
// whose JSON form the reflector gets wrong, as the function reads them
// and as it writes them; nil for the others. See typeSchema.
func inputTypeSchema(t reflect.Type) *jsonschema.Schema  { return typeSchema(t, true) }
func outputTypeSchema(t reflect.Type) *jsonschema.Schema { return typeSchema(t, false) }

// typeSchema gives the schema of the Go types whose JSON form the
// reflector gets wrong, and nil for the others:
//
//   - time.Duration, which encoding/json reads as an integer of
//     nanoseconds, is read from a duration string ("1h30m"), which the
//     decode plan turns into nanoseconds; it is written as the integer;
//   - net.IP, written as IPv4 only, takes IPv6 too;
//   - json.Number, a string type, is a number;
//   - a type read from a JSON string by UnmarshalText (input), or written
//     as one by MarshalText (output), is a string;
//   - sized and unsigned integers carry their range, so that the schema
//     says what the validator enforces.
func typeSchema(t reflect.Type, input bool) *jsonschema.Schema {
	if t.Implements(customSchema) || reflect.PointerTo(t).Implements(customSchema) {
		return nil
	}
	text, ownJSON := textMarshaler, jsonMarshaler
	if input {
		text, ownJSON = textUnmarshaler, jsonUnmarshaler
	}
	switch {
	case t == durationType && input:
		return &jsonschema.Schema{Type: "string", Pattern: validate.DurationPattern}
	case t == durationType:
		return &jsonschema.Schema{Type: "integer"} // nanoseconds, as encoding/json writes it
	case t == numberType:
		// A string type that encoding/json reads from and writes as a
		// number (it reads a numeric string too, which the schema need
		// not offer).
		return &jsonschema.Schema{Type: "number"}
	case t == ipType:
		return &jsonschema.Schema{Type: "string", AnyOf: []*jsonschema.Schema{{Format: "ipv4"}, {Format: "ipv6"}}}
	case t == timeType || t == rawMessageType || t == contentType:
		return nil
	case (t.Implements(text) || reflect.PointerTo(t).Implements(text)) &&
		!t.Implements(ownJSON) && !reflect.PointerTo(t).Implements(ownJSON):
		return &jsonschema.Schema{Type: "string"}
	}
	bound := func(lo, hi int64) *jsonschema.Schema {
		s := &jsonschema.Schema{Type: "integer", Minimum: json.Number(strconv.FormatInt(lo, 10))}
		if hi != 0 {
			s.Maximum = json.Number(strconv.FormatInt(hi, 10))
		}
		return s
	}
	switch t.Kind() {
	case reflect.Int8:
		return bound(math.MinInt8, math.MaxInt8)
	case reflect.Int16:
		return bound(math.MinInt16, math.MaxInt16)
	case reflect.Int32:
		return bound(math.MinInt32, math.MaxInt32)
	case reflect.Uint8:
		return bound(0, math.MaxUint8)
	case reflect.Uint16:
		return bound(0, math.MaxUint16)
	case reflect.Uint32:
		return bound(0, math.MaxUint32)
	case reflect.Uint, reflect.Uint64:
		return bound(0, 0)
	}
	return nil
}

// reflectInputSchema reflects the parameters schema of input type t.
// With nullAsAbsent, every optional property (not in its object's
// required list, and not tagged nullable) also accepts null: its schema S
// becomes {"anyOf": [S, {"type": "null"}]}, with S's description and
// default moved up beside the anyOf. That form is the validator's only:
// the published schema keeps S itself, since the converters of agent
// frameworks keep only some branches of an anyOf, and an optional enum
// would reach the model without its values.
func reflectInputSchema(t reflect.Type, nullAsAbsent bool) (json.RawMessage, error) {
	if !nullAsAbsent {
		return reflectSchemaWith(t, "", true, nil)
	}
	return reflectSchemaWith(t, "", true, optionalNullable)
}

// optionalNullable lets the optional properties of s, and of the objects
// nested in it, be null (see reflectInputSchema).
func optionalNullable(s *jsonschema.Schema) {
	if s == nil {
		return
	}
	if s.Properties != nil {
		for pair := s.Properties.Oldest(); pair != nil; pair = pair.Next() {
			p := pair.Value
			optionalNullable(p)
			if p == nil || slices.Contains(s.Required, pair.Key) || acceptsNull(p) {
				continue
			}
			wrapped := &jsonschema.Schema{
				AnyOf:       []*jsonschema.Schema{p, {Type: "null"}},
				Title:       p.Title,
				Description: p.Description,
				Default:     p.Default,
			}
			p.Title, p.Description, p.Default = "", "", nil
			pair.Value = wrapped
		}
	}
	optionalNullable(s.Items)
	optionalNullable(s.AdditionalProperties)
	for _, list := range [][]*jsonschema.Schema{s.AnyOf, s.OneOf, s.AllOf} {
		for _, sub := range list {
			optionalNullable(sub)
		}
	}
}

// acceptsNull reports whether a reflected schema already lets null in:
// a nullable property, or a schema without a type (any value).
func acceptsNull(s *jsonschema.Schema) bool {
	if s.Type == "null" || s.Type == "" && len(s.AnyOf) == 0 && len(s.OneOf) == 0 && len(s.AllOf) == 0 {
		return true
	}
	for _, b := range s.AnyOf {
		if b != nil && b.Type == "null" {
			return true
		}
	}
	return false
}

// reflectSchema reflects the inline schema of t, without $schema or $id.
// The reflector panics on types it does not know; checkInlineType rules
// those out, and the recover turns anything left into an error rather than
// a crash at startup.
func reflectSchema(t reflect.Type, description string) (schema json.RawMessage, err error) {
	return reflectSchemaWith(t, description, false, nil)
}

// reflectSchemaWith is reflectSchema, for an input type when input is
// true, with adjust applied to the schema before it is encoded.
func reflectSchemaWith(t reflect.Type, description string, input bool, adjust func(*jsonschema.Schema)) (schema json.RawMessage, err error) {
	if err := checkInlineType(t, input); err != nil {
		return nil, err
	}
	defer func() {
		if v := recover(); v != nil {
			err = fmt.Errorf("cannot reflect a schema from %s: %v", t, v)
		}
	}()
	mapper := outputTypeSchema
	if input {
		mapper = inputTypeSchema
	}
	r := &jsonschema.Reflector{DoNotReference: true, Anonymous: true, Mapper: mapper}
	s := r.ReflectFromType(t)
	s.Version = ""
	s.ID = ""
	s.Definitions = nil
	if description != "" {
		s.Description = description
	}
	optionalZeros(s, t, 0)
	nullableAnyOf(s)
	if adjust != nil {
		adjust(s)
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

// nullableAnyOf rewrites the {"oneOf": [S, {"type": "null"}]} the
// reflector gives a property tagged jsonschema:"nullable" as an anyOf,
// which validates the same (S never accepts null) and is the form
// OpenAI's strict mode accepts, and moves S's description up to the
// property, where models and the description check look for it. It walks
// nested objects and array items.
// optionalZeros makes optional, in schema s of type t, the fields whose
// JSON tag has omitzero, as encoding/json leaves them out when zero (the
// reflector, at the version this module requires, reads only omitempty).
// depth bounds the walk of a recursive type.
func optionalZeros(s *jsonschema.Schema, t reflect.Type, depth int) {
	if s == nil || depth > 32 {
		return
	}
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
		if len(s.OneOf) == 2 && s.OneOf[1] != nil && s.OneOf[1].Type == "null" {
			s = s.OneOf[0]
		}
	}
	switch t.Kind() {
	case reflect.Slice, reflect.Array:
		optionalZeros(s.Items, t.Elem(), depth+1)
	case reflect.Map:
		optionalZeros(s.AdditionalProperties, t.Elem(), depth+1)
	case reflect.Struct:
		if s.Properties == nil {
			return
		}
		for i := range t.NumField() {
			f := t.Field(i)
			name, opts, _ := strings.Cut(f.Tag.Get("json"), ",")
			if name == "-" && opts == "" || !f.IsExported() && !f.Anonymous {
				continue
			}
			if name == "" && f.Anonymous {
				optionalZeros(s, f.Type, depth+1) // its fields are the parent's
				continue
			}
			if name == "" {
				name = f.Name
			}
			if slices.Contains(strings.Split(opts, ","), "omitzero") {
				s.Required = slices.DeleteFunc(s.Required, func(r string) bool { return r == name })
			}
			if p, ok := s.Properties.Get(name); ok {
				optionalZeros(p, f.Type, depth+1)
			}
		}
	}
}

func nullableAnyOf(s *jsonschema.Schema) {
	if s == nil {
		return
	}
	if s.Type == "" && len(s.OneOf) == 2 && s.OneOf[1] != nil && s.OneOf[1].Type == "null" && s.OneOf[0] != nil {
		s.AnyOf, s.OneOf = s.OneOf, nil
		if s.Description == "" {
			s.Description, s.AnyOf[0].Description = s.AnyOf[0].Description, ""
		}
	}
	if s.Properties != nil {
		for pair := s.Properties.Oldest(); pair != nil; pair = pair.Next() {
			nullableAnyOf(pair.Value)
		}
	}
	nullableAnyOf(s.Items)
	nullableAnyOf(s.AdditionalProperties)
	for _, list := range [][]*jsonschema.Schema{s.AnyOf, s.OneOf, s.AllOf} {
		for _, sub := range list {
			nullableAnyOf(sub)
		}
	}
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

// checkParameters checks the extra rules of an input schema (the protocol's List Tools): it
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

func joinPath(parent, name string) string {
	if parent == "" {
		return name
	}
	return parent + "." + name
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
			key = validate.RootKey
		}
		msg := "Must be " + jsonKindOf(te.Type)
		if strings.HasPrefix(te.Value, "number") {
			msg += " in the accepted range"
		}
		return map[string]string{wire.Truncate(key, validate.MaxEchoedKey): msg}
	}
	return map[string]string{validate.RootKey: "Cannot be read as the tool's input"}
}

// maxLocateDepth bounds the descent of locateValue.
const maxLocateDepth = 32

// locateDecodeError returns the parameter errors of input that the
// decoder refused with err. encoding/json names the field of a type
// mismatch without the index of the array element it is in, and not the
// field whose UnmarshalText or UnmarshalJSON failed; so the input is
// walked beside the input type, decoding each value alone, to find the
// innermost one that fails and report it under its path ("items.2.when"),
// with a message a model can act on.
func locateDecodeError(in reflect.Type, input []byte, err error) map[string]string {
	if key, msg, ok := locateValue(in, input, "", 0); ok && key != "" {
		return map[string]string{wire.Truncate(key, validate.MaxEchoedKey): msg}
	}
	return decodeParameterErrors(err)
}

// locateValue finds the value inside raw, of Go type t at path, depth
// levels down, that does not decode: the innermost one, so that a struct
// is blamed only when none of its fields is. ok is false when raw
// decodes. Each level decodes its values again, so the walk stops
// descending at maxLocateDepth, which only a recursive type (possible
// with a hand-written schema) reaches.
func locateValue(t reflect.Type, raw json.RawMessage, path string, depth int) (key, msg string, ok bool) {
	base := decode.Deref(t)
	ownDecoding := reflect.PointerTo(base).Implements(jsonUnmarshaler) || reflect.PointerTo(base).Implements(textUnmarshaler)
	switch {
	case ownDecoding, depth >= maxLocateDepth:
	case base.Kind() == reflect.Struct:
		var members map[string]json.RawMessage
		if json.Unmarshal(raw, &members) == nil {
			fields := decode.JSONFields(base)
			for _, name := range sortedKeys(members) {
				if ft, known := fields[name]; known {
					if key, msg, ok := locateValue(ft, members[name], joinPath(path, name), depth+1); ok {
						return key, msg, ok
					}
				}
			}
		}
	case base.Kind() == reflect.Map:
		var members map[string]json.RawMessage
		if json.Unmarshal(raw, &members) == nil {
			for _, name := range sortedKeys(members) {
				if key, msg, ok := locateValue(base.Elem(), members[name], joinPath(path, name), depth+1); ok {
					return key, msg, ok
				}
			}
		}
	case base.Kind() == reflect.Slice && base.Elem().Kind() != reflect.Uint8, base.Kind() == reflect.Array:
		var elems []json.RawMessage
		if json.Unmarshal(raw, &elems) == nil {
			for i, e := range elems {
				if key, msg, ok := locateValue(base.Elem(), e, joinPath(path, strconv.Itoa(i)), depth+1); ok {
					return key, msg, ok
				}
			}
		}
	}
	err := json.Unmarshal(raw, reflect.New(t).Interface())
	if err == nil {
		return "", "", false
	}
	var te *json.UnmarshalTypeError
	if errors.As(err, &te) {
		msg = "Must be " + jsonKindOf(te.Type)
		if strings.HasPrefix(te.Value, "number") {
			msg += " in the accepted range"
		}
		return path, msg, true
	}
	return path, "Cannot be read: " + wire.Truncate(err.Error(), 200), true
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
