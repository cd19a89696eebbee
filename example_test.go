package otc_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"

	"github.com/otcgo/otc"
)

type exampleAddInput struct {
	A float64 `json:"a" jsonschema:"description=The first number to add."`
	B float64 `json:"b" jsonschema:"description=The second number to add."`
}

// Register a typed function; its schema is reflected from exampleAddInput.
func ExampleRegister() {
	reg := otc.NewRegistry(nil)
	err := otc.Register(reg, otc.Tool{
		ID:                "Calculator.Add",
		Version:           "1.0.0",
		Description:       "Adds two numbers together.",
		OutputDescription: "The sum of the two numbers.",
	}, func(ctx context.Context, in exampleAddInput) (float64, error) {
		return in.A + in.B, nil
	})
	if err != nil {
		panic(err)
	}
	def := reg.Tools()[0]
	fmt.Println(def.ID, def.Name)
	fmt.Println(string(def.InputSchema.Parameters))
	fmt.Println(string(def.OutputSchema))
	// Output:
	// Calculator.Add@1.0.0 Calculator_Add
	// {"properties":{"a":{"type":"number","description":"The first number to add."},"b":{"type":"number","description":"The second number to add."}},"additionalProperties":false,"type":"object","required":["a","b"]}
	// {"type":"number","description":"The sum of the two numbers."}
}

// Registration fails, naming the tool and the culprit, rather than
// serving a tool a model could not use.
func ExampleRegister_error() {
	type node struct {
		Name     string `json:"name" jsonschema:"description=The node's name."`
		Children []node `json:"children" jsonschema:"description=The node's children."`
	}
	reg := otc.NewRegistry(nil)
	err := otc.Register(reg, otc.Tool{ID: "Tree.Walk", Version: "1.0.0", Description: "Walks a tree."},
		func(ctx context.Context, in node) (int, error) { return 0, nil })
	fmt.Println(err)
	// Output:
	// otc: tool "Tree.Walk@1.0.0": input type: otc_test.node.Children[] refers back to otc_test.node: a recursive type cannot be written as an inline schema
}

// Mount the handler on a mux, here under /otc, and call a tool over HTTP.
func ExampleNewHandler() {
	reg := otc.NewRegistry(nil)
	_ = otc.Register(reg, otc.Tool{ID: "Calculator.Add", Version: "1.0.0", Description: "Adds two numbers together."},
		func(ctx context.Context, in exampleAddInput) (float64, error) { return in.A + in.B, nil })

	mux := http.NewServeMux()
	mux.Handle("/otc/", http.StripPrefix("/otc", otc.NewHandler(reg, nil)))
	srv := httptest.NewServer(mux)
	defer srv.Close()

	body := `{"request":{"call_id":"call-1","tool_id":"Calculator.Add","input":{"a":10,"b":5}}}`
	resp, err := http.Post(srv.URL+"/otc/tools/call", "application/json", strings.NewReader(body))
	if err != nil {
		panic(err)
	}
	defer resp.Body.Close()
	var out struct {
		Result struct {
			CallID  string          `json:"call_id"`
			Success bool            `json:"success"`
			Value   json.RawMessage `json:"value"`
		} `json:"result"`
	}
	data, _ := io.ReadAll(resp.Body)
	_ = json.Unmarshal(data, &out)
	fmt.Println(resp.StatusCode, out.Result.CallID, out.Result.Success, string(out.Result.Value))
	// Output:
	// 200 call-1 true 15
}

// A tool reports a failure the model can act on with a *ToolError.
func ExampleToolError() {
	reg := otc.NewRegistry(nil)
	type ringInput struct {
		ID string `json:"doorbell_id" jsonschema:"description=The ID of the doorbell to ring."`
	}
	_ = otc.Register(reg, otc.Tool{ID: "Doorbell.Ring", Version: "0.1.0", Description: "Rings a doorbell given a doorbell ID."},
		func(ctx context.Context, in ringInput) (otc.NoOutput, error) {
			return otc.NoOutput{}, &otc.ToolError{
				Message:                 "Doorbell ID not found",
				CanRetry:                true,
				AdditionalPromptContent: "ids: doorbell42,doorbell84",
			}
		})
	res, err := reg.Call(context.Background(), &otc.CallRequest{
		ToolID: "Doorbell.Ring",
		Input:  json.RawMessage(`{"doorbell_id":"doorbell1"}`),
	})
	if err != nil {
		panic(err)
	}
	fmt.Println(res.Error.Message, res.Error.CanRetry, res.Error.AdditionalPromptContent)
	// Output:
	// Doorbell ID not found true ids: doorbell42,doorbell84
}

// Registry.Call is the protocol-neutral call path: failures before the
// function runs are *otc.Error values.
func ExampleRegistry_Call() {
	reg := otc.NewRegistry(nil)
	_ = otc.Register(reg, otc.Tool{ID: "Calculator.Add", Version: "1.0.0", Description: "Adds two numbers together."},
		func(ctx context.Context, in exampleAddInput) (float64, error) { return in.A + in.B, nil })

	_, err := reg.Call(context.Background(), &otc.CallRequest{
		ToolID: "Calculator.Add@1",
		Input:  json.RawMessage(`{"a":10,"b":"infinity"}`),
	})
	var e *otc.Error
	if errors.As(err, &e) {
		fmt.Println(e.Code.HTTPStatus(), e.Message, e.ParameterErrors)
	}
	// Output:
	// 422 Some input parameters are invalid map[b:Must be a number]
}

// A tool declares the secrets it needs and reads them from its context.
func ExampleSecret() {
	type in struct {
		Text string `json:"text" jsonschema:"description=What to send."`
	}
	reg := otc.NewRegistry(nil)
	_ = otc.Register(reg, otc.Tool{
		ID:           "Sms.Send",
		Version:      "1.0.0",
		Description:  "Sends a text message.",
		Requirements: &otc.Requirements{Secrets: []otc.SecretRequirement{{ID: "SMS_API_KEY"}}},
	}, func(ctx context.Context, in in) (string, error) {
		key, _ := otc.Secret(ctx, "SMS_API_KEY")
		return fmt.Sprintf("sent with a key of %d bytes", len(key)), nil
	})

	// Without the secret, the call is refused before the function runs.
	_, err := reg.Call(context.Background(), &otc.CallRequest{ToolID: "Sms.Send", Input: json.RawMessage(`{"text":"hi"}`)})
	fmt.Println(err)

	res, _ := reg.Call(context.Background(), &otc.CallRequest{
		ToolID:  "Sms.Send",
		Input:   json.RawMessage(`{"text":"hi"}`),
		Context: otc.CallContext{Secrets: []otc.ToolSecret{{ID: "SMS_API_KEY", Value: "s3cret"}}},
	})
	fmt.Println(string(res.Value))
	// Output:
	// otc: Tool 'Sms_Send' cannot run without secret SMS_API_KEY: Sms.Send@1.0.0 requires secret SMS_API_KEY in the call context
	// "sent with a key of 6 bytes"
}
