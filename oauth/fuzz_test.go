package oauth_test

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/golang-jwt/jwt/v5"

	"github.com/otcgo/otc"
	"github.com/otcgo/otc/oauth"
)

// FuzzAuthenticate: whatever a client sends as its Authorization header,
// the authenticator answers without panicking, refuses anything that is
// not a token it issued, and never quotes the token in its refusal or
// challenge. Only the signed seed is accepted.
func FuzzAuthenticate(f *testing.F) {
	k := keys(f)
	as := &authServer{issuer: "https://login.example.com"}
	good := sign(f, jwt.SigningMethodES256, k.ec, kidEC, "at+jwt", as.claims(nil))
	for _, seed := range []string{
		"Bearer " + good,
		"Bearer " + good + "x",
		"Bearer " + strings.Replace(good, ".", "..", 1),
		"bearer   " + good,
		"Bearer eyJhbGciOiJub25lIn0.eyJpc3MiOiJodHRwczovL2xvZ2luLmV4YW1wbGUuY29tIn0.",
		"Bearer eyJhbGciOiJFUzI1NiIsImtpZCI6ImVjLXAyNTYifQ.W10.AAAA",
		"Bearer opaque-token",
		"Basic dXNlcjpwYXNz",
		"Bearer a, Bearer b",
		"Bearer ",
		"",
	} {
		f.Add(seed)
	}
	a, err := oauth.New(f.Context(), &oauth.Options{
		Resource:             resource,
		AuthorizationServers: []oauth.AuthorizationServer{{Issuer: as.issuer, JWKS: jwksJSON(f, usualJWKs(f)...)}},
	})
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, header string) {
		r := httptest.NewRequest(http.MethodPost, "/mcp", nil)
		r.Header["Authorization"] = []string{header}
		_, e := otc.Authenticate(a, r)
		if e == nil {
			if header != "Bearer "+good && header != "bearer   "+good {
				t.Fatalf("accepted %q", header)
			}
			return
		}
		_, token, _ := strings.Cut(strings.TrimSpace(header), " ")
		token = strings.TrimSpace(token)
		if len(token) >= 12 && (strings.Contains(e.Message, token) || strings.Contains(otc.Challenge(a, e), token)) {
			t.Fatalf("the refusal quotes the token: %q", e.Message)
		}
	})
}
