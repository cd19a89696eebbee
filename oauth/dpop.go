package oauth

import (
	"context"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"hash/maphash"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/otcgo/otc"
	"github.com/otcgo/otc/internal/jose"
)

// This file checks DPoP-bound access tokens (RFC 9449): the proof that
// comes with each request, the token's binding to the proof's key, and
// the server's nonces.

// DPoP makes the resource server take access tokens bound to a client's
// key (RFC 9449), sent as "Authorization: DPoP <token>" with a proof of
// possession in the DPoP header: a JWT the client signs for each request,
// whose public key the token names (its "cnf" claim's "jkt", the key's
// SHA-256 thumbprint). A token that leaks is of no use without the key.
type DPoP struct {
	// Required refuses bearer tokens: every request must prove possession
	// of its token's key. Without it, bearer tokens are taken as before,
	// but never a bound token sent as a bearer token (RFC 9449 §7.2).
	Required bool
	// Nonce makes each proof carry a nonce this server issued (RFC 9449
	// §9), so that a proof cannot be made ahead of time: a proof without
	// a current one is refused with a 401 use_dpop_nonce. The nonces go
	// out in the DPoP-Nonce header of every answer of a handler wrapped
	// by [Authenticator.Nonces], which must then wrap the handlers.
	Nonce bool
	// NonceSecret keys the nonces (at least 32 bytes): replicas that
	// share it take each other's nonces. Nil means a random secret for
	// this process alone.
	NonceSecret []byte
	// NonceLifetime is how long a nonce is issued for; it is taken for
	// twice as long. Zero means 5 minutes.
	NonceLifetime time.Duration
	// MaxAge is how old a proof may be, by its "iat", with the
	// authenticator's Leeway either way. Zero means 5 minutes.
	MaxAge time.Duration
	// Algorithms lists the algorithms a proof may be signed with. Nil
	// means ES256, ES384, ES512, PS256, PS384, PS512, RS256, RS384, RS512
	// and EdDSA.
	Algorithms []string
	// Proofs keeps the ids (jti) of the proofs taken, so that each proof
	// is taken once: a store replicas share (the registry's idempotency
	// store, such as redisstore's) makes a proof replayed to another
	// replica refused too; its retention must be longer than MaxAge. Nil
	// means in memory, for this process, at most 100,000 proofs at once
	// (beyond, proofs are refused, told to try again, until the oldest
	// lapse).
	Proofs otc.IdempotencyStore
}

const (
	// maxProofBytes bounds a DPoP header.
	maxProofBytes = 8 << 10
	// maxProofs bounds the proofs remembered in memory.
	maxProofs = 100_000
	// ReasonInvalidProof is the [otc.Error] Reason of a request whose
	// DPoP proof is refused (RFC 9449's invalid_dpop_proof).
	ReasonInvalidProof = "invalid_dpop_proof"
	// ReasonUseNonce is the Reason of a request whose proof lacks the
	// server's current nonce (RFC 9449's use_dpop_nonce).
	ReasonUseNonce = "use_dpop_nonce"
)

// dpopCheck is an authenticator's DPoP configuration, made ready.
type dpopCheck struct {
	DPoP
	secret []byte
	spent  *proofLedger // nil with Proofs
}

func newDPoPCheck(d *DPoP) (*dpopCheck, error) {
	c := &dpopCheck{DPoP: *d}
	if c.NonceLifetime == 0 {
		c.NonceLifetime = 5 * time.Minute
	}
	if c.MaxAge == 0 {
		c.MaxAge = 5 * time.Minute
	}
	if c.NonceLifetime < time.Second || c.MaxAge < time.Second {
		return nil, errors.New("oauth: Options.DPoP's NonceLifetime and MaxAge must be a second or more")
	}
	if c.Algorithms == nil {
		c.Algorithms = slices.Clone(jose.Algorithms)
	}
	for _, alg := range c.Algorithms {
		if !slices.Contains(jose.Algorithms, alg) {
			return nil, fmt.Errorf("oauth: Options.DPoP.Algorithms: %q is not an asymmetric JWS algorithm this package checks (%s)", alg, strings.Join(jose.Algorithms, ", "))
		}
	}
	switch {
	case c.NonceSecret == nil:
		c.secret = make([]byte, 32)
		_, _ = rand.Read(c.secret)
	case len(c.NonceSecret) < 32:
		return nil, errors.New("oauth: Options.DPoP.NonceSecret must be at least 32 bytes")
	default:
		c.secret = slices.Clone(c.NonceSecret)
	}
	if c.Proofs == nil {
		c.spent = &proofLedger{seed: maphash.MakeSeed(), until: map[uint64]time.Time{}}
	}
	return c, nil
}

