package docs_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"os"
	"time"

	"github.com/otcgo/otc"
	"github.com/otcgo/otc/auth"
	"github.com/otcgo/otc/calllog"
)

// tenantKey is the context key under which the quota middleware leaves
// the caller for the tool.
type tenantKey struct{}

// overQuota stands for the service's own accounting.
func overQuota(tenant string) bool { return tenant == "spendthrift" }

// metrics stands for the service's metrics; here it prints.
var metrics = struct {
	Observe func(toolID string, o otc.Outcome)
}{
	Observe: func(toolID string, o otc.Outcome) { fmt.Println("observed", toolID, o) },
}

func tenantQuota(next otc.CallFunc) otc.CallFunc {
	return func(ctx context.Context, c *otc.Call) (otc.CallResult, error) {
		if c.Identity != nil && overQuota(c.Identity.Name) {
			return otc.CallResult{}, &otc.Error{Code: otc.CodeServerError, Message: "Your quota for today is spent"}
		}
		res, err := next(context.WithValue(ctx, tenantKey{}, c.Identity), c)
		metrics.Observe(c.ToolID, otc.OutcomeOf(res, err)) // after the call
		return res, err
	}
}

// Middleware that refuses calls over a tenant's quota and observes the
// others.
func Example_middleware() {
	logger := slog.New(slog.NewTextHandler(io.Discard, nil)) // the service's logger
	// docs:start registry
	reg := otc.NewRegistry(&otc.RegistryOptions{
		Middleware: []otc.Middleware{
			calllog.New(logger, nil), // first: the outermost, sees every outcome
			tenantQuota,              // may refuse
		},
	})
	// docs:end registry
	err := otc.Register(reg, otc.Tool{ID: "Calculator.Add", Version: "1.0.0", Description: "Adds two numbers together."}, add)
	if err != nil {
		panic(err)
	}
	for _, tenant := range []string{"acme", "spendthrift"} {
		ctx := otc.WithIdentity(context.Background(), &otc.Identity{Method: "api_key", Name: tenant})
		res, err := reg.Call(ctx, &otc.CallRequest{ToolID: "Calculator.Add", Input: json.RawMessage(`{"a":1,"b":2}`)})
		if err != nil {
			fmt.Println(tenant, "refused:", err)
			continue
		}
		fmt.Println(tenant, string(res.Value))
	}
	// Output:
	// observed Calculator.Add success
	// acme 3
	// spendthrift refused: otc: Your quota for today is spent
}

// One record per call, here as JSON on standard output without the fields
// that change from run to run.
func Example_logCalls() {
	logger := slog.New(slog.NewJSONHandler(os.Stdout, &slog.HandlerOptions{
		ReplaceAttr: func(groups []string, a slog.Attr) slog.Attr {
			if a.Key == slog.TimeKey || a.Key == "duration_ms" {
				return slog.Attr{}
			}
			return a
		},
	}))
	reg := calculator(&otc.RegistryOptions{Middleware: []otc.Middleware{calllog.New(logger, nil)}})
	keys, err := auth.NewAPIKeyAuth(map[string]string{"ci": "ci-key-for-the-example"})
	if err != nil {
		panic(err)
	}
	h := otc.NewHandler(reg, &otc.HandlerOptions{Authenticator: keys})

	send(h, "POST", "/call", `{"request":{"tool_id":"Calculator.Add","call_id":"c1","input":{"a":1,"b":2}}}`,
		[]string{"OXP-API-Key", "ci-key-for-the-example"})
	send(h, "POST", "/call", `{"request":{"tool_id":"Calculator.Add","call_id":"c2","input":{"a":1}}}`,
		[]string{"OXP-API-Key", "ci-key-for-the-example"})
	// Output:
	// {"level":"INFO","msg":"tool call","tool_id":"Calculator.Add@1.0.0","call_id":"c1","protocol":"otc","caller":"ci","outcome":"success"}
	// 200
	// {"$schema":"otc://1.0","result":{"call_id":"c1","duration":…,"success":true,"value":3}}
	// {"level":"INFO","msg":"tool call","tool_id":"Calculator.Add@1.0.0","call_id":"c2","protocol":"otc","caller":"ci","outcome":"invalid_input"}
	// 422
	// {"$schema":"otc://1.0","message":"Some input parameters are invalid","parameter_errors":{"b":"Is required"}}
}

// A tool's limits, as a service sets them.
func Example_limits() {
	reg := otc.NewRegistry(nil)
	type reportInput struct {
		Month string `json:"month" jsonschema:"description=The month to report on, as 2026-11."`
	}
	buildReport := func(ctx context.Context, in reportInput) (string, error) { return "report of " + in.Month, nil }
	// docs:start limits
	err := otc.Register(reg, otc.Tool{
		ID: "Report.Build", Version: "1.0.0", Description: "Builds the monthly report.",
		Timeout:       30 * time.Second, // the function's context gets this deadline
		MaxConcurrent: 4,                // a fifth call at once is refused at once
	}, buildReport)
	// docs:end limits
	if err != nil {
		panic(err)
	}
}

// What a caller gets from a call past its tool's timeout, and from a call
// over its concurrency limit.
func Example_limitsReached() {
	reg := otc.NewRegistry(nil)
	running, release := make(chan struct{}), make(chan struct{})
	err := otc.Register(reg, otc.Tool{
		ID: "Timer.Wait", Version: "1.0.0", Description: "Waits until released or out of time.",
		Timeout: 50 * time.Millisecond, MaxConcurrent: 1,
	}, func(ctx context.Context, in struct{}) (string, error) {
		running <- struct{}{}
		select {
		case <-release:
			return "released", nil
		case <-ctx.Done():
			return "", ctx.Err()
		}
	})
	if err != nil {
		panic(err)
	}
	describe := func(res otc.CallResult, err error) string {
		if err != nil {
			return err.Error()
		}
		return fmt.Sprint(otc.OutcomeOf(res, err), " ", res.Error.Message, " can_retry=", res.Error.CanRetry, " retry_after=", res.Error.RetryAfter)
	}

	first := make(chan string)
	go func() { first <- describe(reg.Call(context.Background(), &otc.CallRequest{ToolID: "Timer.Wait"})) }()
	<-running
	fmt.Println(describe(reg.Call(context.Background(), &otc.CallRequest{ToolID: "Timer.Wait"}))) // one is running
	fmt.Println(<-first)                                                                          // past its 50 ms
	close(release)
	// Output:
	// busy Tool 'Timer_Wait' is busy; try again shortly can_retry=true retry_after=1s
	// timeout Tool 'Timer_Wait' did not finish within 50ms can_retry=true retry_after=0s
}
