package jwks

import (
	"context"
	"crypto"
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/elliptic"
	"crypto/rsa"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/MicahParks/jwkset"
	"github.com/otcgo/otc/internal/backoff"
	"github.com/otcgo/otc/internal/wire"
)

// The rules of fetching a JWKS, as the root package's CapabilityOptions
// documents them.
const (
	// FetchTimeout bounds one fetch when the HTTP client sets no
	// timeout of its own.
	FetchTimeout = 10 * time.Second
	// jwksRefreshInterval is RefreshInterval's default.
	jwksRefreshInterval = time.Hour
	// jwksMinGap is the least time between the start of one fetch and a
	// fetch that a token naming an unknown kid asks for. Seconds, not
	// minutes: a flood of made-up kids then costs the issuer one fetch
	// every few seconds, and a key it has just published verifies a few
	// seconds later whoever sent the first unknown kid.
	jwksMinGap = 5 * time.Second
	// After a failed fetch the next one starts jwksBackoffMin later,
	// doubling with each failure in a row up to jwksBackoffMax: an issuer
	// that comes back is seen within about half a minute, and one that
	// stays down is asked twice a minute.
	jwksBackoffMin = time.Second
	jwksBackoffMax = 30 * time.Second
	// jwksWaitMax is the longest a request waits for a fetch it needs: the
	// first one, or one its unknown kid asked for. Shorter than the fetch
	// timeout, so that a hanging issuer holds each request a few seconds,
	// not ten.
	jwksWaitMax = 5 * time.Second
	// maxJWKSBytes caps a key set, which is a few kilobytes, so that a
	// broken or hostile endpoint cannot make a fetch read without end.
	maxJWKSBytes = 1 << 20
)

// Timing holds the intervals of one authenticator's fetches: the
// constants above, and RefreshInterval. Tests shorten them.
type Timing struct {
	Refresh    time.Duration // after a good fetch
	MinGap     time.Duration // before a fetch for an unknown kid
	BackoffMin time.Duration // after the first failure in a row
	BackoffMax time.Duration // after many
	Wait       time.Duration // the longest a request waits for a fetch
}

func DefaultTiming(refresh time.Duration) Timing {
	if refresh == 0 {
		refresh = jwksRefreshInterval
	}
	return Timing{
		Refresh:    refresh,
		MinGap:     jwksMinGap,
		BackoffMin: jwksBackoffMin,
		BackoffMax: jwksBackoffMax,
		Wait:       jwksWaitMax,
	}
}

// With returns t with each non-zero duration given in place of its own,
// for tests that see a rotation, a backoff or a bounded wait in
// milliseconds rather than seconds.
func (t Timing) With(minGap, backoffMin, backoffMax, wait time.Duration) Timing {
	for _, f := range []struct {
		set time.Duration
		to  *time.Duration
	}{
		{minGap, &t.MinGap},
		{backoffMin, &t.BackoffMin},
		{backoffMax, &t.BackoffMax},
		{wait, &t.Wait},
	} {
		if f.set != 0 {
			*f.to = f.set
		}
	}
	return t
}

// RetryAfter returns how long after the n-th failed fetch in a row
// (n ≥ 1) the next one starts; never later than a refresh would.
func (t Timing) RetryAfter(n int) time.Duration {
	return min(backoff.Delay(t.BackoffMin, t.BackoffMax, n), t.Refresh)
}

// Key is one key of a set, with what its JWK says of its use.
type Key struct {
	Key any        // a public key, or a secret that KeyFits refuses
	Alg string     // the JWK's "alg", "" when it names none
	Use jwkset.USE // the JWK's "use", "" when it names none
}

// Snapshot is a key set as read, by kid. It is published whole and
// never changed, so that requests read it without a lock.
type Snapshot map[string]Key

func NewSnapshot(jwks []jwkset.JWK) Snapshot {
	s := make(Snapshot, len(jwks))
	for _, j := range jwks {
		m := j.Marshal()
		// A token must name its key, so a key without a kid verifies
		// nothing; of two keys with one kid, the first is used.
		if _, seen := s[m.KID]; m.KID == "" || seen {
			continue
		}
		key := j.Key()
		// An issuer that published a private key by mistake still
		// verifies with its public half, as before.
		if pk, ok := key.(interface{ Public() crypto.PublicKey }); ok {
			key = pk.Public()
		}
		s[m.KID] = Key{Key: key, Alg: m.ALG.String(), Use: m.USE}
	}
	return s
}

