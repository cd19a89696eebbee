// Package mcp serves the tools of an [otc.Registry] over the Model Context
// Protocol, beside the OTC handler and the REST view of the same registry.
// Calls go through the registry's pipeline, so validation, requirements,
// limits, middleware and errors are the same on every wire format.
//
//	mux.Handle("/mcp", mcp.NewHandler(reg, nil))
//
// or, for a client that launches the server as a process:
//
//	err := mcp.ServeStdio(ctx, reg, nil)
//
// The server offers the registry's tools, and the resources, resource
// templates and prompts registered on it with packages
// [github.com/otcgo/otc/resource] and [github.com/otcgo/otc/prompt], with
// the completion of their arguments; a stdio connection is told when they
// change. A tool may ask its client something in the middle of a call
// ([otc.Ask]), and its calls may run as tasks (see Tasks below).
//
// # Versions
//
// Protocol versions 2025-06-18 and 2025-11-25 begin with the initialize
// handshake; 2026-07-28 is stateless, each request naming its version in
// its _meta, and is found with server/discover. The server speaks all three
// on one endpoint and decides per request: a request whose _meta names a
// protocol version, or whose MCP-Protocol-Version header is 2026-07-28, is
// served as 2026-07-28; any other as the version the client negotiated. A
// header naming a version the server does not speak is answered 400 with
// error -32022, whose message and data name the supported versions. The
// server issues no session ids: every request stands on its own, so any
// replica behind a load balancer can answer it.
//
// # Limits on messages
//
// A message is UTF-8 throughout: one with other bytes, anywhere, is a
// parse error (-32700, id null), so that every answer, which may echo
// parts of the request, is UTF-8 JSON too. Request ids and progress tokens
// are held to [MaxIDLength]. On stdio, a request whose id is held by a
// request still in flight is refused with -32600; the first is answered,
// and notifications/cancelled naming the id still reaches it.
//
// # Tools
//
// tools/list lists the highest version of each tool under the tool's name
// ([otc.Tool.Name]), a page at a time. A call may still reach an older
// version by naming it "name@x" or "name@x.y.z", as [otc.CallRequest.ToolName]
// resolves it; such names are for applications that pin a version, as
// models see only the listed ones. Each listed tool carries its
// [otc.Tool.Title], [otc.Tool.Annotations] (the hints it states, for
// clients that ask before a destructive call), [otc.Tool.Icons] and
// [otc.Tool.Meta] as "_meta", when it has them; a 2025-06-18 client, whose
// version has no icons, gets the tools without them.
//
// A tool's value becomes the call's structuredContent and a text block:
// the string itself when the value is a string, its JSON otherwise; in
// structuredContent, a value that is not a JSON object is wrapped as
// {"result": v},
// and the listed output schema says so. A tool that returns [otc.Content]
// answers with its content blocks instead. A tool error, invalid input and
// missing requirements are results with isError true whose text tells the
// model what to fix; retry hints and what is missing also travel in the
// result's _meta under [MetaError]. An unknown tool is JSON-RPC error
// -32602.
//
// # Call context
//
// The secrets, authorization tokens and user id a tool requires travel in
// the request's _meta under [MetaContext], in the shape of the OTC context
// object:
//
//	"_meta": {"io.github.otcgo/context": {"secrets": [{"id": "API_KEY", "value": "…"}], "user_id": "u1"}}
//
// # Progress and logs
//
// A tool reports progress with [otc.ReportProgress] and sends log messages
// with [otc.LogToClient]. Over MCP they become notifications/progress, when
// the request carried a progressToken, and notifications/message; over
// HTTP the answer then switches to an SSE stream, if the client accepts
// one. Log messages go out at or above the client's level: the level in
// the request's _meta (2026-07-28, which sends none without it), the one
// set with logging/setLevel (stdio), or [Options.LogLevel].
//
// # Asking the client
//
// In 2025-06-18 and 2025-11-25, what a tool asks with [otc.Ask]
// (elicitation/create, sampling/createMessage, roots/list) goes to the
// client as a server request, on the call's SSE stream over HTTP or on the
// pipe over stdio, and the tool waits for the answer; over HTTP the client
// answers with a POST of its own, which must reach the same process (with
// several replicas, route each caller to one: see the MCP guide). Requests
// are bounded in number and in time ([Options.MaxPendingAsks],
// [Options.MaxPendingAsksPerCaller], [Options.AskTimeout]). A client that
// did not declare the capability, or refuses the method, makes Ask fail
// with an error wrapping [otc.ErrInputUnsupported]; a tool that then fails
// is answered with the missing-capability error -32021.
//
// # Tasks
//
// A tool marked with [otc.Tool.Tasks] runs as a task of MCP's tasks
// extension ([ExtensionTasks], advertised in server/discover) for a
// 2026-07-28 request whose client capabilities declare the extension: the
// call is answered at once with resultType "task" and the task's id, and
// runs in the background; tasks/get reports its status and inlines its
// result (completed, a tool error included) or JSON-RPC error (failed),
// tasks/update answers the questions it asks with [otc.Ask], and
// tasks/cancel cancels it. A task-required tool called by a client that
// did not declare the extension is refused with -32021. Tasks live in
// [tasks.Options] Store, in memory by default; a store in Redis
// (github.com/otcgo/otc/redisstore) lets any replica answer for a task
// another one runs, and shows a task whose replica died as failed once its
// lease lapses. Each task belongs to the caller that created it.
package mcp
