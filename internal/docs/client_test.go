package docs_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log"
	"net/http/httptest"

	"github.com/otcgo/otc"
	"github.com/otcgo/otc/client"
	"github.com/otcgo/otc/export"
)

// signer registers Signer.Sign, which needs the SIGNING_KEY secret, on reg.
func signer(reg *otc.Registry) {
	type signInput struct {
		Message string `json:"message" jsonschema:"description=The message to sign."`
	}
	err := otc.Register(reg, otc.Tool{
		ID: "Signer.Sign", Version: "1.0.0", Description: "Signs a message.",
		Requirements: &otc.Requirements{Secrets: []otc.SecretRequirement{{ID: "SIGNING_KEY"}}},
	}, func(ctx context.Context, in signInput) (string, error) {
		key, _ := otc.Secret(ctx, "SIGNING_KEY")
		if in.Message == "" {
			return "", &otc.ToolError{Message: "Nothing to sign", AdditionalPromptContent: "Send a message that is not empty."}
		}
		return fmt.Sprintf("signed %q with a key of %d bytes", in.Message, len(key)), nil
	})
	if err != nil {
		panic(err)
	}
}

// An agent's side: list the tools once, declare them to a model, call the
// one it picks.
func Example_client() {
	reg := calculator(nil)
	signer(reg)
	srv := httptest.NewServer(otc.NewHandler(reg, nil))
	defer srv.Close()
	ctx, url, key := context.Background(), srv.URL, "k-123"

	for _, choice := range []struct{ name, args string }{
		{"Signer_Sign", `{"message":"hello"}`},
		{"Signer_Sign", `{"message":""}`},
	} {
		name, args := choice.name, choice.args
		// docs:start agent
		c, err := client.New(url, &client.Options{
			Retry: &client.RetryPolicy{}, // retry tool errors that say can_retry
		})
		if err != nil {
			log.Fatal(err)
		}
		defs, err := c.ListTools(ctx)
		if err != nil {
			log.Fatal(err)
		}
		tools, err := export.New(defs, nil)
		if err != nil {
			log.Fatal(err) // a tool a model cannot take: a hostile name, a schema that does not resolve
		}

		// tools.OpenAI(), tools.OpenAIStrict(), tools.Anthropic(), tools.Gemini()
		// and tools.MCP() are the function-calling declarations of each API.
		// When the model picks a tool by name, with arguments args (a JSON
		// object):
		def, ok := tools.Lookup(name)
		if !ok {
			log.Fatalf("the model picked %q, which is not a tool", name)
		}
		res, err := c.Call(ctx, def.ID, json.RawMessage(args), &client.CallOptions{
			Secrets: []otc.ToolSecret{{ID: "SIGNING_KEY", Value: key}},
		})
		var toolErr *otc.ToolError
		if errors.As(err, &toolErr) {
			// Tell the model: toolErr.Message, toolErr.AdditionalPromptContent.
			fmt.Println(toolErr.Message, "/", toolErr.AdditionalPromptContent)
		} else if err == nil {
			fmt.Println(string(res.Value))
		}
		// docs:end agent
	}

	c, err := client.New(url, nil)
	if err != nil {
		log.Fatal(err)
	}
	// docs:start call-as
	sum, err := client.CallAs[float64](ctx, c, "Calculator.Add", map[string]any{"a": 1, "b": 2}, nil)
	// docs:end call-as
	fmt.Println(sum, err)
	// Output:
	// "signed \"hello\" with a key of 5 bytes"
	// Nothing to sign / Send a message that is not empty.
	// 3 <nil>
}

// An agent in the same process as its tools: the same Toolset, and the
// registry's own call path.
func Example_inProcess() {
	reg := calculator(nil)
	ctx := context.Background()
	name, args := "Calculator_Add", `{"a":2,"b":3}`
	// docs:start in-process
	tools, err := export.New(reg.Tools(), nil)
	if err != nil {
		panic(err)
	}
	def, _ := tools.Lookup(name)
	res, err := reg.Call(ctx, &otc.CallRequest{ToolID: def.ID, Input: json.RawMessage(args)})
	// docs:end in-process
	fmt.Println(string(res.Value), err)
	// Output:
	// 5 <nil>
}

// The declarations of one tool for OpenAI's strict mode and for Gemini.
func Example_declarations() {
	reg := otc.NewRegistry(nil)
	type searchInput struct {
		Query string `json:"query" jsonschema:"description=What to look for.,minLength=2"`
		Limit int    `json:"limit,omitempty" jsonschema:"description=How many results.,default=5"`
	}
	err := otc.Register(reg, otc.Tool{ID: "Docs.Search", Version: "1.0.0", Description: "Searches the docs."},
		func(ctx context.Context, in searchInput) ([]string, error) { return nil, nil })
	if err != nil {
		panic(err)
	}
	tools, err := export.New(reg.Tools(), nil)
	if err != nil {
		panic(err)
	}
	for _, decl := range []any{tools.OpenAIStrict()[0], tools.Gemini()[0]} {
		out, _ := json.Marshal(decl)
		fmt.Println(string(out))
	}
	// Output:
	// {"type":"function","function":{"name":"Docs_Search","description":"Searches the docs.","parameters":{"additionalProperties":false,"properties":{"query":{"description":"What to look for. (at least 2 characters)","type":"string"},"limit":{"anyOf":[{"type":"integer"},{"type":"null"}],"description":"How many results. (default 5)"}},"required":["query","limit"],"type":"object"},"strict":true}}
	// {"name":"Docs_Search","description":"Searches the docs.","parameters":{"properties":{"query":{"description":"What to look for.","minLength":2,"type":"STRING"},"limit":{"default":5,"description":"How many results.","type":"INTEGER"}},"propertyOrdering":["query","limit"],"required":["query"],"type":"OBJECT"}}
}

// The README's client: one server, one call.
func Example_readmeClient() {
	srv := httptest.NewServer(otc.NewHandler(calculator(nil), nil))
	defer srv.Close()
	ctx, url := context.Background(), srv.URL
	// docs:start readme
	c, err := client.New(url, nil) // an OTC/OXP server; client.Dial finds what a URL speaks
	if err != nil {
		log.Fatal(err)
	}
	res, err := c.Call(ctx, "Calculator.Add", map[string]any{"a": 10, "b": 5}, nil)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(string(res.Value)) // 15
	// docs:end readme

	// Output:
	// 15
}
