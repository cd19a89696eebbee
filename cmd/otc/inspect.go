package main

import (
	"bytes"
	"context"
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"embed"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os/exec"
	"runtime"
	"strings"
	"sync"
	"time"

	"github.com/otcgo/otc"
	"github.com/otcgo/otc/client"
	"github.com/otcgo/otc/federation"
	"github.com/otcgo/otc/internal/jsonrpc"
)

// The page: hand-written HTML, CSS and JavaScript, served from the binary
// as one document (no build step, nothing fetched from elsewhere).
//
//go:embed inspect/index.html inspect/inspect.css inspect/inspect.js
var inspectFiles embed.FS

// Limits of the inspector's own server.
const (
	// maxInspectBody bounds a request body of the page's API: a call's
	// input, secrets and options.
	maxInspectBody = 1 << 20
	// maxRecorded bounds each request or response body kept for the
	// page's "raw request and response", and maxRecordedTotal all those
	// of one call or listing (a REST view is listed a request per tool).
	maxRecorded      = 1 << 20
	maxRecordedTotal = 4 << 20
	// maxInspectCalls bounds the calls that run at once.
	maxInspectCalls = 8
	// maxInspectCallTime bounds one call through the proxy.
	maxInspectCallTime = 10 * time.Minute
)

// inspectHeaderToken is the header that carries the token on the page's
// API requests (the page itself is opened with ?token=).
const inspectHeaderToken = "X-Otc-Inspect-Token"

// inspectTarget is a server the inspector proxies to: one given on the
// command line, and no other.
type inspectTarget struct {
	Kind string `json:"kind"` // "otc", "mcp", "rest" or "a2a"
	URL  string `json:"url"`  // the URL, or the command line of --stdio
	// stdio is the MCP server over stdio that --stdio started, which
	// every request of the page shares (its exchanges are not recorded).
	stdio *remote
}

// inspector serves the page and its API, and proxies calls to the
// targets with the credentials of the command line, which the page never
// sees.
type inspector struct {
	token   string
	hosts   map[string]bool // the Host values accepted
	origins map[string]bool // the Origin values accepted
	targets []inspectTarget
	creds   common
	page    []byte
	csp     string // the page's Content-Security-Policy
	base    http.RoundTripper
	calls   chan struct{} // a slot per running call
}

