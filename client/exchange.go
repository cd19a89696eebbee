package client

import (
	"context"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"

	"github.com/otcgo/otc"
)

// TokenExchange is the client's OAuth 2.0 Token Exchange grant (RFC
// 8693): for the user a program acts for, it gets a token for the server
// from the server's authorization server, in exchange for the user's own
// token, so that the server sees the user and the user's token goes no
// further than the program. [Client.ExchangeToken] makes the exchange;
// the token it gives goes in a call's [CallOptions].Header.
type TokenExchange struct {
	// TokenURL is the authorization server's token endpoint. Required.
	TokenURL string
	// ClientID and ClientSecret authenticate the client to it (HTTP
	// Basic). Required.
	ClientID, ClientSecret string
	// Audience and Resource name the server to the authorization server
	// (RFC 8693's audience, RFC 8707's resource); at least one is
	// required.
	Audience, Resource string
	// Scopes are asked for; nil asks for what the server grants.
	Scopes []string
	// HTTPClient sends the requests. Nil means the client's
	// Options.HTTPClient, with its redirect rule.
	HTTPClient Doer
}

const (
	grantTokenExchange = "urn:ietf:params:oauth:grant-type:token-exchange"
	tokenTypeAccess    = "urn:ietf:params:oauth:token-type:access_token"
	// maxExchanged bounds the exchanged tokens kept.
	maxExchanged = 10_000
)

// exchanger makes a client's token exchanges and keeps what it got, per
// subject token, until shortly before it lapses.
type exchanger struct {
	cfg   TokenExchange
	http  Doer
	agent string

	mu       sync.Mutex
	cache    map[[32]byte]exchanged
	inflight map[[32]byte]*exchanging // exchanges under way, by subject
}

// exchanging is an exchange under way, which other calls with the same
// subject token wait for rather than exchange it again.
type exchanging struct {
	done  chan struct{}
	token string
	err   error
}

type exchanged struct {
	token   string
	expires time.Time
}

func newExchanger(te *TokenExchange, plain Doer, agent string) (*exchanger, error) {
	if te.TokenURL == "" || te.ClientID == "" || te.ClientSecret == "" || te.Audience == "" && te.Resource == "" {
		return nil, errors.New("otc client: Options.TokenExchange needs a TokenURL, a ClientID and ClientSecret, and an Audience or a Resource")
	}
	x := &exchanger{cfg: *te, http: withRedirectRule(te.HTTPClient), agent: agent}
	if te.HTTPClient == nil {
		x.http = plain
	}
	return x, nil
}

// ExchangeToken returns a token for the client's server in exchange for
// subject, the token of the user a call acts for, by the client's
// [TokenExchange] (Options.TokenExchange): from the authorization server
// the first time, and then, until shortly before it lapses, from what the
// client keeps (calls with the same subject at once make one exchange).
// A program sends it in the call's Header ("Authorization: Bearer …").
//
// An authorization server that cannot be reached or is failing gives an
// [*otc.Error] with CodeUnavailable, to try again later; one that refuses
// the exchange, an *otc.Error with CodeForbidden, whose message is the
// server's.
func (c *Client) ExchangeToken(ctx context.Context, subject string) (string, error) {
	x := c.exchange
	if x == nil {
		return "", errors.New("otc client: ExchangeToken needs Options.TokenExchange")
	}
	if subject == "" {
		return "", errors.New("otc client: ExchangeToken needs the user's token")
	}
	key := sha256.Sum256([]byte(subject))
	now := time.Now()
	x.mu.Lock()
	if e, ok := x.cache[key]; ok && now.Before(e.expires) {
		x.mu.Unlock()
		return e.token, nil
	}
	if w, ok := x.inflight[key]; ok {
		x.mu.Unlock()
		select {
		case <-w.done:
			return w.token, w.err
		case <-ctx.Done():
			return "", ctx.Err()
		}
	}
	if x.inflight == nil {
		x.inflight = map[[32]byte]*exchanging{}
	}
	w := &exchanging{done: make(chan struct{})}
	x.inflight[key] = w
	x.mu.Unlock()
	w.token, w.err = x.exchange(ctx, subject, key, now)
	x.mu.Lock()
	delete(x.inflight, key)
	x.mu.Unlock()
	close(w.done)
	return w.token, w.err
}

