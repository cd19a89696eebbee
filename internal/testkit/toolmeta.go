package testkit

import (
	"context"
	"log/slog"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/otcgo/otc"
)

// IconPNG is a data: URI holding the first bytes of a PNG: enough for the
// registry, which checks the encoding and not the image.
const IconPNG = "data:image/png;base64,iVBORw0KGgo="

// RefundTool is Payments.Refund@1.0.0 with every kind of tool metadata:
// a title, all four hints (destructive, not idempotent, closed world),
// two icons and a _meta. Each call returns a new value, the caller's to
// change.
func RefundTool() otc.Tool {
	return otc.Tool{
		ID: "Payments.Refund", Version: "1.0.0", Description: "Refunds an order.",
		Title: "Refund an order",
		Annotations: &otc.ToolAnnotations{
			ReadOnlyHint: new(false), DestructiveHint: new(true), IdempotentHint: new(false), OpenWorldHint: new(false),
		},
		Icons: []otc.Icon{
			{Src: "https://example.com/refund.svg", MIMEType: "image/svg+xml", Sizes: []string{"any"}, Theme: "light"},
			{Src: IconPNG, Sizes: []string{"48x48"}},
		},
		Meta: map[string]any{"com.example/owner": "payments", "com.example/tier": 2},
	}
}

// The metadata of RefundTool as every wire format that carries it writes
// it, in MCP's shapes.
const (
	RefundAnnotations = `{"readOnlyHint":false,"destructiveHint":true,"idempotentHint":false,"openWorldHint":false}`
	RefundIcons       = `[{"src":"https://example.com/refund.svg","mimeType":"image/svg+xml","sizes":["any"],"theme":"light"},` +
		`{"src":"` + IconPNG + `","sizes":["48x48"]}]`
	RefundMeta = `{"com.example/owner":"payments","com.example/tier":2}`
)

// NewMetaRegistry returns a registry of three tools that take no input
// and return nothing: RefundTool; Calculator.Add@1.0.0 titled "Add two
// numbers", with one hint, read-only; and Util.Noop@1.0.0, without
// metadata.
func NewMetaRegistry(tb testing.TB) *otc.Registry {
	tb.Helper()
	reg := otc.NewRegistry(&otc.RegistryOptions{Logger: slog.New(slog.DiscardHandler)})
	noop := func(context.Context, struct{}) (otc.NoOutput, error) { return otc.NoOutput{}, nil }
	require.NoError(tb, otc.Register(reg, RefundTool(), noop))
	require.NoError(tb, otc.Register(reg, otc.Tool{
		ID: "Calculator.Add", Version: "1.0.0", Description: "Adds.", Title: "Add two numbers",
		Annotations: &otc.ToolAnnotations{ReadOnlyHint: new(true)},
	}, noop))
	require.NoError(tb, otc.Register(reg, otc.Tool{ID: "Util.Noop", Version: "1.0.0", Description: "Does nothing."}, noop))
	return reg
}
