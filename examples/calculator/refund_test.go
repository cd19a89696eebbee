package main

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"io"
	"maps"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/otcgo/otc"
	"github.com/otcgo/otc/idempotency"
)

const (
	testIssuer = "https://issuer.example"
	testKid    = "calculator-test"
	// refundBody is an OTC call of Payments.Refund, the exact bytes a
	// token is bound to, with the user's confirmation the tool asks for.
	refundBody = `{"request":{"tool_id":"Payments.Refund@1.0.0","input":{"order_id":"A-1001","amount_cents":250},` +
		`"context":{"input_responses":{"confirm":{"action":"accept","content":{"confirm":true}}}}}}`
	// unconfirmedRefundBody is refundBody without the confirmation.
	unconfirmedRefundBody = `{"request":{"tool_id":"Payments.Refund@1.0.0","input":{"order_id":"A-1001","amount_cents":250}}}`
)

// testIssuerKeys is an issuer's key pair: the private key that signs, and
// the public key set, in a file for OTC_JWKS_FILE.
type testIssuerKeys struct {
	key      *ecdsa.PrivateKey
	jwks     []byte
	jwksPath string
}

func newIssuerKeys(t *testing.T) testIssuerKeys {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	require.NoError(t, err)
	point, err := key.PublicKey.Bytes()
	require.NoError(t, err)
	enc := base64.RawURLEncoding
	jwks, err := json.Marshal(map[string]any{"keys": []map[string]string{{
		"kty": "EC", "crv": "P-256", "kid": testKid, "use": "sig", "alg": "ES256",
		"x": enc.EncodeToString(point[1:33]), "y": enc.EncodeToString(point[33:]),
	}}})
	require.NoError(t, err)
	path := filepath.Join(t.TempDir(), "jwks.json")
	require.NoError(t, os.WriteFile(path, jwks, 0o644))
	return testIssuerKeys{key: key, jwks: jwks, jwksPath: path}
}

// refundClaims are the claims of a token that may refund body, as the
// README's captoken command line mints them, changed by edit.
func refundClaims(body string, edit func(jwt.MapClaims)) jwt.MapClaims {
	sum := sha256.Sum256([]byte(body))
	now := time.Now()
	c := jwt.MapClaims{
		"iss":          testIssuer,
		"sub":          "example-agent",
		"aud":          []string{"urn:otc:example:payments"},
		"iat":          now.Unix(),
		"exp":          now.Add(5 * time.Minute).Unix(),
		"jti":          otc.NewCallID(),
		"caps":         []string{"payments:refund"},
		"blast_radius": "tenant:acme",
		"exec_act":     "refund",
		"inp_hash":     base64.RawURLEncoding.EncodeToString(sum[:]),
	}
	if edit != nil {
		edit(c)
	}
	return c
}

func (k testIssuerKeys) sign(t *testing.T, claims jwt.MapClaims) string {
	t.Helper()
	tok := jwt.NewWithClaims(jwt.SigningMethodES256, claims)
	tok.Header["kid"] = testKid
	s, err := tok.SignedString(k.key)
	require.NoError(t, err)
	return s
}

// capabilityEnv is the environment of a server that takes API keys and
// the issuer's capability tokens.
func (k testIssuerKeys) env() map[string]string {
	return map[string]string{"OTC_API_KEY": testAPIKey, "OTC_TOKEN_ISSUER": testIssuer, "OTC_JWKS_FILE": k.jwksPath}
}

type answer struct {
	status int
	header http.Header
	body   map[string]any
	raw    string
}

