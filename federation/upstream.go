package federation

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"net/http"
	"os/exec"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/otcgo/otc/client"
	"github.com/otcgo/otc/internal/backoff"
	"github.com/otcgo/otc/internal/mcpwire"
	"github.com/otcgo/otc/internal/primitive"
	"github.com/otcgo/otc/internal/wire"
)

// State is an upstream's state, as [Health] reports it.
type State string

const (
	// StateStarting: the upstream has not been reached yet.
	StateStarting State = "starting"
	// StateUp: the upstream answers; its catalog is current.
	StateUp State = "up"
	// StateDegraded: the upstream answers calls, but its catalog could
	// not be read last time (the last good one is served).
	StateDegraded State = "degraded"
	// StateDown: the upstream's breaker is open, or it cannot be reached:
	// its calls are answered at once with a retryable tool error. An
	// upstream that cannot be called as it is set up (an A2A agent whose
	// card names another origin) is down too, its last error saying
	// "misconfigured", and its calls are refused without a retry.
	StateDown State = "down"
)

// upstream is one upstream's running state.
type upstream struct {
	f   *Federation
	cfg Upstream

	main atomic.Pointer[client.Client] // the shared client; nil until reached
	snap atomic.Pointer[snapshot]      // the tools served; nil until read
	brk  breaker
	pool *sessionPool

	// reads are the resources, templates and prompts served (guarded by
	// the federation's mu); subscribed counts the upstream resources
	// subscribed to, and noSubscribe says the upstream takes none.
	reads map[string]*readable
	// skills are the upstream's skills served (skills.go), by the URI the
	// upstream gives.
	skillsMu    sync.Mutex
	skills      map[string]*carriedSkill
	subscribed  atomic.Int64
	noSubscribe atomic.Bool

	wake    chan struct{} // a refresh is wanted (list_changed)
	redial  chan struct{} // the main client seems broken
	mu      sync.Mutex    // guards what follows
	lastErr string
	errAt   time.Time
	skipped []string
	// skippedReads names the resources and prompts left out.
	skippedReads []string
	// origin marks the resources and templates it serves: its name, and
	// its place among the upstreams, after the registry's own.
	origin  primitive.Origin
	readAt  time.Time
	reached bool
	broken  bool // misconfigured: reached, listed, but not callable
	// startedAt is when the main client was made (its process started);
	// ready says it has answered a catalog read since: until then, and
	// for at most Timeouts.Ready, the upstream is starting.
	startedAt time.Time
	ready     bool
}

func newUpstream(f *Federation, cfg Upstream, rank int) *upstream {
	u := &upstream{f: f, cfg: cfg, origin: primitive.Origin{Upstream: cfg.Name, Rank: rank}, wake: make(chan struct{}, 1), redial: make(chan struct{}, 1)}
	u.brk.init(cfg.Breaker)
	if cfg.Sessions > 0 {
		// Used only when the upstream's client keeps state (clientFor
		// asks it): an MCP server's sessions, a process each.
		u.pool = &sessionPool{max: cfg.Sessions, open: u.session}
	}
	return u
}

// The backoff of an upstream that cannot be reached or read: its first
// wait, doubled after each failure in a row, up to its last.
const retryFirst, retryMax = 100 * time.Millisecond, 30 * time.Second

