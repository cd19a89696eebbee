package docs_test

import (
	"context"
	"fmt"
	"io"
	"log"
	"net/http"
	"net/http/httptest"
	"strings"

	"github.com/otcgo/otc/client"
	"github.com/otcgo/otc/mcp"
	"github.com/otcgo/otc/oauth"
)

// A workload's client: client credentials, authenticated by a JWT signed
// with the workload's private key, and its tokens bound to a key of the
// client's own (DPoP).
func Example_clientPrivateKeyJWT() {
	// docs:start private-key-jwt
	key, err := client.ReadPrivateKey("/etc/agent/client-key.pem")
	if err != nil {
		log.Fatal(err)
	}
	c, err := client.New("https://tools.example.com/mcp", &client.Options{Format: client.FormatMCP, OAuth: &client.OAuth{
		Issuer:    "https://login.example.com", // the assertions go to it alone
		ClientID:  "billing-agent",
		ClientKey: key,  // private_key_jwt (RFC 7523 §2.2): no secret to leak
		DPoP:      true, // tokens bound to a key made for this client (RFC 9449)
	}})
	// docs:end private-key-jwt
	if err != nil {
		log.Fatal(err)
	}
	_ = c
}

// Workload identity federation: the platform's token for the workload
// is the grant.
func Example_clientWorkloadIdentity() {
	// docs:start workload-identity
	c, err := client.New("https://tools.example.com/mcp", &client.Options{Format: client.FormatMCP, OAuth: &client.OAuth{
		Issuer: "https://login.example.com",
		// Kubernetes keeps the pod's projected service account token
		// fresh in this file; it is read for each token request.
		Assertion: client.TokenFile("/var/run/secrets/tokens/mcp-token"),
	}})
	// docs:end workload-identity
	if err != nil {
		log.Fatal(err)
	}
	_ = c
}

// Enterprise-managed authorization: the user's sign-in at the enterprise's
// identity provider is exchanged there for an identity assertion that the
// server's authorization server takes as the grant.
func Example_clientEnterprise() {
	// signedInUser returns the ID token the user got when they signed in
	// to the enterprise's identity provider (the host's single sign-on).
	signedInUser := func(context.Context) (string, error) { return "", nil }
	// docs:start enterprise
	c, err := client.New("https://tools.example.com/mcp", &client.Options{Format: client.FormatMCP, OAuth: &client.OAuth{
		Issuer:       "https://login.tools.example.com",
		ClientID:     "desk-agent",
		ClientSecret: "…", // how the client authenticates there
		Enterprise: &client.Enterprise{
			TokenURL: "https://idp.corp.example.com/oauth2/token",
			ClientID: "desk-agent-at-corp",
			IDToken:  signedInUser,
		},
	}})
	// docs:end enterprise
	if err != nil {
		log.Fatal(err)
	}
	_ = c
}

// A resource server that takes DPoP-bound tokens only, with nonces of its
// own: a bearer token is refused, and the challenge says what to send.
func Example_oauthDPoP() {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	reg := calculator(nil)
	// docs:start dpop
	auth, err := oauth.New(ctx, &oauth.Options{
		Resource:             "https://tools.example.com/mcp",
		AuthorizationServers: []oauth.AuthorizationServer{{Issuer: "https://login.example.com"}},
		DPoP: &oauth.DPoP{
			Required: true, // no bearer tokens
			Nonce:    true, // proofs carry this server's nonce
			// Replicas share the nonces' secret, and the proofs they took
			// (the registry's idempotency store, such as redisstore's).
			NonceSecret: []byte("a secret of 32 bytes or more, shared by replicas"),
		},
	})
	if err != nil {
		log.Fatal(err)
	}
	mux := http.NewServeMux()
	mux.Handle("/mcp", mcp.NewHandler(reg, &mcp.Options{Authenticator: auth}))
	handler := auth.Nonces(mux) // every answer carries the current nonce
	// docs:end dpop
	srv := httptest.NewServer(handler)
	defer srv.Close()
	req, _ := http.NewRequest(http.MethodPost, srv.URL+"/mcp", strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"tools/list"}`))
	req.Header.Set("Authorization", "Bearer eyJhbGciOiJSUzI1NiJ9.e30.c2ln")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		log.Fatal(err)
	}
	_, _ = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	fmt.Println(resp.StatusCode, resp.Header.Get("DPoP-Nonce") != "")
	fmt.Println(resp.Header.Get("WWW-Authenticate"))
	// Output:
	// 401 true
	// DPoP algs="ES256 ES384 ES512 RS256 RS384 RS512 PS256 PS384 PS512 EdDSA", resource_metadata="https://tools.example.com/.well-known/oauth-protected-resource/mcp", error="invalid_token", error_description="This server takes DPoP-bound tokens only: send the token as 'Authorization: DPoP <token>' with a DPoP proof"
}
