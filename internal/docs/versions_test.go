package docs_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"time"

	"github.com/otcgo/otc"
)

// Several versions of one tool, and how a call's tool id picks one.
func Example_versions() {
	reg := otc.NewRegistry(nil)
	for _, version := range []string{"1.0.0", "1.5.0", "9.0.0", "10.0.0"} {
		err := otc.Register(reg, otc.Tool{ID: "Calculator.Add", Version: version, Description: "Adds two numbers together."},
			func(ctx context.Context, in AddInput) (string, error) {
				return "ran " + version, nil
			})
		if err != nil {
			panic(err)
		}
	}
	for _, id := range []string{"Calculator.Add@1.5.0", "Calculator.Add@1", "Calculator.Add", "Calculator.Add@1.0"} {
		res, err := reg.Call(context.Background(), &otc.CallRequest{ToolID: id, Input: json.RawMessage(`{"a":1,"b":2}`)})
		if err != nil {
			fmt.Printf("%s: %v\n", id, err)
			continue
		}
		fmt.Printf("%s: %s\n", id, res.Value)
	}
	// Output:
	// Calculator.Add@1.5.0: "ran 1.5.0"
	// Calculator.Add@1: "ran 1.0.0"
	// Calculator.Add: "ran 10.0.0"
	// Calculator.Add@1.0: otc: Tool ID 'Calculator.Add@1.0' is malformed: tool_id must be Toolkit.Tool, Toolkit.Tool@x or Toolkit.Tool@x.y.z: letters, digits and underscores in Toolkit and Tool, integers without leading zeros in the version
}

// A tool error, as the function returns it and as the wire carries it.
func Example_toolError() {
	reg := otc.NewRegistry(nil)
	type ringInput struct {
		DoorbellID string `json:"doorbell_id" jsonschema:"description=The doorbell to ring."`
	}
	// docs:start tool-error
	err := otc.Register(reg, otc.Tool{ID: "Doorbell.Ring", Version: "1.0.0", Description: "Rings a doorbell."},
		func(ctx context.Context, in ringInput) (otc.NoOutput, error) {
			return otc.NoOutput{}, &otc.ToolError{
				Message:                 "Doorbell ID not found",
				DeveloperMessage:        "no doorbell " + in.DoorbellID + " in the building's register",
				CanRetry:                true,
				RetryAfter:              2 * time.Second,
				AdditionalPromptContent: "Known doorbells: doorbell42, doorbell84",
			}
		})
	// docs:end tool-error
	if err != nil {
		panic(err)
	}
	send(otc.NewHandler(reg, nil), "POST", "/call",
		`{"request":{"tool_id":"Doorbell.Ring","call_id":"c1","input":{"doorbell_id":"doorbell1"}}}`, nil)
	// Output:
	// 200
	// {"$schema":"otc://1.0","result":{"call_id":"c1","duration":…,"success":false,"error":{"message":"Doorbell ID not found","developer_message":"no doorbell doorbell1 in the building's register","can_retry":true,"additional_prompt_content":"Known doorbells: doorbell42, doorbell84","retry_after_ms":2000}}}
}

// Failures before the function runs are *otc.Error values.
func Example_errors() {
	reg := calculator(nil)
	// docs:start errors
	_, err := reg.Call(context.Background(), &otc.CallRequest{
		ToolID: "Calculator.Add",
		Input:  json.RawMessage(`{"a":10,"b":"infinity","c":1}`),
	})
	var e *otc.Error
	if errors.As(err, &e) {
		fmt.Println(e.Code, e.Code.HTTPStatus(), e.Message)
		fmt.Println(e.ParameterErrors)
	}
	// docs:end errors

	// Output:
	// invalid_input 422 Some input parameters are invalid
	// map[b:Must be a number c:Is not an accepted parameter]
}

// A panic is a tool error; the server goes on serving.
func Example_panic() {
	reg := otc.NewRegistry(&otc.RegistryOptions{Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	err := otc.Register(reg, otc.Tool{ID: "Buggy.Divide", Version: "1.0.0", Description: "Divides by zero."},
		func(ctx context.Context, in struct{}) (int, error) {
			var zero int
			return 1 / zero, nil
		})
	if err != nil {
		panic(err)
	}
	res, err := reg.Call(context.Background(), &otc.CallRequest{ToolID: "Buggy.Divide"})
	fmt.Println(err)
	fmt.Println(res.Error.Message)
	fmt.Println(res.Error.DeveloperMessage)
	fmt.Println(res.Unexpected, otc.OutcomeOf(res, err))
	// Output:
	// <nil>
	// Tool 'Buggy_Divide' failed unexpectedly
	// Buggy.Divide@1.0.0 panicked: runtime error: integer divide by zero
	// true fault
}
