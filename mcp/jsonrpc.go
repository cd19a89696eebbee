package mcp

import (
	"encoding/json"
	"fmt"
	"sync"
	"unicode/utf8"

	"github.com/otcgo/otc/internal/jsonparse"
	"github.com/otcgo/otc/internal/jsonrpc"
	"github.com/otcgo/otc/internal/mcpwire"
)

// JSON-RPC error codes, the protocol's own and MCP's.
const (
	codeParseError     = jsonrpc.CodeParseError
	codeInvalidRequest = jsonrpc.CodeInvalidRequest
	codeMethodNotFound = jsonrpc.CodeMethodNotFound
	codeInvalidParams  = jsonrpc.CodeInvalidParams
	codeInternalError  = jsonrpc.CodeInternalError
	// codeServerBusy, in the range left to implementations, answers a
	// request over the concurrency limit of a stdio connection, and over
	// HTTP (429) one from a client refused for its failed
	// authentications.
	codeServerBusy = mcpwire.CodeServerBusy
	// 2026-07-28.
	codeHeaderMismatch      = -32020
	codeMissingCapability   = -32021
	codeUnsupportedProtocol = -32022
)

// rpcError is the JSON-RPC error object the server answers with: its
// Status is the HTTP status it is answered with, and its Refusal the
// pipeline's refusal it answers, for the WWW-Authenticate challenge over
// HTTP (nil for other errors).
type rpcError = jsonrpc.Error[any]

func newError(code int, format string, args ...any) *rpcError {
	return &rpcError{Code: code, Message: fmt.Sprintf(format, args...)}
}

// message is one JSON-RPC message as received: the raw extents of the
// members this server reads, pointing into the body.
type message struct {
	id       []byte // raw JSON: a string or an integer; nil for a notification
	method   string
	hasID    bool
	isReply  bool   // a response: result or error, no method
	params   []byte // raw JSON object, or nil
	jsonrpc  bool   // "jsonrpc": "2.0" was present
	parsedOK bool

	// From params.
	name      string
	hasName   bool
	arguments []byte // raw JSON object, or nil
	cursor    string
	hasCursor bool
	query     []byte // tools/list: the raw query of a search (SearchMode)
	limit     []byte // tools/list: the raw limit of a search
	level     string // logging/setLevel
	requestID []byte // notifications/cancelled
	version   string // initialize: protocolVersion
	meta      []byte // raw _meta object, or nil
	metaOK    bool   // params held a _meta member

	// From params._meta.
	metaVersion     string
	hasMetaVersion  bool
	clientCaps      []byte
	metaLogLevel    string
	progressToken   []byte
	contextRaw      []byte
	callID          string
	fullCatalog     bool // tools/list: the whole catalog, in search mode too
	hasClientInfo   bool
	metaVersionBad  bool       // protocolVersion was not a string
	clientCapsWrong bool       // clientCapabilities was not an object
	caps            clientCaps // clientCapabilities, read

	// roundTrip says params carry inputResponses or requestState, which
	// rounds.go reads again when it needs them: a flag keeps the message,
	// made for every request, the size it was.
	roundTrip bool

	// argsDoc is arguments, parsed as they were read, for the registry to
	// validate and decode without parsing them again; nil when they were
	// not. It refers to the body: the transport releases it with
	// releaseArgs when it is done with the request, and nothing that
	// outlives the request may keep it.
	argsDoc *jsonparse.Document
}

// messagePool recycles the messages of HTTP requests, which a request
// reads into and nothing keeps past it: the message points into the body,
// which is reused too.
var messagePool = sync.Pool{New: func() any { return new(message) }}

// getMessage returns an empty message.
func getMessage() *message { return messagePool.Get().(*message) }

// putMessage releases m's arguments, empties it, and returns it to the
// pool; nothing may use m afterwards.
func putMessage(m *message) {
	m.releaseArgs()
	*m = message{}
	messagePool.Put(m)
}

// releaseArgs returns the parsed arguments to their pool.
func (m *message) releaseArgs() {
	jsonparse.Release(m.argsDoc)
	m.argsDoc = nil
}

// errSyntax is what the readers below answer for text that is not JSON;
// readMessage turns it into the parse error of its transport.
var errSyntax = &rpcError{Code: codeParseError, Message: "Parse error"}

