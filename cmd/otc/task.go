package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"time"

	"github.com/otcgo/otc"
)

// This file is "otc call --task": a tools/call at protocol version
// 2026-07-28 from a client that declares MCP's tasks extension. The
// server answers with the result, with input_required (the tool's
// questions, answered in another tools/call with the requestState), or
// with a task, which otc polls with tasks/get at the pollIntervalMs the
// server suggests, answering its questions with tasks/update, until it
// ends. Interrupted (Ctrl-C), otc sends tasks/cancel.

// maxRounds bounds the input_required rounds of one call.
const maxRounds = 16

// Bounds of the polling interval, whatever the server suggests.
const (
	minPoll = 20 * time.Millisecond
	maxPoll = time.Minute
)

// inputRequest is one question of an input_required result or task.
type inputRequest struct {
	Method string          `json:"method"`
	Params json.RawMessage `json:"params"`
}

// errInterrupted ends a call whose task was cancelled on Ctrl-C.
type errInterrupted struct {
	task      string
	cancelErr error // of tasks/cancel; nil when it was acked
}

func (e *errInterrupted) Error() string {
	if e.cancelErr != nil {
		return "interrupted; cancelling task " + e.task + " failed: " + e.cancelErr.Error()
	}
	return "interrupted; task " + e.task + " cancelled"
}

// taskStatus is what a poll shows of a task.
type taskStatus struct {
	ID, Status, Message string
	Elapsed             time.Duration
}

// callModern makes a 2026-07-28 tools/call and returns its
// CallToolResult, through its rounds and its task.
func (m *mcpServer) callModern(ctx context.Context, params map[string]any) (json.RawMessage, error) {
	for round := 0; ; round++ {
		var raw json.RawMessage
		if err := m.request(ctx, "tools/call", params, &raw); err != nil {
			return nil, err
		}
		var head struct {
			ResultType     string                  `json:"resultType"`
			InputRequests  map[string]inputRequest `json:"inputRequests"`
			RequestState   *string                 `json:"requestState"`
			TaskID         string                  `json:"taskId"`
			Status         string                  `json:"status"`
			PollIntervalMs int64                   `json:"pollIntervalMs"`
		}
		if err := json.Unmarshal(raw, &head); err != nil {
			return nil, fmt.Errorf("%w: the tools/call result: %v", errNotProtocol, err)
		}
		switch head.ResultType {
		case "input_required":
			if round >= maxRounds {
				return nil, fmt.Errorf("the tool asked for input %d times; otc stops there", maxRounds)
			}
			answers, err := m.answerAll(head.InputRequests)
			if err != nil {
				return nil, err
			}
			params["inputResponses"] = answers
			delete(params, "requestState")
			if head.RequestState != nil {
				params["requestState"] = *head.RequestState
			}
		case "task":
			if head.TaskID == "" {
				return nil, fmt.Errorf("%w: a task without a taskId", errNotProtocol)
			}
			first := time.Duration(head.PollIntervalMs) * time.Millisecond
			if head.Status != "working" && head.Status != "input_required" {
				first = 0 // ended already: read its result at once
			}
			return m.awaitTask(ctx, head.TaskID, first, time.Duration(head.PollIntervalMs)*time.Millisecond)
		default:
			return raw, nil
		}
	}
}

// answerAll answers the questions of an input_required result or task,
// by their keys.
func (m *mcpServer) answerAll(reqs map[string]inputRequest) (map[string]json.RawMessage, error) {
	if len(reqs) == 0 {
		return nil, fmt.Errorf("%w: input_required without inputRequests", errNotProtocol)
	}
	out := make(map[string]json.RawMessage, len(reqs))
	for _, k := range slices.Sorted(maps.Keys(reqs)) {
		r := reqs[k]
		a := m.ask
		if a == nil {
			a = &inputAnswerer{why: "otc cannot prompt here"}
		}
		res, err := a.answer(r.Method, r.Params)
		if a.refused != nil {
			return nil, a.refused
		}
		if err != nil {
			// A round has no way to decline a request: the answer is the
			// request's result, and otc has none to give.
			return nil, &errNoPrompt{what: "for " + r.Method, why: err.Error()}
		}
		out[k] = res
	}
	return out, nil
}

