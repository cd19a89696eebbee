package resource_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/otcgo/otc"
	"github.com/otcgo/otc/client"
	"github.com/otcgo/otc/mount"
	"github.com/otcgo/otc/prompt"
	"github.com/otcgo/otc/resource"
)

// TestRegisterTools: resources and prompts served as tools, to callers
// of formats that have tools only, under each entry's policy with the
// protocol of the call.
func TestRegisterTools(t *testing.T) {
	t.Parallel()
	reg := otc.NewRegistry(nil)
	_, err := resource.Register(reg, resource.Resource{URI: "notes://today", Name: "today", MIMEType: "text/markdown"},
		func(context.Context) (string, error) { return "# Today", nil })
	require.NoError(t, err)
	_, err = resource.Register(reg, resource.Resource{URI: "notes://logo", Name: "logo", MIMEType: "image/png"},
		func(context.Context) ([]byte, error) { return []byte{1, 2, 3}, nil })
	require.NoError(t, err)
	_, err = resource.Register(reg, resource.Resource{URI: "notes://mcp-only", Name: "mcp-only", Policy: &otc.Policy{Protocols: []string{"mcp"}}},
		func(context.Context) (string, error) { return "secret", nil })
	require.NoError(t, err)
	_, err = resource.RegisterTemplate(reg, resource.Template[pathArgs]{URITemplate: "notes://days/{path}{?depth}", Name: "day"},
		func(_ context.Context, in pathArgs) (pathArgs, error) { return in, nil })
	require.NoError(t, err)
	type greetIn struct {
		Who string `json:"who" jsonschema:"required,description=Whom."`
	}
	_, err = prompt.Register(reg, prompt.Prompt[greetIn]{Name: "greet"}, func(_ context.Context, in greetIn) (string, error) { return "Greet " + in.Who, nil })
	require.NoError(t, err)
	require.NoError(t, resource.RegisterTools(reg, nil))
	require.NoError(t, prompt.RegisterTools(reg, &prompt.ToolsOptions{Toolkit: "Templates"}))
	assert.Error(t, resource.RegisterTools(reg, nil), "the toolkit is taken")

	m := http.NewServeMux()
	mount.All(m, reg, nil)
	mux := httptest.NewServer(m)
	t.Cleanup(mux.Close)
	for _, f := range []struct {
		format client.Format
		path   string
	}{{client.FormatOTC, "/otc"}, {client.FormatREST, "/v1"}, {client.FormatA2A, "/a2a"}} {
		t.Run(string(f.format), func(t *testing.T) {
			t.Parallel()
			c, err := client.New(mux.URL+f.path, &client.Options{Format: f.format})
			require.NoError(t, err)
			t.Cleanup(func() { _ = c.Close() })
			ctx := t.Context()
			name := func(id string) string {
				if f.format == client.FormatOTC {
					return id
				}
				return map[string]string{"Resources.List": "Resources_List", "Resources.Read": "Resources_Read", "Templates.Get": "Templates_Get", "Templates.List": "Templates_List"}[id]
			}
			res, err := c.Call(ctx, name("Resources.List"), nil, nil)
			require.NoError(t, err)
			var l struct {
				Resources []struct{ URI string } `json:"resources"`
				Templates []struct {
					URITemplate string `json:"uriTemplate"`
				} `json:"templates"`
			}
			require.NoError(t, json.Unmarshal(res.Value, &l))
			assert.Len(t, l.Resources, 2, "not the resource for MCP callers")
			require.Len(t, l.Templates, 1)

			res, err = c.Call(ctx, name("Resources.Read"), map[string]any{"uri": "notes://today"}, nil)
			require.NoError(t, err)
			var blocks []otc.ContentBlock
			require.NoError(t, json.Unmarshal(res.Value, &blocks), "%s", res.Value)
			assert.Equal(t, []otc.ContentBlock{otc.ResourceContent("notes://today", "text/markdown", "# Today")}, blocks)
			res, err = c.Call(ctx, name("Resources.Read"), map[string]any{"uri": "notes://logo"}, nil)
			require.NoError(t, err)
			blocks = nil
			require.NoError(t, json.Unmarshal(res.Value, &blocks))
			assert.Equal(t, []otc.ContentBlock{otc.BlobResourceContent("notes://logo", "image/png", []byte{1, 2, 3})}, blocks)

			_, err = c.Call(ctx, name("Resources.Read"), map[string]any{"uri": "notes://mcp-only"}, nil)
			var te *otc.ToolError
			require.ErrorAs(t, err, &te)
			assert.Equal(t, "Nothing is at notes://mcp-only.", te.Message, "what the caller may not read is not there")
			_, err = c.Call(ctx, name("Resources.Read"), map[string]any{"uri": "notes://days/x?depth=deep"}, nil)
			require.ErrorAs(t, err, &te)
			assert.Contains(t, te.AdditionalPromptContent, "depth")

			res, err = c.Call(ctx, name("Templates.Get"), map[string]any{"name": "greet", "arguments": map[string]string{"who": "ada"}}, nil)
			require.NoError(t, err)
			assert.JSONEq(t, `{"messages":[{"role":"user","content":{"type":"text","text":"Greet ada"}}]}`, string(res.Value))
			_, err = c.Call(ctx, name("Templates.Get"), map[string]any{"name": "nope"}, nil)
			require.ErrorAs(t, err, &te)
		})
	}
}
