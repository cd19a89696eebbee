package main

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/otcgo/otc/auth"
	"github.com/otcgo/otc/client"
)

const (
	testAPIKey    = "example-api-key"
	testJWTSecret = "an-example-secret-of-32-bytes-or-more"
)

func TestClientOptions(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name                string
		apiKey, secret, aud string
		wantKey             string
		wantJWT             *client.JWTSigner
		wantErr             string
	}{
		{name: "none"},
		{name: "api_key", apiKey: testAPIKey, wantKey: testAPIKey},
		{name: "jwt", secret: testJWTSecret, aud: "calculator",
			wantJWT: &client.JWTSigner{Secret: []byte(testJWTSecret), Audience: "calculator", Subject: "example-client"}},
		{name: "jwt_without_audience", secret: testJWTSecret,
			wantJWT: &client.JWTSigner{Secret: []byte(testJWTSecret), Subject: "example-client"}},
		{name: "audience_without_secret", aud: "calculator",
			wantErr: "-jwt-audience needs -jwt-secret: the audience goes into tokens signed with that secret"},
		{name: "short_secret", secret: "short",
			wantErr: "-jwt-secret is 5 bytes long; the server's secret is at least 32 bytes"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			opts, err := clientOptions(tc.apiKey, tc.secret, tc.aud)
			if tc.wantErr != "" {
				require.Error(t, err)
				assert.Equal(t, tc.wantErr, err.Error())
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tc.wantKey, opts.APIKey)
			assert.Equal(t, tc.wantJWT, opts.JWT)
		})
	}
}

// TestRun_Credentials runs the steps against a server that requires
// credentials, as the example server does when its environment says so.
func TestRun_Credentials(t *testing.T) {
	t.Parallel()
	keys, err := auth.NewAPIKeyAuth(map[string]string{"OTC_API_KEY": testAPIKey})
	require.NoError(t, err)
	jwts, err := auth.NewJWTAuth(&auth.JWTOptions{Secret: []byte(testJWTSecret), Audiences: []string{"calculator"}})
	require.NoError(t, err)
	srv := calculator()
	srv.auth = auth.AnyOf(keys, jwts)
	url := srv.start(t)

	for _, tc := range []struct {
		name                string
		apiKey, secret, aud string
		wantErr             string
	}{
		{name: "api_key", apiKey: testAPIKey},
		{name: "jwt", secret: testJWTSecret, aud: "calculator"},
		{name: "none", wantErr: "status 401: otc: Authentication required: send an API key in the OXP-API-Key header or a bearer token in the Authorization header; the server requires credentials: pass -api-key, or -jwt-secret and -jwt-audience"},
		{name: "wrong_api_key", apiKey: "not-the-key", wantErr: "; the server refused the credentials: check -api-key, -jwt-secret and -jwt-audience against its OTC_API_KEY, OTC_JWT_SECRET and OTC_JWT_AUDIENCE"},
		{name: "wrong_audience", secret: testJWTSecret, aud: "elsewhere", wantErr: "audience (aud) is not accepted; the server refused the credentials"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			opts, err := clientOptions(tc.apiKey, tc.secret, tc.aud)
			require.NoError(t, err)
			var out bytes.Buffer
			err = run(t.Context(), url, opts, &out)
			if tc.wantErr == "" {
				require.NoError(t, err)
				assert.Contains(t, out.String(), "rang doorbell42")
				return
			}
			require.Error(t, err)
			assert.True(t, strings.HasPrefix(err.Error(), "listing tools: "), err.Error())
			assert.Contains(t, err.Error(), tc.wantErr)
			assert.Empty(t, out.String(), "nothing gets done without credentials")
		})
	}
}

