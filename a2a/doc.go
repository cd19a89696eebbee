// Package a2a serves a registry's tools as an Agent2Agent (A2A) agent:
// each tool a skill of the agent's card, and a message carrying a data
// part {"tool": NAME, "input": {...}} a call of that tool, with the same
// validation, policy, idempotency and middleware as every other wire
// format.
//
//	mux.Handle("/a2a/", a2a.NewHandler(reg, nil))
//
// serves, relative to where it is mounted (with or without
// http.StripPrefix: a path it does not serve is taken below the pattern
// that routed it):
//
//	GET  /.well-known/agent-card.json  the Agent Card (public)
//	POST /                             the JSON-RPC binding (SendMessage, GetTask, ...)
//	POST /message:send, /message:stream the HTTP+JSON binding
//
// A2A 1.0 requests say so in the A2A-Version header (or query parameter);
// a request without one is an A2A 0.3 request, whose JSON-RPC method
// message/send and kind-tagged parts are read and answered in 0.3's shapes,
// unless what it asks is 1.0's alone (a PascalCase method, an HTTP+JSON
// path), which is served as 1.0. A header naming a version is obeyed
// strictly; another version is refused with the spec's
// VersionNotSupportedError.
//
// # Calls
//
// A message whose parts include a data part {"tool": "Calculator_Add",
// "input": {"a": 1, "b": 2}} calls the tool; "tool" is a tool's name or
// id, with or without a version, and may be left out when the card has
// one skill. The message's messageId is the call id, so a message sent
// again is not run twice, and is answered alike. A call that ends within
// its message is answered by a message (no task: there is nothing to
// follow) holding the value as a data part and as text (a string as
// itself), or saying what went wrong and, in a data part, whether and
// when to try again; its metadata {"io.github.otcgo/outcome": "succeeded"}
// or "failed" says which. Invalid input and an unknown tool are JSON-RPC
// invalid-params errors (400 on the HTTP+JSON binding), with each
// parameter to fix. A message of text calls Options.TextTool when set;
// otherwise, and for a message that calls nothing, it is answered with a
// message naming the skills and the form, so that a model that wrote text
// can correct itself. The card gives each skill's JSON Schemas in an
// extension ([ExtensionSkillSchemas]).
//
// With an authenticator, the card names its security schemes and says an
// extended card exists: GetExtendedAgentCard lists the skills the caller
// may call.
//
// A call of a tool whose calls may run as tasks runs as a task, kept in
// Options.Tasks.Store and run by the same runner as MCP's: a message
// with returnImmediately is answered with the task at WORKING, another
// waits for its end or its first question, and a stream follows it (the
// task, a WORKING status update for each progress report of the tool, the
// artifact and the final status). The message sent again gets the same
// task.
// GetTask, CancelTask, SubscribeToTask and ListTasks read, stop, follow
// and list a caller's tasks. A tool that asks (otc.Elicit) makes its task
// INPUT_REQUIRED, with the questions in a data part
// {"input_requests": {key: question}}; a message on the task answers them
// with a data part {"input_responses": {key: answer}}, checked against
// each question's schema.
//
// A task keeps its messages (its history), which GetTask, ListTasks and a
// message's answer return as their historyLength asks.
//
// With Options.Push, a caller gives a task a webhook (the push
// notification configuration methods, or a message's configuration),
// and each change of the task's state is posted to it, authenticated
// with the configuration's token and credentials or a JWT signed with
// PushOptions.SigningKey. Webhooks on addresses only the server can reach
// (loopback, private, link-local, metadata, in any form) are refused. gRPC
// is not served.
package a2a
