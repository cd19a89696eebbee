package a2a

import (
	"bytes"
	"crypto"
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/elliptic"
	"crypto/rsa"
	"crypto/sha256"
	"crypto/x509"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"

	"github.com/MicahParks/jwkset"
	"github.com/golang-jwt/jwt/v5"

	"github.com/otcgo/otc"
	"github.com/otcgo/otc/internal/netguard"
	"github.com/otcgo/otc/internal/wire"
	"github.com/otcgo/otc/tasks"
)

// This file delivers push notifications: each change of a task's state
// (created, asking, working again, ended, cancelled) is posted to each of
// its webhooks by the replica that made the change, so that replicas
// sharing a task store deliver each change once. A webhook's deliveries
// go one at a time, in order; past maxLaneWaiting waiting behind a slow
// webhook, the oldest waiting is dropped (each carries the whole task, so
// the newest says all), and a delivery that failed is not tried again
// once a newer one waits.
//
// What one caller can make the agent spend is its share: the webhooks
// with deliveries pending (MaxPending) are shared out, a tenth at most to
// one caller and a tenth to one webhook host, and the posts under way
// (MaxInFlight) too, an eighth at most to one host, so that slow webhooks
// of a few callers cannot take the others' place. A post's answer costs
// little: its headers are bounded (netguard's transport) and its body
// read up to maxPushAnswer.

// jwksPath is where the handler publishes the keys that sign deliveries.
const jwksPath = "/.well-known/jwks.json"

// pusher delivers a handler's push notifications.
type pusher struct {
	h           *Handler
	guard       netguard.Guard
	client      *http.Client
	signer      *pushSigner // nil: deliveries are not signed
	attempts    int
	maxPerTask  int
	maxPending  int
	maxInFlight int
	// backoff is the first wait between tries (tests shorten it).
	backoff time.Duration

	mu      sync.Mutex
	lanes   map[string]*pushLane // by task id and configuration id
	byOwner map[string]int       // lanes by the caller of their task
	byHost  map[string]int       // lanes by webhook host
	posting map[string]int       // posts under way by webhook host
	posts   int                  // posts under way
	slot    *sync.Cond           // signalled when a post ends
}

// pushLane is one webhook's deliveries waiting behind the one under way
// (its goroutine runs while the lane exists).
type pushLane struct {
	waiting     []*pushDelivery
	owner, host string
}

// maxLaneWaiting bounds the deliveries waiting for one webhook.
const maxLaneWaiting = 8

// maxPushAnswer bounds what is read of a webhook's answer.
const maxPushAnswer = 4 << 10

// pushShare is how many shares the pending webhooks are cut into: one
// caller, or one webhook host, holds at most one; and hostPosts how many
// the posts under way are cut into per host.
const (
	pushShare = 10
	hostPosts = 8
)

// pushDelivery is one post of a task's state to a webhook.
type pushDelivery struct {
	cfg    pushConfig
	taskID string
	owner  string // the caller of the task
	body   []byte
}

