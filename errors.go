package otc

import (
	"encoding/json"
	"errors"
	"math"
	"net/http"
	"strings"
	"time"
)

// Code is the class of an [Error]: one of the error classes a server
// reports before, or instead of, running a tool function.
// Tool execution errors are not a Code: they are [*ToolError] values,
// carried in a successful response.
type Code int

// The error classes. The first four are the protocol's; the last two are
// this library's, for a client too slow to send its request and for a
// call a tool's policy refuses.
const (
	// CodeServerError: anything before the function runs that is not input
	// validation: a malformed request, an unsupported $schema, an unknown
	// tool or version, missing requirements, an unavailable server.
	CodeServerError Code = iota + 1
	// CodeUnauthenticated: missing or bad credentials.
	CodeUnauthenticated
	// CodeTooLarge: the request body is over the size limit.
	CodeTooLarge
	// CodeInvalidInput: the input does not match the tool's input schema.
	CodeInvalidInput
	// CodeRequestTimeout: the request body did not arrive in time (see
	// [HandlerOptions.BodyReadTimeout]).
	CodeRequestTimeout
	// CodeForbidden: the caller proved who it is, but the tool's [Policy]
	// does not let it make this call. [Error.Reason] says which check
	// refused it.
	CodeForbidden
	// CodeUnavailable: the server cannot decide about the request just
	// now, such as an authenticator whose authorization server is slow or
	// whose budget of questions to it is spent: 503, with a Retry-After
	// header when [Error.RetryAfter] is set. Try again later.
	CodeUnavailable
	// CodeRateLimited: the caller has made more calls than its rate limit
	// allows (see package github.com/otcgo/otc/ratelimit): 429, with a
	// Retry-After header when [Error.RetryAfter] is set. Try again after
	// it.
	CodeRateLimited
)

// HTTPStatus is the status an OTC server answers for the class, as in the
// protocol's table of errors (see docs/versions-and-errors.md). A code
// outside the list maps to 500.
func (c Code) HTTPStatus() int {
	switch c {
	case CodeServerError:
		return http.StatusBadRequest // 400
	case CodeUnauthenticated:
		return http.StatusUnauthorized // 401
	case CodeTooLarge:
		return http.StatusRequestEntityTooLarge // 413
	case CodeInvalidInput:
		return http.StatusUnprocessableEntity // 422
	case CodeRequestTimeout:
		return http.StatusRequestTimeout // 408
	case CodeForbidden:
		return http.StatusForbidden // 403
	case CodeUnavailable:
		return http.StatusServiceUnavailable // 503
	case CodeRateLimited:
		return http.StatusTooManyRequests // 429
	}
	return http.StatusInternalServerError
}

// String returns the class's name in snake case.
func (c Code) String() string {
	switch c {
	case CodeServerError:
		return "server_error"
	case CodeUnauthenticated:
		return "unauthenticated"
	case CodeTooLarge:
		return "too_large"
	case CodeInvalidInput:
		return "invalid_input"
	case CodeRequestTimeout:
		return "request_timeout"
	case CodeForbidden:
		return "forbidden"
	case CodeUnavailable:
		return "unavailable"
	case CodeRateLimited:
		return "rate_limited"
	}
	return "unknown"
}

// ErrToolNotFound is wrapped by the [*Error] returned for a call to a tool,
// or a version of it, that is not registered. Match it with errors.Is.
var ErrToolNotFound = errors.New("otc: tool not found")

// Error is a failure reported before a tool function runs, or instead of
// running it. Match it with errors.As. Its fields are what the error
// response body carries.
type Error struct {
	// Code is the error class; it selects the HTTP status.
	Code Code
	// Message is safe to show to a user or a model.
	Message string
	// DeveloperMessage is for logs and developers, never for the model.
	DeveloperMessage string
	// ParameterErrors maps each invalid input parameter, by name or by a
	// dotted path for nested values ("address.zip", "items.2"), to a short
	// message. Set with CodeInvalidInput.
	ParameterErrors map[string]string
	// MissingRequirements says what the call context lacked. Set when a
	// tool's requirements were not met.
	MissingRequirements *MissingRequirements
	// Reason is the machine-readable cause of a refusal by a tool's
	// [Policy] (CodeForbidden) or of a refused capability token
	// (CodeUnauthenticated): one of the Reason constants, such as
	// ReasonAudienceMismatch. Empty for other errors.
	Reason string
	// RequiredScopes lists the OAuth scopes the call needs, with
	// ReasonInsufficientScope: those of the tool's [Policy] that the
	// caller's token lacks, so that a client can ask for them (step-up
	// authorization). With ReasonMissingToken, for a tool whose policy
	// sets RequiredScopes, it lists them all. The OTC body carries it as
	// "required_scopes", REST as details.required_scopes and MCP as
	// data.required_scopes.
	RequiredScopes []string
	// RetryAfter, with CodeUnavailable or CodeRateLimited, is how long to
	// wait before trying again; the handlers send it in a Retry-After
	// header (whole seconds, rounded up).
	RetryAfter time.Duration

	// cause is what errors.Is and errors.As see through Unwrap.
	cause error
	// outcome is the class OutcomeOf reports, when the code and cause do
	// not tell it.
	outcome Outcome
}

