package tasks

import (
	"context"
	"encoding/json"
	"maps"
	"slices"
	"sync"
	"time"
)

// MemoryStoreOptions configures a [MemoryStore]. The zero value,
// and nil, give the defaults described on each field.
type MemoryStoreOptions struct {
	// TTL is how long a task is kept after its creation, ended or not.
	// Zero or less means DefaultTTL.
	TTL time.Duration
	// Lease is how long a running task is shown as running without an
	// update from its runner. Zero or less means DefaultLease.
	Lease time.Duration
	// MaxTasksPerOwner caps the tasks one caller holds, running or ended
	// and kept for their result. Zero or less means
	// DefaultMaxPerOwner.
	MaxTasksPerOwner int
	// MaxRunningPerOwner caps the tasks of one caller that have not
	// ended, so that a few callers cannot fill the store with running
	// tasks. Zero or less means DefaultMaxRunningPerOwner.
	MaxRunningPerOwner int
	// MaxWebhooksPerOwner caps the webhooks of one caller's tasks, all
	// together. Zero or less means DefaultMaxWebhooksPerOwner.
	MaxWebhooksPerOwner int
	// MaxTasks caps the tasks the store holds. When it is reached, the
	// task that ended longest ago is dropped to make room; a task that
	// has not ended is never dropped, and when every task runs, Create
	// is refused with ErrStoreFull. Zero or less means
	// DefaultMaxTasks.
	MaxTasks int
	// MaxResultBytes is the largest result, or set of questions, a task
	// keeps. Zero or less means DefaultMaxResultBytes.
	MaxResultBytes int
	// MaxBytes caps the size of the results, questions, answers and
	// histories the store holds, all tasks together; an update that would
	// pass it is refused with ErrStoreFull, and the task's runner fails
	// the task. Zero or less means DefaultMaxStoreBytes.
	MaxBytes int64
	// MaxHistory caps the messages of a task's History; the oldest are
	// dropped. A message larger than MaxResultBytes is not kept. Zero or
	// less means DefaultMaxHistory.
	MaxHistory int
}

// DefaultMaxStoreBytes is the default of
// [MemoryStoreOptions.MaxBytes]: 64 MiB.
const DefaultMaxStoreBytes = 64 << 20

// MemoryStore is a [Store] that keeps its tasks in the process:
// for one server, or for replicas behind a load balancer that sends every
// request about a task to the replica that created it (MCP clients send
// the task id in the Mcp-Name header for that). It is bounded in tasks,
// in tasks per caller (held and running) and in result size, and drops a
// task after its TTL, or an ended one earlier when it is full. It is safe
// for concurrent use.
type MemoryStore struct {
	ttl, lease  time.Duration
	perOwner    int
	runningCap  int
	webhooksCap int
	maxTasks    int
	maxResult   int
	maxBytes    int64
	maxHistory  int
	now         func() time.Time

	mu       sync.Mutex
	tasks    map[string]*memTask
	owners   map[string]*memOwner
	order    []memTaskOrder // by creation, oldest first, from order[head]
	head     int
	finished fifo  // the ids of ended tasks, in the order they ended
	bytes    int64 // the size of the results, questions and answers held
}

type memTask struct {
	t          Task
	leaseUntil time.Time
	expires    time.Time
}

// memOwner is what one caller holds: its tasks in the order they were
// created (dropped ones are skipped when read), and those not yet ended.
type memOwner struct {
	held     fifo
	n        int
	running  map[string]struct{}
	webhooks int // of its tasks, all together
}

// fifo is a queue of task ids. Ids whose task is gone are dropped from
// its front as it is read and as ids are pushed, so that it holds about
// as many ids as the store holds tasks.
type fifo struct {
	ids  []string
	head int
}

// push adds id at the back, after dropping the ids in front for which
// keep is false.
func (q *fifo) push(id string, keep func(string) bool) {
	q.front(keep)
	if q.head > 64 && q.head*2 > len(q.ids) {
		q.ids = append(q.ids[:0:0], q.ids[q.head:]...)
		q.head = 0
	}
	q.ids = append(q.ids, id)
}

// front returns the first id for which keep holds, dropping those before
// it; "" when there is none.
func (q *fifo) front(keep func(string) bool) string {
	for q.head < len(q.ids) {
		if id := q.ids[q.head]; keep(id) {
			return id
		}
		q.ids[q.head] = ""
		q.head++
	}
	q.ids, q.head = q.ids[:0], 0
	return ""
}

type memTaskOrder struct {
	id      string
	expires time.Time
}

