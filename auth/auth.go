package auth

import (
	"crypto/sha256"
	"crypto/subtle"
	"errors"
	"fmt"
	"maps"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/golang-jwt/jwt/v5"

	"github.com/otcgo/otc"
	idclaims "github.com/otcgo/otc/internal/claims"
	"github.com/otcgo/otc/internal/hook"
	"github.com/otcgo/otc/internal/wire"
)

// seam is what package otc lends the packages beside it (internal/hook).
var seam = hook.Of[otc.Registry, otc.Policy, otc.ToolDefinition, otc.CallRequest, otc.Identity, otc.Error]()

// This file holds the API-key and HS256 authenticators, and AnyOf, which
// combines authenticators; capability.go holds the capability-token one.

// errAmbiguousCredentials is wrapped by the refusal of a request that sent
// credentials of one kind more than once. Which copy would count depends
// on the order in which proxies and libraries put the header lines, and
// whoever can add a header line could choose; so such a request is never
// let in, not even by another method of [AnyOf]. It is unexported to keep
// the API small: a custom authenticator that wraps one of this package's
// passes it on by wrapping the error it got.
var errAmbiguousCredentials = errors.New("auth: credentials sent more than once")

// ambiguityChecker is implemented by the authenticators of this package:
// ambiguous returns the refusal of a request that sent their kind of
// credentials more than once, without checking the credentials, so that
// [AnyOf] can refuse the request before any method accepts it.
type ambiguityChecker interface {
	ambiguous(r *http.Request) error
}

// BearerAuthenticator is implemented by an [otc.Authenticator] of another
// package that reads bearer tokens from the Authorization header, such as
// the OAuth resource server of package oauth, so that [AnyOf] treats it as
// it treats this package's bearer methods: a request that sent more than
// one Authorization credential is refused before any method is tried, a
// request without credentials is told to send a bearer token, and when
// every method refuses a bearer token, the refusal reported is the one of
// the method the token was meant for, as BearerFit says.
type BearerAuthenticator interface {
	otc.Authenticator
	// BearerFit says how surely a bearer token was meant for this
	// authenticator, from the token as sent, unverified: header and claims
	// are its JOSE header and its claims when it is a JWT, both nil when
	// it is not. 0 means not at all; 1 that its form or algorithm is one
	// the authenticator reads; 2 that its issuer ("iss") is one it
	// accepts; 3 that its explicit type ("typ") is the authenticator's
	// own too. [CapabilityAuth] counts 2 for its issuers and 1 for its
	// algorithms, [JWTAuth] 1 for HS256. The surest fit wins, the first
	// of equals in AnyOf's order.
	BearerFit(header, claims map[string]any) int
}

// unauthenticated builds a refusal (401) with the given message and
// reason, wrapping cause (nil for none).
func unauthenticated(message, reason string, cause error) *otc.Error {
	return seam.Refusal(message, reason, cause)
}

// bearerChallenge is the challenge of this package's bearer methods:
// "Bearer" for a 401, and for anything else what [otc.Challenge] makes.
func bearerChallenge(e *otc.Error) string {
	if e != nil && e.Code == otc.CodeUnauthenticated {
		return "Bearer"
	}
	return ""
}

// APIKeyAuth accepts requests that carry one of its keys in the
// OXP-API-Key header (or OTC-API-Key, its name before the rename). A
// request must send one key in one header line: two lines of either
// header, or one of each, are refused even when a key is right.
type APIKeyAuth struct {
	keys []apiKey
}

// APIKeyHeader returns the header a client sends its key in,
// otc.HeaderAPIKey, for what describes the credentials a server takes
// (the A2A Agent Card).
func (a *APIKeyAuth) APIKeyHeader() string { return otc.HeaderAPIKey }

type apiKey struct {
	name string
	sum  [sha256.Size]byte
}

// NewAPIKeyAuth returns an authenticator accepting the given keys, by the
// names the identity will carry ("ci", "partner-a"). It fails if there is
// no key or a key is empty.
func NewAPIKeyAuth(keys map[string]string) (*APIKeyAuth, error) {
	if len(keys) == 0 {
		return nil, errors.New("auth: NewAPIKeyAuth: no keys")
	}
	a := &APIKeyAuth{}
	for _, name := range slices.Sorted(maps.Keys(keys)) {
		if keys[name] == "" {
			return nil, fmt.Errorf("auth: NewAPIKeyAuth: key %q is empty", name)
		}
		a.keys = append(a.keys, apiKey{name: name, sum: sha256.Sum256([]byte(keys[name]))})
	}
	return a, nil
}

