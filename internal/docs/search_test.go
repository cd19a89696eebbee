package docs_test

import (
	"context"
	"fmt"

	"github.com/otcgo/otc"
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
	send(otc.NewHandler(reg, nil), "GET", "/tools?q=add+two+numbers&limit=1", "", nil)
	// Output:
	// Files_read_file
	// 200
	// {"$schema":"otc://1.0","tools":[{"id":"Calculator.Add@1.0.0","name":"Calculator_Add","description":"Adds two numbers together.","version":"1.0.0","input_schema":{"parameters":{"properties":{"a":{"type":"number","description":"The first number to add."},"b":{"type":"number","description":"The second number to add."}},"additionalProperties":false,"type":"object","required":["a","b"]}},"output_schema":{"type":"number"}}]}
}
