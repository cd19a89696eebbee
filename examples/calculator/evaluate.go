package main

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"unicode"

	"github.com/otcgo/otc"
)

// EvaluateInput is the input of Math.Evaluate, the example's tool
// for text: A2A routes a message of text to it (a2a.Options.TextTool).
type EvaluateInput struct {
	Expression string `json:"expression" jsonschema:"description=An arithmetic expression: numbers with + - * / and parentheses (such as 2 + 3 * 4).,maxLength=200,example=2 + 3 * 4"`
}

// evaluateTool is Math.Evaluate: it may run as a task, so that an
// A2A client that only speaks text gets one.
var evaluateTool = otc.Tool{
	ID:                "Math.Evaluate",
	Version:           "1.0.0",
	Description:       "Evaluates an arithmetic expression written as text, such as 2 + 3 * 4: numbers with + - * / and parentheses.",
	OutputDescription: "The expression's value.",
	Title:             "Evaluate an expression",
	Tasks:             otc.TasksOptional,
	Annotations:       &otc.ToolAnnotations{ReadOnlyHint: new(true), IdempotentHint: new(true), OpenWorldHint: new(false)},
}

// evaluate evaluates in's expression, or answers with a tool error that
// shows the form.
func evaluate(_ context.Context, in EvaluateInput) (float64, error) {
	p := &exprParser{s: in.Expression}
	v, err := p.sum()
	if err == nil {
		p.space()
		if p.i < len(p.s) {
			err = fmt.Errorf("unexpected %q at position %d", p.s[p.i:p.i+1], p.i+1)
		}
	}
	if err != nil {
		return 0, &otc.ToolError{Message: "Not an arithmetic expression: " + err.Error(),
			AdditionalPromptContent: "Send numbers with + - * / and parentheses, such as 2 + 3 * 4."}
	}
	return v, nil
}

// exprParser reads an expression by recursive descent: a sum of products
// of factors (a number, a signed factor, or a sum in parentheses).
type exprParser struct {
	s     string
	i     int
	depth int
}

// maxDepth bounds the nesting of parentheses and signs.
const maxDepth = 50

func (p *exprParser) space() {
	for p.i < len(p.s) && unicode.IsSpace(rune(p.s[p.i])) {
		p.i++
	}
}

func (p *exprParser) sum() (float64, error) {
	v, err := p.product()
	for err == nil {
		p.space()
		if p.i >= len(p.s) || p.s[p.i] != '+' && p.s[p.i] != '-' {
			return v, nil
		}
		op := p.s[p.i]
		p.i++
		var w float64
		if w, err = p.product(); op == '+' {
			v += w
		} else {
			v -= w
		}
	}
	return 0, err
}

func (p *exprParser) product() (float64, error) {
	v, err := p.factor()
	for err == nil {
		p.space()
		if p.i >= len(p.s) || p.s[p.i] != '*' && p.s[p.i] != '/' {
			return v, nil
		}
		op := p.s[p.i]
		p.i++
		var w float64
		if w, err = p.factor(); err != nil {
			break
		}
		switch {
		case op == '*':
			v *= w
		case w == 0:
			return 0, fmt.Errorf("division by zero at position %d", p.i)
		default:
			v /= w
		}
	}
	return 0, err
}

func (p *exprParser) factor() (float64, error) {
	p.space()
	if p.depth++; p.depth > maxDepth {
		return 0, fmt.Errorf("nested deeper than %d", maxDepth)
	}
	defer func() { p.depth-- }()
	switch {
	case p.i >= len(p.s):
		return 0, fmt.Errorf("it ends where a number was expected")
	case p.s[p.i] == '-' || p.s[p.i] == '+':
		neg := p.s[p.i] == '-'
		p.i++
		v, err := p.factor()
		if neg {
			v = -v
		}
		return v, err
	case p.s[p.i] == '(':
		p.i++
		v, err := p.sum()
		if err != nil {
			return 0, err
		}
		p.space()
		if p.i >= len(p.s) || p.s[p.i] != ')' {
			return 0, fmt.Errorf("a parenthesis is not closed")
		}
		p.i++
		return v, nil
	}
	start := p.i
	for p.i < len(p.s) && (p.s[p.i] >= '0' && p.s[p.i] <= '9' || p.s[p.i] == '.') {
		p.i++
	}
	v, err := strconv.ParseFloat(p.s[start:p.i], 64)
	if err != nil {
		word := strings.Fields(p.s[start:])
		if len(word) == 0 {
			return 0, fmt.Errorf("it ends where a number was expected")
		}
		return 0, fmt.Errorf("%q at position %d is not a number", word[0], start+1)
	}
	return v, nil
}
