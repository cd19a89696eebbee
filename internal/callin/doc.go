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
