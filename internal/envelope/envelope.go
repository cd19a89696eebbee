package envelope

import (
	"bytes"
	"fmt"
	"strconv"

	"github.com/otcgo/otc/internal/jsonparse"
	"github.com/otcgo/otc/internal/wire"
)

// Error is a malformed envelope: Message says what is wrong, for the
// client, and Developer how to send it right. Each wire format answers it
// in its own shape (a 400 over OTC, request.invalid_shape over REST).
type Error struct {
	Message   string
	Developer string
}

func (e *Error) Error() string {
	if e.Developer == "" {
		return e.Message
	}
	return e.Message + ": " + e.Developer
}

// malformed builds the Error of a malformed envelope.
func malformed(message, developer string) *Error {
	return &Error{Message: message, Developer: developer}
}

// Field is one member an envelope object may hold: its name, and the node
// of its value once read (-1 while absent).
type Field struct {
	Name string
	Node int32
}

// ReadFields reads object node i of d into fields. A name given twice is
// refused. A name not among fields is refused when strict, with accepted
// describing what is, and ignored otherwise. path names the object in
// messages ("" for the top level).
func ReadFields(d *jsonparse.Document, i int32, path string, fields []Field, strict bool, accepted string) error {
	if d.Nodes[i].Flags&jsonparse.FlagRepeated != 0 {
		return malformed(fmt.Sprintf("Field %s is given more than once", strconv.Quote(wire.Truncate(JoinPath(path, d.RepeatedName(i)), 80))),
			"each field may appear once: a body that repeats a field means different things to different parsers")
	}
	for j := range fields {
		fields[j].Node = -1
	}
	for k, v := range d.Members(i) {
		j := 0
		for j < len(fields) && !d.StringIs(k, fields[j].Name) {
			j++
		}
		if j < len(fields) {
			fields[j].Node = v
			continue
		}
		if strict {
			return malformed("Unknown field "+strconv.Quote(wire.Truncate(JoinPath(path, d.StringValue(k)), 80)), accepted)
		}
	}
	return nil
}

// WrongShape is the error for a field of the wrong JSON type.
func WrongShape(d *jsonparse.Document, i int32, path, want, shape string) *Error {
	return malformed(fmt.Sprintf("The request body has the wrong shape: %s must be %s, not %s", wire.Truncate(path, 80), want, d.KindName(i)), shape)
}

// OptString reads an optional string field: absent (-1) and null read as
// "".
func OptString(d *jsonparse.Document, i int32, path, shape string) (string, error) {
	if i < 0 {
		return "", nil
	}
	switch d.Kind(i) {
	case jsonparse.KindNull:
		return "", nil
	case jsonparse.KindString:
		return d.StringValue(i), nil
	}
	return "", WrongShape(d, i, path, "a string", shape)
}

// OptObject checks that an optional field is an object, or absent or
// null, and reports whether it is an object.
func OptObject(d *jsonparse.Document, i int32, path, shape string) (bool, error) {
	if i < 0 || d.Kind(i) == jsonparse.KindNull {
		return false, nil
	}
	if d.Kind(i) != jsonparse.KindObject {
		return false, WrongShape(d, i, path, "an object", shape)
	}
	return true, nil
}

// MaxInputResponses bounds the answers a call context's input_responses
// may hold: twice the questions a call may have open.
const MaxInputResponses = 64

// ContextShape describes the call context for messages.
const ContextShape = `context is {"user_id": string, "secrets": [{"id": string, "value": string}], "authorization": [{"id": string, "token": string}]}`

// inputResponsesShape describes the answers of a call context for messages.
const inputResponsesShape = `context.input_responses maps the key of each question a tool asked to its answer, an object: {"confirm": {"action": "accept", "content": {...}}}`

