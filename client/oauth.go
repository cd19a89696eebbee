package client

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"sync"
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
	// query). Nil means the client-credentials grant, which needs a
	// ClientSecret.
	Authorize func(ctx context.Context, authURL string) (callbackURL string, err error)
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

	mu    sync.Mutex
	token *oauthToken
	reg   map[string]*registration // by issuer
}

// oauthToken is a token the authorization server issued.
type oauthToken struct {
	access, refresh, scope string
	issuer, tokenURL       string
}

// registration is how the client identifies itself to one issuer.
type registration struct {
	clientID, secret, method string
}

func newOAuthDoer(next Doer, o *OAuth, resource, agent string) (*oauthDoer, error) {
	u, err := url.Parse(resource)
	if err != nil {
		return nil, err
	}
	if o.Authorize == nil && o.ClientSecret == "" {
		return nil, errors.New("otc client: Options.OAuth needs Authorize (the authorization-code flow) or a ClientSecret (client credentials)")
	}
	if o.ClientSecret != "" && o.Issuer == "" {
		return nil, errors.New("otc client: Options.OAuth.ClientSecret needs Issuer, the authorization server the client is registered with: the secret goes to no other")
	}
	if o.Authorize != nil && o.RedirectURL == "" {
		return nil, errors.New("otc client: Options.OAuth.Authorize needs a RedirectURL")
	}
	d := &oauthDoer{next: next, as: o.HTTPClient, agent: agent, o: *o, resource: u, reg: map[string]*registration{}}
	if d.as == nil {
		d.as = withRedirectRule(nil)
	}
	return d, nil
}

// Do sends req with the token, if it goes to the server's origin, and
// when the server refuses the token (or its lack), gets one and sends the
// request again.
func (d *oauthDoer) Do(req *http.Request) (*http.Response, error) {
	if !sameOrigin(req.URL, d.resource) || req.Header.Get("Authorization") != "" {
		// Another origin, or a call that carries its own token
		// (CallOptions.Header): sent as it is.
		return d.next.Do(req)
	}
	for attempt := 0; ; attempt++ {
		r := req.Clone(req.Context())
		if req.GetBody != nil {
			body, err := req.GetBody()
			if err != nil {
				return nil, err
			}
			r.Body = body
		}
		sent := d.current()
		if sent != "" {
			r.Header.Set("Authorization", "Bearer "+sent)
		}
		resp, err := d.next.Do(r)
		if err != nil || attempt >= maxStepUps {
			return resp, err
		}
		challenge := resp.Header.Get("WWW-Authenticate")
		reason, _ := readChallenge(challenge)
		retry := resp.StatusCode == http.StatusUnauthorized ||
			resp.StatusCode == http.StatusForbidden && reason == "insufficient_scope"
		if !retry || req.Body != nil && req.GetBody == nil {
			return resp, nil
		}
		_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
		resp.Body.Close()
		if err := d.authorize(req.Context(), challenge, sent, resp.StatusCode); err != nil {
			return nil, fmt.Errorf("getting an OAuth token for %s: %w", origin(d.resource.String()), err)
		}
	}
}

// current is the access token to send, "" for none.
func (d *oauthDoer) current() string {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.token == nil {
		return ""
	}
	return d.token.access
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
	reg, err := d.register(ctx, meta)
	if err != nil {
		return err
	}
	form := url.Values{}
	if len(scope) > 0 {
		form.Set("scope", strings.Join(scope, " "))
	}
	form.Set("resource", d.resourceID(prm))
	if d.o.Authorize == nil {
		form.Set("grant_type", "client_credentials")
	} else if err := d.code(ctx, meta, reg, form); err != nil {
		return err
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
