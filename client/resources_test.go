package client_test

import (
	"context"
	"encoding/json"
	"errors"
	"net/http/httptest"
	"os"
	"os/exec"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/otcgo/otc"
	"github.com/otcgo/otc/client"
	"github.com/otcgo/otc/mcp"
	"github.com/otcgo/otc/prompt"
	"github.com/otcgo/otc/resource"
)

type dayArgs struct {
	Date  string `json:"date" jsonschema:"required,description=The day."`
	Lines int    `json:"lines,omitempty" jsonschema:"minimum=1,default=2,description=How many lines."`
}

type reviewArgs struct {
	Code string `json:"code" jsonschema:"required,description=The code."`
	Tone string `json:"tone,omitempty" jsonschema:"enum=kind,enum=blunt,default=kind,description=The tone."`
}

// resourcesRegistry registers a resource, a template, two prompts (one
// asks the user) and a tool that says the resource changed.
func resourcesRegistry() *otc.Registry {
	reg := otc.NewRegistry(nil)
	must := func(_ any, err error) {
		if err != nil {
			panic(err)
		}
	}
	notes, err := resource.Register(reg, resource.Resource{URI: "notes://today", Name: "today", MIMEType: "text/markdown"},
		func(context.Context) (string, error) { return "# Today", nil })
	must(nil, err)
	must(resource.RegisterTemplate(reg, resource.Template[dayArgs]{URITemplate: "notes://days/{date}{?lines}", Name: "day"},
		func(_ context.Context, in dayArgs) (dayArgs, error) { return in, nil }))
	must(prompt.Register(reg, prompt.Prompt[reviewArgs]{Name: "review", Description: "Reviews code."},
		func(_ context.Context, in reviewArgs) (string, error) {
			return "Review, " + in.Tone + ": " + in.Code, nil
		}))
	must(prompt.Register(reg, prompt.Prompt[struct{}]{Name: "ask"}, func(ctx context.Context, _ struct{}) (string, error) {
		var ans struct {
			Topic string `json:"topic" jsonschema:"required"`
		}
		if _, err := otc.Elicit(ctx, "Which topic?", &ans); err != nil {
			return "", err
		}
		return "Explain " + ans.Topic, nil
	}))
	must(nil, otc.Register(reg, otc.Tool{ID: "Notes.Touch", Version: "1.0.0", Description: "Says today's notes changed."},
		func(context.Context, struct{}) (otc.NoOutput, error) { notes.Changed(); return otc.NoOutput{}, nil }))
	return reg
}

