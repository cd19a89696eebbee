package client

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/otcgo/otc"
	"github.com/otcgo/otc/internal/jsonrpc"
	"github.com/otcgo/otc/internal/mcpwire"
)

// asMap is p as the map of members a tools/call's params were built as
// before callParams: what jsonrpc.Request writes of it is what
// AppendJSON must write.
func asMap(p *callParams) map[string]any {
	meta := map[string]any{mcpwire.MetaCallID: p.callID}
	if p.progress {
		meta["progressToken"] = p.callID
	}
	if p.context != nil {
		meta[mcpwire.MetaContext] = *p.context
	}
	if st := p.stateless; st.version != nil {
		meta[mcpwire.MetaProtocolVersion] = st.version
		meta[mcpwire.MetaClientCapabilities] = st.caps
		meta[mcpwire.MetaClientInfo] = clientInfo
		if st.logLevel != "" {
			meta[mcpwire.MetaLogLevel] = st.logLevel
		}
	}
	m := map[string]any{"name": p.name, "arguments": p.args, "_meta": meta}
	if p.inputResponses != nil {
		m["inputResponses"] = p.inputResponses
	}
	if p.requestState != nil {
		m["requestState"] = *p.requestState
	}
	return m
}

func TestCallParamsAsTheMapWrites(t *testing.T) {
	state := "s\"1\n"
	stateless := statelessMeta{version: versionValues[mcpwire.Latest], caps: jsonrpc.Verbatim(`{"elicitation":{}}`)}
	withLevel := stateless
	withLevel.logLevel = "debug"
	for _, p := range []*callParams{
		{name: "Calculator_Add", args: jsonrpc.Verbatim(`{"a":1,"b":2}`), callID: "c-1"},
		{name: "t\u2028<x>", args: json.RawMessage("{\n\"a\": [1,\r\n2]}"), callID: "c\"2", progress: true},
		{name: "t", args: jsonrpc.Verbatim(`{}`), callID: "c-3", stateless: stateless},
		{name: "t", args: jsonrpc.Verbatim(`{}`), callID: "c-4", stateless: withLevel, progress: true,
			context:        &otc.CallContext{UserID: "u", Secrets: []otc.ToolSecret{{ID: "k", Value: "v"}}},
			inputResponses: map[string]any{"q1": json.RawMessage(`{"action":"accept","content":{"x":1}}`), "q0": "no"}, requestState: &state},
		{name: "t", args: jsonrpc.Verbatim(`{}`), callID: "c-5", inputResponses: map[string]any{}},
	} {
		got, err := jsonrpc.Request(7, "tools/call", p)
		require.NoError(t, err)
		want, err := jsonrpc.Request(7, "tools/call", asMap(p))
		require.NoError(t, err)
		assert.Equal(t, string(want), string(got))
		assert.True(t, json.Valid(got), "%s", got)
	}
}
