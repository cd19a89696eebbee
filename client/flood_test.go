package client_test

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/otcgo/otc/client"
)

// floodQuestions and floodPings are what floodServer sends before it
// answers tools/list.
const floodQuestions, floodPings = 500, 5000

// floodServer is an MCP server over stdio (the test binary, run with
// stdioEnv=flood) that answers the handshake, and answers tools/list only
// after floodQuestions elicitation requests and floodPings pings of its
// own, which it sends without waiting for their answers.
func floodServer(in io.Reader, out io.Writer) {
	w := bufio.NewWriter(out)
	var mu sync.Mutex
	send := func(v any) {
		b, _ := json.Marshal(v)
		mu.Lock()
		defer mu.Unlock()
		_, _ = w.Write(append(b, '\n'))
	}
	sc := bufio.NewScanner(in)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		var m struct {
			ID     json.RawMessage `json:"id"`
			Method string          `json:"method"`
		}
		if json.Unmarshal(sc.Bytes(), &m) != nil || m.Method == "" || len(m.ID) == 0 {
			continue // an answer, or a notification
		}
		switch m.Method {
		case "initialize":
			send(map[string]any{"jsonrpc": "2.0", "id": m.ID, "result": map[string]any{"protocolVersion": "2025-11-25",
				"capabilities": map[string]any{"tools": map[string]any{}}, "serverInfo": map[string]any{"name": "flood", "version": "1"}}})
		case "tools/list":
			// Sent while the answers are read (and dropped), so that
			// neither side waits on the other's pipe.
			go func() {
				for i := range floodQuestions {
					send(map[string]any{"jsonrpc": "2.0", "id": fmt.Sprint("q", i), "method": "elicitation/create",
						"params": map[string]any{"message": "Who?", "requestedSchema": map[string]any{"type": "object", "properties": map[string]any{}}}})
				}
				for i := range floodPings {
					send(map[string]any{"jsonrpc": "2.0", "id": fmt.Sprint("p", i), "method": "ping"})
				}
				send(map[string]any{"jsonrpc": "2.0", "id": m.ID, "result": map[string]any{"tools": []any{}}})
				mu.Lock()
				_ = w.Flush()
				mu.Unlock()
			}()
		default:
			send(map[string]any{"jsonrpc": "2.0", "id": m.ID, "error": map[string]any{"code": -32601, "message": "Method not found"}})
		}
		mu.Lock()
		_ = w.Flush()
		mu.Unlock()
	}
}

// TestStdioFlood: a server that sends hundreds of questions and
// thousands of pings at once costs the client a bounded number of
// goroutines: pings are answered as they are read, at most 16 questions
// are put to the handler at once, and the others are refused at once.
// (Without the bound, each request held a goroutine of its own.)
func TestStdioFlood(t *testing.T) {
	release := make(chan struct{})
	var asked, most, now atomic.Int32
	handlers := &client.Handlers{Elicit: func(ctx context.Context, _ *client.ElicitRequest) (*client.ElicitResult, error) {
		asked.Add(1)
		n := now.Add(1)
		defer now.Add(-1)
		for m := most.Load(); n > m && !most.CompareAndSwap(m, n); m = most.Load() {
		}
		select {
		case <-release:
		case <-ctx.Done():
		}
		return &client.ElicitResult{Action: "decline"}, nil
	}}
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), stdioEnv+"=flood")
	c, err := client.NewStdio(cmd, &client.Options{Handlers: handlers, MCPVersion: "2025-11-25"})
	require.NoError(t, err)
	before := runtime.NumGoroutine()
	_, err = c.ListTools(t.Context()) // answered after the flood: every request of it has been read
	require.NoError(t, err)
	assert.EqualValues(t, 16, asked.Load(), "16 questions put to the handler, the rest refused")
	assert.EqualValues(t, 16, most.Load())
	assert.Less(t, runtime.NumGoroutine()-before, 40, "goroutines bounded, not one per request")
	close(release)
	require.NoError(t, c.Close())
}
