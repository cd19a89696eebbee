package otc

import (
	"context"
	"encoding/json"
	"maps"
	"sync"
	"time"
)

// MemoryTaskStoreOptions configures a [MemoryTaskStore]. The zero value,
// and nil, give the defaults described on each field.
type MemoryTaskStoreOptions struct {
	// TTL is how long a task is kept after its creation, ended or not.
	// Zero or less means DefaultTaskTTL.
	TTL time.Duration
	// Lease is how long a running task is shown as running without an
	// update from its runner. Zero or less means DefaultTaskLease.
	Lease time.Duration
	// MaxTasksPerOwner caps the tasks one caller holds. Zero or less
	// means DefaultMaxTasksPerOwner.
	MaxTasksPerOwner int
	// MaxTasks caps the tasks the store holds. Zero or less means
	// DefaultMaxTasks.
	MaxTasks int
	// MaxResultBytes is the largest result, or set of questions, a task
	// keeps. Zero or less means DefaultMaxTaskResultBytes.
	MaxResultBytes int
	// MaxBytes caps the size of the results, questions and answers the
	// store holds, all tasks together; an update that would pass it is
	// refused with ErrTaskStoreFull, and the task's runner fails the
	// task. Zero or less means DefaultMaxTaskStoreBytes.
	MaxBytes int64
}

// DefaultMaxTaskStoreBytes is the default of
// [MemoryTaskStoreOptions.MaxBytes]: 64 MiB.
const DefaultMaxTaskStoreBytes = 64 << 20

// MemoryTaskStore is a [TaskStore] that keeps its tasks in the process:
// for one server, or for replicas behind a load balancer that sends every
// request about a task to the replica that created it (MCP clients send
// the task id in the Mcp-Name header for that). It is bounded in tasks,
// in tasks per caller and in result size, and drops a task after its TTL.
// It is safe for concurrent use.
type MemoryTaskStore struct {
	ttl, lease time.Duration
	perOwner   int
	maxTasks   int
	maxResult  int
	maxBytes   int64
	now        func() time.Time

	mu     sync.Mutex
	tasks  map[string]*memTask
	owners map[string]int
	order  []memTaskOrder // by creation, oldest first, from order[head]
	head   int
	bytes  int64 // the size of the results, questions and answers held
}

type memTask struct {
	t          Task
	leaseUntil time.Time
	expires    time.Time
}

type memTaskOrder struct {
	id      string
	expires time.Time
}

var _ TaskStore = (*MemoryTaskStore)(nil)

// NewMemoryTaskStore returns an empty in-memory task store. opts may be
// nil.
func NewMemoryTaskStore(opts *MemoryTaskStoreOptions) *MemoryTaskStore {
	if opts == nil {
		opts = &MemoryTaskStoreOptions{}
	}
	s := &MemoryTaskStore{ttl: opts.TTL, lease: opts.Lease, perOwner: opts.MaxTasksPerOwner, maxTasks: opts.MaxTasks,
		maxResult: opts.MaxResultBytes, maxBytes: opts.MaxBytes, now: time.Now, tasks: map[string]*memTask{}, owners: map[string]int{}}
	if s.ttl <= 0 {
		s.ttl = DefaultTaskTTL
	}
	if s.lease <= 0 {
		s.lease = DefaultTaskLease
	}
	if s.perOwner <= 0 {
		s.perOwner = DefaultMaxTasksPerOwner
	}
	if s.maxTasks <= 0 {
		s.maxTasks = DefaultMaxTasks
	}
	if s.maxResult <= 0 {
		s.maxResult = DefaultMaxTaskResultBytes
	}
	if s.maxBytes <= 0 {
		s.maxBytes = DefaultMaxTaskStoreBytes
	}
	return s
}

