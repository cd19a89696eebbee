package redisstore

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/otcgo/otc/sessions"
)

// DefaultSessionPrefix names the keys a [SessionStore] writes: each is
// the prefix in braces (a Redis Cluster hash tag, so that every key of
// the store is in one slot, as its scripts need) and a suffix.
const DefaultSessionPrefix = "otc:sessions"

// sessionBlock is how long one read of the log waits for a message; a
// follower whose context ends stops within it.
const sessionBlock = 2 * time.Second

// SessionOptions configures [NewSessionStore]. The zero value, and nil,
// give the defaults described on each field.
type SessionOptions struct {
	// Prefix names the keys. Empty means DefaultSessionPrefix.
	Prefix string
	// LogSize is about how many messages the log keeps (Redis trims it
	// by whole blocks, so it keeps at least this many): a client that
	// reconnects after more were published is told it may have missed
	// some. Zero means sessions.DefaultLogSize.
	LogSize int
	// OpTimeout is the deadline of each operation but a follower's
	// blocking read. Zero or less means DefaultOpTimeout.
	OpTimeout time.Duration
}

// SessionStore keeps the sessions of an MCP server's replicas in Redis:
// a [sessions.Store]. The live sessions are a sorted set by expiry, and
// each owner's another, so that a script counts them against their
// bounds and forgets the expired ones; a session's subscriptions are a
// set that expires with it; the log is a Redis stream, trimmed to about
// LogSize entries, which every replica reads with XREAD. Expiries are
// read on Redis's clock, so that the replicas' clocks need not agree.
// Every key carries the same hash tag: on a Redis Cluster the store is
// one slot's, on one master. It is safe for concurrent use.
type SessionStore struct {
	s       *conn
	tag     string
	logSize int
}

var _ sessions.Store = (*SessionStore)(nil)

// NewSessionStore returns a session store that keeps its state through
// client. opts may be nil.
func NewSessionStore(client redis.UniversalClient, opts *SessionOptions) *SessionStore {
	if opts == nil {
		opts = &SessionOptions{}
	}
	st := &SessionStore{s: newConn(client, opts.OpTimeout), tag: opts.Prefix, logSize: opts.LogSize}
	if st.tag == "" {
		st.tag = DefaultSessionPrefix
	}
	st.tag = "{" + st.tag + "}"
	if st.logSize <= 0 {
		st.logSize = sessions.DefaultLogSize
	}
	return st
}

func (st *SessionStore) allKey() string               { return st.tag + ":all" }
func (st *SessionStore) ownerKey(owner string) string { return st.tag + ":o:" + owner }
func (st *SessionStore) subsKey(id string) string     { return st.tag + ":s:" + id }
func (st *SessionStore) logKey() string               { return st.tag + ":log" }

// nowLua reads Redis's clock, in milliseconds, into now.
const nowLua = `local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
`

// openScript opens a session (KEYS: all, owner, subscriptions; ARGV: id,
// idle in ms, the bounds in all and by owner): -1 or -2 past a bound.
var openScript = redis.NewScript(nowLua + `
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now)
redis.call('ZREMRANGEBYSCORE', KEYS[2], '-inf', now)
redis.call('ZREM', KEYS[1], ARGV[1])
redis.call('ZREM', KEYS[2], ARGV[1])
local total, per = tonumber(ARGV[3]), tonumber(ARGV[4])
if total > 0 and redis.call('ZCARD', KEYS[1]) >= total then return -1 end
if per > 0 and redis.call('ZCARD', KEYS[2]) >= per then return -2 end
local exp = now + tonumber(ARGV[2])
redis.call('ZADD', KEYS[1], exp, ARGV[1])
redis.call('ZADD', KEYS[2], exp, ARGV[1])
redis.call('PEXPIRE', KEYS[2], ARGV[2])
redis.call('DEL', KEYS[3])
return 1`)

// touchScript keeps a session alive (KEYS: all, owner, subscriptions;
// ARGV: id, idle in ms): 0 when it had ended or expired.
var touchScript = redis.NewScript(nowLua + `
local e = redis.call('ZSCORE', KEYS[1], ARGV[1])
if not e or tonumber(e) <= now then
  redis.call('ZREM', KEYS[1], ARGV[1])
  redis.call('ZREM', KEYS[2], ARGV[1])
  return 0
end
local exp = now + tonumber(ARGV[2])
redis.call('ZADD', KEYS[1], exp, ARGV[1])
redis.call('ZADD', KEYS[2], exp, ARGV[1])
redis.call('PEXPIRE', KEYS[2], ARGV[2])
redis.call('PEXPIRE', KEYS[3], ARGV[2])
return 1`)

// subscribeScript adds a subscription (KEYS: all, subscriptions; ARGV:
// id, uri, the bound): 0 when the session ended, -1 past the bound.
var subscribeScript = redis.NewScript(nowLua + `
local e = redis.call('ZSCORE', KEYS[1], ARGV[1])
if not e or tonumber(e) <= now then return 0 end
if redis.call('SISMEMBER', KEYS[2], ARGV[2]) == 1 then return 1 end
local max = tonumber(ARGV[3])
if max > 0 and redis.call('SCARD', KEYS[2]) >= max then return -1 end
redis.call('SADD', KEYS[2], ARGV[2])
redis.call('PEXPIRE', KEYS[2], math.max(tonumber(e) - now, 1))
return 1`)