// inspect runs "otc inspect URL".
func (e *cli) inspect(ctx context.Context, args []string) int {
	fs := newFlagSet("inspect", e.stderr)
	var o common
	var mcpURL, restURL, a2aURL, addr string
	var noOpen bool
	fs.StringVar(&mcpURL, "mcp", "", "an MCP endpoint (Streamable HTTP) to inspect")
	fs.StringVar(&restURL, "rest", "", "the base of a REST tool API to inspect")
	fs.StringVar(&a2aURL, "a2a", "", "an A2A agent (the URL its Agent Card is below) to inspect")
	fs.StringVar(&addr, "addr", "127.0.0.1:0", "the loopback `host:port` the page is served on")
	fs.BoolVar(&noOpen, "no-open", false, "print the page's URL but do not open it")
	fs.StringVar(&o.apiKey, "api-key", e.getenv("OTC_API_KEY"), "sent as OXP-API-Key")
	fs.StringVar(&o.bearer, "bearer", e.getenv("OTC_BEARER_TOKEN"), "sent as Authorization: Bearer")
	fs.StringVar(&o.jwtSecret, "jwt-secret", "", "sign an HS256 bearer token for each request (OTC only)")
	fs.StringVar(&o.stdio, "stdio", "", "in place of a URL: run \"COMMAND ARGS…\" (split as a shell would, run without one) as an MCP server over stdio")
	pos, err := parse(fs, args)
	if err != nil {
		return exitBadInput
	}
	if len(pos) > 1 || len(pos) == 0 && mcpURL == "" && restURL == "" && a2aURL == "" && o.stdio == "" {
		fmt.Fprintln(e.stderr, "otc inspect: want the URL of a tool server, or --mcp URL, --rest URL, --a2a URL or --stdio COMMAND (any of them together)")
		return exitBadInput
	}
	var targets []inspectTarget
	if len(pos) == 1 {
		// The format of the URL, as the other commands find it.
		found, err := o.server(ctx, pos[0], e.stderr, nil)
		if err != nil {
			return e.serverFailed("inspect", err)
		}
		found.close()
		targets = append(targets, inspectTarget{Kind: string(found.c.Format()), URL: found.c.URL()})
		o.as, o.formats = formatOTC, 0
	} else if o.jwtSecret != "" {
		fmt.Fprintln(e.stderr, "otc inspect: --jwt-secret is for OTC servers; give an MCP server, a REST view or an A2A agent a token with --bearer")
		return exitBadInput
	}
	if mcpURL != "" {
		targets = append(targets, inspectTarget{Kind: "mcp", URL: mcpURL})
	}
	if restURL != "" {
		targets = append(targets, inspectTarget{Kind: "rest", URL: strings.TrimSuffix(restURL, "/")})
	}
	if a2aURL != "" {
		targets = append(targets, inspectTarget{Kind: "a2a", URL: strings.TrimSuffix(a2aURL, "/")})
	}
	if o.stdio != "" {
		o.as, o.formats = formatStdio, 1
		srv, err := o.server(ctx, "", e.stderr, nil)
		if err != nil {
			return e.serverFailed("inspect", err)
		}
		defer func() { _ = srv.c.Close() }()
		targets = append(targets, inspectTarget{Kind: "mcp", URL: "stdio: " + o.stdio, stdio: srv})
		o.as, o.formats = formatOTC, 0
	}
	for _, t := range targets {
		if t.stdio == nil && !strings.HasPrefix(t.URL, "http://") && !strings.HasPrefix(t.URL, "https://") {
			fmt.Fprintf(e.stderr, "otc inspect: %q is not an http:// or https:// URL\n", t.URL)
			return exitBadInput
		}
	}
	ln, err := listenLoopback(addr)
	if err != nil {
		fmt.Fprintf(e.stderr, "otc inspect: %v\n", err)
		return exitBadInput
	}
	in, err := newInspector(ln.Addr().String(), targets, o)
	if err != nil {
		ln.Close()
		fmt.Fprintf(e.stderr, "otc inspect: %v\n", err)
		return exitTransport
	}
	for _, t := range targets { // each call connects afresh; a bad URL fails here, once
		if _, err := in.connect(t, &recorder{base: in.base}, nil); err != nil {
			ln.Close()
			fmt.Fprintf(e.stderr, "otc inspect: %s: %v\n", t.URL, err)
			return exitBadInput
		}
	}
	srv := &http.Server{Handler: in, ReadHeaderTimeout: 10 * time.Second, IdleTimeout: time.Minute}
	done := make(chan error, 1)
	go func() { done <- srv.Serve(ln) }()
	pageURL := in.url(ln.Addr().String())
	fmt.Fprintln(e.stdout, pageURL)
	fmt.Fprintf(e.stderr, "otc inspect: serving the page for %s; Ctrl-C stops it\n", describeTargets(targets))
	if !noOpen {
		openBrowser(pageURL, e.getenv)
	}
	select {
	case <-ctx.Done():
	case err := <-done:
		fmt.Fprintf(e.stderr, "otc inspect: %v\n", err)
		return exitTransport
	}
	shut, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	_ = srv.Shutdown(shut)
	return exitOK
}

func describeTargets(ts []inspectTarget) string {
	var parts []string
	for _, t := range ts {
		parts = append(parts, t.URL+" ("+t.Kind+")")
	}
	return strings.Join(parts, ", ")
}

// listenLoopback listens on addr, which must be on 127.0.0.1: the page
// holds the power of the command line's credentials, so it is not served
// to the network.
func listenLoopback(addr string) (net.Listener, error) {
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return nil, fmt.Errorf("--addr %q: %v", addr, err)
	}
	if host == "" || host == "localhost" {
		host = "127.0.0.1"
	}
	if host != "127.0.0.1" {
		return nil, fmt.Errorf("--addr %q: the page is served on 127.0.0.1 only", addr)
	}
	return net.Listen("tcp", net.JoinHostPort(host, port))
}

// newInspector returns the inspector of the targets, served at hostPort
// (127.0.0.1:PORT), with a fresh random token.
func newInspector(hostPort string, targets []inspectTarget, creds common) (*inspector, error) {
	secret := make([]byte, 24)
	if _, err := rand.Read(secret); err != nil {
		return nil, err
	}
	_, port, _ := net.SplitHostPort(hostPort)
	page, csp, err := inspectPage()
	if err != nil {
		return nil, err
	}
	in := &inspector{
		token:   base64.RawURLEncoding.EncodeToString(secret),
		hosts:   map[string]bool{hostPort: true, "localhost:" + port: true},
		origins: map[string]bool{"http://" + hostPort: true, "http://localhost:" + port: true},
		targets: targets,
		creds:   creds,
		page:    page,
		csp:     csp,
		base:    http.DefaultTransport,
		calls:   make(chan struct{}, maxInspectCalls),
	}
	return in, nil
}

