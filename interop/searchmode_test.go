package interop

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/otcgo/otc/internal/testkit"
)

// startSearchGateway runs otc gateway, built from cmd/otc, in front of
// four public MCP servers over stdio (server-everything, the filesystem,
// memory and GitHub servers: more than fifty tools), and returns its base
// URL once every upstream is up, and the folder the filesystem server
// serves.
func startSearchGateway(t *testing.T) (base, files string) {
	t.Helper()
	node, modules := frameworksNode(t)
	dir := t.TempDir()
	bin := filepath.Join(dir, "otc")
	ctx, cancel := context.WithTimeout(t.Context(), buildTimeout)
	defer cancel()
	build := exec.CommandContext(ctx, "go", "build", "-o", bin, "github.com/otcgo/otc/cmd/otc")
	out, err := build.CombinedOutput()
	require.NoError(t, err, "building otc: %s", out)

	files = filepath.Join(dir, "files")
	require.NoError(t, os.MkdirAll(files, 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(files, "hello.txt"), []byte("hello"), 0o644))
	pkg := func(name string) string {
		return filepath.Join(modules, "@modelcontextprotocol", name, "dist", "index.js")
	}
	config := fmt.Sprintf(`upstreams:
  - name: everything
    mcp: {command: [%[1]q, %[2]q, stdio]}
  - name: filesystem
    mcp: {command: [%[1]q, %[3]q, %[4]q]}
  - name: memory
    mcp:
      command: [%[1]q, %[5]q]
      env: {MEMORY_FILE_PATH: %[6]q}
  - name: github
    mcp: {command: [%[1]q, %[7]q]}
`, node, pkg("server-everything"), pkg("server-filesystem"), files, pkg("server-memory"), filepath.Join(dir, "memory.jsonl"), pkg("server-github"))
	cfg := filepath.Join(dir, "gateway.yaml")
	require.NoError(t, os.WriteFile(cfg, []byte(config), 0o600))

	var stdout, stderr testkit.SyncBuffer
	cmd := exec.Command(bin, "gateway", "--config", cfg, "--addr", "127.0.0.1:0")
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	require.NoError(t, cmd.Start())
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	t.Cleanup(func() {
		_ = cmd.Process.Signal(os.Interrupt)
		select {
		case <-exited:
		case <-time.After(shutdownTimeout):
			_ = cmd.Process.Kill()
			t.Error("otc gateway did not stop")
		}
	})
	serving := regexp.MustCompile(`serving \d+ upstreams on (http://127\.0\.0\.1:\d+)`)
	require.Eventually(t, func() bool {
		m := serving.FindStringSubmatch(stdout.String())
		if m != nil {
			base = m[1]
		}
		return m != nil
	}, startTimeout, 20*time.Millisecond, "stderr: %s", &stderr)
	var health struct {
		Status    string `json:"status"`
		Upstreams []struct {
			Name, State string
			Tools       int
		} `json:"upstreams"`
	}
	require.Eventually(t, func() bool {
		resp, err := http.Get(base + "/federation/health")
		if err != nil {
			return false
		}
		defer resp.Body.Close()
		health.Status = ""
		return json.NewDecoder(resp.Body).Decode(&health) == nil && health.Status == "ok"
	}, 2*startTimeout, 100*time.Millisecond, "stderr: %s", &stderr)
	tools := 0
	for _, u := range health.Upstreams {
		require.Equal(t, "up", u.State, u.Name)
		tools += u.Tools
	}
	require.Greater(t, tools, 50, "past the gateway's default threshold: %+v", health.Upstreams)
	return base, files
}

// foundTools reads the tools a search tool's result names, from its
// structured content, and checks that its text says the same.
func foundTools(t *testing.T, res *sdk.CallToolResult) []string {
	t.Helper()
	require.False(t, res.IsError, "%+v", res.Content)
	b, err := json.Marshal(res.StructuredContent)
	require.NoError(t, err)
	var got struct {
		Tools []struct {
			Name        string          `json:"name"`
			InputSchema json.RawMessage `json:"inputSchema"`
		} `json:"tools"`
	}
	require.NoError(t, json.Unmarshal(b, &got))
	require.Len(t, res.Content, 1)
	text, ok := res.Content[0].(*sdk.TextContent)
	require.True(t, ok)
	assert.JSONEq(t, string(b), text.Text)
	names := make([]string, len(got.Tools))
	for i, tool := range got.Tools {
		names[i] = tool.Name
		assert.NotEmpty(t, tool.InputSchema, "a full definition: %s", tool.Name)
	}
	return names
}

// resultText joins the text blocks of a result.
func resultText(res *sdk.CallToolResult) string {
	var parts []string
	for _, c := range res.Content {
		if tc, ok := c.(*sdk.TextContent); ok {
			parts = append(parts, tc.Text)
		}
	}
	return strings.Join(parts, "\n")
}

