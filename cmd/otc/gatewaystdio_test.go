package main

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"net/http/httptest"
	"regexp"
	"strings"
	"testing"
	"testing/fstest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/otcgo/otc"
	"github.com/otcgo/otc/client"
	"github.com/otcgo/otc/internal/testkit"
	"github.com/otcgo/otc/mcp"
	"github.com/otcgo/otc/prompt"
	"github.com/otcgo/otc/resource"
	"github.com/otcgo/otc/skill"
)

// TestGateway_Stdio: otc gateway --stdio is an MCP server a host starts
// as a command: it serves over standard input and output what it serves
// over HTTP (an upstream's tools, resources, prompts, folded as tools
// are, and skills), named as its file says, and says what it serves of
// each upstream on standard error.
// notesUpstream is an MCP server with a tool, a resource, a prompt whose
// name has a hyphen, and a skill.
func notesUpstream(t *testing.T) string {
	t.Helper()
	reg := otc.NewRegistry(nil)
	require.NoError(t, otc.Register(reg, otc.Tool{ID: "Notes.Count", Version: "1.0.0", Description: "Counts the notes."},
		func(context.Context, otc.NoOutput) (int, error) { return 3, nil }))
	_, err := resource.Register(reg, resource.Resource{URI: "notes://today", Name: "today"}, func(context.Context) (string, error) { return "tea", nil })
	require.NoError(t, err)
	type args struct {
		Topic string `json:"topic" jsonschema:"description=What about."`
	}
	_, err = prompt.Register(reg, prompt.Prompt[args]{Name: "summary-prompt", Description: "Summarize."}, func(_ context.Context, a args) (string, error) { return "Summarize " + a.Topic, nil })
	require.NoError(t, err)
	_, err = skill.Register(reg, fstest.MapFS{"note-taking/SKILL.md": {Data: []byte("---\nname: note-taking\ndescription: Take notes well\n---\nShort.\n")}}, nil)
	require.NoError(t, err)
	up := httptest.NewServer(mcp.NewHandler(reg, nil))
	t.Cleanup(up.Close)
	return up.URL
}

func TestGateway_Stdio(t *testing.T) {
	upURL := notesUpstream(t)
	config := writeConfig(t, "name: team-gateway\nversion: 2.1.0\nupstreams:\n  - name: notes\n    mcp: {url: \""+upURL+"\"}\n")
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	var errOut testkit.SyncBuffer
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan int, 1)
	go func() {
		done <- run(ctx, []string{"gateway", "--config", config, "--stdio"}, inR, outW, &errOut, func(string) string { return "" })
		outW.Close()
	}()
	t.Cleanup(func() {
		cancel()
		inW.Close()
		select {
		case <-done:
		case <-time.After(15 * time.Second):
			t.Error("otc gateway --stdio did not stop")
		}
	})
	lines := bufio.NewScanner(outR)
	id := 0
	ask := func(method string, params any) map[string]any {
		id++
		b, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": id, "method": method, "params": params})
		_, err := inW.Write(append(b, '\n'))
		require.NoError(t, err)
		for lines.Scan() {
			var m map[string]any
			require.NoError(t, json.Unmarshal(lines.Bytes(), &m))
			if m["id"] == float64(id) {
				res, ok := m["result"].(map[string]any)
				require.True(t, ok, "%s", lines.Bytes())
				return res
			}
		}
		t.Fatal("the gateway's output ended")
		return nil
	}
	init := ask("initialize", map[string]any{"protocolVersion": mcp.Version20251125, "capabilities": map[string]any{}, "clientInfo": map[string]any{"name": "host", "version": "1"}})
	assert.Equal(t, map[string]any{"name": "team-gateway", "version": "2.1.0"}, init["serverInfo"], "named as its file says")
	assert.Regexp(t, regexp.MustCompile(`upstream notes: up, 1 tools, 1 resources, 1 prompts, 1 skills`), errOut.String())

	tools := ask("tools/list", map[string]any{})["tools"].([]any)
	require.Len(t, tools, 1)
	assert.Equal(t, "notes_Notes_Count", tools[0].(map[string]any)["name"])
	prompts := ask("prompts/list", map[string]any{})["prompts"].([]any)
	require.Len(t, prompts, 1)
	assert.Equal(t, "notes_summary_prompt", prompts[0].(map[string]any)["name"], "folded as a tool's name")
	got := ask("prompts/get", map[string]any{"name": "notes_summary_prompt", "arguments": map[string]string{"topic": "tea"}})
	raw, _ := json.Marshal(got)
	assert.Contains(t, string(raw), "Summarize tea")
	skills := ask("skills/list", map[string]any{})["skills"].([]any)
	require.Len(t, skills, 1)
	assert.Equal(t, "skill://notes/note-taking/SKILL.md", skills[0].(map[string]any)["uri"])
	read := ask("resources/read", map[string]any{"uri": "notes://today"})
	assert.True(t, strings.Contains(read["contents"].([]any)[0].(map[string]any)["text"].(string), "tea"))
}

// TestGateway_ReadablesAsTools: with readables_as_tools, an agent whose
// format has tools only (OTC here) reads the upstreams' resources,
// renders their prompts and loads their skills through tools.
func TestGateway_ReadablesAsTools(t *testing.T) {
	upURL := notesUpstream(t)
	base := startGateway(t, "readables_as_tools: true\nupstreams:\n  - name: notes\n    mcp: {url: \""+upURL+"\"}\n", nil)
	c, err := client.New(base+"/otc", &client.Options{Format: client.FormatOTC})
	require.NoError(t, err)
	t.Cleanup(func() { _ = c.Close() })
	ctx := t.Context()
	call := func(tool string, in any) string {
		t.Helper()
		res, err := c.Call(ctx, tool, in, nil)
		require.NoError(t, err, tool)
		b, _ := json.Marshal(res)
		return string(b)
	}
	assert.Contains(t, call("Resources.List", nil), "notes://today")
	assert.Contains(t, call("Resources.Read", map[string]any{"uri": "notes://today"}), "tea")
	assert.Contains(t, call("Prompts.List", nil), "notes_summary_prompt")
	assert.Contains(t, call("Prompts.Get", map[string]any{"name": "notes_summary_prompt", "arguments": map[string]string{"topic": "tea"}}), "Summarize tea")
	assert.Contains(t, call("Skills.List", nil), "skill://notes/note-taking/SKILL.md")
	loaded := call("Skills.Load", map[string]any{"uri": "skill://notes/note-taking/SKILL.md"})
	assert.Contains(t, loaded, "Take notes well")
	assert.Contains(t, loaded, "Its files:")
}
