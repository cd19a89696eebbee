package main

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/otcgo/otc"
)

// The tools that ask their client something in the middle of the call
// (elicitation and sampling), for the scenarios tools-call-elicitation,
// tools-call-sampling, elicitation-sep1034-defaults and
// elicitation-sep1330-enums. They ask through otc.Ask with the params MCP
// defines, so that each scenario sees exactly the request it checks.

// registerAskTools registers the tools that ask.
func registerAskTools(reg *otc.Registry) error {
	err := otc.Register(reg, otc.Tool{
		ID:          "Conformance.test_sampling",
		Version:     "1.0.0",
		Name:        "test_sampling",
		Description: "Asks the client's model to complete the prompt (sampling), and returns its answer.",
	}, func(ctx context.Context, in struct {
		Prompt string `json:"prompt" jsonschema:"required,description=The prompt to send to the model."`
	}) (otc.Content, error) {
		params, err := json.Marshal(map[string]any{
			"messages":  []any{map[string]any{"role": "user", "content": map[string]any{"type": "text", "text": in.Prompt}}},
			"maxTokens": 100,
		})
		if err != nil {
			return nil, err
		}
		var answer struct {
			Content struct {
				Type string `json:"type"`
				Text string `json:"text"`
			} `json:"content"`
		}
		if err := ask(ctx, otc.MethodSample, params, &answer); err != nil {
			return nil, err
		}
		return otc.Content{otc.TextContent("LLM response: " + answer.Content.Text)}, nil
	})
	if err != nil {
		return err
	}

	err = otc.Register(reg, otc.Tool{
		ID:          "Conformance.test_elicitation",
		Version:     "1.0.0",
		Name:        "test_elicitation",
		Description: "Asks the user for a user name and an email address (elicitation), and returns the answer.",
	}, func(ctx context.Context, in struct {
		Message string `json:"message" jsonschema:"required,description=The message to show the user."`
	}) (otc.Content, error) {
		return elicit(ctx, "User response: ", in.Message, `{"type":"object","properties":{`+
			`"username":{"type":"string","description":"User's response"},`+
			`"email":{"type":"string","description":"User's email address"}},`+
			`"required":["username","email"]}`)
	})
	if err != nil {
		return err
	}

	asks := []struct{ name, description, message, schema string }{
		{"test_elicitation_sep1034_defaults", "Asks the user for fields of every primitive type, each with a default value (SEP-1034).",
			"Please review and update the form fields with defaults", `{"type":"object","properties":{` +
				`"name":{"type":"string","description":"User name","default":"John Doe"},` +
				`"age":{"type":"integer","description":"User age","default":30},` +
				`"score":{"type":"number","description":"User score","default":95.5},` +
				`"status":{"type":"string","description":"User status","enum":["active","inactive","pending"],"default":"active"},` +
				`"verified":{"type":"boolean","description":"Verification status","default":true}}}`},
		{"test_elicitation_sep1330_enums", "Asks the user to choose, with each of the five kinds of enum schema (SEP-1330).",
			"Please select options from the enum fields", `{"type":"object","properties":{` +
				`"untitledSingle":{"type":"string","description":"Choose an option","enum":["option1","option2","option3"]},` +
				`"titledSingle":{"type":"string","description":"Choose a titled option","oneOf":[` +
				`{"const":"value1","title":"First Option"},{"const":"value2","title":"Second Option"},{"const":"value3","title":"Third Option"}]},` +
				`"legacyEnum":{"type":"string","description":"Choose a legacy option","enum":["opt1","opt2","opt3"],"enumNames":["Option One","Option Two","Option Three"]},` +
				`"untitledMulti":{"type":"array","description":"Choose multiple options","minItems":1,"maxItems":3,"items":{"type":"string","enum":["option1","option2","option3"]}},` +
				`"titledMulti":{"type":"array","description":"Choose multiple titled options","minItems":1,"maxItems":3,"items":{"anyOf":[` +
				`{"const":"value1","title":"First Choice"},{"const":"value2","title":"Second Choice"},{"const":"value3","title":"Third Choice"}]}}}}`},
	}
	for _, a := range asks {
		err := otc.Register(reg, otc.Tool{
			ID:          "Conformance." + a.name,
			Version:     "1.0.0",
			Name:        a.name,
			Description: a.description,
		}, func(ctx context.Context, _ none) (otc.Content, error) {
			return elicit(ctx, "Elicitation completed: ", a.message, a.schema)
		})
		if err != nil {
			return err
		}
	}
	return nil
}

// elicit asks the user message with a form of schema, and reports the
// answer as text after prefix: the action and the content.
func elicit(ctx context.Context, prefix, message, schema string) (otc.Content, error) {
	params, err := json.Marshal(map[string]any{"message": message, "requestedSchema": json.RawMessage(schema)})
	if err != nil {
		return nil, err
	}
	var answer struct {
		Action  string          `json:"action"`
		Content json.RawMessage `json:"content"`
	}
	if err := ask(ctx, otc.MethodElicit, params, &answer); err != nil {
		return nil, err
	}
	content := "{}"
	if len(answer.Content) > 0 {
		content = string(answer.Content)
	}
	return otc.Content{otc.TextContent(prefix + "action=" + answer.Action + ", content=" + content)}, nil
}

// ask puts one request to the client and decodes its answer into out.
func ask(ctx context.Context, method string, params json.RawMessage, out any) error {
	answers, err := otc.Ask(ctx, otc.InputRequest{Method: method, Params: params})
	if err != nil {
		return err
	}
	if err := json.Unmarshal(answers[0], out); err != nil {
		return fmt.Errorf("the client's answer to %s cannot be read: %w", method, err)
	}
	return nil
}
