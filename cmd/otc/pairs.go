package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
)

// This file reads a call's input from key=value pairs.

// maxPairIndex bounds an array index in a key (items.9999.sku): the
// command builds the array up to it.
const maxPairIndex = 9999

// pairs builds the input from key=value pairs, each value read as the
// tool's schema says: a number for a number, true or false for a boolean,
// JSON for an object or array, and a string otherwise. A key is a
// parameter's name or a dotted path into it: to.city=Paris sets the field
// city of the object to, items.0.sku=a the field sku of the first element
// of the array items.
func (e *cli) pairs(ctx context.Context, srv server, tool string, pairs []string) (json.RawMessage, int) {
	d, ok, err := srv.describe(ctx, tool)
	if err != nil {
		return nil, e.fail("call", err)
	}
	if !ok {
		fmt.Fprintf(e.stderr, "otc call: the server has no tool %q\n", tool)
		return nil, exitRefused
	}
	var schema map[string]any
	_ = json.Unmarshal(d.InputSchema.Parameters, &schema)
	root := &pairObject{fields: map[string]any{}}
	for _, p := range pairs {
		k, v, ok := strings.Cut(p, "=")
		if !ok || k == "" {
			fmt.Fprintf(e.stderr, "otc call: %q is not key=value\n", p)
			return nil, exitBadInput
		}
		path, prop, known := resolvePair(schema, k)
		if !known {
			fmt.Fprintf(e.stderr, "otc call: %s has no parameter %q; \"otc tools URL %s\" shows them\n", d.ID, k, tool)
			return nil, exitBadInput
		}
		val, err := coerce(typeText(prop), v)
		if err == nil {
			err = root.put(path, val, "")
		}
		if err != nil {
			fmt.Fprintf(e.stderr, "otc call: %s: %v\n", k, err)
			return nil, exitBadInput
		}
	}
	value, err := root.value("")
	if err != nil {
		fmt.Fprintf(e.stderr, "otc call: %v\n", err)
		return nil, exitBadInput
	}
	b, _ := json.Marshal(value)
	return b, exitOK
}

// resolvePair finds the parameter a key names in the input schema: a
// property of that name, else the dotted path through nested objects'
// properties and arrays' items (an index for an array). It returns the
// path and the schema of the value it sets.
func resolvePair(schema map[string]any, key string) (path []string, prop map[string]any, ok bool) {
	if p, ok := propertyOf(schema, key); ok {
		return []string{key}, p, true
	}
	cur := schema
	path = strings.Split(key, ".")
	for _, seg := range path {
		if p, ok := propertyOf(cur, seg); ok {
			cur = p
			continue
		}
		items, isArray := itemsOf(cur)
		if n, err := strconv.Atoi(seg); err == nil && isArray && n >= 0 && seg == strconv.Itoa(n) {
			cur = items
			continue
		}
		return nil, nil, false
	}
	return path, cur, true
}

// propertyOf returns the schema of the property name of an object schema
// (or of an object branch of its anyOf).
func propertyOf(s map[string]any, name string) (map[string]any, bool) {
	if props, ok := s["properties"].(map[string]any); ok {
		if p, ok := props[name].(map[string]any); ok {
			return p, true
		}
	}
	for _, b := range anyList(s["anyOf"]) {
		if bm, ok := b.(map[string]any); ok {
			if p, ok := propertyOf(bm, name); ok {
				return p, true
			}
		}
	}
	return nil, false
}

// itemsOf returns the schema of the items of an array schema (or of an
// array branch of its anyOf); an array without one holds anything.
func itemsOf(s map[string]any) (map[string]any, bool) {
	if t, _ := s["type"].(string); t == "array" {
		items, _ := s["items"].(map[string]any)
		if items == nil {
			items = map[string]any{}
		}
		return items, true
	}
	for _, b := range anyList(s["anyOf"]) {
		if bm, ok := b.(map[string]any); ok {
			if items, ok := itemsOf(bm); ok {
				return items, true
			}
		}
	}
	return nil, false
}

// pairObject and pairArray are the objects and arrays that dotted keys
// build; their leaves are the values, as JSON.
type (
	pairObject struct{ fields map[string]any }
	pairArray  struct{ elems []any }
)

var errTwice = errors.New("given more than once")