// awaitTask polls task id until it ends, and returns its result.
func (m *mcpServer) awaitTask(ctx context.Context, id string, first, poll time.Duration) (json.RawMessage, error) {
	start := time.Now()
	wait := first
	for {
		poll = min(max(poll, minPoll), maxPoll)
		timer := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			timer.Stop()
			return nil, m.cancelTask(ctx, id)
		case <-timer.C:
		}
		wait = poll
		var t struct {
			Status         string                  `json:"status"`
			StatusMessage  string                  `json:"statusMessage"`
			PollIntervalMs int64                   `json:"pollIntervalMs"`
			InputRequests  map[string]inputRequest `json:"inputRequests"`
			Result         json.RawMessage         `json:"result"`
			Error          *rpcFailure             `json:"error"`
		}
		if err := m.request(ctx, "tasks/get", map[string]any{"taskId": id}, &t); err != nil {
			if ctx.Err() != nil {
				return nil, m.cancelTask(ctx, id)
			}
			return nil, err
		}
		if t.PollIntervalMs > 0 {
			poll = time.Duration(t.PollIntervalMs) * time.Millisecond
		}
		if m.status != nil {
			m.status(taskStatus{ID: id, Status: t.Status, Message: t.StatusMessage, Elapsed: time.Since(start)})
		}
		switch t.Status {
		case "completed":
			if len(t.Result) == 0 {
				return nil, fmt.Errorf("%w: a completed task without its result", errNotProtocol)
			}
			return t.Result, nil
		case "failed":
			if t.Error != nil {
				return nil, t.Error
			}
			return nil, &otc.Error{Code: otc.CodeServerError, Message: "The task failed: " + t.StatusMessage}
		case "cancelled":
			return nil, &otc.Error{Code: otc.CodeServerError, Message: "The task was cancelled"}
		case "input_required":
			answers, err := m.answerAll(t.InputRequests)
			if err != nil {
				if ce := m.cancelTask(ctx, id); ce.cancelErr != nil {
					return nil, errors.Join(err, ce)
				}
				return nil, err
			}
			var ack json.RawMessage
			if err := m.request(ctx, "tasks/update", map[string]any{"taskId": id, "inputResponses": answers}, &ack); err != nil {
				return nil, err
			}
			wait = 0 // see at once where the answers took it
		case "working":
		default:
			return nil, fmt.Errorf("%w: task status %q", errNotProtocol, shorten(t.Status, 32))
		}
	}
}

// cancelTask sends tasks/cancel for a call that was interrupted, or whose
// questions otc could not answer.
func (m *mcpServer) cancelTask(ctx context.Context, id string) *errInterrupted {
	cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
	defer cancel()
	var ack json.RawMessage
	return &errInterrupted{task: id, cancelErr: m.request(cctx, "tasks/cancel", map[string]any{"taskId": id}, &ack)}
}

// prepareMCP sets up an MCP call: its questions answered on the terminal
// (or refused), and, with --task, 2026-07-28 and a display of the task's
// status on standard error. It returns what clears the display.
func (e *cli) prepareMCP(m *mcpServer, asTask, jsonOut bool) (clear func()) {
	a := &inputAnswerer{prompt: e.term.prompt && !jsonOut, in: e.reader(), out: e.stderr}
	switch {
	case jsonOut:
		a.why = "--json was given"
	case !e.term.prompt:
		a.why = "standard input is not a terminal"
	}
	m.ask = a
	if !asTask {
		return func() {}
	}
	m.modern = true
	shown := false // a status line is on the terminal
	last := ""
	clear = func() {
		if shown {
			fmt.Fprint(e.stderr, "\r\x1b[K")
			shown = false
		}
	}
	a.before = clear
	m.status = func(s taskStatus) {
		line := "task " + s.ID + ": " + s.Status
		if s.Message != "" {
			line += " (" + shorten(s.Message, 60) + ")"
		}
		if e.term.spinner {
			fmt.Fprintf(e.stderr, "\r\x1b[K%s %s", line, s.Elapsed.Round(time.Second))
			shown = true
			return
		}
		if line != last { // not a terminal: each change on a line of its own
			fmt.Fprintln(e.stderr, "otc call: "+line)
			last = line
		}
	}
	return clear
}
