package main

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"encoding/json"
	"encoding/pem"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/MicahParks/jwkset"
	"github.com/golang-jwt/jwt/v5"
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

// servePush serves the example with the site that env describes.
func servePush(t *testing.T, env map[string]string) string {
	t.Helper()
	where, err := siteFromEnv(envOf(env))
	require.NoError(t, err)
	logger := slog.New(slog.DiscardHandler)
	reg, err := newRegistry(logger, nil, nil, nil, false)
	require.NoError(t, err)
	handler, _, err := newServer(reg, credentials{}, shared{}, where, logger, nil)
	require.NoError(t, err)
	srv := httptest.NewServer(handler)
	t.Cleanup(srv.Close)
	return srv.URL
}

// TestA2APush: a text message whose configuration names a webhook gets a
// task whose end is posted to it, signed with OTC_PUSH_KEY_FILE's key
// (checked against the JWKS the server publishes); a webhook on this
// machine is refused unless OTC_PUSH_ALLOWED_NETWORKS allows it; bad
// settings stop the server with an error naming them.
func TestA2APush(t *testing.T) {
	posts := make(chan *http.Request, 10)
	bodies := make(chan []byte, 10)
	hook := httptest.NewServer(http.HandlerFunc(func(_ http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		posts <- r
		bodies <- b
	}))
	t.Cleanup(hook.Close)
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	require.NoError(t, err)
	der, err := x509.MarshalPKCS8PrivateKey(key)
	require.NoError(t, err)
	keyFile := filepath.Join(t.TempDir(), "push.pem")
	require.NoError(t, os.WriteFile(keyFile, pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: der}), 0o600))

	send := func(base string) (int, string) {
		req, err := http.NewRequest(http.MethodPost, base+"/a2a", strings.NewReader(
			`{"jsonrpc":"2.0","id":1,"method":"SendMessage","params":{"message":{"messageId":"p1","role":"ROLE_USER","parts":[{"text":"2 + 3 * 4"}]},"configuration":{"returnImmediately":true,"taskPushNotificationConfig":{"url":"`+hook.URL+`/done","token":"t1"}}}}`))
		require.NoError(t, err)
		req.Header.Set("A2A-Version", "1.0")
		resp, err := http.DefaultClient.Do(req)
		require.NoError(t, err)
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	_, body := send(servePush(t, nil))
	assert.Contains(t, body, `"code":-32602`, "a webhook on this machine is refused by default")
	assert.Contains(t, body, "url")

	base := servePush(t, map[string]string{"OTC_PUSH_ALLOWED_NETWORKS": "127.0.0.0/8, ::1", "OTC_PUSH_KEY_FILE": keyFile, "OTC_PUBLIC_URL": "https://tools.example.com"})
	status, body := send(base)
	require.Equal(t, http.StatusOK, status, body)
	require.Contains(t, body, `"task"`, body)
	var last []byte
	var r *http.Request
	for !strings.Contains(string(last), "TASK_STATE_COMPLETED") {
		select {
		case r = <-posts:
			last = <-bodies
		case <-time.After(10 * time.Second):
			t.Fatalf("the webhook was never told the task ended; last: %s", last)
		}
	}
	assert.Contains(t, string(last), `{"data":14}`)
	assert.Equal(t, "t1", r.Header.Get("X-A2A-Notification-Token"))

	resp, err := http.Get(base + "/a2a/.well-known/jwks.json")
	require.NoError(t, err)
	defer resp.Body.Close()
	var set jwkset.JWKSMarshal
	require.NoError(t, json.NewDecoder(resp.Body).Decode(&set))
	require.Len(t, set.Keys, 1)
	j, err := jwkset.NewJWKFromMarshal(set.Keys[0], jwkset.JWKMarshalOptions{}, jwkset.JWKValidateOptions{})
	require.NoError(t, err)
	tok := strings.TrimPrefix(r.Header.Get("Authorization"), "Bearer ")
	_, err = jwt.Parse(tok, func(*jwt.Token) (any, error) { return j.Key(), nil }, jwt.WithValidMethods([]string{"ES256"}), jwt.WithAudience(hook.URL+"/done"),
		jwt.WithIssuer("https://tools.example.com/a2a"))
	assert.NoError(t, err, "signed with the key file's key, issued by the public URL's agent")

	// A signing key without a public URL is refused, saying what to set.
	_, err = siteFromEnv(envOf(map[string]string{"OTC_PUSH_KEY_FILE": keyFile}))
	require.Error(t, err)
	assert.Contains(t, err.Error(), "OTC_PUSH_KEY_FILE needs OTC_PUBLIC_URL")

	for env, want := range map[string]string{"OTC_PUSH_ALLOWED_NETWORKS": "not an address", "OTC_PUSH_KEY_FILE": "no such file"} {
		_, err := siteFromEnv(envOf(map[string]string{env: "nope"}))
		require.Error(t, err, env)
		assert.Contains(t, err.Error(), env)
		assert.Contains(t, err.Error(), want)
	}
}
