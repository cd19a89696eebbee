// Package redisstore keeps the record of an otc registry's calls in Redis,
// so that replicas of a tool server behind a load balancer share it: a
// call retried with the same call_id on another replica is answered with
// the first call's outcome instead of running the tool again.
//
//	client := redis.NewClient(&redis.Options{Addr: "127.0.0.1:6379"})
//	reg := otc.NewRegistry(&otc.RegistryOptions{
//		Idempotency: redisstore.New(client, nil),
//	})
//
// # How it works
//
// Each call id is one Redis string, under Options.Prefix followed by the
// SHA-256 of the registry's key (the caller's identity and the call id),
// so that keys are short whatever the identity. The first replica to
// claim a key sets it, atomically, to an in-flight record carrying a
// random claim token, with a lease (Options.Lease) as its expiry; while
// the call runs, the replica renews the lease every third of it. The
// others find the in-flight record and poll until it changes. When the
// call ends, the replica replaces the record, if its token still holds
// it, by the outcome, kept for Options.TTL; or deletes it, for a call
// whose outcome is not recorded. Every step that reads and writes a key
// is one Lua script, so no two replicas can both claim one.
//
// # At least once, when a replica dies
//
// If a replica dies mid-call, nothing renews its lease, the in-flight
// record expires, and a later retry of the call, on any replica, claims
// it again and runs the call: the tool may then run twice for that call
// id. This is the price of not waiting forever for a replica that is
// gone: calls run at most once while replicas live, and at least once
// when one dies during a call. A replica that is only slow keeps its
// claim, as long as it can reach Redis to renew it; one cut off from
// Redis for longer than the lease may find, when it finishes, that
// another has claimed the key, and its outcome is then not recorded
// (Complete returns otc.ErrClaimLost, which the registry logs). The same
// holds when Redis itself loses a record: a primary that fails over
// before its replica has the latest writes, or a restart without
// persistence, forgets claims and outcomes, and retries of those calls
// run again.
//
// # Limits
//
// An outcome larger than Options.MaxOutcomeBytes is not stored, and its
// call is not deduplicated. Redis's own memory policy bounds the rest;
// with an eviction policy other than noeviction, Redis may drop records
// before their TTL, and a retry after that runs again.
package redisstore

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/otcgo/otc"
)

// Defaults of [Options].
const (
	// DefaultPrefix starts every key the store writes.
	DefaultPrefix = "otc:idem:"
	// DefaultLease is how long a claim lives without being renewed: long
	// enough to ride out a pause of the replica or of Redis, short enough
	// that a retry after a replica died runs within a minute.
	DefaultLease = 30 * time.Second
	// DefaultPollInterval is the longest pause between two looks at a
	// call in flight elsewhere.
	DefaultPollInterval = 100 * time.Millisecond
)

// Options configures a [Store]. The zero value, and nil, give the
// defaults described on each field.
type Options struct {
	// Prefix starts every key. Empty means DefaultPrefix. Servers that
	// must not share records use different prefixes (or databases).
	Prefix string
	// TTL is how long an outcome is kept. Zero or less means
	// otc.DefaultIdempotencyTTL. Redis counts expiries in milliseconds:
	// TTL and Lease are rounded up to whole ones.
	TTL time.Duration
	// Lease is how long a claim lives unless renewed; the claiming
	// replica renews it every third of it while the call runs. Zero or
	// less means DefaultLease.
	Lease time.Duration
	// MaxOutcomeBytes is the largest outcome stored; a call whose outcome
	// is larger is not deduplicated. Zero or less means
	// otc.DefaultMaxOutcomeBytes.
	MaxOutcomeBytes int
	// PollInterval is the longest pause between two looks at a call in
	// flight on another replica; the first looks come sooner. Zero or
	// less means DefaultPollInterval.
	PollInterval time.Duration
	// Logger receives a warning when a claim's lease could not be
	// renewed. Nil means slog.Default().
	Logger *slog.Logger
}

// Store is an [otc.IdempotencyStore] in Redis. It is safe for concurrent
// use.
type Store struct {
	client     redis.UniversalClient
	prefix     string
	ttl        time.Duration
	lease      time.Duration
	maxOutcome int
	poll       time.Duration
	logger     *slog.Logger
}

