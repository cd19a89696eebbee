package otc

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	idclaims "github.com/otcgo/otc/internal/claims"
)

// This file is the protocol-neutral half of tasks: a call that the server
// answers at once with a handle, runs in the background, and whose status
// and result the client asks for later (MCP's tasks extension,
// io.modelcontextprotocol/tasks). A tool says whether its calls may run so
// with [Tool.Tasks]; a [TaskStore] keeps the tasks, so that any replica can
// report on a task another one runs. The mcp package serves them.

// TaskSupport says whether the calls of a tool may run as tasks.
type TaskSupport uint8

const (
	// TasksForbidden, the zero value, keeps every call of the tool
	// synchronous: the caller waits for the result on its connection.
	TasksForbidden TaskSupport = iota
	// TasksOptional lets the server run a call as a task when the caller
	// can take one (over MCP, a client that declares the tasks
	// extension), and runs it synchronously for any other caller.
	TasksOptional
	// TasksRequired runs the tool only as a task: for a tool whose work
	// outlasts what a connection should be held for (a report, a build,
	// an export). A caller that cannot take a task is refused without
	// the function running: over MCP 2026-07-28, a client that did not
	// declare the tasks extension gets error -32021 naming it; over OTC,
	// the REST view, and MCP versions before 2026-07-28, which have no
	// tasks, the call is answered with a tool error whose can_retry is
	// false and whose message says to call the tool over MCP with tasks.
	// The refusal does not block up to the tool's timeout: a caller that
	// must wait minutes on a connection is what the mark rules out.
	TasksRequired
)

// String returns "forbidden", "optional" or "required", as MCP names a
// tool's task support.
func (t TaskSupport) String() string {
	switch t {
	case TasksForbidden:
		return "forbidden"
	case TasksOptional:
		return "optional"
	case TasksRequired:
		return "required"
	}
	return fmt.Sprintf("TaskSupport(%d)", uint8(t))
}

// taskRequired is the answer to a call of a TasksRequired tool that does
// not run as a task.
func taskRequired(c *Call) CallResult {
	name := c.tool.def.Name
	return CallResult{CallID: c.CallID, outcome: OutcomeRefused, Error: &ToolError{
		Message: fmt.Sprintf("Tool '%s' runs only as a task, which this connection cannot take: it was not run. "+
			"Call it over MCP (protocol version 2026-07-28) from a client that declares the io.modelcontextprotocol/tasks extension, and poll the task for its result.", name),
		DeveloperMessage: fmt.Sprintf("%s is registered with Tasks: TasksRequired; only an adapter that runs the call as a task (CallRequest.AsTask) may run it", c.tool.def.ID),
	}}
}

// TaskStatus is the status of a task, as MCP names it.
type TaskStatus string

// The statuses of a task. Completed, failed and cancelled are terminal: a
// task in one of them does not change again.
const (
	// TaskWorking: the call is running.
	TaskWorking TaskStatus = "working"
	// TaskInputRequired: the call waits for answers to its
	// [Task.InputRequests].
	TaskInputRequired TaskStatus = "input_required"
	// TaskCompleted: the call ended with a result, [Task.Result]; a tool
	// error is a result too.
	TaskCompleted TaskStatus = "completed"
	// TaskFailed: the call ended with a protocol error, [Task.Result]
	// (nil when the replica running it was lost: see [Task.Lost]).
	TaskFailed TaskStatus = "failed"
	// TaskCancelled: the caller cancelled the task before it ended.
	TaskCancelled TaskStatus = "cancelled"
)

// Terminal reports whether a task in status s is over.
func (s TaskStatus) Terminal() bool {
	return s == TaskCompleted || s == TaskFailed || s == TaskCancelled
}