// send sends a request with the body, the bearer token (if any) and the
// headers, and decodes the JSON answer.
func send(t *testing.T, method, url, body, token string, header map[string]string) answer {
	t.Helper()
	req, err := http.NewRequest(method, url, strings.NewReader(body))
	require.NoError(t, err)
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	for k, v := range header {
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	a := answer{status: resp.StatusCode, header: resp.Header, raw: string(raw)}
	if strings.HasPrefix(a.raw, "{") {
		require.NoError(t, json.Unmarshal(raw, &a.body), a.raw)
	}
	return a
}

// TestRefund_OverOTC calls Payments.Refund over OTC the ways the README
// shows, and the ways its policy refuses.
func TestRefund_OverOTC(t *testing.T) {
	t.Parallel()
	keys := newIssuerKeys(t)
	base := serveWithEnvAuth(t, keys.env())
	apiKey := map[string]string{otc.HeaderAPIKey: testAPIKey}

	t.Run("accepted_with_a_bound_token", func(t *testing.T) {
		t.Parallel()
		a := send(t, http.MethodPost, base+"/tools/call", refundBody, keys.sign(t, refundClaims(refundBody, nil)), nil)
		require.Equal(t, http.StatusOK, a.status, a.raw)
		result := a.body["result"].(map[string]any)
		assert.Equal(t, true, result["success"], a.raw)
		value := result["value"].(map[string]any)
		assert.Regexp(t, regexp.MustCompile(`^rf_[0-9a-f]{12}$`), value["refund_id"])
	})
	t.Run("asks_for_a_confirmation_first", func(t *testing.T) {
		t.Parallel()
		a := send(t, http.MethodPost, base+"/tools/call", unconfirmedRefundBody, keys.sign(t, refundClaims(unconfirmedRefundBody, nil)), nil)
		require.Equal(t, http.StatusOK, a.status, a.raw)
		result := a.body["result"].(map[string]any)
		assert.Equal(t, false, result["success"], a.raw)
		assert.NotContains(t, a.raw, "refund_id", "nothing was refunded")
		e := result["error"].(map[string]any)
		assert.Equal(t, "Tool 'Payments_Refund' needs answers before it can go on:\n- confirm: Refund 2.50 of order A-1001?", e["message"])
		assert.Equal(t, true, e["can_retry"])
		prompt := e["additional_prompt_content"].(string)
		assert.Contains(t, prompt, "request.context.input_responses")
		assert.Contains(t, prompt, `"confirm":{"method":"elicitation/create","params":{"message":"Refund 2.50 of order A-1001?","requestedSchema":{"properties":{"confirm":{"type":"boolean","title":"Refund"`)
	})
	t.Run("declined", func(t *testing.T) {
		t.Parallel()
		body := strings.Replace(refundBody, `"action":"accept"`, `"action":"decline"`, 1)
		a := send(t, http.MethodPost, base+"/tools/call", body, keys.sign(t, refundClaims(body, nil)), nil)
		require.Equal(t, http.StatusOK, a.status, a.raw)
		result := a.body["result"].(map[string]any)
		assert.Equal(t, false, result["success"], a.raw)
		assert.Equal(t, "The refund was not confirmed, so nothing was refunded.", result["error"].(map[string]any)["message"])
	})
	t.Run("answer_that_does_not_fit", func(t *testing.T) {
		t.Parallel()
		body := strings.Replace(refundBody, `"confirm":true`, `"confirm":"yes"`, 1)
		a := send(t, http.MethodPost, base+"/tools/call", body, keys.sign(t, refundClaims(body, nil)), nil)
		require.Equal(t, http.StatusOK, a.status, a.raw)
		result := a.body["result"].(map[string]any)
		assert.Equal(t, false, result["success"], a.raw)
		assert.Contains(t, result["error"].(map[string]any)["message"], `the answer to "confirm" (elicitation/create) is invalid: its content does not fit the form: confirm`)
		assert.NotContains(t, a.raw, "refund_id")
	})
	t.Run("accepted_bound_to_method_and_url", func(t *testing.T) {
		t.Parallel()
		token := keys.sign(t, refundClaims(refundBody, func(c jwt.MapClaims) {
			c["htm"], c["htu"] = "POST", base+"/tools/call"
		}))
		a := send(t, http.MethodPost, base+"/tools/call", refundBody, token, nil)
		assert.Equal(t, http.StatusOK, a.status, a.raw)
		a = send(t, http.MethodPost, base+"/call", refundBody, token, nil)
		assert.Equal(t, http.StatusForbidden, a.status, "the alias is another URL: %s", a.raw)
		assert.Equal(t, otc.ReasonExecBindingInvalid, a.body["reason"])
	})
	t.Run("a_token_refunds_once", func(t *testing.T) {
		t.Parallel()
		// The same token and body sent 20 times: one refund; the other
		// copies are refused as replays, or, carrying the first request's
		// call_id, answered with its refund.
		token := keys.sign(t, refundClaims(refundBody, nil))
		refunds := map[any]int{}
		for range 20 {
			a := send(t, http.MethodPost, base+"/tools/call", refundBody, token, nil)
			if a.status == http.StatusOK {
				refunds[a.body["result"].(map[string]any)["value"].(map[string]any)["refund_id"]]++
				continue
			}
			require.Equal(t, http.StatusUnauthorized, a.status, a.raw)
			assert.Equal(t, otc.ReasonTokenReplayed, a.body["reason"], a.raw)
		}
		assert.Len(t, refunds, 1, "one refund: %v", refunds)

		// With calls recorded by call id, as the program runs.
		base := serveWithEnvAuthStore(t, keys.env(), idempotency.NewMemoryStore(nil))
		withID := strings.Replace(refundBody, `{"request":{`, `{"request":{"call_id":"refund-retry-1",`, 1)
		token = keys.sign(t, refundClaims(withID, nil))
		refunds = map[any]int{}
		for range 20 {
			a := send(t, http.MethodPost, base+"/tools/call", withID, token, nil)
			require.Equal(t, http.StatusOK, a.status, a.raw)
			refunds[a.body["result"].(map[string]any)["value"].(map[string]any)["refund_id"]]++
		}
		assert.Len(t, refunds, 1, "20 answers, one refund: %v", refunds)
	})
	t.Run("each_refund_its_own_id", func(t *testing.T) {
		t.Parallel()
		ids := map[any]bool{}
		for range 3 {
			a := send(t, http.MethodPost, base+"/tools/call", refundBody, keys.sign(t, refundClaims(refundBody, nil)), nil)
			require.Equal(t, http.StatusOK, a.status, a.raw)
			ids[a.body["result"].(map[string]any)["value"].(map[string]any)["refund_id"]] = true
		}
		assert.Len(t, ids, 3)
	})

	for _, tc := range []struct {
		name   string
		body   string // sent; the token is bound to refundBody
		token  func() string
		header map[string]string
		status int
		reason string
	}{
		{"no_credentials", refundBody, func() string { return "" }, nil, http.StatusUnauthorized, ""},
		{"api_key_is_not_a_capability_token", refundBody, func() string { return "" }, apiKey, http.StatusUnauthorized, otc.ReasonMissingToken},
		{"body_changed_by_one_byte", strings.Replace(refundBody, "250", "251", 1),
			func() string { return keys.sign(t, refundClaims(refundBody, nil)) }, nil, http.StatusForbidden, otc.ReasonExecBindingInvalid},
		{"body_with_one_more_space", refundBody + " ",
			func() string { return keys.sign(t, refundClaims(refundBody, nil)) }, nil, http.StatusForbidden, otc.ReasonExecBindingInvalid},
		{"not_bound", refundBody, func() string {
			return keys.sign(t, refundClaims(refundBody, func(c jwt.MapClaims) { delete(c, "inp_hash"); delete(c, "exec_act") }))
		}, nil, http.StatusForbidden, otc.ReasonExecBindingInvalid},
		{"another_operation", refundBody, func() string {
			return keys.sign(t, refundClaims(refundBody, func(c jwt.MapClaims) { c["exec_act"] = "charge" }))
		}, nil, http.StatusForbidden, otc.ReasonExecBindingInvalid},
		{"another_audience", refundBody, func() string {
			return keys.sign(t, refundClaims(refundBody, func(c jwt.MapClaims) { c["aud"] = "urn:otc:example:other" }))
		}, nil, http.StatusBadRequest, "hidden"}, // it sees the tool through no protocol: told no more than of an unknown tool
		{"without_the_capability", refundBody, func() string {
			return keys.sign(t, refundClaims(refundBody, func(c jwt.MapClaims) { c["caps"] = []string{"payments:read"} }))
		}, nil, http.StatusBadRequest, "hidden"}, // it sees the tool through no protocol: told no more than of an unknown tool
		{"wider_blast_radius", refundBody, func() string {
			return keys.sign(t, refundClaims(refundBody, func(c jwt.MapClaims) { c["blast_radius"] = "org:acme" }))
		}, nil, http.StatusBadRequest, "hidden"}, // it sees the tool through no protocol: told no more than of an unknown tool
		{"another_issuer", refundBody, func() string {
			return keys.sign(t, refundClaims(refundBody, func(c jwt.MapClaims) { c["iss"] = "https://elsewhere.example" }))
		}, nil, http.StatusUnauthorized, ""},
		{"another_key", refundBody, func() string {
			return newIssuerKeys(t).sign(t, refundClaims(refundBody, nil))
		}, nil, http.StatusUnauthorized, ""},
		{"expired", refundBody, func() string {
			return keys.sign(t, refundClaims(refundBody, func(c jwt.MapClaims) {
				c["iat"], c["exp"] = time.Now().Add(-time.Hour).Unix(), time.Now().Add(-10*time.Minute).Unix()
			}))
		}, nil, http.StatusUnauthorized, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			a := send(t, http.MethodPost, base+"/tools/call", tc.body, tc.token(), tc.header)
			require.Equal(t, tc.status, a.status, a.raw)
			switch tc.reason {
			case "":
			case "hidden":
				assert.Equal(t, "Tool 'Payments_Refund' was not found", a.body["message"], a.raw)
				assert.Nil(t, a.body["reason"], a.raw)
			default:
				assert.Equal(t, tc.reason, a.body["reason"], a.raw)
			}
			if tc.status == http.StatusUnauthorized {
				assert.Equal(t, "Bearer", a.header.Get("WWW-Authenticate"))
			}
			assert.NotContains(t, a.raw, "refund_id", "the tool did not run")
		})
	}
}

