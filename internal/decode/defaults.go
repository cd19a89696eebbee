package decode

import (
	"bytes"
	"encoding/json"
	"fmt"
	"maps"
	"reflect"
	"slices"
	"strconv"
	"time"

	"github.com/otcgo/otc/internal/jsonparse"
	"github.com/otcgo/otc/internal/validate"
)

// This file applies the default values an input schema declares for its
// optional properties: a property the call leaves out (or sends as null,
// unless the registry has StrictNulls) reaches the function with its
// default, at any depth, so that what the schema tells the model and what
// the function sees agree. Register checks each default against its
// property's schema and Go type, so that a default never turns a valid
// call into a refused one.
//
// For a struct input the defaults ride on the decode plan (decode.go),
// which inserts absent members into each object it walks; for an input
// without a plan (a map, json.RawMessage) the top-level defaults are
// appended by applyDefaults.

// Default is the default of one optional property of an object.
type Default struct {
	name   string
	value  []byte // the default, compact JSON, as the decoder reads it
	member []byte // `"name":value`, ready to insert into the object
	onNull bool   // null, when sent, is replaced too
}

// decodeSchema decodes a JSON Schema keeping its numbers exact.
func decodeSchema(raw json.RawMessage) (map[string]any, error) {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var s map[string]any
	if err := dec.Decode(&s); err != nil {
		return nil, err
	}
	return s, nil
}

// objectDefaults lists the defaults of the optional properties of object
// schema s, at path at, sorted by name. Each default must pass its
// property's own schema and, when fields (the JSON names of a struct's
// fields, with their types) is not nil, decode into its field.
func objectDefaults(s map[string]any, at string, fields map[string]reflect.Type, strictNulls bool) ([]Default, error) {
	props, _ := s["properties"].(map[string]any)
	required := stringList(s["required"])
	var out []Default
	for _, name := range slices.Sorted(maps.Keys(props)) {
		p, _ := props[name].(map[string]any)
		def, ok := p["default"]
		if !ok || slices.Contains(required, name) {
			continue
		}
		value, err := json.Marshal(def)
		if err != nil {
			return nil, err
		}
		path := joinPath(at, name)
		if msg := refusedBy(p, value); msg != "" {
			return nil, fmt.Errorf("the default of parameter %s, %s, is refused by the parameter's own schema (%s): make the default a value the schema accepts", path, value, msg)
		}
		if ft, ok := fields[name]; ok {
			decoded, err := decoderForm(ft, value)
			if err != nil {
				return nil, fmt.Errorf("the default of parameter %s, %s, cannot be read as the field's type %s: %v", path, value, ft, err)
			}
			value = decoded
		}
		key, _ := json.Marshal(name)
		out = append(out, Default{
			name:   name,
			value:  value,
			member: append(append(key, ':'), value...),
			onNull: !strictNulls,
		})
	}
	return out, nil
}

// checkEnums checks that each enum value of the properties props of a
// struct (or of their items, for a slice or array field) decodes into the
// field, as defaults must: enum=medium on a type whose UnmarshalText
// refuses "medium" would invite calls that are then refused.
func checkEnums(props map[string]any, at string, fields map[string]reflect.Type) error {
	for _, name := range slices.Sorted(maps.Keys(props)) {
		ft, ok := fields[name]
		if !ok {
			continue
		}
		p, _ := props[name].(map[string]any)
		schemas := []map[string]any{p}
		for _, b := range anyList(p["anyOf"]) { // optional: [S, null]
			if bm, ok := b.(map[string]any); ok {
				schemas = append(schemas, bm)
			}
		}
		for _, s := range schemas {
			target, values := ft, anyList(s["enum"])
			if items, ok := s["items"].(map[string]any); ok {
				if base := Deref(ft); base.Kind() == reflect.Slice || base.Kind() == reflect.Array {
					target, values = base.Elem(), anyList(items["enum"])
				}
			}
			for _, v := range values {
				value, err := json.Marshal(v)
				if err != nil {
					return err
				}
				if _, err := decoderForm(target, value); err != nil {
					return fmt.Errorf("the enum value %s of parameter %s cannot be read as %s: %v; list only values the type reads", value, joinPath(at, name), target, err)
				}
			}
		}
	}
	return nil
}

// refusedBy returns the message with which schema s refuses value, or ""
// when it accepts it.
func refusedBy(s map[string]any, value []byte) string {
	raw, err := json.Marshal(s)
	if err != nil {
		return err.Error()
	}
	v, err := validate.CompileUnchecked(raw)
	if err != nil {
		return err.Error()
	}
	doc, err := jsonparse.Parse(value)
	if err != nil {
		return err.Error()
	}
	defer jsonparse.Release(doc)
	errs := v.Validate(doc, 0)
	for _, k := range slices.Sorted(maps.Keys(errs)) {
		return errs[k]
	}
	return ""
}