// Task is a task as a [TaskStore] keeps it. The store treats Owner,
// InputRequests, InputResponses and Result as opaque.
type Task struct {
	// ID is the task's handle, which the server mints unguessable: it is
	// all a client needs to read the task.
	ID string
	// Owner names the caller that created the task (its identity); only
	// that caller may read, answer or cancel the task, and the store
	// counts a caller's tasks by it.
	Owner string
	// Status is the task's status.
	Status TaskStatus
	// StatusMessage, optional, describes the status for a person.
	StatusMessage string
	// CreatedAt and UpdatedAt are when the task was created and last
	// changed, as the store's clock reads them.
	CreatedAt time.Time
	UpdatedAt time.Time
	// TTL is how long the store keeps the task after its creation.
	TTL time.Duration
	// InputRequests are the questions the call waits for answers to,
	// by key, while Status is TaskInputRequired; each is the wire
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
}

// TaskUpdate is a change the replica running a task makes to it with
// [TaskStore.Update].
type TaskUpdate struct {
	// Status, when not empty, is the task's new status. A task whose
	// status is terminal no longer changes.
	Status TaskStatus
	// StatusMessage replaces the status message when Status is set.
	StatusMessage string
	// InputRequests are added to the task's open questions when Status
	// is TaskInputRequired; their keys must never have been used before
	// in the task. Any other status closes the open questions.
	InputRequests map[string]json.RawMessage
	// Result is the task's result (TaskCompleted) or error (TaskFailed).
	Result json.RawMessage
	// Taken lists the keys of the InputResponses the runner has read,
	// which the store drops.
	Taken []string
}

// TaskStore keeps tasks so that any replica of a server can report on a
// task, whichever one runs it. [MemoryTaskStore] keeps them in the
// process; the github.com/otcgo/otc/redisstore module shares them between
// replicas.
//
// The replica that runs a task holds a lease on it, which every Update
// renews; the runner updates the task at least every third of the lease.
// When the lease lapses (the replica died), Get reports the task
// TaskFailed with Lost set, rather than working forever.
//
// Every method returns [ErrTaskNotFound] for a task the store does not
// hold: never created, or dropped after its TTL.
type TaskStore interface {
	// Create records t, whose ID, Owner and Status (TaskWorking) the
	// caller sets; the store sets the times and the TTL, and starts the
	// lease. It returns the task as recorded, [ErrTooManyTasks] when the
	// owner already holds as many tasks as the store keeps for one, and
	// [ErrTaskStoreFull] when the store holds as many as it may. When
	// Create returns, Get finds the task.
	Create(ctx context.Context, t *Task) (*Task, error)
	// Get returns the task.
	Get(ctx context.Context, id string) (*Task, error)
	// Update applies u, renews the lease and returns the task as it now
	// is: a task that was cancelled, or lost, meanwhile is returned so,
	// unchanged by u, and its runner stops. A Result larger than the
	// store keeps is refused with [ErrTaskResultTooLarge], and nothing
	// changes.
	Update(ctx context.Context, id string, u *TaskUpdate) (*Task, error)
	// Cancel makes a task that has not ended TaskCancelled; the replica
	// running it learns so at its next Update. A task that has ended is
	// left as it is, without error.
	Cancel(ctx context.Context, id string) error
	// Respond delivers answers to the task's questions, by key: each
	// answer to a question still open moves from InputRequests to
	// InputResponses; others are ignored.
	Respond(ctx context.Context, id string, answers map[string]json.RawMessage) error
}

// Errors of a [TaskStore].
var (
	// ErrTaskNotFound: the store holds no task with that id.
	ErrTaskNotFound = errors.New("otc: no such task")
	// ErrTooManyTasks: the caller already holds, or runs, as many tasks
	// as the store keeps for one caller. Stores return it wrapped in a
	// [*TaskLimitError], which says which limit and when to try again.
	ErrTooManyTasks = errors.New("otc: the caller holds as many tasks as the store keeps for one caller")
	// ErrTaskStoreFull: the store holds as many tasks as it may.
	ErrTaskStoreFull = errors.New("otc: the task store is full")
	// ErrTaskResultTooLarge: a task's result, or its questions, are
	// larger than the store keeps.
	ErrTaskResultTooLarge = errors.New("otc: the task's result is larger than the task store keeps")
)

