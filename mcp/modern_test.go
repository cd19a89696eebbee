package mcp_test

// Protocol version 2026-07-28 over Streamable HTTP: server/discover, the
// _meta every request carries, the headers checked against the body, the
// cache fields of results, and the errors of the stateless protocol.

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"log/slog"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/otcgo/otc"
	"github.com/otcgo/otc/auth"
	"github.com/otcgo/otc/mcp"
)

// modernCall returns a 2026-07-28 tools/call with extra _meta members.
func modernCall(id any, name string, args any, meta obj) string {
	return request(id, "tools/call", callParams(name, args, modernMeta(meta)))
}

// b64 returns the Base64 form of a header value.
func b64(s string) string {
	return "=?base64?" + base64.StdEncoding.EncodeToString([]byte(s)) + "?="
}

func TestDiscover(t *testing.T) {
	t.Parallel()
	reg := newRegistry(t)
	auth, err := auth.NewAPIKeyAuth(map[string]string{"ci": "key-1"})
	require.NoError(t, err)
	const versions = `"supportedVersions":["2026-07-28","2025-11-25","2025-06-18"],"capabilities":{"completions":{},"extensions":{"io.modelcontextprotocol/tasks":{}},"prompts":{"listChanged":true},"resources":{"subscribe":true,"listChanged":true},"tools":{"listChanged":true}}`
	for _, tc := range []struct {
		name string
		opts *mcp.Options
		hdr  map[string]string
		want string
	}{
		{"defaults", nil, nil,
			`{` + versions + `,"resultType":"complete","ttlMs":60000,"cacheScope":"public",` +
				`"_meta":{"io.modelcontextprotocol/serverInfo":{"name":"otc","version":"0.0.0"}}}`},
		{"options", &mcp.Options{Name: "calc", Version: "2.0.0", Instructions: "Use the calculator.", ListTTL: 5 * time.Second}, nil,
			`{` + versions + `,"instructions":"Use the calculator.","resultType":"complete","ttlMs":5000,"cacheScope":"public",` +
				`"_meta":{"io.modelcontextprotocol/serverInfo":{"name":"calc","version":"2.0.0"}}}`},
		{"no_caching", &mcp.Options{ListTTL: -1}, nil,
			`{` + versions + `,"resultType":"complete","ttlMs":0,"cacheScope":"public",` +
				`"_meta":{"io.modelcontextprotocol/serverInfo":{"name":"otc","version":"0.0.0"}}}`},
		{"private_when_authenticated", &mcp.Options{Authenticator: auth}, map[string]string{otc.HeaderAPIKey: "key-1"},
			`{` + versions + `,"resultType":"complete","ttlMs":60000,"cacheScope":"private",` +
				`"_meta":{"io.modelcontextprotocol/serverInfo":{"name":"otc","version":"0.0.0"}}}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			url := serve(t, reg, tc.opts)
			hdr := modernHeaders("server/discover", "")
			for k, v := range tc.hdr {
				hdr[k] = v
			}
			a := post(t, url, request(1, "server/discover", obj{"_meta": modernMeta(nil)}), hdr)
			assert.JSONEq(t, tc.want, string(a.result(t)))
		})
	}
	t.Run("client_info_optional", func(t *testing.T) {
		t.Parallel()
		url := serve(t, reg, nil)
		withInfo := modernMeta(obj{"io.modelcontextprotocol/clientInfo": obj{"name": "test", "version": "1"}})
		for _, meta := range []obj{modernMeta(nil), withInfo} {
			a := post(t, url, request(1, "server/discover", obj{"_meta": meta}), modernHeaders("server/discover", ""))
			assert.Contains(t, object(t, a.result(t)), "supportedVersions")
		}
	})
}

func TestModernMetaRequired(t *testing.T) {
	t.Parallel()
	url := serve(t, newRegistry(t), nil)
	const (
		pv   = "io.modelcontextprotocol/protocolVersion"
		caps = "io.modelcontextprotocol/clientCapabilities"
	)
	for _, tc := range []struct {
		name string
		body string
		msg  string
	}{
		{"no_params", `{"jsonrpc":"2.0","id":5,"method":"tools/list"}`, "carries params._meta"},
		{"no_meta", request(5, "tools/list", obj{}), "carries params._meta"},
		{"no_protocol_version", request(5, "tools/list", obj{"_meta": obj{caps: obj{}}}), pv},
		{"protocol_version_not_a_string", request(5, "tools/list", obj{"_meta": obj{pv: 20260728, caps: obj{}}}), pv},
		{"no_client_capabilities", request(5, "tools/list", obj{"_meta": obj{pv: mcp.Version20260728}}), caps},
		{"client_capabilities_not_an_object", request(5, "tools/list", obj{"_meta": obj{pv: mcp.Version20260728, caps: []string{"sampling"}}}), caps},
		{"meta_not_an_object", request(5, "tools/list", obj{"_meta": "2026-07-28"}), `"_meta" must be a JSON object`},
		{"discover_without_meta", request(5, "server/discover", obj{}), "carries params._meta"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			method := "tools/list"
			if strings.Contains(tc.body, "server/discover") {
				method = "server/discover"
			}
			a := post(t, url, tc.body, modernHeaders(method, ""))
			e, id := a.rpcErr(t, http.StatusBadRequest, -32602)
			assert.Contains(t, e.Message, tc.msg)
			assert.Equal(t, "5", id)
		})
	}
}

func TestModernVersionHeader(t *testing.T) {
	t.Parallel()
	url := serve(t, newRegistry(t), nil)
	list := func(version string) string {
		return request("v", "tools/list", obj{"_meta": modernMeta(obj{"io.modelcontextprotocol/protocolVersion": version})})
	}
	for _, tc := range []struct {
		name   string
		body   string
		header string // MCP-Protocol-Version; "" sends none
		code   int
		msg    string
	}{
		{"missing_header", list(mcp.Version20260728), "", -32020, "MCP-Protocol-Version header is required"},
		{"header_older_than_body", list(mcp.Version20260728), mcp.Version20251125, -32020, "does not match body value"},
		{"body_older_than_header", list(mcp.Version20251125), mcp.Version20260728, -32020, "does not match body value"},
		{"unsupported", list("v999"), "v999", -32022, "Unsupported protocol version"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			hdr := modernHeaders("tools/list", "")
			hdr["MCP-Protocol-Version"] = tc.header
			a := post(t, url, tc.body, hdr)
			e, id := a.rpcErr(t, http.StatusBadRequest, tc.code)
			assert.Contains(t, e.Message, tc.msg)
			assert.Equal(t, `"v"`, id)
			if tc.code == -32022 {
				assert.JSONEq(t, `{"supported":["2026-07-28","2025-11-25","2025-06-18"],"requested":"v999"}`, string(e.Data))
			}
		})
	}
	t.Run("legacy_header_unsupported", func(t *testing.T) {
		t.Parallel()
		a := post(t, url, request(1, "tools/list", nil), map[string]string{"MCP-Protocol-Version": "2024-11-05"})
		e, _ := a.rpcErr(t, http.StatusBadRequest, -32022)
		assert.Equal(t, `Unsupported protocol version "2024-11-05" in the MCP-Protocol-Version header: this server speaks 2026-07-28, 2025-11-25 and 2025-06-18`, e.Message)
	})
	t.Run("legacy_header_supported", func(t *testing.T) {
		t.Parallel()
		for _, v := range []string{mcp.Version20250618, mcp.Version20251125} {
			a := post(t, url, request(1, "tools/list", nil), map[string]string{"MCP-Protocol-Version": v})
			assert.Contains(t, object(t, a.result(t)), "tools")
		}
	})
}

func TestModernMethodHeader(t *testing.T) {
	t.Parallel()
	url := serve(t, newRegistry(t), nil)
	body := request(2, "tools/list", obj{"_meta": modernMeta(nil)})
	for _, tc := range []struct {
		name  string
		key   string // the header's name as sent, uncanonicalized
		value string // "" sends no header
		ok    bool
	}{
		{"exact", "Mcp-Method", "tools/list", true},
		{"name_lower_case", "mcp-method", "tools/list", true},
		{"name_upper_case", "MCP-METHOD", "tools/list", true},
		{"surrounding_whitespace", "Mcp-Method", " \ttools/list \t", true},
		{"missing", "Mcp-Method", "", false},
		{"other_method", "Mcp-Method", "tools/call", false},
		{"case_changed", "Mcp-Method", "Tools/List", false},
		{"empty", "Mcp-Method", " ", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			req := newPost(t, url, body)
			req.Header.Set("MCP-Protocol-Version", mcp.Version20260728)
			if tc.value != "" {
				req.Header[tc.key] = []string{tc.value}
			}
			a := do(t, req)
			if tc.ok {
				assert.Contains(t, object(t, a.result(t)), "tools")
				return
			}
			e, id := a.rpcErr(t, http.StatusBadRequest, -32020)
			assert.Contains(t, e.Message, "Mcp-Method")
			assert.Equal(t, "2", id)
		})
	}
}

func TestModernNameHeader(t *testing.T) {
	t.Parallel()
	url := serve(t, newRegistry(t), nil)
	body := modernCall(3, "Calculator_Add", obj{"a": 1, "b": 2}, nil)
	for _, tc := range []struct {
		name  string
		key   string
		value string // "" sends no header
		ok    bool
	}{
		{"exact", "Mcp-Name", "Calculator_Add", true},
		{"base64", "Mcp-Name", b64("Calculator_Add"), true},
		{"name_lower_case", "mcp-name", "Calculator_Add", true},
		{"surrounding_whitespace", "Mcp-Name", "  Calculator_Add\t", true},
		{"missing", "Mcp-Name", "", false},
		{"other_tool", "Mcp-Name", "Geometry_Point", false},
		{"case_changed", "Mcp-Name", "calculator_add", false},
		{"base64_of_other_tool", "Mcp-Name", b64("Geometry_Point"), false},
		{"invalid_base64", "Mcp-Name", "=?base64?Q2FsY3VsYXRvcl9BZGQ?=", false},
		{"base64_garbage", "Mcp-Name", "=?base64?!!!!?=", false},
		{"base64_not_utf8", "Mcp-Name", b64("\xff\xfe"), false},
		{"base64_unterminated", "Mcp-Name", "=?base64?" + base64.StdEncoding.EncodeToString([]byte("Calculator_Add")), false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			req := newPost(t, url, body)
			req.Header.Set("MCP-Protocol-Version", mcp.Version20260728)
			req.Header.Set("Mcp-Method", "tools/call")
			if tc.value != "" {
				req.Header[tc.key] = []string{tc.value}
			}
			a := do(t, req)
			if tc.ok {
				r := decodeCall(t, a.result(t))
				assert.JSONEq(t, `{"result":3}`, string(r.StructuredContent))
				return
			}
			e, id := a.rpcErr(t, http.StatusBadRequest, -32020)
			assert.Contains(t, e.Message, "Mcp-Name")
			assert.Equal(t, "3", id)
		})
	}
	t.Run("not_needed_for_list", func(t *testing.T) {
		t.Parallel()
		a := post(t, url, request(1, "tools/list", obj{"_meta": modernMeta(nil)}), modernHeaders("tools/list", ""))
		assert.Contains(t, object(t, a.result(t)), "tools")
	})
}

func TestModernMethods(t *testing.T) {
	t.Parallel()
	url := serve(t, newRegistry(t), &mcp.Options{PageSize: 5})
	for _, method := range []string{"initialize", "ping", "logging/setLevel", "resources/subscribe", "tasks/result", "tasks/list"} {
		t.Run("not_found_"+strings.ReplaceAll(method, "/", "_"), func(t *testing.T) {
			t.Parallel()
			params := obj{"_meta": modernMeta(nil), "protocolVersion": mcp.Version20260728, "level": "info"}
			a := post(t, url, request("m", method, params), modernHeaders(method, ""))
			e, id := a.rpcErr(t, http.StatusNotFound, -32601)
			assert.Contains(t, e.Message, method)
			assert.Equal(t, `"m"`, id)
		})
	}
	for method, key := range map[string]string{"prompts/list": "prompts", "resources/list": "resources", "resources/templates/list": "resourceTemplates"} {
		t.Run("empty_"+strings.ReplaceAll(method, "/", "_"), func(t *testing.T) {
			t.Parallel()
			a := post(t, url, request(3, method, obj{"_meta": modernMeta(nil)}), modernHeaders(method, ""))
			res := object(t, a.result(t))
			assert.Equal(t, []string{"_meta", "cacheScope", key, "resultType", "ttlMs"}, keys(res))
			assert.Equal(t, []any{}, res[key])
			assert.Equal(t, "complete", res["resultType"])
		})
	}
	t.Run("tools_list", func(t *testing.T) {
		t.Parallel()
		a := post(t, url, request(1, "tools/list", obj{"_meta": modernMeta(nil)}), modernHeaders("tools/list", ""))
		res := object(t, a.result(t))
		assert.Equal(t, []string{"_meta", "cacheScope", "nextCursor", "resultType", "tools", "ttlMs"}, keys(res))
		assert.Equal(t, "complete", res["resultType"])
		assert.Equal(t, float64(60000), res["ttlMs"])
		assert.Equal(t, "public", res["cacheScope"])
		assert.Equal(t, map[string]any{"io.modelcontextprotocol/serverInfo": map[string]any{"name": "otc", "version": "0.0.0"}}, res["_meta"])
		assert.Len(t, res["tools"], 5)

		next := post(t, url, request(2, "tools/list", obj{"_meta": modernMeta(nil), "cursor": res["nextCursor"]}), modernHeaders("tools/list", ""))
		var l listResult
		require.NoError(t, json.Unmarshal(next.result(t), &l))
		assert.Equal(t, fixtureNames[5:10], toolNames(l))
	})
	for _, tc := range []struct {
		name string
		tool string
		args any
		want string
	}{
		{"call_value", "Calculator_Add", obj{"a": 2, "b": 3},
			`{"content":[{"type":"text","text":"5"}],"structuredContent":{"result":5},"_meta":{"io.modelcontextprotocol/serverInfo":{"name":"otc","version":"0.0.0"}},"resultType":"complete"}`},
		{"call_content", "Media_Chart", nil,
			`{"content":[{"type":"text","text":"The chart:"},{"type":"image","data":"AQID","mimeType":"image/png"}],"_meta":{"io.modelcontextprotocol/serverInfo":{"name":"otc","version":"0.0.0"}},"resultType":"complete"}`},
		{"call_no_output", "Util_Noop", nil, `{"content":[],"_meta":{"io.modelcontextprotocol/serverInfo":{"name":"otc","version":"0.0.0"}},"resultType":"complete"}`},
		{"call_tool_error", "Util_Fail", nil,
			`{"content":[{"type":"text","text":"The weather service is down\n\nAsk for a smaller region.\n\nThis may succeed if tried again after 1.5s."}],` +
				`"isError":true,"_meta":{"io.github.otcgo/error":{"code":"tool_error","can_retry":true,"retry_after_ms":1500},"io.modelcontextprotocol/serverInfo":{"name":"otc","version":"0.0.0"}},"resultType":"complete"}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			a := post(t, url, modernCall(1, tc.tool, tc.args, nil), modernHeaders("tools/call", tc.tool))
			assert.JSONEq(t, tc.want, string(a.result(t)))
		})
	}
	t.Run("call_invalid_input", func(t *testing.T) {
		t.Parallel()
		a := post(t, url, modernCall(1, "Order_Place", obj{"zip": "1"}, nil), modernHeaders("tools/call", "Order_Place"))
		r := decodeCall(t, a.result(t))
		assert.True(t, r.IsError)
		assert.Equal(t, "complete", r.ResultType)
		assert.Contains(t, errorMeta(t, r), "parameter_errors")
	})
	t.Run("call_context_in_meta", func(t *testing.T) {
		t.Parallel()
		meta := obj{mcp.MetaContext: obj{"secrets": []obj{{"id": "API_KEY", "value": secretValue}}, "user_id": "u9"}, mcp.MetaCallID: "c-9"}
		a := post(t, url, modernCall(1, "Vault_Read", nil, meta), modernHeaders("tools/call", "Vault_Read"))
		assert.JSONEq(t, `{"has_key":true,"user_id":"u9"}`, string(decodeCall(t, a.result(t)).StructuredContent))
	})
	t.Run("unknown_tool", func(t *testing.T) {
		t.Parallel()
		a := post(t, url, modernCall("u", "Nope_Nothing", nil, nil), modernHeaders("tools/call", "Nope_Nothing"))
		e, id := a.rpcErr(t, http.StatusBadRequest, -32602)
		assert.Contains(t, e.Message, "Nope_Nothing")
		assert.Equal(t, `"u"`, id)
	})
	t.Run("arguments_not_an_object", func(t *testing.T) {
		t.Parallel()
		a := post(t, url, modernCall("u", "Calculator_Add", []int{1, 2}, nil), modernHeaders("tools/call", "Calculator_Add"))
		e, id := a.rpcErr(t, http.StatusBadRequest, -32602)
		assert.Contains(t, e.Message, "arguments")
		assert.Equal(t, `"u"`, id)
	})
	for name, accept := range map[string]string{"sse": "application/json, text/event-stream", "json_only": "application/json"} {
		t.Run("invalid_log_level_"+name, func(t *testing.T) {
			t.Parallel()
			hdr := modernHeaders("tools/call", "Log_Emit")
			hdr["Accept"] = accept
			a := post(t, url, modernCall(1, "Log_Emit", nil, obj{"io.modelcontextprotocol/logLevel": "loud"}), hdr)
			e, _ := a.rpcErr(t, http.StatusBadRequest, -32602)
			assert.Contains(t, e.Message, "loud")
		})
	}
}

