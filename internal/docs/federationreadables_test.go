package docs_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"

	"github.com/otcgo/otc"
	"github.com/otcgo/otc/client"
	"github.com/otcgo/otc/federation"
	"github.com/otcgo/otc/mcp"
	"github.com/otcgo/otc/mount"
	"github.com/otcgo/otc/prompt"
	"github.com/otcgo/otc/resource"
)

// A gateway serves an MCP upstream's resources and prompts beside its
// tools: the resource under its own URI, the prompt under the upstream's
// name.
func Example_federationReadables() {
	notes := otc.NewRegistry(nil)
	_, _ = resource.Register(notes, resource.Resource{URI: "notes://today", Name: "today"},
		func(context.Context) (string, error) { return "Ship resources.", nil })
	type topic struct {
		Topic string `json:"topic" jsonschema:"required,description=What to summarize."`
	}
	_, _ = prompt.Register(notes, prompt.Prompt[topic]{Name: "summarize"},
		func(_ context.Context, in topic) (string, error) { return "Summarize " + in.Topic + ".", nil })
	upstream := httptest.NewServer(mcp.NewHandler(notes, nil))
	defer upstream.Close()

	// docs:start readables
	ctx := context.Background()
	reg := otc.NewRegistry(nil)
	fed, err := federation.Mount(ctx, reg, []federation.Upstream{
		{Name: "notes", URL: upstream.URL, Format: client.FormatMCP},
	}, nil)
	if err != nil {
		panic(err)
	}
	defer fed.Close()
	mux := http.NewServeMux()
	mount.All(mux, reg, nil)
	// docs:end readables
	gateway := httptest.NewServer(mux)
	defer gateway.Close()

	c, _ := client.New(gateway.URL+"/mcp", &client.Options{Format: client.FormatMCP})
	defer c.Close()
	contents, _ := c.MCP().ReadResource(ctx, "notes://today")
	fmt.Println(contents[0].Text)
	prompts, _ := c.MCP().ListPrompts(ctx)
	fmt.Println(prompts[0].Name)
	got, _ := c.MCP().GetPrompt(ctx, "notes_summarize", map[string]string{"topic": "the week"})
	fmt.Println(got.Messages[0].Content.Text)

	// Output:
	// Ship resources.
	// notes_summarize
	// Summarize the week.
}
