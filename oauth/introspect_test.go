package oauth_test

// Token introspection over real HTTP: the authorization server of
// helpers_test.go answers for the tokens a test activates, counts its
// requests, fails or hangs.

import (
	"log/slog"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/otcgo/otc/internal/testkit"
	"github.com/otcgo/otc/oauth"
)

// activeAnswer is an introspection answer for an access token of as.
func activeAnswer(as *authServer, edit func(m map[string]any)) map[string]any {
	m := map[string]any{
		"active":     true,
		"iss":        as.issuer,
		"sub":        "user-7",
		"client_id":  "mcp-client",
		"aud":        []any{resource},
		"scope":      "counter:read",
		"exp":        time.Now().Add(time.Hour).Unix(),
		"iat":        time.Now().Unix(),
		"token_type": "Bearer",
	}
	if edit != nil {
		edit(m)
	}
	return m
}

// introspecting returns an authenticator that introspects at as, its
// endpoint configured unless fromMetadata, with in's other settings.
func introspecting(t *testing.T, as *authServer, in oauth.Introspection, fromMetadata bool) *oauth.Authenticator {
	t.Helper()
	if !fromMetadata {
		in.Endpoint = as.srv.URL + "/introspect"
	}
	in.ClientID, in.ClientSecret = "rs", "s3cret"
	return newAuth(t, oauth.Options{AuthorizationServers: []oauth.AuthorizationServer{{Issuer: as.issuer, Introspection: &in}}}, oauth.TimingForTest{})
}

// TestIntrospectionActive: an opaque token the server says is active is
// accepted with the answer's members as claims; the answer is cached, so
// that later calls cost the server nothing.
func TestIntrospectionActive(t *testing.T) {
	t.Parallel()
	as := newAuthServer(t, "")
	as.activate("opaque-token-1", activeAnswer(as, nil))
	a := introspecting(t, as, oauth.Introspection{}, false)
	srv := newProtected(t, a)
	for range 3 {
		s := requireAccepted(t, call(t, srv, bearer("opaque-token-1")))
		assert.Equal(t, oauth.Method, s.Method)
		assert.Equal(t, "user-7", s.Name)
		assert.Equal(t, []string{"counter:read"}, s.Scopes)
		assert.Equal(t, true, s.Claims["active"])
	}
	assert.Equal(t, 1, as.count("/introspect"), "the answer was cached")
	entries, _ := oauth.CacheStatsForTest(a)
	assert.Equal(t, 1, entries)
}

// TestIntrospectionRefused: answers that refuse the token, each with its
// message; inactive answers are not cached.
func TestIntrospectionRefused(t *testing.T) {
	t.Parallel()
	as := newAuthServer(t, "")
	a := introspecting(t, as, oauth.Introspection{}, false)
	srv := newProtected(t, a)
	for _, tc := range []struct {
		name   string
		answer map[string]any // nil: unknown to the server, so inactive
		want   string
	}{
		{"inactive", nil, "not active"},
		{"aud_missing", activeAnswer(as, func(m map[string]any) { delete(m, "aud") }), "no audience (aud)"},
		{"aud_other", activeAnswer(as, func(m map[string]any) { m["aud"] = "https://other.test/mcp" }), "not for this server"},
		{"iss_other", activeAnswer(as, func(m map[string]any) { m["iss"] = "https://evil.test" }), "issuer (iss) is not the authorization server"},
		{"expired", activeAnswer(as, func(m map[string]any) { m["exp"] = time.Now().Add(-time.Minute).Unix() }), "has expired"},
		{"nbf_future", activeAnswer(as, func(m map[string]any) { m["nbf"] = time.Now().Add(time.Hour).Unix() }), "not valid yet"},
		{"exp_not_a_number", activeAnswer(as, func(m map[string]any) { m["exp"] = "tomorrow" }), "exp that is not a number"},
		{"refresh_token", activeAnswer(as, func(m map[string]any) { m["token_type"] = "refresh_token" }), "refresh token"},
		{"sub_not_a_string", activeAnswer(as, func(m map[string]any) { m["sub"] = 7 }), "subject (sub) is not a string"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			token := "opaque-" + tc.name
			if tc.answer != nil {
				as.activate(token, tc.answer)
			}
			assertRefused(t, call(t, srv, bearer(token)), tc.want, token)
		})
	}
	t.Run("inactive_cached", func(t *testing.T) {
		t.Parallel()
		// Counted by token: the subtests beside it introspect theirs at
		// the same time.
		for range 50 {
			assertRefused(t, call(t, srv, bearer("opaque-dead")), "not active", "opaque-dead")
		}
		assert.Equal(t, 1, as.introspected("opaque-dead"), "a dead token sent 50 times is asked about once")
	})
}