func TestRequireClientCapability(t *testing.T) {
	t.Parallel()
	url := serve(t, newRegistry(t), nil)
	hdr := modernHeaders("tools/call", "Agent_Sample")
	capsMeta := func(caps obj) obj { return obj{"io.modelcontextprotocol/clientCapabilities": caps} }
	t.Run("missing", func(t *testing.T) {
		t.Parallel()
		a := post(t, url, modernCall(41, "Agent_Sample", nil, capsMeta(obj{"roots": obj{}})), hdr)
		e, id := a.rpcErr(t, http.StatusBadRequest, -32021)
		assert.Equal(t, "Missing required client capability: sampling", e.Message)
		assert.JSONEq(t, `{"requiredCapabilities":{"sampling":{}}}`, string(e.Data))
		assert.Equal(t, "41", id)
	})
	t.Run("missing_over_sse", func(t *testing.T) {
		t.Parallel()
		a := post(t, url, modernCall(42, "Agent_Sample", nil, capsMeta(obj{})), hdr)
		e, id := a.rpcErr(t, http.StatusBadRequest, -32021)
		assert.Contains(t, e.Message, "sampling")
		assert.Equal(t, "42", id)
	})
	t.Run("declared", func(t *testing.T) {
		t.Parallel()
		a := post(t, url, modernCall(43, "Agent_Sample", nil, capsMeta(obj{"sampling": obj{}})), hdr)
		assert.JSONEq(t, `{"known":true,"caps":{"sampling":{}}}`, string(decodeCall(t, a.result(t)).StructuredContent))
	})
	t.Run("unknown_in_legacy", func(t *testing.T) {
		t.Parallel()
		a := post(t, url, request(44, "tools/call", callParams("Agent_Sample", nil, nil)), nil)
		assert.JSONEq(t, `{"known":false,"caps":null}`, string(decodeCall(t, a.result(t)).StructuredContent))
	})
}

