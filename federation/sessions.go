package federation

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/otcgo/otc"
	"github.com/otcgo/otc/client"
)

// remote is what a request reaches an upstream through: the upstream's
// client, or a session of it kept for the caller.
type remote interface {
	client.Caller
	Unreached(err error) bool
	ExchangeToken(ctx context.Context, subject string) (string, error)
	Close() error
}

// mcpOf is the MCP session of r: r itself, or its client's own; nil for
// an upstream of another format.
func mcpOf(r remote) *client.Session {
	switch x := r.(type) {
	case *client.Session:
		return x
	case *client.Client:
		return x.MCP()
	}
	return nil
}

// sessionPool keeps one session per caller identity, for upstreams that
// keep state per session or per process.
type sessionPool struct {
	max  int
	open func(ctx context.Context) (remote, error)

	mu sync.Mutex
	m  map[string]*session
}

type session struct {
	ready chan struct{} // closed when cl or err is set
	cl    remote
	err   error
	busy  int
	used  time.Time
}

func (p *sessionPool) len() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return len(p.m)
}

// get returns the caller's client, opening it if need be, and the
// function to call when the call is done (broken: the client failed as a
// transport, and is closed).
func (p *sessionPool) get(ctx context.Context, key, upstream string) (remote, func(broken bool), error) {
	p.mu.Lock()
	if p.m == nil {
		p.m = map[string]*session{}
	}
	s := p.m[key]
	if s == nil {
		if len(p.m) >= p.max && !p.evict() {
			p.mu.Unlock()
			return nil, nil, &otc.ToolError{
				Message:  fmt.Sprintf("The tool's server (%s) is serving as many callers as it may; try again shortly.", upstream),
				CanRetry: true, RetryAfter: time.Second,
				DeveloperMessage: fmt.Sprintf("federation: upstream %s has %d sessions, all busy (Upstream.Sessions)", upstream, p.max),
			}
		}
		s = &session{ready: make(chan struct{})}
		p.m[key] = s
		s.busy++
		p.mu.Unlock()
		s.cl, s.err = p.open(ctx)
		close(s.ready)
	} else {
		s.busy++
		p.mu.Unlock()
		select {
		case <-s.ready:
		case <-ctx.Done():
			p.release(key, s, false)
			return nil, nil, ctx.Err()
		}
	}
	if s.err != nil {
		p.release(key, s, true)
		return nil, nil, &otc.ToolError{
			Message:  fmt.Sprintf("The tool's server (%s) could not be reached; try again.", upstream),
			CanRetry: true, RetryAfter: time.Second, Err: s.err,
			DeveloperMessage: "federation: upstream " + upstream + ": opening a session: " + s.err.Error(),
		}
	}
	return s.cl, func(broken bool) { p.release(key, s, broken) }, nil
}

func (p *sessionPool) release(key string, s *session, broken bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	s.busy--
	s.used = time.Now()
	if broken && p.m[key] == s {
		delete(p.m, key)
		if s.cl != nil {
			go s.cl.Close()
		}
	}
}

// evict closes the least recently used idle session; false when every one
// is busy. p.mu is held.
func (p *sessionPool) evict() bool {
	var lruKey string
	var lru *session
	for k, s := range p.m {
		if s.busy == 0 && (lru == nil || s.used.Before(lru.used)) {
			lruKey, lru = k, s
		}
	}
	if lru == nil {
		return false
	}
	delete(p.m, lruKey)
	if lru.cl != nil {
		go lru.cl.Close()
	}
	return true
}

// closeIdle closes the sessions that have made no call since before.
func (p *sessionPool) closeIdle(before time.Time) {
	p.mu.Lock()
	defer p.mu.Unlock()
	for k, s := range p.m {
		if s.busy == 0 && s.used.Before(before) {
			delete(p.m, k)
			if s.cl != nil {
				go s.cl.Close()
			}
		}
	}
}

func (p *sessionPool) closeAll() {
	p.mu.Lock()
	m := p.m
	p.m = nil
	p.mu.Unlock()
	for _, s := range m {
		<-s.ready
		if s.cl != nil {
			_ = s.cl.Close()
		}
	}
}

// clientFor returns the client a call goes through: the caller's own
// session, or the shared client.
func (u *upstream) clientFor(ctx context.Context) (remote, func(broken bool), error) {
	cl := u.main.Load()
	stateful := len(u.cfg.Command) > 0 || cl != nil && cl.KeepsState()
	if key := callerKey(otc.CallerIdentity(ctx)); u.pool != nil && stateful && key != "" {
		return u.pool.get(ctx, key, u.cfg.Name)
	}
	if cl == nil {
		msg := fmt.Sprintf("The tool's server (%s) has not been reached yet; try again shortly.", u.cfg.Name)
		if last := u.lastError(); last != "" {
			msg = fmt.Sprintf("The tool's server (%s) cannot be reached just now (%s); try again shortly.", u.cfg.Name, causeOf(last))
		}
		return nil, nil, &otc.ToolError{
			Message: msg, CanRetry: true, RetryAfter: time.Second,
			DeveloperMessage: "federation: upstream " + u.cfg.Name + " has no client: " + u.lastError(),
		}
	}
	return cl, func(bool) {}, nil
}