// TestMain_AgainstExampleServer builds and starts the real example server
// with both kinds of authentication on, as the README shows, and runs the
// program against it with each kind of credential and with none.
func TestMain_AgainstExampleServer(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("builds and starts the example server")
	}
	bin := filepath.Join(t.TempDir(), "calculator")
	build := exec.CommandContext(t.Context(), "go", "build", "-C", "../calculator", "-o", bin, ".") // a module of its own
	out, err := build.CombinedOutput()
	require.NoError(t, err, "building the example server: %s", out)

	server := exec.CommandContext(t.Context(), bin, "-addr", "127.0.0.1:0")
	server.Env = append(withoutOTCEnv(),
		"OTC_API_KEY="+testAPIKey, "OTC_JWT_SECRET="+testJWTSecret, "OTC_JWT_AUDIENCE=calculator")
	stderr, err := server.StderrPipe()
	require.NoError(t, err)
	require.NoError(t, server.Start())
	t.Cleanup(func() { _ = server.Process.Kill() })
	lines := make(chan string, 16)
	go func() {
		defer close(lines)
		sc := bufio.NewScanner(stderr)
		for sc.Scan() {
			lines <- sc.Text()
		}
	}()
	var first string
	select {
	case first = <-lines:
	case <-time.After(time.Minute): // a guard: the server logs as soon as it listens
		t.Fatal("the example server logged nothing")
	}
	m := regexp.MustCompile(`\burl=(http://\S+)`).FindStringSubmatch(first)
	require.NotNil(t, m, "the example server's first line gives its URL: %s", first)
	require.Contains(t, first, "auth=api_key+jwt")
	url := m[1]

	t.Run("credentials", func(t *testing.T) {
		for _, tc := range []struct {
			name     string
			flags    string
			wantCode int
			want     string // in stdout (exit 0) or stderr
		}{
			{"api_key", "-api-key " + testAPIKey, 0, "rang doorbell42"},
			{"jwt", "-jwt-secret " + testJWTSecret + " -jwt-audience calculator", 0, "rang doorbell42"},
			{"none", "", 1, "status 401: otc: Authentication required: send an API key in the OXP-API-Key header or a bearer token in the Authorization header; the server requires credentials: pass -api-key, or -jwt-secret and -jwt-audience\n"},
			{"wrong_secret", "-jwt-secret " + strings.Repeat("x", 32), 1, "the server refused the credentials"},
			{"bad_flags", "-jwt-audience calculator", 2, "client: -jwt-audience needs -jwt-secret"},
		} {
			t.Run(tc.name, func(t *testing.T) {
				t.Parallel()
				stdout, stderr, code := runMain(t, "-url "+url+" "+tc.flags)
				assert.Equal(t, tc.wantCode, code, "stderr: %s", stderr)
				if tc.wantCode == 0 {
					assert.Contains(t, stdout, tc.want)
					// The calculator's, Counter.Increment included; not
					// Payments.Refund, which needs a capability token and is
					// not listed to these callers.
					assert.Contains(t, stdout, "8 tools:\n")
					assert.NotContains(t, stdout, "Payments.Refund")
					assert.Empty(t, stderr)
					return
				}
				assert.True(t, strings.HasPrefix(stderr, "client: "), "stderr: %s", stderr)
				assert.Contains(t, stderr, tc.want)
				assert.Empty(t, stdout, "nothing gets done without credentials")
			})
		}
	})

	// The server the program talked to stops cleanly.
	require.NoError(t, server.Process.Signal(syscall.SIGTERM))
	for range lines { // to the end, so that Wait may close the pipe
	}
	assert.NoError(t, server.Wait(), "the example server's exit")
}

// withoutOTCEnv is this process's environment without the OTC_ variables,
// so that the caller's own settings do not leak into a child.
func withoutOTCEnv() []string {
	var env []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "OTC_") {
			env = append(env, kv)
		}
	}
	return env
}

// runMain runs the program in a child process with the given arguments,
// to its end.
func runMain(t *testing.T, args string) (stdout, stderr string, code int) {
	t.Helper()
	cmd := exec.CommandContext(t.Context(), os.Args[0], "-test.run=^$")
	cmd.Env = append(withoutOTCEnv(), fmt.Sprintf("%s=%s", mainArgsEnv, args))
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	err := cmd.Run()
	if exit, ok := err.(*exec.ExitError); ok {
		return out.String(), errOut.String(), exit.ExitCode()
	}
	require.NoError(t, err)
	return out.String(), errOut.String(), 0
}
