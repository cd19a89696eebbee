package otc_test

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/otcgo/otc"
)

// Middleware that refuses calls of one tool and reports the outcome of
// every call, whatever the wire format it came through.
func ExampleMiddleware() {
	paused := func(next otc.CallFunc) otc.CallFunc {
		return func(ctx context.Context, c *otc.Call) (otc.CallResult, error) {
			if c.Tool != nil && c.Tool.Name == "Doorbell_Ring" {
				return otc.CallResult{}, &otc.Error{Code: otc.CodeServerError, Message: "Doorbells are paused"}
			}
			res, err := next(ctx, c)
			fmt.Println(c.ToolID, otc.OutcomeOf(res, err))
			return res, err
		}
	}
	reg := otc.NewRegistry(&otc.RegistryOptions{Middleware: []otc.Middleware{paused}})
	_ = otc.Register(reg, otc.Tool{ID: "Calculator.Add", Version: "1.0.0", Description: "Adds two numbers together."},
		func(ctx context.Context, in exampleAddInput) (float64, error) { return in.A + in.B, nil })
	_ = otc.Register(reg, otc.Tool{ID: "Doorbell.Ring", Version: "1.0.0", Description: "Rings the doorbell."},
		func(ctx context.Context, in struct{}) (otc.NoOutput, error) { return otc.NoOutput{}, nil })

	ctx := context.Background()
	_, _ = reg.Call(ctx, &otc.CallRequest{ToolID: "Calculator.Add", Input: json.RawMessage(`{"a":1,"b":2}`)})
	_, _ = reg.Call(ctx, &otc.CallRequest{ToolID: "Calculator.Add", Input: json.RawMessage(`{"a":"one","b":2}`)})
	_, _ = reg.Call(ctx, &otc.CallRequest{ToolID: "Calculator.Mul"})
	_, err := reg.Call(ctx, &otc.CallRequest{ToolID: "Doorbell.Ring"})
	fmt.Println(err)
	// Output:
	// Calculator.Add success
	// Calculator.Add invalid_input
	// Calculator.Mul not_found
	// otc: Doorbells are paused
}

// A tool with a timeout and a cap on concurrent calls.
func ExampleTool_limits() {
	reg := otc.NewRegistry(nil)
	_ = otc.Register(reg, otc.Tool{
		ID: "Report.Build", Version: "1.0.0", Description: "Builds the monthly report.",
		Timeout:       50 * time.Millisecond,
		MaxConcurrent: 2,
	}, func(ctx context.Context, in struct{}) (string, error) {
		select {
		case <-time.After(time.Second): // slower than the timeout allows
			return "report", nil
		case <-ctx.Done():
			return "", ctx.Err()
		}
	})
	res, _ := reg.Call(context.Background(), &otc.CallRequest{ToolID: "Report.Build"})
	fmt.Println(res.Error.Message, res.Error.CanRetry)
	// Output:
	// Tool 'Report_Build' did not finish within 50ms true
}
