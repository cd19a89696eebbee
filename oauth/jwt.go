package oauth

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/MicahParks/jwkset"
	"github.com/golang-jwt/jwt/v5"
	"github.com/otcgo/otc"
	idclaims "github.com/otcgo/otc/internal/claims"
	"github.com/otcgo/otc/internal/jwks"
	"github.com/otcgo/otc/internal/tokencache"
	"github.com/otcgo/otc/internal/wire"
)

// This file checks JWT access tokens (RFC 9068) locally: which key may
// verify which token, and what the claims must say.

// acceptedAlgs are the algorithms of the access tokens accepted, each
// verified only by a key of its type (keyFits). RS256 is the one RFC 9068
// requires; the others are those authorization servers are configured to
// sign with (PS256 and ES256 by OpenID certified providers, ES384 and the
// larger RSA hashes by some), all asymmetric.
var acceptedAlgs = []string{
	jwt.SigningMethodRS256.Alg(), jwt.SigningMethodRS384.Alg(), jwt.SigningMethodRS512.Alg(),
	jwt.SigningMethodPS256.Alg(), jwt.SigningMethodPS384.Alg(), jwt.SigningMethodPS512.Alg(),
	jwt.SigningMethodES256.Alg(), jwt.SigningMethodES384.Alg(), jwt.SigningMethodES512.Alg(),
	jwt.SigningMethodEdDSA.Alg(),
}

// staticKeys reads a static JWKS and checks that it can verify something
// and holds no secret.
func staticKeys(issuer string, raw json.RawMessage) (jwks.Snapshot, error) {
	name := fmt.Sprintf("otc/oauth: New: authorization server %q: JWKS", wire.Truncate(issuer, 200))
	var set jwkset.JWKSMarshal
	if err := json.Unmarshal(raw, &set); err != nil {
		return nil, fmt.Errorf("%s is not a JSON Web Key Set: %w", name, err)
	}
	var all []jwkset.JWK
	for i, m := range set.Keys {
		j, err := jwkset.NewJWKFromMarshal(m, jwkset.JWKMarshalOptions{Private: true}, jwkset.JWKValidateOptions{})
		if errors.Is(err, jwkset.ErrUnsupportedKey) {
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("%s: key %d is not valid: %w", name, i, err)
		}
		all = append(all, j)
	}
	secret, usable := jwks.Vet(all, acceptedAlgs)
	if secret >= 0 {
		return nil, fmt.Errorf("%s holds a private or secret key (kid %q): give only the server's public keys", name, wire.Truncate(all[secret].Marshal().KID, 80))
	}
	if !usable {
		return nil, fmt.Errorf("%s holds no key with a kid that can verify an access token (RSA of 2048 bits or more, EC P-256, P-384 or P-521, Ed25519)", name)
	}
	return jwks.NewSnapshot(all), nil
}

// Why the key function refused a token, for jwtProblem.
var (
	errCritical = errors.New("the token's header has crit")
	errType     = errors.New("the token's typ is not an access token's")
)

// accessTokenType reports whether a JWT's "typ" is acceptable: "at+jwt"
// always (RFC 9068 §2.1), "JWT" or none unless explicit is set.
func accessTokenType(typ any, explicit bool) bool {
	if explicit {
		return idclaims.TypeIs(typ, false, "at+jwt")
	}
	return idclaims.TypeIs(typ, true, "at+jwt", "jwt")
}

