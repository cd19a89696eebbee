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