// run is the upstream's background loop: it reaches the upstream, reads
// its catalog, and then refreshes it and reaches the upstream again when
// it is lost, until ctx ends. The first outcome is sent on first.
func (u *upstream) run(ctx context.Context, first chan<- error) {
	failures := 0 // in a row, for the backoff
	hint := ""    // where the upstream answers, when it is set up wrong
	report := func(err error) {
		if first != nil {
			first <- err
			first = nil
		}
	}
	if u.pool != nil && u.cfg.SessionIdle > 0 {
		u.f.wg.Add(1)
		go func() {
			defer u.f.wg.Done()
			u.reapSessions(ctx)
		}()
	}
	for ctx.Err() == nil {
		if u.main.Load() == nil {
			cl, err := u.dial(ctx)
			if err != nil {
				u.brk.failure()
				heals := !wontHeal(err)
				if !heals {
					// With where it does answer, when somewhere near does
					// (looked for once, and said with each such failure).
					if first != nil {
						hint = u.suggest(ctx, err)
					}
					if hint != "" {
						err = fmt.Errorf("%w; %s", err, hint)
					}
				}
				if first == nil || heals {
					u.fail(fmt.Errorf("reaching it: %w", err))
				} else {
					// Said at once, and once, not after the start timeout:
					// waiting would not mend it.
					u.record(fmt.Errorf("reaching it: %w", err))
					u.f.logger.Error("federation: upstream cannot be reached as it is set up; trying again in the background", "upstream", u.cfg.Name, "err", err)
					if u.f.strict {
						report(fmt.Errorf("federation: upstream %q cannot be reached as it is set up: %w", u.cfg.Name, err))
					} else {
						report(nil)
					}
				}
				failures++
				if !sleep(ctx, backoff.Delay(retryFirst, retryMax, failures)) {
					return
				}
				continue
			}
			u.main.Store(cl)
			u.mu.Lock()
			u.startedAt, u.ready = time.Now(), false
			u.mu.Unlock()
		}
		err := u.refresh(ctx)
		var collision *CollisionError
		if errors.As(err, &collision) || errors.Is(err, errTooManyTools) || isMisconfigured(err) {
			// A catalog refused, or an upstream that cannot be called as
			// it is set up (neither would mend by itself): a strict
			// Mount fails on it; otherwise Mount goes on without its
			// tools. Either way it is kept as the last error, and the
			// catalog read again, until one without it comes.
			if u.f.strict {
				report(err)
			} else {
				report(nil)
			}
		}
		if err == nil {
			failures = 0
			report(nil)
		}
		every := u.cfg.Timeouts.Refresh
		if cl := u.main.Load(); cl != nil && cl.NotifiesListChanges() {
			every *= 10
		}
		if err != nil {
			failures++
			every = min(every, backoff.Delay(retryFirst, retryMax, failures))
		}
		t := time.NewTimer(every)
		select {
		case <-ctx.Done():
			t.Stop()
			return
		case <-t.C:
		case <-u.wake:
			t.Stop()
			// A flood of list_changed costs one read per 100 ms at most.
			if !sleep(ctx, 100*time.Millisecond) {
				return
			}
			select {
			case <-u.wake:
			default:
			}
		case <-u.redial:
			t.Stop()
			if cl := u.main.Load(); cl != nil && u.healthy(ctx, cl) != nil {
				u.main.Store(nil)
				_ = cl.Close()
			}
		}
	}
}

// reapSessions closes, until ctx ends, the callers' sessions idle for
// longer than SessionIdle.
func (u *upstream) reapSessions(ctx context.Context) {
	every := max(u.cfg.SessionIdle/4, 10*time.Millisecond)
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case now := <-t.C:
			u.pool.closeIdle(now.Add(-u.cfg.SessionIdle))
		}
	}
}

// session opens a caller's session of the upstream: a session of the
// upstream's client, which shares its credentials (one OAuth discovery
// and one token for every caller) and the format Dial found; while the
// upstream has no client (a process being started again), a client of
// its own.
func (u *upstream) session(ctx context.Context) (remote, error) {
	if m := u.main.Load(); m != nil {
		return m.NewSession()
	}
	return u.dial(ctx)
}

// clientIdle is the client's Options.Timeouts.Idle for an upstream's
// Timeouts.Idle, whose zero means none (the client's zero means its
// default).
func clientIdle(d time.Duration) time.Duration {
	if d == 0 {
		return -1
	}
	return d
}

