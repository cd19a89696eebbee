package oauth_test

// Introspection is not an amplifier: a dead token sent again and again
// costs one request per InactiveCacheTTL, new junk tokens at most
// RequestsPerSecond, and an answer the server cannot read one way only is
// refused whole. Over real HTTP (the root package's tests check that every
// handler answers such a refusal 503 with Retry-After).

import (
	"context"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/otcgo/otc"
	"github.com/otcgo/otc/internal/testkit"
	"github.com/otcgo/otc/oauth"
)

// listWith lists the tools at url with token, and returns the status,
// the Retry-After header and the body.
func listWith(t *testing.T, url, token string) (int, string, string) {
	t.Helper()
	req, err := http.NewRequestWithContext(t.Context(), http.MethodGet, url+"/tools", nil)
	require.NoError(t, err)
	req.Header.Set("Authorization", "Bearer "+token)
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, resp.Header.Get("Retry-After"), string(b)
}

func TestIntrospectionRateBound(t *testing.T) {
	t.Parallel()
	as := newAuthServer(t, "")
	as.activate("opaque-live", activeAnswer(as, nil))
	a := introspecting(t, as, oauth.Introspection{RequestsPerSecond: 3}, false)
	reg := otc.NewRegistry(&otc.RegistryOptions{Logger: slog.New(slog.DiscardHandler)})
	require.NoError(t, otc.Register(reg, otc.Tool{ID: "Util.Echo", Version: "1.0.0", Description: "Echoes."},
		func(context.Context, struct{}) (string, error) { return "ok", nil }))
	srv := httptest.NewServer(otc.NewHandler(reg, &otc.HandlerOptions{Authenticator: a}))
	t.Cleanup(srv.Close)
	url := srv.URL
	var refused, busy int
	for i := range 12 {
		status, retry, body := listWith(t, url, "junk-"+strconv.Itoa(i))
		switch status {
		case http.StatusUnauthorized:
			refused++
			assert.Contains(t, body, "not active")
		case http.StatusServiceUnavailable:
			busy++
			assert.Equal(t, "1", retry, body)
			assert.Contains(t, body, "as many tokens as it may this second")
		default:
			t.Errorf("status %d, never a pass: %s", status, body)
		}
	}
	hits := as.count("/introspect")
	assert.LessOrEqual(t, hits, 4, "12 junk tokens at once cost the authorization server the bound (3, and at most one more as a second turns)")
	assert.Equal(t, hits, refused)
	assert.Equal(t, 12-hits, busy)

	// A live token is let through once the bound allows a request again;
	// then from the cache.
	time.Sleep(time.Second)
	for range 3 {
		status, _, body := listWith(t, url, "opaque-live")
		assert.Equal(t, http.StatusOK, status, body)
	}
}

func TestIntrospectionInactiveTTL(t *testing.T) {
	t.Parallel()
	as := newAuthServer(t, "")
	// Five calls within the inactive answer's time (long enough that load
	// cannot stretch five local calls past it), then one after.
	const ttl = 2 * time.Second
	srv := newProtected(t, introspecting(t, as, oauth.Introspection{InactiveCacheTTL: ttl}, false))
	for range 5 {
		assertRefused(t, call(t, srv, bearer("opaque-dead")), "not active", "opaque-dead")
	}
	assert.Equal(t, 1, as.count("/introspect"))
	time.Sleep(ttl + 100*time.Millisecond)
	assertRefused(t, call(t, srv, bearer("opaque-dead")), "not active", "opaque-dead")
	assert.Equal(t, 2, as.count("/introspect"), "asked again once the inactive answer's time has passed")
	// A token that becomes active after its inactive answer expired is
	// accepted.
	as.activate("opaque-dead", activeAnswer(as, nil))
	time.Sleep(ttl + 100*time.Millisecond)
	requireAccepted(t, call(t, srv, bearer("opaque-dead")))
}

func TestIntrospectionDuplicateMembers(t *testing.T) {
	t.Parallel()
	for name, raw := range map[string]string{
		"active":       `{"active":false,"active":true,"sub":"user-7","aud":"` + resource + `"}`,
		"scope":        `{"active":true,"scope":"counter:read","scope":"counter:write","aud":"` + resource + `"}`,
		"nested":       `{"active":true,"aud":"` + resource + `","cnf":{"x5t#S256":"a","x5t#S256":"b"}}`,
		"escaped_name": `{"active":true,"\u0061ctive":false,"aud":"` + resource + `"}`,
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			as := newAuthServer(t, "")
			as.set(func(as *authServer) { as.rawAnswers = map[string]string{"opaque-dup": raw} })
			logs := &testkit.SyncBuffer{}
			in := &oauth.Introspection{Endpoint: as.srv.URL + "/introspect", ClientID: "rs", ClientSecret: "s3cret"}
			a := newAuth(t, oauth.Options{
				AuthorizationServers: []oauth.AuthorizationServer{{Issuer: as.issuer, Introspection: in}},
				Logger:               slog.New(slog.NewTextHandler(logs, nil)),
			}, oauth.TimingForTest{})
			res := call(t, newProtected(t, a), bearer("opaque-dup"))
			assertUnavailable(t, res, "could not ask the authorization server", "opaque-dup")
			assert.Contains(t, logs.String(), "more than once")
		})
	}
}
