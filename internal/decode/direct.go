package decode

import (
	"bytes"
	"encoding/json"
	"math"
	"reflect"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/otcgo/otc/internal/jsonparse"
)

// This file decodes the commonest input type, a struct of numbers,
// strings and booleans (or pointers to them), straight from the validated
// input, without encoding/json. It handles only what it can decode exactly
// as encoding/json would, and reports anything else (a string with
// escapes, a number out of its field's range, a value of another type) by
// returning false, so that the caller decodes the input with
// encoding/json, whose result and errors stay the reference.
//
// The input it reads has been validated and prepared by the decode plan
// (decode.go): it is one JSON object, members that match a field only by
// folding case are gone, and whole numbers for integer fields are in
// integer form.

// Direct sets the fields of one struct type.
type Direct struct {
	fields []directField
	// index finds a field by name when there are too many to compare in
	// turn: an input of many unknown keys must not cost keys × fields.
	index map[string]int
}

// directIndexAbove is the number of fields past which a decoder looks
// names up in a map.
const directIndexAbove = 8

// directField is one field: its JSON name, its index in the struct, and
// its kind (that of the pointed-to type for a pointer).
type directField struct {
	name  string
	index int
	kind  reflect.Kind
	elem  reflect.Type // the pointed-to type, for a pointer; nil otherwise
}

// NewDirect returns the decoder of t, or nil when t is not a
// struct whose exported fields are all booleans, numbers or strings, or
// pointers to them, under names of their own: embedded structs, the
// ",string" option, custom unmarshalers, and any other type are left to
// encoding/json.
func NewDirect(t reflect.Type) *Direct {
	if t.Kind() != reflect.Struct || hasUnmarshaler(t) {
		return nil
	}
	d := &Direct{}
	seen := map[string]bool{}
	for f := range t.Fields() {
		if f.Anonymous {
			return nil
		}
		tag := f.Tag.Get("json")
		if !f.IsExported() || tag == "-" {
			continue
		}
		name, opts, _ := strings.Cut(tag, ",")
		for opt := range strings.SplitSeq(opts, ",") {
			if opt != "" && opt != "omitempty" && opt != "omitzero" {
				return nil // ",string", or an option encoding/json may come to read
			}
		}
		if name == "" {
			name = f.Name
		}
		if !plainFieldName(name) || seen[name] {
			return nil
		}
		seen[name] = true
		ft, elem := f.Type, reflect.Type(nil)
		if ft.Kind() == reflect.Pointer {
			elem = ft.Elem()
			ft = elem
		}
		if hasUnmarshaler(ft) || !directKind(ft.Kind()) {
			return nil
		}
		d.fields = append(d.fields, directField{name: name, index: f.Index[0], kind: ft.Kind(), elem: elem})
	}
	if len(d.fields) > directIndexAbove {
		d.index = make(map[string]int, len(d.fields))
		for j, f := range d.fields {
			d.index[f.name] = j
		}
	}
	return d
}

// hasUnmarshaler reports whether t, or a pointer to it, decodes itself
// from JSON or from text.
func hasUnmarshaler(t reflect.Type) bool {
	return t.Implements(jsonUnmarshaler) || reflect.PointerTo(t).Implements(jsonUnmarshaler) ||
		t.Implements(textUnmarshaler) || reflect.PointerTo(t).Implements(textUnmarshaler)
}

func directKind(k reflect.Kind) bool {
	switch k {
	case reflect.Bool, reflect.String, reflect.Float32, reflect.Float64,
		reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return true
	}
	return false
}

// plainFieldName reports whether encoding/json takes name, from a tag, as
// it is: letters, digits and a few punctuation marks. (It replaces other
// tag names by the Go field's name, which this decoder does not follow.)
func plainFieldName(name string) bool {
	if name == "" {
		return false
	}
	for _, c := range name {
		switch {
		case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c >= '0' && c <= '9', c == '_', c == '-', c == '.':
		default:
			return false
		}
	}
	return true
}

// decode sets the fields of v, an addressable value of the decoder's
// struct type, from data, and reports whether it could. On false, v may
// have been partly set.
func (d *Direct) decode(data []byte, v reflect.Value) bool {
	i := skipSpace(data, 0)
	if i >= len(data) || data[i] != '{' {
		return false
	}
	i++
	for {
		i = skipSpace(data, i)
		if i >= len(data) {
			return false
		}
		switch data[i] {
		case '}':
			return true
		case ',':
			i++
			continue
		case '"':
		default:
			return false
		}
		end := i + 1
		for end < len(data) && data[end] != '"' {
			if data[end] == '\\' {
				return false
			}
			end++
		}
		key := data[i+1 : min(end, len(data))]
		i = skipSpace(data, end+1)
		if i >= len(data) || data[i] != ':' {
			return false
		}
		i = skipSpace(data, i+1)
		start := i
		if i = skipValue(data, i); i < 0 {
			return false
		}
		f := d.field(key)
		if f == nil {
			continue // encoding/json ignores it too
		}
		if !f.set(v.Field(f.index), data[start:i]) {
			return false
		}
	}
}