// Why no key could be found for a token's kid; Problem words them for
// the caller.
var (
	ErrKeyUnknown       = errors.New("the token's kid is not in the key set")
	ErrKeyNotRefetched  = errors.New("the token's kid is not in the key set, which was fetched moments ago")
	ErrKeyRefetchFailed = errors.New("the token's kid is not in the key set, and fetching it again failed")
	ErrNoKeys           = errors.New("the key set is empty")
	ErrKeysPending      = errors.New("the key set is being fetched and did not arrive in time")
	ErrStopped          = errors.New("the context given to the authenticator's constructor has ended, so the key set is no longer fetched")
)

// Problem is the message that refuses a bearer token for err, one of the
// errors above, and whether err was one; owner names whose keys they are,
// as a possessive ("the issuers'", "the authorization server's").
func Problem(err error, owner string) (string, bool) {
	switch {
	case errors.Is(err, ErrNoKeys):
		return "The server has not obtained " + owner + " keys yet, so it cannot check the bearer token: try again later", true
	case errors.Is(err, ErrKeysPending):
		return "The server is still fetching " + owner + " keys and could not check the bearer token in time: try again in a few seconds", true
	case errors.Is(err, ErrKeyNotRefetched):
		return "The bearer token's key (kid) is not one of " + owner + " keys that this server holds; their key set was fetched moments ago, so if the key has just been published, try again in a few seconds", true
	case errors.Is(err, ErrKeyRefetchFailed):
		return "The bearer token's key (kid) is not one of " + owner + " keys that this server holds, and fetching their key set again failed: try again later", true
	case errors.Is(err, ErrKeyUnknown):
		return "The bearer token's key (kid) is not one of " + owner + " keys", true
	case errors.Is(err, ErrKeyRestricted):
		return "The bearer token's key (kid) may not verify this token: " + owner + " key set limits it to another algorithm or use", true
	}
	return "", false
}

// Set is the key set of an auth.CapabilityAuth.
type Set struct {
	current atomic.Pointer[Snapshot] // nil until a fetch succeeds
	fetcher *fetcher                 // nil for a static set
}

// Remote returns the key set published at url, fetched by a goroutine
// that runs until ctx ends: at once, then on the schedule timing sets and
// whenever a token names a kid the set lacks. shown is url as logs may
// show it; client fetches it, each fetch within timeout. The logs call it
// "the capability issuers' JWKS".
func Remote(ctx context.Context, url, shown string, client *http.Client, timeout time.Duration, logger *slog.Logger, timing Timing) *Set {
	resolve := func(context.Context, bool) (string, string, error) { return url, shown, nil }
	return RemoteFrom(ctx, resolve, "the capability issuers' JWKS", client, timeout, logger, timing)
}

// Resolver tells a fetch where the key set is: its URL, and the URL as
// logs may show it. It runs at the start of every fetch, on the fetching
// goroutine, so that what it does (fetching an authorization server's
// metadata, say) follows the fetch's schedule, shares its wait and
// backoff, and fails it when it fails. rediscover is true when the fetch
// is a scheduled one (the first, a refresh or a retry after a failure)
// rather than one a token's unknown kid asked for: a resolver that caches
// what it found looks again then. An empty url means the issuer publishes
// no key set: the fetch succeeds with no keys.
type Resolver func(ctx context.Context, rediscover bool) (url, shown string, err error)

// RemoteFrom is [Remote] with the URL found by resolve at each fetch.
// label names the key set in the logs ("the JWKS of authorization server
// https://login.example.com").
func RemoteFrom(ctx context.Context, resolve Resolver, label string, client *http.Client, timeout time.Duration, logger *slog.Logger, timing Timing) *Set {
	ks := &Set{}
	ks.fetcher = newFetcher(ks, resolve, label, client, timeout, logger, timing)
	go ks.fetcher.Run(ctx)
	return ks
}

// Static is a key set given once.
func Static(s Snapshot) *Set {
	ks := &Set{}
	ks.current.Store(&s)
	return ks
}

// Empty reports whether the set holds no key: none fetched yet, or an
// issuer that publishes none.
func (ks *Set) Empty() bool {
	s := ks.current.Load()
	return s == nil || len(*s) == 0
}

// Snapshot returns the snapshot of the set in use, nil before the first
// fetch. It changes whenever a fetch publishes the set again, so that what
// was verified with one snapshot's keys can be told apart.
func (ks *Set) Snapshot() *Snapshot { return ks.current.Load() }

