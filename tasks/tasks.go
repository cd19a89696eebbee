package tasks

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"
)

// Status is the status of a task, as MCP names it.
type Status string

// The statuses of a task. Completed, failed and cancelled are terminal: a
// task in one of them does not change again.
const (
	// Working: the call is running.
	Working Status = "working"
	// InputRequired: the call waits for answers to its
	// [Task.InputRequests].
	InputRequired Status = "input_required"
	// Completed: the call ended with a result, [Task.Result]; a tool
	// error is a result too.
	Completed Status = "completed"
	// Failed: the call ended with a protocol error, [Task.Result]
	// (nil when the replica running it was lost: see [Task.Lost]).
	Failed Status = "failed"
	// Cancelled: the caller cancelled the task before it ended.
	Cancelled Status = "cancelled"
)

// Terminal reports whether a task in status s is over.
func (s Status) Terminal() bool {
	return s == Completed || s == Failed || s == Cancelled
}

// Task is a task as a [Store] keeps it. The store treats Owner,
// InputRequests, InputResponses and Result as opaque.
type Task struct {
	// ID is the task's handle, which the server mints unguessable: it is
	// all a client needs to read the task.
	ID string
	// Owner names the caller that created the task (its identity); only
	// that caller may read, answer or cancel the task, and the store
	// counts a caller's tasks by it.
	Owner string
	// ContextID, optional, is what the wire format groups the task under
	// (A2A's contextId), set at creation and kept as given.
	ContextID string
	// Status is the task's status.
	Status Status
	// StatusMessage, optional, describes the status for a person.
	StatusMessage string
	// CreatedAt and UpdatedAt are when the task was created and last
	// changed, as the store's clock reads them.
	CreatedAt time.Time
	UpdatedAt time.Time
	// TTL is how long the store keeps the task after its creation.
	TTL time.Duration
	// InputRequests are the questions the call waits for answers to,
	// by key, while Status is InputRequired; each is the wire
	// format's encoding of one request. A key answered is removed.
	InputRequests map[string]json.RawMessage
	// InputResponses are the answers given and not yet taken by the
	// replica running the call, by the key of their request.
	InputResponses map[string]json.RawMessage
	// Result is, for a completed task, the wire format's result of the
	// call; for a failed one, its error.
	Result json.RawMessage
	// Lost is true for a task shown as failed because the replica
	// running it stopped renewing its lease (it crashed, or lost its
	// connection to the store): the call's outcome is unknown.
	Lost bool
	// History, optional, is the task's conversation, oldest first: the
	// message that started it, the questions it asked and the answers it
	// was given, its last status message (A2A's Task.history), each as
	// the wire format encodes it. Set at creation, and grown by Update
	// and Respond; a store keeps the most recent of them, up to its bound
	// (DefaultMaxHistory).
	History []json.RawMessage
	// Webhooks, optional, are the task's subscriptions to its changes,
	// kept by a [WebhookStore]: set at creation, and by SetWebhook.
	Webhooks []Webhook
}

// Update is a change the replica running a task makes to it with
// [Store.Update].
type Update struct {
	// Status, when not empty, is the task's new status. A task whose
	// status is terminal no longer changes.
	Status Status
	// StatusMessage replaces the status message when Status is set.
	StatusMessage string
	// InputRequests are added to the task's open questions when Status
	// is InputRequired; their keys must never have been used before
	// in the task. Any other status closes the open questions.
	InputRequests map[string]json.RawMessage
	// Result is the task's result (Completed) or error (Failed).
	Result json.RawMessage
	// Taken lists the keys of the InputResponses the runner has read,
	// which the store drops.
	Taken []string
	// History is added to the task's History, whether or not Status is
	// set.
	History []json.RawMessage
}

// Store keeps tasks so that any replica of a server can report on a
// task, whichever one runs it. [MemoryStore] keeps them in the
// process; the github.com/otcgo/otc/redisstore module shares them between
// replicas.
//
// The replica that runs a task holds a lease on it, which every Update
// renews; the runner updates the task at least every third of the lease.
// When the lease lapses (the replica died), Get reports the task
// Failed with Lost set, rather than working forever.
//
// Every method returns [ErrNotFound] for a task the store does not
// hold: never created, or dropped after its TTL.
type Store interface {
	// Create records t, whose ID, Owner, ContextID and Status (Working)
	// the caller sets; the store sets the times and the TTL, and starts the
	// lease. It returns the task as recorded, [ErrTooMany] when the
	// owner already holds as many tasks as the store keeps for one,
	// [ErrStoreFull] when the store holds as many as it may, and
	// [ErrExists] when it holds a task with t's ID (a wire format that
	// derives a task's id from the message that starts it finds the task
	// of a message sent twice so). When Create returns, Get finds the task.
	Create(ctx context.Context, t *Task) (*Task, error)
	// Get returns the task.
	Get(ctx context.Context, id string) (*Task, error)
	// Update applies u, renews the lease and returns the task as it now
	// is: a task that was cancelled, or lost, meanwhile is returned so,
	// unchanged by u, and its runner stops. A Result larger than the
	// store keeps is refused with [ErrResultTooLarge], and nothing
	// changes.
	Update(ctx context.Context, id string, u *Update) (*Task, error)
	// Cancel makes a task that has not ended Cancelled; the replica
	// running it learns so at its next Update. A task that has ended is
	// left as it is, without error.
	Cancel(ctx context.Context, id string) error
	// Respond delivers answers to the task's questions, by key: each
	// answer to a question still open moves from InputRequests to
	// InputResponses; others are ignored. A task whose questions are then
	// all answered is Working again. message, when not nil, is the
	// message that brought the answers, added to the task's History when
	// an answer is taken.
	Respond(ctx context.Context, id string, answers map[string]json.RawMessage, message json.RawMessage) error
}

