package main

import (
	"bytes"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/otcgo/otc"
	"github.com/otcgo/otc/mcp"
	"github.com/otcgo/otc/skill"
)

// skillsServer serves two skills, one of them under two paths' names;
// tamper, when set, rewrites the text of every resources/read answer.
func skillsServer(t *testing.T, tamper func([]byte) []byte) string {
	t.Helper()
	reg := otc.NewRegistry(nil)
	_, err := skill.Register(reg, fstest.MapFS{
		"refunds/SKILL.md":                      {Data: []byte("---\nname: refunds\ndescription: Process refunds\n---\nSee examples/email.md.\n")},
		"refunds/examples/email.md":             {Data: []byte("Dear customer,\n")},
		"git-workflow/SKILL.md":                 {Data: []byte("---\nname: git-workflow\ndescription: Branch and commit\n---\nShort branches.\n")},
		"team/refunds/SKILL.md":                 {Data: []byte("---\nname: refunds\ndescription: The team's refunds\n---\nAsk first.\n")},
		"team/refunds/scripts/check.sh":         {Data: []byte("#!/bin/sh\necho ok\n")},
		"team/refunds/scripts/nested/readme.md": {Data: []byte("nested\n")},
	}, nil)
	require.NoError(t, err)
	h := mcp.NewHandler(reg, nil)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		r.Body = io.NopCloser(bytes.NewReader(body))
		if tamper == nil || !bytes.Contains(body, []byte(`"resources/read"`)) {
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

// TestSkillsCommands: otc skills lists a server's skills; otc skill
// prints one's SKILL.md, or writes every file of it below --out, each
// verified; a name two skills share, one no skill has, and content that
// is not what the entry says are refused, writing nothing unverified.
func TestSkillsCommands(t *testing.T) {
	t.Parallel()
	url := skillsServer(t, nil)
	code, out, errOut := otcRun(t, url, "", nil, "skills", "URL")
	require.Equal(t, exitOK, code, errOut)
	assert.Contains(t, out, "git-workflow")
	assert.Contains(t, out, "skill://team/refunds/SKILL.md")
	assert.Regexp(t, `refunds\s+2\s+skill://refunds/SKILL.md`, out)

	code, out, errOut = otcRun(t, url, "", nil, "skill", "URL", "git-workflow")
	require.Equal(t, exitOK, code, errOut)
	assert.Equal(t, "---\nname: git-workflow\ndescription: Branch and commit\n---\nShort branches.\n", out)

	code, _, errOut = otcRun(t, url, "", nil, "skill", "URL", "refunds")
	assert.Equal(t, exitBadInput, code)
	assert.Contains(t, errOut, "2 skills are named refunds: name one by its URI")
	code, _, errOut = otcRun(t, url, "", nil, "skill", "URL", "nothing")
	assert.Equal(t, exitBadInput, code)
	assert.Contains(t, errOut, "no skill is named nothing")

	dir := t.TempDir()
	code, out, errOut = otcRun(t, url, "", nil, "skill", "URL", "skill://team/refunds/SKILL.md", "--out", dir)
	require.Equal(t, exitOK, code, errOut)
	assert.Contains(t, out, filepath.Join(dir, "refunds", "scripts", "nested", "readme.md"))
	b, err := os.ReadFile(filepath.Join(dir, "refunds", "scripts", "check.sh"))
	require.NoError(t, err)
	assert.Equal(t, "#!/bin/sh\necho ok\n", string(b))

	bad := skillsServer(t, func(b []byte) []byte { return bytes.Replace(b, []byte("Dear customer"), []byte("Dear attacker"), 1) })
	dir = t.TempDir()
	code, _, errOut = otcRun(t, bad, "", nil, "skill", "URL", "skill://refunds/SKILL.md", "--out", dir)
	assert.Equal(t, exitRefused, code)
	assert.Contains(t, errOut, "skill://refunds/examples/email.md")
	assert.Contains(t, errOut, "its digest is")
	_, err = os.Stat(filepath.Join(dir, "refunds", "examples", "email.md"))
	assert.True(t, os.IsNotExist(err), "the unverified file is not written")

	code, _, errOut = otcRun(t, url, "", nil, "skill", "URL", "git-workflow", "--out")
	assert.Equal(t, exitBadInput, code)
	assert.True(t, strings.Contains(errOut, "--out needs a folder"), errOut)
}
