package validate

import (
	"bytes"
	"encoding/json"
	"fmt"
	"maps"
	"math"
	"math/big"
	"math/bits"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/otcgo/otc/internal/jsonparse"
	"github.com/otcgo/otc/internal/wire"
	"github.com/xeipuuv/gojsonschema"
)

// MaxErrors caps the entries of parameter_errors. Validation
// stops once it has this many, so an input with thousands of mistakes
// neither produces an answer as large as the request nor costs more to
// check than to parse.
const MaxErrors = 32

// MaxEchoedKey caps how much of a parameter name taken from the input is
// echoed back in parameter_errors.
const MaxEchoedKey = 128

// RootKey is the parameter_errors key for a failure of the input object as
// a whole, such as a minProperties rule in a hand-written schema. It is in
// parentheses so that it cannot be confused with a parameter name.
const RootKey = "(input)"

// TypeMask is a set of JSON Schema types.
type TypeMask uint8

const (
	typeNull TypeMask = 1 << iota
	typeBoolean
	typeInteger
	typeNumber // any number, integers included
	typeString
	typeArray
	typeObject
)

var typeByName = map[string]TypeMask{
	"null": typeNull, "boolean": typeBoolean, "integer": typeInteger, "number": typeNumber,
	"string": typeString, "array": typeArray, "object": typeObject,
}

// names writes the mask for a message: "a string or null".
func (m TypeMask) names() string {
	var parts []string
	for _, t := range []struct {
		bit  TypeMask
		name string
	}{
		{typeString, "a string"}, {typeNumber, "a number"}, {typeInteger, "an integer"},
		{typeBoolean, "a boolean"}, {typeObject, "an object"}, {typeArray, "an array"}, {typeNull, "null"},
	} {
		if m&t.bit != 0 && !(t.bit == typeInteger && m&typeNumber != 0) {
			parts = append(parts, t.name)
		}
	}
	return strings.Join(parts, " or ")
}

// Schema is one compiled schema. Unset limits are -1; nil fields are
// absent keywords.
type Schema struct {
	never    bool     // the schema false
	types    TypeMask // zero: any type
	typeText string   // the message for a value of another type

	enum     map[string]bool // canonical forms of the allowed values
	enumText string
	hasConst bool
	constVal string
	constMsg string

	allOf, anyOf, oneOf []*Schema
	not                 *Schema
	ifS, thenS, elseS   *Schema

	numeric                                              bool // any number keyword is set
	minimum, maximum, exclusiveMinimum, exclusiveMaximum *bound
	multipleOf                                           *bound

	stringy              bool // any string keyword is set
	minLength, maxLength int
	pattern              *pattern
	format               *formatRule
	encoding             *formatRule // contentEncoding base64

	prefix                   []*Schema // tuple positions
	items                    *Schema   // elements after the prefix
	minItems, maxItems       int
	uniqueItems              bool
	contains                 *Schema
	minContains, maxContains int

	objecty       bool // any object keyword is set
	properties    map[string]*Schema
	required      []string
	requiredIndex map[string]int
	additional    *Schema // nil: any other property is accepted
	patternProps  []patternProperty
	propertyNames *Schema
	minProps      int
	maxProps      int
	depRequired   map[string][]string
	depSchemas    map[string]*Schema
}

type patternProperty struct {
	re     *regexp.Regexp
	schema *Schema
}

// bound is a number from a schema, kept as an exact decimal and as the
// text that messages quote.
type bound struct {
	dec  Decimal
	text string
}

// Compile checks a schema against the JSON Schema draft 7 metaschema
// (bundled with gojsonschema, so nothing is fetched), which catches
// malformed hand-written schemas at registration, then compiles it into
// the validator that calls run.
func Compile(schema json.RawMessage) (*Schema, error) {
	sl := gojsonschema.NewSchemaLoader()
	sl.Draft = gojsonschema.Draft7
	sl.AutoDetect = false
	sl.Validate = true
	if _, err := sl.Compile(gojsonschema.NewBytesLoader(schema)); err != nil {
		return nil, fmt.Errorf("is not a valid JSON Schema: %s", strings.TrimSpace(err.Error()))
	}
	v, err := CompileUnchecked(schema)
	if err != nil {
		return nil, fmt.Errorf("cannot be used for validation: %v", err)
	}
	return v, nil
}

// CompileUnchecked compiles a JSON Schema that is known to be valid (one
// Compile checked, or a part of one) into a validator, without checking it
// against the metaschema again; it still refuses the keywords the
// validator does not support.
func CompileUnchecked(raw json.RawMessage) (*Schema, error) {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var doc any
	if err := dec.Decode(&doc); err != nil {
		return nil, fmt.Errorf("is not valid JSON: %w", err)
	}
	return compileNode(doc, "#")
}

