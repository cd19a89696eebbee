package otc_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/otcgo/otc"
	"github.com/otcgo/otc/internal/testkit"
)

func TestMemoryTaskStore(t *testing.T) {
	t.Parallel()
	testkit.TaskStoreContract(t, func(_ *testing.T, l testkit.TaskLimits) otc.TaskStore {
		return otc.NewMemoryTaskStore(&otc.MemoryTaskStoreOptions{TTL: l.TTL, Lease: l.Lease, MaxTasksPerOwner: l.PerOwner,
			MaxRunningPerOwner: l.Running, MaxResultBytes: l.MaxResult})
	})
}

// TestMemoryTaskStoreFull: a full store drops the task that ended longest
// ago to make room, and never a running one.
func TestMemoryTaskStoreFull(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	s := otc.NewMemoryTaskStore(&otc.MemoryTaskStoreOptions{MaxTasks: 3})
	var ids []string
	for i := range 3 {
		task, err := s.Create(ctx, &otc.Task{ID: otc.NewCallID(), Owner: string(rune('a' + i)), Status: otc.TaskWorking})
		require.NoError(t, err)
		ids = append(ids, task.ID)
	}
	_, err := s.Create(ctx, &otc.Task{ID: otc.NewCallID(), Owner: "d", Status: otc.TaskWorking})
	assert.ErrorIs(t, err, otc.ErrTaskStoreFull, "every task runs: none is dropped")

	// ids[2] ends first, then ids[0]; ids[1] still runs.
	_, err = s.Update(ctx, ids[2], &otc.TaskUpdate{Status: otc.TaskCompleted, Result: json.RawMessage(`{}`)})
	require.NoError(t, err)
	require.NoError(t, s.Cancel(ctx, ids[0]))
	_, err = s.Create(ctx, &otc.Task{ID: otc.NewCallID(), Owner: "d", Status: otc.TaskWorking})
	require.NoError(t, err)
	_, err = s.Get(ctx, ids[2])
	assert.ErrorIs(t, err, otc.ErrTaskNotFound, "the task that ended longest ago went first")
	_, err = s.Get(ctx, ids[0])
	assert.NoError(t, err)
	_, err = s.Create(ctx, &otc.Task{ID: otc.NewCallID(), Owner: "e", Status: otc.TaskWorking})
	require.NoError(t, err)
	_, err = s.Get(ctx, ids[0])
	assert.ErrorIs(t, err, otc.ErrTaskNotFound, "then the next")
	got, err := s.Get(ctx, ids[1])
	require.NoError(t, err)
	assert.Equal(t, otc.TaskWorking, got.Status, "a running task is never dropped")
	_, err = s.Create(ctx, &otc.Task{ID: otc.NewCallID(), Owner: "f", Status: otc.TaskWorking})
	assert.ErrorIs(t, err, otc.ErrTaskStoreFull)
}

// TestMemoryTaskStoreCrowd: eleven callers each starting as many quick
// tasks as they may do not lock a twelfth out. Their tasks end at once
// (ms:0), and the running cap keeps any one from holding more than its
// share of the running ones.
func TestMemoryTaskStoreCrowd(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	s := otc.NewMemoryTaskStore(&otc.MemoryTaskStoreOptions{MaxTasks: 1000, MaxTasksPerOwner: 100})
	for caller := range 11 {
		owner := "attacker-" + string(rune('a'+caller))
		for {
			task, err := s.Create(ctx, &otc.Task{ID: otc.NewCallID(), Owner: owner, Status: otc.TaskWorking})
			if err != nil {
				assert.ErrorIs(t, err, otc.ErrTooManyTasks)
				break
			}
			_, err = s.Update(ctx, task.ID, &otc.TaskUpdate{Status: otc.TaskCompleted, Result: json.RawMessage(`{}`)})
			require.NoError(t, err)
		}
	}
	_, err := s.Create(ctx, &otc.Task{ID: otc.NewCallID(), Owner: "bystander", Status: otc.TaskWorking})
	assert.NoError(t, err, "the store made room from the ended tasks")
}

