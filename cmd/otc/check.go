package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/golang-jwt/jwt/v5"
	"golang.org/x/mod/semver"

	"github.com/otcgo/otc/client"
)

// This file is "otc check": a conformance check of any OTC/OXP 1.0
// server. It calls no tool unless the user names one (--tool), and then
// only with the input the user gives (--input): every other check sends
// requests that a conforming server refuses before any tool runs (a tool
// that does not exist, a malformed body, a body over the limit).

// exitCheckFailed is the exit code of a check that found a failure.
const exitCheckFailed = 5

// checkNamespace names the tool the checks call: no server has it.
const checkNamespace = "Otc_Check.Tool_That_Does_Not_Exist"

// The protocol's accepted spellings of version 1.0.
var schemaSpellings = []string{"otc://1.0", "urn:oxp:1.0", "https://github.com/OpenToolCalling/Specification/tree/main/spec/http/1.0/openapi.json"}

var (
	toolIDPattern   = regexp.MustCompile(`^[A-Za-z0-9_]+\.[A-Za-z0-9_]+@(0|[1-9][0-9]*)\.(0|[1-9][0-9]*)\.(0|[1-9][0-9]*)$`)
	toolNamePattern = regexp.MustCompile(`^[A-Za-z0-9_-]{1,64}$`)
)

// checker runs the checks against one server.
type checker struct {
	base    string
	http    *http.Client
	header  http.Header // credentials
	maxBody int64
	results []checkResult
}

// checkResult is one check: the rule, and what was seen when it failed.
type checkResult struct {
	Name   string `json:"name"`
	Rule   string `json:"rule"`
	Pass   bool   `json:"pass"`
	Skip   bool   `json:"skipped,omitempty"`
	Detail string `json:"seen,omitempty"`
}

// answer is one HTTP answer, read.
type answer struct {
	status int
	header http.Header
	body   []byte
	obj    map[string]any
	err    error
}

