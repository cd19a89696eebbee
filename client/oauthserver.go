package client

import (
	"bytes"
	"cmp"
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"time"
)

// This file is what the OAuth client does at the servers it meets: the
// protected-resource metadata (RFC 9728) and the authorization server's
// (RFC 8414, OpenID Connect discovery), registration (RFC 7591), the
// authorization-code flow with PKCE, refresh and the token requests.

// protectedResource is what the client reads of RFC 9728 metadata.
type protectedResource struct {
	Resource             string   `json:"resource"`
	AuthorizationServers []string `json:"authorization_servers"`
	ScopesSupported      []string `json:"scopes_supported"`
}

// protectedResource reads the server's protected-resource metadata: at
// the URL its challenge names, else at the well-known URLs of its URL's
// path and its root. nil, nil means it has none (a server of MCP's first
// authorization version, whose origin is its authorization server).
func (d *oauthDoer) protectedResource(ctx context.Context, named string) (*protectedResource, error) {
	base := d.resource.Scheme + "://" + d.resource.Host
	var tries []string
	if named != "" {
		tries = append(tries, named)
	}
	if p := strings.TrimSuffix(d.resource.Path, "/"); p != "" {
		tries = append(tries, base+"/.well-known/oauth-protected-resource"+p)
	}
	tries = append(tries, base+"/.well-known/oauth-protected-resource")
	for _, u := range tries {
		var prm protectedResource
		if !d.getJSON(ctx, u, &prm) {
			continue
		}
		if prm.Resource != "" && !d.covers(prm.Resource) {
			return nil, fmt.Errorf("the protected-resource metadata at %s is for %s, not for %s: the client will not get a token for it", u, prm.Resource, d.resource)
		}
		return &prm, nil
	}
	return nil, nil
}

// covers reports whether the resource identifier r names the server: its
// origin, and a path that is the server's or a prefix of it.
func (d *oauthDoer) covers(r string) bool {
	u, err := url.Parse(r)
	if err != nil || !sameOrigin(u, d.resource) {
		return false
	}
	p := strings.TrimSuffix(u.Path, "/")
	return p == "" || d.resource.Path == p || strings.HasPrefix(d.resource.Path, p+"/")
}

// serverMeta is what the client reads of authorization-server metadata.
type serverMeta struct {
	Issuer                            string   `json:"issuer"`
	AuthorizationEndpoint             string   `json:"authorization_endpoint"`
	TokenEndpoint                     string   `json:"token_endpoint"`
	RegistrationEndpoint              string   `json:"registration_endpoint"`
	ScopesSupported                   []string `json:"scopes_supported"`
	CodeChallengeMethodsSupported     []string `json:"code_challenge_methods_supported"`
	TokenEndpointAuthMethodsSupported []string `json:"token_endpoint_auth_methods_supported"`
	ClientIDMetadataDocumentSupported bool     `json:"client_id_metadata_document_supported"`
	IssParameterSupported             bool     `json:"authorization_response_iss_parameter_supported"`
	TokenEndpointAuthSigningAlgs      []string `json:"token_endpoint_auth_signing_alg_values_supported"`
	DPoPSigningAlgs                   []string `json:"dpop_signing_alg_values_supported"`
}

