package idempotency

import (
	"context"
	"hash/maphash"
	"sync"
	"time"

	"github.com/otcgo/otc"
)

// Defaults of [MemoryStoreOptions].
const (
	// DefaultMaxEntries caps the calls a [MemoryStore] holds, recorded
	// and in flight.
	DefaultMaxEntries = 100_000
	// DefaultMaxBytes caps the bytes of the outcomes a [MemoryStore]
	// holds, with their keys: 64 MiB.
	DefaultMaxBytes = 64 << 20
)

// MemoryStoreOptions configures a [MemoryStore]. The zero value, and nil,
// give the defaults described on each field.
type MemoryStoreOptions struct {
	// TTL is how long an outcome is kept after it was recorded. Zero or
	// less means DefaultIdempotencyTTL.
	TTL time.Duration
	// MaxEntries caps the calls held, recorded and in flight. When it is
	// reached the oldest recorded outcomes are dropped first; a claim
	// that still finds no room (every entry is in flight) fails, and the
	// call is answered with a retryable error. Zero or less means
	// DefaultMaxEntries.
	MaxEntries int
	// MaxBytes caps the size of the recorded outcomes and their keys;
	// the oldest are dropped first to stay under it. Zero or less means
	// DefaultMaxBytes.
	MaxBytes int64
	// MaxOutcomeBytes is the largest outcome recorded; a call whose
	// outcome is larger is not deduplicated: its key is released, and a
	// retry runs it again. Zero or less means DefaultMaxOutcomeBytes.
	MaxOutcomeBytes int
}

// MemoryStore is an [otc.IdempotencyStore] that keeps its record in the
// process: for one server, or for replicas behind a load balancer that
// sends each caller to the same one. It is bounded in entries and in
// bytes, drops outcomes after a TTL, and evicts the oldest first. A call
// in flight holds its key until its function returns; there is no lease,
// as the record dies with the process. It is safe for concurrent use.
//
// Keys are kept hashed, in one map and a queue of the order outcomes were
// recorded in, so that a large store costs little per call and little to
// the garbage collector.
type MemoryStore struct {
	ttl        time.Duration
	maxEntries int
	maxBytes   int64
	maxOutcome int
	now        func() time.Time
	seeds      [2]maphash.Seed

	mu      sync.Mutex
	entries map[memKey]memEntry
	order   []memOrder // recorded outcomes, oldest first, from order[head]
	head    int
	seq     uint64
	bytes   int64 // size of the recorded outcomes
}

// memKey is a key, hashed: two 64-bit hashes under random seeds, so that
// map lookups compare 16 bytes and no one can pick keys that collide.
type memKey [2]uint64

// memEntry is a key's call: in flight while flight is set, then its
// recorded outcome.
type memEntry struct {
	fingerprint string
	outcome     []byte
	flight      *memFlight
	seq         uint64 // matches the outcome's entry in order
	expires     int64  // Unix nanoseconds
}

// memOrder is an entry of the eviction order. seq tells whether the
// outcome it names is still the one it was made for; expires is the
// outcome's, so that the head's can be read without a lookup.
type memOrder struct {
	key     memKey
	seq     uint64
	expires int64
}

// memFlight is a call in flight, and the claim its caller holds.
type memFlight struct {
	store *MemoryStore
	key   memKey
	wait  chan struct{} // made by the first waiter; closed when the call ends
}

// InProcess reports that the store keeps its record in this process, so
// that the registry knows a claim never waits on the network (and keeps
// single-use tokens in a ledger replicas share only when the store is
// not in process).
func (*MemoryStore) InProcess() bool { return true }

// entryOverhead approximates the bytes a recorded outcome costs besides
// its fingerprint and outcome.
const entryOverhead = 96

// NewMemoryStore returns an empty in-memory store. opts may be nil.
func NewMemoryStore(opts *MemoryStoreOptions) *MemoryStore {
	if opts == nil {
		opts = &MemoryStoreOptions{}
	}
	s := &MemoryStore{
		ttl:        opts.TTL,
		maxEntries: opts.MaxEntries,
		maxBytes:   opts.MaxBytes,
		maxOutcome: opts.MaxOutcomeBytes,
		now:        time.Now,
		seeds:      [2]maphash.Seed{maphash.MakeSeed(), maphash.MakeSeed()},
		entries:    make(map[memKey]memEntry),
	}
	if s.ttl <= 0 {
		s.ttl = otc.DefaultIdempotencyTTL
	}
	if s.maxEntries <= 0 {
		s.maxEntries = DefaultMaxEntries
	}
	if s.maxBytes <= 0 {
		s.maxBytes = DefaultMaxBytes
	}
	if s.maxOutcome <= 0 {
		s.maxOutcome = otc.DefaultMaxOutcomeBytes
	}
	return s
}

func (s *MemoryStore) hash(key string) memKey {
	return memKey{maphash.String(s.seeds[0], key), maphash.String(s.seeds[1], key)}
}

