package main

import (
	"context"
	"embed"
	"errors"
	"fmt"
	"io/fs"
	"math"
	"strings"

	"github.com/otcgo/otc"
	"github.com/otcgo/otc/prompt"
	"github.com/otcgo/otc/resource"
	"github.com/otcgo/otc/skill"
)

// The calculator serves, beside its tools, what a client reads rather
// than calls (over MCP: resources/list, resources/read,
// resources/templates/list, prompts/list, prompts/get,
// completion/complete):
//   - calc://constants, a resource: the constants the calculator knows;
//   - calc://tables/{op}/{n}{?upto}, a template: the table of an
//     operation for a number, typed (op one of add and multiply, n and
//     upto whole numbers);
//   - calc://notes/{path*}, a template: the calculator's notes, files of
//     its notes folder (embedded), by path;
//   - explain_expression, a prompt that asks a model to explain an
//     expression step by step;
//   - using-the-calculator, a skill (MCP's skills extension): how to use
//     the calculator's tools well.

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

// skillsFS holds the calculator's skills.
//
//go:embed skills
var skillsFS embed.FS

// notesFS holds the notes calc://notes/{path*} reads.
//
//go:embed notes
var notesFS embed.FS

// NoteArgs are the variables of calc://notes/{path*}.
type NoteArgs struct {
	Path string `json:"path" jsonschema:"required,maxLength=256,description=The note's path in the notes folder (guide/limits.txt)."`
}

// readNote reads a note. A path that is not a plain path inside the
// folder (one that climbs out with "..", even percent-encoded, one that
// starts with "/", one with empty parts) names nothing: fs.ValidPath
// refuses it before any file is opened.
func readNote(_ context.Context, in NoteArgs) (string, error) {
	if !fs.ValidPath(in.Path) {
		return "", resource.ErrNotFound
	}
	b, err := fs.ReadFile(notesFS, "notes/"+in.Path)
	if err != nil {
		return "", fmt.Errorf("%s: %w", in.Path, resource.ErrNotFound)
	}
	return string(b), nil
}

// registerReadables registers the calculator's resource, templates and
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
	_, err4 := resource.RegisterTemplate(reg, resource.Template[NoteArgs]{
		URITemplate: "calc://notes/{path*}", Name: "note", Title: "A note",
		Description: "A note of the calculator's (precedence.txt, guide/limits.txt): how it evaluates, and its limits.", MIMEType: "text/plain",
		Complete: func(_ context.Context, _, prefix string, _ NoteArgs) ([]string, error) {
			var out []string
			err := fs.WalkDir(notesFS, "notes", func(p string, d fs.DirEntry, err error) error {
				if err == nil && !d.IsDir() {
					if rel := strings.TrimPrefix(p, "notes/"); strings.HasPrefix(rel, prefix) {
						out = append(out, rel)
					}
				}
				return err
			})
			return out, err
		},
	}, readNote)
	_, err3 := prompt.Register(reg, prompt.Prompt[ExplainArgs]{
		Name: "explain_expression", Title: "Explain an expression",
		Description: "Asks for an expression to be explained step by step, in the order the calculator evaluates it.",
	}, func(_ context.Context, in ExplainArgs) (string, error) {
		return fmt.Sprintf("Explain, step by step and for a %s, how %s is evaluated: which operation comes first and why, and what each step gives.", in.Audience, in.Expression), nil
	})
	skills, err5 := fs.Sub(skillsFS, "skills")
	if err5 == nil {
		_, err5 = skill.Register(reg, skills, nil)
	}
	return errors.Join(err1, err2, err3, err4, err5)
}
