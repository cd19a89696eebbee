package jsonrpc

import (
	"encoding/json"
	"math"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// read decodes b as a message, failing the test if it is not JSON.
func read(t *testing.T, b []byte) Message {
	t.Helper()
	var m Message
	require.NoError(t, json.Unmarshal(b, &m), "%s", b)
	assert.Equal(t, Version, m.JSONRPC, "%s", b)
	return m
}

func TestEncoded(t *testing.T) {
	m := read(t, must(Request(7, "tools/call", map[string]any{"name": "x"})))
	assert.JSONEq(t, "7", string(m.ID))
	assert.Equal(t, "tools/call", m.Method)
	assert.JSONEq(t, `{"name":"x"}`, string(m.Params))
	assert.False(t, m.IsNotification())

	b := must(Notification("notifications/initialized", nil))
	assert.JSONEq(t, `{"jsonrpc":"2.0","method":"notifications/initialized"}`, string(b), "no params member when there are none")
	assert.True(t, read(t, b).IsNotification())
	assert.True(t, Message{Method: "x", ID: json.RawMessage("null")}.IsNotification(), "a null id is no request's")

	assert.JSONEq(t, `{"jsonrpc":"2.0","id":"a","result":{"ok":true}}`, string(Response(json.RawMessage(`"a"`), map[string]bool{"ok": true}, nil)))
	assert.JSONEq(t, `{"jsonrpc":"2.0","id":null,"result":null}`, string(Response(nil, nil, nil)), "no id is null; no result is null")
	assert.JSONEq(t, `{"jsonrpc":"2.0","id":3,"error":{"code":-32601,"message":"no"}}`,
		string(Response(json.RawMessage("3"), "ignored", &ReadError{Code: CodeMethodNotFound, Message: "no"})), "an error and no result")
	m = read(t, Response(json.RawMessage("3"), math.Inf(1), nil))
	require.NotNil(t, m.Error, "a result that cannot be encoded")
	assert.Equal(t, CodeInternalError, m.Error.Code)
	assert.Nil(t, m.Result)
}

func TestAppended(t *testing.T) {
	b := AppendResponse([]byte("x"), []byte(`"id-1"`), []byte(`[1,2]`))
	require.Equal(t, byte('x'), b[0], "appended to what was there")
	m := read(t, b[1:])
	assert.JSONEq(t, `"id-1"`, string(m.ID))
	assert.JSONEq(t, `[1,2]`, string(m.Result))

	m = read(t, AppendErrorResponse(nil, nil, &ReadError{Code: CodeParseError, Message: "Parse error"}))
	assert.Equal(t, "null", string(m.ID), "a message whose id could not be read is answered with null")
	assert.Equal(t, CodeParseError, m.Error.Code)
	m = read(t, AppendErrorResponse(nil, []byte("1"), func() {}))
	assert.Equal(t, CodeInternalError, m.Error.Code, "an error object that cannot be encoded")

	b = AppendNotificationHead(nil, "notifications/progress")
	b = append(b, `{"progress":1}}`...)
	m = read(t, b)
	assert.True(t, m.IsNotification())
	assert.JSONEq(t, `{"progress":1}`, string(m.Params))

	m = read(t, AppendRequest(nil, "ask-\"1\"", "elicitation/create", nil))
	assert.JSONEq(t, `"ask-\"1\""`, string(m.ID), "a string id is escaped")
	assert.Empty(t, m.Params, "no params member when there are none")
	m = read(t, AppendRequest(nil, "2", "roots/list", []byte(`{}`)))
	assert.JSONEq(t, `{}`, string(m.Params))
}

func must(b []byte, err error) []byte {
	if err != nil {
		panic(err)
	}
	return b
}

// TestRequestAgreesWithEncodingJSON holds the member-by-member writing of
// map params to what encoding/json writes for the same request: the same
// JSON, on one line, and the same refusals.
func TestRequestAgreesWithEncodingJSON(t *testing.T) {
	type ctxValue struct {
		UserID string `json:"user_id"`
	}
	for _, params := range []map[string]any{
		{},
		{"name": "Calculator_Add", "arguments": json.RawMessage(`{"a":10,"b":5}`)},
		{"name": "x", "arguments": json.RawMessage("{\n  \"a\": [1, 2],\r\n  \"b\": \"c\\nd\"\n}"), "_meta": map[string]any{
			"b": "é\u2028<&>\x01", "a": json.RawMessage(`{"name":"c","version":"1"}`), "z": ctxValue{UserID: "u"}, "n": 3, "nil": nil,
			"nested": map[string]any{"k": map[string]any{}}, "empty": json.RawMessage(nil), "nilmap": map[string]any(nil),
		}},
		{"k1": 1, "k2": 2, "k3": 3, "k4": 4, "k5": 5, "k6": 6, "k7": 7, "k8": 8, "k9": 9, "k10": 10, "bad\xffkey": "v\xfe"},
	} {
		got, err := Request(42, "tools/call", params)
		require.NoError(t, err)
		want, err := json.Marshal(request{Version, 42, "tools/call", params})
		require.NoError(t, err)
		assert.JSONEq(t, string(want), string(got))
		assert.NotContains(t, string(got), "\n", "a message is one line")
	}
	for _, bad := range []json.RawMessage{json.RawMessage(`{"a":`), json.RawMessage("{\n\"a\":}")} {
		_, err := Request(1, "tools/call", map[string]any{"arguments": bad})
		assert.Error(t, err, "%q", bad)
	}
	_, err := Request(1, "x", map[string]any{"f": func() {}})
	assert.Error(t, err, "a value encoding/json refuses is refused")
}

func TestVerbatim(t *testing.T) {
	b, err := Request(3, "tools/call", map[string]any{"arguments": Verbatim(`{"a":1}`), "none": Verbatim(nil)})
	require.NoError(t, err)
	assert.Equal(t, `{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"arguments":{"a":1},"none":null}}`, string(b), "written as it is")
	b, err = json.Marshal(map[string]any{"v": Verbatim(`{"a":1}`), "none": Verbatim(nil)})
	require.NoError(t, err)
	assert.JSONEq(t, `{"v":{"a":1},"none":null}`, string(b), "and through encoding/json")
}