// TestResourcesAndPrompts: the client lists and reads resources, reads a
// template, lists, completes and renders prompts, over HTTP at each
// generation and over stdio.
func TestResourcesAndPrompts(t *testing.T) {
	t.Parallel()
	srv := httptest.NewServer(mcp.NewHandler(resourcesRegistry(), nil))
	t.Cleanup(srv.Close)
	answer := &client.Handlers{Elicit: func(context.Context, *client.ElicitRequest) (*client.ElicitResult, error) {
		return &client.ElicitResult{Action: otc.ElicitAccept, Content: map[string]any{"topic": "tides"}}, nil
	}}
	for name, open := range map[string]func(t *testing.T) *client.Client{
		"http_2026": func(t *testing.T) *client.Client {
			c, err := client.New(srv.URL, &client.Options{Format: client.FormatMCP, Handlers: answer})
			require.NoError(t, err)
			return c
		},
		"http_2025": func(t *testing.T) *client.Client {
			c, err := client.New(srv.URL, &client.Options{Format: client.FormatMCP, MCPVersion: mcp.Version20251125, Handlers: answer})
			require.NoError(t, err)
			return c
		},
		"stdio": func(t *testing.T) *client.Client {
			cmd := exec.Command(os.Args[0], "-test.run=^$")
			cmd.Env = append(os.Environ(), stdioEnv+"=resources")
			c, err := client.NewStdio(cmd, &client.Options{Handlers: answer})
			require.NoError(t, err)
			return c
		},
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			c := open(t)
			t.Cleanup(func() { _ = c.Close() })
			ctx := t.Context()

			list, err := c.MCP().ListResources(ctx)
			require.NoError(t, err)
			assert.Equal(t, []client.Resource{
				{URI: "notes://today", Name: "today", MIMEType: "text/markdown"},
				{URITemplate: "notes://days/{date}{?lines}", Name: "day"},
			}, list)

			contents, err := c.MCP().ReadResource(ctx, "notes://today")
			require.NoError(t, err)
			assert.Equal(t, []otc.EmbeddedResource{{URI: "notes://today", MIMEType: "text/markdown", Text: "# Today"}}, contents)
			contents, err = c.MCP().ReadResource(ctx, "notes://days/2026-12-06?lines=5")
			require.NoError(t, err)
			require.Len(t, contents, 1)
			assert.JSONEq(t, `{"date":"2026-12-06","lines":5}`, contents[0].Text)

			_, err = c.MCP().ReadResource(ctx, "notes://nowhere")
			var rpc *client.RPCError
			require.ErrorAs(t, err, &rpc, "not found is the server's answer as it is")
			assert.Contains(t, []int{-32002, -32602}, rpc.Code)
			assert.JSONEq(t, `{"uri":"notes://nowhere"}`, string(rpc.Data))
			_, err = c.MCP().ReadResource(ctx, "notes://days/x?lines=zero")
			require.ErrorAs(t, err, &rpc)
			assert.Equal(t, -32602, rpc.Code)
			assert.Contains(t, rpc.Message, "lines")

			prompts, err := c.MCP().ListPrompts(ctx)
			require.NoError(t, err)
			require.Len(t, prompts, 2)
			assert.Equal(t, client.Prompt{Name: "review", Description: "Reviews code.", Arguments: []client.PromptArgument{
				{Name: "code", Description: "The code.", Required: true}, {Name: "tone", Description: "The tone."},
			}}, prompts[1])

			values, more, err := c.MCP().Complete(ctx, client.PromptRef("review"), "tone", "b", nil)
			require.NoError(t, err)
			assert.Equal(t, []string{"blunt"}, values)
			assert.False(t, more)
			values, _, err = c.MCP().Complete(ctx, client.TemplateRef("notes://days/{date}{?lines}"), "date", "", nil)
			require.NoError(t, err)
			assert.Empty(t, values, "a template's variable with nothing to offer")

			got, err := c.MCP().GetPrompt(ctx, "review", map[string]string{"code": "x := 1", "tone": "blunt"})
			require.NoError(t, err)
			require.Len(t, got.Messages, 1)
			assert.Equal(t, "user", string(got.Messages[0].Role))
			assert.Equal(t, otc.TextContent("Review, blunt: x := 1"), got.Messages[0].Content)

			got, err = c.MCP().GetPrompt(ctx, "ask", nil)
			if name != "http_2025" {
				require.NoError(t, err, "2026-07-28 asks through input_required rounds")
				assert.Equal(t, "Explain tides", got.Messages[0].Content.Text)
			} else {
				require.Error(t, err, "before 2026-07-28 this server's prompts cannot ask")
			}
		})
	}
}

// TestResourcesNeedMCP: the other formats have no resources, prompts or
// sessions, which their clients' types say (no MCP session), and a new
// session of one is refused, saying why.
func TestResourcesNeedMCP(t *testing.T) {
	t.Parallel()
	for _, f := range []client.Format{client.FormatOTC, client.FormatREST, client.FormatA2A} {
		c, err := client.New("http://127.0.0.1:1", &client.Options{Format: f})
		require.NoError(t, err)
		assert.Nil(t, c.MCP(), "%s has no MCP session", f)
		_, err = c.NewSession()
		assert.ErrorIs(t, err, errors.ErrUnsupported)
		assert.ErrorContains(t, err, "the server speaks "+string(f)+", which keeps no sessions")
	}
	c, err := client.New("http://127.0.0.1:1", &client.Options{Format: client.FormatMCP})
	require.NoError(t, err)
	require.NotNil(t, c.MCP())
	s, err := c.NewSession()
	require.NoError(t, err)
	assert.Empty(t, s.ProtocolVersion(), "no handshake yet")
}