// dial makes a client of the upstream.
func (u *upstream) dial(ctx context.Context) (*client.Client, error) {
	o := u.options()
	o.Format = u.cfg.Format
	url := u.cfg.URL
	// A call that failed in transport is sent again where that cannot
	// run the tool twice; a refusal goes back to the caller at once,
	// whose own retry decides.
	o.Retry = &client.RetryPolicy{MaxAttempts: 3, Backoff: 50 * time.Millisecond, TransportOnly: true}
	o.IdleTimeout = clientIdle(u.cfg.Timeouts.Idle)
	o.LogLevel = u.cfg.LogLevel
	o.OAuth, o.TokenExchange = u.cfg.Credentials.OAuth, u.cfg.Credentials.TokenExchange
	o.Handlers = questionHandlers()
	// An MCP tool that runs as a task upstream is followed to its end
	// within the call (its status reported as progress).
	o.Tasks = true
	o.OnNotification = func(method string, params json.RawMessage) {
		switch method {
		case "notifications/tools/list_changed", "notifications/resources/list_changed", "notifications/prompts/list_changed":
			select {
			case u.wake <- struct{}{}:
			default:
			}
		case "notifications/resources/updated":
			var p mcpwire.URIParams
			if json.Unmarshal(params, &p) == nil && p.URI != "" {
				u.updated(p.URI)
			}
		}
	}
	if len(u.cfg.Command) > 0 {
		return client.NewStdio(u.cfg.command(), &o)
	}
	dctx, cancel := context.WithTimeout(ctx, u.cfg.Timeouts.Start)
	defer cancel()
	if o.Format == "" {
		return client.Dial(dctx, url, &o)
	}
	cl, err := client.New(url, &o)
	if err != nil {
		return nil, err
	}
	if err := cl.Health(dctx); err != nil && !isMisconfigured(err) {
		_ = cl.Close()
		return nil, err // a misconfigured one is reached: refresh says why it cannot be called
	}
	return cl, nil
}

// refresh reads the upstream's catalog and applies it.
func (u *upstream) refresh(ctx context.Context) error {
	if u.f.ctx.Err() != nil {
		return fmt.Errorf("federation: upstream %q: the federation is closed", u.cfg.Name)
	}
	cl := u.main.Load()
	if cl == nil {
		return fmt.Errorf("federation: upstream %q has not been reached", u.cfg.Name)
	}
	// A client just made may take up to Timeouts.Ready to answer its first
	// read (a process that installs or indexes at its start): it is
	// waited for, not started again.
	timeout := u.cfg.Timeouts.Start
	u.mu.Lock()
	if !u.ready && !u.startedAt.IsZero() {
		timeout = max(timeout, u.cfg.Timeouts.Ready-time.Since(u.startedAt))
	}
	u.mu.Unlock()
	rctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	defs, err := cl.ListTools(rctx)
	if err != nil {
		err = fmt.Errorf("reading its catalog: %w", err)
		u.fail(err)
		u.brk.failure()
		if len(u.cfg.Command) > 0 {
			u.kick()
		}
		return fmt.Errorf("federation: upstream %q: %w", u.cfg.Name, err)
	}
	u.brk.success()
	u.mu.Lock()
	u.ready = true // it answered: whatever comes of its catalog, it has started
	u.mu.Unlock()
	if err := u.apply(cl, defs); err != nil {
		u.fail(err)
		return err
	}
	if err := u.refreshReadables(rctx, cl); err != nil {
		// The tools are served; the last good resources and prompts stay.
		u.f.logger.Warn("federation: the upstream's resources or prompts could not be read; the last ones read are served", "upstream", u.cfg.Name, "err", err)
	}
	if cl.Format() == client.FormatA2A {
		// An agent whose card names an endpoint on another origin lists
		// its skills but cannot be called: say so now, not at each call.
		if err := cl.Health(rctx); isMisconfigured(err) {
			err = fmt.Errorf("misconfigured: %w", err)
			u.misconfigured(err)
			return fmt.Errorf("federation: upstream %q: %w", u.cfg.Name, err)
		}
	}
	return nil
}

// causeOf says in a few words what an upstream's last failure was, for
// the caller of one of its tools: refused, timed out, a process that
// exited (with the end of what it wrote to standard error), or the
// failure's own last words.
func causeOf(last string) string {
	switch {
	case strings.Contains(last, "connection refused"):
		return "it refused the connection"
	case strings.Contains(last, "deadline exceeded"), strings.Contains(last, "timeout"), strings.Contains(last, "did not answer"):
		return "it did not answer in time"
	case strings.Contains(last, "no such host"):
		return "its host name is not known"
	case strings.Contains(last, "executable file not found"), strings.Contains(last, "no such file or directory"):
		return "its command was not found"
	case strings.Contains(last, "exited"), strings.Contains(last, "exit status"), strings.Contains(last, "signal: "):
		if _, tail, ok := strings.Cut(last, "its standard error ends: "); ok {
			return "its process exited; its standard error ends: " + wire.Truncate(tail, 160)
		}
		return "its process exited"
	}
	tail := last
	if i := strings.LastIndex(last, ": "); i >= 0 {
		tail = last[i+2:]
	}
	return wire.Truncate(tail, 160)
}

