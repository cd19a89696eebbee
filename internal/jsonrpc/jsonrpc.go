// Package jsonrpc writes and reads the JSON-RPC 2.0 envelope, once, for
// every part of the module that speaks it: the MCP and A2A servers, the
// client's MCP and A2A, and the command's inspector. The servers append
// envelopes around results they have encoded already (the Append
// functions, which allocate nothing of their own); the client, which
// builds few messages, encodes whole ones (Request, Notification,
// Response).
package jsonrpc

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"

	"github.com/otcgo/otc"
	"github.com/otcgo/otc/internal/jsonparse"
	"github.com/otcgo/otc/internal/wire"
)

// Version is the protocol's version, which every message carries in its
// "jsonrpc" member.
const Version = "2.0"

// The error codes the JSON-RPC 2.0 specification defines.
const (
	CodeParseError     = -32700
	CodeInvalidRequest = -32600
	CodeMethodNotFound = -32601
	CodeInvalidParams  = -32602
	CodeInternalError  = -32603
)

// Error is a JSON-RPC error object: the one error type the MCP and A2A
// servers answer with and the client reads. D is what its data holds:
// json.RawMessage as read (the client's RPCError), a server's own values
// as written (any for MCP's, A2A's list of details).
type Error[D any] struct {
	Code    int    `json:"code"`
	Message string `json:"message"`
	Data    D      `json:"data,omitempty"`
	// Method is the method of the request the error answers, for the
	// message of an error a client read. Not sent.
	Method string `json:"-"`
	// Status is the HTTP status a server answers the error with (zero:
	// its transport's rule), and Refusal the refusal of the caller it
	// answers, whose challenge the answer carries. Neither is sent.
	Status  int        `json:"-"`
	Refusal *otc.Error `json:"-"`
}

// Error says the method (when known), the message and the code.
func (e *Error[D]) Error() string {
	msg := wire.Truncate(e.Message, 512)
	if e.Method == "" {
		return fmt.Sprintf("%s (JSON-RPC error %d)", msg, e.Code)
	}
	return fmt.Sprintf("%s: %s (JSON-RPC error %d)", e.Method, msg, e.Code)
}

// ReadError is the error object a client reads.
type ReadError = Error[json.RawMessage]

// Message is any JSON-RPC message as it is read: a request (ID and
// Method), a notification (Method without ID) or a response (ID, and
// Result or Error). An absent ID and a null one both read as empty or
// "null"; see [Message.IsNotification].
type Message struct {
	JSONRPC string          `json:"jsonrpc"`
	ID      json.RawMessage `json:"id,omitempty"`
	Method  string          `json:"method,omitempty"`
	Params  json.RawMessage `json:"params,omitempty"`
	Result  json.RawMessage `json:"result,omitempty"`
	Error   *ReadError      `json:"error,omitempty"`
}

// IsNotification reports whether m is a notification: a method without
// an id (or with a null one, which no request may have).
func (m Message) IsNotification() bool {
	return m.Method != "" && (len(m.ID) == 0 || string(m.ID) == "null")
}

// request is the envelope of a request as written.
type request struct {
	JSONRPC string `json:"jsonrpc"`
	ID      int64  `json:"id"`
	Method  string `json:"method"`
	Params  any    `json:"params,omitempty"`
}

// notification is the envelope of a notification as written.
type notification struct {
	JSONRPC string `json:"jsonrpc"`
	Method  string `json:"method"`
	Params  any    `json:"params,omitempty"`
}

// response is the envelope of a response as written: exactly one of
// result and error.
type response struct {
	JSONRPC string          `json:"jsonrpc"`
	ID      json.RawMessage `json:"id"`
	Result  any             `json:"result,omitempty"`
	Error   any             `json:"error,omitempty"`
}

