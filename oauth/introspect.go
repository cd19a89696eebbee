package oauth

import (
	"bytes"
	"container/list"
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"golang.org/x/time/rate"

	"github.com/otcgo/otc"
	"github.com/otcgo/otc/internal/jsonparse"
	"github.com/otcgo/otc/internal/wire"
)

// This file is token introspection (RFC 7662): asking the authorization
// server whether a token is active, with a bounded cache of its answers.

// The defaults of [Introspection].
const (
	defaultIntrospectionTimeout = 5 * time.Second
	defaultMaxConcurrent        = 16
	defaultCacheTTL             = time.Minute
	defaultCacheEntries         = 10_000
	defaultCacheBytes           = 8 << 20
	defaultInactiveTTL          = 10 * time.Second
	defaultInactiveEntries      = 10_000
	defaultRequestsPerSecond    = 50
	// busyRetry is the Retry-After of a request refused because the
	// introspections it needed could not be made just now.
	busyRetry = time.Second
	// maxIntrospectionBytes caps an answer, which is a few hundred bytes.
	maxIntrospectionBytes = 64 << 10
	// cacheEntryOverhead is what an entry costs beside its body, counted
	// against CacheBytes.
	cacheEntryOverhead = 128
	// failureLogGap is the least time between two log lines about failed
	// introspections: an endpoint that is down would otherwise log once
	// per request.
	failureLogGap = 10 * time.Second
)

// introspector asks one authorization server about tokens.
type introspector struct {
	srv          *server
	endpoint     string // configured; "" means the metadata's
	clientID     string
	clientSecret string
	secretPost   bool
	all          bool
	timeout      time.Duration
	ttl          time.Duration
	cache        *answerCache // active answers; nil when disabled
	inactive     *answerCache // inactive answers; nil when disabled
	inactiveTTL  time.Duration
	limit        *rate.Limiter // nil for no bound
	slots        chan struct{}
	client       *http.Client
	logger       *slog.Logger
	now          func() time.Time

	mu       sync.Mutex
	inflight map[[sha256.Size]byte]*flight

	lastLog    atomic.Int64 // unix nanoseconds of the last failure logged
	suppressed atomic.Int64 // failures not logged since
}

// flight is one introspection that the requests with the same token
// share.
type flight struct {
	done chan struct{}
	ans  answer
	err  error // why no answer came: the endpoint failed
}

// answer is what the endpoint said of a token.
type answer struct {
	active bool
	body   []byte // the answer as sent, when active
	exp    time.Time
}

func newIntrospector(s *server, in *Introspection, client *http.Client, logger *slog.Logger) *introspector {
	it := &introspector{
		srv: s, endpoint: in.Endpoint, clientID: in.ClientID, clientSecret: in.ClientSecret,
		secretPost: in.ClientSecretPost, all: in.All,
		timeout: in.Timeout, ttl: in.CacheTTL,
		client: client, logger: logger, now: time.Now,
		inflight: map[[sha256.Size]byte]*flight{},
	}
	if it.timeout == 0 {
		it.timeout = defaultIntrospectionTimeout
	}
	if it.ttl == 0 {
		it.ttl = defaultCacheTTL
	}
	if it.ttl > 0 {
		entries, size := in.CacheEntries, in.CacheBytes
		if entries == 0 {
			entries = defaultCacheEntries
		}
		if size == 0 {
			size = defaultCacheBytes
		}
		it.cache = newAnswerCache(entries, size)
	}
	it.inactiveTTL = in.InactiveCacheTTL
	if it.inactiveTTL == 0 {
		it.inactiveTTL = defaultInactiveTTL
	}
	if it.inactiveTTL > 0 {
		n := in.InactiveCacheEntries
		if n == 0 {
			n = defaultInactiveEntries
		}
		it.inactive = newAnswerCache(n, n*cacheEntryOverhead)
	}
	if per := in.RequestsPerSecond; per >= 0 {
		if per == 0 {
			per = defaultRequestsPerSecond
		}
		it.limit = rate.NewLimiter(rate.Limit(per), per)
	}
	n := in.MaxConcurrent
	if n == 0 {
		n = defaultMaxConcurrent
	}
	it.slots = make(chan struct{}, n)
	return it
}

