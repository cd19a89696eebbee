package federation_test

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"testing/fstest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/otcgo/otc"
	"github.com/otcgo/otc/client"
	"github.com/otcgo/otc/federation"
	"github.com/otcgo/otc/mcp"
	"github.com/otcgo/otc/prompt"
	"github.com/otcgo/otc/resource"
	"github.com/otcgo/otc/skill"
)

// skillUpstream is an MCP server with two skills, one nested in the
// other; tamper, when set, rewrites every resources/read answer.
func skillUpstream(t *testing.T, tamper func([]byte) []byte) string {
	t.Helper()
	reg := otc.NewRegistry(nil)
	_, err := skill.Register(reg, fstest.MapFS{
		"refunds/SKILL.md":                {Data: []byte("---\nname: refunds\ndescription: Process refunds\n---\nSee examples/email.md.\n")},
		"refunds/examples/email.md":       {Data: []byte("Dear customer,\n")},
		"refunds/partial/SKILL.md":        {Data: []byte("---\nname: partial\ndescription: Partial refunds\n---\nHalf.\n")},
		"git-workflow/SKILL.md":           {Data: []byte("---\nname: git-workflow\ndescription: Branch and commit\n---\nShort branches.\n")},
		"git-workflow/references/tips.md": {Data: []byte("Rebase.\n")},
	}, nil)
	require.NoError(t, err)
	h := mcp.NewHandler(reg, nil)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		r.Body = io.NopCloser(bytes.NewReader(body))
		if tamper == nil || !bytes.Contains(body, []byte(`"resources/read"`)) || !bytes.Contains(body, []byte("git-workflow")) {
			h.ServeHTTP(w, r)
			return
		}
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, r)
		w.Header().Set("Content-Type", rec.Header().Get("Content-Type"))
		w.WriteHeader(rec.Code)
		_, _ = w.Write(tamper(rec.Body.Bytes()))
	}))
	t.Cleanup(srv.Close)
	return srv.URL
}

// TestFederation_CarriesSkills: a gateway serves its upstream's skills
// under the upstream's name, each file read and verified once; a client
// of the gateway verifies them in turn. A skill whose upstream content
// is not what its entry says is left out, and named in the health.
func TestFederation_CarriesSkills(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithTimeout(t.Context(), 20*time.Second)
	defer cancel()
	reg := otc.NewRegistry(nil)
	fed, err := federation.Mount(ctx, reg, []federation.Upstream{
		{Name: "docs", URL: skillUpstream(t, nil), Format: client.FormatMCP},
		{Name: "bad", URL: skillUpstream(t, func(b []byte) []byte { return bytes.Replace(b, []byte("Rebase."), []byte("Reboot."), 1) }), Format: client.FormatMCP},
	}, nil)
	require.NoError(t, err)
	t.Cleanup(func() { _ = fed.Close() })
	gw := httptest.NewServer(mcp.NewHandler(reg, nil))
	t.Cleanup(gw.Close)

	c, err := client.New(gw.URL, &client.Options{Format: client.FormatMCP})
	require.NoError(t, err)
	t.Cleanup(func() { _ = c.Close() })
	list, err := c.MCP().ListSkills(ctx)
	require.NoError(t, err)
	var uris []string
	for i := range list {
		uris = append(uris, list[i].URI)
		for _, f := range list[i].Files {
			_, err := c.MCP().ReadSkillFile(ctx, &list[i], f.URI)
			require.NoError(t, err, f.URI)
		}
	}
	assert.Equal(t, []string{
		"skill://bad/refunds/SKILL.md",
		"skill://bad/refunds/partial/SKILL.md",
		"skill://docs/git-workflow/SKILL.md",
		"skill://docs/refunds/SKILL.md",
		"skill://docs/refunds/partial/SKILL.md",
	}, uris, "bad's git-workflow failed verification")
	resources, err := c.MCP().ListResources(ctx)
	require.NoError(t, err)
	var res []string
	for _, r := range resources {
		res = append(res, r.URI)
	}
	assert.Contains(t, res, "skill://docs/refunds/SKILL.md")
	assert.NotContains(t, res, "skill://refunds/SKILL.md", "a file copied is not carried as the upstream's resource too")
	assert.Contains(t, res, "skill://git-workflow/SKILL.md", "bad's skill, left out, is its resources still")
	var bad federation.Health
	for _, h := range fed.Health() {
		if h.Name == "bad" {
			bad = h
		}
	}
	assert.Contains(t, strings.Join(bad.Skipped, "\n"), "skill skill://git-workflow/SKILL.md")
	assert.Contains(t, strings.Join(bad.Skipped, "\n"), "its digest is")
}

