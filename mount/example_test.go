package mount_test

import (
	"context"
	"fmt"
	"io"
	"log"
	"net/http"
	"net/http/httptest"
	"strings"

	"github.com/otcgo/otc"
	"github.com/otcgo/otc/mount"
)

// One registry served over OTC, MCP, the REST view and the registry view.
func ExampleAll() {
	reg := otc.NewRegistry(nil)
	if err := otc.Register(reg, otc.Tool{ID: "Greeter.Hello", Version: "1.0.0", Description: "Says hello."},
		func(_ context.Context, in struct {
			Name string `json:"name" jsonschema:"description=Who to greet."`
		}) (string, error) {
			return "hello " + in.Name, nil
		}); err != nil {
		log.Fatal(err)
	}
	mux := http.NewServeMux()
	mount.All(mux, reg, nil)
	srv := httptest.NewServer(mux)
	defer srv.Close()

	post := func(path, body string) {
		req, _ := http.NewRequest(http.MethodPost, srv.URL+path, strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			log.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		fmt.Println(path, resp.StatusCode, strings.Contains(string(b), "hello Ada"))
	}
	post("/otc/tools/call", `{"request":{"tool_id":"Greeter.Hello","input":{"name":"Ada"}}}`)
	post("/mcp", `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"Greeter_Hello","arguments":{"name":"Ada"}}}`)
	post("/v1/tools/Greeter_Hello:invoke", `{"schema_version":"0.1.0","args":{"name":"Ada"}}`)
	// Output:
	// /otc/tools/call 200 true
	// /mcp 200 true
	// /v1/tools/Greeter_Hello:invoke 200 true
}
