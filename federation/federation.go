package federation

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"os"
	"os/exec"
	"path"
	"regexp"
	"strings"
	"sync"
	"time"

	"github.com/otcgo/otc"
	"github.com/otcgo/otc/client"
	"github.com/otcgo/otc/internal/primitive"
)

// Defaults of [Upstream] and [Breaker].
const (
	DefaultStartTimeout = 10 * time.Second
	// DefaultReadyTimeout is Upstream.Timeouts.Ready's default: servers
	// that install or index at their start take tens of seconds on a
	// busy machine.
	DefaultReadyTimeout = 2 * time.Minute
	DefaultCallTimeout  = 60 * time.Second
	DefaultRefresh      = 30 * time.Second
	DefaultSessions     = 32
	DefaultFailures     = 5
	DefaultCooldown     = 5 * time.Second
	DefaultMaxTools     = 1000
	// DefaultMaxResources is Upstream.MaxResources's default.
	DefaultMaxResources = 1000
	DefaultSessionIdle  = 10 * time.Minute
)

// Upstream is a remote tool server whose tools a [Federation] serves.
// Name and one of URL and Command are required.
type Upstream struct {
	// Name is the toolkit the upstream's tools are served under: letters,
	// digits and underscores, unique among the upstreams and the local
	// toolkits.
	Name string

	// URL is where an HTTP upstream is served: an OTC handler, an MCP
	// endpoint, a REST view or an A2A agent (whose card is found below
	// it). With Format empty, [client.Dial] finds which.
	URL string
	// Format is the wire format the server at URL speaks. Empty means
	// Dial's rule; a Command is always MCP.
	Format client.Format

	// Command runs an MCP server as a process speaking over stdio: the
	// program and its arguments, run without a shell. It is started when
	// the federation is mounted (and once more per caller, see Sessions),
	// and again, with backoff, when it exits.
	Command []string
	// Dir is the process's working directory (empty means the
	// gateway's). Env is added ("KEY=value") to the process's environment:
	// a minimal one (PATH, HOME, the locale, the temporary directory:
	// see MinimalEnv), so that the gateway's secrets (OTC_JWT_SECRET, the
	// credentials its configuration names) do not reach a process that
	// has no use for them; with InheritEnv, the gateway's whole
	// environment.
	Dir        string
	Env        []string
	InheritEnv bool

	// Include, when not empty, serves only the tools whose upstream name
	// matches one of its patterns (path.Match: "get_*"); Exclude leaves
	// out those that match one of its own. An OTC upstream's tools are
	// named as "Toolkit.Tool", without a version. A pattern that begins
	// with "resource:" applies to the upstream's resources and templates
	// instead, by URI or template ("resource:file:///private/*"), and one
	// that begins with "prompt:" to its prompts, by name ("prompt:debug-*"):
	// an include list of one kind leaves the others alone.
	Include, Exclude []string
	// Rename gives tools another local name part, by upstream name:
	// {"get-sum": "sum"} serves "everything.sum"; a key "prompt:NAME"
	// renames a prompt ({"prompt:args-prompt": "args"} serves
	// "everything_args"). Resources keep their URIs.
	Rename map[string]string

	// Policy is the policy of every tool of the upstream ([otc.Policy]:
	// protocols, scopes, capabilities, resource, execution binding);
	// Policies overrides it per tool, by upstream name. Nil means none.
	Policy   *otc.Policy
	Policies map[string]*otc.Policy

	// Credentials say how the gateway proves itself to the upstream. The
	// zero value sends none, and never an inbound header.
	Credentials Credentials

	// Timeouts bound the upstream's start, calls and silences.
	Timeouts Timeouts

	// LogLevel is the level of the log messages asked of an MCP upstream
	// ("debug", "info", … "emergency"), which reach each caller that asks
	// for them (otc.LogToClient) as the messages of its call. Empty means
	// "info".
	LogLevel string

	// Breaker sets the upstream's circuit breaker.
	Breaker Breaker

	// MaxTools bounds the tools an upstream may list, after Include and
	// Exclude: a catalog with more is not applied (the last good one
	// stays), so that an upstream cannot make the gateway hold, compile
	// and list without end. Zero means DefaultMaxTools.
	MaxTools int
	// MaxResources bounds the resources, resource templates and prompts
	// an MCP upstream may list: lists with more are not applied (the last
	// good ones stay), so that an upstream cannot make the gateway hold
	// and match without end. Zero means DefaultMaxResources.
	MaxResources int
	// URIPrefixes, when set, are the only URIs the upstream's resources
	// and resource templates may have: a resource's URI, or a template's
	// literal text before its first expression, must begin with one of
	// them ("notes://", "file:///srv/docs/"). Others are left out and
	// named in its Health. Nil admits any URI with a scheme of its own.
	URIPrefixes []string

	// Sessions bounds the sessions kept for callers of an MCP upstream,
	// one per caller identity (the identity's method, issuer and name),
	// so that callers never share the state an MCP server keeps per
	// session or per process. Each is a session of the upstream's main
	// client ([client.Client.NewSession]): its credentials are the main
	// client's, so that every caller costs one OAuth discovery and token
	// in all, not one each. The least recently used idle one is closed
	// to make room, and a call that finds every one busy is answered
	// with a retryable tool error. Callers without an identity share the
	// upstream's main client. Zero means DefaultSessions (for a Command,
	// a process each, 8); negative shares one client among all callers.
	// OTC, REST and A2A upstreams share one client: their state, if any,
	// is keyed by what each call carries.
	Sessions int
	// SessionIdle closes a caller's client (its MCP session, its
	// process) that has made no call for that long. Zero means
	// DefaultSessionIdle; negative keeps them until they are evicted.
	SessionIdle time.Duration

	// Client is the base of the options of the upstream's clients
	// (HTTPClient, MCPVersion, MaxResponseBytes, …). Its credentials,
	// Format, Handlers, OnNotification, IdleTimeout (Timeouts.Idle, whose
	// zero means none) and Retry are set by the federation.
	Client *client.Options
}

