package redisstore

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/otcgo/otc/tasks"
)

// DefaultTaskPrefix starts every key a [TaskStore] writes.
const DefaultTaskPrefix = "otc:task:"

// TaskOptions configures a [TaskStore]. The zero value, and nil, give the
// defaults described on each field.
type TaskOptions struct {
	// Prefix starts every key. Empty means DefaultTaskPrefix.
	Prefix string
	// TTL is how long a task is kept after its creation, ended or not.
	// Zero or less means tasks.DefaultTTL. Redis counts it in
	// milliseconds; it is rounded up to whole ones, as Lease is.
	TTL time.Duration
	// Lease is how long a task is shown as running without an update
	// from the replica running it; that replica updates it at the poll
	// interval of its MCP handler (tasks.Options.PollInterval, a
	// second by default), which must be several times shorter. A task
	// whose replica died is shown failed, with Task.Lost, a Lease after
	// its last update. Zero or less means tasks.DefaultLease.
	Lease time.Duration
	// MaxTasksPerOwner caps the tasks one caller holds, running or kept
	// for their result. Zero or less means tasks.DefaultMaxPerOwner.
	MaxTasksPerOwner int
	// MaxRunningPerOwner caps the tasks of one caller that have not
	// ended. Zero or less means tasks.DefaultMaxRunningPerOwner.
	MaxRunningPerOwner int
	// MaxWebhooksPerOwner caps the webhooks of one caller's tasks, all
	// together. Zero or less means tasks.DefaultMaxWebhooksPerOwner.
	MaxWebhooksPerOwner int
	// MaxResultBytes is the largest result, set of questions or set of
	// answers a task keeps. Zero or less means
	// tasks.DefaultMaxResultBytes.
	MaxResultBytes int
	// MaxHistory caps the messages of a task's History; the oldest are
	// dropped. A message larger than MaxResultBytes is not kept. Zero or
	// less means tasks.DefaultMaxHistory.
	MaxHistory int
	// OpTimeout is the deadline of each Redis operation, as for [IdempotencyOptions].
	// Zero or less means DefaultOpTimeout.
	OpTimeout time.Duration
}

// TaskStore is an [tasks.Store] in Redis: every replica of a server
// that shares it can report on, answer and cancel a task that another
// replica runs. Each task is a hash, kept for the TTL from its creation;
// the times it records, and its lease, are read from the Redis server's
// clock, so that the replicas' clocks need not agree. A caller's tasks
// are counted in two sorted sets, of the tasks it holds (by expiry) and of
// those that have not ended; the two share a hash tag, so that one script
// counts a new task in both. Every other script reads and writes one key,
// so that the store works on a Redis Cluster too. It is safe for
// concurrent use.
//
// A caller's webhooks are counted in a third sorted set of the same hash
// tag, by the expiry of their task: a new task's with the task, a
// webhook set later before it is kept in its task (and uncounted when it
// is not), so that the cap holds however many are set at once.
type TaskStore struct {
	*conn
	prefix      string
	ttl         time.Duration
	lease       time.Duration
	perOwner    int
	running     int
	webhooksCap int
	maxResult   int
	maxHistory  int
}

var (
	_ tasks.Store        = (*TaskStore)(nil)
	_ tasks.Lister       = (*TaskStore)(nil)
	_ tasks.WebhookStore = (*TaskStore)(nil)
)

// NewTaskStore returns a task store that keeps its tasks through client.
// opts may be nil.
func NewTaskStore(client redis.UniversalClient, opts *TaskOptions) *TaskStore {
	if opts == nil {
		opts = &TaskOptions{}
	}
	s := &TaskStore{conn: newConn(client, opts.OpTimeout), prefix: opts.Prefix, ttl: opts.TTL,
		lease: opts.Lease, perOwner: opts.MaxTasksPerOwner, running: opts.MaxRunningPerOwner, webhooksCap: opts.MaxWebhooksPerOwner,
		maxResult: opts.MaxResultBytes, maxHistory: opts.MaxHistory}
	if s.prefix == "" {
		s.prefix = DefaultTaskPrefix
	}
	if s.ttl <= 0 {
		s.ttl = tasks.DefaultTTL
	}
	if s.lease <= 0 {
		s.lease = tasks.DefaultLease
	}
	if s.perOwner <= 0 {
		s.perOwner = tasks.DefaultMaxPerOwner
	}
	if s.running <= 0 {
		s.running = tasks.DefaultMaxRunningPerOwner
	}
	if s.webhooksCap <= 0 {
		s.webhooksCap = tasks.DefaultMaxWebhooksPerOwner
	}
	if s.maxResult <= 0 {
		s.maxResult = tasks.DefaultMaxResultBytes
	}
	if s.maxHistory <= 0 {
		s.maxHistory = tasks.DefaultMaxHistory
	}
	s.ttl, s.lease = roundUp(s.ttl), roundUp(s.lease)
	return s
}

