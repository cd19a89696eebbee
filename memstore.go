package otc

import (
	"context"
	"sync"
	"time"
)

// Defaults of [MemoryStoreOptions].
const (
	// DefaultIdempotencyTTL is how long a recorded outcome is kept: a
	// day, long enough for any agent's retries, including one resumed
	// after a crash.
	DefaultIdempotencyTTL = 24 * time.Hour
	// DefaultMemoryStoreEntries caps the calls a [MemoryStore] holds,
	// recorded and in flight.
	DefaultMemoryStoreEntries = 100_000
	// DefaultMemoryStoreBytes caps the bytes of the outcomes a
	// [MemoryStore] holds, with their keys: 64 MiB.
	DefaultMemoryStoreBytes = 64 << 20
	// DefaultMaxOutcomeBytes is the largest outcome a store records: 1
	// MiB. A call whose result is larger is not deduplicated.
	DefaultMaxOutcomeBytes = 1 << 20
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
	// DefaultMemoryStoreEntries.
	MaxEntries int
	// MaxBytes caps the size of the recorded outcomes and their keys;
	// the oldest are dropped first to stay under it. Zero or less means
	// DefaultMemoryStoreBytes.
	MaxBytes int64
	// MaxOutcomeBytes is the largest outcome recorded; a call whose
	// outcome is larger is not deduplicated: its key is released, and a
	// retry runs it again. Zero or less means DefaultMaxOutcomeBytes.
	MaxOutcomeBytes int
}

// MemoryStore is an [IdempotencyStore] that keeps its record in the
// process: for one server, or for replicas behind a load balancer that
// sends each caller to the same one. It is bounded in entries and in
// bytes, drops outcomes after a TTL, and evicts the oldest first. A call
// in flight holds its key until its function returns; there is no lease,
// as the record dies with the process. It is safe for concurrent use.
type MemoryStore struct {
	ttl        time.Duration
	maxEntries int
	maxBytes   int64
	maxOutcome int
	now        func() time.Time

	mu         sync.Mutex
	entries    map[string]*memEntry
	head, tail *memEntry // recorded outcomes, oldest (first to expire) first
	bytes      int64     // size of the recorded entries
}

// memEntry is one key: in flight until done, then in the list.
type memEntry struct {
	store       *MemoryStore
	key         string
	fingerprint string
	done        bool
	outcome     []byte
	expires     time.Time
	size        int64
	wait        chan struct{} // made by the first waiter; closed when no longer in flight
	prev, next  *memEntry
}

// entryOverhead approximates the bytes an entry costs besides its key,
// fingerprint and outcome.
const entryOverhead = 160

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
		entries:    make(map[string]*memEntry),
	}
	if s.ttl <= 0 {
		s.ttl = DefaultIdempotencyTTL
	}
	if s.maxEntries <= 0 {
		s.maxEntries = DefaultMemoryStoreEntries
	}
	if s.maxBytes <= 0 {
		s.maxBytes = DefaultMemoryStoreBytes
	}
	if s.maxOutcome <= 0 {
		s.maxOutcome = DefaultMaxOutcomeBytes
	}
	return s
}

// Len returns the number of calls the store holds, recorded and in
// flight, counting outcomes past their TTL that have not been dropped yet.
func (s *MemoryStore) Len() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.entries)
}

// Claim implements [IdempotencyStore].
func (s *MemoryStore) Claim(_ context.Context, key, fingerprint string) (*IdempotencyRecord, IdempotencyClaim, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if e := s.entries[key]; e != nil {
		if !e.done || s.now().Before(e.expires) {
			return &IdempotencyRecord{Fingerprint: e.fingerprint, Done: e.done, Outcome: e.outcome}, nil, nil
		}
		s.expire(s.now())
	}
	for len(s.entries) >= s.maxEntries && s.head != nil {
		s.drop(s.head)
	}
	if len(s.entries) >= s.maxEntries {
		return nil, nil, ErrStoreFull
	}
	e := &memEntry{store: s, key: key, fingerprint: fingerprint}
	s.entries[key] = e
	return nil, e, nil
}

// Wait implements [IdempotencyStore].
func (s *MemoryStore) Wait(ctx context.Context, key string) error {
	s.mu.Lock()
	e := s.entries[key]
	if e == nil || e.done {
		s.mu.Unlock()
		return nil
	}
	if e.wait == nil {
		e.wait = make(chan struct{})
	}
	ch := e.wait
	s.mu.Unlock()
	select {
	case <-ch:
		return nil
	case <-ctx.Done():
		return context.Cause(ctx)
	}
}

// Complete implements [IdempotencyClaim].
func (e *memEntry) Complete(_ context.Context, outcome []byte) error {
	s := e.store
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.entries[e.key] != e || e.done {
		return ErrClaimLost
	}
	e.size = int64(len(e.key)+len(e.fingerprint)+len(outcome)) + entryOverhead
	if len(outcome) > s.maxOutcome || e.size > s.maxBytes {
		s.forget(e)
		return ErrOutcomeTooLarge
	}
	now := s.now()
	s.expire(now)
	e.done, e.outcome = true, outcome
	e.expires = now.Add(s.ttl)
	e.wake()
	// Append to the list, then drop the oldest until the store fits.
	e.prev = s.tail
	if s.tail != nil {
		s.tail.next = e
	} else {
		s.head = e
	}
	s.tail = e
	s.bytes += e.size
	for s.bytes > s.maxBytes && s.head != nil {
		s.drop(s.head)
	}
	return nil
}

// Release implements [IdempotencyClaim].
func (e *memEntry) Release(context.Context) error {
	s := e.store
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.entries[e.key] != e || e.done {
		return ErrClaimLost
	}
	s.forget(e)
	return nil
}

// forget removes an entry in flight and wakes its waiters.
func (s *MemoryStore) forget(e *memEntry) {
	delete(s.entries, e.key)
	e.wake()
}

func (e *memEntry) wake() {
	if e.wait != nil {
		close(e.wait)
		e.wait = nil
	}
}

// expire drops the recorded outcomes whose TTL has passed. The list is in
// the order outcomes were recorded, so they are at its head. It runs as
// each outcome is recorded, and when a claim finds an expired one.
func (s *MemoryStore) expire(now time.Time) {
	for s.head != nil && !now.Before(s.head.expires) {
		s.drop(s.head)
	}
}

// drop removes a recorded entry.
func (s *MemoryStore) drop(e *memEntry) {
	if e.prev != nil {
		e.prev.next = e.next
	} else {
		s.head = e.next
	}
	if e.next != nil {
		e.next.prev = e.prev
	} else {
		s.tail = e.prev
	}
	e.prev, e.next = nil, nil
	s.bytes -= e.size
	if s.entries[e.key] == e {
		delete(s.entries, e.key)
	}
}
