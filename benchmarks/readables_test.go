package benchmarks

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"regexp"
	"strconv"
	"strings"
	"testing"

	mcpgo "github.com/mark3labs/mcp-go/mcp"
	mcpgoserver "github.com/mark3labs/mcp-go/server"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/require"

	"github.com/otcgo/otc/mcp"
	"github.com/otcgo/otc/prompt"
	"github.com/otcgo/otc/resource"
)

// BenchmarkReadables compares, over loopback as BenchmarkLoopback does,
// what an MCP server serves beside its tools: resources/read of a 1 KiB
// text resource, resources/read of a resource template (its variable an
// integer), and prompts/get of a prompt with one argument, on otc, the
// official Go SDK's server and mcp-go's (stateless, JSON answers, at
// 2025-11-25), beside an otc tool call (tools/call of Calculator_Add, the
// first: x-tool is each one's calls/s over its calls/s in the same round).
func BenchmarkReadables(b *testing.B) {
	compare(b, readableServers(b), "x-tool")
}

// page is the 1 KiB text every server's resource holds.
var page = strings.Repeat("0123456789abcdef", 64)

// The requests, and what a correct answer holds.
const (
	readCall     = `{"jsonrpc":"2.0","id":7,"method":"resources/read","params":{"uri":"bench://page"}}`
	templateCall = `{"jsonrpc":"2.0","id":7,"method":"resources/read","params":{"uri":"bench://items/42"}}`
	promptCall   = `{"jsonrpc":"2.0","id":7,"method":"prompts/get","params":{"name":"greet","arguments":{"who":"Ada"}}}`
)

var (
	wantPage   = regexp.MustCompile(`"text":"0123456789abcdef`)
	wantItem   = regexp.MustCompile(`"text":"item 42"`)
	wantPrompt = regexp.MustCompile(`"text":"Greet Ada\."`)
)

type itemArgs struct {
	ID int `json:"id" jsonschema:"required,minimum=0,description=The item's id."`
}

type greetArgs struct {
	Who string `json:"who" jsonschema:"required,description=Whom to greet."`
}

