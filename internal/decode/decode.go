package decode

import (
	"bytes"
	"encoding"
	"encoding/json"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/otcgo/otc/internal/jsonparse"
	"github.com/otcgo/otc/internal/validate"
)

// This file prepares validated input for encoding/json, which decodes it
// into the tool function's input type. Two of that decoder's habits would
// let the function see something other than what was validated:
//
//   - it matches object keys to struct fields without regard to case, so
//     that, where a schema lets unknown keys through, {"A": 1} fills the
//     field "a" (and "ſ", U+017F, stands in for "s");
//   - it refuses a whole number written with a fraction or an exponent
//     (5.0, 1e3) for an integer field, though JSON Schema calls it an
//     integer and models send them.
//
// A plan of the input type, built at registration, finds both in one walk
// of the parsed input: members that match a field only by folding case
// are dropped, so that parameters reach the function under their exact
// names only, and whole numbers bound for integer fields are rewritten in
// integer form. Most inputs need neither, and are decoded as they came.

// Plan is what the input type expects at one position of the input.
// A nil plan has nothing to check.
type Plan struct {
	// fields maps a struct's JSON field names to the plans of their types
	// (nil when nothing inside needs checking); folded holds the names in
	// lower case, for ASCII keys, and names lists them all.
	fields map[string]*Plan
	folded map[string]bool
	names  []string
	// ascii is true when every name is ASCII, so that an ASCII key can
	// fold-match one only by ASCII case.
	ascii bool
	// elem is the plan of a slice's, array's or map's elements.
	elem *Plan
	// integer is true for an integer type.
	integer bool
	// duration is true for time.Duration, which the schema gives as a
	// string ("1h30m") and encoding/json reads as nanoseconds.
	duration bool
	// defaults are the defaults of a struct's optional fields (see
	// defaults.go), and defaultOf indexes them by name.
	defaults  []Default
	defaultOf map[string]int
}

// setDefaults puts the defaults of a struct's optional fields on its plan.
func (p *Plan) setDefaults(defaults []Default) {
	if len(defaults) == 0 {
		return
	}
	p.defaults = defaults
	p.defaultOf = make(map[string]int, len(defaults))
	for i, d := range defaults {
		p.defaultOf[d.name] = i
	}
}

var (
	jsonUnmarshaler = reflect.TypeFor[json.Unmarshaler]()
	textUnmarshaler = reflect.TypeFor[encoding.TextUnmarshaler]()
)

// NewPlan returns the plan of type t, or nil when t holds neither a
// struct nor an integer.
func NewPlan(t reflect.Type) *Plan {
	return buildPlan(t, map[reflect.Type]*Plan{})
}

func buildPlan(t reflect.Type, memo map[reflect.Type]*Plan) *Plan {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if p, ok := memo[t]; ok {
		return p
	}
	if t == durationType {
		return &Plan{duration: true}
	}
	if hasUnmarshaler(t) {
		return nil
	}
	switch t.Kind() {
	case reflect.Slice, reflect.Array, reflect.Map:
		memo[t] = nil // a recursive type's inner uses see no plan; set below
		elem := buildPlan(t.Elem(), memo)
		if elem == nil {
			return nil
		}
		p := &Plan{elem: elem}
		memo[t] = p
		return p
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return &Plan{integer: true}
	case reflect.Struct:
		p := &Plan{fields: map[string]*Plan{}, folded: map[string]bool{}, ascii: true}
		memo[t] = p
		for name, ft := range JSONFields(t) {
			p.fields[name] = buildPlan(ft, memo)
			p.folded[strings.ToLower(name)] = true
			p.names = append(p.names, name)
			if strings.ContainsFunc(name, func(r rune) bool { return r >= utf8.RuneSelf }) {
				p.ascii = false
			}
		}
		slices.Sort(p.names)
		return p
	}
	return nil
}

