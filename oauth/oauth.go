package oauth

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

	"github.com/golang-jwt/jwt/v5"
	"github.com/otcgo/otc"
	idclaims "github.com/otcgo/otc/internal/claims"
	"github.com/otcgo/otc/internal/jwks"
	"github.com/otcgo/otc/internal/tokencache"
	"github.com/otcgo/otc/internal/wire"
)

// Method is the [otc.Identity] Method of a caller that proved itself with
// an OAuth access token.
const Method = "oauth"

// DefaultMaxLifetime is the default of [Options.MaxLifetime]: 24 hours.
// Authorization servers issue access tokens for minutes to a day (one
// hour is common; some issue 24 hours by default), so a shorter cap
// would refuse the tokens of ordinary deployments; a longer-lived token is
// refused, so that a leaked one is not useful for days.
const DefaultMaxLifetime = 24 * time.Hour

// defaultLeeway is the default of [Options.Leeway].
const defaultLeeway = 30 * time.Second

// maxTokenBytes caps a bearer token. JWT access tokens are one to a few
// kilobytes (more with many groups or scopes); nothing longer is parsed or
// sent to an introspection endpoint.
const maxTokenBytes = 16 << 10

// fetchTimeout bounds one fetch of metadata and keys when the HTTP client
// sets no timeout of its own.
const fetchTimeout = jwks.FetchTimeout

// Options configures [New]. Resource and AuthorizationServers are
// required; the zero value of every other field is a documented default.
type Options struct {
	// Resource is this server's resource identifier (RFC 8707, RFC 9728):
	// the canonical URI of the endpoint the tokens are for, such as
	// "https://tools.example.com/mcp" for an MCP endpoint at /mcp. Clients
	// ask their authorization server for a token with this value as the
	// "resource" parameter, and a token is accepted only when its "aud"
	// claim holds it (RFC 9068 §4). It must be an https URL, or http to a
	// loopback address, without a query or fragment. Audiences compare as
	// the MCP authorization spec says of canonical URIs: the scheme and
	// host in any case, a default port written or not, and a lone "/" for
	// the path or none; the rest of the path exactly.
	Resource string

	// Audiences lists further "aud" values to accept, compared exactly,
	// for an authorization server that names this server otherwise (an
	// API identifier such as "api://tools"). Nil means Resource only.
	Audiences []string

	// AuthorizationServers lists the authorization servers whose tokens
	// are accepted, at least one. Their issuers are the document's
	// "authorization_servers" (see [Authenticator.MetadataHandler]), in
	// this order.
	AuthorizationServers []AuthorizationServer

	// Leeway absorbs clock skew in the "exp", "nbf" and "iat" checks. Zero
	// means 30 seconds; a negative value means none.
	Leeway time.Duration

	// MaxLifetime caps how far in the future a JWT access token's "exp"
	// may be: a token that would stay valid longer is refused. Zero means
	// [DefaultMaxLifetime]; a negative value is an error. Introspected
	// tokens are not capped: the authorization server vouches for them
	// afresh whenever the cache lets an answer go (see
	// [Introspection.CacheTTL]).
	MaxLifetime time.Duration

	// ExplicitTypeOnly refuses JWTs whose "typ" header is not "at+jwt" (or
	// "application/at+jwt"), as RFC 9068 §4 has it. By default a token
	// typed "JWT", or not typed at all, is accepted too, because many
	// authorization servers issue such access tokens; any other "typ" is
	// refused either way, so that a token of another kind (a logout
	// token, a capability token typed for its own use) is never taken for
	// an access token. An ID token is refused by its audience, which is
	// the client, not this server.
	ExplicitTypeOnly bool

	// CacheSize is the number of verified JWT access tokens whose claims
	// are remembered, so that a token sent again costs no second
	// signature check, which is most of what a call with a token costs. A
	// token is remembered until its "exp" and while the key set that
	// verified it is the one in use; every call still runs its tool's
	// policy (scopes and the rest) on the claims. Zero means 10,000
	// tokens; a negative value turns the cache off. Introspected tokens
	// have a cache of their own ([Introspection.CacheEntries]).
	CacheSize int

	// RefreshInterval is how long after a good fetch an authorization
	// server's metadata and key set are fetched again, and the longest
	// wait before a retry after a failed one. Zero means one hour.
	RefreshInterval time.Duration

	// HTTPClient fetches metadata and key sets and calls introspection
	// endpoints. Nil means a client with a 10 second timeout. A fetch gets
	// 10 seconds at most all the same, an introspection
	// [Introspection.Timeout].
	HTTPClient *http.Client

	// Logger receives the failures of discovery, key fetches and
	// introspection, and the first success after them. Nil means
	// slog.Default().
	Logger *slog.Logger

	// DPoP, when set, takes access tokens bound to the client's key
	// (RFC 9449) besides bearer tokens, or instead of them (see
	// [DPoP].Required). Nil takes bearer tokens alone, and refuses a
	// token bound to a key all the same: it is of no use without its
	// proof.
	DPoP *DPoP
}

