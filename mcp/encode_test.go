package mcp_test

// The exported encoders a bridge to another MCP implementation uses, and
// the outcomes of the registry's pipeline that only middleware, a
// capability check or a shared schema produce.

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"net/http"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/otcgo/otc"
	"github.com/otcgo/otc/mcp"
)

func TestEncodeTool(t *testing.T) {
	t.Parallel()
	reg := newRegistry(t)
	url := serve(t, reg, &mcp.Options{PageSize: -1})
	l, _ := listPage(t, url, nil, nil)
	listed := map[string]string{}
	for i, tool := range l.Tools {
		b, err := json.Marshal(tool)
		require.NoError(t, err)
		listed[toolNames(l)[i]] = string(b)
	}
	latest := map[string]otc.ToolDefinition{}
	for _, d := range reg.Tools() {
		latest[d.Name] = d
	}
	for name, d := range latest {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			assert.JSONEq(t, listed[name], string(mcp.EncodeTool(d)), "tools/list lists what EncodeTool encodes")
		})
	}
}

func TestEncodeCallResult(t *testing.T) {
	t.Parallel()
	reg := newRegistry(t)
	call := func(name string, input string) (otc.CallResult, error) {
		return reg.Call(t.Context(), &otc.CallRequest{ToolName: name, Input: json.RawMessage(input), Protocol: otc.ProtocolMCP})
	}
	for _, tc := range []struct {
		name  string
		tool  string
		input string
		want  string
	}{
		{"value", "Calculator_Add", `{"a":1,"b":2}`, `{"content":[{"type":"text","text":"3"}],"structuredContent":{"result":3}}`},
		{"content", "Media_Chart", `{}`, `{"content":[{"type":"text","text":"The chart:"},{"type":"image","data":"AQID","mimeType":"image/png"}]}`},
		{"no_output", "Util_Noop", `{}`, `{"content":[]}`},
		{"tool_error", "Util_Fail", `{}`, `{"content":[{"type":"text","text":"The weather service is down\n\nAsk for a smaller region.\n\nThis may succeed if tried again after 1.5s."}],` +
			`"isError":true,"_meta":{"io.github.otcgo/error":{"code":"tool_error","can_retry":true,"retry_after_ms":1500}}}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			b, e := mcp.EncodeCallResult(call(tc.tool, tc.input))
			require.Nil(t, e)
			assert.JSONEq(t, tc.want, string(b))
		})
	}
	t.Run("string_is_its_own_text", func(t *testing.T) {
		t.Parallel()
		for _, v := range []string{"done: x", `say "hi"` + "\n\tand go", "<b>&</b>", "", "é ✓"} {
			raw, err := json.Marshal(v)
			require.NoError(t, err)
			b, e := mcp.EncodeCallResult(otc.CallResult{Value: raw}, nil)
			require.Nil(t, e)
			var got struct {
				Content []struct {
					Type string `json:"type"`
					Text string `json:"text"`
				} `json:"content"`
				Structured struct {
					Result string `json:"result"`
				} `json:"structuredContent"`
			}
			require.NoError(t, json.Unmarshal(b, &got), "%s", b)
			require.Len(t, got.Content, 1)
			assert.Equal(t, v, got.Content[0].Text, "the text is the string, not its JSON: %s", b)
			assert.Equal(t, v, got.Structured.Result)
		}
	})
	t.Run("invalid_input", func(t *testing.T) {
		t.Parallel()
		b, e := mcp.EncodeCallResult(call("Order_Place", `{"zip":"x","count":1}`))
		require.Nil(t, e)
		r := decodeCall(t, b)
		assert.True(t, r.IsError)
		assert.Contains(t, errorMeta(t, r)["parameter_errors"], "zip")
	})
	t.Run("unknown_tool", func(t *testing.T) {
		t.Parallel()
		b, e := mcp.EncodeCallResult(call("Nope_Nothing", `{}`))
		assert.Nil(t, b)
		require.NotNil(t, e)
		assert.Equal(t, -32602, e.Code)
		assert.Contains(t, e.Message, "Nope_Nothing")
		assert.Contains(t, e.Error(), "(JSON-RPC error -32602)")
	})
	t.Run("foreign_error", func(t *testing.T) {
		t.Parallel()
		b, e := mcp.EncodeCallResult(otc.CallResult{}, errors.New("secret detail"))
		require.Nil(t, e)
		assert.JSONEq(t, `{"content":[{"type":"text","text":"The call was refused"}],"isError":true,"_meta":{"io.github.otcgo/error":{"code":"server_error","can_retry":false}}}`, string(b))
	})
	t.Run("tool_error_without_retry", func(t *testing.T) {
		t.Parallel()
		b, e := mcp.EncodeCallResult(otc.CallResult{Error: &otc.ToolError{Message: "No.", CanRetry: true}}, nil)
		require.Nil(t, e)
		assert.JSONEq(t, `{"content":[{"type":"text","text":"No.\n\nThis may succeed if tried again."}],"isError":true,"_meta":{"io.github.otcgo/error":{"code":"tool_error","can_retry":true}}}`, string(b))
	})
}

func TestMiddlewareRefusal(t *testing.T) {
	t.Parallel()
	refuse := func(next otc.CallFunc) otc.CallFunc {
		return func(ctx context.Context, c *otc.Call) (otc.CallResult, error) {
			if c.Tool != nil && c.Tool.Name == "Util_Noop" {
				return otc.CallResult{}, &otc.Error{Code: otc.CodeServerError, Message: "Not during maintenance", DeveloperMessage: "window 02:00-03:00"}
			}
			return next(ctx, c)
		}
	}
	url := serve(t, newRegistry(t, refuse), nil)
	for _, tc := range []struct {
		name string
		body string
		hdr  map[string]string
	}{
		{"legacy", request(1, "tools/call", callParams("Util_Noop", nil, nil)), nil},
		{"modern", modernCall(1, "Util_Noop", nil, nil), modernHeaders("tools/call", "Util_Noop")},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			r := decodeCall(t, post(t, url, tc.body, tc.hdr).result(t))
			assert.True(t, r.IsError, "a refusal is a result the model reads")
			assert.Equal(t, "Not during maintenance", text(t, r))
			assert.Equal(t, "server_error", errorMeta(t, r)["code"])
		})
	}
}

func TestMissingCapabilityError(t *testing.T) {
	t.Parallel()
	got := make(chan error, 1)
	reg := otc.NewRegistry(&otc.RegistryOptions{Logger: slog.New(slog.DiscardHandler)})
	addTool(t, reg, "Agent.Roots", func(ctx context.Context, _ struct{}) (string, error) {
		err := mcp.RequireClientCapability(ctx, "roots")
		got <- err
		return "", err
	})
	url := serve(t, reg, nil)
	a := post(t, url, modernCall(1, "Agent_Roots", nil, nil), modernHeaders("tools/call", "Agent_Roots"))
	e, _ := a.rpcErr(t, http.StatusBadRequest, -32021)
	assert.JSONEq(t, `{"requiredCapabilities":{"roots":{}}}`, string(e.Data))

	err := recvWithin(t, got, "the tool's error")
	mce, ok := errors.AsType[*mcp.MissingCapabilityError](err)
	require.True(t, ok, "%T", err)
	assert.Equal(t, "roots", mce.Capability)
	assert.Contains(t, err.Error(), `"roots"`)

	caps, known := mcp.ClientCapabilities(t.Context())
	assert.False(t, known, "outside a call")
	assert.Nil(t, caps)
	assert.NoError(t, mcp.RequireClientCapability(t.Context(), "roots"), "unknown capabilities are not held against a tool")
}

// A hand-written schema may share definitions; MCP lists it whole. An
// x-mcp-header on a property binds its header; one inside a shared
// definition, reached through a $ref, binds none, as a client that walks
// the properties to mirror them does not follow references either.
func TestSharedSchemaDefinitions(t *testing.T) {
	t.Parallel()
	const schema = `{"type":"object","$defs":{"region":{"type":"string","x-mcp-header":"Region"}},` +
		`"properties":{"region":{"$ref":"#/$defs/region","description":"The region."},` +
		`"zone":{"$ref":"#/$defs/region","description":"The zone.","x-mcp-header":"Zone"}},"required":["region"]}`
	reg := otc.NewRegistry(&otc.RegistryOptions{Logger: slog.New(slog.DiscardHandler)})
	err := otc.Register(reg, otc.Tool{ID: "Geo.Shared", Version: "1.0.0", Description: "Uses $defs.", InputSchema: json.RawMessage(schema)},
		func(_ context.Context, in map[string]any) (map[string]any, error) { return in, nil })
	require.NoError(t, err, "a hand-written schema with $defs and x-mcp-header must register")
	url := serve(t, reg, nil)

	l, _ := listPage(t, url, nil, nil)
	require.Len(t, l.Tools, 1)
	assert.JSONEq(t, schema, string(l.Tools[0]["inputSchema"]), "listed as written")

	hdr := modernHeaders("tools/call", "Geo_Shared")
	a := post(t, url, modernCall(1, "Geo_Shared", obj{"region": "eu"}, nil), hdr)
	assert.False(t, decodeCall(t, a.result(t)).IsError, "no header for an annotation behind a $ref")

	body := modernCall(2, "Geo_Shared", obj{"region": "eu", "zone": "b"}, nil)
	e, _ := post(t, url, body, hdr).rpcErr(t, http.StatusBadRequest, -32020)
	assert.Contains(t, e.Message, "Mcp-Param-Zone")
	hdr["Mcp-Param-Zone"] = "b"
	assert.False(t, decodeCall(t, post(t, url, body, hdr).result(t)).IsError)
}
