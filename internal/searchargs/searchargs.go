// Package searchargs is the pair of tools a model is handed in place of a
// large catalog, wherever it is served (MCP's search mode, A2A's search
// skill, the client's finder): the input schemas of the search tool
// ({"query", "limit"}) and of the call tool ({"name", "arguments"}), and
// the reading of a model's arguments for each, with what is wrong named
// by parameter so that each format answers in its own words.
package searchargs

import (
	"bytes"
	"encoding/json"
	"fmt"
)

// DefaultLimit is how many tools (or skills) a search answers when the
// model gives no limit: few, since the model reads every one.
const DefaultLimit = 5

// SearchSchema is the search tool's input schema: what the model wants
// done, and how many of things (tools, skills) to answer, 1 to max.
func SearchSchema(things string, max int) json.RawMessage {
	return json.RawMessage(`{"type":"object","properties":{` +
		`"query":{"type":"string","description":"What you want done, in a few words, such as \"read a file\" or \"create a calendar event\"."},` +
		`"limit":{"type":"integer","minimum":1,"maximum":` + fmt.Sprint(max) + `,"description":"How many ` + things + ` to answer at most; ` + fmt.Sprint(DefaultLimit) + ` when left out."}},` +
		`"required":["query"],"additionalProperties":false}`)
}

// CallSchema is the call tool's input schema; search names the search
// tool the name comes from.
func CallSchema(search string) json.RawMessage {
	return json.RawMessage(`{"type":"object","properties":{` +
		`"name":{"type":"string","description":"The tool's name, as ` + search + ` answered it."},` +
		`"arguments":{"type":"object","description":"The tool's arguments."}},` +
		`"required":["name"],"additionalProperties":false}`)
}

// Problem is what is wrong with a model's arguments: the parameter, and
// what to do about it.
type Problem struct{ Param, Text string }

// Search reads the search tool's arguments (nil or empty for none): the
// query, and the limit (DefaultLimit when not given), or the problem with
// them, at most max.
func Search(raw []byte, max int) (query string, limit int, p *Problem) {
	var in struct {
		Query *string `json:"query"`
		Limit *int    `json:"limit"`
	}
	if err := strict(raw, &in); err != nil {
		return "", 0, &Problem{"arguments", `must be {"query": WORDS, "limit": N}: ` + err.Error()}
	}
	if in.Query == nil {
		return "", 0, &Problem{"query", "is required: say what you want done, in a few words"}
	}
	limit = DefaultLimit
	if in.Limit != nil {
		if limit = *in.Limit; limit < 1 || limit > max {
			return "", 0, &Problem{"limit", fmt.Sprintf("must be from 1 to %d", max)}
		}
	}
	return *in.Query, limit, nil
}

// Call reads the call tool's arguments: the name of the tool to call and
// its arguments (nil for none, or null), or the problem with them; search
// names the search tool the name comes from.
func Call(raw []byte, search string) (name string, args json.RawMessage, p *Problem) {
	var in struct {
		Name      *string         `json:"name"`
		Arguments json.RawMessage `json:"arguments"`
	}
	if err := strict(raw, &in); err != nil {
		return "", nil, &Problem{"arguments", `must be {"name": TOOL, "arguments": {...}}: ` + err.Error()}
	}
	if in.Name == nil || *in.Name == "" {
		return "", nil, &Problem{"name", "is required: the name of the tool to call, as " + search + " answered it"}
	}
	a := bytes.TrimSpace(in.Arguments)
	switch {
	case len(a) == 0 || bytes.Equal(a, []byte("null")):
		return *in.Name, nil, nil
	case a[0] != '{':
		return "", nil, &Problem{"arguments", "must be a JSON object: the tool's arguments by name"}
	}
	return *in.Name, a, nil
}

// strict decodes raw into v, refusing members v does not have; nothing
// (or null) is an empty object.
func strict(raw []byte, v any) error {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || bytes.Equal(raw, []byte("null")) {
		return nil
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	return dec.Decode(v)
}
