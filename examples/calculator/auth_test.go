package main

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/otcgo/otc"
	"github.com/otcgo/otc/client"
)

const (
	testAPIKey    = "example-api-key"
	testJWTSecret = "an-example-secret-of-32-bytes-or-more"
)

func envOf(m map[string]string) func(string) string {
	return func(k string) string { return m[k] }
}

func TestAuthenticatorFromEnv(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name    string
		env     map[string]string
		methods string
		wantErr string
	}{
		{"none", nil, "none", ""},
		{"api_key", map[string]string{"OTC_API_KEY": testAPIKey}, "api_key", ""},
		{"jwt", map[string]string{"OTC_JWT_SECRET": testJWTSecret}, "jwt", ""},
		{"both", map[string]string{"OTC_API_KEY": testAPIKey, "OTC_JWT_SECRET": testJWTSecret}, "api_key+jwt", ""},
		{"short_jwt_secret", map[string]string{"OTC_JWT_SECRET": "short"}, "", "OTC_JWT_SECRET"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			auth, methods, err := authenticatorFromEnv(envOf(tc.env))
			if tc.wantErr != "" {
				require.Error(t, err)
				assert.Contains(t, err.Error(), tc.wantErr)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tc.methods, methods)
			assert.Equal(t, tc.methods == "none", auth == nil)
		})
	}
}

// TestServerWithAuthFromEnv runs the example's server with both methods on,
// as OTC_API_KEY, OTC_JWT_SECRET and OTC_JWT_AUDIENCE would turn them on,
// and calls it the ways the README shows.
func TestServerWithAuthFromEnv(t *testing.T) {
	t.Parallel()
	auth, _, err := authenticatorFromEnv(envOf(map[string]string{
		"OTC_API_KEY":      testAPIKey,
		"OTC_JWT_SECRET":   testJWTSecret,
		"OTC_JWT_AUDIENCE": "calculator, other",
	}))
	require.NoError(t, err)
	logger := slog.New(slog.NewTextHandler(io.Discard, nil))
	reg, err := newRegistry(logger)
	require.NoError(t, err)
	srv := httptest.NewServer(newServer(reg, auth, logger))
	t.Cleanup(srv.Close)

	get := func(t *testing.T, path string, header http.Header) *http.Response {
		t.Helper()
		req, err := http.NewRequest(http.MethodGet, srv.URL+path, nil)
		require.NoError(t, err)
		req.Header = header
		resp, err := srv.Client().Do(req)
		require.NoError(t, err)
		_ = resp.Body.Close()
		return resp
	}

	t.Run("health_is_open", func(t *testing.T) {
		assert.Equal(t, http.StatusOK, get(t, "/health", nil).StatusCode)
	})
	for _, path := range []string{"/tools", "/v1/tools"} {
		t.Run("no_credentials"+path, func(t *testing.T) {
			resp := get(t, path, nil)
			assert.Equal(t, http.StatusUnauthorized, resp.StatusCode)
			assert.Equal(t, "Bearer", resp.Header.Get("WWW-Authenticate"))
		})
		t.Run("api_key"+path, func(t *testing.T) {
			resp := get(t, path, http.Header{"Oxp-Api-Key": {testAPIKey}})
			assert.Equal(t, http.StatusOK, resp.StatusCode)
		})
	}

	ctx := context.Background()
	for _, tc := range []struct {
		name string
		opts *client.Options
		ok   bool
	}{
		{"client_api_key", &client.Options{APIKey: testAPIKey}, true},
		{"client_jwt_with_audience", &client.Options{JWT: &client.JWTSigner{Secret: []byte(testJWTSecret), Audience: "calculator"}}, true},
		{"client_jwt_without_audience", &client.Options{JWT: &client.JWTSigner{Secret: []byte(testJWTSecret)}}, true},
		{"client_jwt_wrong_audience", &client.Options{JWT: &client.JWTSigner{Secret: []byte(testJWTSecret), Audience: "elsewhere"}}, false},
		{"client_jwt_wrong_secret", &client.Options{JWT: &client.JWTSigner{Secret: []byte("another-secret-of-32-bytes-or-more!")}}, false},
		{"client_wrong_api_key", &client.Options{APIKey: "nope"}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, err := client.New(srv.URL, tc.opts)
			require.NoError(t, err)
			sum, err := client.CallAs[float64](ctx, c, "Calculator.Add", map[string]any{"a": 10, "b": 5}, nil)
			if !tc.ok {
				var e *otc.Error
				require.True(t, errors.As(err, &e), "want an *otc.Error, got %v", err)
				assert.Equal(t, otc.CodeUnauthenticated, e.Code)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, 15.0, sum)
		})
	}
}
