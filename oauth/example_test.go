package oauth_test

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"encoding/json"
	"fmt"
	"io"
	"log"
	"net/http"
	"net/http/httptest"
	"strings"
	"time"

	"github.com/MicahParks/jwkset"
	"github.com/golang-jwt/jwt/v5"

	"github.com/otcgo/otc"
	"github.com/otcgo/otc/oauth"
)

// A tool server that accepts the access tokens of one authorization
// server. A deployment names only the issuer, and the keys come from its
// metadata; here a static key set stands in for them, and the example
// signs the token a client would get from the authorization server.
func Example() {
	ctx := context.Background()
	key, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	pub, _ := jwkset.NewJWKFromKey(&key.PublicKey, jwkset.JWKOptions{Metadata: jwkset.JWKMetadataOptions{KID: "key-1"}})
	keySet, _ := json.Marshal(jwkset.JWKSMarshal{Keys: []jwkset.JWKMarshal{pub.Marshal()}})

	auth, err := oauth.New(ctx, &oauth.Options{
		Resource: "https://tools.example.com/tools",
		AuthorizationServers: []oauth.AuthorizationServer{
			{Issuer: "https://login.example.com", JWKS: keySet},
		},
	})
	if err != nil {
		log.Fatal(err)
	}

	reg := otc.NewRegistry(nil)
	err = otc.Register(reg, otc.Tool{
		ID: "Counter.Increment", Version: "1.0.0", Description: "Adds one to the counter.",
		Policy: &otc.Policy{RequiredScopes: []string{"counter:write"}},
	}, func(ctx context.Context, _ struct{}) (string, error) {
		return "incremented for " + otc.CallerIdentity(ctx).Name, nil
	})
	if err != nil {
		log.Fatal(err)
	}
	prm, err := auth.MetadataHandler(reg, &oauth.MetadataOptions{ResourceName: "Counter"})
	if err != nil {
		log.Fatal(err)
	}
	mux := http.NewServeMux()
	prm.Mount(mux)
	mux.Handle("/tools/", otc.NewHandler(reg, &otc.HandlerOptions{Authenticator: auth}))
	srv := httptest.NewServer(mux)
	defer srv.Close()

	// A client is refused, and told where to read the metadata...
	call := `{"request":{"tool_id":"Counter.Increment","input":{}}}`
	resp, _ := http.Post(srv.URL+"/tools/call", "application/json", strings.NewReader(call))
	resp.Body.Close()
	fmt.Println(resp.StatusCode, resp.Header.Get("WWW-Authenticate"))

	// ...which names the authorization server and the scopes to ask for.
	resp, _ = http.Get(srv.URL + "/.well-known/oauth-protected-resource/tools")
	doc, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	fmt.Println(string(doc))

	// The token the authorization server issues for this resource.
	tok := jwt.NewWithClaims(jwt.SigningMethodES256, jwt.MapClaims{
		"iss": "https://login.example.com", "sub": "alice", "aud": "https://tools.example.com/tools",
		"scope": "counter:write", "exp": time.Now().Add(time.Hour).Unix(),
	})
	tok.Header["typ"], tok.Header["kid"] = "at+jwt", "key-1"
	signed, _ := tok.SignedString(key)
	req, _ := http.NewRequest(http.MethodPost, srv.URL+"/tools/call", strings.NewReader(call))
	req.Header.Set("Authorization", "Bearer "+signed)
	req.Header.Set("Content-Type", "application/json")
	resp, _ = http.DefaultClient.Do(req)
	var out struct {
		Result struct {
			Value string `json:"value"`
		} `json:"result"`
	}
	_ = json.NewDecoder(resp.Body).Decode(&out)
	resp.Body.Close()
	fmt.Println(resp.StatusCode, out.Result.Value)

	// Output:
	// 401 Bearer resource_metadata="https://tools.example.com/.well-known/oauth-protected-resource/tools"
	// {"resource":"https://tools.example.com/tools","authorization_servers":["https://login.example.com"],"scopes_supported":["counter:write"],"bearer_methods_supported":["header"],"resource_name":"Counter"}
	// 200 incremented for alice
}