// TestRefund_WithoutAuthentication: a server that authenticates nobody
// still refuses the refund, which needs a capability token.
func TestRefund_WithoutAuthentication(t *testing.T) {
	t.Parallel()
	base := serveWithEnvAuth(t, nil)
	a := send(t, http.MethodPost, base+"/tools/call", refundBody, "", nil)
	require.Equal(t, http.StatusUnauthorized, a.status, a.raw)
	assert.Equal(t, otc.ReasonMissingToken, a.body["reason"])
	assert.Equal(t, "Bearer", a.header.Get("WWW-Authenticate"))

	a = send(t, http.MethodPost, base+"/tools/call", `{"request":{"tool_id":"Calculator.Add","input":{"a":1,"b":2}}}`, "", nil)
	assert.Equal(t, http.StatusOK, a.status, "the other tools are open: %s", a.raw)

	t.Run("capability_tokens_only", func(t *testing.T) {
		// With capability tokens the only method, the server itself
		// refuses a request without one, for the same reason.
		keys := newIssuerKeys(t)
		base := serveWithEnvAuth(t, map[string]string{"OTC_TOKEN_ISSUER": testIssuer, "OTC_JWKS_FILE": keys.jwksPath})
		a := send(t, http.MethodPost, base+"/tools/call", refundBody, "", nil)
		require.Equal(t, http.StatusUnauthorized, a.status, a.raw)
		assert.Equal(t, otc.ReasonMissingToken, a.body["reason"])
		assert.Equal(t, "Bearer", a.header.Get("WWW-Authenticate"))
	})
}