// Why a key could not verify a token; the callers word them (ErrNoKeyID
// and ErrKeyAlgorithm name what their tokens must carry), Problem words
// ErrKeyRestricted.
var (
	ErrNoKeyID       = errors.New("the token's header has no kid")
	ErrKeyRestricted = errors.New("the JWK's own alg or use forbids the token's")
	ErrKeyAlgorithm  = errors.New("the token's alg is not the one of its key")
)

// KeyFor returns the key of the set that verifies a token signed with alg
// and naming kid, and the snapshot that held it. A kid is required:
// without one every key would have to be tried, and a token could not ask
// for a key the set does not hold yet. The key's JWK may narrow it to one
// algorithm or to signatures ("use": "sig"), and its type must be the
// algorithm's (KeyFits), whatever the JWK's own "alg" says.
func (ks *Set) KeyFor(ctx context.Context, kid, alg string) (any, *Snapshot, error) {
	if kid == "" {
		return nil, nil, ErrNoKeyID
	}
	k, s, err := ks.KeyIn(ctx, kid)
	if err != nil {
		return nil, nil, err
	}
	if k.Alg != "" && k.Alg != alg || k.Use != "" && k.Use != jwkset.UseSig {
		return nil, nil, ErrKeyRestricted
	}
	if !KeyFits(alg, k.Key) {
		return nil, nil, ErrKeyAlgorithm
	}
	return k.Key, s, nil
}

// KeyFits reports whether key is of the type alg signs with: an RSA key
// of 2048 bits or more for the RS and PS algorithms, an EC key of the
// algorithm's curve for ES256, ES384 and ES512, an Ed25519 key for EdDSA.
// Any other algorithm fits no key.
func KeyFits(alg string, key any) bool {
	switch alg {
	case "RS256", "RS384", "RS512", "PS256", "PS384", "PS512":
		k, ok := key.(*rsa.PublicKey)
		return ok && k.N.BitLen() >= 2048
	case "ES256":
		k, ok := key.(*ecdsa.PublicKey)
		return ok && k.Curve == elliptic.P256()
	case "ES384":
		k, ok := key.(*ecdsa.PublicKey)
		return ok && k.Curve == elliptic.P384()
	case "ES512":
		k, ok := key.(*ecdsa.PublicKey)
		return ok && k.Curve == elliptic.P521()
	case "EdDSA":
		k, ok := key.(ed25519.PublicKey)
		return ok && len(k) == ed25519.PublicKeySize
	}
	return false
}

// Vet looks over the keys of a key set given in configuration: the index
// of the first that is private or secret, which a verifier must never
// hold (-1 when none is), and whether a key with a kid can verify one of
// algs.
func Vet(keys []jwkset.JWK, algs []string) (secret int, usable bool) {
	for i, k := range keys {
		switch k.Key().(type) {
		case *ecdsa.PrivateKey, ed25519.PrivateKey, *rsa.PrivateKey, []byte:
			return i, false
		}
		if k.Marshal().KID != "" && slices.ContainsFunc(algs, func(alg string) bool { return KeyFits(alg, k.Key()) }) {
			usable = true
		}
	}
	return -1, usable
}

// KeyIn is [Set.Key] that also returns the snapshot that held the key.
func (ks *Set) KeyIn(ctx context.Context, kid string) (Key, *Snapshot, error) {
	if s := ks.current.Load(); s != nil {
		if k, ok := (*s)[kid]; ok {
			return k, s, nil
		}
	}
	k, err := ks.Key(ctx, kid)
	if err != nil {
		return Key{}, nil, err
	}
	// Found by a fetch: the key is taken from the snapshot now current,
	// so that the two match; when a later fetch has dropped it already,
	// the key found is used without a snapshot (nothing remembers it).
	if s := ks.current.Load(); s != nil {
		if k, ok := (*s)[kid]; ok {
			return k, s, nil
		}
	}
	return k, nil, nil
}

func (ks *Set) lookup(kid string) (Key, bool) {
	s := ks.current.Load()
	if s == nil {
		return Key{}, false
	}
	k, ok := (*s)[kid]
	return k, ok
}

