// Package envelope reads the request envelopes of the wire formats from a
// body that package jsonparse has parsed: the OTC call and its call
// context, the REST invocation. Every field name is matched exactly and
// may appear only once, at every level: a body that says {"tool_id": "A",
// "TOOL_ID": "B"} means A to a case-sensitive gateway and, to a decoder
// that folds case and keeps the last value, B. Here it is refused, naming
// the field. A malformed envelope is an *Error, which each wire format
// answers in its own shape.
//
// What it promises, and how that is checked: the root package's handler
// tests and the rest package's tests send every malformed shape over HTTP
// (repeated and unknown fields, wrong types at each level, repeated
// secrets, bodies that are empty, not JSON or not UTF-8) and check the
// status and message; FuzzCall and the REST fuzz tests send arbitrary
// bodies.
package envelope
