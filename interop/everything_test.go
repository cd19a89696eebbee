package interop

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/otcgo/otc"
	"github.com/otcgo/otc/client"
	"github.com/otcgo/otc/federation"
	"github.com/otcgo/otc/internal/testkit"
	otcmcp "github.com/otcgo/otc/mcp"
)

// TestGatewayCarriesEverything: otc's gateway in front of the MCP
// TypeScript SDK's server-everything over stdio serves its resources, its
// templates and its prompts beside its tools, to an MCP client of the
// gateway's over stdio: a static document read, a template read, a
// prompt rendered with its arguments, a prompt argument completed, and an
// update of a subscribed resource relayed.
func TestGatewayCarriesEverything(t *testing.T) {
	node, modules := frameworksNode(t)
	script := filepath.Join(modules, "@modelcontextprotocol", "server-everything", "dist", "index.js")
	_, err := os.Stat(script)
	require.NoError(t, err, "run .ci/frameworks-deps.sh again: server-everything is missing")
	reg := otc.NewRegistry(nil)
	ctx, cancel := context.WithTimeout(t.Context(), 60*time.Second)
	defer cancel()
	fed, err := federation.Mount(ctx, reg, []federation.Upstream{{Name: "everything", Command: []string{node, script, "stdio"},
		Timeouts: federation.Timeouts{Start: 30 * time.Second}}}, &federation.Options{Strict: true})
	require.NoError(t, err)
	t.Cleanup(func() { _ = fed.Close() })

	// An MCP client of the gateway, over stdio (2025-11-25: it is told of
	// updates on its connection).
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	go func() { _ = otcmcp.Serve(t.Context(), reg, inR, outW, nil); outW.Close() }()
	t.Cleanup(func() { inW.Close() })
	lines := make(chan map[string]any, 64)
	go func() {
		sc := bufio.NewScanner(outR)
		sc.Buffer(nil, 8<<20)
		for sc.Scan() {
			var m map[string]any
			if json.Unmarshal(sc.Bytes(), &m) == nil {
				lines <- m
			}
		}
		close(lines)
	}()
	id := 0
	request := func(method string, params map[string]any) map[string]any {
		id++
		b, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": id, "method": method, "params": params})
		_, err := inW.Write(append(b, '\n'))
		require.NoError(t, err)
		for {
			select {
			case m, ok := <-lines:
				require.True(t, ok, "the gateway's connection ended")
				if m["id"] == float64(id) {
					return m
				}
			case <-time.After(callTimeout):
				t.Fatalf("no answer to %s", method)
			}
		}
	}
	result := func(m map[string]any) map[string]any {
		t.Helper()
		require.Nil(t, m["error"], "%v", m["error"])
		return m["result"].(map[string]any)
	}
	init := result(request("initialize", map[string]any{"protocolVersion": otcmcp.Version20251125, "capabilities": map[string]any{}, "clientInfo": map[string]any{"name": "t", "version": "1"}}))
	caps := init["capabilities"].(map[string]any)
	require.Contains(t, caps, "resources")
	require.Contains(t, caps, "prompts")

	resources := result(request("resources/list", map[string]any{}))["resources"].([]any)
	require.NotEmpty(t, resources)
	var doc string
	for _, r := range resources {
		if uri := r.(map[string]any)["uri"].(string); strings.HasPrefix(uri, "demo://resource/static/document/") {
			doc = uri
			break
		}
	}
	require.NotEmpty(t, doc, "a static document of server-everything is listed under its own URI")
	contents := result(request("resources/read", map[string]any{"uri": doc}))["contents"].([]any)
	require.NotEmpty(t, contents)
	assert.NotEmpty(t, contents[0].(map[string]any)["text"])

	var templates []string
	for _, x := range result(request("resources/templates/list", map[string]any{}))["resourceTemplates"].([]any) {
		templates = append(templates, x.(map[string]any)["uriTemplate"].(string))
	}
	assert.Contains(t, templates, "demo://resource/dynamic/text/{resourceId}")
	contents = result(request("resources/read", map[string]any{"uri": "demo://resource/dynamic/text/7"}))["contents"].([]any)
	require.NotEmpty(t, contents)
	assert.Contains(t, fmt.Sprint(contents[0].(map[string]any)["text"]), "7")

	var prompts []string
	for _, p := range result(request("prompts/list", map[string]any{}))["prompts"].([]any) {
		prompts = append(prompts, p.(map[string]any)["name"].(string))
	}
	assert.Subset(t, prompts, []string{"everything_simple_prompt", "everything_args_prompt", "everything_completable_prompt"})
	got := result(request("prompts/get", map[string]any{"name": "everything_args_prompt", "arguments": map[string]string{"city": "Lyon"}}))
	assert.Contains(t, fmt.Sprint(got["messages"]), "What's weather in Lyon?")
	done := result(request("completion/complete", map[string]any{"ref": map[string]any{"type": "ref/prompt", "name": "everything_completable_prompt"},
		"argument": map[string]any{"name": "department", "value": "E"}}))
	assert.NotEmpty(t, done["completion"].(map[string]any)["values"], "the upstream's completion is forwarded")

	// Updates: subscribed at the gateway, told by the upstream (whose
	// simulated updates a tool turns on), relayed.
	result(request("resources/subscribe", map[string]any{"uri": doc}))
	var toggle string
	for _, tool := range result(request("tools/list", map[string]any{}))["tools"].([]any) {
		if name := tool.(map[string]any)["name"].(string); strings.Contains(name, "toggle") && strings.Contains(name, "subscriber") {
			toggle = name
		}
	}
	require.NotEmpty(t, toggle, "server-everything's tool that turns its updates on")
	result(request("tools/call", map[string]any{"name": toggle, "arguments": map[string]any{}}))
	deadline := time.After(20 * time.Second)
	for {
		select {
		case m := <-lines:
			if m["method"] == "notifications/resources/updated" {
				assert.Equal(t, doc, m["params"].(map[string]any)["uri"])
				return
			}
		case <-deadline:
			t.Fatal("no notifications/resources/updated relayed from server-everything")
		}
	}
}