// Ready waits, when no fetch has succeeded yet, for the one in progress
// or a new one (at most the bounded wait, and as long as ctx lasts), and
// reports whether one has succeeded: nil, or why not ([ErrKeysPending],
// [ErrKeyRefetchFailed], [ErrKeyNotRefetched] or [ErrStopped]). A static
// set is always ready. An authenticator that needs what the first fetch
// found (its resolver's findings, not a key) waits with it.
func (ks *Set) Ready(ctx context.Context) error {
	if ks.current.Load() != nil || ks.fetcher == nil {
		return nil
	}
	outcome := ks.fetcher.refetch(ctx)
	if ks.current.Load() != nil {
		return nil
	}
	switch outcome {
	case fetchTimedOut:
		return ErrKeysPending
	case fetchTooSoon:
		return ErrKeyNotRefetched
	case fetchStopped:
		return ErrStopped
	}
	return ErrKeyRefetchFailed
}

// Key returns the Key that kid names. When the set lacks it and is
// fetched, it asks for a fetch, or joins the one in progress, and waits
// for it at most the bounded wait and as long as ctx, the request's,
// lasts.
func (ks *Set) Key(ctx context.Context, kid string) (Key, error) {
	if k, ok := ks.lookup(kid); ok {
		return k, nil
	}
	if ks.fetcher == nil {
		return Key{}, ErrKeyUnknown
	}
	outcome := ks.fetcher.refetch(ctx)
	// Looked up again whatever the outcome: another fetch may have brought
	// the key meanwhile.
	if k, ok := ks.lookup(kid); ok {
		return k, nil
	}
	if outcome == fetchTimedOut {
		return Key{}, ErrKeysPending
	}
	if ks.Empty() {
		return Key{}, ErrNoKeys
	}
	switch outcome {
	case fetchTooSoon:
		return Key{}, ErrKeyNotRefetched
	case fetchFailed:
		return Key{}, ErrKeyRefetchFailed
	}
	return Key{}, ErrKeyUnknown
}

// fetcher fetches a key set from a URL. One goroutine, run, does every
// fetch, so that there is never more than one at a time: requests that
// need a fetch ask for one (pending) and wake it (kick), or join the one
// already asked for.
type fetcher struct {
	set     *Set
	resolve Resolver
	label   string // names the key set in the logs
	client  *http.Client
	timeout time.Duration
	logger  *slog.Logger
	timing  Timing
	kick    chan struct{} // capacity 1: a request asks run to fetch now

	mu        sync.Mutex
	pending   *jwksFetch // the fetch asked for or in progress; nil when none
	lastStart time.Time  // when the latest fetch began
	failures  int        // failed fetches in a row
	stopped   bool       // run has ended with its context
}

// jwksFetch is one fetch that requests wait for together.
type jwksFetch struct {
	done chan struct{} // closed when the fetch has ended and been published
	err  error         // why it failed; set before done is closed
}

// newFetcher returns a fetcher whose first fetch is already asked
// for, so that a request arriving before run starts waits for it. The
// caller starts run.
func newFetcher(set *Set, resolve Resolver, label string, client *http.Client, timeout time.Duration, logger *slog.Logger, timing Timing) *fetcher {
	return &fetcher{
		set: set, resolve: resolve, label: label, client: client, timeout: timeout, logger: logger, timing: timing,
		kick:    make(chan struct{}, 1),
		pending: &jwksFetch{done: make(chan struct{})},
	}
}

// Run fetches the set at once, then on the schedule that each fetch's
// outcome sets and whenever a request asks, until ctx ends.
func (f *fetcher) Run(ctx context.Context) {
	timer := time.NewTimer(f.fetch(ctx, true))
	defer timer.Stop()
	for {
		scheduled := false
		select {
		case <-ctx.Done():
			f.stop()
			return
		case <-timer.C:
			scheduled = true
		case <-f.kick:
		}
		timer.Reset(f.fetch(ctx, scheduled))
	}
}

// stop ends fetching: a request waiting for a fetch that will not come
// is answered at once, and no request asks for another.
func (f *fetcher) stop() {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.stopped = true
	if c := f.pending; c != nil {
		f.pending = nil
		c.err = ErrStopped
		close(c.done)
	}
}

// Outcomes of a request's wait for a fetch.
type fetchOutcome int

const (
	fetchSucceeded fetchOutcome = iota
	fetchFailed                 // the fetch ended without a key set
	fetchTooSoon                // no fetch: the last began less than minGap ago
	fetchTimedOut               // the wait or the request ended first
	fetchStopped                // no fetch: the fetcher's context has ended
)

