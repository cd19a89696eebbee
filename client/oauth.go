package client

import (
	"context"
	"crypto"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"sync"
	"time"
)

// OAuth makes a [Client] the OAuth client of a server that is an OAuth
// resource server, as MCP's authorization specifies: when the server
// answers 401, the client reads its protected-resource metadata (RFC
// 9728), the metadata of its authorization server (RFC 8414, or OpenID
// Connect discovery), registers or identifies itself, gets a token with
// the scope the server asks for and the server as the token's resource
// (RFC 8707), and sends the request again. It refreshes the token when it
// lapses, and asks again with more scope when the server answers 403
// insufficient_scope (step-up), a bounded number of times. The token goes
// only to the origin of the server's URL.
type OAuth struct {
	// ClientID and ClientSecret identify a client registered with the
	// authorization server beforehand. Empty ClientID makes the client
	// use ClientMetadataURL where the server supports it, or else
	// register itself (RFC 7591) where the server lets it.
	ClientID, ClientSecret string
	// Issuer is the authorization server the client is registered with
	// (its issuer identifier, such as "https://login.example.com"), and
	// then the only one it asks for tokens: a server whose
	// protected-resource metadata names others is refused, with an error
	// naming both, rather than sent the credentials. Required with a
	// ClientSecret, which would otherwise go to whatever authorization
	// server a server names. Empty means the one the server names, for
	// clients without a secret (registered on the spot, or by their
	// metadata document).
	Issuer string
	// ClientMetadataURL is the https URL of the client's metadata
	// document, used as its client id with an authorization server that
	// says client_id_metadata_document_supported.
	ClientMetadataURL string
	// ClientName is the name a registration gives. Empty means
	// "otc-go-client".
	ClientName string
	// RedirectURL is where the authorization server sends the user back
	// with the code, in the authorization-code flow.
	RedirectURL string
	// Authorize is the browser step of the authorization-code flow (with
	// PKCE): it takes the user to authURL and returns the URL the
	// authorization server redirected back to (RedirectURL with its
	// query). Nil means a grant without a user: Enterprise's, else
	// Assertion's, else client credentials (with a ClientSecret or a
	// ClientKey).
	Authorize func(ctx context.Context, authURL string) (callbackURL string, err error)
	// ClientKey authenticates the client at the token endpoint with a
	// JWT it signs (private_key_jwt, RFC 7523 §2.2) rather than a
	// ClientSecret: the authorization server holds the public half, and
	// the private key never leaves the process (a crypto.Signer may keep
	// it in a hardware module or a KMS). [ReadPrivateKey] reads one from
	// a PEM file. Needs ClientID and Issuer; each assertion names the
	// issuer as its audience and lives a minute.
	ClientKey crypto.Signer
	// ClientKeyID is the key id (kid) the assertions name, for an
	// authorization server that holds several of the client's keys.
	ClientKeyID string
	// Assertion returns a JWT the authorization server accepts as the
	// grant itself (RFC 7523 §2.1's JWT bearer grant): a workload's
	// identity token from its platform (Kubernetes, a cloud's metadata
	// service, a CI system), for workload identity federation. It is
	// called for each token request, so that a token the platform
	// rotates is read fresh; [TokenFile] reads one from a file. Needs
	// Issuer. A refusal is returned as it is, not tried again with
	// another grant.
	Assertion func(ctx context.Context) (string, error)
	// Enterprise gets the grant from the user's enterprise identity
	// provider (MCP's enterprise-managed authorization): the user's ID
	// token is exchanged there for an identity assertion for this
	// server's authorization server (an ID-JAG), which is then the JWT
	// bearer grant. Needs Issuer, ClientID, and a ClientSecret or
	// ClientKey (how the client authenticates at the authorization
	// server).
	Enterprise *Enterprise
	// DPoP binds the tokens to a key of the client's (RFC 9449): each
	// token request and each request with the token carries a proof
	// signed with it, so that a token that leaks is of no use without
	// the key. DPoPKey is that key; nil with DPoP set means a P-256 key
	// made for the Client, which lives as long as it. A token the server
	// issues as a Bearer token is used as one.
	DPoP    bool
	DPoPKey crypto.Signer
	// Scopes are asked for besides the scope the server names.
	Scopes []string
	// HTTPClient sends the requests to the authorization server. Nil
	// means one with the client's redirect rule.
	HTTPClient Doer
}

