package mcpsdk_test

import (
	"context"
	"fmt"
	"log"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/otcgo/otc"
	"github.com/otcgo/otc/mcpsdk"
)

// AddInput is the input of Calculator.Add.
type AddInput struct {
	A float64 `json:"a" jsonschema:"description=The first number to add."`
	B float64 `json:"b" jsonschema:"description=The second number to add."`
}

// An SDK server gets the registry's tools beside its own features. The
// example connects a client in memory; a real server is served with
// mcp.NewStreamableHTTPHandler or over stdio with mcp.StdioTransport.
func ExampleAddTools() {
	reg := otc.NewRegistry(nil)
	err := otc.Register(reg, otc.Tool{ID: "Calculator.Add", Version: "1.0.0", Description: "Adds two numbers."},
		func(ctx context.Context, in AddInput) (float64, error) { return in.A + in.B, nil })
	if err != nil {
		log.Fatal(err)
	}

	server := mcp.NewServer(&mcp.Implementation{Name: "example", Version: "1.0.0"}, nil)
	if err := mcpsdk.AddTools(server, reg, nil); err != nil {
		log.Fatal(err)
	}

	ctx := context.Background()
	serverTransport, clientTransport := mcp.NewInMemoryTransports()
	ss, err := server.Connect(ctx, serverTransport, nil)
	if err != nil {
		log.Fatal(err)
	}
	defer ss.Close()
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "client", Version: "1.0.0"}, nil).Connect(ctx, clientTransport, nil)
	if err != nil {
		log.Fatal(err)
	}
	defer cs.Close()

	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "Calculator_Add", Arguments: map[string]any{"a": 2, "b": 3}})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(res.Content[0].(*mcp.TextContent).Text)
	fmt.Println(res.StructuredContent)
	// Output:
	// 5
	// map[result:5]
}