// Keywords this validator does not implement. A schema using one is
// refused at registration rather than having the keyword silently
// ignored, which would accept input its author meant to refuse.
var unsupportedKeywords = []string{"unevaluatedProperties", "unevaluatedItems", "$dynamicAnchor", "$recursiveAnchor"}

func compileNode(v any, at string) (*Schema, error) {
	s := &Schema{minLength: -1, maxLength: -1, minItems: -1, maxItems: -1, minContains: -1, maxContains: -1, minProps: -1, maxProps: -1}
	switch obj := v.(type) {
	case bool:
		s.never = !obj
		return s, nil
	case map[string]any:
		c := &compiler{obj: obj, at: at, s: s}
		c.compile()
		return s, c.err
	}
	return nil, fmt.Errorf("at %s: a schema must be an object or a boolean", at)
}

// compiler reads the keywords of one schema object.
type compiler struct {
	obj map[string]any
	at  string
	s   *Schema
	err error
}

func (c *compiler) fail(format string, args ...any) {
	if c.err == nil {
		c.err = fmt.Errorf("at %s: %s", c.at, fmt.Sprintf(format, args...))
	}
}

func (c *compiler) sub(key string) *Schema {
	v, ok := c.obj[key]
	if !ok {
		return nil
	}
	n, err := compileNode(v, c.at+"/"+key)
	if err != nil && c.err == nil {
		c.err = err
	}
	return n
}

func (c *compiler) subList(key string) []*Schema {
	list, ok := c.obj[key].([]any)
	if !ok {
		if _, present := c.obj[key]; present {
			c.fail("%q must be an array of schemas", key)
		}
		return nil
	}
	out := make([]*Schema, 0, len(list))
	for i, v := range list {
		n, err := compileNode(v, fmt.Sprintf("%s/%s/%d", c.at, key, i))
		if err != nil {
			if c.err == nil {
				c.err = err
			}
			return nil
		}
		out = append(out, n)
	}
	return out
}

func (c *compiler) subMap(key string) map[string]*Schema {
	m, ok := c.obj[key].(map[string]any)
	if !ok {
		if _, present := c.obj[key]; present {
			c.fail("%q must be an object of schemas", key)
		}
		return nil
	}
	out := make(map[string]*Schema, len(m))
	for name, v := range m {
		n, err := compileNode(v, c.at+"/"+key+"/"+name)
		if err != nil {
			if c.err == nil {
				c.err = err
			}
			return nil
		}
		out[name] = n
	}
	return out
}

// count reads a non-negative integer keyword, or -1 when absent.
func (c *compiler) count(key string) int {
	v, ok := c.obj[key]
	if !ok {
		return -1
	}
	n, isNum := v.(json.Number)
	f, err := n.Float64()
	if !isNum || err != nil || f < 0 || f != math.Trunc(f) || f > math.MaxInt32 {
		c.fail("%q must be a non-negative integer", key)
		return -1
	}
	return int(f)
}

func (c *compiler) number(key string) *bound {
	v, ok := c.obj[key]
	if !ok {
		return nil
	}
	n, isNum := v.(json.Number)
	if !isNum {
		c.fail("%q must be a number", key)
		return nil
	}
	return &bound{dec: ParseDecimal([]byte(n), nil), text: string(n)}
}

