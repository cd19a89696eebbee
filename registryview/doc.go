// Package registryview serves an otc registry's catalog as the listing of
// a universal tool registry: one entry per tool version, with the
// protocols it accepts and the policy a capability token must satisfy,
// for registries and gateways that route calls by protocol rather than
// call the tools themselves. It is built on the root package's exported
// API.
//
//	mux.Handle("/registry/", http.StripPrefix("/registry", registryview.NewHandler(reg, nil)))
package registryview