var (
	_ Store  = (*MemoryStore)(nil)
	_ Lister = (*MemoryStore)(nil)
)

// NewMemoryStore returns an empty in-memory task store. opts may be
// nil.
func NewMemoryStore(opts *MemoryStoreOptions) *MemoryStore {
	if opts == nil {
		opts = &MemoryStoreOptions{}
	}
	s := &MemoryStore{ttl: opts.TTL, lease: opts.Lease, perOwner: opts.MaxTasksPerOwner, runningCap: opts.MaxRunningPerOwner, webhooksCap: opts.MaxWebhooksPerOwner,
		maxTasks: opts.MaxTasks, maxResult: opts.MaxResultBytes, maxBytes: opts.MaxBytes, maxHistory: opts.MaxHistory, now: time.Now,
		tasks: map[string]*memTask{}, owners: map[string]*memOwner{}}
	if s.ttl <= 0 {
		s.ttl = DefaultTTL
	}
	if s.lease <= 0 {
		s.lease = DefaultLease
	}
	if s.perOwner <= 0 {
		s.perOwner = DefaultMaxPerOwner
	}
	if s.runningCap <= 0 {
		s.runningCap = DefaultMaxRunningPerOwner
	}
	if s.webhooksCap <= 0 {
		s.webhooksCap = DefaultMaxWebhooksPerOwner
	}
	if s.maxTasks <= 0 {
		s.maxTasks = DefaultMaxTasks
	}
	if s.maxResult <= 0 {
		s.maxResult = DefaultMaxResultBytes
	}
	if s.maxBytes <= 0 {
		s.maxBytes = DefaultMaxStoreBytes
	}
	if s.maxHistory <= 0 {
		s.maxHistory = DefaultMaxHistory
	}
	return s
}

// remember returns history with more added: each message of more no
// larger than a result may be, the oldest dropped past the bound. history
// is not changed.
func (s *MemoryStore) remember(history, more []json.RawMessage) []json.RawMessage {
	if len(more) == 0 {
		return history
	}
	out := slices.Clone(history)
	for _, m := range more {
		if len(m) <= s.maxResult {
			out = append(out, append(json.RawMessage(nil), m...))
		}
	}
	if len(out) > s.maxHistory {
		out = slices.Clone(out[len(out)-s.maxHistory:])
	}
	return out
}

// expire drops the tasks whose TTL has passed. s.mu is held.
func (s *MemoryStore) expire(now time.Time) {
	for s.head < len(s.order) && !s.order[s.head].expires.After(now) {
		id := s.order[s.head].id
		if mt, ok := s.tasks[id]; ok && !mt.expires.After(now) {
			s.drop(id, mt)
		}
		s.order[s.head] = memTaskOrder{}
		s.head++
	}
	if s.head > 1024 && s.head*2 > len(s.order) {
		s.order = append(s.order[:0:0], s.order[s.head:]...)
		s.head = 0
	}
}

// drop forgets a task. s.mu is held.
func (s *MemoryStore) drop(id string, mt *memTask) {
	s.bytes -= taskSize(&mt.t)
	delete(s.tasks, id)
	o := s.owners[mt.t.Owner]
	delete(o.running, id)
	o.webhooks -= len(mt.t.Webhooks)
	if o.n--; o.n <= 0 {
		delete(s.owners, mt.t.Owner)
	}
}

// ended notes that a task reached a terminal status. s.mu is held.
func (s *MemoryStore) ended(mt *memTask) {
	delete(s.owners[mt.t.Owner].running, mt.t.ID)
	s.finished.push(mt.t.ID, s.holdsEnded)
}

// holds and holdsEnded report whether the store holds task id, and holds
// it ended. s.mu is held.
func (s *MemoryStore) holds(id string) bool { _, ok := s.tasks[id]; return ok }

func (s *MemoryStore) holdsEnded(id string) bool {
	mt := s.tasks[id]
	return mt != nil && mt.t.Status.Terminal()
}

// makeRoom drops the task that ended longest ago, when the store is full.
// It reports whether there is room. s.mu is held.
func (s *MemoryStore) makeRoom(now time.Time) bool {
	if len(s.tasks) < s.maxTasks {
		return true
	}
	for swept := false; ; swept = true {
		if id := s.finished.front(s.holdsEnded); id != "" {
			s.drop(id, s.tasks[id])
			return true
		}
		if swept {
			return false
		}
		// No task has ended that the store knows of: look for runners
		// whose lease lapsed, which ends their tasks, and look again.
		for id := range s.tasks {
			s.lookup(id, now)
		}
	}
}

