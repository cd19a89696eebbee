package tasks_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/otcgo/otc"
	"github.com/otcgo/otc/internal/testkit"
	"github.com/otcgo/otc/tasks"
)

func TestMemoryTaskStore(t *testing.T) {
	t.Parallel()
	testkit.TaskStoreContract(t, func(_ *testing.T, l testkit.TaskLimits) tasks.Store {
		return tasks.NewMemoryStore(&tasks.MemoryStoreOptions{TTL: l.TTL, Lease: l.Lease, MaxTasksPerOwner: l.PerOwner,
			MaxRunningPerOwner: l.Running, MaxWebhooksPerOwner: l.Webhooks, MaxResultBytes: l.MaxResult, MaxHistory: l.MaxHistory})
	})
}

// TestMemoryTaskStoreFull: a full store drops the task that ended longest
// ago to make room, and never a running one.
func TestMemoryTaskStoreFull(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	s := tasks.NewMemoryStore(&tasks.MemoryStoreOptions{MaxTasks: 3})
	var ids []string
	for i := range 3 {
		task, err := s.Create(ctx, &tasks.Task{ID: otc.NewCallID(), Owner: string(rune('a' + i)), Status: tasks.Working})
		require.NoError(t, err)
		ids = append(ids, task.ID)
	}
	_, err := s.Create(ctx, &tasks.Task{ID: otc.NewCallID(), Owner: "d", Status: tasks.Working})
	assert.ErrorIs(t, err, tasks.ErrStoreFull, "every task runs: none is dropped")

	// ids[2] ends first, then ids[0]; ids[1] still runs.
	_, err = s.Update(ctx, ids[2], &tasks.Update{Status: tasks.Completed, Result: json.RawMessage(`{}`)})
	require.NoError(t, err)
	require.NoError(t, s.Cancel(ctx, ids[0]))
	_, err = s.Create(ctx, &tasks.Task{ID: otc.NewCallID(), Owner: "d", Status: tasks.Working})
	require.NoError(t, err)
	_, err = s.Get(ctx, ids[2])
	assert.ErrorIs(t, err, tasks.ErrNotFound, "the task that ended longest ago went first")
	_, err = s.Get(ctx, ids[0])
	assert.NoError(t, err)
	_, err = s.Create(ctx, &tasks.Task{ID: otc.NewCallID(), Owner: "e", Status: tasks.Working})
	require.NoError(t, err)
	_, err = s.Get(ctx, ids[0])
	assert.ErrorIs(t, err, tasks.ErrNotFound, "then the next")
	got, err := s.Get(ctx, ids[1])
	require.NoError(t, err)
	assert.Equal(t, tasks.Working, got.Status, "a running task is never dropped")
	_, err = s.Create(ctx, &tasks.Task{ID: otc.NewCallID(), Owner: "f", Status: tasks.Working})
	assert.ErrorIs(t, err, tasks.ErrStoreFull)
}

// TestMemoryTaskStoreCrowd: eleven callers each starting as many quick
// tasks as they may do not lock a twelfth out. Their tasks end at once
// (ms:0), and the running cap keeps any one from holding more than its
// share of the running ones.
func TestMemoryTaskStoreCrowd(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	s := tasks.NewMemoryStore(&tasks.MemoryStoreOptions{MaxTasks: 1000, MaxTasksPerOwner: 100})
	for caller := range 11 {
		owner := "attacker-" + string(rune('a'+caller))
		for {
			task, err := s.Create(ctx, &tasks.Task{ID: otc.NewCallID(), Owner: owner, Status: tasks.Working})
			if err != nil {
				assert.ErrorIs(t, err, tasks.ErrTooMany)
				break
			}
			_, err = s.Update(ctx, task.ID, &tasks.Update{Status: tasks.Completed, Result: json.RawMessage(`{}`)})
			require.NoError(t, err)
		}
	}
	_, err := s.Create(ctx, &tasks.Task{ID: otc.NewCallID(), Owner: "bystander", Status: tasks.Working})
	assert.NoError(t, err, "the store made room from the ended tasks")
}

func TestMemoryTaskStoreBytes(t *testing.T) {
	t.Parallel()
	s := tasks.NewMemoryStore(&tasks.MemoryStoreOptions{MaxBytes: 100})
	ctx := t.Context()
	result := json.RawMessage(`"` + strings.Repeat("x", 78) + `"`)
	var ids []string
	for range 2 {
		task, err := s.Create(ctx, &tasks.Task{ID: otc.NewCallID(), Owner: "a", Status: tasks.Working})
		require.NoError(t, err)
		ids = append(ids, task.ID)
	}
	_, err := s.Update(ctx, ids[0], &tasks.Update{Status: tasks.Completed, Result: result})
	require.NoError(t, err)
	_, err = s.Update(ctx, ids[1], &tasks.Update{Status: tasks.Completed, Result: result})
	assert.ErrorIs(t, err, tasks.ErrStoreFull, "the results together would pass MaxBytes")
	_, err = s.Update(ctx, ids[1], &tasks.Update{Status: tasks.Failed, Result: json.RawMessage(`{"code":-32603}`)})
	assert.NoError(t, err, "a small error still fits")
}