// A task's hash holds: o the owner, s the status, m the status message,
// c and u the creation and update times and l the end of the lease (Unix
// milliseconds of Redis's clock), t the TTL in milliseconds, r the result,
// lost "1" for a task whose runner was lost, q:KEY an open question,
// a:KEY an answer not yet taken, h:N the Nth message of its history,
// hf and hn the numbers of its first kept and its next, w:ID a webhook
// ("N:configuration", N its place), wn the number of the next and wc
// their count.
//
// Every script touches one key, so that the store works on a cluster.
// The scripts of a task share a prologue: now, the Redis clock in
// milliseconds; terminal(st); clear(prefix), which deletes the fields that
// start with it; and live(), which reports whether the task is still
// running, and marks one whose lease lapsed as lost.
const taskPrologue = `
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local function ms(x) return string.format('%d', x) end
local function terminal(st) return st == 'completed' or st == 'failed' or st == 'cancelled' end
local function clear(prefix)
  for _, f in ipairs(redis.call('HKEYS', KEYS[1])) do
    if string.sub(f, 1, #prefix) == prefix then redis.call('HDEL', KEYS[1], f) end
  end
end
local function remember(max, i, n)
  local next = tonumber(redis.call('HGET', KEYS[1], 'hn') or '0')
  local first = tonumber(redis.call('HGET', KEYS[1], 'hf') or '0')
  for j = i, i + n - 1 do
    redis.call('HSET', KEYS[1], 'h:' .. next, ARGV[j])
    next = next + 1
  end
  while next - first > max do
    redis.call('HDEL', KEYS[1], 'h:' .. first)
    first = first + 1
  end
  redis.call('HSET', KEYS[1], 'hn', next, 'hf', first)
end
local function live()
  local st = redis.call('HGET', KEYS[1], 's')
  if not st or terminal(st) then return false end
  if tonumber(redis.call('HGET', KEYS[1], 'l')) < now then
    redis.call('HSET', KEYS[1], 's', 'failed', 'lost', '1', 'u', ms(now), 'm', '` + lostMessage + `')
    clear('q:')
    clear('a:')
    return false
  end
  return true
end
`

const lostMessage = "The server running this task stopped before it ended (its lease in the task store lapsed); its outcome is unknown"