func (d *Direct) field(key []byte) *directField {
	if d.index != nil {
		if j, ok := d.index[string(key)]; ok {
			return &d.fields[j]
		}
		return nil
	}
	for j := range d.fields {
		if d.fields[j].name == string(key) {
			return &d.fields[j]
		}
	}
	return nil
}

// set decodes val into fv, the field's value.
func (f *directField) set(fv reflect.Value, val []byte) bool {
	if string(val) == "null" {
		if f.elem != nil {
			fv.SetZero()
		}
		return true // encoding/json leaves other fields as they are
	}
	if f.elem != nil {
		p := reflect.New(f.elem)
		if !setScalar(p.Elem(), f.kind, val) {
			return false
		}
		fv.Set(p)
		return true
	}
	return setScalar(fv, f.kind, val)
}

func setScalar(fv reflect.Value, kind reflect.Kind, val []byte) bool {
	switch kind {
	case reflect.Bool:
		switch string(val) {
		case "true":
			fv.SetBool(true)
		case "false":
			fv.SetBool(false)
		default:
			return false
		}
	case reflect.String:
		if len(val) < 2 || val[0] != '"' {
			return false
		}
		s := val[1 : len(val)-1]
		for _, c := range s {
			if c == '\\' {
				return false
			}
		}
		if !utf8.Valid(s) { // encoding/json would replace the bad bytes
			return false
		}
		fv.SetString(string(s))
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		n, ok := parseInt(val)
		if !ok || fv.OverflowInt(n) {
			return false
		}
		fv.SetInt(n)
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		// encoding/json reads unsigned fields with strconv.ParseUint,
		// which refuses any sign, "-0" included.
		n, ok := parseInt(val)
		if !ok || n < 0 || val[0] == '-' || fv.OverflowUint(uint64(n)) {
			return false
		}
		fv.SetUint(uint64(n))
	case reflect.Float64:
		x, ok := parseFloat(val)
		if !ok {
			return false
		}
		fv.SetFloat(x)
	case reflect.Float32:
		if len(val) == 0 || val[0] != '-' && (val[0] < '0' || val[0] > '9') {
			return false
		}
		x, err := strconv.ParseFloat(string(val), 32)
		if err != nil {
			return false
		}
		fv.SetFloat(x)
	default:
		return false
	}
	return true
}

// parseInt reads a JSON integer of at most 18 digits, which cannot
// overflow an int64.
func parseInt(val []byte) (int64, bool) {
	neg := len(val) > 0 && val[0] == '-'
	digits := val
	if neg {
		digits = val[1:]
	}
	if len(digits) == 0 || len(digits) > 18 {
		return 0, false
	}
	var n int64
	for _, c := range digits {
		if c < '0' || c > '9' {
			return 0, false
		}
		n = n*10 + int64(c-'0')
	}
	if neg {
		n = -n
	}
	return n, true
}

// parseFloat reads a JSON number as a float64, as strconv.ParseFloat
// does: an integer of up to 15 digits exactly, by itself, anything else
// through strconv.
func parseFloat(val []byte) (float64, bool) {
	if n, ok := parseInt(val); ok && len(val) <= 16 {
		if n == 0 && val[0] == '-' {
			return math.Copysign(0, -1), true
		}
		if len(val) <= 15 || val[0] == '-' {
			return float64(n), true
		}
	}
	if len(val) == 0 || val[0] != '-' && (val[0] < '0' || val[0] > '9') {
		return 0, false
	}
	x, err := strconv.ParseFloat(string(val), 64)
	return x, err == nil
}

func skipSpace(data []byte, i int) int {
	for i < len(data) && jsonparse.IsSpace(data[i]) {
		i++
	}
	return i
}

// skipValue returns the index just past the value that starts at i in
// valid JSON, or -1 if the data ends first.
func skipValue(data []byte, i int) int {
	if i >= len(data) {
		return -1
	}
	switch data[i] {
	case '"':
		for i++; i < len(data); i++ {
			switch data[i] {
			case '\\':
				i++
			case '"':
				return i + 1
			}
		}
		return -1
	case '{', '[':
		depth := 0
		for ; i < len(data); i++ {
			switch data[i] {
			case '"':
				j := skipValue(data, i)
				if j < 0 {
					return -1
				}
				i = j - 1
			case '{', '[':
				depth++
			case '}', ']':
				if depth--; depth == 0 {
					return i + 1
				}
			}
		}
		return -1
	default:
		for ; i < len(data); i++ {
			switch data[i] {
			case ',', '}', ']', ' ', '\t', '\n', '\r':
				return i
			}
		}
		return i
	}
}

// Input decodes input into a new In: a json.RawMessage as a copy of the
// text, a struct directly when dd is not nil and can, anything else with
// encoding/json.
func Input[In any](dd *Direct, input []byte) (In, error) {
	var in In
	if raw, ok := any(&in).(*json.RawMessage); ok && jsonparse.Valid(input) {
		// Raw input (another server's tool's, say) is the text itself:
		// its own copy, as json.Unmarshal makes, without a second scan.
		*raw = bytes.Clone(bytes.TrimSpace(input))
		return in, nil
	}
	if dd != nil {
		if dd.decode(input, reflect.ValueOf(&in).Elem()) {
			return in, nil
		}
		var zero In
		in = zero
	}
	err := json.Unmarshal(input, &in)
	return in, err
}
