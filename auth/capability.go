package auth

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"time"

	"github.com/MicahParks/jwkset"
	"github.com/golang-jwt/jwt/v5"

	"github.com/otcgo/otc"
	idclaims "github.com/otcgo/otc/internal/claims"
	"github.com/otcgo/otc/internal/jwks"
	"github.com/otcgo/otc/internal/tokencache"
	"github.com/otcgo/otc/internal/wire"
)

// This file is the capability-token authenticator: bearer JWTs signed by
// an issuer's asymmetric keys, published as a JSON Web Key Set (RFC 7517),
// whose claims a tool's [otc.Policy] then checks. The keys are parsed by
// jwkset and fetched as internal/jwks says; this file decides which key may
// verify which token.

// CapabilityOptions configures [NewCapabilityAuth]. Exactly one of JWKSURL
// and JWKS must be set.
type CapabilityOptions struct {
	// Issuers lists the accepted values of the "iss" claim. Required. The
	// issuers share the key set: any of its keys may sign for any of them.
	Issuers []string

	// JWKSURL is where the issuers publish their key set. The URL must be
	// https, or http to a loopback address (a sidecar, a test): over plain
	// http anyone on the path could swap in their keys. One fetch runs at
	// a time, and the set is fetched:
	//
	//   - at once, in the background: NewCapabilityAuth does not wait;
	//   - again RefreshInterval after a good fetch;
	//   - after a failed fetch, again 1 second later, then 2, 4, 8 and 16
	//     seconds, then every 30 seconds (never later than
	//     RefreshInterval) until a fetch succeeds, so that an issuer that
	//     was down is seen again within about 30 seconds of its return;
	//   - when a token names a key id (kid) the set lacks, unless a fetch
	//     began less than 5 seconds before. A flood of made-up kids thus
	//     costs the issuer at most one fetch every 5 seconds, and cannot
	//     hold back a rotation by more than that: a token signed with a key
	//     the issuer has just published is refused at most 5 seconds, told
	//     meanwhile to try again in a few seconds.
	//
	// A request that needs a fetch (the first one, or one its kid asked
	// for) waits for it, sharing it with the other requests that wait, at
	// most 5 seconds and no longer than its own context; then its token is
	// refused as one the server cannot check yet (401 invalid_token, with
	// a message saying to try again). A key removed from the set stops
	// verifying at the first fetch after its removal. A failed fetch keeps
	// the keys of the last good one. A key set longer than 1 MiB is
	// refused, and a key whose "use" is "enc" verifies nothing.
	JWKSURL string

	// JWKS is a static key set, for keys that are configured rather than
	// fetched: read once, never refreshed. It must hold at least one key
	// with a kid that can verify ES256, EdDSA or RS256, and no private key.
	JWKS json.RawMessage

	// RefreshInterval is how long after a good fetch JWKSURL is fetched
	// again, and the longest wait before a retry after a failed one. Zero
	// means one hour. Ignored with JWKS.
	RefreshInterval time.Duration

	// HTTPClient fetches JWKSURL. Nil means a client with a 10 second
	// timeout. A client without a timeout gets 10 seconds per fetch all
	// the same. Ignored with JWKS.
	HTTPClient *http.Client

	// Revoked, when set, tells whether the token with the given id (its
	// "jti" claim, "" when it has none) has been revoked. A tool's
	// [otc.Policy] asks it before each call, and refuses the call when it
	// returns true or an error. Nil means tokens are never revoked before
	// they expire.
	Revoked func(ctx context.Context, jti string) (bool, error)

	// Leeway absorbs clock skew in the "exp", "nbf" and "iat" checks. Zero
	// means 30 seconds; a negative value means none.
	Leeway time.Duration

	// MaxLifetime caps how far in the future a token's "exp" may be, as
	// [JWTOptions.MaxLifetime] does for HS256 tokens: a token that would
	// stay valid longer is refused (invalid_token), so that a leaked one is
	// useful only briefly, and the record of spent execution-bound tokens
	// (see [otc.Policy.RequiresExecution]) holds each id only that long. Zero
	// means DefaultCapabilityMaxLifetime; a negative value is an error.
	MaxLifetime time.Duration

	// CacheSize is the number of verified tokens whose claims are
	// remembered, so that a token sent again costs no second signature
	// check: an ES256 verification is most of what a call with a token
	// costs. A token is remembered until its "exp" and while the key set
	// that verified it is the one in use; tokens with execution claims,
	// spent on one call, are not remembered. Every call still runs its
	// tool's whole policy, revocation included, on the claims. Zero means
	// 10,000 tokens; a negative value turns the cache off.
	CacheSize int

	// Logger receives the failures of fetching JWKSURL, and the first
	// success after them. Nil means slog.Default().
	Logger *slog.Logger
}

