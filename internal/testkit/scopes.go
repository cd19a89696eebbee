package testkit

import (
	"fmt"
	"net/http"

	"github.com/otcgo/otc"
)

// ScopesHeader is the test header that carries the space-separated OAuth
// scopes of an access token to ScopesAuth ("" grants none).
const ScopesHeader = "X-Test-Scopes"

// MethodOAuth is the Identity.Method ScopesAuth gives its callers, the
// one an OAuth access token proves.
const MethodOAuth = "oauth"

// ScopesAuth returns an authenticator that trusts ScopesHeader: a request
// carrying it is the OAuth caller "user", whose claims are a token's
// "sub" and "scope" (the header's value), so that the tests of a tool's
// RequiredScopes and of per-caller catalogs reach every check without an
// authorization server. A request without the header carries no
// credentials of its kind (otc.ErrNoCredentials), so that auth.AnyOf tries
// the next method, ClaimsAuth for one.
func ScopesAuth() otc.Authenticator {
	return otc.AuthenticatorFunc(func(r *http.Request) (*otc.Identity, error) {
		values, ok := r.Header[http.CanonicalHeaderKey(ScopesHeader)]
		if !ok {
			return nil, fmt.Errorf("testkit: no %s header: %w", ScopesHeader, otc.ErrNoCredentials)
		}
		scope := ""
		if len(values) > 0 {
			scope = values[0]
		}
		return &otc.Identity{Method: MethodOAuth, Name: "user", Claims: map[string]any{"sub": "user", "scope": scope}}, nil
	})
}