// AuthorizationServer is one authorization server whose access tokens
// are accepted. Its keys are found in one of three ways: JWKS, a static
// set; JWKSURL, a set fetched; or, when both are empty, the "jwks_uri" of
// its metadata (RFC 8414), discovered from Issuer.
type AuthorizationServer struct {
	// Issuer is the server's issuer identifier, compared exactly with the
	// "iss" of its tokens (RFC 9068 §4) and with the "issuer" of its
	// metadata (RFC 8414 §3.3). Required. When its metadata is discovered
	// it must be an https URL (or http to a loopback address) without a
	// query or fragment.
	//
	// Discovery asks, in this order, until one answers 200 with a
	// document whose "issuer" is Issuer:
	// /.well-known/oauth-authorization-server inserted before the issuer's
	// path (RFC 8414 §3.1), then /.well-known/openid-configuration
	// inserted likewise, then, for an issuer with a path, appended to it
	// (OpenID Connect Discovery), as the MCP authorization spec lists
	// them. Discovery runs in the background, as part of fetching the key
	// set, on the schedule and with the backoff that [New] describes; a
	// document whose "issuer" differs is refused, never used.
	Issuer string

	// JWKSURL is where the server publishes its key set, for a server
	// without metadata or to skip discovery. The URL must be https, or
	// http to a loopback address.
	JWKSURL string

	// JWKS is a static key set, read once, never refreshed. It must hold
	// at least one public key with a kid, and no private key.
	JWKS json.RawMessage

	// Introspection, when set, checks tokens by asking this server (RFC
	// 7662): opaque tokens, and JWTs as [Introspection.All] says. At most
	// one server may have it, since nothing in an opaque token tells which
	// server issued it.
	Introspection *Introspection
}

