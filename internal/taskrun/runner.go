package taskrun

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"sync"
	"time"

	"github.com/otcgo/otc/tasks"

	"github.com/otcgo/otc"
	"github.com/otcgo/otc/internal/hook"
)

// seam is what package otc lends the packages beside it (internal/hook).
var seam = hook.Of[otc.Registry, otc.Policy, otc.ToolDefinition, otc.CallRequest, otc.Identity, otc.Error]()

// RunnerOptions configures [NewRunner]. The zero value, and nil, give the
// defaults described on each field.
type RunnerOptions struct {
	// MaxRunning caps the tasks the runner runs at once ([Runner.Acquire]
	// refuses one more). Zero or less means tasks.DefaultMaxRunning.
	MaxRunning int
	// PollInterval is how often a running task's lease is renewed and the
	// store looked at. Keep the store's lease several times longer. Zero
	// or less means tasks.DefaultPollInterval.
	PollInterval time.Duration
	// Failure is the Result of a task failed by the runner itself, for
	// the message given: when the call's result is larger than the store
	// keeps, or the store is full. Each wire format writes its own
	// shape. Nil means {"message": message}.
	Failure func(message string) json.RawMessage
	// Said, when not nil, is the message a status update of task id says
	// to its client (its questions, its failure), which the update adds
	// to the task's History; nil for none. Each wire format writes its
	// own. Nil keeps no history of the runner's updates.
	Said func(id string, u *tasks.Update) json.RawMessage
	// Changed, when not nil, is told of each change of status the runner
	// records (the task created, asking, working again once answered,
	// ended), with the task as the store then holds it, in the order
	// they were made; it is called once per change, on the replica that
	// made it, and must not block (A2A's push notifications queue their
	// deliveries). A task cancelled, or lost with its replica, is not
	// the runner's change.
	Changed func(t *tasks.Task)
	// Logger receives the store's failures. Nil means slog.Default().
	Logger *slog.Logger
	// Name prefixes the runner's log messages ("mcp", "a2a").
	Name string
}

// Runner runs tasks kept in a [tasks.Store], for a wire format that serves
// tasks (MCP's tasks extension, A2A): it caps how many run at once in this
// process, keeps how to stop and wake each, renews a running task's lease,
// stops its call when the store says the task has ended meanwhile
// (cancelled from another replica, or lost), and records its outcome. The
// wire formats share it so that a task runs, and ends, one way whichever
// protocol started it.
type Runner struct {
	store  tasks.Store
	opts   RunnerOptions
	slots  chan struct{}
	logger *slog.Logger

	mu    sync.Mutex
	local map[string]*Local
}

// Local is a task this process runs: how to stop its call, how to wake
// its wait for answers, and how to learn that it changed. Make one with
// [NewLocal].
type Local struct {
	Cancel context.CancelFunc
	Wake   chan struct{} // buffered 1

	mu      sync.Mutex
	changed chan struct{}
}

// NewLocal returns the Local of a call that cancel stops.
func NewLocal(cancel context.CancelFunc) *Local {
	return &Local{Cancel: cancel, Wake: make(chan struct{}, 1), changed: make(chan struct{})}
}

// Changed returns a channel closed at the task's next change made in this
// process: its call asked questions, took their answers, or ended (its
// outcome recorded). Read the task from the store once it is closed.
func (l *Local) Changed() <-chan struct{} {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.changed
}

// notify closes the channel Changed returned, and makes the next.
func (l *Local) notify() {
	l.mu.Lock()
	close(l.changed)
	l.changed = make(chan struct{})
	l.mu.Unlock()
}

// NewRunner returns a runner of tasks kept in store. opts may be nil.
func NewRunner(store tasks.Store, opts *RunnerOptions) *Runner {
	r := &Runner{store: store, local: map[string]*Local{}}
	if opts != nil {
		r.opts = *opts
	}
	if r.opts.MaxRunning <= 0 {
		r.opts.MaxRunning = tasks.DefaultMaxRunning
	}
	if r.opts.PollInterval <= 0 {
		r.opts.PollInterval = tasks.DefaultPollInterval
	}
	if r.opts.Failure == nil {
		r.opts.Failure = func(message string) json.RawMessage {
			b, _ := json.Marshal(map[string]string{"message": message})
			return b
		}
	}
	r.logger = r.opts.Logger
	if r.logger == nil {
		r.logger = slog.Default()
	}
	if r.opts.Name == "" {
		r.opts.Name = "tasks"
	}
	r.slots = make(chan struct{}, r.opts.MaxRunning)
	return r
}

// Store returns the store the runner keeps its tasks in.
func (r *Runner) Store() tasks.Store { return r.store }

// PollInterval returns how often a running task's lease is renewed.
func (r *Runner) PollInterval() time.Duration { return r.opts.PollInterval }

// MaxRunning returns how many tasks the runner runs at once.
func (r *Runner) MaxRunning() int { return cap(r.slots) }

