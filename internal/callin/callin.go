// Package callin carries a call's input, already parsed by a wire-format
// package of this module, to the root package's pipeline, so that a body
// is parsed once however many packages read it. It is not API, and widens
// none: the root package sets SetParsed when it is initialised, and the
// adapters (package rest) call it.
//
// What it promises, and how that is checked: a call whose input was
// handed over this way is validated and decoded exactly as one whose
// input came as bytes (the rest package's tests run every input case over
// HTTP; the root's FuzzCall and the REST fuzz test send arbitrary bodies).
package callin

import "github.com/otcgo/otc/internal/jsonparse"

// SetParsed records that req's Input is the text of node of doc, so that
// the pipeline reads the node instead of parsing Input again. req is an
// *otc.CallRequest; doc must stay unreleased until the call returns.
var SetParsed func(req any, doc *jsonparse.Document, node int32)
