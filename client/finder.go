package client

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/otcgo/otc"
	"github.com/otcgo/otc/internal/modeltext"
	"github.com/otcgo/otc/internal/searchargs"
)

// The tools a client hands a model in place of a catalog too large to show
// it whole ([FinderTools]), named as a server's search mode names its own.
const (
	// FinderSearch finds the tools that do what the model describes.
	FinderSearch = "search_tools"
	// FinderCall calls a tool by its name.
	FinderCall = "call_tool"
	// finderMax is the most tools a search asks for: otc's servers answer
	// at most that many.
	finderMax = 100
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
			InputSchema: otc.InputSchema{Parameters: searchargs.SearchSchema("tools", finderMax)}},
		{ID: FinderCall, Name: FinderCall, Version: "1.0.0",
			Description: "Calls a tool by the name " + FinderSearch + " gave, with arguments as its input schema describes them.",
			InputSchema: otc.InputSchema{Parameters: searchargs.CallSchema(FinderSearch)}},
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
	invalid := func(param, problem string) (string, error) {
		return modeltext.InvalidArguments(map[string]string{param: problem}), nil
	}
	switch tool {
	case FinderSearch:
		query, limit, p := searchargs.Search(args, finderMax)
		if p != nil {
			return invalid(p.Param, p.Text)
		}
		defs, err := c.SearchTools(ctx, query, limit)
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
		name, callArgs, p := searchargs.Call(args, FinderSearch)
		if p != nil {
			return invalid(p.Param, p.Text)
		}
		return c.CallText(ctx, name, callArgs)
	}
	return "", fmt.Errorf("otc client: %q is not one of the finder's tools (%s, %s)", tool, FinderSearch, FinderCall)
}