// TestRefund_OverRESTAndMCP: the REST API is not among the refund's
// protocols, MCP is.
func TestRefund_OverRESTAndMCP(t *testing.T) {
	t.Parallel()
	keys := newIssuerKeys(t)
	base := serveWithEnvAuth(t, keys.env())
	apiKey := map[string]string{otc.HeaderAPIKey: testAPIKey}

	t.Run("rest_refuses_even_a_valid_token", func(t *testing.T) {
		t.Parallel()
		body := `{"schema_version":"0.1.0","args":{"order_id":"A-1001","amount_cents":250}}`
		a := send(t, http.MethodPost, base+"/v1/tools/Payments_Refund:invoke", body, keys.sign(t, refundClaims(body, nil)), nil)
		require.Equal(t, http.StatusForbidden, a.status, a.raw)
		e := a.body["error"].(map[string]any)
		assert.Equal(t, "request.refused", e["code"])
		assert.Equal(t, otc.ReasonProtocolDenied, e["details"].(map[string]any)["reason"])
	})
	t.Run("rest_planner_view_leaves_it_out", func(t *testing.T) {
		t.Parallel()
		a := send(t, http.MethodGet, base+"/v1/tools", "", "", apiKey)
		require.Equal(t, http.StatusOK, a.status, a.raw)
		assert.NotContains(t, a.raw, "Payments_Refund")
		assert.Contains(t, a.raw, "Calculator_Add")
		a = send(t, http.MethodGet, base+"/v1/tools/Payments_Refund", "", "", apiKey)
		assert.Equal(t, http.StatusNotFound, a.status, a.raw)
	})
	// The catalogs are the caller's: a token that may refund sees the
	// refund (its execution binding, which depends on the call, does not
	// hide it); an API key, which cannot call it, does not.
	lister := keys.sign(t, refundClaims("", nil))
	t.Run("otc_catalog_lists_it_to_a_token_that_may_refund", func(t *testing.T) {
		t.Parallel()
		a := send(t, http.MethodGet, base+"/tools", "", lister, nil)
		require.Equal(t, http.StatusOK, a.status, a.raw)
		assert.Contains(t, a.raw, `"id":"Payments.Refund@1.0.0"`)
		a = send(t, http.MethodGet, base+"/tools", "", "", apiKey)
		require.Equal(t, http.StatusOK, a.status, a.raw)
		assert.NotContains(t, a.raw, `"id":"Payments.Refund@1.0.0"`)
		assert.Contains(t, a.raw, `"id":"Calculator.Add@1.0.0"`)
	})
	t.Run("mcp_lists_it_to_a_token_that_may_refund", func(t *testing.T) {
		t.Parallel()
		a := send(t, http.MethodPost, base+"/mcp", `{"jsonrpc":"2.0","id":1,"method":"tools/list"}`, lister, nil)
		require.Equal(t, http.StatusOK, a.status, a.raw)
		assert.Contains(t, a.raw, `"name":"Payments_Refund"`)
		a = send(t, http.MethodPost, base+"/mcp", `{"jsonrpc":"2.0","id":1,"method":"tools/list"}`, "", apiKey)
		require.Equal(t, http.StatusOK, a.status, a.raw)
		assert.NotContains(t, a.raw, `"name":"Payments_Refund"`)
	})
	t.Run("mcp_2026_asks_for_a_confirmation", func(t *testing.T) {
		t.Parallel()
		hdr := map[string]string{"MCP-Protocol-Version": "2026-07-28", "Mcp-Method": "tools/call", "Mcp-Name": "Payments_Refund"}
		meta := `"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{"elicitation":{}}}`
		body := `{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"Payments_Refund","arguments":{"order_id":"A-1001","amount_cents":250},` + meta + `}}`
		a := send(t, http.MethodPost, base+"/mcp", body, keys.sign(t, refundClaims(body, nil)), hdr)
		require.Equal(t, http.StatusOK, a.status, a.raw)
		result := a.body["result"].(map[string]any)
		require.Equal(t, "input_required", result["resultType"], a.raw)
		q := result["inputRequests"].(map[string]any)["confirm"].(map[string]any)
		assert.Equal(t, "elicitation/create", q["method"])
		assert.Equal(t, "Refund 2.50 of order A-1001?", q["params"].(map[string]any)["message"])
		state := result["requestState"].(string)

		// The second round is another request: its token is bound to it.
		body = `{"jsonrpc":"2.0","id":8,"method":"tools/call","params":{"name":"Payments_Refund","arguments":{"order_id":"A-1001","amount_cents":250},` +
			`"inputResponses":{"confirm":{"action":"accept","content":{"confirm":true}}},"requestState":"` + state + `",` + meta + `}}`
		a = send(t, http.MethodPost, base+"/mcp", body, keys.sign(t, refundClaims(body, nil)), hdr)
		require.Equal(t, http.StatusOK, a.status, a.raw)
		assert.Regexp(t, `rf_[0-9a-f]{12}`, a.raw)
		assert.Contains(t, a.raw, `"resultType":"complete"`)
	})
	t.Run("mcp_calls_it_with_a_token_bound_to_the_request", func(t *testing.T) {
		t.Parallel()
		body := `{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"Payments_Refund","arguments":{"order_id":"A-1001","amount_cents":250}}}`
		a := send(t, http.MethodPost, base+"/mcp", body, keys.sign(t, refundClaims(body, nil)), nil)
		require.Equal(t, http.StatusOK, a.status, a.raw)
		assert.Regexp(t, `rf_[0-9a-f]{12}`, a.raw)
		assert.NotContains(t, a.raw, `"isError":true`)
	})
}

