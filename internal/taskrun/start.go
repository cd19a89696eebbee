package taskrun

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/otcgo/otc/tasks"

	"github.com/otcgo/otc"
)

// Start starts a call as task t, whose ID, Owner and ContextID the wire
// format sets. The call runs at once, detached from ctx, and t is created
// in the store only once the registry admits the call: its middleware
// (a rate limit among them) passed it, its requirements are met and its
// input is valid. A refused call leaves no task behind.
//
// allow, when not nil, refuses a question the call's client cannot
// answer (see [Runner.NewAsker]); the call asks through its task.
// prepare, when not nil, gives the call's context what the wire format
// adds to it (its notifier, its state). settle turns the call's outcome
// into the task's final update.
//
// Start returns the task as created, while the call goes on in the
// background; or, when the call ended before its task was created, its
// outcome as [otc.Registry.Call] returned it. That is the registry's
// refusal, or the refusal of the task itself, an [*otc.Error] of class
// [otc.CodeRateLimited] (the runner runs as many tasks as it may, the
// caller holds or runs as many as the store keeps for one) or
// [otc.CodeUnavailable] (the store is full or failed), whose message
// says which limit and whose RetryAfter says when to try again.
func (r *Runner) Start(ctx context.Context, reg *otc.Registry, req *otc.CallRequest, t tasks.Task, allow func(otc.InputRequest) error,
	prepare func(context.Context) context.Context, settle func(otc.CallResult, error) tasks.Update) (*tasks.Task, otc.CallResult, error) {
	run, runCtx, cancel := Detach(ctx, req)
	l := NewLocal(cancel)
	run.Asker = r.NewAsker(t.ID, l, allow)
	if prepare != nil {
		runCtx = prepare(runCtx)
	}
	// Until its task exists, the call is the request's: a client that
	// goes away stops it.
	stop := context.AfterFunc(ctx, cancel)

	created := make(chan *tasks.Task, 1)
	var beat chan struct{}
	seam.SetAdmitted(run, func() error {
		if err := r.Admit(); err != nil {
			return err
		}
		t.Status = tasks.Working
		kept, err := r.Create(runCtx, &t)
		if err != nil {
			r.Release()
			return err
		}
		r.Register(t.ID, l)
		beat = make(chan struct{})
		go r.heartbeat(runCtx, t.ID, l, beat)
		r.changed(kept)
		created <- kept
		return nil
	})
	ended := make(chan struct{})
	var res otc.CallResult
	var err error
	go func() {
		defer close(ended)
		u := func() (u tasks.Update) {
			defer func() {
				if p := recover(); p != nil { // a middleware's panic: the function's are the registry's
					r.logger.Error(r.opts.Name+": a task's call panicked", slog.String("task", t.ID), slog.Any("panic", p))
					u = tasks.Update{Status: tasks.Failed, Result: r.opts.Failure("Internal error: the call failed unexpectedly")}
					err = errors.New("the call panicked")
				}
			}()
			res, err = reg.Call(runCtx, run)
			return settle(res, err)
		}()
		if beat == nil { // never admitted: there is no task to settle
			cancel()
			return
		}
		close(beat)
		r.Record(t.ID, u)
		l.notify()
		l.Cancel()
		r.mu.Lock()
		delete(r.local, t.ID)
		r.mu.Unlock()
		r.Release()
	}()
	select {
	case kept := <-created:
		stop()
		return kept, otc.CallResult{}, nil
	case <-ended:
		stop()
		select {
		case kept := <-created: // created, and ended at once
			return kept, otc.CallResult{}, nil
		default:
		}
		return nil, res, err
	}
}

// Admit takes a place among the tasks that run, as [Runner.Acquire] does,
// or returns the [*otc.Error] that refuses the call when none is free.
func (r *Runner) Admit() error {
	if r.Acquire() {
		return nil
	}
	return &otc.Error{Code: otc.CodeRateLimited, RetryAfter: time.Second,
		Message: fmt.Sprintf("The tool could not be started as a task: this server runs as many tasks as it may (%d); try again shortly", r.MaxRunning())}
}

// Create creates task t in the store, as [Store.Create] does, but for a
// store's refusal, which it returns as the [*otc.Error] that refuses the
// call: of class [otc.CodeRateLimited] for the caller's limits, saying
// which and when to try again, and [otc.CodeUnavailable] for a store that
// is full or failed (logged). [tasks.ErrExists] is returned as it is.
func (r *Runner) Create(ctx context.Context, t *tasks.Task) (*tasks.Task, error) {
	kept, err := r.store.Create(ctx, t)
	switch {
	case errors.Is(err, tasks.ErrExists):
		return nil, err // the caller's to handle: its id names a task already
	case err != nil:
		return nil, r.refusal(ctx, t.ID, err)
	}
	return kept, nil
}

// refusal is the call's refusal for a store that would not create its
// task id.
func (r *Runner) refusal(ctx context.Context, id string, err error) *otc.Error {
	const cannot = "The tool could not be started as a task: "
	var limit *tasks.LimitError
	switch {
	case errors.As(err, &limit) && limit.Running:
		return &otc.Error{Code: otc.CodeRateLimited, RetryAfter: max(limit.RetryAfter, time.Millisecond),
			Message: fmt.Sprintf(cannot+"you run as many tasks at once as this server runs for one caller (your limit is %d); wait for one to end, or cancel one", limit.Limit)}
	case errors.As(err, &limit):
		return &otc.Error{Code: otc.CodeRateLimited, RetryAfter: max(limit.RetryAfter, time.Millisecond),
			Message: fmt.Sprintf(cannot+"you hold as many tasks as this server keeps for one caller (your limit is %d); each is dropped once its time to live has passed", limit.Limit)}
	case errors.Is(err, tasks.ErrTooMany):
		return &otc.Error{Code: otc.CodeRateLimited, RetryAfter: time.Second,
			Message: cannot + "you hold as many tasks as this server keeps for one caller; each is dropped once its time to live has passed"}
	case errors.Is(err, tasks.ErrStoreFull):
		return &otc.Error{Code: otc.CodeUnavailable, RetryAfter: time.Second, Message: cannot + "the server's task store is full; try again shortly"}
	case errors.Is(err, tasks.ErrTooManyOwnerWebhooks):
		return &otc.Error{Code: otc.CodeInvalidInput, Message: cannot + "you have as many webhooks (push notification configurations) across your tasks as this server keeps for one caller; delete one first"}
	}
	r.logger.ErrorContext(ctx, r.opts.Name+": the task store failed to create a task", slog.String("task", id), slog.String("error", err.Error()))
	return &otc.Error{Code: otc.CodeUnavailable, RetryAfter: time.Second, Message: cannot + "the server's task store failed; try again shortly"}
}
