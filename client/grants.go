package client

import (
	"context"
	"crypto"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/otcgo/otc/internal/jose"
)

// This file holds the OAuth grants without a user that agents use as
// workloads and in enterprises: client authentication by a signed JWT
// (RFC 7523 §2.2), the JWT bearer grant of workload identity federation
// (RFC 7523 §2.1), enterprise-managed authorization (an identity
// assertion from the enterprise's identity provider, exchanged for a
// token), and DPoP's proofs of possession (RFC 9449).

// Enterprise is where the client gets an identity assertion for the
// user, in MCP's enterprise-managed authorization: the enterprise's
// identity provider (IdP), to which the user signed in. The client
// exchanges the user's ID token there (RFC 8693 token exchange) for an
// Identity Assertion JWT Authorization Grant (ID-JAG) whose audience is
// the server's authorization server, and presents that as a JWT bearer
// grant (RFC 7523): the IdP decides, by the enterprise's policy, whether
// the user may use the server, and no browser step is needed.
type Enterprise struct {
	// TokenURL is the IdP's token endpoint. Required.
	TokenURL string
	// ClientID identifies the client to the IdP. Required.
	ClientID string
	// ClientSecret authenticates it there (HTTP Basic); empty for a
	// public client, which sends its ClientID alone.
	ClientSecret string
	// IDToken returns the user's ID token from the IdP, got when the
	// user signed in (for example by the authorization-code flow at the
	// IdP, or from the host's single sign-on). Called for each grant.
	// Required.
	IDToken func(ctx context.Context) (string, error)
}

const (
	grantJWTBearer    = "urn:ietf:params:oauth:grant-type:jwt-bearer"
	assertionTypeJWT  = "urn:ietf:params:oauth:client-assertion-type:jwt-bearer"
	tokenTypeIDToken  = "urn:ietf:params:oauth:token-type:id_token"
	tokenTypeIDJAG    = "urn:ietf:params:oauth:token-type:id-jag"
	assertionLifetime = time.Minute
	// maxTokenFile bounds a token file TokenFile reads.
	maxTokenFile = 64 << 10
)

// ReadPrivateKey reads a private key from a PEM file, for
// [OAuth].ClientKey or DPoPKey: PKCS #8 ("PRIVATE KEY"), SEC 1 ("EC
// PRIVATE KEY") or PKCS #1 ("RSA PRIVATE KEY"); an ECDSA key on P-256,
// P-384 or P-521, an RSA key of 2,048 bits or more, or an Ed25519 key.
func ReadPrivateKey(path string) (crypto.Signer, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("otc client: reading the private key: %w", err)
	}
	k, err := jose.ParsePrivateKey(data)
	if err != nil {
		return nil, fmt.Errorf("otc client: the private key in %s: %w", path, err)
	}
	return k, nil
}

// TokenFile is an [OAuth].Assertion (or an [Enterprise].IDToken) that
// reads the token from a file each time it is asked, as platforms keep
// a workload's identity token fresh in a file (a Kubernetes projected
// service account token, AWS_WEB_IDENTITY_TOKEN_FILE, a CI system's OIDC
// token): the file's content, white space trimmed, at most 64 KiB.
func TokenFile(path string) func(context.Context) (string, error) {
	return func(context.Context) (string, error) {
		f, err := os.Open(path)
		if err != nil {
			return "", err
		}
		defer f.Close()
		b, err := io.ReadAll(io.LimitReader(f, maxTokenFile+1))
		if err != nil {
			return "", err
		}
		if len(b) > maxTokenFile {
			return "", fmt.Errorf("the token file %s is over %d bytes", path, maxTokenFile)
		}
		t := strings.TrimSpace(string(b))
		if t == "" {
			return "", fmt.Errorf("the token file %s is empty", path)
		}
		return t, nil
	}
}

