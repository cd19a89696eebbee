package client

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/otcgo/otc/internal/a2awire"
)

// Task is a call that runs as a task on its server: an MCP task (protocol
// version 2026-07-28, with [Options.Tasks]) or an A2A task. [Client.Start]
// begins one without waiting for its end; [Client.Task] takes one up again
// by its id, from another client or process. A call its server answers at
// once (any call over OTC or the REST view, a tool that does not run as a
// task) is a Task already done, with an empty ID.
type Task struct {
	// ID is the server's id of the task; "" for a call answered at once.
	ID string

	c    *Client
	k    *call
	poll time.Duration // MCP: the first wait the server suggested

	mu   sync.Mutex
	done bool
	res  *Result
	err  error
}

// TaskStatus is what a task's server says of it.
type TaskStatus struct {
	// State is the task's state in its format's words: MCP's "working",
	// "input_required", "completed", "failed", "cancelled"; A2A's
	// "submitted", "working", "input_required", "completed", … (without
	// the TASK_STATE_ prefix, in lower case).
	State string
	// Message says what the task is doing, when the server says.
	Message string
}

// tasker is a transport that runs calls as tasks.
type tasker interface {
	start(ctx context.Context, k *call) (*Task, error)
	wait(ctx context.Context, t *Task) (*Result, error)
	status(ctx context.Context, id string) (TaskStatus, error)
	cancel(ctx context.Context, id string) error
}

// Start begins a call like [Client.Call], but returns as soon as the
// server has made it a task, without waiting for its end; Wait waits.
// Over MCP the call runs as a task only with [Options.Tasks] and a tool
// that may run as one; over A2A it asks the agent to answer at once. Any
// other call is made to its end and returned done. The call's options are
// kept for Wait (its Progress callback, its call id).
func (c *Client) Start(ctx context.Context, toolID string, input any, opts *CallOptions) (*Task, error) {
	k, err := c.newCall(toolID, input, opts)
	if err != nil {
		return nil, err
	}
	if tk, ok := c.t.(tasker); ok {
		t, err := tk.start(ctx, k)
		if err != nil {
			return nil, fmt.Errorf("otc client: start %s: %w", toolID, err)
		}
		return t, nil
	}
	res, err := c.t.call(ctx, k)
	if err != nil {
		err = fmt.Errorf("otc client: call %s: %w", toolID, err)
		if res == nil {
			return nil, err
		}
	}
	return &Task{c: c, k: k, done: true, res: res, err: err}, nil
}

// Task returns the task id of the client's server, to wait for, read or
// cancel; a task started elsewhere (another process, a client since
// closed). opts are the options Wait reports progress with; may be nil.
func (c *Client) Task(id string, opts *CallOptions) (*Task, error) {
	if _, ok := c.t.(tasker); !ok {
		return nil, fmt.Errorf("otc client: %s has no tasks; only MCP servers and A2A agents do", c.format)
	}
	if id == "" {
		return nil, errors.New("otc client: Task needs the task's id")
	}
	k := &call{}
	if opts != nil {
		k.opts = *opts
	}
	return &Task{ID: id, c: c, k: k, poll: minPoll}, nil
}

// Wait waits for the task's end, answering its questions with
// [Options.Handlers] and reporting its status to the call's Progress, and
// returns its outcome as [Client.Call] does. When ctx ends first, the task
// is cancelled. A task already done returns its outcome again.
func (t *Task) Wait(ctx context.Context) (*Result, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.done {
		return t.res, t.err
	}
	res, err := t.c.t.(tasker).wait(ctx, t)
	if err != nil {
		err = fmt.Errorf("otc client: task %s: %w", t.ID, err)
	}
	if ctx.Err() == nil {
		t.done, t.res, t.err = true, res, err
	}
	return res, err
}

// Status reads the task's status once; a task already done is
// "completed" or "failed".
func (t *Task) Status(ctx context.Context) (TaskStatus, error) {
	t.mu.Lock()
	done, err := t.done, t.err
	t.mu.Unlock()
	if done {
		if err != nil {
			return TaskStatus{State: "failed", Message: err.Error()}, nil
		}
		return TaskStatus{State: "completed"}, nil
	}
	st, err := t.c.t.(tasker).status(ctx, t.ID)
	if err != nil {
		return TaskStatus{}, fmt.Errorf("otc client: task %s: %w", t.ID, err)
	}
	return st, nil
}

// Cancel asks the server to cancel the task. A task already done has
// nothing to cancel.
func (t *Task) Cancel(ctx context.Context) error {
	t.mu.Lock()
	done := t.done
	t.mu.Unlock()
	if done {
		return nil
	}
	if err := t.c.t.(tasker).cancel(ctx, t.ID); err != nil {
		return fmt.Errorf("otc client: cancelling task %s: %w", t.ID, err)
	}
	return nil
}

// start sends the message with the agent asked to answer at once: a
// task is handed back as it is.
func (w *a2aWire) start(ctx context.Context, k *call) (*Task, error) {
	a, parts, err := w.message(ctx, k)
	if err != nil {
		return nil, err
	}
	params := sendParams(a, k.opts.CallID, "", "", parts, a.ver.NotBlocking())
	at, err := w.send(ctx, k, a, params)
	if err != nil {
		return nil, err
	}
	t := &Task{c: w.c, k: k}
	if at.Kind == "message" || at.ID == "" {
		t.done = true
		t.res, t.err = w.follow(ctx, a, k, at)
		if t.err != nil && t.res == nil {
			return nil, t.err
		}
		return t, nil
	}
	t.ID = at.ID
	return t, nil
}

// wait reads the task and follows it to its end.
func (w *a2aWire) wait(ctx context.Context, t *Task) (*Result, error) {
	a, err := w.current(ctx, t.k)
	if err != nil {
		return nil, err
	}
	at, err := w.get(ctx, a, t.ID)
	if err != nil {
		if ctx.Err() != nil {
			return nil, w.abandon(ctx, t.k, a, t.ID, err)
		}
		return nil, err
	}
	if t.k.opts.CallID == "" {
		t.k.opts.CallID = t.ID
	}
	return w.follow(ctx, a, t.k, at)
}

// get reads a task.
func (w *a2aWire) get(ctx context.Context, a *a2aAgent, id string) (*a2aTask, error) {
	var got json.RawMessage
	if err := w.rpc(ctx, nil, a, methodName(a, a2awire.GetTask), map[string]any{"id": id}, &got); err != nil {
		return nil, err
	}
	var at a2aTask
	if err := json.Unmarshal(got, &at); err != nil {
		return nil, fmt.Errorf("GetTask: the result: %w", err)
	}
	at.Kind = "task"
	return &at, nil
}

// status reads the task once.
func (w *a2aWire) status(ctx context.Context, id string) (TaskStatus, error) {
	a, err := w.current(ctx, nil)
	if err != nil {
		return TaskStatus{}, err
	}
	at, err := w.get(ctx, a, id)
	if err != nil {
		return TaskStatus{}, err
	}
	st := TaskStatus{State: strings.ToLower(strings.TrimPrefix(a2awire.State(at.Status.State), "TASK_STATE_"))}
	if m := at.Status.Message; m != nil {
		st.Message = textOf(m.Parts)
	}
	return st, nil
}

// cancel cancels the task.
func (w *a2aWire) cancel(ctx context.Context, id string) error {
	a, err := w.current(ctx, nil)
	if err != nil {
		return err
	}
	var ack json.RawMessage
	return w.rpc(ctx, nil, a, methodName(a, a2awire.CancelTask), map[string]any{"id": id}, &ack)
}
