package a2a

import (
	"cmp"
	"encoding/json"
	"fmt"

	"github.com/otcgo/otc/internal/jsonparse"
	"github.com/otcgo/otc/tasks"
)

// This file keeps a task's history: the message that started it, the
// questions it asked and the messages that answered them, and the status
// message it failed with, kept in the task store (tasks.Task.History) in
// 1.0's shapes and written in the shapes of each request's version, as
// many of the most recent as the request's historyLength asks.

// historyAll is the historyLength of a request that names none: every
// message kept (at most the store's bound, tasks.DefaultMaxHistory).
const historyAll = -1

// maxHistoryMessage bounds a message kept in a task's history: a larger
// one is kept as a text part saying so.
const maxHistoryMessage = 64 << 10

// historyEntry encodes m for a task's history, in 1.0's shapes.
func historyEntry(m *message) json.RawMessage {
	c := *m
	c.Kind = ""
	b := appendMessage(nil, &c)
	if len(b) > maxHistoryMessage {
		text := fmt.Sprintf("(a message of %d bytes, larger than a task's history keeps)", len(b))
		c.Parts = []part{v10.textPart(text)}
		c.Metadata = nil
		b = appendMessage(nil, &c)
	}
	return b
}

// callerEntry is the history entry of the caller's message in: its text
// and data parts (parts of other kinds are not kept), in 1.0's shapes.
func callerEntry(in incoming, taskID, contextID string) json.RawMessage {
	d := in.doc
	m := &message{MessageID: in.messageID, ContextID: contextID, TaskID: taskID, Role: roleUser}
	if in.partsNode < 0 { // read by readQuick: one data part
		m.Parts = []part{{Data: json.RawMessage(in.dataRaw)}}
		return historyEntry(m)
	}
	for _, p := range d.Elements(in.partsNode) {
		if t := d.Member(p, "text"); t >= 0 && d.Kind(t) == jsonparse.KindString {
			m.Parts = append(m.Parts, v10.textPart(d.StringValue(t)))
		} else if data := d.Member(p, "data"); data >= 0 && d.Kind(data) != jsonparse.KindNull {
			m.Parts = append(m.Parts, part{Data: json.RawMessage(d.Raw(data))})
		}
	}
	if m.Parts == nil {
		m.Parts = []part{}
	}
	return historyEntry(m)
}

// The roles of a history entry, in 1.0's names.
const (
	roleUser  = "ROLE_USER"
	roleAgent = "ROLE_AGENT"
)

// said is the taskrun.RunnerOptions.Said of this package: the status
// message an update of task id says, for its history: its questions, or
// its failure.
func said(id string, u *tasks.Update) json.RawMessage {
	switch u.Status {
	case tasks.InputRequired:
		st := &tasks.Task{ID: id, InputRequests: u.InputRequests}
		return historyEntry(&message{MessageID: questionID(st), TaskID: id, Role: roleAgent,
			Parts: []part{v10.textPart(questionsText(st)), v10.dataPart(questionsData(st))}})
	case tasks.Failed:
		var o outcome
		_ = json.Unmarshal(u.Result, &o) // written by this package
		parts := []part{v10.textPart(o.Text)}
		if o.Info != nil {
			parts = append(parts, v10.dataPart(o.Info))
		}
		return historyEntry(&message{MessageID: derivedID("failure", id), TaskID: id, Role: roleAgent, Parts: parts})
	}
	return nil
}

// questionID is the id of the message that asks task st's questions: the
// same in its status and in its history.
func questionID(st *tasks.Task) string {
	return derivedID("question", st.ID+string(questionsData(st)))
}

// history is the last n messages of st's history (all for historyAll),
// in d's shapes; nil for n 0, or for none.
func history(d dialect, st *tasks.Task, n int) []*message {
	kept := st.History
	switch {
	case n == 0 || len(kept) == 0:
		return nil
	case n > 0 && n < len(kept):
		kept = kept[len(kept)-n:]
	}
	out := make([]*message, 0, len(kept))
	for _, raw := range kept {
		var m message
		if json.Unmarshal(raw, &m) != nil {
			continue // written by this package
		}
		if m.ContextID == "" { // the agent's, written without it
			m.ContextID = cmp.Or(st.ContextID, st.ID)
		}
		if d == v03 {
			if m.Role == roleAgent {
				m.Role = d.roleAgent()
			} else {
				m.Role = "user"
			}
			for i, p := range m.Parts {
				if p.IsText {
					m.Parts[i] = d.textPart(p.Text)
				} else {
					m.Parts[i] = d.dataPart(p.Data)
				}
			}
		}
		out = append(out, d.message(&m))
	}
	return out
}