func (c *compiler) compile() {
	s, obj := c.s, c.obj
	for _, k := range unsupportedKeywords {
		if _, ok := obj[k]; ok {
			c.fail("the keyword %q is not supported by this validator", k)
			return
		}
	}

	switch t := obj["type"].(type) {
	case nil:
	case string:
		s.types = typeByName[t]
		if s.types == 0 {
			c.fail("unknown type %q", t)
		}
	case []any:
		for _, e := range t {
			name, _ := e.(string)
			bit := typeByName[name]
			if bit == 0 {
				c.fail("unknown type %v", e)
			}
			s.types |= bit
		}
	default:
		c.fail(`"type" must be a string or an array of strings`)
	}
	if s.types != 0 {
		s.typeText = "Must be " + s.types.names()
	}

	if list, ok := obj["enum"].([]any); ok {
		s.enum = make(map[string]bool, len(list))
		shown := make([]string, 0, len(list))
		for _, e := range list {
			canon, text, err := canonicalOf(e)
			if err != nil {
				c.fail("enum: %v", err)
				return
			}
			s.enum[canon] = true
			shown = append(shown, text)
		}
		s.enumText = "Must be one of: " + strings.Join(shown, ", ")
	}
	if v, ok := obj["const"]; ok {
		canon, text, err := canonicalOf(v)
		if err != nil {
			c.fail("const: %v", err)
			return
		}
		s.hasConst, s.constVal, s.constMsg = true, canon, "Must be "+text
	}

	s.allOf, s.anyOf, s.oneOf = c.subList("allOf"), c.subList("anyOf"), c.subList("oneOf")
	s.not = c.sub("not")
	s.ifS, s.thenS, s.elseS = c.sub("if"), c.sub("then"), c.sub("else")

	s.minimum, s.maximum = c.number("minimum"), c.number("maximum")
	s.exclusiveMinimum, s.exclusiveMaximum = c.number("exclusiveMinimum"), c.number("exclusiveMaximum")
	s.multipleOf = c.number("multipleOf")
	if m := s.multipleOf; m != nil && (m.dec.neg || m.dec.zero()) {
		c.fail(`"multipleOf" must be greater than 0`)
	}
	s.numeric = s.minimum != nil || s.maximum != nil || s.exclusiveMinimum != nil || s.exclusiveMaximum != nil || s.multipleOf != nil

	s.minLength, s.maxLength = c.count("minLength"), c.count("maxLength")
	if p, ok := obj["pattern"].(string); ok {
		re, err := compilePattern(p)
		if err != nil {
			c.fail("pattern %q is not a valid regular expression: %v", p, err)
		}
		s.pattern = re
	}
	if f, ok := obj["format"].(string); ok {
		s.format = formats[f] // an unknown format is an annotation
	}
	if s.pattern != nil && s.pattern.String() == DurationPattern {
		s.format = durationRule // the pattern, and within time.Duration's range
		if s.types == typeString {
			s.typeText = durationTypeText // not "a string": a number of seconds is refused too
		}
	}
	if e, _ := obj["contentEncoding"].(string); e == "base64" {
		s.encoding = base64Rule // what encoding/json decodes into a []byte
	}
	s.stringy = s.minLength >= 0 || s.maxLength >= 0 || s.pattern != nil || s.format != nil || s.encoding != nil

	switch obj["items"].(type) {
	case []any: // draft 7 tuple form
		s.prefix = c.subList("items")
		s.items = c.sub("additionalItems")
	case nil:
	default:
		s.items = c.sub("items")
	}
	if _, ok := obj["prefixItems"]; ok {
		if s.prefix != nil {
			c.fail(`"prefixItems" and an array "items" cannot be used together`)
		}
		s.prefix = c.subList("prefixItems")
	}
	s.minItems, s.maxItems = c.count("minItems"), c.count("maxItems")
	s.uniqueItems, _ = obj["uniqueItems"].(bool)
	s.contains = c.sub("contains")
	s.minContains, s.maxContains = c.count("minContains"), c.count("maxContains")

	s.properties = c.subMap("properties")
	if req, ok := obj["required"].([]any); ok {
		s.requiredIndex = make(map[string]int, len(req))
		for _, r := range req {
			name, _ := r.(string)
			if _, dup := s.requiredIndex[name]; !dup {
				s.requiredIndex[name] = len(s.required)
				s.required = append(s.required, name)
			}
		}
	}
	s.additional = c.sub("additionalProperties")
	if pp := c.subMap("patternProperties"); pp != nil {
		for _, name := range slices.Sorted(maps.Keys(pp)) {
			re, err := regexp.Compile(name)
			if err != nil {
				c.fail("patternProperties: %q is not a valid regular expression: %v", name, err)
				return
			}
			s.patternProps = append(s.patternProps, patternProperty{re: re, schema: pp[name]})
		}
	}
	s.propertyNames = c.sub("propertyNames")
	s.minProps, s.maxProps = c.count("minProperties"), c.count("maxProperties")
	c.dependencies("dependencies")
	c.dependencies("dependentRequired")
	c.dependencies("dependentSchemas")
	s.objecty = s.properties != nil || s.required != nil || s.additional != nil || s.patternProps != nil ||
		s.propertyNames != nil || s.minProps >= 0 || s.maxProps >= 0 || s.depRequired != nil || s.depSchemas != nil
}

