package interop

import (
	"bufio"
	"context"
	"os/exec"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/otcgo/otc"
	"github.com/otcgo/otc/client"
	"github.com/otcgo/otc/export"
)

// nodeServer starts a server script of testdata/frameworks and returns the
// URL it prints first, and each later line it prints, on lines.
func nodeServer(t *testing.T, script string) (string, <-chan string) {
	t.Helper()
	node, dir := frameworkScripts(t)
	ctx, cancel := context.WithCancel(context.Background())
	cmd := exec.CommandContext(ctx, node, script)
	cmd.Dir = dir
	out, err := cmd.StdoutPipe()
	require.NoError(t, err)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	require.NoError(t, cmd.Start())
	t.Cleanup(func() {
		cancel()
		_ = cmd.Wait()
	})
	lines := make(chan string, 16)
	go func() {
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			lines <- sc.Text()
		}
		close(lines)
	}()
	select {
	case url, ok := <-lines:
		require.True(t, ok, "%s printed no URL; stderr: %s", script, stderr.String())
		return url, lines
	case <-time.After(frameworkTimeout):
		t.Fatalf("%s did not start; stderr: %s", script, stderr.String())
	}
	return "", nil
}

// TestClientTypeScriptMCPServer: the client against the official MCP
// TypeScript SDK's server over Streamable HTTP, with its sessions: the
// catalog, a value, a tool error, progress, and a cancelled call the
// server sees cancelled (notifications/cancelled).
func TestClientTypeScriptMCPServer(t *testing.T) {
	url, lines := nodeServer(t, "server-mcp-ts.mjs")
	c, err := client.Dial(t.Context(), url, nil)
	require.NoError(t, err)
	t.Cleanup(func() { _ = c.Close() })
	assert.Equal(t, client.FormatMCP, c.Format(), "found at the URL")

	defs, err := c.ListTools(t.Context())
	require.NoError(t, err)
	_, err = export.New(defs, nil)
	require.NoError(t, err)
	require.Len(t, defs, 4) // add, fail, ask, slow

	sum, err := client.CallAs[struct {
		Sum float64 `json:"sum"`
	}](t.Context(), c, "add", map[string]any{"a": 2, "b": 3}, nil)
	require.NoError(t, err)
	assert.Equal(t, 5.0, sum.Sum)

	_, err = c.Call(t.Context(), "fail", nil, nil)
	var te *otc.ToolError
	require.ErrorAs(t, err, &te)
	assert.Equal(t, "the disk is full", te.Message)

	_, err = c.Call(t.Context(), "add", map[string]any{"a": "two"}, nil)
	require.Error(t, err, "invalid input is refused")

	var progressed atomic.Bool
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan error, 1)
	go func() {
		_, err := c.Call(ctx, "slow", nil, &client.CallOptions{Progress: func(p client.Progress) { progressed.Store(p.Message == "half way") }})
		done <- err
	}()
	require.Eventually(t, progressed.Load, frameworkTimeout, 10*time.Millisecond)
	cancel()
	assert.ErrorIs(t, <-done, context.Canceled)
	select {
	case line := <-lines:
		assert.Equal(t, "cancelled", line, "the server saw notifications/cancelled")
	case <-time.After(10 * time.Second):
		t.Fatal("the server did not see the call cancelled")
	}
	require.NoError(t, c.Close())
}

// TestClientJavaScriptA2AAgent: the client against an agent built with
// the official A2A JavaScript SDK: its skill as a tool taking text, a
// message answer and a task followed to its end.
func TestClientJavaScriptA2AAgent(t *testing.T) {
	url, _ := nodeServer(t, "server-a2a-js.mjs")
	c, err := client.Dial(t.Context(), url, nil)
	require.NoError(t, err)
	assert.Equal(t, client.FormatA2A, c.Format())
	defs, err := c.ListTools(t.Context())
	require.NoError(t, err)
	require.Len(t, defs, 1)
	assert.Equal(t, "echo", defs[0].Name)

	res, err := c.Call(t.Context(), "echo", map[string]any{"text": "hi"}, nil)
	require.NoError(t, err)
	assert.JSONEq(t, `"echo: hi"`, string(res.Value))

	res, err = c.Call(t.Context(), "echo", map[string]any{"text": "task two"}, nil)
	require.NoError(t, err)
	assert.JSONEq(t, `"done: task two"`, string(res.Value))
}

// TestClientTypeScriptMCPStdio: the same server over stdio, started by
// the client: its catalog, a value, a tool error, progress, and Close
// ending the process.
func TestClientTypeScriptMCPStdio(t *testing.T) {
	node, dir := frameworkScripts(t)
	cmd := exec.Command(node, "server-mcp-ts.mjs", "stdio")
	cmd.Dir = dir
	c, err := client.NewStdio(cmd, nil)
	require.NoError(t, err)
	t.Cleanup(func() { _ = c.Close() })
	defs, err := c.ListTools(t.Context())
	require.NoError(t, err)
	require.Len(t, defs, 4) // add, fail, ask, slow
	res, err := c.Call(t.Context(), "add", map[string]any{"a": 2, "b": 5}, nil)
	require.NoError(t, err)
	assert.JSONEq(t, `{"sum":7}`, string(res.Value))
	_, err = c.Call(t.Context(), "fail", nil, nil)
	var te *otc.ToolError
	require.ErrorAs(t, err, &te)

	var progressed atomic.Bool
	ctx, cancel := context.WithTimeout(t.Context(), 2*time.Second)
	defer cancel()
	_, err = c.Call(ctx, "slow", nil, &client.CallOptions{Progress: func(p client.Progress) { progressed.Store(p.Message == "half way") }})
	assert.ErrorIs(t, err, context.DeadlineExceeded)
	assert.True(t, progressed.Load())
	require.NoError(t, c.Close())
	assert.NotNil(t, cmd.ProcessState, "the process was waited for")
}

// TestClientOlderMCPVersions: the official TypeScript SDK's server spoken
// to at MCP 2025-03-26 and 2024-11-05, which many servers people run
// still answer with, over stdio and Streamable HTTP: the handshake takes
// the version, and the catalog and a call work (a 2024-11-05 server has
// no structured result: the value is the content's text).
func TestClientOlderMCPVersions(t *testing.T) {
	url, _ := nodeServer(t, "server-mcp-ts.mjs")
	node, dir := frameworkScripts(t)
	for _, v := range []string{"2025-03-26", "2024-11-05"} {
		cmd := exec.Command(node, "server-mcp-ts.mjs", "stdio")
		cmd.Dir = dir
		stdio, err := client.NewStdio(cmd, &client.Options{MCPVersion: v})
		require.NoError(t, err)
		overHTTP, err := client.New(url, &client.Options{Format: client.FormatMCP, MCPVersion: v})
		require.NoError(t, err)
		for name, c := range map[string]*client.Client{"stdio": stdio, "http": overHTTP} {
			defs, err := c.ListTools(t.Context())
			require.NoError(t, err, "%s %s", v, name)
			require.Len(t, defs, 4, "%s %s", v, name)
			res, err := c.Call(t.Context(), "add", map[string]any{"a": 2, "b": 5}, nil)
			require.NoError(t, err, "%s %s", v, name)
			text, _ := client.ModelText(res, nil)
			assert.Contains(t, text, "7", "%s %s", v, name)
			_ = c.Close()
		}
	}
}
