// Package rest serves an otc registry as the plain REST tool API that many
// agent runtimes use: a planner view of the tools, each tool's full
// definition by name, and invocation, with dotted error codes
// ("tool.invalid_args"). It is built on the root package's exported API
// and calls through the same pipeline as the OTC handler, so validation,
// requirements, policy, idempotency, middleware and tool behaviour are the
// same on both.
//
//	reg := otc.NewRegistry(nil)
//	// ... otc.Register(reg, ...) ...
//	mux.Handle("/v1/", http.StripPrefix("/v1", rest.NewHandler(reg, nil)))
package rest
