package main

import (
	"context"
	"errors"
	"fmt"
	"math"
	"strings"

	"github.com/otcgo/otc"
	"github.com/otcgo/otc/prompt"
	"github.com/otcgo/otc/resource"
)

// The calculator serves, beside its tools, what a client reads rather
// than calls (over MCP: resources/list, resources/read,
// resources/templates/list, prompts/list, prompts/get,
// completion/complete):
//   - calc://constants, a resource: the constants the calculator knows;
//   - calc://tables/{op}/{n}{?upto}, a template: the table of an
//     operation for a number, typed (op one of add and multiply, n and
//     upto whole numbers);
//   - explain_expression, a prompt that asks a model to explain an
//     expression step by step.

// Constants are the contents of calc://constants.
type Constants struct {
	Pi  float64 `json:"pi"`
	E   float64 `json:"e"`
	Phi float64 `json:"phi"`
}

// TableArgs are the variables of calc://tables/{op}/{n}{?upto}.
type TableArgs struct {
	Op   string `json:"op" jsonschema:"required,enum=add,enum=multiply,description=The operation of the table."`
	N    int    `json:"n" jsonschema:"required,minimum=0,maximum=1000,description=The number whose table it is."`
	Upto int    `json:"upto,omitempty" jsonschema:"minimum=1,maximum=100,default=10,description=The last row."`
}

// ExplainArgs are the arguments of the explain_expression prompt.
type ExplainArgs struct {
	Expression string `json:"expression" jsonschema:"required,description=The expression to explain (1 + 2 * 3)."`
	Audience   string `json:"audience,omitempty" jsonschema:"enum=child,enum=student,enum=engineer,default=student,description=Whom to explain it to."`
}

// registerReadables registers the calculator's resource, template and
// prompt.
func registerReadables(reg *otc.Registry) error {
	_, err1 := resource.Register(reg, resource.Resource{
		URI: "calc://constants", Name: "constants", Title: "Constants",
		Description: "The mathematical constants the calculator knows, as JSON.", MIMEType: "application/json",
	}, func(context.Context) (Constants, error) {
		return Constants{Pi: math.Pi, E: math.E, Phi: math.Phi}, nil
	})
	_, err2 := resource.RegisterTemplate(reg, resource.Template[TableArgs]{
		URITemplate: "calc://tables/{op}/{n}{?upto}", Name: "table", Title: "Table of an operation",
		Description: "The table of addition or multiplication for a number, one row a line.", MIMEType: "text/plain",
	}, func(_ context.Context, in TableArgs) (string, error) {
		var b strings.Builder
		for i := 1; i <= in.Upto; i++ {
			if in.Op == "add" {
				fmt.Fprintf(&b, "%d + %d = %d\n", in.N, i, in.N+i)
			} else {
				fmt.Fprintf(&b, "%d × %d = %d\n", in.N, i, in.N*i)
			}
		}
		return b.String(), nil
	})
	_, err3 := prompt.Register(reg, prompt.Prompt[ExplainArgs]{
		Name: "explain_expression", Title: "Explain an expression",
		Description: "Asks for an expression to be explained step by step, in the order the calculator evaluates it.",
	}, func(_ context.Context, in ExplainArgs) (string, error) {
		return fmt.Sprintf("Explain, step by step and for a %s, how %s is evaluated: which operation comes first and why, and what each step gives.", in.Audience, in.Expression), nil
	})
	return errors.Join(err1, err2, err3)
}
