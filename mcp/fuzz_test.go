package mcp_test

import (
	"bufio"
	"bytes"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/stretchr/testify/require"

	"github.com/otcgo/otc/mcp"
)

// fuzzHandlerSeeds are the messages FuzzHandler starts from, beside the
// files in testdata/fuzz/FuzzHandler, which hold the envelopes the
// transports must refuse (bytes that are not UTF-8, ids and progress
// tokens over the cap, unknown protocol versions): one of each method.
var fuzzHandlerSeeds = []struct{ body, version string }{
	{`{"jsonrpc":"2.0","id":1,"method":"ping"}`, ""},
	{`{"jsonrpc":"2.0","id":"i","method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"c","version":"1"}}}`, "2025-11-25"},
	{`{"jsonrpc":"2.0","id":2,"method":"tools/list"}`, "2025-06-18"},
	{`{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"Progress_Count","_meta":{"progressToken":"t"}}}`, "2025-11-25"},
	{`{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"Calculator_Add","arguments":{"a":1,"b":2},"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{},"progressToken":5,"io.modelcontextprotocol/logLevel":"debug"}}}`, "2026-07-28"},
	{`{"jsonrpc":"2.0","id":5,"method":"server/discover","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}`, "2026-07-28"},
	{`{"jsonrpc":"2.0","id":7,"method":"tasks/get","params":{"taskId":"t-1","_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{"extensions":{"io.modelcontextprotocol/tasks":{}}}}}}`, "2026-07-28"},
	{`{"jsonrpc":"2.0","id":8,"method":"tasks/update","params":{"taskId":"t-1","inputResponses":{"input-1":{"action":"accept"}},"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{"extensions":{"io.modelcontextprotocol/tasks":{}}}}}}`, "2026-07-28"},
	{`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":1}}`, ""},
	{`{"jsonrpc":"2.0","id":6,"result":{}}`, ""},
	{`{"jsonrpc":"2.0","id":"otc-ABCDEFGHIJKLMNOPQRSTUVWXYZ","result":{"action":"accept","content":{"ok":true}}}`, "2025-11-25"},
	{`{"jsonrpc":"2.0","id":"otc-ABCDEFGHIJKLMNOPQRSTUVWXYZ","error":{"code":-32601,"message":"Method not found","data":[1]}}`, "2025-06-18"},
}

// FuzzHandler sends each input as an HTTP body, with the input's
// MCP-Protocol-Version (and, for 2026-07-28, the Mcp-Method and Mcp-Name
// headers its body implies), and as a line on stdio. Whatever the input,
// every answer and notification must be one JSON value in UTF-8 whose id,
// if any, is within mcp.MaxIDLength, and nothing may fail with a 5xx.
func FuzzHandler(f *testing.F) {
	for _, s := range fuzzHandlerSeeds {
		f.Add([]byte(s.body), s.version)
	}
	reg := newRegistry(f)
	h := mcp.NewHandler(reg, &mcp.Options{MaxBodyBytes: 64 << 10})
	f.Fuzz(func(t *testing.T, body []byte, version string) {
		req := httptest.NewRequest(http.MethodPost, "/mcp", bytes.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		if version != "" {
			req.Header.Set("MCP-Protocol-Version", version)
		}
		var probe struct {
			Method string `json:"method"`
			Params struct {
				Name   string `json:"name"`
				TaskID string `json:"taskId"`
			} `json:"params"`
		}
		if version == mcp.Version20260728 && json.Unmarshal(body, &probe) == nil {
			req.Header.Set("Mcp-Method", probe.Method)
			req.Header.Set("Mcp-Name", probe.Params.Name)
			if strings.HasPrefix(probe.Method, "tasks/") {
				req.Header.Set("Mcp-Name", probe.Params.TaskID)
			}
		}
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		require.Less(t, rec.Code, 500, "%s", rec.Body.Bytes())
		switch ct := rec.Header().Get("Content-Type"); {
		case rec.Code == http.StatusAccepted:
			require.Empty(t, rec.Body.Bytes())
		case ct == "text/event-stream":
			for block := range strings.SplitSeq(strings.TrimSuffix(rec.Body.String(), "\n\n"), "\n\n") {
				data, ok := strings.CutPrefix(block, "event: message\ndata: ")
				require.True(t, ok, "%q", block)
				checkFuzzMessage(t, []byte(data))
			}
		default:
			require.Equal(t, "application/json", ct)
			checkFuzzMessage(t, rec.Body.Bytes())
		}

		var out bytes.Buffer
		require.NoError(t, mcp.Serve(t.Context(), reg, bytes.NewReader(append(bytes.Clone(body), '\n')), &out, &mcp.Options{MaxBodyBytes: 64 << 10}))
		sc := bufio.NewScanner(&out)
		sc.Buffer(nil, 1<<20)
		for sc.Scan() {
			checkFuzzMessage(t, sc.Bytes())
		}
	})
}

// checkFuzzMessage checks one message the server wrote.
func checkFuzzMessage(t *testing.T, b []byte) {
	t.Helper()
	require.True(t, utf8.Valid(b), "not UTF-8: %q", b)
	require.True(t, json.Valid(b), "not JSON: %q", b)
	var m struct {
		ID json.RawMessage `json:"id"`
	}
	require.NoError(t, json.Unmarshal(b, &m))
	id := string(m.ID)
	if strings.HasPrefix(id, `"`) {
		id = id[1 : len(id)-1]
	}
	require.LessOrEqual(t, len(id), mcp.MaxIDLength, "an id over the cap was echoed: %.200s", b)
}
