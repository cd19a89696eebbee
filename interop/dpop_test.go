package interop

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"encoding/json"
	"encoding/pem"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/otcgo/otc"
	"github.com/otcgo/otc/client"
	"github.com/otcgo/otc/federation"
	"github.com/otcgo/otc/internal/jose"
	"github.com/otcgo/otc/internal/testkit"
	"github.com/otcgo/otc/mcp"
	"github.com/otcgo/otc/oauth"
)

// TestDPoPWithOIDCProvider: oidc-provider, with DPoP and its nonces
// required, issues tokens bound to the client's key; the resource server
// (package oauth, DPoP required, nonces of its own) takes them with their
// proofs:
//
//   - from otc's client, which authenticates to oidc-provider with a JWT
//     signed by its private key read from a PEM file (private_key_jwt),
//     binds its token to a key made for it, and answers both servers'
//     nonce challenges;
//   - from a client made of jose (testdata/oauth/dpop-call.mjs), whose
//     proof is taken once and refused when replayed.
func TestDPoPWithOIDCProvider(t *testing.T) {
	node, modules := oauthNode(t)
	dir := nodeScripts(t, modules)
	port, asPort := freePort(t), freePort(t)
	resource := fmt.Sprintf("http://127.0.0.1:%d/mcp", port)
	issuer := fmt.Sprintf("http://127.0.0.1:%d", asPort)

	// The workload's key, in a PEM file as a deployment keeps it; the
	// authorization server knows its public half.
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	require.NoError(t, err)
	der, err := x509.MarshalPKCS8PrivateKey(key)
	require.NoError(t, err)
	keyFile := filepath.Join(t.TempDir(), "workload.pem")
	require.NoError(t, os.WriteFile(keyFile, pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: der}), 0o600))
	pub, err := jose.PublicJWK(key.Public())
	require.NoError(t, err)
	pubJSON, _ := json.Marshal(pub)
	// The platform that vouches for workloads (a Kubernetes cluster, a
	// cloud): its key signs the workload's token, which it keeps in a
	// file, and the authorization server trusts its public half.
	platform, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	require.NoError(t, err)
	platformPub, err := jose.PublicJWK(platform.Public())
	require.NoError(t, err)
	platformJSON, _ := json.Marshal(platformPub)

	cmd := exec.Command(node, "as-dpop.mjs")
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), fmt.Sprintf("PORT=%d", asPort), "RESOURCE="+resource, "CLIENT_JWK="+string(pubJSON), "PLATFORM_JWK="+string(platformJSON))
	asLog := &testkit.SyncBuffer{}
	cmd.Stdout, cmd.Stderr = asLog, asLog
	require.NoError(t, cmd.Start())
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
	})
	require.Eventually(t, func() bool { return strings.Contains(asLog.String(), "issuer ") }, startTimeout, 20*time.Millisecond, "as-dpop.mjs: %s", asLog)

	// The resource server.
	reg := otc.NewRegistry(nil)
	var mu sync.Mutex
	var bound, subjects []string // the cnf.jkt and sub of each call's token
	require.NoError(t, otc.Register(reg, otc.Tool{ID: "Who.Am", Version: "1.0.0", Description: "Says which key the caller holds."},
		func(ctx context.Context, _ otc.NoOutput) (string, error) {
			id := otc.CallerIdentity(ctx)
			cnf, _ := id.Claims["cnf"].(map[string]any)
			mu.Lock()
			defer mu.Unlock()
			bound, subjects = append(bound, fmt.Sprint(cnf["jkt"])), append(subjects, id.Name)
			return fmt.Sprint(cnf["jkt"]), nil
		}))
	a, err := oauth.New(t.Context(), &oauth.Options{Resource: resource, AuthorizationServers: []oauth.AuthorizationServer{{Issuer: issuer}},
		DPoP: &oauth.DPoP{Required: true, Nonce: true}})
	require.NoError(t, err)
	mux := http.NewServeMux()
	prm, err := a.MetadataHandler(reg, nil)
	require.NoError(t, err)
	prm.Mount(mux)
	mux.Handle("/mcp", mcp.NewHandler(reg, &mcp.Options{Authenticator: a}))
	mux.Handle("/", otc.NewHandler(reg, &otc.HandlerOptions{Authenticator: a}))
	serveOn(t, port, a.Nonces(mux))

	// otc's client.
	signer, err := client.ReadPrivateKey(keyFile)
	require.NoError(t, err)
	c, err := client.New(resource, &client.Options{Format: client.FormatMCP, OAuth: &client.OAuth{
		Issuer: issuer, ClientID: "workload", ClientKey: signer, DPoP: true,
	}})
	require.NoError(t, err)
	t.Cleanup(func() { _ = c.Close() })
	ctx, cancel := context.WithTimeout(t.Context(), callTimeout)
	defer cancel()
	res, err := c.Call(ctx, "Who_Am", nil, nil)
	require.NoError(t, err, "oidc-provider's log:\n%s", asLog)
	var jkt string
	require.NoError(t, json.Unmarshal(res.Value, &jkt))
	assert.Len(t, jkt, 43, "the token is bound to a key (a SHA-256 thumbprint): %q", jkt)
	for range 3 {
		_, err = c.Call(ctx, "Who_Am", nil, nil)
		require.NoError(t, err, "each call a fresh proof")
	}
	mu.Lock()
	assert.Len(t, bound, 4)
	for _, b := range bound {
		assert.Equal(t, bound[0], b, "one key for the client's life")
	}
	mu.Unlock()
	assert.Equal(t, 2, strings.Count(asLog.String(), "request POST /token dpop"), "one token request with a proof, and again with the nonce:\n%s", asLog)

	// otc gateway, configured by its file: one upstream's credentials are
	// the same client's key and a DPoP binding, another's the platform's
	// token for the gateway's workload, in its file (workload identity
	// federation), bound by DPoP too.
	now := time.Now()
	workloadToken, err := jose.Sign(platform, "ES256", map[string]any{"typ": "JWT"}, map[string]any{
		"iss": "https://platform.example", "sub": "system:serviceaccount:agents:gateway", "aud": issuer,
		"iat": now.Unix(), "exp": now.Add(10 * time.Minute).Unix(),
	})
	require.NoError(t, err)
	tokenFile := filepath.Join(t.TempDir(), "token")
	require.NoError(t, os.WriteFile(tokenFile, []byte(workloadToken+"\n"), 0o600))
	config := filepath.Join(t.TempDir(), "gateway.yaml")
	require.NoError(t, os.WriteFile(config, []byte(fmt.Sprintf(`upstreams:
  - name: bound
    mcp: {url: %[1]s}
    credentials:
      client_credentials:
        issuer: %[2]s
        client_id: workload
        private_key_file: %[3]s
        dpop: true
  - name: federated
    mcp: {url: %[1]s}
    credentials:
      jwt_bearer:
        issuer: %[2]s
        client_id: federated
        assertion_file: %[4]s
        dpop: true
`, resource, issuer, keyFile, tokenFile)), 0o600))
	cfg, err := federation.LoadConfig(config, func(string) string { return "" })
	require.NoError(t, err)
	gw := otc.NewRegistry(nil)
	fed, err := federation.Mount(ctx, gw, cfg.Upstreams, nil)
	require.NoError(t, err)
	t.Cleanup(func() { _ = fed.Close() })
	require.Len(t, gw.Tools(), 2, "the catalogs were read with bound tokens: %v\n%s", fed.Health(), asLog)
	for _, tool := range gw.Tools() {
		viaGateway, err := gw.Call(ctx, &otc.CallRequest{ToolName: tool.Name, Input: json.RawMessage(`{}`)})
		require.NoError(t, err)
		require.Nil(t, viaGateway.Error, tool.Name)
		mu.Lock()
		gwKey := bound[len(bound)-1]
		mu.Unlock()
		assert.Len(t, gwKey, 43, "the gateway's token is bound to a key")
		assert.NotEqual(t, bound[0], gwKey, "the gateway's own DPoP key, not the client's")
		assert.Contains(t, string(viaGateway.Value), gwKey)
	}
	mu.Lock()
	assert.Contains(t, subjects, "system:serviceaccount:agents:gateway", "the workload's identity reached the upstream")
	mu.Unlock()
	assert.Contains(t, asLog.String(), "federated system:serviceaccount:agents:gateway")

	// A client made of jose, over OTC.
	js1 := exec.CommandContext(ctx, node, "dpop-call.mjs", issuer, fmt.Sprintf("http://127.0.0.1:%d/tools", port))
	js1.Dir = dir
	stderr := &testkit.SyncBuffer{}
	js1.Stderr = stderr
	out, err := js1.Output()
	require.NoError(t, err, "dpop-call.mjs: %s%s\n%s", out, stderr, asLog)
	var js struct {
		TokenType       string `json:"tokenType"`
		Challenged      int    `json:"challenged"`
		Status          int    `json:"status"`
		Body            string `json:"body"`
		ReplayStatus    int    `json:"replayStatus"`
		ReplayChallenge string `json:"replayChallenge"`
	}
	require.NoError(t, json.Unmarshal(out, &js), "%s", out)
	assert.Equal(t, "DPoP", js.TokenType)
	assert.Equal(t, http.StatusUnauthorized, js.Challenged, "the first proof has no nonce")
	assert.Equal(t, http.StatusOK, js.Status, js.Body)
	assert.Contains(t, js.Body, "Who.Am")
	assert.Equal(t, http.StatusUnauthorized, js.ReplayStatus)
	assert.Contains(t, js.ReplayChallenge, `error="invalid_dpop_proof"`)
}