// JSONFields returns the JSON names encoding/json gives the fields of
// struct t, embedded structs' fields included, with each field's type.
// Where two fields share a name, the shallower wins, as in encoding/json;
// the plan errs on the side of listing a name, which can only make it drop
// a loosely matched key that the decoder would have ignored anyway.
func JSONFields(t reflect.Type) map[string]reflect.Type {
	out := map[string]reflect.Type{}
	depthOf := map[string]int{}
	var walk func(t reflect.Type, depth int, seen map[reflect.Type]bool)
	walk = func(t reflect.Type, depth int, seen map[reflect.Type]bool) {
		if seen[t] {
			return
		}
		seen[t] = true
		for f := range t.Fields() {
			tag := f.Tag.Get("json")
			if tag == "-" {
				continue
			}
			name := tagName(tag)
			ft := f.Type
			if f.Anonymous && name == "" {
				et := ft
				if et.Kind() == reflect.Pointer {
					et = et.Elem()
				}
				if et.Kind() == reflect.Struct {
					walk(et, depth+1, seen)
					continue
				}
			}
			if !f.IsExported() {
				continue
			}
			if name == "" {
				name = f.Name
			}
			if d, ok := depthOf[name]; !ok || depth < d {
				out[name], depthOf[name] = ft, depth
			}
		}
	}
	walk(t, 0, map[reflect.Type]bool{})
	return out
}

// Edits appends, for the subtree of node i, the changes the input needs
// before decoding, in the order of the text.
func (p *Plan) Edits(d *jsonparse.Document, i int32, out []Edit) []Edit {
	if p == nil {
		return out
	}
	switch n := &d.Nodes[i]; n.Kind {
	case jsonparse.KindNumber:
		if p.integer && n.Flags&(jsonparse.FlagFraction|jsonparse.FlagExponent) != 0 {
			out = appendEdit(out, Edit{start: n.Start, end: n.End, integral: true})
		}
	case jsonparse.KindString:
		if p.duration {
			out = appendEdit(out, Edit{start: n.Start, end: n.End, duration: true})
		}
	case jsonparse.KindObject:
		var given uint64 // the defaults whose member the object has
		for k, v := range d.Members(i) {
			if p.fields == nil { // a map
				out = p.elem.Edits(d, v, out)
				continue
			}
			var buf [64]byte
			name := d.StringBytes(k, buf[:0])
			if p.defaultOf != nil {
				if j, ok := p.defaultOf[string(name)]; ok {
					if j < 64 {
						given |= 1 << j
					}
					def := &p.defaults[j]
					if def.onNull && d.Nodes[v].Kind == jsonparse.KindNull {
						out = appendEdit(out, Edit{start: d.Nodes[v].Start, end: d.Nodes[v].End, more: &editMore{value: def.value}})
						continue
					}
				}
			}
			if fp, ok := p.fields[string(name)]; ok {
				out = fp.Edits(d, v, out)
			} else if p.foldMatch(name) {
				out = append(out, memberSpan(d, k))
			}
		}
		if p.defaults != nil {
			out = p.insertDefaults(d, i, given, out)
		}
	case jsonparse.KindArray:
		for _, e := range d.Elements(i) {
			out = p.elem.Edits(d, e, out)
		}
	}
	return out
}

// insertDefaults appends the edit that inserts, before the closing brace
// of object i, the defaults of the members it lacks; given marks those of
// the first 64 defaults it has.
func (p *Plan) insertDefaults(d *jsonparse.Document, i int32, given uint64, out []Edit) []Edit {
	end := d.Nodes[i].End - 1 // the '}'
	for lo := 0; lo < len(p.defaults); lo += 64 {
		chunk := p.defaults[lo:min(lo+64, len(p.defaults))]
		var absent uint64
		for j := range chunk {
			switch {
			case lo == 0 && given&(1<<j) != 0:
			case lo > 0 && d.Member(i, chunk[j].name) >= 0:
				// Beyond the first 64, looked up. A null there was
				// replaced above.
			default:
				absent |= 1 << j
			}
		}
		if absent != 0 {
			out = appendEdit(out, Edit{start: end, end: end, more: &editMore{defaults: chunk, absent: absent}})
		}
	}
	return out
}

// foldMatch reports whether name equals a field name once case is folded,
// as encoding/json compares them.
func (p *Plan) foldMatch(name []byte) bool {
	ascii := true
	for _, c := range name {
		if c >= utf8.RuneSelf {
			ascii = false
			break
		}
	}
	if ascii && p.ascii {
		// Between ASCII strings, folding is ASCII case: the other runes
		// that fold to ASCII letters, K (U+212A) and ſ (U+017F), are in
		// neither.
		var buf [64]byte
		return p.folded[string(bytes.ToLower(append(buf[:0], name...)))]
	}
	for _, f := range p.names {
		if bytes.EqualFold(name, []byte(f)) {
			return true
		}
	}
	return false
}

