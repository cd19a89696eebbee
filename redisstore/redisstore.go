package redisstore

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/otcgo/otc"
)

// Defaults of [IdempotencyOptions].
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
	// DefaultOpTimeout is the deadline of one Redis operation: far above
	// a healthy round trip, even to another region, and short enough
	// that a call held up by a stalled Redis is answered within seconds.
	DefaultOpTimeout = 2 * time.Second
)

// Pauses between two attempts to write an outcome Redis did not record:
// short at first, for a blip, then capped, so that an outcome is
// recorded within about a second of Redis recovering.
const (
	writeBehindFirst = 100 * time.Millisecond
	writeBehindMax   = time.Second
)

// IdempotencyOptions configures an [IdempotencyStore]. The zero value, and nil, give the
// defaults described on each field.
type IdempotencyOptions struct {
	// Prefix starts every key. Empty means DefaultPrefix. Servers that
	// must not share records use different prefixes (or databases).
	Prefix string
	// TTL is how long an outcome is kept. Zero or less means
	// otc.DefaultIdempotencyTTL. Redis counts expiries in milliseconds:
	// TTL and Lease are rounded up to whole ones.
	TTL time.Duration
	// Lease is how long a claim lives unless renewed; the claiming
	// replica renews it every third of it while the call runs, and while
	// it tries to write an outcome Redis refused. Keep it several times
	// OpTimeout, so that a renewal that timed out can be followed by
	// another in time. Zero or less means DefaultLease.
	Lease time.Duration
	// MaxOutcomeBytes is the largest outcome stored; a call whose outcome
	// is larger is not deduplicated. Zero or less means
	// otc.DefaultMaxOutcomeBytes.
	MaxOutcomeBytes int
	// PollInterval is the longest pause between two looks at a call in
	// flight on another replica; the first looks come sooner. Zero or
	// less means DefaultPollInterval.
	PollInterval time.Duration
	// OpTimeout is the deadline of each Redis operation: a claim, a look
	// at a call in flight, the write of an outcome, a release, a renewal
	// (which also gets no more than a third of the lease). The store
	// returns at the deadline even if the client is still waiting (by
	// default go-redis applies a context's deadline to its connections
	// only with redis.Options.ContextTimeoutEnabled), so that the bound
	// holds whatever the client's timeouts. With a client that has
	// ContextTimeoutEnabled, the store leaves the deadline to it; with
	// any other, it watches each operation from a goroutine of its own,
	// which costs a little per call: turn ContextTimeoutEnabled on where
	// you can. Zero or less means DefaultOpTimeout.
	OpTimeout time.Duration
	// Logger receives a warning when a claim's lease could not be
	// renewed or was lost, and news of outcomes written in the
	// background. Nil means slog.Default().
	Logger *slog.Logger
}

// conn is a store's connection to Redis, the one shape the three stores
// of this package (idempotency, tasks, rate limits) share, so that each
// bounds its operations, shares round trips and recovers from a cluster's
// failover the same way.
type conn struct {
	client    redis.UniversalClient
	opTimeout time.Duration
	// honours is true when the client ends an operation at its context's
	// deadline (ContextTimeoutEnabled), so that op need not watch it.
	honours bool
	// batch sends the commands of concurrent operations together.
	batch *batcher
	// cluster is the client when it is a cluster's, for failed.
	cluster *redis.ClusterClient
}

// newConn returns the connection of a store through client, whose
// operations end at opTimeout (DefaultOpTimeout when zero or less).
func newConn(client redis.UniversalClient, opTimeout time.Duration) *conn {
	if opTimeout <= 0 {
		opTimeout = DefaultOpTimeout
	}
	c := &conn{client: client, opTimeout: opTimeout, honours: honoursDeadlines(client)}
	c.cluster, _ = client.(*redis.ClusterClient)
	c.batch = &batcher{client: client, timeout: opTimeout, failed: c.failed}
	return c
}

// IdempotencyStore is an [otc.IdempotencyStore] in Redis. It is safe for concurrent
// use.
type IdempotencyStore struct {
	*conn
	prefix     string
	ttl        time.Duration
	lease      time.Duration
	maxOutcome int
	poll       time.Duration
	logger     *slog.Logger
	// scriptedClaims is set once Redis has refused SET with both NX and
	// GET (before 7.0): claims are then made by claimScript.
	scriptedClaims atomic.Bool

	// The outcomes being written in the background (see writeBehind).
	mu       sync.Mutex
	shutdown bool           // no more are started
	behind   sync.WaitGroup // one per outcome
	quit     chan struct{}  // closed to stop them
	quitOnce sync.Once
}