// Introspection configures token introspection (RFC 7662) at one
// authorization server.
type Introspection struct {
	// Endpoint is the introspection endpoint. Empty means the
	// "introspection_endpoint" of the server's metadata, discovered as for
	// keys (an error with a static JWKS, which asks for no discovery).
	// It must be https, or http to a loopback address.
	Endpoint string

	// ClientID and ClientSecret authenticate this server to the endpoint,
	// by HTTP Basic authentication (client_secret_basic, RFC 6749
	// §2.3.1), or in the form when ClientSecretPost is set. Both are
	// required.
	ClientID     string
	ClientSecret string

	// ClientSecretPost sends ClientID and ClientSecret in the request body
	// (client_secret_post) rather than in an Authorization header.
	ClientSecretPost bool

	// All introspects every token of this server, JWTs included, rather
	// than checking the signature of a JWT locally: for a server whose
	// JWTs are references to be looked up, or a deployment that wants
	// revocation to take effect within CacheTTL. Without it, a JWT (three
	// base64url parts whose first is a JOSE header) is checked locally,
	// unless the server publishes no key set, and any other token is
	// introspected.
	All bool

	// Timeout bounds one introspection, waiting for a free slot included.
	// Zero means 5 seconds; a negative value is an error.
	Timeout time.Duration

	// MaxConcurrent caps the introspections in flight at once, so that a
	// flood of made-up tokens costs the authorization server at most that
	// many requests at a time; a request that finds no free slot within
	// Timeout is refused, told to try again. Concurrent requests with the
	// same token share one introspection. Zero means 16.
	MaxConcurrent int

	// CacheTTL caps how long an active answer is reused for the same
	// token: an entry lives until the token's "exp" or CacheTTL after the
	// answer, whichever comes first, so that a revoked token stops working
	// at most CacheTTL later. Zero means 1 minute; a negative value
	// disables the cache. Inactive answers have a cache of their own
	// (InactiveCacheTTL), so that a flood of made-up tokens cannot push
	// out live entries.
	CacheTTL time.Duration

	// InactiveCacheTTL is how long an inactive answer is reused for the
	// same token (keyed by its SHA-256, never the token), so that a dead
	// token sent again and again costs the authorization server one
	// request per InactiveCacheTTL, not one per request. A token never
	// becomes active again, so the time only bounds memory. Zero means 10
	// seconds; a negative value disables it. At most InactiveCacheEntries
	// are kept (zero means 10,000, about 2 MiB), the least recently used
	// going first.
	InactiveCacheTTL     time.Duration
	InactiveCacheEntries int

	// RequestsPerSecond bounds the introspection requests sent to this
	// authorization server, so that a flood of made-up opaque tokens, each
	// one new, costs it at most that many requests a second (bursts of as
	// many). A request over the bound is not let through: it is answered
	// 503 with Retry-After, told to try again. Answers from the caches
	// and requests sharing an introspection do not count. Zero means 50; a
	// negative value means no bound.
	RequestsPerSecond int

	// CacheEntries and CacheBytes bound the cache: at most CacheEntries
	// answers, whose bodies (plus 128 bytes each) add up to at most
	// CacheBytes; the least recently used go first. Zero means 10,000
	// entries and 8 MiB.
	CacheEntries int
	CacheBytes   int
}

// Authenticator is an OAuth 2.0 resource server: it accepts requests
// with "Authorization: Bearer <access token>" whose token one of the
// configured authorization servers issued for this server's resource. It
// implements [otc.Authenticator], [otc.Challenger] and
// auth.BearerAuthenticator, so that auth.AnyOf can combine it with
// capability tokens. Create one with [New].
//
// The identity it returns has Method [Method], the token's claims (or the
// introspection answer's members) as Claims, so that [otc.Identity.Scopes]
// reads its "scope", and as Name the token's subject ("sub"), or its
// "client_id" when it has no subject (a client-credentials token of a
// server that omits "sub").
type Authenticator struct {
	resource    string // as configured, the metadata's "resource"
	resourceKey string // its canonical form, for audiences
	audiences   []string
	servers     []*server
	intro       *introspector // nil without introspection
	parser      *jwt.Parser
	leeway      time.Duration
	maxLifetime time.Duration
	explicit    bool
	cache       *tokencache.Cache // verified JWTs' claims
	prmURL      string            // the resource metadata document's URL
	challenge   string            // the challenge of a request without a token
	dpop        *dpopCheck        // nil without DPoP
	// dpopChallenge is the DPoP challenge that follows the Bearer one
	// (or is a.challenge, where DPoP is required).
	dpopChallenge string
}

var (
	_ otc.Authenticator = (*Authenticator)(nil)
	_ otc.Challenger    = (*Authenticator)(nil)
)

// server is one configured authorization server.
type server struct {
	issuer string
	keys   *jwks.Set  // nil when every token of the server is introspected
	disc   *discovery // nil when nothing is discovered
	static bool       // keys configured (JWKS or JWKSURL), not discovered
	intro  *introspector
}

// New returns an authenticator for the access tokens of opts'
// authorization servers. It fails on a misconfiguration, naming it.
//
// It returns at once, without waiting for any network: one goroutine per
// authorization server whose keys or introspection endpoint are fetched
// does the fetching in the background, as capability tokens' key sets are
// fetched (see auth.CapabilityOptions.JWKSURL): at once, again
// RefreshInterval after a good fetch (rediscovering the metadata then),
// after a failure 1, 2, 4, 8 and 16 seconds later and then every 30
// seconds until one succeeds, and when a token names a key id the set
// lacks, at most once per 5 seconds. When the keys come from the metadata,
// each scheduled fetch reads the metadata first, then its "jwks_uri"; a
// fetch for an unknown kid reuses the metadata it has. A failed fetch
// keeps the keys (and metadata) of the last good one. A request that
// needs a fetch waits for it at most 5 seconds and no longer than its own
// context; its token is then refused as one the server cannot check yet
// (401 invalid_token, told to try again). Metadata documents over 256 KiB
// and key sets over 1 MiB are refused.
//
// ctx bounds the background fetching, and should last as long as the
// authenticator is used (a server's lifetime, not a startup deadline).
func New(ctx context.Context, opts *Options) (*Authenticator, error) {
	if opts == nil {
		opts = &Options{}
	}
	return newAuthenticator(ctx, *opts, jwks.DefaultTiming(opts.RefreshInterval))
}

