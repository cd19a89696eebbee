package main

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"

	"github.com/otcgo/otc/internal/jsonrpc"
)

// This file is how "otc call" answers a tool that asks its user something
// over MCP (an elicitation): on a terminal it shows the question and the
// fields of the form as a prompt on standard error and reads the answers
// from standard input; with --json, or when standard input is not a
// terminal, it cannot ask anyone, and the command fails with exitInput
// rather than wait. otc has no model and no roots, so it declares neither
// sampling nor roots; a server that asks anyway is told the client has no
// handler for it (the client package answers so).

// errNoPrompt is the failure of a call whose tool asked something otc
// could not answer: a question for its user where otc cannot prompt, or
// a completion from a model in a 2026-07-28 round, which has no way to
// decline one.
type errNoPrompt struct {
	what    string // "its user a question"
	why     string // "--json was given", "standard input is not a terminal"
	message string // the tool's question
	hint    string
}

func (e *errNoPrompt) Error() string {
	q := ""
	if e.message != "" {
		q = " (" + strconv.Quote(shorten(e.message, 120)) + ")"
	}
	s := "the tool asked " + e.what + q + ", and otc cannot answer: " + e.why
	if e.hint != "" {
		s += "; " + e.hint
	}
	return s
}

// noPrompt is the failure of a question for the user where otc cannot
// prompt.
func noPrompt(why, message string) *errNoPrompt {
	return &errNoPrompt{what: "its user a question", why: why, message: message,
		hint: "run otc call on a terminal without --json to answer it"}
}

// errDeclined is a request otc does not answer, with the JSON-RPC code of
// the refusal.
type errDeclined struct {
	code    int
	message string
}

func (e *errDeclined) Error() string { return e.message }

// inputAnswerer answers the questions of a call's tool: elicitations by
// prompting, or not at all.
type inputAnswerer struct {
	// prompt is false when otc may not prompt; why then says why.
	prompt bool
	why    string
	in     *bufio.Reader
	out    io.Writer
	// refused is set when a question could not be put to the user.
	refused *errNoPrompt
	// before, when not nil, is called before anything is written: it
	// clears what the terminal shows meanwhile (a spinner, a task's
	// status).
	before func()
}

// elicitation is the params of elicitation/create.
type elicitation struct {
	Mode            string `json:"mode"`
	Message         string `json:"message"`
	URL             string `json:"url"`
	RequestedSchema struct {
		Properties map[string]map[string]any `json:"properties"`
		Required   []string                  `json:"required"`
	} `json:"requestedSchema"`
}

// elicit puts an elicitation to the user and returns the ElicitResult.
func (a *inputAnswerer) elicit(params json.RawMessage) (json.RawMessage, error) {
	var q elicitation
	if err := json.Unmarshal(params, &q); err != nil {
		return nil, &errDeclined{code: jsonrpc.CodeInvalidParams, message: "Invalid params: the elicitation is not an object otc can read: " + err.Error()}
	}
	if !a.prompt {
		a.refused = noPrompt(a.why, q.Message)
		return nil, &errDeclined{code: jsonrpc.CodeInternalError, message: "otc call cannot prompt its user (" + a.why + ")"}
	}
	if a.before != nil {
		a.before()
	}
	fmt.Fprintf(a.out, "\nThe tool asks: %s\n", q.Message)
	if q.Mode == "url" {
		fmt.Fprintf(a.out, "  open %s\n", q.URL)
	}
	names := slices.Sorted(func(yield func(string) bool) {
		for k := range q.RequestedSchema.Properties {
			if !yield(k) {
				return
			}
		}
	})
	for _, n := range names {
		fmt.Fprintf(a.out, "  %s\n", fieldLine(n, q.RequestedSchema.Properties[n], slices.Contains(q.RequestedSchema.Required, n)))
	}
	action, ok := a.choose()
	if !ok || action != "accept" || q.Mode == "url" {
		if !ok {
			action = "cancel" // standard input ended
		}
		return json.Marshal(map[string]string{"action": action})
	}
	content := map[string]any{}
	for _, n := range names {
		v, set, ok := a.field(n, q.RequestedSchema.Properties[n], slices.Contains(q.RequestedSchema.Required, n))
		if !ok {
			return json.Marshal(map[string]string{"action": "cancel"})
		}
		if set {
			content[n] = v
		}
	}
	return json.Marshal(map[string]any{"action": "accept", "content": content})
}

// line reads a line of standard input; false at its end.
func (a *inputAnswerer) line(prompt string) (string, bool) {
	fmt.Fprint(a.out, prompt)
	s, err := a.in.ReadString('\n')
	if err != nil && s == "" {
		fmt.Fprintln(a.out)
		return "", false
	}
	return strings.TrimSpace(s), true
}