// nonce is the nonce of the window t falls in: the window's number and
// its HMAC, so that any replica with the secret checks it without state.
func (c *dpopCheck) nonce(t time.Time) string {
	return c.nonceOf(uint64(t.UnixNano() / int64(c.NonceLifetime)))
}

func (c *dpopCheck) nonceOf(window uint64) string {
	var b [8 + 16]byte
	binary.BigEndian.PutUint64(b[:8], window)
	m := hmac.New(sha256.New, c.secret)
	m.Write(b[:8])
	copy(b[8:], m.Sum(nil))
	return base64.RawURLEncoding.EncodeToString(b[:])
}

// nonceOK reports whether n is the nonce of the current window or the one
// before.
func (c *dpopCheck) nonceOK(n string, now time.Time) bool {
	cur := uint64(now.UnixNano() / int64(c.NonceLifetime))
	for _, w := range []uint64{cur, cur - 1} {
		if hmac.Equal([]byte(n), []byte(c.nonceOf(w))) {
			return true
		}
	}
	return false
}

// Nonces wraps h so that each of its answers carries the server's current
// DPoP nonce (the DPoP-Nonce header, RFC 9449 §9), where the
// authenticator asks for nonces ([DPoP].Nonce); otherwise it returns h.
// A client learns the nonce from any answer, the 401 that asks for it
// included.
func (a *Authenticator) Nonces(h http.Handler) http.Handler {
	if a.dpop == nil || !a.dpop.Nonce {
		return h
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("DPoP-Nonce", a.dpop.nonce(time.Now()))
		h.ServeHTTP(w, r)
	})
}

// proofError builds the refusal of a request whose proof is refused.
func proofError(message string) *otc.Error {
	return &otc.Error{Code: otc.CodeUnauthenticated, Message: message, Reason: ReasonInvalidProof}
}

// checkProof checks the DPoP proof of r, which comes with token, and
// returns the thumbprint of its key.
func (a *Authenticator) checkProof(r *http.Request, token string) (string, error) {
	c := a.dpop
	proofs := r.Header.Values("DPoP")
	switch {
	case len(proofs) == 0:
		return "", proofError("A DPoP-bound token needs a DPoP proof: send one in the DPoP header")
	case len(proofs) > 1 || strings.Contains(proofs[0], ","):
		return "", proofError("More than one DPoP proof was sent: send exactly one")
	case len(proofs[0]) > maxProofBytes:
		return "", proofError(fmt.Sprintf("The DPoP proof is over %d bytes", maxProofBytes))
	}
	header, claims, input, sig, err := jose.Parse(strings.TrimSpace(proofs[0]))
	if err != nil {
		return "", proofError("The DPoP proof is malformed: " + err.Error())
	}
	if typ, _ := header["typ"].(string); typ != "dpop+jwt" {
		return "", proofError(`The DPoP proof's typ must be "dpop+jwt"`)
	}
	alg, _ := header["alg"].(string)
	if !slices.Contains(c.Algorithms, alg) {
		return "", proofError("The DPoP proof's alg is not one this server takes: " + strings.Join(c.Algorithms, ", "))
	}
	if _, ok := header["crit"]; ok {
		return "", proofError("The DPoP proof names critical header parameters (crit) this server does not know")
	}
	jwk, ok := header["jwk"].(map[string]any)
	if !ok {
		return "", proofError("The DPoP proof has no jwk (the public key) in its header")
	}
	pub, err := jose.PublicKey(jwk)
	if err != nil {
		return "", proofError("The DPoP proof's jwk: " + err.Error())
	}
	if err := jose.Verify(pub, alg, input, sig); err != nil {
		return "", proofError("The DPoP proof's signature does not verify with its jwk")
	}
	str := func(name string) string { s, _ := claims[name].(string); return s }
	jti, htm, htu, ath := str("jti"), str("htm"), str("htu"), str("ath")
	switch {
	case jti == "" || len(jti) > 256:
		return "", proofError("The DPoP proof needs a jti (a unique id) of at most 256 bytes")
	case htm != r.Method:
		return "", proofError("The DPoP proof is for another method (htm): make one for " + r.Method)
	case !a.htuMatches(htu, r):
		return "", proofError("The DPoP proof is for another URL (htu): make one for this request's URL, without its query")
	}
	sum := sha256.Sum256([]byte(token))
	if !hmac.Equal([]byte(ath), []byte(base64.RawURLEncoding.EncodeToString(sum[:]))) {
		return "", proofError("The DPoP proof's ath is not the hash of the access token it came with")
	}
	iatNum, ok := claims["iat"].(json.Number)
	iat, err := iatNum.Int64()
	if !ok || err != nil {
		return "", proofError("The DPoP proof needs an iat (when it was made), in seconds")
	}
	now := time.Now()
	made := time.Unix(iat, 0)
	if made.After(now.Add(a.leeway+time.Second)) || made.Before(now.Add(-c.MaxAge-a.leeway)) {
		return "", proofError("The DPoP proof's iat is outside the window this server takes: make a fresh proof (check the client's clock)")
	}
	if c.Nonce {
		if n := str("nonce"); n == "" || !c.nonceOK(n, now) {
			return "", &otc.Error{Code: otc.CodeUnauthenticated, Reason: ReasonUseNonce,
				Message: "The DPoP proof needs the server's current nonce: make a new proof with the DPoP-Nonce header's value"}
		}
	}
	jkt, err := jose.Thumbprint(jwk)
	if err != nil {
		return "", proofError("The DPoP proof's jwk: " + err.Error())
	}
	first, err := c.spend(r.Context(), "dpop:"+jkt+":"+jti, made.Add(c.MaxAge+2*a.leeway+time.Second))
	switch {
	case err != nil:
		return "", &otc.Error{Code: otc.CodeUnavailable, Message: "The DPoP proof cannot be checked against replays now: try again", RetryAfter: time.Second}
	case !first:
		return "", proofError("The DPoP proof was used before: make a fresh proof (a new jti) for each request")
	}
	return jkt, nil
}