// url is the page's address with its token.
func (in *inspector) url(hostPort string) string {
	return "http://" + hostPort + "/?token=" + in.token
}

// inspectPage assembles the page: the HTML with its style and script
// inline, so that one request (with the token) loads it all. The
// Content-Security-Policy allows that style and that script by their
// hashes, and nothing else: no other script, even one a server managed to
// slip into the page, runs.
func inspectPage() (page []byte, csp string, err error) {
	read := func(name string) (string, error) {
		b, err := inspectFiles.ReadFile("inspect/" + name)
		return string(b), err
	}
	html, err := read("index.html")
	if err != nil {
		return nil, "", err
	}
	css, err := read("inspect.css")
	if err != nil {
		return nil, "", err
	}
	js, err := read("inspect.js")
	if err != nil {
		return nil, "", err
	}
	html = strings.Replace(html, "/*INSPECT_CSS*/", css, 1)
	html = strings.Replace(html, "/*INSPECT_JS*/", js, 1)
	hash := func(s string) string {
		sum := sha256.Sum256([]byte(s))
		return "'sha256-" + base64.StdEncoding.EncodeToString(sum[:]) + "'"
	}
	csp = "default-src 'none'; script-src " + hash(js) + "; style-src " + hash(css) +
		"; img-src data:; media-src data:; connect-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'"
	return []byte(html), csp, nil
}

// refuse answers a request the inspector will not serve, with a message
// a person reading it (in the page or a terminal) can act on.
func refuse(w http.ResponseWriter, status int, format string, args ...any) {
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	w.Header().Set("X-Content-Type-Options", "nosniff")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(status)
	fmt.Fprintf(w, "otc inspect: "+format+"\n", args...)
}

// ServeHTTP checks every request, in the order an attacker meets the
// checks: a Host other than the inspector's own (a DNS-rebound name), an
// Origin other than its own (another site's page), and then the token,
// which only the printed URL carries.
func (in *inspector) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if !in.hosts[r.Host] {
		refuse(w, http.StatusMisdirectedRequest, "this server answers to Host 127.0.0.1 only, not %q", r.Host)
		return
	}
	if o := r.Header.Get("Origin"); o != "" && !in.origins[o] {
		refuse(w, http.StatusForbidden, "requests from origin %q are refused; open the URL otc inspect printed", o)
		return
	}
	if r.Header.Get("Sec-Fetch-Site") == "cross-site" {
		refuse(w, http.StatusForbidden, "cross-site requests are refused; open the URL otc inspect printed")
		return
	}
	tok := r.Header.Get(inspectHeaderToken)
	if tok == "" {
		tok = r.URL.Query().Get("token")
	}
	if subtle.ConstantTimeCompare([]byte(tok), []byte(in.token)) != 1 {
		refuse(w, http.StatusUnauthorized, "missing or wrong token; open the URL otc inspect printed, with its ?token=")
		return
	}
	h := w.Header()
	h.Set("Cache-Control", "no-store")
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Referrer-Policy", "no-referrer")
	h.Set("X-Frame-Options", "DENY")
	switch r.URL.Path {
	case "/":
		in.servePage(w, r)
	case "/api/info":
		in.serveInfo(w, r)
	case "/api/tools":
		in.serveTools(w, r)
	case "/api/search":
		in.serveSearch(w, r)
	case "/api/call":
		in.serveCall(w, r)
	case "/api/readables":
		in.serveReadables(w, r)
	case "/api/read":
		in.serveRead(w, r)
	case "/api/prompt":
		in.servePrompt(w, r)
	case "/api/complete":
		in.serveComplete(w, r)
	default:
		refuse(w, http.StatusNotFound, "no such page: %s", r.URL.Path)
	}
}

func allow(w http.ResponseWriter, r *http.Request, method string) bool {
	if r.Method != method && !(method == http.MethodGet && r.Method == http.MethodHead) {
		w.Header().Set("Allow", method)
		refuse(w, http.StatusMethodNotAllowed, "%s %s: only %s", r.Method, r.URL.Path, method)
		return false
	}
	return true
}

