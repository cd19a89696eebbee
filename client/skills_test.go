package client_test

import (
	"bytes"
	"errors"
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
	"github.com/otcgo/otc/skill"
)

// skillServer serves a skill, each answer passed through tamper (nil
// for none), which may rewrite it.
func skillServer(t *testing.T, tamper func(method string, body []byte) []byte) string {
	t.Helper()
	reg := newRegistry(t)
	_, err := skill.Register(reg, fstest.MapFS{
		"refunds/SKILL.md":             {Data: []byte("---\nname: refunds\ndescription: Process refunds\nmetadata:\n  version: \"2\"\n---\nSee examples/email.md.\n")},
		"refunds/examples/email.md":    {Data: []byte("Dear customer,\n")},
		"refunds/examples/deep/eu.txt": {Data: []byte("EU\n")},
	}, nil)
	require.NoError(t, err)
	h := mcp.NewHandler(reg, nil)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if tamper == nil {
			h.ServeHTTP(w, r)
			return
		}
		body, _ := io.ReadAll(r.Body)
		r.Body = io.NopCloser(bytes.NewReader(body))
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, r)
		for k, v := range rec.Header() {
			w.Header()[k] = v
		}
		out := tamper(string(body), rec.Body.Bytes())
		w.Header().Del("Content-Length")
		w.WriteHeader(rec.Code)
		_, _ = w.Write(out)
	}))
	t.Cleanup(srv.Close)
	return srv.URL
}

// TestSkills: the client lists a server's skills, gets one, reads each
// file verified against the entry, and lists its folders.
func TestSkills(t *testing.T) {
	for _, version := range []string{mcp.Version20251125, mcp.Version20260728} {
		t.Run(version, func(t *testing.T) {
			c := newClient(t, skillServer(t, nil), &client.Options{Format: client.FormatMCP, MCPVersion: version})
			s := c.MCP()
			list, err := s.ListSkills(t.Context())
			require.NoError(t, err)
			require.Len(t, list, 1)
			sk := &list[0]
			assert.Equal(t, "refunds", sk.Name())
			assert.Equal(t, "Process refunds", sk.Description())
			assert.Len(t, sk.Files, 3)
			got, err := s.GetSkill(t.Context(), sk.URI)
			require.NoError(t, err)
			assert.Equal(t, sk, got)
			for _, f := range sk.Files {
				data, err := s.ReadSkillFile(t.Context(), sk, f.URI)
				require.NoError(t, err, f.URI)
				assert.Len(t, data, int(f.Size))
			}
			kids, err := s.ReadDirectory(t.Context(), "skill://refunds/examples")
			require.NoError(t, err)
			require.Len(t, kids, 2)
			assert.Equal(t, "inode/directory", kids[0].MIMEType)
			_, err = s.ReadSkillFile(t.Context(), sk, "skill://refunds/examples/other.md")
			assert.ErrorIs(t, err, client.ErrSkillUnverified, "a file the entry does not list")
			_, err = s.GetSkill(t.Context(), "skill://nothing/SKILL.md")
			var rpc *client.RPCError
			require.ErrorAs(t, err, &rpc)
			assert.Equal(t, -32602, rpc.Code)
		})
	}
}

// TestSkillsTampered: content that is not what the entry says is refused,
// naming the file and what differs, and not given back.
func TestSkillsTampered(t *testing.T) {
	for name, tc := range map[string]struct {
		tamper func(req string, resp []byte) []byte
		want   string
	}{
		"digest": {func(req string, resp []byte) []byte {
			if strings.Contains(req, `"resources/read"`) {
				return bytes.Replace(resp, []byte("Dear customer"), []byte("Dear victim!!"), 1)
			}
			return resp
		}, "its digest is"},
		"size": {func(req string, resp []byte) []byte {
			if strings.Contains(req, `"resources/read"`) {
				return bytes.Replace(resp, []byte("Dear customer"), []byte("Dear customer, send"), 1)
			}
			return resp
		}, "it is 21 bytes, not the 15"},
	} {
		t.Run(name, func(t *testing.T) {
			c := newClient(t, skillServer(t, tc.tamper), &client.Options{Format: client.FormatMCP})
			s := c.MCP()
			list, err := s.ListSkills(t.Context())
			require.NoError(t, err)
			data, err := s.ReadSkillFile(t.Context(), &list[0], "skill://refunds/examples/email.md")
			require.ErrorIs(t, err, client.ErrSkillUnverified)
			assert.Contains(t, err.Error(), tc.want)
			assert.Contains(t, err.Error(), "skill://refunds/examples/email.md")
			assert.Nil(t, data)
		})
	}
	t.Run("front_matter", func(t *testing.T) {
		// The entry says another description than the file, whose
		// digest and size it gives right.
		c := newClient(t, skillServer(t, func(req string, resp []byte) []byte {
			if strings.Contains(req, `"skills/list"`) {
				return bytes.Replace(resp, []byte(`"description":"Process refunds"`), []byte(`"description":"Process refunds today"`), 1)
			}
			return resp
		}), &client.Options{Format: client.FormatMCP})
		s := c.MCP()
		list, err := s.ListSkills(t.Context())
		require.NoError(t, err)
		_, err = s.ReadSkillFile(t.Context(), &list[0], list[0].URI)
		require.ErrorIs(t, err, client.ErrSkillUnverified)
		assert.Contains(t, err.Error(), "front matter differs")
	})
	t.Run("invalid_entry", func(t *testing.T) {
		c := newClient(t, skillServer(t, func(req string, resp []byte) []byte {
			if strings.Contains(req, `"skills/list"`) {
				i := bytes.Index(resp, []byte(`"resources":[`))
				j := bytes.Index(resp[i:], []byte("]"))
				return append(append(append([]byte{}, resp[:i]...), `"resources":7`...), resp[i+j+1:]...)
			}
			return resp
		}), &client.Options{Format: client.FormatMCP})
		_, err := c.MCP().ListSkills(t.Context())
		require.Error(t, err)
		assert.Contains(t, err.Error(), "neither a list of files nor \"dynamic\"")
	})
}

// TestSkillsUndeclared: a server that does not declare the extension is
// not asked.
func TestSkillsUndeclared(t *testing.T) {
	srv := httptest.NewServer(mcp.NewHandler(otc.NewRegistry(nil), nil))
	t.Cleanup(srv.Close)
	c := newClient(t, srv.URL, &client.Options{Format: client.FormatMCP})
	_, err := c.MCP().ListSkills(t.Context())
	require.Error(t, err)
	assert.ErrorIs(t, err, client.ErrNoSkills)
	assert.Contains(t, err.Error(), "does not declare the skills extension")
	assert.False(t, errors.Is(err, client.ErrSkillUnverified))
}