// CapabilityAuth accepts requests with "Authorization: Bearer <JWT>",
// signed by one of the issuers' keys: the capability tokens that a tool's
// [otc.Policy] asks for. The identity it returns has Method
// [otc.MethodCapability], the token's subject ("sub") as Name and all its
// claims as Claims. Create one with [NewCapabilityAuth].
//
// Each key verifies one algorithm, chosen by its type and never by the
// token: ES256 for an EC P-256 key, EdDSA for an Ed25519 key, RS256 for an
// RSA key of 2048 bits or more. A token whose "alg" is anything else, or
// is not the one of the key its "kid" names, is refused, so a public key
// can never be taken for an HMAC secret, nor an RSA key for an EC one.
type CapabilityAuth struct {
	issuers     []string
	keys        *jwks.Set
	parser      *jwt.Parser
	revoked     func(ctx context.Context, jti string) (bool, error)
	maxLifetime time.Duration
	leeway      time.Duration
	cache       *tokencache.Cache
}

// DefaultCapabilityMaxLifetime is the default of
// [CapabilityOptions.MaxLifetime]: 15 minutes, as for HS256 tokens. An
// issuer mints capability tokens for a task, and execution-bound ones for
// one call, which live minutes.
const DefaultCapabilityMaxLifetime = 15 * time.Minute

// capabilityAlgs are the algorithms of capability tokens, one per key
// type.
var capabilityAlgs = []string{
	jwt.SigningMethodES256.Alg(),
	jwt.SigningMethodEdDSA.Alg(),
	jwt.SigningMethodRS256.Alg(),
}

// NewCapabilityAuth returns an authenticator for capability tokens. It
// fails on a misconfiguration: no issuer, both or neither of JWKSURL and
// JWKS, a JWKSURL that is not https (or http to a loopback address), a
// JWKS that is not a key set, holds a private key or no usable one, a
// negative RefreshInterval.
//
// With JWKSURL it returns at once, without waiting for the key set: one
// goroutine fetches it in the background, on the rules that
// [CapabilityOptions].JWKSURL states. A token that arrives before the
// first fetch has ended waits for it, at most 5 seconds. While the issuer
// is down or slow, tokens are refused (401 invalid_token, "the server has
// not obtained the issuers' keys yet ... try again later") and the fetch
// is retried with backoff; failures are logged. Refusing tokens is what a
// server without keys must do anyway, so starting costs no safety;
// waiting or failing would tie the tool server's start to the issuer's
// uptime and speed, and with [AnyOf] would lock out callers with API keys
// or HS256 tokens too.
//
// ctx bounds the background fetching, and should last as long as the
// authenticator is used (a server's lifetime, not a startup deadline).
// When it ends, the fetch in progress is abandoned, the goroutine ends and
// the set is never fetched again: the keys fetched so far stay in use, a
// token naming a kid they lack is refused, and if no fetch had succeeded
// every token is refused.
func NewCapabilityAuth(ctx context.Context, opts *CapabilityOptions) (*CapabilityAuth, error) {
	if opts == nil {
		opts = &CapabilityOptions{}
	}
	return newCapabilityAuth(ctx, *opts, jwks.DefaultTiming(opts.RefreshInterval))
}