var (
	// countScript counts a new task (ARGV: its id, the TTL, the most a
	// caller may hold, the most it may run, the most webhooks it may
	// have, the number of the task's webhooks, their members of KEYS[3])
	// against its owner: in the sorted set of the tasks it holds, by
	// expiry (KEYS[1]), in that of the tasks it runs, by creation
	// (KEYS[2]), and in that of its webhooks, by expiry (KEYS[3]). It
	// returns {1}; {0, ms} when the owner holds too many, ms until its
	// oldest expires; {-1} when it runs too many; or {-2} when its
	// webhooks would be too many.
	countScript = redis.NewScript(`
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local ttl = tonumber(ARGV[2])
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now)
if redis.call('ZSCORE', KEYS[1], ARGV[1]) then return {2} end
if redis.call('ZCARD', KEYS[1]) >= tonumber(ARGV[3]) then
  local oldest = redis.call('ZRANGE', KEYS[1], 0, 0, 'WITHSCORES')
  return {0, tonumber(oldest[2]) - now}
end
redis.call('ZREMRANGEBYSCORE', KEYS[2], '-inf', now - ttl)
if redis.call('ZCARD', KEYS[2]) >= tonumber(ARGV[4]) then return {-1} end
local hooks = tonumber(ARGV[6])
if hooks > 0 then
  redis.call('ZREMRANGEBYSCORE', KEYS[3], '-inf', now)
  if redis.call('ZCARD', KEYS[3]) + hooks > tonumber(ARGV[5]) then return {-2} end
  for j = 1, hooks do redis.call('ZADD', KEYS[3], now + ttl, ARGV[6 + j]) end
  redis.call('PEXPIRE', KEYS[3], ttl)
end
redis.call('ZADD', KEYS[1], now + ttl, ARGV[1])
redis.call('PEXPIRE', KEYS[1], ttl)
redis.call('ZADD', KEYS[2], now, ARGV[1])
redis.call('PEXPIRE', KEYS[2], ttl)
return {1}`)

	// reserveWebhookScript counts webhook ARGV[1] (a member of KEYS[1],
	// the owner's webhooks) until its task expires, in ARGV[2] ms, when
	// the owner has fewer than ARGV[3]; it returns 1, or 0 when it has as
	// many as it may.
	reserveWebhookScript = redis.NewScript(`
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now)
if redis.call('ZSCORE', KEYS[1], ARGV[1]) then return 1 end
if redis.call('ZCARD', KEYS[1]) >= tonumber(ARGV[3]) then return 0 end
redis.call('ZADD', KEYS[1], now + tonumber(ARGV[2]), ARGV[1])
if redis.call('PTTL', KEYS[1]) < tonumber(ARGV[2]) then redis.call('PEXPIRE', KEYS[1], ARGV[2]) end
return 1`)

	// webhookOwnerScript returns false for a missing task, and otherwise
	// its owner, the ms until it expires, whether it has webhook ARGV[1]
	// (1 or 0) and how many it has.
	webhookOwnerScript = redis.NewScript(`
if redis.call('EXISTS', KEYS[1]) == 0 then return false end
return {redis.call('HGET', KEYS[1], 'o'), redis.call('PTTL', KEYS[1]), redis.call('HEXISTS', KEYS[1], 'w:' .. ARGV[1]),
  tonumber(redis.call('HGET', KEYS[1], 'wc') or '0')}`)

	// createScript (ARGV: owner, TTL, lease, context, the most history
	// kept, the number of history messages, the messages, the number of
	// webhooks, their ids and configurations) returns now, or -1 when the
	// id is taken. The count and the task are two scripts of
	// one key each, so that the keys may live on different nodes of a
	// cluster.
	createScript = redis.NewScript(taskPrologue + `
if redis.call('EXISTS', KEYS[1]) == 1 then return -1 end
redis.call('HSET', KEYS[1], 'o', ARGV[1], 's', 'working', 'm', '', 'c', ms(now), 'u', ms(now), 't', ARGV[2], 'l', ms(now + tonumber(ARGV[3])))
if ARGV[4] ~= '' then redis.call('HSET', KEYS[1], 'x', ARGV[4]) end
remember(tonumber(ARGV[5]), 7, tonumber(ARGV[6]))
local w = 7 + tonumber(ARGV[6])
local nw = tonumber(ARGV[w])
for j = 1, nw do
  redis.call('HSET', KEYS[1], 'w:' .. ARGV[w + 2 * j - 1], j .. ':' .. ARGV[w + 2 * j])
end
redis.call('HSET', KEYS[1], 'wn', nw, 'wc', nw)
redis.call('PEXPIRE', KEYS[1], ARGV[2])
return now`)

	// setWebhookScript sets webhook ARGV[1] to configuration ARGV[2],
	// keeping its place among the task's, or adds it when the task has
	// fewer than ARGV[3]; it returns 1, 0 for a missing task, or -1 for a
	// task with as many as it may have.
	setWebhookScript = redis.NewScript(`
if redis.call('EXISTS', KEYS[1]) == 0 then return 0 end
local f = 'w:' .. ARGV[1]
local old = redis.call('HGET', KEYS[1], f)
if old then
  redis.call('HSET', KEYS[1], f, string.match(old, '^%d+') .. ':' .. ARGV[2])
  return 1
end
if tonumber(redis.call('HGET', KEYS[1], 'wc') or '0') >= tonumber(ARGV[3]) then return -1 end
local seq = redis.call('HINCRBY', KEYS[1], 'wn', 1)
redis.call('HINCRBY', KEYS[1], 'wc', 1)
redis.call('HSET', KEYS[1], f, seq .. ':' .. ARGV[2])
return 1`)

	// deleteWebhookScript removes webhook ARGV[1]; it returns false for
	// a missing task, the task's owner when the webhook was removed, and
	// '' when there was none.
	deleteWebhookScript = redis.NewScript(`
if redis.call('EXISTS', KEYS[1]) == 0 then return false end
if redis.call('HDEL', KEYS[1], 'w:' .. ARGV[1]) == 1 then
  redis.call('HINCRBY', KEYS[1], 'wc', -1)
  return redis.call('HGET', KEYS[1], 'o')
end
return ''`)

	// getScript returns now and the hash's fields.
	getScript = redis.NewScript(taskPrologue + `
local all = redis.call('HGETALL', KEYS[1])
table.insert(all, 1, ms(now))
return all`)

	// updateScript applies an update (ARGV: lease, status, message,
	// result, the number of taken keys, the keys, the number of
	// questions, their keys and values, the most history kept, the
	// number of history messages, the messages) to a live task, and
	// returns what getScript does; nothing for a missing task.
	updateScript = redis.NewScript(taskPrologue + `
if redis.call('EXISTS', KEYS[1]) == 0 then return false end
if live() then
  redis.call('HSET', KEYS[1], 'l', ms(now + tonumber(ARGV[1])))
  local i = 6
  for _ = 1, tonumber(ARGV[5]) do
    redis.call('HDEL', KEYS[1], 'a:' .. ARGV[i])
    i = i + 1
  end
  local nq = tonumber(ARGV[i])
  i = i + 1
  local h = i + 2 * nq
  remember(tonumber(ARGV[h]), h + 2, tonumber(ARGV[h + 1]))
  local st = ARGV[2]
  if st ~= '' then
    redis.call('HSET', KEYS[1], 's', st, 'm', ARGV[3], 'u', ms(now))
    if st ~= 'input_required' then clear('q:') end
    if st == 'input_required' then
      for _ = 1, nq do
        redis.call('HSET', KEYS[1], 'q:' .. ARGV[i], ARGV[i + 1])
        i = i + 2
      end
    end
    if terminal(st) then
      clear('a:')
      redis.call('HSET', KEYS[1], 'r', ARGV[4])
    end
  end
end
local all = redis.call('HGETALL', KEYS[1])
table.insert(all, 1, ms(now))
return all`)

	// cancelScript returns false for a missing task, and the task's
	// owner otherwise.
	cancelScript = redis.NewScript(taskPrologue + `
if redis.call('EXISTS', KEYS[1]) == 0 then return false end
if live() then
  redis.call('HSET', KEYS[1], 's', 'cancelled', 'm', "The task was cancelled at the client's request", 'u', ms(now))
  clear('q:')
  clear('a:')
end
return redis.call('HGET', KEYS[1], 'o')`)

	// respondScript moves the answers to open questions (ARGV: the most
	// history kept, the message that brought them or '', then key, value,
	// ...) in, adding the message to the history when it took one, and
	// sets a task whose questions are all answered working again; it
	// returns 0 for a missing task, 1 otherwise.
	respondScript = redis.NewScript(taskPrologue + `
if redis.call('EXISTS', KEYS[1]) == 0 then return 0 end
if live() then
  local changed = false
  for i = 3, #ARGV, 2 do
    if redis.call('HEXISTS', KEYS[1], 'q:' .. ARGV[i]) == 1 then
      redis.call('HDEL', KEYS[1], 'q:' .. ARGV[i])
      redis.call('HSET', KEYS[1], 'a:' .. ARGV[i], ARGV[i + 1])
      changed = true
    end
  end
  if changed then
    redis.call('HSET', KEYS[1], 'u', ms(now))
    if ARGV[2] ~= '' then remember(tonumber(ARGV[1]), 2, 1) end
  end
  if redis.call('HGET', KEYS[1], 's') == 'input_required' then
    local open = false
    for _, f in ipairs(redis.call('HKEYS', KEYS[1])) do
      if string.sub(f, 1, 2) == 'q:' then open = true break end
    end
    if not open then redis.call('HSET', KEYS[1], 's', 'working', 'm', '') end
  end
end
return 1`)
)

