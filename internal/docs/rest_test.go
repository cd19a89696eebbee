package docs_test

import (
	"net/http"

	"github.com/otcgo/otc/registryview"
	"github.com/otcgo/otc/rest"
)

// The REST view of a registry: the planner view, one tool, an invocation,
// and two refusals.
func Example_rest() {
	reg := calculator(nil)
	// docs:start rest
	mux := http.NewServeMux()
	mux.Handle("/v1/", http.StripPrefix("/v1", rest.NewHandler(reg, nil)))
	// docs:end rest

	send(mux, "GET", "/v1/tools", "", nil)
	send(mux, "GET", "/v1/tools/Calculator_Add", "", nil)
	send(mux, "POST", "/v1/tools/Calculator_Add:invoke",
		`{"schema_version":"0.1.0","args":{"a":10,"b":5}}`, []string{"X-Request-Id", "req-1"}, "X-Request-Id")
	send(mux, "POST", "/v1/tools/Calculator_Add@1:invoke",
		`{"schema_version":"0.1.0","args":{"a":10,"b":"five"}}`, nil)
	send(mux, "POST", "/v1/tools/Calculator_Add:invoke",
		`{"schema_version":"0.1.0","args":{"a":10,"b":5}}`, []string{"X-Request-Id", "not a call id"})
	// Output:
	// 200
	// [{"name":"Calculator_Add","description":"Adds two numbers together."}]
	// 200
	// {"schema_version":"0.1.0","name":"Calculator_Add","description":"Adds two numbers together.","version":"1.0.0","parameters":{"properties":{"a":{"type":"number","description":"The first number to add."},"b":{"type":"number","description":"The second number to add."}},"additionalProperties":false,"type":"object","required":["a","b"]},"returns":{"type":"number"},"tags":["Calculator"],"source":"otc:Calculator.Add@1.0.0"}
	// 200
	// X-Request-Id: req-1
	// {"schema_version":"0.1.0","ok":true,"result":15,"metrics":{"latency_ms":…}}
	// 400
	// {"schema_version":"0.1.0","ok":false,"error":{"schema_version":"0.1.0","code":"tool.invalid_args","message":"Some input parameters are invalid","retryable":false,"details":{"parameter_errors":{"b":"Must be a number"}}}}
	// 400
	// {"schema_version":"0.1.0","ok":false,"error":{"schema_version":"0.1.0","code":"request.invalid_shape","message":"X-Request-Id holds a space at byte 3: the request id is the call id: 1 to 128 visible ASCII characters, such as a UUID; send the same one with each retry of a call","retryable":false}}
}

// The registry view lists each tool with its protocols and policy.
func Example_registryView() {
	reg := calculator(nil)
	registerRefund(reg)
	// docs:start registry-view
	mux := http.NewServeMux()
	mux.Handle("/registry/", http.StripPrefix("/registry", registryview.NewHandler(reg, nil)))
	// docs:end registry-view

	send(mux, "GET", "/registry/v1/tools", "", nil)
	send(mux, "GET", "/registry/v1/tools?protocol=http", "", nil)
	send(mux, "GET", "/registry/v1/tools/Payments.Refund", "", nil)
	send(mux, "GET", "/registry/v1/tools/Payments.Cancel", "", nil)
	// Output:
	// 200
	// [{"tool_id":"Calculator.Add@1.0.0","name":"Calculator_Add","description":"Adds two numbers together.","version":"1.0.0","protocols":["otc","http","mcp","a2a"]}]
	// 200
	// [{"tool_id":"Calculator.Add@1.0.0","name":"Calculator_Add","description":"Adds two numbers together.","version":"1.0.0","protocols":["otc","http","mcp","a2a"]}]
	// 200
	// {"tool_id":"Payments.Refund@1.0.0","name":"Payments_Refund","description":"Refunds an order.","version":"1.0.0","protocols":["otc","mcp"],"resource_uri":"urn:otc:example:payments","required_capabilities":["payments:refund"],"max_blast_radius":"tenant:*","requires_execution":true,"allowed_operations":["refund"]}
	// 404
	// {"error":"not_found","error_description":"Tool 'Payments.Cancel' was not found"}
}
