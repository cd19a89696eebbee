package oauth

import (
	"context"
	"crypto/hmac"
	"fmt"
	"net/http"
	"slices"
	"strings"

	"github.com/otcgo/otc"
	"github.com/otcgo/otc/internal/hook"
	"github.com/otcgo/otc/internal/wire"
)

// seam is what package otc lends the packages beside it (internal/hook).
var seam = hook.Of[otc.Registry, otc.Policy, otc.ToolDefinition, otc.CallRequest, otc.Identity, otc.Error]()

// This file reads the bearer token of a request and sends it to the check
// that fits it: a JWT to its signature, any other token to introspection.

// Authenticate checks the request's bearer token: that exactly one was
// sent, in the Authorization header (RFC 6750 §2.1; tokens in a form body
// or the query are not read), and not longer than 16 KiB.
//
// A JWT (three base64url parts, the first a JOSE header) is checked
// locally, unless its server introspects all its tokens or publishes no
// keys: "typ" (see [Options.ExplicitTypeOnly]), the absence of "crit",
// "iss" one of the servers' issuers, exactly, a "kid" naming a key of that
// server's set, "alg" one of those the key's type allows, the signature,
// "exp" (required, and not beyond MaxLifetime), "nbf" and "iat" with
// Leeway, and "aud" naming [Options.Resource] (or one of Audiences). A JWT
// whose "iss" names none of the servers is refused, never introspected:
// its token is not sent to an authorization server that did not issue it.
//
// Any other token is sent to the introspection endpoint, when a server
// has one: the answer must say "active": true, and its "iss" (when
// present), "aud" (required), "exp", "nbf" and "iat" (when present) are
// checked as a JWT's; an answer whose "token_type" is "refresh_token" is
// refused. An endpoint that fails, times out or answers anything but 200
// with a JSON object refuses the token, told to try again: a token is
// never let through unchecked.
//
// A refusal is an [*otc.Error] with CodeUnauthenticated and Reason
// [otc.ReasonInvalidToken], or [otc.ReasonMissingToken] for a request
// without a bearer token, which also wraps [otc.ErrNoCredentials] for
// auth.AnyOf. The messages say what was wrong and never quote the token.
func (a *Authenticator) Authenticate(r *http.Request) (*otc.Identity, error) {
	lines := r.Header.Values("Authorization")
	if wire.AuthorizationRepeated(lines) {
		return nil, invalidToken("Credentials were sent more than once: send exactly one Authorization header, holding one bearer token")
	}
	if len(lines) == 0 || strings.TrimSpace(lines[0]) == "" {
		return nil, missing("Authentication required: send an OAuth access token in the Authorization header (\"Bearer <token>\")")
	}
	scheme, token, _ := strings.Cut(strings.TrimSpace(lines[0]), " ")
	bound := a.dpop != nil && strings.EqualFold(scheme, "DPoP")
	switch {
	case bound:
	case !strings.EqualFold(scheme, "Bearer"):
		// Another scheme is no credential of this kind (RFC 6750 §3.1:
		// the challenge then names no error).
		if a.dpop != nil {
			return nil, missing("Authentication required: send an OAuth access token (\"Authorization: DPoP <token>\" with its proof, or Bearer), not with another scheme")
		}
		return nil, missing("Authentication required: send an OAuth access token as a bearer token (\"Authorization: Bearer <token>\"), not with another scheme")
	case a.dpop != nil && a.dpop.Required:
		return nil, invalidToken("This server takes DPoP-bound tokens only: send the token as \"Authorization: DPoP <token>\" with a DPoP proof")
	}
	token = strings.TrimSpace(token)
	switch {
	case token == "":
		return nil, invalidToken("The bearer token is empty")
	case len(token) > maxTokenBytes:
		return nil, invalidToken(fmt.Sprintf("The bearer token is too long: at most %d bytes are accepted", maxTokenBytes))
	case !b64token(token):
		return nil, invalidToken("The bearer token is malformed: it holds characters a bearer token may not (RFC 6750, section 2.1)")
	}
	var jkt string
	if bound {
		// The proof first: it is checked without the network, and a
		// request without a good one need not cost an introspection.
		var err error
		if jkt, err = a.checkProof(r, token); err != nil {
			return nil, err
		}
	}
	id, err := a.checkToken(r.Context(), token)
	if err != nil {
		return nil, err
	}
	switch key := boundKey(id.Claims); {
	case bound && key == "":
		return nil, invalidToken("The token is not bound to a key (it has no cnf.jkt): send it as a bearer token")
	case bound && !hmac.Equal([]byte(key), []byte(jkt)):
		return nil, invalidToken("The token is bound to another key than the DPoP proof's")
	case !bound && key != "":
		return nil, invalidToken("The token is bound to a key (DPoP): send it as \"Authorization: DPoP <token>\" with a proof, not as a bearer token")
	}
	return id, nil
}