// newCapabilityAuth is NewCapabilityAuth with the intervals of fetching
// JWKSURL given, which tests shorten.
func newCapabilityAuth(ctx context.Context, opts CapabilityOptions, timing jwks.Timing) (*CapabilityAuth, error) {
	if ctx == nil {
		return nil, errors.New("auth: NewCapabilityAuth: nil context")
	}
	if len(opts.Issuers) == 0 {
		return nil, errors.New("auth: NewCapabilityAuth: no issuers")
	}
	if slices.Contains(opts.Issuers, "") {
		return nil, errors.New("auth: NewCapabilityAuth: an issuer is empty")
	}
	if opts.RefreshInterval < 0 {
		return nil, fmt.Errorf("auth: NewCapabilityAuth: negative RefreshInterval %v", opts.RefreshInterval)
	}
	if opts.MaxLifetime < 0 {
		return nil, fmt.Errorf("auth: NewCapabilityAuth: negative MaxLifetime %v", opts.MaxLifetime)
	}
	var (
		keys *jwks.Set
		err  error
	)
	switch {
	case opts.JWKSURL != "" && opts.JWKS != nil:
		return nil, errors.New("auth: NewCapabilityAuth: both JWKSURL and JWKS are set; set one")
	case opts.JWKSURL != "":
		keys, err = remoteKeys(ctx, opts, timing)
	case opts.JWKS != nil:
		keys, err = staticKeys(opts.JWKS)
	default:
		return nil, errors.New("auth: NewCapabilityAuth: neither JWKSURL nor JWKS is set")
	}
	if err != nil {
		return nil, err
	}

	leeway := opts.Leeway
	switch {
	case leeway == 0:
		leeway = 30 * time.Second
	case leeway < 0:
		leeway = 0
	}
	maxLifetime := opts.MaxLifetime
	if maxLifetime == 0 {
		maxLifetime = DefaultCapabilityMaxLifetime
	}
	return &CapabilityAuth{
		issuers:     slices.Clone(opts.Issuers),
		keys:        keys,
		revoked:     opts.Revoked,
		maxLifetime: maxLifetime,
		leeway:      leeway,
		cache:       tokencache.New(opts.CacheSize),
		parser: jwt.NewParser(
			jwt.WithValidMethods(capabilityAlgs),
			jwt.WithExpirationRequired(),
			jwt.WithIssuedAt(),
			jwt.WithLeeway(leeway),
			// One token, one spelling, as for NewJWTAuth.
			jwt.WithStrictDecoding(),
		),
	}, nil
}

// remoteKeys checks JWKSURL and starts fetching it, without waiting.
func remoteKeys(ctx context.Context, opts CapabilityOptions, timing jwks.Timing) (*jwks.Set, error) {
	u, err := url.Parse(opts.JWKSURL)
	if err != nil || u.Host == "" || !(u.Scheme == "https" || u.Scheme == "http" && wire.Loopback(u.Hostname())) {
		shown := opts.JWKSURL
		if err == nil {
			shown = u.Redacted()
		}
		return nil, fmt.Errorf("auth: NewCapabilityAuth: JWKSURL %q must be an https URL (or http to a loopback address)", wire.Truncate(shown, 200))
	}
	client := opts.HTTPClient
	if client == nil {
		client = &http.Client{Timeout: jwks.FetchTimeout}
	}
	timeout := client.Timeout
	if timeout <= 0 {
		timeout = jwks.FetchTimeout
	}
	logger := opts.Logger
	if logger == nil {
		logger = slog.Default()
	}
	return jwks.Remote(ctx, opts.JWKSURL, u.Redacted(), client, timeout, logger, timing), nil
}

// staticKeys reads a static JWKS and checks that it can verify something
// and holds no secret.
func staticKeys(raw json.RawMessage) (*jwks.Set, error) {
	var set jwkset.JWKSMarshal
	err := json.Unmarshal(raw, &set)
	var all []jwkset.JWK
	if err == nil {
		all, err = set.JWKSlice()
	}
	if err != nil {
		return nil, fmt.Errorf("auth: NewCapabilityAuth: JWKS is not a usable JSON Web Key Set: %w", err)
	}
	secret, usable := jwks.Vet(all, capabilityAlgs)
	if secret >= 0 {
		return nil, fmt.Errorf("auth: NewCapabilityAuth: JWKS holds a private or secret key (kid %q): give only the issuers' public keys", wire.Truncate(all[secret].Marshal().KID, 80))
	}
	if !usable {
		return nil, errors.New("auth: NewCapabilityAuth: JWKS holds no key with a kid that can verify ES256, EdDSA or RS256")
	}
	return jwks.Static(jwks.NewSnapshot(all)), nil
}

// errIssuerNotAccepted is why the key function refused a token of another
// issuer, for capabilityProblem; the reasons of the key set are jwks's.
var errIssuerNotAccepted = errors.New("the token's iss is not one of the issuers")