// exchange asks the authorization server, and keeps what it gives.
func (x *exchanger) exchange(ctx context.Context, subject string, key [32]byte, now time.Time) (string, error) {
	form := url.Values{
		"grant_type":           {grantTokenExchange},
		"subject_token":        {subject},
		"subject_token_type":   {tokenTypeAccess},
		"requested_token_type": {tokenTypeAccess},
	}
	if x.cfg.Audience != "" {
		form.Set("audience", x.cfg.Audience)
	}
	if x.cfg.Resource != "" {
		form.Set("resource", x.cfg.Resource)
	}
	if len(x.cfg.Scopes) > 0 {
		form.Set("scope", strings.Join(x.cfg.Scopes, " "))
	}
	reg := &registration{clientID: x.cfg.ClientID, secret: x.cfg.ClientSecret, method: "client_secret_basic"}
	unavailable := func(err error) error {
		return &otc.Error{Code: otc.CodeUnavailable, Message: "token exchange at " + x.cfg.TokenURL + ": " + err.Error(), RetryAfter: time.Second}
	}
	ans, status, err := tokenRequest(ctx, x.http, x.agent, x.cfg.TokenURL, reg, form, nil)
	switch {
	case err != nil:
		return "", unavailable(err)
	case status >= 500 || status == http.StatusTooManyRequests:
		return "", unavailable(fmt.Errorf("status %d %s", status, truncate(ans.Error, 64)))
	case status != http.StatusOK || ans.AccessToken == "":
		return "", &otc.Error{Code: otc.CodeForbidden, Message: fmt.Sprintf("token exchange at %s: status %d, %s %s", x.cfg.TokenURL, status,
			truncate(ans.Error, 64), truncate(ans.Description, 200))}
	case !strings.EqualFold(ans.TokenType, "bearer") && !strings.EqualFold(ans.TokenType, "N_A"):
		return "", unavailable(fmt.Errorf("the issued token is of type %q, not a bearer token", truncate(ans.TokenType, 32)))
	}
	ttl := time.Duration(ans.ExpiresIn) * time.Second
	if ans.ExpiresIn <= 0 || ttl > time.Hour {
		ttl = time.Hour
	}
	// Kept until a little before it lapses, so that a call never carries
	// one that expires on the way.
	keep := ttl - min(30*time.Second, ttl/4)
	x.mu.Lock()
	defer x.mu.Unlock()
	if x.cache == nil {
		x.cache = map[[32]byte]exchanged{}
	}
	if len(x.cache) >= maxExchanged {
		for k, e := range x.cache {
			if now.After(e.expires) || len(x.cache) >= maxExchanged {
				delete(x.cache, k)
			}
			if len(x.cache) < maxExchanged*9/10 {
				break
			}
		}
	}
	x.cache[key] = exchanged{token: ans.AccessToken, expires: now.Add(keep)}
	return ans.AccessToken, nil
}

// tokenAnswer is a token endpoint's answer (RFC 6749 §5).
type tokenAnswer struct {
	AccessToken  string `json:"access_token"`
	TokenType    string `json:"token_type"`
	RefreshToken string `json:"refresh_token"`
	Scope        string `json:"scope"`
	ExpiresIn    int64  `json:"expires_in"`
	// IssuedTokenType is a token exchange's (RFC 8693 §2.2.1).
	IssuedTokenType string `json:"issued_token_type"`
	Error           string `json:"error"`
	Description     string `json:"error_description"`
}