// TaskLimitError is the refusal of a task for a caller at one of its
// limits: the tasks it holds, running or kept for their result, or the
// tasks it runs. errors.Is(err, ErrTooManyTasks) holds for it.
type TaskLimitError struct {
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
func (e *TaskLimitError) Error() string {
	if e.Running {
		return fmt.Sprintf("otc: the caller runs %d tasks, as many as the store runs for one caller at once", e.Limit)
	}
	return fmt.Sprintf("otc: the caller holds %d tasks, as many as the store keeps for one caller", e.Limit)
}

// Is makes errors.Is(err, ErrTooManyTasks) true.
func (e *TaskLimitError) Is(target error) bool { return target == ErrTooManyTasks }

// Defaults of the task stores ([MemoryTaskStoreOptions] and the Redis
// store's).
const (
	// DefaultTaskTTL is how long a task is kept after its creation: an
	// hour, for a client to come back for the result of a long job.
	DefaultTaskTTL = time.Hour
	// DefaultTaskLease is how long the lease of the replica running a
	// task lives without renewal; the runner renews it every third of
	// it, and a task whose runner died is shown failed this long after.
	DefaultTaskLease = 30 * time.Second
	// DefaultMaxTasksPerOwner caps the tasks one caller holds, running
	// or kept for their result. Callers without authentication are all
	// one caller, "a" (see [TaskOwner]), and share it.
	DefaultMaxTasksPerOwner = 1000
	// DefaultMaxRunningTasksPerOwner caps the tasks of one caller that
	// have not ended, so that a few callers cannot fill a store with
	// running tasks, which it never drops to make room.
	DefaultMaxRunningTasksPerOwner = 100
	// DefaultMaxTaskResultBytes is the largest result (or set of
	// questions) a task keeps: 1 MiB. A larger result fails the task.
	DefaultMaxTaskResultBytes = 1 << 20
	// DefaultMaxTasks caps the tasks a [MemoryTaskStore] holds.
	DefaultMaxTasks = 10_000
)

// ErrNoOwner is returned by [TaskOwner] for an authenticated caller whose
// credential names no one: a token with neither "sub" nor "client_id",
// or an identity without a name.
var ErrNoOwner = errors.New("otc: the caller's credential names no one (a token with neither sub nor client_id), so nothing can be kept for it alone")

// TaskOwner returns the key of the caller an identity proves, to which
// what a call leaves behind belongs: its tasks ([Task.Owner]), and the
// questions it is asked and their answers. The key holds the identity's
// method, the token's issuer, and the claim that names the caller with
// its value: "sub", else "client_id" (a subject never equals a client
// id), else, for an identity without claims (an API key), its Name.
// Each part is length-prefixed, so that no identity spells another's key.
//
// An anonymous caller (nil) is "a": on a server without authentication
// every caller is the same caller, and the unguessable task id is the
// only key. An authenticated caller whose credential names no one gets
// [ErrNoOwner]: nothing is kept for it, since two such callers could not
// be told apart.
func TaskOwner(id *Identity) (string, error) {
	if id == nil {
		return "a", nil
	}
	var kind, name, iss string
	if id.Claims != nil {
		kind, name = idclaims.Subject(id.Claims)
		iss = idclaims.Issuer(id.Claims)
	}
	if kind == "" && id.Name != "" {
		kind, name = "name", id.Name
	}
	if kind == "" {
		return "", ErrNoOwner
	}
	b := []byte{'i'}
	for _, s := range [...]string{id.Method, iss, kind, name} {
		b = fmt.Appendf(b, "%d:%s", len(s), s)
	}
	return string(b), nil
}
