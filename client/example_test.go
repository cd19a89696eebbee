package client_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log"
	"net/http/httptest"
	"slices"
	"sync/atomic"
	"time"

	"github.com/otcgo/otc"
	"github.com/otcgo/otc/client"
	"github.com/otcgo/otc/export"
)

// AddInput is the input of the examples' Calculator.Add.
type AddInput struct {
	A float64 `json:"a" jsonschema:"description=The first number to add."`
	B float64 `json:"b" jsonschema:"description=The second number to add."`
}

// RingInput is the input of the examples' Doorbell.Ring.
type RingInput struct {
	DoorbellID string `json:"doorbell_id" jsonschema:"description=The ID of the doorbell to ring."`
}

// startExampleServer serves the two tools of the protocol's example
// exchanges in process, as a real tool server would over the network.
func startExampleServer() *httptest.Server {
	reg := otc.NewRegistry(nil)
	err := otc.Register(reg, otc.Tool{
		ID:          "Calculator.Add",
		Version:     "1.0.0",
		Description: "Adds two numbers together.",
	}, func(ctx context.Context, in AddInput) (float64, error) {
		return in.A + in.B, nil
	})
	if err != nil {
		log.Fatal(err)
	}
	err = otc.Register(reg, otc.Tool{
		ID:          "Doorbell.Ring",
		Version:     "0.1.0",
		Description: "Rings a doorbell given a doorbell ID.",
	}, func(ctx context.Context, in RingInput) (otc.NoOutput, error) {
		if !slices.Contains([]string{"doorbell42", "doorbell84"}, in.DoorbellID) {
			return otc.NoOutput{}, &otc.ToolError{
				Message:                 "Doorbell ID not found",
				CanRetry:                true,
				RetryAfter:              500 * time.Millisecond,
				AdditionalPromptContent: "ids: doorbell42,doorbell84",
			}
		}
		return otc.NoOutput{}, nil
	})
	if err != nil {
		log.Fatal(err)
	}
	return httptest.NewServer(otc.NewHandler(reg, nil))
}

func ExampleClient_ListTools() {
	srv := startExampleServer()
	defer srv.Close()

	c, err := client.New(srv.URL, nil)
	if err != nil {
		log.Fatal(err)
	}
	defs, err := c.ListTools(context.Background())
	if err != nil {
		log.Fatal(err)
	}
	for _, d := range defs {
		fmt.Printf("%s (%s): %s\n", d.ID, d.Name, d.Description)
	}
	// Output:
	// Calculator.Add@1.0.0 (Calculator_Add): Adds two numbers together.
	// Doorbell.Ring@0.1.0 (Doorbell_Ring): Rings a doorbell given a doorbell ID.
}

func ExampleClient_Call() {
	srv := startExampleServer()
	defer srv.Close()
	ctx := context.Background()

	c, err := client.New(srv.URL, nil)
	if err != nil {
		log.Fatal(err)
	}

	// Success: the value comes back as raw JSON.
	res, err := c.Call(ctx, "Calculator.Add@1.0.0", map[string]any{"a": 10, "b": 5},
		&client.CallOptions{CallID: "123e4567-e89b-12d3-a456-426614174000"})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(res.CallID, string(res.Value))

	// The server refuses input that does not match the schema.
	_, err = c.Call(ctx, "Calculator.Add", map[string]any{"a": 10, "b": "infinity"}, nil)
	if refused, ok := errors.AsType[*otc.Error](err); ok && refused.Code == otc.CodeInvalidInput {
		fmt.Println(refused.Message+":", refused.ParameterErrors)
	}

	// The tool ran and failed, and says what the model could try next.
	_, err = c.Call(ctx, "Doorbell.Ring", map[string]any{"doorbell_id": "doorbell1"}, nil)
	if failed, ok := errors.AsType[*otc.ToolError](err); ok {
		fmt.Printf("%s; retry: %t after %v; %s\n", failed.Message, failed.CanRetry, failed.RetryAfter, failed.AdditionalPromptContent)
	}
	// Output:
	// 123e4567-e89b-12d3-a456-426614174000 15
	// Some input parameters are invalid: map[b:Must be a number]
	// Doorbell ID not found; retry: true after 500ms; ids: doorbell42,doorbell84
}

func ExampleCallAs() {
	srv := startExampleServer()
	defer srv.Close()

	c, err := client.New(srv.URL, nil)
	if err != nil {
		log.Fatal(err)
	}
	sum, err := client.CallAs[float64](context.Background(), c, "Calculator.Add", AddInput{A: 1.5, B: 2}, nil)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(sum)
	// Output:
	// 3.5
}

