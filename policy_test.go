package otc_test

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/otcgo/otc"
	"github.com/otcgo/otc/internal/testkit"
	"github.com/otcgo/otc/mcp"
	"github.com/otcgo/otc/rest"
)

// The policy tests put the claims of a capability token in a test header,
// read by an authenticator that trusts it (testkit.ClaimsAuth), so that
// every check of a tool's policy can be reached over each wire format
// without signing tokens; the capability authenticator's own tests cover
// the signatures.

type refundInput struct {
	OrderID string `json:"order_id" jsonschema:"description=The order to refund."`
}

func newPolicyServer(t *testing.T) string {
	t.Helper()
	// Every tool is listed to everyone, so that each refusal names its
	// reason; without it, a caller that sees a tool through no protocol
	// is answered as for an unknown tool (TestHiddenToolsAnswerAsUnknown).
	reg := otc.NewRegistry(&otc.RegistryOptions{Logger: slog.New(slog.DiscardHandler), ListEveryTool: true})
	reg2 := func(id string, p *otc.Policy) {
		require.NoError(t, otc.Register(reg, otc.Tool{ID: id, Version: "1.0.0", Description: "A payments tool.", Policy: p},
			func(ctx context.Context, in refundInput) (string, error) { return "done:" + in.OrderID, nil }))
	}
	reg2("Pay.Refund", &otc.Policy{
		Protocols:            []string{"otc", "mcp/2026-07-28"},
		ResourceURI:          "urn:test:pay",
		RequiredCapabilities: []string{"pay:refund"},
		MaxBlastRadius:       "tenant:*",
		RequiresExecution:    true,
		AllowedOperations:    []string{"refund"},
		AllowedTargets:       []string{"order:1", "order:2"},
	})
	reg2("Pay.Quote", &otc.Policy{Protocols: []string{"http"}})
	reg2("Pay.Audit", &otc.Policy{RequiredCapabilities: []string{"pay:audit"}}) // audience: its id
	reg2("Pay.Open", nil)

	auth := testkit.ClaimsAuth()
	mux := http.NewServeMux()
	mux.Handle("/v1/", http.StripPrefix("/v1", rest.NewHandler(reg, &rest.Options{Authenticator: auth})))
	mux.Handle("/mcp", mcp.NewHandler(reg, &mcp.Options{Authenticator: auth}))
	mux.Handle("/", otc.NewHandler(reg, &otc.HandlerOptions{Authenticator: auth}))
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	return srv.URL
}

type policyAnswer struct {
	status int
	header http.Header
	body   map[string]any
	raw    string
}

func policyPost(t *testing.T, url, body string, claims map[string]any, headers map[string]string) policyAnswer {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, url, strings.NewReader(body))
	require.NoError(t, err)
	req.Header.Set("Content-Type", "application/json")
	for k, v := range headers {
		req.Header.Set(k, v)
	}
	if claims != nil {
		b, err := json.Marshal(claims)
		require.NoError(t, err)
		req.Header.Set(testkit.ClaimsHeader, string(b))
	}
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	var m map[string]any
	require.NoError(t, json.Unmarshal(raw, &m), string(raw))
	return policyAnswer{status: resp.StatusCode, header: resp.Header, body: m, raw: string(raw)}
}

// seesEveryPayTool are the claims of a capability token that sees every
// tool of the policy server: the checks that depend on the exact call
// (the execution binding) never hide a tool.
var seesEveryPayTool = map[string]any{
	"aud":          []any{"urn:test:pay", "Pay.Audit@1.0.0"},
	"caps":         []any{"pay:refund", "pay:audit"},
	"blast_radius": "tenant:acme",
}