// dependencies reads draft 7's "dependencies" (each an array of names or
// a schema) and the split keywords of later drafts.
func (c *compiler) dependencies(key string) {
	m, ok := c.obj[key].(map[string]any)
	if !ok {
		return
	}
	s := c.s
	for _, name := range slices.Sorted(maps.Keys(m)) {
		switch dep := m[name].(type) {
		case []any:
			if s.depRequired == nil {
				s.depRequired = map[string][]string{}
			}
			for _, d := range dep {
				if str, ok := d.(string); ok {
					s.depRequired[name] = append(s.depRequired[name], str)
				}
			}
		default:
			n, err := compileNode(dep, c.at+"/"+key+"/"+name)
			if err != nil {
				if c.err == nil {
					c.err = err
				}
				return
			}
			if s.depSchemas == nil {
				s.depSchemas = map[string]*Schema{}
			}
			s.depSchemas[name] = n
		}
	}
}

// canonicalOf returns the canonical form of a schema's JSON value (see
// canonical) and its compact JSON for messages.
func canonicalOf(v any) (canon, text string, err error) {
	b, err := json.Marshal(v)
	if err != nil {
		return "", "", err
	}
	d, err := jsonparse.Parse(b)
	if err != nil {
		return "", "", err
	}
	defer jsonparse.Release(d)
	return string(canonical(d, 0, nil)), string(b), nil
}

// Validate checks the input at node root of doc and returns the
// parameter errors, or nil when it is valid.
func (s *Schema) Validate(doc *jsonparse.Document, root int32) map[string]string {
	c := checker{doc: doc}
	if doc.Repeated {
		c.repeatedNames(root)
	}
	c.check(s, root)
	return c.errs
}

// checker is the state of one validation.
type checker struct {
	doc    *jsonparse.Document
	errs   map[string]string
	full   bool // maxParameterErrors reached
	quick  bool // only whether the value passes matters
	failed bool // in quick mode: a check failed
	path   []pathSegment
	key    []byte // scratch for error keys
	buf    []byte // scratch for unescaped strings
	num    [64]byte
}

// pathSegment is one step of the path to the value being checked: an
// object member (key, a node index, or name when the member is missing)
// or an array element.
type pathSegment struct {
	key   int32
	name  string
	index int
}

func (c *checker) pushKey(k int32) { c.path = append(c.path, pathSegment{key: k, index: -1}) }
func (c *checker) pushName(name string) {
	c.path = append(c.path, pathSegment{key: -1, name: name, index: -1})
}
func (c *checker) pushIndex(i int) { c.path = append(c.path, pathSegment{key: -1, index: i}) }
func (c *checker) pop()            { c.path = c.path[:len(c.path)-1] }

// stop reports whether checking can end: in quick mode at the first
// failure, otherwise once the error map is full.
func (c *checker) stop() bool {
	if c.quick {
		return c.failed
	}
	return c.full
}

// fail records msg for the current path, unless an error is already
// recorded there: the first error met for a parameter is the one reported.
// The key is written into a reused buffer and copied only when new, so a
// million failures of one parameter cost no allocations.
func (c *checker) fail(msg string) {
	if c.quick {
		c.failed = true
		return
	}
	if c.full {
		return
	}
	c.key = c.appendPathKey(c.key[:0])
	if _, seen := c.errs[string(c.key)]; seen {
		return
	}
	if c.errs == nil {
		c.errs = make(map[string]string, 4)
	}
	c.errs[string(c.key)] = msg
	c.full = len(c.errs) >= MaxErrors
}

// appendPathKey appends the current path as a parameter_errors key: names
// and indexes joined by dots ("address.zip", "items.2"), cut to
// maxEchoedKey bytes on a character boundary and marked with an ellipsis.
func (c *checker) appendPathKey(b []byte) []byte {
	if len(c.path) == 0 {
		return append(b, RootKey...)
	}
	for i, seg := range c.path {
		if i > 0 {
			b = append(b, '.')
		}
		switch {
		case seg.index >= 0:
			b = strconv.AppendInt(b, int64(seg.index), 10)
		case seg.key >= 0:
			var kb [64]byte
			b = append(b, c.doc.StringBytes(seg.key, kb[:0])...)
		default:
			b = append(b, seg.name...)
		}
		if len(b) > MaxEchoedKey {
			break
		}
	}
	if len(b) <= MaxEchoedKey {
		return b
	}
	cut := MaxEchoedKey
	for cut > 0 && b[cut]&0xC0 == 0x80 {
		cut--
	}
	return append(b[:cut], "…"...)
}

// passes reports whether node i satisfies s, recording nothing.
func (c *checker) passes(s *Schema, i int32) bool {
	quick, failed := c.quick, c.failed
	c.quick, c.failed = true, false
	c.check(s, i)
	ok := !c.failed
	c.quick, c.failed = quick, failed
	return ok
}

