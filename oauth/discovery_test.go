package oauth_test

// Discovery of an authorization server's metadata and the fetching of its
// keys, over real HTTP: where the metadata is looked for, what is refused,
// outages, rotation, and a hanging server that must not block anything.

import (
	"context"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"github.com/otcgo/otc/internal/testkit"
	"github.com/otcgo/otc/oauth"
)

// TestDiscoveryWellKnownURLs: the metadata is found at each of the URLs
// the MCP authorization spec lists, for issuers with and without a path,
// the RFC 8414 one first.
func TestDiscoveryWellKnownURLs(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name, path string
		servedAt   string // the only well-known path that answers
		tried      int    // metadata requests until it was found
	}{
		{"rfc8414", "", "/.well-known/oauth-authorization-server", 1},
		{"rfc8414_path_insertion", "/tenant1", "/.well-known/oauth-authorization-server/tenant1", 1},
		{"oidc", "", "/.well-known/openid-configuration", 2},
		{"oidc_path_insertion", "/tenant1", "/.well-known/openid-configuration/tenant1", 2},
		{"oidc_path_appended", "/tenant1", "/tenant1/.well-known/openid-configuration", 3},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			as := newAuthServer(t, tc.path)
			as.set(func(as *authServer) { as.metadataAt = map[string]bool{tc.servedAt: true} })
			a := newAuth(t, oauth.Options{AuthorizationServers: []oauth.AuthorizationServer{{Issuer: as.issuer}}}, oauth.TimingForTest{})
			requireAccepted(t, call(t, newProtected(t, a), bearer(as.token(t, nil))))
			assert.Equal(t, 1, as.count(tc.servedAt))
			assert.Equal(t, tc.tried, as.metadataHits(), "the URLs before it were tried, in order, and no more")
			assert.Equal(t, 1, as.count("/jwks"))
		})
	}
}

// TestDiscoveryIssuerMismatch: a metadata document whose issuer is not the
// one configured is refused (RFC 8414 §3.3): its keys are never fetched,
// tokens are refused as not checkable yet, and the log says why.
func TestDiscoveryIssuerMismatch(t *testing.T) {
	t.Parallel()
	as := newAuthServer(t, "")
	as.set(func(as *authServer) {
		as.docIssuer = "https://honest.test"
		as.metadataAt["/.well-known/openid-configuration"] = true
	})
	logs := &testkit.SyncBuffer{}
	a := newAuth(t, oauth.Options{
		AuthorizationServers: []oauth.AuthorizationServer{{Issuer: as.issuer}},
		Logger:               slog.New(slog.NewTextHandler(logs, nil)),
	}, oauth.TimingForTest{BackoffMin: time.Hour, BackoffMax: time.Hour})
	tok := as.token(t, nil)
	res := call(t, newProtected(t, a), bearer(tok))
	assertRefused(t, res, "not obtained the authorization server's keys yet", tok)
	assert.Contains(t, res.Message, "try again later")
	assert.Zero(t, as.count("/jwks"), "the keys of a mismatched document are not fetched")
	assert.Equal(t, 2, as.metadataHits())
	// The failed attempt is logged as it ends, which the refusal need not
	// wait for.
	assert.Eventually(t, func() bool {
		l := logs.String()
		return strings.Contains(l, `its issuer \"https://honest.test\" is not`) && strings.Contains(l, "the keys of OAuth authorization server "+as.issuer)
	}, 5*time.Second, 5*time.Millisecond, "the mismatch is logged: %s", logs)
}

// TestDiscoveryOutage: the metadata is down when the server starts, and
// comes back: tokens are refused, told to try again, until the next retry
// of the backoff finds it, then accepted.
func TestDiscoveryOutage(t *testing.T) {
	t.Parallel()
	as := newAuthServer(t, "")
	as.set(func(as *authServer) { as.metaStatus = http.StatusServiceUnavailable })
	const backoff = 200 * time.Millisecond
	a := newAuth(t, oauth.Options{AuthorizationServers: []oauth.AuthorizationServer{{Issuer: as.issuer}}},
		oauth.TimingForTest{BackoffMin: backoff, BackoffMax: backoff, MinGap: time.Hour})
	srv := newProtected(t, a)
	tok := as.token(t, nil)
	assertRefused(t, call(t, srv, bearer(tok)), "try again later", tok)
	assert.Zero(t, as.count("/jwks"))

	as.set(func(as *authServer) { as.metaStatus = 0 })
	back := time.Now()
	res, refused := retry(t, srv, tok, 5*time.Second)
	requireAccepted(t, res)
	assert.Less(t, time.Since(back), backoff+time.Second, "seen again within the backoff")
	for _, r := range refused {
		assertRefused(t, r, "try again", tok)
	}
}

