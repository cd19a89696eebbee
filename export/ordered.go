package export

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"maps"
	"reflect"
	"slices"
	"strings"
)

// This file holds what the schema rewriters share: the words of their
// errors, and JSON objects decoded and written again in their members'
// order.

// count writes n things, in the singular for one.
func count(n any, thing string) string {
	text := jsonText(n)
	if text == "1" {
		return "1 " + thing
	}
	return text + " " + thing + "s"
}

func jsonText(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}

// keyOrder records the order of the members of each object a schema
// decoded into, by the object's map.
type keyOrder map[uintptr][]string

// keys lists the names of m in the order the schema wrote them, or sorted
// when the order is not known.
func (o keyOrder) keys(m map[string]any) []string {
	if names, ok := o[reflect.ValueOf(m).Pointer()]; ok && len(names) == len(m) {
		return names
	}
	return slices.Sorted(maps.Keys(m))
}

// decodeOrdered decodes a schema object, its numbers kept exact, and
// records the order of the members of each object in it.
func decodeOrdered(raw json.RawMessage) (map[string]any, keyOrder, error) {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	order := keyOrder{}
	v, err := decodeValue(dec, order)
	if err == nil {
		if _, extra := dec.Token(); extra != io.EOF {
			err = errors.New("text after the schema")
		}
	}
	root, _ := v.(map[string]any)
	if err != nil || root == nil {
		return nil, nil, errors.New("the parameters schema is not a JSON object")
	}
	return root, order, nil
}

func decodeValue(dec *json.Decoder, order keyOrder) (any, error) {
	tok, err := dec.Token()
	if err != nil {
		return nil, err
	}
	switch tok {
	case json.Delim('{'):
		m := map[string]any{}
		var names []string
		for dec.More() {
			kt, err := dec.Token()
			if err != nil {
				return nil, err
			}
			name, _ := kt.(string)
			v, err := decodeValue(dec, order)
			if err != nil {
				return nil, err
			}
			if _, dup := m[name]; !dup {
				names = append(names, name)
			}
			m[name] = v
		}
		if _, err := dec.Token(); err != nil { // '}'
			return nil, err
		}
		order[reflect.ValueOf(m).Pointer()] = names
		return m, nil
	case json.Delim('['):
		list := []any{}
		for dec.More() {
			v, err := decodeValue(dec, order)
			if err != nil {
				return nil, err
			}
			list = append(list, v)
		}
		if _, err := dec.Token(); err != nil { // ']'
			return nil, err
		}
		return list, nil
	}
	return tok, nil
}

// orderedObject is a JSON object whose members are written in the order
// of keys.
type orderedObject struct {
	keys []string
	m    map[string]any
}

// MarshalJSON writes the members of o in order.
func (o orderedObject) MarshalJSON() ([]byte, error) {
	b := []byte{'{'}
	for i, k := range o.keys {
		if i > 0 {
			b = append(b, ',')
		}
		name, err := json.Marshal(k)
		if err != nil {
			return nil, err
		}
		value, err := json.Marshal(o.m[k])
		if err != nil {
			return nil, err
		}
		b = append(append(append(b, name...), ':'), value...)
	}
	return append(b, '}'), nil
}

// propertiesOf returns the properties of a rewritten schema node.
func propertiesOf(s map[string]any) map[string]any {
	switch p := s["properties"].(type) {
	case map[string]any:
		return p
	case orderedObject:
		return p.m
	}
	return nil
}

// addNotes adds to a rewritten schema's description, in parentheses and
// sorted, the notes of the constraints its format could not carry.
func addNotes(out map[string]any, notes []string) {
	if len(notes) == 0 {
		return
	}
	slices.Sort(notes)
	d, _ := out["description"].(string)
	out["description"] = strings.TrimSpace(d + " (" + strings.Join(notes, "; ") + ")")
}
