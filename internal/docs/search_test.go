package docs_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http/httptest"
	"strings"

	"github.com/otcgo/otc"
	"github.com/otcgo/otc/mcp"
	"github.com/otcgo/otc/search"
)

// A search of a catalog, in the library and over OTC.
func Example_search() {
	reg := calculator(nil)
	_ = otc.Register(reg, otc.Tool{ID: "Files.read_file", Version: "1.0.0",
		Description: "Read the complete contents of a file."},
		func(context.Context, struct {
			Path string `json:"path" jsonschema:"description=The file's path."`
		}) (string, error) {
			return "", nil
		})
	// docs:start search
	found, err := search.Tools(context.Background(), reg, "show me what is in notes.txt", &search.Options{Limit: 5})
	if err != nil {
		panic(err) // a query over 1 KiB, or a limit outside 1 to 100
	}
	for _, r := range found {
		fmt.Println(r.Tool.Name)
	}
	// docs:end search
	// docs:start search-option
	h := otc.NewHandler(reg, &otc.HandlerOptions{Search: search.Query}) // GET /tools?q= (mount.All gives it)
	// docs:end search-option
	send(h, "GET", "/tools?q=add+two+numbers&limit=1", "", nil)
	// Output:
	// Files_read_file
	// 200
	// {"$schema":"otc://1.0","tools":[{"id":"Calculator.Add@1.0.0","name":"Calculator_Add","description":"Adds two numbers together.","version":"1.0.0","input_schema":{"parameters":{"properties":{"a":{"type":"number","description":"The first number to add."},"b":{"type":"number","description":"The second number to add."}},"additionalProperties":false,"type":"object","required":["a","b"]}},"output_schema":{"type":"number"}}]}
}

// MCP's search mode: a model's client lists the search and call tools,
// finds a tool by describing it, and calls it.
func Example_searchMode() {
	reg := calculator(nil)
	// docs:start searchmode
	opts := &mcp.Options{Search: &mcp.SearchMode{
		Threshold: 50,                         // past 50 tools a caller may see
		Pinned:    []string{"Calculator_Add"}, // listed besides the two
	}}
	// docs:end searchmode
	opts.Search.Threshold = 0 // every caller, for the example
	h := mcp.NewHandler(reg, opts)
	headers := []string{"Accept", "application/json, text/event-stream", "MCP-Protocol-Version", "2025-11-25"}
	req := httptest.NewRequest("POST", "/", strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"tools/list"}`))
	req.Header.Set("Content-Type", "application/json")
	for i := 0; i < len(headers); i += 2 {
		req.Header.Set(headers[i], headers[i+1])
	}
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	var list struct {
		Result struct{ Tools []struct{ Name string } }
	}
	_ = json.Unmarshal(rec.Body.Bytes(), &list)
	for _, t := range list.Result.Tools {
		fmt.Println(t.Name)
	}
	send(h, "POST", "/", `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"search_tools","arguments":{"query":"add two numbers","limit":1}}}`, headers)
	send(h, "POST", "/", `{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"call_tool","arguments":{"name":"Calculator_Add","arguments":{"a":2,"b":3}}}}`, headers)
	// Output:
	// Calculator_Add
	// search_tools
	// call_tool
	// 200
	// {"jsonrpc":"2.0","id":2,"result":{"content":[{"type":"text","text":"{\"tools\":[{\"name\":\"Calculator_Add\",\"description\":\"Adds two numbers together.\",\"inputSchema\":{\"properties\":{\"a\":{\"type\":\"number\",\"description\":\"The first number to add.\"},\"b\":{\"type\":\"number\",\"description\":\"The second number to add.\"}},\"additionalProperties\":false,\"type\":\"object\",\"required\":[\"a\",\"b\"]},\"outputSchema\":{\"type\":\"object\",\"properties\":{\"result\":{\"type\":\"number\"}},\"required\":[\"result\"]}}]}"}],"structuredContent":{"tools":[{"name":"Calculator_Add","description":"Adds two numbers together.","inputSchema":{"properties":{"a":{"type":"number","description":"The first number to add."},"b":{"type":"number","description":"The second number to add."}},"additionalProperties":false,"type":"object","required":["a","b"]},"outputSchema":{"type":"object","properties":{"result":{"type":"number"}},"required":["result"]}}]}}}
	// 200
	// {"jsonrpc":"2.0","id":3,"result":{"content":[{"type":"text","text":"5"}],"structuredContent":{"result":5}}}
}
