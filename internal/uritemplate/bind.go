package uritemplate

import (
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/otcgo/otc/internal/params"
)

// A template's variables become the input of a function, as a tool's
// arguments do: Check compares the template with the JSON Schema of that
// input at registration, and a Binder turns the variables a URI bound into a
// JSON object of the types the schema's properties have, which the
// registry then validates as any tool input.

// Check reports how the template and the input schema of the function
// it binds to disagree, naming both: a variable the schema has no
// property for, a property the schema requires that no variable gives or
// that the URI may leave out (a query variable, an optional expression),
// a property of a type no URI text reads as (an object), and a list
// property bound to a variable that is not exploded, or the other way.
func (t *Template) Check(ps params.List) error {
	var problems []string
	for _, name := range t.names {
		p, ok := ps.Get(name)
		if !ok {
			problems = append(problems, fmt.Sprintf("the variable %q has no property of that name in the input", name))
			continue
		}
		typ, list := p.Type, t.list(name)
		switch {
		case typ == "object":
			problems = append(problems, fmt.Sprintf("the variable %q binds to an object, which no URI text reads as: give the property a type of string, number, integer, boolean or array", name))
		case typ == "array" && !list:
			problems = append(problems, fmt.Sprintf("the variable %q binds to a list, but the template gives it one value: explode it (%s*)", name, name))
		case typ != "array" && typ != "" && list:
			problems = append(problems, fmt.Sprintf("the variable %q is exploded into a list (%s*), but its property is of type %s: make it an array", name, name, typ))
		}
	}
	for _, p := range ps {
		if !p.Required {
			continue
		}
		name := p.Name
		switch {
		case !slices.Contains(t.names, name):
			problems = append(problems, fmt.Sprintf("the input requires %q, which the template has no variable for", name))
		case t.optional(name):
			problems = append(problems, fmt.Sprintf("the input requires %q, which a URI may leave out (%s): make the property optional", name, t.exprOf(name)))
		}
	}
	if len(problems) > 0 {
		return fmt.Errorf("URI template %q and its input disagree: %s", t.raw, strings.Join(problems, "; "))
	}
	return nil
}

// list reports whether the variable name matches as a list: exploded by
// an operator whose values are a list (the wildcard "{path*}" is one
// string).
func (t *Template) list(name string) bool {
	for _, p := range t.parts {
		for _, v := range p.vars {
			if v.name == name && v.explode && p.op.char != 0 && p.op.char != '+' {
				return true
			}
		}
	}
	return false
}

// optional reports whether a URI that matches may leave name out: a
// query variable, or one of an expression with a leading operator, or
// not the first of a simple or reserved one.
func (t *Template) optional(name string) bool {
	p, i, ok := t.first(name)
	return ok && (p.op.first != "" || i > 0)
}

// exprOf is the expression that names name, as the template writes it.
func (t *Template) exprOf(name string) string {
	p, _, ok := t.first(name)
	if !ok {
		return ""
	}
	var b strings.Builder
	b.WriteByte('{')
	if p.op.char != 0 {
		b.WriteByte(p.op.char)
	}
	for i, w := range p.vars {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(w.name)
		if w.explode {
			b.WriteByte('*')
		}
	}
	b.WriteByte('}')
	return b.String()
}

// ParamError is a variable whose text is not of its property's type.
type ParamError struct {
	Name, Message string
}

func (e *ParamError) Error() string { return e.Name + ": " + e.Message }

// Binder turns the variables a URI bound into a JSON object for the
// function's input, for one input's parameters: each as its property's
// type says (a number, an integer, true or false, a list of them, else
// text), a variable of the wrong kind a *ParamError naming it. A variable
// the parameters do not name is left out (Check refuses such a
// template).
type Binder struct {
	props map[string]params.Param
}

// NewBinder returns the Binder of the parameters ps.
func NewBinder(ps params.List) *Binder {
	b := &Binder{props: make(map[string]params.Param, len(ps))}
	for _, p := range ps {
		b.props[p.Name] = p
	}
	return b
}

// Input is the object of vs. Its members come in the order of the
// variables' names.
func (b *Binder) Input(vs Values) (json.RawMessage, error) {
	names := make([]string, 0, len(vs))
	for name := range vs {
		if _, ok := b.props[name]; ok {
			names = append(names, name)
		}
	}
	slices.Sort(names)
	out := make([]byte, 0, 64)
	out = append(out, '{')
	for i, name := range names {
		p := b.props[name]
		typ, item := p.Type, p.ItemType
		var raw json.RawMessage
		var err error
		switch x := vs[name].(type) {
		case string:
			if typ == "array" {
				raw, err = list(name, strings.Split(x, ","), item)
			} else {
				raw, err = scalar(name, x, typ)
			}
		case []string:
			raw, err = list(name, x, item)
		default:
			continue
		}
		if err != nil {
			return nil, err
		}
		if i > 0 && out[len(out)-1] != '{' {
			out = append(out, ',')
		}
		key, _ := json.Marshal(name)
		out = append(out, key...)
		out = append(out, ':')
		out = append(out, raw...)
	}
	return append(out, '}'), nil
}

// scalar is one variable's text as the JSON of type typ.
func scalar(name, text, typ string) (json.RawMessage, error) {
	switch typ {
	case "integer":
		if _, err := strconv.ParseInt(text, 10, 64); err != nil {
			return nil, &ParamError{Name: name, Message: fmt.Sprintf("%q is not an integer", text)}
		}
		return json.RawMessage(text), nil
	case "number":
		f, err := strconv.ParseFloat(text, 64)
		if err != nil || strings.ContainsAny(text, "xXpP_") || strings.EqualFold(text, "nan") || strings.Contains(strings.ToLower(text), "inf") {
			return nil, &ParamError{Name: name, Message: fmt.Sprintf("%q is not a number", text)}
		}
		return json.Marshal(f)
	case "boolean":
		switch text {
		case "true":
			return json.RawMessage("true"), nil
		case "false":
			return json.RawMessage("false"), nil
		}
		return nil, &ParamError{Name: name, Message: fmt.Sprintf("%q is not true or false", text)}
	}
	return json.Marshal(text)
}

// list is a list variable's values as a JSON array of items of type item.
func list(name string, items []string, item string) (json.RawMessage, error) {
	out := make([]json.RawMessage, 0, len(items))
	for i, text := range items {
		raw, err := scalar(fmt.Sprintf("%s[%d]", name, i), text, item)
		if err != nil {
			return nil, err
		}
		out = append(out, raw)
	}
	return json.Marshal(out)
}
