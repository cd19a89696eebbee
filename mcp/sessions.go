package mcp

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"log/slog"
	"net/http"
	"sync"
	"time"

	"github.com/otcgo/otc"
	"github.com/otcgo/otc/caller"
	"github.com/otcgo/otc/sessions"
)

// Bounds of the sessions of a Handler (2025-03-26 to 2025-11-25 over
// HTTP).
const (
	// DefaultSessionIdleTimeout is how long a session lives with no
	// request and no open stream.
	DefaultSessionIdleTimeout = 30 * time.Minute
	// DefaultMaxSessions bounds the sessions of a deployment (its store).
	DefaultMaxSessions = 10000
	// DefaultMaxSessionsPerCaller bounds the sessions one caller holds.
	DefaultMaxSessionsPerCaller = 100
	// MaxSessionIDBytes bounds the Mcp-Session-Id header this server
	// reads; its own ids are far shorter.
	MaxSessionIDBytes = 4096
)

// sessionAAD binds a sealed session to its use.
var sessionAAD = []byte("otc/mcp session v1")

// maxSealedCaps bounds the client capabilities a session id carries: a
// larger object is kept as the capabilities it declares, without its
// options.
const maxSealedCaps = 1024

// sealedSession is what an Mcp-Session-Id holds, sealed: any replica
// sharing the keys reads it without asking anyone.
type sealedSession struct {
	ID      string `json:"n"`           // random: the store's key
	Version string `json:"v"`           // settled by initialize
	Owner   string `json:"o"`           // digest of the caller's key
	Bound   bool   `json:"b,omitempty"` // the owner is an identity, checked on every request
	Caps    []byte `json:"c,omitempty"` // the client's capabilities, as declared
	Has     uint8  `json:"h,omitempty"` // what Caps declares, when Caps was too large to keep
	Issuer  string `json:"i,omitempty"` // the Handler that issued it, when its store is its own
}

// session is the session of a request: what its id holds, read once
// (sessions are shared between requests, and never changed).
type session struct {
	header string // the Mcp-Session-Id, as sent
	sealedSession
	declared clientCaps // Caps, read
}

func (s *session) ref() sessions.Session { return sessions.Session{ID: s.ID, Owner: s.Owner} }

// caps returns the client capabilities the session declared.
func (s *session) caps() clientCaps { return s.declared }

// maxOpened bounds the session ids a Handler keeps opened, so that a
// request of a session met lately costs no decryption.
const maxOpened = 4096

// sessionTable issues and checks the sessions of a Handler, and keeps
// what this replica knows of them: which it saw alive lately (so that a
// request asks the store at most once every touchEvery), and which it
// learnt have ended.
type sessionTable struct {
	store sessions.Store
	// own is set when the store is the Handler's own, in its memory (no
	// Options.Sessions): it knows the sessions this Handler issued, and
	// nothing of another replica's. issuer names this Handler in the ids
	// it issues then.
	own    bool
	issuer string
	sealer *sealer
	idle   time.Duration
	lim    sessions.Limits
	logger *slog.Logger

	warnOnce sync.Once

	mu     sync.Mutex
	opened map[string]*session  // Mcp-Session-Id → what it holds
	seen   map[string]time.Time // session → when the store last said alive
	ended  map[string]time.Time // session → when this replica learnt it ended
}

func newSessionTable(opts *Options, sealer *sealer, logger *slog.Logger) *sessionTable {
	t := &sessionTable{store: opts.Sessions, sealer: sealer, idle: opts.SessionIdleTimeout, logger: logger,
		lim:    sessions.Limits{Total: opts.MaxSessions, PerOwner: opts.MaxSessionsPerCaller},
		opened: map[string]*session{}, seen: map[string]time.Time{}, ended: map[string]time.Time{}}
	if t.store == nil {
		var id [8]byte
		_, _ = rand.Read(id[:])
		t.store, t.own, t.issuer = sessions.NewMemoryStore(nil), true, base64.RawURLEncoding.EncodeToString(id[:])
	}
	if t.idle <= 0 {
		t.idle = DefaultSessionIdleTimeout
	}
	if t.lim.Total <= 0 {
		t.lim.Total = DefaultMaxSessions
	}
	if t.lim.PerOwner <= 0 {
		t.lim.PerOwner = DefaultMaxSessionsPerCaller
	}
	return t
}

// touchEvery is how long this replica takes a session for alive after
// the store said so, before asking again (a tenth of the idle timeout, at
// most five seconds): a session another replica ended is refused here
// within that, or at once when this replica follows the store's log.
func (t *sessionTable) touchEvery() time.Duration {
	return min(t.idle/10, 5*time.Second)
}

// ownerOf is the owner of a request's caller: a digest of its key, and
// whether the key is an identity's (an anonymous caller is counted by
// its address, which may change, and is not held to it).
func ownerOf(ctx context.Context, r *http.Request) (string, bool) {
	key, _ := caller.Key(ctx, r)
	sum := sha256.Sum256([]byte(key))
	return hex.EncodeToString(sum[:16]), otc.CallerIdentity(ctx) != nil
}

// sessionRefused refuses a session past a bound.
func sessionRefused(err error) *rpcError {
	e := newError(codeServerBusy, "Server busy: %s; end a session (DELETE with its Mcp-Session-Id) or try again later", err.Error())
	e.Status = http.StatusServiceUnavailable
	return e
}

