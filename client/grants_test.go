package client_test

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/otcgo/otc/client"
)

// TestGrantConfiguration: a configuration that cannot work is refused
// by New, saying what it lacks.
func TestGrantConfiguration(t *testing.T) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	require.NoError(t, err)
	token := func(context.Context) (string, error) { return "t", nil }
	for want, o := range map[string]*client.OAuth{
		"one of Authorize, Enterprise and Assertion": {Issuer: "https://as", Assertion: token, Enterprise: &client.Enterprise{}},
		"ClientKey needs the ClientID":               {Issuer: "https://as", ClientKey: key},
		"a ClientSecret or a ClientKey, not both":    {Issuer: "https://as", ClientID: "c", ClientSecret: "s", ClientKey: key},
		"Assertion needs Issuer":                     {Assertion: token},
		"ClientKey needs Issuer":                     {ClientID: "c", ClientKey: key},
		"Enterprise needs the IdP's TokenURL":        {Issuer: "https://as", ClientID: "c", ClientSecret: "s", Enterprise: &client.Enterprise{ClientID: "i"}},
		"Enterprise needs a ClientID":                {Issuer: "https://as", Enterprise: &client.Enterprise{TokenURL: "https://idp/token", ClientID: "i", IDToken: token}},
	} {
		_, err := client.New("http://127.0.0.1:1/mcp", &client.Options{Format: client.FormatMCP, OAuth: o})
		assert.ErrorContains(t, err, want)
	}
}

// TestTokenFile reads the file afresh each time, trimmed, and refuses an
// empty file, a missing one and one over 64 KiB.
func TestTokenFile(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "token")
	read := client.TokenFile(path)
	_, err := read(t.Context())
	assert.Error(t, err, "missing")
	require.NoError(t, os.WriteFile(path, []byte("first\n"), 0o600))
	got, err := read(t.Context())
	require.NoError(t, err)
	assert.Equal(t, "first", got)
	require.NoError(t, os.WriteFile(path, []byte("second"), 0o600))
	got, err = read(t.Context())
	require.NoError(t, err)
	assert.Equal(t, "second", got, "rotated by the platform, read anew")
	require.NoError(t, os.WriteFile(path, []byte(" \n"), 0o600))
	_, err = read(t.Context())
	assert.ErrorContains(t, err, "empty")
	require.NoError(t, os.WriteFile(path, []byte(strings.Repeat("a", 70<<10)), 0o600))
	_, err = read(t.Context())
	assert.ErrorContains(t, err, "over")
}

// hostileGrants serves a protected resource whose authorization server
// takes the JWT bearer grant, and an identity provider whose token
// endpoint idp answers.
func hostileGrants(t *testing.T, as, idp http.HandlerFunc) (resource, issuer, idpURL string) {
	t.Helper()
	var asURL string
	asSrv := serve(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if strings.HasPrefix(r.URL.Path, "/.well-known/") {
			_ = json.NewEncoder(w).Encode(map[string]any{"issuer": asURL, "token_endpoint": asURL + "/token",
				"grant_types_supported": []string{"urn:ietf:params:oauth:grant-type:jwt-bearer"}, "token_endpoint_auth_methods_supported": []string{"client_secret_basic", "none"}})
			return
		}
		as(w, r)
	}))
	asURL = asSrv.URL
	var rsURL string
	rs := serve(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if strings.HasPrefix(r.URL.Path, "/.well-known/oauth-protected-resource") {
			_ = json.NewEncoder(w).Encode(map[string]any{"resource": rsURL + "/mcp", "authorization_servers": []string{asURL}})
			return
		}
		w.Header().Set("WWW-Authenticate", `Bearer resource_metadata="`+rsURL+`/.well-known/oauth-protected-resource/mcp"`)
		w.WriteHeader(http.StatusUnauthorized)
	}))
	rsURL = rs.URL
	idpSrv := serve(t, idp)
	return rsURL + "/mcp", asURL, idpSrv.URL + "/token"
}

// TestGrantsBounded: an identity provider that answers 10 MB, or too
// slowly, and an authorization server that refuses a workload's
// assertion (another audience) each fail the request with an error that
// says so, after one token request: nothing is retried with another
// grant, and nothing waits past the caller's deadline.
func TestGrantsBounded(t *testing.T) {
	var asked atomic.Int32
	refuse := func(w http.ResponseWriter, r *http.Request) {
		asked.Add(1)
		w.WriteHeader(http.StatusBadRequest)
		_, _ = w.Write([]byte(`{"error":"invalid_grant","error_description":"the assertion is for another audience"}`))
	}
	huge := func(w http.ResponseWriter, r *http.Request) {
		_, _ = w.Write([]byte(`{"access_token":"`))
		chunk := []byte(strings.Repeat("a", 1<<20))
		for range 10 {
			if _, err := w.Write(chunk); err != nil {
				return
			}
		}
	}
	slow := func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body) // so that the server sees the client leave
		select {
		case <-r.Context().Done():
		case <-time.After(time.Minute):
		}
	}
	enterprise := func(issuer, idp string) *client.OAuth {
		return &client.OAuth{Issuer: issuer, ClientID: "c", ClientSecret: "s", Enterprise: &client.Enterprise{
			TokenURL: idp, ClientID: "idp-client", IDToken: func(context.Context) (string, error) { return "id-token", nil }}}
	}
	for name, tc := range map[string]struct {
		as, idp http.HandlerFunc
		oauth   func(issuer, idp string) *client.OAuth
		want    string
	}{
		"an IdP of 10 MB": {refuse, huge, enterprise, "over 1048576 bytes"},
		"a slow IdP":      {refuse, slow, enterprise, "deadline"},
		"another audience": {refuse, huge, func(issuer, _ string) *client.OAuth {
			return &client.OAuth{Issuer: issuer, Assertion: func(context.Context) (string, error) { return "a.b.c", nil }}
		}, "another audience"},
	} {
		t.Run(name, func(t *testing.T) {
			asked.Store(0)
			res, issuer, idp := hostileGrants(t, tc.as, tc.idp)
			c, err := client.New(res, &client.Options{Format: client.FormatMCP, OAuth: tc.oauth(issuer, idp)})
			require.NoError(t, err)
			defer c.Close()
			ctx, cancel := context.WithTimeout(t.Context(), 2*time.Second)
			defer cancel()
			_, err = c.ListTools(ctx)
			require.Error(t, err)
			assert.Contains(t, err.Error(), tc.want)
			if name == "another audience" {
				assert.EqualValues(t, 1, asked.Load(), "one token request, not retried")
			} else {
				assert.Zero(t, asked.Load(), "no grant without an assertion from the IdP")
			}
		})
	}
}
