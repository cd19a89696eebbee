package mcp_test

// What a message may carry, on every transport: UTF-8 only, ids and
// progress tokens within mcp.MaxIDLength, a protocol version header this
// server speaks, and on stdio an id that no request in flight holds.

import (
	"net/http"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/otcgo/otc/mcp"
)

// transport sends one line or body and returns the server's answer to it:
// the status (0 on stdio) and the message, or nil when answered says
// there is none.
type transport struct {
	name string
	send func(t *testing.T, body string, answered bool) (int, []byte)
	// request is a well-formed request of the transport's era with id,
	// raw JSON.
	request func(id string) string
}

// transports returns the ways a message reaches the server: HTTP in each
// era, and stdio, on one connection for the test.
func transports(t *testing.T) []transport {
	t.Helper()
	reg := newRegistry(t)
	url := serve(t, reg, nil)
	c := startStdio(t, t.Context(), reg, nil)
	httpSend := func(hdr map[string]string) func(*testing.T, string, bool) (int, []byte) {
		return func(t *testing.T, body string, answered bool) (int, []byte) {
			t.Helper()
			a := post(t, url, body, hdr)
			if !answered {
				assert.Equal(t, http.StatusAccepted, a.status, "%s", a.body)
				assert.Empty(t, a.body)
				return a.status, nil
			}
			require.Equal(t, "application/json", a.header.Get("Content-Type"), "status %d, body %q", a.status, a.body)
			return a.status, a.body
		}
	}
	ping := func(id string) string { return `{"jsonrpc":"2.0","id":` + id + `,"method":"ping"}` }
	list := func(id string) string { return modernList(id, "") }
	return []transport{
		{"http_2025-11-25", httpSend(map[string]string{"MCP-Protocol-Version": mcp.Version20251125}), ping},
		{"http_2026-07-28", httpSend(modernHeaders("tools/list", "")), list},
		{"stdio", func(t *testing.T, body string, answered bool) (int, []byte) {
			t.Helper()
			c.send(body)
			if answered {
				return 0, c.recv()
			}
			// The answer to a ping sent behind it comes first: nothing was
			// written for the line.
			c.send(request("after", "ping", nil))
			assert.Equal(t, `"after"`, string(c.recvResponse().ID), "the line is not answered")
			return 0, nil
		}, ping},
	}
}

// refused checks an answer that refuses a message: one JSON-RPC error in
// UTF-8 with code, 400 over HTTP, naming id; it returns the error.
func refused(t *testing.T, status int, b []byte, code int, id string) rpcError {
	t.Helper()
	require.NotNil(t, b, "no answer")
	if status != 0 {
		assert.Equal(t, http.StatusBadRequest, status, "%s", b)
	}
	r := decodeResponse(t, b)
	require.NotNil(t, r.Error, "%s", b)
	assert.Equal(t, code, r.Error.Code, "%s", b)
	assert.Equal(t, id, string(r.ID), "%s", b)
	return *r.Error
}

// modernList is a 2026-07-28 tools/list with id, whose params carry extra.
func modernList(id string, extra string) string {
	return `{"jsonrpc":"2.0","id":` + id + `,"method":"tools/list","params":{` + extra +
		`"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}`
}

// TestInvalidUTF8 checks that a message with bytes that are not UTF-8
// anywhere, including where the server would echo them, is a parse error
// (-32700, id null) on every transport, and that UTF-8 of every length is
// read and echoed intact.
func TestInvalidUTF8(t *testing.T) {
	t.Parallel()
	bad := map[string]string{
		"id":                 `{"jsonrpc":"2.0","id":"` + "\xff" + `","method":"ping"}`,
		"id_modern":          modernList(`"a`+"\xfe"+`"`, ""),
		"method":             `{"jsonrpc":"2.0","id":1,"method":"pi` + "\xffng" + `"}`,
		"argument":           `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"Geo_Lookup","arguments":{"query":"` + "\xc3(" + `"}}}`,
		"meta_key":           modernList("1", `"x":{"`+"\x80"+`":1},`),
		"progress_token":     `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"Progress_Count","_meta":{"progressToken":"` + "\xe2\x82" + `"}}}`,
		"overlong_slash":     `{"jsonrpc":"2.0","id":"` + "\xc0\xaf" + `","method":"ping"}`,
		"encoded_surrogate":  `{"jsonrpc":"2.0","id":"` + "\xed\xa0\x80" + `","method":"ping"}`,
		"past_u10ffff":       `{"jsonrpc":"2.0","id":"` + "\xf4\x90\x80\x80" + `","method":"ping"}`,
		"notification":       `{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":"` + "\xff" + `"}}`,
		"response_from_peer": `{"jsonrpc":"2.0","id":"` + "\xff" + `","result":{}}`,
		"latin1_body":        "{\"jsonrpc\":\"2.0\",\"id\":\"caf\xe9\",\"method\":\"ping\"}",
	}
	good := map[string]string{
		"two_three_and_four_bytes": `"é€😀"`,
		"escaped_lone_surrogate":   `"\ud800"`,
	}
	for _, tr := range transports(t) {
		t.Run(tr.name, func(t *testing.T) {
			// Not parallel: stdio is one connection, read in order.
			for name, body := range bad {
				t.Run(name, func(t *testing.T) {
					status, b := tr.send(t, body, true)
					e := refused(t, status, b, -32700, "null")
					assert.Contains(t, e.Message, "not valid UTF-8")
				})
			}
			for name, id := range good {
				t.Run(name, func(t *testing.T) {
					status, b := tr.send(t, tr.request(id), true)
					if status != 0 {
						assert.Equal(t, http.StatusOK, status, "%s", b)
					}
					r := decodeResponse(t, b)
					assert.Nil(t, r.Error, "%s", b)
					assert.Equal(t, id, string(r.ID), "the id is echoed as sent")
				})
			}
		})
	}
}
