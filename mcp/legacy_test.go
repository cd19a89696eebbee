package mcp_test

// The initialize era (2025-06-18, 2025-11-25) over Streamable HTTP: the
// handshake, ping, logging/setLevel, tools/list and tools/call.

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/otcgo/otc"
	"github.com/otcgo/otc/internal/testkit"
	"github.com/otcgo/otc/mcp"
)

func TestInitialize(t *testing.T) {
	t.Parallel()
	opts := mcp.Options{Name: "calc", Version: "1.2.3", Instructions: "Add with Calculator_Add."}
	url := serve(t, newRegistry(t), &opts)
	opts.Stateless = true
	statelessURL := serve(t, newRegistry(t), &opts)
	for _, tc := range []struct {
		name    string
		offered any
		want    string
	}{
		{"echoes_2025_06_18", mcp.Version20250618, mcp.Version20250618},
		{"echoes_2025_11_25", mcp.Version20251125, mcp.Version20251125},
		{"counter_offers_for_unknown", "2099-01-01", mcp.Version20251125},
		{"counter_offers_for_older", "2024-11-05", mcp.Version20251125},
		{"counter_offers_for_none", nil, mcp.Version20251125},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			params := obj{"capabilities": obj{}, "clientInfo": obj{"name": "test", "version": "0.1"}}
			if tc.offered != nil {
				params["protocolVersion"] = tc.offered
			}
			a := post(t, statelessURL, request(1, "initialize", params), nil)
			assert.JSONEq(t, `{"protocolVersion":"`+tc.want+`","capabilities":{"logging":{},"tools":{}},`+
				`"serverInfo":{"name":"calc","version":"1.2.3"},"instructions":"Add with Calculator_Add."}`, string(a.result(t)))
			assert.Empty(t, a.header.Get("Mcp-Session-Id"), "a stateless server issues no sessions")

			// By default, a session, whose stream tells of the tools' changes.
			a = post(t, url, request(1, "initialize", params), nil)
			assert.JSONEq(t, `{"protocolVersion":"`+tc.want+`","capabilities":{"logging":{},"tools":{"listChanged":true}},`+
				`"serverInfo":{"name":"calc","version":"1.2.3"},"instructions":"Add with Calculator_Add."}`, string(a.result(t)))
			sid := a.header.Get("Mcp-Session-Id")
			assert.Regexp(t, `^[!-~]{32,400}$`, sid, "visible ASCII, as the transport asks")
		})
	}
	t.Run("default_server_info", func(t *testing.T) {
		t.Parallel()
		url := serve(t, newRegistry(t), nil)
		a := post(t, url, request("init", "initialize", obj{"protocolVersion": mcp.Version20250618}), nil)
		res := object(t, a.result(t))
		assert.Equal(t, map[string]any{"name": "otc", "version": "0.0.0"}, res["serverInfo"])
		assert.NotContains(t, res, "instructions")
		assert.Equal(t, `"init"`, string(a.rpc(t).ID))
	})
}

func TestNotificationsAccepted(t *testing.T) {
	t.Parallel()
	url := serve(t, newRegistry(t), nil)
	for _, tc := range []struct {
		name string
		body string
	}{
		{"initialized", request(nil, "notifications/initialized", nil)},
		{"cancelled", request(nil, "notifications/cancelled", obj{"requestId": 3})},
		{"unknown_notification", request(nil, "notifications/whatever", obj{})},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			a := post(t, url, tc.body, nil)
			assert.Equal(t, http.StatusAccepted, a.status)
			assert.Empty(t, a.body)
		})
	}
}

func TestPing(t *testing.T) {
	t.Parallel()
	url := serve(t, newRegistry(t), nil)
	for _, tc := range []struct {
		name string
		body string
		id   string
	}{
		{"no_params", `{"jsonrpc":"2.0","id":1,"method":"ping"}`, `1`},
		{"empty_params", `{"jsonrpc":"2.0","id":"p","method":"ping","params":{}}`, `"p"`},
		{"legacy_header", `{"jsonrpc":"2.0","id":-4,"method":"ping"}`, `-4`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			a := post(t, url, tc.body, map[string]string{"MCP-Protocol-Version": mcp.Version20250618})
			assert.Equal(t, `{}`, string(a.result(t)), "ping answers exactly {}")
			assert.Equal(t, tc.id, string(a.rpc(t).ID))
		})
	}
}

