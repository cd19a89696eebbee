package docs_test

import (
	"context"
	"fmt"
	"io"
	"log"
	"net/http"
	"net/http/httptest"
	"strings"

	"github.com/otcgo/otc"
	"github.com/otcgo/otc/mcp"
	"github.com/otcgo/otc/oauth"
)

// A tool server as an OAuth resource server: what a client without a
// token is told, and the metadata document it reads next.
func Example_oauth() {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	reg := calculator(nil)

	// docs:start oauth
	// Counter.Increment needs a scope; the other tools need no token.
	err := otc.Register(reg, otc.Tool{
		ID: "Counter.Increment", Version: "1.0.0", Description: "Adds one to a counter.",
		Policy: &otc.Policy{RequiredScopes: []string{"counter:write"}},
	}, func(context.Context, struct{}) (int, error) { return 1, nil })
	if err != nil {
		log.Fatal(err)
	}

	// Tokens from this authorization server, for this resource: its keys
	// come from its metadata (RFC 8414, or OpenID Connect discovery).
	auth, err := oauth.New(ctx, &oauth.Options{
		Resource:             "https://tools.example.com/mcp",
		AuthorizationServers: []oauth.AuthorizationServer{{Issuer: "https://login.example.com"}},
	})
	if err != nil {
		log.Fatal(err)
	}
	prm, err := auth.MetadataHandler(reg, &oauth.MetadataOptions{ResourceName: "Example tools"})
	if err != nil {
		log.Fatal(err)
	}
	mux := http.NewServeMux()
	prm.Mount(mux) // /.well-known/oauth-protected-resource and …/mcp
	mux.Handle("/mcp", mcp.NewHandler(reg, &mcp.Options{Authenticator: auth}))
	// docs:end oauth

	srv := httptest.NewServer(mux)
	defer srv.Close()
	resp, err := http.Post(srv.URL+"/mcp", "application/json",
		strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"tools/list"}`))
	if err != nil {
		log.Fatal(err)
	}
	resp.Body.Close()
	fmt.Println(resp.StatusCode, resp.Header.Get("WWW-Authenticate"))

	resp, err = http.Get(srv.URL + "/.well-known/oauth-protected-resource/mcp")
	if err != nil {
		log.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	fmt.Println(resp.StatusCode, string(b))
	// Output:
	// 401 Bearer resource_metadata="https://tools.example.com/.well-known/oauth-protected-resource/mcp"
	// 200 {"resource":"https://tools.example.com/mcp","authorization_servers":["https://login.example.com"],"scopes_supported":["counter:write"],"bearer_methods_supported":["header"],"resource_name":"Example tools"}
}