// Request encodes a request of method with the given id and params (nil
// for none). Params of a map[string]any, which is how the client builds
// them, are written member by member, sorted as encoding/json sorts a
// map's: strings, raw JSON (checked, and compacted when it spans lines,
// so that a message stays one line for stdio), Verbatim JSON and maps of
// the same kind directly, any other value by encoding/json. Verbatim
// params are written as they are, an Appender's as it writes them.
func Request(id int64, method string, params any) ([]byte, error) {
	n := 256
	switch p := params.(type) {
	case map[string]any, Appender:
	case Verbatim:
		n = 64 + len(method) + len(p)
	default:
		return json.Marshal(request{Version, id, method, params})
	}
	dst := make([]byte, 0, n)
	dst = append(dst, `{"jsonrpc":"2.0","id":`...)
	dst = strconv.AppendInt(dst, id, 10)
	dst = append(dst, `,"method":`...)
	dst = wire.AppendString(dst, method)
	dst = append(dst, `,"params":`...)
	dst, err := appendValue(dst, params)
	if err != nil {
		return nil, err
	}
	return append(dst, '}'), nil
}

// Appender is params that write themselves, as Request writes a map's
// members (AppendValue): a request the client sends often, written
// without building a map for it.
type Appender interface {
	AppendJSON(dst []byte) ([]byte, error)
}

// Verbatim is JSON that its maker vouches for, on one line: Request
// writes it as it is, where it checks a json.RawMessage first. The client
// sends its own capabilities and a call's checked arguments this way.
type Verbatim []byte

// MarshalJSON returns v, for encoding/json (which checks it).
func (v Verbatim) MarshalJSON() ([]byte, error) {
	if len(v) == 0 {
		return []byte("null"), nil
	}
	return v, nil
}

// AppendValue appends v as JSON, as Request writes params.
func AppendValue(dst []byte, v any) ([]byte, error) { return appendValue(dst, v) }

func appendValue(dst []byte, v any) ([]byte, error) {
	switch v := v.(type) {
	case Appender:
		return v.AppendJSON(dst)
	case string:
		return wire.AppendString(dst, v), nil
	case Verbatim:
		if len(v) == 0 {
			return append(dst, "null"...), nil
		}
		return append(dst, v...), nil
	case json.RawMessage:
		if len(v) == 0 {
			return append(dst, "null"...), nil // as encoding/json writes an empty RawMessage
		}
		if bytes.ContainsAny(v, "\r\n") {
			var b bytes.Buffer
			if err := json.Compact(&b, v); err != nil {
				return nil, fmt.Errorf("json: error calling MarshalJSON for type json.RawMessage: %w", err)
			}
			return append(dst, b.Bytes()...), nil
		}
		if !json.Valid(v) {
			return nil, errors.New("json: error calling MarshalJSON for type json.RawMessage: the value is not valid JSON")
		}
		return append(dst, v...), nil
	case map[string]any:
		if v == nil {
			return append(dst, "null"...), nil
		}
		var small [8]string
		keys := small[:0]
		for k := range v {
			keys = append(keys, k)
		}
		// Few keys, mostly in order: an insertion sort beats slices.Sort.
		for i := 1; i < len(keys); i++ {
			for j := i; j > 0 && keys[j] < keys[j-1]; j-- {
				keys[j], keys[j-1] = keys[j-1], keys[j]
			}
		}
		dst = append(dst, '{')
		for i, k := range keys {
			if i > 0 {
				dst = append(dst, ',')
			}
			dst = wire.AppendString(dst, k)
			dst = append(dst, ':')
			var err error
			if dst, err = appendValue(dst, v[k]); err != nil {
				return nil, err
			}
		}
		return append(dst, '}'), nil
	}
	b, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	return append(dst, b...), nil
}

// Notification encodes a notification of method with params (nil for
// none).
func Notification(method string, params any) ([]byte, error) {
	return json.Marshal(notification{Version, method, params})
}

