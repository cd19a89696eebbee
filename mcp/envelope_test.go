package mcp_test

// What a message may carry, on every transport: UTF-8 only, ids and
// progress tokens within mcp.MaxIDLength, a protocol version header this
// server speaks, and on stdio an id that no request in flight holds.

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

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

// TestIDLength checks the cap on request ids: an id of mcp.MaxIDLength
// bytes is served and echoed; a longer one, string or integer, is refused
// with -32600 and id null, on every transport and whatever else is wrong
// with the message, and never echoed. A response or notification with a
// long id is ignored as before.
func TestIDLength(t *testing.T) {
	t.Parallel()
	longest := `"` + strings.Repeat("i", mcp.MaxIDLength) + `"`
	digits := strings.Repeat("7", mcp.MaxIDLength)
	tooLong := `"` + strings.Repeat("i", mcp.MaxIDLength+1) + `"`
	huge := `"` + strings.Repeat("h", 20<<10) + `"`
	ping := func(id string) string { return `{"jsonrpc":"2.0","id":` + id + `,"method":"ping"}` }
	for _, tr := range transports(t) {
		t.Run(tr.name, func(t *testing.T) {
			for _, tc := range []struct {
				name string
				body string
			}{
				{"string", ping(tooLong)},
				{"integer", ping(digits + "7")},
				{"negative_integer", ping("-" + digits)},
				{"escapes_count_as_sent", ping(`"` + strings.Repeat(`\u0069`, mcp.MaxIDLength/6+1) + `"`)},
				{"20KB", ping(huge)},
				{"modern", modernList(tooLong, "")},
				{"and_bad_jsonrpc", `{"jsonrpc":"1.0","id":` + tooLong + `,"method":"ping"}`},
				{"and_bad_params", `{"jsonrpc":"2.0","id":` + tooLong + `,"method":"tools/list","params":{"cursor":1}}`},
				{"tools_call", `{"jsonrpc":"2.0","id":` + huge + `,"method":"tools/call","params":{"name":"Calculator_Add","arguments":{"a":1,"b":2}}}`},
			} {
				t.Run(tc.name, func(t *testing.T) {
					status, b := tr.send(t, tc.body, true)
					refused(t, status, b, -32600, "null")
					assert.Less(t, len(b), 400, "the answer does not grow with the id: %s", b)
					assert.NotContains(t, string(b), strings.Repeat("i", 16))
					assert.NotContains(t, string(b), strings.Repeat("7", 16))
				})
			}
			for _, id := range []string{longest, digits, "-" + digits[1:]} {
				t.Run(fmt.Sprintf("longest_%.1s", id), func(t *testing.T) {
					status, b := tr.send(t, tr.request(id), true)
					if status != 0 {
						assert.Equal(t, http.StatusOK, status, "%s", b)
					}
					r := decodeResponse(t, b)
					assert.Nil(t, r.Error, "%s", b)
					assert.Equal(t, id, string(r.ID))
				})
			}
			t.Run("response_from_peer", func(t *testing.T) {
				// Over HTTP an answer to no request of the server is
				// refused 400 (ask.go); stdio has no one to tell.
				body := `{"jsonrpc":"2.0","id":` + huge + `,"result":{}}`
				if tr.name == "stdio" {
					tr.send(t, body, false)
					return
				}
				status, b := tr.send(t, body, true)
				refused(t, status, b, -32600, "null")
				assert.Less(t, len(b), 600, "the answer does not echo the id: %s", b)
			})
			t.Run("cancel_naming_a_long_id", func(t *testing.T) {
				tr.send(t, request(nil, "notifications/cancelled", obj{"requestId": strings.Repeat("c", 20<<10)}), false)
			})
		})
	}
}

