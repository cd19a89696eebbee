package skill_test

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/otcgo/otc"
	"github.com/otcgo/otc/client"
	"github.com/otcgo/otc/mcp"
	"github.com/otcgo/otc/resource"
	"github.com/otcgo/otc/skill"
)

// refunds is a skill with a file, a folder, a nested folder and a
// binary file.
func refunds() fstest.MapFS {
	return fstest.MapFS{
		"refunds/SKILL.md":                   {Data: []byte("---\nname: refunds\ndescription: Process customer refunds per policy\nlicense: Apache-2.0\nmetadata:\n  version: \"2\"\n---\n\n# Refunds\n\nSee examples/email.md.\n")},
		"refunds/examples/email.md":          {Data: []byte("Dear customer,\n")},
		"refunds/examples/regional/eu.md":    {Data: []byte("Dear EU customer,\n")},
		"refunds/scripts/check.bin":          {Data: []byte{0xff, 0x00, 0xfe}},
		"git-workflow/SKILL.md":              {Data: []byte("---\nname: git-workflow\ndescription: Branch and commit as the team does\n---\nUse short branches.\n")},
		"not-a-skill/notes.txt":              {Data: []byte("no SKILL.md here")},
		"git-workflow/references/GUIDE.md":   {Data: []byte("# Guide\n")},
		"git-workflow/references/extra.json": {Data: []byte(`{"a":1}`)},
	}
}