// Timeouts bound an upstream's start, its calls and its silences. The
// zero value gives the defaults described on each field.
type Timeouts struct {
	// Start bounds how long Mount waits for the upstream's first
	// catalog, and each later read of it. Zero means DefaultStartTimeout.
	Start time.Duration
	// Ready is how long an upstream just reached (its process just
	// started, or a new connection) may take to answer its first catalog
	// read: until then it is "starting", not down, and its process is not
	// started again; Mount stops waiting at Start and the read goes on in
	// the background, the other upstreams served meanwhile. One that has
	// not answered by then is down, and started (or reached) again with
	// backoff. Zero means DefaultReadyTimeout.
	Ready time.Duration
	// Call bounds each call of the upstream's tools, whatever progress it
	// makes (the tool's Timeout), and each read, render and completion
	// forwarded to it. Zero means DefaultCallTimeout; negative means none.
	Call time.Duration
	// Idle fails a call to an MCP server over HTTP that hears nothing (no
	// answer, no progress) for that long; each message restarts the
	// clock. Zero means none: Call alone.
	Idle time.Duration
	// Refresh is how often the catalog of an OTC, REST or A2A upstream is
	// read again, and the longest an MCP server's catalog goes unread
	// (its list_changed notifications refresh it at once). Zero means
	// DefaultRefresh (for MCP ten times it).
	Refresh time.Duration
}