// lookup returns the live task id, or nil. s.mu is held.
func (s *MemoryStore) lookup(id string, now time.Time) *memTask {
	mt := s.tasks[id]
	if mt == nil {
		return nil
	}
	if !mt.expires.After(now) {
		s.drop(id, mt)
		return nil
	}
	if !mt.t.Status.Terminal() && now.After(mt.leaseUntil) {
		before := taskSize(&mt.t)
		lose(&mt.t, now)
		s.bytes -= before - taskSize(&mt.t) // the history stays
		s.ended(mt)
	}
	return mt
}

// taskSize is what a task's result, questions, answers and history cost.
func taskSize(t *Task) int64 {
	n := len(t.Result) + requestsSize(t.InputRequests) + requestsSize(t.InputResponses)
	for _, m := range t.History {
		n += len(m)
	}
	return int64(n + webhooksSize(t.Webhooks))
}

// lose marks a task whose runner's lease lapsed.
func lose(t *Task, now time.Time) {
	t.Status, t.Lost, t.UpdatedAt = Failed, true, now
	t.StatusMessage = "The server running this task stopped before it ended (its lease in the task store lapsed); its outcome is unknown"
	t.InputRequests, t.InputResponses, t.Result = nil, nil, nil
}

// snapshot copies a task for a caller, which may keep it.
func snapshot(t *Task) *Task {
	c := *t
	c.InputRequests = maps.Clone(t.InputRequests)
	c.InputResponses = maps.Clone(t.InputResponses)
	c.History = slices.Clone(t.History)
	c.Webhooks = slices.Clone(t.Webhooks)
	return &c
}

// Create implements [Store].
func (s *MemoryStore) Create(_ context.Context, t *Task) (*Task, error) {
	now := s.now()
	s.mu.Lock()
	defer s.mu.Unlock()
	s.expire(now)
	if _, taken := s.tasks[t.ID]; taken {
		return nil, ErrExists
	}
	o := s.owners[t.Owner]
	if o == nil {
		o = &memOwner{running: map[string]struct{}{}}
	}
	if o.n >= s.perOwner {
		e := &LimitError{Limit: s.perOwner, RetryAfter: s.ttl}
		if oldest := o.held.front(s.holds); oldest != "" {
			e.RetryAfter = s.tasks[oldest].expires.Sub(now)
		}
		return nil, e
	}
	if len(o.running) >= s.runningCap {
		for id := range o.running { // a runner that was lost ends its task here
			s.lookup(id, now)
		}
		if len(o.running) >= s.runningCap {
			return nil, &LimitError{Limit: s.runningCap, Running: true, RetryAfter: time.Second}
		}
	}
	if len(t.Webhooks) > 0 && o.webhooks+len(t.Webhooks) > s.webhooksCap {
		return nil, ErrTooManyOwnerWebhooks
	}
	if !s.makeRoom(now) {
		return nil, ErrStoreFull
	}
	mt := &memTask{t: Task{ID: t.ID, Owner: t.Owner, ContextID: t.ContextID, Status: Working, StatusMessage: t.StatusMessage,
		CreatedAt: now, UpdatedAt: now, TTL: s.ttl, History: s.remember(nil, t.History), Webhooks: cloneWebhooks(t.Webhooks)}, leaseUntil: now.Add(s.lease), expires: now.Add(s.ttl)}
	size := taskSize(&mt.t)
	if s.bytes+size > s.maxBytes {
		return nil, ErrStoreFull
	}
	s.bytes += size
	s.tasks[t.ID] = mt
	s.owners[t.Owner] = o
	o.n++
	o.held.push(t.ID, s.holds)
	o.running[t.ID] = struct{}{}
	o.webhooks += len(mt.t.Webhooks)
	s.order = append(s.order, memTaskOrder{id: t.ID, expires: mt.expires})
	return snapshot(&mt.t), nil
}

// Get implements [Store].
func (s *MemoryStore) Get(_ context.Context, id string) (*Task, error) {
	now := s.now()
	s.mu.Lock()
	defer s.mu.Unlock()
	mt := s.lookup(id, now)
	if mt == nil {
		return nil, ErrNotFound
	}
	return snapshot(&mt.t), nil
}