// ReadContext reads a call context object (node i, named path): it
// returns the user id, and hands each authorization token and each secret
// to addToken and addSecret. Fields it does not know are ignored, in the
// context and in its entries, so that clients may send more than this
// server reads; names are still exact and unrepeated, and a secret or
// provider listed twice is refused, since which of its values the tool
// would get is a guess.
//
// input_responses, an object of objects, is handed entry by entry to
// addResponse, with a copy of the entry's text.
func ReadContext(d *jsonparse.Document, i int32, path string, addToken, addSecret func(id, value string), addResponse func(key string, raw []byte)) (userID string, err error) {
	fs := []Field{{Name: "authorization"}, {Name: "secrets"}, {Name: "user_id"}, {Name: "input_responses"}}
	if err := ReadFields(d, i, path, fs, false, ""); err != nil {
		return "", err
	}
	if n := fs[3].Node; n >= 0 && d.Kind(n) != jsonparse.KindNull {
		p := path + ".input_responses"
		if d.Kind(n) != jsonparse.KindObject {
			return "", WrongShape(d, n, p, "an object", inputResponsesShape)
		}
		if d.Nodes[n].Flags&jsonparse.FlagRepeated != 0 {
			return "", malformed(fmt.Sprintf("%s names %s more than once", p, strconv.Quote(wire.Truncate(d.RepeatedName(n), 80))),
				"send each answer once, so that the tool's answer is not a guess")
		}
		if c := d.Nodes[n].Count; c > MaxInputResponses {
			return "", malformed(fmt.Sprintf("%s holds %d answers, more than the %d a call may carry", p, c, MaxInputResponses),
				"send the answers to the questions the tool asked, no more")
		}
		for k, v := range d.Members(n) {
			key := d.StringValue(k)
			if d.Kind(v) != jsonparse.KindObject {
				return "", WrongShape(d, v, p+"."+wire.Truncate(key, 80), "an object (the answer, as MCP's result of the question's method)", inputResponsesShape)
			}
			addResponse(key, bytes.Clone(d.Raw(v)))
		}
	}
	if userID, err = OptString(d, fs[2].Node, path+".user_id", ContextShape); err != nil {
		return "", err
	}
	entries := func(f Field, valueName string, add func(id, value string)) error {
		p := path + "." + f.Name
		if f.Node < 0 || d.Kind(f.Node) == jsonparse.KindNull {
			return nil
		}
		if d.Kind(f.Node) != jsonparse.KindArray {
			return WrongShape(d, f.Node, p, "an array", ContextShape)
		}
		seen := map[string]bool{}
		for j, e := range d.Elements(f.Node) {
			ep := p + "." + strconv.Itoa(j)
			if d.Kind(e) != jsonparse.KindObject {
				return WrongShape(d, e, ep, "an object", ContextShape)
			}
			es := []Field{{Name: "id"}, {Name: valueName}}
			if err := ReadFields(d, e, ep, es, false, ""); err != nil {
				return err
			}
			id, err := OptString(d, es[0].Node, ep+".id", ContextShape)
			if err != nil {
				return err
			}
			value, err := OptString(d, es[1].Node, ep+"."+valueName, ContextShape)
			if err != nil {
				return err
			}
			if seen[id] {
				return malformed(fmt.Sprintf("%s lists %s more than once", p, strconv.Quote(wire.Truncate(id, 80))),
					"send each id once, so that the tool's value is not a guess")
			}
			seen[id] = true
			add(id, value)
		}
		return nil
	}
	if err := entries(fs[0], "token", addToken); err != nil {
		return "", err
	}
	return userID, entries(fs[1], "value", addSecret)
}

// BodyError turns a body that cannot be parsed into the error to answer.
// emptyHint shows what a body should look like.
func BodyError(body []byte, err error, emptyHint string) *Error {
	trimmed := 0
	for trimmed < len(body) && jsonparse.IsSpace(body[trimmed]) {
		trimmed++
	}
	if trimmed == len(body) {
		return malformed("The request body is empty", emptyHint)
	}
	if se, ok := err.(*jsonparse.SyntaxError); ok && se.UTF8 {
		return malformed("The request body is not valid UTF-8", "JSON text must be encoded as UTF-8 (RFC 8259)")
	}
	return malformed("The request body is not valid JSON", err.Error())
}

// JoinPath names a field under its parent for messages: "request.context".
func JoinPath(parent, name string) string {
	if parent == "" {
		return name
	}
	return parent + "." + name
}