func (in *inspector) servePage(w http.ResponseWriter, r *http.Request) {
	if !allow(w, r, http.MethodGet) {
		return
	}
	h := w.Header()
	h.Set("Content-Type", "text/html; charset=utf-8")
	h.Set("Content-Security-Policy", in.csp)
	_, _ = w.Write(in.page)
}

func writeInspectJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}

// serveInfo tells the page what it inspects: the servers, and which
// credentials are set (never their values).
func (in *inspector) serveInfo(w http.ResponseWriter, r *http.Request) {
	if !allow(w, r, http.MethodGet) {
		return
	}
	writeInspectJSON(w, http.StatusOK, map[string]any{
		"servers": in.targets,
		"credentials": map[string]bool{
			"api_key": in.creds.apiKey != "", "bearer": in.creds.bearer != "" && in.creds.jwtSecret == "", "jwt": in.creds.jwtSecret != "",
		},
	})
}

// target returns the server of kind, as the command line gave it.
func (in *inspector) target(kind string) (inspectTarget, bool) {
	for _, t := range in.targets {
		if t.Kind == kind {
			return t, true
		}
	}
	return inspectTarget{}, false
}

// connect returns a fresh connection to t whose exchanges rec records;
// note, when not nil, gets each notification of an MCP server.
func (in *inspector) connect(t inspectTarget, rec *recorder, note func(method string, params json.RawMessage)) (*remote, error) {
	if t.stdio != nil {
		return &remote{c: t.stdio.c, keep: true}, nil
	}
	hc := &http.Client{Transport: rec, CheckRedirect: client.CheckRedirect}
	f := map[string]format{"mcp": formatMCP, "rest": formatREST, "a2a": formatA2A}[t.Kind]
	opts := in.creds.options(f.wire(), "otc-inspect/1.0")
	opts.HTTPClient, opts.OnNotification = hc, note
	if note != nil {
		opts.LogLevel = "debug"
	}
	if opts.JWT != nil {
		opts.JWT.Subject = "otc-inspect"
	}
	c, err := client.New(t.URL, opts)
	if err != nil {
		return nil, err
	}
	return &remote{c: c}, nil
}

// inspectTool is a tool as the page shows it, whatever the wire format.
type inspectTool struct {
	ID           string            `json:"id"`
	Name         string            `json:"name"`
	Title        string            `json:"title,omitempty"`
	Description  string            `json:"description"`
	Version      string            `json:"version,omitempty"`
	Toolkit      string            `json:"toolkit"`
	InputSchema  json.RawMessage   `json:"input_schema,omitempty"`
	OutputSchema json.RawMessage   `json:"output_schema,omitempty"`
	Requirements *otc.Requirements `json:"requirements,omitempty"`
	Annotations  json.RawMessage   `json:"annotations,omitempty"`
	// Call is how the server names the tool in a call.
	Call string `json:"call"`
	// Upstream is the server a gateway's tool is served from (package
	// federation), when the gateway says so.
	Upstream *inspectUpstream `json:"upstream,omitempty"`
}

// inspectUpstream is a gateway's upstream, as its health endpoint (or a
// tool's _meta) names it.
type inspectUpstream struct {
	Name   string `json:"name"`
	Format string `json:"format,omitempty"`
	State  string `json:"state,omitempty"`
}

// toolkit is the part of an id or name before its first "." or "_".
func toolkit(id string) string {
	if i := strings.IndexAny(id, "._"); i > 0 {
		return id[:i]
	}
	return "Other"
}

// serveTools lists the tools of one target: GET /api/tools?server=otc.
func (in *inspector) serveTools(w http.ResponseWriter, r *http.Request) {
	t, ok := in.getTarget(w, r)
	if !ok {
		return
	}
	rec := &recorder{base: in.base}
	srv, err := in.connect(t, rec, nil)
	if err != nil {
		refuse(w, http.StatusInternalServerError, "%v", err)
		return
	}
	defer srv.close()
	ctx, cancel := context.WithTimeout(r.Context(), time.Minute)
	defer cancel()
	tools, err := listInspectTools(ctx, srv)
	if err != nil {
		writeInspectJSON(w, http.StatusBadGateway, map[string]any{"error": describeFailure(err, rec), "exchanges": rec.list()})
		return
	}
	writeInspectJSON(w, http.StatusOK, map[string]any{"tools": tools})
}