var _ otc.IdempotencyStore = (*Store)(nil)

// New returns a store that keeps its records through client. opts may be
// nil.
func New(client redis.UniversalClient, opts *Options) *Store {
	if opts == nil {
		opts = &Options{}
	}
	s := &Store{
		client:     client,
		prefix:     opts.Prefix,
		ttl:        opts.TTL,
		lease:      opts.Lease,
		maxOutcome: opts.MaxOutcomeBytes,
		poll:       opts.PollInterval,
		logger:     opts.Logger,
	}
	if s.prefix == "" {
		s.prefix = DefaultPrefix
	}
	if s.ttl <= 0 {
		s.ttl = otc.DefaultIdempotencyTTL
	}
	if s.lease <= 0 {
		s.lease = DefaultLease
	}
	if s.maxOutcome <= 0 {
		s.maxOutcome = otc.DefaultMaxOutcomeBytes
	}
	if s.poll <= 0 {
		s.poll = DefaultPollInterval
	}
	if s.logger == nil {
		s.logger = slog.Default()
	}
	s.ttl, s.lease = roundUp(s.ttl), roundUp(s.lease)
	return s
}

// roundUp rounds d up to whole milliseconds: Redis keeps expiries in
// milliseconds, and refuses an expiry of zero.
func roundUp(d time.Duration) time.Duration {
	return (d + time.Millisecond - 1).Truncate(time.Millisecond)
}

// A record is one Redis string: "R" + token + fingerprint while the call
// is in flight, "D" + uvarint(len(fingerprint)) + fingerprint + outcome
// once done. Tokens are tokenLen hex characters.
const tokenLen = 32

// The scripts. A claim's prefix is "R" followed by its token.
var (
	claimScript = redis.NewScript(`
local v = redis.call('GET', KEYS[1])
if v then return v end
redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2])
return false`)

	completeScript = redis.NewScript(`
local v = redis.call('GET', KEYS[1])
if not v or string.sub(v, 1, #ARGV[1]) ~= ARGV[1] then return 0 end
redis.call('SET', KEYS[1], ARGV[2], 'PX', ARGV[3])
return 1`)

	renewScript = redis.NewScript(`
local v = redis.call('GET', KEYS[1])
if not v or string.sub(v, 1, #ARGV[1]) ~= ARGV[1] then return 0 end
redis.call('PEXPIRE', KEYS[1], ARGV[2])
return 1`)

	releaseScript = redis.NewScript(`
local v = redis.call('GET', KEYS[1])
if not v or string.sub(v, 1, #ARGV[1]) ~= ARGV[1] then return 0 end
redis.call('DEL', KEYS[1])
return 1`)
)

func (s *Store) redisKey(key string) string {
	sum := sha256.Sum256([]byte(key))
	return s.prefix + hex.EncodeToString(sum[:])
}

// Claim implements [otc.IdempotencyStore].
func (s *Store) Claim(ctx context.Context, key, fingerprint string) (*otc.IdempotencyRecord, otc.IdempotencyClaim, error) {
	var tok [tokenLen / 2]byte
	_, _ = rand.Read(tok[:]) // crypto/rand.Read never fails
	held := "R" + hex.EncodeToString(tok[:])
	rk := s.redisKey(key)
	v, err := claimScript.Run(ctx, s.client, []string{rk}, held+fingerprint, s.lease.Milliseconds()).Text()
	switch {
	case errors.Is(err, redis.Nil):
		c := &claim{store: s, key: rk, held: held, fingerprint: fingerprint, stop: make(chan struct{}), stopped: make(chan struct{})}
		go c.renew()
		return nil, c, nil
	case err != nil:
		return nil, nil, fmt.Errorf("redisstore: claiming a call id: %w", err)
	}
	rec, err := parseRecord(v)
	if err != nil {
		return nil, nil, err
	}
	return rec, nil, nil
}