// TestIntrospectionDown: an endpoint that fails, refuses this server's
// credentials or does not answer in time refuses the token, told to try
// again, and never lets it through; the failures are logged, not once per
// request.
func TestIntrospectionDown(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name string
		edit func(as *authServer)
	}{
		{"status_500", func(as *authServer) { as.introStatus = http.StatusInternalServerError }},
		{"credentials_refused", func(as *authServer) { as.postSecret = true }},
		{"too_slow", func(as *authServer) { as.introDelay = 2 * time.Second }},
		{"connection_refused", func(as *authServer) {}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			as := newAuthServer(t, "")
			as.activate("opaque-live", activeAnswer(as, nil))
			as.set(tc.edit)
			logs := &testkit.SyncBuffer{}
			in := &oauth.Introspection{Endpoint: as.srv.URL + "/introspect", ClientID: "rs", ClientSecret: "s3cret", Timeout: 300 * time.Millisecond}
			if tc.name == "connection_refused" {
				in.Endpoint = "http://127.0.0.1:1/introspect"
			}
			a := newAuth(t, oauth.Options{
				AuthorizationServers: []oauth.AuthorizationServer{{Issuer: as.issuer, Introspection: in}},
				Logger:               slog.New(slog.NewTextHandler(logs, nil)),
			}, oauth.TimingForTest{})
			srv := newProtected(t, a)
			for range 3 {
				res := call(t, srv, bearer("opaque-live"))
				assertUnavailable(t, res, "could not ask the authorization server", "opaque-live")
				assert.Contains(t, res.Message, "try again later")
			}
			assert.Contains(t, logs.String(), "token introspection failed")
			assert.NotContains(t, logs.String(), "opaque-live", "the log never holds the token")
			assert.Equal(t, 1, strings.Count(logs.String(), "token introspection failed"), "one line per gap, not one per request")
			if tc.name == "credentials_refused" {
				assert.Contains(t, logs.String(), "check Introspection.ClientID and ClientSecret")
			}
		})
	}
}

// TestIntrospectionClientAuth: client_secret_basic by default, and
// client_secret_post when asked for; the server refuses the other.
func TestIntrospectionClientAuth(t *testing.T) {
	t.Parallel()
	as := newAuthServer(t, "")
	as.activate("opaque-1", activeAnswer(as, nil))
	basic := introspecting(t, as, oauth.Introspection{}, false)
	post := introspecting(t, as, oauth.Introspection{ClientSecretPost: true}, false)
	requireAccepted(t, call(t, newProtected(t, basic), bearer("opaque-1")))
	as.set(func(as *authServer) { as.postSecret = true })
	requireAccepted(t, call(t, newProtected(t, post), bearer("opaque-1")))
}

// TestIntrospectionFromMetadata: the endpoint is read from the
// authorization server's metadata, found by discovery.
func TestIntrospectionFromMetadata(t *testing.T) {
	t.Parallel()
	as := newAuthServer(t, "/realm")
	as.activate("opaque-1", activeAnswer(as, nil))
	a := introspecting(t, as, oauth.Introspection{}, true)
	requireAccepted(t, call(t, newProtected(t, a), bearer("opaque-1")))
	assert.Equal(t, 1, as.count("/introspect"))
	assert.Equal(t, 1, as.metadataHits())
}

// TestIntrospectionJWTs: JWTs are checked locally unless All is set, or
// the server publishes no keys; then they are introspected too.
func TestIntrospectionJWTs(t *testing.T) {
	t.Parallel()
	t.Run("local_by_default", func(t *testing.T) {
		t.Parallel()
		as := newAuthServer(t, "")
		a := introspecting(t, as, oauth.Introspection{}, false)
		requireAccepted(t, call(t, newProtected(t, a), bearer(as.token(t, nil))))
		assert.Zero(t, as.count("/introspect"))
	})
	t.Run("all", func(t *testing.T) {
		t.Parallel()
		as := newAuthServer(t, "")
		a := introspecting(t, as, oauth.Introspection{All: true, InactiveCacheTTL: -1}, false)
		srv := newProtected(t, a)
		tok := as.token(t, nil)
		assertRefused(t, call(t, srv, bearer(tok)), "not active", tok)
		as.activate(tok, activeAnswer(as, nil))
		requireAccepted(t, call(t, srv, bearer(tok)))
		assert.Equal(t, 2, as.count("/introspect"))
		assert.Zero(t, as.count("/jwks"), "no keys are fetched when every token is introspected")
		// A JWT of an issuer that is not configured is refused, not sent
		// to the endpoint.
		other := as.token(t, func(c jwt.MapClaims) { c["iss"] = "https://elsewhere.test" })
		assertRefused(t, call(t, srv, bearer(other)), "issuer (iss) is not one", other)
		assert.Equal(t, 2, as.count("/introspect"))
	})
	t.Run("no_keys_published", func(t *testing.T) {
		t.Parallel()
		as := newAuthServer(t, "")
		as.set(func(as *authServer) { as.noJWKSURI = true })
		a := introspecting(t, as, oauth.Introspection{}, true)
		tok := as.token(t, nil)
		as.activate(tok, activeAnswer(as, nil))
		requireAccepted(t, call(t, newProtected(t, a), bearer(tok)))
		assert.Equal(t, 1, as.count("/introspect"))
	})
}