// Response encodes the answer to request id: its result, or, when e is
// not nil, the error e (an error object: an *Error, or a type of the
// caller's that encodes as one). An id that is empty is written as null.
// A result that cannot be encoded is answered as an internal error.
func Response(id json.RawMessage, result, e any) []byte {
	if len(id) == 0 {
		id = null
	}
	r := response{JSONRPC: Version, ID: id}
	if e != nil {
		r.Error = e
	} else {
		r.Result = result
		if result == nil {
			r.Result = null
		}
	}
	b, err := json.Marshal(r)
	if err != nil {
		b, _ = json.Marshal(response{JSONRPC: Version, ID: id, Error: &ReadError{Code: CodeInternalError, Message: "the answer could not be encoded"}})
	}
	return b
}

var null = json.RawMessage("null")

// AppendID appends a request's id as read (its JSON), or null when there
// is none.
func AppendID(dst, id []byte) []byte {
	if len(id) == 0 {
		return append(dst, "null"...)
	}
	return append(dst, id...)
}

// AppendResultHead appends the start of a response to request id, up to
// its result: `{"jsonrpc":"2.0","id":ID,"result":`. The caller appends
// the result, then '}'.
func AppendResultHead(dst, id []byte) []byte {
	dst = append(dst, `{"jsonrpc":"2.0","id":`...)
	dst = AppendID(dst, id)
	return append(dst, `,"result":`...)
}

// AppendResponse appends a response to request id whose result is
// result, encoded already.
func AppendResponse(dst, id, result []byte) []byte {
	dst = AppendResultHead(dst, id)
	dst = append(dst, result...)
	return append(dst, '}')
}

// AppendErrorResponse appends an error response to request id; e is the
// error object (an *Error, or a type of the caller's that encodes as
// one). One that cannot be encoded is written as an internal error.
func AppendErrorResponse(dst, id []byte, e any) []byte {
	dst = append(dst, `{"jsonrpc":"2.0","id":`...)
	dst = AppendID(dst, id)
	dst = append(dst, `,"error":`...)
	b, err := json.Marshal(e)
	if err != nil {
		b = []byte(`{"code":-32603,"message":"The error could not be encoded"}`)
	}
	dst = append(dst, b...)
	return append(dst, '}')
}

// AppendNotificationHead appends the start of a notification of method,
// up to its params: `{"jsonrpc":"2.0","method":"METHOD","params":`. The
// method is written as given: one of the protocol's names, which need
// no escaping. The caller appends the params, then '}'.
func AppendNotificationHead(dst []byte, method string) []byte {
	dst = append(dst, `{"jsonrpc":"2.0","method":"`...)
	dst = append(dst, method...)
	return append(dst, `","params":`...)
}

// AppendRequest appends a request of method with the string id and
// params, encoded already (none when empty).
func AppendRequest(dst []byte, id, method string, params []byte) []byte {
	dst = append(dst, `{"jsonrpc":"2.0","id":`...)
	dst = wire.AppendString(dst, id)
	dst = append(dst, `,"method":`...)
	dst = wire.AppendString(dst, method)
	if len(params) > 0 {
		dst = append(dst, `,"params":`...)
		dst = append(dst, params...)
	}
	return append(dst, '}')
}

// Envelope is what a reader of JSON-RPC messages (the client) reads of a
// message's envelope: the raw ID, Result and Err (nil when absent; an
// error that is null counts as absent), and the Method (BadMethod: it is
// there but not a string).
type Envelope struct {
	ID, Result, Err []byte
	Method          string
	BadMethod       bool
}

// ReadEnvelope reads a message's envelope in one pass over its members,
// checking it is JSON; ok is false when it is not a JSON object.
func ReadEnvelope(msg []byte) (e Envelope, ok bool) {
	ok = jsonparse.EachMember(msg, func(name, v []byte) bool {
		switch string(name) {
		case "id":
			e.ID = v
		case "result":
			e.Result = v
		case "error":
			e.Err = v
			if string(v) == "null" {
				e.Err = nil
			}
		case "method":
			m, isStr := jsonparse.String(v)
			e.Method, e.BadMethod = m, !isStr && string(v) != "null"
		}
		return true
	})
	return e, ok
}
