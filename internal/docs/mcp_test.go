package docs_test

import (
	"context"
	"fmt"
	"log"
	"log/slog"
	"net/http"
	"os"
	"strings"

	"github.com/otcgo/otc"
	"github.com/otcgo/otc/mcp"
)

// A tool that needs a user id, called over MCP with and without the call
// context in _meta.
func Example_mcp() {
	reg := calculator(nil)
	err := otc.Register(reg, otc.Tool{
		ID: "Notes.Count", Version: "1.0.0", Description: "Counts the user's notes.",
		Requirements: &otc.Requirements{UserID: true},
	}, func(ctx context.Context, in struct{}) (string, error) {
		return otc.UserID(ctx) + " has 3 notes", nil
	})
	if err != nil {
		panic(err)
	}
	// docs:start mcp-http
	mux := http.NewServeMux()
	mux.Handle("/mcp", mcp.NewHandler(reg, &mcp.Options{Name: "calculator", Version: "1.0.0"}))
	// docs:end mcp-http

	headers := []string{"Accept", "application/json, text/event-stream", "MCP-Protocol-Version", mcp.Version20251125}
	send(mux, "POST", "/mcp", `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"Notes_Count",`+
		`"_meta":{"io.github.otcgo/context":{"user_id":"u1"},"io.github.otcgo/call_id":"3f1c-1"}}}`, headers)
	send(mux, "POST", "/mcp", `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"Notes_Count"}}`, headers)
	send(mux, "POST", "/mcp", `{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"Notes_Delete"}}`, headers)
	// Output:
	// 200
	// {"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":"u1 has 3 notes"}],"structuredContent":{"result":"u1 has 3 notes"}}}
	// 200
	// {"jsonrpc":"2.0","id":2,"result":{"content":[{"type":"text","text":"Tool 'Notes_Count' cannot run without a user id. The client sends them in _meta[\"io.github.otcgo/context\"]."}],"isError":true,"_meta":{"io.github.otcgo/error":{"code":"server_error","can_retry":false,"missing_requirements":{"user_id":true}}}}}
	// 200
	// {"jsonrpc":"2.0","id":3,"error":{"code":-32602,"message":"Tool 'Notes_Delete' was not found"}}
}

// A tool's title, hints, icon and _meta, as tools/list shows them in
// 2025-11-25 and in 2025-06-18, which has no icons.
func Example_toolMetadata() {
	type refundInput struct {
		OrderID string `json:"order_id" jsonschema:"description=The order to refund."`
	}
	reg := otc.NewRegistry(nil)
	// docs:start tool-metadata
	err := otc.Register(reg, otc.Tool{
		ID:          "Payments.Refund",
		Version:     "1.0.0",
		Description: "Refunds an order in full.",
		Title:       "Refund an order",
		Annotations: &otc.ToolAnnotations{
			ReadOnlyHint:    new(false),
			DestructiveHint: new(true),  // the money is gone
			IdempotentHint:  new(false), // each call refunds again
			OpenWorldHint:   new(true),  // it reaches the payment provider
		},
		Icons: []otc.Icon{{Src: "https://example.com/icons/refund.png", MIMEType: "image/png", Sizes: []string{"48x48"}}},
		Meta:  map[string]any{"com.example/team": "payments"},
	}, func(ctx context.Context, in refundInput) (otc.NoOutput, error) {
		return otc.NoOutput{}, nil
	})
	// docs:end tool-metadata
	if err != nil {
		panic(err)
	}
	h := mcp.NewHandler(reg, nil)
	for _, version := range []string{mcp.Version20251125, mcp.Version20250618} {
		send(h, "POST", "/", `{"jsonrpc":"2.0","id":1,"method":"tools/list"}`,
			[]string{"Accept", "application/json, text/event-stream", "MCP-Protocol-Version", version})
	}
	// Output:
	// 200
	// {"jsonrpc":"2.0","id":1,"result":{"tools":[{"name":"Payments_Refund","title":"Refund an order","description":"Refunds an order in full.","inputSchema":{"properties":{"order_id":{"type":"string","description":"The order to refund."}},"additionalProperties":false,"type":"object","required":["order_id"]},"annotations":{"readOnlyHint":false,"destructiveHint":true,"idempotentHint":false,"openWorldHint":true},"icons":[{"src":"https://example.com/icons/refund.png","mimeType":"image/png","sizes":["48x48"]}],"_meta":{"com.example/team":"payments"}}]}}
	// 200
	// {"jsonrpc":"2.0","id":1,"result":{"tools":[{"name":"Payments_Refund","title":"Refund an order","description":"Refunds an order in full.","inputSchema":{"properties":{"order_id":{"type":"string","description":"The order to refund."}},"additionalProperties":false,"type":"object","required":["order_id"]},"annotations":{"readOnlyHint":false,"destructiveHint":true,"idempotentHint":false,"openWorldHint":true},"_meta":{"com.example/team":"payments"}}]}}
}

// Serving a registry on standard input and output.
func Example_stdio() {
	ctx := context.Background()
	reg := calculator(nil)
	// docs:start stdio
	err := mcp.ServeStdio(ctx, reg, &mcp.Options{Name: "calculator", Version: "1.0.0"})
	// docs:end stdio
	if err != nil {
		log.Fatal(err)
	}
}

// Content blocks, progress and log messages, over the stdio transport.
func Example_progress() {
	reg := otc.NewRegistry(nil)
	type chartInput struct {
		Title string `json:"title" jsonschema:"description=The chart's title."`
	}
	// docs:start progress
	err := otc.Register(reg, otc.Tool{ID: "Chart.Draw", Version: "1.0.0", Description: "Draws a chart."},
		func(ctx context.Context, in chartInput) (otc.Content, error) {
			otc.ReportProgress(ctx, 1, 2, "data read")
			otc.LogToClient(ctx, slog.LevelInfo, "drawing "+in.Title)
			png := []byte{0x89, 'P', 'N', 'G'}
			return otc.Content{
				otc.TextContent("The chart of " + in.Title),
				otc.ImageContent(png, "image/png"),
			}, nil
		})
	// docs:end progress
	if err != nil {
		panic(err)
	}
	session := strings.Join([]string{
		`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"example","version":"1.0.0"}}}`,
		`{"jsonrpc":"2.0","method":"notifications/initialized"}`,
		`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"Chart_Draw","arguments":{"title":"sales"},"_meta":{"progressToken":"p1"}}}`,
	}, "\n") + "\n"
	err = mcp.Serve(context.Background(), reg, strings.NewReader(session), os.Stdout, nil)
	fmt.Println("end of input:", err)
	// Unordered output:
	// {"jsonrpc":"2.0","id":1,"result":{"protocolVersion":"2025-11-25","capabilities":{"logging":{},"tools":{"listChanged":true}},"serverInfo":{"name":"otc","version":"0.0.0"}}}
	// {"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":"p1","progress":1,"total":2,"message":"data read"}}
	// {"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","data":"drawing sales"}}
	// {"jsonrpc":"2.0","id":2,"result":{"content":[{"type":"text","text":"The chart of sales"},{"type":"image","data":"iVBORw==","mimeType":"image/png"}]}}
	// end of input: <nil>
}