func (s *TaskStore) taskKey(id string) string { return s.prefix + "t:" + id }

// ownerKeys are the keys of the sorted sets of the tasks an owner holds
// and runs, and of its tasks' webhooks, in one hash slot.
func (s *TaskStore) ownerKeys(owner string) []string {
	sum := sha256.Sum256([]byte(owner))
	tag := "{" + hex.EncodeToString(sum[:]) + "}"
	return []string{s.prefix + "o:" + tag, s.prefix + "r:" + tag, s.prefix + "w:" + tag}
}

// webhookMember is webhook wid of task id in its owner's set.
func webhookMember(id, wid string) string { return id + "\x00" + wid }

// count counts a new task against its owner's limits.
func (s *TaskStore) count(ctx context.Context, t *tasks.Task) error {
	keys := s.ownerKeys(t.Owner)
	args := []any{t.ID, s.ttl.Milliseconds(), s.perOwner, s.running, s.webhooksCap, len(t.Webhooks)}
	for _, w := range t.Webhooks {
		args = append(args, webhookMember(t.ID, w.ID))
	}
	for swept := false; ; swept = true {
		v, err := op(s.conn, ctx, s.opTimeout, func(ctx context.Context) ([]int64, error) {
			return countScript.Run(ctx, s.client, keys, args...).Int64Slice()
		})
		switch {
		case err != nil:
			return fmt.Errorf("redisstore: counting a caller's tasks: %w", err)
		case v[0] == 1:
			return nil
		case v[0] == 2:
			return tasks.ErrExists // counted already: the owner holds it
		case v[0] == -2:
			return tasks.ErrTooManyOwnerWebhooks
		case v[0] == 0 && len(v) > 1:
			return &tasks.LimitError{Limit: s.perOwner, RetryAfter: time.Duration(max(v[1], 1)) * time.Millisecond}
		case swept:
			return &tasks.LimitError{Limit: s.running, Running: true, RetryAfter: time.Second}
		}
		if err := s.sweep(ctx, keys[1]); err != nil {
			return fmt.Errorf("redisstore: counting a caller's running tasks: %w", err)
		}
	}
}

