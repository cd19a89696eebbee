package testkit

import (
	"context"
	"log/slog"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/otcgo/otc"
)

// AddInput is the input of Calculator.Add, the tool of the protocol's
// example exchanges: add two numbers.
type AddInput struct {
	A float64 `json:"a" jsonschema:"description=The first number to add."`
	B float64 `json:"b" jsonschema:"description=The second number to add."`
}

// Add is the function of Calculator.Add: it returns the sum.
func Add(_ context.Context, in AddInput) (float64, error) {
	return in.A + in.B, nil
}

// AddTool is the definition under which the benchmarks register Add, as
// tool id at version.
func AddTool(id, version string) otc.Tool {
	return otc.Tool{
		ID:                id,
		Version:           version,
		Description:       "Adds two numbers together.",
		OutputDescription: "The sum of the two numbers.",
	}
}

// NewAddRegistry returns the benchmarks' registry: Calculator.Add@1.0.0
// alone, with mw as the registry's middleware and its logs discarded.
func NewAddRegistry(tb testing.TB, mw ...otc.Middleware) *otc.Registry {
	tb.Helper()
	reg := otc.NewRegistry(&otc.RegistryOptions{Logger: slog.New(slog.DiscardHandler), Middleware: mw})
	require.NoError(tb, otc.Register(reg, AddTool("Calculator.Add", "1.0.0"), Add))
	return reg
}

// The call of Calculator.Add@1.0.0 that adds 10 and 5, in the wire
// formats that the benchmarks of several packages send it in.
const (
	// OTCAddCall is the OTC call body of the protocol's example of a
	// successful call.
	OTCAddCall = `{"$schema":"otc://1.0","request":{"call_id":"123e4567-e89b-12d3-a456-426614174000","tool_id":"Calculator.Add@1.0.0","input":{"a":10,"b":5}}}`
	// MCPAddCall is the same call as an MCP tools/call request of the
	// initialize era.
	MCPAddCall = `{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"Calculator_Add","arguments":{"a":10,"b":5}}}`
)

// Address is a nested object of a tool's input, for parameter_errors keys
// such as "address.zip".
type Address struct {
	Street string `json:"street" jsonschema:"description=Street and house number."`
	Zip    string `json:"zip" jsonschema:"description=Five-digit postal code.,pattern=^[0-9]{5}$"`
}

// ModeInput selects how a tool that can behave in several ways behaves
// (Errors.Raise and Secure.Use of the HTTP fixtures).
type ModeInput struct {
	Mode string `json:"mode,omitempty" jsonschema:"description=What the tool should do."`
}

// InspectOutput is what Inspect read from its context.
type InspectOutput struct {
	CallID  string `json:"call_id"`
	TraceID string `json:"trace_id"`
	UserID  string `json:"user_id"`
	ToolID  string `json:"tool_id"`
}

// Inspect is the function of Meta.Inspect: it reports the call id, trace
// id, user id and tool id its context carries.
func Inspect(ctx context.Context, _ struct{}) (InspectOutput, error) {
	return InspectOutput{
		CallID:  otc.CallID(ctx),
		TraceID: otc.TraceID(ctx),
		UserID:  otc.UserID(ctx),
		ToolID:  otc.ToolID(ctx),
	}, nil
}

// Noop is the function of a tool that does nothing and returns nothing.
func Noop(context.Context, struct{}) (otc.NoOutput, error) {
	return otc.NoOutput{}, nil
}

// OwnToolID is the function of Versions.Which, registered in several
// versions: it returns the id, with version, of the tool that ran.
func OwnToolID(ctx context.Context, _ struct{}) (string, error) {
	return otc.ToolID(ctx), nil
}
