package mcp

// White-box tests of the message parser and the small decoders of the
// transport: what a client controls reaches them before anything else.

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/otcgo/otc/internal/wire"
)

// parseSeeds are the seed corpus of FuzzParseMessage, beside the files in
// testdata/fuzz/FuzzParseMessage: the shapes of every message this server
// reads, and the near misses of each.
var parseSeeds = []string{
	`{"jsonrpc":"2.0","id":1,"method":"ping"}`,
	`{"jsonrpc":"2.0","id":"a","method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"c","version":"1"}}}`,
	`{"jsonrpc":"2.0","method":"notifications/initialized"}`,
	`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":7,"reason":"x"}}`,
	`{"jsonrpc":"2.0","id":2,"method":"tools/list","params":{"cursor":"QWJj"}}`,
	`{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"Calculator_Add","arguments":{"a":1,"b":2},"_meta":{"progressToken":"t","io.github.otcgo/call_id":"c1","io.github.otcgo/context":{"user_id":"u"}}}}`,
	`{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"x","_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{},"io.modelcontextprotocol/clientInfo":{},"io.modelcontextprotocol/logLevel":"info"}}}`,
	`{"jsonrpc":"2.0","id":5,"method":"logging/setLevel","params":{"level":"debug"}}`,
	`{"jsonrpc":"2.0","id":9,"result":{}}`,
	`{"jsonrpc":"2.0","id":9,"error":{"code":1,"message":"m"}}`,
	` { "jsonrpc" : "2.0" , "id" : -12 , "method" : "ping" , "params" : { } } `,
	`{"jsonrpc":"2\u002e0","id":1,"method":"ping"}`,
	`{"\u006aSONRPC":"2.0","jsonrpc":"2.0","id":1,"method":"p\u0069ng"}`,
	`{"jsonrpc":"2.0","id":"\"quoted\\\"","method":"\u00e9t\u00e9"}`,
	`{"jsonrpc":"2.0","id":1,"id":2,"method":"ping"}`,
	`{"jsonrpc":"2.0","id":1,"method":"ping","\u006dethod":"x"}`,
	`{"jsonrpc":"2.0","id":1.0,"method":"ping"}`,
	`{"jsonrpc":"2.0","id":null,"method":"ping"}`,
	`{"jsonrpc":"2.0","id":[],"method":"ping"}`,
	`{"jsonrpc":"2.0","id":1,"method":null}`,
	`{"jsonrpc":"2.0","id":1,"method":"x","params":[1,{"a":"}"}]}`,
	`{"jsonrpc":"2.0","id":1,"method":"x","params":{"name":"a","name":"b"}}`,
	`{"jsonrpc":"2.0","id":1,"method":"x","params":{"arguments":null,"_meta":{"progressToken":1e2}}}`,
	`{"jsonrpc":"2.0","id":1,"method":"x","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":2026}}}`,
	`{"method":"ping","id":1,"jsonrpc":"2.0","extra":[{"jsonrpc":"1.0"}],"params":{"nested":{"name":5}}}`,
	`[{"jsonrpc":"2.0","id":1,"method":"ping"}]`,
	`"ping"`, `1`, `null`, `{}`, `[]`,
	// Runs of backslashes before a quote, odd and even.
	`{"jsonrpc":"2.0","id":"a\\","method":"x\"y\\","params":{"name":"\\\"}\\","_meta":{"k\\":"\\\\"},"arguments":{"\"":"]"}}}`,
	// Ids and progress tokens at the cap and one byte over it.
	`{"jsonrpc":"2.0","id":"` + strings.Repeat("i", MaxIDLength) + `","method":"ping"}`,
	`{"jsonrpc":"2.0","id":"` + strings.Repeat("i", MaxIDLength+1) + `","method":"ping"}`,
	`{"jsonrpc":"2.0","id":-` + strings.Repeat("7", MaxIDLength) + `,"method":"ping"}`,
	`{"jsonrpc":"1.0","id":"` + strings.Repeat("i", MaxIDLength+1) + `","method":"ping"}`,
	`{"jsonrpc":"2.0","id":"` + strings.Repeat("i", MaxIDLength+1) + `","result":{}}`,
	`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"n","_meta":{"progressToken":"` + strings.Repeat("p", MaxIDLength) + `"}}}`,
	`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"n","_meta":{"progressToken":` + strings.Repeat("9", MaxIDLength+1) + `}}}`,
}