func (c *checker) send(ctx context.Context, method, path string, body []byte, withAuth bool) answer {
	var rd io.Reader
	if body != nil {
		rd = bytes.NewReader(body)
	}
	req, err := http.NewRequestWithContext(ctx, method, c.base+path, rd)
	if err != nil {
		return answer{err: err}
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	if withAuth {
		for k, v := range c.header {
			req.Header[k] = v
		}
	}
	resp, err := c.http.Do(req)
	if err != nil {
		return answer{err: err}
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(io.LimitReader(resp.Body, 32<<20))
	a := answer{status: resp.StatusCode, header: resp.Header, body: b, err: err}
	_ = json.Unmarshal(b, &a.obj)
	return a
}

// record adds a result; problem is "" for a pass.
func (c *checker) record(name, rule, problem string) {
	c.results = append(c.results, checkResult{Name: name, Rule: rule, Pass: problem == "", Detail: problem})
}

func (c *checker) skip(name, rule, why string) {
	c.results = append(c.results, checkResult{Name: name, Rule: rule, Pass: true, Skip: true, Detail: why})
}

// errorShape returns what is wrong with an error answer that should have
// status want: its status, its Content-Type, a JSON object with $schema
// and a non-empty message.
func errorShape(a answer, want int) string {
	var problems []string
	switch {
	case a.err != nil:
		return "no answer: " + a.err.Error()
	case a.status != want:
		problems = append(problems, fmt.Sprintf("status %d, want %d", a.status, want))
	}
	if ct := a.header.Get("Content-Type"); !strings.HasPrefix(ct, "application/json") {
		problems = append(problems, fmt.Sprintf("Content-Type %q, want application/json", ct))
	}
	if a.obj == nil {
		problems = append(problems, fmt.Sprintf("body is not a JSON object: %q", truncateText(a.body, 80)))
	} else {
		if _, ok := a.obj["$schema"].(string); !ok {
			problems = append(problems, "no $schema in the body")
		}
		if m, _ := a.obj["message"].(string); m == "" {
			problems = append(problems, "no message in the body")
		}
	}
	return strings.Join(problems, "; ")
}

func truncateText(b []byte, n int) string {
	if len(b) > n {
		return string(b[:n]) + "…"
	}
	return string(b)
}

func mustJSON(v any) []byte {
	b, _ := json.Marshal(v)
	return b
}

// run runs every check.
func (c *checker) run(ctx context.Context, tool string, input json.RawMessage, auth bool) {
	c.checkHealth(ctx)
	defs := c.checkCatalog(ctx)
	c.checkSchemas(ctx)
	c.checkErrors(ctx, defs)
	c.checkLimits(ctx)
	if auth {
		c.checkAuth(ctx)
	} else {
		c.skip("authentication", "requests without credentials are refused with 401", "give --api-key or --bearer to check it")
	}
	c.checkTool(ctx, tool, input)
	c.checkInvalidInput(ctx, tool, defs)
}

// checkInvalidInput sends the named tool an input its schema refuses: an
// unknown parameter when the schema forbids them, or else a value of the
// wrong type for a required parameter. A conforming server refuses it
// with 422 before the tool runs; the tool was named as safe to call, in
// case the server does not.
func (c *checker) checkInvalidInput(ctx context.Context, tool string, defs []map[string]any) {
	rule := "input the schema refuses is answered 422 with parameter_errors naming the parameter"
	if tool == "" {
		c.skip("invalid input", rule, "calls no tool unless named with --tool")
		return
	}
	var params map[string]any
	for _, d := range defs {
		if id, _ := d["id"].(string); id == tool || strings.HasPrefix(id, tool+"@") {
			is, _ := d["input_schema"].(map[string]any)
			params, _ = is["parameters"].(map[string]any)
		}
	}
	if params == nil {
		c.skip("invalid input", rule, "the catalog does not list "+tool)
		return
	}
	raw, _ := json.Marshal(params)
	param, input := refusedInput(raw)
	if param == "" {
		c.skip("invalid input", rule, "the schema of "+tool+" refuses nothing otc check can send safely")
		return
	}
	a := c.send(ctx, http.MethodPost, "/tools/call", mustJSON(map[string]any{"request": map[string]any{"tool_id": tool, "input": input}}), true)
	problem := errorShape(a, http.StatusUnprocessableEntity)
	if problem == "" {
		perrs, _ := a.obj["parameter_errors"].(map[string]any)
		if _, ok := perrs[param]; !ok {
			problem = fmt.Sprintf("parameter_errors does not name %q: %s", param, truncateText(a.body, 160))
		}
	}
	c.record("invalid input", rule, problem)
}

func (c *checker) checkHealth(ctx context.Context) {
	a := c.send(ctx, http.MethodGet, "/health", nil, false)
	problem := ""
	switch {
	case a.err != nil:
		problem = "no answer: " + a.err.Error()
	case a.status != http.StatusOK:
		problem = fmt.Sprintf("status %d", a.status)
	case !strings.HasPrefix(a.header.Get("Content-Type"), "application/json"):
		problem = fmt.Sprintf("Content-Type %q", a.header.Get("Content-Type"))
	}
	c.record("health", "GET /health answers 200 with JSON, without credentials", problem)
}

// checkCatalog checks GET /tools and returns the definitions it lists.
func (c *checker) checkCatalog(ctx context.Context) []map[string]any {
	a := c.send(ctx, http.MethodGet, "/tools", nil, true)
	rule := "GET /tools answers 200 with {\"$schema\", \"tools\": [...]}"
	if a.err != nil || a.status != http.StatusOK || a.obj == nil {
		c.record("catalog", rule, fmt.Sprintf("status %d, body %q %v", a.status, truncateText(a.body, 80), errText(a.err)))
		return nil
	}
	var problems []string
	if s, _ := a.obj["$schema"].(string); !slices.Contains(schemaSpellings, s) {
		problems = append(problems, fmt.Sprintf("$schema %q is not a spelling of 1.0", s))
	}
	list, ok := a.obj["tools"].([]any)
	if !ok {
		problems = append(problems, "no tools array")
	}
	c.record("catalog", rule, strings.Join(problems, "; "))

	var defs []map[string]any
	var entryProblems []string
	seen := map[string]bool{}
	var ids []string
	for i, x := range list {
		d, ok := x.(map[string]any)
		if !ok {
			entryProblems = append(entryProblems, fmt.Sprintf("entry %d is not an object", i))
			continue
		}
		defs = append(defs, d)
		id, _ := d["id"].(string)
		at := fmt.Sprintf("entry %d (%s)", i, id)
		if !toolIDPattern.MatchString(id) {
			entryProblems = append(entryProblems, at+": id is not Toolkit.Tool@x.y.z")
		}
		if seen[id] {
			entryProblems = append(entryProblems, at+": id listed twice")
		}
		seen[id] = true
		ids = append(ids, id)
		if name, _ := d["name"].(string); !toolNamePattern.MatchString(name) {
			entryProblems = append(entryProblems, fmt.Sprintf("%s: name %q does not match ^[A-Za-z0-9_-]{1,64}$", at, name))
		}
		if desc, _ := d["description"].(string); strings.TrimSpace(desc) == "" {
			entryProblems = append(entryProblems, at+": no description")
		}
		if v, _ := d["version"].(string); !strings.HasSuffix(id, "@"+v) {
			entryProblems = append(entryProblems, fmt.Sprintf("%s: version %q differs from the id's", at, v))
		}
		if _, ok := d["output_schema"]; !ok {
			entryProblems = append(entryProblems, at+": no output_schema (null for a tool that returns nothing)")
		}
		is, _ := d["input_schema"].(map[string]any)
		params, _ := is["parameters"].(map[string]any)
		if params == nil || params["type"] != "object" {
			entryProblems = append(entryProblems, at+": input_schema.parameters is not an object schema")
			continue
		}
		props, _ := params["properties"].(map[string]any)
		for name, p := range props {
			if pm, _ := p.(map[string]any); pm == nil || pm["description"] == nil || pm["description"] == "" {
				entryProblems = append(entryProblems, fmt.Sprintf("%s: parameter %q has no description", at, name))
			}
		}
		if raw := string(mustJSON(params)); strings.Contains(raw, `"$ref"`) || strings.Contains(raw, `"$defs"`) || strings.Contains(raw, `"definitions"`) {
			entryProblems = append(entryProblems, at+": the input schema is not inline ($ref or definitions)")
		}
	}
	slices.Sort(entryProblems)
	if !slices.IsSortedFunc(ids, compareToolIDs) {
		entryProblems = append(entryProblems, "the entries are not in order of id, then version")
	}
	c.record("catalog entries", "each entry has a Toolkit.Tool@x.y.z id listed once, a name, a description, its version, an inline object input schema whose parameters are described, and an output_schema; entries are in order of id, then version",
		strings.Join(entryProblems, "; "))
	return defs
}

func errText(err error) string {
	if err != nil {
		return err.Error()
	}
	return ""
}

func (c *checker) checkSchemas(ctx context.Context) {
	var problems []string
	for _, s := range schemaSpellings {
		a := c.send(ctx, http.MethodGet, "/tools", mustJSON(map[string]string{"$schema": s}), true)
		if a.status != http.StatusOK {
			problems = append(problems, fmt.Sprintf("%s: status %d", s, a.status))
			continue
		}
		if got, _ := a.obj["$schema"].(string); got != s {
			problems = append(problems, fmt.Sprintf("%s: echoed as %q", s, got))
		}
	}
	c.record("$schema spellings", "each spelling of 1.0 is accepted and echoed in the answer", strings.Join(problems, "; "))

	body := mustJSON(map[string]any{"$schema": "otc://9.9", "request": map[string]any{"tool_id": checkNamespace}})
	c.record("unsupported $schema", "a $schema that is not 1.0 is refused with 400 and a JSON error", errorShape(c.send(ctx, http.MethodPost, "/tools/call", body, true), http.StatusBadRequest))
}

func (c *checker) checkErrors(ctx context.Context, defs []map[string]any) {
	call := func(req map[string]any) answer {
		return c.send(ctx, http.MethodPost, "/tools/call", mustJSON(map[string]any{"request": req}), true)
	}
	c.record("unknown tool", "a call of a tool the server does not have is refused with 400 and a JSON error",
		errorShape(call(map[string]any{"tool_id": checkNamespace}), http.StatusBadRequest))

	if len(defs) > 0 {
		id, _ := defs[0]["id"].(string)
		key, _, _ := strings.Cut(id, "@")
		c.record("unknown version", "a call of a version the server does not have is refused with 400 and a JSON error",
			errorShape(call(map[string]any{"tool_id": key + "@999999.0.0"}), http.StatusBadRequest))
	} else {
		c.skip("unknown version", "a call of a version the server does not have is refused with 400", "the catalog is empty")
	}
	for _, id := range []string{checkNamespace + "@1.0", checkNamespace + "@v1", checkNamespace + "@latest", "NoDot@1.0.0"} {
		c.record("malformed tool id "+id, "a malformed tool_id is refused with 400 and a JSON error", errorShape(call(map[string]any{"tool_id": id}), http.StatusBadRequest))
	}
	c.record("body not JSON", "a body that is not JSON is refused with 400 and a JSON error",
		errorShape(c.send(ctx, http.MethodPost, "/tools/call", []byte("not json"), true), http.StatusBadRequest))
	c.record("body without request", "a body without a request object is refused with 400 and a JSON error",
		errorShape(c.send(ctx, http.MethodPost, "/tools/call", []byte(`{}`), true), http.StatusBadRequest))
	for _, tc := range []struct{ field, body string }{
		{"inputs", `{"request":{"tool_id":"` + checkNamespace + `","inputs":{}}}`},
		{"extra", `{"request":{"tool_id":"` + checkNamespace + `"},"extra":1}`},
	} {
		a := c.send(ctx, http.MethodPost, "/tools/call", []byte(tc.body), true)
		problem := errorShape(a, http.StatusBadRequest)
		if problem == "" && !bytes.Contains(a.body, []byte(tc.field)) {
			problem = fmt.Sprintf("the error does not name %q: %s", tc.field, truncateText(a.body, 120))
		}
		c.record("unknown field "+tc.field, "an unknown field is refused with 400 naming it", problem)
	}
	a := c.send(ctx, http.MethodDelete, "/tools", nil, true)
	problem := errorShape(a, http.StatusMethodNotAllowed)
	if problem == "" && a.header.Get("Allow") == "" {
		problem = "no Allow header"
	}
	c.record("wrong method", "another method on a known path is refused with 405, an Allow header and a JSON error", problem)
	c.record("unknown path", "an unknown path is answered 404 with a JSON error", errorShape(c.send(ctx, http.MethodGet, "/otc-check-no-such-path", nil, true), http.StatusNotFound))
}

func (c *checker) checkLimits(ctx context.Context) {
	size := c.maxBody + 1<<20
	body := make([]byte, 0, size+100)
	body = append(body, `{"request":{"tool_id":"`+checkNamespace+`","input":{"padding":"`...)
	body = append(body, bytes.Repeat([]byte("x"), int(size))...)
	body = append(body, `"}}}`...)
	a := c.send(ctx, http.MethodPost, "/tools/call", body, true)
	c.record("body limit", fmt.Sprintf("a body over the limit (%d MiB here) is refused with 413 and a JSON error", c.maxBody>>20), errorShape(a, http.StatusRequestEntityTooLarge))
}

func (c *checker) checkAuth(ctx context.Context) {
	a := c.send(ctx, http.MethodGet, "/tools", nil, false)
	c.record("authentication required", "a request without credentials is refused with 401 and a JSON error", errorShape(a, http.StatusUnauthorized))
	a = c.send(ctx, http.MethodGet, "/tools", nil, true)
	problem := ""
	if a.status != http.StatusOK {
		problem = fmt.Sprintf("status %d with the credentials given", a.status)
	}
	c.record("authentication accepted", "a request with the credentials given is answered", problem)
	a = c.send(ctx, http.MethodGet, "/health", nil, false)
	problem = ""
	if a.status != http.StatusOK {
		problem = fmt.Sprintf("status %d without credentials", a.status)
	}
	c.record("health is open", "GET /health needs no credentials", problem)
}

// checkTool calls the tool the user named, with the input they gave, by
// each spelling of its id.
func (c *checker) checkTool(ctx context.Context, tool string, input json.RawMessage) {
	rule := "a call answers 200 with result {call_id (echoed), duration (ms), success}, by Toolkit.Tool, Toolkit.Tool@x.y.z and, for x.0.0, Toolkit.Tool@x"
	if tool == "" {
		c.skip("calls", rule, "calls no tool unless named: give --tool ID --input JSON for a tool that is safe to call")
		return
	}
	ids := []string{tool}
	if key, version, ok := strings.Cut(tool, "@"); ok {
		ids = []string{key, tool}
		if major, ok := strings.CutSuffix(version, ".0.0"); ok {
			ids = append(ids, key+"@"+major) // x means exactly x.0.0
		}
	}
	var problems []string
	for i, id := range ids {
		callID := fmt.Sprintf("otc-check-%d-%d", time.Now().UnixNano(), i)
		a := c.send(ctx, http.MethodPost, "/tools/call", mustJSON(map[string]any{"request": map[string]any{"tool_id": id, "call_id": callID, "input": input}}), true)
		res, _ := a.obj["result"].(map[string]any)
		switch {
		case a.status != http.StatusOK || res == nil:
			problems = append(problems, fmt.Sprintf("%s: status %d, body %q", id, a.status, truncateText(a.body, 100)))
		case res["call_id"] != callID:
			problems = append(problems, fmt.Sprintf("%s: call_id %v, not the one sent", id, res["call_id"]))
		default:
			if _, ok := res["duration"].(float64); !ok {
				problems = append(problems, id+": no numeric duration")
			}
			if _, ok := res["success"].(bool); !ok {
				problems = append(problems, id+": no success flag")
			}
		}
	}
	c.record("calls", rule, strings.Join(problems, "; "))
}

// check runs "otc check URL".
func (e *cli) check(ctx context.Context, args []string) int {
	fs := newFlagSet("check", e.stderr)
	var o common
	o.register(fs, e.getenv)
	var tool, input string
	var maxMiB int64
	fs.StringVar(&tool, "tool", "", "a tool that is safe to call, for the call checks")
	fs.StringVar(&input, "input", "{}", "the input of --tool, a JSON object")
	fs.Int64Var(&maxMiB, "max-body", 4, "the server's body limit, in MiB")
	pos, err := parse(fs, args)
	if err != nil {
		return exitBadInput
	}
	url, rest := o.target(pos)
	if url == "" && o.as != formatStdio || len(rest) > 0 {
		fmt.Fprintln(e.stderr, "otc check: want one URL, or --stdio COMMAND")
		return exitBadInput
	}
	var in map[string]json.RawMessage
	if json.Unmarshal([]byte(input), &in) != nil || in == nil {
		fmt.Fprintln(e.stderr, "otc check: --input must be a JSON object")
		return exitBadInput
	}
	// The format of the URL, as the other commands find it: an OTC
	// server gets the protocol's checks, any other the checks that apply
	// to every format.
	srv, err := o.server(ctx, url, e.stderr, nil)
	if err != nil {
		return e.serverFailed("check", err)
	}
	defer srv.close()
	if o.as != formatOTC {
		fmt.Fprintf(e.stderr, "otc check: checking %s as %s: the checks of every format apply (%s); the OTC protocol's own do not\n",
			strings.TrimPrefix(o.where(url), o.protocolFlag()), o.as.kind(), formatChecks)
		c := &checker{}
		c.checkFormat(ctx, srv, o.as, tool, json.RawMessage(input))
		return e.report(c, srv.c.URL(), o.json)
	}
	url = srv.c.URL()
	c := &checker{base: strings.TrimSuffix(url, "/"), http: &http.Client{Timeout: 30 * time.Second, CheckRedirect: client.CheckRedirect}, header: http.Header{}, maxBody: maxMiB << 20}
	auth := false
	switch {
	case o.apiKey != "":
		c.header.Set("OXP-API-Key", o.apiKey)
		auth = true
	case o.bearer != "":
		c.header.Set("Authorization", "Bearer "+o.bearer)
		auth = true
	case o.jwtSecret != "":
		token, err := signToken(o.jwtSecret)
		if err != nil {
			fmt.Fprintf(e.stderr, "otc check: %v\n", err)
			return exitBadInput
		}
		c.header.Set("Authorization", "Bearer "+token)
		auth = true
	}
	if a := c.send(ctx, http.MethodGet, "/health", nil, false); a.err != nil {
		fmt.Fprintf(e.stderr, "otc check: %v\n", a.err)
		return exitTransport
	}
	c.run(ctx, tool, json.RawMessage(input), auth)
	return e.report(c, c.base, o.json)
}

// report prints the checks' results and returns the exit code.
func (e *cli) report(c *checker, url string, jsonOut bool) int {
	failed, skipped := 0, 0
	for _, r := range c.results {
		if !r.Pass {
			failed++
		}
		if r.Skip {
			skipped++
		}
	}
	if jsonOut {
		_ = e.printJSON(map[string]any{"url": url, "passed": len(c.results) - failed - skipped, "failed": failed, "skipped": skipped, "checks": c.results})
	} else {
		for _, r := range c.results {
			switch {
			case r.Skip:
				fmt.Fprintf(e.stdout, "SKIP  %s: %s\n", r.Name, r.Detail)
			case r.Pass:
				fmt.Fprintf(e.stdout, "%s  %s\n", e.style(styleBold, "PASS"), r.Name)
			default:
				fmt.Fprintf(e.stdout, "%s  %s\n      rule: %s\n      seen: %s\n", e.style(styleRed, "FAIL"), r.Name, r.Rule, r.Detail)
			}
		}
		fmt.Fprintf(e.stdout, "\n%d passed, %d failed, %d skipped\n", len(c.results)-failed-skipped, failed, skipped)
	}
	if failed > 0 {
		return exitCheckFailed
	}
	return exitOK
}

// signToken signs a one-minute HS256 token with secret, as servers that
// share it accept.
func signToken(secret string) (string, error) {
	now := time.Now()
	claims := jwt.RegisteredClaims{Subject: "otc-check", IssuedAt: jwt.NewNumericDate(now), ExpiresAt: jwt.NewNumericDate(now.Add(time.Minute))}
	return jwt.NewWithClaims(jwt.SigningMethodHS256, claims).SignedString([]byte(secret))
}

// compareToolIDs orders "Toolkit.Tool@x.y.z" ids by key, then version.
func compareToolIDs(a, b string) int {
	ka, va, _ := strings.Cut(a, "@")
	kb, vb, _ := strings.Cut(b, "@")
	if c := strings.Compare(ka, kb); c != 0 {
		return c
	}
	return semver.Compare("v"+va, "v"+vb)
}
