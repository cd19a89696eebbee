package mcp_test

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"

	"github.com/otcgo/otc"
	"github.com/otcgo/otc/mcp"
)

type exampleAddInput struct {
	A float64 `json:"a" jsonschema:"description=The first number to add."`
	B float64 `json:"b" jsonschema:"description=The second number to add."`
}

func exampleRegistry() *otc.Registry {
	reg := otc.NewRegistry(nil)
	err := otc.Register(reg, otc.Tool{
		ID:          "Calculator.Add",
		Version:     "1.0.0",
		Description: "Adds two numbers together.",
	}, func(ctx context.Context, in exampleAddInput) (float64, error) {
		return in.A + in.B, nil
	})
	if err != nil {
		panic(err)
	}
	return reg
}

// Mount the handler on a mux, here at /mcp, and call a tool as a client of
// the initialize era does once it has initialized. The tool's number comes
// back as structuredContent, wrapped in an object, and as text.
func ExampleNewHandler() {
	mux := http.NewServeMux()
	mux.Handle("/mcp", mcp.NewHandler(exampleRegistry(), nil))
	srv := httptest.NewServer(mux)
	defer srv.Close()

	body := `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"Calculator_Add","arguments":{"a":10,"b":5}}}`
	req, _ := http.NewRequest(http.MethodPost, srv.URL+"/mcp", strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("MCP-Protocol-Version", mcp.Version20251125)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		panic(err)
	}
	defer resp.Body.Close()
	answer, _ := io.ReadAll(resp.Body)
	fmt.Println(resp.Status, resp.Header.Get("Content-Type"))
	fmt.Println(string(answer))
	// Output:
	// 200 OK application/json
	// {"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":"15"}],"structuredContent":{"result":15}}}
}

// A 2026-07-28 client needs no handshake: each request names its version
// and capabilities in _meta, and mirrors the method and the tool's name
// into headers, which the server checks against the body.
func ExampleNewHandler_stateless() {
	srv := httptest.NewServer(mcp.NewHandler(exampleRegistry(), nil))
	defer srv.Close()

	body := `{"jsonrpc":"2.0","id":"c1","method":"tools/call","params":{"name":"Calculator_Add","arguments":{"a":1,"b":2},` +
		`"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}`
	req, _ := http.NewRequest(http.MethodPost, srv.URL, strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("MCP-Protocol-Version", mcp.Version20260728)
	req.Header.Set("Mcp-Method", "tools/call")
	req.Header.Set("Mcp-Name", "Calculator_Add")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		panic(err)
	}
	defer resp.Body.Close()
	answer, _ := io.ReadAll(resp.Body)
	fmt.Println(resp.Status)
	fmt.Println(string(answer))
	// Output:
	// 200 OK
	// {"jsonrpc":"2.0","id":"c1","result":{"content":[{"type":"text","text":"3"}],"structuredContent":{"result":3},"_meta":{"io.modelcontextprotocol/serverInfo":{"name":"otc","version":"0.0.0"}},"resultType":"complete"}}
}

// Serve speaks the stdio transport on any pair of streams: here a client's
// whole session, read from a string, and the answers written to standard
// output, one JSON-RPC message per line. The notification is not answered.
// Requests run concurrently; MaxConcurrent 1 keeps the answers in the
// order of the requests for this example.
func ExampleServe() {
	session := strings.Join([]string{
		`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"example","version":"1.0.0"}}}`,
		`{"jsonrpc":"2.0","method":"notifications/initialized"}`,
		`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"Calculator_Add","arguments":{"a":2,"b":3}}}`,
	}, "\n") + "\n"
	opts := &mcp.Options{Name: "calculator", Version: "1.0.0"}
	err := mcp.Serve(context.Background(), exampleRegistry(), strings.NewReader(session), os.Stdout, opts)
	fmt.Println("end of input:", err)
	// Requests run concurrently, so their answers may come in any order.

	// Unordered output:
	// {"jsonrpc":"2.0","id":1,"result":{"protocolVersion":"2025-11-25","capabilities":{"logging":{},"tools":{"listChanged":true}},"serverInfo":{"name":"calculator","version":"1.0.0"}}}
	// {"jsonrpc":"2.0","id":2,"result":{"content":[{"type":"text","text":"5"}],"structuredContent":{"result":5}}}
	// end of input: <nil>
}