// maxStepUps bounds the times one request asks for a new token.
const maxStepUps = 2

// oauthDoer sends the requests of a Client, with a token for the
// server's origin, and gets one when the server asks.
type oauthDoer struct {
	next     Doer
	as       Doer
	agent    string // the client's User-Agent
	o        OAuth
	resource *url.URL // the server's URL, the token's resource

	dpop *dpopKey // nil without DPoP

	mu    sync.Mutex
	token *oauthToken
	reg   map[string]*registration // by issuer
	again *grantState              // how the token was got, to get the next
	// refused is the last refusal of a grant without a user, and when it
	// came: the requests that follow within refusalMemory get it
	// without asking again.
	refused   error
	refusedAt time.Time
}

// refusalMemory is how long a refused grant without a user is not asked
// for again: the requests of that while fail with the refusal.
const refusalMemory = 10 * time.Second

// oauthToken is a token the authorization server issued.
type oauthToken struct {
	access, refresh, scope string
	dpop                   bool      // bound to the client's DPoP key
	expires, renewAt       time.Time // zero: not said
	issuer, tokenURL       string
}

// grantState is what a grant without a user needs to be made again, once
// its token is about to lapse.
type grantState struct {
	meta  *serverMeta
	prm   *protectedResource
	scope []string
}

// registration is how the client identifies itself to one issuer.
type registration struct {
	clientID, secret, method string
	issuer                   string        // the audience of a private_key_jwt assertion
	key                      crypto.Signer // for private_key_jwt
	kid                      string
	algs                     []string // the token endpoint's signing algorithms
}

func newOAuthDoer(next Doer, o *OAuth, resource, agent string) (*oauthDoer, error) {
	u, err := url.Parse(resource)
	if err != nil {
		return nil, err
	}
	if err := o.check(); err != nil {
		return nil, err
	}
	d := &oauthDoer{next: next, as: o.HTTPClient, agent: agent, o: *o, resource: u, reg: map[string]*registration{}}
	if o.DPoP || o.DPoPKey != nil {
		if d.dpop, err = newDPoPKey(o.DPoPKey); err != nil {
			return nil, fmt.Errorf("otc client: Options.OAuth.DPoPKey: %w", err)
		}
	}
	if d.as == nil {
		d.as = withRedirectRule(nil)
	}
	return d, nil
}

