package a2a_test

import (
	"context"
	"fmt"
	"io"
	"log"
	"net/http"
	"net/http/httptest"
	"strings"

	"github.com/otcgo/otc"
	"github.com/otcgo/otc/a2a"
)

// A registry served as an A2A agent, and a message that calls one of its
// tools over the JSON-RPC binding.
func ExampleNewHandler() {
	reg := otc.NewRegistry(nil)
	if err := otc.Register(reg, otc.Tool{ID: "Greeter.Hello", Version: "1.0.0", Description: "Says hello."},
		func(_ context.Context, in struct {
			Name string `json:"name" jsonschema:"description=Who to greet."`
		}) (string, error) {
			return "hello " + in.Name, nil
		}); err != nil {
		log.Fatal(err)
	}
	// docs:start mount
	mux := http.NewServeMux()
	h := http.StripPrefix("/a2a", a2a.NewHandler(reg, nil))
	mux.Handle("/a2a", h)  // the JSON-RPC binding
	mux.Handle("/a2a/", h) // the HTTP+JSON binding and the Agent Card
	// docs:end mount
	srv := httptest.NewServer(mux)
	defer srv.Close()

	// docs:start call
	body := `{"jsonrpc":"2.0","id":1,"method":"SendMessage","params":{"message":{
	  "messageId":"9f1c","role":"ROLE_USER",
	  "parts":[{"data":{"tool":"Greeter_Hello","input":{"name":"Ada"}}}]}}}`
	// docs:end call
	req, _ := http.NewRequest(http.MethodPost, srv.URL+"/a2a", strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("A2A-Version", "1.0")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		log.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	fmt.Println(resp.StatusCode, strings.Contains(string(b), `"io.github.otcgo/outcome":"succeeded"`), strings.Contains(string(b), `{"text":"hello Ada"}`))
	// Output: 200 true true
}
