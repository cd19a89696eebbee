package docs_test

import (
	"context"
	"fmt"
	"log"
	"net/http"
	"net/http/httptest"
	"os/exec"

	"github.com/otcgo/otc/client"
	"github.com/otcgo/otc/export"
	"github.com/otcgo/otc/mount"
)

// The client in each wire format, against one server that serves them all.
func Example_clientFormats() {
	mux := http.NewServeMux()
	mount.All(mux, calculator(nil), nil)
	srv := httptest.NewServer(mux)
	defer srv.Close()
	ctx, root := context.Background(), srv.URL

	// docs:start formats
	// A URL whose format is known: set it.
	mcpClient, err := client.New(root+"/mcp", &client.Options{Format: client.FormatMCP})
	if err != nil {
		log.Fatal(err)
	}
	defer mcpClient.Close() // ends the MCP session, if the server keeps one

	// A URL whose format is not: Dial looks (a server's root leads to its
	// OTC handler at /otc; an MCP endpoint, a REST view or an A2A agent is
	// found at its URL or at /mcp, /v1, /a2a).
	found, err := client.Dial(ctx, root, nil)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(found.Format(), found.URL() == root+"/otc")

	// An A2A agent: its skills are the tools.
	agent, err := client.New(root+"/a2a", &client.Options{Format: client.FormatA2A})
	if err != nil {
		log.Fatal(err)
	}

	// The same calls, and the same outcomes, whatever the format. A model
	// names a tool by its name; Lookup gives the id to call (OTC's
	// "Calculator.Add@1.0.0", the name itself in the other formats).
	for _, c := range []*client.Client{mcpClient, found, agent} {
		defs, err := c.ListTools(ctx)
		if err != nil {
			log.Fatal(err)
		}
		tools, err := export.New(defs, nil)
		if err != nil {
			log.Fatal(err)
		}
		def, _ := tools.Lookup("Calculator_Add")
		sum, err := client.CallAs[float64](ctx, c, def.ID, map[string]any{"a": 1, "b": 2}, nil)
		fmt.Println(c.Format(), sum, err)
	}
	// docs:end formats

	// Output:
	// otc true
	// mcp 3 <nil>
	// otc 3 <nil>
	// a2a 3 <nil>
}

// An MCP server the client starts as a process, over stdio.
func Example_clientStdio() {
	if _, err := exec.LookPath("go"); err != nil {
		return
	}
	ctx := context.Background()
	// docs:start stdio
	cmd := exec.Command("go", "run", "github.com/otcgo/otc/examples/calculator", "-stdio")
	c, err := client.NewStdio(cmd, nil) // starts the process
	if err != nil {
		log.Fatal(err)
	}
	defer c.Close() // closes its standard input, then kills it after a grace
	defs, err := c.ListTools(ctx)
	if err != nil {
		log.Fatal(err) // a server that exits says why: its stderr's end is in the error
	}
	// docs:end stdio
	fmt.Println(len(defs) > 0)
}

// The options of a call that talks back: progress, and a server's
// questions.
func Example_clientProgress() {
	mux := http.NewServeMux()
	mount.All(mux, calculator(nil), nil)
	srv := httptest.NewServer(mux)
	defer srv.Close()
	ctx, url := context.Background(), srv.URL+"/mcp"

	// docs:start talk-back
	c, err := client.New(url, &client.Options{
		Format: client.FormatMCP,
		Handlers: &client.Handlers{ // declared to the server only when set
			Elicit: func(ctx context.Context, q *client.ElicitRequest) (*client.ElicitResult, error) {
				// Put q.Message and the form q.RequestedSchema to the user.
				return &client.ElicitResult{Action: "accept", Content: map[string]any{"confirm": true}}, nil
			},
		},
	})
	if err != nil {
		log.Fatal(err)
	}
	res, err := c.Call(ctx, "Calculator_Add", map[string]any{"a": 2, "b": 2}, &client.CallOptions{
		Progress: func(p client.Progress) { fmt.Printf("%.0f/%.0f %s\n", p.Progress, p.Total, p.Message) },
	})
	// Cancelling ctx cancels the call on the server: MCP's
	// notifications/cancelled, tasks/cancel, A2A's CancelTask.
	// docs:end talk-back
	fmt.Println(string(res.Value), err)
	// Output:
	// 4 <nil>
}

// An OAuth client of an MCP server that is a resource server. Not run: it
// needs a user at a browser.
func Example_clientOAuth() {
	url := "https://tools.example.com/mcp"
	// openAndWait is the program's browser step: it opens authURL for the
	// user and waits for the redirect back to the RedirectURL.
	openAndWait := func(ctx context.Context, authURL string) (string, error) { return "", nil }
	// docs:start oauth
	c, err := client.New(url, &client.Options{Format: client.FormatMCP, OAuth: &client.OAuth{
		RedirectURL: "http://127.0.0.1:8976/callback",
		// The browser step of the authorization-code flow (with PKCE): open
		// authURL for the user, and return the URL they were sent back to.
		Authorize: func(ctx context.Context, authURL string) (string, error) { return openAndWait(ctx, authURL) },
	}})
	// docs:end oauth
	if err != nil {
		log.Fatal(err)
	}
	_ = c
}
