// Package params reads the top-level parameters of a typed input's JSON
// Schema once, at registration, into the typed list that the URI binder,
// the completer and a prompt's arguments all read: one reading of the
// schema the registry reflected, in the order of its properties.
package params

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
)

// Param is one top-level parameter of an input.
type Param struct {
	Name, Description string
	// Type is the property's JSON type ("string", "number", "integer",
	// "boolean", "array", "object"): its name, or the first of its names
	// that is not "null"; "" for none. ItemType is an array's items'.
	Type, ItemType string
	Required       bool
	// Enum is the property's enum, or its items', as text.
	Enum []string
}

// List is an input's parameters, in the order of the schema's properties.
type List []Param

// Get returns the parameter named name.
func (l List) Get(name string) (Param, bool) {
	for _, p := range l {
		if p.Name == name {
			return p, true
		}
	}
	return Param{}, false
}

// Names returns the parameters' names, sorted.
func (l List) Names() []string {
	names := make([]string, len(l))
	for i, p := range l {
		names[i] = p.Name
	}
	slices.Sort(names)
	return names
}

// Read reads the parameters of an object schema, in the order of its
// properties. A schema with no properties has none.
func Read(schema json.RawMessage) (List, error) {
	var s struct {
		Properties json.RawMessage `json:"properties"`
		Required   []string        `json:"required"`
	}
	if err := json.Unmarshal(schema, &s); err != nil {
		return nil, fmt.Errorf("the input schema: %w", err)
	}
	if len(s.Properties) == 0 || string(s.Properties) == "null" {
		return nil, nil
	}
	dec := json.NewDecoder(bytes.NewReader(s.Properties))
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		return nil, fmt.Errorf("the input schema: properties is not an object")
	}
	var out List
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return nil, fmt.Errorf("the input schema: %w", err)
		}
		name, _ := tok.(string)
		var prop struct {
			Description string `json:"description"`
			Type        any    `json:"type"`
			Enum        []any  `json:"enum"`
			Items       *struct {
				Type any   `json:"type"`
				Enum []any `json:"enum"`
			} `json:"items"`
		}
		if err := dec.Decode(&prop); err != nil {
			return nil, fmt.Errorf("the input schema: property %q: %w", name, err)
		}
		p := Param{Name: name, Description: prop.Description, Type: typeOf(prop.Type), Required: slices.Contains(s.Required, name)}
		enum := prop.Enum
		if prop.Items != nil {
			p.ItemType = typeOf(prop.Items.Type)
			if enum == nil {
				enum = prop.Items.Enum
			}
		}
		for _, v := range enum {
			p.Enum = append(p.Enum, fmt.Sprint(v))
		}
		out = append(out, p)
	}
	return out, nil
}

// typeOf is a property's type: its name, or the first of its names that
// is not "null"; "" for none.
func typeOf(t any) string {
	switch x := t.(type) {
	case string:
		return x
	case []any:
		for _, n := range x {
			if s, ok := n.(string); ok && s != "null" {
				return s
			}
		}
	}
	return ""
}