// options are the client options every client of the upstream starts
// from: its own (Upstream.Client), its static credentials, and the
// federation's HTTP client where it names none.
func (u *upstream) options() client.Options {
	o := client.Options{}
	if u.cfg.Client != nil {
		o = *u.cfg.Client
	}
	if o.HTTPClient == nil {
		o.HTTPClient = u.f.httpClient
	}
	o.BearerToken, o.APIKey, o.JWT = u.cfg.Credentials.BearerToken, u.cfg.Credentials.APIKey, nil
	return o
}

// suggest looks, after an upstream at a URL answered 404 in its format,
// for where a server does answer near that URL (as client.Dial looks: the
// URL and the paths an otc server serves each format at), and says it in
// the terms of the configuration: "" when nothing answers.
func (u *upstream) suggest(ctx context.Context, err error) string {
	re, ok := errors.AsType[*client.ResponseError](err)
	if !ok || re.StatusCode != http.StatusNotFound || u.cfg.URL == "" || u.cfg.Format == "" {
		return ""
	}
	o := u.options()
	dctx, cancel := context.WithTimeout(ctx, suggestTimeout)
	defer cancel()
	// The configured format where an otc server serves it, first; then
	// whatever answers.
	var found *client.Client
	if p := u.cfg.Format.Path(); p != "" && !strings.HasSuffix(strings.TrimRight(u.cfg.URL, "/"), p) {
		try := o
		try.Format = u.cfg.Format
		if c, err := client.New(strings.TrimRight(u.cfg.URL, "/")+p, &try); err == nil {
			if _, err := c.ListTools(dctx); err == nil {
				found = c
			} else {
				_ = c.Close()
			}
		}
	}
	if found == nil {
		c, err := client.Dial(dctx, u.cfg.URL, &o)
		if err != nil {
			return ""
		}
		found = c
	}
	defer found.Close()
	if found.Format() == u.cfg.Format {
		return fmt.Sprintf("%s server answers at %s: set the upstream's url to it (in otc gateway's file, %s: {url: %s})", found.Format().Title(), found.URL(), found.Format(), found.URL())
	}
	return fmt.Sprintf("%s server, not %s one, answers at %s: if it is the one, name its format (in otc gateway's file, %s: {url: %s}), or leave the format for it to be found (url: %s)",
		found.Format().Title(), u.cfg.Format.Title(), found.URL(), found.Format(), found.URL(), u.cfg.URL)
}

// suggestTimeout bounds suggest's look around.
const suggestTimeout = 3 * time.Second

// wontHeal says whether err, from reaching an upstream, is a mistake of
// its setup that no wait mends: a command that is not found or may not
// be run, or a URL where nothing answers in the configured format (404)
// or in any format.
func wontHeal(err error) bool {
	if errors.Is(err, exec.ErrNotFound) || errors.Is(err, fs.ErrNotExist) || errors.Is(err, fs.ErrPermission) {
		return true
	}
	if ns, ok := errors.AsType[*client.NoServerError](err); ok {
		for _, a := range ns.Tried {
			if re, ok := errors.AsType[*client.ResponseError](a.Err); ok && (re.StatusCode >= 500 || re.StatusCode == 0) {
				return false // a server failing for now, which may answer later
			}
		}
		return true
	}
	re, ok := errors.AsType[*client.ResponseError](err)
	return ok && (re.StatusCode == http.StatusNotFound || re.StatusCode == http.StatusMethodNotAllowed)
}

// isMisconfigured says whether err is an upstream's own mistake, which
// no retry mends: an A2A agent whose card sends its calls to another
// origin.
func isMisconfigured(err error) bool {
	_, ok := errors.AsType[*client.OriginError](err)
	return ok
}

// misconfigured records that the upstream cannot be called as it is set
// up: it is down until a catalog read finds it mended.
func (u *upstream) misconfigured(err error) {
	u.fail(err)
	u.mu.Lock()
	u.broken = true
	u.mu.Unlock()
}

// healthy asks the upstream whether it is up, within its start timeout.
func (u *upstream) healthy(ctx context.Context, cl *client.Client) error {
	ctx, cancel := context.WithTimeout(ctx, u.cfg.Timeouts.Start)
	defer cancel()
	return cl.Health(ctx)
}