// introspect checks token by asking s's introspection endpoint, or its
// cached answer, and returns the caller's identity.
func (a *Authenticator) introspect(ctx context.Context, s *server, token string) (*otc.Identity, error) {
	it := s.intro
	key := sha256.Sum256([]byte(token))
	now := it.now()
	if _, dead := it.inactive.get(key, now); dead {
		return nil, invalidToken("The bearer token is not active: the authorization server says it has expired, been revoked or was never issued; get a new one")
	}
	body, ok := it.cache.get(key, now)
	if !ok {
		ans, err := it.ask(ctx, key, token)
		if err != nil {
			return nil, err
		}
		if !ans.active {
			return nil, invalidToken("The bearer token is not active: the authorization server says it has expired, been revoked or was never issued; get a new one")
		}
		body = ans.body
	}
	var claims map[string]any
	if err := json.Unmarshal(body, &claims); err != nil {
		// Checked when the answer came; a cached body decodes as before.
		return nil, invalidToken("The authorization server's answer about the bearer token could not be read")
	}
	if err := a.checkIntrospected(s, claims); err != nil {
		return nil, err
	}
	return identity(claims)
}

// checkIntrospected checks the members of an active answer as a JWT's
// claims are checked.
func (a *Authenticator) checkIntrospected(s *server, claims map[string]any) error {
	if iss, present := claims["iss"]; present && iss != s.issuer {
		return invalidToken("The bearer token's issuer (iss) is not the authorization server that introspected it")
	}
	if tt, _ := claims["token_type"].(string); strings.EqualFold(tt, "refresh_token") {
		return invalidToken("The bearer token is a refresh token, not an access token")
	}
	if err := a.checkAudience(claims["aud"]); err != nil {
		return err
	}
	now := time.Now()
	for _, c := range []struct {
		name    string
		refused func(t time.Time) bool
		message string
	}{
		{"exp", func(t time.Time) bool { return !now.Before(t.Add(a.leeway)) }, "The bearer token has expired: get a new one from the authorization server"},
		{"nbf", func(t time.Time) bool { return now.Add(a.leeway).Before(t) }, "The bearer token is not valid yet (nbf)"},
		{"iat", func(t time.Time) bool { return now.Add(a.leeway).Before(t) }, "The bearer token was issued in the future (iat)"},
	} {
		v, present := claims[c.name]
		if !present {
			continue
		}
		t, ok := numericDate(v)
		if !ok {
			return invalidToken(fmt.Sprintf("The authorization server's answer about the bearer token has a %s that is not a number", c.name))
		}
		if c.refused(t) {
			return invalidToken(c.message)
		}
	}
	return nil
}

// numericDate reads a NumericDate (seconds since the epoch).
func numericDate(v any) (time.Time, bool) {
	f, ok := v.(float64)
	if !ok || f < 0 || f > 1e11 {
		return time.Time{}, false
	}
	sec := int64(f)
	return time.Unix(sec, int64((f-float64(sec))*1e9)), true
}

// ask returns the endpoint's answer about token, sharing one request with
// the other requests asking about it now, and caches an active answer.
func (it *introspector) ask(ctx context.Context, key [sha256.Size]byte, token string) (answer, error) {
	it.mu.Lock()
	f, joined := it.inflight[key]
	if !joined {
		f = &flight{done: make(chan struct{})}
		it.inflight[key] = f
	}
	it.mu.Unlock()

	if !joined {
		// The request runs to its own end, whatever this caller's context
		// does, since others may be waiting for it; its time is bounded
		// all the same.
		go it.run(context.WithoutCancel(ctx), key, token, f)
	}
	select {
	case <-f.done:
	case <-ctx.Done():
		return answer{}, unavailable("The request ended before the authorization server said whether the bearer token is active: try again")
	}
	if f.err != nil {
		return answer{}, f.err
	}
	return f.ans, nil
}