// Credentials say how the gateway proves itself to an upstream. At most
// one of BearerToken, APIKey and OAuth may be set; PassThrough goes with
// any of them.
type Credentials struct {
	// BearerToken is sent as "Authorization: Bearer <token>".
	BearerToken string
	// APIKey is sent in the OXP-API-Key header.
	APIKey string
	// OAuth gets a token from the upstream's authorization server (client
	// credentials, a pre-registered client): see [client.OAuth].
	OAuth *client.OAuth
	// PassThrough forwards the caller's own bearer token on its calls,
	// and only a token whose audience ("aud") holds Audience: a token
	// issued for the gateway alone, or for another upstream, never leaves
	// it. A call without such a token is answered with a tool error,
	// without a request. The catalog is read with the credentials above,
	// if any; a call carries the caller's token in their place.
	PassThrough bool
	// Audience is the audience PassThrough requires: the upstream's
	// resource identifier. Required with PassThrough.
	Audience string
	// TokenExchange gets a token for the upstream, per caller, in
	// exchange for the caller's own (RFC 8693), by the upstream client's
	// grant (see [client.TokenExchange]; its HTTPClient defaults to the
	// federation's). A call without a bearer token is answered with a
	// tool error, without a request. It cannot be combined with
	// PassThrough.
	TokenExchange *client.TokenExchange
}

// Breaker sets an upstream's circuit breaker.
type Breaker struct {
	// Failures is how many calls in a row must fail to reach the upstream
	// for the breaker to open. Zero means DefaultFailures.
	Failures int
	// Cooldown is how long an open breaker answers at once before it
	// lets one call through to try the upstream; each failed try doubles
	// it, up to a minute. Zero means DefaultCooldown.
	Cooldown time.Duration
}

// Options configures a [Federation].
type Options struct {
	// Logger receives the upstreams' state changes and failures. Nil
	// means the registry's.
	Logger *slog.Logger
	// Propagate writes the trace context of a call into the headers of
	// its upstream request. Nil copies the inbound request's traceparent
	// and tracestate headers, when the call came over HTTP, so that one
	// trace covers both servers; the otel module's middleware starts a
	// span of its own for the call.
	Propagate func(ctx context.Context, h http.Header)
	// Strict makes Mount fail on an upstream whose first catalog cannot
	// be served (more tools than its MaxTools, two names that fold
	// together, a name the registry has already), that cannot be called
	// as it is set up (an A2A agent whose card names another origin), or
	// that cannot be reached as it is set up (a command that is not
	// found, a URL where nothing answers in its format). By default such
	// an upstream is left out, as one not reached is: reported down in
	// its Health with the reason, reached or read again with backoff
	// until it can be served, and every other upstream served meanwhile;
	// Mount does not wait for it.
	Strict bool
}

// Federation serves the tools of its upstreams from a registry. It is
// safe for concurrent use. Close stops its background work and its
// upstreams' processes and sessions.
type Federation struct {
	reg       *otc.Registry
	logger    *slog.Logger
	propagate func(ctx context.Context, h http.Header)
	strict    bool
	ups       []*upstream
	// httpClient is the upstreams' HTTP client when their Client options
	// name none: one pool of connections, sized for a gateway.
	httpClient *http.Client

	mu      sync.Mutex // serializes changes to the registry
	ctx     context.Context
	cancel  context.CancelFunc
	wg      sync.WaitGroup
	closing sync.Once
}

// maxIdlePerUpstream bounds the idle connections kept to one upstream host.
const maxIdlePerUpstream = 256

var namePattern = regexp.MustCompile(`^[A-Za-z0-9_]{1,64}$`)