// inspectSearchLimit is how many tools the search box asks a server for.
const inspectSearchLimit = 20

// serveSearch asks a target's own search for the tools that match q:
// GET /api/search?server=otc&q=WORDS answers {"supported": true, "calls":
// [...]}, the found tools' call names (as /api/tools gives them) best
// first, or {"supported": false} for a server that does not search (the
// page then filters its list by itself).
func (in *inspector) serveSearch(w http.ResponseWriter, r *http.Request) {
	t, ok := in.getTarget(w, r)
	if !ok {
		return
	}
	in.withServer(w, r, t, func(ctx context.Context, c *client.Client) (any, error) {
		defs, err := c.SearchTools(ctx, r.URL.Query().Get("q"), inspectSearchLimit)
		if errors.Is(err, client.ErrNoSearch) {
			return map[string]any{"supported": false}, nil
		}
		if err != nil {
			return nil, err
		}
		calls := make([]string, len(defs))
		for i, d := range defs {
			calls[i] = d.ID
		}
		return map[string]any{"supported": true, "calls": calls}, nil
	})
}

// getTarget reads the target a GET of the page's API names in its query
// ("server"), refusing the request (a method other than GET, a target
// the inspector was not started with) when it cannot.
func (in *inspector) getTarget(w http.ResponseWriter, r *http.Request) (inspectTarget, bool) {
	if !allow(w, r, http.MethodGet) {
		return inspectTarget{}, false
	}
	t, ok := in.target(r.URL.Query().Get("server"))
	if !ok {
		refuse(w, http.StatusBadRequest, "server %q is not one this inspector was started with", r.URL.Query().Get("server"))
	}
	return t, ok
}

func listInspectTools(ctx context.Context, srv *remote) ([]inspectTool, error) {
	defs, err := srv.list(ctx)
	if err != nil {
		return nil, err
	}
	out := make([]inspectTool, 0, len(defs))
	for _, d := range defs {
		var ann json.RawMessage
		if d.Annotations != nil {
			ann, _ = json.Marshal(d.Annotations)
		}
		out = append(out, inspectTool{ID: d.ID, Name: d.Name, Title: d.Title, Description: d.Description, Version: d.Version, Toolkit: toolkit(d.ID),
			InputSchema: d.InputSchema.Parameters, OutputSchema: d.OutputSchema, Requirements: d.Requirements, Annotations: ann, Call: d.ID,
			Upstream: upstreamOf(d.Meta)})
	}
	if ups := gatewayUpstreams(ctx, srv.c.URL()); len(ups) > 0 {
		for i, t := range out {
			part, _, _ := strings.Cut(t.ID, ".")
			if t.Upstream != nil {
				part = t.Upstream.Name
			} else if !strings.Contains(t.ID, ".") {
				part, _, _ = strings.Cut(t.ID, "_") // a name: upstream_tool
			}
			if u, ok := ups[part]; ok {
				out[i].Upstream = u
			}
		}
	}
	return out, nil
}

// upstreamOf reads the upstream a gateway names in a tool's _meta.
func upstreamOf(meta json.RawMessage) *inspectUpstream {
	var m map[string]any
	if len(meta) == 0 || json.Unmarshal(meta, &m) != nil {
		return nil
	}
	if name, ok := m[federation.MetaUpstream].(string); ok && name != "" {
		return &inspectUpstream{Name: name}
	}
	return nil
}

// gatewayUpstreams asks the server at base's origin for the upstreams of
// a gateway (otc gateway's /federation/health), by name; nil when it is
// not one. It waits two seconds at most.
func gatewayUpstreams(ctx context.Context, base string) map[string]*inspectUpstream {
	u, err := url.Parse(base)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") {
		return nil
	}
	ctx, cancel := context.WithTimeout(ctx, 2*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u.Scheme+"://"+u.Host+gatewayHealthPath, nil)
	if err != nil {
		return nil
	}
	req.Header.Set("User-Agent", "otc-inspect/1.0")
	req.Header.Set("Accept", "application/json")
	// Within the origin, by the client's redirect rule, as every request
	// of the command's.
	resp, err := (&http.Client{CheckRedirect: client.CheckRedirect}).Do(req)
	if err != nil {
		return nil
	}
	defer resp.Body.Close()
	var h struct {
		Upstreams []inspectUpstream `json:"upstreams"`
	}
	if resp.StatusCode != http.StatusOK || json.NewDecoder(io.LimitReader(resp.Body, 1<<20)).Decode(&h) != nil {
		return nil
	}
	out := map[string]*inspectUpstream{}
	for _, up := range h.Upstreams {
		out[up.Name] = &up
	}
	return out
}

