package mcpsdk

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/otcgo/otc"
	otcmcp "github.com/otcgo/otc/mcp"
)

// toolHandler returns the SDK handler of the tool listed as name: it runs
// the call through the registry and renders the outcome as the native
// server does.
func toolHandler(reg *otc.Registry, name string) mcp.ToolHandler {
	return func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		p := req.Params
		if p == nil {
			p = &mcp.CallToolParamsRaw{}
		}
		if !isObjectOrNull(p.Arguments) {
			return nil, invalidParams(`"arguments" must be a JSON object`)
		}
		call := &otc.CallRequest{ToolName: name, Input: p.Arguments, Protocol: otc.ProtocolMCP}
		if err := readMeta(p.Meta, call); err != nil {
			return nil, err
		}

		n := &notifier{ctx: ctx, session: req.Session, progressToken: p.GetProgressToken()}
		res, err := reg.Call(otc.WithNotifier(ctx, n), call)
		n.finish()

		encoded, rpcErr := otcmcp.EncodeCallResult(res, err)
		if rpcErr != nil {
			je := &jsonrpc.Error{Code: int64(rpcErr.Code), Message: rpcErr.Message}
			if rpcErr.Data != nil {
				if data, err := json.Marshal(rpcErr.Data); err == nil {
					je.Data = data
				}
			}
			return nil, je
		}
		return decodeResult(encoded)
	}
}

// invalidParams is the JSON-RPC error -32602, which the SDK sends as it
// is when a tool handler returns it.
func invalidParams(format string, args ...any) *jsonrpc.Error {
	return &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: "Invalid params: " + fmt.Sprintf(format, args...)}
}

// readMeta sets the call id and the call context of call from the
// request's _meta, refusing them, as the native server does, when they
// do not have their shape.
func readMeta(meta mcp.Meta, call *otc.CallRequest) error {
	if v, ok := meta[otcmcp.MetaCallID]; ok {
		id, ok := v.(string)
		if !ok {
			return invalidParams("%q must be a string", otcmcp.MetaCallID)
		}
		call.CallID = id
	}
	if v, ok := meta[otcmcp.MetaContext]; ok {
		// The SDK decoded _meta into Go values; the context object is
		// read back from their JSON.
		b, err := json.Marshal(v)
		if err == nil {
			err = json.Unmarshal(b, &call.Context)
		}
		if err != nil {
			return invalidParams(`_meta[%q] must be the OTC context object {"secrets": [{"id", "value"}], "authorization": [{"id", "token"}], "user_id"}: %v`, otcmcp.MetaContext, err)
		}
	}
	return nil
}

// isObjectOrNull reports whether raw, a tool call's arguments, is absent,
// null or a JSON object.
func isObjectOrNull(raw json.RawMessage) bool {
	raw = bytes.TrimSpace(raw)
	return len(raw) == 0 || raw[0] == '{' || string(raw) == "null"
}

// decodeResult turns the CallToolResult the native encoder wrote into the
// SDK's. structuredContent keeps the encoder's bytes, as json.RawMessage,
// so that the SDK sends them as they are rather than as a re-encoded map
// with its keys sorted.
func decodeResult(encoded json.RawMessage) (*mcp.CallToolResult, error) {
	res := new(mcp.CallToolResult)
	if err := json.Unmarshal(encoded, res); err != nil {
		return nil, fmt.Errorf("mcpsdk: decoding the result of a call: %w", err)
	}
	var structured struct {
		StructuredContent json.RawMessage `json:"structuredContent"`
	}
	if err := json.Unmarshal(encoded, &structured); err != nil {
		return nil, fmt.Errorf("mcpsdk: decoding the result of a call: %w", err)
	}
	if structured.StructuredContent != nil {
		res.StructuredContent = structured.StructuredContent
	}
	return res, nil
}