// decoderForm checks that value, a default, decodes into Go type t as a
// call's input would, and returns it in the form the decoder reads, since
// defaults are inserted after the decode plan's rewriting: a
// time.Duration's string as its nanoseconds, anything else as it is.
func decoderForm(t reflect.Type, value []byte) ([]byte, error) {
	if Deref(t) == durationType {
		var s string
		if err := json.Unmarshal(value, &s); err != nil {
			return nil, err
		}
		d, err := time.ParseDuration(s)
		if err != nil {
			return nil, err
		}
		return strconv.AppendInt(nil, int64(d), 10), nil
	}
	if err := json.Unmarshal(value, reflect.New(t).Interface()); err != nil {
		return nil, err
	}
	return value, nil
}

// Defaults reads the defaults of the parameters schema params
// of a tool whose function takes in, and returns those applyDefaults
// must append: the top-level ones when the input type has no struct plan.
// Defaults of a struct input, at every depth, are put on its plan.
func Defaults(params json.RawMessage, in reflect.Type, plan *Plan, strictNulls bool) ([]Default, error) {
	s, err := decodeSchema(params)
	if err != nil {
		return nil, err
	}
	if plan == nil || plan.fields == nil {
		var fields map[string]reflect.Type
		if base := Deref(in); base.Kind() == reflect.Struct {
			fields = JSONFields(base)
		}
		return objectDefaults(s, "", fields, strictNulls)
	}
	return nil, attachDefaults(in, plan, s, "", strictNulls, map[*Plan]string{})
}

func Deref(t reflect.Type) reflect.Type {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	return t
}

// attachDefaults walks Go type t, its decode plan p and schema node s
// together, putting on each struct's plan the defaults its object schema
// declares. done records the path where each plan got its defaults: a
// struct type used at two places shares one plan, so the two places
// must declare the same defaults (they do when the schema is reflected,
// since the defaults come from the struct's own tags).
func attachDefaults(t reflect.Type, p *Plan, s map[string]any, at string, strictNulls bool, done map[*Plan]string) error {
	if p == nil || s == nil {
		return nil
	}
	t = Deref(t)
	// An optional property is {"anyOf": [S, {"type": "null"}]}.
	for _, b := range anyList(s["anyOf"]) {
		if bm, ok := b.(map[string]any); ok {
			if err := attachDefaults(t, p, bm, at, strictNulls, done); err != nil {
				return err
			}
		}
	}
	switch {
	case p.fields != nil && t.Kind() == reflect.Struct:
		props, _ := s["properties"].(map[string]any)
		if props == nil {
			return nil
		}
		fields := JSONFields(t)
		if err := checkEnums(props, at, fields); err != nil {
			return err
		}
		defaults, err := objectDefaults(s, at, fields, strictNulls)
		if err != nil {
			return err
		}
		if first, ok := done[p]; ok {
			if !sameDefaults(p.defaults, defaults) {
				return fmt.Errorf("parameters %s and %s have the same Go type, %s, but the schema gives them different defaults: a hand-written schema must give one Go type the same defaults everywhere", first, at, t)
			}
		} else {
			done[p] = at
			p.setDefaults(defaults)
		}
		for name, ft := range fields {
			sub, _ := props[name].(map[string]any)
			if err := attachDefaults(ft, p.fields[name], sub, joinPath(at, name), strictNulls, done); err != nil {
				return err
			}
		}
	case p.elem != nil && (t.Kind() == reflect.Slice || t.Kind() == reflect.Array):
		items, _ := s["items"].(map[string]any)
		return attachDefaults(t.Elem(), p.elem, items, at+"[]", strictNulls, done)
	case p.elem != nil && t.Kind() == reflect.Map:
		values, _ := s["additionalProperties"].(map[string]any)
		return attachDefaults(t.Elem(), p.elem, values, at+"[key]", strictNulls, done)
	}
	return nil
}

func sameDefaults(a, b []Default) bool {
	return slices.EqualFunc(a, b, func(x, y Default) bool {
		return bytes.Equal(x.member, y.member) && x.onNull == y.onNull
	})
}

// ApplyDefaults returns input, a validated JSON object (node root of doc,
// possibly edited since), with the defaults of the parameters it leaves
// out appended. It serves inputs without a struct plan, which take the
// top-level defaults only. A parameter sent as null gets its default as
// well when the default says so; encoding/json keeps the last of repeated
// names, so the appended member wins. input is returned unchanged when no
// default applies.
func ApplyDefaults(defaults []Default, doc *jsonparse.Document, root int32, input []byte) []byte {
	var out []byte
	for i := range defaults {
		d := &defaults[i]
		if m := doc.Member(root, d.name); m >= 0 && !(d.onNull && doc.Kind(m) == jsonparse.KindNull) {
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