// TestProgressTokenLength checks that a progressToken up to
// mcp.MaxIDLength bytes gets its notifications, and that a longer one is
// ignored: the call is answered, with no notification echoing the token.
func TestProgressTokenLength(t *testing.T) {
	t.Parallel()
	reg := newRegistry(t)
	url := serve(t, reg, nil)
	longest := strings.Repeat("p", mcp.MaxIDLength)
	digits := strings.Repeat("9", mcp.MaxIDLength)
	for _, tc := range []struct {
		name  string
		token any    // as the request sends it
		raw   string // as it is written in the message
		sent  bool   // whether progress is sent
	}{
		{"longest_string", longest, `"` + longest + `"`, true},
		{"one_byte_more", longest + "p", "", false},
		{"100KB", strings.Repeat("p", 100<<10), "", false},
		{"longest_integer", rawNumber(digits), digits, true},
		{"integer_one_digit_more", rawNumber(digits + "9"), "", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			meta := obj{"progressToken": tc.token}
			legacy := request(9, "tools/call", callParams("Progress_Count", nil, meta))
			modern := modernCall(9, "Progress_Count", nil, meta)
			check := func(t *testing.T, ns []notification, resp response, b []byte) {
				t.Helper()
				assert.Equal(t, "9", string(resp.ID))
				require.Nil(t, resp.Error)
				assert.JSONEq(t, `{"result":"done"}`, string(decodeCall(t, resp.Result).StructuredContent))
				if !tc.sent {
					assert.Empty(t, ns, "an over-long token is ignored")
					assert.Less(t, len(b), 1024, "the answer does not grow with the token")
					return
				}
				require.Len(t, ns, 3)
				for _, n := range ns {
					assert.Equal(t, "notifications/progress", n.Method)
				}
				assert.Contains(t, string(b), `"progressToken":`+tc.raw)
			}
			for name, h := range map[string]map[string]string{"http_2025-11-25": nil, "http_2026-07-28": modernHeaders("tools/call", "Progress_Count")} {
				t.Run(name, func(t *testing.T) {
					body := legacy
					if h != nil {
						body = modern
					}
					a := post(t, url, body, h)
					require.Equal(t, http.StatusOK, a.status, "%s", a.body)
					if !tc.sent {
						assert.Equal(t, "application/json", a.header.Get("Content-Type"), "no stream without progress")
						check(t, nil, a.rpc(t), a.body)
						return
					}
					ns, resp := splitStream(t, a.events(t))
					check(t, ns, resp, a.body)
				})
			}
			t.Run("stdio", func(t *testing.T) {
				c := startStdio(t, t.Context(), reg, nil)
				c.send(legacy)
				var ns []notification
				var all []byte
				for {
					b := c.recv()
					all = append(all, b...)
					if !strings.Contains(string(b), `"method":"notifications/`) {
						check(t, ns, decodeResponse(t, b), all)
						return
					}
					ns = append(ns, decodeNotification(t, b))
				}
			})
		})
	}
}

// rawNumber is an integer token of any length, as JSON writes it.
type rawNumber string

func (n rawNumber) MarshalJSON() ([]byte, error) { return []byte(n), nil }

// TestUnsupportedVersionHeader checks that an MCP-Protocol-Version header
// naming no version this server speaks is answered 400 with -32022 and a
// message naming the supported versions, whatever the body, notifications
// included, before the header would decide how the body is read; and that
// an absent header keeps the default.
func TestUnsupportedVersionHeader(t *testing.T) {
	t.Parallel()
	url := serve(t, newRegistry(t), nil)
	const supported = ": this server speaks 2026-07-28, 2025-11-25 and 2025-06-18"
	bodies := map[string]struct {
		body string
		id   string
	}{
		"legacy_list":  {request(1, "tools/list", nil), "1"},
		"modern_list":  {request("m", "tools/list", obj{"_meta": modernMeta(nil)}), `"m"`},
		"initialize":   {request(2, "initialize", obj{"protocolVersion": mcp.Version20251125, "capabilities": obj{}, "clientInfo": obj{"name": "c", "version": "1"}}), "2"},
		"discover":     {request(3, "server/discover", obj{"_meta": modernMeta(nil)}), "3"},
		"tools_call":   {modernCall(4, "Calculator_Add", obj{"a": 1, "b": 2}, nil), "4"},
		"notification": {request(nil, "notifications/initialized", nil), "null"},
	}
	for _, tc := range []struct {
		name, header, requested string
	}{
		{"past", "1999-01-01", "1999-01-01"},
		{"future", "2099-01-01", "2099-01-01"},
		{"malformed", "invalid-protocol-version", "invalid-protocol-version"},
		{"older_era", "2024-11-05", "2024-11-05"},
		{"2025-03-26", "2025-03-26", "2025-03-26"},
		{"5KB", strings.Repeat("v", 5<<10), strings.Repeat("v", 32) + "…"},
		{"suffixed", "2026-07-28T", "2026-07-28T"},
	} {
		for name, b := range bodies {
			t.Run(tc.name+"/"+name, func(t *testing.T) {
				t.Parallel()
				hdr := modernHeaders("tools/list", "")
				hdr["MCP-Protocol-Version"] = tc.header
				a := post(t, url, b.body, hdr)
				e, id := a.rpcErr(t, http.StatusBadRequest, -32022)
				assert.Equal(t, b.id, id)
				assert.Equal(t, `Unsupported protocol version "`+tc.requested+`" in the MCP-Protocol-Version header`+supported, e.Message)
				assert.JSONEq(t, `{"supported":["2026-07-28","2025-11-25","2025-06-18"],"requested":"`+tc.requested+`"}`, string(e.Data))
				assert.Less(t, len(a.body), 512, "the header is not echoed in full")
			})
		}
	}
	t.Run("absent_header_is_the_default", func(t *testing.T) {
		t.Parallel()
		a := post(t, url, request(1, "tools/list", nil), map[string]string{"MCP-Protocol-Version": ""})
		assert.Contains(t, object(t, a.result(t)), "tools")
		a = post(t, url, request(nil, "notifications/initialized", nil), map[string]string{"MCP-Protocol-Version": ""})
		assert.Equal(t, http.StatusAccepted, a.status)
	})
	t.Run("meta_version_on_stdio", func(t *testing.T) {
		t.Parallel()
		c := startStdio(t, t.Context(), newRegistry(t), nil)
		c.send(request(6, "tools/list", obj{"_meta": modernMeta(obj{"io.modelcontextprotocol/protocolVersion": "a" + strings.Repeat("é", 5<<10)})}))
		r := c.recvResponse()
		require.NotNil(t, r.Error)
		assert.Equal(t, -32022, r.Error.Code)
		requested := "a" + strings.Repeat("é", 15) + "…" // cut short, never inside a character
		assert.Equal(t, `Unsupported protocol version "`+requested+`" in _meta: a request that names its version there is served as 2026-07-28; 2025-11-25 and 2025-06-18 begin with initialize`, r.Error.Message)
		assert.JSONEq(t, `{"supported":["2026-07-28","2025-11-25","2025-06-18"],"requested":"`+requested+`"}`, string(r.Error.Data))
	})
	t.Run("body_version_unsupported", func(t *testing.T) {
		t.Parallel()
		long := strings.Repeat("w", 5<<10)
		hdr := modernHeaders("tools/list", "")
		hdr["MCP-Protocol-Version"] = mcp.Version20260728
		a := post(t, url, request(5, "tools/list", obj{"_meta": modernMeta(obj{"io.modelcontextprotocol/protocolVersion": long})}), hdr)
		e, _ := a.rpcErr(t, http.StatusBadRequest, -32020)
		assert.NotContains(t, e.Message, strings.Repeat("w", 64), "a mismatch names the values cut short")
	})
}