func TestMemoryTaskStoreBytes(t *testing.T) {
	t.Parallel()
	s := otc.NewMemoryTaskStore(&otc.MemoryTaskStoreOptions{MaxBytes: 100})
	ctx := t.Context()
	result := json.RawMessage(`"` + strings.Repeat("x", 78) + `"`)
	var ids []string
	for range 2 {
		task, err := s.Create(ctx, &otc.Task{ID: otc.NewCallID(), Owner: "a", Status: otc.TaskWorking})
		require.NoError(t, err)
		ids = append(ids, task.ID)
	}
	_, err := s.Update(ctx, ids[0], &otc.TaskUpdate{Status: otc.TaskCompleted, Result: result})
	require.NoError(t, err)
	_, err = s.Update(ctx, ids[1], &otc.TaskUpdate{Status: otc.TaskCompleted, Result: result})
	assert.ErrorIs(t, err, otc.ErrTaskStoreFull, "the results together would pass MaxBytes")
	_, err = s.Update(ctx, ids[1], &otc.TaskUpdate{Status: otc.TaskFailed, Result: json.RawMessage(`{"code":-32603}`)})
	assert.NoError(t, err, "a small error still fits")
}

func TestRegisterTaskSupport(t *testing.T) {
	t.Parallel()
	reg := otc.NewRegistry(nil)
	fn := func(context.Context, struct{}) (string, error) { return "", nil }
	err := otc.Register(reg, otc.Tool{ID: "Job.Odd", Version: "1.0.0", Description: "An odd job.", Tasks: otc.TaskSupport(7)}, fn)
	require.Error(t, err)
	assert.Contains(t, err.Error(), `otc: tool "Job.Odd@1.0.0": Tasks is 7, which is not one of TasksForbidden, TasksOptional and TasksRequired`)
	for _, ts := range []otc.TaskSupport{otc.TasksForbidden, otc.TasksOptional, otc.TasksRequired} {
		require.NoError(t, otc.Register(reg, otc.Tool{ID: "Job.T" + ts.String(), Version: "1.0.0", Description: "A job.", Tasks: ts}, fn))
		def, err := reg.Lookup("Job.T"+ts.String(), "")
		require.NoError(t, err)
		assert.Equal(t, ts, def.Tasks, "the definition carries the task support")
	}
	assert.Equal(t, "TaskSupport(7)", otc.TaskSupport(7).String())
}

func TestTaskOwner(t *testing.T) {
	t.Parallel()
	owner := func(id *otc.Identity) string {
		t.Helper()
		k, err := otc.TaskOwner(id)
		require.NoError(t, err)
		return k
	}
	assert.Equal(t, "a", owner(nil))
	a := owner(&otc.Identity{Method: "api_key", Name: "alice"})
	assert.NotEqual(t, a, owner(&otc.Identity{Method: "api_key", Name: "bob"}))
	assert.NotEqual(t, owner(&otc.Identity{Method: "a", Name: "b:c"}), owner(&otc.Identity{Method: "a:b", Name: "c"}), "no identity spells another's key")
	assert.Equal(t, a, owner(&otc.Identity{Method: "api_key", Name: "alice"}))

	// A subject never equals a client id, nor one issuer's subject
	// another's.
	token := func(claims map[string]any) *otc.Identity { return &otc.Identity{Method: "oauth", Claims: claims} }
	bySub := owner(token(map[string]any{"iss": "https://as.test", "sub": "alice", "client_id": "evilapp"}))
	byClient := owner(token(map[string]any{"iss": "https://as.test", "client_id": "alice"}))
	assert.NotEqual(t, bySub, byClient)
	assert.NotEqual(t, bySub, owner(token(map[string]any{"iss": "https://other.test", "sub": "alice"})))
	assert.Equal(t, bySub, owner(token(map[string]any{"iss": "https://as.test", "sub": "alice", "client_id": "otherapp"})), "the subject names the caller, whatever its client")

	// A credential that names no one owns nothing.
	for _, id := range []*otc.Identity{
		token(map[string]any{"iss": "https://as.test"}),
		token(map[string]any{"iss": "https://as.test", "sub": ""}),
		{Method: "api_key"},
	} {
		_, err := otc.TaskOwner(id)
		assert.ErrorIs(t, err, otc.ErrNoOwner, "%+v", id)
	}
}