// run performs one introspection and publishes its outcome.
func (it *introspector) run(ctx context.Context, key [sha256.Size]byte, token string, f *flight) {
	defer func() {
		it.mu.Lock()
		delete(it.inflight, key)
		it.mu.Unlock()
		close(f.done)
	}()
	ctx, cancel := context.WithTimeout(ctx, it.timeout)
	defer cancel()
	if it.limit != nil && !it.limit.Allow() {
		f.err = unavailable("The server has asked the authorization server about as many tokens as it may this second, so it cannot check this one now: try again shortly")
		return
	}
	select {
	case it.slots <- struct{}{}:
		defer func() { <-it.slots }()
	case <-ctx.Done():
		f.err = unavailable("The server is checking too many tokens with the authorization server at once to check this one: try again in a few seconds")
		return
	}
	endpoint, err := it.endpointURL(ctx)
	if err != nil {
		f.err = err
		return
	}
	ans, err := it.post(ctx, endpoint, token)
	if err != nil {
		it.logFailure(ctx, endpoint, err)
		f.err = unavailable("The server could not ask the authorization server whether the bearer token is active (its introspection endpoint failed, answered what it may not, or did not answer in time): try again later")
		return
	}
	f.ans = ans
	if !ans.active {
		it.inactive.put(key, nil, it.now().Add(it.inactiveTTL))
	} else {
		until := it.now().Add(it.ttl)
		if !ans.exp.IsZero() && ans.exp.Before(until) {
			until = ans.exp
		}
		it.cache.put(key, ans.body, until)
	}
}

// endpointURL returns the introspection endpoint: configured, or from
// the server's metadata, waiting (boundedly) for its first discovery.
func (it *introspector) endpointURL(ctx context.Context) (string, error) {
	if it.endpoint != "" {
		return it.endpoint, nil
	}
	d := it.srv.disc
	doc := d.doc.Load()
	if doc == nil {
		_ = it.srv.keys.Ready(ctx)
		doc = d.doc.Load()
	}
	if doc == nil {
		return "", unavailable("The server has not yet found the authorization server's introspection endpoint, so it cannot check the bearer token: try again later")
	}
	return doc.IntrospectionEndpoint, nil
}