func FuzzParseMessage(f *testing.F) {
	for _, s := range parseSeeds {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		var m message
		e := readMessage(bytes.Clone(data), &m, "body")
		defer m.releaseArgs()
		if !json.Valid(data) || !utf8.Valid(data) {
			// parseMessage checks the JSON as it reads: what is not JSON
			// in UTF-8 is a parse error, naming no id, wherever it is.
			require.NotNil(t, e, "accepted a message that is not JSON in UTF-8: %q", data)
			assert.Equal(t, codeParseError, e.Code, "%s: %q", e.Message, data)
			assert.Nil(t, m.id)
			assert.Nil(t, m.argsDoc)
			return
		}
		if m.argsDoc != nil {
			assert.Equal(t, string(m.arguments), string(m.argsDoc.Raw(0)), "the parsed arguments are the arguments")
		}
		checkAgainstEncodingJSON(t, data, &m, e)
	})
}

// checkAgainstEncodingJSON checks what parseMessage made of data against
// what encoding/json reads there.
func checkAgainstEncodingJSON(t *testing.T, data []byte, m *message, e *rpcError) {
	d := json.NewDecoder(bytes.NewReader(data))
	d.UseNumber() // numbers beyond float64 are valid JSON
	var top any
	require.NoError(t, d.Decode(&top))
	members, isObject := top.(map[string]any)
	if !isObject {
		require.NotNil(t, e, "a message that is not an object must be refused")
		assert.Equal(t, codeInvalidRequest, e.Code)
		return
	}
	if e != nil {
		assert.Contains(t, []int{codeInvalidRequest, codeInvalidParams}, e.Code, "%s", e.Message)
	}
	counts := keyCounts(t, data)
	var raw map[string]json.RawMessage // the last value of each key, as encoding/json keeps it
	require.NoError(t, json.Unmarshal(data, &raw))
	dup := counts["jsonrpc"] > 1 || counts["id"] > 1 || counts["method"] > 1 || counts["params"] > 1

	method, methodOK := members["method"].(string)
	_, hasMethod := members["method"]
	idRaw, hasID := raw["id"]
	idOK := !hasID || isStringOrInteger(idRaw) && idLength(idRaw) <= MaxIDLength
	params, hasParams := members["params"]
	_, paramsOK := params.(map[string]any)
	envelopeOK := members["jsonrpc"] == "2.0" && !dup && idOK && (!hasParams || paramsOK)

	switch {
	case e == nil && !m.isReply:
		require.True(t, m.parsedOK)
		assert.True(t, envelopeOK, "accepted a message encoding/json reads as malformed: %s", data)
		assert.True(t, methodOK, "accepted a message without a string method: %s", data)
		assert.Equal(t, method, m.method, "method")
		assert.Equal(t, hasID, m.hasID, "id present")
		if hasID {
			assert.Equal(t, string(idRaw), string(m.id), "id")
		}
		if hasParams {
			checkParams(t, params.(map[string]any), raw["params"], m)
		}
	case e == nil && m.isReply:
		assert.False(t, hasMethod, "a reply has no method: %s", data)
		assert.Equal(t, "2.0", members["jsonrpc"])
		_, hasResult := members["result"]
		_, hasError := members["error"]
		assert.True(t, hasResult || hasError)
	default:
		if envelopeOK && methodOK {
			assert.Equal(t, codeInvalidParams, e.Code, "only params may fail a well-formed envelope: %s: %s", e.Message, data)
		}
		if m.id != nil && counts["id"] == 1 {
			assert.Equal(t, string(idRaw), string(m.id), "the id an error names")
		}
		if hasID && counts["id"] == 1 && isStringOrInteger(idRaw) && idLength(idRaw) > MaxIDLength {
			assert.Nil(t, m.id, "an id over the cap is never named")
			if !m.isReply && members["jsonrpc"] == "2.0" && methodOK && !dup && (!hasParams || paramsOK) {
				assert.Equal(t, codeInvalidRequest, e.Code, "an id over the cap is refused: %s", e.Message)
			}
		}
	}
}

