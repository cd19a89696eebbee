package a2a

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"strconv"
	"sync"
	"time"

	"github.com/otcgo/otc"
	"github.com/otcgo/otc/internal/jsonrpc"
	"github.com/otcgo/otc/internal/wire"
	"github.com/otcgo/otc/tasks"
)

// This file streams a call's events over Server-Sent Events, for
// SendStreamingMessage (and 0.3's message/stream) and POST
// /message:stream: the task once the call is under way, a WORKING status
// update for each progress report of the tool, then the artifact and the
// final status, in that order.

// streamer is the stream of one call's events. It is the call's
// otc.Notifier; the first event, the task, is written when the tool first
// reports or when the call ends, so that a call refused before its tool
// runs is answered as an ordinary error, not a stream.
type streamer struct {
	w     http.ResponseWriter
	r     *http.Request
	d     dialect
	rpcID []byte // the JSON-RPC id, nil for HTTP+JSON

	// following says the call runs as a task this stream follows (set
	// once the task is kept).
	following bool
	// history is how many of the task's most recent messages its first
	// event holds (historyAll for every one), and opening those of the
	// task as it starts.
	history int
	opening []*message

	mu                sync.Mutex
	started, ended    bool
	taskID, contextID string
	buf               []byte
}

var _ otc.Notifier = (*streamer)(nil)

// begin writes the stream's headers and its first event, the task at
// WORKING. s.mu is held.
func (s *streamer) begin() {
	if s.started {
		return
	}
	s.start()
	t := s.d.task(&task{ID: s.taskID, ContextID: s.contextID, Status: taskStatus{State: s.d.state(stateWorking), Timestamp: now()}, History: s.opening})
	s.event(func(dst []byte) []byte { return appendStreamTask(dst, s.d, t) })
}

// start writes the stream's headers. s.mu is held.
func (s *streamer) start() {
	s.started = true
	wire.ArmWriteDeadline(s.w, s.r)
	h := s.w.Header()
	h.Set("Content-Type", "text/event-stream")
	h.Set("Cache-Control", "no-store")
	s.w.WriteHeader(http.StatusOK)
}

// event writes one event, whose StreamResponse payload appends. s.mu is
// held.
func (s *streamer) event(payload func([]byte) []byte) {
	b := append(s.buf[:0], "data: "...)
	if s.rpcID != nil {
		b = jsonrpc.AppendResultHead(b, s.rpcID)
	}
	b = payload(b)
	if s.rpcID != nil {
		b = append(b, '}')
	}
	b = append(b, "\n\n"...)
	s.buf = b
	_, _ = s.w.Write(b)
	if f, ok := s.w.(http.Flusher); ok {
		f.Flush()
	}
}

// NotifyProgress sends a WORKING status update saying how far the call
// has come.
func (s *streamer) NotifyProgress(progress, total float64, note string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.ended {
		return
	}
	s.begin()
	text := strconv.FormatFloat(progress, 'f', -1, 64)
	if total > 0 {
		text += " of " + strconv.FormatFloat(total, 'f', -1, 64)
	}
	if note != "" {
		text += ": " + note
	}
	m := s.d.message(&message{MessageID: otc.NewCallID(), ContextID: s.contextID, TaskID: s.taskID, Role: s.d.roleAgent(), Parts: []part{s.d.textPart(text)}})
	st := taskStatus{State: s.d.state(stateWorking), Message: m, Timestamp: now()}
	s.event(func(dst []byte) []byte { return appendStatusUpdate(dst, s.d, s.taskID, s.contextID, st, false) })
}

// NotifyLog drops a tool's log messages: A2A has no place for them.
func (s *streamer) NotifyLog(slog.Level, any) {}

// end stops the tool's reports from reaching the stream.
func (s *streamer) end() {
	s.mu.Lock()
	s.ended = true
	s.mu.Unlock()
}

// finish writes the call's end: the task if nothing was written yet, its
// artifact, and its final status.
func (s *streamer) finish(t *task) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.begin()
	for i := range t.Artifacts {
		a := t.Artifacts[i]
		s.event(func(dst []byte) []byte { return appendArtifactUpdate(dst, s.d, t.ID, t.ContextID, a) })
	}
	s.event(func(dst []byte) []byte { return appendStatusUpdate(dst, s.d, t.ID, t.ContextID, t.Status, true) })
}

// single writes a stream of one event: the guide's message.
func (s *streamer) single(m *message) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.started = true
	s.w.Header().Set("Content-Type", "text/event-stream")
	s.w.WriteHeader(http.StatusOK)
	s.event(func(dst []byte) []byte { return appendResult(dst, s.d, nil, m) })
}

// appendStreamTask appends a StreamResponse holding a task.
func appendStreamTask(dst []byte, d dialect, t *task) []byte {
	return appendResult(dst, d, t, nil)
}