// sweep drops from a caller's running set the tasks that ended, were
// dropped, or whose runner's lease lapsed without the store hearing of it.
func (s *TaskStore) sweep(ctx context.Context, running string) error {
	_, err := op(s.conn, ctx, s.opTimeout, func(ctx context.Context) (struct{}, error) {
		ids, err := s.client.ZRange(ctx, running, 0, -1).Result()
		if err != nil {
			return struct{}{}, err
		}
		pipe := s.client.Pipeline()
		clock := pipe.Time(ctx)
		fields := make([]*redis.SliceCmd, len(ids))
		for i, id := range ids {
			fields[i] = pipe.HMGet(ctx, s.taskKey(id), "s", "l")
		}
		if _, err := pipe.Exec(ctx); err != nil && !errors.Is(err, redis.Nil) {
			return struct{}{}, err
		}
		now := clock.Val().UnixMilli()
		var over []any
		for i, f := range fields {
			st, _ := f.Val()[0].(string)
			l, _ := f.Val()[1].(string)
			lease, _ := strconv.ParseInt(l, 10, 64)
			if st == "" || tasks.Status(st).Terminal() || lease < now {
				over = append(over, ids[i])
			}
		}
		if len(over) > 0 {
			err = s.client.ZRem(ctx, running, over...).Err()
		}
		return struct{}{}, err
	})
	return err
}

// ended takes an ended task out of its owner's running set. Should that
// fail, the sweep of the owner's next count at its limit finds the task
// ended.
func (s *TaskStore) ended(ctx context.Context, t *tasks.Task) {
	_, _ = op(s.conn, context.WithoutCancel(ctx), s.opTimeout, func(ctx context.Context) (int64, error) {
		return s.client.ZRem(ctx, s.ownerKeys(t.Owner)[1], t.ID).Result()
	})
}

// Create implements [tasks.Store].
func (s *TaskStore) Create(ctx context.Context, t *tasks.Task) (*tasks.Task, error) {
	if err := s.count(ctx, t); err != nil {
		return nil, err
	}
	n, err := op(s.conn, ctx, s.opTimeout, func(ctx context.Context) (int64, error) {
		args := append([]any{t.Owner, s.ttl.Milliseconds(), s.lease.Milliseconds(), t.ContextID}, s.historyArgs(t.History)...)
		args = append(args, len(t.Webhooks))
		for _, w := range t.Webhooks {
			args = append(args, w.ID, []byte(w.Config))
		}
		return createScript.Run(ctx, s.client, []string{s.taskKey(t.ID)}, args...).Int64()
	})
	if err != nil || n < 0 {
		// Uncount it, or it counts until its TTL has passed.
		keys := s.ownerKeys(t.Owner)
		_, _ = op(s.conn, context.WithoutCancel(ctx), s.opTimeout, func(ctx context.Context) (int64, error) {
			pipe := s.client.TxPipeline()
			pipe.ZRem(ctx, keys[0], t.ID)
			pipe.ZRem(ctx, keys[1], t.ID)
			for _, w := range t.Webhooks {
				pipe.ZRem(ctx, keys[2], webhookMember(t.ID, w.ID))
			}
			_, err := pipe.Exec(ctx)
			return 0, err
		})
	}
	switch {
	case err != nil:
		return nil, fmt.Errorf("redisstore: creating a task: %w", err)
	case n < 0:
		return nil, fmt.Errorf("redisstore: creating a task: its id is taken: %w", tasks.ErrExists)
	}
	now := time.UnixMilli(n)
	history := s.keptHistory(t.History)
	if len(history) > s.maxHistory {
		history = history[len(history)-s.maxHistory:]
	}
	return &tasks.Task{ID: t.ID, Owner: t.Owner, ContextID: t.ContextID, Status: tasks.Working, CreatedAt: now, UpdatedAt: now, TTL: s.ttl,
		History: slices.Clone(history), Webhooks: slices.Clone(t.Webhooks)}, nil
}