// inspectCall is a call the page asks for.
type inspectCall struct {
	Server  string           `json:"server"`
	Tool    string           `json:"tool"`
	Input   json.RawMessage  `json:"input"`
	Secrets []otc.ToolSecret `json:"secrets"`
	UserID  string           `json:"user_id"`
	CallID  string           `json:"call_id"`
}

// callFailure is what the page shows for a call that did not reach the
// tool or was refused: a server error with its code and status, or a
// transport failure.
type callFailure struct {
	Code                string                   `json:"code"`
	Message             string                   `json:"message"`
	DeveloperMessage    string                   `json:"developer_message,omitempty"`
	ParameterErrors     map[string]string        `json:"parameter_errors,omitempty"`
	MissingRequirements *otc.MissingRequirements `json:"missing_requirements,omitempty"`
	Status              int                      `json:"status,omitempty"`
}

// toolFailure is a tool error as the page shows it.
type toolFailure struct {
	Message                 string  `json:"message"`
	DeveloperMessage        string  `json:"developer_message,omitempty"`
	CanRetry                bool    `json:"can_retry"`
	RetryAfterMS            float64 `json:"retry_after_ms,omitempty"`
	AdditionalPromptContent string  `json:"additional_prompt_content,omitempty"`
}

// callOutcome is the last event of a call.
type callOutcome struct {
	Server     string          `json:"server"`
	Tool       string          `json:"tool"`
	CallID     string          `json:"call_id"`
	DurationMS float64         `json:"duration_ms"`
	OK         bool            `json:"ok"`
	Value      json.RawMessage `json:"value,omitempty"`
	MCPResult  json.RawMessage `json:"mcp_result,omitempty"`
	ToolError  *toolFailure    `json:"tool_error,omitempty"`
	Error      *callFailure    `json:"error,omitempty"`
	Exchanges  []exchange      `json:"exchanges"`
}

// readPost reads the JSON body of a POST into v (what names it in a
// refusal), answering the request itself when it cannot: another method,
// another type, a body too large or not one v takes.
func readPost(w http.ResponseWriter, r *http.Request, v any, what string) bool {
	if !allow(w, r, http.MethodPost) {
		return false
	}
	if ct := r.Header.Get("Content-Type"); !strings.HasPrefix(ct, "application/json") {
		refuse(w, http.StatusUnsupportedMediaType, "the body must be JSON (Content-Type application/json), not %q", ct)
		return false
	}
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, maxInspectBody))
	if err != nil {
		var tooBig *http.MaxBytesError
		if errors.As(err, &tooBig) {
			refuse(w, http.StatusRequestEntityTooLarge, "the request body is larger than %d bytes", maxInspectBody)
			return false
		}
		refuse(w, http.StatusBadRequest, "reading the request body: %v", err)
		return false
	}
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		refuse(w, http.StatusBadRequest, "the request body is not %s: %v", what, err)
		return false
	}
	return true
}

// slot takes one of the maxInspectCalls places of requests to the
// servers, or answers 429; release gives it back.
func (in *inspector) slot(w http.ResponseWriter) (release func(), ok bool) {
	select {
	case in.calls <- struct{}{}:
		return func() { <-in.calls }, true
	default:
		refuse(w, http.StatusTooManyRequests, "%d calls are already running; wait for one to end", maxInspectCalls)
		return nil, false
	}
}

