package mcp

import (
	"context"
	"encoding/json"
	"log/slog"
	"sync"
	"time"

	"github.com/otcgo/otc"
	"github.com/otcgo/otc/internal/taskrun"
	"github.com/otcgo/otc/tasks"
)

// This file composes the two ways a 2026-07-28 call can ask its client
// something: input_required rounds of tools/call (rounds.go) and a task's
// input_required status (tasks.go). A tool with [otc.Tool.AskBeforeTask]
// gathers its first answers in rounds, then becomes a task: the client
// sees round 1 answered input_required (no taskId), and the round that
// brings the last answers answered with the task (resultType "task", no
// requestState), whose result reflects the answers.
//
// The call's function runs at once, as a plain call does, for up to the
// tool's window. Then:
//
//   - if it returns with questions open, the call is answered
//     input_required, as any call is, and no task is made;
//   - if it is still running when the window ends, or it returned
//     without questions open (a result, an error, a panic), the task is
//     created in the store (before the answer, so that any replica can
//     answer tasks/get for it) with its state so far, and the call is
//     answered with it. From then on the function's questions go through
//     the task (a taskrun.Asker).
//
// The switch from rounds to the task is made under composedAsker's mutex:
// a question asked while the task is being created waits for it, and
// goes through the task. A function that asked in rounds when the window
// ends was told its questions need answers and must return: the call
// waits for it rather than making a task of a run that is ending.
//
// Tools without AskBeforeTask keep the simpler path of start: the task
// is created before the function runs, and every question goes through
// it (the tasks-mrtr-input scenario's tools ask at once, through the
// task).

// composedAsker is the Asker of a call that asks in rounds, then through
// its task.
type composedAsker struct {
	round roundAsker

	mu   sync.Mutex
	task *taskrun.Asker // set when the call has become a task
}

// Ask implements [otc.Asker].
func (a *composedAsker) Ask(ctx context.Context, reqs []otc.InputRequest) ([]json.RawMessage, error) {
	a.mu.Lock()
	if t := a.task; t != nil {
		a.mu.Unlock()
		return t.Ask(ctx, reqs) // waits for answers: not under the lock
	}
	defer a.mu.Unlock()
	return a.round.Ask(ctx, reqs) // never waits
}

// asking reports whether the function has questions open in rounds.
// The caller holds a.mu.
func (a *composedAsker) asking() bool {
	st := a.round.callState
	st.mu.Lock()
	defer st.mu.Unlock()
	return st.round != nil && len(st.round.pending) > 0
}

// outcome is how a call's function ended.
type outcome struct {
	res      otc.CallResult
	err      error
	panicked bool
}

// update is the final update of the task of a call that ended so.
func (o outcome) update() tasks.Update {
	if o.panicked {
		return tasks.Update{Status: tasks.Failed, Result: rpcErrorJSON(&rpcError{Code: codeInternalError, Message: "Internal error: the call failed unexpectedly"})}
	}
	return settle(o.res, o.err)
}

// startAsking serves a task-capable call of a tool with a window to ask
// in, as the file comment says.
func (tm *taskManager) startAsking(ctx context.Context, x *exchange, req *otc.CallRequest, window time.Duration) ([]byte, *rpcError) {
	if err := tm.Admit(); err != nil {
		return appendCallError(nil, err, tm.s.infoMeta)
	}
	m := x.msg
	// The call outlives the request when it becomes a task: it keeps
	// copies of the request's buffers, which are reused once answered.
	run, runCtx, cancel := taskrun.Detach(ctx, req)
	state := &callState{Context: runCtx, caps: m.caps.clone(), request: run.HTTPRequest}
	if m.roundTrip {
		if e := tm.s.resume(ctx, state, m, m.name); e != nil {
			cancel()
			tm.Release()
			return nil, e
		}
	}
	asker := &composedAsker{round: roundAsker{state}}
	run.Asker = asker

	done := make(chan outcome, 1)
	go func() {
		var o outcome
		defer func() {
			if p := recover(); p != nil { // a middleware's panic: the function's are the registry's
				tm.s.logger.Error("mcp: a call that may become a task panicked", slog.String("tool", run.ToolName), slog.Any("panic", p))
				o = outcome{panicked: true}
			}
			done <- o
		}()
		o.res, o.err = tm.s.reg.Call(state, run)
	}()

	release := func() { // the call ended without a task
		cancel()
		tm.Release()
	}
	timer := time.NewTimer(window)
	defer timer.Stop()
	var o outcome
	select {
	case o = <-done:
	case <-ctx.Done():
		cancel()
		go func() { <-done; tm.Release() }()
		return nil, &rpcError{Code: codeInternalError, Message: "Internal error: the request ended before the call was answered"}
	case <-timer.C:
		asker.mu.Lock()
		if !asker.asking() {
			// Still running, with no question open: it becomes a task.
			t, refused := tm.create(ctx, run.HTTPRequest)
			if t == nil {
				asker.mu.Unlock()
				cancel() // the function stops; its slot is freed when it has
				go func() { <-done; tm.Release() }()
				return refused, nil
			}
			lt := taskrun.NewLocal(cancel)
			asker.task = tm.NewAsker(t.ID, lt, state.caps.allows)
			tm.Register(t.ID, lt)
			asker.mu.Unlock()
			go tm.await(runCtx, t.ID, lt, done)
			return tm.created(t), nil
		}
		asker.mu.Unlock()
		// The function was told its questions need answers: it returns.
		select {
		case o = <-done:
		case <-ctx.Done():
			cancel()
			go func() { <-done; tm.Release() }()
			return nil, &rpcError{Code: codeInternalError, Message: "Internal error: the request ended before the call was answered"}
		}
	}

	// The function returned within the window.
	if !o.panicked && o.res.Error != nil {
		if b, e, ok := tm.s.finishAsking(ctx, state, m, m.name, o.res.Error.Err); ok {
			release()
			return b, e
		}
		state.mu.Lock()
		needs := state.needs
		state.mu.Unlock()
		if needs != "" {
			release()
			return nil, missingCapability(needs)
		}
	}
	t, refused := tm.create(ctx, run.HTTPRequest)
	if t == nil {
		release()
		return refused, nil
	}
	if final := tm.Record(t.ID, o.update()); final != nil {
		t = final
	}
	release()
	return tm.created(t), nil
}

// await records the outcome of a call that became task id when its
// function returns, renewing the task's lease meanwhile.
func (tm *taskManager) await(ctx context.Context, id string, lt *taskrun.Local, done <-chan outcome) {
	tm.Supervise(ctx, id, lt, func() tasks.Update { return (<-done).update() })
}

// created is the CreateTaskResult of task t.
func (tm *taskManager) created(t *tasks.Task) []byte {
	b := make([]byte, 0, 256)
	b = append(b, `{"resultType":"task",`...)
	b = tm.appendTask(b, t)
	return append(b, '}')
}
