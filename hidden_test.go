package otc_test

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/otcgo/otc"
	"github.com/otcgo/otc/internal/testkit"
	"github.com/otcgo/otc/mount"
)

// hiddenCalls are a call of tool (a Toolkit.Tool id) over each format.
func hiddenCalls(tool string) []struct{ format, path, body string } {
	name := strings.ReplaceAll(tool, ".", "_")
	return []struct{ format, path, body string }{
		{"otc", "/otc/tools/call", `{"request":{"tool_id":"` + tool + `","call_id":"c1","input":{}}}`},
		{"rest", "/v1/tools/" + name + ":invoke", `{"schema_version":"0.1.0","args":{}}`},
		{"mcp", "/mcp", `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"` + name + `","arguments":{}}}`},
		{"a2a", "/a2a", `{"jsonrpc":"2.0","id":1,"method":"SendMessage","params":{"message":{"messageId":"m1","role":"ROLE_USER","parts":[{"data":{"tool":"` + name + `","input":{}}}]}}}`},
		{"a2a_rest", "/a2a/message:send", `{"message":{"messageId":"m2","role":"ROLE_USER","parts":[{"data":{"tool":"` + name + `","input":{}}}]}}`},
	}
}

// TestHiddenToolsAnswerAsUnknown: a caller that may see a tool through
// no protocol (here, a capability token for another audience) is answered,
// on every format, exactly as for a tool the registry does not hold,
// whether the tool refuses the format or the caller; a caller that sees
// the tool through some protocol keeps the precise refusal of the one it
// may not call it through.
func TestHiddenToolsAnswerAsUnknown(t *testing.T) {
	t.Parallel()
	reg := otc.NewRegistry(nil)
	noop := func(context.Context, struct{}) (int, error) { return 1, nil }
	require.NoError(t, otc.Register(reg, otc.Tool{ID: "Pay.Refund", Version: "1.0.0", Description: "Refunds.",
		Policy: &otc.Policy{Protocols: []string{otc.ProtocolOTC, otc.ProtocolHTTP, otc.ProtocolMCP}, ResourceURI: "urn:pay", RequiredCapabilities: []string{"pay:refund"}}}, noop))
	require.NoError(t, otc.Register(reg, otc.Tool{ID: "Mcp.Only", Version: "1.0.0", Description: "Only over MCP.",
		Policy: &otc.Policy{Protocols: []string{otc.ProtocolMCP}}}, noop))
	mux := http.NewServeMux()
	mount.All(mux, reg, &mount.Options{Authenticator: testkit.ClaimsAuth()})
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)

	send := func(path, body, claims string) (int, string) {
		t.Helper()
		req, err := http.NewRequestWithContext(t.Context(), http.MethodPost, srv.URL+path, strings.NewReader(body))
		require.NoError(t, err)
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		req.Header.Set("MCP-Protocol-Version", "2025-11-25")
		req.Header.Set("A2A-Version", "1.0")
		req.Header.Set(testkit.ClaimsHeader, claims)
		resp, err := srv.Client().Do(req)
		require.NoError(t, err)
		defer resp.Body.Close()
		b, err := io.ReadAll(resp.Body)
		require.NoError(t, err)
		return resp.StatusCode, string(b)
	}
	elsewhere := `{"aud":"urn:other","caps":["pay:refund"]}`
	unknown := hiddenCalls("Nope.Nope")
	for i, c := range hiddenCalls("Pay.Refund") {
		status, body := send(c.path, c.body, elsewhere)
		wantStatus, want := send(unknown[i].path, unknown[i].body, elsewhere)
		want = strings.NewReplacer("Nope_Nope", "Pay_Refund", "Nope.Nope", "Pay.Refund").Replace(want)
		assert.Equal(t, wantStatus, status, c.format)
		assert.JSONEq(t, want, body, "%s: answered as an unknown tool", c.format)
		assert.NotContains(t, body, "audience", c.format)
		assert.NotContains(t, body, "cannot be called through", c.format)
	}

	// A caller that sees the tool (over OTC, REST and MCP) is told why
	// A2A may not call it; so is anyone of a tool listed over MCP.
	for _, c := range []struct{ tool, claims string }{{"Pay.Refund", `{"aud":"urn:pay","caps":["pay:refund"]}`}, {"Mcp.Only", elsewhere}} {
		for _, call := range hiddenCalls(c.tool)[3:] {
			_, body := send(call.path, call.body, c.claims)
			assert.Contains(t, body, "cannot be called through a2a", "%s %s", c.tool, call.format)
		}
	}
}