// newPusher returns the pusher of a handler with push notifications, nil
// without (or with a task store that keeps no webhooks).
func newPusher(h *Handler, opts *PushOptions, store tasks.Store) *pusher {
	if opts == nil {
		return nil
	}
	if _, ok := store.(tasks.WebhookStore); !ok {
		h.logger.Warn("a2a: Options.Push is set, but the task store keeps no webhooks (tasks.WebhookStore): push notifications are not served")
		return nil
	}
	p := &pusher{h: h, guard: netguard.Guard{Allowed: opts.AllowedNetworks, Lookup: opts.lookup},
		attempts: opts.Attempts, maxPerTask: opts.MaxPerTask, maxPending: opts.MaxPending,
		maxInFlight: opts.MaxInFlight, backoff: 500 * time.Millisecond,
		lanes: map[string]*pushLane{}, byOwner: map[string]int{}, byHost: map[string]int{}, posting: map[string]int{}}
	p.slot = sync.NewCond(&p.mu)
	if p.attempts <= 0 {
		p.attempts = DefaultPushAttempts
	}
	if p.maxPerTask <= 0 {
		p.maxPerTask = DefaultMaxPushPerTask
	}
	if p.maxPending <= 0 {
		p.maxPending = DefaultMaxPushPending
	}
	if p.maxInFlight <= 0 {
		p.maxInFlight = DefaultMaxPushInFlight
	}
	timeout := opts.Timeout
	if timeout <= 0 {
		timeout = DefaultPushTimeout
	}
	p.client = &http.Client{Transport: p.guard.Transport(timeout), Timeout: timeout,
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	if opts.SigningKey != nil {
		if h.opts.URL == "" {
			panic("a2a: PushOptions.SigningKey needs Options.URL, the agent's public URL: a signed delivery names it as its issuer, which no request's Host header may choose")
		}
		s, err := newPushSigner(opts.SigningKey, strings.TrimSuffix(h.opts.URL, "/"))
		if err != nil {
			panic("a2a: PushOptions.SigningKey: " + err.Error())
		}
		p.signer = s
	}
	return p
}

// changed is the runner's taskrun.RunnerOptions.Changed (and the
// cancellation's): it queues a delivery of t to each of its webhooks.
func (h *Handler) changed(t *tasks.Task) {
	p := h.push
	if p == nil || len(t.Webhooks) == 0 {
		return
	}
	var bodies [2][]byte // by dialect
	for _, w := range t.Webhooks {
		var cfg pushConfig
		if json.Unmarshal(w.Config, &cfg) != nil {
			continue // written by this package
		}
		d := v10
		if cfg.V03 {
			d = v03
		}
		if bodies[d] == nil {
			task := h.taskState(d, t, "")
			if d == v03 {
				bodies[d] = appendTask(nil, task)
			} else {
				bodies[d] = append(appendTask([]byte(`{"task":`), task), '}')
			}
		}
		p.enqueue(&pushDelivery{cfg: cfg, taskID: t.ID, owner: t.Owner, body: bodies[d]})
	}
}

// enqueue queues d behind its webhook's deliveries, or starts its lane
// when the pending webhooks, its caller's share of them and its host's
// leave room.
func (p *pusher) enqueue(d *pushDelivery) {
	key := d.taskID + "\x00" + d.cfg.ID
	p.mu.Lock()
	defer p.mu.Unlock()
	if l := p.lanes[key]; l != nil {
		if len(l.waiting) == maxLaneWaiting {
			l.waiting = append(l.waiting[:0], l.waiting[1:]...)
		}
		l.waiting = append(l.waiting, d)
		return
	}
	host := webhookHost(d.cfg.URL)
	share := max(p.maxPending/pushShare, 1)
	full := ""
	switch {
	case len(p.lanes) >= p.maxPending:
		full = "too many webhooks have deliveries pending"
	case p.byOwner[d.owner] >= share:
		full = "the task's caller has its share of the webhooks with deliveries pending"
	case p.byHost[host] >= share:
		full = "the webhook's host has its share of the webhooks with deliveries pending"
	}
	if full != "" {
		p.h.logger.Warn("a2a: a push notification was dropped: "+full,
			slog.String("task", d.taskID), slog.String("config", wire.Truncate(d.cfg.ID, 64)), slog.Int("max_pending", p.maxPending))
		return
	}
	l := &pushLane{waiting: []*pushDelivery{d}, owner: d.owner, host: host}
	p.lanes[key] = l
	p.byOwner[d.owner]++
	p.byHost[host]++
	go p.run(key, l)
}

// run delivers lane l's deliveries until none waits.
func (p *pusher) run(key string, l *pushLane) {
	for {
		p.mu.Lock()
		if len(l.waiting) == 0 {
			delete(p.lanes, key)
			decrement(p.byOwner, l.owner)
			decrement(p.byHost, l.host)
			p.mu.Unlock()
			return
		}
		d := l.waiting[0]
		l.waiting = l.waiting[1:]
		p.mu.Unlock()
		p.deliver(l, d)
	}
}

// decrement takes one from m[k], removing the key at zero.
func decrement(m map[string]int, k string) {
	if m[k]--; m[k] <= 0 {
		delete(m, k)
	}
}

// acquire waits for a post to host to be let under way: fewer than
// maxInFlight in all, and fewer than its host's share.
func (p *pusher) acquire(host string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	for p.posts >= p.maxInFlight || p.posting[host] >= max(p.maxInFlight/hostPosts, 1) {
		p.slot.Wait()
	}
	p.posts++
	p.posting[host]++
}

// release ends a post to host.
func (p *pusher) release(host string) {
	p.mu.Lock()
	p.posts--
	decrement(p.posting, host)
	p.mu.Unlock()
	p.slot.Broadcast()
}

// superseded reports whether a newer delivery waits in l.
func (p *pusher) superseded(l *pushLane) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	return len(l.waiting) > 0
}