// subscriptionsScript lists a session's subscriptions (KEYS: all,
// subscriptions; ARGV: id): false when the session ended.
var subscriptionsScript = redis.NewScript(nowLua + `
local e = redis.call('ZSCORE', KEYS[1], ARGV[1])
if not e or tonumber(e) <= now then return false end
return redis.call('SMEMBERS', KEYS[2])`)

// ms is d in whole milliseconds, at least one.
func ms(d time.Duration) int64 { return max(roundUp(d).Milliseconds(), 1) }

// Open implements [sessions.Store].
func (st *SessionStore) Open(ctx context.Context, s sessions.Session, idle time.Duration, lim sessions.Limits) error {
	n, err := op(st.s, ctx, st.s.opTimeout, func(ctx context.Context) (int64, error) {
		return openScript.Run(ctx, st.s.client, []string{st.allKey(), st.ownerKey(s.Owner), st.subsKey(s.ID)}, s.ID, ms(idle), lim.Total, lim.PerOwner).Int64()
	})
	switch {
	case err != nil:
		return fmt.Errorf("redisstore: opening a session: %w", err)
	case n == -1:
		return fmt.Errorf("%w: %d sessions are open, the most this server keeps", sessions.ErrLimit, lim.Total)
	case n == -2:
		return fmt.Errorf("%w: this caller has %d sessions open, the most one caller may", sessions.ErrLimit, lim.PerOwner)
	}
	return nil
}

// Touch implements [sessions.Store].
func (st *SessionStore) Touch(ctx context.Context, s sessions.Session, idle time.Duration) error {
	n, err := op(st.s, ctx, st.s.opTimeout, func(ctx context.Context) (int64, error) {
		return touchScript.Run(ctx, st.s.client, []string{st.allKey(), st.ownerKey(s.Owner), st.subsKey(s.ID)}, s.ID, ms(idle)).Int64()
	})
	switch {
	case err != nil:
		return fmt.Errorf("redisstore: keeping a session alive: %w", err)
	case n == 0:
		return sessions.ErrNotFound
	}
	return nil
}

// End implements [sessions.Store].
func (st *SessionStore) End(ctx context.Context, s sessions.Session) error {
	_, err := op(st.s, ctx, st.s.opTimeout, func(ctx context.Context) ([]redis.Cmder, error) {
		return st.s.client.TxPipelined(ctx, func(p redis.Pipeliner) error {
			p.ZRem(ctx, st.allKey(), s.ID)
			p.ZRem(ctx, st.ownerKey(s.Owner), s.ID)
			p.Del(ctx, st.subsKey(s.ID))
			return nil
		})
	})
	if err != nil {
		return fmt.Errorf("redisstore: ending a session: %w", err)
	}
	return nil
}

// Subscribe implements [sessions.Store].
func (st *SessionStore) Subscribe(ctx context.Context, s sessions.Session, uri string, max int) error {
	n, err := op(st.s, ctx, st.s.opTimeout, func(ctx context.Context) (int64, error) {
		return subscribeScript.Run(ctx, st.s.client, []string{st.allKey(), st.subsKey(s.ID)}, s.ID, uri, max).Int64()
	})
	switch {
	case err != nil:
		return fmt.Errorf("redisstore: subscribing: %w", err)
	case n == 0:
		return sessions.ErrNotFound
	case n == -1:
		return fmt.Errorf("%w: the session is subscribed to %d resources, the most it may", sessions.ErrLimit, max)
	}
	return nil
}

// Unsubscribe implements [sessions.Store].
func (st *SessionStore) Unsubscribe(ctx context.Context, s sessions.Session, uri string) error {
	_, err := op(st.s, ctx, st.s.opTimeout, func(ctx context.Context) (int64, error) {
		return st.s.client.SRem(ctx, st.subsKey(s.ID), uri).Result()
	})
	if err != nil {
		return fmt.Errorf("redisstore: unsubscribing: %w", err)
	}
	return nil
}

// Subscriptions implements [sessions.Store].
func (st *SessionStore) Subscriptions(ctx context.Context, s sessions.Session) ([]string, error) {
	uris, err := op(st.s, ctx, st.s.opTimeout, func(ctx context.Context) ([]string, error) {
		return subscriptionsScript.Run(ctx, st.s.client, []string{st.allKey(), st.subsKey(s.ID)}, s.ID).StringSlice()
	})
	switch {
	case errors.Is(err, redis.Nil):
		return nil, sessions.ErrNotFound
	case err != nil:
		return nil, fmt.Errorf("redisstore: reading a session's subscriptions: %w", err)
	}
	return uris, nil
}