func TestUnknownMethod(t *testing.T) {
	t.Parallel()
	url := serve(t, newRegistry(t), nil)
	for _, method := range []string{"resources/watch", "prompts/run", "completion/suggest", "server/Discover", ""} {
		t.Run("method_"+strings.ReplaceAll(method, "/", "_"), func(t *testing.T) {
			t.Parallel()
			// 200, as any error of a well-formed request in this era: its
			// clients take a 404 for an expired session.
			a := post(t, url, request("x", method, obj{}), map[string]string{"MCP-Protocol-Version": mcp.Version20251125})
			e, id := a.rpcErr(t, http.StatusOK, -32601)
			assert.Equal(t, "Method not found: "+method, e.Message)
			assert.Equal(t, `"x"`, id)
		})
	}
}

// TestEmptyLists: a tools server has no prompts or resources, and says so
// with empty lists rather than errors.
func TestEmptyLists(t *testing.T) {
	t.Parallel()
	url := serve(t, newRegistry(t), nil)
	for method, key := range map[string]string{"prompts/list": "prompts", "resources/list": "resources", "resources/templates/list": "resourceTemplates"} {
		t.Run(strings.ReplaceAll(method, "/", "_"), func(t *testing.T) {
			t.Parallel()
			a := post(t, url, request(1, method, obj{}), nil)
			assert.JSONEq(t, `{"`+key+`":[]}`, string(a.result(t)))
		})
	}
}

func TestLoggingSetLevel(t *testing.T) {
	t.Parallel()
	url := serve(t, newRegistry(t), nil)
	for _, level := range []string{"debug", "info", "notice", "warning", "error", "critical", "alert", "emergency"} {
		t.Run(level, func(t *testing.T) {
			t.Parallel()
			a := post(t, url, request(1, "logging/setLevel", obj{"level": level}), nil)
			assert.Equal(t, `{}`, string(a.result(t)))
		})
	}
	for _, tc := range []struct {
		name   string
		params obj
	}{
		{"unknown_level", obj{"level": "verbose"}},
		{"upper_case", obj{"level": "INFO"}},
		{"no_level", obj{}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			a := post(t, url, request(2, "logging/setLevel", tc.params), nil)
			e, id := a.rpcErr(t, http.StatusOK, -32602)
			assert.Contains(t, e.Message, "is not one of debug, info")
			assert.Equal(t, `2`, id)
		})
	}
	t.Run("level_not_a_string", func(t *testing.T) {
		t.Parallel()
		a := post(t, url, request(2, "logging/setLevel", obj{"level": 3}), nil)
		e, _ := a.rpcErr(t, http.StatusBadRequest, -32602)
		assert.Contains(t, e.Message, `"level" must be a string`)
	})
}

// listResult is a tools/list result.
type listResult struct {
	Tools      []map[string]json.RawMessage `json:"tools"`
	NextCursor *string                      `json:"nextCursor"`
}

func listPage(t testing.TB, url string, params any, hdr map[string]string) (listResult, json.RawMessage) {
	t.Helper()
	raw := post(t, url, request(1, "tools/list", params), hdr).result(t)
	var l listResult
	require.NoError(t, json.Unmarshal(raw, &l))
	return l, raw
}

func toolNames(l listResult) []string {
	var names []string
	for _, tool := range l.Tools {
		var n string
		_ = json.Unmarshal(tool["name"], &n)
		names = append(names, n)
	}
	return names
}