// keyfunc returns the key that verifies a token: the one its "kid" names
// in the key set of the server its "iss" names, provided that the key's
// type is the one of the token's algorithm. The claims are read before
// they are verified, only to choose the key set; the signature then
// vouches for them. ctx is the request's, which bounds its wait for a
// fetch.
//
// With s nil, the server is the one the token's "iss" names, stored in
// *chosen: the token is then parsed once, by the parser, rather than once
// more to choose. The snapshot of the key set that held the key is stored
// in *snap, for the cache of verified tokens.
func (a *Authenticator) keyfunc(ctx context.Context, s *server, chosen **server, snap **jwks.Snapshot) jwt.Keyfunc {
	return func(t *jwt.Token) (any, error) {
		if s == nil {
			claims, _ := t.Claims.(jwt.MapClaims)
			iss, ok := claims["iss"].(string)
			switch {
			case !ok && claims["iss"] != nil:
				return nil, errIssuerType
			case iss == "":
				return nil, errNoIssuer
			}
			if s = a.serverFor(iss); s == nil {
				return nil, errIssuerUnknown
			}
			*chosen = s
		}
		// No JOSE extension is understood (RFC 7515 §4.1.11), so one that
		// is critical refuses the token.
		if _, ok := t.Header["crit"]; ok {
			return nil, errCritical
		}
		if !accessTokenType(t.Header["typ"], a.explicit) {
			return nil, errType
		}
		kid, _ := t.Header["kid"].(string)
		key, held, err := s.keys.KeyFor(ctx, kid, t.Method.Alg())
		if err != nil {
			return nil, err
		}
		*snap = held
		return key, nil
	}
}

// checkJWT verifies a JWT access token of server s and returns its
// identity.
//
// A nil s is the server the token's "iss" names.
func (a *Authenticator) checkJWT(ctx context.Context, s *server, token string) (*otc.Identity, error) {
	if e := a.cache.Get(token, time.Now()); e != nil {
		return &otc.Identity{Method: Method, Name: e.Name, Claims: e.Claims}, nil
	}
	claims := jwt.MapClaims{}
	var snap *jwks.Snapshot
	t, err := a.parser.ParseWithClaims(token, claims, a.keyfunc(ctx, s, &s, &snap))
	if err != nil {
		if errors.Is(err, jwt.ErrTokenMalformed) {
			// Said as precisely as when the parts were read first: on
			// the way to a refusal only.
			switch header, claims := jwtParts(token); {
			case header == nil:
				return nil, invalidToken("The bearer token is malformed: it must be a JWT of three base64url parts (this server does not introspect opaque tokens)")
			case claims == nil:
				return nil, invalidToken("The bearer token is malformed: its claims are not a JSON object")
			}
		}
		return nil, invalidToken(jwtProblem(t, err, a.explicit))
	}
	// The key set was chosen by "iss"; the signature has now vouched
	// for it, and it is checked again, exactly (RFC 9068 §4).
	if iss, _ := claims["iss"].(string); iss != s.issuer {
		return nil, invalidToken("The bearer token's issuer (iss) is not one this server accepts")
	}
	if err := a.checkAudience(claims["aud"]); err != nil {
		return nil, err
	}
	// The parser has required "exp" and checked its type.
	exp, err := claims.GetExpirationTime()
	if err == nil && exp != nil && time.Until(exp.Time) > a.maxLifetime+a.leeway {
		return nil, invalidToken(fmt.Sprintf("The bearer token expires too far in the future: this server accepts access tokens valid for at most %v; ask the authorization server for a shorter-lived token", a.maxLifetime))
	}
	id, err := identity(claims)
	if err == nil && exp != nil {
		a.cache.Put(token, &tokencache.Entry{Claims: claims, Name: id.Name, Exp: exp.Time, Keys: s.keys, Snapshot: snap})
	}
	return id, err
}

// checkAudience checks that aud, a token's "aud" claim or an
// introspection answer's, names this server.
func (a *Authenticator) checkAudience(aud any) error {
	if aud == nil {
		return invalidToken("The bearer token has no audience (aud): ask the authorization server for a token for this server's resource (" + a.resource + ")")
	}
	list, ok := idclaims.Strings(aud)
	if !ok {
		return invalidToken("The bearer token's audience (aud) is not a string or a list of strings")
	}
	for _, s := range list {
		if idclaims.ResourceKey(s) == a.resourceKey || slices.Contains(a.audiences, s) {
			return nil
		}
	}
	return invalidToken("The bearer token is not for this server: its audience (aud) does not name this server's resource (" + a.resource + "); ask the authorization server for a token with this resource")
}

