package a2awire

import "encoding/json"

// Version is one A2A protocol version, and what its JSON-RPC binding
// does differently: the value a program speaking to an agent branches on,
// so that a version is added or changed in one place.
type Version struct {
	// Name is the version as a card and the A2A-Version header spell it.
	Name string
	// Header says that a request names its version in the A2A-Version
	// header (1.0); 0.3 sends none.
	Header bool
	// KindTagged says that objects name what they are in "kind"
	// ("message", "task", "text", "data"), that roles are "user" and
	// "agent", and that SendMessage answers with the task or message
	// itself (0.3). In 1.0 objects are known by their fields, roles are
	// ROLE_USER and ROLE_AGENT, and the answer is {"task"} or {"message"}.
	KindTagged bool
	// ObjectData says that a data part holds an object only (0.3), so
	// that a value of another kind travels as {"result": value}.
	ObjectData bool
	// methods names the 1.0 methods in this version; nil for 1.0's own.
	methods map[string]string
}

// The versions, and the one a card that names none of 1.0's interfaces
// speaks.
var (
	Version10 = &Version{Name: V10, Header: true}
	Version03 = &Version{Name: V03, KindTagged: true, ObjectData: true, methods: methods03}
)

// Method is the name of the 1.0 method m in the version, "" when it has
// none.
func (v *Version) Method(m string) string {
	if v.methods == nil {
		return m
	}
	return v.methods[m]
}

// UserRole is the role of the user's messages.
func (v *Version) UserRole() string {
	if v.KindTagged {
		return "user"
	}
	return "ROLE_USER"
}

// TextPart is a text part holding s.
func (v *Version) TextPart(s string) Part {
	p := Part{Text: s, IsText: true}
	if v.KindTagged {
		p.Kind = "text"
	}
	return p
}

// DataPart is a data part holding the JSON value d. Where a data part
// holds an object only (ObjectData), another value is wrapped as
// {"result": d}, as MCP's structuredContent wraps it.
func (v *Version) DataPart(d json.RawMessage) Part {
	p := Part{Data: d}
	if v.KindTagged {
		p.Kind = "data"
	}
	if v.ObjectData && len(d) > 0 && d[0] != '{' {
		w := make([]byte, 0, len(d)+11)
		w = append(w, `{"result":`...)
		w = append(w, d...)
		p.Data = append(w, '}')
	}
	return p
}

// NotBlocking is the configuration of a SendMessage that answers at once
// with its task rather than when the task ends, as JSON.
func (v *Version) NotBlocking() []byte {
	if v.KindTagged {
		return []byte(`{"blocking":false}`)
	}
	return []byte(`{"returnImmediately":true}`)
}