// kindMask is the type mask of node i: integers are numbers too.
func (c *checker) kindMask(i int32) TypeMask {
	switch n := &c.doc.Nodes[i]; n.Kind {
	case jsonparse.KindNull:
		return typeNull
	case jsonparse.KindTrue, jsonparse.KindFalse:
		return typeBoolean
	case jsonparse.KindNumber:
		if n.Flags&(jsonparse.FlagFraction|jsonparse.FlagExponent) == 0 || c.decimal(i).integral() {
			return typeNumber | typeInteger
		}
		return typeNumber
	case jsonparse.KindString:
		return typeString
	case jsonparse.KindArray:
		return typeArray
	}
	return typeObject
}

// accepts reports whether a value of the given kinds has a type s allows.
func (s *Schema) accepts(kinds TypeMask) bool {
	return s.types == 0 || s.types&kinds != 0
}

func (c *checker) decimal(i int32) Decimal {
	return ParseDecimal(c.doc.Raw(i), c.num[:0])
}

// check validates node i against s.
func (c *checker) check(s *Schema, i int32) {
	if c.stop() {
		return
	}
	if s.never {
		c.fail("Is not accepted by the schema")
		return
	}
	n := &c.doc.Nodes[i]
	if s.types != 0 && !s.accepts(c.kindMask(i)) {
		c.fail(s.typeText)
		return
	}
	if s.enum != nil && !s.enum[string(canonical(c.doc, i, c.buf[:0]))] {
		c.fail(s.enumText)
	}
	if s.hasConst && string(canonical(c.doc, i, c.buf[:0])) != s.constVal {
		c.fail(s.constMsg)
	}
	switch n.Kind {
	case jsonparse.KindNumber:
		if s.numeric {
			c.number(s, i)
		}
	case jsonparse.KindString:
		if s.stringy {
			c.string(s, i)
		}
	case jsonparse.KindArray:
		c.array(s, i)
	case jsonparse.KindObject:
		if s.objecty {
			c.object(s, i)
		}
	}
	for _, sub := range s.allOf {
		c.check(sub, i)
	}
	if s.anyOf != nil && !slices.ContainsFunc(s.anyOf, func(b *Schema) bool { return c.passes(b, i) }) {
		c.noBranch(s.anyOf, i)
	}
	if s.oneOf != nil {
		matched := 0
		for _, b := range s.oneOf {
			if c.passes(b, i) {
				matched++
			}
		}
		switch {
		case matched == 0:
			c.noBranch(s.oneOf, i)
		case matched > 1:
			c.fail("Matches more than one of the accepted forms")
		}
	}
	if s.not != nil && c.passes(s.not, i) {
		c.fail("Is not accepted by the schema")
	}
	if s.ifS != nil {
		if c.passes(s.ifS, i) {
			if s.thenS != nil {
				c.check(s.thenS, i)
			}
		} else if s.elseS != nil {
			c.check(s.elseS, i)
		}
	}
}

// noBranch reports a value that matches none of a list of alternatives.
// When only one alternative has the value's type, its errors say the most
// (the nullable field's minimum, say); when none has, the message lists
// the types that would do.
func (c *checker) noBranch(branches []*Schema, i int32) {
	kinds := c.kindMask(i)
	var candidate *Schema
	candidates := 0
	var types TypeMask
	for _, b := range branches {
		if b.accepts(kinds) && !b.never {
			candidate = b
			candidates++
		}
		types |= b.types
		if b.types == 0 {
			types = 0xff
		}
	}
	switch {
	case candidates == 1:
		c.check(candidate, i)
		if c.quick {
			c.failed = true
		}
	case candidates == 0 && len(branches) == 2 && branches[1].types == typeNull && branches[0].typeText == durationTypeText:
		c.fail(durationTypeText + ", or null")
	case candidates == 0 && types != 0xff && types != 0:
		c.fail("Must be " + types.names())
	default:
		c.fail("Does not match any of the accepted forms")
	}
}

func (c *checker) number(s *Schema, i int32) {
	d := c.decimal(i)
	if b := s.minimum; b != nil && d.cmp(b.dec) < 0 {
		c.fail("Must be at least " + b.text)
	}
	if b := s.exclusiveMinimum; b != nil && d.cmp(b.dec) <= 0 {
		c.fail("Must be greater than " + b.text)
	}
	if b := s.maximum; b != nil && d.cmp(b.dec) > 0 {
		c.fail("Must be at most " + b.text)
	}
	if b := s.exclusiveMaximum; b != nil && d.cmp(b.dec) >= 0 {
		c.fail("Must be less than " + b.text)
	}
	if b := s.multipleOf; b != nil && !d.multipleOf(b.dec) {
		c.fail("Must be a multiple of " + b.text)
	}
}

