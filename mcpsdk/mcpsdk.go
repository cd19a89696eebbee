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
// structuredContent and its text block, content blocks, and the isError
// results of tool errors, invalid input and missing requirements. An
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

import (
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/otcgo/otc"
	otcmcp "github.com/otcgo/otc/mcp"
)

// Options configures [AddTools]. The zero value, and nil, add every tool.
type Options struct {
	// Filter, when set, chooses the tools to add: a tool is added when
	// Filter returns true for its definition, that of the highest version
	// of its name, the one added. Nil adds every tool.
	//
	// A tool that Filter turns away is left alone on the server: AddTools
	// neither adds nor removes it. To take a tool off, call the server's
	// RemoveTools.
	Filter func(otc.ToolDefinition) bool
}

// AddTools adds the tools of reg to server, under their MCP names
// ("Calculator_Add"), the highest version of each, as the native server
// of github.com/otcgo/otc/mcp lists them. A tool already on server with
// the same name is replaced. opts may be nil.
//
// Each tool is added with server.AddTool and a handler that calls
// reg.Call, so the SDK does not validate the arguments: the registry does,
// and answers invalid ones with a result whose isError is true, as the
// native server does.
//
// AddTools adds all the tools or none: it returns an error, and adds
// nothing, when server or reg is nil, or when the SDK refuses one of the
// tools (the SDK panics on a schema it cannot take, such as an
// x-mcp-header annotation it rejects; AddTools returns that as an error
// naming the tool). Tools registered in reg later are not added until
// AddTools is called again.
func AddTools(server *mcp.Server, reg *otc.Registry, opts *Options) error {
	if server == nil {
		return errors.New("mcpsdk: AddTools: the server is nil")
	}
	if reg == nil {
		return errors.New("mcpsdk: AddTools: the registry is nil")
	}
	var filter func(otc.ToolDefinition) bool
	if opts != nil {
		filter = opts.Filter
	}

	latest := map[string]otc.ToolDefinition{}
	for _, d := range reg.Tools() { // catalog order: ascending versions
		if d.Policy.AllowsProtocol(otc.ProtocolMCP) { // as the native server lists them
			latest[d.Name] = d
		}
	}
	var tools []*mcp.Tool
	for _, name := range slices.Sorted(maps.Keys(latest)) {
		d := latest[name]
		if filter != nil && !filter(d) {
			continue
		}
		t, err := decodeTool(otcmcp.EncodeTool(d))
		if err != nil {
			return fmt.Errorf("mcpsdk: AddTools: tool %q: %w", name, err)
		}
		tools = append(tools, t)
	}

	// The SDK panics on a tool it refuses. Adding every tool to a scratch
	// server first finds such a tool before server has changed, so that
	// the error leaves server as it was.
	scratch := mcp.NewServer(&mcp.Implementation{Name: "mcpsdk-check"}, nil)
	for _, t := range tools {
		if err := addTool(scratch, t, nil); err != nil {
			return err
		}
	}
	for _, t := range tools {
		if err := addTool(server, t, toolHandler(reg, t.Name)); err != nil {
			return err
		}
	}
	return nil
}

// addTool adds t to server, turning the SDK's panic on a tool it refuses
// into an error.
func addTool(server *mcp.Server, t *mcp.Tool, h mcp.ToolHandler) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("mcpsdk: AddTools: the SDK refuses tool %q: %v", t.Name, r)
		}
	}()
	server.AddTool(t, h)
	return nil
}

// decodeTool turns the MCP Tool object the native encoder wrote into the
// SDK's Tool. The schemas stay the registry's bytes, as json.RawMessage,
// so that the SDK lists them as they are rather than as a re-encoded map.
func decodeTool(encoded json.RawMessage) (*mcp.Tool, error) {
	t := new(mcp.Tool)
	if err := json.Unmarshal(encoded, t); err != nil {
		return nil, err
	}
	var schemas struct {
		InputSchema  json.RawMessage `json:"inputSchema"`
		OutputSchema json.RawMessage `json:"outputSchema"`
	}
	if err := json.Unmarshal(encoded, &schemas); err != nil {
		return nil, err
	}
	t.InputSchema = schemas.InputSchema
	t.OutputSchema = nil // an interface holding a nil RawMessage would list "null"
	if schemas.OutputSchema != nil {
		t.OutputSchema = schemas.OutputSchema
	}
	return t, nil
}