// errNotCapabilityType is why the key function refused a token whose
// "typ" says it is meant for another use.
var errNotCapabilityType = errors.New("the token's typ is not a capability token's")

// capabilityTypes are the explicit types ("typ") a capability token may
// carry, besides none: "JWT", as most libraries write by default.
var capabilityTypes = []string{"jwt"}

// keyfunc returns the key that verifies a token: the one its "kid" names,
// provided that the key's type is the one of the token's algorithm. ctx
// is the request's, which bounds its wait for a fetch; the snapshot of the
// key set that held the key is stored in snap.
func (a *CapabilityAuth) keyfunc(ctx context.Context, snap **jwks.Snapshot) jwt.Keyfunc {
	return func(t *jwt.Token) (any, error) {
		// As in JWTAuth: no JOSE extension is understood (RFC 7515
		// §4.1.11), so one that is critical refuses the token.
		if _, ok := t.Header["crit"]; ok {
			return nil, errCritical
		}
		// A token typed for another use (an OAuth access token, an ID
		// token, a DPoP proof) is not a capability token, whoever signed
		// it.
		if !idclaims.TypeIs(t.Header["typ"], true, capabilityTypes...) {
			return nil, errNotCapabilityType
		}
		// A kid is required (KeyFor says why), and is asked for first.
		kid, _ := t.Header["kid"].(string)
		if kid == "" {
			return nil, jwks.ErrNoKeyID
		}
		// A token from another issuer (an OAuth access token beside
		// capability tokens in AnyOf) is refused before its kid is looked
		// up: its kid is not in this set, and asking for a fetch of the set
		// would cost the issuers a fetch, and the request a wait, every few
		// seconds. The claims are not verified yet; a token that passes
		// here has its "iss" checked again once they are.
		if claims, ok := t.Claims.(jwt.MapClaims); ok {
			if iss, isString := claims["iss"].(string); isString && iss != "" && !slices.Contains(a.issuers, iss) {
				return nil, errIssuerNotAccepted
			}
		}
		// WithValidMethods has let only the three algorithms through;
		// KeyFor pins each to its key type, whatever the JWK says.
		key, s, err := a.keys.KeyFor(ctx, kid, t.Method.Alg())
		if err != nil {
			return nil, err
		}
		*snap = s
		return key, nil
	}
}

// Challenge returns "Bearer", the scheme of capability tokens, for a 401,
// and "" otherwise.
func (a *CapabilityAuth) Challenge(e *otc.Error) string { return bearerChallenge(e) }

// Authenticate checks the bearer token: that it was sent once, its
// algorithm against its key's type, the absence of "crit", its signature,
// then "exp" (required), "nbf" and "iat", and "iss" (required, one of the
// issuers). A refusal is an [*Error] with otc.CodeUnauthenticated and Reason
// [otc.ReasonInvalidToken], or [otc.ReasonMissingToken] wrapping
// [otc.ErrNoCredentials] when no Authorization header was sent. The messages
// say what was wrong and never quote the token.
//
// The token's audience, capabilities and the rest are not checked here:
// that is the work of each tool's [otc.Policy].
func (a *CapabilityAuth) Authenticate(r *http.Request) (*otc.Identity, error) {
	if err := a.ambiguous(r); err != nil {
		return nil, err
	}
	header := r.Header.Get("Authorization")
	if header == "" {
		return nil, unauthenticated("Authentication required: send a capability token as a bearer token in the Authorization header", otc.ReasonMissingToken, otc.ErrNoCredentials)
	}
	scheme, token, ok := strings.Cut(header, " ")
	if !ok || !strings.EqualFold(scheme, "Bearer") {
		return nil, invalidToken("The Authorization header must be \"Bearer <token>\"")
	}
	token = strings.TrimSpace(token)
	if len(token) > maxTokenBytes {
		return nil, invalidToken(fmt.Sprintf("The bearer token is too long: at most %d bytes are accepted", maxTokenBytes))
	}
	if token == "" || strings.Count(token, ".") != 2 || strings.ContainsAny(token, " \t") {
		return nil, invalidToken("The bearer token is malformed: it must be a JWT of three base64url parts")
	}
	if e := a.cache.Get(token, time.Now()); e != nil {
		return a.identity(e.Name, e.Claims), nil
	}
	claims := jwt.MapClaims{}
	var snap *jwks.Snapshot
	t, err := a.parser.ParseWithClaims(token, claims, a.keyfunc(r.Context(), &snap))
	if err != nil {
		return nil, invalidToken(capabilityProblem(t, err))
	}
	iss, err := claims.GetIssuer()
	switch {
	case err != nil:
		return nil, invalidToken("The bearer token's issuer (iss) is not a string")
	case iss == "":
		return nil, invalidToken("The bearer token has no issuer (iss)")
	case !slices.Contains(a.issuers, iss):
		return nil, invalidToken("The bearer token's issuer (iss) is not one this server accepts")
	}
	// The parser has required exp and checked its type.
	if exp, err := claims.GetExpirationTime(); err == nil && exp != nil && time.Until(exp.Time) > a.maxLifetime+a.leeway {
		return nil, invalidToken(fmt.Sprintf("The bearer token expires too far in the future: this server accepts capability tokens valid for at most %v; ask the issuer for a shorter-lived token", a.maxLifetime))
	}
	sub, err := claims.GetSubject()
	if err != nil {
		return nil, invalidToken("The bearer token's subject (sub) is not a string")
	}
	if problem := idclaims.ScopeProblem(claims); problem != "" {
		return nil, invalidToken("The bearer token's scopes are malformed, so it grants none: " + problem)
	}
	if exp, err := claims.GetExpirationTime(); err == nil && exp != nil && !idclaims.Bound(claims) {
		a.cache.Put(token, &tokencache.Entry{Claims: claims, Name: sub, Exp: exp.Time, Keys: a.keys, Snapshot: snap})
	}
	return a.identity(sub, claims), nil
}