// Publish implements [sessions.Store].
func (st *SessionStore) Publish(ctx context.Context, data []byte) error {
	_, err := op(st.s, ctx, st.s.opTimeout, func(ctx context.Context) (string, error) {
		return st.s.client.XAdd(ctx, &redis.XAddArgs{Stream: st.logKey(), MaxLen: int64(st.logSize), Approx: true, Values: []any{"d", data}}).Result()
	})
	if err != nil {
		return fmt.Errorf("redisstore: publishing to the sessions' log: %w", err)
	}
	return nil
}

// Head implements [sessions.Store]: the newest entry's ID, or "0-0" for
// an empty log.
func (st *SessionStore) Head(ctx context.Context) (string, error) {
	last, err := op(st.s, ctx, st.s.opTimeout, func(ctx context.Context) ([]redis.XMessage, error) {
		return st.s.client.XRevRangeN(ctx, st.logKey(), "+", "-", 1).Result()
	})
	if err != nil {
		return "", fmt.Errorf("redisstore: reading the sessions' log: %w", err)
	}
	if len(last) == 0 {
		return "0-0", nil
	}
	return last[0].ID, nil
}

// Follow implements [sessions.Store]: XREAD, blocking for a couple of
// seconds at a time, from the ID given or, for "", from the newest entry
// at the time of the call.
func (st *SessionStore) Follow(ctx context.Context, after string, f func(sessions.Message)) error {
	if after == "" {
		head, err := st.Head(ctx)
		if err != nil {
			return ignoreEnded(ctx, err)
		}
		after = head
	} else if _, ok := parseStreamID(after); !ok {
		return fmt.Errorf("redisstore: %q is not an ID of the sessions' log", after)
	}
	for ctx.Err() == nil {
		res, err := st.s.client.XRead(ctx, &redis.XReadArgs{Streams: []string{st.logKey(), after}, Count: 100, Block: sessionBlock}).Result()
		switch {
		case errors.Is(err, redis.Nil):
			continue // nothing within the block
		case err != nil:
			return ignoreEnded(ctx, fmt.Errorf("redisstore: reading the sessions' log: %w", err))
		}
		for _, stream := range res {
			for _, m := range stream.Messages {
				after = m.ID
				f(sessions.Message{ID: m.ID, Data: messageData(m)})
			}
		}
	}
	return nil
}

// ignoreEnded is nil when ctx has ended (the follower was stopped), err
// otherwise.
func ignoreEnded(ctx context.Context, err error) error {
	if ctx.Err() != nil {
		return nil
	}
	return err
}

// messageData is the data of an entry of the log.
func messageData(m redis.XMessage) []byte {
	d, _ := m.Values["d"].(string)
	return []byte(d)
}

// Since implements [sessions.Store]: the newest LogSize messages after
// the ID, complete when they are all of them and Redis has deleted
// (trimmed) none after it.
func (st *SessionStore) Since(ctx context.Context, after string) ([]sessions.Message, bool, error) {
	from, ok := parseStreamID(after)
	if !ok {
		return nil, false, nil
	}
	info, err := op(st.s, ctx, st.s.opTimeout, func(ctx context.Context) (*redis.XInfoStream, error) {
		return st.s.client.XInfoStream(ctx, st.logKey()).Result()
	})
	switch {
	case err != nil && strings.Contains(err.Error(), "no such key"):
		return nil, false, nil // a log that is not there holds no ID
	case err != nil:
		return nil, false, fmt.Errorf("redisstore: reading the sessions' log: %w", err)
	}
	if last, ok := parseStreamID(info.LastGeneratedID); !ok || last.less(from) {
		return nil, false, nil // an ID the log never gave
	}
	complete := true
	if deleted, ok := parseStreamID(info.MaxDeletedEntryID); ok && from.less(deleted) {
		complete = false
	}
	// The newest LogSize messages after the ID, and one more, which
	// says there were more than the window.
	msgs, err := op(st.s, ctx, st.s.opTimeout, func(ctx context.Context) ([]redis.XMessage, error) {
		return st.s.client.XRevRangeN(ctx, st.logKey(), "+", "("+after, int64(st.logSize)+1).Result()
	})
	if err != nil {
		return nil, false, fmt.Errorf("redisstore: reading the sessions' log: %w", err)
	}
	if len(msgs) > st.logSize {
		msgs, complete = msgs[:st.logSize], false
	}
	out := make([]sessions.Message, len(msgs))
	for i, m := range msgs {
		out[len(msgs)-1-i] = sessions.Message{ID: m.ID, Data: messageData(m)}
	}
	return out, complete, nil
}

// streamID is an ID of a Redis stream: milliseconds and a sequence.
type streamID struct{ ms, seq uint64 }

func (a streamID) less(b streamID) bool { return a.ms < b.ms || a.ms == b.ms && a.seq < b.seq }

// parseStreamID reads "ms-seq".
func parseStreamID(s string) (streamID, bool) {
	a, b, ok := strings.Cut(s, "-")
	if !ok {
		return streamID{}, false
	}
	m, err1 := strconv.ParseUint(a, 10, 64)
	q, err2 := strconv.ParseUint(b, 10, 64)
	return streamID{m, q}, err1 == nil && err2 == nil
}
