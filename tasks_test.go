package otc_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/otcgo/otc"
)

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
