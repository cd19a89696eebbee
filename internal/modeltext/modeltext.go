// Package modeltext writes what a model reads of a call's outcome, in the
// same words wherever a model reads it: the text of an MCP tool result,
// and what package client hands an agent framework.
package modeltext

import (
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"
)

// Value is the text of a value, given as JSON: a string is its own text
// (unquoted), anything else its JSON.
func Value(v []byte) string {
	if len(v) > 0 && v[0] == '"' {
		var s string
		if err := json.Unmarshal(v, &s); err == nil {
			return s
		}
	}
	return string(v)
}

// RetrySentence begins the last paragraph of ToolError's text for an
// error that can be retried.
const RetrySentence = "This may succeed if tried again"

// ToolError is the text of a tool's error: its message, the hint for the
// model after a blank line, and whether and when to try again.
func ToolError(message, hint string, canRetry bool, retryAfter time.Duration) string {
	text := message
	if hint != "" {
		text += "\n\n" + hint
	}
	if canRetry {
		if retryAfter > 0 {
			text += fmt.Sprintf("\n\n"+RetrySentence+" after %s.", retryAfter.Round(time.Millisecond))
		} else {
			text += "\n\n" + RetrySentence + "."
		}
	}
	return text
}

// NotAnObject is what a model reads when the arguments it wrote are not
// a JSON object, which it can write again.
const NotAnObject = "The arguments must be a JSON object of the tool's parameters, as its schema says. Write them again as one and call the tool again."

// InvalidArguments is the text of a refusal of invalid arguments: each
// parameter with what is wrong with it, in the order of their paths, and
// what to do.
func InvalidArguments(params map[string]string) string {
	var sb strings.Builder
	sb.WriteString("The arguments are invalid:")
	for _, p := range slices.Sorted(maps.Keys(params)) {
		sb.WriteString("\n- ")
		sb.WriteString(p)
		sb.WriteString(": ")
		sb.WriteString(params[p])
	}
	sb.WriteString("\nCorrect these arguments and call the tool again.")
	return sb.String()
}

// MaxNameLength is the longest function name the model APIs take.
const MaxNameLength = 64

// IsFunctionName reports whether s can name a function for every model
// API (OpenAI's, Anthropic's, Gemini's): 1 to MaxNameLength letters,
// digits, underscores and hyphens.
func IsFunctionName(s string) bool {
	if s == "" || len(s) > MaxNameLength {
		return false
	}
	for _, c := range []byte(s) {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '-') {
			return false
		}
	}
	return true
}