// SetWebhook implements [tasks.WebhookStore]. A new webhook is counted
// against its owner before it is kept in its task, and uncounted when
// the task does not take it.
func (s *TaskStore) SetWebhook(ctx context.Context, id string, w tasks.Webhook, perTask int) error {
	if len(w.Config) > s.maxResult {
		return tasks.ErrResultTooLarge
	}
	info, err := op(s.conn, ctx, s.opTimeout, func(ctx context.Context) ([]any, error) {
		return webhookOwnerScript.Run(ctx, s.client, []string{s.taskKey(id)}, w.ID).Slice()
	})
	switch {
	case errors.Is(err, redis.Nil):
		return tasks.ErrNotFound
	case err != nil:
		return fmt.Errorf("redisstore: setting a task's webhook: %w", err)
	}
	owner, _ := info[0].(string)
	ttl, _ := info[1].(int64)
	if ttl <= 0 {
		ttl = s.ttl.Milliseconds() // a task always expires; counted as if new, rather than not at all
	}
	has, _ := info[2].(int64)
	n, _ := info[3].(int64)
	if has == 0 && n >= int64(perTask) {
		return tasks.ErrTooManyWebhooks // the task's cap first, as setWebhookScript says
	}
	var ownerSet string
	if has == 0 {
		ownerSet = s.ownerKeys(owner)[2]
		ok, err := op(s.conn, ctx, s.opTimeout, func(ctx context.Context) (int, error) {
			return reserveWebhookScript.Run(ctx, s.client, []string{ownerSet}, webhookMember(id, w.ID), ttl, s.webhooksCap).Int()
		})
		switch {
		case err != nil:
			return fmt.Errorf("redisstore: counting a caller's webhooks: %w", err)
		case ok == 0:
			return tasks.ErrTooManyOwnerWebhooks
		}
	}
	set, err := op(s.conn, ctx, s.opTimeout, func(ctx context.Context) (int, error) {
		return setWebhookScript.Run(ctx, s.client, []string{s.taskKey(id)}, w.ID, []byte(w.Config), perTask).Int()
	})
	if err == nil && set <= 0 && ownerSet != "" {
		// Not kept: uncount it. (After an error it stays counted until
		// its task expires, rather than let the owner pass its cap.)
		_, _ = op(s.conn, context.WithoutCancel(ctx), s.opTimeout, func(ctx context.Context) (int64, error) {
			return s.client.ZRem(ctx, ownerSet, webhookMember(id, w.ID)).Result()
		})
	}
	switch {
	case err != nil:
		return fmt.Errorf("redisstore: setting a task's webhook: %w", err)
	case set == 0:
		return tasks.ErrNotFound
	case set < 0:
		return tasks.ErrTooManyWebhooks
	}
	return nil
}

// DeleteWebhook implements [tasks.WebhookStore].
func (s *TaskStore) DeleteWebhook(ctx context.Context, id, wid string) error {
	owner, err := op(s.conn, ctx, s.opTimeout, func(ctx context.Context) (string, error) {
		return deleteWebhookScript.Run(ctx, s.client, []string{s.taskKey(id)}, wid).Text()
	})
	if err == nil && owner != "" {
		_, err = op(s.conn, ctx, s.opTimeout, func(ctx context.Context) (int64, error) {
			return s.client.ZRem(ctx, s.ownerKeys(owner)[2], webhookMember(id, wid)).Result()
		})
	}
	switch {
	case errors.Is(err, redis.Nil):
		return tasks.ErrNotFound
	case err != nil:
		return fmt.Errorf("redisstore: deleting a task's webhook: %w", err)
	}
	return nil
}

