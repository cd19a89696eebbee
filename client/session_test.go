package client_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/otcgo/otc/client"
	"github.com/otcgo/otc/mcp"
)

// sessionServer is an MCP server over real HTTP that keeps sessions: it
// names one in its answer to each initialize, takes only the bearer token
// "granted", and records which session each request came in and which
// sessions were ended.
type sessionServer struct {
	url string

	mu      sync.Mutex
	opened  int
	calls   map[string]int // tools/call requests by session
	deleted []string
}

func newSessionServer(t *testing.T, issuer string) *sessionServer {
	t.Helper()
	ss := &sessionServer{calls: map[string]int{}}
	h := mcp.NewHandler(newRegistry(t), &mcp.Options{Stateless: true}) // the test keeps the sessions
	var srv *httptest.Server
	srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/.well-known/oauth-protected-resource/mcp" {
			_ = json.NewEncoder(w).Encode(map[string]any{"resource": srv.URL + "/mcp", "authorization_servers": []string{issuer}})
			return
		}
		if r.Header.Get("Authorization") != "Bearer granted" {
			w.Header().Set("WWW-Authenticate", `Bearer resource_metadata="`+srv.URL+`/.well-known/oauth-protected-resource/mcp"`)
			w.WriteHeader(http.StatusUnauthorized)
			return
		}
		sid := r.Header.Get("Mcp-Session-Id")
		ss.mu.Lock()
		switch r.Method {
		case http.MethodDelete:
			ss.deleted = append(ss.deleted, sid)
			ss.mu.Unlock()
			w.WriteHeader(http.StatusNoContent)
			return
		case http.MethodPost:
			var msg struct {
				Method string `json:"method"`
			}
			body, _ := io.ReadAll(r.Body)
			r.Body = io.NopCloser(bytes.NewReader(body))
			_ = json.Unmarshal(body, &msg)
			switch msg.Method {
			case "initialize":
				ss.opened++
				w.Header().Set("Mcp-Session-Id", fmt.Sprintf("s%d", ss.opened))
			case "tools/call":
				ss.calls[sid]++
			}
		}
		ss.mu.Unlock()
		h.ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)
	ss.url = srv.URL + "/mcp"
	return ss
}

// TestNewSession: sessions of one client of an MCP server over HTTP each
// have their own handshake and session, ended apart, and share one OAuth
// client: three sessions cost one discovery of the authorization server
// and one token.
func TestNewSession(t *testing.T) {
	as := newAuthServer(t)
	ss := newSessionServer(t, as.srv.URL)
	c, err := client.New(ss.url, &client.Options{Format: client.FormatMCP, MCPVersion: "2025-11-25",
		OAuth: &client.OAuth{Issuer: as.srv.URL, ClientID: "gw", ClientSecret: "gw-secret"}})
	require.NoError(t, err)
	t.Cleanup(func() { _ = c.Close() })
	sessions := []*client.Session{c.MCP()}
	for range 2 {
		s, err := c.NewSession()
		require.NoError(t, err)
		t.Cleanup(func() { _ = s.Close() })
		sessions = append(sessions, s)
	}
	for _, s := range sessions {
		sum, err := client.CallAs[float64](t.Context(), s, "Math_Add", map[string]any{"a": 1, "b": 2}, nil)
		require.NoError(t, err)
		assert.Equal(t, 3.0, sum)
	}
	ss.mu.Lock()
	assert.Equal(t, 3, ss.opened, "a handshake per session")
	assert.Equal(t, map[string]int{"s1": 1, "s2": 1, "s3": 1}, ss.calls, "each call in its own session")
	ss.mu.Unlock()
	assert.Len(t, as.requests(), 1, "one token for every session")
	assert.Equal(t, 1, as.discoveries(), "one discovery of the authorization server")

	require.NoError(t, sessions[1].Close())
	ss.mu.Lock()
	assert.Len(t, ss.deleted, 1, "closing a session ends it alone")
	ss.mu.Unlock()
	_, err = client.CallAs[float64](t.Context(), c, "Math_Add", map[string]any{"a": 1, "b": 2}, nil)
	require.NoError(t, err, "the client's own session goes on")
	ss.mu.Lock()
	assert.Equal(t, 2, ss.calls["s1"])
	ss.mu.Unlock()
}

// TestNewSessionStdio: a session of a client of a server over stdio is a
// process of its own: closing it leaves the client's process answering.
func TestNewSessionStdio(t *testing.T) {
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), stdioEnv+"=1")
	c, err := client.NewStdio(cmd, nil)
	require.NoError(t, err)
	t.Cleanup(func() { _ = c.Close() })
	s, err := c.NewSession()
	require.NoError(t, err)
	for _, cl := range []client.Caller{c, s} {
		sum, err := client.CallAs[float64](t.Context(), cl, "Math_Add", addInput{A: 2, B: 3}, nil)
		require.NoError(t, err)
		assert.Equal(t, 5.0, sum)
	}
	require.NoError(t, s.Close())
	_, err = s.ListTools(t.Context())
	assert.ErrorContains(t, err, "exited", "the session's process is gone")
	_, err = c.ListTools(t.Context())
	assert.NoError(t, err, "the client's is not")
}

// TestSessionTraits: what a client says of its server's sessions, call
// ids and catalog notices, by the format's protocol.
func TestSessionTraits(t *testing.T) {
	for _, tc := range []struct {
		format                     client.Format
		state, dedupes, listChange bool
	}{
		{client.FormatOTC, false, true, false},
		{client.FormatMCP, true, false, true},
		{client.FormatREST, false, false, false},
		{client.FormatA2A, false, false, false},
	} {
		c := newClient(t, "http://127.0.0.1:1", &client.Options{Format: tc.format})
		assert.Equal(t, tc.state, c.KeepsState(), tc.format)
		assert.Equal(t, tc.dedupes, c.DeduplicatesCalls(), tc.format)
		assert.Equal(t, tc.listChange, c.NotifiesListChanges(), tc.format)
	}
}

// TestMCPSessionExpired: a server that forgets the session (404 to a
// request of it) gets a new handshake and the request again, once; the
// call succeeds in the new session.
func TestMCPSessionExpired(t *testing.T) {
	h := mcp.NewHandler(newRegistry(t), &mcp.Options{Stateless: true}) // the test keeps the sessions
	var mu sync.Mutex
	forgotten := map[string]bool{}
	opened := 0
	srv := serve(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		r.Body = io.NopCloser(bytes.NewReader(body))
		mu.Lock()
		defer mu.Unlock()
		if forgotten[r.Header.Get("Mcp-Session-Id")] {
			w.WriteHeader(http.StatusNotFound)
			return
		}
		if containsMethod(body, "initialize") {
			opened++
			w.Header().Set("Mcp-Session-Id", fmt.Sprintf("s%d", opened))
		}
		h.ServeHTTP(w, r)
	}))
	c, err := client.New(srv.URL, &client.Options{Format: client.FormatMCP, MCPVersion: mcp.Version20251125})
	require.NoError(t, err)
	t.Cleanup(func() { _ = c.Close() })
	_, err = c.ListTools(t.Context())
	require.NoError(t, err)
	mu.Lock()
	require.Equal(t, 1, opened)
	forgotten["s1"] = true
	mu.Unlock()

	res, err := c.Call(t.Context(), "Math_Add", map[string]any{"a": 1, "b": 2}, nil)
	require.NoError(t, err, "the call goes again in a new session")
	assert.JSONEq(t, `3`, string(res.Value))
	mu.Lock()
	assert.Equal(t, 2, opened, "one new handshake")
	mu.Unlock()
}