// newAuthenticator is New with the intervals of fetching given, which
// tests shorten.
func newAuthenticator(ctx context.Context, opts Options, timing jwks.Timing) (*Authenticator, error) {
	if ctx == nil {
		return nil, errors.New("otc/oauth: New: nil context")
	}
	resourceKey, err := checkResource(opts.Resource)
	if err != nil {
		return nil, err
	}
	prmURL, err := MetadataURL(opts.Resource)
	if err != nil {
		return nil, err
	}
	if slices.Contains(opts.Audiences, "") {
		return nil, errors.New("otc/oauth: New: an entry of Audiences is empty")
	}
	if len(opts.AuthorizationServers) == 0 {
		return nil, errors.New("otc/oauth: New: no AuthorizationServers: name at least one, by its issuer")
	}
	switch {
	case opts.RefreshInterval < 0:
		return nil, fmt.Errorf("otc/oauth: New: negative RefreshInterval %v", opts.RefreshInterval)
	case opts.MaxLifetime < 0:
		return nil, fmt.Errorf("otc/oauth: New: negative MaxLifetime %v", opts.MaxLifetime)
	}
	leeway := opts.Leeway
	switch {
	case leeway == 0:
		leeway = defaultLeeway
	case leeway < 0:
		leeway = 0
	}
	maxLifetime := opts.MaxLifetime
	if maxLifetime == 0 {
		maxLifetime = DefaultMaxLifetime
	}
	client := opts.HTTPClient
	if client == nil {
		client = &http.Client{Timeout: fetchTimeout}
	}
	logger := opts.Logger
	if logger == nil {
		logger = slog.Default()
	}

	a := &Authenticator{
		resource:    opts.Resource,
		resourceKey: resourceKey,
		audiences:   slices.Clone(opts.Audiences),
		leeway:      leeway,
		maxLifetime: maxLifetime,
		explicit:    opts.ExplicitTypeOnly,
		cache:       tokencache.New(opts.CacheSize),
		prmURL:      prmURL,
		challenge:   "Bearer resource_metadata=" + quote(prmURL),
		parser: jwt.NewParser(
			jwt.WithValidMethods(acceptedAlgs),
			jwt.WithExpirationRequired(),
			jwt.WithIssuedAt(),
			jwt.WithLeeway(leeway),
			// One token, one spelling, as for the root's bearer tokens.
			jwt.WithStrictDecoding(),
		),
	}
	if opts.DPoP != nil {
		d, err := newDPoPCheck(opts.DPoP)
		if err != nil {
			return nil, err
		}
		a.dpop = d
		a.dpopChallenge = "DPoP algs=" + quote(strings.Join(d.Algorithms, " ")) + ", resource_metadata=" + quote(prmURL)
		if d.Required {
			a.challenge = a.dpopChallenge
		}
	}
	// Checked in full before any goroutine starts, so that a failed New
	// leaves nothing running.
	for i, as := range opts.AuthorizationServers {
		if err := checkServer(i, as, opts.AuthorizationServers[:i]); err != nil {
			return nil, err
		}
	}
	for _, as := range opts.AuthorizationServers {
		s := &server{issuer: as.Issuer}
		if as.Introspection != nil {
			s.intro = newIntrospector(s, as.Introspection, client, logger)
			a.intro = s.intro
		}
		needsKeys := as.Introspection == nil || !as.Introspection.All
		discoverKeys := needsKeys && as.JWKSURL == "" && as.JWKS == nil
		discoverIntro := as.Introspection != nil && as.Introspection.Endpoint == ""
		if discoverKeys || discoverIntro {
			s.disc = newDiscovery(as.Issuer, client, logger, needsKeys, discoverIntro, as.Introspection != nil)
			s.disc.jwksURL = as.JWKSURL
		}
		s.static = as.JWKSURL != "" || as.JWKS != nil
		switch {
		case as.JWKS != nil:
			snap, err := staticKeys(as.Issuer, as.JWKS)
			if err != nil {
				return nil, err
			}
			s.keys = jwks.Static(snap)
		case s.disc != nil || as.JWKSURL != "":
			s.keys = remoteKeys(ctx, s, as.JWKSURL, client, logger, timing)
		}
		a.servers = append(a.servers, s)
	}
	return a, nil
}