// refundClaims returns claims that pass every check of Pay.Refund for body
// sent to path, changed by edit. Each has a new token id (jti), since an
// execution-bound token runs its tool once.
func refundClaims(body, htu string, edit func(map[string]any)) map[string]any {
	c := map[string]any{
		"iss":          "https://issuer.test",
		"jti":          otc.NewCallID(),
		"exp":          float64(time.Now().Add(5 * time.Minute).Unix()),
		"aud":          []any{"urn:other", "urn:test:pay"},
		"caps":         []any{"pay:read", "pay:refund"},
		"blast_radius": "tenant:acme",
		"exec_act":     "refund",
		"target":       "order:1",
		"inp_hash":     testkit.InpHash(body),
		"htm":          "POST",
		"htu":          htu,
	}
	if edit != nil {
		edit(c)
	}
	return c
}

func TestPolicyOverOTC(t *testing.T) {
	t.Parallel()
	base := newPolicyServer(t)
	const body = `{"request":{"tool_id":"Pay.Refund","input":{"order_id":"1"}}}`
	for _, tc := range []struct {
		name   string
		body   string
		claims map[string]any
		status int
		reason string
	}{
		{"passes_every_check", body, refundClaims(body, base+"/call", nil), 200, ""},
		{"htm_and_htu_may_be_absent", body, refundClaims(body, "", func(c map[string]any) { delete(c, "htm"); delete(c, "htu") }), 200, ""},
		{"other_credentials", body, nil, 401, otc.ReasonMissingToken},
		{"audience_mismatch", body, refundClaims(body, base+"/call", func(c map[string]any) { c["aud"] = "urn:test:other" }), 403, otc.ReasonAudienceMismatch},
		{"audience_missing", body, refundClaims(body, base+"/call", func(c map[string]any) { delete(c, "aud") }), 403, otc.ReasonAudienceMismatch},
		{"audience_checked_before_capabilities", body, refundClaims(body, base+"/call", func(c map[string]any) { c["aud"] = "x"; c["caps"] = []any{} }), 403, otc.ReasonAudienceMismatch},
		{"capability_missing", body, refundClaims(body, base+"/call", func(c map[string]any) { c["caps"] = []any{"pay:read"} }), 403, otc.ReasonInsufficientCapabilities},
		{"capabilities_not_an_array", body, refundClaims(body, base+"/call", func(c map[string]any) { c["caps"] = map[string]any{"pay:refund": true} }), 403, otc.ReasonInsufficientCapabilities},
		{"blast_radius_missing", body, refundClaims(body, base+"/call", func(c map[string]any) { delete(c, "blast_radius") }), 403, otc.ReasonBlastRadiusExceeded},
		{"blast_radius_other_scope", body, refundClaims(body, base+"/call", func(c map[string]any) { c["blast_radius"] = "org:acme" }), 403, otc.ReasonBlastRadiusExceeded},
		{"blast_radius_unscoped", body, refundClaims(body, base+"/call", func(c map[string]any) { c["blast_radius"] = "*" }), 403, otc.ReasonBlastRadiusExceeded},
		{"blast_radius_empty_value", body, refundClaims(body, base+"/call", func(c map[string]any) { c["blast_radius"] = "tenant:" }), 403, otc.ReasonBlastRadiusExceeded},
		{"blast_radius_empty_scope", body, refundClaims(body, base+"/call", func(c map[string]any) { c["blast_radius"] = ":acme" }), 403, otc.ReasonBlastRadiusExceeded},
		{"blast_radius_colon", body, refundClaims(body, base+"/call", func(c map[string]any) { c["blast_radius"] = ":" }), 403, otc.ReasonBlastRadiusExceeded},
		{"blast_radius_any_tenant", body, refundClaims(body, base+"/call", func(c map[string]any) { c["blast_radius"] = "tenant:*" }), 200, ""},
		{"no_binding_claims", body, refundClaims(body, base+"/call", func(c map[string]any) {
			for _, k := range []string{"exec_act", "target", "inp_hash", "htm", "htu"} {
				delete(c, k)
			}
		}), 403, otc.ReasonExecBindingInvalid},
		{"operation_not_allowed", body, refundClaims(body, base+"/call", func(c map[string]any) { c["exec_act"] = "charge" }), 403, otc.ReasonExecBindingInvalid},
		{"operation_missing", body, refundClaims(body, base+"/call", func(c map[string]any) { delete(c, "exec_act") }), 403, otc.ReasonExecBindingInvalid},
		{"target_not_allowed", body, refundClaims(body, base+"/call", func(c map[string]any) { c["target"] = "order:3" }), 403, otc.ReasonExecBindingInvalid},
		{"inp_hash_missing", body, refundClaims(body, base+"/call", func(c map[string]any) { delete(c, "inp_hash") }), 403, otc.ReasonExecBindingInvalid},
		{"body_changed_by_one_byte", strings.Replace(body, `"1"`, `"2"`, 1), refundClaims(body, base+"/call", nil), 403, otc.ReasonExecBindingInvalid},
		{"body_with_one_more_space", body + " ", refundClaims(body, base+"/call", nil), 403, otc.ReasonExecBindingInvalid},
		{"htm_mismatch", body, refundClaims(body, base+"/call", func(c map[string]any) { c["htm"] = "PUT" }), 403, otc.ReasonExecBindingInvalid},
		{"htu_other_path", body, refundClaims(body, base+"/tools/call", nil), 403, otc.ReasonExecBindingInvalid},
		{"htu_other_host", body, refundClaims(body, "http://evil.example/call", nil), 403, otc.ReasonExecBindingInvalid},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			a := policyPost(t, base+"/call", tc.body, tc.claims, nil)
			require.Equal(t, tc.status, a.status, a.raw)
			if tc.status == 200 {
				assert.Contains(t, a.raw, `"value":"done:1"`)
				return
			}
			assert.Equal(t, tc.reason, a.body["reason"], a.raw)
			assert.NotEmpty(t, a.body["message"])
			assert.Equal(t, "otc://1.0", a.body["$schema"])
			if tc.status == 401 {
				assert.Equal(t, "Bearer", a.header.Get("WWW-Authenticate"))
			}
		})
	}
	t.Run("audience_defaults_to_the_tool_id", func(t *testing.T) {
		t.Parallel()
		const b = `{"request":{"tool_id":"Pay.Audit","input":{"order_id":"9"}}}`
		ok := policyPost(t, base+"/call", b, map[string]any{"aud": "Pay.Audit@1.0.0", "caps": []any{"pay:audit"}}, nil)
		assert.Equal(t, 200, ok.status, ok.raw)
		other := policyPost(t, base+"/call", b, map[string]any{"aud": "urn:test:pay", "caps": []any{"pay:audit"}}, nil)
		assert.Equal(t, 403, other.status, other.raw)
		assert.Equal(t, otc.ReasonAudienceMismatch, other.body["reason"], "a token for one tool cannot call another")
	})
	t.Run("protocol_denied_before_validation", func(t *testing.T) {
		t.Parallel()
		a := policyPost(t, base+"/call", `{"request":{"tool_id":"Pay.Quote","input":{"order_id":42}}}`, nil, nil)
		assert.Equal(t, 403, a.status, a.raw)
		assert.Equal(t, otc.ReasonProtocolDenied, a.body["reason"], "refused before the invalid input is looked at")
	})
	t.Run("no_policy_as_before", func(t *testing.T) {
		t.Parallel()
		a := policyPost(t, base+"/call", `{"request":{"tool_id":"Pay.Open","input":{"order_id":"7"}}}`, nil, nil)
		assert.Equal(t, 200, a.status, a.raw)
	})
	t.Run("catalog_leaves_out_tools_kept_off_otc", func(t *testing.T) {
		t.Parallel()
		a := policyGet(t, base+"/tools", seesEveryPayTool, nil)
		require.Equal(t, http.StatusOK, a.status, a.raw)
		assert.Equal(t, []string{"Pay.Audit@1.0.0", "Pay.Open@1.0.0", "Pay.Refund@1.0.0"}, catalogIDs(t, a))
	})
}