func TestParamHeaders(t *testing.T) {
	t.Parallel()
	url := serve(t, newRegistry(t), nil)
	for _, tc := range []struct {
		name string
		args obj
		hdr  map[string]string // raw header names
		ok   bool
		msg  string
	}{
		{"string_matches", obj{"query": "tea", "region": "eu-west"}, map[string]string{"Mcp-Param-Region": "eu-west"}, true, ""},
		{"string_base64", obj{"query": "tea", "region": "Zürich"}, map[string]string{"Mcp-Param-Region": b64("Zürich")}, true, ""},
		{"name_lower_case", obj{"query": "tea", "region": "eu-west"}, map[string]string{"mcp-param-region": "eu-west"}, true, ""},
		{"string_missing", obj{"query": "tea", "region": "eu-west"}, nil, false, "Mcp-Param-Region header is required"},
		{"string_mismatch", obj{"query": "tea", "region": "eu-west"}, map[string]string{"Mcp-Param-Region": "us-east"}, false, "Mcp-Param-Region header value does not match"},
		{"string_case_changed", obj{"query": "tea", "region": "eu-west"}, map[string]string{"Mcp-Param-Region": "EU-WEST"}, false, "does not match"},
		{"string_bad_base64", obj{"query": "tea", "region": "eu-west"}, map[string]string{"Mcp-Param-Region": "=?base64?***?="}, false, "does not match"},
		{"integer_matches", obj{"query": "tea", "limit": 10}, map[string]string{"Mcp-Param-Limit": "10"}, true, ""},
		{"integer_numerically", obj{"query": "tea", "limit": 10}, map[string]string{"Mcp-Param-Limit": "10.0"}, true, ""},
		{"integer_exponent", obj{"query": "tea", "limit": 10}, map[string]string{"Mcp-Param-Limit": "1e1"}, true, ""},
		{"integer_base64", obj{"query": "tea", "limit": 10}, map[string]string{"Mcp-Param-Limit": b64("10")}, true, ""},
		{"integer_mismatch", obj{"query": "tea", "limit": 10}, map[string]string{"Mcp-Param-Limit": "11"}, false, "Mcp-Param-Limit"},
		{"integer_not_a_number", obj{"query": "tea", "limit": 10}, map[string]string{"Mcp-Param-Limit": "ten"}, false, "Mcp-Param-Limit"},
		{"integer_missing", obj{"query": "tea", "limit": 10}, map[string]string{"Mcp-Param-Region": "x"}, false, "Mcp-Param-Limit header is required"},
		{"both", obj{"query": "tea", "region": "eu", "limit": 3}, map[string]string{"Mcp-Param-Region": "eu", "Mcp-Param-Limit": "3"}, true, ""},
		{"both_one_missing", obj{"query": "tea", "region": "eu", "limit": 3}, map[string]string{"Mcp-Param-Region": "eu"}, false, "Mcp-Param-Limit"},
		{"absent_needs_no_header", obj{"query": "tea"}, nil, true, ""},
		{"absent_header_ignored", obj{"query": "tea"}, map[string]string{"Mcp-Param-Region": "anything"}, true, ""},
		{"null_needs_no_header", obj{"query": "tea", "region": nil}, nil, true, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			req := newPost(t, url, modernCall("g", "Geo_Lookup", tc.args, nil))
			for k, v := range modernHeaders("tools/call", "Geo_Lookup") {
				req.Header.Set(k, v)
			}
			for k, v := range tc.hdr {
				req.Header[k] = []string{v}
			}
			a := do(t, req)
			if !tc.ok {
				e, id := a.rpcErr(t, http.StatusBadRequest, -32020)
				assert.Contains(t, e.Message, tc.msg)
				assert.Equal(t, `"g"`, id)
				return
			}
			r := decodeCall(t, a.result(t))
			if tc.name == "null_needs_no_header" {
				assert.True(t, r.IsError, "the schema refuses a null region: %v", r.Content)
				return
			}
			assert.False(t, r.IsError, "%v", r.Content)
			want, _ := json.Marshal(tc.args)
			assert.JSONEq(t, string(want), string(r.StructuredContent))
		})
	}
	t.Run("versioned_name_checked_too", func(t *testing.T) {
		t.Parallel()
		req := newPost(t, url, modernCall("v", "Geo_Lookup@1", obj{"query": "tea", "region": "eu"}, nil))
		for k, v := range modernHeaders("tools/call", "Geo_Lookup@1") {
			req.Header.Set(k, v)
		}
		e, _ := do(t, req).rpcErr(t, http.StatusBadRequest, -32020)
		assert.Contains(t, e.Message, "Mcp-Param-Region header is required")
	})
	t.Run("legacy_needs_no_header", func(t *testing.T) {
		t.Parallel()
		a := post(t, url, request(1, "tools/call", callParams("Geo_Lookup", obj{"query": "tea", "region": "eu"}, nil)), nil)
		assert.False(t, decodeCall(t, a.result(t)).IsError)
	})
}

