package main

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"text/tabwriter"
	"time"
	"unicode/utf8"

	"github.com/otcgo/otc"
	"github.com/otcgo/otc/client"
	"github.com/otcgo/otc/export"
	"github.com/otcgo/otc/internal/a2awire"
)

// common are the options every command takes.
type common struct {
	json bool
	// as is the wire format the flags name (OTC when none); formats
	// counts the format flags given, of which one at most may be.
	as        format
	formats   int
	apiKey    string
	bearer    string
	jwtSecret string
	// stdio is the command line of an MCP server over stdio (--stdio),
	// given in place of the URL.
	stdio string
}

// stdioFlag is --stdio: the server is a process to start.
type stdioFlag struct{ c *common }

func (sf stdioFlag) String() string {
	if sf.c == nil {
		return ""
	}
	return sf.c.stdio
}

func (sf stdioFlag) Set(s string) error {
	sf.c.stdio = s
	sf.c.as, sf.c.formats = formatStdio, sf.c.formats+1
	return nil
}

// target splits the positional arguments into the server's URL ("" with
// --stdio, which takes its place) and the rest.
func (c *common) target(pos []string) (string, []string) {
	if c.as == formatStdio {
		return "", pos
	}
	if len(pos) == 0 {
		return "", nil
	}
	return pos[0], pos[1:]
}

// where names the server for a hint: the URL, or --stdio and its command.
func (c *common) where(url string) string {
	if c.as == formatStdio {
		return "--stdio " + strconv.Quote(c.stdio)
	}
	return c.protocolFlag() + url
}

// server is a tool server in the protocol the command speaks.
type server interface {
	list(ctx context.Context) ([]otc.ToolDefinition, error)
	// describe returns one tool's definition, found false when the
	// server has no such tool.
	describe(ctx context.Context, tool string) (def otc.ToolDefinition, found bool, err error)
	// call returns the tool's value, or its error as te; err for a call
	// that did not reach the tool. With d (--task), the call runs as a
	// task, named to d as soon as the server hands it out.
	call(ctx context.Context, tool string, input json.RawMessage, opts *client.CallOptions, d *taskDisplay) (value json.RawMessage, callID string, te *otc.ToolError, err error)
}

// protocolFlag is the flag that names the protocol, for hints: "--mcp ",
// "--rest " or "".
func (c *common) protocolFlag() string { return c.as.flag() }

// formatFlag is the boolean flag that names format f (--mcp, --rest,
// --a2a) of c.
type formatFlag struct {
	c *common
	f format
}

func (ff formatFlag) IsBoolFlag() bool { return true }

func (ff formatFlag) String() string {
	if ff.c != nil && ff.c.as == ff.f && ff.c.formats > 0 {
		return "true"
	}
	return "false"
}

func (ff formatFlag) Set(s string) error {
	on, err := strconv.ParseBool(s)
	if err != nil {
		return err
	}
	if on {
		ff.c.as, ff.c.formats = ff.f, ff.c.formats+1
	}
	return nil
}

func (c *common) register(fs *flag.FlagSet, getenv func(string) string) {
	fs.BoolVar(&c.json, "json", false, "print the raw answer as JSON")
	fs.Var(formatFlag{c, formatMCP}, "mcp", "URL is an MCP endpoint (Streamable HTTP)")
	fs.Var(formatFlag{c, formatA2A}, "a2a", "URL is an A2A agent (its Agent Card below it, JSON-RPC at it)")
	fs.Var(formatFlag{c, formatREST}, "rest", "URL is the base of a REST tool API (GET /tools, POST /tools/{name}:invoke)")
	fs.StringVar(&c.apiKey, "api-key", getenv("OTC_API_KEY"), "sent as OXP-API-Key")
	fs.StringVar(&c.bearer, "bearer", getenv("OTC_BEARER_TOKEN"), "sent as Authorization: Bearer")
	fs.StringVar(&c.jwtSecret, "jwt-secret", "", "sign an HS256 bearer token for each request")
	fs.Var(stdioFlag{c}, "stdio", "in place of the URL: run \"COMMAND ARGS…\" (split as a shell would, run without one) as an MCP server over stdio")
}

