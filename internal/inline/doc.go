// Package inline replaces the references of a hand-written JSON Schema by
// what they point to (Schema), and checks that a schema is inline (Check).
//
// The OTC catalog carries inline schemas only (the protocol's List Tools), while
// tools written for MCP, whose schemas are JSON Schema 2020-12, commonly
// share definitions through $defs and $ref. Register accepts the local
// forms and serves, and validates against, a copy with every reference
// replaced by what it points to; the original is kept for the wire formats
// that carry 2020-12 in full.
//
// The copy is written from the original's text, member by member, so that
// property order and spelling survive: a model reads the catalog in the
// order the author wrote it. Rejected designs: a general JSON Schema
// resolver (remote references, $id and dynamic scopes) brings in base-URI
// resolution for schemas that a catalog cannot carry anyway; and leaving
// references in place would break the OTC catalog's promise of inline
// schemas to clients that do not resolve them.
//
// What it promises, and how that is checked: the root package's
// TestInlineSchemaForms, TestInlineRefusals and the other TestInline
// tests register tools with every local form of reference ($defs,
// definitions, $anchor, JSON pointers with escapes, recursion refused)
// and check the served catalog, the validator and the refusals over HTTP.
package inline
