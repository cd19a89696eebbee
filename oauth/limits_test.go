package oauth_test

import (
	"log/slog"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"

	"github.com/otcgo/otc/internal/testkit"
	"github.com/otcgo/otc/oauth"
)

// TestAnswersOverTheirLimit: an authorization server that answers with
// more than this server reads (metadata over 256 KiB, a key set over
// 1 MiB, an introspection answer over 64 KiB) is not believed: the token
// is refused, told to try again, and the log says which answer was too
// long.
func TestAnswersOverTheirLimit(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name, path string
		pad        int
		introspect bool
		log        string
	}{
		{"metadata", "/.well-known/oauth-authorization-server", 256 << 10, false, "the document is over 262144 bytes"},
		{"key_set", "/jwks", 1 << 20, false, "the key set is over 1048576 bytes"},
		{"introspection", "/introspect", 64 << 10, true, "the answer is over 65536 bytes"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			as := newAuthServer(t, "")
			as.set(func(as *authServer) { as.padding[tc.path] = tc.pad })
			logs := &testkit.SyncBuffer{}
			server := oauth.AuthorizationServer{Issuer: as.issuer}
			token := as.token(t, nil)
			if tc.introspect {
				server.Introspection = &oauth.Introspection{Endpoint: as.srv.URL + "/introspect", ClientID: "rs", ClientSecret: "s3cret"}
				token = "opaque-long"
				as.activate(token, activeAnswer(as, nil))
			}
			a := newAuth(t, oauth.Options{
				AuthorizationServers: []oauth.AuthorizationServer{server},
				Logger:               slog.New(slog.NewTextHandler(logs, nil)),
			}, oauth.TimingForTest{BackoffMin: time.Hour, BackoffMax: time.Hour})
			res := call(t, newProtected(t, a), bearer(token))
			if tc.introspect { // the authorization server failed: not a refusal of the token
				assertUnavailable(t, res, "try again later", token)
			} else {
				assertRefused(t, res, "try again later", token)
			}
			assert.Contains(t, logs.String(), tc.log)

			// Without the padding the same answer is read: the length is
			// what refused it. (Introspection asks again for each request;
			// keys are fetched again only after the backoff, an hour here.)
			if tc.introspect {
				as.set(func(as *authServer) { delete(as.padding, tc.path) })
				requireAccepted(t, call(t, newProtected(t, a), bearer(token)))
			}
		})
	}
}