// checkToken checks an access token, by its signature or by
// introspection, and returns its identity.
func (a *Authenticator) checkToken(ctx context.Context, token string) (*otc.Identity, error) {
	if a.intro == nil {
		// Without introspection every token is a JWT, checked here: it is
		// parsed once, and its issuer chooses the key set inside the key
		// function (see checkJWT).
		if strings.Count(token, ".") != 2 {
			return nil, invalidToken("The bearer token is malformed: it must be a JWT of three base64url parts (this server does not introspect opaque tokens)")
		}
		return a.checkJWT(ctx, nil, token)
	}
	header, claims := jwtParts(token)
	if header == nil {
		if a.intro == nil {
			return nil, invalidToken("The bearer token is malformed: it must be a JWT of three base64url parts (this server does not introspect opaque tokens)")
		}
		return a.introspect(ctx, a.intro.srv, token)
	}
	iss, ok := claims["iss"].(string)
	switch {
	case claims == nil:
		return nil, invalidToken("The bearer token is malformed: its claims are not a JSON object")
	case !ok && claims["iss"] != nil:
		return nil, invalidToken("The bearer token's issuer (iss) is not a string")
	case iss == "":
		return nil, invalidToken("The bearer token has no issuer (iss)")
	}
	s := a.serverFor(iss)
	if s == nil {
		return nil, invalidToken("The bearer token's issuer (iss) is not one this server accepts")
	}
	if s.introspectsJWTs(ctx) {
		return a.introspect(ctx, s, token)
	}
	return a.checkJWT(ctx, s, token)
}

// introspectsJWTs reports whether the server's JWTs are introspected
// rather than checked locally: when it is configured so, or its metadata
// names no key set. Before the metadata has been read, it waits for the
// first discovery, as a token naming a key would (boundedly, within ctx).
func (s *server) introspectsJWTs(ctx context.Context) bool {
	if s.intro == nil {
		return false
	}
	if s.intro.all || s.keys == nil {
		return true
	}
	if s.static || s.disc == nil {
		return false
	}
	doc := s.disc.doc.Load()
	if doc == nil {
		_ = s.keys.Ready(ctx)
		doc = s.disc.doc.Load()
	}
	return doc != nil && doc.JWKSURI == ""
}

// BearerFit tells auth.AnyOf how surely a refused token was meant for
// this authenticator: 3 for a JWT from one of its issuers typed at+jwt, 2
// from one of its issuers, 1 for a JWT signed with an algorithm it
// accepts or, when it introspects, any token that is not a JWT.
func (a *Authenticator) BearerFit(header, claims map[string]any) int {
	if header == nil {
		if a.intro != nil {
			return 1
		}
		return 0
	}
	if iss, _ := claims["iss"].(string); iss != "" && a.serverFor(iss) != nil {
		if typ, _ := header["typ"].(string); accessTokenType(typ, true) {
			return 3
		}
		return 2
	}
	if alg, _ := header["alg"].(string); slices.Contains(acceptedAlgs, alg) {
		return 1
	}
	return 0
}

// jwtParts returns the JOSE header of token, decoded, and its claims when
// they decode as a JSON object, or nils when the token is not a JWT: not
// three parts, or a first part that is not a JSON object naming an "alg".
// Nothing is verified.
func jwtParts(token string) (header, claims map[string]any) {
	header, claims = wire.JWTParts(token)
	if _, ok := header["alg"].(string); !ok {
		return nil, nil
	}
	return header, claims
}

// b64token reports whether s is a bearer token's b64token (RFC 6750
// §2.1): letters, digits and "-._~+/", then any "=".
func b64token(s string) bool {
	body := strings.TrimRight(s, "=")
	if body == "" {
		return false
	}
	for i := 0; i < len(body); i++ {
		c := body[i]
		switch {
		case 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z', '0' <= c && c <= '9':
		case c == '-' || c == '.' || c == '_' || c == '~' || c == '+' || c == '/':
		default:
			return false
		}
	}
	return true
}

// invalidToken builds the refusal of a token that was sent.
func invalidToken(message string) *otc.Error {
	return &otc.Error{Code: otc.CodeUnauthenticated, Message: message, Reason: otc.ReasonInvalidToken}
}

// missing builds the refusal of a request without a bearer token, which
// wraps [otc.ErrNoCredentials], as auth.AnyOf asks.
func missing(message string) error {
	return seam.Refusal(message, otc.ReasonMissingToken, otc.ErrNoCredentials)
}
