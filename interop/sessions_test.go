package interop

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/otcgo/otc"
	"github.com/otcgo/otc/auth"
	"github.com/otcgo/otc/client"
	"github.com/otcgo/otc/federation"
	"github.com/otcgo/otc/mcp"
	"github.com/otcgo/otc/mount"
	"github.com/otcgo/otc/oauth"
)

// TestFederationSessionsShareOneToken: a gateway in front of an MCP
// upstream that takes tokens of an authorization server (oidc-provider)
// opens a session of the upstream per caller, and every session uses
// the credentials of the gateway's one client of the upstream: however
// many callers come, the authorization server sees no more discoveries
// and token requests than the first catalog read cost.
func TestFederationSessionsShareOneToken(t *testing.T) {
	node, modules := oauthNode(t)
	dir := nodeScripts(t, modules)
	upPort := freePort(t)
	resource := fmt.Sprintf("http://127.0.0.1:%d/mcp", upPort)
	issuer, asLog := startAuthorizationServer(t, node, dir, resource)
	ctx := context.Background()

	upReg := otc.NewRegistry(nil)
	require.NoError(t, otc.Register(upReg, otc.Tool{ID: "Who.Am", Version: "1.0.0", Description: "Says who calls."},
		func(ctx context.Context, _ otc.NoOutput) (string, error) { return otc.CallerIdentity(ctx).Name, nil }))
	upAuth, err := oauth.New(ctx, &oauth.Options{Resource: resource, AuthorizationServers: []oauth.AuthorizationServer{{Issuer: issuer}}})
	require.NoError(t, err)
	prm, err := upAuth.MetadataHandler(upReg, nil)
	require.NoError(t, err)
	upMux := http.NewServeMux()
	prm.Mount(upMux)
	h := mcp.NewHandler(upReg, &mcp.Options{Authenticator: upAuth})
	var mu sync.Mutex
	handshakes := 0
	upMux.Handle("/mcp", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		r.Body = io.NopCloser(bytes.NewReader(body))
		var msg struct {
			Method string `json:"method"`
		}
		if json.Unmarshal(body, &msg) == nil && msg.Method == "initialize" && r.Header.Get("Authorization") != "" {
			mu.Lock()
			handshakes++
			mu.Unlock()
		}
		h.ServeHTTP(w, r)
	}))
	serveOn(t, upPort, upMux)

	reg := otc.NewRegistry(nil)
	fed, err := federation.Mount(ctx, reg, []federation.Upstream{{
		Name: "up", URL: resource, Format: client.FormatMCP,
		Client:      &client.Options{MCPVersion: "2025-11-25"},
		Credentials: federation.Credentials{OAuth: &client.OAuth{Issuer: issuer, ClientID: "reader", ClientSecret: "reader-secret"}},
	}}, nil)
	require.NoError(t, err)
	t.Cleanup(func() { _ = fed.Close() })
	require.Len(t, reg.Tools(), 1, "the catalog was read with the gateway's token: %v", fed.Health())
	requests := func(method, prefix string) int {
		n := 0
		for line := range strings.SplitSeq(asLog.String(), "\n") {
			if strings.HasPrefix(line, "request "+method+" "+prefix) {
				n++
			}
		}
		return n
	}
	discoveries, tokens := requests("GET", "/.well-known/"), requests("POST", "/token")
	require.Equal(t, 1, tokens, "the first catalog read took a token: %s", asLog)

	keys := map[string]string{}
	for i := range 4 {
		keys[fmt.Sprintf("caller%d", i)] = fmt.Sprintf("an-api-key-of-caller-%d-of-the-gateway", i)
	}
	gwAuth, err := auth.NewAPIKeyAuth(keys)
	require.NoError(t, err)
	mux := http.NewServeMux()
	mount.All(mux, reg, &mount.Options{Authenticator: gwAuth})
	gwPort := freePort(t)
	serveOn(t, gwPort, mux)
	for name, key := range keys {
		cl, err := client.New(fmt.Sprintf("http://127.0.0.1:%d%s", gwPort, mount.PrefixOTC), &client.Options{APIKey: key})
		require.NoError(t, err)
		text, err := cl.CallText(ctx, "up.Who_Am", nil)
		require.NoError(t, err, name)
		assert.Equal(t, "reader", text, "the upstream sees the gateway's client")
	}

	mu.Lock()
	assert.Equal(t, 1+len(keys), handshakes, "a session per caller, beside the gateway's own")
	mu.Unlock()
	assert.Equal(t, discoveries, requests("GET", "/.well-known/"), "no discovery per caller: %s", asLog)
	assert.Equal(t, tokens, requests("POST", "/token"), "no token per caller: %s", asLog)
	assert.Equal(t, len(keys), fed.Health()[0].Sessions, "the callers' sessions are kept")
}
