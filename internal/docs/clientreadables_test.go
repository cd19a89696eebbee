package docs_test

import (
	"context"
	"fmt"
	"net/http/httptest"

	"github.com/otcgo/otc"
	"github.com/otcgo/otc/client"
	"github.com/otcgo/otc/mcp"
	"github.com/otcgo/otc/prompt"
	"github.com/otcgo/otc/resource"
)

// An MCP server's resources and prompts, read with the client.
func Example_clientReadables() {
	reg := otc.NewRegistry(nil)
	type day struct {
		N int `json:"n" jsonschema:"required,minimum=1,maximum=31,description=The day of the month."`
	}
	_, _ = resource.RegisterTemplate(reg, resource.Template[day]{URITemplate: "notes://days/{n}", Name: "day"},
		func(_ context.Context, in day) (string, error) { return fmt.Sprintf("Notes of day %d.", in.N), nil })
	type review struct {
		Code string `json:"code" jsonschema:"required,description=The code to review."`
		Tone string `json:"tone,omitempty" jsonschema:"enum=kind,enum=blunt,default=kind,description=How to say it."`
	}
	_, _ = prompt.Register(reg, prompt.Prompt[review]{Name: "review"},
		func(_ context.Context, in review) (string, error) { return "Review, " + in.Tone + ": " + in.Code, nil })
	srv := httptest.NewServer(mcp.NewHandler(reg, nil))
	defer srv.Close()

	// docs:start readables
	ctx := context.Background()
	s, err := client.Connect(ctx, client.StreamableHTTP{URL: srv.URL}, nil) // the handshake, done here
	if err != nil {
		panic(err)
	}
	defer s.Close()
	list, _ := s.ListResources(ctx) // resources, then templates
	fmt.Println(list[0].URITemplate)
	contents, _ := s.ReadResource(ctx, "notes://days/6")
	fmt.Println(contents[0].Text)
	_, err = s.ReadResource(ctx, "notes://days/40")
	fmt.Println(err)
	tones, _, _ := s.Complete(ctx, client.PromptRef("review"), "tone", "b", nil) // a prompt's argument
	fmt.Println(tones)
	got, _ := s.GetPrompt(ctx, "review", map[string]string{"code": "x := 1"})
	fmt.Println(got.Messages[0].Role, got.Messages[0].Content.Text)
	// docs:end readables

	// Output:
	// notes://days/{n}
	// Notes of day 6.
	// otc client: read notes://days/40: resources/read: Invalid params: Some input parameters are invalid (n: Must be at most 31) (JSON-RPC error -32602)
	// [blunt]
	// user Review, kind: x := 1
}