// checkParams checks the members of params the parser read.
func checkParams(t *testing.T, params map[string]any, raw json.RawMessage, m *message) {
	var rawParams map[string]json.RawMessage
	require.NoError(t, json.Unmarshal(raw, &rawParams))
	if name, ok := params["name"]; ok {
		assert.True(t, m.hasName)
		assert.Equal(t, name, m.name)
	} else {
		assert.False(t, m.hasName)
	}
	if args, ok := rawParams["arguments"]; ok && args[0] == '{' {
		assert.Equal(t, string(args), string(m.arguments))
	} else {
		assert.Nil(t, m.arguments)
	}
	if c, ok := params["cursor"]; ok {
		assert.Equal(t, c, m.cursor)
	}
	meta, ok := params["_meta"].(map[string]any)
	assert.Equal(t, ok, m.metaOK)
	if !ok {
		return
	}
	if v, ok := meta["io.modelcontextprotocol/protocolVersion"]; ok {
		assert.True(t, m.hasMetaVersion)
		s, isString := v.(string)
		assert.Equal(t, !isString, m.metaVersionBad)
		assert.Equal(t, s, m.metaVersion)
	}
	if v, ok := meta["io.github.otcgo/call_id"]; ok {
		assert.Equal(t, v, m.callID)
	}
	var rawMeta map[string]json.RawMessage
	require.NoError(t, json.Unmarshal(rawParams["_meta"], &rawMeta))
	if tok, ok := rawMeta["progressToken"]; ok && isStringOrInteger(tok) {
		if idLength(tok) <= MaxIDLength {
			assert.Equal(t, string(tok), string(m.progressToken), "progressToken")
		} else {
			assert.Nil(t, m.progressToken, "a progressToken over the cap is ignored")
		}
	}
}

// keyCounts returns how often each key, decoded, occurs in the object
// data, which encoding/json's maps cannot tell.
func keyCounts(t *testing.T, data []byte) map[string]int {
	d := json.NewDecoder(bytes.NewReader(data))
	_, err := d.Token() // {
	require.NoError(t, err)
	counts := map[string]int{}
	for d.More() {
		tok, err := d.Token()
		require.NoError(t, err)
		counts[tok.(string)]++
		var skip json.RawMessage
		require.NoError(t, d.Decode(&skip))
	}
	return counts
}

func isStringOrInteger(raw json.RawMessage) bool {
	if raw[0] == '"' {
		return true
	}
	s := strings.TrimPrefix(string(raw), "-")
	return s != "" && strings.Trim(s, "0123456789") == ""
}

func TestParseMessageSeeds(t *testing.T) {
	t.Parallel()
	for _, s := range parseSeeds {
		t.Run(strings.ReplaceAll(wire.Truncate(s, 40), "/", "_"), func(t *testing.T) {
			var m message
			e := parseMessage([]byte(s), &m)
			checkAgainstEncodingJSON(t, []byte(s), &m, e)
		})
	}
}

func TestParseMessage(t *testing.T) {
	t.Parallel()
	t.Run("escaped_jsonrpc", func(t *testing.T) {
		var m message
		require.Nil(t, parseMessage([]byte(`{"jsonrpc":"2\u002e0","id":1,"method":"ping"}`), &m))
		assert.Equal(t, "ping", m.method)
	})
	t.Run("call", func(t *testing.T) {
		var m message
		body := `{"jsonrpc":"2.0","id":"x","method":"tools/call","params":{"name":"T\u00e9","arguments":{"a":"}"},` +
			`"_meta":{"progressToken":-3,"io.github.otcgo/call_id":"c","io.github.otcgo/context":{"user_id":"u"},` +
			`"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{"sampling":{}},` +
			`"io.modelcontextprotocol/clientInfo":{"name":"n"},"io.modelcontextprotocol/logLevel":"debug"}}}`
		require.Nil(t, parseMessage([]byte(body), &m))
		assert.Equal(t, `"x"`, string(m.id))
		assert.Equal(t, "Té", m.name)
		assert.Equal(t, `{"a":"}"}`, string(m.arguments))
		assert.Equal(t, `-3`, string(m.progressToken))
		assert.Equal(t, "c", m.callID)
		assert.Equal(t, `{"user_id":"u"}`, string(m.contextRaw))
		assert.Equal(t, "2026-07-28", m.metaVersion)
		assert.Equal(t, `{"sampling":{}}`, string(m.clientCaps))
		assert.True(t, m.hasClientInfo)
		assert.Equal(t, "debug", m.metaLogLevel)
	})
}

func TestDecodeHeaderValue(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name, in, want string
		ok             bool
	}{
		{"plain", "Calculator_Add", "Calculator_Add", true},
		{"empty", "", "", true},
		{"tab_inside", "a\tb", "a\tb", true},
		{"base64", "=?base64?SGVsbG8=?=", "Hello", true},
		{"base64_empty", "=?base64??=", "", true},
		{"base64_unicode", "=?base64?WsO8cmljaA==?=", "Zürich", true},
		{"base64_unpadded", "=?base64?SGVsbG8?=", "", false},
		{"base64_url_alphabet", "=?base64?-_-_?=", "", false},
		{"base64_invalid_utf8", "=?base64?/w==?=", "", false},
		{"base64_prefix_only", "=?base64?", "=?base64?", true},
		{"control_character", "a\x01b", "", false},
		{"delete", "a\x7fb", "", false},
		{"non_ascii", "Zürich", "", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, ok := decodeHeaderValue(tc.in)
			assert.Equal(t, tc.ok, ok)
			if tc.ok {
				assert.Equal(t, tc.want, got)
			}
		})
	}
}

