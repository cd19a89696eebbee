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

	"github.com/golang-jwt/jwt/v5"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/otcgo/otc"
	"github.com/otcgo/otc/auth"
	"github.com/otcgo/otc/internal/testkit"
	"github.com/otcgo/otc/mcp"
	"github.com/otcgo/otc/prompt"
	"github.com/otcgo/otc/resource"
)

// TestReadablesWholePolicy: a resource and a prompt whose policy asks
// for an execution-bound token are read and rendered as a tool with that
// policy is called: the token must be bound to the exact request (its
// operation, its hash of the body), and is good for one request; a
// revoked token is refused. Over MCP, each refusal is 401 or 403 with its
// reason in data.error.
func TestReadablesWholePolicy(t *testing.T) {
	t.Parallel()
	reg := otc.NewRegistry(&otc.RegistryOptions{Logger: slog.New(slog.DiscardHandler)})
	policy := &otc.Policy{ResourceURI: testkit.CapResource, RequiresExecution: true, AllowedOperations: []string{"read"}}
	_, err := resource.Register(reg, resource.Resource{URI: "pay://ledger", Name: "ledger", Policy: policy},
		func(context.Context) (string, error) { return "the ledger", nil })
	require.NoError(t, err)
	type whoArgs struct {
		Who string `json:"who" jsonschema:"description=Whom."`
	}
	_, err = prompt.Register(reg, prompt.Prompt[whoArgs]{Name: "pay_note", Policy: policy},
		func(_ context.Context, in whoArgs) (string, error) { return "Pay " + in.Who, nil })
	require.NoError(t, err)
	revoked := map[string]bool{}
	capAuth := testkit.CapabilityAuth(t, auth.CapabilityOptions{Revoked: func(_ context.Context, jti string) (bool, error) { return revoked[jti], nil }})
	srv := httptest.NewServer(mcp.NewHandler(reg, &mcp.Options{Authenticator: capAuth}))
	t.Cleanup(srv.Close)

	send := func(body, token string) (int, map[string]any) {
		req, err := http.NewRequest(http.MethodPost, srv.URL, strings.NewReader(body))
		require.NoError(t, err)
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		req.Header.Set("MCP-Protocol-Version", mcp.Version20251125)
		req.Header.Set("Authorization", "Bearer "+token)
		resp, err := http.DefaultClient.Do(req)
		require.NoError(t, err)
		defer resp.Body.Close()
		var m map[string]any
		require.NoError(t, json.NewDecoder(resp.Body).Decode(&m))
		return resp.StatusCode, m
	}
	token := func(body string, edit func(jwt.MapClaims)) string {
		return testkit.CapToken(t, func(c jwt.MapClaims) {
			c["aud"] = testkit.CapResource
			c["jti"] = otc.NewCallID()
			c["exec_act"] = "read"
			c["inp_hash"] = testkit.InpHash(body)
			if edit != nil {
				edit(c)
			}
		})
	}
	reason := func(m map[string]any) string {
		e, _ := m["error"].(map[string]any)
		d, _ := e["data"].(map[string]any)
		s, _ := d["error"].(string)
		return s
	}
	for _, body := range []string{
		`{"jsonrpc":"2.0","id":1,"method":"resources/read","params":{"uri":"pay://ledger"}}`,
		`{"jsonrpc":"2.0","id":1,"method":"prompts/get","params":{"name":"pay_note","arguments":{"who":"ada"}}}`,
	} {
		tok := token(body, nil)
		status, m := send(body, tok)
		require.Equal(t, http.StatusOK, status, "%v", m)
		assert.Contains(t, m, "result")
		status, m = send(body, tok)
		assert.Equal(t, http.StatusUnauthorized, status, "%v", m)
		assert.Equal(t, otc.ReasonTokenReplayed, reason(m), "the token is good for one request")

		status, m = send(body, token(`{"another":"body"}`, nil))
		assert.Equal(t, http.StatusForbidden, status, "%v", m)
		assert.Equal(t, otc.ReasonExecBindingInvalid, reason(m), "bound to another request")
		status, m = send(body, token(body, func(c jwt.MapClaims) { c["exec_act"] = "write" }))
		assert.Equal(t, http.StatusForbidden, status, "%v", m)
		assert.Equal(t, otc.ReasonExecBindingInvalid, reason(m), "an operation the policy does not allow")
		status, m = send(body, token(body, func(c jwt.MapClaims) { delete(c, "jti") }))
		assert.Equal(t, http.StatusUnauthorized, status, "%v", m)
		assert.Equal(t, otc.ReasonInvalidToken, reason(m), "no jti")
		tok = token(body, nil)
		var claims jwt.MapClaims
		_, _, err := jwt.NewParser().ParseUnverified(tok, &claims)
		require.NoError(t, err)
		revoked[claims["jti"].(string)] = true
		status, m = send(body, tok)
		assert.Equal(t, http.StatusUnauthorized, status, "%v", m)
		assert.Equal(t, otc.ReasonTokenRevoked, reason(m))
	}
}

// TestReadableBoundToken: a resource whose policy asks for a bound token
// is neither listed to nor read by a caller whose token is not bound to
// a key, and is both to one whose token is.
func TestReadableBoundToken(t *testing.T) {
	t.Parallel()
	reg := otc.NewRegistry(&otc.RegistryOptions{Logger: slog.New(slog.DiscardHandler)})
	_, err := resource.Register(reg, resource.Resource{URI: "pay://ledger", Name: "ledger", Policy: &otc.Policy{RequiresBoundToken: true}},
		func(context.Context) (string, error) { return "the ledger", nil })
	require.NoError(t, err)
	srv := httptest.NewServer(mcp.NewHandler(reg, &mcp.Options{Authenticator: testkit.CapabilityAuth(t, auth.CapabilityOptions{})}))
	t.Cleanup(srv.Close)
	send := func(body, token string) string {
		req, err := http.NewRequest(http.MethodPost, srv.URL, strings.NewReader(body))
		require.NoError(t, err)
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		req.Header.Set("MCP-Protocol-Version", mcp.Version20251125)
		req.Header.Set("Authorization", "Bearer "+token)
		resp, err := http.DefaultClient.Do(req)
		require.NoError(t, err)
		defer resp.Body.Close()
		var b strings.Builder
		_, _ = io.Copy(&b, resp.Body)
		return b.String()
	}
	bearer := testkit.CapToken(t, nil)
	bound := testkit.CapToken(t, func(c jwt.MapClaims) { c["cnf"] = map[string]any{"jkt": "0ZcOCORZNYy-DWpqq30jZyJGHTN0d2HglBV3uiguA4I"} })
	list := `{"jsonrpc":"2.0","id":1,"method":"resources/list"}`
	read := `{"jsonrpc":"2.0","id":2,"method":"resources/read","params":{"uri":"pay://ledger"}}`
	assert.NotContains(t, send(list, bearer), "pay://ledger")
	assert.NotContains(t, send(read, bearer), "the ledger")
	assert.Contains(t, send(list, bound), "pay://ledger")
	assert.Contains(t, send(read, bound), "the ledger")
}
