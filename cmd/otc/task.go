package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/otcgo/otc/client"
)

// This file is "otc call --task": a tools/call at protocol version
// 2026-07-28, whose client declares MCP's tasks extension. The client
// package follows the call through its input_required rounds and its
// task (polled at the interval the server suggests, its questions
// answered with tasks/update) to its end, and cancels the task when the
// call is interrupted (Ctrl-C). This file shows the task's status, and
// answers its questions on the terminal (ask.go).

// mcpVersionTasks is the MCP version of --task.
const mcpVersionTasks = "2026-07-28"

// answerer returns what answers a call's questions: on a terminal, by
// prompting, unless --json was given.
func (e *cli) answerer(jsonOut bool) *inputAnswerer {
	a := &inputAnswerer{prompt: e.term.prompt && !jsonOut, in: e.reader(), out: e.stderr}
	switch {
	case jsonOut:
		a.why = "--json was given"
	case !e.term.prompt:
		a.why = "standard input is not a terminal"
	}
	return a
}

// handlers are the client's handlers of the questions a tool may ask:
// an elicitation is put to the user (or refused, and the call ends with
// exitInput). otc has no model and no roots, so it declares neither.
//
// A prompt ends when the call does (Ctrl-C while the user is asked): the
// line being read is left to the exiting process.
func (a *inputAnswerer) handlers() *client.Handlers {
	return &client.Handlers{Elicit: func(ctx context.Context, req *client.ElicitRequest) (*client.ElicitResult, error) {
		params, err := json.Marshal(req)
		if err != nil {
			return nil, err
		}
		if !a.prompt {
			_, err := a.elicit(params) // refuses at once, setting a.refused
			return nil, err
		}
		type answer struct {
			raw json.RawMessage
			err error
		}
		done := make(chan answer, 1)
		go func() {
			raw, err := a.elicit(params)
			done <- answer{raw, err}
		}()
		var raw json.RawMessage
		select {
		case got := <-done:
			raw, err = got.raw, got.err
		case <-ctx.Done():
			return nil, ctx.Err()
		}
		if err != nil {
			return nil, err
		}
		var res client.ElicitResult
		if err := json.Unmarshal(raw, &res); err != nil {
			return nil, err
		}
		return &res, nil
	}}
}

// taskDisplay shows the status of a call's task on standard error.
type taskDisplay struct {
	e     *cli
	start time.Time
	mu    sync.Mutex
	id    string // the task's id, once the server has named it
	shown bool   // a status line is on the terminal
	last  string
}

// showTask returns the display of a --task call.
func (e *cli) showTask() *taskDisplay { return &taskDisplay{e: e, start: time.Now()} }

// show shows a status the client reports.
func (d *taskDisplay) show(p client.Progress) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if p.TaskID == "" {
		return // progress of the tool, which the status line does not show
	}
	d.id = p.TaskID
	line := "task " + p.TaskID + ": " + p.State
	if p.Message != "" {
		line += " (" + shorten(p.Message, 60) + ")"
	}
	if d.e.term.spinner {
		fmt.Fprintf(d.e.stderr, "\r\x1b[K%s %s", line, time.Since(d.start).Round(time.Second))
		d.shown = true
		return
	}
	if line != d.last { // not a terminal: each change on a line of its own
		fmt.Fprintln(d.e.stderr, "otc call: "+line)
		d.last = line
	}
}

// named notes the task's id, which the server handed out ("" for a call
// it answered at once).
func (d *taskDisplay) named(id string) {
	if id == "" {
		return
	}
	d.mu.Lock()
	d.id = id
	d.mu.Unlock()
	if f := d.e.taskNamed; f != nil {
		f(id)
	}
}

// clear clears the status line.
func (d *taskDisplay) clear() {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.shown {
		fmt.Fprint(d.e.stderr, "\r\x1b[K")
		d.shown = false
	}
}

// interrupted says how an interrupted call ended: for a --task call
// whose server named its task, that the task was cancelled, or what
// cancelling it answered (err is the call's error, which joins the
// failure to cancel to the interruption). d may be nil: a call without
// --task.
func (d *taskDisplay) interrupted(err error) string {
	if d == nil {
		return "interrupted"
	}
	d.mu.Lock()
	id := d.id
	d.mu.Unlock()
	if id == "" {
		return "interrupted before the server named a task"
	}
	var joined interface{ Unwrap() []error }
	if errors.As(err, &joined) {
		for _, e := range joined.Unwrap() {
			if !errors.Is(e, context.Canceled) {
				return "interrupted; cancelling task " + id + " failed: " + e.Error()
			}
		}
	}
	return "interrupted; task " + id + " cancelled"
}