// List implements [Lister].
func (s *MemoryStore) List(_ context.Context, owner string) ([]*Task, error) {
	now := s.now()
	s.mu.Lock()
	defer s.mu.Unlock()
	s.expire(now)
	o := s.owners[owner]
	if o == nil {
		return nil, nil
	}
	out := make([]*Task, 0, o.n)
	for _, id := range o.held.ids[o.held.head:] {
		if mt := s.lookup(id, now); mt != nil && mt.t.Owner == owner {
			out = append(out, snapshot(&mt.t))
		}
	}
	return out, nil
}

// Update implements [Store].
func (s *MemoryStore) Update(_ context.Context, id string, u *Update) (*Task, error) {
	now := s.now()
	s.mu.Lock()
	defer s.mu.Unlock()
	mt := s.lookup(id, now)
	if mt == nil {
		return nil, ErrNotFound
	}
	t := &mt.t
	if t.Status.Terminal() {
		return snapshot(t), nil
	}
	if size := len(u.Result) + requestsSize(u.InputRequests); size > s.maxResult {
		return nil, ErrResultTooLarge
	}
	next := *t
	next.InputResponses = maps.Clone(t.InputResponses)
	for _, k := range u.Taken {
		delete(next.InputResponses, k)
	}
	next.History = s.remember(t.History, u.History)
	if u.Status != "" {
		next.Status, next.StatusMessage, next.UpdatedAt = u.Status, u.StatusMessage, now
		if u.Status == InputRequired {
			next.InputRequests = maps.Clone(t.InputRequests)
			if next.InputRequests == nil {
				next.InputRequests = map[string]json.RawMessage{}
			}
			maps.Copy(next.InputRequests, u.InputRequests)
		} else {
			next.InputRequests = nil
		}
		if u.Status.Terminal() {
			next.InputResponses = nil
			next.Result = append(json.RawMessage(nil), u.Result...)
		}
	}
	grow := taskSize(&next) - taskSize(t)
	if grow > 0 && s.bytes+grow > s.maxBytes {
		return nil, ErrStoreFull
	}
	s.bytes += grow
	mt.leaseUntil = now.Add(s.lease)
	*t = next
	if t.Status.Terminal() {
		s.ended(mt)
	}
	return snapshot(t), nil
}

// requestsSize is the size of a set of questions.
func requestsSize(m map[string]json.RawMessage) int {
	n := 0
	for k, v := range m {
		n += len(k) + len(v)
	}
	return n
}

// Cancel implements [Store].
func (s *MemoryStore) Cancel(_ context.Context, id string) error {
	now := s.now()
	s.mu.Lock()
	defer s.mu.Unlock()
	mt := s.lookup(id, now)
	if mt == nil {
		return ErrNotFound
	}
	if t := &mt.t; !t.Status.Terminal() {
		before := taskSize(t)
		t.Status, t.StatusMessage, t.UpdatedAt = Cancelled, "The task was cancelled at the client's request", now
		t.InputRequests, t.InputResponses = nil, nil
		s.bytes -= before - taskSize(t) // the result and the history stay
		s.ended(mt)
	}
	return nil
}

// Respond implements [Store].
func (s *MemoryStore) Respond(_ context.Context, id string, answers map[string]json.RawMessage, message json.RawMessage) error {
	now := s.now()
	s.mu.Lock()
	defer s.mu.Unlock()
	mt := s.lookup(id, now)
	if mt == nil {
		return ErrNotFound
	}
	t := &mt.t
	if t.Status.Terminal() {
		return nil
	}
	size, grow := requestsSize(t.InputResponses), 0
	for k, v := range answers {
		if _, open := t.InputRequests[k]; open {
			size += len(k) + len(v)
			grow += len(v) - len(t.InputRequests[k])
		}
	}
	switch {
	case size > s.maxResult:
		return ErrResultTooLarge
	case grow > 0 && s.bytes+int64(grow) > s.maxBytes:
		return ErrStoreFull
	}
	s.bytes += int64(grow)
	taken := false
	for k, v := range answers {
		if _, open := t.InputRequests[k]; !open {
			continue
		}
		delete(t.InputRequests, k)
		if t.InputResponses == nil {
			t.InputResponses = map[string]json.RawMessage{}
		}
		t.InputResponses[k] = append(json.RawMessage(nil), v...)
		t.UpdatedAt, taken = now, true
	}
	if taken && message != nil {
		before := taskSize(t)
		t.History = s.remember(t.History, []json.RawMessage{message})
		s.bytes += taskSize(t) - before
	}
	if t.Status == InputRequired && len(t.InputRequests) == 0 {
		// Every question is answered: the task works again, and no poll
		// shows it waiting with nothing to answer.
		t.Status, t.StatusMessage = Working, ""
	}
	return nil
}