// Edit is a change to the input's text: data[start:end] is dropped, or,
// when integral, rewritten in integer form, or, when duration, rewritten
// in nanoseconds; or more says what replaces it. An input may need one
// Edit per number, so the common ones are kept small (24 bytes) and the
// rare ones carry their data behind a pointer.
type Edit struct {
	start, end int32
	integral   bool
	duration   bool // a duration string, rewritten in nanoseconds
	more       *editMore
}

// appendEdit appends e to out, doubling out's capacity when it is full:
// an input may need an edit per number, and append's growth of large
// slices by a quarter would copy the list five times over.
func appendEdit(out []Edit, e Edit) []Edit {
	if len(out) == cap(out) {
		grown := make([]Edit, len(out), max(16, 2*cap(out)))
		copy(grown, out)
		out = grown
	}
	return append(out, e)
}

// editMore is the data of a rarer edit: a default replacing a null
// (value), or the members of defaults whose bit is set in absent, inserted
// at start.
type editMore struct {
	value    []byte
	defaults []Default
	absent   uint64
}

// memberSpan returns the edit that drops the object member whose key is
// node k, with the comma that separates it from a neighbour.
func memberSpan(d *jsonparse.Document, k int32) Edit {
	start := d.Nodes[k].Start
	end := d.Nodes[k+1].End // the value follows its key
	before := start - 1
	for jsonparse.IsSpace(d.Data[before]) {
		before--
	}
	if d.Data[before] == ',' {
		start = before
	} else { // the first member: take the comma after it, if any
		after := end
		for jsonparse.IsSpace(d.Data[after]) {
			after++
		}
		if d.Data[after] == ',' {
			end = after + 1
		}
	}
	return Edit{start: start, end: end}
}

// appendMembers appends to out, the text of an object up to its closing
// brace, the members of defaults whose bit is set in absent, each
// preceded by a comma unless it is the object's first.
func appendMembers(out []byte, defaults []Default, absent uint64) []byte {
	last := len(out) - 1
	for last >= 0 && jsonparse.IsSpace(out[last]) {
		last--
	}
	first := last >= 0 && out[last] == '{'
	for j := range defaults {
		if absent&(1<<j) == 0 {
			continue
		}
		if !first {
			out = append(out, ',')
		}
		first = false
		out = append(out, defaults[j].member...)
	}
	return out
}

// ApplyEdits returns the text of node i with the edits, which are in text
// order, made. An edit that overlaps the one before (the comma two dropped
// neighbours share) is merged into it. A number that is not a whole
// number within 20 digits is left as it is, for the decoder to refuse.
func ApplyEdits(d *jsonparse.Document, i int32, edits []Edit) []byte {
	n := &d.Nodes[i]
	out := make([]byte, 0, n.End-n.Start)
	pos := n.Start
	for _, e := range edits {
		if e.start < pos {
			pos = max(pos, e.end)
			continue
		}
		out = append(out, d.Data[pos:e.start]...)
		pos = e.end
		switch {
		case e.integral:
			var buf [64]byte
			text, ok := validate.ParseDecimal(d.Data[e.start:e.end], buf[:0]).IntegerText(out)
			if !ok {
				text = append(out, d.Data[e.start:e.end]...)
			}
			out = text
		case e.more != nil && e.more.value != nil:
			out = append(out, e.more.value...)
		case e.more != nil:
			out = appendMembers(out, e.more.defaults, e.more.absent)
		case e.duration:
			var buf [64]byte
			dur, err := time.ParseDuration(string(jsonparse.Unescape(buf[:0], d.Data[e.start+1:e.end-1])))
			if err != nil { // out of range: left for the decoder to refuse
				out = append(out, d.Data[e.start:e.end]...)
			} else {
				out = strconv.AppendInt(out, int64(dur), 10)
			}
		}
	}
	return append(out, d.Data[pos:n.End]...)
}
