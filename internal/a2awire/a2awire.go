// Package a2awire is the Agent2Agent protocol's wire vocabulary that the
// A2A server (package a2a) and the client share: its versions and their
// header, the agent card's place, the JSON-RPC methods of each version,
// the task states in both spellings, A2A's error codes, and the
// extension by which otc's agents publish their skills' schemas. A spec
// change is one edit here, which both sides compile against.
package a2awire

import "strings"

// The protocol versions.
const (
	// V10 is A2A 1.0, named in the HeaderVersion header.
	V10 = "1.0"
	// V03 is A2A 0.3, the version of a request without the header.
	V03 = "0.3"
	// HeaderVersion names a request's version (1.0 and later).
	HeaderVersion = "A2A-Version"
)

// CardPath is where an agent's card is found, below the agent's URL.
const CardPath = "/.well-known/agent-card.json"

// ExtensionSkillSchemas is the URI of the agent-card extension by which
// an otc agent publishes its skills' input and output schemas.
const ExtensionSkillSchemas = "https://github.com/otcgo/otc/blob/main/docs/a2a.md#skill-schemas-v1"

// The JSON-RPC methods, by their 1.0 names; [Method03] gives 0.3's.
const (
	SendMessage                      = "SendMessage"
	SendStreamingMessage             = "SendStreamingMessage"
	GetTask                          = "GetTask"
	CancelTask                       = "CancelTask"
	ListTasks                        = "ListTasks"
	SubscribeToTask                  = "SubscribeToTask"
	GetExtendedAgentCard             = "GetExtendedAgentCard"
	CreateTaskPushNotificationConfig = "CreateTaskPushNotificationConfig"
	GetTaskPushNotificationConfig    = "GetTaskPushNotificationConfig"
	ListTaskPushNotificationConfigs  = "ListTaskPushNotificationConfigs"
	DeleteTaskPushNotificationConfig = "DeleteTaskPushNotificationConfig"
)

// methods03 are 0.3's names of the 1.0 methods it has (ListTasks is new
// in 1.0).
var methods03 = map[string]string{
	SendMessage:                      "message/send",
	SendStreamingMessage:             "message/stream",
	GetTask:                          "tasks/get",
	CancelTask:                       "tasks/cancel",
	SubscribeToTask:                  "tasks/resubscribe",
	GetExtendedAgentCard:             "agent/getAuthenticatedExtendedCard",
	CreateTaskPushNotificationConfig: "tasks/pushNotificationConfig/set",
	GetTaskPushNotificationConfig:    "tasks/pushNotificationConfig/get",
	ListTaskPushNotificationConfigs:  "tasks/pushNotificationConfig/list",
	DeleteTaskPushNotificationConfig: "tasks/pushNotificationConfig/delete",
}

// Method03 is 0.3's name of the 1.0 method m, or "" when 0.3 has none.
func Method03(m string) string { return methods03[m] }

// The task states, in 1.0's spelling.
const (
	StateUnspecified   = "TASK_STATE_UNSPECIFIED"
	StateSubmitted     = "TASK_STATE_SUBMITTED"
	StateWorking       = "TASK_STATE_WORKING"
	StateInputRequired = "TASK_STATE_INPUT_REQUIRED"
	StateAuthRequired  = "TASK_STATE_AUTH_REQUIRED"
	StateCompleted     = "TASK_STATE_COMPLETED"
	StateFailed        = "TASK_STATE_FAILED"
	StateCanceled      = "TASK_STATE_CANCELED"
	StateRejected      = "TASK_STATE_REJECTED"
)

// State is the state s, given in either version's spelling ("working",
// "input-required", "TASK_STATE_WORKING"), in 1.0's. 0.3's "cancelled",
// which some agents write, is read as canceled.
func State(s string) string {
	if !strings.HasPrefix(s, "TASK_STATE_") {
		s = "TASK_STATE_" + strings.ToUpper(strings.ReplaceAll(s, "-", "_"))
	}
	if s == "TASK_STATE_CANCELLED" {
		return StateCanceled
	}
	return s
}

// State03 is the 1.0 state s in 0.3's spelling ("input-required").
func State03(s string) string {
	return strings.ReplaceAll(strings.ToLower(strings.TrimPrefix(s, "TASK_STATE_")), "_", "-")
}

// A2A's JSON-RPC error codes (its section 5.4), and the SDKs' codes for
// a caller refused for its credentials.
const (
	CodeTaskNotFound        = -32001
	CodeTaskNotCancelable   = -32002
	CodePushNotSupported    = -32003
	CodeUnsupported         = -32004
	CodeExtendedCardMissing = -32007
	CodeVersionNotSupported = -32009
	CodeUnauthenticated     = -31401
	CodeUnauthorized        = -31403
)

// MetaSkillID is the key of a catalog entry's _meta under which the
// client keeps the id an Agent Card gives a skill, when the entry is named
// otherwise (by the skill's name).
const MetaSkillID = "io.github.otcgo/a2a_skill_id"

// MetaOutcome is the metadata key in which an otc agent says how a call
// answered by a message ended: OutcomeSucceeded or OutcomeFailed.
const (
	MetaOutcome      = "io.github.otcgo/outcome"
	OutcomeSucceeded = "succeeded"
	OutcomeFailed    = "failed"
)
