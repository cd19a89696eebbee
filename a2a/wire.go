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

// The wire types of A2A, shared with the client (internal/a2awire): a
// part, a message, a task, its status and its artifacts.
type (
	part       = a2awire.Part
	message    = a2awire.Message
	task       = a2awire.Task
	taskStatus = a2awire.TaskStatus
	artifact   = a2awire.Artifact
)

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

func (d dialect) textPart(s string) part { return d.version().TextPart(s) }

// version is the dialect's value in the wire vocabulary.
func (d dialect) version() *a2awire.Version {
	if d == v03 {
		return a2awire.Version03
	}
	return a2awire.Version10
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

// dataPart is a data part holding v (in 0.3, an object: another value
// is wrapped as {"result": v}).
func (d dialect) dataPart(v json.RawMessage) part { return d.version().DataPart(v) }

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
