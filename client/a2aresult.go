package client

import (
	"encoding/json"
	"strings"

	"github.com/otcgo/otc"
	"github.com/otcgo/otc/internal/a2awire"
)

// fromMessage reads a message answering a call: an otc agent says in
// its metadata whether the call failed; another agent's message is its
// answer.
func (r *Result) fromMessage(parts []a2awire.Part, metadata json.RawMessage) (*Result, error) {
	// No metadata, or another agent's of another shape: no outcome.
	outcome := memberOf(metadata, a2awire.MetaOutcome)
	if string(outcome) == `"`+a2awire.OutcomeFailed+`"` {
		return r.fromFailure(parts)
	}
	if string(outcome) == `"`+a2awire.OutcomeSucceeded+`"` {
		for _, p := range parts {
			if len(p.Data) > 0 {
				r.Value = p.Data
				return r, nil
			}
		}
		return r, nil
	}
	return r.fromParts(parts)
}

// fromParts makes the value of an answer's parts: the first data part,
// else the text parts joined, as a JSON string.
func (r *Result) fromParts(parts []a2awire.Part) (*Result, error) {
	for _, p := range parts {
		if len(p.Data) > 0 && string(p.Data) != "null" {
			r.Value = p.Data
			return r, nil
		}
	}
	if t := textOf(parts); t != "" {
		r.Value, _ = json.Marshal(t)
	}
	return r, nil
}

// fromFailure reads a message that says how a call failed: the words in
// the text part (before the hint), in an otc agent's data part its class,
// whether and when to retry, and the hint.
func (r *Result) fromFailure(parts []a2awire.Part) (*Result, error) {
	var info struct {
		Code         string `json:"code"`
		CanRetry     bool   `json:"can_retry"`
		RetryAfterMS int64  `json:"retry_after_ms"`
		Hint         string `json:"additional_prompt_content"`
	}
	for _, p := range parts {
		if len(p.Data) > 0 {
			_ = json.Unmarshal(p.Data, &info)
		}
	}
	msg := firstParagraph(textOf(parts))
	if msg == "" {
		msg = "The call failed"
	}
	after := retryMS(info.RetryAfterMS)
	switch info.Code {
	case otc.CodeRateLimited.String():
		return nil, &otc.Error{Code: otc.CodeRateLimited, Message: msg, RetryAfter: after}
	case otc.CodeUnavailable.String():
		return nil, &otc.Error{Code: otc.CodeUnavailable, Message: msg, RetryAfter: after}
	case "", "tool_error":
	default:
		for code := otc.CodeServerError; code <= otc.CodeRateLimited; code++ {
			if code.String() == info.Code {
				return nil, &otc.Error{Code: code, Message: msg}
			}
		}
	}
	return r, &otc.ToolError{Message: msg, CanRetry: info.CanRetry, RetryAfter: after, AdditionalPromptContent: info.Hint}
}

// textOf joins the text parts.
func textOf(parts []a2awire.Part) string {
	var ts []string
	for _, p := range parts {
		if p.IsText {
			ts = append(ts, p.Text)
		}
	}
	return strings.Join(ts, "\n")
}
