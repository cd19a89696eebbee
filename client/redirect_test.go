package client_test

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/otcgo/otc"
	"github.com/otcgo/otc/client"
	"github.com/otcgo/otc/internal/testkit"
)

// TestRedirects_CredentialsStayWithTheirOrigin: a server that redirects to
// another loopback origin (another port on the same IP, or localhost)
// receives neither the API key, nor the bearer token, nor a call's body
// with its secrets; the error names the Location.
func TestRedirects_CredentialsStayWithTheirOrigin(t *testing.T) {
	for _, status := range []int{http.StatusMovedPermanently, http.StatusFound, http.StatusSeeOther, http.StatusTemporaryRedirect, http.StatusPermanentRedirect} {
		for _, viaLocalhost := range []bool{false, true} {
			t.Run(fmt.Sprintf("%d/localhost=%v", status, viaLocalhost), func(t *testing.T) {
				trap := testkit.NewRedirectTrap(t, status, viaLocalhost, "")
				for _, hc := range []client.Doer{nil, http.DefaultClient, &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return nil }}} {
					c := newClient(t, trap.URL, &client.Options{HTTPClient: hc, APIKey: "k3y", BearerToken: "t0ken"})
					ctx := context.Background()
					_, err := c.ListTools(ctx)
					assertRedirectRefused(t, err, http.MethodGet, trap.Other+"/tools")
					err = c.Health(ctx)
					assertRedirectRefused(t, err, http.MethodGet, trap.Other+"/health")
					_, err = c.Call(ctx, "Signer.Sign", map[string]string{"message": "hi"}, &client.CallOptions{
						Secrets: []otc.ToolSecret{{ID: "SIGNING_KEY", Value: "s3cret"}},
					})
					assertRedirectRefused(t, err, http.MethodPost, trap.Other+"/tools/call")
				}
				assert.Empty(t, trap.Visits(), "nothing reaches the other origin")
			})
		}
	}
}

func assertRedirectRefused(t *testing.T, err error, method, location string) {
	t.Helper()
	var re *client.RedirectError
	require.ErrorAs(t, err, &re)
	assert.Equal(t, method, re.Method)
	assert.Equal(t, location, re.Location)
	assert.Contains(t, err.Error(), location, "the message names the Location")
	if method == http.MethodPost {
		assert.Contains(t, err.Error(), "a POST is never redirected")
	} else {
		assert.Contains(t, err.Error(), "another origin")
	}
}

// TestRedirects_SameOrigin: a read follows a redirect within its origin,
// with its credentials; a call is not redirected even there.
func TestRedirects_SameOrigin(t *testing.T) {
	var got []string
	mux := http.NewServeMux()
	mux.HandleFunc("GET /tools", func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, "/v2/tools", http.StatusFound)
	})
	mux.HandleFunc("POST /tools/call", func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, "/v2/tools/call", http.StatusTemporaryRedirect)
	})
	mux.HandleFunc("/v2/", func(w http.ResponseWriter, r *http.Request) {
		got = append(got, r.Method+" "+r.URL.Path+" "+r.Header.Get(otc.HeaderAPIKey))
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(`{"tools":[]}`))
	})
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	c := newClient(t, srv.URL, &client.Options{APIKey: "k3y"})
	defs, err := c.ListTools(context.Background())
	require.NoError(t, err)
	assert.Empty(t, defs)
	_, err = c.Call(context.Background(), "A.B", nil, nil)
	assertRedirectRefused(t, err, http.MethodPost, srv.URL+"/v2/tools/call")
	assert.Equal(t, []string{"GET /v2/tools k3y"}, got)
}

// noFollow is a Doer that hands redirects back unfollowed.
type noFollow struct{}

func (noFollow) Do(r *http.Request) (*http.Response, error) {
	hc := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	return hc.Do(r)
}

// TestRedirects_DoerHandsBack: a Doer of another kind that returns a
// redirect unfollowed gets the same error.
func TestRedirects_DoerHandsBack(t *testing.T) {
	trap := testkit.NewRedirectTrap(t, http.StatusTemporaryRedirect, false, "")
	c := newClient(t, trap.URL, &client.Options{HTTPClient: noFollow{}, APIKey: "k3y"})
	_, err := c.Call(context.Background(), "A.B", nil, nil)
	assertRedirectRefused(t, err, http.MethodPost, trap.Other+"/tools/call")
	var re *client.RedirectError
	require.True(t, errors.As(err, &re))
	assert.Equal(t, http.StatusTemporaryRedirect, re.Status)
	assert.True(t, strings.HasPrefix(re.From, trap.URL))
	assert.Empty(t, trap.Visits())
}