// deliver posts d, trying again with backoff, until it is taken, cannot
// be, or a newer delivery waits; it logs a delivery it gives up on.
func (p *pusher) deliver(l *pushLane, d *pushDelivery) {
	var err error
	for attempt := 1; ; attempt++ {
		var wait time.Duration
		var final bool
		p.acquire(l.host)
		wait, final, err = p.post(d)
		p.release(l.host)
		if err == nil {
			return
		}
		if final || attempt >= p.attempts || p.superseded(l) {
			break
		}
		backoff := min(p.backoff<<min(attempt-1, 16), 30*time.Second) // the shift bounded: Attempts may be large
		if wait > 0 && wait < backoff {
			backoff = wait
		}
		time.Sleep(backoff)
		if p.superseded(l) {
			return
		}
	}
	if p.superseded(l) {
		return // the newer delivery says more
	}
	// The task and the configuration name the webhook; its URL, whose
	// path and query may hold a secret, is left out (of the error too).
	if ue, ok := errors.AsType[*url.Error](err); ok {
		err = ue.Err
	}
	p.h.logger.Warn("a2a: a push notification could not be delivered and was dropped",
		slog.String("task", d.taskID), slog.String("config", wire.Truncate(d.cfg.ID, 64)), slog.String("error", err.Error()))
}

// webhookHost is the host name of a webhook URL (without its port, so
// that one host's ports share its share).
func webhookHost(u string) string {
	p, err := url.Parse(u)
	if err != nil {
		return u // checked when it was given: cannot be
	}
	return strings.ToLower(p.Hostname())
}

// post posts d once. It returns nil when the webhook took it (a 2xx);
// otherwise the error, with how long the webhook asked to wait (429 and
// 503's Retry-After), and whether trying again is pointless (an address
// refused, a 4xx other than 408 and 429, a redirect).
func (p *pusher) post(d *pushDelivery) (time.Duration, bool, error) {
	req, err := http.NewRequest(http.MethodPost, d.cfg.URL, bytes.NewReader(d.body))
	if err != nil {
		return 0, true, err
	}
	req.Header.Set("Content-Type", "application/a2a+json")
	req.Header.Set("User-Agent", "otc-a2a-push")
	if !d.cfg.V03 {
		req.Header.Set("A2A-Version", Version10)
	}
	if d.cfg.Token != "" {
		// The header each of the two official SDKs reads.
		req.Header.Set("A2A-Notification-Token", d.cfg.Token)
		req.Header.Set("X-A2A-Notification-Token", d.cfg.Token)
	}
	switch {
	case d.cfg.Credentials != "":
		req.Header.Set("Authorization", d.cfg.Scheme+" "+d.cfg.Credentials)
	case p.signer != nil:
		tok, err := p.signer.sign(d)
		if err != nil {
			return 0, true, fmt.Errorf("signing the delivery: %w", err)
		}
		req.Header.Set("Authorization", "Bearer "+tok)
	}
	resp, err := p.client.Do(req)
	if err != nil {
		return 0, errors.Is(err, netguard.ErrBlocked), err
	}
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, maxPushAnswer))
	_ = resp.Body.Close()
	switch code := resp.StatusCode; {
	case code >= 200 && code < 300:
		return 0, false, nil
	case code == http.StatusTooManyRequests || code == http.StatusServiceUnavailable:
		return wire.RetryAfter(resp.Header.Get("Retry-After"), time.Now()), false, fmt.Errorf("the webhook answered %d", code)
	case code == http.StatusRequestTimeout || code >= 500:
		return 0, false, fmt.Errorf("the webhook answered %d", code)
	case code >= 300 && code < 400:
		return 0, true, fmt.Errorf("the webhook answered %d (redirects are not followed)", code)
	default:
		return 0, true, fmt.Errorf("the webhook answered %d", code)
	}
}

