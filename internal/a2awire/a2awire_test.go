package a2awire

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/otcgo/otc/internal/jsonparse"
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
	for _, tc := range []struct {
		p    Part
		want string
	}{
		{Version10.TextPart("hi"), `{"text":"hi"}`},
		{Version03.TextPart("hi"), `{"kind":"text","text":"hi"}`},
		{Version10.DataPart(json.RawMessage(`1`)), `{"data":1}`},
		{Version03.DataPart(json.RawMessage(`1`)), `{"kind":"data","data":{"result":1}}`},
		{Version03.DataPart(json.RawMessage(`{"a":1}`)), `{"kind":"data","data":{"a":1}}`},
		{Part{Data: json.RawMessage(`"x y"`), ValueText: true}, `{"text":"x y"}`},
		{Part{Data: json.RawMessage(`{"a":1}`), ValueText: true}, `{"text":"{\"a\":1}"}`},
		{Part{}, `{"data":null}`},
	} {
		b, err := json.Marshal(tc.p)
		require.NoError(t, err)
		assert.JSONEq(t, tc.want, string(b))
		if tc.p.ValueText {
			continue
		}
		var back Part
		require.NoError(t, json.Unmarshal(b, &back))
		assert.Equal(t, tc.p.Kind, back.Kind, "%s reads back", b)
		assert.Equal(t, tc.p.IsText, back.IsText)
		assert.Equal(t, tc.p.Text, back.Text)
	}
	assert.JSONEq(t, `{"returnImmediately":true}`, string(Version10.NotBlocking()))
	assert.JSONEq(t, `{"blocking":false}`, string(Version03.NotBlocking()))
}

// TestAppendMessage checks the hand-written message against
// encoding/json's writing of the same Message: the same JSON, members in
// the same order.
func TestAppendMessage(t *testing.T) {
	for _, m := range []*Message{
		{MessageID: "m-1", Role: "ROLE_USER", Parts: []Part{Version10.DataPart(json.RawMessage(`{"tool":"T","input":{"a":1}}`))}},
		{Kind: "message", MessageID: "m\"2\n", ContextID: "c<&>", TaskID: "t\u2028", Role: "user",
			Parts: []Part{Version03.TextPart("a\tb\x01\xff"), Version03.DataPart(json.RawMessage(`[1,"x"]`))}},
		{MessageID: "m", Role: "ROLE_AGENT", Parts: []Part{}, Metadata: json.RawMessage(`{"k":null}`)},
	} {
		want, err := json.Marshal(m)
		require.NoError(t, err)
		got := AppendMessage(nil, m)
		require.True(t, json.Valid(got), "%s", got)
		assert.JSONEq(t, string(want), string(got))
		assert.Equal(t, memberNames(want), memberNames(got))
	}
}

// memberNames are the names of the members of the object b, in order.
func memberNames(b []byte) []string {
	var names []string
	jsonparse.EachMember(b, func(name, _ []byte) bool {
		names = append(names, string(name))
		return true
	})
	return names
}