// TestSDKClientThroughGatewayToEverything: the official Go SDK's client,
// over Streamable HTTP, reads server-everything's resources, a template
// and its prompts through otc's gateway.
func TestSDKClientThroughGatewayToEverything(t *testing.T) {
	node, modules := frameworksNode(t)
	script := filepath.Join(modules, "@modelcontextprotocol", "server-everything", "dist", "index.js")
	_, base := federate(t, []federation.Upstream{{Name: "everything", Command: []string{node, script, "stdio"}, Timeouts: federation.Timeouts{Start: 30 * time.Second}}}, nil)
	cs, _, _ := connect(t, connection{name: "gateway", transport: func() (sdk.Transport, *testkit.SyncBuffer) {
		return &sdk.StreamableClientTransport{Endpoint: base + "/mcp", MaxRetries: -1}, &testkit.SyncBuffer{}
	}})
	ctx, cancel := context.WithTimeout(t.Context(), callTimeout)
	defer cancel()
	resources, err := cs.ListResources(ctx, nil)
	require.NoError(t, err)
	var doc string
	for _, r := range resources.Resources {
		if strings.HasPrefix(r.URI, "demo://resource/static/document/") {
			doc = r.URI
			break
		}
	}
	require.NotEmpty(t, doc)
	read, err := cs.ReadResource(ctx, &sdk.ReadResourceParams{URI: doc})
	require.NoError(t, err)
	require.NotEmpty(t, read.Contents)
	read, err = cs.ReadResource(ctx, &sdk.ReadResourceParams{URI: "demo://resource/dynamic/text/3"})
	require.NoError(t, err)
	require.NotEmpty(t, read.Contents)
	assert.Contains(t, read.Contents[0].Text, "3")
	prompts, err := cs.ListPrompts(ctx, nil)
	require.NoError(t, err)
	var names []string
	for _, p := range prompts.Prompts {
		names = append(names, p.Name)
	}
	assert.Contains(t, names, "everything_args_prompt")
	got, err := cs.GetPrompt(ctx, &sdk.GetPromptParams{Name: "everything_args_prompt", Arguments: map[string]string{"city": "Oslo", "state": "Oslo"}})
	require.NoError(t, err)
	require.NotEmpty(t, got.Messages)
	text, ok := got.Messages[0].Content.(*sdk.TextContent)
	require.True(t, ok)
	assert.Equal(t, "What's weather in Oslo, Oslo?", text.Text)
}