// serveCall proxies one call: POST /api/call with an inspectCall. The
// answer is an event stream: "notification" events (MCP progress and
// logs) as they come, then one "result" event with a callOutcome.
func (in *inspector) serveCall(w http.ResponseWriter, r *http.Request) {
	var c inspectCall
	if !readPost(w, r, &c, "a call") {
		return
	}
	t, ok := in.target(c.Server)
	if !ok {
		refuse(w, http.StatusBadRequest, "server %q is not one this inspector was started with", c.Server)
		return
	}
	if c.Tool == "" {
		refuse(w, http.StatusBadRequest, "the call names no tool")
		return
	}
	if len(c.Input) == 0 || string(c.Input) == "null" {
		c.Input = json.RawMessage(`{}`)
	}
	release, ok := in.slot(w)
	if !ok {
		return
	}
	defer release()
	if c.CallID == "" {
		c.CallID = otc.NewCallID()
	}
	rec := &recorder{base: in.base}
	var send func(event string, data []byte)
	srv, err := in.connect(t, rec, func(method string, params json.RawMessage) {
		msg, _ := jsonrpc.Notification(method, params)
		send("notification", msg)
	})
	if err != nil {
		refuse(w, http.StatusInternalServerError, "%v", err)
		return
	}
	defer srv.close()

	w.Header().Set("Content-Type", "text/event-stream")
	w.WriteHeader(http.StatusOK)
	rc := http.NewResponseController(w)
	var mu sync.Mutex
	send = func(event string, data []byte) {
		// Compact JSON has no line breaks, so each event's data is one line.
		var line bytes.Buffer
		if json.Compact(&line, data) != nil {
			return
		}
		mu.Lock()
		defer mu.Unlock()
		fmt.Fprintf(w, "event: %s\ndata: %s\n\n", event, line.Bytes())
		_ = rc.Flush()
	}
	send("start", mustJSON(map[string]string{"call_id": c.CallID}))

	out := callOutcome{Server: t.Kind, Tool: c.Tool, CallID: c.CallID}
	ctx, cancel := context.WithTimeout(r.Context(), maxInspectCallTime)
	defer cancel()
	// Progress comes to the page with the other notifications; asking for
	// it is what makes the server send it.
	opts := &client.CallOptions{CallID: c.CallID, UserID: c.UserID, Secrets: c.Secrets, Progress: func(client.Progress) {}}
	start := time.Now()
	res, err := srv.c.Call(ctx, c.Tool, c.Input, opts)
	out.DurationMS = float64(time.Since(start).Microseconds()) / 1000
	if res != nil {
		out.CallID, out.MCPResult = res.CallID, res.Raw
	}
	te, isToolError := errors.AsType[*otc.ToolError](err)
	switch {
	case isToolError:
		out.ToolError = &toolFailure{Message: te.Message, DeveloperMessage: te.DeveloperMessage, CanRetry: te.CanRetry,
			RetryAfterMS: float64(te.RetryAfter.Milliseconds()), AdditionalPromptContent: te.AdditionalPromptContent}
	case err != nil:
		out.Error = describeFailure(err, rec)
	default:
		out.OK, out.Value = true, res.Value
	}
	out.Exchanges = rec.list()
	send("result", mustJSON(out))
}

// describeFailure turns an error of a call or a listing into what the
// page shows, with the HTTP status of the last exchange.
func describeFailure(err error, rec *recorder) *callFailure {
	f := &callFailure{Code: "transport", Message: err.Error()}
	var se *otc.Error
	var re *client.ResponseError
	switch {
	case errors.As(err, &se):
		f.Code, f.Message, f.DeveloperMessage = se.Code.String(), se.Message, se.DeveloperMessage
		f.ParameterErrors, f.MissingRequirements = se.ParameterErrors, se.MissingRequirements
	case errors.As(err, &re):
		f.Status = re.StatusCode
	}
	if ex := rec.list(); len(ex) > 0 && f.Status == 0 {
		f.Status = ex[len(ex)-1].Status
	}
	return f
}

// exchange is one HTTP request to a target and its response, as the
// page shows them: the credentials of the command line are replaced by
// a placeholder, and so are the values of secrets.
type exchange struct {
	Method         string            `json:"method"`
	URL            string            `json:"url"`
	Header         map[string]string `json:"header"`
	Body           string            `json:"body,omitempty"`
	Status         int               `json:"status,omitempty"`
	ResponseHeader map[string]string `json:"response_header,omitempty"`
	ResponseBody   string            `json:"response_body,omitempty"`
	Truncated      bool              `json:"truncated,omitempty"`
	Error          string            `json:"error,omitempty"`

	body *cappedBuffer
}

// recorder is an http.RoundTripper that keeps the exchanges of one call
// or listing.
type recorder struct {
	base http.RoundTripper
	mu   sync.Mutex
	ex   []*exchange
	used int // bytes kept, of maxRecordedTotal
}

// Placeholders of what the page is not shown.
const (
	redactedCredential = "(set by otc inspect)"
	redactedSecret     = "(secret)"
)

