package a2a

import (
	"time"

	"github.com/otcgo/otc/internal/a2awire"
	"github.com/otcgo/otc/internal/wire"
)

// The answers to messages are written by hand, in the order the protocol's
// objects list their fields: they are most of what a call writes, and
// encoding/json would check again every value the pipeline has already
// encoded.

// appendMessage appends a message the agent writes.
func appendMessage(dst []byte, m *message) []byte {
	dst = a2awire.OpenObject(dst, m.Kind)
	dst = append(dst, `"messageId":`...)
	if m.MessageID == "" && m.ReplyTo != "" {
		dst = append(dst, '"')
		dst = wire.AppendUUID(dst, derivedSum("reply", m.ReplyTo))
		dst = append(dst, '"')
	} else {
		dst = wire.AppendString(dst, m.MessageID)
	}
	switch {
	case m.ContextID != "":
		dst = append(dst, `,"contextId":`...)
		dst = wire.AppendString(dst, m.ContextID)
	case m.ReplyTo != "":
		dst = append(dst, `,"contextId":"`...)
		dst = wire.AppendUUID(dst, derivedSum("context", m.ReplyTo))
		dst = append(dst, '"')
	}
	return a2awire.AppendMessageRest(dst, m)
}

// appendTask appends a task.
func appendTask(dst []byte, t *task) []byte {
	dst = a2awire.OpenObject(dst, t.Kind)
	dst = append(dst, `"id":`...)
	dst = wire.AppendString(dst, t.ID)
	dst = append(dst, `,"contextId":`...)
	dst = wire.AppendString(dst, t.ContextID)
	dst = append(dst, `,"status":`...)
	dst = appendStatus(dst, t.Status)
	dst = appendMember(dst, `,"artifacts":`, t.Artifacts, appendArtifact)
	dst = appendMember(dst, `,"history":`, t.History, appendMessage)
	return append(dst, '}')
}

// appendMember appends member (its comma, name and colon) and the array
// of items, each as appendItem writes it; nothing for no items.
func appendMember[T any](dst []byte, member string, items []T, appendItem func([]byte, T) []byte) []byte {
	if len(items) == 0 {
		return dst
	}
	dst = append(dst, member...)
	dst = append(dst, '[')
	for i, it := range items {
		if i > 0 {
			dst = append(dst, ',')
		}
		dst = appendItem(dst, it)
	}
	return append(dst, ']')
}

// appendStatus appends a TaskStatus.
func appendStatus(dst []byte, st taskStatus) []byte {
	dst = append(dst, `{"state":`...)
	dst = wire.AppendString(dst, st.State)
	if st.Message != nil {
		dst = append(dst, `,"message":`...)
		dst = appendMessage(dst, st.Message)
	}
	if !st.Timestamp.IsZero() {
		dst = append(dst, `,"timestamp":"`...)
		dst = appendTimestamp(dst, st.Timestamp)
		dst = append(dst, '"')
	}
	return append(dst, '}')
}

// appendArtifact appends an Artifact.
func appendArtifact(dst []byte, a artifact) []byte {
	dst = append(dst, `{"artifactId":`...)
	dst = wire.AppendString(dst, a.ArtifactID)
	if a.Name != "" {
		dst = append(dst, `,"name":`...)
		dst = wire.AppendString(dst, a.Name)
	}
	dst = append(dst, `,"parts":`...)
	dst = a2awire.AppendParts(dst, a.Parts)
	return append(dst, '}')
}

// appendResult appends a SendMessageResponse holding a task or a message:
// 1.0 names what it holds ({"task": ...}), 0.3 does not.
func appendResult(dst []byte, d dialect, t *task, m *message) []byte {
	if d != v03 {
		if t != nil {
			dst = append(dst, `{"task":`...)
		} else {
			dst = append(dst, `{"message":`...)
		}
	}
	if t != nil {
		dst = appendTask(dst, t)
	} else {
		dst = appendMessage(dst, m)
	}
	if d != v03 {
		dst = append(dst, '}')
	}
	return dst
}

// appendTimestamp appends t as timestampLayout writes it (UTC, to the
// millisecond), without the layout's parsing.
func appendTimestamp(dst []byte, t time.Time) []byte {
	t = t.UTC()
	year, month, day := t.Date()
	hour, min, sec := t.Clock()
	if year < 0 || year > 9999 {
		return t.AppendFormat(dst, timestampLayout)
	}
	pad := func(dst []byte, v, width int) []byte {
		var b [4]byte
		for i := width - 1; i >= 0; i-- {
			b[i] = byte('0' + v%10)
			v /= 10
		}
		return append(dst, b[:width]...)
	}
	dst = pad(dst, year, 4)
	dst = append(dst, '-')
	dst = pad(dst, int(month), 2)
	dst = append(dst, '-')
	dst = pad(dst, day, 2)
	dst = append(dst, 'T')
	dst = pad(dst, hour, 2)
	dst = append(dst, ':')
	dst = pad(dst, min, 2)
	dst = append(dst, ':')
	dst = pad(dst, sec, 2)
	dst = append(dst, '.')
	dst = pad(dst, t.Nanosecond()/1e6, 3)
	return append(dst, 'Z')
}