// Get implements [tasks.Store].
func (s *TaskStore) Get(ctx context.Context, id string) (*tasks.Task, error) {
	v, err := op(s.conn, ctx, s.opTimeout, func(ctx context.Context) ([]string, error) {
		return getScript.Run(ctx, s.client, []string{s.taskKey(id)}).StringSlice()
	})
	if err != nil {
		return nil, fmt.Errorf("redisstore: reading a task: %w", err)
	}
	return parseTask(id, v)
}

// List implements [tasks.Lister]: the tasks of the owner's held set, read
// in one pipeline.
func (s *TaskStore) List(ctx context.Context, owner string) ([]*tasks.Task, error) {
	v, err := op(s.conn, ctx, s.opTimeout, func(ctx context.Context) ([][]string, error) {
		ids, err := s.client.ZRange(ctx, s.ownerKeys(owner)[0], 0, -1).Result()
		if err != nil || len(ids) == 0 {
			return nil, err
		}
		if err := getScript.Load(ctx, s.client).Err(); err != nil {
			return nil, err
		}
		pipe := s.client.Pipeline()
		cmds := make([]*redis.Cmd, len(ids))
		for i, id := range ids {
			cmds[i] = getScript.EvalSha(ctx, pipe, []string{s.taskKey(id)})
		}
		if _, err := pipe.Exec(ctx); err != nil && !errors.Is(err, redis.Nil) {
			return nil, err
		}
		out := make([][]string, 0, len(ids)+1)
		out = append(out, ids)
		for _, c := range cmds {
			f, _ := c.StringSlice()
			out = append(out, f)
		}
		return out, nil
	})
	if err != nil {
		return nil, fmt.Errorf("redisstore: listing a caller's tasks: %w", err)
	}
	if len(v) == 0 {
		return nil, nil
	}
	out := make([]*tasks.Task, 0, len(v[0]))
	for i, id := range v[0] {
		t, err := parseTask(id, v[i+1])
		if err != nil || t.Owner != owner {
			continue // dropped meanwhile
		}
		out = append(out, t)
	}
	return out, nil
}

// Update implements [tasks.Store].
func (s *TaskStore) Update(ctx context.Context, id string, u *tasks.Update) (*tasks.Task, error) {
	size := len(u.Result)
	args := make([]any, 0, 8+len(u.Taken)+2*len(u.InputRequests))
	args = append(args, s.lease.Milliseconds(), string(u.Status), u.StatusMessage, []byte(u.Result), len(u.Taken))
	for _, k := range u.Taken {
		args = append(args, k)
	}
	args = append(args, len(u.InputRequests))
	for k, q := range u.InputRequests {
		size += len(k) + len(q)
		args = append(args, k, []byte(q))
	}
	args = append(args, s.historyArgs(u.History)...)
	if size > s.maxResult {
		return nil, tasks.ErrResultTooLarge
	}
	v, err := op(s.conn, ctx, s.opTimeout, func(ctx context.Context) ([]string, error) {
		return updateScript.Run(ctx, s.client, []string{s.taskKey(id)}, args...).StringSlice()
	})
	switch {
	case errors.Is(err, redis.Nil):
		return nil, tasks.ErrNotFound
	case err != nil:
		return nil, fmt.Errorf("redisstore: updating a task: %w", err)
	}
	t, err := parseTask(id, v)
	if err == nil && t.Status.Terminal() && u.Status.Terminal() {
		s.ended(ctx, t)
	}
	return t, err
}

// Cancel implements [tasks.Store].
func (s *TaskStore) Cancel(ctx context.Context, id string) error {
	owner, err := op(s.conn, ctx, s.opTimeout, func(ctx context.Context) (string, error) {
		return cancelScript.Run(ctx, s.client, []string{s.taskKey(id)}).Text()
	})
	switch {
	case errors.Is(err, redis.Nil):
		return tasks.ErrNotFound
	case err != nil:
		return fmt.Errorf("redisstore: cancelling a task: %w", err)
	}
	s.ended(ctx, &tasks.Task{ID: id, Owner: owner})
	return nil
}