func (c *checker) string(s *Schema, i int32) {
	str := c.doc.StringBytes(i, c.buf[:0])
	if c.doc.Nodes[i].Flags&jsonparse.FlagEscaped != 0 {
		c.buf = str[:0]
	}
	if s.minLength >= 0 || s.maxLength >= 0 {
		n := utf8.RuneCount(str)
		if s.minLength >= 0 && n < s.minLength {
			c.fail(fmt.Sprintf("Must be at least %s long", plural(s.minLength, "character")))
		}
		if s.maxLength >= 0 && n > s.maxLength {
			c.fail(fmt.Sprintf("Must be at most %s long", plural(s.maxLength, "character")))
		}
	}
	if s.pattern != nil && !s.pattern.match(str) {
		if msg, ok := patternMessages[s.pattern.String()]; ok {
			c.fail(msg)
		} else {
			c.fail("Must match the pattern " + s.pattern.String())
		}
	}
	if s.format != nil && !s.format.valid(str) {
		c.fail(s.format.message)
	}
	if s.encoding != nil && !s.encoding.valid(str) {
		c.fail(s.encoding.message)
	}
}

func (c *checker) array(s *Schema, i int32) {
	n := int(c.doc.Nodes[i].Count)
	if s.minItems >= 0 && n < s.minItems {
		c.fail(fmt.Sprintf("Must have at least %s", plural(s.minItems, "item")))
	}
	if s.maxItems >= 0 && n > s.maxItems {
		c.fail(fmt.Sprintf("Must have at most %s", plural(s.maxItems, "item")))
	}
	if s.prefix != nil || s.items != nil {
		for j, e := range c.doc.Elements(i) {
			sub := s.items
			if j < len(s.prefix) {
				sub = s.prefix[j]
			}
			if sub != nil {
				c.pushIndex(j)
				c.check(sub, e)
				c.pop()
			}
			if c.stop() {
				return
			}
		}
	}
	if s.uniqueItems && n > 1 {
		seen := make(map[string]struct{}, n)
		for _, e := range c.doc.Elements(i) {
			canon := string(canonical(c.doc, e, c.buf[:0]))
			if _, dup := seen[canon]; dup {
				c.fail("Must not contain duplicate items")
				break
			}
			seen[canon] = struct{}{}
		}
	}
	if s.contains != nil {
		matched := 0
		for _, e := range c.doc.Elements(i) {
			if c.passes(s.contains, e) {
				matched++
			}
		}
		switch {
		case s.minContains < 0 && matched == 0:
			c.fail("Must contain at least one item of the accepted form")
		case s.minContains >= 0 && matched < s.minContains:
			c.fail(fmt.Sprintf("Must contain at least %d items of the accepted form", s.minContains))
		case s.maxContains >= 0 && matched > s.maxContains:
			c.fail(fmt.Sprintf("Must contain at most %d items of the accepted form", s.maxContains))
		}
	}
}

func (c *checker) object(s *Schema, i int32) {
	d := c.doc
	n := int(d.Nodes[i].Count)
	if s.minProps >= 0 && n < s.minProps {
		c.fail(fmt.Sprintf("Must have at least %s", plural(s.minProps, "property")))
	}
	if s.maxProps >= 0 && n > s.maxProps {
		c.fail(fmt.Sprintf("Must have at most %s", plural(s.maxProps, "property")))
	}
	var present []bool
	if s.required != nil {
		present = make([]bool, len(s.required))
	}
	for k, v := range d.Members(i) {
		name := d.StringBytes(k, c.buf[:0])
		if d.Nodes[k].Flags&jsonparse.FlagEscaped != 0 {
			c.buf = name[:0]
		}
		if present != nil {
			if j, ok := s.requiredIndex[string(name)]; ok {
				present[j] = true
			}
		}
		matched := false
		if sub, ok := s.properties[string(name)]; ok {
			matched = true
			c.pushKey(k)
			c.check(sub, v)
			c.pop()
		}
		for _, pp := range s.patternProps {
			if pp.re.Match(d.StringBytes(k, c.buf[:0])) {
				matched = true
				c.pushKey(k)
				c.check(pp.schema, v)
				c.pop()
			}
		}
		if !matched && s.additional != nil {
			c.pushKey(k)
			if s.additional.never {
				c.fail("Is not an accepted parameter")
			} else {
				c.check(s.additional, v)
			}
			c.pop()
		}
		if s.propertyNames != nil && !c.passes(s.propertyNames, k) {
			c.pushKey(k)
			c.fail("Is not an accepted parameter name")
			c.pop()
		}
		if deps := s.depRequired[string(d.StringBytes(k, c.buf[:0]))]; deps != nil {
			for _, dep := range deps {
				if d.Member(i, dep) < 0 {
					c.pushKey(k)
					c.fail(fmt.Sprintf("Requires %q to be present too", dep))
					c.pop()
				}
			}
		}
		if sub := s.depSchemas[string(d.StringBytes(k, c.buf[:0]))]; sub != nil {
			c.check(sub, i)
		}
		if c.stop() {
			return
		}
	}
	for j, ok := range present {
		if !ok {
			c.pushName(s.required[j])
			c.fail("Is required")
			c.pop()
		}
	}
}