func TestPolicyOverREST(t *testing.T) {
	t.Parallel()
	base := newPolicyServer(t)
	t.Run("protocol_denied", func(t *testing.T) {
		t.Parallel()
		body := `{"schema_version":"0.1.0","args":{"order_id":"1"}}`
		a := policyPost(t, base+"/v1/tools/Pay_Refund:invoke", body, refundClaims(body, base+"/v1/tools/Pay_Refund:invoke", nil), nil)
		require.Equal(t, 403, a.status, a.raw)
		e := a.body["error"].(map[string]any)
		assert.Equal(t, rest.CodeCallRefused, e["code"])
		assert.Equal(t, otc.ReasonProtocolDenied, e["details"].(map[string]any)["reason"])
	})
	t.Run("missing_token", func(t *testing.T) {
		t.Parallel()
		a := policyPost(t, base+"/v1/tools/Pay_Audit:invoke", `{"schema_version":"0.1.0","args":{"order_id":"1"}}`, nil, nil)
		require.Equal(t, 401, a.status, a.raw)
		e := a.body["error"].(map[string]any)
		assert.Equal(t, rest.CodeUnauthenticated, e["code"])
		assert.Equal(t, otc.ReasonMissingToken, e["details"].(map[string]any)["reason"])
		assert.Equal(t, "Bearer", a.header.Get("WWW-Authenticate"))
	})
	t.Run("insufficient_capabilities", func(t *testing.T) {
		t.Parallel()
		a := policyPost(t, base+"/v1/tools/Pay_Audit:invoke", `{"schema_version":"0.1.0","args":{"order_id":"1"}}`,
			map[string]any{"aud": "Pay.Audit@1.0.0", "caps": []any{"pay:read"}}, nil)
		require.Equal(t, 403, a.status, a.raw)
		assert.Equal(t, otc.ReasonInsufficientCapabilities, a.body["error"].(map[string]any)["details"].(map[string]any)["reason"])
	})
	t.Run("allowed_protocol", func(t *testing.T) {
		t.Parallel()
		a := policyPost(t, base+"/v1/tools/Pay_Quote:invoke", `{"schema_version":"0.1.0","args":{"order_id":"1"}}`, nil, nil)
		assert.Equal(t, 200, a.status, a.raw)
	})
	t.Run("planner_view_and_description", func(t *testing.T) {
		t.Parallel()
		a := policyGet(t, base+"/v1/tools", seesEveryPayTool, nil)
		require.Equal(t, http.StatusOK, a.status, a.raw)
		assert.Equal(t, []string{"Pay_Audit", "Pay_Open", "Pay_Quote"}, plannerNames(t, a), "Pay_Refund is kept off the REST view")
		d, err := http.Get(base + "/v1/tools/Pay_Refund")
		require.NoError(t, err)
		d.Body.Close()
		assert.Equal(t, http.StatusNotFound, d.StatusCode)
	})
}