// Authenticate checks the API key header. Keys are compared as SHA-256
// digests in constant time, and every key is compared, so the time taken
// says nothing about which key came close.
func (a *APIKeyAuth) Authenticate(r *http.Request) (*otc.Identity, error) {
	if err := a.ambiguous(r); err != nil {
		return nil, err
	}
	presented := r.Header.Get(otc.HeaderAPIKey)
	if presented == "" {
		presented = r.Header.Get(otc.HeaderLegacyAPIKey)
	}
	if presented == "" {
		return nil, unauthenticated("Authentication required: send an API key in the "+otc.HeaderAPIKey+" header", "", otc.ErrNoCredentials)
	}
	sum := sha256.Sum256([]byte(presented))
	match := -1
	for i := range a.keys {
		if subtle.ConstantTimeCompare(sum[:], a.keys[i].sum[:]) == 1 && match < 0 {
			match = i
		}
	}
	if match < 0 {
		return nil, unauthenticated("The API key is not valid", "", nil)
	}
	return &otc.Identity{Method: "api_key", Name: a.keys[match].name}, nil
}

// ambiguous refuses a request with more than one API key header line,
// counting both names: the key to check would otherwise be the first line,
// which a proxy or a forged header may have put there. Lines holding a
// comma are not split, because a key is opaque and may contain one; such
// a line simply matches no key.
func (a *APIKeyAuth) ambiguous(r *http.Request) error {
	if len(r.Header.Values(otc.HeaderAPIKey))+len(r.Header.Values(otc.HeaderLegacyAPIKey)) > 1 {
		return unauthenticated("Credentials were sent more than once: send exactly one API key, in a single "+otc.HeaderAPIKey+" header", "", errAmbiguousCredentials)
	}
	return nil
}

// JWTOptions configures [NewJWTAuth].
type JWTOptions struct {
	// Secret is the HS256 shared secret. Required; at least 32 bytes.
	Secret []byte

	// Audiences is the allow-list for the "aud" claim: a token that has an
	// audience must name at least one of these. A token without "aud" is
	// accepted. An empty list refuses every token that has an audience.
	Audiences []string

	// MaxLifetime caps how far in the future a token's "exp" may be, so
	// that a leaked token is useful only briefly. Zero means 15 minutes.
	MaxLifetime time.Duration

	// Leeway absorbs clock skew in the "exp", "nbf" and "iat" checks. Zero
	// means 30 seconds; a negative value means none.
	Leeway time.Duration
}

// JWTAuth accepts requests with "Authorization: Bearer <JWT>", signed with
// HS256 under a shared secret. A request must send exactly one
// Authorization header line holding one credential.
type JWTAuth struct {
	secret      []byte
	audiences   []string
	maxLifetime time.Duration
	leeway      time.Duration
	parser      *jwt.Parser
	now         func() time.Time
}

// maxTokenBytes caps the length of a bearer token: a real one is a few
// hundred bytes, and nothing longer is parsed.
const maxTokenBytes = 8 << 10

// NewJWTAuth returns an authenticator for HS256 bearer tokens. The accepted
// algorithm is pinned: tokens with "alg" none, RS256, ES256 or another
// HMAC size are refused, whatever their signature. It understands no JOSE
// header extension, so a token whose header has "crit" is refused too
// (RFC 7515 §4.1.11).
func NewJWTAuth(opts *JWTOptions) (*JWTAuth, error) {
	if opts == nil {
		opts = &JWTOptions{}
	}
	if len(opts.Secret) < 32 {
		return nil, errors.New("auth: NewJWTAuth: the secret must be at least 32 bytes")
	}
	a := &JWTAuth{
		secret:      slices.Clone(opts.Secret),
		audiences:   slices.Clone(opts.Audiences),
		maxLifetime: opts.MaxLifetime,
		leeway:      opts.Leeway,
		now:         time.Now,
	}
	if a.maxLifetime <= 0 {
		a.maxLifetime = 15 * time.Minute
	}
	switch {
	case a.leeway == 0:
		a.leeway = 30 * time.Second
	case a.leeway < 0:
		a.leeway = 0
	}
	a.parser = jwt.NewParser(
		jwt.WithValidMethods([]string{jwt.SigningMethodHS256.Alg()}),
		jwt.WithExpirationRequired(),
		jwt.WithIssuedAt(),
		jwt.WithLeeway(a.leeway),
		jwt.WithTimeFunc(func() time.Time { return a.now() }),
		// One token, one spelling: no padding, no stray bits in the last
		// base64url character, so that a list keyed on the token string
		// (of revoked tokens, say) cannot be sidestepped by re-encoding.
		jwt.WithStrictDecoding(),
	)
	return a, nil
}

