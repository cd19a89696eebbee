package client

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"

	"github.com/otcgo/otc"
	"github.com/otcgo/otc/internal/modeltext"
)

// ModelText returns what a model should read of a call's outcome, for an
// agent that hands tool results to a model itself (an agent framework's
// tool, say), in the words an MCP server gives the same outcome:
//
//   - a value: a string as its text (unquoted), anything else as its JSON;
//     "" for a tool that returns nothing;
//   - a tool error ([*otc.ToolError]): its message, the hint for the model
//     (AdditionalPromptContent) and whether and when to try again;
//   - invalid input: each parameter with what is wrong with it, and to
//     correct them and call again;
//   - a rate limit or a busy server: its message, and when to try again;
//   - another refusal of the call ([*otc.Error]): its message.
//
// res and err are what [Client.Call] returned (res may be nil). ok is
// false for any other failure (the server could not be reached, or its
// answer was not the protocol's), which is the agent's to handle, not the
// model's; text is then empty.
func ModelText(res *Result, err error) (text string, ok bool) {
	if err == nil {
		if res == nil || len(res.Value) == 0 || string(res.Value) == "null" {
			return "", true
		}
		return modeltext.Value(res.Value), true
	}
	if te, is := errors.AsType[*otc.ToolError](err); is {
		return modeltext.ToolError(te.Message, te.AdditionalPromptContent, te.CanRetry, te.RetryAfter), true
	}
	if e, is := errors.AsType[*otc.Error](err); is {
		switch {
		case e.Code == otc.CodeInvalidInput && len(e.ParameterErrors) > 0:
			return modeltext.InvalidArguments(e.ParameterErrors), true
		case retryable(e.Code):
			return modeltext.ToolError(e.Message, "", true, e.RetryAfter), true
		}
		return e.Message, true
	}
	return "", false
}

// CallText calls the tool toolID with the arguments a model wrote (a JSON
// object; empty or null means {}) and returns what the model should read
// of the outcome, in [ModelText]'s words: for an agent framework's tool,
// which hands the model text. Arguments that are not a JSON object are
// answered in words too, without a call, so that the model writes them
// again. It returns an error only for a failure the model cannot act on
// (ModelText's ok false): the error of [Client.Call].
func (c *Client) CallText(ctx context.Context, toolID string, args json.RawMessage) (string, error) {
	args = bytes.TrimSpace(args)
	switch {
	case len(args) == 0 || string(args) == "null":
		args = json.RawMessage(`{}`)
	case args[0] != '{' || !json.Valid(args):
		return modeltext.NotAnObject, nil
	}
	res, err := c.Call(ctx, toolID, args, nil)
	text, ok := ModelText(res, err)
	if !ok {
		return "", err
	}
	return text, nil
}
