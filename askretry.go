package otc

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
)

// This file is how a tool asks over OTC and the REST view, which have no
// round trip: the call ends with a tool error that names the questions,
// with the schema of each answer, and the caller calls again with the same
// input and every answer in the call context's input_responses
// ([CallContext.InputResponses]), where the function, run again, finds
// them.

// MaxInputRequests bounds the questions of one call that are waiting for
// their answers, so that a function asking in a loop cannot make a
// response without end.
const MaxInputRequests = 32

// retryAsker answers a call's questions from the input_responses of its
// call context, or ends the call asking for them.
type retryAsker struct{ req *CallRequest }

func (a retryAsker) Ask(ctx context.Context, reqs []InputRequest) ([]json.RawMessage, error) {
	info := callInfoFrom(ctx)
	answers := make([]json.RawMessage, len(reqs))
	var pending map[string]InputRequest
	for i, r := range reqs {
		key := r.Key
		if key == "" {
			key = "q" + strconv.Itoa(int(info.asked.Add(1)))
		}
		if ans, ok := a.req.Context.InputResponses[key]; ok && len(ans) > 0 && ans[0] == '{' {
			answers[i] = ans
			continue
		}
		if pending == nil {
			pending = map[string]InputRequest{}
		}
		r.Key = key
		pending[key] = r
	}
	if len(pending) > MaxInputRequests {
		return nil, fmt.Errorf("otc: ask: %d questions at once, more than the %d a call may ask", len(pending), MaxInputRequests)
	}
	if pending != nil {
		return nil, &InputRequiredError{Requests: pending}
	}
	return answers, nil
}

// inputRequiredToolError is the tool error of a call that ended with
// questions, over a wire format without a round trip: the message names
// them; the additional prompt content says how to answer, with each
// question's params and the shape of its answer, as JSON.
func inputRequiredToolError(tool string, e *InputRequiredError) *ToolError {
	keys := slices.Sorted(maps.Keys(e.Requests))
	var msg strings.Builder
	fmt.Fprintf(&msg, "Tool '%s' needs answers before it can go on:", tool)
	type question struct {
		Method string          `json:"method"`
		Params json.RawMessage `json:"params"`
		Answer string          `json:"answer"`
	}
	qs := make(map[string]question, len(keys))
	for _, k := range keys {
		r := e.Requests[k]
		fmt.Fprintf(&msg, "\n- %s: %s", k, describeInputRequest(r))
		qs[k] = question{Method: r.Method, Params: r.Params, Answer: answerShape(r.Method)}
	}
	spec, _ := json.Marshal(qs)
	prompt := "Ask for these answers (the user for an elicitation, your model for a sampling, the client for roots), " +
		"then call the tool again with the same input and every answer in the call context's input_responses, " +
		"by key: request.context.input_responses over OTC, context.input_responses in the REST view, for example " +
		`{"input_responses": {"` + keys[0] + `": ` + answerExample(e.Requests[keys[0]].Method) + `}}. ` +
		"The questions, by key: " + string(spec)
	return &ToolError{
		Message:                 msg.String(),
		DeveloperMessage:        e.Error(),
		CanRetry:                true,
		AdditionalPromptContent: prompt,
		Err:                     e,
	}
}

// describeInputRequest says in a line what a question asks.
func describeInputRequest(r InputRequest) string {
	switch r.Method {
	case MethodElicit:
		var p struct {
			Message string `json:"message"`
		}
		_ = json.Unmarshal(r.Params, &p)
		return p.Message
	case MethodSample:
		return "a completion from the model (sampling/createMessage)"
	case MethodListRoots:
		return "the client's roots (roots/list)"
	}
	return r.Method
}

// answerShape describes the answer of a method.
func answerShape(method string) string {
	switch method {
	case MethodElicit:
		return "an object with action accept, decline or cancel, and when accepted a content object matching params.requestedSchema"
	case MethodSample:
		return "an object with role assistant, content (type text and the text), model (the model's name) and optionally stopReason"
	case MethodListRoots:
		return "an object with roots, a list of objects with a file:// uri and optionally a name"
	}
	return "the result MCP defines for the method"
}

func answerExample(method string) string {
	switch method {
	case MethodSample:
		return `{"role": "assistant", "content": {"type": "text", "text": "..."}, "model": "..."}`
	case MethodListRoots:
		return `{"roots": [{"uri": "file:///..."}]}`
	}
	return `{"action": "accept", "content": {...}}`
}