// TestSearchModeThroughGateway: otc gateway federating four public MCP
// servers past its default threshold shows a model's client the search
// and call tools only; the official Go SDK's client and the TypeScript
// SDK's client find a tool by describing it, call it through the call
// tool and by its own name, and a tool of another server the same way.
func TestSearchModeThroughGateway(t *testing.T) {
	base, files := startSearchGateway(t)

	t.Run("go-sdk", func(t *testing.T) {
		cs, _, _ := connect(t, connection{name: "gateway", transport: func() (sdk.Transport, *testkit.SyncBuffer) {
			return &sdk.StreamableClientTransport{Endpoint: base + "/mcp", MaxRetries: -1}, &testkit.SyncBuffer{}
		}})
		ctx, cancel := context.WithTimeout(t.Context(), callTimeout)
		defer cancel()
		listed, err := cs.ListTools(ctx, nil)
		require.NoError(t, err)
		var names []string
		for _, tool := range listed.Tools {
			names = append(names, tool.Name)
		}
		assert.Equal(t, []string{"search_tools", "call_tool"}, names)

		res, err := cs.CallTool(ctx, &sdk.CallToolParams{Name: "search_tools", Arguments: map[string]any{"query": "list the files in a folder"}})
		require.NoError(t, err)
		found := foundTools(t, res)
		assert.Contains(t, found, "filesystem_list_directory", "among the first five: %v", found)
		res, err = cs.CallTool(ctx, &sdk.CallToolParams{Name: "call_tool", Arguments: map[string]any{
			"name": "filesystem_list_directory", "arguments": map[string]any{"path": files}}})
		require.NoError(t, err)
		require.False(t, res.IsError, resultText(res))
		assert.Contains(t, resultText(res), "hello.txt")

		// Another server's tools, by their own names, unlisted.
		res, err = cs.CallTool(ctx, &sdk.CallToolParams{Name: "memory_create_entities", Arguments: map[string]any{
			"entities": []any{map[string]any{"name": "otc", "entityType": "library", "observations": []string{"serves tools"}}}}})
		require.NoError(t, err)
		require.False(t, res.IsError, resultText(res))
		res, err = cs.CallTool(ctx, &sdk.CallToolParams{Name: "search_tools", Arguments: map[string]any{"query": "read the whole knowledge graph", "limit": 3}})
		require.NoError(t, err)
		found = foundTools(t, res)
		require.NotEmpty(t, found)
		assert.Equal(t, "memory_read_graph", found[0], "%v", found)
		res, err = cs.CallTool(ctx, &sdk.CallToolParams{Name: "call_tool", Arguments: map[string]any{"name": "memory_read_graph"}})
		require.NoError(t, err)
		assert.Contains(t, resultText(res), "serves tools")

		res, err = cs.CallTool(ctx, &sdk.CallToolParams{Name: "search_tools", Arguments: map[string]any{"query": "open an issue in a GitHub repository"}})
		require.NoError(t, err)
		assert.Contains(t, foundTools(t, res), "github_create_issue")
	})

	t.Run("typescript-sdk", func(t *testing.T) {
		node, dir := frameworkScripts(t)
		ctx, cancel := context.WithTimeout(t.Context(), frameworkTimeout)
		defer cancel()
		cmd := exec.CommandContext(ctx, node, "client-mcp-ts-search.mjs", base+"/mcp", "echo a message back", `{"message":"hi"}`)
		cmd.Dir = dir
		var stdout, stderr bytes.Buffer
		cmd.Stdout, cmd.Stderr = &stdout, &stderr
		require.NoError(t, cmd.Run(), "stderr: %s", stderr.String())
		var got struct {
			Listed  []string        `json:"listed"`
			Found   []string        `json:"found"`
			Schema  json.RawMessage `json:"schema"`
			Through struct {
				IsError bool   `json:"isError"`
				Text    string `json:"text"`
			} `json:"through"`
			Direct struct {
				IsError bool   `json:"isError"`
				Text    string `json:"text"`
			} `json:"direct"`
		}
		require.NoError(t, json.Unmarshal(stdout.Bytes(), &got), "%s", stdout.String())
		assert.Equal(t, []string{"search_tools", "call_tool"}, got.Listed)
		require.NotEmpty(t, got.Found)
		assert.Equal(t, "everything_echo", got.Found[0], "%v", got.Found)
		assert.Contains(t, string(got.Schema), `"message"`)
		assert.False(t, got.Through.IsError, got.Through.Text)
		assert.Contains(t, got.Through.Text, "hi")
		assert.False(t, got.Direct.IsError, got.Direct.Text)
		assert.Equal(t, got.Through.Text, got.Direct.Text)
		assert.False(t, slices.Contains(got.Listed, "everything_echo"), "found, not listed")
	})
}
