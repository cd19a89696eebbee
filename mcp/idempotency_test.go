package mcp_test

// The call id in _meta as an idempotency key, over Streamable HTTP in
// both protocol generations and over stdio.

import (
	"context"
	"encoding/json"
	"log/slog"
	"net/http"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/otcgo/otc"
	"github.com/otcgo/otc/idempotency"
	"github.com/otcgo/otc/mcp"
)

type countInput struct {
	N int `json:"n,omitempty" jsonschema:"description=Any number."`
}

// countingRegistry has Count_Up, which returns how often it ran, behind
// an in-memory idempotency store.
func countingRegistry(t *testing.T) (*otc.Registry, *atomic.Int64) {
	t.Helper()
	var runs atomic.Int64
	reg := otc.NewRegistry(&otc.RegistryOptions{Logger: slog.New(slog.DiscardHandler), Idempotency: idempotency.NewMemoryStore(nil)})
	addTool(t, reg, "Count.Up", func(context.Context, countInput) (int64, error) { return runs.Add(1), nil })
	return reg, &runs
}

func TestCallIDDeduplicatesOverHTTP(t *testing.T) {
	t.Parallel()
	for _, gen := range []struct {
		name     string
		meta     func(obj) obj
		headers  map[string]string
		conflict int // the HTTP status of the refusal
	}{
		{"2025-11-25", func(m obj) obj { return m }, map[string]string{"MCP-Protocol-Version": mcp.Version20251125}, http.StatusOK},
		{"2026-07-28", modernMeta, modernHeaders("tools/call", "Count_Up"), http.StatusBadRequest},
	} {
		t.Run(gen.name, func(t *testing.T) {
			t.Parallel()
			reg, runs := countingRegistry(t)
			url := serve(t, reg, nil)
			call := func(id string, n int) answer {
				return post(t, url, request(1, "tools/call", callParams("Count_Up", obj{"n": n}, gen.meta(obj{mcp.MetaCallID: id}))), gen.headers)
			}
			first := decodeCall(t, call("mcp-1", 1).result(t))
			again := decodeCall(t, call("mcp-1", 1).result(t))
			assert.JSONEq(t, `{"result":1}`, string(first.StructuredContent))
			assert.JSONEq(t, `{"result":1}`, string(again.StructuredContent), "the retry is answered with the first result")
			assert.EqualValues(t, 1, runs.Load())
			assert.JSONEq(t, `{"result":2}`, string(decodeCall(t, call("mcp-2", 1).result(t)).StructuredContent))

			e, _ := call("mcp-1", 5).rpcErr(t, gen.conflict, -32602)
			assert.Equal(t, "The call_id was already used for a different call", e.Message)
			var data map[string]string
			require.NoError(t, json.Unmarshal(e.Data, &data))
			assert.Equal(t, "call_id_reused", data["error"])
			assert.Contains(t, data["error_description"], `call_id "mcp-1" was first used with different input`)
			assert.EqualValues(t, 2, runs.Load(), "the refused call did not run")

			// Without a call id, every call runs.
			post(t, url, request(2, "tools/call", callParams("Count_Up", obj{}, gen.meta(obj{}))), gen.headers).result(t)
			post(t, url, request(2, "tools/call", callParams("Count_Up", obj{}, gen.meta(obj{}))), gen.headers).result(t)
			assert.EqualValues(t, 4, runs.Load())
		})
	}
}

func TestCallIDDeduplicatesOverStdio(t *testing.T) {
	t.Parallel()
	reg, runs := countingRegistry(t)
	c := startStdio(t, t.Context(), reg, nil)
	c.send(request(1, "initialize", obj{"protocolVersion": mcp.Version20251125, "capabilities": obj{}, "clientInfo": obj{"name": "t", "version": "1"}}))
	c.recvResponse()
	c.send(request(nil, "notifications/initialized", nil))
	for i := range 3 {
		c.send(request(i+2, "tools/call", callParams("Count_Up", obj{}, obj{mcp.MetaCallID: "stdio-1"})))
		r := c.recvResponse()
		require.Nil(t, r.Error)
		assert.JSONEq(t, `{"result":1}`, string(decodeCall(t, r.Result).StructuredContent))
	}
	assert.EqualValues(t, 1, runs.Load())
	c.send(request(9, "tools/call", callParams("Count_Up", obj{"n": 3}, obj{mcp.MetaCallID: "stdio-1"})))
	r := c.recvResponse()
	require.NotNil(t, r.Error)
	assert.Equal(t, -32602, r.Error.Code)
}