// parseRecord reads a record's value.
func parseRecord(v string) (*otc.IdempotencyRecord, error) {
	switch {
	case len(v) > tokenLen && v[0] == 'R':
		return &otc.IdempotencyRecord{Fingerprint: v[1+tokenLen:]}, nil
	case len(v) > 1 && v[0] == 'D':
		n, w := binary.Uvarint([]byte(v[1:min(len(v), 11)]))
		if w > 0 && n <= uint64(len(v)-1-w) {
			fp := v[1+w : 1+w+int(n)]
			return &otc.IdempotencyRecord{Fingerprint: fp, Done: true, Outcome: []byte(v[1+w+int(n):])}, nil
		}
	}
	return nil, errors.New("redisstore: a record in Redis is not one this store wrote; is another program using its prefix?")
}

// Wait implements [otc.IdempotencyStore]: it polls, sooner at first,
// until the key holds no call in flight.
func (s *Store) Wait(ctx context.Context, key string) error {
	rk := s.redisKey(key)
	pause := min(5*time.Millisecond, s.poll)
	t := time.NewTimer(pause)
	defer t.Stop()
	for {
		v, err := s.client.Get(ctx, rk).Result()
		switch {
		case errors.Is(err, redis.Nil):
			return nil
		case err != nil:
			if ctx.Err() != nil {
				return context.Cause(ctx)
			}
			return fmt.Errorf("redisstore: waiting for a call in flight: %w", err)
		case len(v) == 0 || v[0] != 'R':
			return nil
		}
		select {
		case <-ctx.Done():
			return context.Cause(ctx)
		case <-t.C:
		}
		pause = min(2*pause, s.poll)
		t.Reset(pause)
	}
}

// claim is a key this replica holds, under its token, while the call runs.
type claim struct {
	store       *Store
	key         string
	held        string // "R" + token: the prefix of the record while we hold it
	fingerprint string
	once        sync.Once
	stop        chan struct{}
	stopped     chan struct{}
}

// renew extends the lease every third of it until the claim ends.
func (c *claim) renew() {
	defer close(c.stopped)
	s := c.store
	tick := time.NewTicker(s.lease / 3)
	defer tick.Stop()
	for {
		select {
		case <-c.stop:
			return
		case <-tick.C:
		}
		ctx, cancel := context.WithTimeout(context.Background(), s.lease/3)
		ok, err := renewScript.Run(ctx, s.client, []string{c.key}, c.held, s.lease.Milliseconds()).Int()
		cancel()
		switch {
		case err != nil:
			// Try again at the next tick: the lease has two thirds left.
			s.logger.Warn("redisstore: renewing the lease of a call in flight failed", slog.String("error", err.Error()))
		case ok == 0:
			s.logger.Warn("redisstore: the lease of a call in flight lapsed; another replica may run the call again")
			return
		}
	}
}

// end stops the renewals.
func (c *claim) end() {
	c.once.Do(func() { close(c.stop) })
	<-c.stopped
}

// Complete implements [otc.IdempotencyClaim].
func (c *claim) Complete(ctx context.Context, outcome []byte) error {
	c.end()
	s := c.store
	if len(outcome) > s.maxOutcome {
		if err := c.release(ctx); err != nil && !errors.Is(err, otc.ErrClaimLost) {
			return err
		}
		return otc.ErrOutcomeTooLarge
	}
	fp := c.fingerprint
	v := make([]byte, 0, 1+binary.MaxVarintLen64+len(fp)+len(outcome))
	v = append(v, 'D')
	v = binary.AppendUvarint(v, uint64(len(fp)))
	v = append(append(v, fp...), outcome...)
	ok, err := completeScript.Run(ctx, s.client, []string{c.key}, c.held, v, s.ttl.Milliseconds()).Int()
	switch {
	case err != nil:
		return fmt.Errorf("redisstore: recording an outcome: %w", err)
	case ok == 0:
		return otc.ErrClaimLost
	}
	return nil
}

// Release implements [otc.IdempotencyClaim].
func (c *claim) Release(ctx context.Context) error {
	c.end()
	return c.release(ctx)
}

func (c *claim) release(ctx context.Context) error {
	ok, err := releaseScript.Run(ctx, c.store.client, []string{c.key}, c.held).Int()
	switch {
	case err != nil:
		return fmt.Errorf("redisstore: releasing a call id: %w", err)
	case ok == 0:
		return otc.ErrClaimLost
	}
	return nil
}
