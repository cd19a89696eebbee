// Package mcpsdk puts the tools of an [otc.Registry] on a server built
// with the official MCP Go SDK (github.com/modelcontextprotocol/go-sdk),
// for a program that serves its own resources and prompts with the SDK
// and wants the registry's tools beside them:
//
//	server := mcp.NewServer(&mcp.Implementation{Name: "notes", Version: "1.0.0"}, nil)
//	server.AddResource(notesResource, readNotes) // the program's own
//	if err := mcpsdk.AddTools(server, reg, nil); err != nil {
//		log.Fatal(err)
//	}
//	http.Handle("/mcp", mcp.NewStreamableHTTPHandler(
//		func(*http.Request) *mcp.Server { return server }, nil))
//
// A program that serves only tools needs neither the SDK nor this package:
// the package github.com/otcgo/otc/mcp serves a registry over MCP by
// itself. This package is a module of its own, so that the otc module
// never depends on the SDK.
//
// # Same answers as the native server
//
// The bridge lists and answers tools with the encoders of the native
// server, [otcmcp.EncodeTool] and [otcmcp.EncodeCallResult], so a tool
// looks and answers the same on both: the input schema as the registry
// holds it (not reflected again by the SDK), the output schema, the
// title, annotations, icons and _meta ([otc.Tool.Title] and the fields
// after it), the structuredContent and its text block, content blocks,
// and the isError results of tool errors, invalid input and missing
// requirements. One difference is the SDK's: it lists a tool's icons to
// 2025-06-18 clients too, where the native server leaves them out, as
// that version has none. An
// unknown tool, arguments that are not a JSON object and a malformed _meta
// are JSON-RPC errors, -32602.
//
// Calls go through [otc.Registry.Call], so validation, requirements,
// limits and middleware apply as on every other wire format. The call
// context (secrets, authorization tokens, user id) travels in the
// request's _meta under [otcmcp.MetaContext], and the call id under
// [otcmcp.MetaCallID], as for the native server.
//
// A tool whose [otc.Policy] keeps it off MCP is not added. A tool whose
// policy needs a capability token cannot be called through the bridge:
// the SDK's handler hands the registry neither the caller's identity nor
// the request body that execution binding hashes, so such a call is
// refused (-32001, missing_token). Serve those tools with the native
// handler.
//
// # Progress and logs
//
// A tool's [otc.ReportProgress] becomes notifications/progress when the
// request carried a progressToken, and [otc.LogToClient] becomes
// notifications/message, sent by the SDK session at the level the client
// chose. Both are dropped once the call is answered.
//
// # Registering later
//
// AddTools adds the tools the registry holds when it is called. The
// registry does not tell anyone of tools registered later, so they do not
// appear on the SDK server by themselves: call AddTools again after
// registering them. It replaces the tools it added before, by name, and
// adds the new ones; the SDK server sends notifications/tools/list_changed
// to the sessions it holds, and a 2026-07-28 client sees the change once
// its cached list expires.
//
// # Differences from the native server
//
// The SDK routes a call by the exact listed name, so a call cannot reach
// an older version of a tool as "name@1", which the native server allows.
// [otc.HTTPRequest] is nil in a tool, as the SDK hands a tool handler no
// *http.Request, and [otcmcp.ClientCapabilities] does not know the
// client's capabilities. In 2026-07-28 the SDK adds its serverInfo to the
// _meta of every result. Protocol versions, sessions, transports,
// authentication and the log level are the SDK's business.
package mcpsdk