// checkServer checks the i-th authorization server's options; earlier
// are the ones before it.
func checkServer(i int, as AuthorizationServer, earlier []AuthorizationServer) error {
	name := fmt.Sprintf("AuthorizationServers[%d]", i)
	if as.Issuer == "" {
		return fmt.Errorf("otc/oauth: New: %s has no Issuer", name)
	}
	name = fmt.Sprintf("authorization server %q", wire.Truncate(as.Issuer, 200))
	if slices.ContainsFunc(earlier, func(e AuthorizationServer) bool { return e.Issuer == as.Issuer }) {
		return fmt.Errorf("otc/oauth: New: %s is listed twice", name)
	}
	if as.JWKSURL != "" && as.JWKS != nil {
		return fmt.Errorf("otc/oauth: New: %s has both JWKSURL and JWKS; set one, or neither to discover its keys", name)
	}
	if as.JWKSURL != "" {
		if err := checkFetchURL(as.JWKSURL); err != nil {
			return fmt.Errorf("otc/oauth: New: %s: JWKSURL %w", name, err)
		}
	}
	in := as.Introspection
	if in != nil && in.Endpoint == "" && as.JWKS != nil {
		return fmt.Errorf("otc/oauth: New: %s: Introspection has no Endpoint, and a static JWKS asks for no discovery of the metadata: set Endpoint", name)
	}
	discovers := as.JWKSURL == "" && as.JWKS == nil && (in == nil || !in.All) || in != nil && in.Endpoint == ""
	if discovers {
		if err := checkIssuerURL(as.Issuer); err != nil {
			return fmt.Errorf("otc/oauth: New: %s: its metadata is discovered (no JWKS, JWKSURL or introspection Endpoint is set), so the Issuer %w", name, err)
		}
	}
	if as.JWKS != nil {
		if _, err := staticKeys(as.Issuer, as.JWKS); err != nil {
			return err
		}
	}
	if in == nil {
		return nil
	}
	for _, e := range earlier {
		if e.Introspection != nil {
			return fmt.Errorf("otc/oauth: New: %s and %q both have Introspection: at most one may, since an opaque token does not say which server issued it", name, wire.Truncate(e.Issuer, 200))
		}
	}
	switch {
	case in.ClientID == "" || in.ClientSecret == "":
		return fmt.Errorf("otc/oauth: New: %s: Introspection needs ClientID and ClientSecret, with which this server authenticates to the endpoint", name)
	case in.Timeout < 0:
		return fmt.Errorf("otc/oauth: New: %s: negative Introspection.Timeout %v", name, in.Timeout)
	case in.MaxConcurrent < 0 || in.CacheEntries < 0 || in.CacheBytes < 0 || in.InactiveCacheEntries < 0:
		return fmt.Errorf("otc/oauth: New: %s: Introspection.MaxConcurrent, CacheEntries, CacheBytes and InactiveCacheEntries may not be negative", name)
	}
	if in.Endpoint != "" {
		if err := checkFetchURL(in.Endpoint); err != nil {
			return fmt.Errorf("otc/oauth: New: %s: Introspection.Endpoint %w", name, err)
		}
	}
	return nil
}

// remoteKeys starts fetching the key set of s: at url, or where its
// metadata says.
func remoteKeys(ctx context.Context, s *server, url string, client *http.Client, logger *slog.Logger, timing jwks.Timing) *jwks.Set {
	timeout := client.Timeout
	if timeout <= 0 || timeout > fetchTimeout {
		timeout = fetchTimeout
	}
	resolve := func(context.Context, bool) (string, string, error) { return url, redact(url), nil }
	if s.disc != nil {
		resolve = s.disc.resolve
	}
	label := "the keys of OAuth authorization server " + wire.Truncate(s.issuer, 200)
	return jwks.RemoteFrom(ctx, resolve, label, client, timeout, logger, timing)
}

