// Package mcpwire is the part of MCP's wire vocabulary that the server
// (package mcp) and the client (package client) both compile against, so
// that a change to the protocol is one edit: the protocol versions, the
// _meta keys, and the Tool object a registry tool is listed as.
package mcpwire

import (
	"encoding/json"

	"github.com/otcgo/otc"
)

// The protocol versions, oldest first.
const (
	V20241105 = "2024-11-05"
	V20250326 = "2025-03-26"
	V20250618 = "2025-06-18"
	V20251125 = "2025-11-25"
	V20260728 = "2026-07-28"
)

// Keys of the _meta objects: otc's own, and 2026-07-28's per-request ones.
const (
	MetaContext            = "io.github.otcgo/context"
	MetaCallID             = "io.github.otcgo/call_id"
	MetaError              = "io.github.otcgo/error"
	MetaFullCatalog        = "io.github.otcgo/full_catalog"
	MetaProtocolVersion    = "io.modelcontextprotocol/protocolVersion"
	MetaClientCapabilities = "io.modelcontextprotocol/clientCapabilities"
	MetaClientInfo         = "io.modelcontextprotocol/clientInfo"
	MetaLogLevel           = "io.modelcontextprotocol/logLevel"
	// ExtensionTasks is the tasks extension's name, in capabilities.
	ExtensionTasks = "io.modelcontextprotocol/tasks"
	// ExtensionSkills is the skills extension (SEP-2640).
	ExtensionSkills = "io.modelcontextprotocol/skills"
)

// Tool is the MCP Tool object.
type Tool struct {
	Name         string               `json:"name"`
	Title        string               `json:"title,omitempty"`
	Description  string               `json:"description"`
	InputSchema  json.RawMessage      `json:"inputSchema"`
	OutputSchema json.RawMessage      `json:"outputSchema,omitempty"`
	Annotations  *otc.ToolAnnotations `json:"annotations,omitempty"`
	Icons        []otc.Icon           `json:"icons,omitempty"`
	Meta         json.RawMessage      `json:"_meta,omitempty"`
}

// EncodeTool returns the Tool object of a registry tool, with its icons
// or without them (2025-06-18 has none): see mcp.EncodeTool.
func EncodeTool(def otc.ToolDefinition, icons bool) json.RawMessage {
	t := Tool{Name: def.Name, Title: def.Title, Description: def.Description, InputSchema: def.InputSchema.Parameters,
		Annotations: def.Annotations, Meta: def.Meta}
	if icons {
		t.Icons = def.Icons
	}
	if def.FullInputSchema != nil {
		t.InputSchema = def.FullInputSchema // MCP carries JSON Schema 2020-12 in full
	}
	if def.OutputSchema != nil && !def.Content {
		t.OutputSchema = outputSchema(def.OutputSchema)
		if def.FullOutputSchema != nil && isObjectSchema(def.FullOutputSchema) {
			// Listed whole; a wrapped schema is the inlined one, whose
			// references cannot break by moving under "result".
			t.OutputSchema = def.FullOutputSchema
		}
	}
	b, err := json.Marshal(t)
	if err != nil { // the registry compacted and checked every schema
		panic("mcp: a registered tool cannot be encoded: " + err.Error())
	}
	return b
}

// outputSchema returns the listed output schema: the tool's when it
// describes an object, otherwise one of {"result": value}.
func outputSchema(s json.RawMessage) json.RawMessage {
	if isObjectSchema(s) {
		return s
	}
	return json.RawMessage(`{"type":"object","properties":{"result":` + string(s) + `},"required":["result"]}`)
}

// isObjectSchema reports whether a schema says its value is an object.
func isObjectSchema(s json.RawMessage) bool {
	var probe struct {
		Type json.RawMessage `json:"type"`
	}
	return json.Unmarshal(s, &probe) == nil && string(probe.Type) == `"object"`
}