// open begins a session for the initialize of r, which settled on
// version and declared caps, and returns its Mcp-Session-Id.
func (t *sessionTable) open(ctx context.Context, r *http.Request, version string, caps []byte) (string, *rpcError) {
	var nonce [16]byte
	_, _ = rand.Read(nonce[:])
	owner, bound := ownerOf(ctx, r)
	st := sealedSession{ID: base64.RawURLEncoding.EncodeToString(nonce[:]), Version: version, Owner: owner, Bound: bound, Issuer: t.issuer}
	if len(caps) <= maxSealedCaps {
		st.Caps = append([]byte(nil), caps...)
	} else {
		st.Has = readClientCaps(caps).has
	}
	if err := t.store.Open(ctx, sessions.Session{ID: st.ID, Owner: owner}, t.idle, t.lim); err != nil {
		if errors.Is(err, sessions.ErrLimit) {
			return "", sessionRefused(err)
		}
		return "", storeFailed(err)
	}
	id, err := t.sealer.sealValue(&st, sessionAAD)
	if err != nil {
		return "", storeFailed(err)
	}
	t.mu.Lock()
	t.seen[st.ID] = time.Now()
	t.mu.Unlock()
	return id, nil
}

// storeFailed is the error of a request the session store failed.
func storeFailed(err error) *rpcError {
	e := newError(codeInternalError, "Internal error: the session store failed (%s); try again", err.Error())
	e.Status = http.StatusServiceUnavailable
	return e
}

// errNoSession answers a request naming a session that is not (or no
// longer) one: the client begins a new session with initialize.
var errNoSession = &rpcError{Code: codeInvalidRequest, Status: http.StatusNotFound,
	Message: "Session not found: the Mcp-Session-Id names a session that has ended, expired or was never issued here; begin a new one with initialize"}

// check reads the session of request r, whose Mcp-Session-Id is header:
// nil and errNoSession when it is no live session of this caller's. With
// a store of its own, a Handler knows only the sessions it issued: a
// request naming another's (a replica's, behind a load balancer with no
// sticky routing, with neither a shared store nor shared keys) is served
// as one of no session, nil and nil, as a server without sessions would.
func (t *sessionTable) check(ctx context.Context, r *http.Request, header string) (*session, *rpcError) {
	t.mu.Lock()
	s := t.opened[header]
	t.mu.Unlock()
	if s == nil {
		s = &session{header: header}
		if len(header) > MaxSessionIDBytes || !t.sealer.openValue(header, sessionAAD, &s.sealedSession) {
			if t.own {
				t.unknown()
				return nil, nil
			}
			return nil, errNoSession
		}
		s.declared = clientCaps{has: s.Has}
		if s.Caps != nil {
			s.declared = readClientCaps(s.Caps)
		}
		t.mu.Lock()
		if len(t.opened) >= maxOpened {
			clear(t.opened)
		}
		t.opened[header] = s
		t.mu.Unlock()
	}
	if t.own && s.Issuer != t.issuer {
		t.unknown()
		return nil, nil
	}
	if s.Bound {
		if owner, _ := ownerOf(ctx, r); owner != s.Owner {
			return nil, errNoSession // another caller's: told as nothing
		}
	}
	if !t.alive(ctx, s) {
		return nil, errNoSession
	}
	return s, nil
}

// unknown notes, once, that a request named a session of another
// replica's.
func (t *sessionTable) unknown() {
	t.warnOnce.Do(func() {
		t.logger.Warn("mcp: a request named a session this server did not issue; it is served as one of no session. Replicas behind a load balancer with no sticky routing share a session store (Options.Sessions, such as redisstore.NewSessionStore) and RequestStateKeys, so that each knows every session")
	})
}

// alive reports whether s is alive: at once when this replica learnt it
// ended, or saw it alive within touchEvery; else as the store says, which
// keeps it alive for another idle period. A store that fails does not
// refuse the request (a tool call needs no session's state): it is
// logged.
func (t *sessionTable) alive(ctx context.Context, s *session) bool {
	now := time.Now()
	t.mu.Lock()
	_, ended := t.ended[s.ID]
	seen, ok := t.seen[s.ID]
	t.mu.Unlock()
	if ended {
		return false
	}
	if ok && now.Sub(seen) < t.touchEvery() {
		return true
	}
	err := t.store.Touch(ctx, s.ref(), t.idle)
	switch {
	case errors.Is(err, sessions.ErrNotFound):
		t.markEnded(s.ID)
		return false
	case err != nil:
		t.logger.Warn("mcp: the session store failed; the request is served without checking its session", "error", err)
		return true
	}
	t.mu.Lock()
	t.seen[s.ID] = now
	if len(t.seen) > 2*t.lim.Total {
		t.prune(now)
	}
	t.mu.Unlock()
	return true
}

// markEnded records that the session ended, so that this replica refuses
// it without asking the store.
func (t *sessionTable) markEnded(id string) {
	now := time.Now()
	t.mu.Lock()
	defer t.mu.Unlock()
	delete(t.seen, id)
	t.ended[id] = now
	if len(t.ended) > 2*t.lim.Total {
		t.prune(now)
	}
}

// prune forgets what is older than the idle timeout (a session not seen
// since is asked of the store again); t.mu held.
func (t *sessionTable) prune(now time.Time) {
	for id, at := range t.seen {
		if now.Sub(at) > t.idle {
			delete(t.seen, id)
		}
	}
	for id, at := range t.ended {
		if now.Sub(at) > t.idle {
			delete(t.ended, id)
		}
	}
}

// end ends session s: the store forgets it, and every replica is told.
func (t *sessionTable) end(ctx context.Context, s *session, h *hub) *rpcError {
	if err := t.store.End(ctx, s.ref()); err != nil {
		return storeFailed(err)
	}
	t.markEnded(s.ID)
	h.publish(ctx, event{Kind: eventEnded, Session: s.ID})
	return nil
}
