package ratelimit_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"strings"

	"github.com/otcgo/otc"
	"github.com/otcgo/otc/ratelimit"
)

// A registry whose callers may each make 2 calls at once, then one a
// minute, and one refund an hour: the third call in a row is refused
// with 429 and Retry-After.
func Example() {
	// docs:start limits
	limit, err := ratelimit.New(&ratelimit.Options{
		All:   ratelimit.PerMinute(2),                                            // every call, per caller
		Tools: map[string]ratelimit.Limit{"Payments.Refund": {Rate: 1.0 / 3600}}, // and refunds
		// The balancers in front, whose X-Forwarded-For names an
		// anonymous caller.
		TrustedProxies: []netip.Prefix{netip.MustParsePrefix("10.0.0.0/8")},
	})
	if err != nil {
		panic(err)
	}
	reg := otc.NewRegistry(&otc.RegistryOptions{Middleware: []otc.Middleware{limit}})
	// docs:end limits
	err = otc.Register(reg, otc.Tool{ID: "Calculator.Add", Version: "1.0.0", Description: "Adds two numbers."},
		func(_ context.Context, in struct {
			A float64 `json:"a" jsonschema:"description=The first number."`
			B float64 `json:"b" jsonschema:"description=The second number."`
		}) (float64, error) {
			return in.A + in.B, nil
		})
	if err != nil {
		panic(err)
	}
	srv := httptest.NewServer(otc.NewHandler(reg, nil))
	defer srv.Close()
	for range 3 {
		resp, err := http.Post(srv.URL+"/tools/call", "application/json",
			strings.NewReader(`{"request":{"tool_id":"Calculator.Add","input":{"a":1,"b":2}}}`))
		if err != nil {
			panic(err)
		}
		resp.Body.Close()
		fmt.Println(resp.StatusCode, resp.Header.Values("Retry-After"))
	}
	// Output:
	// 200 []
	// 200 []
	// 429 [30]
}