// identity builds the caller's identity from verified claims.
func identity(c map[string]any) (*otc.Identity, error) {
	if _, ok := c["sub"].(string); !ok && c["sub"] != nil {
		return nil, invalidToken("The bearer token's subject (sub) is not a string")
	}
	if problem := idclaims.ScopeProblem(c); problem != "" {
		return nil, invalidToken("The bearer token's scopes are malformed, so it grants none: " + problem)
	}
	_, name := idclaims.Subject(c)
	return &otc.Identity{Method: Method, Name: name, Claims: c}, nil
}

// jwtProblem says in a few words why a JWT access token was refused. t is
// what the parser made of the token, possibly nil.
// explicit is [Options.ExplicitTypeOnly].
func jwtProblem(t *jwt.Token, err error, explicit bool) string {
	if errors.Is(err, jwt.ErrTokenMalformed) {
		return "The bearer token is malformed"
	}
	switch {
	case errors.Is(err, errIssuerType):
		return "The bearer token's issuer (iss) is not a string"
	case errors.Is(err, errNoIssuer):
		return "The bearer token has no issuer (iss)"
	case errors.Is(err, errIssuerUnknown):
		return "The bearer token's issuer (iss) is not one this server accepts"
	}
	if t != nil && t.Header != nil {
		if alg, _ := t.Header["alg"].(string); !slices.Contains(acceptedAlgs, alg) {
			return "The bearer token's algorithm (alg) is not accepted: an access token is signed with RS256, PS256, ES256 or EdDSA (or RS384, RS512, PS384, PS512, ES384, ES512)"
		}
	}
	if msg, ok := jwks.Problem(err, "the authorization server's"); ok {
		return msg
	}
	switch {
	case errors.Is(err, errCritical):
		return "The bearer token requires extensions that this server does not support (\"crit\" in its header): send a token without \"crit\""
	case errors.Is(err, errType):
		if explicit {
			return "The bearer token's type (typ) is not an access token's: this server accepts only JWTs typed at+jwt (RFC 9068)"
		}
		return "The bearer token's type (typ) is not an access token's: this server accepts JWTs typed at+jwt (RFC 9068) or JWT"
	case errors.Is(err, jwks.ErrNoKeyID):
		return "The bearer token's header has no key id (kid): an access token must name the authorization server's key that signed it"
	case errors.Is(err, jwks.ErrKeyAlgorithm):
		return "The bearer token's algorithm (alg) is not the one its key allows: RS or PS algorithms for RSA keys of 2048 bits or more, ES256, ES384 or ES512 for EC keys of that curve, EdDSA for Ed25519 keys"
	case errors.Is(err, jwks.ErrStopped):
		return "The server no longer fetches the authorization server's keys, and does not hold the bearer token's key (kid)"
	case errors.Is(err, jwt.ErrTokenSignatureInvalid):
		return "The bearer token's signature is not valid"
	case errors.Is(err, jwt.ErrTokenRequiredClaimMissing):
		return "The bearer token has no expiry (exp)"
	case errors.Is(err, jwt.ErrTokenExpired):
		return "The bearer token has expired: get a new one from the authorization server"
	case errors.Is(err, jwt.ErrTokenNotValidYet):
		return "The bearer token is not valid yet (nbf)"
	case errors.Is(err, jwt.ErrTokenUsedBeforeIssued):
		return "The bearer token was issued in the future (iat)"
	case errors.Is(err, jwt.ErrInvalidType):
		return "The bearer token has a claim of the wrong type"
	}
	return "The bearer token is not valid"
}

// Why the key function refused a token's issuer, when it chose the key set
// by it.
var (
	errIssuerType    = errors.New("the token's iss is not a string")
	errNoIssuer      = errors.New("the token has no iss")
	errIssuerUnknown = errors.New("the token's iss is not a configured authorization server")
)