// repeatedNames reports every object member name given more than once
// in the subtree of node i, before anything else is checked: which of the
// values a decoder would keep is a guess, so neither is used.
func (c *checker) repeatedNames(i int32) {
	d := c.doc
	switch d.Nodes[i].Kind {
	case jsonparse.KindArray:
		for j, e := range d.Elements(i) {
			c.pushIndex(j)
			c.repeatedNames(e)
			c.pop()
		}
	case jsonparse.KindObject:
		var reported map[string]bool // name → reported yet
		if d.Nodes[i].Flags&jsonparse.FlagRepeated != 0 {
			reported = map[string]bool{} // grows with the distinct names only
		}
		for k, v := range d.Members(i) {
			if reported != nil {
				var buf [64]byte
				name := d.StringBytes(k, buf[:0])
				// Each name is reported once, however often it repeats;
				// lookups do not copy name, so a million repeats of one
				// name cost no allocations.
				switch done, seen := reported[string(name)]; {
				case !seen:
					reported[string(name)] = false
				case !done:
					c.pushKey(k)
					c.fail("Is given more than once")
					c.pop()
					reported[string(name)] = true
				}
			}
			c.pushKey(k)
			c.repeatedNames(v)
			c.pop()
		}
	}
}

// canonical appends a form of node i in which equal JSON values are equal
// bytes: numbers as exact decimals (1, 1.0 and 10e-1 alike), strings
// unescaped and quoted, object members sorted by name.
func canonical(d *jsonparse.Document, i int32, dst []byte) []byte {
	n := &d.Nodes[i]
	switch n.Kind {
	case jsonparse.KindNumber:
		var buf [64]byte
		dec := ParseDecimal(d.Raw(i), buf[:0])
		if dec.zero() {
			return append(dst, '0')
		}
		if dec.neg {
			dst = append(dst, '-')
		}
		dst = append(dst, dec.digits...)
		dst = append(dst, 'e')
		return strconv.AppendInt(dst, int64(dec.point), 10)
	case jsonparse.KindString:
		var buf [64]byte
		return wire.AppendString(dst, string(d.StringBytes(i, buf[:0])))
	case jsonparse.KindArray:
		dst = append(dst, '[')
		for j, e := range d.Elements(i) {
			if j > 0 {
				dst = append(dst, ',')
			}
			dst = canonical(d, e, dst)
		}
		return append(dst, ']')
	case jsonparse.KindObject:
		type member struct {
			name string
			v    int32
		}
		ms := make([]member, 0, n.Count)
		for k, v := range d.Members(i) {
			ms = append(ms, member{d.StringValue(k), v})
		}
		slices.SortFunc(ms, func(a, b member) int { return strings.Compare(a.name, b.name) })
		dst = append(dst, '{')
		for j, m := range ms {
			if j > 0 {
				dst = append(dst, ',')
			}
			dst = wire.AppendString(dst, m.name)
			dst = append(dst, ':')
			dst = canonical(d, m.v, dst)
		}
		return append(dst, '}')
	}
	return append(dst, d.Raw(i)...) // null, true, false
}

// Decimal is an exact JSON number: 0.digits × 10^point, negative when neg.
// digits has no leading or trailing zeros, and is empty for zero.
type Decimal struct {
	neg    bool
	digits []byte
	point  int
}

// maxExponent saturates exponents, so that arithmetic on them cannot
// overflow; a number that large compares and divides the same either way.
const maxExponent = 1 << 40

