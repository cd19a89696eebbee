package interop

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/otcgo/otc"
	"github.com/otcgo/otc/auth"
	"github.com/otcgo/otc/client"
	"github.com/otcgo/otc/federation"
	"github.com/otcgo/otc/internal/testkit"
	"github.com/otcgo/otc/mcp"
	"github.com/otcgo/otc/mount"
	"github.com/otcgo/otc/oauth"
	"github.com/otcgo/otc/resource"
)

// serveOn serves h on 127.0.0.1:port until the test ends.
func serveOn(t *testing.T, port int, h http.Handler) {
	t.Helper()
	ln, err := net.Listen("tcp", fmt.Sprintf("127.0.0.1:%d", port))
	require.NoError(t, err)
	srv := &http.Server{Handler: h, ReadHeaderTimeout: 5 * time.Second}
	go srv.Serve(ln)
	t.Cleanup(func() { _ = srv.Close() })
}

// TestFederationTokenExchange: a gateway whose upstream takes tokens of
// one authorization server (oidc-provider) exchanges each caller's token
// for one issued for the upstream (RFC 8693): the upstream sees the
// caller as the subject and the gateway as the actor, the caller's token
// never reaches it, the exchange is made once per caller token, and a
// caller without a token is refused without an upstream request.
func TestFederationTokenExchange(t *testing.T) {
	node, modules := oauthNode(t)
	dir := nodeScripts(t, modules)
	gwPort, upPort, asPort := freePort(t), freePort(t), freePort(t)
	gatewayResource := fmt.Sprintf("http://127.0.0.1:%d/otc", gwPort)
	upstreamResource := fmt.Sprintf("http://127.0.0.1:%d", upPort)
	issuer := fmt.Sprintf("http://127.0.0.1:%d", asPort)

	cmd := exec.Command(node, "as-exchange.mjs")
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), fmt.Sprintf("PORT=%d", asPort), "GATEWAY="+gatewayResource, "UPSTREAM="+upstreamResource)
	asLog := &testkit.SyncBuffer{}
	cmd.Stdout, cmd.Stderr = asLog, asLog
	require.NoError(t, cmd.Start())
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
	})
	require.Eventually(t, func() bool { return strings.Contains(asLog.String(), "issuer ") }, startTimeout, 20*time.Millisecond, "as-exchange.mjs: %s", asLog)

	ctx := context.Background()
	// The upstream: an OAuth resource server of its own resource.
	upReg := otc.NewRegistry(nil)
	var mu sync.Mutex
	var seen []string // the Authorization of each call the upstream ran
	calls := func() int {
		mu.Lock()
		defer mu.Unlock()
		return len(seen)
	}
	require.NoError(t, otc.Register(upReg, otc.Tool{ID: "Who.Am", Version: "1.0.0", Description: "Says who calls, and through whom."},
		func(ctx context.Context, _ otc.NoOutput) (string, error) {
			id := otc.CallerIdentity(ctx)
			act, _ := id.Claims["act"].(map[string]any)
			mu.Lock()
			seen = append(seen, otc.HTTPRequest(ctx).Header.Get("Authorization"))
			mu.Unlock()
			return fmt.Sprintf("%s via %v", id.Name, act["sub"]), nil
		}))
	upAuth, err := oauth.New(ctx, &oauth.Options{Resource: upstreamResource, AuthorizationServers: []oauth.AuthorizationServer{{Issuer: issuer}}})
	require.NoError(t, err)
	upMux := http.NewServeMux()
	prm, err := upAuth.MetadataHandler(upReg, nil)
	require.NoError(t, err)
	prm.Mount(upMux)
	upMux.Handle("/", otc.NewHandler(upReg, &otc.HandlerOptions{Authenticator: upAuth}))
	// The same upstream over MCP, with a resource that says who reads it.
	upMCP := otc.NewRegistry(nil)
	var readAuth []string // the Authorization of each read the upstream ran
	_, err = resource.Register(upMCP, resource.Resource{URI: "who://am", Name: "who"}, func(ctx context.Context) (string, error) {
		id := otc.CallerIdentity(ctx)
		act, _ := id.Claims["act"].(map[string]any)
		mu.Lock()
		readAuth = append(readAuth, otc.HTTPRequest(ctx).Header.Get("Authorization"))
		mu.Unlock()
		return fmt.Sprintf("%s via %v", id.Name, act["sub"]), nil
	})
	require.NoError(t, err)
	upMux.Handle("/mcp", mcp.NewHandler(upMCP, &mcp.Options{Authenticator: upAuth}))
	serveOn(t, upPort, upMux)

	// The gateway: its own resource, and the upstream's catalog read with
	// its own client-credentials token.
	reg := otc.NewRegistry(nil)
	upstream := func(name, tokenURL, secret string) federation.Upstream {
		return federation.Upstream{
			Name: name, URL: upstreamResource, Format: client.FormatOTC,
			Credentials: federation.Credentials{
				OAuth: &client.OAuth{Issuer: issuer, ClientID: "gateway", ClientSecret: "gateway-secret"},
				TokenExchange: &client.TokenExchange{TokenURL: tokenURL, ClientID: "gateway", ClientSecret: secret,
					Audience: upstreamResource},
			},
		}
	}
	overMCP := upstream("mcp_up", issuer+"/token", "gateway-secret")
	overMCP.URL, overMCP.Format = upstreamResource+"/mcp", client.FormatMCP
	fed, err := federation.Mount(ctx, reg, []federation.Upstream{
		overMCP,
		upstream("up", issuer+"/token", "gateway-secret"),
		upstream("wrong_secret", issuer+"/token", "not-the-secret"),
		upstream("as_down", fmt.Sprintf("http://127.0.0.1:%d/token", freePort(t)), "gateway-secret"),
	}, nil)
	require.NoError(t, err)
	t.Cleanup(func() { _ = fed.Close() })
	require.Len(t, reg.Tools(), 3, "the catalogs were read with the gateway's token: %v", fed.Health())
	gwAuth, err := oauth.New(ctx, &oauth.Options{Resource: gatewayResource, AuthorizationServers: []oauth.AuthorizationServer{{Issuer: issuer}}})
	require.NoError(t, err)
	keys, err := auth.NewAPIKeyAuth(map[string]string{"ops": "an-api-key-of-the-gateway"})
	require.NoError(t, err)
	mux := http.NewServeMux()
	mount.All(mux, reg, &mount.Options{Authenticator: auth.AnyOf(gwAuth, keys)})
	serveOn(t, gwPort, mux)

	callerToken := clientToken(t, issuer, "caller", "calc", gatewayResource)
	cl, err := client.New(gatewayResource, &client.Options{BearerToken: callerToken})
	require.NoError(t, err)
	for range 2 {
		text, err := cl.CallText(ctx, "up.Who_Am", nil)
		require.NoError(t, err)
		assert.Equal(t, "caller via gateway", text)
	}
	assert.Equal(t, 1, strings.Count(asLog.String(), "exchanged caller"), "one exchange per caller token: %s", asLog)
	require.Equal(t, 2, calls())

	// Calls at once with a new caller token wait for one exchange.
	fresh := clientToken(t, issuer, "caller", "calc", gatewayResource)
	many, err := client.New(gatewayResource, &client.Options{BearerToken: fresh})
	require.NoError(t, err)
	var wg sync.WaitGroup
	for range 6 {
		wg.Go(func() {
			text, err := many.CallText(ctx, "up.Who_Am", nil)
			assert.NoError(t, err)
			assert.Equal(t, "caller via gateway", text)
		})
	}
	wg.Wait()
	assert.Equal(t, 2, strings.Count(asLog.String(), "exchanged caller"), "one exchange for six calls at once: %s", asLog)
	mu.Lock()
	require.Len(t, seen, 8)
	for _, h := range seen {
		assert.NotEqual(t, "Bearer "+callerToken, h, "the caller's token never reaches the upstream")
		assert.NotEqual(t, "Bearer "+fresh, h, "the caller's token never reaches the upstream")
	}
	mu.Unlock()

	// The authorization server refuses the gateway: a tool error that is
	// not retryable, naming the refusal for developers; it cannot be
	// reached: a retryable one. No request upstream either way.
	_, err = cl.Call(ctx, "wrong_secret.Who_Am", nil, nil)
	var refused *otc.ToolError
	require.ErrorAs(t, err, &refused)
	assert.False(t, refused.CanRetry)
	assert.Contains(t, refused.Message, "would not exchange them")
	_, err = cl.Call(ctx, "as_down.Who_Am", nil, nil)
	var down *otc.ToolError
	require.ErrorAs(t, err, &down)
	assert.True(t, down.CanRetry)
	assert.Equal(t, 8, calls())

	// A caller with an API key has no token to exchange: refused by the
	// gateway, without a request upstream.
	ops, err := client.New(gatewayResource, &client.Options{APIKey: "an-api-key-of-the-gateway"})
	require.NoError(t, err)
	_, err = ops.Call(ctx, "up.Who_Am", nil, nil)
	var te *otc.ToolError
	require.ErrorAs(t, err, &te)
	assert.Contains(t, te.Message, "needs a token")
	assert.Equal(t, 8, calls())

	// A read of the MCP upstream's resource through the gateway goes as
	// a call does: with the token exchanged for the caller's, never the
	// caller's own; a caller with no token to exchange makes no request.
	reader, err := client.New(fmt.Sprintf("http://127.0.0.1:%d/mcp", gwPort), &client.Options{Format: client.FormatMCP, BearerToken: callerToken})
	require.NoError(t, err)
	contents, err := reader.MCP().ReadResource(ctx, "who://am")
	require.NoError(t, err, "%v", fed.Health())
	require.Len(t, contents, 1)
	assert.Equal(t, "caller via gateway", contents[0].Text)
	opsReader, err := client.New(fmt.Sprintf("http://127.0.0.1:%d/mcp", gwPort), &client.Options{Format: client.FormatMCP, APIKey: "an-api-key-of-the-gateway"})
	require.NoError(t, err)
	_, err = opsReader.MCP().ReadResource(ctx, "who://am")
	require.Error(t, err)
	assert.Contains(t, err.Error(), "needs")
	mu.Lock()
	require.Len(t, readAuth, 1)
	assert.NotEqual(t, "Bearer "+callerToken, readAuth[0], "the caller's token never reaches the upstream")
	mu.Unlock()
}