// refetch waits for a fetch: the one asked for or in progress (which
// may have begun before the issuer published the key looked for; the
// request is then refused, and its retry fetches once minGap has passed),
// or a new one unless the latest began less than minGap ago. It waits at
// most timing.wait, and no longer than ctx.
func (f *fetcher) refetch(ctx context.Context) fetchOutcome {
	f.mu.Lock()
	c := f.pending
	if c == nil {
		switch {
		case f.stopped:
			f.mu.Unlock()
			return fetchStopped
		case time.Since(f.lastStart) < f.timing.MinGap:
			f.mu.Unlock()
			return fetchTooSoon
		}
		c = &jwksFetch{done: make(chan struct{})}
		f.pending = c
		select {
		case f.kick <- struct{}{}:
		default:
		}
	}
	f.mu.Unlock()

	timer := time.NewTimer(f.timing.Wait)
	defer timer.Stop()
	select {
	case <-c.done:
		if c.err != nil {
			return fetchFailed
		}
		return fetchSucceeded
	case <-timer.C:
	case <-ctx.Done():
	}
	return fetchTimedOut
}

// fetch fetches the set once, publishes it when it is good, answers the
// requests waiting for it, and returns when the next scheduled fetch is
// due. scheduled is false for a fetch a request asked for.
func (f *fetcher) fetch(ctx context.Context, scheduled bool) time.Duration {
	f.mu.Lock()
	c := f.pending
	if c == nil {
		c = &jwksFetch{done: make(chan struct{})}
		f.pending = c
	}
	// This fetch answers every request made so far; a kick they left
	// would fetch again for nothing.
	select {
	case <-f.kick:
	default:
	}
	f.lastStart = time.Now()
	f.mu.Unlock()

	keys, shown, err := f.get(ctx, scheduled)

	f.mu.Lock()
	recovered := err == nil && f.failures > 0
	if err == nil {
		f.set.current.Store(&keys)
		f.failures = 0
	} else {
		f.failures++
	}
	failures := f.failures
	f.pending = nil
	f.mu.Unlock()

	next := f.timing.Refresh
	switch {
	case err != nil:
		next = f.timing.RetryAfter(failures)
		// A fetch cut short by the end of ctx is no failure of the
		// issuer's.
		if ctx.Err() == nil {
			f.logger.ErrorContext(ctx, "otc: fetching "+f.label+" failed; the keys of the last good fetch, if any, stay in use",
				"url", shown, "error", err.Error(), "failures_in_a_row", failures, "retry_in", next.String())
		}
	case recovered:
		f.logger.InfoContext(ctx, "otc: fetched "+f.label+" again after failures", "url", shown)
	}
	// Logged first, so that a request refused for this failure finds it
	// in the log.
	c.err = err
	close(c.done)
	return next
}

// get finds the key set's URL, then fetches and parses the set, all
// within the fetch timeout. shown is the URL for the logs, or "" when the
// resolver failed before naming one.
func (f *fetcher) get(ctx context.Context, scheduled bool) (s Snapshot, shown string, err error) {
	ctx, cancel := context.WithTimeout(ctx, f.timeout)
	defer cancel()
	url, shown, err := f.resolve(ctx, scheduled)
	if err != nil || url == "" {
		return Snapshot{}, shown, err
	}
	s, err = f.getURL(ctx, url)
	return s, shown, err
}

// getURL fetches and parses the key set at url.
func (f *fetcher) getURL(ctx context.Context, url string) (Snapshot, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return nil, err
	}
	req.Header.Set("Accept", "application/jwk-set+json, application/json")
	resp, err := f.client.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("the JWKS URL answered HTTP status %d, not 200", resp.StatusCode)
	}
	body, err := wire.ReadAnswer(resp.Body, maxJWKSBytes, "the key set")
	if err != nil {
		return nil, err
	}
	var set jwkset.JWKSMarshal
	if err := json.Unmarshal(body, &set); err != nil {
		return nil, fmt.Errorf("the key set is not a JSON Web Key Set: %w", err)
	}
	jwks := make([]jwkset.JWK, 0, len(set.Keys))
	for i, m := range set.Keys {
		j, err := jwkset.NewJWKFromMarshal(m, jwkset.JWKMarshalOptions{Private: true}, jwkset.JWKValidateOptions{})
		switch {
		case errors.Is(err, jwkset.ErrUnsupportedKey):
			// A kind of key that no capability token uses: the others
			// still verify.
			continue
		case err != nil:
			return nil, fmt.Errorf("key %d (kid %q) of the key set is not valid: %w", i, wire.Truncate(m.KID, 80), err)
		}
		jwks = append(jwks, j)
	}
	return NewSnapshot(jwks), nil
}
