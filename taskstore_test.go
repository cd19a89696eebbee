package otc_test

import (
	"testing"

	"github.com/otcgo/otc"
	"github.com/otcgo/otc/internal/testkit"
)

func TestMemoryTaskStore(t *testing.T) {
	t.Parallel()
	testkit.TaskStoreContract(t, func(_ *testing.T, l testkit.TaskLimits) otc.TaskStore {
		return otc.NewMemoryTaskStore(&otc.MemoryTaskStoreOptions{TTL: l.TTL, Lease: l.Lease, MaxTasksPerOwner: l.PerOwner, MaxResultBytes: l.MaxResult})
	})
}

func TestMemoryTaskStoreFull(t *testing.T) {
	t.Parallel()
	s := otc.NewMemoryTaskStore(&otc.MemoryTaskStoreOptions{MaxTasks: 2})
	for i := range 3 {
		_, err := s.Create(t.Context(), &otc.Task{ID: otc.NewCallID(), Owner: string(rune('a' + i)), Status: otc.TaskWorking})
		if i < 2 && err != nil {
			t.Fatalf("task %d: %v", i, err)
		}
		if i == 2 && err != otc.ErrTaskStoreFull {
			t.Fatalf("third task: got %v, want ErrTaskStoreFull", err)
		}
	}
}
