package main

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/otcgo/otc"
	"github.com/otcgo/otc/prompt"
)

// This file holds the tools of the input-required-result-* scenarios of
// protocol version 2026-07-28 (SEP-2322): tools that ask their caller
// with otc.Elicit, otc.Sample, otc.ListRoots and otc.AskAll, and that the
// suite answers over several tools/call rounds.

// nameForm is the answer of "What is your name?".
type nameForm struct {
	Name string `json:"name" jsonschema:"required"`
}

// okForm is the answer of "Please confirm".
type okForm struct {
	OK bool `json:"ok" jsonschema:"required"`
}

// colorForm is the answer of the second step of the multi-round tool.
type colorForm struct {
	Color string `json:"color" jsonschema:"required"`
}

// registerAskingTools registers the tools that ask.
func registerAskingTools(reg *otc.Registry) error {
	tools := []fixture{
		{"test_input_required_result_elicitation", "Asks the user's name, then greets them.", func(ctx context.Context, _ none) (otc.Content, error) {
			var ans nameForm
			q := &otc.Elicitation{Key: "user_name", Message: "What is your name?", Answer: &ans}
			if err := otc.AskAll(ctx, q); err != nil {
				return nil, err
			}
			if q.Action != otc.ElicitAccept {
				return otc.Content{otc.TextContent("No name given (" + string(q.Action) + ").")}, nil
			}
			return otc.Content{otc.TextContent("Hello, " + ans.Name + "!")}, nil
		}},
		{"test_input_required_result_sampling", "Asks the client's model for the capital of France.", func(ctx context.Context, _ none) (otc.Content, error) {
			res, err := otc.Sample(ctx, capitalQuestion())
			if err != nil {
				return nil, err
			}
			return otc.Content{otc.TextContent("The model said: " + res.Content.Text)}, nil
		}},
		{"test_input_required_result_list_roots", "Asks the client for its roots and lists them.", func(ctx context.Context, _ none) (otc.Content, error) {
			q := &otc.RootsQuery{Key: "client_roots"}
			if err := otc.AskAll(ctx, q); err != nil {
				return nil, err
			}
			return otc.Content{otc.TextContent("Roots: " + rootList(q.Roots))}, nil
		}},
		{"test_input_required_result_request_state", "Asks for a confirmation, carried across rounds in requestState.", func(ctx context.Context, _ none) (otc.Content, error) {
			return confirm(ctx)
		}},
		{"test_input_required_result_tampered_state", "Asks for a confirmation; a tampered requestState is refused.", func(ctx context.Context, _ none) (otc.Content, error) {
			return confirm(ctx)
		}},
		{"test_input_required_result_multiple_inputs", "Asks for a name, a greeting from the model and the roots, in one round.", func(ctx context.Context, _ none) (otc.Content, error) {
			var ans nameForm
			name := &otc.Elicitation{Key: "user_name", Message: "What is your name?", Answer: &ans}
			greeting := &otc.Sampling{Request: otc.SampleRequest{Key: "greeting", MaxTokens: 50, Messages: []otc.SamplingMessage{
				{Role: "user", Content: otc.SamplingContent{Type: "text", Text: "Generate a greeting"}},
			}}}
			roots := &otc.RootsQuery{Key: "client_roots"}
			if err := otc.AskAll(ctx, name, greeting, roots); err != nil {
				return nil, err
			}
			return otc.Content{otc.TextContent(fmt.Sprintf("name=%s greeting=%s roots=%s", ans.Name, greeting.Result.Content.Text, rootList(roots.Roots)))}, nil
		}},
		{"test_input_required_result_multi_round", "Asks two questions, one round after the other.", func(ctx context.Context, _ none) (otc.Content, error) {
			var name nameForm
			if err := otc.AskAll(ctx, &otc.Elicitation{Key: "step1", Message: "Step 1: What is your name?", Answer: &name}); err != nil {
				return nil, err
			}
			var color colorForm
			if err := otc.AskAll(ctx, &otc.Elicitation{Key: "step2", Message: "Step 2: What is your favorite color?", Answer: &color}); err != nil {
				return nil, err
			}
			return otc.Content{otc.TextContent(name.Name + " likes " + color.Color)}, nil
		}},
		{"test_input_required_result_capabilities", "Asks only what the client declared it can answer: the user, else the model.", func(ctx context.Context, _ none) (otc.Content, error) {
			var ans nameForm
			_, err := otc.Elicit(ctx, "What is your name?", &ans)
			switch {
			case err == nil:
				return otc.Content{otc.TextContent("Hello, " + ans.Name + "!")}, nil
			case !errors.Is(err, otc.ErrInputUnsupported):
				return nil, err
			}
			res, err := otc.Sample(ctx, capitalQuestion())
			if err != nil {
				return nil, err
			}
			return otc.Content{otc.TextContent("The model said: " + res.Content.Text)}, nil
		}},
	}
	for _, f := range tools {
		if err := otc.Register(reg, otc.Tool{
			ID:          "Conformance." + f.name,
			Version:     "1.0.0",
			Name:        f.name,
			Description: f.description,
		}, f.fn); err != nil {
			return err
		}
	}
	return nil
}

// confirm asks "Please confirm" under the key "confirm".
func confirm(ctx context.Context) (otc.Content, error) {
	var ans okForm
	q := &otc.Elicitation{Key: "confirm", Message: "Please confirm", Answer: &ans}
	if err := otc.AskAll(ctx, q); err != nil {
		return nil, err
	}
	return otc.Content{otc.TextContent(fmt.Sprintf("state-ok: the requestState was verified; confirmed=%t (%s)", ans.OK, q.Action))}, nil
}

func capitalQuestion() otc.SampleRequest {
	return otc.SampleRequest{Key: "capital_question", MaxTokens: 100, Messages: []otc.SamplingMessage{
		{Role: "user", Content: otc.SamplingContent{Type: "text", Text: "What is the capital of France?"}},
	}}
}

func rootList(roots []otc.Root) string {
	uris := make([]string, len(roots))
	for i, r := range roots {
		uris[i] = r.URI
	}
	return strings.Join(uris, ", ")
}

// registerAskingPrompt registers the prompt of the
// input-required-result-non-tool-request scenario: prompts/get answers
// input_required too.
func registerAskingPrompt(reg *otc.Registry) error {
	type contextForm struct {
		Context string `json:"context" jsonschema:"required"`
	}
	_, err := prompt.Register(reg, prompt.Prompt[struct{}]{
		Name:        "test_input_required_result_prompt",
		Description: "A prompt that asks the user what context to use.",
	}, func(ctx context.Context, _ struct{}) (string, error) {
		var ans contextForm
		q := &otc.Elicitation{Key: "user_context", Message: "What context should the prompt use?", Answer: &ans}
		if err := otc.AskAll(ctx, q); err != nil {
			return "", err
		}
		return "Answer with this context in mind: " + ans.Context, nil
	})
	return err
}