func TestHeaderMatches(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name   string
		header string
		value  any
		want   bool
	}{
		{"string", "eu", "eu", true},
		{"string_differs", "eu", "EU", false},
		{"true", "true", true, true},
		{"true_upper", "TRUE", true, false},
		{"false", "false", false, true},
		{"integer", "10", json.Number("10"), true},
		{"integer_as_float", "10.0", json.Number("10"), true},
		{"negative", "-3", json.Number("-3"), true},
		{"number_differs", "11", json.Number("10"), false},
		{"not_a_number", "ten", json.Number("10"), false},
		{"object", "{}", map[string]any{}, false},
		{"null", "null", nil, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			assert.Equal(t, tc.want, headerMatches(tc.header, tc.value))
		})
	}
}

func TestHeaderParams(t *testing.T) {
	t.Parallel()
	schema := `{"type":"object","properties":{` +
		`"b":{"type":"string","description":"b","x-mcp-header":"B"},` +
		`"a":{"type":"object","description":"a","properties":{"inner":{"type":"integer","x-mcp-header":"Inner"}}},` +
		`"c":{"type":"string","description":"c","x-mcp-header":""},` +
		`"d":{"type":"array","description":"d","items":{"type":"object","properties":{"e":{"type":"string","x-mcp-header":"E"}}}}}}`
	assert.Equal(t, []headerParam{{header: "Inner", path: []string{"a", "inner"}}, {header: "B", path: []string{"b"}}},
		headerParams(json.RawMessage(schema)), "through properties alone, sorted by name, empty names skipped")
	assert.Nil(t, headerParams(json.RawMessage(`{"type":"object","properties":{"a":{"type":"string"}}}`)))
}

func TestAccepts(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name    string
		values  []string
		sse, ok bool
	}{
		{"none", nil, false, true},
		{"both", []string{"application/json, text/event-stream"}, true, true},
		{"both_two_lines", []string{"application/json", "text/event-stream"}, true, true},
		{"json", []string{"application/json"}, false, true},
		{"sse", []string{"text/event-stream"}, true, true},
		{"any", []string{"*/*"}, false, true},
		{"sse_refused", []string{"application/json, text/event-stream;q=0"}, false, true},
		{"html", []string{"text/html"}, false, false},
		{"garbage", []string{";;;"}, false, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			sse, ok := accepts(tc.values)
			assert.Equal(t, tc.sse, sse, "sse")
			assert.Equal(t, tc.ok, ok, "ok")
		})
	}
}

func TestLevels(t *testing.T) {
	t.Parallel()
	for _, ll := range logLevels {
		l, ok := parseLevel(ll.name)
		require.True(t, ok)
		assert.Equal(t, ll.name, LevelName(l), "round trip")
	}
	assert.Equal(t, "debug", LevelName(slog.LevelDebug-4), "below debug")
	assert.Equal(t, "info", LevelName(slog.LevelInfo+1))
	assert.Equal(t, "emergency", LevelName(slog.Level(100)))
	_, ok := parseLevel("Info")
	assert.False(t, ok)
}

func TestReadLine(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name    string
		in      string
		limit   int64
		lines   []string // "!" marks a line too long
		lastErr error
	}{
		{"lines", "a\nbb\n", 10, []string{"a\n", "bb\n"}, io.EOF},
		{"no_final_newline", "a\nbb", 10, []string{"a\n", "bb"}, io.EOF},
		{"at_limit", "abcd\n", 4, []string{"abcd\n"}, io.EOF},
		{"over_limit", "abcde\nx\n", 4, []string{"!", "x\n"}, io.EOF},
		{"long", strings.Repeat("z", 100) + "\nok\n", 20, []string{"!", "ok\n"}, io.EOF},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := bufio.NewReaderSize(strings.NewReader(tc.in), 16)
			var got []string
			for {
				line, tooLong, err := readLine(r, tc.limit)
				switch {
				case tooLong:
					got = append(got, "!")
				case len(line) > 0:
					got = append(got, string(line))
				}
				if err != nil {
					assert.True(t, errors.Is(err, tc.lastErr), "%v", err)
					break
				}
			}
			assert.Equal(t, tc.lines, got)
		})
	}
}
