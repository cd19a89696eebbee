package ratelimit_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"strings"

	"github.com/otcgo/otc"
	"github.com/otcgo/otc/auth"
	"github.com/otcgo/otc/caller"
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
	})
	if err != nil {
		panic(err)
	}
	reg := otc.NewRegistry(&otc.RegistryOptions{Middleware: []otc.Middleware{limit}})
	// The balancers in front, whose X-Forwarded-For names an anonymous
	// caller.
	trust := &caller.Options{TrustedProxies: []netip.Prefix{netip.MustParsePrefix("10.0.0.0/8")}}
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
	srv := httptest.NewServer(caller.Handler(otc.NewHandler(reg, nil), trust))
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

// Failed authentications bounded per client: past 5 wrong keys at once
// (then one a minute), a client's requests are refused 429, whatever
// they carry, until its allowance comes back.
func ExampleGuard() {
	keys, err := auth.NewAPIKeyAuth(map[string]string{"ci": "s3cret-key-of-the-ci-runner-0042"})
	if err != nil {
		panic(err)
	}
	// docs:start guard
	guarded, err := ratelimit.Guard(keys, &ratelimit.GuardOptions{Failures: ratelimit.PerMinute(5)})
	if err != nil {
		panic(err)
	}
	h := otc.NewHandler(otc.NewRegistry(nil), &otc.HandlerOptions{Authenticator: guarded})
	// docs:end guard
	srv := httptest.NewServer(h)
	defer srv.Close()
	for _, key := range []string{"guess-1", "guess-2", "guess-3", "guess-4", "guess-5", "guess-6", "s3cret-key-of-the-ci-runner-0042"} {
		req, _ := http.NewRequest(http.MethodGet, srv.URL+"/tools", nil)
		req.Header.Set(otc.HeaderAPIKey, key)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			panic(err)
		}
		resp.Body.Close()
		fmt.Println(resp.StatusCode, resp.Header.Get("Retry-After") != "")
	}
	// Output:
	// 401 false
	// 401 false
	// 401 false
	// 401 false
	// 401 false
	// 429 true
	// 429 true
}