func readableServers(tb testing.TB) []server {
	tb.Helper()
	reg := newRegistry(tb, 1)
	_, err := resource.Register(reg, resource.Resource{URI: "bench://page", Name: "page", MIMEType: "text/plain"},
		func(context.Context) (string, error) { return page, nil })
	require.NoError(tb, err)
	_, err = resource.RegisterTemplate(reg, resource.Template[itemArgs]{URITemplate: "bench://items/{id}", Name: "item", MIMEType: "text/plain"},
		func(_ context.Context, in itemArgs) (string, error) { return "item " + strconv.Itoa(in.ID), nil })
	require.NoError(tb, err)
	_, err = prompt.Register(reg, prompt.Prompt[greetArgs]{Name: "greet"},
		func(_ context.Context, in greetArgs) (string, error) { return "Greet " + in.Who + ".", nil })
	require.NoError(tb, err)
	otcMCP := mcp.NewHandler(reg, nil)

	sdkServer := sdk.NewServer(&sdk.Implementation{Name: "bench", Version: "1.0.0"}, &sdk.ServerOptions{Logger: slog.New(slog.DiscardHandler)})
	sdkServer.AddResource(&sdk.Resource{URI: "bench://page", Name: "page", MIMEType: "text/plain"},
		func(_ context.Context, req *sdk.ReadResourceRequest) (*sdk.ReadResourceResult, error) {
			return &sdk.ReadResourceResult{Contents: []*sdk.ResourceContents{{URI: req.Params.URI, MIMEType: "text/plain", Text: page}}}, nil
		})
	sdkServer.AddResourceTemplate(&sdk.ResourceTemplate{URITemplate: "bench://items/{id}", Name: "item", MIMEType: "text/plain"},
		func(_ context.Context, req *sdk.ReadResourceRequest) (*sdk.ReadResourceResult, error) {
			// The SDK hands the handler the URI: the variable is the
			// handler's to read and check.
			id, err := strconv.Atoi(strings.TrimPrefix(req.Params.URI, "bench://items/"))
			if err != nil || id < 0 {
				return nil, sdk.ResourceNotFoundError(req.Params.URI)
			}
			return &sdk.ReadResourceResult{Contents: []*sdk.ResourceContents{{URI: req.Params.URI, MIMEType: "text/plain", Text: "item " + strconv.Itoa(id)}}}, nil
		})
	sdkServer.AddPrompt(&sdk.Prompt{Name: "greet", Arguments: []*sdk.PromptArgument{{Name: "who", Description: "Whom to greet.", Required: true}}},
		func(_ context.Context, req *sdk.GetPromptRequest) (*sdk.GetPromptResult, error) {
			return &sdk.GetPromptResult{Messages: []*sdk.PromptMessage{{Role: "user", Content: &sdk.TextContent{Text: "Greet " + req.Params.Arguments["who"] + "."}}}}, nil
		})
	sdkHandler := sdk.NewStreamableHTTPHandler(func(*http.Request) *sdk.Server { return sdkServer }, &sdk.StreamableHTTPOptions{Stateless: true, JSONResponse: true})

	mg := mcpgoserver.NewMCPServer("bench", "1.0.0", mcpgoserver.WithResourceCapabilities(false, false), mcpgoserver.WithPromptCapabilities(false))
	mg.AddResource(mcpgo.NewResource("bench://page", "page", mcpgo.WithMIMEType("text/plain")),
		func(_ context.Context, req mcpgo.ReadResourceRequest) ([]mcpgo.ResourceContents, error) {
			return []mcpgo.ResourceContents{mcpgo.TextResourceContents{URI: req.Params.URI, MIMEType: "text/plain", Text: page}}, nil
		})
	mg.AddResourceTemplate(mcpgo.NewResourceTemplate("bench://items/{id}", "item", mcpgo.WithTemplateMIMEType("text/plain")),
		func(_ context.Context, req mcpgo.ReadResourceRequest) ([]mcpgo.ResourceContents, error) {
			id, err := strconv.Atoi(fmt.Sprint(first(req.Params.Arguments["id"])))
			if err != nil || id < 0 {
				return nil, fmt.Errorf("no item %v", req.Params.Arguments["id"])
			}
			return []mcpgo.ResourceContents{mcpgo.TextResourceContents{URI: req.Params.URI, MIMEType: "text/plain", Text: "item " + strconv.Itoa(id)}}, nil
		})
	mg.AddPrompt(mcpgo.NewPrompt("greet", mcpgo.WithArgument("who", mcpgo.RequiredArgument(), mcpgo.ArgumentDescription("Whom to greet."))),
		func(_ context.Context, req mcpgo.GetPromptRequest) (*mcpgo.GetPromptResult, error) {
			return mcpgo.NewGetPromptResult("", []mcpgo.PromptMessage{mcpgo.NewPromptMessage(mcpgo.RoleUser, mcpgo.NewTextContent("Greet "+req.Params.Arguments["who"]+"."))}), nil
		})
	mgHandler := mcpgoserver.NewStreamableHTTPServer(mg, mcpgoserver.WithStateLess(true), mcpgoserver.WithStreamableHTTPLogger(slog.New(slog.DiscardHandler)))

	h := mcpHeader("2025-11-25")
	var out []server
	out = append(out, server{name: "otc-tool", handler: otcMCP, path: "/mcp", body: []byte(mcpCall), header: h, want: wantMCP})
	for _, impl := range []struct {
		name    string
		handler http.Handler
	}{{"otc", otcMCP}, {"sdk", sdkHandler}, {"mcpgo", mgHandler}} {
		out = append(out,
			server{name: impl.name + "-read", handler: impl.handler, path: "/mcp", body: []byte(readCall), header: h, want: wantPage},
			server{name: impl.name + "-template", handler: impl.handler, path: "/mcp", body: []byte(templateCall), header: h, want: wantItem},
			server{name: impl.name + "-prompt", handler: impl.handler, path: "/mcp", body: []byte(promptCall), header: h, want: wantPrompt},
		)
	}
	return out
}

// first is a template variable as mcp-go hands it: a value, or a list of
// one.
func first(v any) any {
	if l, ok := v.([]string); ok && len(l) > 0 {
		return l[0]
	}
	return v
}
