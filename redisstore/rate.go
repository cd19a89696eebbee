package redisstore

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"math"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/otcgo/otc/ratelimit"
)

// DefaultRatePrefix starts every key a [RateStore] writes.
const DefaultRatePrefix = "otc:rate:"

// RateOptions configures [NewRateStore]. The zero value, and nil, give
// the defaults described on each field.
type RateOptions struct {
	// Prefix starts every key. Empty means DefaultRatePrefix.
	Prefix string
	// OpTimeout is the deadline of each check. Zero or less means
	// DefaultOpTimeout.
	OpTimeout time.Duration
}

// RateStore keeps the rate limits of package ratelimit in Redis, so that
// a caller's limit holds across every replica that shares it: a
// [ratelimit.Store]. Each caller's limit is one key, holding when its
// allowance is next full, which one script reads and moves on (by the
// generic cell rate algorithm, with Redis's clock, so that the replicas'
// clocks need not agree), and which expires once the allowance is full
// again. The checks of concurrent calls share round trips, as the
// idempotency store's commands do. It works on a Redis Cluster (one key
// per check). It is safe for concurrent use.
type RateStore struct {
	s      *conn
	prefix string
}

var _ ratelimit.Charger = (*RateStore)(nil)

// NewRateStore returns a rate store that keeps its state through client.
// opts may be nil.
func NewRateStore(client redis.UniversalClient, opts *RateOptions) *RateStore {
	if opts == nil {
		opts = &RateOptions{}
	}
	rs := &RateStore{s: newConn(client, opts.OpTimeout), prefix: opts.Prefix}
	if rs.prefix == "" {
		rs.prefix = DefaultRatePrefix
	}
	return rs
}

// rateScript takes one call from a key's allowance (ARGV: the interval
// between calls and the burst's span, in microseconds). It returns 0 when
// the call fits, or the microseconds until one would. The key holds the
// time, in microseconds of Redis's clock, at which the allowance is full
// again, and expires then.
var rateScript = redis.NewScript(`
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000000 + tonumber(t[2])
local interval, span = tonumber(ARGV[1]), tonumber(ARGV[2])
local tat = tonumber(redis.call('GET', KEYS[1]) or 0)
if tat < now then tat = now end
local nextTat = tat + interval
local over = nextTat - now - span
if over > 0 then return over end
redis.call('SET', KEYS[1], string.format('%d', nextTat), 'PX', math.ceil((nextTat - now) / 1000))
return 0`)

// chargeScript charges n calls more to a key's allowance (ARGV: the
// interval, the burst's span, both in microseconds, and n), whether or
// not they fit, at most twice the span past now.
var chargeScript = redis.NewScript(`
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000000 + tonumber(t[2])
local interval, span, n = tonumber(ARGV[1]), tonumber(ARGV[2]), tonumber(ARGV[3])
local tat = tonumber(redis.call('GET', KEYS[1]) or 0)
if tat < now then tat = now end
local nextTat = math.min(tat + n * interval, now + 2 * span)
redis.call('SET', KEYS[1], string.format('%d', nextTat), 'PX', math.max(math.ceil((nextTat - now) / 1000), 1))
return 0`)

// Charge implements [ratelimit.Charger].
func (rs *RateStore) Charge(ctx context.Context, key string, l ratelimit.Limit, n float64) error {
	if !(l.Rate > 0) || math.IsInf(l.Rate, 0) {
		return ratelimit.ErrBadLimit
	}
	if !(n > 0) || math.IsInf(n, 0) {
		return nil
	}
	interval := max(int64(1e6/l.Rate), 1)
	span := int64(max(l.Burst, 1)) * interval
	rk := rs.key(key)
	_, err := op(rs.s, ctx, rs.s.opTimeout, func(ctx context.Context) (int64, error) {
		return chargeScript.Run(ctx, rs.s.client, []string{rk}, interval, span, n).Int64()
	})
	if err != nil {
		return fmt.Errorf("redisstore: charging a rate limit: %w", err)
	}
	return nil
}

// key is the Redis key of a caller's limit.
func (rs *RateStore) key(key string) string {
	sum := sha256.Sum256([]byte(key))
	return rs.prefix + hex.EncodeToString(sum[:16])
}

// Take implements [ratelimit.Store].
func (rs *RateStore) Take(ctx context.Context, key string, l ratelimit.Limit) (bool, time.Duration, error) {
	if !(l.Rate > 0) || math.IsInf(l.Rate, 0) {
		return false, 0, ratelimit.ErrBadLimit
	}
	interval := max(int64(1e6/l.Rate), 1)
	span := int64(max(l.Burst, 1)) * interval
	rk := rs.key(key)
	s := rs.s
	octx, cancel := context.WithTimeoutCause(ctx, s.opTimeout, errTimeout)
	defer cancel()
	cmd, err := s.batch.do(octx, func(ctx context.Context, p redis.Pipeliner) redis.Cmder {
		return rateScript.EvalSha(ctx, p, []string{rk}, interval, span)
	})
	var over int64
	switch {
	case err != nil && redis.HasErrorPrefix(err, "NOSCRIPT"):
		over, err = op(s, ctx, s.opTimeout, func(ctx context.Context) (int64, error) {
			return rateScript.Run(ctx, s.client, []string{rk}, interval, span).Int64()
		})
	case err == nil:
		over, err = cmd.(*redis.Cmd).Int64()
	}
	if err != nil {
		return false, 0, fmt.Errorf("redisstore: checking a rate limit: %w", err)
	}
	if over > 0 {
		return false, time.Duration(over) * time.Microsecond, nil
	}
	return true, 0, nil
}
