package mcp_test

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/otcgo/otc"
	"github.com/otcgo/otc/internal/testkit"
	"github.com/otcgo/otc/mcp"
	"github.com/otcgo/otc/resource"
)

// The benchmarks put the MCP handler beside a hand-written net/http
// handler that answers the same tools/call with the least work possible
// (decode the message, add, encode the result), and beside the OTC
// handler of the same registry, so that the ratios show what MCP costs.
// Each variant gets a shallow copy of one prepared request with its body
// rewound, and a fresh recorder per iteration.

const benchMCPCallModern = `{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"Calculator_Add","arguments":{"a":10,"b":5},` +
	`"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}`

// floorMCPHandler answers the benchmark's call as a minimal hand-written
// MCP server would, without validating anything.
func floorMCPHandler() http.Handler {
	type request = testkit.FloorMCPRequest[json.RawMessage]
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var req request
		if err := json.NewDecoder(r.Body).Decode(&req); err != nil || req.Method != "tools/call" || req.Params.Name != "Calculator_Add" {
			http.Error(w, "bad request", http.StatusBadRequest)
			return
		}
		var in testkit.AddInput
		if err := json.Unmarshal(req.Params.Arguments, &in); err != nil {
			http.Error(w, "bad input", http.StatusBadRequest)
			return
		}
		testkit.WriteFloorMCPResult(w, req.ID, in.A+in.B, false)
	})
}

func benchHandler(b *testing.B, h http.Handler, path, body string, headers map[string]string) {
	b.Helper()
	benchHandlerWant(b, h, path, body, headers, `"(result|value)":15`)
}

// benchHandlerWant is benchHandler with the answer it must find.
func benchHandlerWant(b *testing.B, h http.Handler, path, body string, headers map[string]string, want string) {
	b.Helper()
	proto := httptest.NewRequest(http.MethodPost, path, nil)
	proto.Header.Set("Content-Type", "application/json")
	proto.Header.Set("Accept", "application/json, text/event-stream")
	for k, v := range headers {
		proto.Header.Set(k, v)
	}
	proto.ContentLength = int64(len(body))
	rd := bytes.NewReader([]byte(body))
	run := func() *httptest.ResponseRecorder {
		rd.Reset([]byte(body))
		r := *proto
		r.Body = io.NopCloser(rd)
		w := httptest.NewRecorder()
		h.ServeHTTP(w, &r)
		return w
	}
	w := run()
	require.Equal(b, http.StatusOK, w.Code, w.Body.String())
	require.Regexp(b, want, w.Body.String())
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		run()
	}
}

// BenchmarkMCPCall compares one tools/call through the MCP handler, in the
// initialize era and in 2026-07-28, with the hand-written floor and with
// the same call through the OTC handler.
func BenchmarkMCPCall(b *testing.B) {
	reg := testkit.NewAddRegistry(b)
	b.Run("floor", func(b *testing.B) { benchHandler(b, floorMCPHandler(), "/mcp", testkit.MCPAddCall, nil) })
	b.Run("mcp", func(b *testing.B) { benchHandler(b, mcp.NewHandler(reg, nil), "/mcp", testkit.MCPAddCall, nil) })
	b.Run("mcp_2026", func(b *testing.B) {
		benchHandler(b, mcp.NewHandler(reg, nil), "/mcp", benchMCPCallModern, map[string]string{
			"MCP-Protocol-Version": mcp.Version20260728, "Mcp-Method": "tools/call", "Mcp-Name": "Calculator_Add",
		})
	})
	b.Run("mcp_session", func(b *testing.B) {
		h := mcp.NewHandler(reg, nil)
		sid := benchSession(b, h)
		benchHandler(b, h, "/mcp", testkit.MCPAddCall, map[string]string{"Mcp-Session-Id": sid, "MCP-Protocol-Version": mcp.Version20251125})
	})
	b.Run("otc", func(b *testing.B) { benchHandler(b, otc.NewHandler(reg, nil), "/call", testkit.OTCAddCall, nil) })
}

// benchSession begins a session with h and returns its id.
func benchSession(b testing.TB, h http.Handler) string {
	b.Helper()
	r := httptest.NewRequest(http.MethodPost, "/mcp", strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"b","version":"1"}}}`))
	r.Header.Set("Content-Type", "application/json")
	r.Header.Set("Accept", "application/json, text/event-stream")
	w := httptest.NewRecorder()
	h.ServeHTTP(w, r)
	sid := w.Header().Get("Mcp-Session-Id")
	require.NotEmpty(b, sid, w.Body.String())
	return sid
}

// TestCallAllocations holds a tools/call through the MCP handler, in the
// initialize era and in 2026-07-28, to the allocations it makes now, the
// test's recorder included: one more means something of the call escaped
// to the heap (an exchange passed through an interface did once). It
// runs without the race detector, which allocates (.ci/run).
func TestCallAllocations(t *testing.T) {
	if raceEnabled {
		t.Skip("the race detector changes what allocates")
	}
	reg := testkit.NewAddRegistry(t)
	for _, tc := range []struct {
		name    string
		body    string
		headers map[string]string
		max     float64
	}{
		{"2025-11-25", testkit.MCPAddCall, nil, 27},
		{"session", testkit.MCPAddCall, nil, 27}, // 2025-11-25 in a session met before: nothing more
		{"2026-07-28", benchMCPCallModern, map[string]string{"MCP-Protocol-Version": mcp.Version20260728, "Mcp-Method": "tools/call", "Mcp-Name": "Calculator_Add"}, 25},
	} {
		h := mcp.NewHandler(reg, nil)
		if tc.name == "session" {
			tc.headers = map[string]string{"Mcp-Session-Id": benchSession(t, h), "MCP-Protocol-Version": mcp.Version20251125}
		}
		proto := httptest.NewRequest(http.MethodPost, "/mcp", nil)
		proto.Header.Set("Content-Type", "application/json")
		proto.Header.Set("Accept", "application/json, text/event-stream")
		for k, v := range tc.headers {
			proto.Header.Set(k, v)
		}
		proto.ContentLength = int64(len(tc.body))
		rd := bytes.NewReader(nil)
		run := func() {
			rd.Reset([]byte(tc.body))
			r := *proto
			r.Body = io.NopCloser(rd)
			w := httptest.NewRecorder()
			h.ServeHTTP(w, &r)
			if w.Code != http.StatusOK {
				t.Fatalf("%s: %d %s", tc.name, w.Code, w.Body.String())
			}
		}
		run()
		assert.LessOrEqual(t, testing.AllocsPerRun(200, run), tc.max, tc.name)
	}
}

// raceEnabled is true under the race detector (race_test.go).
var raceEnabled bool

// BenchmarkMCPRead is one resources/read of a small text resource through
// the MCP handler, beside the tools/call of BenchmarkMCPCall: the cost of
// the pipeline a read goes through.
func BenchmarkMCPRead(b *testing.B) {
	reg := testkit.NewAddRegistry(b)
	_, err := resource.Register(reg, resource.Resource{URI: "bench://page", Name: "page"}, func(context.Context) (string, error) { return "a page", nil })
	require.NoError(b, err)
	b.Run("read", func(b *testing.B) {
		benchHandlerWant(b, mcp.NewHandler(reg, nil), "/mcp", `{"jsonrpc":"2.0","id":7,"method":"resources/read","params":{"uri":"bench://page"}}`, nil, `"text":"a page"`)
	})
	b.Run("call", func(b *testing.B) { benchHandler(b, mcp.NewHandler(reg, nil), "/mcp", testkit.MCPAddCall, nil) })
}
