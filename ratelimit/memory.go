package ratelimit

import (
	"context"
	"hash/maphash"
	"sync"
	"time"
)

// DefaultMaxKeys caps the callers and limits a [MemoryStore] keeps.
const DefaultMaxKeys = 100_000

// MemoryStoreOptions configures [NewMemoryStore]. The zero value, and
// nil, give the defaults described on each field.
type MemoryStoreOptions struct {
	// MaxKeys caps the callers and limits kept. A key whose allowance is
	// full again carries no state and is dropped first; when every key
	// still carries some, the store drops keys at random to make room,
	// which lets their callers start afresh: set it above the callers a
	// replica sees in the time a full allowance takes to come back. Zero
	// or less means DefaultMaxKeys.
	MaxKeys int
	// Now is the clock. Nil means time.Now.
	Now func() time.Time
}

// MemoryStore keeps rate limits in this process: the limits hold per
// replica. It is safe for concurrent use.
type MemoryStore struct {
	now    func() time.Time
	perMap int
	seed   maphash.Seed
	shards [memShards]memShard
}

const memShards = 64

type memShard struct {
	mu  sync.Mutex
	tat map[string]int64 // when each key's allowance is next full, in ns since the epoch of the clock
	_   [48]byte         // keeps shards on cache lines of their own
}

var _ Charger = (*MemoryStore)(nil)

// NewMemoryStore returns an empty store. opts may be nil.
func NewMemoryStore(opts *MemoryStoreOptions) *MemoryStore {
	s := &MemoryStore{now: time.Now, perMap: DefaultMaxKeys / memShards, seed: maphash.MakeSeed()}
	if opts != nil {
		if opts.Now != nil {
			s.now = opts.Now
		}
		if opts.MaxKeys > 0 {
			s.perMap = max(opts.MaxKeys/memShards, 1)
		}
	}
	for i := range s.shards {
		s.shards[i].tat = map[string]int64{}
	}
	return s
}

// Take implements [Store].
func (s *MemoryStore) Take(_ context.Context, key string, l Limit) (bool, time.Duration, error) {
	if !(l.Rate > 0) {
		return false, 0, ErrBadLimit
	}
	now := s.now().UnixNano()
	sh := &s.shards[maphash.String(s.seed, key)%memShards]
	sh.mu.Lock()
	defer sh.mu.Unlock()
	tat, ok := sh.tat[key]
	next, admitted, after := gcra(now, tat, l)
	if !admitted {
		return false, after, nil
	}
	if !ok && len(sh.tat) >= s.perMap {
		sh.makeRoom(now)
	}
	sh.tat[key] = next
	return true, 0, nil
}

// Charge implements [Charger].
func (s *MemoryStore) Charge(_ context.Context, key string, l Limit, n float64) error {
	if !(l.Rate > 0) {
		return ErrBadLimit
	}
	if !(n > 0) {
		return nil
	}
	now := s.now().UnixNano()
	sh := &s.shards[maphash.String(s.seed, key)%memShards]
	sh.mu.Lock()
	defer sh.mu.Unlock()
	tat, ok := sh.tat[key]
	if !ok && len(sh.tat) >= s.perMap {
		sh.makeRoom(now)
	}
	sh.tat[key] = charged(now, tat, l, n)
	return nil
}

// charged is a key's tat (ns) once n calls more are charged to it at now:
// moved on by n intervals, and at most twice the burst's span past now.
func charged(now, tat int64, l Limit, n float64) int64 {
	interval := float64(time.Second) / l.Rate
	span := float64(max(l.Burst, 1)) * interval
	next := float64(max(tat, now)) + n*interval
	return int64(min(next, float64(now)+2*span))
}

// makeRoom drops the keys whose allowance is full (they carry nothing),
// or, if none is, one at random. sh.mu is held.
func (sh *memShard) makeRoom(now int64) {
	for k, t := range sh.tat {
		if t <= now {
			delete(sh.tat, k)
		}
	}
	if len(sh.tat) == 0 {
		return
	}
	for k := range sh.tat {
		delete(sh.tat, k)
		return
	}
}

// gcra applies the generic cell rate algorithm to a key whose allowance
// is full at tat (ns): it returns the key's new tat when a call at now
// fits, or how long until one would.
func gcra(now, tat int64, l Limit) (next int64, ok bool, retryAfter time.Duration) {
	interval := int64(float64(time.Second) / l.Rate)
	burst := int64(max(l.Burst, 1))
	tat = max(tat, now)
	next = tat + interval
	if over := next - now - burst*interval; over > 0 {
		return 0, false, time.Duration(over)
	}
	return next, true, 0
}

// Len returns how many keys the store keeps.
func (s *MemoryStore) Len() int {
	n := 0
	for i := range s.shards {
		sh := &s.shards[i]
		sh.mu.Lock()
		n += len(sh.tat)
		sh.mu.Unlock()
	}
	return n
}
