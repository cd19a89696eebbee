package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/otcgo/otc"
)

// The tools the tasks extension's scenarios (tasks-*) call by name: greet,
// which never runs as a task; slow_compute, confirm_delete, multi_input
// and protocol_error_job, which run as tasks for a client that declares
// the extension; failing_job, which runs only as one; and
// test_tool_with_task, which runs only as one too, but asks its question
// in input_required rounds of tools/call before it becomes a task
// (tasks-mrtr-composition).

type greetInput struct {
	Name string `json:"name" jsonschema:"description=Who to greet."`
}

type slowInput struct {
	Seconds float64 `json:"seconds,omitempty" jsonschema:"description=How long to work in seconds (0 to 300).,minimum=0,maximum=300"`
	Label   string  `json:"label,omitempty" jsonschema:"description=A label echoed in the result."`
}

type deleteInput struct {
	Filename string `json:"filename" jsonschema:"description=The file to delete."`
}

// elicitation is the answer to an elicitation/create request.
type elicitation struct {
	Action  string         `json:"action"`
	Content map[string]any `json:"content"`
}

// askForm asks the user one form per message, each for the properties
// of its schema, and returns the answers in order.
func askForm(ctx context.Context, forms ...[2]string) ([]elicitation, error) {
	reqs := make([]otc.InputRequest, len(forms))
	for i, f := range forms {
		params, err := json.Marshal(map[string]any{"mode": "form", "message": f[0], "requestedSchema": json.RawMessage(f[1])})
		if err != nil {
			return nil, err
		}
		reqs[i] = otc.InputRequest{Method: otc.MethodElicit, Params: params}
	}
	raw, err := otc.Ask(ctx, reqs...)
	if err != nil {
		return nil, err
	}
	out := make([]elicitation, len(raw))
	for i, r := range raw {
		if err := json.Unmarshal(r, &out[i]); err != nil {
			return nil, fmt.Errorf("the answer to question %d is not an elicitation result: %w", i+1, err)
		}
	}
	return out, nil
}

const confirmSchema = `{"type":"object","properties":{"confirm":{"type":"boolean","description":"Go ahead?"}},"required":["confirm"]}`
const nameSchema = `{"type":"object","properties":{"name":{"type":"string","description":"Your name."}},"required":["name"]}`

// registerTaskTools registers the tools of the tasks scenarios.
func registerTaskTools(reg *otc.Registry) error {
	tool := func(name, description string, tasks otc.TaskSupport) otc.Tool {
		return otc.Tool{ID: "Conformance." + name, Version: "1.0.0", Name: name, Description: description,
			Tasks: tasks, Timeout: 5 * time.Minute}
	}
	withTask := tool("test_tool_with_task", "Asks your name, then greets you from a task a second later.", otc.TasksRequired)
	withTask.AskBeforeTask = 200 * time.Millisecond
	return errors.Join(
		otc.Register(reg, withTask,
			func(ctx context.Context, _ none) (otc.Content, error) {
				var who struct {
					Name string `json:"name" jsonschema:"description=Your name."`
				}
				action, err := otc.Elicit(ctx, "What is your user_name?", &who)
				if err != nil {
					return nil, err
				}
				if action != otc.ElicitAccept {
					return otc.Content{otc.TextContent("No name given (" + string(action) + ").")}, nil
				}
				if err := sleep(ctx, time.Second); err != nil {
					return nil, err
				}
				return otc.Content{otc.TextContent("Hello, " + who.Name + ", from a task.")}, nil
			}),
		otc.Register(reg, tool("greet", "Greets someone, at once.", otc.TasksForbidden),
			func(_ context.Context, in greetInput) (otc.Content, error) {
				return otc.Content{otc.TextContent("Hello, " + in.Name + "!")}, nil
			}),
		otc.Register(reg, tool("slow_compute", "Works for the given number of seconds, then answers; runs as a task for a client that can take one.", otc.TasksOptional),
			func(ctx context.Context, in slowInput) (otc.Content, error) {
				if err := sleep(ctx, time.Duration(in.Seconds*float64(time.Second))); err != nil {
					return nil, err
				}
				return otc.Content{otc.TextContent(fmt.Sprintf("Computed %q after %gs.", in.Label, in.Seconds))}, nil
			}),
		otc.Register(reg, tool("failing_job", "Fails after a second with a tool error; runs only as a task.", otc.TasksRequired),
			func(ctx context.Context, _ none) (otc.Content, error) {
				if err := sleep(ctx, time.Second); err != nil {
					return nil, err
				}
				return nil, errors.New("the job failed, as this tool always does")
			}),
		otc.Register(reg, tool("protocol_error_job", "Panics, which fails its task with a protocol error.", otc.TasksOptional),
			func(context.Context, none) (otc.Content, error) {
				panic("protocol_error_job fails this way on purpose")
			}),
		otc.Register(reg, tool("confirm_delete", "Asks the user to confirm, then deletes the file (pretends to).", otc.TasksOptional),
			func(ctx context.Context, in deleteInput) (otc.Content, error) {
				answers, err := askForm(ctx, [2]string{"Delete " + in.Filename + "?", confirmSchema})
				if err != nil {
					return nil, err
				}
				if a := answers[0]; a.Action != "accept" || a.Content["confirm"] != true {
					return otc.Content{otc.TextContent("Kept " + in.Filename + ".")}, nil
				}
				return otc.Content{otc.TextContent("Deleted " + in.Filename + ".")}, nil
			}),
		otc.Register(reg, tool("multi_input", "Asks two questions at once, then answers with both.", otc.TasksOptional),
			func(ctx context.Context, _ none) (otc.Content, error) {
				answers, err := askForm(ctx, [2]string{"What is your name?", nameSchema}, [2]string{"Go ahead?", confirmSchema})
				if err != nil {
					return nil, err
				}
				return otc.Content{otc.TextContent(fmt.Sprintf("Answers: %s (%v), %s (%v).",
					answers[0].Action, answers[0].Content["name"], answers[1].Action, answers[1].Content["confirm"]))}, nil
			}),
	)
}