// parse parses args, flags and positional arguments mixed, as people type
// them: "otc call URL TOOL a=1 --json".
func parse(fs *flag.FlagSet, args []string) ([]string, error) {
	var positional []string
	for {
		if err := fs.Parse(args); err != nil {
			return nil, err
		}
		args = fs.Args()
		if len(args) == 0 {
			return positional, nil
		}
		positional = append(positional, args[0])
		args = args[1:]
	}
}

func newFlagSet(name string, stderr io.Writer) *flag.FlagSet {
	fs := flag.NewFlagSet("otc "+name, flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() { fmt.Fprint(stderr, usage) }
	return fs
}

// tools runs "otc tools URL [TOOL]".
func (e *cli) tools(ctx context.Context, args []string) int {
	fs := newFlagSet("tools", e.stderr)
	var o common
	o.register(fs, e.getenv)
	query := fs.String("search", "", "list the tools that match these words, best first (OTC servers that search, MCP servers with tools.dynamic)")
	limit := fs.Int("limit", 0, "with --search, at most this many tools (the server's default when 0)")
	pos, err := parse(fs, args)
	if err != nil {
		return exitBadInput
	}
	url, rest := o.target(pos)
	if url == "" && o.as != formatStdio || len(rest) > 1 {
		fmt.Fprintf(e.stderr, "otc tools: want URL (or --stdio COMMAND) and at most one TOOL, got %d arguments\n", len(pos))
		return exitBadInput
	}
	searching := false
	fs.Visit(func(f *flag.Flag) { searching = searching || f.Name == "search" })
	if searching && (len(rest) > 0 || o.as != formatOTC && o.as != formatMCP && o.as != formatStdio) {
		fmt.Fprintln(e.stderr, "otc tools: --search asks an OTC server's search (GET /tools?q=) or an MCP server's (tools/list with a query); give it a URL without a TOOL, and no --rest or --a2a")
		return exitBadInput
	}
	srv, err := o.server(ctx, url, e.stderr, nil)
	if err != nil {
		return e.serverFailed("tools", err)
	}
	defer srv.close()
	if len(rest) == 1 {
		d, ok, err := srv.describe(ctx, rest[0])
		if err != nil {
			return e.fail("tools", err)
		}
		if !ok {
			fmt.Fprintf(e.stderr, "otc tools: the server has no tool %q; \"otc tools %s\" lists them\n", rest[0], o.where(url))
			return exitRefused
		}
		if o.json {
			return e.printJSON(d)
		}
		e.describe(d)
		return exitOK
	}
	var defs []otc.ToolDefinition
	if searching {
		defs, err = srv.c.SearchTools(ctx, *query, *limit)
	} else {
		defs, err = srv.list(ctx)
	}
	if err != nil {
		return e.fail("tools", err)
	}
	// What a model could not take is not printed either: a name or a
	// description may carry anything, a terminal's escapes included.
	if _, err := export.New(defs, nil); err != nil {
		return e.fail("tools", err)
	}
	if o.json {
		return e.printJSON(defs)
	}
	var table strings.Builder
	w := tabwriter.NewWriter(&table, 0, 4, 2, ' ', 0)
	// A server that names its tools only (MCP) gets one column for both;
	// an A2A agent's skills their card's ids beside, when those differ.
	named := !slices.ContainsFunc(defs, func(d otc.ToolDefinition) bool { return d.ID != d.Name })
	skillIDs := make([]string, len(defs))
	for i, d := range defs {
		var m map[string]any
		_ = json.Unmarshal(d.Meta, &m)
		skillIDs[i], _ = m[a2awire.MetaSkillID].(string)
	}
	withSkills := slices.ContainsFunc(skillIDs, func(s string) bool { return s != "" })
	switch {
	case named && withSkills:
		fmt.Fprintln(w, "NAME\tSKILL ID\tDESCRIPTION")
	case named:
		fmt.Fprintln(w, "NAME\tDESCRIPTION")
	default:
		fmt.Fprintln(w, "ID\tNAME\tDESCRIPTION")
	}
	for i, d := range defs {
		switch {
		case named && withSkills:
			fmt.Fprintf(w, "%s\t%s\t%s\n", d.Name, cmp.Or(skillIDs[i], d.Name), shorten(d.Description, 60))
		case named:
			fmt.Fprintf(w, "%s\t%s\n", d.Name, shorten(d.Description, 60))
		default:
			fmt.Fprintf(w, "%s\t%s\t%s\n", d.ID, d.Name, shorten(d.Description, 60))
		}
	}
	_ = w.Flush()
	header, rows, _ := strings.Cut(table.String(), "\n")
	fmt.Fprintf(e.stdout, "%s\n%s", e.style(styleBold, header), rows)
	return exitOK
}

// findTool finds a tool by id (with or without a version) or by name;
// without a version, the highest listed.
func findTool(defs []otc.ToolDefinition, want string) (otc.ToolDefinition, bool) {
	ts, err := export.New(defs, nil)
	if err != nil {
		ts, _ = export.New(nil, nil) // a catalog a model cannot take: look the id up below
	}
	if d, ok := ts.Lookup(want); ok {
		return d, true
	}
	for _, d := range defs {
		if d.ID == want {
			return d, true
		}
	}
	key, _, _ := strings.Cut(want, "@")
	if d, ok := ts.Lookup(strings.ReplaceAll(key, ".", "_")); ok && !strings.Contains(want, "@") {
		return d, true
	}
	return otc.ToolDefinition{}, false
}

// describe prints one tool and its parameters as a tree.
func (e *cli) describe(d otc.ToolDefinition) {
	if d.ID == d.Name && d.Version != "" {
		d.ID += "@" + d.Version // a REST view names its tools, and says their versions
	}
	if d.ID == d.Name {
		fmt.Fprintf(e.stdout, "%s\n%s\n", d.Name, d.Description)
	} else {
		fmt.Fprintf(e.stdout, "%s (%s)\n%s\n", d.ID, d.Name, d.Description)
	}
	var schema map[string]any
	_ = json.Unmarshal(d.InputSchema.Parameters, &schema)
	props, _ := schema["properties"].(map[string]any)
	if len(props) == 0 {
		fmt.Fprintln(e.stdout, "\nNo parameters.")
	} else {
		fmt.Fprintln(e.stdout, "\nParameters:")
		e.tree(schema, "  ")
	}
	if d.Requirements != nil {
		var needs []string
		for _, s := range d.Requirements.Secrets {
			needs = append(needs, "secret "+s.ID)
		}
		for _, a := range d.Requirements.Authorization {
			needs = append(needs, "authorization "+a.ID)
		}
		if d.Requirements.UserID {
			needs = append(needs, "a user id")
		}
		fmt.Fprintf(e.stdout, "\nRequires: %s\n", strings.Join(needs, ", "))
	}
}

// tree prints the properties of an object schema, indented.
func (e *cli) tree(schema map[string]any, indent string) {
	props, _ := schema["properties"].(map[string]any)
	required := map[string]bool{}
	for _, r := range anyList(schema["required"]) {
		if s, ok := r.(string); ok {
			required[s] = true
		}
	}
	names := make([]string, 0, len(props))
	for n := range props {
		names = append(names, n)
	}
	slices.SortFunc(names, func(a, b string) int { // required first
		if required[a] != required[b] {
			if required[a] {
				return -1
			}
			return 1
		}
		return strings.Compare(a, b)
	})
	for _, n := range names {
		p, _ := props[n].(map[string]any)
		flag := "optional"
		if required[n] {
			flag = "required"
		}
		fmt.Fprintf(e.stdout, "%s%s  %s, %s%s\n", indent, n, typeText(p), flag, details(p))
		if d, ok := describedBy(p); ok {
			fmt.Fprintf(e.stdout, "%s    %s\n", indent, d)
		}
		if inner := objectOf(p); inner != nil {
			e.tree(inner, indent+"    ")
		}
	}
}

// typeText names the type a schema accepts: "integer", "string or null",
// "array of string".
func typeText(p map[string]any) string {
	if branches := anyList(p["anyOf"]); len(branches) > 0 {
		var parts []string
		for _, b := range branches {
			if bm, ok := b.(map[string]any); ok {
				parts = append(parts, typeText(bm))
			}
		}
		return strings.Join(parts, " or ")
	}
	t, _ := p["type"].(string)
	switch {
	case t == "array":
		if items, ok := p["items"].(map[string]any); ok {
			return "array of " + typeText(items)
		}
	case t == "":
		return "any"
	}
	return t
}

// details lists a schema's enum, bounds, format and default.
func details(p map[string]any) string {
	if branches := anyList(p["anyOf"]); len(branches) > 0 {
		if b, ok := branches[0].(map[string]any); ok {
			merged := map[string]any{}
			for k, v := range b {
				merged[k] = v
			}
			for k, v := range p {
				merged[k] = v
			}
			delete(merged, "anyOf")
			p = merged
		}
	}
	var parts []string
	text := func(v any) string { b, _ := json.Marshal(v); return string(b) }
	if enum := anyList(p["enum"]); len(enum) > 0 {
		var vals []string
		for _, v := range enum {
			vals = append(vals, text(v))
		}
		parts = append(parts, "one of "+strings.Join(vals, ", "))
	}
	for _, k := range []struct{ key, word string }{
		{"minimum", ">="}, {"exclusiveMinimum", ">"}, {"maximum", "<="}, {"exclusiveMaximum", "<"},
		{"minLength", "min length"}, {"maxLength", "max length"}, {"minItems", "min items"}, {"maxItems", "max items"},
		{"format", "format"}, {"pattern", "pattern"}, {"default", "default"},
	} {
		if v, ok := p[k.key]; ok {
			parts = append(parts, k.word+" "+text(v))
		}
	}
	if len(parts) == 0 {
		return ""
	}
	return "; " + strings.Join(parts, "; ")
}

func describedBy(p map[string]any) (string, bool) {
	d, ok := p["description"].(string)
	return d, ok && d != ""
}

// objectOf returns the object schema nested in p (itself, its items, or
// an anyOf branch), or nil.
func objectOf(p map[string]any) map[string]any {
	if _, ok := p["properties"].(map[string]any); ok {
		return p
	}
	if items, ok := p["items"].(map[string]any); ok {
		return objectOf(items)
	}
	for _, b := range anyList(p["anyOf"]) {
		if bm, ok := b.(map[string]any); ok {
			if o := objectOf(bm); o != nil {
				return o
			}
		}
	}
	return nil
}

func anyList(v any) []any {
	l, _ := v.([]any)
	return l
}

// shorten cuts s to n runes, with an ellipsis, on one line.
func shorten(s string, n int) string {
	s = strings.Join(strings.Fields(s), " ")
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	r := []rune(s)
	return strings.TrimSpace(string(r[:n-1])) + "…"
}

// call runs "otc call URL TOOL [input]".
func (e *cli) call(ctx context.Context, args []string) int {
	fs := newFlagSet("call", e.stderr)
	var o common
	o.register(fs, e.getenv)
	var callID, userID, inputFile string
	var sec []string
	var asTask bool
	fs.BoolVar(&asTask, "task", false, "with --mcp or --a2a: run the call as a task and follow it to its end")
	fs.StringVar(&callID, "call-id", "", "the call's id")
	fs.StringVar(&userID, "user-id", "", "the user the call acts for")
	fs.StringVar(&inputFile, "i", "", "read the input from FILE")
	fs.Func("secret", "a secret, ID=VALUE or ID (read from $ID)", func(v string) error { sec = append(sec, v); return nil })
	pos, err := parse(fs, args)
	if err != nil {
		return exitBadInput
	}
	url, rest := o.target(pos)
	if url == "" && o.as != formatStdio || len(rest) < 1 {
		fmt.Fprintln(e.stderr, "otc call: want URL (or --stdio COMMAND) and TOOL, then the input")
		return exitBadInput
	}
	tool, rest := rest[0], rest[1:]
	var opts client.CallOptions
	opts.CallID, opts.UserID = callID, userID
	for _, s := range sec {
		id, value, ok := strings.Cut(s, "=")
		if !ok {
			value = e.getenv(id)
			if value == "" {
				fmt.Fprintf(e.stderr, "otc call: --secret %s: $%s is empty; give --secret %s=VALUE or set it\n", id, id, id)
				return exitBadInput
			}
		}
		opts.Secrets = append(opts.Secrets, otc.ToolSecret{ID: id, Value: value})
	}
	if asTask && o.as != formatMCP && o.as != formatStdio && o.as != formatA2A {
		fmt.Fprintln(e.stderr, "otc call: --task is for MCP servers and A2A agents: give --mcp and the MCP endpoint's URL, --stdio, or --a2a and the agent's URL")
		return exitBadInput
	}
	a := e.answerer(o.json)
	srv, err := o.server(ctx, url, e.stderr, func(co *client.Options) {
		co.Handlers = a.handlers()
		if asTask && o.as != formatA2A {
			co.MCPVersion, co.Tasks = mcpVersionTasks, true
		}
	})
	if err != nil {
		return e.serverFailed("call", err)
	}
	defer srv.close()
	input, code := e.input(ctx, srv, tool, rest, inputFile)
	if code != exitOK {
		return code
	}
	var stop func()
	var task *taskDisplay
	if asTask {
		task = e.showTask()
		a.before, opts.Progress, stop = task.clear, task.show, task.clear
	} else {
		spin, set := e.spinText("calling " + tool + "…")
		stop = sync.OnceFunc(spin)
		a.before = stop
		// The tool's progress, on a terminal: the spinner's line says
		// it; piped output never does.
		opts.Progress = func(p client.Progress) { set("calling " + tool + "… " + progressText(p)) }
	}
	value, gotID, te, err := srv.call(ctx, tool, input, &opts, task)
	stop()
	switch {
	case a.refused != nil:
		fmt.Fprintf(e.stderr, "otc call: %v\n", a.refused)
		return exitInput
	case ctx.Err() != nil && err != nil:
		fmt.Fprintf(e.stderr, "otc call: %v\n", task.interrupted(err))
		return exitInterrupted
	case te != nil:
		if o.json {
			_ = e.printJSON(map[string]any{"call_id": gotID, "success": false, "error": te})
		} else {
			fmt.Fprintf(e.stdout, "%s %s\n", e.style(styleRed, "Tool error:"), te.Message)
			if te.AdditionalPromptContent != "" {
				fmt.Fprintf(e.stdout, "  hint: %s\n", te.AdditionalPromptContent)
			}
			if te.CanRetry {
				retry := "  may succeed if tried again"
				if te.RetryAfter > 0 {
					retry += " after " + te.RetryAfter.String()
				}
				fmt.Fprintln(e.stdout, retry)
			}
			if te.DeveloperMessage != "" {
				// What the server says happened, for the person at the
				// terminal; stdout keeps what the model would read.
				fmt.Fprintf(e.stderr, "  cause: %s\n", te.DeveloperMessage)
			}
		}
		return exitToolError
	case err != nil:
		return e.fail("call", err)
	}
	if o.json {
		return e.printJSON(map[string]any{"call_id": gotID, "success": true, "value": value})
	}
	if value == nil {
		fmt.Fprintln(e.stdout, "Done (no value).")
		return exitOK
	}
	var pretty any
	if json.Unmarshal(value, &pretty) == nil {
		if s, ok := pretty.(string); ok {
			fmt.Fprintln(e.stdout, s) // a string is its text (--json keeps it JSON)
			return exitOK
		}
		b, _ := json.MarshalIndent(pretty, "", "  ")
		fmt.Fprintln(e.stdout, string(b))
	}
	return exitOK
}

// input reads the call's input: a JSON object, key=value pairs coerced by
// the tool's schema, a file (-i), or standard input ("-" or -i -). No
// input is {}.
func (e *cli) input(ctx context.Context, srv server, tool string, rest []string, file string) (json.RawMessage, int) {
	var raw []byte
	switch {
	case file != "" || len(rest) == 1 && rest[0] == "-":
		var err error
		if file == "" || file == "-" {
			raw, err = io.ReadAll(io.LimitReader(e.stdin, 16<<20))
		} else {
			raw, err = os.ReadFile(file)
		}
		if err != nil {
			fmt.Fprintf(e.stderr, "otc call: reading the input: %v\n", err)
			return nil, exitBadInput
		}
	case len(rest) == 1 && strings.HasPrefix(strings.TrimSpace(rest[0]), "{"):
		raw = []byte(rest[0])
	case len(rest) > 0:
		return e.pairs(ctx, srv, tool, rest)
	default:
		return json.RawMessage(`{}`), exitOK
	}
	var obj map[string]json.RawMessage
	if err := json.Unmarshal(raw, &obj); err != nil || obj == nil {
		fmt.Fprintf(e.stderr, "otc call: the input must be a JSON object: %v\n", errOr(err, "got null"))
		return nil, exitBadInput
	}
	return raw, exitOK
}

func errOr(err error, s string) string {
	if err != nil {
		return err.Error()
	}
	return s
}

// fail prints a failure that is not a tool error and returns its exit
// code: the server's refusal (with parameter errors next to their
// parameters), or a transport failure.
func (e *cli) fail(cmd string, err error) int {
	var se *otc.Error
	var re *client.ResponseError
	switch {
	case errors.As(err, &se):
		fmt.Fprintf(e.stderr, "otc %s: %s\n", cmd, se.Message)
		if se.DeveloperMessage != "" {
			fmt.Fprintf(e.stderr, "  %s\n", se.DeveloperMessage)
		}
		names := make([]string, 0, len(se.ParameterErrors))
		for n := range se.ParameterErrors {
			names = append(names, n)
		}
		slices.Sort(names)
		for _, n := range names {
			fmt.Fprintf(e.stderr, "  %s: %s\n", n, se.ParameterErrors[n])
		}
		if mr := se.MissingRequirements; mr != nil {
			for _, s := range mr.Secrets {
				fmt.Fprintf(e.stderr, "  missing secret %s: add --secret %s=VALUE\n", s.ID, s.ID)
			}
			if mr.UserID {
				fmt.Fprintln(e.stderr, "  missing user id: add --user-id ID")
			}
		}
		switch se.Code {
		case otc.CodeInvalidInput:
			return exitBadInput
		case otc.CodeRateLimited, otc.CodeUnavailable:
			if se.RetryAfter > 0 {
				fmt.Fprintf(e.stderr, "  try again after %s\n", se.RetryAfter.Round(time.Millisecond))
			} else {
				fmt.Fprintln(e.stderr, "  try again later")
			}
			return exitBusy
		}
		return exitRefused
	case errors.As(err, &re):
		fmt.Fprintf(e.stderr, "otc %s: %v\n", cmd, re)
		return exitTransport
	}
	if oe, ok := errors.AsType[*client.OriginError](err); ok && strings.Contains(oe.What, "Agent Card") {
		fmt.Fprintf(e.stderr, "otc %s: %v: --a2a %s\n", cmd, err, oe.Named)
		return exitTransport
	}
	fmt.Fprintf(e.stderr, "otc %s: %v\n", cmd, err)
	return exitTransport
}

func (e *cli) printJSON(v any) int {
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		fmt.Fprintf(e.stderr, "otc: %v\n", err)
		return exitTransport
	}
	out := e.rawStdout // JSON as it is, to a terminal too
	if out == nil {
		out = e.stdout
	}
	fmt.Fprintln(out, string(b))
	return exitOK
}

// progressText is a call's progress as its spinner line says it: "2/3",
// or "2", and the message.
func progressText(p client.Progress) string {
	var parts []string
	switch {
	case p.Total > 0:
		parts = append(parts, strconv.FormatFloat(p.Progress, 'f', -1, 64)+"/"+strconv.FormatFloat(p.Total, 'f', -1, 64))
	case p.Progress > 0:
		parts = append(parts, strconv.FormatFloat(p.Progress, 'f', -1, 64))
	}
	if p.Message != "" {
		parts = append(parts, shorten(p.Message, 60))
	}
	return strings.Join(parts, " ")
}
