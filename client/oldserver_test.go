package client_test

import (
	"bufio"
	"encoding/json"
	"io"
	"os"
	"os/exec"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/otcgo/otc/client"
)

// oldServer is an MCP server over stdio (the test binary, run with
// stdioEnv=old) that speaks 2024-11-05 alone, as many servers people run
// do: it answers initialize with that version whatever the client asked,
// lists one tool, and answers a call with content only.
func oldServer(in io.Reader, out io.Writer) {
	w := bufio.NewWriter(out)
	send := func(v any) {
		b, _ := json.Marshal(v)
		_, _ = w.Write(append(b, '\n'))
		_ = w.Flush()
	}
	sc := bufio.NewScanner(in)
	for sc.Scan() {
		var m struct {
			ID     json.RawMessage `json:"id"`
			Method string          `json:"method"`
		}
		if json.Unmarshal(sc.Bytes(), &m) != nil || len(m.ID) == 0 {
			continue
		}
		var result any
		switch m.Method {
		case "initialize":
			result = map[string]any{"protocolVersion": "2024-11-05", "capabilities": map[string]any{"tools": map[string]any{}},
				"serverInfo": map[string]any{"name": "old", "version": "0.6.2"}}
		case "tools/list":
			result = map[string]any{"tools": []any{map[string]any{"name": "echo", "description": "Says it back.",
				"inputSchema": map[string]any{"type": "object", "properties": map[string]any{"text": map[string]any{"type": "string"}}}}}}
		case "tools/call":
			result = map[string]any{"content": []any{map[string]any{"type": "text", "text": "said"}}}
		case "ping":
			result = map[string]any{}
		default:
			send(map[string]any{"jsonrpc": "2.0", "id": m.ID, "error": map[string]any{"code": -32601, "message": "Method not found"}})
			continue
		}
		send(map[string]any{"jsonrpc": "2.0", "id": m.ID, "result": result})
	}
}

// TestOldServer: a server that answers the handshake with MCP 2024-11-05
// is spoken to at that version, not refused; what the version lacks (a
// structured result) is simply absent.
func TestOldServer(t *testing.T) {
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), stdioEnv+"=old")
	c, err := client.NewStdio(cmd, nil)
	require.NoError(t, err)
	t.Cleanup(func() { _ = c.Close() })
	defs, err := c.ListTools(t.Context())
	require.NoError(t, err)
	require.Len(t, defs, 1)
	assert.True(t, defs[0].Content, "no output schema: content blocks")
	text, err := c.CallText(t.Context(), "echo", json.RawMessage(`{"text":"hi"}`))
	require.NoError(t, err)
	assert.Equal(t, "said", text)
	require.NoError(t, c.Health(t.Context()))
}