// checkResource checks the resource identifier and returns its canonical
// form.
func checkResource(resource string) (string, error) {
	if resource == "" {
		return "", errors.New("otc/oauth: New: no Resource: set this server's resource identifier, the URL clients reach it at (\"https://tools.example.com/mcp\")")
	}
	u, err := url.Parse(resource)
	shown := wire.Truncate(resource, 200)
	switch {
	case err != nil || !u.IsAbs() || u.Host == "" || u.Opaque != "":
		return "", fmt.Errorf("otc/oauth: New: Resource %q is not an absolute URL", shown)
	case u.Fragment != "" || strings.Contains(resource, "#"):
		return "", fmt.Errorf("otc/oauth: New: Resource %q has a fragment, which a resource identifier may not have (RFC 8707)", shown)
	case u.RawQuery != "" || u.ForceQuery:
		return "", fmt.Errorf("otc/oauth: New: Resource %q has a query: name the endpoint by its path alone", shown)
	case u.User != nil:
		return "", fmt.Errorf("otc/oauth: New: Resource %q holds user information", shown)
	case !(u.Scheme == "https" || u.Scheme == "http" && wire.Loopback(u.Hostname())):
		return "", fmt.Errorf("otc/oauth: New: Resource %q must be an https URL (or http to a loopback address)", shown)
	case strings.ContainsAny(u.Path, "{}"):
		return "", fmt.Errorf("otc/oauth: New: Resource %q has braces in its path", shown)
	}
	return idclaims.ResourceKey(resource), nil
}

// checkIssuerURL checks an issuer whose metadata is discovered.
func checkIssuerURL(issuer string) error {
	u, err := url.Parse(issuer)
	switch {
	case err != nil || !u.IsAbs() || u.Host == "" || u.Opaque != "":
		return fmt.Errorf("%q is not an absolute URL", wire.Truncate(issuer, 200))
	case u.RawQuery != "" || u.ForceQuery || u.Fragment != "" || strings.Contains(issuer, "#"):
		return fmt.Errorf("%q has a query or fragment, which an issuer identifier may not have (RFC 8414 §2)", wire.Truncate(issuer, 200))
	case !(u.Scheme == "https" || u.Scheme == "http" && wire.Loopback(u.Hostname())):
		return fmt.Errorf("%q must be an https URL (or http to a loopback address)", wire.Truncate(issuer, 200))
	}
	return nil
}

// checkFetchURL checks a URL that keys or answers are fetched from: over
// plain http anyone on the path could swap in their keys or answers.
func checkFetchURL(raw string) error {
	u, err := url.Parse(raw)
	if err != nil || u.Host == "" || !(u.Scheme == "https" || u.Scheme == "http" && wire.Loopback(u.Hostname())) {
		return fmt.Errorf("%q must be an https URL (or http to a loopback address)", wire.Truncate(redact(raw), 200))
	}
	return nil
}

// redact returns a URL as logs and messages may show it.
func redact(raw string) string {
	u, err := url.Parse(raw)
	if err != nil {
		return "(an unparsable URL)"
	}
	return u.Redacted()
}

// serverFor returns the configured server whose issuer is iss, or nil.
func (a *Authenticator) serverFor(iss string) *server {
	for _, s := range a.servers {
		if s.issuer == iss {
			return s
		}
	}
	return nil
}

// ResourceMetadataURL returns the URL of this server's Protected Resource
// Metadata document, which every challenge names: [MetadataURL] of
// Resource.
func (a *Authenticator) ResourceMetadataURL() string { return a.prmURL }

// Resource returns the resource identifier, as configured.
func (a *Authenticator) Resource() string { return a.resource }

// Issuers returns the issuers of the authorization servers, in the order
// configured.
func (a *Authenticator) Issuers() []string {
	out := make([]string, len(a.servers))
	for i, s := range a.servers {
		out[i] = s.issuer
	}
	return out
}