// tokenRequest posts form to a token endpoint, the client authenticated
// as reg says, as every grant of the client's does (authorization code,
// client credentials, refresh, token exchange), and reads the answer.
//
// With dp, the request carries a DPoP proof (RFC 9449 §5), and a server
// that answers use_dpop_nonce with a nonce is asked once more with it
// (§8). The request is bounded by tokenTimeout.
func tokenRequest(ctx context.Context, d Doer, agent, tokenURL string, reg *registration, form url.Values, dp *dpopKey) (*tokenAnswer, int, error) {
	ctx, cancel := context.WithTimeout(ctx, tokenTimeout)
	defer cancel()
	target, err := url.Parse(tokenURL)
	if err != nil {
		return nil, 0, err
	}
	switch reg.method {
	case "client_secret_post":
		form.Set("client_id", reg.clientID)
		form.Set("client_secret", reg.secret)
	case "private_key_jwt":
		if reg.clientID != "" {
			form.Set("client_id", reg.clientID)
		}
		form.Set("client_assertion_type", assertionTypeJWT)
	case "client_secret_basic":
	default:
		if reg.clientID != "" {
			form.Set("client_id", reg.clientID)
		}
	}
	for try := 0; ; try++ {
		if reg.method == "private_key_jwt" {
			// A fresh assertion for each try: a server takes each once.
			a, err := clientAssertion(reg)
			if err != nil {
				return nil, 0, err
			}
			form.Set("client_assertion", a)
		}
		body := form.Encode()
		req, err := http.NewRequestWithContext(ctx, http.MethodPost, tokenURL, strings.NewReader(body))
		if err != nil {
			return nil, 0, err
		}
		if reg.method == "client_secret_basic" {
			req.SetBasicAuth(url.QueryEscape(reg.clientID), url.QueryEscape(reg.secret))
		}
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		if dp != nil {
			proof, err := dp.proof(http.MethodPost, target, "")
			if err != nil {
				return nil, 0, err
			}
			req.Header.Set("DPoP", proof)
		}
		var ans tokenAnswer
		status, header, err := readJSONHeader(d, agent, req, &ans)
		if dp != nil && header != nil {
			dp.learn(target, header.Get("DPoP-Nonce"))
			if try == 0 && status == http.StatusBadRequest && ans.Error == "use_dpop_nonce" && header.Get("DPoP-Nonce") != "" {
				continue
			}
		}
		return &ans, status, err
	}
}

// tokenTimeout bounds a token request, so that an authorization server or
// identity provider that answers slowly fails the request that waits on
// it rather than holding it.
const tokenTimeout = 30 * time.Second

// maxOAuthDocument bounds a metadata document or token answer.
const maxOAuthDocument = 1 << 20

// readJSON sends req to an authorization server (never with the
// server's token), as the client, and decodes a JSON answer.
func readJSON(d Doer, agent string, req *http.Request, out any) (int, error) {
	status, _, err := readJSONHeader(d, agent, req, out)
	return status, err
}

// readJSONHeader is readJSON that returns the answer's header too.
func readJSONHeader(d Doer, agent string, req *http.Request, out any) (int, http.Header, error) {
	req.Header.Set("User-Agent", agent)
	req.Header.Set("Accept", "application/json")
	resp, err := roundTrip(d, req, "")
	if err != nil {
		return 0, nil, err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(io.LimitReader(resp.Body, maxOAuthDocument+1))
	if err != nil {
		return 0, resp.Header, err
	}
	if len(b) > maxOAuthDocument {
		return 0, resp.Header, fmt.Errorf("the answer is over %d bytes", maxOAuthDocument)
	}
	if json.Unmarshal(b, out) != nil && resp.StatusCode == http.StatusOK {
		return resp.StatusCode, resp.Header, fmt.Errorf("the answer is not JSON: %q", b[:min(len(b), 120)])
	}
	return resp.StatusCode, resp.Header, nil
}
