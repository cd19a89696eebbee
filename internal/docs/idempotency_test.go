package docs_test

import (
	"context"
	"sync/atomic"

	"github.com/otcgo/otc"
	"github.com/otcgo/otc/idempotency"
)

// A call sent twice with one call_id runs once; the id sent with another
// call is refused.
func Example_idempotency() {
	// docs:start memory-store
	reg := otc.NewRegistry(&otc.RegistryOptions{
		Idempotency: idempotency.NewMemoryStore(nil), // or redisstore.NewIdempotencyStore(client, nil), shared by replicas
	})
	// docs:end memory-store
	var count atomic.Int64
	err := otc.Register(reg, otc.Tool{ID: "Counter.Increment", Version: "1.0.0", Description: "Counts its calls."},
		func(ctx context.Context, in struct{}) (int64, error) { return count.Add(1), nil })
	if err != nil {
		panic(err)
	}
	err = otc.Register(reg, otc.Tool{ID: "Calculator.Add", Version: "1.0.0", Description: "Adds two numbers together."}, add)
	if err != nil {
		panic(err)
	}
	h := otc.NewHandler(reg, nil)

	call := `{"request":{"tool_id":"Counter.Increment","call_id":"7d9f4a52-retry-demo"}}`
	send(h, "POST", "/call", call, nil, "Idempotent-Replayed")
	send(h, "POST", "/call", call, nil, "Idempotent-Replayed")
	send(h, "POST", "/call", `{"request":{"tool_id":"Calculator.Add","call_id":"7d9f4a52-retry-demo","input":{"a":1,"b":2}}}`, nil)
	// Output:
	// 200
	// no Idempotent-Replayed
	// {"$schema":"otc://1.0","result":{"call_id":"7d9f4a52-retry-demo","duration":…,"success":true,"value":1}}
	// 200
	// Idempotent-Replayed: true
	// {"$schema":"otc://1.0","result":{"call_id":"7d9f4a52-retry-demo","duration":…,"success":true,"value":1}}
	// 400
	// {"$schema":"otc://1.0","message":"The call_id was already used for a different call","developer_message":"call_id \"7d9f4a52-retry-demo\" was first used for tool Counter.Increment@1.0.0; a retry must resend the same tool and input, and a new call needs a new call_id"}
}
