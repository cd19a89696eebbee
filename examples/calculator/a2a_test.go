package main

import (
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestA2A: the example serves A2A at /a2a: the card lists the tools a
// caller without a token may call (not Payments.Refund), a message calls a
// tool, and with OTC_API_KEY a message without the key is refused.
func TestA2A(t *testing.T) {
	url := serveWithEnvAuth(t, nil)
	resp, err := http.Get(url + "/a2a/.well-known/agent-card.json")
	require.NoError(t, err)
	var card struct {
		Name                string `json:"name"`
		SupportedInterfaces []struct {
			URL string `json:"url"`
		} `json:"supportedInterfaces"`
		Skills []struct {
			ID string `json:"id"`
		} `json:"skills"`
	}
	require.NoError(t, json.NewDecoder(resp.Body).Decode(&card))
	resp.Body.Close()
	assert.Equal(t, "otc calculator", card.Name)
	require.NotEmpty(t, card.SupportedInterfaces)
	assert.Equal(t, url+"/a2a", card.SupportedInterfaces[0].URL)
	var ids []string
	for _, s := range card.Skills {
		ids = append(ids, s.ID)
	}
	assert.Contains(t, ids, "Shipping.Quote@1.0.0")
	assert.NotContains(t, ids, "Payments.Refund@1.0.0", "it needs a capability token")

	send := func(url string, header ...string) (int, string) {
		req, err := http.NewRequest(http.MethodPost, url+"/a2a", strings.NewReader(
			`{"jsonrpc":"2.0","id":1,"method":"SendMessage","params":{"message":{"messageId":"q1","role":"ROLE_USER","parts":[{"data":{"tool":"Shipping_Quote","input":{"to":{"country":"DE"}}}}]}}}`))
		require.NoError(t, err)
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("A2A-Version", "1.0")
		for i := 0; i+1 < len(header); i += 2 {
			req.Header.Set(header[i], header[i+1])
		}
		resp, err := http.DefaultClient.Do(req)
		require.NoError(t, err)
		defer resp.Body.Close()
		b, err := io.ReadAll(resp.Body)
		require.NoError(t, err)
		return resp.StatusCode, string(b)
	}
	status, body := send(url)
	assert.Equal(t, http.StatusOK, status, body)
	assert.Contains(t, body, `{"text":"standard to DE: 1 parcel(s), 5.00 EUR"}`)

	keyed := serveWithEnvAuth(t, map[string]string{"OTC_API_KEY": "let-me-in-please"})
	status, body = send(keyed)
	assert.Equal(t, http.StatusUnauthorized, status, body)
	status, body = send(keyed, "OXP-API-Key", "let-me-in-please")
	assert.Equal(t, http.StatusOK, status, body)
}

// TestAgentCardURL: with OTC_PUBLIC_URL the Agent Card names the A2A
// endpoint below it, whatever Host a request gives (at the root and at
// /a2a); without it, the card names the request's host and says that a
// shared cache must not keep it for another.
func TestAgentCardURL(t *testing.T) {
	t.Parallel()
	card := func(base, path, host string) (string, http.Header) {
		req, err := http.NewRequest(http.MethodGet, base+path, nil)
		require.NoError(t, err)
		req.Host = host
		resp, err := http.DefaultClient.Do(req)
		require.NoError(t, err)
		defer resp.Body.Close()
		var c struct {
			SupportedInterfaces []struct {
				URL string `json:"url"`
			} `json:"supportedInterfaces"`
		}
		require.NoError(t, json.NewDecoder(resp.Body).Decode(&c))
		require.NotEmpty(t, c.SupportedInterfaces)
		return c.SupportedInterfaces[0].URL, resp.Header
	}
	_, lines := startMainEnv(t, "-addr 127.0.0.1:0", "OTC_PUBLIC_URL=https://tools.example.com/")
	set := listeningURL(t, nextLine(t, lines))
	_, lines = startMainEnv(t, "-addr 127.0.0.1:0")
	unset := listeningURL(t, nextLine(t, lines))
	for _, path := range []string{"/.well-known/agent-card.json", "/a2a/.well-known/agent-card.json"} {
		u, h := card(set, path, "attacker.test")
		assert.Equal(t, "https://tools.example.com/a2a", u, path)
		assert.Empty(t, h.Get("Vary"), path)
		u, h = card(unset, path, "attacker.test")
		assert.Equal(t, "http://attacker.test/a2a", u, path)
		assert.Equal(t, "private", h.Get("Cache-Control"), path)
		assert.Equal(t, "Host", h.Get("Vary"), path)
	}
}