// serverMetadata reads the metadata of issuer (RFC 8414, then OpenID
// Connect discovery, at the URLs each builds from the issuer), whose
// "issuer" must be issuer exactly. A server of MCP's first authorization
// version (legacy) that has none has its endpoints at its root.
func (d *oauthDoer) serverMetadata(ctx context.Context, issuer string, legacy bool) (*serverMeta, error) {
	u, err := url.Parse(issuer)
	if err != nil || u.Scheme != "https" && u.Scheme != "http" {
		return nil, fmt.Errorf("the authorization server %q is not an http(s) URL", issuer)
	}
	base := u.Scheme + "://" + u.Host
	p := strings.TrimSuffix(u.Path, "/")
	tries := []string{base + "/.well-known/oauth-authorization-server" + p, base + "/.well-known/openid-configuration" + p}
	if p != "" {
		tries = append(tries, base+p+"/.well-known/openid-configuration")
	}
	var mismatch error
	for _, t := range tries {
		var m serverMeta
		if !d.getJSON(ctx, t, &m) {
			continue
		}
		if m.Issuer != issuer {
			mismatch = fmt.Errorf("the authorization server metadata at %s names the issuer %q, not %q: it is not used", t, m.Issuer, issuer)
			continue
		}
		if m.TokenEndpoint == "" {
			return nil, fmt.Errorf("the authorization server metadata at %s has no token_endpoint", t)
		}
		return &m, nil
	}
	if mismatch != nil {
		return nil, mismatch
	}
	if legacy {
		return &serverMeta{Issuer: base, AuthorizationEndpoint: base + "/authorize", TokenEndpoint: base + "/token", RegistrationEndpoint: base + "/register"}, nil
	}
	return nil, fmt.Errorf("no authorization server metadata for %s (tried %s)", issuer, strings.Join(tries, ", "))
}

// register returns how the client identifies itself to the server: as
// registered beforehand, by its metadata document's URL, or by a
// registration of its own (kept per issuer).
func (d *oauthDoer) register(ctx context.Context, m *serverMeta) (*registration, error) {
	if r := d.reg[m.Issuer]; r != nil {
		return r, nil
	}
	r := &registration{clientID: d.o.ClientID, secret: d.o.ClientSecret, issuer: m.Issuer}
	switch {
	case d.o.ClientKey != nil:
		r.method, r.key, r.kid, r.algs = "private_key_jwt", d.o.ClientKey, d.o.ClientKeyID, m.TokenEndpointAuthSigningAlgs
		if len(m.TokenEndpointAuthMethodsSupported) > 0 && !slices.Contains(m.TokenEndpointAuthMethodsSupported, "private_key_jwt") {
			return nil, fmt.Errorf("the authorization server %s does not take private_key_jwt (it takes %s), which OAuth.ClientKey needs",
				m.Issuer, strings.Join(m.TokenEndpointAuthMethodsSupported, ", "))
		}
	case r.clientID != "":
	case d.o.Assertion != nil:
		r.method = "none" // the assertion says who the workload is

	case d.o.ClientMetadataURL != "" && m.ClientIDMetadataDocumentSupported:
		r.clientID, r.method = d.o.ClientMetadataURL, "none"
	case m.RegistrationEndpoint != "":
		grants := []string{"authorization_code", "refresh_token"}
		if d.o.Authorize == nil {
			grants = []string{"client_credentials"}
		}
		md := map[string]any{
			"client_name":                cmp.Or(d.o.ClientName, "otc-go-client"),
			"grant_types":                grants,
			"response_types":             []string{"code"},
			"token_endpoint_auth_method": authMethod(m.TokenEndpointAuthMethodsSupported, true),
		}
		if d.o.RedirectURL != "" {
			md["redirect_uris"] = []string{d.o.RedirectURL}
			md["application_type"] = applicationType(d.o.RedirectURL)
		}
		body, _ := json.Marshal(md)
		var out struct {
			ClientID     string `json:"client_id"`
			ClientSecret string `json:"client_secret"`
			Method       string `json:"token_endpoint_auth_method"`
		}
		if err := d.postJSON(ctx, m.RegistrationEndpoint, body, &out); err != nil {
			return nil, fmt.Errorf("registering with %s: %w", m.Issuer, err)
		}
		if out.ClientID == "" {
			return nil, fmt.Errorf("registering with %s: no client_id in the answer", m.Issuer)
		}
		r.clientID, r.secret, r.method = out.ClientID, out.ClientSecret, out.Method
	default:
		return nil, fmt.Errorf("the authorization server %s lets no client register, and Options.OAuth has no ClientID", m.Issuer)
	}
	if r.method == "" {
		r.method = authMethod(m.TokenEndpointAuthMethodsSupported, r.secret != "")
	}
	d.reg[m.Issuer] = r
	return r, nil
}

