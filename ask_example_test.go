package otc_test

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/otcgo/otc"
)

// answerAll is an Asker that accepts every elicitation with the same
// content, as a user would who confirms everything.
type answerAll struct{ content string }

func (a answerAll) Ask(_ context.Context, reqs []otc.InputRequest) ([]json.RawMessage, error) {
	out := make([]json.RawMessage, len(reqs))
	for i, r := range reqs {
		var p struct {
			Message string `json:"message"`
		}
		_ = json.Unmarshal(r.Params, &p)
		fmt.Printf("asked %s: %s\n", r.Method, p.Message)
		out[i] = json.RawMessage(`{"action":"accept","content":` + a.content + `}`)
	}
	return out, nil
}

// A tool asks its user to confirm before it acts. The wire formats put
// the question to the caller; here a direct call brings an Asker of its
// own.
func ExampleElicit() {
	reg := otc.NewRegistry(nil)
	type Confirm struct {
		OK bool `json:"ok" jsonschema:"required,title=Delete?"`
	}
	err := otc.Register(reg, otc.Tool{ID: "Files.Delete", Version: "1.0.0", Description: "Deletes a file."},
		func(ctx context.Context, in struct {
			Path string `json:"path" jsonschema:"description=The file to delete."`
		}) (string, error) {
			var answer Confirm
			action, err := otc.Elicit(ctx, "Delete "+in.Path+"?", &answer)
			if err != nil {
				return "", err
			}
			if action != otc.ElicitAccept || !answer.OK {
				return "kept " + in.Path, nil
			}
			return "deleted " + in.Path, nil
		})
	if err != nil {
		panic(err)
	}
	res, err := reg.Call(context.Background(), &otc.CallRequest{
		ToolID: "Files.Delete",
		Input:  json.RawMessage(`{"path":"notes.txt"}`),
		Asker:  answerAll{content: `{"ok":true}`},
	})
	if err != nil {
		panic(err)
	}
	fmt.Println(string(res.Value))
	// Output:
	// asked elicitation/create: Delete notes.txt?
	// "deleted notes.txt"
}
