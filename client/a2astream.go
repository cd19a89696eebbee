package client

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"

	"github.com/otcgo/otc/internal/a2awire"
	"github.com/otcgo/otc/internal/jsonrpc"
)

// a2aStatusUpdate is a TaskStatusUpdateEvent, 1.0's and 0.3's fields
// together.
type a2aStatusUpdate struct {
	TaskID    string             `json:"taskId"`
	ContextID string             `json:"contextId"`
	Status    a2awire.TaskStatus `json:"status"`
}

// stream sends a message with SendStreamingMessage, for a call whose
// caller follows its progress, and reads the agent's stream: each status
// update of the task goes to CallOptions.Progress as it comes, until the
// message that answers the call, or the task's end or question. A task
// is then read once more, whole (GetTask), for follow to take on from. An
// agent that answers with JSON rather than a stream is read as SendMessage
// is.
func (w *a2aWire) stream(ctx context.Context, k *call, a *a2aAgent, params jsonrpc.Verbatim) (*a2aTask, error) {
	method := methodName(a, a2awire.SendStreamingMessage)
	body, err := jsonrpc.Request(1, method, params)
	if err != nil {
		return nil, fmt.Errorf("encoding %s: %w", method, err)
	}
	hresp, err := w.c.open(ctx, http.MethodPost, a.endpoint, "text/event-stream, application/json", body, k.header(), a.versionHeader)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", method, err)
	}
	defer hresp.Body.Close()
	if hresp.StatusCode != http.StatusOK || !strings.HasPrefix(hresp.Header.Get("Content-Type"), "text/event-stream") {
		r, err := w.c.readResponse(hresp, http.MethodPost, a.endpoint)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", method, err)
		}
		var out json.RawMessage
		if err := decodeAnswer(r, method, &out); err != nil {
			return nil, err
		}
		return readEvent(a, method, out, nil)
	}
	var t *a2aTask
	var failed error
	var st sseState
	err = eachEvent(io.LimitReader(hresp.Body, w.c.maxBytes+1), w.c.maxBytes, &st, func(_ string, data []byte) bool {
		var answer struct {
			Result json.RawMessage `json:"result"`
			Error  *RPCError       `json:"error"`
		}
		if json.Unmarshal(data, &answer) != nil {
			return true // not JSON-RPC: not an event of A2A's
		}
		if answer.Error != nil {
			answer.Error.Method = method
			failed = a2aError(answer.Error)
			return false
		}
		next, err := readEvent(a, method, answer.Result, t)
		if err != nil {
			failed = err
			return false
		}
		if next == nil {
			return true // an artifact: the task read at the end has it
		}
		t = next
		if t.Kind == "message" {
			return false
		}
		switch state := a2awire.State(t.Status.State); state {
		case a2awire.StateSubmitted, a2awire.StateWorking:
			msg := ""
			if m := t.Status.Message; m != nil {
				msg = textOf(m.Parts)
			}
			k.opts.Progress(Progress{TaskID: t.ID, State: strings.ToLower(strings.TrimPrefix(state, "TASK_STATE_")), Message: msg})
			return true
		}
		return false // ended, or asks: follow takes on
	})
	switch {
	case failed != nil:
		return nil, failed
	case t == nil && err != nil:
		return nil, fmt.Errorf("%s: %w", method, err)
	case t == nil:
		return nil, fmt.Errorf("%s: the stream ended before the agent answered", method)
	case t.Kind == "message":
		return t, nil
	}
	// The task as it now is, with its artifacts: the stream may have
	// ended early (a proxy, the agent's own bound), and follow reads on.
	return w.getTask(ctx, k, a, t.ID)
}

// readEvent reads one event of a stream (or SendStreamingMessage's JSON
// answer): a task or a message as it is, a status update as the task it
// updates (last, the task read so far, nil before one), an artifact as
// nil.
func readEvent(a *a2aAgent, method string, raw json.RawMessage, last *a2aTask) (*a2aTask, error) {
	var kind struct {
		Kind         string           `json:"kind"`
		StatusUpdate *a2aStatusUpdate `json:"statusUpdate"`
		Artifact     json.RawMessage  `json:"artifactUpdate"`
	}
	if err := json.Unmarshal(raw, &kind); err != nil {
		return nil, fmt.Errorf("%s: an event of the stream: %w", method, err)
	}
	update := kind.StatusUpdate
	switch {
	case a.ver.KindTagged && kind.Kind == "status-update":
		update = new(a2aStatusUpdate)
		if err := json.Unmarshal(raw, update); err != nil {
			return nil, fmt.Errorf("%s: a status update: %w", method, err)
		}
	case a.ver.KindTagged && kind.Kind == "artifact-update", kind.Artifact != nil:
		return nil, nil
	}
	if update == nil {
		return readSendResult(a, raw)
	}
	if update.TaskID == "" {
		return nil, errors.New(method + ": a status update names no task")
	}
	t := &a2aTask{Task: a2awire.Task{Kind: "task", ID: update.TaskID, ContextID: update.ContextID}}
	if last != nil && last.ID == update.TaskID {
		*t = *last
	}
	t.Status = update.Status
	return t, nil
}