// readMessage reads one JSON-RPC message, checking in the same pass that
// it is JSON in UTF-8 (where names what carried it in a parse error). A
// text that is not JSON is answered with a parse error and no id, however
// far it got: when parseMessage stops early at another error, the text is
// checked whole before that error is answered.
func readMessage(body []byte, m *message, where string) *rpcError {
	e := parseMessage(body, m)
	if e != nil && (e == errSyntax || !jsonparse.Valid(body)) {
		m.id = nil
		m.releaseArgs()
		return parseError(body, where)
	}
	return e
}

// parseError is the error for a message that is not JSON in UTF-8; where
// names what carried it ("body", "line").
func parseError(msg []byte, where string) *rpcError {
	if !utf8.Valid(msg) {
		return &rpcError{Code: codeParseError, Message: "Parse error: the " + where + " is not valid UTF-8, as JSON text must be; send other encodings as UTF-8, or escape characters in strings as \\uXXXX"}
	}
	return &rpcError{Code: codeParseError, Message: "Parse error: the " + where + " is not valid JSON"}
}

// parseMessage reads one JSON-RPC message, checking the JSON as it goes
// (errSyntax where it is not), so that what is echoed from it, such as the
// id, is JSON too. The returned error is the JSON-RPC error to answer
// with; m.id is set as far as it could be read, so that the error names
// the request. An error other than errSyntax may come before the end of
// the text is reached: readMessage is what transports call.
func parseMessage(body []byte, m *message) *rpcError {
	s := scanner{jsonparse.Scanner{Data: body}}
	s.Space()
	if s.Peek() == '[' {
		return newError(codeInvalidRequest, "Batch requests are not supported: send one JSON-RPC message per request (protocol versions 2025-06-18 and later have no batches)")
	}
	if s.Peek() != '{' {
		return newError(codeInvalidRequest, "The request must be a JSON-RPC message: a JSON object")
	}
	var seen [4]bool // jsonrpc, id, method, params
	var hasResult, longID bool
	// params is read in the same pass as the message, each byte once, but
	// its errors are answered where they were when it was read after the
	// message's own checks.
	var paramsErr *rpcError
	err := s.fields(func(key []byte) *rpcError {
		if string(key) == "params" {
			if s.Peek() != '{' {
				s.Value()
				return newError(codeInvalidParams, `"params" must be a JSON object`)
			}
			start := s.Pos
			if seen[3] {
				s.Value()
				return newError(codeInvalidRequest, "The member %q is given more than once", key)
			}
			seen[3] = true
			if paramsErr = parseParams(&s, m); paramsErr == errSyntax {
				return errSyntax
			} else if paramsErr != nil {
				s.Pos = start
				if s.Value() == nil {
					return errSyntax
				}
			}
			m.params = s.Data[start:s.Pos]
			return nil
		}
		val := s.Value()
		if val == nil {
			return errSyntax
		}
		slot := -1
		switch string(key) {
		case "jsonrpc":
			slot = 0
			if string(val) != `"2.0"` { // else a spelling with escapes
				if v, ok := jsonString(val); !ok || v != "2.0" {
					return newError(codeInvalidRequest, `"jsonrpc" must be "2.0"`)
				}
			}
			m.jsonrpc = true
		case "id":
			slot = 1
			if !isValidID(val) {
				return newError(codeInvalidRequest, `"id" must be a string or an integer`)
			}
			// An id over the cap is never kept, so that no answer, not even
			// an error, echoes it.
			longID = idLength(val) > MaxIDLength
			if !longID {
				m.id = val
			}
			m.hasID = true
		case "method":
			slot = 2
			str, ok := internedString(val)
			if !ok {
				return newError(codeInvalidRequest, `"method" must be a string`)
			}
			m.method = str
		case "result", "error":
			hasResult = true
		}
		if slot >= 0 {
			if seen[slot] {
				return newError(codeInvalidRequest, "The member %q is given more than once", key)
			}
			seen[slot] = true
		}
		return nil
	})
	if err != nil {
		return err
	}
	if s.Space(); s.Pos != len(s.Data) {
		return errSyntax // something after the message
	}
	if !m.jsonrpc {
		return newError(codeInvalidRequest, `The request must carry "jsonrpc": "2.0"`)
	}
	if !seen[2] {
		if hasResult {
			m.isReply = true
			return nil
		}
		return newError(codeInvalidRequest, `The request must name a "method"`)
	}
	if longID {
		return newError(codeInvalidRequest, "The request id is longer than %d bytes; send a shorter one, such as a counter or a UUID", MaxIDLength)
	}
	if paramsErr != nil {
		return paramsErr
	}
	m.parsedOK = true
	return nil
}

