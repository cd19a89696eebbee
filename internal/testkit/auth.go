package testkit

import (
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"net/http"

	"github.com/otcgo/otc"
)

// ClaimsHeader is the test header that carries a capability token's
// claims, as a JSON object, to ClaimsAuth.
const ClaimsHeader = "X-Test-Claims"

// ClaimsAuth returns an authenticator that trusts ClaimsHeader: a request
// carrying it is the capability caller "agent" with those claims, so that
// the tests of a tool's policy and of single-use tokens reach every check
// without signing tokens (the capability authenticator's own tests cover
// the signatures). A request without the header is the API-key caller
// "ops", some other credential; a header that is not a JSON object fails.
func ClaimsAuth() otc.Authenticator {
	return otc.AuthenticatorFunc(func(r *http.Request) (*otc.Identity, error) {
		raw := r.Header.Get(ClaimsHeader)
		if raw == "" {
			return &otc.Identity{Method: "api_key", Name: "ops"}, nil
		}
		var claims map[string]any
		if err := json.Unmarshal([]byte(raw), &claims); err != nil {
			return nil, err
		}
		return &otc.Identity{Method: otc.MethodCapability, Name: "agent", Claims: claims}, nil
	})
}

// InpHash is the base64url SHA-256 of a request body, as an
// execution-bound token carries it in its inp_hash claim.
func InpHash(body string) string {
	sum := sha256.Sum256([]byte(body))
	return base64.RawURLEncoding.EncodeToString(sum[:])
}