// A Toolset declares a server's tools to a model. When the model answers
// with a tool call, Lookup turns the name it chose back into the tool id.
func ExampleToolset_OpenAI() {
	srv := startExampleServer()
	defer srv.Close()
	ctx := context.Background()

	c, err := client.New(srv.URL, nil)
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

	// The "tools" array of a Chat Completions request.
	decl, err := json.MarshalIndent(tools.OpenAI()[0], "", "  ")
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(string(decl))

	// The model's answer: a function name and its arguments as JSON.
	name, arguments := "Calculator_Add", `{"a": 2, "b": 3}`
	tool, ok := tools.Lookup(name)
	if !ok {
		log.Fatalf("the model chose an unknown tool %q", name)
	}
	res, err := c.Call(ctx, tool.ID, json.RawMessage(arguments), nil)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(tool.ID, "returned", string(res.Value))
	// Output:
	// {
	//   "type": "function",
	//   "function": {
	//     "name": "Calculator_Add",
	//     "description": "Adds two numbers together.",
	//     "parameters": {
	//       "properties": {
	//         "a": {
	//           "type": "number",
	//           "description": "The first number to add."
	//         },
	//         "b": {
	//           "type": "number",
	//           "description": "The second number to add."
	//         }
	//       },
	//       "additionalProperties": false,
	//       "type": "object",
	//       "required": [
	//         "a",
	//         "b"
	//       ]
	//     }
	//   }
	// }
	// Calculator.Add@1.0.0 returned 5
}

func ExampleToolset_Anthropic() {
	srv := startExampleServer()
	defer srv.Close()

	c, err := client.New(srv.URL, nil)
	if err != nil {
		log.Fatal(err)
	}
	defs, err := c.ListTools(context.Background())
	if err != nil {
		log.Fatal(err)
	}

	tools, err := export.New(defs, nil)
	if err != nil {
		log.Fatal(err)
	}
	// The "tools" array of a Messages request.
	decl, err := json.MarshalIndent(tools.Anthropic()[1], "", "  ")
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(string(decl))
	// Output:
	// {
	//   "name": "Doorbell_Ring",
	//   "description": "Rings a doorbell given a doorbell ID.",
	//   "input_schema": {
	//     "properties": {
	//       "doorbell_id": {
	//         "type": "string",
	//         "description": "The ID of the doorbell to ring."
	//       }
	//     },
	//     "additionalProperties": false,
	//     "type": "object",
	//     "required": [
	//       "doorbell_id"
	//     ]
	//   }
	// }
}

// Retries are opt-in. Here the first ring names an unknown doorbell, the
// server says the call can be retried, and the retry (same call id) finds
// the doorbell registered in the meantime.
func ExampleRetryPolicy() {
	reg := otc.NewRegistry(nil)
	var rings atomic.Int32 // the server runs the tool on another goroutine
	err := otc.Register(reg, otc.Tool{
		ID:          "Doorbell.Ring",
		Version:     "0.1.0",
		Description: "Rings a doorbell given a doorbell ID.",
	}, func(ctx context.Context, in RingInput) (otc.NoOutput, error) {
		if rings.Add(1) == 1 {
			return otc.NoOutput{}, &otc.ToolError{Message: "Doorbell is pairing", CanRetry: true, RetryAfter: 10 * time.Millisecond}
		}
		return otc.NoOutput{}, nil
	})
	if err != nil {
		log.Fatal(err)
	}
	srv := httptest.NewServer(otc.NewHandler(reg, nil))
	defer srv.Close()

	c, err := client.New(srv.URL, &client.Options{
		Retry: &client.RetryPolicy{MaxAttempts: 3, MaxWait: 2 * time.Second},
	})
	if err != nil {
		log.Fatal(err)
	}
	res, err := c.Call(context.Background(), "Doorbell.Ring", RingInput{DoorbellID: "doorbell42"}, &client.CallOptions{CallID: "ring-1"})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(res.CallID, "rang after", rings.Load(), "attempts")
	// Output:
	// ring-1 rang after 2 attempts
}

// What a model reads of a tool's error, for an agent that hands results to
// a model itself.
func ExampleModelText() {
	text, ok := client.ModelText(nil, &otc.ToolError{
		Message:                 "Doorbell ID not found",
		AdditionalPromptContent: "ids: doorbell42,doorbell84",
		CanRetry:                true,
		RetryAfter:              500 * time.Millisecond,
	})
	fmt.Printf("%v\n%s\n", ok, text)
	text, _ = client.ModelText(&client.Result{Value: json.RawMessage(`"express to FR: 25.00 EUR"`)}, nil)
	fmt.Println(text)
	// Output:
	// true
	// Doorbell ID not found
	//
	// ids: doorbell42,doorbell84
	//
	// This may succeed if tried again after 500ms.
	// express to FR: 25.00 EUR
}