// applicationType is the OpenID Connect application_type of a client
// whose redirect URL is u: "native" for a loopback or private-scheme
// redirect (a program on the user's machine), "web" otherwise.
func applicationType(u string) string {
	p, err := url.Parse(u)
	if err != nil {
		return "native"
	}
	switch h := p.Hostname(); {
	case p.Scheme != "http" && p.Scheme != "https", h == "localhost", h == "127.0.0.1", h == "::1":
		return "native"
	}
	return "web"
}

// authMethod chooses how to authenticate at the token endpoint among
// those the server supports (RFC 8414's default is client_secret_basic).
func authMethod(supported []string, secret bool) string {
	if len(supported) == 0 {
		if secret {
			return "client_secret_basic"
		}
		return "none"
	}
	for _, m := range []string{"client_secret_basic", "client_secret_post", "none"} {
		if slices.Contains(supported, m) && (secret || m == "none" || len(supported) == 1) {
			return m
		}
	}
	return supported[0]
}

// code runs the authorization-code flow with PKCE up to the code, and
// adds to form what the token request needs.
func (d *oauthDoer) code(ctx context.Context, m *serverMeta, reg *registration, form url.Values) error {
	if m.AuthorizationEndpoint == "" {
		return fmt.Errorf("the authorization server %s has no authorization_endpoint", m.Issuer)
	}
	if len(m.CodeChallengeMethodsSupported) > 0 && !slices.Contains(m.CodeChallengeMethodsSupported, "S256") {
		return fmt.Errorf("the authorization server %s does not support PKCE with S256, which the client requires", m.Issuer)
	}
	verifier, state := randomToken(32), randomToken(16)
	sum := sha256.Sum256([]byte(verifier))
	q := url.Values{}
	q.Set("response_type", "code")
	q.Set("client_id", reg.clientID)
	q.Set("redirect_uri", d.o.RedirectURL)
	q.Set("code_challenge", base64.RawURLEncoding.EncodeToString(sum[:]))
	q.Set("code_challenge_method", "S256")
	q.Set("state", state)
	if s := form.Get("scope"); s != "" {
		q.Set("scope", s)
	}
	q.Set("resource", form.Get("resource"))
	authURL := m.AuthorizationEndpoint
	if strings.Contains(authURL, "?") {
		authURL += "&" + q.Encode()
	} else {
		authURL += "?" + q.Encode()
	}
	cb, err := d.o.Authorize(ctx, authURL)
	if err != nil {
		return fmt.Errorf("the authorization step: %w", err)
	}
	cu, err := url.Parse(cb)
	if err != nil {
		return fmt.Errorf("the callback URL: %w", err)
	}
	a := cu.Query()
	if e := a.Get("error"); e != "" {
		return fmt.Errorf("the authorization server refused: %s %s", e, a.Get("error_description"))
	}
	if a.Get("state") != state {
		return errors.New("the callback's state is not the one sent: the answer is not for this request")
	}
	// RFC 9207: an issuer in the answer must be the one asked, exactly;
	// one the server says it sends must be there.
	iss, has := a["iss"]
	switch {
	case has && (len(iss) != 1 || iss[0] != m.Issuer):
		return fmt.Errorf("the callback's iss %q is not the issuer %q: the answer is not from the server asked", a.Get("iss"), m.Issuer)
	case !has && m.IssParameterSupported:
		return fmt.Errorf("the callback has no iss, which the issuer %q says it sends", m.Issuer)
	}
	if a.Get("code") == "" {
		return errors.New("the callback has no code")
	}
	form.Set("grant_type", "authorization_code")
	form.Set("code", a.Get("code"))
	form.Set("redirect_uri", d.o.RedirectURL)
	form.Set("code_verifier", verifier)
	return nil
}

// refresh gets a new access token with the refresh token.
func (d *oauthDoer) refresh(ctx context.Context, t *oauthToken) error {
	reg := d.reg[t.issuer]
	if reg == nil {
		return errors.New("no registration")
	}
	form := url.Values{"grant_type": {"refresh_token"}, "refresh_token": {t.refresh}, "resource": {d.resourceID(nil)}}
	nt, err := d.exchange(ctx, t.tokenURL, reg, form)
	if err != nil {
		return err
	}
	if nt.refresh == "" {
		nt.refresh = t.refresh
	}
	if nt.scope == "" {
		nt.scope = t.scope
	}
	nt.issuer, nt.tokenURL = t.issuer, t.tokenURL
	d.token = nt
	return nil
}