// post sends one introspection request and reads the answer.
func (it *introspector) post(ctx context.Context, endpoint, token string) (answer, error) {
	form := url.Values{"token": {token}, "token_type_hint": {"access_token"}}
	if it.secretPost {
		form.Set("client_id", it.clientID)
		form.Set("client_secret", it.clientSecret)
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, endpoint, strings.NewReader(form.Encode()))
	if err != nil {
		return answer{}, err
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("Accept", "application/json")
	if !it.secretPost {
		// RFC 6749 §2.3.1: the id and secret are form-encoded, then
		// joined for Basic authentication.
		cred := url.QueryEscape(it.clientID) + ":" + url.QueryEscape(it.clientSecret)
		req.Header.Set("Authorization", "Basic "+base64.StdEncoding.EncodeToString([]byte(cred)))
	}
	resp, err := it.client.Do(req)
	if err != nil {
		return answer{}, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		hint := ""
		if resp.StatusCode == http.StatusUnauthorized || resp.StatusCode == http.StatusForbidden {
			hint = " (check Introspection.ClientID and ClientSecret)"
		}
		return answer{}, fmt.Errorf("the introspection endpoint answered HTTP status %d, not 200%s", resp.StatusCode, hint)
	}
	body, err := wire.ReadAnswer(resp.Body, maxIntrospectionBytes, "the answer")
	if err != nil {
		return answer{}, err
	}
	var head struct {
		Active *bool `json:"active"`
	}
	var members map[string]any
	if err := json.Unmarshal(body, &members); err != nil {
		return answer{}, fmt.Errorf("the answer is not a JSON object: %w", err)
	}
	if name := repeatedMember(body); name != "" {
		// Which of two "active" (or "scope", "sub") counts would be a
		// guess, and a parser that reads the other differently would let
		// through what this one refused: the answer is refused whole.
		return answer{}, fmt.Errorf("the answer names the member %q more than once", wire.Truncate(name, 64))
	}
	if err := json.Unmarshal(body, &head); err != nil || head.Active == nil {
		return answer{}, errors.New(`the answer has no boolean "active" member (RFC 7662 §2.2)`)
	}
	if !*head.Active {
		return answer{active: false}, nil
	}
	ans := answer{active: true, body: bytes.Clone(body)}
	if t, ok := numericDate(members["exp"]); ok {
		ans.exp = t
	}
	return ans, nil
}

// repeatedMember returns a member name that an object of a JSON text
// repeats, at any depth, or "".
func repeatedMember(body []byte) string {
	d, err := jsonparse.Parse(body)
	if err != nil {
		return ""
	}
	defer jsonparse.Release(d)
	for i := range d.Nodes {
		if d.Nodes[i].Kind == jsonparse.KindObject {
			if name := d.RepeatedName(int32(i)); name != "" {
				return name
			}
		}
	}
	return ""
}

// unavailable is the refusal of a request whose token could not be
// checked just now: 503, retryable, never a pass.
func unavailable(message string) *otc.Error {
	return &otc.Error{Code: otc.CodeUnavailable, Message: message, RetryAfter: busyRetry}
}

// logFailure logs a failed introspection, at most once per
// failureLogGap, with the number of failures left unlogged since.
func (it *introspector) logFailure(ctx context.Context, endpoint string, err error) {
	now := it.now().UnixNano()
	last := it.lastLog.Load()
	if now-last < int64(failureLogGap) || !it.lastLog.CompareAndSwap(last, now) {
		it.suppressed.Add(1)
		return
	}
	it.logger.ErrorContext(ctx, "otc/oauth: token introspection failed; the token is refused, told to try again",
		"issuer", it.srv.issuer, "endpoint", redact(endpoint), "error", err.Error(), "failures_not_logged", it.suppressed.Swap(0))
}

// answerCache holds active answers by the SHA-256 of their token (never
// the token), bounded in entries and bytes, least recently used first out.
type answerCache struct {
	mu         sync.Mutex
	entries    map[[sha256.Size]byte]*list.Element
	order      *list.List // of *cacheEntry, most recently used at the front
	size       int
	maxEntries int
	maxBytes   int
}

type cacheEntry struct {
	key   [sha256.Size]byte
	body  []byte
	until time.Time
}

func newAnswerCache(maxEntries, maxBytes int) *answerCache {
	return &answerCache{entries: map[[sha256.Size]byte]*list.Element{}, order: list.New(), maxEntries: maxEntries, maxBytes: maxBytes}
}

// get returns the cached body for key, if it is there and alive at now.
// A nil cache holds nothing.
func (c *answerCache) get(key [sha256.Size]byte, now time.Time) ([]byte, bool) {
	if c == nil {
		return nil, false
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	el, ok := c.entries[key]
	if !ok {
		return nil, false
	}
	e := el.Value.(*cacheEntry)
	if !now.Before(e.until) {
		c.remove(el)
		return nil, false
	}
	c.order.MoveToFront(el)
	return e.body, true
}

// put caches body for key until until, evicting the least recently used
// entries beyond the bounds. A body too large for the cache is not kept.
func (c *answerCache) put(key [sha256.Size]byte, body []byte, until time.Time) {
	if c == nil || len(body)+cacheEntryOverhead > c.maxBytes {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if el, ok := c.entries[key]; ok {
		c.remove(el)
	}
	c.entries[key] = c.order.PushFront(&cacheEntry{key: key, body: body, until: until})
	c.size += len(body) + cacheEntryOverhead
	for len(c.entries) > c.maxEntries || c.size > c.maxBytes {
		c.remove(c.order.Back())
	}
}

func (c *answerCache) remove(el *list.Element) {
	e := c.order.Remove(el).(*cacheEntry)
	delete(c.entries, e.key)
	c.size -= len(e.body) + cacheEntryOverhead
}

// stats returns the number of entries and their bytes, for tests.
func (c *answerCache) stats() (entries, size int) {
	if c == nil {
		return 0, 0
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.entries), c.size
}