// Len returns the number of calls the store holds, recorded and in
// flight, counting outcomes past their TTL that have not been dropped yet.
func (s *MemoryStore) Len() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.entries)
}

// Claim implements [otc.IdempotencyStore].
func (s *MemoryStore) Claim(_ context.Context, key, fingerprint string) (*otc.IdempotencyRecord, otc.IdempotencyClaim, error) {
	k := s.hash(key)
	s.mu.Lock()
	defer s.mu.Unlock()
	if e, ok := s.entries[k]; ok {
		if e.flight != nil {
			return &otc.IdempotencyRecord{Fingerprint: e.fingerprint}, nil, nil
		}
		now := s.now()
		if now.UnixNano() < e.expires {
			return &otc.IdempotencyRecord{Fingerprint: e.fingerprint, Done: true, Outcome: e.outcome}, nil, nil
		}
		s.expire(now)
		if cur, ok := s.entries[k]; ok && cur.seq == e.seq {
			s.forget(k, cur) // the clock went back: the order had not reached it
		}
	}
	for len(s.entries) >= s.maxEntries && s.evictOldest() {
	}
	if len(s.entries) >= s.maxEntries {
		return nil, nil, otc.ErrStoreFull
	}
	f := &memFlight{store: s, key: k}
	s.entries[k] = memEntry{fingerprint: fingerprint, flight: f}
	return nil, f, nil
}

// Wait implements [otc.IdempotencyStore].
func (s *MemoryStore) Wait(ctx context.Context, key string) error {
	k := s.hash(key)
	s.mu.Lock()
	f := s.entries[k].flight
	if f == nil {
		s.mu.Unlock()
		return nil
	}
	if f.wait == nil {
		f.wait = make(chan struct{})
	}
	ch := f.wait
	s.mu.Unlock()
	select {
	case <-ch:
		return nil
	case <-ctx.Done():
		return context.Cause(ctx)
	}
}

// Complete implements [otc.IdempotencyClaim].
func (f *memFlight) Complete(_ context.Context, outcome []byte) error {
	s := f.store
	s.mu.Lock()
	defer s.mu.Unlock()
	e, ok := f.end()
	if !ok {
		return otc.ErrClaimLost
	}
	size := int64(len(e.fingerprint)+len(outcome)) + entryOverhead
	if len(outcome) > s.maxOutcome || size > s.maxBytes {
		delete(s.entries, f.key)
		return otc.ErrOutcomeTooLarge
	}
	now := s.now()
	s.expire(now)
	s.seq++
	expires := now.Add(s.ttl).UnixNano()
	s.entries[f.key] = memEntry{fingerprint: e.fingerprint, outcome: outcome, seq: s.seq, expires: expires}
	s.order = append(s.order, memOrder{key: f.key, seq: s.seq, expires: expires})
	s.bytes += size
	for s.bytes > s.maxBytes && s.evictOldest() {
	}
	return nil
}

// Release implements [otc.IdempotencyClaim].
func (f *memFlight) Release(context.Context) error {
	s := f.store
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, ok := f.end(); !ok {
		return otc.ErrClaimLost
	}
	delete(s.entries, f.key)
	return nil
}

// end wakes the flight's waiters and returns its entry, for the caller to
// replace or delete; false if it had already ended. The caller holds the
// lock.
func (f *memFlight) end() (memEntry, bool) {
	e, ok := f.store.entries[f.key]
	if !ok || e.flight != f {
		return memEntry{}, false
	}
	if f.wait != nil {
		close(f.wait)
		f.wait = nil
	}
	return e, true
}

// expire drops the recorded outcomes whose TTL has passed. The order is
// that in which outcomes were recorded, so they are at its head. It runs
// as each outcome is recorded, and when a claim finds an expired one.
func (s *MemoryStore) expire(now time.Time) {
	t := now.UnixNano()
	for s.head < len(s.order) && s.order[s.head].expires <= t {
		s.evictOldest()
	}
}

// evictOldest drops the oldest recorded outcome, if the order has one,
// and reports whether it had.
func (s *MemoryStore) evictOldest() bool {
	if s.head == len(s.order) {
		return false
	}
	o := s.order[s.head]
	s.order[s.head] = memOrder{}
	s.head++
	if e, ok := s.entries[o.key]; ok && e.flight == nil && e.seq == o.seq {
		s.forget(o.key, e)
	}
	// Reclaim the consumed front of the order once it is half of it.
	if s.head >= 1024 && 2*s.head >= len(s.order) {
		n := copy(s.order, s.order[s.head:])
		s.order = s.order[:n]
		s.head = 0
	}
	return true
}

// forget removes a recorded outcome.
func (s *MemoryStore) forget(k memKey, e memEntry) {
	delete(s.entries, k)
	s.bytes -= int64(len(e.fingerprint)+len(e.outcome)) + entryOverhead
}