// TestFederation_FiltersReadables: include, exclude and rename apply to
// an upstream's resources (by URI) and prompts (by name) through their
// "resource:" and "prompt:" patterns, and leave its tools alone.
func TestFederation_FiltersReadables(t *testing.T) {
	t.Parallel()
	upReg := otc.NewRegistry(nil)
	require.NoError(t, otc.Register(upReg, otc.Tool{ID: "Notes.Count", Version: "1.0.0", Description: "Counts."},
		func(context.Context, otc.NoOutput) (int, error) { return 1, nil }))
	for _, uri := range []string{"notes://public/a", "notes://private/b"} {
		_, err := resource.Register(upReg, resource.Resource{URI: uri, Name: uri}, func(context.Context) (string, error) { return "x", nil })
		require.NoError(t, err)
	}
	for _, name := range []string{"summary-prompt", "debug-dump"} {
		_, err := prompt.Register(upReg, prompt.Prompt[struct{}]{Name: name}, func(context.Context, struct{}) (string, error) { return "p", nil })
		require.NoError(t, err)
	}
	up := httptest.NewServer(mcp.NewHandler(upReg, nil))
	t.Cleanup(up.Close)
	reg := otc.NewRegistry(nil)
	ctx, cancel := context.WithTimeout(t.Context(), 20*time.Second)
	defer cancel()
	fed, err := federation.Mount(ctx, reg, []federation.Upstream{{Name: "notes", URL: up.URL, Format: client.FormatMCP,
		Include: []string{"resource:notes://public/*"}, Exclude: []string{"prompt:debug-*"},
		Rename: map[string]string{"prompt:summary-prompt": "summary"}}}, nil)
	require.NoError(t, err)
	t.Cleanup(func() { _ = fed.Close() })
	gw := httptest.NewServer(mcp.NewHandler(reg, nil))
	t.Cleanup(gw.Close)
	c, err := client.New(gw.URL, &client.Options{Format: client.FormatMCP})
	require.NoError(t, err)
	t.Cleanup(func() { _ = c.Close() })
	resources, err := c.MCP().ListResources(ctx)
	require.NoError(t, err)
	require.Len(t, resources, 1)
	assert.Equal(t, "notes://public/a", resources[0].URI)
	prompts, err := c.MCP().ListPrompts(ctx)
	require.NoError(t, err)
	require.Len(t, prompts, 1)
	assert.Equal(t, "notes_summary", prompts[0].Name)
	tools, err := c.ListTools(ctx)
	require.NoError(t, err)
	assert.Len(t, tools, 1, "the tools are not filtered by the readables' patterns")
}

// TestFederation_SkillChangedUpstream: a skill whose files change
// upstream is read again at the next refresh, and the gateway serves the
// new content, verified.
func TestFederation_SkillChangedUpstream(t *testing.T) {
	t.Parallel()
	upReg := otc.NewRegistry(nil)
	files := func(body string) fstest.MapFS {
		return fstest.MapFS{"notes/SKILL.md": {Data: []byte("---\nname: notes\ndescription: Notes\n---\n" + body + "\n")}}
	}
	hs, err := skill.Register(upReg, files("first"), nil)
	require.NoError(t, err)
	up := httptest.NewServer(mcp.NewHandler(upReg, nil))
	t.Cleanup(up.Close)
	reg := otc.NewRegistry(nil)
	ctx, cancel := context.WithTimeout(t.Context(), 20*time.Second)
	defer cancel()
	fed, err := federation.Mount(ctx, reg, []federation.Upstream{{Name: "up", URL: up.URL, Format: client.FormatMCP}}, nil)
	require.NoError(t, err)
	t.Cleanup(func() { _ = fed.Close() })
	gw := httptest.NewServer(mcp.NewHandler(reg, nil))
	t.Cleanup(gw.Close)
	read := func() string {
		c, err := client.New(gw.URL, &client.Options{Format: client.FormatMCP})
		require.NoError(t, err)
		defer c.Close()
		list, err := c.MCP().ListSkills(ctx)
		require.NoError(t, err)
		require.Len(t, list, 1)
		b, err := c.MCP().ReadSkillFile(ctx, &list[0], list[0].URI)
		require.NoError(t, err)
		return string(b)
	}
	assert.Contains(t, read(), "first")
	hs[0].Remove()
	_, err = skill.Register(upReg, files("second"), nil)
	require.NoError(t, err)
	require.NoError(t, fed.Refresh(ctx, "up"))
	assert.Contains(t, read(), "second")
}