// parseParams reads the members of params this server uses, from the
// object at s's position to its end.
func parseParams(s *scanner, m *message) *rpcError {
	var seen [11]bool
	return s.fields(func(key []byte) *rpcError {
		if string(key) == "_meta" {
			if s.Peek() != '{' {
				s.Value()
				return newError(codeInvalidParams, `"_meta" must be a JSON object`)
			}
			start := s.Pos
			if err := parseMeta(s, m); err != nil {
				return err
			}
			m.meta, m.metaOK = s.Data[start:s.Pos], true
			if seen[6] {
				return newError(codeInvalidParams, "The member %q of params is given more than once", key)
			}
			seen[6] = true
			return nil
		}
		if string(key) == "arguments" && s.Peek() == '{' {
			again := seen[1]
			seen[1] = true
			return s.arguments(m, again)
		}
		val := s.Value()
		if val == nil {
			return errSyntax
		}
		slot := -1
		var ok bool
		switch string(key) {
		case "name":
			slot = 0
			if m.name, ok = jsonString(val); !ok {
				return newError(codeInvalidParams, `"name" must be a string`)
			}
			m.hasName = true
		case "arguments":
			slot = 1
			switch val[0] {
			case '{':
				m.arguments = val
			case 'n': // null: no arguments
			default:
				return newError(codeInvalidParams, `"arguments" must be a JSON object`)
			}
		case "cursor":
			slot = 2
			if m.cursor, ok = jsonString(val); !ok {
				return newError(codeInvalidParams, `"cursor" must be a string`)
			}
			m.hasCursor = true
		case "level":
			slot = 3
			if m.level, ok = jsonString(val); !ok {
				return newError(codeInvalidParams, `"level" must be a string`)
			}
		case "requestId":
			slot = 4
			m.requestID = val
		case "protocolVersion":
			slot = 5
			if m.version, ok = jsonString(val); !ok {
				return newError(codeInvalidParams, `"protocolVersion" must be a string`)
			}
		case "inputResponses":
			slot = 7
			m.roundTrip = true
		case "requestState":
			slot = 8
			m.roundTrip = true
		case "query": // read where a search is served (searchmode.go)
			slot = 9
			m.query = val
		case "limit":
			slot = 10
			m.limit = val
		}
		if slot >= 0 {
			if seen[slot] {
				return newError(codeInvalidParams, "The member %q of params is given more than once", key)
			}
			seen[slot] = true
		}
		return nil
	})
}

// parseMeta reads the members of params._meta this server uses, from the
// object at s's position to its end.
func parseMeta(s *scanner, m *message) *rpcError {
	var seen [8]bool
	return s.members(func(key, val []byte) *rpcError {
		slot := -1
		switch string(key) {
		case mcpwire.MetaProtocolVersion:
			slot = 0
			v, ok := internedString(val)
			m.metaVersion, m.hasMetaVersion, m.metaVersionBad = v, true, !ok
		case mcpwire.MetaClientCapabilities:
			slot = 1
			m.clientCaps, m.clientCapsWrong = val, val[0] != '{'
			m.caps = readClientCaps(val)
		case mcpwire.MetaClientInfo:
			slot = 2
			m.hasClientInfo = true
		case mcpwire.MetaLogLevel:
			slot = 3
			v, ok := jsonString(val)
			if !ok {
				return newError(codeInvalidParams, `"io.modelcontextprotocol/logLevel" must be a string`)
			}
			m.metaLogLevel = v
		case "progressToken":
			slot = 4
			if !isValidID(val) {
				return newError(codeInvalidParams, `"progressToken" must be a string or an integer`)
			}
			if idLength(val) <= MaxIDLength { // a longer one is ignored: no progress is sent
				m.progressToken = val
			}
		case MetaContext:
			slot = 5
			m.contextRaw = val
		case MetaCallID:
			slot = 6
			v, ok := jsonString(val)
			if !ok {
				return newError(codeInvalidParams, "%q must be a string", MetaCallID)
			}
			m.callID = v
		case mcpwire.MetaFullCatalog:
			slot = 7
			m.fullCatalog = string(val) == "true"
		}
		if slot >= 0 {
			if seen[slot] {
				return newError(codeInvalidParams, "The member %q of _meta is given more than once", key)
			}
			seen[slot] = true
		}
		return nil
	})
}

