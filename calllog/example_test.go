package calllog_test

import (
	"context"
	"encoding/json"
	"log/slog"
	"os"

	"github.com/otcgo/otc"
	"github.com/otcgo/otc/calllog"
)

// One record per call. The time and duration are left out here only to
// keep the output stable.
func ExampleNew() {
	stable := func(groups []string, a slog.Attr) slog.Attr {
		if a.Key == slog.TimeKey || a.Key == "duration_ms" {
			return slog.Attr{}
		}
		return a
	}
	logger := slog.New(slog.NewJSONHandler(os.Stdout, &slog.HandlerOptions{ReplaceAttr: stable}))
	reg := otc.NewRegistry(&otc.RegistryOptions{Middleware: []otc.Middleware{calllog.New(logger, nil)}})
	_ = otc.Register(reg, otc.Tool{ID: "Calculator.Add", Version: "1.0.0", Description: "Adds two numbers together."},
		func(ctx context.Context, in struct {
			A float64 `json:"a" jsonschema:"description=The first number to add."`
			B float64 `json:"b" jsonschema:"description=The second number to add."`
		}) (float64, error) {
			return in.A + in.B, nil
		})

	_, _ = reg.Call(context.Background(), &otc.CallRequest{
		ToolID: "Calculator.Add", CallID: "call-1", Protocol: otc.ProtocolOTC,
		Input: json.RawMessage(`{"a":1,"b":2}`),
	})
	// Output:
	// {"level":"INFO","msg":"tool call","tool_id":"Calculator.Add@1.0.0","call_id":"call-1","protocol":"otc","outcome":"success"}
}