// TestSubscribe: over stdio a subscribed client is told when the resource
// changes, through Options.OnNotification (in 2025-11-25: 2026-07-28 has
// no resources/subscribe).
func TestSubscribe(t *testing.T) {
	t.Parallel()
	updates := make(chan string, 4)
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), stdioEnv+"=resources")
	c, err := client.NewStdio(cmd, &client.Options{MCPVersion: mcp.Version20251125, OnNotification: func(method string, params json.RawMessage) {
		if method == "notifications/resources/updated" {
			var p struct{ URI string }
			_ = json.Unmarshal(params, &p)
			updates <- p.URI
		}
	}})
	require.NoError(t, err)
	t.Cleanup(func() { _ = c.Close() })
	require.NoError(t, c.MCP().Subscribe(t.Context(), "notes://today"))
	_, err = c.Call(t.Context(), "Notes_Touch", nil, nil)
	require.NoError(t, err)
	select {
	case uri := <-updates:
		assert.Equal(t, "notes://today", uri)
	case <-time.After(10 * time.Second):
		t.Fatal("no notifications/resources/updated")
	}
	require.NoError(t, c.MCP().Unsubscribe(t.Context(), "notes://today"))
	err = c.MCP().Subscribe(t.Context(), "notes://nowhere")
	var rpc *client.RPCError
	require.ErrorAs(t, err, &rpc)
	assert.Equal(t, -32002, rpc.Code)
}

// TestSubscribeListen: in MCP 2026-07-28, which has no
// resources/subscribe, Subscribe keeps a subscriptions/listen stream,
// over HTTP and stdio: an update reaches Options.OnNotification; a URI
// nothing is at is refused, saying so, and leaves the others subscribed;
// after Unsubscribe of every URI, and Close, no stream is left open.
func TestSubscribeListen(t *testing.T) {
	t.Parallel()
	srv := httptest.NewServer(mcp.NewHandler(resourcesRegistry(), nil))
	t.Cleanup(srv.Close)
	for _, over := range []string{"http", "stdio"} {
		t.Run(over, func(t *testing.T) {
			t.Parallel()
			updates := make(chan string, 16)
			opts := &client.Options{OnNotification: func(method string, params json.RawMessage) {
				if method == "notifications/resources/updated" {
					var p struct{ URI string }
					_ = json.Unmarshal(params, &p)
					updates <- p.URI
				}
			}}
			var c *client.Client
			var err error
			if over == "http" {
				opts.Format = client.FormatMCP
				c, err = client.New(srv.URL, opts)
			} else {
				cmd := exec.Command(os.Args[0], "-test.run=^$")
				cmd.Env = append(os.Environ(), stdioEnv+"=resources")
				c, err = client.NewStdio(cmd, opts)
			}
			require.NoError(t, err)
			t.Cleanup(func() { _ = c.Close() })
			s := c.MCP()
			require.NoError(t, s.Subscribe(t.Context(), "notes://today"))
			assert.Equal(t, mcp.Version20260728, s.ProtocolVersion())
			touch := func() {
				_, err := c.Call(t.Context(), "Notes_Touch", nil, nil)
				require.NoError(t, err)
			}
			touch()
			select {
			case uri := <-updates:
				assert.Equal(t, "notes://today", uri)
			case <-time.After(10 * time.Second):
				t.Fatal("no notifications/resources/updated over subscriptions/listen")
			}

			err = s.Subscribe(t.Context(), "notes://nowhere")
			require.Error(t, err)
			assert.ErrorIs(t, err, client.ErrNotTold)
			assert.Contains(t, err.Error(), "does not tell of this URI: notes://nowhere")
			touch()
			select {
			case uri := <-updates:
				assert.Equal(t, "notes://today", uri, "the refused URI left the others subscribed")
			case <-time.After(10 * time.Second):
				t.Fatal("no update after a refused subscription")
			}

			require.NoError(t, s.Unsubscribe(t.Context(), "notes://today"))
			require.NoError(t, s.Subscribe(t.Context(), "notes://today"), "subscribed again, on a new stream")
			touch()
			select {
			case uri := <-updates:
				assert.Equal(t, "notes://today", uri)
			case <-time.After(10 * time.Second):
				t.Fatal("no update on the stream opened again")
			}
		})
	}
}