// htuMatches reports whether htu is the URL of r: the resource's scheme
// and host, and the request's path as the client sent it, without query
// or fragment (RFC 9449 §4.3, compared after RFC 3986's normalization of
// scheme, host and default port).
func (a *Authenticator) htuMatches(htu string, r *http.Request) bool {
	u, err := url.Parse(htu)
	if err != nil || u.RawQuery != "" || u.Fragment != "" || u.User != nil {
		return false
	}
	res, err := url.Parse(a.resource)
	if err != nil {
		return false
	}
	if !strings.EqualFold(u.Scheme, res.Scheme) || !sameHost(u, res) {
		return false
	}
	path := r.URL.EscapedPath()
	if r.RequestURI != "" {
		if p, err := url.ParseRequestURI(r.RequestURI); err == nil {
			path = p.EscapedPath() // before a StripPrefix
		}
	}
	return u.EscapedPath() == path || u.EscapedPath() == "" && path == "/"
}

// sameHost compares two URLs' hosts and ports, a default port equal to
// none.
func sameHost(a, b *url.URL) bool {
	port := func(u *url.URL) string {
		if p := u.Port(); p != "" {
			return p
		}
		if strings.EqualFold(u.Scheme, "https") {
			return "443"
		}
		return "80"
	}
	return strings.EqualFold(a.Hostname(), b.Hostname()) && port(a) == port(b)
}

// boundKey is the thumbprint a token's claims bind it to ("cnf": {"jkt":
// …}), "" for an unbound token.
func boundKey(claims map[string]any) string {
	cnf, _ := claims["cnf"].(map[string]any)
	jkt, _ := cnf["jkt"].(string)
	return jkt
}

// spend records key as used until then, and reports whether it was not
// before.
func (c *dpopCheck) spend(ctx context.Context, key string, until time.Time) (bool, error) {
	if c.spent != nil {
		return c.spent.spend(key, until)
	}
	rec, claim, err := c.Proofs.Claim(ctx, "p"+key, "dpop")
	switch {
	case err != nil:
		return false, err
	case claim == nil && rec == nil:
		return false, errors.New("the idempotency store's Claim returned neither a claim nor a record")
	case claim == nil:
		return false, nil // taken before
	}
	switch err := claim.Complete(context.WithoutCancel(ctx), []byte("dpop")); {
	case errors.Is(err, otc.ErrClaimLost):
		return false, nil
	case errors.Is(err, otc.ErrOutcomePending):
		return true, nil
	case err != nil:
		return false, err
	}
	return true, nil
}

// proofLedger is the in-memory record of proofs taken, each until it
// could no longer be taken for its age.
type proofLedger struct {
	mu    sync.Mutex
	seed  maphash.Seed
	until map[uint64]time.Time
}

var errProofsFull = errors.New("the in-memory record of DPoP proofs is full")

func (l *proofLedger) spend(key string, until time.Time) (bool, error) {
	k := maphash.String(l.seed, key)
	now := time.Now()
	l.mu.Lock()
	defer l.mu.Unlock()
	if u, ok := l.until[k]; ok && u.After(now) {
		return false, nil
	}
	if len(l.until) >= maxProofs {
		for kk, u := range l.until {
			if !u.After(now) {
				delete(l.until, kk)
			}
		}
		if len(l.until) >= maxProofs {
			return false, errProofsFull
		}
	}
	l.until[k] = until
	return true, nil
}
