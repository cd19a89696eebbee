package main

import (
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/otcgo/otc"
	"github.com/otcgo/otc/mcp"
)

// counterAnswer is what one call of Counter.Increment answered.
type counterAnswer struct {
	status   int
	count    float64
	replayed bool
	raw      string
}

// incrementOTC calls Counter.Increment over OTC with callID ("" for none).
func incrementOTC(t *testing.T, base, callID string) counterAnswer {
	t.Helper()
	body := `{"request":{"tool_id":"Counter.Increment","input":{}}}`
	if callID != "" {
		body = `{"request":{"tool_id":"Counter.Increment","call_id":"` + callID + `","input":{}}}`
	}
	return postCounter(t, base+"/tools/call", body, nil, func(m map[string]any) float64 {
		res := m["result"].(map[string]any)
		require.Equal(t, callID != "", res["call_id"] == callID, "the call id is echoed")
		return res["value"].(float64)
	})
}

func postCounter(t *testing.T, url, body string, header map[string]string, count func(map[string]any) float64) counterAnswer {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, url, strings.NewReader(body))
	require.NoError(t, err)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	for k, v := range header {
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	a := counterAnswer{status: resp.StatusCode, replayed: resp.Header.Get(otc.HeaderReplayed) == "true", raw: string(b)}
	require.Equal(t, http.StatusOK, a.status, a.raw)
	var m map[string]any
	require.NoError(t, json.Unmarshal(b, &m), a.raw)
	a.count = count(m)
	return a
}

// TestCounterIncrement_CallIDDeduplicates runs the program as it starts
// by default (the in-memory store) and sends Counter.Increment twice with
// one call_id, over OTC, REST and MCP: the count moves once per call id.
func TestCounterIncrement_CallIDDeduplicates(t *testing.T) {
	t.Parallel()
	_, lines := startMain(t, "-addr 127.0.0.1:0")
	line := nextLine(t, lines)
	assert.Contains(t, line, "idempotency=memory")
	base := listeningURL(t, line)

	first := incrementOTC(t, base, "readme-1")
	again := incrementOTC(t, base, "readme-1")
	assert.Equal(t, first.count, again.count, "the same call_id gets the same count")
	assert.False(t, first.replayed)
	assert.True(t, again.replayed)
	assert.Equal(t, first.count+1, incrementOTC(t, base, "readme-2").count, "a new call_id counts")
	n := incrementOTC(t, base, "").count
	assert.Equal(t, n+1, incrementOTC(t, base, "").count, "without a call_id every call counts")

	rest := func(id string) counterAnswer {
		return postCounter(t, base+"/v1/tools/Counter_Increment:invoke", `{"schema_version":"0.1.0","args":{}}`,
			map[string]string{"X-Request-Id": id}, func(m map[string]any) float64 { return m["result"].(float64) })
	}
	r1 := rest("rest-1")
	assert.Equal(t, n+2, r1.count)
	assert.Equal(t, r1.count, rest("rest-1").count)
	assert.Equal(t, r1.count, incrementOTC(t, base, "rest-1").count, "one call id space for OTC and REST")

	viaMCP := func(id string) counterAnswer {
		body := `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"Counter_Increment","arguments":{},"_meta":{"` + mcp.MetaCallID + `":"` + id + `"}}}`
		return postCounter(t, base+"/mcp", body, map[string]string{"MCP-Protocol-Version": mcp.Version20251125},
			func(m map[string]any) float64 {
				return m["result"].(map[string]any)["structuredContent"].(map[string]any)["result"].(float64)
			})
	}
	m1 := viaMCP("mcp-1")
	assert.Equal(t, n+3, m1.count)
	assert.Equal(t, m1.count, viaMCP("mcp-1").count)
}