// check says what a configuration lacks.
func (o *OAuth) check() error {
	grants := 0
	for _, set := range []bool{o.Authorize != nil, o.Enterprise != nil, o.Assertion != nil} {
		if set {
			grants++
		}
	}
	switch {
	case grants > 1:
		return errors.New("otc client: Options.OAuth takes one of Authorize, Enterprise and Assertion")
	case grants == 0 && o.ClientSecret == "" && o.ClientKey == nil:
		return errors.New("otc client: Options.OAuth needs Authorize (the authorization-code flow), Enterprise or Assertion (JWT bearer grants), or a ClientSecret or ClientKey (client credentials)")
	case o.ClientSecret != "" && o.ClientKey != nil:
		return errors.New("otc client: Options.OAuth takes a ClientSecret or a ClientKey, not both")
	case o.ClientKey != nil && o.ClientID == "":
		return errors.New("otc client: Options.OAuth.ClientKey needs the ClientID the authorization server knows its public key by")
	case o.Authorize != nil && o.RedirectURL == "":
		return errors.New("otc client: Options.OAuth.Authorize needs a RedirectURL")
	}
	if o.Issuer == "" {
		// Credentials and assertions go to the authorization server they
		// were made for alone.
		for what, set := range map[string]bool{"ClientSecret": o.ClientSecret != "", "ClientKey": o.ClientKey != nil, "Assertion": o.Assertion != nil, "Enterprise": o.Enterprise != nil} {
			if set {
				return fmt.Errorf("otc client: Options.OAuth.%s needs Issuer, the authorization server the client is registered with: what it proves goes to no other", what)
			}
		}
	}
	if e := o.Enterprise; e != nil {
		if e.TokenURL == "" || e.ClientID == "" || e.IDToken == nil {
			return errors.New("otc client: Options.OAuth.Enterprise needs the IdP's TokenURL, the client's ClientID there and IDToken")
		}
		if o.ClientID == "" || o.ClientSecret == "" && o.ClientKey == nil {
			return errors.New("otc client: Options.OAuth.Enterprise needs a ClientID and a ClientSecret or ClientKey, with which the client authenticates at the server's authorization server")
		}
	}
	if o.ClientKey != nil {
		if _, err := jose.Alg(o.ClientKey); err != nil {
			return fmt.Errorf("otc client: Options.OAuth.ClientKey: %w", err)
		}
	}
	return nil
}

// clientAssertion is a JWT that authenticates the client (RFC 7523 §2.2,
// §3): issued by and about the client, for the authorization server's
// issuer, living a minute, with an id of its own.
func clientAssertion(reg *registration) (string, error) {
	alg, err := jose.Alg(reg.key, reg.algs...)
	if err != nil {
		return "", err
	}
	if len(reg.algs) > 0 && !slices.Contains(reg.algs, alg) {
		return "", fmt.Errorf("the authorization server takes client assertions signed with %s, not %s (the key's algorithm)", strings.Join(reg.algs, ", "), alg)
	}
	now := time.Now()
	header := map[string]any{"typ": "JWT"}
	if reg.kid != "" {
		header["kid"] = reg.kid
	}
	return jose.Sign(reg.key, alg, header, map[string]any{
		"iss": reg.clientID,
		"sub": reg.clientID,
		"aud": reg.issuer,
		"iat": now.Unix(),
		"exp": now.Add(assertionLifetime).Unix(),
		"jti": randomToken(16),
	})
}