// choose asks for the action: accept, decline or cancel.
func (a *inputAnswerer) choose() (string, bool) {
	for {
		s, ok := a.line("Answer? [a]ccept, [d]ecline, [c]ancel: ")
		if !ok {
			return "", false
		}
		switch strings.ToLower(s) {
		case "a", "accept", "y", "yes", "":
			return "accept", true
		case "d", "decline", "n", "no":
			return "decline", true
		case "c", "cancel":
			return "cancel", true
		}
		fmt.Fprintln(a.out, "  type a, d or c")
	}
}

// options returns the values an enum field may take, with their titles.
func options(p map[string]any) (values []string, titles []string) {
	for _, v := range anyList(p["enum"]) {
		values = append(values, fmt.Sprint(v))
	}
	names := anyList(p["enumNames"])
	for _, o := range anyList(p["oneOf"]) {
		m, _ := o.(map[string]any)
		if c, ok := m["const"]; ok {
			values = append(values, fmt.Sprint(c))
			t, _ := m["title"].(string)
			titles = append(titles, t)
		}
	}
	if len(titles) == 0 && len(names) == len(values) {
		for _, n := range names {
			titles = append(titles, fmt.Sprint(n))
		}
	}
	return values, titles
}

// itemOptions are the values of a multi-select (an array of an enum).
func itemOptions(p map[string]any) ([]string, []string) {
	items, _ := p["items"].(map[string]any)
	if items == nil {
		return nil, nil
	}
	if alts := anyList(items["anyOf"]); alts != nil {
		return options(map[string]any{"oneOf": alts})
	}
	return options(items)
}

// fieldLine describes a field of a form: its name, type, choices,
// default and description.
func fieldLine(name string, p map[string]any, required bool) string {
	typ, _ := p["type"].(string)
	b := name + " (" + typ
	if required {
		b += ", required"
	}
	b += ")"
	values, titles := options(p)
	if typ == "array" {
		values, titles = itemOptions(p)
		b += " choose any of"
	}
	if len(values) > 0 {
		choices := make([]string, len(values))
		for i, v := range values {
			choices[i] = strconv.Itoa(i+1) + ") " + v
			if i < len(titles) && titles[i] != "" && titles[i] != v {
				choices[i] += " " + titles[i]
			}
		}
		b += " [" + strings.Join(choices, ", ") + "]"
	}
	if d, ok := p["default"]; ok {
		dj, _ := json.Marshal(d)
		b += " default " + string(dj)
	}
	desc, _ := p["description"].(string)
	if t, _ := p["title"].(string); t != "" && desc == "" {
		desc = t
	}
	if desc != "" {
		b += ": " + desc
	}
	return b
}

// field reads the value of one field, until it fits the field's type:
// set is false when the user left an optional field without a default
// empty; ok is false when standard input ended.
func (a *inputAnswerer) field(name string, p map[string]any, required bool) (v any, set bool, ok bool) {
	typ, _ := p["type"].(string)
	for {
		s, ok := a.line(name + ": ")
		if !ok {
			return nil, false, false
		}
		if s == "" {
			if d, has := p["default"]; has {
				return d, true, true
			}
			if !required {
				return nil, false, true
			}
			fmt.Fprintln(a.out, "  required")
			continue
		}
		v, err := readValue(typ, p, s)
		if err == nil {
			return v, true, true
		}
		fmt.Fprintf(a.out, "  %v\n", err)
	}
}

// readValue reads s as a value of a field of type typ.
func readValue(typ string, p map[string]any, s string) (any, error) {
	pick := func(values []string, s string) (string, error) {
		if i, err := strconv.Atoi(s); err == nil && i >= 1 && i <= len(values) {
			return values[i-1], nil
		}
		if slices.Contains(values, s) {
			return s, nil
		}
		return "", fmt.Errorf("%q is not one of the choices: give its number or its value", s)
	}
	switch typ {
	case "boolean":
		switch strings.ToLower(s) {
		case "y", "yes", "true", "t", "1":
			return true, nil
		case "n", "no", "false", "f", "0":
			return false, nil
		}
		return nil, errors.New("answer yes or no")
	case "integer":
		n, err := strconv.ParseInt(s, 10, 64)
		if err != nil {
			return nil, fmt.Errorf("%q is not an integer", s)
		}
		return n, nil
	case "number":
		f, err := strconv.ParseFloat(s, 64)
		if err != nil {
			return nil, fmt.Errorf("%q is not a number", s)
		}
		return f, nil
	case "array":
		values, _ := itemOptions(p)
		var out []string
		for part := range strings.SplitSeq(s, ",") {
			part = strings.TrimSpace(part)
			if part == "" {
				continue
			}
			if values != nil {
				v, err := pick(values, part)
				if err != nil {
					return nil, err
				}
				part = v
			}
			out = append(out, part)
		}
		return out, nil
	}
	if values, _ := options(p); values != nil {
		return pick(values, s)
	}
	return s, nil
}