// appendStatusUpdate appends a StreamResponse holding a
// TaskStatusUpdateEvent; final marks the last (0.3 says so in the event).
func appendStatusUpdate(dst []byte, d dialect, taskID, contextID string, st taskStatus, final bool) []byte {
	if d != v03 {
		dst = append(dst, `{"statusUpdate":{`...)
	} else {
		dst = append(dst, `{"kind":"status-update",`...)
	}
	dst = append(dst, `"taskId":`...)
	dst = wire.AppendString(dst, taskID)
	dst = append(dst, `,"contextId":`...)
	dst = wire.AppendString(dst, contextID)
	dst = append(dst, `,"status":`...)
	dst = appendStatus(dst, st)
	if d == v03 {
		dst = append(dst, `,"final":`...)
		dst = strconv.AppendBool(dst, final)
		return append(dst, '}')
	}
	return append(dst, "}}"...)
}

// appendArtifactUpdate appends a StreamResponse holding a
// TaskArtifactUpdateEvent with the whole artifact.
func appendArtifactUpdate(dst []byte, d dialect, taskID, contextID string, a artifact) []byte {
	if d != v03 {
		dst = append(dst, `{"artifactUpdate":{`...)
	} else {
		dst = append(dst, `{"kind":"artifact-update",`...)
	}
	dst = append(dst, `"taskId":`...)
	dst = wire.AppendString(dst, taskID)
	dst = append(dst, `,"contextId":`...)
	dst = wire.AppendString(dst, contextID)
	dst = append(dst, `,"artifact":`...)
	dst = appendArtifact(dst, a)
	dst = append(dst, `,"lastChunk":true`...)
	if d != v03 {
		return append(dst, "}}"...)
	}
	return append(dst, '}')
}

// serveStream answers a streaming message on either binding: rpcID is the
// JSON-RPC request's id, nil for HTTP+JSON. An error before the call runs
// is answered as fail says, not as a stream.
func (h *Handler) serveStream(w http.ResponseWriter, r *http.Request, d dialect, m incoming, body, rpcID []byte, fail func(e *rpcError, status int)) {
	st := &streamer{w: w, r: r, d: d, rpcID: rpcID, history: m.history}
	t, guide, e, status := h.answer(r, d, &m, body, st, nil)
	switch {
	case e != nil && !st.started:
		h.challenge(w, e)
		fail(e, status)
	case e != nil:
		// Cannot happen: the tool reported, so the call ran and answer
		// returns a task. Say so on the stream rather than drop it.
		st.mu.Lock()
		st.event(func(dst []byte) []byte {
			return append(dst, fmt.Sprintf(`{"error":%q}`, e.Message)...)
		})
		st.mu.Unlock()
	case guide != nil:
		st.single(guide)
	case st.following:
		h.follow(r.Context(), st, t.ID, t.ContextID, true)
	default:
		st.finish(t)
	}
}

// follow streams task id's changes on s, starting with the task as it is
// unless s has begun already: a status update at each change of its
// state (with the questions, when it asks some), then its artifact and
// final status. It returns when the task has ended, or, with interrupt,
// when it waits for answers (the caller answers with a new message, and
// may subscribe again), or when the request ends. A task this process
// runs is watched; one another replica runs is looked at every poll
// interval.
func (h *Handler) follow(ctx context.Context, s *streamer, id, contextID string, interrupt bool) {
	defer s.end()
	sent := ""
	var seen time.Time // when the questions last sent were asked
	err := h.watch(ctx, id, func(stored *tasks.Task) bool {
		t := h.taskState(s.d, stored, contextID)
		s.mu.Lock()
		defer s.mu.Unlock()
		terminal := stored.Status.Terminal()
		asks := stored.Status == tasks.InputRequired
		if !s.started {
			t.History = history(s.d, stored, s.history)
			s.start()
			s.event(func(dst []byte) []byte { return appendStreamTask(dst, s.d, t) })
			sent, seen = t.Status.State, stored.UpdatedAt
			if asks && interrupt {
				seen = time.Time{} // a stream that ends at a question ends with its final status update
			}
		} else if sent == "" {
			sent = s.d.state(stateWorking) // begin sent the task at WORKING
		}
		switch {
		case terminal:
			for i := range t.Artifacts {
				a := t.Artifacts[i]
				s.event(func(dst []byte) []byte { return appendArtifactUpdate(dst, s.d, t.ID, t.ContextID, a) })
			}
			s.event(func(dst []byte) []byte { return appendStatusUpdate(dst, s.d, t.ID, t.ContextID, t.Status, true) })
		case t.Status.State != sent || asks && !stored.UpdatedAt.Equal(seen):
			final := asks && interrupt
			s.event(func(dst []byte) []byte { return appendStatusUpdate(dst, s.d, t.ID, t.ContextID, t.Status, final) })
			sent, seen = t.Status.State, stored.UpdatedAt
		}
		return terminal || asks && interrupt
	})
	if err != nil && ctx.Err() == nil {
		h.logger.ErrorContext(ctx, "a2a: a followed task could not be read", slog.String("task", wire.Truncate(id, 64)), slog.String("error", err.Error()))
	}
}
