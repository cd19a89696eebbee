package client_test

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/otcgo/otc"
	"github.com/otcgo/otc/client"
	"github.com/otcgo/otc/mcp"
)

// TestMirroredHeaders: at MCP 2026-07-28 the client repeats the
// parameters a tool's schema marks with x-mcp-header in Mcp-Param-*
// headers (a string as itself, a number or boolean as its JSON, text a
// header cannot carry in Base64), which the server checks against the
// body; a tool whose annotation is invalid is left out of the catalog,
// and an earlier version mirrors nothing.
func TestMirroredHeaders(t *testing.T) {
	reg := otc.NewRegistry(nil)
	echo := func(_ context.Context, in map[string]any) (map[string]any, error) { return in, nil }
	require.NoError(t, otc.Register(reg, otc.Tool{ID: "Geo.Lookup", Version: "1.0.0", Description: "Looks a place up.",
		InputSchema: json.RawMessage(`{"type":"object","properties":{` +
			`"region":{"type":"string","description":"The region.","x-mcp-header":"Region"},` +
			`"limit":{"type":"integer","description":"How many.","x-mcp-header":"Limit"},` +
			`"exact":{"type":"boolean","description":"Exact matches only.","x-mcp-header":"Exact"},` +
			`"query":{"type":"string","description":"What to find."}},"required":["query"]}`)}, echo))
	for name, schema := range map[string]string{
		"Bad.Token":  `{"type":"object","properties":{"a":{"type":"string","description":"A.","x-mcp-header":"Not a token"}}}`,
		"Bad.Twice":  `{"type":"object","properties":{"a":{"type":"string","description":"A.","x-mcp-header":"Same"},"b":{"type":"string","description":"B.","x-mcp-header":"same"}}}`,
		"Bad.Object": `{"type":"object","properties":{"a":{"type":"object","description":"A.","x-mcp-header":"Obj"}}}`,
	} {
		// Registered by hand-written schema; whether the server lists it
		// or not, the client must not call it.
		_ = otc.Register(reg, otc.Tool{ID: name, Version: "1.0.0", Description: "An invalid annotation.", InputSchema: json.RawMessage(schema)}, echo)
	}
	srv := httptest.NewServer(mcp.NewHandler(reg, nil))
	t.Cleanup(srv.Close)

	for _, version := range []string{mcp.Version20260728, mcp.Version20251125} {
		t.Run(version, func(t *testing.T) {
			rec := &recordingDoer{next: http.DefaultClient}
			c, err := client.New(srv.URL, &client.Options{Format: client.FormatMCP, MCPVersion: version, HTTPClient: rec})
			require.NoError(t, err)
			t.Cleanup(func() { _ = c.Close() })
			defs, err := c.ListTools(t.Context())
			require.NoError(t, err)
			var names []string
			for _, d := range defs {
				names = append(names, d.Name)
			}
			assert.Contains(t, names, "Geo_Lookup")
			if version == mcp.Version20251125 {
				assert.Subset(t, names, []string{"Bad_Token", "Bad_Twice", "Bad_Object"}, "listed, and mirrored by no one")
			}
			if version == mcp.Version20260728 {
				assert.NotContains(t, names, "Bad_Token")
				assert.NotContains(t, names, "Bad_Twice")
				assert.NotContains(t, names, "Bad_Object")
			}

			res, err := c.Call(t.Context(), "Geo_Lookup", map[string]any{"region": " eu-west", "limit": 3, "exact": true, "query": "café"}, nil)
			require.NoError(t, err, "the server checks the headers against the body")
			assert.JSONEq(t, `{"region":" eu-west","limit":3,"exact":true,"query":"café"}`, string(res.Value))
			var call *recorded
			for _, r := range rec.requests() {
				if r.Method == http.MethodPost && json.Valid(r.Body) && string(r.Body) != "" && containsMethod(r.Body, "tools/call") {
					call = &r
				}
			}
			require.NotNil(t, call)
			if version != mcp.Version20260728 {
				assert.Empty(t, call.Header.Get("Mcp-Param-Region"), "only 2026-07-28 mirrors")
				return
			}
			assert.Equal(t, "=?base64?"+base64.StdEncoding.EncodeToString([]byte(" eu-west"))+"?=", call.Header.Get("Mcp-Param-Region"), "leading space: Base64")
			assert.Equal(t, "3", call.Header.Get("Mcp-Param-Limit"))
			assert.Equal(t, "true", call.Header.Get("Mcp-Param-Exact"))
			assert.Empty(t, call.Header.Get("Mcp-Param-Query"), "not marked")
			assert.Equal(t, "tools/call", call.Header.Get("Mcp-Method"))
			assert.Equal(t, "Geo_Lookup", call.Header.Get("Mcp-Name"))
		})
	}
}

// containsMethod reports whether a JSON-RPC message is a request of method.
func containsMethod(body []byte, method string) bool {
	var m struct {
		Method string `json:"method"`
	}
	return json.Unmarshal(body, &m) == nil && m.Method == method
}