// isValidID reports whether raw is a JSON string or an integer, the only
// request ids and progress tokens MCP allows.
func isValidID(raw []byte) bool {
	if len(raw) == 0 {
		return false
	}
	if raw[0] == '"' {
		return true
	}
	i := 0
	if raw[0] == '-' {
		i++
	}
	if i == len(raw) {
		return false
	}
	for ; i < len(raw); i++ {
		if raw[i] < '0' || raw[i] > '9' {
			return false
		}
	}
	return true
}

// idLength is the length MaxIDLength bounds of an id or progress token
// that isValidID accepted: the bytes between a string's quotes, as sent,
// or an integer's digits and sign.
func idLength(raw []byte) int {
	if raw[0] == '"' {
		return len(raw) - 2
	}
	return len(raw)
}

// internedString is jsonString for a member whose value is most often
// one of a few constants (a method, a protocol version): those are
// returned without allocating a copy.
func internedString(raw []byte) (string, bool) {
	switch string(raw) {
	case `"tools/call"`:
		return "tools/call", true
	case `"tools/list"`:
		return "tools/list", true
	case `"` + Version20260728 + `"`:
		return Version20260728, true
	case `"` + Version20251125 + `"`:
		return Version20251125, true
	case `"initialize"`:
		return "initialize", true
	case `"notifications/initialized"`:
		return "notifications/initialized", true
	case `"ping"`:
		return "ping", true
	}
	return jsonString(raw)
}

// jsonString decodes raw when it is a JSON string.
func jsonString(raw []byte) (string, bool) {
	if len(raw) < 2 || raw[0] != '"' {
		return "", false
	}
	inner := raw[1 : len(raw)-1]
	plain := true
	for _, c := range inner {
		if c == '\\' || c >= 0x80 {
			plain = false
			break
		}
	}
	if plain {
		return string(inner), true
	}
	var s string
	if err := json.Unmarshal(raw, &s); err != nil {
		return "", false
	}
	return s, true
}

// scanner is the JSON scanner of internal/jsonparse, with what MCP's
// envelope reads of it: each member of an object, answered with the
// JSON-RPC error of its reader.
type scanner struct{ jsonparse.Scanner }

// members calls f with each member of the object at the scanner's
// position: its key, unquoted, and its raw value.
func (s *scanner) members(f func(key, val []byte) *rpcError) *rpcError {
	return s.fields(func(key []byte) *rpcError {
		val := s.Value()
		if val == nil {
			return errSyntax
		}
		return f(key, val)
	})
}

// fields is members for a reader that reads each value itself: f is
// called at the value's first byte and must leave the scanner after it
// (or answer errSyntax). What is not JSON is errSyntax.
func (s *scanner) fields(f func(key []byte) *rpcError) *rpcError {
	var err *rpcError
	if !s.Object(func(key []byte) bool {
		err = f(key)
		return err == nil
	}) && err == nil {
		return errSyntax
	}
	return err
}

// arguments reads params.arguments, an object, into m: parsed into a
// document in the same pass, so that the registry need not parse them
// again. again says the member came before.
func (s *scanner) arguments(m *message, again bool) *rpcError {
	start := s.Pos
	if d, end, err := jsonparse.ParseValue(s.Data, s.Pos); err == nil {
		s.Pos = end
		m.releaseArgs()
		m.argsDoc = d
	} else if s.Value() == nil { // what the parser refuses beyond JSON (its depth) is the registry's to answer
		return errSyntax
	}
	m.arguments = s.Data[start:s.Pos]
	if again {
		return newError(codeInvalidParams, "The member %q of params is given more than once", "arguments")
	}
	return nil
}
