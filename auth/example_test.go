package auth_test

import (
	"context"
	"fmt"
	"io"
	"log"
	"net/http"
	"net/http/httptest"
	"strings"

	"github.com/otcgo/otc"
	"github.com/otcgo/otc/auth"
)

// A tool server that accepts an API key or an HS256 bearer token. The
// tool reads who called from its context.
func ExampleAnyOf() {
	reg := otc.NewRegistry(nil)
	if err := otc.Register(reg, otc.Tool{ID: "Auth.WhoAmI", Version: "1.0.0", Description: "Says who called."},
		func(ctx context.Context, _ struct{}) (string, error) {
			id := otc.CallerIdentity(ctx)
			return id.Method + ":" + id.Name, nil
		}); err != nil {
		log.Fatal(err)
	}
	keys, err := auth.NewAPIKeyAuth(map[string]string{"ci": "a-long-random-key-for-the-ci-job"})
	if err != nil {
		log.Fatal(err)
	}
	tokens, err := auth.NewJWTAuth(&auth.JWTOptions{Secret: []byte("a-shared-secret-of-at-least-32-bytes")})
	if err != nil {
		log.Fatal(err)
	}
	srv := httptest.NewServer(otc.NewHandler(reg, &otc.HandlerOptions{Authenticator: auth.AnyOf(keys, tokens)}))
	defer srv.Close()

	call := func(header, value string) {
		req, _ := http.NewRequest(http.MethodPost, srv.URL+"/tools/call",
			strings.NewReader(`{"request":{"tool_id":"Auth.WhoAmI","input":{}}}`))
		req.Header.Set("Content-Type", "application/json")
		if header != "" {
			req.Header.Set(header, value)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			log.Fatal(err)
		}
		defer resp.Body.Close()
		body, _ := io.ReadAll(resp.Body)
		fmt.Println(resp.StatusCode, resp.Header.Get("WWW-Authenticate"), strings.Contains(string(body), `"value":"api_key:ci"`))
	}
	call("", "")
	call(otc.HeaderAPIKey, "a-long-random-key-for-the-ci-job")
	call(otc.HeaderAPIKey, "a-wrong-key")
	// Output:
	// 401 Bearer false
	// 200  true
	// 401 Bearer false
}