// Mount serves the tools of ups from reg. It checks every upstream's
// configuration first (an error names the upstream and the field), then
// reaches them all at once, waiting for each at most its StartTimeout (and
// ctx): one that answers has its tools registered before Mount returns;
// one that does not is tried again in the background, as is one whose
// first catalog cannot be served (a name collision, too many tools),
// which is reported down in its Health with the reason; with
// [Options.Strict], such a catalog fails Mount, which then takes back
// what it registered.
// ctx bounds only the wait: the federation runs until Close.
func Mount(ctx context.Context, reg *otc.Registry, ups []Upstream, opts *Options) (*Federation, error) {
	if reg == nil {
		return nil, errors.New("federation: Mount needs a registry")
	}
	if opts == nil {
		opts = &Options{}
	}
	f := &Federation{reg: reg, logger: opts.Logger, propagate: opts.Propagate, strict: opts.Strict}
	if f.logger == nil {
		f.logger = reg.Logger()
	}
	if f.propagate == nil {
		f.propagate = copyTraceHeaders
	}
	tr := http.DefaultTransport.(*http.Transport).Clone()
	// A gateway calls few hosts, many times at once: keep as many idle
	// connections to each as calls run at once, rather than net/http's
	// 2, which would open and close a connection for most calls.
	tr.MaxIdleConnsPerHost = maxIdlePerUpstream
	f.httpClient = &http.Client{Transport: tr, CheckRedirect: client.CheckRedirect}
	seen := map[string]bool{}
	for i := range ups {
		cfg := ups[i]
		if err := check(&cfg); err != nil {
			err.Index, err.Name = i, cfg.Name
			return nil, err
		}
		if seen[cfg.Name] {
			return nil, &ConfigError{Index: i, Name: cfg.Name, Field: "name", Message: "the name is taken by another upstream"}
		}
		seen[cfg.Name] = true
		f.ups = append(f.ups, newUpstream(f, cfg, i+1))
	}
	f.ctx, f.cancel = context.WithCancel(context.Background())
	firsts := make([]chan error, len(f.ups))
	for i, u := range f.ups {
		firsts[i] = make(chan error, 1)
		f.wg.Add(1)
		go func() {
			defer f.wg.Done()
			u.run(f.ctx, firsts[i])
		}()
	}
	// Each upstream is waited for until its own start timeout from now:
	// they are reached at once, so Mount takes the longest, not the sum.
	start := time.Now()
	var errs []error
	for i, u := range f.ups {
		t := time.NewTimer(time.Until(start.Add(u.cfg.Timeouts.Start)))
		select {
		case err := <-firsts[i]:
			if err != nil {
				errs = append(errs, err)
			}
		case <-t.C:
			f.logger.Warn("federation: upstream not ready within its start timeout; still waiting for it in the background, and serving the others", "upstream", u.cfg.Name, "timeout", u.cfg.Timeouts.Start, "ready_timeout", u.cfg.Timeouts.Ready)
		case <-ctx.Done():
			errs = append(errs, fmt.Errorf("federation: upstream %q: %w", u.cfg.Name, ctx.Err()))
		}
		t.Stop()
	}
	if err := errors.Join(errs...); err != nil {
		f.Close()
		return nil, err
	}
	return f, nil
}

// Check reports what Mount would refuse in u's configuration, as a
// [*ConfigError] naming the field (Index 0), without reaching it.
func Check(u Upstream) error {
	if err := check(&u); err != nil {
		return err
	}
	return nil
}