// Error returns the message, followed by the developer message and the
// parameter errors when there are some, so that the text is useful on its
// own in a log line.
func (e *Error) Error() string {
	var b strings.Builder
	b.WriteString("otc: ")
	b.WriteString(e.Message)
	if e.DeveloperMessage != "" {
		b.WriteString(": ")
		b.WriteString(e.DeveloperMessage)
	}
	for i, k := range sortedKeys(e.ParameterErrors) {
		if i == 0 {
			b.WriteString(" (")
		} else {
			b.WriteString("; ")
		}
		b.WriteString(k + ": " + e.ParameterErrors[k])
		if i == len(e.ParameterErrors)-1 {
			b.WriteString(")")
		}
	}
	return b.String()
}

// Unwrap returns the underlying cause, such as [ErrToolNotFound].
func (e *Error) Unwrap() error { return e.cause }

// ToolError is a failure inside a tool function. A function returns one to
// tell the caller, and the model behind it, what went wrong and whether a
// retry can help; any other error it returns becomes a ToolError whose
// Message is the error's text. The call still succeeds at the protocol
// level: the response is 200 with success false.
type ToolError struct {
	// Message is shown to the user or the model. Required: an empty one is
	// replaced by a generic message naming the tool.
	Message string
	// DeveloperMessage is for logs and developers, never for the model.
	DeveloperMessage string
	// CanRetry tells the client that calling again may succeed.
	CanRetry bool
	// RetryAfter is how long the client should wait before retrying. It
	// travels as whole milliseconds, rounded up.
	RetryAfter time.Duration
	// AdditionalPromptContent is extra context for the model's next try,
	// such as the valid values close to what it sent.
	AdditionalPromptContent string
	// Err is an optional cause, seen by errors.Is and errors.As. It is
	// never sent to the client.
	Err error
}

// Error returns the message, followed by the developer message when there
// is one.
func (e *ToolError) Error() string {
	if e.DeveloperMessage == "" {
		return e.Message
	}
	return e.Message + ": " + e.DeveloperMessage
}

// Unwrap returns Err.
func (e *ToolError) Unwrap() error { return e.Err }

// toolErrorJSON is the wire shape of a ToolError (the protocol's Tool Execution Errors).
type toolErrorJSON struct {
	Message                 string `json:"message"`
	DeveloperMessage        string `json:"developer_message,omitempty"`
	CanRetry                bool   `json:"can_retry,omitempty"`
	AdditionalPromptContent string `json:"additional_prompt_content,omitempty"`
	RetryAfterMS            *int64 `json:"retry_after_ms,omitempty"`
}

// MarshalJSON encodes the error object of a failed call result. Its
// receiver is a value so that a ToolError held by value, not only through
// a pointer, encodes to the wire shape rather than to its Go fields.
func (e ToolError) MarshalJSON() ([]byte, error) {
	w := toolErrorJSON{
		Message:                 e.Message,
		DeveloperMessage:        e.DeveloperMessage,
		CanRetry:                e.CanRetry,
		AdditionalPromptContent: e.AdditionalPromptContent,
	}
	if e.RetryAfter > 0 {
		ms := e.retryAfterMS()
		w.RetryAfterMS = &ms
	}
	return json.Marshal(w)
}

// retryAfterMS is RetryAfter in whole milliseconds, rounded up so that a
// client never retries early.
func (e *ToolError) retryAfterMS() int64 {
	// Divide, then round: adding a millisecond first overflows near the
	// largest Duration and sends a negative wait.
	ms := int64(e.RetryAfter / time.Millisecond)
	if e.RetryAfter%time.Millisecond > 0 {
		ms++
	}
	return ms
}

// UnmarshalJSON decodes the error object of a failed call result. It reads
// leniently what other servers send: a fractional retry_after_ms is
// accepted, a negative one reads as zero and a huge one is capped rather
// than overflowing.
func (e *ToolError) UnmarshalJSON(data []byte) error {
	var w struct {
		toolErrorJSON
		RetryAfterMS *float64 `json:"retry_after_ms"`
	}
	if err := json.Unmarshal(data, &w); err != nil {
		return err
	}
	*e = ToolError{
		Message:                 w.Message,
		DeveloperMessage:        w.DeveloperMessage,
		CanRetry:                w.CanRetry,
		AdditionalPromptContent: w.AdditionalPromptContent,
	}
	if w.RetryAfterMS != nil && *w.RetryAfterMS > 0 {
		ms := min(*w.RetryAfterMS, float64(math.MaxInt64/int64(time.Millisecond)))
		e.RetryAfter = time.Duration(ms * float64(time.Millisecond))
	}
	return nil
}

// errorBody is the JSON body of an error response (the protocol's Error Behavior).
type errorBody struct {
	Schema              string               `json:"$schema"`
	Message             string               `json:"message"`
	DeveloperMessage    string               `json:"developer_message,omitempty"`
	ParameterErrors     map[string]string    `json:"parameter_errors,omitempty"`
	MissingRequirements *MissingRequirements `json:"missing_requirements,omitempty"`
	Reason              string               `json:"reason,omitempty"`
	RequiredScopes      []string             `json:"required_scopes,omitempty"`
}

// serverError returns a CodeServerError with the given messages.
func serverError(message, developerMessage string) *Error {
	return &Error{Code: CodeServerError, Message: message, DeveloperMessage: developerMessage}
}

// badRequest builds a CodeServerError for a malformed call, classed
// OutcomeBadRequest.
func badRequest(message, developerMessage string) *Error {
	return &Error{Code: CodeServerError, Message: message, DeveloperMessage: developerMessage, outcome: OutcomeBadRequest}
}

// invalidInputMessage is the message of every validation error.
const invalidInputMessage = "Some input parameters are invalid"
