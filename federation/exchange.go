package federation

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
	"github.com/otcgo/otc/client"
	"github.com/otcgo/otc/internal/wire"
)

// TokenExchange gets, for each caller, a token for the upstream in
// exchange for the caller's own (OAuth 2.0 Token Exchange, RFC 8693): the
// upstream sees the caller, through a token its authorization server
// issued for it, and the caller's token never leaves the gateway.
type TokenExchange struct {
	// TokenURL is the authorization server's token endpoint. Required.
	TokenURL string
	// ClientID and ClientSecret authenticate the gateway to it (HTTP
	// Basic). Required.
	ClientID, ClientSecret string
	// Audience and Resource name the upstream to the authorization server
	// (RFC 8693's audience, RFC 8707's resource); at least one is
	// required.
	Audience, Resource string
	// Scopes are asked for; nil asks for what the server grants.
	Scopes []string
	// HTTPClient sends the requests. Nil means the federation's.
	HTTPClient client.Doer
}

const (
	grantTokenExchange = "urn:ietf:params:oauth:grant-type:token-exchange"
	tokenTypeAccess    = "urn:ietf:params:oauth:token-type:access_token"
	// maxExchanged bounds the exchanged tokens kept; maxExchangeBody the
	// token endpoint's answer read.
	maxExchanged    = 10_000
	maxExchangeBody = 64 << 10
)

// exchanger exchanges callers' tokens and keeps what it got, per caller
// token, until shortly before it expires.
type exchanger struct {
	cfg  TokenExchange
	http client.Doer

	mu       sync.Mutex
	cache    map[[32]byte]exchanged
	inflight map[[32]byte]*exchanging // exchanges under way, by subject
}

// exchanging is an exchange under way, which other calls with the same
// caller token wait for rather than exchange the token again.
type exchanging struct {
	done  chan struct{}
	token string
	err   error
}

type exchanged struct {
	token   string
	expires time.Time
}

// token returns a token for the upstream in exchange for subject.
func (x *exchanger) token(ctx context.Context, subject, upstream string) (string, error) {
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
	w.token, w.err = x.exchange(ctx, subject, upstream, key, now)
	x.mu.Lock()
	delete(x.inflight, key)
	x.mu.Unlock()
	close(w.done)
	return w.token, w.err
}

// exchange asks the authorization server, and keeps what it gives.
func (x *exchanger) exchange(ctx context.Context, subject, upstream string, key [32]byte, now time.Time) (string, error) {
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
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, x.cfg.TokenURL, strings.NewReader(form.Encode()))
	if err != nil {
		return "", err
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("Accept", "application/json")
	req.SetBasicAuth(url.QueryEscape(x.cfg.ClientID), url.QueryEscape(x.cfg.ClientSecret))
	unavailable := func(err error) error {
		return &otc.ToolError{Message: fmt.Sprintf("The tool's server (%s) could not be given your credentials just now; try again.", upstream),
			CanRetry: true, RetryAfter: time.Second, Err: err,
			DeveloperMessage: "federation: upstream " + upstream + ": token exchange at " + x.cfg.TokenURL + ": " + err.Error()}
	}
	resp, err := x.http.Do(req)
	if err != nil {
		return "", unavailable(err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, maxExchangeBody))
	if err != nil {
		return "", unavailable(err)
	}
	var out struct {
		AccessToken     string `json:"access_token"`
		IssuedTokenType string `json:"issued_token_type"`
		TokenType       string `json:"token_type"`
		ExpiresIn       int64  `json:"expires_in"`
		Error           string `json:"error"`
		Description     string `json:"error_description"`
	}
	_ = json.Unmarshal(body, &out)
	switch {
	case resp.StatusCode >= 500 || resp.StatusCode == http.StatusTooManyRequests:
		return "", unavailable(fmt.Errorf("status %d %s", resp.StatusCode, out.Error))
	case resp.StatusCode != http.StatusOK || out.AccessToken == "":
		return "", &otc.ToolError{
			Message: fmt.Sprintf("Your credentials cannot be used with the tool's server (%s): the authorization server would not exchange them.", upstream),
			DeveloperMessage: fmt.Sprintf("federation: upstream %s: token exchange at %s: status %d, %s %s", upstream, x.cfg.TokenURL, resp.StatusCode,
				out.Error, wire.Truncate(out.Description, 200)),
		}
	case !strings.EqualFold(out.TokenType, "bearer") && !strings.EqualFold(out.TokenType, "N_A"):
		return "", unavailable(fmt.Errorf("the issued token is of type %q, not a bearer token", out.TokenType))
	}
	ttl := time.Duration(out.ExpiresIn) * time.Second
	if out.ExpiresIn <= 0 || ttl > time.Hour {
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
	x.cache[key] = exchanged{token: out.AccessToken, expires: now.Add(keep)}
	return out.AccessToken, nil
}

// callerToken is the bearer token the call came with, or an error that
// says the tool needs one.
func callerToken(ctx context.Context, need string) (string, error) {
	refuse := &otc.ToolError{Message: "This tool needs a token issued for its server; the call did not carry one.",
		DeveloperMessage: "federation: " + need}
	r := otc.HTTPRequest(ctx)
	if r == nil {
		return "", refuse
	}
	scheme, tok, ok := strings.Cut(r.Header.Get("Authorization"), " ")
	if !ok || !strings.EqualFold(scheme, "Bearer") || tok == "" {
		return "", refuse
	}
	return tok, nil
}

var errNoExchange = errors.New("federation: token exchange needs token_url, client_id, client_secret and an audience or a resource")
