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
	assert.Equal(t, "message/send", Version03.Method(SendMessage))
	assert.Equal(t, SendMessage, Version10.Method(SendMessage))
	assert.Equal(t, "tasks/get", Method03(GetTask))
	assert.Empty(t, Method03(ListTasks), "0.3 has no ListTasks")
	assert.Empty(t, Version03.Method(ListTasks))
}

func TestVersions(t *testing.T) {
	assert.True(t, Version10.Header)
	assert.False(t, Version03.Header, "0.3 has no version header")
	assert.Equal(t, "ROLE_USER", Version10.UserRole())
	assert.Equal(t, "user", Version03.UserRole())
	assert.Equal(t, map[string]any{"text": "hi"}, Version10.TextPart("hi"))
	assert.Equal(t, map[string]any{"kind": "text", "text": "hi"}, Version03.TextPart("hi"))
	assert.Equal(t, map[string]any{"kind": "data", "data": 1}, Version03.DataPart(1))
	assert.Equal(t, map[string]any{"data": 1}, Version10.DataPart(1))
	assert.Equal(t, map[string]any{"returnImmediately": true}, Version10.NotBlocking())
	assert.Equal(t, map[string]any{"blocking": false}, Version03.NotBlocking())
}