// identityAssertion exchanges the user's ID token at the enterprise's IdP
// for an ID-JAG for the authorization server meta describes and the
// resource and scope of form.
func (d *oauthDoer) identityAssertion(ctx context.Context, meta *serverMeta, form url.Values) (string, error) {
	e := d.o.Enterprise
	id, err := e.IDToken(ctx)
	if err != nil {
		return "", fmt.Errorf("the user's ID token (OAuth.Enterprise.IDToken): %w", err)
	}
	if id == "" {
		return "", errors.New("the user's ID token (OAuth.Enterprise.IDToken) is empty")
	}
	x := url.Values{
		"grant_type":           {grantTokenExchange},
		"requested_token_type": {tokenTypeIDJAG},
		"subject_token":        {id},
		"subject_token_type":   {tokenTypeIDToken},
		"audience":             {meta.Issuer},
		"resource":             {form.Get("resource")},
	}
	if s := form.Get("scope"); s != "" {
		x.Set("scope", s)
	}
	reg := &registration{clientID: e.ClientID, secret: e.ClientSecret, method: "none"}
	if e.ClientSecret != "" {
		reg.method = "client_secret_basic"
	}
	ans, status, err := tokenRequest(ctx, d.as, d.agent, e.TokenURL, reg, x, nil)
	switch {
	case err != nil:
		return "", fmt.Errorf("the identity provider's token exchange at %s: %w", e.TokenURL, err)
	case status != http.StatusOK || ans.AccessToken == "":
		return "", fmt.Errorf("the identity provider refused the token exchange at %s: status %d: %s %s", e.TokenURL, status, truncate(ans.Error, 64), truncate(ans.Description, 256))
	case ans.IssuedTokenType != tokenTypeIDJAG:
		return "", fmt.Errorf("the identity provider at %s issued a token of type %q, not an identity assertion (%s)", e.TokenURL, truncate(ans.IssuedTokenType, 64), tokenTypeIDJAG)
	}
	return ans.AccessToken, nil
}

// dpopKey is the key a client binds its tokens to, and the nonces the
// servers it talks to gave it.
type dpopKey struct {
	key crypto.Signer
	alg string
	jwk map[string]any

	mu     sync.Mutex
	nonces map[string]string // by origin
}

// maxNonces bounds the origins whose nonces a client keeps.
const maxNonces = 64

func newDPoPKey(key crypto.Signer) (*dpopKey, error) {
	if key == nil {
		k, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
		if err != nil {
			return nil, err
		}
		key = k
	}
	alg, err := jose.Alg(key)
	if err != nil {
		return nil, err
	}
	jwk, err := jose.PublicJWK(key.Public())
	if err != nil {
		return nil, err
	}
	return &dpopKey{key: key, alg: alg, jwk: jwk, nonces: map[string]string{}}, nil
}

// fits says whether the authorization server takes proofs of the key's
// algorithm, where it lists those it takes.
func (k *dpopKey) fits(m *serverMeta) error {
	if len(m.DPoPSigningAlgs) > 0 && !slices.Contains(m.DPoPSigningAlgs, k.alg) {
		return fmt.Errorf("the authorization server %s takes DPoP proofs signed with %s, not %s (the DPoP key's algorithm)",
			m.Issuer, strings.Join(m.DPoPSigningAlgs, ", "), k.alg)
	}
	return nil
}

// proof is a DPoP proof for a request of method to u (RFC 9449 §4.2):
// fresh (its own jti, iat now), for u without its query and fragment,
// with the hash of the access token it goes with (ath), and the nonce
// u's origin gave last.
func (k *dpopKey) proof(method string, u *url.URL, access string) (string, error) {
	htu := *u
	htu.RawQuery, htu.Fragment, htu.RawFragment, htu.User = "", "", "", nil
	claims := map[string]any{
		"jti": randomToken(16),
		"htm": method,
		"htu": htu.String(),
		"iat": time.Now().Unix(),
	}
	if access != "" {
		sum := sha256.Sum256([]byte(access))
		claims["ath"] = base64.RawURLEncoding.EncodeToString(sum[:])
	}
	k.mu.Lock()
	if n := k.nonces[origin(u.String())]; n != "" {
		claims["nonce"] = n
	}
	k.mu.Unlock()
	return jose.Sign(k.key, k.alg, map[string]any{"typ": "dpop+jwt", "jwk": k.jwk}, claims)
}

// learn keeps the nonce u's origin gave (a DPoP-Nonce header), for the
// proofs that follow.
func (k *dpopKey) learn(u *url.URL, nonce string) {
	if nonce == "" || len(nonce) > 1024 {
		return
	}
	o := origin(u.String())
	k.mu.Lock()
	defer k.mu.Unlock()
	if _, known := k.nonces[o]; !known && len(k.nonces) >= maxNonces {
		clear(k.nonces)
	}
	k.nonces[o] = nonce
}