// kick asks the background loop to check the main client, and reach the
// upstream again if it is lost.
func (u *upstream) kick() {
	select {
	case u.redial <- struct{}{}:
	default:
	}
}

func (u *upstream) lastError() string {
	u.mu.Lock()
	defer u.mu.Unlock()
	return u.lastErr
}

// fail records a failure; the log has it when it differs from the last
// (a dead upstream retried with backoff says so once).
func (u *upstream) fail(err error) {
	if u.record(err) {
		u.f.logger.Warn("federation: upstream failed", "upstream", u.cfg.Name, "err", err)
	}
}

// record keeps err as the upstream's last failure, and reports whether
// it differs from the one before.
func (u *upstream) record(err error) bool {
	u.mu.Lock()
	defer u.mu.Unlock()
	same := u.lastErr == err.Error()
	u.lastErr, u.errAt = err.Error(), time.Now()
	return !same
}

func (u *upstream) close() {
	if u.pool != nil {
		u.pool.closeAll()
	}
	if cl := u.main.Swap(nil); cl != nil {
		_ = cl.Close()
	}
}

// sleep waits d, or until ctx ends (false).
func sleep(ctx context.Context, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return false
	case <-t.C:
		return true
	}
}

// Health is what [Federation.Health] reports of one upstream.
type Health struct {
	Name   string `json:"name"`
	Format string `json:"format,omitempty"`
	State  State  `json:"state"`
	// Tools is how many tools of the upstream are served; Resources,
	// Templates, Prompts and Skills how many of those (an MCP upstream's).
	Tools     int `json:"tools"`
	Resources int `json:"resources,omitempty"`
	Templates int `json:"templates,omitempty"`
	Prompts   int `json:"prompts,omitempty"`
	Skills    int `json:"skills,omitempty"`
	// CatalogAge is how long ago the catalog served was read; zero before
	// the first.
	CatalogAge time.Duration `json:"-"`
	// LastError is the last failure to reach the upstream or read its
	// catalog, until the next success.
	LastError string `json:"last_error,omitempty"`
	// Skipped names the upstream's tools left out of the catalog, each
	// with the reason.
	Skipped []string `json:"skipped,omitempty"`
	// Sessions is how many per-caller clients are open.
	Sessions int `json:"sessions,omitempty"`
	// Starting is how long the upstream has been starting, when its State
	// is StateStarting after it was reached (its process started, its
	// first catalog read not answered yet); zero otherwise.
	Starting time.Duration `json:"-"`
}

// Health reports each upstream, in the order they were given.
func (f *Federation) Health() []Health {
	out := make([]Health, 0, len(f.ups))
	for _, u := range f.ups {
		h := Health{Name: u.cfg.Name}
		if cl := u.main.Load(); cl != nil {
			h.Format = string(cl.Format())
		}
		if s := u.snap.Load(); s != nil {
			h.Tools = len(s.byID)
		}
		f.mu.Lock()
		for _, r := range u.reads {
			switch r.entry.(type) {
			case *primitive.Resource:
				h.Resources++
			case *primitive.Template:
				h.Templates++
			case *primitive.Prompt:
				h.Prompts++
			}
		}
		f.mu.Unlock()
		u.skillsMu.Lock()
		for _, c := range u.skills {
			h.Skills += len(c.handles)
		}
		u.skillsMu.Unlock()
		u.mu.Lock()
		h.LastError, h.Skipped = u.lastErr, slices.Concat(u.skipped, u.skippedReads)
		if !u.readAt.IsZero() {
			h.CatalogAge = time.Since(u.readAt)
		}
		reached, broken := u.reached, u.broken
		starting := u.main.Load() != nil && !u.ready && !u.startedAt.IsZero() && time.Since(u.startedAt) < u.cfg.Timeouts.Ready
		if starting {
			h.Starting = time.Since(u.startedAt)
		}
		u.mu.Unlock()
		if u.pool != nil {
			h.Sessions = u.pool.len()
		}
		switch {
		case starting, !reached && h.LastError == "":
			h.State = StateStarting
		case u.brk.open() || u.main.Load() == nil || broken:
			h.State = StateDown
		case h.LastError != "" && u.snap.Load() == nil:
			h.State = StateDown // reached, but no catalog of it served yet
		case h.LastError != "":
			h.State = StateDegraded
		default:
			h.State = StateUp
		}
		out = append(out, h)
	}
	return out
}
