package main

import (
	"bytes"
	"context"
	"errors"
	"io"
	"log/slog"
	"maps"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"
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

func TestCredentialsFromEnv(t *testing.T) {
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
		{"oauth", map[string]string{"OTC_OAUTH_ISSUER": "http://127.0.0.1:9", "OTC_OAUTH_RESOURCE": "http://127.0.0.1:8080/mcp"}, "oauth", ""},
		{"api_key_and_oauth", map[string]string{"OTC_API_KEY": testAPIKey, "OTC_OAUTH_ISSUER": "http://127.0.0.1:9", "OTC_OAUTH_RESOURCE": "http://127.0.0.1:8080/mcp"}, "api_key+oauth", ""},
		{"oauth_issuer_alone", map[string]string{"OTC_OAUTH_ISSUER": "http://127.0.0.1:9"}, "", "OTC_OAUTH_RESOURCE is not"},
		{"oauth_resource_alone", map[string]string{"OTC_OAUTH_RESOURCE": "http://127.0.0.1:8080/mcp"}, "", "OTC_OAUTH_ISSUER is not"},
		{"oauth_plain_http_resource", map[string]string{"OTC_OAUTH_ISSUER": "https://login.example", "OTC_OAUTH_RESOURCE": "http://tools.example/mcp"}, "", "OTC_OAUTH_ISSUER and OTC_OAUTH_RESOURCE"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			creds, err := credentialsFromEnv(t.Context(), envOf(tc.env))
			auth, methods := creds.auth, creds.methods
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
	creds, err := credentialsFromEnv(t.Context(), envOf(map[string]string{
		"OTC_API_KEY":      testAPIKey,
		"OTC_JWT_SECRET":   testJWTSecret,
		"OTC_JWT_AUDIENCE": "calculator, other",
	}))
	require.NoError(t, err)
	logger := slog.New(slog.NewTextHandler(io.Discard, nil))
	reg, err := newRegistry(logger, nil, nil, nil, creds.oauth != nil)
	require.NoError(t, err)
	handler, _, err := newServer(reg, creds, shared{}, site{}, logger, nil)
	require.NoError(t, err)
	srv := httptest.NewServer(handler)
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

// serveWithEnvAuth serves the example's tools with the authentication the
// environment env turns on, and returns the server's URL.
func serveWithEnvAuth(t *testing.T, env map[string]string) string {
	t.Helper()
	return serveWithEnvAuthStore(t, env, nil)
}

// serveWithEnvAuthStore is serveWithEnvAuth with calls recorded by call id
// in store, as the program does.
func serveWithEnvAuthStore(t *testing.T, env map[string]string, store otc.IdempotencyStore) string {
	t.Helper()
	creds, err := credentialsFromEnv(t.Context(), envOf(env))
	require.NoError(t, err)
	logger := slog.New(slog.DiscardHandler)
	reg, err := newRegistry(logger, nil, store, nil, creds.oauth != nil)
	require.NoError(t, err)
	handler, _, err := newServer(reg, creds, shared{}, site{}, logger, nil)
	require.NoError(t, err)
	srv := httptest.NewServer(handler)
	t.Cleanup(srv.Close)
	return srv.URL
}

// listWithToken lists the tools with the bearer token and returns the
// status and body.
func listWithToken(t *testing.T, url, token string) (int, string) {
	t.Helper()
	req, err := http.NewRequest(http.MethodGet, url+"/tools", nil)
	require.NoError(t, err)
	req.Header.Set("Authorization", "Bearer "+token)
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	return resp.StatusCode, string(b)
}

// TestWriteToken checks the token -print-token writes: the claims, and
// that a server started with the same environment accepts it over HTTP.
func TestWriteToken(t *testing.T) {
	t.Parallel()
	now := time.Now()
	for _, tc := range []struct {
		name    string
		env     map[string]string
		aud     []string // the token's audience
		wantErr string
	}{
		{"audience", map[string]string{"OTC_JWT_SECRET": testJWTSecret, "OTC_JWT_AUDIENCE": "calculator"}, []string{"calculator"}, ""},
		{"first_of_several_audiences", map[string]string{"OTC_JWT_SECRET": testJWTSecret, "OTC_JWT_AUDIENCE": " , calculator, other"}, []string{"calculator"}, ""},
		{"no_audience", map[string]string{"OTC_JWT_SECRET": testJWTSecret}, nil, ""},
		{"no_secret", map[string]string{"OTC_JWT_AUDIENCE": "calculator"}, nil,
			"OTC_JWT_SECRET is not set; set it to the secret the server runs with (at least 32 bytes)"},
		{"short_secret", map[string]string{"OTC_JWT_SECRET": "short"}, nil,
			"OTC_JWT_SECRET is 5 bytes long; the server refuses secrets shorter than 32 bytes, so use a longer one for both"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			var out bytes.Buffer
			err := writeToken(&out, envOf(tc.env), now)
			if tc.wantErr != "" {
				require.Error(t, err)
				assert.Equal(t, tc.wantErr, err.Error())
				assert.Empty(t, out.String(), "nothing is printed on failure")
				return
			}
			require.NoError(t, err)
			token, ok := strings.CutSuffix(out.String(), "\n")
			require.True(t, ok, "one line: %q", out.String())
			require.NotContains(t, token, "\n")

			claims := jwt.MapClaims{}
			_, err = jwt.NewParser(jwt.WithValidMethods([]string{"HS256"})).ParseWithClaims(token, claims,
				func(*jwt.Token) (any, error) { return []byte(testJWTSecret), nil })
			require.NoError(t, err)
			sub, _ := claims.GetSubject()
			assert.Equal(t, "example-user", sub)
			iat, err := claims.GetIssuedAt()
			require.NoError(t, err)
			exp, err := claims.GetExpirationTime()
			require.NoError(t, err)
			assert.Equal(t, now.Unix(), iat.Unix())
			assert.Equal(t, 10*time.Minute, exp.Sub(iat.Time), "exp - iat")
			aud, err := claims.GetAudience()
			require.NoError(t, err)
			assert.Equal(t, tc.aud, []string(aud))

			// The server the README starts: both audiences allowed.
			env := maps.Clone(tc.env)
			if env["OTC_JWT_AUDIENCE"] == "" {
				env["OTC_JWT_AUDIENCE"] = "calculator"
			}
			status, body := listWithToken(t, serveWithEnvAuth(t, env), token)
			assert.Equal(t, http.StatusOK, status, body)
		})
	}
}

// runMain runs the program in a child process with the given environment
// (and no other OTC_ variables) and arguments, to its end.
func runMain(t *testing.T, env map[string]string, args string) (stdout, stderr string, code int) {
	t.Helper()
	cmd := exec.CommandContext(t.Context(), os.Args[0])
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "OTC_") {
			cmd.Env = append(cmd.Env, kv)
		}
	}
	for k, v := range env {
		cmd.Env = append(cmd.Env, k+"="+v)
	}
	cmd.Env = append(cmd.Env, mainArgsEnv+"="+args)
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	err := cmd.Run()
	if exit, ok := err.(*exec.ExitError); ok {
		return out.String(), errOut.String(), exit.ExitCode()
	}
	require.NoError(t, err)
	return out.String(), errOut.String(), 0
}