func (rec *recorder) RoundTrip(req *http.Request) (*http.Response, error) {
	ex := &exchange{Method: req.Method, URL: req.URL.String(), Header: map[string]string{}}
	for k, v := range req.Header {
		ex.Header[k] = strings.Join(v, ", ")
		if k == "Authorization" || k == "Oxp-Api-Key" || k == "Cookie" {
			ex.Header[k] = redactedCredential
		}
	}
	rec.mu.Lock()
	room := maxRecordedTotal - rec.used
	rec.mu.Unlock()
	if req.GetBody != nil {
		if b, err := req.GetBody(); err == nil {
			raw, _ := io.ReadAll(io.LimitReader(b, int64(min(maxRecorded, max(room, 0)))))
			b.Close()
			ex.Body = redactSecrets(raw)
			room -= len(raw)
		}
	}
	rec.mu.Lock()
	rec.ex = append(rec.ex, ex)
	rec.used += len(ex.Body)
	rec.mu.Unlock()
	resp, err := rec.base.RoundTrip(req)
	if err != nil {
		ex.Error = err.Error()
		return nil, err
	}
	ex.Status = resp.StatusCode
	ex.ResponseHeader = map[string]string{}
	for k, v := range resp.Header {
		ex.ResponseHeader[k] = strings.Join(v, ", ")
	}
	ex.body = &cappedBuffer{max: min(maxRecorded, max(room, 0)), rec: rec}
	resp.Body = struct {
		io.Reader
		io.Closer
	}{io.TeeReader(resp.Body, ex.body), resp.Body}
	return resp, nil
}

// list returns the exchanges so far, with the response bodies read.
func (rec *recorder) list() []exchange {
	rec.mu.Lock()
	defer rec.mu.Unlock()
	out := make([]exchange, 0, len(rec.ex))
	for _, ex := range rec.ex {
		e := *ex
		if ex.body != nil {
			e.ResponseBody, e.Truncated = ex.body.String(), ex.body.over
		}
		e.body = nil
		out = append(out, e)
	}
	return out
}

// cappedBuffer keeps the first max bytes written to it, counted in the
// recorder's total.
type cappedBuffer struct {
	mu   sync.Mutex
	buf  bytes.Buffer
	max  int
	over bool
	rec  *recorder
}

func (b *cappedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	keep := p
	if room := b.max - b.buf.Len(); room < len(p) {
		keep = p[:max(room, 0)]
		b.over = true
	}
	b.buf.Write(keep)
	b.mu.Unlock()
	// Never both locks at once: list holds the recorder's, then a buffer's.
	b.rec.mu.Lock()
	b.rec.used += len(keep)
	b.rec.mu.Unlock()
	return len(p), nil
}

func (b *cappedBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// redactSecrets replaces the value of every secret in a request body
// (the "secrets" list of a call context, in any wire format) by a
// placeholder.
func redactSecrets(raw []byte) string {
	var v any
	if json.Unmarshal(raw, &v) != nil {
		return string(raw)
	}
	if !redactIn(v) {
		return string(raw)
	}
	b, err := json.Marshal(v)
	if err != nil {
		return string(raw)
	}
	return string(b)
}

// redactIn redacts v in place, reporting whether it changed anything.
func redactIn(v any) bool {
	changed := false
	switch x := v.(type) {
	case map[string]any:
		for k, child := range x {
			if list, ok := child.([]any); ok && k == "secrets" {
				for _, s := range list {
					if m, ok := s.(map[string]any); ok {
						if _, has := m["value"]; has {
							m["value"] = redactedSecret
							changed = true
						}
					}
				}
				continue
			}
			changed = redactIn(child) || changed
		}
	case []any:
		for _, child := range x {
			changed = redactIn(child) || changed
		}
	}
	return changed
}

// openBrowser opens url when there is a desktop to open it on, and says
// nothing when there is none: the URL is printed either way.
func openBrowser(url string, getenv func(string) string) {
	var cmd *exec.Cmd
	switch runtime.GOOS {
	case "darwin":
		cmd = exec.Command("open", url)
	case "windows":
		cmd = exec.Command("rundll32", "url.dll,FileProtocolHandler", url)
	default:
		if getenv("DISPLAY") == "" && getenv("WAYLAND_DISPLAY") == "" {
			return
		}
		cmd = exec.Command("xdg-open", url)
	}
	cmd.Stdout, cmd.Stderr = io.Discard, io.Discard
	if cmd.Start() == nil {
		go func() { _ = cmd.Wait() }()
	}
}

var (
	_ http.Handler      = (*inspector)(nil)
	_ http.RoundTripper = (*recorder)(nil)
)
