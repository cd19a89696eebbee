package interop

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/a2aproject/a2a-go/v2/a2aclient"
	"github.com/a2aproject/a2a-go/v2/a2aclient/agentcard"
	"github.com/golang-jwt/jwt/v5"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/otcgo/otc"
	otca2a "github.com/otcgo/otc/a2a"
	"github.com/otcgo/otc/auth"
	"github.com/otcgo/otc/internal/testkit"
	"github.com/otcgo/otc/oauth"
	"github.com/otcgo/otc/ratelimit"
)

// cardAgent is an A2A agent behind one authenticator, and a credential
// it takes, by the name of the card's scheme it goes with.
type cardAgent struct {
	name, url, scheme, credential string
	header                        string // where the credential goes: OXP-API-Key, or Authorization as a bearer token
}

// cardAgents serves, for each authenticator of this module (API keys, an
// HS256 JWT, capability tokens, the OAuth resource server, AnyOf of an API
// key and a JWT, and one guarded by ratelimit.Guard), an A2A agent with
// Calculator.Add, its card at the host's root.
func cardAgents(t *testing.T) []cardAgent {
	t.Helper()
	ctx := context.Background()
	keys, err := auth.NewAPIKeyAuth(map[string]string{"ci": "cards-interop-key-4c1f9e2b7d3a8056"})
	require.NoError(t, err)
	secret := []byte("cards-interop-hs256-secret-0123456789")
	jwtAuth, err := auth.NewJWTAuth(&auth.JWTOptions{Secret: secret})
	require.NoError(t, err)
	jwtToken, err := jwt.NewWithClaims(jwt.SigningMethodHS256, jwt.MapClaims{"sub": "ci", "exp": time.Now().Add(10 * time.Minute).Unix()}).SignedString(secret)
	require.NoError(t, err)
	capAuth := testkit.CapabilityAuth(t, auth.CapabilityOptions{})
	const resource = "http://127.0.0.1/a2a"
	oauthAuth, err := oauth.New(ctx, &oauth.Options{Resource: resource,
		AuthorizationServers: []oauth.AuthorizationServer{{Issuer: "https://as.test", JWKS: testkit.CapJWKS(t)}}})
	require.NoError(t, err)
	oauthToken := testkit.Sign(t, jwt.SigningMethodES256, testkit.CapKey(t), testkit.KidEC, jwt.MapClaims{
		"iss": "https://as.test", "sub": "ci", "aud": resource, "exp": time.Now().Add(10 * time.Minute).Unix(), "iat": time.Now().Unix()})
	guarded, err := ratelimit.Guard(auth.AnyOf(keys, jwtAuth), nil)
	require.NoError(t, err)

	var out []cardAgent
	for _, c := range []struct {
		name, scheme, header, credential string
		a                                otc.Authenticator
	}{
		{"api_key", "apiKey", otc.HeaderAPIKey, "cards-interop-key-4c1f9e2b7d3a8056", keys},
		{"jwt", "bearer", "Authorization", jwtToken, jwtAuth},
		{"capability", "bearer", "Authorization", testkit.CapToken(t, nil), capAuth},
		{"oauth", "bearer", "Authorization", oauthToken, oauthAuth},
		{"any_of_key", "apiKey", otc.HeaderAPIKey, "cards-interop-key-4c1f9e2b7d3a8056", auth.AnyOf(keys, jwtAuth)},
		{"any_of_jwt", "bearer", "Authorization", jwtToken, auth.AnyOf(keys, jwtAuth)},
		{"guarded", "bearer", "Authorization", jwtToken, guarded},
	} {
		reg := otc.NewRegistry(nil)
		require.NoError(t, otc.Register(reg, otc.Tool{ID: "Calculator.Add", Version: "1.0.0", Description: "Adds two numbers."},
			func(_ context.Context, in struct {
				A float64 `json:"a" jsonschema:"description=The first number."`
				B float64 `json:"b" jsonschema:"description=The second number."`
			}) (float64, error) {
				return in.A + in.B, nil
			}))
		h := otca2a.NewHandler(reg, &otca2a.Options{Authenticator: c.a, Name: "cards-" + c.name})
		mux := http.NewServeMux()
		mux.Handle("/a2a/", http.StripPrefix("/a2a", h))
		mux.Handle("/a2a", http.StripPrefix("/a2a", h))
		mux.Handle("GET /.well-known/agent-card.json", h.Card("/a2a"))
		srv := httptest.NewServer(mux)
		t.Cleanup(srv.Close)
		out = append(out, cardAgent{name: c.name, url: srv.URL, scheme: c.scheme, credential: c.credential, header: c.header})
	}
	return out
}

