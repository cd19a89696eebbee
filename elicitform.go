package otc

import (
	"encoding/json"
	"fmt"
	"maps"
	"reflect"
	"slices"
	"sort"
	"strings"
	"sync"

	"github.com/invopop/jsonschema"

	"github.com/otcgo/otc/internal/jsonparse"
	"github.com/otcgo/otc/internal/validate"
)

// This file turns the Go type of an elicitation's answer into MCP's
// requestedSchema, a restricted JSON Schema: a flat object whose
// properties are strings, numbers, integers, booleans or multiple-choice
// lists of strings. The schema is reflected with the rules of tool inputs
// (schema.go, tags.go), then checked against what MCP allows, so that a
// form MCP cannot show is refused when the tool first asks, naming the
// field, rather than shown wrong.

// elicitForm is the requested schema of an answer type, and its validator.
type elicitForm struct {
	schema    json.RawMessage
	validator *validate.Schema
}

var elicitForms sync.Map // reflect.Type → *elicitForm or error

// elicitFormOf returns the form of answer, a non-nil pointer to a struct.
func elicitFormOf(answer any) (*elicitForm, error) {
	t := reflect.TypeOf(answer)
	if t == nil || t.Kind() != reflect.Pointer || t.Elem().Kind() != reflect.Struct || reflect.ValueOf(answer).IsNil() {
		return nil, fmt.Errorf("otc: elicit: the answer is %v; pass a non-nil pointer to a struct whose fields are the form's", t)
	}
	t = t.Elem()
	if v, ok := elicitForms.Load(t); ok {
		if err, ok := v.(error); ok {
			return nil, err
		}
		return v.(*elicitForm), nil
	}
	f, err := buildElicitForm(t)
	if err != nil {
		err = fmt.Errorf("otc: elicit: %s cannot be asked for: %w", t, err)
		elicitForms.Store(t, err)
		return nil, err
	}
	elicitForms.Store(t, f)
	return f, nil
}

// Keywords MCP's primitive schemas have, by JSON type.
var elicitKeywords = map[string][]string{
	"string":  {"type", "title", "description", "default", "format", "minLength", "maxLength", "enum"},
	"number":  {"type", "title", "description", "default", "minimum", "maximum"},
	"integer": {"type", "title", "description", "default", "minimum", "maximum"},
	"boolean": {"type", "title", "description", "default"},
	"array":   {"type", "title", "description", "default", "items", "minItems", "maxItems"},
}

var elicitFormats = []string{"date", "date-time", "email", "uri"}

func buildElicitForm(t reflect.Type) (*elicitForm, error) {
	raw, err := reflectSchemaWith(t, "", true, nil)
	if err != nil {
		return nil, err
	}
	var root map[string]any
	if err := json.Unmarshal(raw, &root); err != nil {
		return nil, err
	}
	props, _ := root["properties"].(map[string]any)
	if len(props) == 0 {
		return nil, fmt.Errorf("it has no exported fields to ask for")
	}
	for _, name := range slices.Sorted(maps.Keys(props)) {
		p, _ := props[name].(map[string]any)
		field := goFieldName(t, name)
		if i := strings.LastIndexByte(field, '.'); i >= 0 {
			field = field[i+1:] // the type is named already
		}
		if field == "" {
			field = name
		}
		if err := checkElicitProperty(p); err != nil {
			return nil, fmt.Errorf("field %s: %w", field, err)
		}
	}
	// Reflected again, to keep the fields in their order, without what
	// MCP's requested schema has no place for.
	schema, err := reflectSchemaWith(t, "", true, func(s *jsonschema.Schema) {
		s.AdditionalProperties = nil
		s.Title, s.Description, s.Comments = "", "", ""
	})
	if err != nil {
		return nil, err
	}
	v, err := validate.Compile(schema)
	if err != nil {
		return nil, err
	}
	return &elicitForm{schema: schema, validator: v}, nil
}

// checkElicitProperty checks one property of a form against what MCP can
// ask for.
func checkElicitProperty(p map[string]any) error {
	typ, _ := p["type"].(string)
	allowed, ok := elicitKeywords[typ]
	if !ok {
		if p["anyOf"] != nil || p["oneOf"] != nil {
			return fmt.Errorf("a nullable or composite field cannot be asked for: MCP forms hold strings, numbers, integers, booleans and lists of strings with an enum")
		}
		return fmt.Errorf("its JSON type %q cannot be asked for: MCP forms hold strings, numbers, integers, booleans and lists of strings with an enum", typ)
	}
	for _, k := range slices.Sorted(maps.Keys(p)) {
		if !slices.Contains(allowed, k) {
			return fmt.Errorf("the keyword %q is not one MCP forms have for a %s (they have %s)", k, typ, strings.Join(allowed[1:], ", "))
		}
	}
	if f, ok := p["format"].(string); ok && !slices.Contains(elicitFormats, f) {
		return fmt.Errorf("the format %q is not one MCP forms have (%s)", f, strings.Join(elicitFormats, ", "))
	}
	if typ == "array" {
		items, _ := p["items"].(map[string]any)
		if it, _ := items["type"].(string); it != "string" || items["enum"] == nil || len(items) != 2 {
			return fmt.Errorf("a list is asked for only as a multiple choice: a slice of strings whose items carry an enum (jsonschema:\"enum=a,enum=b\")")
		}
	}
	return nil
}

// decode checks content, the answer of an accepted elicitation, against
// the form and decodes it into answer. It returns what is wrong with
// content, or "".
func (f *elicitForm) decode(content json.RawMessage, answer any) string {
	if len(content) == 0 || string(content) == "null" {
		content = json.RawMessage(`{}`)
	}
	if reason := formProblem(f.validator, content); reason != "" {
		return reason
	}
	if err := json.Unmarshal(content, answer); err != nil {
		return "its content cannot be decoded: " + err.Error()
	}
	return ""
}

// formProblem checks content, the answer of an accepted elicitation,
// against a form's validator, and returns what is wrong with it, or "".
func formProblem(v *validate.Schema, content json.RawMessage) string {
	d, err := jsonparse.Parse(content)
	if err != nil {
		return "its content is not valid JSON: " + err.Error()
	}
	defer jsonparse.Release(d)
	if d.Kind(0) != jsonparse.KindObject {
		return "its content is not a JSON object"
	}
	if errs := v.Validate(d, 0); errs != nil {
		keys := make([]string, 0, len(errs))
		for k := range errs {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		var b strings.Builder
		b.WriteString("its content does not fit the form:")
		for _, k := range keys {
			fmt.Fprintf(&b, " %s: %s;", k, errs[k])
		}
		return strings.TrimSuffix(b.String(), ";")
	}
	return ""
}