// TestStdioDuplicateID checks that a request whose id is held by one still
// in flight is refused (-32600, naming the id) without running, that the
// first is still answered or cancelled by that id, and that the id is free
// again the moment its answer is written.
func TestStdioDuplicateID(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name  string
		id    any
		raw   string
		other any // an id that differs only in its JSON type
	}{
		{"integer", 7, "7", "7"},
		{"string", "call-7", `"call-7"`, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			reg := newRegistry(t)
			b := newBlocker(t, reg)
			c := startStdio(t, t.Context(), reg, nil)
			first := request(tc.id, "tools/call", callParams("Block_Wait", nil, nil))
			c.send(first)
			recvWithin(t, b.started, "the first call to start")

			for _, dup := range []string{first, request(tc.id, "ping", nil), request(tc.id, "tools/call", callParams("Calculator_Add", obj{"a": 1, "b": 2}, nil))} {
				c.send(dup)
				r := c.recvResponse()
				assert.Equal(t, tc.raw, string(r.ID))
				require.NotNil(t, r.Error, "the duplicate is refused")
				assert.Equal(t, -32600, r.Error.Code)
				assert.Equal(t, "Invalid request: id "+tc.raw+" is in use by a request still in flight on this connection; give each request an id of its own", r.Error.Message)
			}
			if tc.other != nil {
				c.send(request(tc.other, "ping", nil))
				r := c.recvResponse()
				assert.Nil(t, r.Error, "a string id is not the integer it spells")
			}
			select {
			case <-b.started:
				require.FailNow(t, "a duplicate ran the tool")
			default:
			}

			t.Run("cancel_reaches_the_first", func(t *testing.T) {
				c.send(request(nil, "notifications/cancelled", obj{"requestId": tc.id, "reason": "test"}))
				assert.ErrorIs(t, recvWithin(t, b.ended, "the first call to end"), context.Canceled)
			})
			t.Run("free_once_done", func(t *testing.T) {
				// The cancelled call is not answered; its id is free again.
				require.Eventually(t, func() bool {
					c.send(request(tc.id, "ping", nil))
					return c.recvResponse().Error == nil
				}, waitTimeout, 5*time.Millisecond)
			})
		})
	}
	t.Run("first_still_answered", func(t *testing.T) {
		t.Parallel()
		reg := newRegistry(t)
		b := newBlocker(t, reg)
		c := startStdio(t, t.Context(), reg, nil)
		c.send(request(1, "tools/call", callParams("Block_Wait", nil, nil)))
		recvWithin(t, b.started, "the call to start")
		c.send(request(1, "tools/call", callParams("Block_Wait", nil, nil)))
		r := c.recvResponse()
		require.NotNil(t, r.Error)
		assert.Equal(t, -32600, r.Error.Code)
		close(b.release)
		r = c.recvResponse()
		assert.Equal(t, "1", string(r.ID))
		require.Nil(t, r.Error, "the first call is answered")
		assert.JSONEq(t, `{"result":"released"}`, string(decodeCall(t, r.Result).StructuredContent))
		assert.Empty(t, b.started, "the tool ran once")
	})
	t.Run("reused_as_soon_as_answered", func(t *testing.T) {
		t.Parallel()
		// A client that sends the next request with the same id as soon as
		// it reads an answer is never refused.
		c := startStdio(t, t.Context(), newRegistry(t), nil)
		for i := range 300 {
			c.send(request(1, "tools/call", callParams("Calculator_Add", obj{"a": i, "b": 1}, nil)))
			r := c.recvResponse()
			require.Nil(t, r.Error, "round %d: %+v", i, r.Error)
		}
	})
}