// TestDiscoveryKeyRotation: a key the server publishes after start
// verifies once a token names it (one fetch, after the minimum gap), and a
// key it removes stops verifying at the next refresh; a refresh reads the
// metadata again, a fetch for an unknown kid does not.
func TestDiscoveryKeyRotation(t *testing.T) {
	t.Parallel()
	k := keys(t)
	as := newAuthServer(t, "")
	const gap = 100 * time.Millisecond
	a := newAuth(t, oauth.Options{
		AuthorizationServers: []oauth.AuthorizationServer{{Issuer: as.issuer}},
		RefreshInterval:      time.Hour,
	}, oauth.TimingForTest{MinGap: gap})
	srv := newProtected(t, a)
	requireAccepted(t, call(t, srv, bearer(as.token(t, nil))))
	require.Equal(t, 1, as.count("/jwks"))
	require.Equal(t, 1, as.metadataHits())

	as.set(func(as *authServer) {
		as.jwks = jwksJSON(t, jwk(t, &k.rsa.PublicKey, kidRSA), jwk(t, &k.rsa2.PublicKey, kidRSA2))
	})
	rotated := sign(t, jwt.SigningMethodRS256, k.rsa2, kidRSA2, "at+jwt", as.claims(nil))
	res, refused := retry(t, srv, rotated, gap+5*time.Second)
	requireAccepted(t, res)
	for _, r := range refused {
		assertRefused(t, r, "try again in a few seconds", rotated)
	}
	assert.Equal(t, 2, as.count("/jwks"), "the new kid cost one fetch")
	assert.Equal(t, 1, as.metadataHits(), "a fetch for a kid reuses the metadata")
}

// TestDiscoveryRefresh: a scheduled refresh reads the metadata again and
// drops a removed key.
func TestDiscoveryRefresh(t *testing.T) {
	t.Parallel()
	k := keys(t)
	as := newAuthServer(t, "")
	a := newAuth(t, oauth.Options{
		AuthorizationServers: []oauth.AuthorizationServer{{Issuer: as.issuer}},
		RefreshInterval:      150 * time.Millisecond,
	}, oauth.TimingForTest{MinGap: time.Hour})
	srv := newProtected(t, a)
	ec := sign(t, jwt.SigningMethodES256, k.ec, kidEC, "at+jwt", as.claims(nil))
	requireAccepted(t, call(t, srv, bearer(ec)))
	as.set(func(as *authServer) { as.jwks = jwksJSON(t, jwk(t, &k.rsa.PublicKey, kidRSA)) })
	deadline := time.Now().Add(5 * time.Second)
	for as.count("/jwks") < 3 && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
	}
	assertRefused(t, call(t, srv, bearer(ec)), "key (kid) is not one of", ec)
	requireAccepted(t, call(t, srv, bearer(as.token(t, nil))))
	assert.GreaterOrEqual(t, as.metadataHits(), 2, "each refresh reads the metadata again")
}

// TestDiscoveryHangingServer: an authorization server that never answers
// neither delays New nor holds a request longer than the bounded wait,
// and no goroutine outlives the authenticator's context.
func TestDiscoveryHangingServer(t *testing.T) {
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
	release := make(chan struct{})
	var hits atomic.Int64
	hang := httptest.NewServer(http.HandlerFunc(func(_ http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		select {
		case <-r.Context().Done():
		case <-release:
		}
	}))
	defer hang.Close()
	defer close(release)
	transport := &http.Transport{}
	defer transport.CloseIdleConnections()
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()

	const wait = 300 * time.Millisecond
	start := time.Now()
	a, err := oauth.NewForTest(ctx, oauth.Options{
		Resource:             resource,
		AuthorizationServers: []oauth.AuthorizationServer{{Issuer: hang.URL}},
		HTTPClient:           &http.Client{Transport: transport},
		Logger:               slog.New(slog.DiscardHandler),
	}, oauth.TimingForTest{Wait: wait})
	require.NoError(t, err)
	assert.Less(t, time.Since(start), wait-50*time.Millisecond, "New did not wait for discovery")

	srv := newProtected(t, a)
	as := &authServer{issuer: hang.URL}
	tok := as.token(t, nil)
	began := time.Now()
	res := call(t, srv, bearer(tok))
	took := time.Since(began)
	assertRefused(t, res, "still fetching the authorization server's keys", tok)
	assert.GreaterOrEqual(t, took, wait-50*time.Millisecond)
	assert.Less(t, took, wait+2*time.Second)
	assert.Equal(t, int64(1), hits.Load(), "one discovery, shared")
	srv.Close()
}
