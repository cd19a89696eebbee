package otc

import (
	"fmt"
	"strconv"

	"github.com/otcgo/otc/internal/jsonparse"
	"github.com/otcgo/otc/internal/wire"
)

// This file reads the request envelopes of the wire formats from a parsed
// body (parse.go). Every field name is matched exactly and may appear only
// once, at every level: a body that says {"tool_id": "A", "TOOL_ID": "B"}
// means A to a case-sensitive gateway and, to a decoder that folds case and
// keeps the last value, B. Here it is refused, naming the field.

// field is one member an envelope object may hold: its name, and the node
// of its value once read (-1 while absent).
type field struct {
	name string
	node int32
}

// readFields reads object node i of d into fields. A name given twice is
// refused. A name not among fields is refused when strict, with accepted
// describing what is, and ignored otherwise. path names the object in
// messages ("" for the top level).
func readFields(d *jsonparse.Document, i int32, path string, fields []field, strict bool, accepted string) error {
	if d.Nodes[i].Flags&jsonparse.FlagRepeated != 0 {
		return serverError(fmt.Sprintf("Field %s is given more than once", strconv.Quote(wire.Truncate(joinPath(path, d.RepeatedName(i)), 80))),
			"each field may appear once: a body that repeats a field means different things to different parsers")
	}
	for j := range fields {
		fields[j].node = -1
	}
	for k, v := range d.Members(i) {
		j := 0
		for j < len(fields) && !d.StringIs(k, fields[j].name) {
			j++
		}
		if j < len(fields) {
			fields[j].node = v
			continue
		}
		if strict {
			return serverError("Unknown field "+strconv.Quote(wire.Truncate(joinPath(path, d.StringValue(k)), 80)), accepted)
		}
	}
	return nil
}

// wrongShape is the error for a field of the wrong JSON type.
func wrongShape(d *jsonparse.Document, i int32, path, want, shape string) *Error {
	return serverError(fmt.Sprintf("The request body has the wrong shape: %s must be %s, not %s", wire.Truncate(path, 80), want, d.KindName(i)), shape)
}

// optString reads an optional string field: absent (-1) and null read as
// "".
func optString(d *jsonparse.Document, i int32, path, shape string) (string, error) {
	if i < 0 {
		return "", nil
	}
	switch d.Kind(i) {
	case jsonparse.KindNull:
		return "", nil
	case jsonparse.KindString:
		return d.StringValue(i), nil
	}
	return "", wrongShape(d, i, path, "a string", shape)
}

// optObject checks that an optional field is an object, or absent or
// null, and reports whether it is an object.
func optObject(d *jsonparse.Document, i int32, path, shape string) (bool, error) {
	if i < 0 || d.Kind(i) == jsonparse.KindNull {
		return false, nil
	}
	if d.Kind(i) != jsonparse.KindObject {
		return false, wrongShape(d, i, path, "an object", shape)
	}
	return true, nil
}

// contextShape describes the call context for messages.
const contextShape = `context is {"user_id": string, "secrets": [{"id": string, "value": string}], "authorization": [{"id": string, "token": string}]}`

// readCallContext reads a call context object (node i, named path) into
// out. Fields it does not know are ignored, in the context and in its
// entries, so that clients may send more than this server reads; names
// are still exact and unrepeated, and a secret or provider listed twice
// is refused, since which of its values the tool would get is a guess.
func readCallContext(d *jsonparse.Document, i int32, path string, out *CallContext) error {
	fs := []field{{name: "authorization"}, {name: "secrets"}, {name: "user_id"}}
	if err := readFields(d, i, path, fs, false, ""); err != nil {
		return err
	}
	var err error
	if out.UserID, err = optString(d, fs[2].node, path+".user_id", contextShape); err != nil {
		return err
	}
	entries := func(f field, valueName string, add func(id, value string)) error {
		p := path + "." + f.name
		if f.node < 0 || d.Kind(f.node) == jsonparse.KindNull {
			return nil
		}
		if d.Kind(f.node) != jsonparse.KindArray {
			return wrongShape(d, f.node, p, "an array", contextShape)
		}
		seen := map[string]bool{}
		for j, e := range d.Elements(f.node) {
			ep := p + "." + strconv.Itoa(j)
			if d.Kind(e) != jsonparse.KindObject {
				return wrongShape(d, e, ep, "an object", contextShape)
			}
			es := []field{{name: "id"}, {name: valueName}}
			if err := readFields(d, e, ep, es, false, ""); err != nil {
				return err
			}
			id, err := optString(d, es[0].node, ep+".id", contextShape)
			if err != nil {
				return err
			}
			value, err := optString(d, es[1].node, ep+"."+valueName, contextShape)
			if err != nil {
				return err
			}
			if seen[id] {
				return serverError(fmt.Sprintf("%s lists %s more than once", p, strconv.Quote(wire.Truncate(id, 80))),
					"send each id once, so that the tool's value is not a guess")
			}
			seen[id] = true
			add(id, value)
		}
		return nil
	}
	if err := entries(fs[0], "token", func(id, v string) {
		out.Authorization = append(out.Authorization, ToolAuthorization{ID: id, Token: v})
	}); err != nil {
		return err
	}
	return entries(fs[1], "value", func(id, v string) {
		out.Secrets = append(out.Secrets, ToolSecret{ID: id, Value: v})
	})
}

// bodyError turns a body that cannot be parsed into the error to answer.
// emptyHint shows what a body should look like.
func bodyError(body []byte, err error, emptyHint string) *Error {
	trimmed := 0
	for trimmed < len(body) && jsonparse.IsSpace(body[trimmed]) {
		trimmed++
	}
	if trimmed == len(body) {
		return serverError("The request body is empty", emptyHint)
	}
	if se, ok := err.(*jsonparse.SyntaxError); ok && se.UTF8 {
		return serverError("The request body is not valid UTF-8", "JSON text must be encoded as UTF-8 (RFC 8259)")
	}
	return serverError("The request body is not valid JSON", err.Error())
}