var _ otc.IdempotencyStore = (*IdempotencyStore)(nil)

// NewIdempotencyStore returns a store that keeps its records through client. opts may be
// nil.
func NewIdempotencyStore(client redis.UniversalClient, opts *IdempotencyOptions) *IdempotencyStore {
	if opts == nil {
		opts = &IdempotencyOptions{}
	}
	s := &IdempotencyStore{
		conn:       newConn(client, opts.OpTimeout),
		prefix:     opts.Prefix,
		ttl:        opts.TTL,
		lease:      opts.Lease,
		maxOutcome: opts.MaxOutcomeBytes,
		poll:       opts.PollInterval,
		logger:     opts.Logger,
		quit:       make(chan struct{}),
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

// honoursDeadlines reports whether client ends an operation at its
// context's deadline, which go-redis does with ContextTimeoutEnabled.
func honoursDeadlines(client redis.UniversalClient) bool {
	switch c := client.(type) {
	case *redis.Client:
		return c.Options().ContextTimeoutEnabled
	case *redis.ClusterClient:
		return c.Options().ContextTimeoutEnabled
	case *redis.Ring:
		return c.Options().ContextTimeoutEnabled
	}
	return false
}

// Shutdown stops the store's background work: it waits, until ctx ends,
// for the outcomes Redis had not recorded to be written (see the package
// doc), then stops trying and returns ctx's cause if some were not. The
// call ids of those are freed when their leases lapse, as when a replica
// dies. Calls still running keep their claims; a failed write of theirs
// is not retried after Shutdown. Call it once the server has stopped
// serving, and before closing the client.
func (s *IdempotencyStore) Shutdown(ctx context.Context) error {
	s.mu.Lock()
	s.shutdown = true
	s.mu.Unlock()
	done := make(chan struct{})
	go func() {
		s.behind.Wait()
		close(done)
	}()
	select {
	case <-done:
		return nil
	case <-ctx.Done():
		s.quitOnce.Do(func() { close(s.quit) })
		<-done
		return context.Cause(ctx)
	}
}

// roundUp rounds d up to whole milliseconds: Redis keeps expiries in
// milliseconds, and refuses an expiry of zero.
func roundUp(d time.Duration) time.Duration {
	return (d + time.Millisecond - 1).Truncate(time.Millisecond)
}

// errTimeout is the cause of an operation that ran past its deadline.
var errTimeout = fmt.Errorf("redisstore: Redis did not answer within the deadline (Options.OpTimeout): %w", context.DeadlineExceeded)

// op runs f, one Redis operation of s's client, with a deadline of
// timeout, and returns at the deadline even if f has not: a client that
// waits on its own timeouts (go-redis without ContextTimeoutEnabled waits
// its ReadTimeout, and may try again) must not stretch the bound. Unless
// the client honours deadlines itself, f runs in a goroutine of its own,
// which ends when the client gives up; its result is then dropped. At the
// deadline, op returns errTimeout, or ctx's cause if ctx ended first.
func op[T any](s *conn, ctx context.Context, timeout time.Duration, f func(context.Context) (T, error)) (T, error) {
	type result struct {
		v   T
		err error
	}
	octx, cancel := context.WithTimeoutCause(ctx, timeout, errTimeout)
	if s.honours {
		defer cancel()
		v, err := f(octx)
		s.failed(err)
		if err != nil && octx.Err() != nil {
			err = context.Cause(octx)
		}
		return v, err
	}
	done := make(chan result, 1)
	go func() {
		defer cancel()
		v, err := f(octx)
		s.failed(err)
		done <- result{v, err}
	}()
	select {
	case r := <-done:
		return r.v, r.err
	case <-octx.Done():
		select {
		case r := <-done: // it did answer in time after all
			return r.v, r.err
		default:
		}
		var zero T
		return zero, context.Cause(octx)
	}
}

// failed tells a cluster client to read the cluster's map of slots
// again after an operation failed for want of a connection: a master
// that died has been replaced by its replica, which go-redis learns only
// from a redirect, and a dead node sends none. go-redis reloads the map
// at most once at a time.
func (s *conn) failed(err error) {
	if err == nil || s.cluster == nil {
		return
	}
	var ne net.Error
	if errors.As(err, &ne) || errors.Is(err, io.EOF) || errors.Is(err, syscall.ECONNREFUSED) || redis.HasErrorPrefix(err, "CLUSTERDOWN") {
		s.cluster.ReloadState(context.Background())
	}
}

// A record is one Redis string: "R" + token + fingerprint while the call
// is in flight, "D" + uvarint(len(fingerprint)) + fingerprint + outcome
// once done. Tokens are tokenLen hex characters.
const tokenLen = 32

// The scripts. A claim's prefix is "R" followed by its token. The ones a
// claim runs change a key only while it holds the claim's record or
// nothing: a key that holds nothing was lost by Redis (a restart, a
// failover, an eviction) or lapsed without being claimed again, and the
// claim's call is still the one that ran, or runs, under its id.
var (
	claimScript = redis.NewScript(`
local v = redis.call('GET', KEYS[1])
if v then return v end
redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2])
return false`)

	// completeScript returns 1 when the outcome is recorded, including
	// by an earlier attempt whose answer did not arrive in time.
	completeScript = redis.NewScript(`
local v = redis.call('GET', KEYS[1])
if v == ARGV[2] then return 1 end
if v and string.sub(v, 1, #ARGV[1]) ~= ARGV[1] then return 0 end
redis.call('SET', KEYS[1], ARGV[2], 'PX', ARGV[3])
return 1`)

	// renewScript returns 1 when the lease is renewed, 2 when the claim's
	// record had gone and is made again (ARGV[3] is the record), 0 when
	// another holds the key.
	renewScript = redis.NewScript(`
local v = redis.call('GET', KEYS[1])
if not v then
  redis.call('SET', KEYS[1], ARGV[3], 'PX', ARGV[2])
  return 2
end
if string.sub(v, 1, #ARGV[1]) ~= ARGV[1] then return 0 end
redis.call('PEXPIRE', KEYS[1], ARGV[2])
return 1`)

	// releaseScript returns 0 only when another holds the key: a key
	// that holds nothing is as released as can be.
	releaseScript = redis.NewScript(`
local v = redis.call('GET', KEYS[1])
if not v then return 1 end
if string.sub(v, 1, #ARGV[1]) ~= ARGV[1] then return 0 end
redis.call('DEL', KEYS[1])
return 1`)
)

func (s *IdempotencyStore) redisKey(key string) string {
	sum := sha256.Sum256([]byte(key))
	return s.prefix + hex.EncodeToString(sum[:])
}

// Claim implements [otc.IdempotencyStore].
func (s *IdempotencyStore) Claim(ctx context.Context, key, fingerprint string) (*otc.IdempotencyRecord, otc.IdempotencyClaim, error) {
	var tok [tokenLen / 2]byte
	_, _ = rand.Read(tok[:]) // crypto/rand.Read never fails
	held := "R" + hex.EncodeToString(tok[:])
	rk := s.redisKey(key)
	sent := time.Now()
	v, err := s.claimKey(ctx, rk, held+fingerprint)
	// A client that sent the script again, after an answer it did not
	// get, finds the record its first attempt made: the claim is ours.
	if errors.Is(err, redis.Nil) || err == nil && strings.HasPrefix(v, held) {
		c := &claim{store: s, key: rk, held: held, fingerprint: fingerprint, renewed: sent, stop: make(chan struct{}), stopped: make(chan struct{})}
		go c.renew()
		return nil, c, nil
	}
	if err != nil {
		return nil, nil, fmt.Errorf("redisstore: claiming a call id: %w", err)
	}
	rec, err := parseRecord(v)
	if err != nil {
		return nil, nil, err
	}
	return rec, nil, nil
}

// claimKey sets rk to the in-flight record rec, with the lease as its
// expiry, unless it holds a record: it returns that record, or redis.Nil
// when it set rk. It is one command, SET NX GET (Redis 7.0 and later),
// sent with the claims of concurrent calls; on an older Redis, one
// script.
func (s *IdempotencyStore) claimKey(ctx context.Context, rk, rec string) (string, error) {
	if !s.scriptedClaims.Load() {
		octx, cancel := context.WithTimeoutCause(ctx, s.opTimeout, errTimeout)
		defer cancel()
		cmd, err := s.batch.do(octx, func(ctx context.Context, p redis.Pipeliner) redis.Cmder {
			return p.SetArgs(ctx, rk, rec, redis.SetArgs{Mode: "NX", Get: true, TTL: s.lease})
		})
		switch {
		case err == nil:
			return cmd.(*redis.StatusCmd).Val(), nil
		case redis.HasErrorPrefix(err, "OOM"):
			// A full Redis (noeviction) refuses every SET, even one
			// that would find the key held: a retry of a call in flight
			// must still learn so. Look, without writing.
			v, gerr := op(s.conn, ctx, s.opTimeout, func(ctx context.Context) (string, error) {
				return s.client.Get(ctx, rk).Result()
			})
			if gerr == nil {
				return v, nil
			}
			return "", err
		case !strings.Contains(err.Error(), "syntax error"):
			return "", err
		}
		s.scriptedClaims.Store(true)
		s.logger.Info("redisstore: this Redis is older than 7.0 (no SET NX GET): claims are made by a script, which costs Redis more")
	}
	return op(s.conn, ctx, s.opTimeout, func(ctx context.Context) (string, error) {
		return claimScript.Run(ctx, s.client, []string{rk}, rec, s.lease.Milliseconds()).Text()
	})
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
// until the key holds no call in flight. Each look has the deadline
// Options.OpTimeout; one that fails ends the wait with its error.
func (s *IdempotencyStore) Wait(ctx context.Context, key string) error {
	rk := s.redisKey(key)
	pause := min(5*time.Millisecond, s.poll)
	t := time.NewTimer(pause)
	defer t.Stop()
	for {
		v, err := op(s.conn, ctx, s.opTimeout, func(ctx context.Context) (string, error) {
			return s.client.Get(ctx, rk).Result()
		})
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

// claim is a key this replica holds, under its token, while the call runs
// and, if Redis did not record its outcome, while the outcome is written
// in the background.
type claim struct {
	store       *IdempotencyStore
	key         string
	held        string // "R" + token: the prefix of the record while we hold it
	fingerprint string
	// renewed is when the lease was last set, or a little before: it
	// runs until at least renewed plus the lease. Written by renew until
	// it stops, then by writeBehind.
	renewed time.Time
	once    sync.Once
	stop    chan struct{}
	stopped chan struct{}
}

// renew extends the lease every third of it until the claim ends, or
// another call holds the key.
func (c *claim) renew() {
	defer close(c.stopped)
	tick := time.NewTicker(c.store.lease / 3)
	defer tick.Stop()
	for {
		select {
		case <-c.stop:
			return
		case <-tick.C:
		}
		if n, err := c.renewLease(); err == nil && n == 0 {
			c.store.logger.Warn("redisstore: the lease of a call in flight lapsed and another call claimed its id; it may run the call again", slog.String("key", c.key))
			return
		}
	}
}

// renewLease extends the lease, or makes the claim's record again if
// Redis lost it. It returns 1 when renewed, 2 when made again, and 0
// when the key holds another record. A renewal that fails, or is not
// answered within OpTimeout (nor a third of the lease, so that the next
// one comes in time), is logged, and tried again at the next: it is not
// a lapse.
func (c *claim) renewLease() (int, error) {
	s := c.store
	sent := time.Now()
	n, err := op(s.conn, context.Background(), min(s.opTimeout, s.lease/3), func(ctx context.Context) (int, error) {
		return renewScript.Run(ctx, s.client, []string{c.key}, c.held, s.lease.Milliseconds(), c.held+c.fingerprint).Int()
	})
	switch {
	case err != nil:
		s.logger.Warn("redisstore: renewing the lease of a call id failed; trying again", slog.String("key", c.key), slog.String("error", err.Error()))
	case n == 2:
		s.logger.Warn("redisstore: the record of a call id held by this replica had gone from Redis (a restart, a failover, an eviction?); made it again", slog.String("key", c.key))
		fallthrough
	case n == 1:
		c.renewed = sent
	}
	return n, err
}

// end stops the renewals.
func (c *claim) end() {
	c.once.Do(func() { close(c.stop) })
	<-c.stopped
}

// Complete implements [otc.IdempotencyClaim]. When Redis does not record
// the outcome, for a reason other than a lost claim, Complete hands it to
// a goroutine that keeps the claim and writes it (see the package doc),
// and returns an error wrapping otc.ErrOutcomePending.
func (c *claim) Complete(ctx context.Context, outcome []byte) error {
	c.end()
	s := c.store
	if len(outcome) > s.maxOutcome {
		if err := c.release(ctx); err != nil && !errors.Is(err, otc.ErrClaimLost) {
			return err
		}
		return otc.ErrOutcomeTooLarge
	}
	ended := time.Now()
	fp := c.fingerprint
	v := make([]byte, 0, 1+binary.MaxVarintLen64+len(fp)+len(outcome))
	v = append(v, 'D')
	v = binary.AppendUvarint(v, uint64(len(fp)))
	v = append(append(v, fp...), outcome...)
	ok, err := c.complete(ctx, v, s.ttl)
	switch {
	case err == nil && ok:
		return nil
	case err == nil:
		return otc.ErrClaimLost
	}
	err = fmt.Errorf("redisstore: recording an outcome: %w", err)
	s.mu.Lock()
	if s.shutdown {
		s.mu.Unlock()
		return err
	}
	s.behind.Add(1)
	s.mu.Unlock()
	go c.writeBehind(v, ended)
	return fmt.Errorf("%w; %w", err, otc.ErrOutcomePending)
}

// complete writes the record v, kept for ttl, if the key holds the claim
// or nothing; it reports false if another call holds the key.
func (c *claim) complete(ctx context.Context, v []byte, ttl time.Duration) (bool, error) {
	s := c.store
	octx, cancel := context.WithTimeoutCause(ctx, s.opTimeout, errTimeout)
	defer cancel()
	args := []any{c.held, v, roundUp(ttl).Milliseconds()}
	cmd, err := s.batch.do(octx, func(ctx context.Context, p redis.Pipeliner) redis.Cmder {
		return completeScript.EvalSha(ctx, p, []string{c.key}, args...)
	})
	if err != nil && redis.HasErrorPrefix(err, "NOSCRIPT") {
		// Redis has not seen the script (it restarted, or failed over):
		// send it whole, once, alone.
		ok, err := op(s.conn, ctx, s.opTimeout, func(ctx context.Context) (int, error) {
			return completeScript.Run(ctx, s.client, []string{c.key}, args...).Int()
		})
		return ok == 1, err
	}
	if err != nil {
		return false, err
	}
	ok, err := cmd.(*redis.Cmd).Int()
	return ok == 1, err
}

// writeBehind writes the record v of a call that ended at ended, which
// Redis did not record, until it is recorded, another call holds the
// key, the TTL has passed since ended, or Shutdown says to stop. It
// renews the lease meanwhile, so that no retry claims the key.
func (c *claim) writeBehind(v []byte, ended time.Time) {
	s := c.store
	defer s.behind.Done()
	step := min(writeBehindMax, s.lease/3)
	pause := min(writeBehindFirst, step)
	t := time.NewTimer(pause)
	defer t.Stop()
	renewTried := c.renewed // renewals keep renew's pace, whether they succeed or not
	for attempts := 2; ; attempts++ {
		select {
		case <-s.quit:
			s.logger.Warn("redisstore: shut down before Redis recorded an outcome; its call id is freed when its lease lapses, and a retry then runs the call again", slog.String("key", c.key))
			return
		case <-t.C:
		}
		left := s.ttl - time.Since(ended)
		if left <= 0 {
			s.logger.Warn("redisstore: Redis did not record an outcome before its TTL ended; stopped trying", slog.String("key", c.key))
			return
		}
		ok, err := c.complete(context.Background(), v, left)
		switch {
		case err == nil && ok:
			s.logger.Info("redisstore: recorded an outcome Redis had not recorded at first", slog.String("key", c.key), slog.Int("attempts", attempts))
			return
		case err == nil:
			s.logger.Warn("redisstore: could not record an outcome: its lease lapsed and another call claimed its id, which may run the call again", slog.String("key", c.key))
			return
		}
		// A renewal that finds another record says nothing of its own: it
		// may be this outcome, written by an attempt whose answer a stall
		// held up. The next attempt to write tells.
		if time.Since(renewTried) >= s.lease/3 {
			renewTried = time.Now()
			_, _ = c.renewLease()
		}
		pause = min(2*pause, step)
		t.Reset(pause)
	}
}

// Release implements [otc.IdempotencyClaim]. A release that fails leaves
// the key claimed until its lease lapses.
func (c *claim) Release(ctx context.Context) error {
	c.end()
	return c.release(ctx)
}

func (c *claim) release(ctx context.Context) error {
	ok, err := op(c.store.conn, ctx, c.store.opTimeout, func(ctx context.Context) (int, error) {
		return releaseScript.Run(ctx, c.store.client, []string{c.key}, c.held).Int()
	})
	switch {
	case err != nil:
		return fmt.Errorf("redisstore: releasing a call id: %w", err)
	case ok == 0:
		return otc.ErrClaimLost
	}
	return nil
}
