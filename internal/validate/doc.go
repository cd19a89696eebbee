// Package validate is the JSON Schema compiler and validator of tool
// inputs: a schema compiled once, at registration, into a tree of checks
// that a call runs over its input as package jsonparse read it. It
// implements the validation keywords of JSON Schema draft 7, plus
// prefixItems, dependentRequired, dependentSchemas, minContains and
// maxContains from later drafts, and the "format" values the reflector
// gives Go types, each accepting exactly what that type decodes.
//
// Its work is bounded by the size of the input: numbers are compared as
// exact decimals read from their text (Decimal), never as
// arbitrary-precision rationals; uniqueItems hashes; most patterns of
// tool schemas are matched without the regexp engine; and validation
// stops once MaxErrors parameters have been reported, so that an input of
// a million unexpected keys costs no more than parsing it.
//
// What it promises, and how that is checked: its verdicts agree with
// gojsonschema, an independent implementation of the same drafts
// (TestValidateAgreesWithReference and FuzzValidate, differential); its
// decimal arithmetic agrees with math/big (TestDecimalAgainstBigRat); its
// one-class pattern matcher agrees with package regexp (FuzzPattern); its
// messages are those of a table (TestValidateMessages).
package validate