// Acquire takes a place among the tasks that run, and reports whether one
// was free. Each place taken is given back with [Runner.Release], which
// Supervise does for the task it supervises.
func (r *Runner) Acquire() bool {
	select {
	case r.slots <- struct{}{}:
		return true
	default:
		return false
	}
}

// Release gives back a place Acquire took.
func (r *Runner) Release() { <-r.slots }

// Register records that this process runs task id.
func (r *Runner) Register(id string, l *Local) {
	r.mu.Lock()
	r.local[id] = l
	r.mu.Unlock()
}

// Lookup returns the Local of task id, nil when another process runs it or
// it has ended.
func (r *Runner) Lookup(id string) *Local {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.local[id]
}

// Supervise renews task id's lease while outcome waits for the task's
// call to end, records what it returns, and then forgets the task and
// releases its place among the running ones. It returns once the outcome
// is recorded.
func (r *Runner) Supervise(ctx context.Context, id string, l *Local, outcome func() tasks.Update) {
	defer func() {
		l.Cancel()
		r.mu.Lock()
		delete(r.local, id)
		r.mu.Unlock()
		r.Release()
	}()
	beat := make(chan struct{})
	go r.heartbeat(ctx, id, l, beat)
	u := outcome()
	close(beat)
	r.Record(id, u)
	l.notify()
}

// Record records the outcome of task id's call, and returns the task as
// it then is (nil when the store failed). A result larger than the store
// keeps, or a store that is full, fails the task instead, with the
// format's Failure.
func (r *Runner) Record(id string, u tasks.Update) *tasks.Task {
	sctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	t, err := r.store.Update(sctx, id, r.said(id, &u))
	if errors.Is(err, tasks.ErrResultTooLarge) || errors.Is(err, tasks.ErrStoreFull) {
		msg := "Internal error: the result of the call is larger than the server's task store keeps"
		if !errors.Is(err, tasks.ErrResultTooLarge) {
			msg = "Internal error: the server's task store is full and could not keep the result of the call"
		}
		u = tasks.Update{Status: tasks.Failed, Result: r.opts.Failure(msg)}
		t, err = r.store.Update(sctx, id, r.said(id, &u))
	}
	if err != nil && !errors.Is(err, tasks.ErrNotFound) {
		r.logger.Error(r.opts.Name+": the outcome of a task could not be recorded; the task is shown failed once its lease lapses",
			slog.String("task", id), slog.String("error", err.Error()))
	}
	if err != nil {
		return nil
	}
	if t.Status == u.Status { // not ended otherwise meanwhile (cancelled)
		r.changed(t)
	}
	return t
}

// changed tells RunnerOptions.Changed of t's new status.
func (r *Runner) changed(t *tasks.Task) {
	if r.opts.Changed != nil && t != nil {
		r.opts.Changed(t)
	}
}

// said adds to u the message it says, as RunnerOptions.Said writes it,
// and returns u.
func (r *Runner) said(id string, u *tasks.Update) *tasks.Update {
	if r.opts.Said != nil {
		if m := r.opts.Said(id, u); m != nil {
			u.History = append(u.History, m)
		}
	}
	return u
}

// heartbeat renews the task's lease every poll interval until beat is
// closed, stops the call when the store says the task has ended
// meanwhile, and wakes the task when answers reached the store.
func (r *Runner) heartbeat(ctx context.Context, id string, l *Local, beat chan struct{}) {
	tick := time.NewTicker(r.opts.PollInterval)
	defer tick.Stop()
	for {
		select {
		case <-beat:
			return
		case <-ctx.Done():
			return
		case <-tick.C:
		}
		octx, cancel := context.WithTimeout(ctx, r.opts.PollInterval)
		t, err := r.store.Update(octx, id, &tasks.Update{})
		cancel()
		switch {
		case errors.Is(err, tasks.ErrNotFound):
			l.Cancel()
			return
		case err != nil:
			r.logger.Warn(r.opts.Name+": renewing a task's lease failed; trying again", slog.String("task", id), slog.String("error", err.Error()))
		case t.Status.Terminal():
			l.Cancel()
			return
		case len(t.InputResponses) > 0:
			select {
			case l.Wake <- struct{}{}:
			default:
			}
		}
	}
}

// Detach returns a copy of req that can run as a task after the request
// that carried it has been answered, and the context it runs in: the
// copy owns its input and request body (the request's buffers are reused
// once it is answered) and is marked AsTask; the context keeps ctx's
// values without its cancellation, and cancel stops the call.
func Detach(ctx context.Context, req *otc.CallRequest) (run *otc.CallRequest, runCtx context.Context, cancel context.CancelFunc) {
	c := *req
	seam.SetParsed(&c, nil, 0) // the parsed input refers to the request's body
	c.Input = bytes.Clone(req.Input)
	c.RequestBody = bytes.Clone(req.RequestBody)
	c.AsTask = true
	runCtx, cancel = context.WithCancel(context.WithoutCancel(ctx))
	if c.HTTPRequest != nil { // the request is over; the call goes on
		c.HTTPRequest = c.HTTPRequest.WithContext(runCtx)
	}
	return &c, runCtx, cancel
}