// put sets the value at path below o; at is o's own path, for messages.
func (o *pairObject) put(path []string, val json.RawMessage, at string) error {
	name, rest := path[0], path[1:]
	here := join(at, name)
	old, exists := o.fields[name]
	if len(rest) == 0 {
		if exists {
			return fmt.Errorf("%s is %v", here, errTwice)
		}
		o.fields[name] = val
		return nil
	}
	child, err := container(old, exists, rest[0], here)
	if err != nil {
		return err
	}
	o.fields[name] = child
	return putIn(child, rest, val, here)
}

// put sets the value at path below a, whose first element is an index.
func (a *pairArray) put(path []string, val json.RawMessage, at string) error {
	i, err := strconv.Atoi(path[0])
	if err != nil || i < 0 {
		return fmt.Errorf("%s: %q is not an index", at, path[0])
	}
	if i > maxPairIndex {
		return fmt.Errorf("%s: index %d is past %d, the largest the command builds", at, i, maxPairIndex)
	}
	for len(a.elems) <= i {
		a.elems = append(a.elems, nil)
	}
	here := join(at, path[0])
	old := a.elems[i]
	if len(path) == 1 {
		if old != nil {
			return fmt.Errorf("%s is %v", here, errTwice)
		}
		a.elems[i] = val
		return nil
	}
	child, err := container(old, old != nil, path[1], here)
	if err != nil {
		return err
	}
	a.elems[i] = child
	return putIn(child, path[1:], val, here)
}

// container returns the object or array at here that holds a key whose
// next segment is next: the one there already, or a new one (an array
// when next is an index).
func container(old any, exists bool, next, here string) (any, error) {
	if !exists {
		if _, err := strconv.Atoi(next); err == nil {
			return &pairArray{}, nil
		}
		return &pairObject{fields: map[string]any{}}, nil
	}
	switch old.(type) {
	case *pairObject, *pairArray:
		return old, nil
	}
	return nil, fmt.Errorf("%s is given whole and in parts: give one or the other", here)
}

func putIn(c any, path []string, val json.RawMessage, at string) error {
	if o, ok := c.(*pairObject); ok {
		return o.put(path, val, at)
	}
	return c.(*pairArray).put(path, val, at)
}

// value returns what o holds, for encoding: an array given by indexes
// must have every index from 0 to its last.
func (o *pairObject) value(at string) (any, error) {
	out := make(map[string]any, len(o.fields))
	for k, v := range o.fields {
		var err error
		if out[k], err = valueOf(v, join(at, k)); err != nil {
			return nil, err
		}
	}
	return out, nil
}

func valueOf(v any, at string) (any, error) {
	switch v := v.(type) {
	case *pairObject:
		return v.value(at)
	case *pairArray:
		out := make([]any, len(v.elems))
		for i, e := range v.elems {
			here := join(at, strconv.Itoa(i))
			if e == nil {
				return nil, fmt.Errorf("%s is missing: an array's elements are given from index 0, without gaps", here)
			}
			var err error
			if out[i], err = valueOf(e, here); err != nil {
				return nil, err
			}
		}
		return out, nil
	}
	return v, nil
}

func join(at, name string) string {
	if at == "" {
		return name
	}
	return at + "." + name
}

// coerce reads a command-line value as a schema's type names it.
func coerce(typ, v string) (json.RawMessage, error) {
	first, _, _ := strings.Cut(typ, " or ")
	first, _, _ = strings.Cut(first, " ") // "array of string" is an array
	switch first {
	case "integer":
		if _, err := strconv.ParseInt(v, 10, 64); err != nil {
			return nil, fmt.Errorf("%q is not an integer", v)
		}
		return json.RawMessage(v), nil
	case "number":
		if _, err := strconv.ParseFloat(v, 64); err != nil {
			return nil, fmt.Errorf("%q is not a number", v)
		}
		return json.RawMessage(v), nil
	case "boolean":
		b, err := strconv.ParseBool(v)
		if err != nil {
			return nil, fmt.Errorf("%q is not true or false", v)
		}
		return json.RawMessage(strconv.FormatBool(b)), nil
	case "object", "array", "any":
		if json.Valid([]byte(v)) {
			return json.RawMessage(v), nil
		}
		if first != "any" {
			return nil, fmt.Errorf("%q is not JSON (an %s)", v, first)
		}
	}
	b, _ := json.Marshal(v)
	return b, nil
}