func TestPolicyOverMCP(t *testing.T) {
	t.Parallel()
	base := newPolicyServer(t)
	call := func(name string, meta bool) string {
		params := `{"name":"` + name + `","arguments":{"order_id":"1"}`
		if meta {
			params += `,"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}`
		}
		return `{"jsonrpc":"2.0","id":5,"method":"tools/call","params":` + params + `}}`
	}
	modern := func(name string) map[string]string {
		return map[string]string{"MCP-Protocol-Version": "2026-07-28", "Mcp-Method": "tools/call", "Mcp-Name": name}
	}
	rpcError := func(t *testing.T, a policyAnswer, status, code int, reason string) {
		t.Helper()
		require.Equal(t, status, a.status, a.raw)
		e := a.body["error"].(map[string]any)
		assert.Equal(t, float64(code), e["code"])
		assert.Equal(t, reason, e["data"].(map[string]any)["error"])
		assert.Equal(t, float64(5), a.body["id"])
	}
	t.Run("passes", func(t *testing.T) {
		t.Parallel()
		body := call("Pay_Refund", true)
		a := policyPost(t, base+"/mcp", body, refundClaims(body, base+"/mcp", nil), modern("Pay_Refund"))
		assert.Equal(t, 200, a.status, a.raw)
		assert.Contains(t, a.raw, "done:1")
	})
	t.Run("missing_token", func(t *testing.T) {
		t.Parallel()
		a := policyPost(t, base+"/mcp", call("Pay_Refund", false), nil, nil)
		rpcError(t, a, 401, -32001, otc.ReasonMissingToken)
		assert.Equal(t, "Bearer", a.header.Get("WWW-Authenticate"))
	})
	t.Run("forbidden_initialize_era", func(t *testing.T) {
		t.Parallel()
		body := call("Pay_Refund", false)
		a := policyPost(t, base+"/mcp", body, refundClaims(body, base+"/mcp", func(c map[string]any) { c["caps"] = nil }), nil)
		rpcError(t, a, 403, -32002, otc.ReasonInsufficientCapabilities)
	})
	t.Run("forbidden_2026", func(t *testing.T) {
		t.Parallel()
		body := call("Pay_Refund", true)
		a := policyPost(t, base+"/mcp", body+" ", refundClaims(body, base+"/mcp", nil), modern("Pay_Refund"))
		rpcError(t, a, 403, -32003, otc.ReasonExecBindingInvalid)
	})
	for _, tc := range []struct {
		name   string
		edit   func(map[string]any)
		reason string
	}{
		{"audience_mismatch", func(c map[string]any) { c["aud"] = "urn:other" }, otc.ReasonAudienceMismatch},
		{"blast_radius_exceeded", func(c map[string]any) { c["blast_radius"] = "org:acme" }, otc.ReasonBlastRadiusExceeded},
		{"exec_binding_invalid", func(c map[string]any) { c["exec_act"] = "charge" }, otc.ReasonExecBindingInvalid},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			body := call("Pay_Refund", false)
			a := policyPost(t, base+"/mcp", body, refundClaims(body, base+"/mcp", tc.edit), nil)
			rpcError(t, a, 403, -32002, tc.reason)
		})
	}
	t.Run("protocol_denied", func(t *testing.T) {
		t.Parallel()
		a := policyPost(t, base+"/mcp", call("Pay_Quote", false), nil, nil)
		rpcError(t, a, 403, -32002, otc.ReasonProtocolDenied)
	})
	t.Run("tools_list_leaves_out_tools_kept_off_mcp", func(t *testing.T) {
		t.Parallel()
		a := policyPost(t, base+"/mcp", `{"jsonrpc":"2.0","id":1,"method":"tools/list"}`, seesEveryPayTool, nil)
		assert.Equal(t, []string{"Pay_Audit", "Pay_Open", "Pay_Refund"}, mcpToolNames(t, a))
	})
}