func TestToolsList(t *testing.T) {
	t.Parallel()
	url := serve(t, newRegistry(t), nil)
	l, raw := listPage(t, url, nil, nil)
	require.True(t, slices.IsSorted(fixtureNames))
	assert.Equal(t, fixtureNames, toolNames(l), "every tool once, by name, in order")
	assert.Nil(t, l.NextCursor, "one page holds them all")
	assert.Equal(t, []string{"tools"}, keys(object(t, raw)), "a legacy list carries no 2026-07-28 fields")

	byName := map[string]map[string]json.RawMessage{}
	for i, tool := range l.Tools {
		byName[fixtureNames[i]] = tool
	}
	t.Run("shape", func(t *testing.T) {
		for name, tool := range byName {
			assert.Subset(t, []string{"name", "description", "inputSchema", "outputSchema"}, keys(tool), name)
			assert.Contains(t, tool, "inputSchema", name)
			assert.Equal(t, byte('{'), tool["inputSchema"][0], name)
		}
	})
	t.Run("highest_version_only", func(t *testing.T) {
		assert.JSONEq(t, `"Adds two numbers together."`, string(byName["Calculator_Add"]["description"]))
	})
	t.Run("scalar_output_schema_wrapped", func(t *testing.T) {
		assert.JSONEq(t, `{"type":"object","properties":{"result":{"type":"number","description":"The sum."}},"required":["result"]}`,
			string(byName["Calculator_Add"]["outputSchema"]))
	})
	t.Run("object_output_schema_as_is", func(t *testing.T) {
		var s map[string]any
		require.NoError(t, json.Unmarshal(byName["Geometry_Point"]["outputSchema"], &s))
		assert.Equal(t, "object", s["type"])
		assert.Contains(t, s["properties"], "label")
		assert.NotContains(t, s["properties"], "result")
	})
	t.Run("no_output_schema", func(t *testing.T) {
		assert.NotContains(t, byName["Media_Chart"], "outputSchema", "content blocks have no output schema")
		assert.NotContains(t, byName["Util_Noop"], "outputSchema", "a tool that returns nothing")
	})
	t.Run("hand_written_schema", func(t *testing.T) {
		assert.JSONEq(t, geoSchema, string(byName["Geo_Lookup"]["inputSchema"]))
	})
	t.Run("deterministic", func(t *testing.T) {
		for range 3 {
			_, again := listPage(t, url, nil, nil)
			assert.Equal(t, string(raw), string(again))
		}
	})
}

func TestToolsListSeesNewTools(t *testing.T) {
	t.Parallel()
	reg := newRegistry(t)
	url := serve(t, reg, nil)
	l, _ := listPage(t, url, nil, nil)
	require.Equal(t, fixtureNames, toolNames(l))

	addTool(t, reg, "Zeta.Late", func(context.Context, struct{}) (int, error) { return 1, nil })
	require.NoError(t, otc.Register(reg, otc.Tool{ID: "Calculator.Add", Version: "3.0.0", Description: "Adds, again."}, testkit.Add))
	l, _ = listPage(t, url, nil, nil)
	assert.Equal(t, append(slices.Clone(fixtureNames), "Zeta_Late"), toolNames(l), "the list follows the registry")
	assert.JSONEq(t, `"Adds, again."`, string(l.Tools[1]["description"]))
}

func TestToolsListPagination(t *testing.T) {
	t.Parallel()
	reg := newRegistry(t)
	t.Run("pages", func(t *testing.T) {
		t.Parallel()
		url := serve(t, reg, &mcp.Options{PageSize: 5})
		var names []string
		var params any
		pages := 0
		for {
			l, _ := listPage(t, url, params, nil)
			pages++
			require.LessOrEqual(t, len(l.Tools), 5)
			names = append(names, toolNames(l)...)
			if l.NextCursor == nil {
				break
			}
			require.NotEmpty(t, *l.NextCursor)
			require.Less(t, pages, 10, "the cursors must end")
			params = obj{"cursor": *l.NextCursor}
		}
		assert.Equal(t, 3, pages)
		assert.Equal(t, fixtureNames, names, "following the cursors lists every tool once, in order")
	})
	t.Run("exact_multiple", func(t *testing.T) {
		t.Parallel()
		url := serve(t, reg, &mcp.Options{PageSize: len(fixtureNames)})
		l, _ := listPage(t, url, nil, nil)
		assert.Len(t, l.Tools, len(fixtureNames))
		assert.Nil(t, l.NextCursor, "no cursor to an empty page")
	})
	t.Run("one_page", func(t *testing.T) {
		t.Parallel()
		url := serve(t, reg, &mcp.Options{PageSize: -1})
		l, _ := listPage(t, url, nil, nil)
		assert.Equal(t, fixtureNames, toolNames(l))
		assert.Nil(t, l.NextCursor)
	})
	url := serve(t, reg, &mcp.Options{PageSize: 5})
	for _, tc := range []struct {
		name   string
		cursor any
		status int
		msg    string
	}{
		{"not_base64", "!!!", http.StatusOK, "Invalid cursor"},
		{"empty", "", http.StatusOK, "Invalid cursor"},
		{"not_a_string", 5, http.StatusBadRequest, `"cursor" must be a string`},
	} {
		t.Run("invalid_cursor_"+tc.name, func(t *testing.T) {
			t.Parallel()
			a := post(t, url, request(7, "tools/list", obj{"cursor": tc.cursor}), nil)
			e, id := a.rpcErr(t, tc.status, -32602)
			assert.Contains(t, e.Message, tc.msg)
			assert.Equal(t, "7", id)
		})
	}
}