// Options configures the tasks of a wire format that serves them (the
// Tasks option of packages mcp and a2a). The zero value, and nil, give
// the defaults described on each field.
type Options struct {
	// Store keeps the tasks. Nil means a [MemoryStore] with its defaults
	// (tasks kept an hour, 1,000 per caller, results up to 1 MiB), which
	// serves one process; replicas behind a load balancer share a store
	// in Redis (github.com/otcgo/otc/redisstore). The store's limits bound
	// what a client can make the server keep.
	Store Store
	// MaxRunning caps the tasks the handler runs at once; a call that
	// would start one more is refused, saying when to try again. Zero or
	// less means DefaultMaxRunning.
	MaxRunning int
	// PollInterval is how often the replica running a task renews its
	// lease in the store and looks there for a cancellation or answers
	// sent to another replica (and, over MCP, the pollIntervalMs
	// suggested to clients). Keep the store's lease several times longer.
	// Zero or less means DefaultPollInterval.
	PollInterval time.Duration
}

// A Lister is a [Store] that lists the tasks one caller holds, for a wire
// format that lists them (A2A's ListTasks). [MemoryStore] and the Redis
// store implement it.
type Lister interface {
	// List returns the tasks owner holds, oldest first, each as Get
	// would return it. There are at most as many as the store keeps for
	// one caller.
	List(ctx context.Context, owner string) ([]*Task, error)
}

// Errors of a [Store].
var (
	// ErrNotFound: the store holds no task with that id.
	ErrNotFound = errors.New("otc/tasks: no such task")
	// ErrTooMany: the caller already holds, or runs, as many tasks
	// as the store keeps for one caller. Stores return it wrapped in a
	// [*LimitError], which says which limit and when to try again.
	ErrTooMany = errors.New("otc/tasks: the caller holds as many tasks as the store keeps for one caller")
	// ErrExists: Create was given the id of a task the store holds.
	ErrExists = errors.New("otc/tasks: the store holds a task with that id")
	// ErrStoreFull: the store holds as many tasks as it may.
	ErrStoreFull = errors.New("otc/tasks: the task store is full")
	// ErrResultTooLarge: a task's result, or its questions, are
	// larger than the store keeps.
	ErrResultTooLarge = errors.New("otc/tasks: the task's result is larger than the task store keeps")
)

// LimitError is the refusal of a task for a caller at one of its
// limits: the tasks it holds, running or kept for their result, or the
// tasks it runs. errors.Is(err, ErrTooMany) holds for it.
type LimitError struct {
	// Limit is the caller's limit that was reached.
	Limit int
	// Running is true for the limit on tasks that have not ended, false
	// for the limit on tasks held.
	Running bool
	// RetryAfter is when a new task may fit: when the caller's oldest
	// task expires, or, for running tasks, a guess.
	RetryAfter time.Duration
}

// Error says which limit the caller reached.
func (e *LimitError) Error() string {
	if e.Running {
		return fmt.Sprintf("otc/tasks: the caller runs %d tasks, as many as the store runs for one caller at once", e.Limit)
	}
	return fmt.Sprintf("otc/tasks: the caller holds %d tasks, as many as the store keeps for one caller", e.Limit)
}

// Is makes errors.Is(err, ErrTooMany) true.
func (e *LimitError) Is(target error) bool { return target == ErrTooMany }

// Defaults of [Options].
const (
	// DefaultMaxRunning caps the tasks one handler runs at once.
	DefaultMaxRunning = 256
	// DefaultPollInterval is how often the replica running a task renews
	// its lease and looks in the store for its cancellation or for
	// answers that reached another replica.
	DefaultPollInterval = time.Second
)

// Defaults of the task stores ([MemoryStoreOptions] and the Redis
// store's).
const (
	// DefaultTTL is how long a task is kept after its creation: an
	// hour, for a client to come back for the result of a long job.
	DefaultTTL = time.Hour
	// DefaultLease is how long the lease of the replica running a
	// task lives without renewal; the runner renews it every third of
	// it, and a task whose runner died is shown failed this long after.
	DefaultLease = 30 * time.Second
	// DefaultMaxPerOwner caps the tasks one caller holds, running
	// or kept for their result. A caller without authentication is its
	// client address (its /64 for IPv6; see package
	// github.com/otcgo/otc/caller), so that one anonymous client cannot
	// crowd the others out.
	DefaultMaxPerOwner = 1000
	// DefaultMaxRunningPerOwner caps the tasks of one caller that
	// have not ended, so that a few callers cannot fill a store with
	// running tasks, which it never drops to make room.
	DefaultMaxRunningPerOwner = 100
	// DefaultMaxWebhooksPerOwner caps the webhooks of one caller's
	// tasks, all together (a [WebhookStore]'s).
	DefaultMaxWebhooksPerOwner = 100
	// DefaultMaxResultBytes is the largest result (or set of
	// questions) a task keeps: 1 MiB. A larger result fails the task.
	DefaultMaxResultBytes = 1 << 20
	// DefaultMaxTasks caps the tasks a [MemoryStore] holds.
	DefaultMaxTasks = 10_000
	// DefaultMaxHistory caps the messages of a task's History: the
	// oldest are dropped to keep the most recent.
	DefaultMaxHistory = 100
)