func TestPolicyRegistration(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name string
		p    otc.Policy
		want string
	}{
		{"empty_protocol", otc.Policy{Protocols: []string{"otc", " /1"}}, "names no protocol"},
		{"blast_radius_without_scope", otc.Policy{MaxBlastRadius: "tenant"}, `"scope:value"`},
		{"blast_radius_empty_value", otc.Policy{MaxBlastRadius: "tenant:"}, `"scope:value"`},
		{"operations_without_binding", otc.Policy{AllowedOperations: []string{"refund"}}, "set RequiresExecution"},
		{"empty_capability", otc.Policy{RequiredCapabilities: []string{""}}, "empty string"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			p := tc.p
			err := otc.Register(otc.NewRegistry(nil), otc.Tool{ID: "Pay.Bad", Version: "1.0.0", Description: "A tool.", Policy: &p},
				func(context.Context, struct{}) (int, error) { return 0, nil })
			require.Error(t, err)
			assert.Contains(t, err.Error(), `"Pay.Bad@1.0.0"`)
			assert.Contains(t, err.Error(), tc.want)
		})
	}
	t.Run("policy_is_copied", func(t *testing.T) {
		t.Parallel()
		reg := otc.NewRegistry(nil)
		p := &otc.Policy{Protocols: []string{"otc"}}
		require.NoError(t, otc.Register(reg, otc.Tool{ID: "Pay.Ok", Version: "1.0.0", Description: "A tool.", Policy: p},
			func(context.Context, struct{}) (int, error) { return 0, nil }))
		p.Protocols[0] = "mcp"
		def := reg.Tools()[0]
		assert.Equal(t, []string{"otc"}, def.Policy.Protocols)
		def.Policy.Protocols[0] = "http"
		assert.Equal(t, []string{"otc"}, reg.Tools()[0].Policy.Protocols)
	})
	t.Run("direct_call_matches_no_protocol_list", func(t *testing.T) {
		t.Parallel()
		reg := otc.NewRegistry(nil)
		require.NoError(t, otc.Register(reg, otc.Tool{ID: "Pay.Ok", Version: "1.0.0", Description: "A tool.", Policy: &otc.Policy{Protocols: []string{"otc"}}},
			func(context.Context, struct{}) (int, error) { return 0, nil }))
		_, err := reg.Call(context.Background(), &otc.CallRequest{ToolID: "Pay.Ok"})
		var e *otc.Error
		require.ErrorAs(t, err, &e)
		assert.Equal(t, otc.CodeForbidden, e.Code)
		assert.Equal(t, otc.ReasonProtocolDenied, e.Reason)
		assert.Equal(t, otc.OutcomeRefused, otc.OutcomeOf(otc.CallResult{}, err))
	})
}

