package main

import (
	"context"
	"log"
	"net/http"

	"github.com/otcgo/otc"
	"github.com/otcgo/otc/mount"
)

// AddInput is the tool's input. Its JSON Schema comes from the struct tags.
type AddInput struct {
	A float64 `json:"a" jsonschema:"description=The first number to add."`
	B float64 `json:"b" jsonschema:"description=The second number to add."`
}

func main() {
	reg := otc.NewRegistry(nil)
	err := otc.Register(reg, otc.Tool{
		ID:                "Calculator.Add",
		Version:           "1.0.0",
		Description:       "Adds two numbers together.",
		OutputDescription: "The sum of the two numbers.",
	}, func(ctx context.Context, in AddInput) (float64, error) {
		return in.A + in.B, nil
	})
	if err != nil {
		log.Fatal(err)
	}

	// Every wire format on one mux: OTC/OXP at /otc/, MCP at /mcp (and
	// /mcp/), the REST view at /v1/, the registry view at /registry/, A2A
	// at /a2a.
	mux := http.NewServeMux()
	mount.All(mux, reg, nil)
	log.Fatal(http.ListenAndServe("127.0.0.1:8080", mux))
}
