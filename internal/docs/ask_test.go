package docs_test

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"strings"

	"github.com/otcgo/otc"
	"github.com/otcgo/otc/mcp"
)

// A tool that asks its user to confirm, answered over stdio at 2025-11-25.
func Example_ask() {
	reg := otc.NewRegistry(nil)
	type refundInput struct {
		Order string `json:"order" jsonschema:"description=The order to refund."`
	}
	// docs:start ask
	err := otc.Register(reg, otc.Tool{ID: "Shop.Refund", Version: "1.0.0", Description: "Refunds an order once the user confirms."},
		func(ctx context.Context, in refundInput) (string, error) {
			params, err := json.Marshal(map[string]any{
				"message":         "Refund order " + in.Order + "?",
				"requestedSchema": map[string]any{"type": "object", "properties": map[string]any{}},
			})
			if err != nil {
				return "", err
			}
			answers, err := otc.Ask(ctx, otc.InputRequest{Method: otc.MethodElicit, Params: params})
			if err != nil {
				return "", err // the user could not be asked: refund nothing
			}
			var answer struct {
				Action string `json:"action"` // accept, decline or cancel
			}
			if err := json.Unmarshal(answers[0], &answer); err != nil {
				return "", err
			}
			if answer.Action != "accept" {
				return "not refunded", nil
			}
			return "refunded " + in.Order, nil
		})
	// docs:end ask
	if err != nil {
		panic(err)
	}
	// The client's side of the pipe.
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	done := make(chan error, 1)
	go func() {
		done <- mcp.Serve(context.Background(), reg, inR, outW, nil)
		outW.Close()
	}()
	lines := bufio.NewScanner(outR)
	send := func(line string) { _, _ = io.WriteString(inW, line+"\n") }
	next := func() string { lines.Scan(); return lines.Text() }

	send(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{"elicitation":{}},"clientInfo":{"name":"example","version":"1.0.0"}}}`)
	next() // the initialize result
	send(`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"Shop_Refund","arguments":{"order":"A-1001"}}}`)
	question := next()
	var req struct {
		ID string `json:"id"` // random: printed as otc-…
	}
	_ = json.Unmarshal([]byte(question), &req)
	fmt.Println(strings.Replace(question, req.ID, "otc-…", 1))
	send(`{"jsonrpc":"2.0","id":"` + req.ID + `","result":{"action":"accept","content":{}}}`)
	fmt.Println(next())
	inW.Close()
	fmt.Println("end of input:", <-done)
	// Output:
	// {"jsonrpc":"2.0","id":"otc-…","method":"elicitation/create","params":{"message":"Refund order A-1001?","requestedSchema":{"properties":{},"type":"object"}}}
	// {"jsonrpc":"2.0","id":2,"result":{"content":[{"type":"text","text":"refunded A-1001"}],"structuredContent":{"result":"refunded A-1001"}}}
	// end of input: <nil>
}
