// Package decode turns a tool call's validated input into the bytes, and
// then the value, that the tool function receives: a plan of the input
// type, built at registration, drops members that match a field only by
// folding case and writes whole numbers bound for integer fields in
// integer form (Plan, ApplyEdits); the defaults of absent optional
// parameters are filled in at any depth (Defaults, ApplyDefaults); and the
// commonest input type, a struct of numbers, strings and booleans, is set
// straight from the bytes (Direct, Input), with encoding/json decoding
// everything else.
//
// What it promises, and how that is checked: after the plan and the
// defaults, the direct decoder gives exactly what encoding/json gives, or
// declines and lets encoding/json decode (TestDirectDecoderMatchesEncodingJSON
// and FuzzDirectDecode, differential against encoding/json); defaults
// land where the schema says (TestPlanDefaults, TestApplyDefaults); and a
// validated input always decodes (the root package's
// FuzzValidatedInputDecodes).
package decode