// identity is the caller a verified token proves: its subject and
// claims, with the revocation check a tool's policy runs and the leeway
// its "exp" was checked with.
func (a *CapabilityAuth) identity(sub string, claims map[string]any) *otc.Identity {
	return seam.CapabilityIdentity(sub, claims, a.revoked, a.leeway)
}

// invalidToken builds the refusal of a capability token.
func invalidToken(message string) *otc.Error {
	return unauthenticated(message, otc.ReasonInvalidToken, nil)
}

// ambiguous refuses a request that sent more than one Authorization
// credential, as [JWTAuth] does.
func (a *CapabilityAuth) ambiguous(r *http.Request) error {
	if wire.AuthorizationRepeated(r.Header.Values("Authorization")) {
		return unauthenticated("Credentials were sent more than once: send exactly one Authorization header, holding one bearer token", otc.ReasonInvalidToken, errAmbiguousCredentials)
	}
	return nil
}

// capabilityProblem says in a few words why a capability token was
// refused. t is what the parser made of the token, possibly nil.
func capabilityProblem(t *jwt.Token, err error) string {
	if errors.Is(err, jwt.ErrTokenMalformed) {
		return "The bearer token is malformed"
	}
	if t != nil && t.Header != nil {
		if alg, _ := t.Header["alg"].(string); !slices.Contains(capabilityAlgs, alg) {
			return "The bearer token's algorithm (alg) is not accepted: a capability token is signed with ES256, EdDSA or RS256"
		}
	}
	if msg, ok := jwks.Problem(err, "the issuers'"); ok {
		return msg
	}
	switch {
	case errors.Is(err, errCritical):
		return criticalProblem
	case errors.Is(err, errNotCapabilityType):
		return "The bearer token's type (typ) is not a capability token's: a capability token carries typ \"JWT\" or none; an OAuth access token (at+jwt), an ID token or a DPoP proof is not one, even from the same issuer"
	case errors.Is(err, errIssuerNotAccepted):
		return "The bearer token's issuer (iss) is not one this server accepts"
	case errors.Is(err, jwks.ErrNoKeyID):
		return "The bearer token's header has no key id (kid): a capability token must name the issuer's key that signed it"
	case errors.Is(err, jwks.ErrKeyAlgorithm):
		return "The bearer token's algorithm (alg) is not the one its key allows: ES256 for EC P-256 keys, EdDSA for Ed25519 keys, RS256 for RSA keys of 2048 bits or more"
	case errors.Is(err, jwt.ErrTokenSignatureInvalid):
		return "The bearer token's signature is not valid"
	}
	if msg, ok := claimProblem(err); ok {
		return msg
	}
	return "The bearer token is not valid"
}
