package client

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/otcgo/otc"
)

// decodeCatalog reads a GET /tools body leniently: the array of tool
// definitions under "tools" (the protocol's List Tools page) or "items" (the OXP OpenAPI file),
// or a bare array. Unknown fields are ignored.
func decodeCatalog(body []byte) ([]otc.ToolDefinition, error) {
	body = bytes.TrimSpace(body)
	var list []json.RawMessage
	switch {
	case len(body) > 0 && body[0] == '[':
		if err := json.Unmarshal(body, &list); err != nil {
			return nil, fmt.Errorf("the catalog is not valid JSON: %w", err)
		}
	case len(body) > 0 && body[0] == '{':
		var obj map[string]json.RawMessage
		if err := json.Unmarshal(body, &obj); err != nil {
			return nil, fmt.Errorf("the catalog is not valid JSON: %w", err)
		}
		tools, hasTools := obj["tools"]
		items, hasItems := obj["items"]
		switch {
		case hasTools && !isJSONNull(tools):
			if err := json.Unmarshal(tools, &list); err != nil {
				return nil, fmt.Errorf(`the catalog's "tools": %w`, err)
			}
		case hasItems && !isJSONNull(items):
			if err := json.Unmarshal(items, &list); err != nil {
				return nil, fmt.Errorf(`the catalog's "items": %w`, err)
			}
		case !hasTools && !hasItems:
			return nil, errors.New(`the catalog has neither "tools" nor "items"`)
		}
		// Otherwise the key holds null, which a Go server encoding a nil
		// slice sends for an empty catalog.
	default:
		return nil, errors.New("the catalog is not a JSON object or array")
	}
	defs := make([]otc.ToolDefinition, 0, len(list))
	for i, raw := range list {
		def, err := decodeDefinition(raw)
		if err != nil {
			return nil, fmt.Errorf("tool %d of the catalog: %w", i, err)
		}
		defs = append(defs, def)
	}
	return defs, nil
}

// decodeDefinition reads one tool definition. The input schema may come
// wrapped, {"parameters": schema}, as the protocol's List Tools page shows, or bare, as some
// servers send it; either way it is returned wrapped. An output_schema of
// null, or none, reads as nil.
func decodeDefinition(raw json.RawMessage) (otc.ToolDefinition, error) {
	var w struct {
		ID           string            `json:"id"`
		Name         string            `json:"name"`
		Description  string            `json:"description"`
		Version      string            `json:"version"`
		InputSchema  json.RawMessage   `json:"input_schema"`
		OutputSchema json.RawMessage   `json:"output_schema"`
		Requirements *otc.Requirements `json:"requirements"`
	}
	if err := json.Unmarshal(raw, &w); err != nil {
		return otc.ToolDefinition{}, err
	}
	if w.ID == "" {
		return otc.ToolDefinition{}, errors.New(`the definition has no "id"`)
	}
	def := otc.ToolDefinition{
		ID:           w.ID,
		Name:         w.Name,
		Description:  w.Description,
		Version:      w.Version,
		OutputSchema: w.OutputSchema,
		Requirements: w.Requirements,
	}
	if isJSONNull(def.OutputSchema) {
		def.OutputSchema = nil
	}
	if _, v, ok := strings.Cut(def.ID, "@"); ok && def.Version == "" {
		def.Version = v // the id's, where the entry names none
	}
	params, err := parametersOf(w.InputSchema)
	if err != nil {
		return otc.ToolDefinition{}, fmt.Errorf("%s: input_schema: %w", w.ID, err)
	}
	def.InputSchema.Parameters = params
	return def, nil
}

// emptyParameters stands for a tool without input.
var emptyParameters = json.RawMessage(`{"type":"object","properties":{}}`)

// parametersOf unwraps an input_schema. An object whose "parameters" is an
// object, and which has no "type" or "properties" of its own, is the
// wrapper; any other object is the schema itself.
func parametersOf(raw json.RawMessage) (json.RawMessage, error) {
	if isJSONNull(raw) {
		return emptyParameters, nil
	}
	var obj map[string]json.RawMessage
	if err := json.Unmarshal(raw, &obj); err != nil {
		return nil, errors.New("is not a JSON object")
	}
	inner, wrapped := obj["parameters"]
	_, hasType := obj["type"]
	_, hasProps := obj["properties"]
	if !wrapped || hasType || hasProps {
		return raw, nil
	}
	if isJSONNull(inner) {
		return emptyParameters, nil
	}
	if t := bytes.TrimSpace(inner); len(t) == 0 || t[0] != '{' {
		return nil, errors.New(`"parameters" is not a JSON object`)
	}
	return inner, nil
}

func isJSONNull(raw json.RawMessage) bool {
	t := bytes.TrimSpace(raw)
	return len(t) == 0 || string(t) == "null"
}