// exchange sends a token request, authenticated as reg says, with a DPoP
// proof where the client binds its tokens.
func (d *oauthDoer) exchange(ctx context.Context, tokenURL string, reg *registration, form url.Values) (*oauthToken, error) {
	out, status, err := tokenRequest(ctx, d.as, d.agent, tokenURL, reg, form, d.dpop)
	if err != nil {
		return nil, fmt.Errorf("POST %s: %w", tokenURL, err)
	}
	if status != http.StatusOK || out.AccessToken == "" {
		err := fmt.Errorf("POST %s: status %d: %s %s", tokenURL, status, truncate(out.Error, 64), truncate(out.Description, 256))
		if status >= 400 && status < 500 && status != http.StatusTooManyRequests {
			return nil, &grantRefused{err}
		}
		return nil, err
	}
	t := &oauthToken{access: out.AccessToken, refresh: out.RefreshToken, scope: out.Scope}
	switch {
	case out.TokenType == "" || strings.EqualFold(out.TokenType, "bearer"):
	case strings.EqualFold(out.TokenType, "dpop") && d.dpop != nil:
		t.dpop = true
	default:
		return nil, fmt.Errorf("POST %s: token type %q, not Bearer%s", tokenURL, truncate(out.TokenType, 32), map[bool]string{true: " or DPoP"}[d.dpop != nil])
	}
	if out.ExpiresIn > 0 {
		// Renewed shortly before it lapses (a grant without a user, or a
		// refresh token); else when the server refuses it.
		ttl := time.Duration(min(out.ExpiresIn, 366*24*3600)) * time.Second
		t.expires = time.Now().Add(ttl)
		t.renewAt = t.expires.Add(-min(renewBefore, ttl/4))
	}
	return t, nil
}

// getJSON reads a JSON document; false for any failure.
func (d *oauthDoer) getJSON(ctx context.Context, u string, out any) bool {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return false
	}
	status, err := d.doJSON(req, out)
	return err == nil && status == http.StatusOK
}

// postJSON posts a JSON body and reads a JSON answer of status 200 or 201.
func (d *oauthDoer) postJSON(ctx context.Context, u string, body []byte, out any) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, u, bytes.NewReader(body))
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/json")
	status, err := d.doJSON(req, out)
	if err == nil && status != http.StatusOK && status != http.StatusCreated {
		err = fmt.Errorf("status %d", status)
	}
	return err
}

// doJSON sends req to the authorization server (never with the server's
// token) and decodes a JSON answer.
func (d *oauthDoer) doJSON(req *http.Request, out any) (int, error) {
	return readJSON(d.as, d.agent, req, out)
}

// challengeParams reads the auth-params of a Bearer challenge.
func challengeParams(h string) map[string]string {
	out := map[string]string{}
	for _, part := range splitParams(h) {
		k, v, ok := strings.Cut(part, "=")
		if !ok {
			continue
		}
		k = strings.ToLower(strings.TrimSpace(k))
		if i := strings.LastIndexByte(k, ' '); i >= 0 {
			k = k[i+1:]
		}
		v = strings.TrimSpace(v)
		if len(v) >= 2 && v[0] == '"' && v[len(v)-1] == '"' {
			v = strings.ReplaceAll(v[1:len(v)-1], `\"`, `"`)
		}
		out[k] = v
	}
	return out
}

// union is a and the members of b it lacks, in order.
func union(a, b []string) []string {
	out := slices.Clone(a)
	for _, s := range b {
		if !slices.Contains(out, s) {
			out = append(out, s)
		}
	}
	return out
}

// randomToken is n random bytes, base64url without padding.
func randomToken(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b)
	return base64.RawURLEncoding.EncodeToString(b)
}

// grantRefused is the authorization server's refusal of a grant (a 4xx
// answer such as invalid_grant or invalid_client): the same grant would be
// refused again.
type grantRefused struct{ error }

func (g *grantRefused) Unwrap() error { return g.error }
