package federation

import (
	"sync"
	"time"
)

// maxCooldown bounds how long a breaker stays open between tries.
const maxCooldown = time.Minute

// breaker is an upstream's circuit breaker: closed while calls reach the
// upstream, open for a cooldown after enough of them in a row did not,
// then half open, letting one call through to try.
type breaker struct {
	mu        sync.Mutex
	threshold int
	base      time.Duration
	fails     int
	cooldown  time.Duration
	openUntil time.Time
	trialAt   time.Time // when the half-open try went; zero for none
}

func (b *breaker) init(c Breaker) {
	b.threshold, b.base, b.cooldown = c.Failures, c.Cooldown, c.Cooldown
}

// allow says whether a call may go now, and otherwise how long to wait.
func (b *breaker) allow() (time.Duration, bool) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.fails < b.threshold {
		return 0, true
	}
	now := time.Now()
	if now.Before(b.openUntil) {
		return b.openUntil.Sub(now), false
	}
	// Half open: one call tries; another may try when a try has gone
	// unanswered for a cooldown.
	if !b.trialAt.IsZero() && now.Sub(b.trialAt) < b.cooldown {
		return b.cooldown - now.Sub(b.trialAt), false
	}
	b.trialAt = now
	return 0, true
}

// failure counts a call, or a catalog read, that did not reach the
// upstream.
func (b *breaker) failure() {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.fails++
	if b.fails < b.threshold {
		return
	}
	if !b.trialAt.IsZero() || b.fails > b.threshold && time.Now().After(b.openUntil) {
		b.cooldown = min(b.cooldown*2, maxCooldown)
	}
	b.trialAt = time.Time{}
	b.openUntil = time.Now().Add(b.cooldown)
}

// success closes the breaker.
func (b *breaker) success() {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.fails, b.cooldown, b.openUntil, b.trialAt = 0, b.base, time.Time{}, time.Time{}
}

func (b *breaker) open() bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.fails >= b.threshold
}