// keys returns the sorted keys of a map.
func keys[V any](m map[string]V) []string {
	return slices.Sorted(func(yield func(string) bool) {
		for k := range m {
			if !yield(k) {
				return
			}
		}
	})
}

// callResult is a CallToolResult.
type callResult struct {
	Content           []map[string]any           `json:"content"`
	StructuredContent json.RawMessage            `json:"structuredContent"`
	IsError           bool                       `json:"isError"`
	Meta              map[string]json.RawMessage `json:"_meta"`
	ResultType        string                     `json:"resultType"`
}

func decodeCall(t testing.TB, raw json.RawMessage) callResult {
	t.Helper()
	var r callResult
	require.NoError(t, json.Unmarshal(raw, &r), "%s", raw)
	return r
}

// errorMeta decodes the _meta[MetaError] of an isError result.
func errorMeta(t testing.TB, r callResult) map[string]any {
	t.Helper()
	require.Contains(t, r.Meta, mcp.MetaError)
	var m map[string]any
	require.NoError(t, json.Unmarshal(r.Meta[mcp.MetaError], &m))
	return m
}

// text returns the text of a result's only block.
func text(t testing.TB, r callResult) string {
	t.Helper()
	require.Len(t, r.Content, 1)
	assert.Equal(t, "text", r.Content[0]["type"])
	s, _ := r.Content[0]["text"].(string)
	return s
}