// ParseDecimal reads a valid JSON number. Its digits are stored in buf
// when it has room.
func ParseDecimal(lit []byte, buf []byte) Decimal {
	var d Decimal
	i := 0
	if i < len(lit) && lit[i] == '-' {
		d.neg = true
		i++
	}
	digits := buf[:0]
	intDigits := 0
	for ; i < len(lit) && '0' <= lit[i] && lit[i] <= '9'; i++ {
		digits = append(digits, lit[i])
		intDigits++
	}
	if i < len(lit) && lit[i] == '.' {
		for i++; i < len(lit) && '0' <= lit[i] && lit[i] <= '9'; i++ {
			digits = append(digits, lit[i])
		}
	}
	exp := 0
	if i < len(lit) && (lit[i] == 'e' || lit[i] == 'E') {
		i++
		negExp := false
		if i < len(lit) && (lit[i] == '+' || lit[i] == '-') {
			negExp = lit[i] == '-'
			i++
		}
		for ; i < len(lit); i++ {
			if exp < maxExponent {
				exp = exp*10 + int(lit[i]-'0')
			}
		}
		if negExp {
			exp = -exp
		}
	}
	d.point = intDigits + exp
	for len(digits) > 0 && digits[0] == '0' {
		digits = digits[1:]
		d.point--
	}
	for len(digits) > 0 && digits[len(digits)-1] == '0' {
		digits = digits[:len(digits)-1]
	}
	if len(digits) == 0 {
		return Decimal{}
	}
	d.digits = digits
	return d
}

func (d Decimal) zero() bool { return len(d.digits) == 0 }

// integral reports whether d is a whole number.
func (d Decimal) integral() bool { return d.zero() || d.point >= len(d.digits) }

// cmp compares d with e exactly.
func (d Decimal) cmp(e Decimal) int {
	sign := func(x Decimal) int {
		switch {
		case x.zero():
			return 0
		case x.neg:
			return -1
		}
		return 1
	}
	sd, se := sign(d), sign(e)
	if sd != se || sd == 0 {
		return cmpInt(sd, se)
	}
	m := cmpInt(d.point, e.point)
	if m == 0 {
		m = bytes.Compare(d.digits, e.digits)
	}
	return m * sd
}

func cmpInt(a, b int) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// multipleOf reports whether d is an integer multiple of m (m > 0),
// exactly. With d = Md × 10^ed and m = Mm × 10^em (Md and Mm integers
// without trailing zeros), d/m is whole exactly when Mm divides
// Md × 10^(ed-em); when ed < em that needs Md to end in a zero, which it
// does not. The remainder is computed digit by digit, so the cost is the
// length of the number, whatever its exponent.
func (d Decimal) multipleOf(m Decimal) bool {
	if d.zero() {
		return true
	}
	k := (d.point - len(d.digits)) - (m.point - len(m.digits))
	if k < 0 {
		return false
	}
	if len(m.digits) <= 18 {
		mod := uint64(0)
		for _, c := range m.digits {
			mod = mod*10 + uint64(c-'0')
		}
		r := uint64(0)
		for _, c := range d.digits {
			r = (r*10 + uint64(c-'0')) % mod
		}
		return mulMod(r, powMod(10, uint64(k), mod), mod) == 0
	}
	md, _ := new(big.Int).SetString(string(d.digits), 10)
	mm, _ := new(big.Int).SetString(string(m.digits), 10)
	p := new(big.Int).Exp(big.NewInt(10), big.NewInt(int64(k)), mm)
	return p.Mul(p, md.Mod(md, mm)).Mod(p, mm).Sign() == 0
}

func mulMod(a, b, m uint64) uint64 {
	hi, lo := bits.Mul64(a, b)
	return bits.Rem64(hi, lo, m)
}

func powMod(base, exp, m uint64) uint64 {
	r := uint64(1) % m
	base %= m
	for exp > 0 {
		if exp&1 == 1 {
			r = mulMod(r, base, m)
		}
		base = mulMod(base, base, m)
		exp >>= 1
	}
	return r
}

// IntegerText appends d in plain integer form when it is a whole number
// that fits in 20 digits (the range of int64 and uint64), and reports
// whether it did.
func (d Decimal) IntegerText(dst []byte) ([]byte, bool) {
	if !d.integral() || d.point > 20 {
		return dst, false
	}
	if d.zero() {
		return append(dst, '0'), true
	}
	if d.neg {
		dst = append(dst, '-')
	}
	dst = append(dst, d.digits...)
	for range d.point - len(d.digits) {
		dst = append(dst, '0')
	}
	return dst, true
}

// plural is n and noun, in the plural unless n is 1 ("1 character", "2
// characters", "1 property", "3 properties").
func plural[N int | int64](n N, noun string) string {
	if n == 1 {
		return fmt.Sprintf("1 %s", noun)
	}
	if strings.HasSuffix(noun, "y") {
		return fmt.Sprintf("%d %sies", n, strings.TrimSuffix(noun, "y"))
	}
	return fmt.Sprintf("%d %ss", n, noun)
}
