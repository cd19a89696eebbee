package docs_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http/httptest"
	"regexp"
	"strings"

	"github.com/otcgo/otc"
	"github.com/otcgo/otc/mcp"
)

// refundTool registers a tool that asks its user to confirm before it acts.
func refundTool(reg *otc.Registry) {
	// docs:start elicit
	type Confirm struct {
		OK bool `json:"ok" jsonschema:"required,title=Refund?,description=Yes to refund the order."`
	}
	err := otc.Register(reg, otc.Tool{ID: "Shop.Refund", Version: "1.0.0", Description: "Refunds an order."},
		func(ctx context.Context, in struct {
			Order string `json:"order" jsonschema:"description=The order to refund."`
		}) (string, error) {
			var answer Confirm
			action, err := otc.Elicit(ctx, "Refund order "+in.Order+"?", &answer)
			switch {
			case errors.Is(err, otc.ErrInputUnsupported): // the caller cannot answer: go on
			case err != nil:
				return "", err // an input_required round, or an invalid answer
			case action != otc.ElicitAccept || !answer.OK:
				return "", &otc.ToolError{Message: "The refund was not confirmed."}
			}
			return "refunded " + in.Order, nil
		})
	// docs:end elicit
	if err != nil {
		panic(err)
	}
}

// requestStates matches the sealed states of answers, which change from
// run to run.
var requestStates = regexp.MustCompile(`"requestState":"[^"]*"`)

// A tool that asks, called in two rounds over MCP 2026-07-28.
func Example_inputRequired() {
	reg := otc.NewRegistry(nil)
	refundTool(reg)
	h := mcp.NewHandler(reg, nil)
	meta := `"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{"elicitation":{}}}`
	post := func(params string) string {
		req := httptest.NewRequest("POST", "/mcp", strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":`+params+`}`))
		for k, v := range map[string]string{"Content-Type": "application/json", "Accept": "application/json, text/event-stream",
			"MCP-Protocol-Version": "2026-07-28", "Mcp-Method": "tools/call", "Mcp-Name": "Shop_Refund"} {
			req.Header.Set(k, v)
		}
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		body, _ := io.ReadAll(rec.Result().Body)
		fmt.Println(rec.Code, requestStates.ReplaceAllString(strings.TrimSpace(string(body)), `"requestState":"…"`))
		return string(body)
	}
	first := post(`{"name":"Shop_Refund","arguments":{"order":"A-1001"},` + meta + `}`)
	var r struct {
		Result struct {
			RequestState string `json:"requestState"`
		} `json:"result"`
	}
	_ = json.Unmarshal([]byte(first), &r)
	post(`{"name":"Shop_Refund","arguments":{"order":"A-1001"},"inputResponses":{"q1":{"action":"accept","content":{"ok":true}}},` +
		`"requestState":"` + r.Result.RequestState + `",` + meta + `}`)
	// Output:
	// 200 {"jsonrpc":"2.0","id":1,"result":{"resultType":"input_required","inputRequests":{"q1":{"method":"elicitation/create","params":{"message":"Refund order A-1001?","requestedSchema":{"properties":{"ok":{"type":"boolean","title":"Refund?","description":"Yes to refund the order."}},"type":"object","required":["ok"]}}}},"requestState":"…","_meta":{"io.modelcontextprotocol/serverInfo":{"name":"otc","version":"0.0.0"}}}}
	// 200 {"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":"refunded A-1001"}],"structuredContent":{"result":"refunded A-1001"},"_meta":{"io.modelcontextprotocol/serverInfo":{"name":"otc","version":"0.0.0"}},"resultType":"complete"}}
}

// The same tool over OTC: the call ends with a tool error naming the
// question, and the retry carries the answer in the call context.
func Example_askOverOTC() {
	reg := otc.NewRegistry(nil)
	refundTool(reg)
	h := otc.NewHandler(reg, nil)
	send(h, "POST", "/call", `{"request":{"tool_id":"Shop.Refund","call_id":"c1","input":{"order":"A-1001"}}}`, nil)
	send(h, "POST", "/call", `{"request":{"tool_id":"Shop.Refund","call_id":"c2","input":{"order":"A-1001"},`+
		`"context":{"input_responses":{"q1":{"action":"accept","content":{"ok":true}}}}}}`, nil)
	// Output:
	// 200
	// {"$schema":"otc://1.0","result":{"call_id":"c1","duration":…,"success":false,"error":{"message":"Tool 'Shop_Refund' needs answers before it can go on:\n- q1: Refund order A-1001?","developer_message":"the tool needs input from the caller before it can go on: q1 (elicitation/create)","can_retry":true,"additional_prompt_content":"Ask for these answers (the user for an elicitation, your model for a sampling, the client for roots), then call the tool again with the same input and every answer in the call context's input_responses, by key: request.context.input_responses over OTC, context.input_responses in the REST view, for example {\"input_responses\": {\"q1\": {\"action\": \"accept\", \"content\": {...}}}}. The questions, by key: {\"q1\":{\"method\":\"elicitation/create\",\"params\":{\"message\":\"Refund order A-1001?\",\"requestedSchema\":{\"properties\":{\"ok\":{\"type\":\"boolean\",\"title\":\"Refund?\",\"description\":\"Yes to refund the order.\"}},\"type\":\"object\",\"required\":[\"ok\"]}},\"answer\":\"an object with action accept, decline or cancel, and when accepted a content object matching params.requestedSchema\"}}"}}}
	// 200
	// {"$schema":"otc://1.0","result":{"call_id":"c2","duration":…,"success":true,"value":"refunded A-1001"}}
}