// TestEverythingAsksThroughGateway: server-everything over stdio asks
// its caller (elicitation) in the middle of a call, through otc's gateway,
// as a newcomer's gateway runs it: otc's client and the official Go SDK's
// client, each with a handler, get the question and their answer reaches
// the tool; a caller without one is told the question cannot be put to
// it, at once.
func TestEverythingAsksThroughGateway(t *testing.T) {
	node, modules := frameworksNode(t)
	script := filepath.Join(modules, "@modelcontextprotocol", "server-everything", "dist", "index.js")
	_, base := federate(t, []federation.Upstream{{Name: "everything", Command: []string{node, script, "stdio"}, Timeouts: federation.Timeouts{Start: 30 * time.Second}}}, nil)
	ctx, cancel := context.WithTimeout(t.Context(), callTimeout)
	defer cancel()

	var asked string
	cl, err := client.New(base+"/mcp", &client.Options{Format: client.FormatMCP, Handlers: &client.Handlers{
		Elicit: func(_ context.Context, req *client.ElicitRequest) (*client.ElicitResult, error) {
			asked = req.Message
			return &client.ElicitResult{Action: otc.ElicitAccept, Content: map[string]any{"name": "Ada Lovelace"}}, nil
		},
	}})
	require.NoError(t, err)
	t.Cleanup(func() { _ = cl.Close() })
	text, err := cl.CallText(ctx, "everything_trigger_elicitation_request", nil)
	require.NoError(t, err)
	assert.Contains(t, text, "Ada Lovelace")
	assert.Contains(t, asked, "Please provide inputs")

	sc := sdk.NewClient(&sdk.Implementation{Name: "otc-interop", Version: "0.0.0"}, &sdk.ClientOptions{
		ElicitationHandler: func(_ context.Context, _ *sdk.ElicitRequest) (*sdk.ElicitResult, error) {
			return &sdk.ElicitResult{Action: "accept", Content: map[string]any{"name": "Grace Hopper"}}, nil
		},
	})
	cs, err := sc.Connect(ctx, &sdk.StreamableClientTransport{Endpoint: base + "/mcp", MaxRetries: -1}, nil)
	require.NoError(t, err)
	t.Cleanup(func() { _ = cs.Close() })
	res, err := cs.CallTool(ctx, &sdk.CallToolParams{Name: "everything_trigger_elicitation_request", Arguments: map[string]any{}})
	require.NoError(t, err)
	require.NotEmpty(t, res.Content)
	var all strings.Builder
	for _, c := range res.Content {
		if tc, ok := c.(*sdk.TextContent); ok {
			all.WriteString(tc.Text)
		}
	}
	assert.Contains(t, all.String(), "Grace Hopper")

	plain, err := client.New(base+"/mcp", &client.Options{Format: client.FormatMCP})
	require.NoError(t, err)
	t.Cleanup(func() { _ = plain.Close() })
	start := time.Now()
	_, err = plain.CallText(ctx, "everything_trigger_elicitation_request", nil)
	require.Error(t, err, "a caller that cannot answer is refused")
	assert.Less(t, time.Since(start), 10*time.Second)
}