// A bare name reaches, on each protocol, the version that protocol's
// catalog lists: the highest it may call.
func TestPolicyVersionPerProtocol(t *testing.T) {
	t.Parallel()
	reg := otc.NewRegistry(&otc.RegistryOptions{Logger: slog.New(slog.DiscardHandler)})
	for _, v := range []struct {
		version string
		p       *otc.Policy
	}{{"1.0.0", nil}, {"2.0.0", &otc.Policy{Protocols: []string{"otc"}}}} {
		require.NoError(t, otc.Register(reg, otc.Tool{ID: "K.Echo", Version: v.version, Description: "Echoes its version.", Policy: v.p},
			func(ctx context.Context, _ struct{}) (string, error) { return otc.ToolID(ctx), nil }))
	}
	mux := http.NewServeMux()
	mux.Handle("/v1/", http.StripPrefix("/v1", rest.NewHandler(reg, nil)))
	mux.Handle("/mcp", mcp.NewHandler(reg, nil))
	mux.Handle("/", otc.NewHandler(reg, nil))
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)

	a := policyPost(t, srv.URL+"/call", `{"request":{"tool_id":"K.Echo"}}`, nil, nil)
	assert.Contains(t, a.raw, `"value":"K.Echo@2.0.0"`)
	a = policyPost(t, srv.URL+"/v1/tools/K_Echo:invoke", `{"schema_version":"0.1.0","args":{}}`, nil, nil)
	assert.Equal(t, "K.Echo@1.0.0", a.body["result"], a.raw)
	a = policyPost(t, srv.URL+"/mcp", `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"K_Echo"}}`, nil, nil)
	assert.Contains(t, a.raw, `K.Echo@1.0.0`)
	a = policyPost(t, srv.URL+"/mcp", `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"K_Echo@2"}}`, nil, nil)
	assert.Equal(t, otc.ReasonProtocolDenied, a.body["error"].(map[string]any)["data"].(map[string]any)["error"], "an explicit version is not redirected")
}
