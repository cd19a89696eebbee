package federation_test

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/otcgo/otc"
	"github.com/otcgo/otc/client"
	"github.com/otcgo/otc/federation"
)

// handMCP is an MCP server over Streamable HTTP written by hand, that
// lists tools as given and answers every call with its arguments as text.
func handMCP(t *testing.T, tools string) string {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var m struct {
			ID     json.RawMessage `json:"id"`
			Method string          `json:"method"`
			Params struct {
				Arguments json.RawMessage `json:"arguments"`
			} `json:"params"`
		}
		b, _ := io.ReadAll(r.Body)
		if json.Unmarshal(b, &m) != nil || len(m.ID) == 0 {
			w.WriteHeader(http.StatusAccepted)
			return
		}
		var result string
		switch m.Method {
		case "initialize":
			result = `{"protocolVersion":"2025-06-18","capabilities":{"tools":{}},"serverInfo":{"name":"hand","version":"1"}}`
		case "ping":
			result = `{}`
		case "tools/list":
			result = `{"tools":` + tools + `}`
		case "tools/call":
			args, _ := json.Marshal(string(m.Params.Arguments))
			result = `{"content":[{"type":"text","text":` + string(args) + `}]}`
		default:
			w.Header().Set("Content-Type", "application/json")
			_, _ = w.Write([]byte(`{"jsonrpc":"2.0","id":` + string(m.ID) + `,"error":{"code":-32601,"message":"no such method"}}`))
			return
		}
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(`{"jsonrpc":"2.0","id":` + string(m.ID) + `,"result":` + result + `}`))
	}))
	t.Cleanup(srv.Close)
	return srv.URL
}

// TestFederation_WhatServersPublish: tools as public MCP servers publish
// them are served, not left out: a read-only tool that says it is not
// idempotent (MCP: idempotentHint means nothing for a read-only tool),
// and a pattern written in a regular expression syntax Go's cannot
// compile (a lookahead: the upstream, which checks it, still does).
func TestFederation_WhatServersPublish(t *testing.T) {
	t.Parallel()
	url := handMCP(t, `[
		{"name":"list-things","description":"Lists things.","inputSchema":{"type":"object","properties":{}},
		 "annotations":{"readOnlyHint":true,"idempotentHint":false}},
		{"name":"make-app","description":"Makes an app.","inputSchema":{"type":"object","properties":{
		  "name":{"type":"string","description":"Its name.","pattern":"^(?!.*[Ll]inear).*$"},
		  "site":{"type":"string","description":"Its site.","pattern":"^[Hh][Tt][Tt][Pp][Ss]?://"}},"required":["name","site"]}}]`)
	reg := otc.NewRegistry(nil)
	fed, err := federation.Mount(t.Context(), reg, []federation.Upstream{{Name: "hand", URL: url, Format: client.FormatMCP}}, &federation.Options{Strict: true})
	require.NoError(t, err)
	t.Cleanup(func() { _ = fed.Close() })
	h := fed.Health()[0]
	assert.Empty(t, h.Skipped)
	assert.Equal(t, 2, h.Tools)

	res, err := reg.Call(t.Context(), &otc.CallRequest{ToolName: "hand_make_app", Input: json.RawMessage(`{"name":"x","site":"https://example.com"}`)})
	require.NoError(t, err)
	require.Nil(t, res.Error)
	// The pattern Go compiles is still checked here.
	res, err = reg.Call(t.Context(), &otc.CallRequest{ToolName: "hand_make_app", Input: json.RawMessage(`{"name":"x","site":"ftp://example.com"}`)})
	var oe *otc.Error
	require.ErrorAs(t, err, &oe)
	assert.Equal(t, otc.CodeInvalidInput, oe.Code)
	assert.Contains(t, oe.ParameterErrors, "site")

	for _, def := range reg.Tools() {
		if def.Name == "hand_list_things" {
			require.NotNil(t, def.Annotations)
			assert.True(t, *def.Annotations.ReadOnlyHint)
		}
	}
}
