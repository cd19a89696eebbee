// Package testkit holds the fixtures that the tests of several packages
// and modules of this repository share, so that each is written once:
//
//   - tools.go: the inputs and outputs of the test tools, the functions
//     of the tools that several fixtures register, and the benchmarks'
//     Calculator.Add@1.0.0 with its call (add 10 and 5) in each wire
//     format;
//   - toolmeta.go: a tool with a title, hints, icons and _meta, what
//     each wire format writes of them, and a registry of tools with and
//     without them;
//   - errors.go: the ways a tool fails (Raise);
//   - floors.go: what the hand-written floors of the benchmarks share,
//     the envelope they declare and the input check of the validating
//     ones;
//   - auth.go: an authenticator that takes a capability token's claims
//     from a test header, and the body hash an execution-bound token
//     carries;
//   - scopes.go: an authenticator that takes an OAuth access token's
//     scopes from a test header;
//   - legacysse.go: a server of MCP's HTTP+SSE transport of 2024-11-05,
//     its sessions served by any stdio server's function;
//   - logs.go: a buffer that a logger, a server or a child process may
//     write while the test reads it.
//
// Only tests import it, those of the root module's packages and of the
// nested modules (benchmarks, interop, redisstore), which reach it through
// their replace directive. It is the one package under internal/ that
// imports the root package, which the architecture test allows for it
// alone; the root package's internal tests (package otc) cannot use it,
// since that would be an import cycle.
package testkit