// check fills in the defaults of an upstream and reports the first
// field that is wrong.
func check(u *Upstream) *ConfigError {
	if !namePattern.MatchString(u.Name) {
		return &ConfigError{Field: "name", Message: "must be 1 to 64 letters, digits and underscores"}
	}
	switch {
	case u.URL == "" && len(u.Command) == 0:
		return &ConfigError{Field: "url", Message: "a url or a command is required"}
	case u.URL != "" && len(u.Command) > 0:
		return &ConfigError{Field: "command", Message: "set a url or a command, not both"}
	case len(u.Command) > 0 && u.Format != "" && u.Format != client.FormatMCP:
		return &ConfigError{Field: "format", Message: fmt.Sprintf("a command is an MCP server over stdio, not %q", u.Format)}
	case len(u.Command) > 0 && u.Command[0] == "":
		return &ConfigError{Field: "command", Message: "the program is empty"}
	}
	if err := u.Format.Check(); err != nil {
		return &ConfigError{Field: "format", Message: err.Error()}
	}
	for field, ps := range map[string][]string{"include": u.Include, "exclude": u.Exclude} {
		for _, p := range ps {
			if _, err := path.Match(p, ""); err != nil {
				return &ConfigError{Field: field, Message: fmt.Sprintf("the pattern %q is malformed", p)}
			}
		}
	}
	for from, to := range u.Rename {
		if !partPattern.MatchString(to) {
			return &ConfigError{Field: "rename", Message: fmt.Sprintf("%q → %q: a local name must be letters, digits and underscores", from, to)}
		}
	}
	c := u.Credentials
	n := 0
	for _, set := range []bool{c.BearerToken != "", c.APIKey != "", c.OAuth != nil} {
		if set {
			n++
		}
	}
	switch {
	case n > 1:
		return &ConfigError{Field: "credentials", Message: "set one of bearer_token, api_key and oauth (pass_through may go with any)"}
	case c.PassThrough && c.Audience == "":
		return &ConfigError{Field: "credentials.audience", Message: "pass_through needs the audience a caller's token must hold for this upstream"}
	case c.PassThrough && c.TokenExchange != nil:
		return &ConfigError{Field: "credentials.token_exchange", Message: "pass_through forwards the caller's token, token_exchange replaces it: set one"}
	case c.TokenExchange != nil && len(u.Command) > 0:
		return &ConfigError{Field: "credentials.token_exchange", Message: "a process takes no bearer token"}
	case c.TokenExchange != nil && (c.TokenExchange.TokenURL == "" || c.TokenExchange.ClientID == "" || c.TokenExchange.ClientSecret == "" || c.TokenExchange.Audience == "" && c.TokenExchange.Resource == ""):
		return &ConfigError{Field: "credentials.token_exchange", Message: errNoExchange.Error()}
	case c.PassThrough && len(u.Command) > 0:
		return &ConfigError{Field: "credentials.pass_through", Message: "a process takes no bearer token"}
	}
	if u.Timeouts.Ready <= 0 {
		u.Timeouts.Ready = DefaultReadyTimeout
	}
	if u.Timeouts.Start <= 0 {
		u.Timeouts.Start = DefaultStartTimeout
	}
	if u.Timeouts.Call == 0 {
		u.Timeouts.Call = DefaultCallTimeout
	}
	if u.Timeouts.Refresh <= 0 {
		u.Timeouts.Refresh = DefaultRefresh
	}
	switch u.LogLevel {
	case "":
		u.LogLevel = "info"
	case "debug", "info", "notice", "warning", "error", "critical", "alert", "emergency":
	default:
		return &ConfigError{Field: "log_level", Message: fmt.Sprintf("%q is not one of debug, info, notice, warning, error, critical, alert, emergency", u.LogLevel)}
	}
	if u.MaxTools <= 0 {
		u.MaxTools = DefaultMaxTools
	}
	if u.MaxResources <= 0 {
		u.MaxResources = DefaultMaxResources
	}
	for _, p := range u.URIPrefixes {
		if problem := primitive.URIProblem(p + "x"); problem != "" || !strings.Contains(p, ":") {
			return &ConfigError{Field: "uri_prefixes", Message: fmt.Sprintf("%q is not the beginning of an absolute URI (scheme:…)", p)}
		}
	}
	if u.Breaker.Failures <= 0 {
		u.Breaker.Failures = DefaultFailures
	}
	if u.Breaker.Cooldown <= 0 {
		u.Breaker.Cooldown = DefaultCooldown
	}
	if u.SessionIdle == 0 {
		u.SessionIdle = DefaultSessionIdle
	}
	if u.Sessions == 0 {
		u.Sessions = DefaultSessions
		if len(u.Command) > 0 {
			u.Sessions = 8
		}
	}
	return nil
}

// ConfigError is a configuration that [Mount] or [LoadConfig] refuses:
// which upstream (its place in the list, from 0 as in the file, and its
// name), which field, and, from LoadConfig, the file and the field's
// line. Both write it alike: "FILE:4: upstreams[1] (calc) url:
// …" from a file, "federation: upstreams[1] (calc) url: …" from Mount.
type ConfigError struct {
	// File and Line place the field in the configuration file; empty
	// and zero from Mount.
	File string
	Line int
	// Index is the upstream's place in the list, from 0; -1 for a
	// mistake of the file as a whole (no upstream at all).
	Index int
	// Name is the upstream's name, as configured.
	Name string
	// Field is the field at fault: "name", "url", "command", "format",
	// "include", "rename", "credentials", … (in a file, the key as the
	// file spells it: "mcp", "credentials.bearer_token_env").
	Field   string
	Message string
}

