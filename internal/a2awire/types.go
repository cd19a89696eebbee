package a2awire

import (
	"encoding/json"
	"time"

	"github.com/otcgo/otc/internal/wire"
)

// Part is a Part of a message or an artifact, in either version: its
// text (when IsText) or its data, with 0.3's kind tag beside. The server
// writes it with AppendPart; MarshalJSON writes it the same way, and
// UnmarshalJSON reads either version's.
type Part struct {
	Kind   string // "text" or "data" in 0.3, "" in 1.0
	Text   string
	IsText bool
	Data   json.RawMessage
	// ValueText says the part is the text of the value Data holds (a
	// string as itself, anything else as its JSON), written as it is
	// encoded: the server's way to send a value as text without copying
	// it first.
	ValueText bool
}

// UnmarshalJSON reads a part of either version.
func (p *Part) UnmarshalJSON(b []byte) error {
	var in struct {
		Kind string          `json:"kind"`
		Text *string         `json:"text"`
		Data json.RawMessage `json:"data"`
	}
	if err := json.Unmarshal(b, &in); err != nil {
		return err
	}
	*p = Part{Kind: in.Kind, Data: in.Data}
	if in.Text != nil {
		p.Text, p.IsText = *in.Text, true
	}
	return nil
}

// MarshalJSON writes the part as AppendPart does.
func (p Part) MarshalJSON() ([]byte, error) {
	return AppendPart(make([]byte, 0, len(p.Kind)+len(p.Text)+len(p.Data)+24), p), nil
}

// AppendPart appends a part: its 0.3 kind, then its text or its data
// (null for none).
func AppendPart(dst []byte, p Part) []byte {
	dst = OpenObject(dst, p.Kind)
	switch {
	case p.IsText:
		dst = append(dst, `"text":`...)
		dst = wire.AppendString(dst, p.Text)
	case p.ValueText:
		dst = append(dst, `"text":`...)
		if len(p.Data) > 0 && p.Data[0] == '"' {
			dst = append(dst, p.Data...) // a string is its own text (the value is valid JSON)
		} else {
			dst = wire.AppendString(dst, string(p.Data))
		}
	default:
		dst = append(dst, `"data":`...)
		if len(p.Data) == 0 {
			dst = append(dst, "null"...)
		} else {
			dst = append(dst, p.Data...)
		}
	}
	return append(dst, '}')
}

// AppendParts appends an array of parts.
func AppendParts(dst []byte, parts []Part) []byte {
	dst = append(dst, '[')
	for i, p := range parts {
		if i > 0 {
			dst = append(dst, ',')
		}
		dst = AppendPart(dst, p)
	}
	return append(dst, ']')
}

// AppendMessage appends message m, its ids as they are (m.ReplyTo is
// the agent's, which writes its ids itself and the rest with
// AppendMessageRest).
func AppendMessage(dst []byte, m *Message) []byte {
	dst = OpenObject(dst, m.Kind)
	dst = append(dst, `"messageId":`...)
	dst = wire.AppendString(dst, m.MessageID)
	if m.ContextID != "" {
		dst = append(dst, `,"contextId":`...)
		dst = wire.AppendString(dst, m.ContextID)
	}
	return AppendMessageRest(dst, m)
}

// AppendMessageRest appends what follows a message's messageId and
// contextId: its taskId, role, parts and metadata, in the protocol's
// order, and closes it. Parts' data and the metadata are written as they
// are: valid JSON on one line, which the writer vouches for.
func AppendMessageRest(dst []byte, m *Message) []byte {
	if m.TaskID != "" {
		dst = append(dst, `,"taskId":`...)
		dst = wire.AppendString(dst, m.TaskID)
	}
	dst = append(dst, `,"role":`...)
	dst = wire.AppendString(dst, m.Role)
	dst = append(dst, `,"parts":`...)
	dst = AppendParts(dst, m.Parts)
	if len(m.Metadata) > 0 {
		dst = append(dst, `,"metadata":`...)
		dst = append(dst, m.Metadata...)
	}
	return append(dst, '}')
}

// OpenObject opens an object, with 0.3's kind tag first when kind is set.
func OpenObject(dst []byte, kind string) []byte {
	dst = append(dst, '{')
	if kind != "" {
		dst = append(dst, `"kind":`...)
		dst = wire.AppendString(dst, kind)
		dst = append(dst, ',')
	}
	return dst
}

// Message is a Message.
type Message struct {
	Kind      string          `json:"kind,omitempty"` // "message" in 0.3
	MessageID string          `json:"messageId"`
	ContextID string          `json:"contextId,omitempty"`
	TaskID    string          `json:"taskId,omitempty"`
	Role      string          `json:"role"`
	Parts     []Part          `json:"parts"`
	Metadata  json.RawMessage `json:"metadata,omitempty"`

	// ReplyTo, when MessageID is empty, is the messageId of the message
	// this one answers, from which the server derives its id and, when
	// ContextID is empty, its context's, as it writes it: the same
	// message sent again is answered alike. Not part of the wire.
	ReplyTo string `json:"-"`
}

// Task is a Task.
type Task struct {
	Kind      string     `json:"kind,omitempty"` // "task" in 0.3
	ID        string     `json:"id"`
	ContextID string     `json:"contextId"`
	Status    TaskStatus `json:"status"`
	Artifacts []Artifact `json:"artifacts,omitempty"`
	History   []*Message `json:"history,omitempty"`
}

// TaskStatus is a TaskStatus.
type TaskStatus struct {
	State   string   `json:"state"`
	Message *Message `json:"message,omitempty"`
	// Timestamp is when the status was set, as the server writes it
	// (its appender); a reader does not need it, and leaves it zero.
	Timestamp time.Time `json:"-"`
}

// Artifact is an Artifact.
type Artifact struct {
	ArtifactID string `json:"artifactId"`
	Name       string `json:"name,omitempty"`
	Parts      []Part `json:"parts"`
}
