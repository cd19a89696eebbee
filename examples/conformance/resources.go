package main

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"

	"github.com/otcgo/otc"
	"github.com/otcgo/otc/prompt"
	"github.com/otcgo/otc/resource"
)

// registerResources registers the resources, the template and the
// prompts of the suite's resources-*, prompts-* and completion-complete
// scenarios.
func registerResources(reg *otc.Registry, pngData []byte) error {
	var errs []error
	add := func(_ any, err error) { errs = append(errs, err) }

	add(resource.Register(reg, resource.Resource{
		URI: "test://static-text", Name: "static-text", Description: "A static text resource.", MIMEType: "text/plain",
	}, func(context.Context) (string, error) {
		return "This is the content of the static text resource.", nil
	}))
	add(resource.Register(reg, resource.Resource{
		URI: "test://static-binary", Name: "static-binary", Description: "A small PNG image.", MIMEType: "image/png",
	}, func(context.Context) ([]byte, error) { return pngData, nil }))
	add(resource.Register(reg, resource.Resource{
		URI: "test://watched-resource", Name: "watched-resource", Description: "A resource a client may subscribe to.", MIMEType: "text/plain",
	}, func(context.Context) (string, error) { return "Watched resource content.", nil }))

	type templateData struct {
		ID string `json:"id" jsonschema:"required,description=The id the URI names."`
	}
	add(resource.RegisterTemplate(reg, resource.Template[templateData]{
		URITemplate: "test://template/{id}/data", Name: "template-data",
		Description: "Data for the id the URI names.", MIMEType: "application/json",
	}, func(_ context.Context, in templateData) (map[string]any, error) {
		return map[string]any{"id": in.ID, "templateTest": true, "data": "Data for ID: " + in.ID}, nil
	}))

	add(prompt.Register(reg, prompt.Prompt[struct{}]{
		Name: "test_simple_prompt", Description: "A simple prompt without arguments.",
	}, func(context.Context, struct{}) (string, error) {
		return "This is a simple prompt for testing.", nil
	}))
	type twoArgs struct {
		Arg1 string `json:"arg1" jsonschema:"required,description=First test argument."`
		Arg2 string `json:"arg2" jsonschema:"required,description=Second test argument."`
	}
	words := []string{"paris", "park", "party", "test", "testing", "tested"}
	add(prompt.Register(reg, prompt.Prompt[twoArgs]{
		Name: "test_prompt_with_arguments", Description: "A prompt with two required arguments.",
		Complete: func(_ context.Context, _, prefix string, _ twoArgs) ([]string, error) {
			return slices.DeleteFunc(slices.Clone(words), func(w string) bool { return !strings.HasPrefix(w, prefix) }), nil
		},
	}, func(_ context.Context, in twoArgs) (string, error) {
		return fmt.Sprintf("Prompt with arguments: arg1='%s', arg2='%s'", in.Arg1, in.Arg2), nil
	}))
	type resourceArg struct {
		ResourceURI string `json:"resourceUri" jsonschema:"required,description=The URI of the resource to embed."`
	}
	add(prompt.Register(reg, prompt.Prompt[resourceArg]{
		Name: "test_prompt_with_embedded_resource", Description: "A prompt that embeds a resource.",
	}, func(_ context.Context, in resourceArg) ([]prompt.Message, error) {
		return []prompt.Message{
			{Role: prompt.User, Content: otc.ResourceContent(in.ResourceURI, "text/plain", "Embedded resource content for testing.")},
			{Role: prompt.User, Content: otc.TextContent("Please process the embedded resource above.")},
		}, nil
	}))
	add(prompt.Register(reg, prompt.Prompt[struct{}]{
		Name: "test_prompt_with_image", Description: "A prompt with an image.",
	}, func(context.Context, struct{}) ([]prompt.Message, error) {
		return []prompt.Message{
			{Role: prompt.User, Content: otc.ImageContent(pngData, "image/png")},
			{Role: prompt.User, Content: otc.TextContent("Please analyze the image above.")},
		}, nil
	}))
	errs = append(errs, registerChangeTriggers(reg))
	return errors.Join(errs...)
}

// registerChangeTriggers registers the two tools the server-stateless
// scenario calls to change the lists while a subscriptions/listen stream
// is open: each adds an entry to its list, or takes it out again.
func registerChangeTriggers(reg *otc.Registry) error {
	var mu sync.Mutex
	var extraPrompt *prompt.Handle
	toolThere := false
	err1 := otc.Register(reg, otc.Tool{ID: "Conformance.test_trigger_tool_change", Version: "1.0.0", Name: "test_trigger_tool_change",
		Description: "Adds a tool to the list, or takes it out again."}, func(context.Context, struct{}) (string, error) {
		mu.Lock()
		defer mu.Unlock()
		if toolThere {
			reg.Remove("Conformance.test_extra_tool")
			toolThere = false
			return "removed test_extra_tool", nil
		}
		err := otc.Register(reg, otc.Tool{ID: "Conformance.test_extra_tool", Version: "1.0.0", Name: "test_extra_tool", Description: "A tool that comes and goes."},
			func(context.Context, struct{}) (string, error) { return "here", nil })
		toolThere = err == nil
		return "added test_extra_tool", err
	})
	err2 := otc.Register(reg, otc.Tool{ID: "Conformance.test_trigger_prompt_change", Version: "1.0.0", Name: "test_trigger_prompt_change",
		Description: "Adds a prompt to the list, or takes it out again."}, func(context.Context, struct{}) (string, error) {
		mu.Lock()
		defer mu.Unlock()
		if extraPrompt != nil {
			extraPrompt.Remove()
			extraPrompt = nil
			return "removed test_extra_prompt", nil
		}
		h, err := prompt.Register(reg, prompt.Prompt[struct{}]{Name: "test_extra_prompt", Description: "A prompt that comes and goes."},
			func(context.Context, struct{}) (string, error) { return "here", nil })
		extraPrompt = h
		return "added test_extra_prompt", err
	})
	return errors.Join(err1, err2)
}