func TestToolsCall(t *testing.T) {
	t.Parallel()
	url := serve(t, newRegistry(t), nil)
	call := func(t *testing.T, params obj) json.RawMessage {
		t.Helper()
		return post(t, url, request(3, "tools/call", params), nil).result(t)
	}
	for _, tc := range []struct {
		name   string
		params obj
		want   string
	}{
		{"value_object", callParams("Geometry_Point", obj{"x": 1, "y": 2.5}, nil),
			`{"content":[{"type":"text","text":"{\"x\":1,\"y\":2.5,\"label\":\"(1, 2.5)\"}"}],"structuredContent":{"x":1,"y":2.5,"label":"(1, 2.5)"}}`},
		{"scalar_wrapped", callParams("Calculator_Add", obj{"a": 10, "b": 5}, nil),
			`{"content":[{"type":"text","text":"15"}],"structuredContent":{"result":15}}`},
		{"older_version_by_name", callParams("Calculator_Add@1", obj{"a": 10, "b": 5}, nil),
			`{"content":[{"type":"text","text":"-15"}],"structuredContent":{"result":-15}}`},
		// A string is its own text, not its JSON: a model reads "done",
		// not "\"done\"".
		{"string_wrapped", callParams("Progress_Count", nil, nil),
			`{"content":[{"type":"text","text":"done"}],"structuredContent":{"result":"done"}}`},
		{"content_blocks", callParams("Media_Chart", obj{}, nil),
			`{"content":[{"type":"text","text":"The chart:"},{"type":"image","data":"AQID","mimeType":"image/png"}]}`},
		{"no_output", callParams("Util_Noop", nil, nil), `{"content":[]}`},
		{"null_arguments", obj{"name": "Util_Noop", "arguments": nil}, `{"content":[]}`},
		{"requirements_from_meta", callParams("Vault_Read", obj{}, obj{mcp.MetaContext: obj{
			"secrets": []obj{{"id": "API_KEY", "value": secretValue}}, "user_id": "u1"}}),
			`{"content":[{"type":"text","text":"{\"has_key\":true,\"user_id\":\"u1\"}"}],"structuredContent":{"has_key":true,"user_id":"u1"}}`},
		{"call_id_from_meta", callParams("Meta_Inspect", nil, obj{mcp.MetaCallID: "call-42"}),
			`{"content":[{"type":"text","text":"{\"call_id\":\"call-42\",\"user_id\":\"\",\"http\":true}"}],"structuredContent":{"call_id":"call-42","user_id":"","http":true}}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			assert.JSONEq(t, tc.want, string(call(t, tc.params)))
		})
	}

	t.Run("generated_call_id", func(t *testing.T) {
		t.Parallel()
		r := decodeCall(t, call(t, callParams("Meta_Inspect", nil, nil)))
		var out inspectOutput
		require.NoError(t, json.Unmarshal(r.StructuredContent, &out))
		assert.Len(t, out.CallID, 36, "a UUID: %q", out.CallID)
	})
	t.Run("invalid_input", func(t *testing.T) {
		t.Parallel()
		r := decodeCall(t, call(t, callParams("Order_Place", obj{"zip": "abc", "count": 0}, nil)))
		assert.True(t, r.IsError)
		assert.Nil(t, r.StructuredContent)
		txt := text(t, r)
		assert.Contains(t, txt, "The arguments are invalid:")
		assert.Contains(t, txt, "\n- count: ")
		assert.Contains(t, txt, "\n- zip: ")
		assert.Less(t, strings.Index(txt, "- count"), strings.Index(txt, "- zip"), "parameters in order")
		assert.Contains(t, txt, "Correct these arguments")
		meta := errorMeta(t, r)
		assert.Equal(t, "invalid_input", meta["code"])
		assert.Equal(t, false, meta["can_retry"])
		pe, ok := meta["parameter_errors"].(map[string]any)
		require.True(t, ok, "%v", meta)
		assert.Equal(t, []string{"count", "zip"}, keys(pe))
	})
	t.Run("missing_argument", func(t *testing.T) {
		t.Parallel()
		r := decodeCall(t, call(t, callParams("Order_Place", obj{"count": 2}, nil)))
		assert.True(t, r.IsError)
		assert.Contains(t, text(t, r), "- zip: ")
		assert.Contains(t, errorMeta(t, r)["parameter_errors"], "zip")
	})
	t.Run("tool_error", func(t *testing.T) {
		t.Parallel()
		r := decodeCall(t, call(t, callParams("Util_Fail", nil, nil)))
		assert.True(t, r.IsError)
		assert.Equal(t, "The weather service is down\n\nAsk for a smaller region.\n\nThis may succeed if tried again after 1.5s.", text(t, r))
		assert.JSONEq(t, `{"code":"tool_error","can_retry":true,"retry_after_ms":1500}`, string(r.Meta[mcp.MetaError]))
		assert.Equal(t, []string{mcp.MetaError}, keys(r.Meta))
	})
	t.Run("missing_requirements", func(t *testing.T) {
		t.Parallel()
		raw := call(t, callParams("Vault_Read", nil, nil))
		assert.NotContains(t, string(raw), "structuredContent")
		r := decodeCall(t, raw)
		assert.True(t, r.IsError)
		txt := text(t, r)
		assert.Contains(t, txt, "API_KEY")
		assert.Contains(t, txt, "user id")
		assert.Contains(t, txt, `_meta["`+mcp.MetaContext+`"]`)
		meta := errorMeta(t, r)
		assert.Equal(t, map[string]any{"secrets": []any{map[string]any{"id": "API_KEY"}}, "user_id": true}, meta["missing_requirements"])
	})
	t.Run("requirement_partly_met", func(t *testing.T) {
		t.Parallel()
		r := decodeCall(t, call(t, callParams("Vault_Read", nil, obj{mcp.MetaContext: obj{"user_id": "u1"}})))
		assert.True(t, r.IsError)
		assert.Contains(t, text(t, r), "API_KEY")
		assert.NotContains(t, text(t, r), "user id")
	})

	for _, tc := range []struct {
		name   string
		params obj
		status int
		msg    string
	}{
		{"unknown_tool", callParams("Nope_Nothing", nil, nil), http.StatusOK, "Nope_Nothing"},
		{"unknown_version", callParams("Calculator_Add@9", nil, nil), http.StatusOK, "Calculator_Add"},
		{"no_name", obj{"arguments": obj{}}, http.StatusOK, "params.name"},
		{"empty_name", obj{"name": ""}, http.StatusOK, "params.name"},
		{"name_not_a_string", obj{"name": 5}, http.StatusBadRequest, `"name" must be a string`},
		{"arguments_array", obj{"name": "Calculator_Add", "arguments": []int{1}}, http.StatusBadRequest, `"arguments" must be a JSON object`},
		{"arguments_string", obj{"name": "Calculator_Add", "arguments": "a=1"}, http.StatusBadRequest, `"arguments" must be a JSON object`},
		{"context_not_an_object", callParams("Vault_Read", nil, obj{mcp.MetaContext: "secret"}), http.StatusOK, mcp.MetaContext},
		{"call_id_not_a_string", callParams("Meta_Inspect", nil, obj{mcp.MetaCallID: 5}), http.StatusBadRequest, mcp.MetaCallID},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			a := post(t, url, request("c1", "tools/call", tc.params), nil)
			e, id := a.rpcErr(t, tc.status, -32602)
			assert.Contains(t, e.Message, tc.msg)
			assert.Equal(t, `"c1"`, id, "the error names the request")
		})
	}
}

func TestMiddlewareSeesMCP(t *testing.T) {
	t.Parallel()
	var mu sync.Mutex
	var seen []string
	mw := func(next otc.CallFunc) otc.CallFunc {
		return func(ctx context.Context, c *otc.Call) (otc.CallResult, error) {
			mu.Lock()
			seen = append(seen, c.Protocol+" "+c.ToolID)
			mu.Unlock()
			return next(ctx, c)
		}
	}
	reg := newRegistry(t, mw)
	url := serve(t, reg, nil)
	post(t, url, request(1, "tools/call", callParams("Calculator_Add", obj{"a": 1, "b": 2}, nil)), nil).result(t)
	post(t, url, request(2, "tools/call", callParams("Nope_Nothing", nil, nil)), nil).rpcErr(t, http.StatusOK, -32602)

	c := startStdio(t, t.Context(), reg, nil)
	c.send(request(3, "tools/call", callParams("Util_Noop", nil, nil)))
	assert.Nil(t, c.recvResponse().Error)

	mu.Lock()
	defer mu.Unlock()
	assert.Equal(t, []string{"mcp Calculator_Add", "mcp Nope_Nothing", "mcp Util_Noop"}, seen)
}

// TestToolsListLargePage lists a page far larger than a tool call's
// answer, which is written in parts rather than copied whole: the answer
// is still one JSON-RPC response of the announced length.
func TestToolsListLargePage(t *testing.T) {
	t.Parallel()
	reg := otc.NewRegistry(nil)
	var want []string
	for i := range 300 {
		id := fmt.Sprintf("Big.Tool%03d", i)
		require.NoError(t, otc.Register(reg, otc.Tool{ID: id, Version: "1.0.0", Description: strings.Repeat("A long description. ", 10)}, testkit.Add))
		want = append(want, strings.ReplaceAll(id, ".", "_"))
	}
	url := serve(t, reg, &mcp.Options{PageSize: -1})
	a := post(t, url, `{"jsonrpc":"2.0","id":"big-list","method":"tools/list"}`, nil)
	require.Equal(t, http.StatusOK, a.status)
	require.Greater(t, len(a.body), 64<<10)
	assert.Equal(t, strconv.Itoa(len(a.body)), a.header.Get("Content-Length"))
	r := a.rpc(t)
	assert.Equal(t, `"big-list"`, string(r.ID))
	var l listResult
	require.NoError(t, json.Unmarshal(r.Result, &l))
	assert.Equal(t, want, toolNames(l))
}
