package a2awire

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestStates(t *testing.T) {
	for in, want := range map[string]string{
		"working":                   StateWorking,
		"input-required":            StateInputRequired,
		"auth-required":             StateAuthRequired,
		"canceled":                  StateCanceled,
		"cancelled":                 StateCanceled,
		"TASK_STATE_CANCELLED":      StateCanceled,
		StateCompleted:              StateCompleted,
		"TASK_STATE_SOMETHING_ELSE": "TASK_STATE_SOMETHING_ELSE",
	} {
		assert.Equal(t, want, State(in), in)
	}
	for _, s := range []string{StateSubmitted, StateWorking, StateInputRequired, StateAuthRequired, StateCompleted, StateFailed, StateCanceled, StateRejected} {
		assert.Equal(t, s, State(State03(s)), "%s round-trips through 0.3's spelling", s)
	}
	assert.Equal(t, "input-required", State03(StateInputRequired))
}

func TestMethods(t *testing.T) {
	assert.Equal(t, "message/send", Method(SendMessage, true))
	assert.Equal(t, SendMessage, Method(SendMessage, false))
	assert.Equal(t, "tasks/get", Method03(GetTask))
	assert.Empty(t, Method03(ListTasks), "0.3 has no ListTasks")
}
