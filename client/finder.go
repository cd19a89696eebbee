package client

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/otcgo/otc"
	"github.com/otcgo/otc/internal/modeltext"
)

// The tools a client hands a model in place of a catalog too large to show
// it whole ([FinderTools]), named as a server's search mode names its own.
const (
	// FinderSearch finds the tools that do what the model describes.
	FinderSearch = "search_tools"
	// FinderCall calls a tool by its name.
	FinderCall = "call_tool"
	// finderLimit is how many tools a search answers when the model gives
	// no limit.
	finderLimit = 5
)

// FinderTools returns the definitions of two tools with which a model
// works with a catalog too large to be shown whole: [FinderSearch], which
// finds the tools of the client's server that do what the model describes
// (with their names, descriptions and input schemas), and [FinderCall],
// which calls one of them by name. An agent framework's adapter hands them
// to the model in place of the catalog and runs them with
// [Client.FinderText]. The server must search ([Client.SearchTools]).
func FinderTools() []otc.ToolDefinition {
	return []otc.ToolDefinition{
		{ID: FinderSearch, Name: FinderSearch, Version: "1.0.0",
			Description: "Finds the tools that can do what you describe, best first, with their names, descriptions and input schemas. Search before you call a tool; call what you find with " + FinderCall + ".",
			InputSchema: otc.InputSchema{Parameters: json.RawMessage(`{"type":"object","properties":{` +
				`"query":{"type":"string","description":"What you want done, in a few words, such as \"read a file\"."},` +
				`"limit":{"type":"integer","minimum":1,"maximum":100,"description":"How many tools to answer at most; ` + fmt.Sprint(finderLimit) + ` when left out."}},` +
				`"required":["query"],"additionalProperties":false}`)}},
		{ID: FinderCall, Name: FinderCall, Version: "1.0.0",
			Description: "Calls a tool by the name " + FinderSearch + " gave, with arguments as its input schema describes them.",
			InputSchema: otc.InputSchema{Parameters: json.RawMessage(`{"type":"object","properties":{` +
				`"name":{"type":"string","description":"The tool's name, as ` + FinderSearch + ` answered it."},` +
				`"arguments":{"type":"object","description":"The tool's arguments."}},` +
				`"required":["name"],"additionalProperties":false}`)}},
	}
}

// FinderText runs one of the [FinderTools] (tool is its name) with the
// arguments the model wrote, and returns what the model should read, as
// [Client.CallText] does: the tools found, as JSON {"tools": [{"name",
// "description", "input_schema"}]}, or the called tool's outcome in
// [ModelText]'s words, or what is wrong with the arguments. It returns an
// error only for what the model cannot act on: the server unreachable, a
// server that does not search (wrapping [ErrNoSearch]), a tool that is not
// one of the two.
func (c *Client) FinderText(ctx context.Context, tool string, args json.RawMessage) (string, error) {
	args = bytes.TrimSpace(args)
	if len(args) == 0 || string(args) == "null" {
		args = json.RawMessage(`{}`)
	}
	if args[0] != '{' || !json.Valid(args) {
		return modeltext.NotAnObject, nil
	}
	dec := json.NewDecoder(bytes.NewReader(args))
	dec.DisallowUnknownFields()
	invalid := func(param, problem string) (string, error) {
		return modeltext.InvalidArguments(map[string]string{param: problem}), nil
	}
	switch tool {
	case FinderSearch:
		var in struct {
			Query *string `json:"query"`
			Limit *int    `json:"limit"`
		}
		if err := dec.Decode(&in); err != nil {
			return invalid("arguments", "must be {\"query\": WORDS, \"limit\": N}: "+err.Error())
		}
		if in.Query == nil {
			return invalid("query", "is required: say what you want done, in a few words")
		}
		limit := finderLimit
		if in.Limit != nil {
			if limit = *in.Limit; limit < 1 || limit > 100 {
				return invalid("limit", "must be from 1 to 100")
			}
		}
		defs, err := c.SearchTools(ctx, *in.Query, limit)
		if err != nil {
			if e, ok := errors.AsType[*otc.Error](err); ok && len(e.ParameterErrors) > 0 {
				if p, bad := e.ParameterErrors["q"]; bad {
					return invalid("query", p)
				}
				return modeltext.InvalidArguments(e.ParameterErrors), nil
			}
			if text, ok := ModelText(nil, err); ok && !errors.Is(err, ErrNoSearch) {
				return text, nil
			}
			return "", err
		}
		type found struct {
			Name        string          `json:"name"`
			Description string          `json:"description"`
			InputSchema json.RawMessage `json:"input_schema,omitempty"`
		}
		out := struct {
			Tools []found `json:"tools"`
		}{Tools: make([]found, 0, len(defs))}
		for _, d := range defs {
			out.Tools = append(out.Tools, found{Name: d.ID, Description: d.Description, InputSchema: d.InputSchema.Parameters})
		}
		b, err := json.Marshal(out)
		if err != nil {
			return "", err
		}
		return string(b), nil
	case FinderCall:
		var in struct {
			Name      *string         `json:"name"`
			Arguments json.RawMessage `json:"arguments"`
		}
		if err := dec.Decode(&in); err != nil {
			return invalid("arguments", "must be {\"name\": TOOL, \"arguments\": {...}}: "+err.Error())
		}
		if in.Name == nil || *in.Name == "" {
			return invalid("name", "is required: the name of the tool to call, as "+FinderSearch+" answered it")
		}
		return c.CallText(ctx, *in.Name, in.Arguments)
	}
	return "", fmt.Errorf("otc client: %q is not one of the finder's tools (%s, %s)", tool, FinderSearch, FinderCall)
}