// rpc posts one JSON-RPC request of 2026-07-28 to url and returns its
// result, or fails with its error's code and message.
func rpc(t *testing.T, url, method string, params map[string]any, hdr map[string]string) (map[string]any, *struct {
	Code    int
	Message string
}) {
	t.Helper()
	if params == nil {
		params = map[string]any{}
	}
	params["_meta"] = map[string]any{"io.modelcontextprotocol/protocolVersion": mcp.Version20260728, "io.modelcontextprotocol/clientCapabilities": map[string]any{}}
	body, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": 1, "method": method, "params": params})
	req, err := http.NewRequest(http.MethodPost, url, bytes.NewReader(body))
	require.NoError(t, err)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("Mcp-Protocol-Version", mcp.Version20260728)
	req.Header.Set("Mcp-Method", method)
	for k, v := range hdr {
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	var out struct {
		Result map[string]any
		Error  *struct {
			Code    int
			Message string
		}
	}
	require.NoError(t, json.Unmarshal(raw, &out), "%s", raw)
	return out.Result, out.Error
}

func serve(t *testing.T, reg *otc.Registry, opts *mcp.Options) string {
	t.Helper()
	srv := httptest.NewServer(mcp.NewHandler(reg, opts))
	t.Cleanup(srv.Close)
	return srv.URL
}

// TestServedSkills: skills/list gives each skill's front matter as
// written and the manifest of every file, whose digests and sizes are
// those of what resources/read answers; skills/get one; directory reads
// list each folder's children; the capability is declared.
func TestServedSkills(t *testing.T) {
	reg := otc.NewRegistry(nil)
	handles, err := skill.Register(reg, refunds(), &skill.Options{Prefix: "acme/billing"})
	require.NoError(t, err)
	require.Len(t, handles, 2)
	url := serve(t, reg, nil)

	disc, e := rpc(t, url, "server/discover", nil, nil)
	require.Nil(t, e)
	caps := disc["capabilities"].(map[string]any)
	assert.Equal(t, map[string]any{"directoryRead": true}, caps["extensions"].(map[string]any)[mcp.ExtensionSkills])

	// Before 2026-07-28 too, in initialize's capabilities.
	resp, err := http.Post(url, "application/json", strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`))
	require.NoError(t, err)
	var init struct {
		Result struct {
			Capabilities map[string]map[string]any
		}
	}
	require.NoError(t, json.NewDecoder(resp.Body).Decode(&init))
	resp.Body.Close()
	assert.Equal(t, map[string]any{"directoryRead": true}, init.Result.Capabilities["extensions"][mcp.ExtensionSkills])
	assert.Contains(t, init.Result.Capabilities, "resources", "the extension needs the resources capability")

	list, e := rpc(t, url, "skills/list", nil, nil)
	require.Nil(t, e)
	skills := list["skills"].([]any)
	require.Len(t, skills, 2)
	entry := skills[1].(map[string]any)
	assert.Equal(t, "skill://acme/billing/refunds/SKILL.md", entry["uri"])
	assert.Equal(t, map[string]any{"name": "refunds", "description": "Process customer refunds per policy", "license": "Apache-2.0", "metadata": map[string]any{"version": "2"}}, entry["frontmatter"], "verbatim")
	files := entry["resources"].([]any)
	var uris []string
	for _, f := range files {
		f := f.(map[string]any)
		uri := f["uri"].(string)
		uris = append(uris, uri)
		// What a read answers is what the manifest says.
		read, e := rpc(t, url, "resources/read", map[string]any{"uri": uri}, nil)
		require.Nil(t, e, uri)
		c := read["contents"].([]any)[0].(map[string]any)
		var data []byte
		if blob, ok := c["blob"].(string); ok {
			data, err = base64.StdEncoding.DecodeString(blob)
			require.NoError(t, err)
		} else {
			data = []byte(c["text"].(string))
		}
		sum := sha256.Sum256(data)
		assert.Equal(t, "sha256:"+hex.EncodeToString(sum[:]), f["digest"], uri)
		assert.Equal(t, float64(len(data)), f["size"], uri)
	}
	assert.Equal(t, []string{
		"skill://acme/billing/refunds/SKILL.md",
		"skill://acme/billing/refunds/examples/email.md",
		"skill://acme/billing/refunds/examples/regional/eu.md",
		"skill://acme/billing/refunds/scripts/check.bin",
	}, uris)
	assert.Contains(t, list, "ttlMs")

	got, e := rpc(t, url, "skills/get", map[string]any{"uri": "skill://acme/billing/refunds/SKILL.md"}, nil)
	require.Nil(t, e)
	assert.Equal(t, entry, got["skill"])
	assert.NotContains(t, got, "nextCursor")
	_, e = rpc(t, url, "skills/get", map[string]any{"uri": "skill://acme/billing/chargebacks/SKILL.md"}, nil)
	require.NotNil(t, e)
	assert.Equal(t, -32602, e.Code)
	assert.Contains(t, e.Message, "no skill is served at skill://acme/billing/chargebacks/SKILL.md")

	dir := func(uri string) []string {
		res, e := rpc(t, url, "resources/directory/read", map[string]any{"uri": uri}, nil)
		require.Nil(t, e, uri)
		var out []string
		for _, r := range res["resources"].([]any) {
			r := r.(map[string]any)
			out = append(out, fmt.Sprint(r["uri"], " ", r["mimeType"]))
		}
		return out
	}
	assert.Equal(t, []string{
		"skill://acme/billing/refunds/SKILL.md text/markdown",
		"skill://acme/billing/refunds/examples inode/directory",
		"skill://acme/billing/refunds/scripts inode/directory",
	}, dir("skill://acme/billing/refunds"))
	assert.Equal(t, []string{
		"skill://acme/billing/refunds/examples/email.md text/markdown",
		"skill://acme/billing/refunds/examples/regional inode/directory",
	}, dir("skill://acme/billing/refunds/examples"))
	for _, notDir := range []string{"skill://acme/billing/refunds/SKILL.md", "skill://acme/billing", "skill://nothing", "skill://acme/billing/refunds/"} {
		_, e = rpc(t, url, "resources/directory/read", map[string]any{"uri": notDir}, nil)
		require.NotNil(t, e, notDir)
		assert.Equal(t, -32602, e.Code, notDir)
	}

	// The SKILL.md is a resource named and described by its front matter.
	res, e := rpc(t, url, "resources/list", nil, nil)
	require.Nil(t, e)
	var md map[string]any
	for _, r := range res["resources"].([]any) {
		if r.(map[string]any)["uri"] == "skill://acme/billing/refunds/SKILL.md" {
			md = r.(map[string]any)
		}
	}
	require.NotNil(t, md)
	assert.Equal(t, "refunds", md["name"])
	assert.Equal(t, "Process customer refunds per policy", md["description"])
	assert.Equal(t, "text/markdown", md["mimeType"])

	// Removed, the skill and its files are gone.
	require.True(t, handles[1].Remove())
	_, e = rpc(t, url, "resources/read", map[string]any{"uri": "skill://acme/billing/refunds/examples/email.md"}, nil)
	require.NotNil(t, e)
	_, e = rpc(t, url, "skills/get", map[string]any{"uri": "skill://acme/billing/refunds/SKILL.md"}, nil)
	require.NotNil(t, e)
	assert.False(t, handles[1].Remove())
}

// TestNoSkillsNoExtension: a registry without skills does not declare
// the extension.
func TestNoSkillsNoExtension(t *testing.T) {
	url := serve(t, otc.NewRegistry(nil), nil)
	disc, e := rpc(t, url, "server/discover", nil, nil)
	require.Nil(t, e)
	assert.NotContains(t, disc["capabilities"].(map[string]any)["extensions"], mcp.ExtensionSkills)
}

// TestSkillPolicy: a caller the skills' policy does not admit sees
// nothing of them: not listed, not got, not read, no directory.
func TestSkillPolicy(t *testing.T) {
	reg := otc.NewRegistry(nil)
	_, err := skill.Register(reg, refunds(), &skill.Options{Policy: &otc.Policy{RequiredScopes: []string{"skills:read"}}})
	require.NoError(t, err)
	auth := otc.AuthenticatorFunc(func(r *http.Request) (*otc.Identity, error) {
		return &otc.Identity{Method: "oauth", Name: "u", Claims: map[string]any{"sub": "u", "scope": r.Header.Get("X-Scopes")}}, nil
	})
	url := serve(t, reg, &mcp.Options{Authenticator: auth})
	with := map[string]string{"X-Scopes": "skills:read"}
	list, e := rpc(t, url, "skills/list", nil, with)
	require.Nil(t, e)
	assert.Len(t, list["skills"], 2)
	list, e = rpc(t, url, "skills/list", nil, nil)
	require.Nil(t, e)
	assert.Empty(t, list["skills"])
	_, e = rpc(t, url, "skills/get", map[string]any{"uri": "skill://refunds/SKILL.md"}, nil)
	require.NotNil(t, e)
	_, e = rpc(t, url, "resources/read", map[string]any{"uri": "skill://refunds/SKILL.md"}, nil)
	require.NotNil(t, e)
	_, e = rpc(t, url, "resources/directory/read", map[string]any{"uri": "skill://refunds"}, nil)
	require.NotNil(t, e)
	_, e = rpc(t, url, "resources/directory/read", map[string]any{"uri": "skill://refunds"}, with)
	require.Nil(t, e)
}

// TestRegisterRefuses: what a skill must be is checked at registration,
// each error naming the file (and the line), and nothing is registered
// when one skill of the folder is refused.
func TestRegisterRefuses(t *testing.T) {
	ok := "---\nname: good\ndescription: Good.\n---\n"
	for name, tc := range map[string]struct {
		fs   fstest.MapFS
		want string
	}{
		"no_front_matter":  {fstest.MapFS{"a/SKILL.md": {Data: []byte("# A\n")}}, "a/SKILL.md: it does not begin with YAML front matter"},
		"unclosed":         {fstest.MapFS{"a/SKILL.md": {Data: []byte("---\nname: a\n")}}, "no closing --- line"},
		"bad_yaml_line":    {fstest.MapFS{"a/SKILL.md": {Data: []byte("---\nname: a\ndescription: a: b\n---\n")}}, "a/SKILL.md: its front matter is not YAML: yaml: line 3: mapping values"},
		"no_name":          {fstest.MapFS{"a/SKILL.md": {Data: []byte("---\ndescription: d\n---\n")}}, "has no name"},
		"bad_name":         {fstest.MapFS{"Bad--Name/SKILL.md": {Data: []byte("---\nname: Bad--Name\ndescription: d\n---\n")}}, "breaks the naming rules"},
		"name_not_folder":  {fstest.MapFS{"a/SKILL.md": {Data: []byte("---\nname: b\ndescription: d\n---\n")}}, `the name "b" is not its folder's (a)`},
		"no_description":   {fstest.MapFS{"a/SKILL.md": {Data: []byte("---\nname: a\n---\n")}}, "has no description"},
		"no_skill":         {fstest.MapFS{"a/notes.md": {Data: []byte("x")}}, "no folder holds a SKILL.md"},
		"one_bad_of_two":   {fstest.MapFS{"good/SKILL.md": {Data: []byte(ok)}, "z/SKILL.md": {Data: []byte("---\nname: y\ndescription: d\n---\n")}}, "z/SKILL.md"},
		"too_many_files":   {manyFiles(skill.MaxFiles + 1), "more than 512 files"},
		"too_large":        {fstest.MapFS{"good/SKILL.md": {Data: []byte(ok)}, "good/big.bin": {Data: make([]byte, skill.MaxTotalBytes)}}, "more than 16777216 bytes"},
		"description_long": {fstest.MapFS{"a/SKILL.md": {Data: []byte("---\nname: a\ndescription: " + strings.Repeat("d", 1025) + "\n---\n")}}, "more than the 1024 allowed"},
	} {
		t.Run(name, func(t *testing.T) {
			reg := otc.NewRegistry(nil)
			_, err := skill.Register(reg, tc.fs, nil)
			require.Error(t, err)
			assert.Contains(t, err.Error(), tc.want)
			url := serve(t, reg, nil)
			list, e := rpc(t, url, "skills/list", nil, nil)
			require.Nil(t, e)
			assert.Empty(t, list["skills"], "nothing registered")
		})
	}
	t.Run("taken", func(t *testing.T) {
		reg := otc.NewRegistry(nil)
		_, err := skill.Register(reg, refunds(), nil)
		require.NoError(t, err)
		_, err = skill.Register(reg, refunds(), nil)
		require.Error(t, err)
		assert.Contains(t, err.Error(), "registered already")
	})
}

// manyFiles is a skill of n files.
func manyFiles(n int) fstest.MapFS {
	fs := fstest.MapFS{"good/SKILL.md": {Data: []byte("---\nname: good\ndescription: Good.\n---\n")}}
	for i := range n - 1 {
		fs[fmt.Sprintf("good/f%d.txt", i)] = &fstest.MapFile{Data: []byte("x")}
	}
	return fs
}

// TestDynamicSkill: a skill whose files a function makes is listed with
// "dynamic" files, its files read through the function; a path that
// climbs out reads nothing; the front matter is checked at registration.
func TestDynamicSkill(t *testing.T) {
	reg := otc.NewRegistry(nil)
	var asked []string
	_, err := skill.RegisterDynamic(reg, skill.Dynamic{
		Path:        "reports/daily",
		Frontmatter: map[string]any{"name": "daily", "description": "Today's report"},
		Read: func(_ context.Context, file string) ([]byte, error) {
			asked = append(asked, file)
			switch file {
			case "SKILL.md":
				return []byte("---\nname: daily\ndescription: Today's report\n---\nRead data/today.csv.\n"), nil
			case "data/today.csv":
				return []byte("sales,3\n"), nil
			}
			return nil, resource.ErrNotFound
		},
	})
	require.NoError(t, err)
	url := serve(t, reg, nil)
	got, e := rpc(t, url, "skills/get", map[string]any{"uri": "skill://reports/daily/SKILL.md"}, nil)
	require.Nil(t, e)
	assert.Equal(t, "dynamic", got["skill"].(map[string]any)["resources"])
	read, e := rpc(t, url, "resources/read", map[string]any{"uri": "skill://reports/daily/data/today.csv"}, nil)
	require.Nil(t, e)
	assert.Equal(t, "sales,3\n", read["contents"].([]any)[0].(map[string]any)["text"])
	for _, bad := range []string{"skill://reports/daily/../../etc/passwd", "skill://reports/daily/nothing"} {
		_, e = rpc(t, url, "resources/read", map[string]any{"uri": bad}, nil)
		require.NotNil(t, e, bad)
	}
	assert.Equal(t, []string{"data/today.csv", "nothing"}, asked, "a path that climbs out never reaches the function")

	c, err := client.New(url, &client.Options{Format: client.FormatMCP})
	require.NoError(t, err)
	t.Cleanup(func() { _ = c.Close() })
	list, err := c.MCP().ListSkills(t.Context())
	require.NoError(t, err)
	require.Len(t, list, 1)
	assert.True(t, list[0].Dynamic)
	md, err := c.MCP().ReadSkillFile(t.Context(), &list[0], list[0].URI)
	require.NoError(t, err, "its front matter matches the entry's")
	assert.Contains(t, string(md), "today.csv")
	_, err = c.MCP().ReadSkillFile(t.Context(), &list[0], "skill://other/SKILL.md")
	assert.ErrorIs(t, err, client.ErrSkillUnverified)

	for name, d := range map[string]skill.Dynamic{
		"name_not_path": {Path: "reports/daily", Frontmatter: map[string]any{"name": "weekly", "description": "d"}, Read: func(context.Context, string) ([]byte, error) { return nil, nil }},
		"no_read":       {Path: "x", Frontmatter: map[string]any{"name": "x", "description": "d"}},
		"no_desc":       {Path: "x", Frontmatter: map[string]any{"name": "x"}, Read: func(context.Context, string) ([]byte, error) { return nil, nil }},
	} {
		_, err := skill.RegisterDynamic(otc.NewRegistry(nil), d)
		assert.Error(t, err, name)
	}
}
