// Package jsonparse reads the JSON that clients send: request envelopes,
// tool inputs and MCP messages.
//
// Parse reads a text once into a flat list of nodes that the envelope
// decoders, the input validator and the input decoder then walk, so that
// a body is parsed once however many steps look at it, and so that field
// names are matched exactly: encoding/json matches names without regard
// to case (and folds U+017F to "s"), which lets a body say one thing to a
// case-sensitive gateway and another to this server. The parser keeps no
// values, only where each one lies in the text; strings are unescaped,
// and numbers read, only when a check needs them. Its cost is one pass
// over the bytes plus a node per value, and documents are pooled.
//
// Valid reports whether a text is JSON in UTF-8 without building nodes,
// for a reader that only needs to know that (the MCP message scanner).
// AppendCanonical writes a value so that texts meaning the same value
// (member order, white space, escapes, 1 and 1.0) hash alike, for the
// fingerprints of idempotent calls.
//
// What it promises, and how that is checked: Parse accepts exactly the
// texts encoding/json accepts that are valid UTF-8, up to MaxDepth levels
// of nesting, and
// unescapes strings as encoding/json does (FuzzParse, differential);
// Valid agrees with json.Valid && utf8.Valid (FuzzValid, differential,
// and TestValidAgreesWithEncodingJSON, the nesting limit included);
// AppendCanonical by the root package's TestFingerprintNormalisesInput.
package jsonparse
