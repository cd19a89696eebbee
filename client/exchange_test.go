package client_test

import (
	"errors"
	"net/http"
	"net/http/httptest"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/otcgo/otc"
	"github.com/otcgo/otc/client"
)

// exchangeServer is a token endpoint over real HTTP that exchanges the
// subject token "alice" for "alice@upstream" (RFC 8693), for the client
// gw:gw-secret and the audience "upstream"; "busy" gets a 503, anything
// else invalid_grant.
func exchangeServer(t *testing.T) (string, *atomic.Int64) {
	var requests atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		requests.Add(1)
		w.Header().Set("Content-Type", "application/json")
		id, secret, ok := r.BasicAuth()
		switch {
		case !ok || id != "gw" || secret != "gw-secret":
			w.WriteHeader(http.StatusUnauthorized)
			_, _ = w.Write([]byte(`{"error":"invalid_client"}`))
		case r.FormValue("grant_type") != "urn:ietf:params:oauth:grant-type:token-exchange" || r.FormValue("audience") != "upstream" ||
			r.FormValue("subject_token_type") != "urn:ietf:params:oauth:token-type:access_token" || r.UserAgent() != "gateway/1.0":
			w.WriteHeader(http.StatusBadRequest)
			_, _ = w.Write([]byte(`{"error":"invalid_request"}`))
		case r.FormValue("subject_token") == "busy":
			w.WriteHeader(http.StatusServiceUnavailable)
		case r.FormValue("subject_token") == "alice":
			_, _ = w.Write([]byte(`{"access_token":"alice@upstream","issued_token_type":"urn:ietf:params:oauth:token-type:access_token","token_type":"Bearer","expires_in":600}`))
		default:
			w.WriteHeader(http.StatusBadRequest)
			_, _ = w.Write([]byte(`{"error":"invalid_grant","error_description":"the subject token is not valid"}`))
		}
	}))
	t.Cleanup(srv.Close)
	return srv.URL + "/token", &requests
}

// TestExchangeToken: the client's token exchange asks once per subject
// (concurrent asks share one request), keeps what it got, and says
// whether a failure is the server's refusal or its absence.
func TestExchangeToken(t *testing.T) {
	tokenURL, requests := exchangeServer(t)
	c, err := client.New("http://127.0.0.1:1", &client.Options{UserAgent: "gateway/1.0",
		TokenExchange: &client.TokenExchange{TokenURL: tokenURL, ClientID: "gw", ClientSecret: "gw-secret", Audience: "upstream"}})
	require.NoError(t, err)

	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			tok, err := c.ExchangeToken(t.Context(), "alice")
			assert.NoError(t, err)
			assert.Equal(t, "alice@upstream", tok)
		})
	}
	wg.Wait()
	assert.EqualValues(t, 1, requests.Load(), "one exchange for eight asks at once")
	tok, err := c.ExchangeToken(t.Context(), "alice")
	require.NoError(t, err)
	assert.Equal(t, "alice@upstream", tok)
	assert.EqualValues(t, 1, requests.Load(), "kept until shortly before it lapses")

	_, err = c.ExchangeToken(t.Context(), "mallory")
	oe, ok := errors.AsType[*otc.Error](err)
	require.True(t, ok, "%v", err)
	assert.Equal(t, otc.CodeForbidden, oe.Code)
	assert.Contains(t, oe.Message, "invalid_grant")

	_, err = c.ExchangeToken(t.Context(), "busy")
	oe, ok = errors.AsType[*otc.Error](err)
	require.True(t, ok, "%v", err)
	assert.Equal(t, otc.CodeUnavailable, oe.Code)
	assert.Positive(t, oe.RetryAfter)

	_, err = c.ExchangeToken(t.Context(), "")
	assert.ErrorContains(t, err, "needs the user's token")
	plain, err := client.New("http://127.0.0.1:1", nil)
	require.NoError(t, err)
	_, err = plain.ExchangeToken(t.Context(), "alice")
	assert.ErrorContains(t, err, "needs Options.TokenExchange")
	_, err = client.New("http://127.0.0.1:1", &client.Options{TokenExchange: &client.TokenExchange{TokenURL: tokenURL, ClientID: "gw", ClientSecret: "gw-secret"}})
	assert.ErrorContains(t, err, "an Audience or a Resource")
}