// TestRegistryView serves the registry listing as a registry's clients
// read it.
func TestRegistryView(t *testing.T) {
	t.Parallel()
	keys := newIssuerKeys(t)
	base := serveWithEnvAuth(t, keys.env())
	apiKey := map[string]string{otc.HeaderAPIKey: testAPIKey}
	// The listings are the caller's: a token that may refund sees the
	// refund, an API key does not.
	lister := keys.sign(t, refundClaims("", nil))
	list := func(t *testing.T, path string) []map[string]any {
		t.Helper()
		req, err := http.NewRequest(http.MethodGet, base+path, nil)
		require.NoError(t, err)
		req.Header.Set("Authorization", "Bearer "+lister)
		resp, err := http.DefaultClient.Do(req)
		require.NoError(t, err)
		defer resp.Body.Close()
		require.Equal(t, http.StatusOK, resp.StatusCode)
		var out []map[string]any
		require.NoError(t, json.NewDecoder(resp.Body).Decode(&out))
		return out
	}
	ids := func(entries []map[string]any) []string {
		var out []string
		for _, e := range entries {
			out = append(out, e["tool_id"].(string))
		}
		return out
	}

	all := list(t, "/registry/v1/tools")
	assert.Equal(t, []string{"Calculator.Add@1.0.0", "Counter.Increment@1.0.0", "Doorbell.Ring@0.1.0", "Math.Evaluate@1.0.0", "Memory.Store@1.0.0", "Payments.Refund@1.0.0", "Shipping.Quote@1.0.0", "Signer.Sign@1.0.0", "Timer.Wait@1.0.0"}, ids(all))
	refund, err := json.Marshal(all[5])
	require.NoError(t, err)
	assert.JSONEq(t, `{
		"tool_id": "Payments.Refund@1.0.0",
		"name": "Payments_Refund",
		"description": "Refunds part or all of an order and returns the refund's ID. It needs a capability token bound to this exact call. (An example: no money moves.)",
		"version": "1.0.0",
		"protocols": ["otc", "mcp"],
		"resource_uri": "urn:otc:example:payments",
		"required_capabilities": ["payments:refund"],
		"max_blast_radius": "tenant:*",
		"requires_execution": true,
		"allowed_operations": ["refund"],
		"title": "Refund an order",
		"annotations": {"readOnlyHint": false, "destructiveHint": true, "idempotentHint": false, "openWorldHint": false}
	}`, string(refund))
	assert.Equal(t, []any{"otc", "http", "mcp", "a2a"}, all[0]["protocols"])

	assert.NotContains(t, ids(list(t, "/registry/v1/tools?protocol=http")), "Payments.Refund@1.0.0")
	assert.Contains(t, ids(list(t, "/registry/v1/mcp/tools")), "Payments.Refund@1.0.0")
	// ?protocol=a2a lists what the A2A agent serves: its card's skills.
	req, err := http.NewRequest(http.MethodGet, base+"/a2a/.well-known/agent-card.json", nil)
	require.NoError(t, err)
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	var card struct {
		Skills []struct {
			ID string `json:"id"`
		} `json:"skills"`
	}
	require.NoError(t, json.NewDecoder(resp.Body).Decode(&card))
	resp.Body.Close()
	var skills []string
	for _, s := range card.Skills {
		skills = append(skills, s.ID)
	}
	require.NotEmpty(t, skills)
	assert.Equal(t, skills, ids(list(t, "/registry/v1/tools?protocol=a2a")))
	assert.NotContains(t, skills, "Payments.Refund@1.0.0")

	a := send(t, http.MethodGet, base+"/registry/v1/tools", "", "", apiKey)
	require.Equal(t, http.StatusOK, a.status, a.raw)
	assert.NotContains(t, a.raw, "Payments.Refund@1.0.0", "an API key cannot call the refund")

	a = send(t, http.MethodGet, base+"/registry/v1/tools/Payments.Refund", "", "", apiKey)
	require.Equal(t, http.StatusOK, a.status, "a lookup by id is not filtered: %s", a.raw)
	assert.JSONEq(t, string(refund), a.raw)

	a = send(t, http.MethodGet, base+"/registry/v1/tools", "", "", nil)
	assert.Equal(t, http.StatusUnauthorized, a.status, "behind the server's authentication")
	assert.Equal(t, "access_denied", a.body["error"])
}