func (e *ConfigError) Error() string {
	where := "federation"
	if e.File != "" {
		where = fmt.Sprintf("%s:%d", e.File, e.Line)
	}
	if e.Index < 0 {
		return fmt.Sprintf("%s: %s: %s", where, e.Field, e.Message)
	}
	return fmt.Sprintf("%s: upstreams[%d] (%s) %s: %s", where, e.Index, e.Name, e.Field, e.Message)
}

// Close takes the upstreams' tools out of the registry, stops refreshing
// their catalogs, and ends their sessions and processes (calls still
// running fail). It returns when the background work has stopped.
func (f *Federation) Close() error {
	f.closing.Do(func() {
		f.cancel()
		f.wg.Wait()
		defer f.httpClient.CloseIdleConnections()
		f.mu.Lock()
		for _, u := range f.ups {
			if s := u.snap.Swap(nil); s != nil {
				for id := range s.byID {
					f.reg.Remove(id)
				}
			}
			u.removeReadables()
		}
		f.mu.Unlock()
		// Each upstream's processes are stopped at once, not one after
		// another: a stdio process that takes its grace period to stop
		// holds up no other.
		var wg sync.WaitGroup
		for _, u := range f.ups {
			wg.Go(u.close)
		}
		wg.Wait()
	})
	return nil
}

// Refresh reads the catalog of the named upstream now and applies it.
func (f *Federation) Refresh(ctx context.Context, name string) error {
	for _, u := range f.ups {
		if u.cfg.Name == name {
			return u.refresh(ctx)
		}
	}
	return &ConfigError{Field: "federation", Message: fmt.Sprintf("no upstream is named %q", name)}
}

// copyTraceHeaders is the default of Options.Propagate.
func copyTraceHeaders(ctx context.Context, h http.Header) {
	r := otc.HTTPRequest(ctx)
	if r == nil {
		return
	}
	for _, k := range []string{"Traceparent", "Tracestate"} {
		if v := r.Header.Get(k); v != "" {
			h.Set(k, v)
		}
	}
}

// command builds the process of a stdio upstream.
func (u *Upstream) command() *exec.Cmd {
	cmd := exec.Command(u.Command[0], u.Command[1:]...)
	env := MinimalEnv()
	if u.InheritEnv {
		env = os.Environ()
	}
	cmd.Dir, cmd.Env = u.Dir, append(env, u.Env...)
	return cmd
}

// minimalEnvKeys are the variables of the gateway's environment that a
// stdio upstream is started with, unless it inherits the whole: what a
// program needs to find its tools, its files and its language, and no
// secret.
var minimalEnvKeys = []string{
	"PATH", "HOME", "USER", "LOGNAME", "SHELL", "LANG", "LC_ALL", "LC_CTYPE", "TZ", "TMPDIR",
	// Windows
	"SYSTEMROOT", "SYSTEMDRIVE", "WINDIR", "COMSPEC", "PATHEXT", "TEMP", "TMP", "USERPROFILE", "APPDATA", "LOCALAPPDATA", "PROGRAMDATA", "PROGRAMFILES",
}

// MinimalEnv is the environment a stdio upstream starts with, before its
// own Env: the gateway's PATH, HOME, USER, LOGNAME, SHELL, locale (LANG,
// LC_ALL, LC_CTYPE), TZ and TMPDIR, and on Windows what a program needs
// to start (SYSTEMROOT, TEMP, USERPROFILE, …), those that are set.
func MinimalEnv() []string {
	var env []string
	for _, k := range minimalEnvKeys {
		if v, ok := os.LookupEnv(k); ok {
			env = append(env, k+"="+v)
		}
	}
	return env
}