// nullsInput has an optional field with a default inside an optional
// object, and a date-time.
type nullsInput struct {
	Room *struct {
		Beds int `json:"beds,omitempty" jsonschema:"description=How many beds.,default=1"`
	} `json:"room,omitempty" jsonschema:"description=The room; null for none."`
	Arrive time.Time `json:"arrive,omitempty" jsonschema:"description=When the guest arrives."`
}

// TestNullsDefaultsAndRefusalsOverMCP: MCP shares the pipeline: null for
// an optional field is "not given", a nested default reaches the
// function, and a date without a time is an invalid-input result naming
// the parameter.
func TestNullsDefaultsAndRefusalsOverMCP(t *testing.T) {
	t.Parallel()
	reg := otc.NewRegistry(&otc.RegistryOptions{Logger: slog.New(slog.DiscardHandler)})
	addTool(t, reg, "Booking.Make", func(_ context.Context, in nullsInput) (map[string]any, error) {
		return map[string]any{"room": in.Room, "arrive_set": !in.Arrive.IsZero()}, nil
	})
	url := serve(t, reg, nil)

	a := post(t, url, modernCall(1, "Booking_Make", obj{"room": obj{"beds": nil}, "arrive": nil}, nil), modernHeaders("tools/call", "Booking_Make"))
	r := decodeCall(t, a.result(t))
	assert.False(t, r.IsError)
	assert.JSONEq(t, `{"room":{"beds":1},"arrive_set":false}`, string(r.StructuredContent))

	a = post(t, url, modernCall(2, "Booking_Make", obj{"arrive": "2026-11-22"}, nil), modernHeaders("tools/call", "Booking_Make"))
	r = decodeCall(t, a.result(t))
	assert.True(t, r.IsError)
	assert.Equal(t, map[string]any{"arrive": "Must be a date-time in RFC 3339 form, such as 2026-11-22T10:00:00Z"}, errorMeta(t, r)["parameter_errors"])
}