func TestAuthenticatorFromEnv_Capability(t *testing.T) {
	t.Parallel()
	keys := newIssuerKeys(t)
	jwksServer := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write(keys.jwks)
	}))
	t.Cleanup(jwksServer.Close)
	bad := filepath.Join(t.TempDir(), "bad.json")
	require.NoError(t, os.WriteFile(bad, []byte(`{"keys":[]}`), 0o644))

	with := func(extra map[string]string) map[string]string {
		env := map[string]string{"OTC_TOKEN_ISSUER": testIssuer, "OTC_JWKS_FILE": keys.jwksPath}
		maps.Copy(env, extra)
		for k, v := range env {
			if v == "" {
				delete(env, k)
			}
		}
		return env
	}
	for _, tc := range []struct {
		name    string
		env     map[string]string
		methods string
		wantErr string
	}{
		{"file", with(nil), "capability", ""},
		{"url", with(map[string]string{"OTC_JWKS_FILE": "", "OTC_JWKS_URL": jwksServer.URL}), "capability", ""},
		{"with_api_key", with(map[string]string{"OTC_API_KEY": testAPIKey}), "api_key+capability", ""},
		{"all_three", with(map[string]string{"OTC_API_KEY": testAPIKey, "OTC_JWT_SECRET": testJWTSecret}), "api_key+jwt+capability", ""},
		{"issuer_only", with(map[string]string{"OTC_JWKS_FILE": ""}), "",
			"OTC_TOKEN_ISSUER is set but neither OTC_JWKS_FILE nor OTC_JWKS_URL is"},
		{"file_only", with(map[string]string{"OTC_TOKEN_ISSUER": ""}), "",
			"OTC_JWKS_FILE is set but OTC_TOKEN_ISSUER is not"},
		{"url_only", map[string]string{"OTC_JWKS_URL": jwksServer.URL}, "",
			"OTC_JWKS_URL is set but OTC_TOKEN_ISSUER is not"},
		{"file_and_url", with(map[string]string{"OTC_JWKS_URL": jwksServer.URL}), "",
			"OTC_JWKS_FILE and OTC_JWKS_URL are both set"},
		{"missing_file", with(map[string]string{"OTC_JWKS_FILE": filepath.Join(t.TempDir(), "none.json")}), "",
			"OTC_JWKS_FILE: open"},
		{"no_usable_key", with(map[string]string{"OTC_JWKS_FILE": bad}), "",
			"OTC_TOKEN_ISSUER: auth: NewCapabilityAuth"},
		{"plain_http_url", with(map[string]string{"OTC_JWKS_FILE": "", "OTC_JWKS_URL": "http://issuer.example/jwks.json"}), "",
			"OTC_TOKEN_ISSUER: auth: NewCapabilityAuth"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			creds, err := credentialsFromEnv(t.Context(), envOf(tc.env))
			auth, methods := creds.auth, creds.methods
			if tc.wantErr != "" {
				require.Error(t, err)
				assert.Contains(t, err.Error(), tc.wantErr)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tc.methods, methods)

			// The capability token passes, whatever else is on.
			req := httptest.NewRequest(http.MethodPost, "/tools/call", strings.NewReader(refundBody))
			req.Header.Set("Authorization", "Bearer "+keys.sign(t, refundClaims(refundBody, nil)))
			id, err := auth.Authenticate(req)
			require.NoError(t, err)
			assert.Equal(t, otc.MethodCapability, id.Method)
		})
	}
}