// Challenge returns "Bearer", the scheme of the tokens a JWTAuth reads,
// for a 401, and "" otherwise.
func (a *JWTAuth) Challenge(e *otc.Error) string { return bearerChallenge(e) }

// errCritical is returned by the key function for a token whose header
// has "crit", to tell [jwtProblem] why the token was refused.
var errCritical = errors.New("the token's header has crit")

// Authenticate checks the bearer token: that it was sent once, its
// algorithm, the absence of "crit", its signature, then "exp" (required,
// not past, not too far ahead), "nbf", "iat" and "aud". The messages say
// what was wrong and never quote the token.
func (a *JWTAuth) Authenticate(r *http.Request) (*otc.Identity, error) {
	if err := a.ambiguous(r); err != nil {
		return nil, err
	}
	header := r.Header.Get("Authorization")
	if header == "" {
		return nil, unauthenticated("Authentication required: send a bearer token in the Authorization header", "", otc.ErrNoCredentials)
	}
	scheme, token, ok := strings.Cut(header, " ")
	if !ok || !strings.EqualFold(scheme, "Bearer") {
		return nil, unauthenticated("The Authorization header must be \"Bearer <token>\"", "", nil)
	}
	token = strings.TrimSpace(token)
	// A JWT is three base64url parts and holds no white space; what does is
	// something else, such as two tokens run together.
	if token == "" || len(token) > maxTokenBytes || strings.Count(token, ".") != 2 || strings.ContainsAny(token, " \t") {
		return nil, unauthenticated("The bearer token is malformed: it must be a JWT of three base64url parts", "", nil)
	}
	claims := jwt.MapClaims{}
	_, err := a.parser.ParseWithClaims(token, claims, func(t *jwt.Token) (any, error) {
		if t.Method != jwt.SigningMethodHS256 {
			return nil, errors.New("unexpected signing method")
		}
		// RFC 7515 §4.1.11: a recipient must refuse a token that lists in
		// "crit" an extension it does not understand, and this server
		// understands none; an empty list is itself forbidden. Checked
		// before the signature because an extension may change what is
		// signed ("b64", RFC 7797), which would make a signature error the
		// wrong diagnosis.
		if _, ok := t.Header["crit"]; ok {
			return nil, errCritical
		}
		return a.secret, nil
	})
	if err != nil {
		return nil, unauthenticated(jwtProblem(err), "", nil)
	}
	exp, err := claims.GetExpirationTime()
	if err != nil || exp == nil {
		return nil, unauthenticated("The bearer token has no expiry (exp)", "", nil)
	}
	if exp.Sub(a.now()) > a.maxLifetime+a.leeway {
		return nil, unauthenticated(fmt.Sprintf("The bearer token expires too far in the future: at most %v ahead is accepted", a.maxLifetime), "", nil)
	}
	aud, err := claims.GetAudience()
	switch claims["aud"].(type) {
	case nil, string, []any: // RFC 7519 §4.1.3; GetAudience reads any other type as no audience
	default:
		err = jwt.ErrInvalidType
	}
	if err != nil || len(aud) > 0 && !slices.ContainsFunc(aud, a.allowedAudience) {
		return nil, unauthenticated("The bearer token's audience (aud) is not accepted", "", nil)
	}
	if problem := idclaims.ScopeProblem(claims); problem != "" {
		return nil, unauthenticated("The bearer token's scopes are malformed, so it grants none: "+problem, "", nil)
	}
	sub, _ := claims.GetSubject()
	return &otc.Identity{Method: "jwt", Name: sub, Claims: claims}, nil
}

func (a *JWTAuth) allowedAudience(aud string) bool { return slices.Contains(a.audiences, aud) }

