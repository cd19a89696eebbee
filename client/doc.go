// Package client calls tool servers, whatever they speak: OTC/OXP 1.0,
// the Model Context Protocol (over Streamable HTTP, or over stdio with
// [NewStdio]), Agent2Agent agents and the REST view. It lists their tools,
// calls them, and retries calls the server says can be retried, with the
// same types for every outcome in every format. It speaks to any server
// that follows the protocols, not only those built with otc.
//
// [New] takes the format in [Options.Format] (OTC when empty); [Dial]
// finds it. A feature a format lacks (secrets over A2A, say) fails with an
// error that says so.
//
// A typical agent loop lists the tools once, hands them to a model, and
// calls the one the model chose:
//
//	c, err := client.New("http://127.0.0.1:8080", nil)
//	if err != nil { ... }
//	defs, err := c.ListTools(ctx)
//	if err != nil { ... }
//	tools, err := export.New(defs, nil) // package export: checks what the server chose
//	if err != nil { ... }
//	// Give tools.OpenAI() or tools.Anthropic() to the model; when it picks
//	// a tool by name, with arguments args:
//	def, ok := tools.Lookup(name)
//	res, err := c.Call(ctx, def.ID, args, nil)
//
// # Errors
//
// Every failure can be matched with errors.As:
//
//   - [*otc.ToolError]: the tool ran and failed (success false). Its
//     CanRetry, RetryAfter and AdditionalPromptContent say what to do next.
//     Call also returns the [Result], for the call id and duration.
//   - [*otc.Error]: the server refused the call before running the tool.
//     Its Code is CodeServerError (400, with MissingRequirements when the
//     call context lacked something), CodeUnauthenticated (401),
//     CodeForbidden (403, a tool's policy refused the call),
//     CodeTooLarge (413) or CodeInvalidInput (422, with ParameterErrors);
//     Reason holds the refusal's reason ("audience_mismatch") when the
//     server gave one, and RequiredScopes the OAuth scopes to ask for
//     when the server named them ("insufficient_scope").
//   - [*ResponseError]: any other status, or a body that is not the
//     protocol's JSON, such as a proxy's HTML error page. It quotes the
//     first bytes of the body.
//   - [*RPCError]: a JSON-RPC error of an MCP server or an A2A agent that
//     is none of the above (a method the server does not have).
//   - [*NoServerError]: [Dial] found no tool server at the URL.
//   - [*RedirectError]: a redirect the client did not follow, which it
//     names. Calls are never redirected, reads only within their origin
//     (scheme, host and port), so that credentials and secrets stay with
//     the server they were meant for; see [CheckRedirect].
//   - Anything else comes from the HTTP client: a transport failure, or the
//     context's cancellation (errors.Is(err, context.DeadlineExceeded)).
//
// # Retries
//
// Retries are off unless [Options.Retry] is set. Only a tool error with
// can_retry true is retried, with the same call id, after the server's
// retry_after_ms (capped) or a backoff. Nothing else is ever retried: not a
// refused call (400, 401, 413, 422), not an unexpected response, and not a
// transport failure, after which the client cannot know whether the tool
// ran.
package client