// TestMain_CapabilityTokens starts the program with OTC_TOKEN_ISSUER and
// OTC_JWKS_FILE, as the README does: the log names the methods, and a
// minted token refunds; half the configuration stops it at once.
func TestMain_CapabilityTokens(t *testing.T) {
	t.Parallel()
	keys := newIssuerKeys(t)

	t.Run("serves", func(t *testing.T) {
		t.Parallel()
		cmd, lines := startMainEnv(t, "-addr 127.0.0.1:0",
			"OTC_API_KEY="+testAPIKey, "OTC_TOKEN_ISSUER="+testIssuer, "OTC_JWKS_FILE="+keys.jwksPath)
		t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
		line := nextLine(t, lines)
		assert.Contains(t, line, "auth=api_key+capability")
		assert.Contains(t, line, "registry=/registry/v1/tools")
		base := listeningURL(t, line)

		a := send(t, http.MethodPost, base+"/tools/call", refundBody, keys.sign(t, refundClaims(refundBody, nil)), nil)
		require.Equal(t, http.StatusOK, a.status, a.raw)
		assert.Contains(t, a.raw, `"refund_id":"rf_`)
	})
	for _, tc := range []struct {
		name string
		env  map[string]string
		want string
	}{
		{"issuer_without_keys", map[string]string{"OTC_TOKEN_ISSUER": testIssuer},
			"OTC_TOKEN_ISSUER is set but neither OTC_JWKS_FILE nor OTC_JWKS_URL is"},
		{"keys_without_issuer", map[string]string{"OTC_JWKS_FILE": keys.jwksPath},
			"OTC_JWKS_FILE is set but OTC_TOKEN_ISSUER is not"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			stdout, stderr, code := runMain(t, tc.env, "-addr 127.0.0.1:0")
			assert.Equal(t, 1, code)
			assert.Empty(t, stdout)
			assert.Contains(t, stderr, "level=ERROR")
			assert.Contains(t, stderr, "calculator: "+tc.want)
		})
	}
}
