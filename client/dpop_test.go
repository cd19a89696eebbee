package client_test

import (
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/otcgo/otc"
	"github.com/otcgo/otc/client"
)

// dpopServers serves an authorization server that issues DPoP tokens
// living ttl seconds, counting its token requests, and an OTC server
// that takes "DPoP <token>" with a proof for the request (its claims
// read, each jti once), or answers as refuse says.
type dpopServers struct {
	issued atomic.Int32
	served atomic.Int32
	mu     sync.Mutex
	jtis   map[string]bool
	bad    []string // what was wrong with a proof
}

func newDPoPServers(t *testing.T, ttl int, refuse func(w http.ResponseWriter) bool) (*dpopServers, string, string) {
	t.Helper()
	s := &dpopServers{jtis: map[string]bool{}}
	var asURL, rsURL string
	as := serve(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if strings.HasPrefix(r.URL.Path, "/.well-known/") {
			_ = json.NewEncoder(w).Encode(map[string]any{"issuer": asURL, "token_endpoint": asURL + "/token",
				"token_endpoint_auth_methods_supported": []string{"client_secret_basic"}, "dpop_signing_alg_values_supported": []string{"ES256"}})
			return
		}
		if r.Header.Get("DPoP") == "" {
			w.WriteHeader(http.StatusBadRequest)
			return
		}
		n := s.issued.Add(1)
		_ = json.NewEncoder(w).Encode(map[string]any{"access_token": fmt.Sprintf("tok-%d", n), "token_type": "DPoP", "expires_in": ttl})
	}))
	asURL = as.URL
	h := otc.NewHandler(newRegistry(t), nil)
	rs := serve(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if strings.HasPrefix(r.URL.Path, "/.well-known/oauth-protected-resource") {
			_ = json.NewEncoder(w).Encode(map[string]any{"resource": rsURL, "authorization_servers": []string{asURL}})
			return
		}
		s.served.Add(1)
		token, ok := strings.CutPrefix(r.Header.Get("Authorization"), "DPoP ")
		if !ok {
			w.Header().Set("WWW-Authenticate", `DPoP algs="ES256", resource_metadata="`+rsURL+`/.well-known/oauth-protected-resource"`)
			w.WriteHeader(http.StatusUnauthorized)
			return
		}
		if refuse != nil && refuse(w) {
			return
		}
		var c jwt.MapClaims
		_, _, err := jwt.NewParser().ParseUnverified(r.Header.Get("DPoP"), &c)
		sum := sha256.Sum256([]byte(token))
		s.mu.Lock()
		switch {
		case err != nil:
			s.bad = append(s.bad, err.Error())
		case c["htm"] != r.Method || c["htu"] != rsURL+r.URL.Path || c["ath"] != base64.RawURLEncoding.EncodeToString(sum[:]):
			s.bad = append(s.bad, fmt.Sprintf("%v", c))
		case s.jtis[fmt.Sprint(c["jti"])]:
			s.bad = append(s.bad, "a jti again")
		}
		s.jtis[fmt.Sprint(c["jti"])] = true
		s.mu.Unlock()
		h.ServeHTTP(w, r)
	}))
	rsURL = rs.URL
	return s, rsURL, asURL
}

// TestDPoPClient: requests at once make one token request; each request
// carries a fresh proof for itself; a token is renewed before it lapses,
// without the server refusing it first.
func TestDPoPClient(t *testing.T) {
	s, rs, as := newDPoPServers(t, 2, nil)
	c := newClient(t, rs, &client.Options{Format: client.FormatOTC, OAuth: &client.OAuth{Issuer: as, ClientID: "c", ClientSecret: "s", DPoP: true}})
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			_, err := c.ListTools(t.Context())
			assert.NoError(t, err)
		})
	}
	wg.Wait()
	assert.EqualValues(t, 1, s.issued.Load(), "eight requests at once, one token request")
	for range 3 {
		_, err := c.ListTools(t.Context())
		require.NoError(t, err)
	}
	assert.EqualValues(t, 1, s.issued.Load())
	time.Sleep(1600 * time.Millisecond) // past three quarters of the token's 2 s
	refusedBefore := s.served.Load()
	_, err := c.ListTools(t.Context())
	require.NoError(t, err)
	assert.EqualValues(t, 2, s.issued.Load(), "renewed before it lapsed")
	assert.Equal(t, refusedBefore+1, s.served.Load(), "without a refusal first")
	s.mu.Lock()
	defer s.mu.Unlock()
	assert.Empty(t, s.bad, "every proof for its request, each jti once")
	assert.GreaterOrEqual(t, len(s.jtis), 12)
}

// TestDPoPClientNonceBounded: a server that asks for a nonce again and
// again is sent the request once more with it, and then the client gives
// up with an error that says so.
func TestDPoPClientNonceBounded(t *testing.T) {
	s, rs, as := newDPoPServers(t, 600, func(w http.ResponseWriter) bool {
		w.Header().Set("DPoP-Nonce", "n-"+fmt.Sprint(time.Now().UnixNano()))
		w.Header().Set("WWW-Authenticate", `DPoP error="use_dpop_nonce"`)
		w.WriteHeader(http.StatusUnauthorized)
		return true
	})
	c := newClient(t, rs, &client.Options{Format: client.FormatOTC, OAuth: &client.OAuth{Issuer: as, ClientID: "c", ClientSecret: "s", DPoP: true}})
	_, err := c.ListTools(t.Context())
	require.Error(t, err)
	assert.Contains(t, err.Error(), "DPoP nonce again")
	assert.LessOrEqual(t, s.served.Load(), int32(3), "the first request, the token's, and once more with the nonce")
	assert.EqualValues(t, 1, s.issued.Load())
}