// TestMain_PrintToken runs the program with -print-token: it prints a
// token that the server started with the same environment accepts, and
// exits 0; without a usable secret it exits 1 and says why.
func TestMain_PrintToken(t *testing.T) {
	t.Parallel()
	env := map[string]string{"OTC_JWT_SECRET": testJWTSecret, "OTC_JWT_AUDIENCE": "calculator"}

	t.Run("prints_a_token", func(t *testing.T) {
		t.Parallel()
		stdout, stderr, code := runMain(t, env, "-print-token")
		require.Equal(t, 0, code, "stderr: %s", stderr)
		assert.Empty(t, stderr)
		token, ok := strings.CutSuffix(stdout, "\n")
		require.True(t, ok, "one line: %q", stdout)
		require.Equal(t, 2, strings.Count(token, "."), "a JWT: %q", token)

		url := serveWithEnvAuth(t, env)
		status, body := listWithToken(t, url, token)
		assert.Equal(t, http.StatusOK, status, body)
		status, _ = listWithToken(t, url, token+"x")
		assert.Equal(t, http.StatusUnauthorized, status, "the check is real: a damaged token is refused")
	})
	for _, tc := range []struct {
		name string
		env  map[string]string
		want string
	}{
		{"no_secret", map[string]string{"OTC_JWT_AUDIENCE": "calculator"}, "OTC_JWT_SECRET is not set"},
		{"short_secret", map[string]string{"OTC_JWT_SECRET": "too-short"}, "OTC_JWT_SECRET is 9 bytes long"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			stdout, stderr, code := runMain(t, tc.env, "-print-token")
			assert.Equal(t, 1, code)
			assert.Empty(t, stdout, "no token is printed")
			assert.Contains(t, stderr, "level=ERROR")
			assert.Contains(t, stderr, "calculator: -print-token: "+tc.want)
		})
	}
}