// TestIntrospectionSharedFlight: concurrent requests with one token share
// one introspection.
func TestIntrospectionSharedFlight(t *testing.T) {
	t.Parallel()
	as := newAuthServer(t, "")
	as.activate("opaque-1", activeAnswer(as, nil))
	as.set(func(as *authServer) { as.introDelay = 200 * time.Millisecond })
	srv := newProtected(t, introspecting(t, as, oauth.Introspection{}, false))
	var wg sync.WaitGroup
	for range 10 {
		wg.Go(func() { requireAccepted(t, call(t, srv, bearer("opaque-1"))) })
	}
	wg.Wait()
	assert.Equal(t, 1, as.count("/introspect"))
}

// TestIntrospectionCacheBounded: the cache holds at most CacheEntries
// answers and CacheBytes bytes, least recently used out first; an entry
// lives until the token's exp or CacheTTL, whichever is first; a negative
// CacheTTL caches nothing.
func TestIntrospectionCacheBounded(t *testing.T) {
	t.Parallel()
	t.Run("entries", func(t *testing.T) {
		t.Parallel()
		as := newAuthServer(t, "")
		for i := range 3 {
			as.activate("opaque-"+strconv.Itoa(i), activeAnswer(as, nil))
		}
		a := introspecting(t, as, oauth.Introspection{CacheEntries: 2}, false)
		srv := newProtected(t, a)
		for i := range 3 {
			requireAccepted(t, call(t, srv, bearer("opaque-"+strconv.Itoa(i))))
		}
		entries, _ := oauth.CacheStatsForTest(a)
		assert.Equal(t, 2, entries)
		requireAccepted(t, call(t, srv, bearer("opaque-2")))
		requireAccepted(t, call(t, srv, bearer("opaque-1")))
		assert.Equal(t, 3, as.count("/introspect"), "the two latest were cached")
		requireAccepted(t, call(t, srv, bearer("opaque-0")))
		assert.Equal(t, 4, as.count("/introspect"), "the first had been pushed out")
	})
	t.Run("bytes", func(t *testing.T) {
		t.Parallel()
		as := newAuthServer(t, "")
		for i := range 10 {
			as.activate("opaque-"+strconv.Itoa(i), activeAnswer(as, nil))
		}
		a := introspecting(t, as, oauth.Introspection{CacheBytes: 1500}, false)
		srv := newProtected(t, a)
		for i := range 10 {
			requireAccepted(t, call(t, srv, bearer("opaque-"+strconv.Itoa(i))))
		}
		entries, size := oauth.CacheStatsForTest(a)
		assert.LessOrEqual(t, size, 1500)
		assert.Positive(t, entries)
		assert.Less(t, entries, 10)
	})
	t.Run("until_exp", func(t *testing.T) {
		t.Parallel()
		as := newAuthServer(t, "")
		exp := time.Now().Add(3 * time.Second) // room for two calls on a busy machine
		as.activate("opaque-1", activeAnswer(as, func(m map[string]any) { m["exp"] = float64(exp.UnixMilli()) / 1000 }))
		a := introspecting(t, as, oauth.Introspection{CacheTTL: time.Hour}, false)
		a2 := newProtected(t, a)
		requireAccepted(t, call(t, a2, bearer("opaque-1")))
		requireAccepted(t, call(t, a2, bearer("opaque-1")))
		assert.Equal(t, 1, as.count("/introspect"))
		time.Sleep(time.Until(exp) + 100*time.Millisecond)
		// Expired: the entry is gone, the server asked again (and its
		// answer, still active, is refused for its exp only past the
		// leeway, so it passes).
		requireAccepted(t, call(t, a2, bearer("opaque-1")))
		assert.Equal(t, 2, as.count("/introspect"))
	})
	t.Run("ttl", func(t *testing.T) {
		t.Parallel()
		as := newAuthServer(t, "")
		as.activate("opaque-1", activeAnswer(as, nil))
		srv := newProtected(t, introspecting(t, as, oauth.Introspection{CacheTTL: 200 * time.Millisecond}, false))
		requireAccepted(t, call(t, srv, bearer("opaque-1")))
		time.Sleep(300 * time.Millisecond)
		requireAccepted(t, call(t, srv, bearer("opaque-1")))
		assert.Equal(t, 2, as.count("/introspect"))
	})
	t.Run("disabled", func(t *testing.T) {
		t.Parallel()
		as := newAuthServer(t, "")
		as.activate("opaque-1", activeAnswer(as, nil))
		a := introspecting(t, as, oauth.Introspection{CacheTTL: -1}, false)
		srv := newProtected(t, a)
		requireAccepted(t, call(t, srv, bearer("opaque-1")))
		requireAccepted(t, call(t, srv, bearer("opaque-1")))
		assert.Equal(t, 2, as.count("/introspect"))
		entries, _ := oauth.CacheStatsForTest(a)
		require.Zero(t, entries)
	})
}
