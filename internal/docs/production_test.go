package docs_test

import (
	"strings"

	"github.com/otcgo/otc"
)

// A draining handler answers health checks 503 and still serves calls; a
// handler that is not ready refuses them.
func Example_draining() {
	h := otc.NewHandler(calculator(nil), nil)
	// docs:start set-ready
	h.SetDraining(true) // what Serve does for the handlers in Drain
	// docs:end set-ready
	send(h, "GET", "/health", "", nil)
	send(h, "POST", "/call", `{"request":{"tool_id":"Calculator.Add","call_id":"drain-1","input":{"a":1,"b":2}}}`, nil)
	h.SetReady(false) // not ready: for a server still starting
	send(h, "POST", "/call", `{"request":{"tool_id":"Calculator.Add","input":{"a":1,"b":2}}}`, nil)
	// Output:
	// 503
	// {"$schema":"otc://1.0","status":"unavailable","message":"The tool server is not taking calls"}
	// 200
	// {"$schema":"otc://1.0","result":{"call_id":"drain-1","duration":…,"success":true,"value":3}}
	// 400
	// {"$schema":"otc://1.0","message":"The tool server is temporarily unavailable","developer_message":"the server is draining or not yet ready; retry later or elsewhere"}
}

// Bodies a hostile or broken client sends, and what each gets.
func Example_hostileInput() {
	h := otc.NewHandler(calculator(nil), &otc.HandlerOptions{MaxBodyBytes: 1024})
	for _, body := range []string{
		`{"request":{"tool_id":"Calculator.Add","input":{"a":1,"b":2}},"request":{"tool_id":"Calculator.Add"}}`,
		`{"request":{"tool_id":"Calculator.Add","Input":{"a":1,"b":2}}}`,
		`{"request":{"tool_id":"Calculator.Add","input":{"a":1,"a":5,"b":2}}}`,
		`{"request":{"tool_id":"Calculator.Add","input":{"A":1,"b":2}}}`,
		`{"request":{"tool_id":"Calculator.Add","input":{"a":1e400,"b":2}}}`,
		`{"request":{"tool_id":"Calculator.Add","call_id":"` + strings.Repeat("x", 129) + `"}}`,
		`{"request":{"tool_id":"Calculator.Add","input":{"a":1,"b":2}}} {}`,
		`{"request":{"tool_id":"Calculator.Add","input":{"a":"` + strings.Repeat("x", 1024) + `"}}}`,
	} {
		send(h, "POST", "/call", body, nil)
	}
	// Output:
	// 400
	// {"$schema":"otc://1.0","message":"Field \"request\" is given more than once","developer_message":"each field may appear once: a body that repeats a field means different things to different parsers"}
	// 400
	// {"$schema":"otc://1.0","message":"Unknown field \"request.Input\"","developer_message":"\"request\" accepts \"tool_id\", \"call_id\", \"trace_id\", \"input\" and \"context\""}
	// 422
	// {"$schema":"otc://1.0","message":"Some input parameters are invalid","parameter_errors":{"a":"Is given more than once"}}
	// 422
	// {"$schema":"otc://1.0","message":"Some input parameters are invalid","parameter_errors":{"A":"Is not an accepted parameter","a":"Is required"}}
	// 422
	// {"$schema":"otc://1.0","message":"Some input parameters are invalid","parameter_errors":{"a":"Must be a number in the accepted range"}}
	// 400
	// {"$schema":"otc://1.0","message":"call_id is longer than 128 bytes","developer_message":"call_id is echoed back and logged, so it is limited to 128 bytes: send a UUID or another short id"}
	// 400
	// {"$schema":"otc://1.0","message":"The request body is not valid JSON","developer_message":"invalid character '{' after the top-level value (at byte 63)"}
	// 413
	// {"$schema":"otc://1.0","message":"The request body is larger than the limit of 1024 bytes"}
}
