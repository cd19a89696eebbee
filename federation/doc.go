// Package federation serves the tools of remote tool servers from a local
// [otc.Registry], beside the registry's own tools, over every wire format
// the registry is served in (OTC, the REST view, MCP, A2A, the registry
// view).
//
//	reg := otc.NewRegistry(nil)
//	fed, err := federation.Mount(ctx, reg, []federation.Upstream{
//		{Name: "everything", Command: []string{"node", "server.js", "stdio"}},
//		{Name: "calc", URL: "http://127.0.0.1:8080/otc"},
//	}, nil)
//	defer fed.Close()
//	mount.All(mux, reg, nil)
//
// A remote tool is an ordinary registry entry whose function calls its
// server through the client package: everything the registry does before a
// function runs (authentication, policy, validation, rate limits,
// idempotency, middleware, telemetry) runs before the hop, unchanged, and a
// call that local policy or validation refuses makes no upstream request.
//
// # Names
//
// The tools of an upstream are served under its name as their toolkit: the
// tool "echo" of the upstream "everything" is "everything.echo", which a
// model sees as "everything_echo" (the registry's rule for names). An
// upstream's tool name is folded into one part of letters, digits and
// underscores: every other character becomes an underscore, so that the
// MCP tool "get-sum" is "everything.get_sum" and the OTC tool
// "Calculator.Add" of the upstream "calc" is "calc.Calculator_Add" (the
// upstream's toolkit is kept in the tool's part). Two tools that fold into
// one name, or a name a local tool already has, are an error that names
// both; [Upstream.Rename] resolves it, and [Upstream.Include] and
// [Upstream.Exclude] choose the tools to serve. The filters are the
// registry's: a tool left out is not registered, so no call can reach it.
//
// # Resources and prompts
//
// An MCP upstream's resources, resource templates and prompts are served
// beside its tools (package mcp serves them). A resource keeps its URI and
// a template its text, so that a URI written anywhere (a tool's result, a
// resource link) reads through the gateway from the upstream that serves
// it; a URI or template served already (by the registry or another
// upstream) leaves the later one out, named in its [Health]. A prompt is
// served under its upstream's name, as a tool is ("notes_summarize").
// Reads, renders and completions are forwarded with the caller's session,
// updates of the resources the gateway subscribed to upstream are relayed
// to its own subscribers, and the last good lists stay while an upstream
// is down.
//
// # Catalogs
//
// Each upstream's catalog is a snapshot, read when the upstream is first
// reached and again when an MCP server says its list changed
// (notifications/tools/list_changed), or every [Upstream.Refresh] for the
// other formats (an A2A agent's card is read again, and a changed card
// changes its tools). A snapshot replaces the upstream's tools in the
// registry: new tools are registered, gone tools removed (a call of one
// answers as for an unknown tool) and changed ones registered anew. A
// refresh that fails keeps the last good snapshot. Listing tools never
// calls an upstream.
//
// Schemas are served as the upstream published them, normalised to what the
// registry needs: a "$schema" other than 2020-12 is dropped, a top-level
// parameter without a description gets one (its title, or its name), and
// a tool the registry cannot take (a recursive schema, say) is left out,
// and named, with the reason, in the upstream's [Health]. The input of a
// call is validated against that schema before the hop.
//
// # Failures
//
// [Mount] waits for each upstream at most its [Upstream.Timeouts.Start];
// one that is not reached by then is retried in the background, with
// backoff, and its tools appear when it answers. One just reached (a
// process just started) has its [Upstream.Timeouts.Ready] to answer its
// first catalog read: it is starting until then, not down, and its
// process is not started again. Each upstream has a
// circuit breaker: after [Breaker.Failures] calls in a row that did not
// reach it (refused connections, resets, 5xx answers, a process that
// exited), its calls are answered at once, for [Breaker.Cooldown], with a
// tool error that says the call can be retried and when, and every other
// upstream is served as before. A dead upstream's tools stay listed: the
// catalog a model plans with does not change with the network, the error
// tells it to come back, and a tool that is gone for good leaves the list
// at the next snapshot that lacks it. [Federation.ServeHTTP] reports each
// upstream's state, catalog age and last error.
//
// An MCP server run as a process ([Upstream.Command]) is started again,
// with backoff, when it exits.
//
// # Calls
//
// A call carries, across the hop, its call id (as the upstream format's
// idempotency key; see [Upstream] for how it is derived), its
// cancellation (the call's context: MCP notifications/cancelled, A2A
// CancelTask), its progress (reported to the caller in order), the trace
// context ([Options.Propagate]) and the questions an upstream asks
// (elicitation, sampling, roots), which reach the caller through
// [otc.Ask] where its format carries them and fail the upstream's question
// otherwise. No inbound header reaches an upstream unless its
// [Credentials] say so.
//
// A call that did not reach its upstream is retried (twice, within the
// call's deadline) only when running it twice cannot happen or cannot
// harm: the upstream is an OTC server, which keeps call ids, or the tool's
// annotations say it is read-only or idempotent. Otherwise the caller gets
// a retryable tool error, and its own retry, with the same call id, is
// answered by the local idempotency store when the registry has one.
//
// An upstream that keeps state per client (an MCP server over stdio, or
// one that keeps sessions) gets one client per caller identity, so that
// callers never share the upstream's state: see [Upstream.Sessions].
package federation