// Respond implements [tasks.Store].
func (s *TaskStore) Respond(ctx context.Context, id string, answers map[string]json.RawMessage, message json.RawMessage) error {
	size := 0
	if len(message) > s.maxResult {
		message = nil // not kept, as the package doc says
	}
	args := make([]any, 0, 2+2*len(answers))
	args = append(args, s.maxHistory, []byte(message))
	for k, a := range answers {
		size += len(k) + len(a)
		args = append(args, k, []byte(a))
	}
	if size > s.maxResult {
		return tasks.ErrResultTooLarge
	}
	n, err := op(s.conn, ctx, s.opTimeout, func(ctx context.Context) (int, error) {
		return respondScript.Run(ctx, s.client, []string{s.taskKey(id)}, args...).Int()
	})
	switch {
	case err != nil:
		return fmt.Errorf("redisstore: answering a task: %w", err)
	case n == 0:
		return tasks.ErrNotFound
	}
	return nil
}

// historyArgs are the arguments that add history to a task: the most
// kept, the number of messages, the messages (those no larger than a
// result may be).
func (s *TaskStore) historyArgs(history []json.RawMessage) []any {
	kept := s.keptHistory(history)
	args := make([]any, 0, 2+len(kept))
	args = append(args, s.maxHistory, len(kept))
	for _, m := range kept {
		args = append(args, []byte(m))
	}
	return args
}

// keptHistory is the messages of history the store keeps: those no larger
// than a result may be.
func (s *TaskStore) keptHistory(history []json.RawMessage) []json.RawMessage {
	var out []json.RawMessage
	for _, m := range history {
		if len(m) <= s.maxResult {
			out = append(out, m)
		}
	}
	return out
}

// parseTask reads what getScript returns: now, then the hash's fields
// and values. A task whose lease lapsed is returned lost.
func parseTask(id string, v []string) (*tasks.Task, error) {
	if len(v) < 3 {
		return nil, tasks.ErrNotFound
	}
	now, _ := strconv.ParseInt(v[0], 10, 64)
	t := &tasks.Task{ID: id}
	var lease int64
	var history map[int64]string
	type hook struct {
		seq int64
		w   tasks.Webhook
	}
	var hooks []hook
	msTime := func(s string) time.Time {
		n, _ := strconv.ParseInt(s, 10, 64)
		return time.UnixMilli(n)
	}
	for i := 1; i+1 < len(v); i += 2 {
		f, val := v[i], v[i+1]
		switch {
		case f == "o":
			t.Owner = val
		case f == "x":
			t.ContextID = val
		case f == "s":
			t.Status = tasks.Status(val)
		case f == "m":
			t.StatusMessage = val
		case f == "c":
			t.CreatedAt = msTime(val)
		case f == "u":
			t.UpdatedAt = msTime(val)
		case f == "t":
			n, _ := strconv.ParseInt(val, 10, 64)
			t.TTL = time.Duration(n) * time.Millisecond
		case f == "l":
			lease, _ = strconv.ParseInt(val, 10, 64)
		case f == "r":
			if val != "" {
				t.Result = json.RawMessage(val)
			}
		case f == "lost":
			t.Lost = true
		case strings.HasPrefix(f, "q:"):
			if t.InputRequests == nil {
				t.InputRequests = map[string]json.RawMessage{}
			}
			t.InputRequests[f[2:]] = json.RawMessage(val)
		case strings.HasPrefix(f, "a:"):
			if t.InputResponses == nil {
				t.InputResponses = map[string]json.RawMessage{}
			}
			t.InputResponses[f[2:]] = json.RawMessage(val)
		case strings.HasPrefix(f, "w:"):
			seq, cfg, _ := strings.Cut(val, ":")
			n, _ := strconv.ParseInt(seq, 10, 64)
			hooks = append(hooks, hook{n, tasks.Webhook{ID: f[2:], Config: json.RawMessage(cfg)}})
		case strings.HasPrefix(f, "h:"):
			if n, err := strconv.ParseInt(f[2:], 10, 64); err == nil {
				if history == nil {
					history = map[int64]string{}
				}
				history[n] = val
			}
		}
	}
	for _, n := range slices.Sorted(maps.Keys(history)) {
		t.History = append(t.History, json.RawMessage(history[n]))
	}
	slices.SortFunc(hooks, func(a, b hook) int { return int(a.seq - b.seq) })
	for _, h := range hooks {
		t.Webhooks = append(t.Webhooks, h.w)
	}
	if t.Status == "" || t.Owner == "" {
		return nil, errors.New("redisstore: a task in Redis is not one this store wrote; is another program using its prefix?")
	}
	if !t.Status.Terminal() && lease < now {
		t.Status, t.Lost, t.StatusMessage, t.UpdatedAt = tasks.Failed, true, lostMessage, time.UnixMilli(now)
		t.InputRequests, t.InputResponses = nil, nil
	}
	return t, nil
}
