package a2a

import (
	"encoding/json"
	"time"

	"github.com/otcgo/otc/internal/a2awire"
)

// The A2A protocol versions this package speaks.
const (
	// Version10 is A2A 1.0, named in the A2A-Version header.
	Version10 = a2awire.V10
	// Version03 is A2A 0.3, the version of a request without the header.
	Version03 = a2awire.V03
)

// part is a Part of a message or an artifact: its text (when IsText) or
// its data (the kinds this package writes), with 0.3's kind tag beside.
// It is written by appendPart, and read back (a task's history) by
// UnmarshalJSON.
type part struct {
	Kind   string
	Text   string
	IsText bool
	Data   json.RawMessage
	// ValueText says the part is the text of the value Data holds, as
	// modeltext.Value writes it (a string as itself, anything else as its
	// JSON), written as it is encoded.
	ValueText bool
}

// UnmarshalJSON reads a part this package wrote.
func (p *part) UnmarshalJSON(b []byte) error {
	var in struct {
		Kind string          `json:"kind"`
		Text *string         `json:"text"`
		Data json.RawMessage `json:"data"`
	}
	if err := json.Unmarshal(b, &in); err != nil {
		return err
	}
	*p = part{Kind: in.Kind, Data: in.Data}
	if in.Text != nil {
		p.Text, p.IsText = *in.Text, true
	}
	return nil
}

// message is a Message.
type message struct {
	Kind      string          `json:"kind,omitempty"` // 0.3 only
	MessageID string          `json:"messageId"`
	ContextID string          `json:"contextId,omitempty"`
	TaskID    string          `json:"taskId,omitempty"`
	Role      string          `json:"role"`
	Parts     []part          `json:"parts"`
	Metadata  json.RawMessage `json:"metadata,omitempty"`

	// replyTo, when MessageID is empty, is the messageId of the message
	// this one answers: its id is derived from it ("reply"), and so is its
	// context's when ContextID is empty ("context"), as it is written, so
	// that the same message sent again is answered alike.
	replyTo string
}

// task is a Task.
type task struct {
	Kind      string     `json:"kind,omitempty"` // 0.3 only
	ID        string     `json:"id"`
	ContextID string     `json:"contextId"`
	Status    taskStatus `json:"status"`
	Artifacts []artifact `json:"artifacts,omitempty"`
	History   []*message `json:"history,omitempty"`
}

// taskStatus is a TaskStatus.
type taskStatus struct {
	State     string   `json:"state"`
	Message   *message `json:"message,omitempty"`
	Timestamp time.Time
}

// artifact is an Artifact.
type artifact struct {
	ArtifactID string `json:"artifactId"`
	Name       string `json:"name,omitempty"`
	Parts      []part `json:"parts"`
}

// dialect is a protocol version this package speaks, and writes its
// shapes: 1.0's ProtoJSON enum names, or 0.3's lower-case ones and kind
// tags. The zero value is 1.0.
type dialect uint8

const (
	v10 dialect = iota
	v03
)

// String is the version as A2A-Version names it.
func (d dialect) String() string {
	if d == v03 {
		return Version03
	}
	return Version10
}

func (d dialect) state(s string) string {
	if d == v03 {
		return a2awire.State03(s)
	}
	return s
}

func (d dialect) roleAgent() string {
	if d == v03 {
		return "agent"
	}
	return "ROLE_AGENT"
}

func (d dialect) textPart(s string) part {
	p := part{Text: s, IsText: true}
	if d == v03 {
		p.Kind = "text"
	}
	return p
}

// valueTextPart is a text part holding the text of value v (see
// part.ValueText).
func (d dialect) valueTextPart(v json.RawMessage) part {
	p := part{Data: v, ValueText: true}
	if d == v03 {
		p.Kind = "text"
	}
	return p
}

// dataPart is a data part holding v. In 0.3 a data part holds an
// object, so another value is wrapped as {"result": v}, as MCP's
// structuredContent wraps it.
func (d dialect) dataPart(v json.RawMessage) part {
	p := part{Data: v}
	if d == v03 {
		p.Kind = "data"
		if len(v) > 0 && v[0] != '{' {
			w := make([]byte, 0, len(v)+11)
			w = append(w, `{"result":`...)
			w = append(w, v...)
			p.Data = append(w, '}')
		}
	}
	return p
}

func (d dialect) message(m *message) *message {
	if d == v03 {
		m.Kind = "message"
	}
	return m
}

func (d dialect) task(t *task) *task {
	if d == v03 {
		t.Kind = "task"
	}
	return t
}

// The task states of the answers this package gives.
const (
	stateWorking   = a2awire.StateWorking
	stateCanceled  = a2awire.StateCanceled
	stateCompleted = a2awire.StateCompleted
	stateFailed    = a2awire.StateFailed

	stateInputRequired = a2awire.StateInputRequired
)

// now is the time of a status.
func now() time.Time { return time.Now() }

// timestampLayout writes a timestamp as A2A does: UTC, milliseconds.
const timestampLayout = "2006-01-02T15:04:05.000Z"