// pushSigner signs deliveries with a JWT.
type pushSigner struct {
	key    crypto.Signer
	method jwt.SigningMethod
	kid    string
	jwks   []byte
	issuer string // the agent's configured URL
}

// newPushSigner returns the signer of key, with its JWKS, for the agent
// at issuer.
func newPushSigner(key crypto.Signer, issuer string) (*pushSigner, error) {
	s := &pushSigner{key: key, issuer: issuer}
	var alg jwkset.ALG
	switch k := key.(type) {
	case *ecdsa.PrivateKey:
		switch k.Curve {
		case elliptic.P256():
			s.method, alg = jwt.SigningMethodES256, jwkset.AlgES256
		case elliptic.P384():
			s.method, alg = jwt.SigningMethodES384, jwkset.AlgES384
		default:
			return nil, errors.New("an ECDSA key must be on P-256 or P-384")
		}
	case ed25519.PrivateKey:
		s.method, alg = jwt.SigningMethodEdDSA, jwkset.AlgEdDSA
	case *rsa.PrivateKey:
		if k.N.BitLen() < 2048 {
			return nil, errors.New("an RSA key must have at least 2048 bits")
		}
		s.method, alg = jwt.SigningMethodRS256, jwkset.AlgRS256
	default:
		return nil, fmt.Errorf("a %T cannot sign: use an ECDSA (P-256, P-384), Ed25519 or RSA key", key)
	}
	der, err := x509.MarshalPKIXPublicKey(key.Public())
	if err != nil {
		return nil, err
	}
	sum := sha256.Sum256(der)
	s.kid = base64.RawURLEncoding.EncodeToString(sum[:16])
	j, err := jwkset.NewJWKFromKey(key.Public(), jwkset.JWKOptions{Metadata: jwkset.JWKMetadataOptions{ALG: alg, KID: s.kid, USE: jwkset.UseSig}})
	if err != nil {
		return nil, err
	}
	s.jwks, err = json.Marshal(jwkset.JWKSMarshal{Keys: []jwkset.JWKMarshal{j.Marshal()}})
	return s, err
}

// sign is the JWT of delivery d: issued by the agent (at its configured
// URL, never one a request named), for the webhook's
// URL, for five minutes, naming the task and the SHA-256 of the body.
func (s *pushSigner) sign(d *pushDelivery) (string, error) {
	now := time.Now()
	sum := sha256.Sum256(d.body)
	claims := jwt.MapClaims{
		"iss": s.issuer, "aud": d.cfg.URL, "iat": now.Unix(), "exp": now.Add(5 * time.Minute).Unix(),
		"jti": otc.NewCallID(), "taskId": d.taskID, "request_body_sha256": hex.EncodeToString(sum[:]),
	}
	t := jwt.NewWithClaims(s.method, claims)
	t.Header["kid"] = s.kid
	return t.SignedString(s.key)
}

// serveJWKS answers GET /.well-known/jwks.json: the public key that signs
// deliveries.
func (p *pusher) serveJWKS(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		w.Header().Set("Allow", "GET, HEAD")
		writeRESTError(w, http.StatusMethodNotAllowed, "METHOD_NOT_FOUND", "The JWKS is read with GET")
		return
	}
	w.Header().Set("Content-Type", "application/jwk-set+json")
	w.Header().Set("Cache-Control", "public, max-age=300")
	_, _ = w.Write(p.signer.jwks)
}
