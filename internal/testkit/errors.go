package testkit

import (
	"errors"
	"fmt"
	"time"

	"github.com/otcgo/otc"
)

// HiddenCause is the text of a ToolError's Err, which must never reach
// the wire.
const HiddenCause = "hidden-cause-detail"

// Raise returns the error Errors.Raise fails with in the given mode.
func Raise(mode string) error {
	switch mode {
	case "tool_error":
		return &otc.ToolError{
			Message:                 "Doorbell ID not found",
			DeveloperMessage:        "The doorbell with ID 'doorbell1' does not exist.",
			CanRetry:                true,
			AdditionalPromptContent: "ids: doorbell42,doorbell84",
			RetryAfter:              500 * time.Millisecond,
			Err:                     errors.New(HiddenCause),
		}
	case "retry_sub_ms":
		return &otc.ToolError{Message: "Busy", CanRetry: true, RetryAfter: 1500 * time.Microsecond}
	case "retry_1ns":
		return &otc.ToolError{Message: "Busy", CanRetry: true, RetryAfter: time.Nanosecond}
	case "retry_exact_ms":
		return &otc.ToolError{Message: "Busy", CanRetry: true, RetryAfter: 2 * time.Millisecond}
	case "no_retry":
		return &otc.ToolError{Message: "Quota exhausted"}
	case "plain":
		return errors.New("the upstream service refused the request")
	case "wrapped":
		return fmt.Errorf("loading profile: %w", &otc.ToolError{
			Message:          "Profile is locked",
			DeveloperMessage: "row lock held by another session",
			CanRetry:         true,
			RetryAfter:       time.Second,
		})
	case "empty_tool_error":
		return &otc.ToolError{}
	case "empty_plain":
		return errors.New("")
	}
	return fmt.Errorf("unknown mode %q", mode)
}