// Do sends req with the token, if it goes to the server's origin, and
// when the server refuses the token (or its lack), gets one and sends the
// request again. A token bound to the client's DPoP key goes with a fresh
// proof; a server that asks for a DPoP nonce is sent the request once more
// with it.
func (d *oauthDoer) Do(req *http.Request) (*http.Response, error) {
	if !sameOrigin(req.URL, d.resource) || req.Header.Get("Authorization") != "" {
		// Another origin, or a call that carries its own token
		// (CallOptions.Header): sent as it is.
		return d.next.Do(req)
	}
	if err := d.renew(req.Context()); err != nil {
		return nil, fmt.Errorf("getting an OAuth token for %s: %w", origin(d.resource.String()), err)
	}
	nonceRetried := false
	for attempt := 0; ; {
		r := req.Clone(req.Context())
		if req.GetBody != nil {
			body, err := req.GetBody()
			if err != nil {
				return nil, err
			}
			r.Body = body
		}
		sent := d.current()
		if sent != nil {
			if sent.dpop {
				proof, err := d.dpop.proof(r.Method, r.URL, sent.access)
				if err != nil {
					return nil, err
				}
				r.Header.Set("Authorization", "DPoP "+sent.access)
				r.Header.Set("DPoP", proof)
			} else {
				r.Header.Set("Authorization", "Bearer "+sent.access)
			}
		}
		resp, err := d.next.Do(r)
		if err != nil {
			return resp, err
		}
		challenge := resp.Header.Get("WWW-Authenticate")
		reason, _ := readChallenge(challenge)
		if d.dpop != nil {
			d.dpop.learn(r.URL, resp.Header.Get("DPoP-Nonce"))
		}
		replayable := req.Body == nil || req.GetBody != nil
		if resp.StatusCode == http.StatusUnauthorized && reason == "use_dpop_nonce" && sent != nil && sent.dpop &&
			!nonceRetried && replayable && resp.Header.Get("DPoP-Nonce") != "" {
			// RFC 9449 §9: the server wants its nonce in the proof.
			nonceRetried = true
			drain(resp)
			continue
		}
		if attempt >= maxStepUps {
			return resp, nil
		}
		retry := resp.StatusCode == http.StatusUnauthorized ||
			resp.StatusCode == http.StatusForbidden && reason == "insufficient_scope"
		if !retry || !replayable {
			return resp, nil
		}
		drain(resp)
		attempt++
		var was string
		if sent != nil {
			was = sent.access
		}
		if err := d.authorize(req.Context(), challenge, was, resp.StatusCode); err != nil {
			return nil, fmt.Errorf("getting an OAuth token for %s: %w", origin(d.resource.String()), err)
		}
	}
}

// drain reads what is left of a refused answer's body (up to 64 KiB, so
// that the connection is kept) and closes it.
func drain(resp *http.Response) {
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
	resp.Body.Close()
}

// current is the token to send, nil for none.
func (d *oauthDoer) current() *oauthToken {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.token
}

// renewBefore is how long before a token lapses the client gets the next
// (a quarter of its life, for a token of less than two minutes).
const renewBefore = 30 * time.Second

// renew gets the next token before the one held lapses: by its refresh
// token, or by the grant without a user that got it. A token got through
// the user's browser and without a refresh token is sent until the
// server refuses it. Concurrent requests make one renewal.
func (d *oauthDoer) renew(ctx context.Context) error {
	d.mu.Lock()
	defer d.mu.Unlock()
	t := d.token
	if t == nil || t.renewAt.IsZero() || time.Now().Before(t.renewAt) {
		return nil
	}
	if t.refresh != "" {
		if err := d.refresh(ctx, t); err == nil {
			return nil
		}
	}
	if d.o.Authorize != nil || d.again == nil {
		return nil
	}
	err := d.obtain(ctx, d.again.meta, d.again.prm, d.again.scope)
	if err != nil && time.Now().Before(t.expires) {
		return nil // the token held still serves; the next request tries again
	}
	return err
}

