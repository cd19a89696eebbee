package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/otcgo/otc"
	"github.com/otcgo/otc/export"
)

// This file is "otc check" of a server that is not an OTC server: an MCP
// endpoint (over HTTP or stdio), a REST view or an A2A agent. The checks
// that apply to every format go through the client package; the OTC
// protocol's own (health, $schema, the error bodies and statuses, the
// body limit, credentials) are OTC's, and are not run.

// formatChecks names the checks of checkFormat, for the line that says
// which apply.
const formatChecks = "catalog, names and schemas, unknown tool, and with --tool: the call, invalid input"

// checkFormat runs the checks that apply to any format against srv.
func (c *checker) checkFormat(ctx context.Context, srv *remote, f format, tool string, input json.RawMessage) {
	defs, err := srv.list(ctx)
	c.record("catalog", "the server lists its tools", errText(err))
	if err != nil {
		return
	}
	_, err = export.New(defs, nil)
	problem := errText(err)
	for _, d := range defs {
		var s map[string]any
		if json.Unmarshal(d.InputSchema.Parameters, &s) != nil || s["type"] != "object" {
			problem = strings.TrimPrefix(problem+"; ", "; ") + d.Name + ": the input schema is not a JSON Schema object of type \"object\""
		}
	}
	c.record("names and schemas", "every tool has a name a model can take and an input schema of type object", problem)

	rule := "a call of a tool the server does not have is refused, before any tool runs"
	if f == formatA2A {
		c.skip("unknown tool", rule, "an A2A agent routes messages, not tool names")
	} else {
		_, err := srv.c.Call(ctx, "Otc_Check_Tool_That_Does_Not_Exist", map[string]any{}, nil)
		problem := ""
		if _, ok := errors.AsType[*otc.Error](err); !ok {
			problem = "not refused: " + errOr(err, "the call succeeded")
		}
		c.record("unknown tool", rule, problem)
	}

	if tool == "" {
		c.skip("call", "the named tool answers the input given", "calls no tool unless named with --tool")
		c.skip("invalid input", "input the schema refuses is refused, naming the parameter", "calls no tool unless named with --tool")
		return
	}
	d, ok := findTool(defs, tool)
	if !ok {
		c.record("call", "the named tool answers the input given", "the catalog does not list "+tool)
		return
	}
	_, err = srv.c.Call(ctx, d.ID, input, nil)
	problem = ""
	if _, ok := errors.AsType[*otc.ToolError](err); err != nil && !ok {
		problem = err.Error()
	}
	c.record("call", "the named tool answers the input given (a value or a tool error)", problem)

	rule = "input the schema refuses is refused, naming the parameter"
	param, bad := refusedInput(d.InputSchema.Parameters)
	if param == "" {
		c.skip("invalid input", rule, "the schema of "+tool+" refuses nothing otc check can send safely")
		return
	}
	_, err = srv.c.Call(ctx, d.ID, bad, nil)
	problem = ""
	switch e, ok := errors.AsType[*otc.Error](err); {
	case !ok:
		problem = "not refused as invalid input: " + errOr(err, "the call succeeded")
	case e.Code != otc.CodeInvalidInput:
		problem = fmt.Sprintf("refused as %s, not invalid input: %s", e.Code, e.Message)
	case e.ParameterErrors[param] == "":
		problem = fmt.Sprintf("the refusal does not name %q: %v", param, e.ParameterErrors)
	}
	c.record("invalid input", rule, problem)
}

// refusedInput is an input the schema refuses, and the parameter it is
// wrong about: an unknown parameter where the schema forbids them, or a
// value of the wrong type for a required parameter.
func refusedInput(schema json.RawMessage) (string, map[string]any) {
	var params map[string]any
	if json.Unmarshal(schema, &params) != nil {
		return "", nil
	}
	if params["additionalProperties"] == false {
		return "otc_check_unknown_parameter", map[string]any{"otc_check_unknown_parameter": true}
	}
	props, _ := params["properties"].(map[string]any)
	for _, r := range anyList(params["required"]) {
		name, _ := r.(string)
		p, _ := props[name].(map[string]any)
		switch p["type"] {
		case "number", "integer", "boolean", "object", "array":
			return name, map[string]any{name: "otc-check-wrong-type"}
		case "string":
			return name, map[string]any{name: 12345}
		}
	}
	return "", nil
}