// ambiguous refuses a request that sent more than one Authorization
// credential, since the token checked would otherwise be whichever came
// first.
func (a *JWTAuth) ambiguous(r *http.Request) error {
	if wire.AuthorizationRepeated(r.Header.Values("Authorization")) {
		return unauthenticated("Credentials were sent more than once: send exactly one Authorization header, holding one bearer token", "", errAmbiguousCredentials)
	}
	return nil
}

// jwtProblem says in a few words why the JWT library refused a token.
func jwtProblem(err error) string {
	switch {
	case errors.Is(err, errCritical):
		return criticalProblem
	case errors.Is(err, jwt.ErrTokenMalformed):
		return "The bearer token is malformed"
	case errors.Is(err, jwt.ErrTokenSignatureInvalid), errors.Is(err, jwt.ErrTokenUnverifiable):
		return "The bearer token's signature is not valid (only HS256 under the server's secret is accepted)"
	}
	if msg, ok := claimProblem(err); ok {
		return msg
	}
	return "The bearer token is not valid"
}

// criticalProblem is the refusal of a token whose header has "crit".
const criticalProblem = "The bearer token requires extensions that this server does not support (\"crit\" in its header): send a token without \"crit\""

// claimProblem says why the JWT library refused a token's claims, the
// checks every kind of bearer token shares; ok is false for any other
// error.
func claimProblem(err error) (msg string, ok bool) {
	switch {
	case errors.Is(err, jwt.ErrTokenRequiredClaimMissing):
		return "The bearer token has no expiry (exp)", true
	case errors.Is(err, jwt.ErrTokenExpired):
		return "The bearer token has expired", true
	case errors.Is(err, jwt.ErrTokenNotValidYet):
		return "The bearer token is not valid yet (nbf)", true
	case errors.Is(err, jwt.ErrTokenUsedBeforeIssued):
		return "The bearer token was issued in the future (iat)", true
	case errors.Is(err, jwt.ErrInvalidType):
		return "The bearer token has a claim of the wrong type", true
	}
	return "", false
}

// AnyOf returns an authenticator that accepts a request when any of as
// does, trying them in order. When all refuse, it reports the first
// refusal of credentials the request did carry (a wrong API key, an
// expired token), and otherwise that no credentials were sent. Of the
// refusals of a bearer token by several methods that read bearer tokens,
// it reports the one of the method the token was meant for: the method
// whose issuer the token names (and whose type, for an OAuth access
// token), else the one whose algorithm it uses; see
// [BearerAuthenticator].
//
// Its challenge (see [otc.Challenger]) is the fullest of its methods':
// the first that carries parameters, such as an OAuth resource server's
// naming its metadata document, else the first a method gives, whichever
// method refused the request.
//
// A request that sent the credentials of one of this package's methods
// more than once (two API key header lines, two Authorization lines, or
// one line of bearer credentials joined by a comma) is refused before any
// method is tried, even if another method would accept
// it: an ambiguous request never passes, whatever the order of as. The
// same holds when a custom authenticator passes on such a refusal from one
// of this package's authenticators it wraps, provided it is tried before
// a method that accepts the request.
func AnyOf(as ...otc.Authenticator) otc.Authenticator {
	return anyOf(slices.Clone(as))
}

type anyOf []otc.Authenticator

// Methods returns the authenticators AnyOf tries, in order, for what
// describes the credentials a server takes (the A2A Agent Card).
func (as anyOf) Methods() []otc.Authenticator { return slices.Clone(as) }

func (as anyOf) Authenticate(r *http.Request) (*otc.Identity, error) {
	if err := as.ambiguous(r); err != nil {
		return nil, err
	}
	var refusals []error
	var refusers []otc.Authenticator
	for _, a := range as {
		id, err := a.Authenticate(r)
		if err == nil {
			return id, nil
		}
		if errors.Is(err, errAmbiguousCredentials) {
			return nil, err
		}
		if errors.Is(err, otc.ErrNoCredentials) {
			continue
		}
		refusals, refusers = append(refusals, err), append(refusers, a)
	}
	if len(refusals) > 0 {
		// A bearer token is refused by every method that reads bearer
		// tokens; the useful refusal is the one of the method it was meant
		// for (an expired ES256 token is not "not HS256", and an OAuth
		// access token is not "not from the capability issuers"). The
		// token is read only now, on the way to a refusal.
		if readsBearer(refusers[0]) {
			header, claims := bearerParts(r)
			best, fit := 0, 0
			for i, a := range refusers {
				if f := bearerFit(a, header, claims); f > fit {
					best, fit = i, f
				}
			}
			return nil, refusals[best]
		}
		return nil, refusals[0]
	}
	e := unauthenticated(anyOfMissing(as), "", otc.ErrNoCredentials)
	for _, a := range as {
		switch a.(type) {
		case *CapabilityAuth, BearerAuthenticator:
			e.Reason = otc.ReasonMissingToken
		}
	}
	return nil, e
}