// expire drops the tasks whose TTL has passed. s.mu is held.
func (s *MemoryTaskStore) expire(now time.Time) {
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

func (s *MemoryTaskStore) drop(id string, mt *memTask) {
	s.bytes -= taskSize(&mt.t)
	delete(s.tasks, id)
	if s.owners[mt.t.Owner]--; s.owners[mt.t.Owner] <= 0 {
		delete(s.owners, mt.t.Owner)
	}
}

// lookup returns the live task id, or nil. s.mu is held.
func (s *MemoryTaskStore) lookup(id string, now time.Time) *memTask {
	mt := s.tasks[id]
	if mt == nil {
		return nil
	}
	if !mt.expires.After(now) {
		s.drop(id, mt)
		return nil
	}
	if !mt.t.Status.Terminal() && now.After(mt.leaseUntil) {
		s.bytes -= taskSize(&mt.t)
		lose(&mt.t, now)
	}
	return mt
}

// taskSize is what a task's result, questions and answers cost.
func taskSize(t *Task) int64 {
	return int64(len(t.Result) + requestsSize(t.InputRequests) + requestsSize(t.InputResponses))
}

// lose marks a task whose runner's lease lapsed.
func lose(t *Task, now time.Time) {
	t.Status, t.Lost, t.UpdatedAt = TaskFailed, true, now
	t.StatusMessage = "The server running this task stopped before it ended (its lease in the task store lapsed); its outcome is unknown"
	t.InputRequests, t.InputResponses, t.Result = nil, nil, nil
}

// snapshot copies a task for a caller, which may keep it.
func snapshot(t *Task) *Task {
	c := *t
	c.InputRequests = maps.Clone(t.InputRequests)
	c.InputResponses = maps.Clone(t.InputResponses)
	return &c
}

// Create implements [TaskStore].
func (s *MemoryTaskStore) Create(_ context.Context, t *Task) (*Task, error) {
	now := s.now()
	s.mu.Lock()
	defer s.mu.Unlock()
	s.expire(now)
	if _, taken := s.tasks[t.ID]; taken {
		return nil, ErrTaskStoreFull // an id is minted unguessable: a clash is a fault of the minter
	}
	if s.owners[t.Owner] >= s.perOwner {
		return nil, ErrTooManyTasks
	}
	if len(s.tasks) >= s.maxTasks {
		return nil, ErrTaskStoreFull
	}
	mt := &memTask{t: Task{ID: t.ID, Owner: t.Owner, Status: TaskWorking, StatusMessage: t.StatusMessage,
		CreatedAt: now, UpdatedAt: now, TTL: s.ttl}, leaseUntil: now.Add(s.lease), expires: now.Add(s.ttl)}
	s.tasks[t.ID] = mt
	s.owners[t.Owner]++
	s.order = append(s.order, memTaskOrder{id: t.ID, expires: mt.expires})
	return snapshot(&mt.t), nil
}

// Get implements [TaskStore].
func (s *MemoryTaskStore) Get(_ context.Context, id string) (*Task, error) {
	now := s.now()
	s.mu.Lock()
	defer s.mu.Unlock()
	mt := s.lookup(id, now)
	if mt == nil {
		return nil, ErrTaskNotFound
	}
	return snapshot(&mt.t), nil
}

// Update implements [TaskStore].
func (s *MemoryTaskStore) Update(_ context.Context, id string, u *TaskUpdate) (*Task, error) {
	now := s.now()
	s.mu.Lock()
	defer s.mu.Unlock()
	mt := s.lookup(id, now)
	if mt == nil {
		return nil, ErrTaskNotFound
	}
	t := &mt.t
	if t.Status.Terminal() {
		return snapshot(t), nil
	}
	if size := len(u.Result) + requestsSize(u.InputRequests); size > s.maxResult {
		return nil, ErrTaskResultTooLarge
	}
	next := *t
	next.InputResponses = maps.Clone(t.InputResponses)
	for _, k := range u.Taken {
		delete(next.InputResponses, k)
	}
	if u.Status != "" {
		next.Status, next.StatusMessage, next.UpdatedAt = u.Status, u.StatusMessage, now
		if u.Status == TaskInputRequired {
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
		return nil, ErrTaskStoreFull
	}
	s.bytes += grow
	mt.leaseUntil = now.Add(s.lease)
	*t = next
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

// Cancel implements [TaskStore].
func (s *MemoryTaskStore) Cancel(_ context.Context, id string) error {
	now := s.now()
	s.mu.Lock()
	defer s.mu.Unlock()
	mt := s.lookup(id, now)
	if mt == nil {
		return ErrTaskNotFound
	}
	if t := &mt.t; !t.Status.Terminal() {
		s.bytes -= taskSize(t)
		t.Status, t.StatusMessage, t.UpdatedAt = TaskCancelled, "The task was cancelled at the client's request", now
		t.InputRequests, t.InputResponses = nil, nil
	}
	return nil
}

// Respond implements [TaskStore].
func (s *MemoryTaskStore) Respond(_ context.Context, id string, answers map[string]json.RawMessage) error {
	now := s.now()
	s.mu.Lock()
	defer s.mu.Unlock()
	mt := s.lookup(id, now)
	if mt == nil {
		return ErrTaskNotFound
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
		return ErrTaskResultTooLarge
	case grow > 0 && s.bytes+int64(grow) > s.maxBytes:
		return ErrTaskStoreFull
	}
	s.bytes += int64(grow)
	for k, v := range answers {
		if _, open := t.InputRequests[k]; !open {
			continue
		}
		delete(t.InputRequests, k)
		if t.InputResponses == nil {
			t.InputResponses = map[string]json.RawMessage{}
		}
		t.InputResponses[k] = append(json.RawMessage(nil), v...)
		t.UpdatedAt = now
	}
	return nil
}
