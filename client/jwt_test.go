package client_test

import (
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/otcgo/otc"
	"github.com/otcgo/otc/client"
)

// TestJWTSigner: every request carries a fresh HS256 token, signed with
// the shared secret, with the subject and audience asked for and a short
// life; two requests never carry the same token.
func TestJWTSigner(t *testing.T) {
	secret := []byte("shared-secret-of-32-bytes-or-so!")
	var mu sync.Mutex
	var seen []*jwt.RegisteredClaims
	var raw []string
	h := otc.NewHandler(newRegistry(t), nil)
	srv := serve(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		tok := strings.TrimPrefix(r.Header.Get("Authorization"), "Bearer ")
		claims := &jwt.RegisteredClaims{}
		_, err := jwt.ParseWithClaims(tok, claims, func(*jwt.Token) (any, error) { return secret, nil }, jwt.WithValidMethods([]string{"HS256"}))
		if err != nil {
			w.WriteHeader(http.StatusUnauthorized)
			return
		}
		mu.Lock()
		seen, raw = append(seen, claims), append(raw, tok)
		mu.Unlock()
		h.ServeHTTP(w, r)
	}))
	c := newClient(t, srv.URL, &client.Options{JWT: &client.JWTSigner{Secret: secret, Subject: "agent-7", Audience: "tools", Lifetime: 30 * time.Second}})
	_, err := c.ListTools(t.Context())
	require.NoError(t, err)
	require.NoError(t, c.Health(t.Context()))

	mu.Lock()
	defer mu.Unlock()
	require.Len(t, seen, 2)
	assert.NotEqual(t, raw[0], raw[1], "a fresh token for each request")
	for _, cl := range seen {
		assert.Equal(t, "agent-7", cl.Subject)
		assert.Equal(t, jwt.ClaimStrings{"tools"}, cl.Audience)
		assert.InDelta(t, 30, cl.ExpiresAt.Sub(cl.IssuedAt.Time).Seconds(), 1)
	}

	_, err = client.New(srv.URL, &client.Options{JWT: &client.JWTSigner{Secret: secret}, BearerToken: "x"})
	assert.ErrorContains(t, err, "not both")
	_, err = client.New(srv.URL, &client.Options{JWT: &client.JWTSigner{}})
	assert.ErrorContains(t, err, "no Secret")
	_, err = client.New(srv.URL, &client.Options{JWT: &client.JWTSigner{Secret: secret}, OAuth: &client.OAuth{ClientSecret: "s", Issuer: "https://as.example"}})
	assert.ErrorContains(t, err, "not both")
}