// ambiguous asks each method of this package among as (nested ones
// included) whether the request sent its credentials more than once,
// without checking any credential.
func (as anyOf) ambiguous(r *http.Request) error {
	for _, a := range as {
		if c, ok := a.(ambiguityChecker); ok {
			if err := c.ambiguous(r); err != nil {
				return err
			}
		}
		if _, ok := a.(BearerAuthenticator); ok && wire.AuthorizationRepeated(r.Header.Values("Authorization")) {
			return unauthenticated("Credentials were sent more than once: send exactly one Authorization header, holding one bearer token", otc.ReasonInvalidToken, errAmbiguousCredentials)
		}
	}
	return nil
}

// anyOfMissing writes the message for a request without any credentials
// the combined authenticators accept.
func anyOfMissing(as anyOf) string {
	var ways []string
	for _, a := range as {
		switch a.(type) {
		case *APIKeyAuth:
			ways = append(ways, "an API key in the "+otc.HeaderAPIKey+" header")
		case *JWTAuth, *CapabilityAuth, BearerAuthenticator:
			if way := "a bearer token in the Authorization header"; !slices.Contains(ways, way) {
				ways = append(ways, way)
			}
		}
	}
	if len(ways) == 0 {
		return "Authentication required"
	}
	return "Authentication required: send " + strings.Join(ways, " or ")
}

// maxBearerPeek caps the bearer token that [AnyOf] reads, unverified, to
// choose among refusals. It is larger than the tokens this package
// accepts, because other packages' authenticators may accept longer ones.
const maxBearerPeek = 16 << 10

// bearerParts returns the JOSE header and the claims of the request's
// bearer JWT, decoded but not verified, or nils when it sent none.
func bearerParts(r *http.Request) (header, claims map[string]any) {
	scheme, token, ok := strings.Cut(r.Header.Get("Authorization"), " ")
	if !ok || !strings.EqualFold(scheme, "Bearer") {
		return nil, nil
	}
	token = strings.TrimSpace(token)
	if len(token) > maxBearerPeek {
		return nil, nil
	}
	header, claims = wire.JWTParts(token)
	if header == nil || claims == nil {
		return nil, nil
	}
	return header, claims
}

// readsBearer reports whether a reads bearer tokens: one of this
// package's methods that do, or a [BearerAuthenticator].
func readsBearer(a otc.Authenticator) bool {
	switch a.(type) {
	case *JWTAuth, *CapabilityAuth, BearerAuthenticator:
		return true
	}
	return false
}

// bearerFit says how surely a refused bearer token was meant for a, as
// [BearerAuthenticator.BearerFit] does.
func bearerFit(a otc.Authenticator, header, claims map[string]any) int {
	alg, _ := header["alg"].(string)
	switch a := a.(type) {
	case *JWTAuth:
		if alg == jwt.SigningMethodHS256.Alg() {
			return 1
		}
	case *CapabilityAuth:
		if iss, _ := claims["iss"].(string); iss != "" && slices.Contains(a.issuers, iss) {
			return 2
		}
		if slices.Contains(capabilityAlgs, alg) {
			return 1
		}
	case BearerAuthenticator:
		return a.BearerFit(header, claims)
	}
	return 0
}

// Challenge returns the fullest challenge of the methods for e: the
// first that carries parameters after its scheme (an OAuth resource
// server names its metadata document in every challenge, whichever method
// refused the request), else the first that any method gives.
func (as anyOf) Challenge(e *otc.Error) string {
	first := ""
	for _, a := range as {
		c, ok := a.(otc.Challenger)
		if !ok {
			continue
		}
		v := c.Challenge(e)
		if strings.Contains(strings.TrimSpace(v), " ") {
			return v
		}
		if first == "" {
			first = v
		}
	}
	return first
}