// authorize gets a token after the server refused sent (status, with the
// challenge): by refreshing it, or anew.
func (d *oauthDoer) authorize(ctx context.Context, challenge, sent string, status int) error {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.token != nil && d.token.access != sent {
		return nil // another request got a new token meanwhile
	}
	params := challengeParams(challenge)
	if d.dpop != nil && params["error"] == "use_dpop_nonce" && d.token != nil {
		return errors.New("the server asked for a DPoP nonce again after it was sent one")
	}
	if d.dpop == nil && strings.HasPrefix(strings.ToLower(strings.TrimSpace(challenge)), "dpop") && !strings.Contains(strings.ToLower(challenge), "bearer") {
		return errors.New("the server takes DPoP-bound tokens only: set Options.OAuth.DPoP")
	}
	stepUp := status == http.StatusForbidden || params["error"] == "insufficient_scope"
	if t := d.token; t != nil && t.refresh != "" && !stepUp {
		if err := d.refresh(ctx, t); err == nil {
			return nil
		}
	}
	// What the server is: its protected-resource metadata.
	prm, err := d.protectedResource(ctx, params["resource_metadata"])
	if err != nil {
		return err
	}
	issuer := strings.TrimSuffix(d.resource.Scheme+"://"+d.resource.Host, "/")
	if prm != nil {
		if len(prm.AuthorizationServers) == 0 {
			return errors.New("the protected-resource metadata names no authorization server")
		}
		issuer = prm.AuthorizationServers[0]
	}
	if pin := d.o.Issuer; pin != "" {
		if prm != nil && !slices.Contains(prm.AuthorizationServers, pin) {
			return fmt.Errorf("the server's protected-resource metadata names the authorization server %s, not %s, with which the client is registered (OAuth.Issuer): its credentials are not sent elsewhere",
				strings.Join(prm.AuthorizationServers, ", "), pin)
		}
		issuer = pin
	}
	meta, err := d.serverMetadata(ctx, issuer, prm == nil)
	if err != nil {
		return err
	}
	// The scope: what the challenge names (with the scope held, on a
	// step-up), else what the resource says it supports.
	var scope []string
	switch {
	case params["scope"] != "":
		scope = strings.Fields(params["scope"])
		if stepUp && d.token != nil {
			scope = union(strings.Fields(d.token.scope), scope)
		}
	case prm != nil && len(prm.ScopesSupported) > 0:
		scope = prm.ScopesSupported
	}
	scope = union(scope, d.o.Scopes)
	if d.o.Authorize != nil && slices.Contains(meta.ScopesSupported, "offline_access") && len(scope) > 0 {
		scope = union(scope, []string{"offline_access"}) // a refresh token, rather than the user again
	}
	if d.refused != nil && time.Since(d.refusedAt) < refusalMemory {
		return d.refused
	}
	err = d.obtain(ctx, meta, prm, scope)
	if _, ok := errors.AsType[*grantRefused](err); ok && d.o.Authorize == nil {
		d.refused, d.refusedAt = err, time.Now()
	}
	return err
}

// obtain gets a token from the authorization server meta describes, by
// the client's grant, for the resource prm names (or the server's URL)
// and scope, and holds it. d.mu is held.
func (d *oauthDoer) obtain(ctx context.Context, meta *serverMeta, prm *protectedResource, scope []string) error {
	if d.dpop != nil {
		if err := d.dpop.fits(meta); err != nil {
			return err
		}
	}
	reg, err := d.register(ctx, meta)
	if err != nil {
		return err
	}
	form := url.Values{}
	if len(scope) > 0 {
		form.Set("scope", strings.Join(scope, " "))
	}
	form.Set("resource", d.resourceID(prm))
	switch {
	case d.o.Authorize != nil:
		if err := d.code(ctx, meta, reg, form); err != nil {
			return err
		}
	case d.o.Enterprise != nil:
		jag, err := d.identityAssertion(ctx, meta, form)
		if err != nil {
			return err
		}
		form.Set("grant_type", grantJWTBearer)
		form.Set("assertion", jag)
	case d.o.Assertion != nil:
		a, err := d.o.Assertion(ctx)
		if err != nil {
			return fmt.Errorf("the workload's assertion (OAuth.Assertion): %w", err)
		}
		if a == "" {
			return errors.New("the workload's assertion (OAuth.Assertion) is empty")
		}
		form.Set("grant_type", grantJWTBearer)
		form.Set("assertion", a)
	default:
		form.Set("grant_type", "client_credentials")
	}
	t, err := d.exchange(ctx, meta.TokenEndpoint, reg, form)
	if err != nil {
		return err
	}
	if t.scope == "" {
		t.scope = form.Get("scope")
	}
	t.issuer, t.tokenURL = meta.Issuer, meta.TokenEndpoint
	d.token = t
	if d.o.Authorize == nil {
		d.again = &grantState{meta: meta, prm: prm, scope: scope}
	}
	return nil
}

// resourceID is the resource the token is for: the metadata's resource,
// or the server's URL.
func (d *oauthDoer) resourceID(prm *protectedResource) string {
	if prm != nil && prm.Resource != "" {
		return prm.Resource
	}
	u := *d.resource
	u.RawQuery, u.Fragment = "", ""
	return u.String()
}