// credentials is a2aclient's store of one credential per scheme name.
type credentials map[a2a.SecuritySchemeName]a2aclient.AuthCredential

func (c credentials) Get(_ context.Context, _ a2aclient.SessionID, s a2a.SecuritySchemeName) (a2aclient.AuthCredential, error) {
	if v, ok := c[s]; ok {
		return v, nil
	}
	return "", a2aclient.ErrCredentialNotFound
}

// TestA2ACardsGoClient: with every authenticator, the official Go SDK
// (v2.3.1) reads the card, and its AuthInterceptor, going by the card's
// security requirements and schemes alone, sends the credential where the
// card says: a call and the extended card succeed over both bindings.
func TestA2ACardsGoClient(t *testing.T) {
	t.Parallel()
	for _, ag := range cardAgents(t) {
		t.Run(ag.name, func(t *testing.T) {
			ctx := a2aclient.AttachSessionID(t.Context(), "s1")
			card, err := agentcard.DefaultResolver.Resolve(ctx, ag.url)
			require.NoError(t, err, "the card is read")
			require.Contains(t, card.SecuritySchemes, a2a.SecuritySchemeName(ag.scheme))
			for _, binding := range []a2a.TransportProtocol{a2a.TransportProtocolJSONRPC, a2a.TransportProtocolHTTPJSON} {
				client, err := a2aclient.NewFromCard(ctx, card,
					a2aclient.WithConfig(a2aclient.Config{PreferredTransports: []a2a.TransportProtocol{binding}}),
					a2aclient.WithCallInterceptors(&a2aclient.AuthInterceptor{Service: credentials{a2a.SecuritySchemeName(ag.scheme): a2aclient.AuthCredential(ag.credential)}}))
				require.NoError(t, err)
				res, err := client.SendMessage(ctx, &a2a.SendMessageRequest{Message: a2a.NewMessage(a2a.MessageRoleUser,
					a2a.NewDataPart(map[string]any{"tool": "Calculator_Add", "input": map[string]any{"a": 2, "b": 3}}))})
				require.NoError(t, err, "%s", binding)
				raw, _ := json.Marshal(res)
				assert.Contains(t, string(raw), "5", binding)
				ext, err := client.GetExtendedAgentCard(ctx, &a2a.GetExtendedAgentCardRequest{})
				require.NoError(t, err, "%s: the extended card is read", binding)
				assert.Equal(t, "cards-"+ag.name, ext.Name)
				_ = client.Destroy()
			}
		})
	}
}

// TestA2ACardsJSClient: with every authenticator, the official JavaScript
// SDK (1.3.0) reads the card and, without credentials, gets the public
// card from getAgentCard (which asks for the extended one, as the card
// says there is one); with the credential, it calls a tool
// (testdata/frameworks/a2a-js-cards.mjs).
func TestA2ACardsJSClient(t *testing.T) {
	t.Parallel()
	node, dir := frameworkScripts(t)
	agents := cardAgents(t)
	var spec []map[string]string
	for _, ag := range agents {
		spec = append(spec, map[string]string{"name": ag.name, "url": ag.url, "header": ag.header, "value": credentialValue(ag)})
	}
	arg, err := json.Marshal(spec)
	require.NoError(t, err)
	out := runScript(t, node, dir, "a2a-js-cards.mjs", string(arg))
	var f map[string]map[string]struct {
		OK    json.RawMessage `json:"ok"`
		Error string          `json:"error"`
	}
	require.NoError(t, json.Unmarshal(out, &f), "%s", out)
	for _, ag := range agents {
		got := f[ag.name]
		require.NotNil(t, got, "%s: %s", ag.name, out)
		assert.Empty(t, got["publicCard"].Error, ag.name)
		assert.Contains(t, string(got["publicCard"].OK), `"cards-`+ag.name+`"`, ag.name)
		assert.Empty(t, got["call"].Error, ag.name)
		assert.True(t, strings.Contains(string(got["call"].OK), `5`), "%s: %s", ag.name, got["call"].OK)
	}
}

// credentialValue is the value of the credential's header.
func credentialValue(ag cardAgent) string {
	if ag.header == "Authorization" {
		return "Bearer " + ag.credential
	}
	return ag.credential
}
