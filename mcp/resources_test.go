package mcp_test

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/otcgo/otc"
	"github.com/otcgo/otc/mcp"
	"github.com/otcgo/otc/prompt"
	"github.com/otcgo/otc/resource"
)

// fileArgs are the variables of the test template.
type fileArgs struct {
	Name  string `json:"name" jsonschema:"required,description=The file's name."`
	Limit int    `json:"limit,omitempty" jsonschema:"description=How many lines,minimum=1,maximum=10,default=3"`
	Mode  string `json:"mode,omitempty" jsonschema:"description=How to read it,enum=head,enum=tail"`
}

// resourceRegistry registers resources of each kind of contents, a
// template, a resource only a scope may read, and a prompt.
func resourceRegistry(t testing.TB) (*otc.Registry, *resource.Handle, *resource.Handle) {
	t.Helper()
	reg := newRegistry(t)
	text, err := resource.Register(reg, resource.Resource{URI: "test://text", Name: "text", Description: "Some text.", MIMEType: "text/markdown"},
		func(context.Context) (string, error) { return "# Notes", nil })
	require.NoError(t, err)
	_, err = resource.Register(reg, resource.Resource{URI: "test://blob", Name: "blob", Size: 3}, func(context.Context) ([]byte, error) { return []byte{1, 2, 3}, nil })
	require.NoError(t, err)
	_, err = resource.Register(reg, resource.Resource{URI: "test://value", Name: "value"}, func(context.Context) (map[string]int, error) { return map[string]int{"n": 1}, nil })
	require.NoError(t, err)
	policy := &otc.Policy{RequiredScopes: []string{"secrets:read"}}
	_, err = resource.Register(reg, resource.Resource{URI: "test://secret", Name: "secret", Policy: policy},
		func(context.Context) (string, error) { return "the secret", nil })
	require.NoError(t, err)
	policy.RequiredScopes = nil // registered: changing it now changes nothing
	_, err = resource.Register(reg, resource.Resource{URI: "test://broken", Name: "broken"}, func(context.Context) (string, error) { return "", fmt.Errorf("the disk is gone") })
	require.NoError(t, err)
	files, err := resource.RegisterTemplate(reg, resource.Template[fileArgs]{URITemplate: "test://files/{name}{?limit,mode}", Name: "file", MIMEType: "text/plain",
		Complete: func(_ context.Context, argument, prefix string, chosen fileArgs) ([]string, error) {
			if argument != "name" {
				return nil, nil
			}
			var out []string
			for _, n := range []string{"alpha", "apple", "beta"} {
				if strings.HasPrefix(n, prefix) {
					out = append(out, n+"."+chosen.Mode)
				}
			}
			return out, nil
		}},
		func(_ context.Context, in fileArgs) (string, error) {
			return fmt.Sprintf("%s:%d:%s", in.Name, in.Limit, in.Mode), nil
		})
	require.NoError(t, err)
	type many struct {
		N string `json:"n" jsonschema:"description=Any."`
	}
	_, err = prompt.Register(reg, prompt.Prompt[many]{Name: "many", Complete: func(_ context.Context, _, prefix string, _ many) ([]string, error) {
		out := make([]string, 150)
		for i := range out {
			out[i] = fmt.Sprintf("%s%03d", prefix, i)
		}
		return out, nil
	}}, func(_ context.Context, in many) (string, error) { return in.N, nil })
	require.NoError(t, err)
	return reg, text, files
}

func TestResources(t *testing.T) {
	t.Parallel()
	reg, _, _ := resourceRegistry(t)
	url := serve(t, reg, &mcp.Options{Authenticator: claimsAuth()})
	anon := map[string]string{"X-Test-Claims": `{}`}
	scoped := map[string]string{"X-Test-Claims": `{"sub":"ada","scope":"secrets:read"}`}
	legacy := func(method string, params obj, hdr map[string]string) answer {
		return post(t, url, request(1, method, params), hdr)
	}
	modern := func(method string, params obj, hdr map[string]string) answer {
		params["_meta"] = modernMeta(nil)
		h := modernHeaders(method, "")
		for k, v := range hdr {
			h[k] = v
		}
		return post(t, url, request(1, method, params), h)
	}
	uris := func(raw json.RawMessage) []string {
		var l struct {
			Resources []struct{ URI string } `json:"resources"`
		}
		require.NoError(t, json.Unmarshal(raw, &l))
		var out []string
		for _, r := range l.Resources {
			out = append(out, r.URI)
		}
		return out
	}

	t.Run("list_per_caller", func(t *testing.T) {
		t.Parallel()
		assert.Equal(t, []string{"test://blob", "test://broken", "test://text", "test://value"}, uris(legacy("resources/list", obj{}, anon).result(t)))
		assert.Equal(t, []string{"test://blob", "test://broken", "test://secret", "test://text", "test://value"}, uris(legacy("resources/list", obj{}, scoped).result(t)))
		m := object(t, modern("resources/list", obj{}, anon).result(t))
		assert.Equal(t, "complete", m["resultType"])
		assert.Contains(t, m, "ttlMs")
	})
	t.Run("entries", func(t *testing.T) {
		t.Parallel()
		raw := legacy("resources/list", obj{}, anon).result(t)
		assert.Contains(t, string(raw), `{"uri":"test://text","name":"text","description":"Some text.","mimeType":"text/markdown"}`)
		assert.Contains(t, string(raw), `{"uri":"test://blob","name":"blob","size":3}`)
		raw = legacy("resources/templates/list", obj{}, anon).result(t)
		assert.JSONEq(t, `{"resourceTemplates":[{"mimeType":"text/plain","name":"file","uriTemplate":"test://files/{name}{?limit,mode}"}]}`, string(raw))
	})
	t.Run("read_each_kind", func(t *testing.T) {
		t.Parallel()
		for uri, want := range map[string]string{
			"test://text":  `[{"uri":"test://text","mimeType":"text/markdown","text":"# Notes"}]`,
			"test://blob":  `[{"uri":"test://blob","mimeType":"application/octet-stream","blob":"AQID"}]`,
			"test://value": `[{"uri":"test://value","mimeType":"application/json","text":"{\"n\":1}"}]`,
		} {
			raw := legacy("resources/read", obj{"uri": uri}, anon).result(t)
			assert.JSONEq(t, `{"contents":`+want+`}`, string(raw), uri)
		}
		m := object(t, modern("resources/read", obj{"uri": "test://text"}, anon).result(t))
		assert.Equal(t, "complete", m["resultType"])
		assert.EqualValues(t, 0, m["ttlMs"], "contents are not to be cached")
		assert.Equal(t, "private", m["cacheScope"])
	})
	t.Run("template_typed", func(t *testing.T) {
		t.Parallel()
		raw := legacy("resources/read", obj{"uri": "test://files/notes?mode=tail&limit=7"}, anon).result(t)
		assert.JSONEq(t, `{"contents":[{"uri":"test://files/notes?mode=tail&limit=7","mimeType":"text/plain","text":"notes:7:tail"}]}`, string(raw))
		raw = legacy("resources/read", obj{"uri": "test://files/a%20b"}, anon).result(t)
		assert.Contains(t, string(raw), `"text":"a b:3:"`, "percent-decoded, and the default filled in")
	})
	for name, tc := range map[string]struct{ uri, param, msg string }{
		"wrong_type":   {"test://files/x?limit=many", "limit", `"many" is not an integer`},
		"out_of_range": {"test://files/x?limit=50", "limit", "Must be at most 10"},
		"not_in_enum":  {"test://files/x?mode=middle", "mode", "Must be one of"},
	} {
		t.Run("template_"+name, func(t *testing.T) {
			t.Parallel()
			e, _ := legacy("resources/read", obj{"uri": tc.uri}, anon).rpcErr(t, http.StatusOK, -32602)
			assert.Contains(t, e.Message, tc.param+": "+tc.msg)
			assert.Contains(t, mustJSON(t, e.Data), tc.param)
		})
	}
	t.Run("not_found", func(t *testing.T) {
		t.Parallel()
		for _, uri := range []string{"test://nothing", "test://secret", "test://files/"} {
			e, _ := legacy("resources/read", obj{"uri": uri}, anon).rpcErr(t, http.StatusOK, -32002)
			assert.JSONEq(t, mustJSON(t, obj{"uri": uri}), string(e.Data), uri)
			e, _ = modern("resources/read", obj{"uri": uri}, anon).rpcErr(t, http.StatusBadRequest, -32602)
			assert.JSONEq(t, mustJSON(t, obj{"uri": uri}), string(e.Data), uri)
		}
		raw := legacy("resources/read", obj{"uri": "test://secret"}, scoped).result(t)
		assert.Contains(t, string(raw), "the secret", "the scope the policy asks for reads it")
	})
	t.Run("bad_requests", func(t *testing.T) {
		t.Parallel()
		e, _ := legacy("resources/read", obj{}, anon).rpcErr(t, http.StatusOK, -32602)
		assert.Contains(t, e.Message, "params.uri")
		e, _ = legacy("resources/read", obj{"uri": "test://files/" + strings.Repeat("a", 9000)}, anon).rpcErr(t, http.StatusOK, -32602)
		assert.Contains(t, e.Message, "longer than 4096 bytes")
		e, _ = legacy("resources/read", obj{"uri": "test://broken"}, anon).rpcErr(t, http.StatusOK, -32603)
		assert.Equal(t, "The resource could not be read: the disk is gone", e.Message)
		e, _ = legacy("resources/list", obj{"cursor": "!!"}, anon).rpcErr(t, http.StatusOK, -32602)
		assert.Contains(t, e.Message, "cursor")
	})
	t.Run("complete", func(t *testing.T) {
		t.Parallel()
		c := func(ref obj, arg, value string, chosen obj) json.RawMessage {
			p := obj{"ref": ref, "argument": obj{"name": arg, "value": value}}
			if chosen != nil {
				p["context"] = obj{"arguments": chosen}
			}
			return legacy("completion/complete", p, anon).result(t)
		}
		file := obj{"type": "ref/resource", "uri": "test://files/{name}{?limit,mode}"}
		assert.JSONEq(t, `{"completion":{"values":["alpha.head","apple.head"],"total":2,"hasMore":false}}`,
			string(c(file, "name", "a", obj{"mode": "head", "limit": "x"})), "the chosen values that fit reach the function, typed")
		assert.JSONEq(t, `{"completion":{"values":["tail"],"total":1,"hasMore":false}}`, string(c(file, "mode", "t", nil)), "an enum completes by itself")
		raw := c(obj{"type": "ref/prompt", "name": "many"}, "n", "x", nil)
		var res struct {
			Completion struct {
				Values  []string
				Total   int
				HasMore bool
			}
		}
		require.NoError(t, json.Unmarshal(raw, &res))
		assert.Len(t, res.Completion.Values, 100, "at most 100 values")
		assert.Equal(t, 150, res.Completion.Total)
		assert.True(t, res.Completion.HasMore)
		e, _ := legacy("completion/complete", obj{"ref": file, "argument": obj{"name": "size", "value": ""}}, anon).rpcErr(t, http.StatusOK, -32602)
		assert.Contains(t, e.Message, "the arguments are limit, mode, name")
		e, _ = legacy("completion/complete", obj{"ref": obj{"type": "ref/prompt", "name": "nope"}, "argument": obj{"name": "n", "value": ""}}, anon).rpcErr(t, http.StatusOK, -32602)
		assert.Contains(t, e.Message, `no prompt is named "nope"`)
	})
}

// TestResourcePages: every list goes page by page, and a page follows on
// from the one before whatever was registered meanwhile.
func TestResourcePages(t *testing.T) {
	t.Parallel()
	reg := newRegistry(t)
	add := func(uri string) {
		_, err := resource.Register(reg, resource.Resource{URI: uri, Name: uri}, func(context.Context) (string, error) { return uri, nil })
		require.NoError(t, err)
	}
	for _, u := range []string{"test://c", "test://a", "test://e", "test://b", "test://d"} {
		add(u)
	}
	url := serve(t, reg, &mcp.Options{PageSize: 2})
	var seen []string
	cursor := ""
	for range 10 {
		p := obj{}
		if cursor != "" {
			p["cursor"] = cursor
		}
		var page struct {
			Resources []struct{ URI string } `json:"resources"`
			Next      string                 `json:"nextCursor"`
		}
		require.NoError(t, json.Unmarshal(post(t, url, request(1, "resources/list", p), nil).result(t), &page))
		for _, r := range page.Resources {
			seen = append(seen, r.URI)
		}
		if len(seen) == 2 {
			add("test://aa") // before the cursor: not listed again
			add("test://f")  // after it: listed
		}
		if cursor = page.Next; cursor == "" {
			break
		}
		_, err := base64.RawURLEncoding.DecodeString(cursor)
		require.NoError(t, err)
	}
	assert.Equal(t, []string{"test://a", "test://b", "test://c", "test://d", "test://e", "test://f"}, seen)
}

// TestResourceSubscriptions: over stdio a client subscribed to a resource
// is told when it changes, and every client when the lists change.
func TestResourceSubscriptions(t *testing.T) {
	t.Parallel()
	reg, text, files := resourceRegistry(t)
	c := startStdio(t, t.Context(), reg, nil)
	c.send(request(1, "initialize", obj{"protocolVersion": mcp.Version20251125, "capabilities": obj{}, "clientInfo": obj{"name": "t", "version": "1"}}))
	caps := object(t, c.recvResponse().Result)["capabilities"]
	assert.Equal(t, obj{"subscribe": true, "listChanged": true}, obj(caps.(map[string]any)["resources"].(map[string]any)))

	c.send(request(2, "resources/subscribe", obj{"uri": "test://text"}))
	assert.JSONEq(t, `{}`, string(c.recvResponse().Result))
	c.send(request(3, "resources/subscribe", obj{"uri": "test://files/x?limit=2"}))
	assert.JSONEq(t, `{}`, string(c.recvResponse().Result))
	c.send(request(4, "resources/subscribe", obj{"uri": "test://nothing"}))
	assert.Equal(t, -32002, c.recvResponse().Error.Code)

	text.Changed()
	assert.JSONEq(t, `{"jsonrpc":"2.0","method":"notifications/resources/updated","params":{"uri":"test://text"}}`, string(c.recv()))
	files.Changed()
	assert.JSONEq(t, `{"jsonrpc":"2.0","method":"notifications/resources/updated","params":{"uri":"test://files/x?limit=2"}}`, string(c.recv()),
		"a template's change reaches the subscribers of its resources")

	c.send(request(5, "resources/unsubscribe", obj{"uri": "test://text"}))
	assert.JSONEq(t, `{}`, string(c.recvResponse().Result))
	text.Changed()
	_, err := prompt.Register(reg, prompt.Prompt[struct{}]{Name: "later"}, func(context.Context, struct{}) (string, error) { return "", nil })
	require.NoError(t, err)
	assert.JSONEq(t, `{"jsonrpc":"2.0","method":"notifications/prompts/list_changed","params":{}}`, string(c.recv()),
		"no update after unsubscribing; the new prompt is announced")
	assert.True(t, text.Remove())
	assert.False(t, text.Remove())
	assert.JSONEq(t, `{"jsonrpc":"2.0","method":"notifications/resources/list_changed","params":{}}`, string(c.recv()))
	c.send(request(6, "resources/read", obj{"uri": "test://text"}))
	assert.Equal(t, -32002, c.recvResponse().Error.Code, "a removed resource is gone")
	addTool(t, reg, "Late.Tool", func(context.Context, struct{}) (string, error) { return "", nil })
	assert.JSONEq(t, `{"jsonrpc":"2.0","method":"notifications/tools/list_changed","params":{}}`, string(c.recv()),
		"a change of the tools is announced too")
	require.NoError(t, c.closeAndWait())
	assert.Empty(t, c.rest())
}

// TestResourcePanics: a read, a prompt or a completion whose function
// panics is answered as an internal error, over stdio too, and the
// server goes on.
func TestResourcePanics(t *testing.T) {
	t.Parallel()
	reg := newRegistry(t)
	_, err := resource.Register(reg, resource.Resource{URI: "test://panics", Name: "panics"}, func(context.Context) (string, error) { panic("boom") })
	require.NoError(t, err)
	type arg struct {
		A string `json:"a" jsonschema:"description=Any."`
	}
	_, err = prompt.Register(reg, prompt.Prompt[arg]{Name: "panics", Complete: func(context.Context, string, string, arg) ([]string, error) { panic("boom") }},
		func(context.Context, arg) (string, error) { panic("boom") })
	require.NoError(t, err)
	c := startStdio(t, t.Context(), reg, nil)
	for i, req := range []string{
		request(1, "resources/read", obj{"uri": "test://panics"}),
		request(2, "prompts/get", obj{"name": "panics", "arguments": obj{"a": "x"}}),
		request(3, "completion/complete", obj{"ref": obj{"type": "ref/prompt", "name": "panics"}, "argument": obj{"name": "a", "value": ""}}),
	} {
		c.send(req)
		r := c.recvResponse()
		require.NotNil(t, r.Error, "request %d", i+1)
		assert.Equal(t, -32603, r.Error.Code)
		assert.Contains(t, r.Error.Message, "failed unexpectedly")
		assert.NotContains(t, r.Error.Message, "boom", "what it panicked with stays in the log")
	}
	c.send(request(4, "ping", nil))
	assert.JSONEq(t, `{}`, string(c.recvResponse().Result), "the server goes on")
}

// TestSubscriptionBound: one connection subscribes to at most 1000 URIs.
func TestSubscriptionBound(t *testing.T) {
	t.Parallel()
	reg, _, _ := resourceRegistry(t)
	c := startStdio(t, t.Context(), reg, nil)
	c.send(request(0, "initialize", obj{"protocolVersion": mcp.Version20251125, "capabilities": obj{}, "clientInfo": obj{"name": "t", "version": "1"}}))
	c.recvResponse()
	for i := range 1000 {
		c.send(request(i+1, "resources/subscribe", obj{"uri": fmt.Sprintf("test://files/f%d", i)}))
		require.Nil(t, c.recvResponse().Error)
	}
	c.send(request(2000, "resources/subscribe", obj{"uri": "test://files/one-more"}))
	e := c.recvResponse().Error
	require.NotNil(t, e)
	assert.Contains(t, e.Message, "subscribed to 1000 resources already")
	c.send(request(2001, "resources/subscribe", obj{"uri": "test://files/f3"}))
	assert.Nil(t, c.recvResponse().Error, "one subscribed already is not one more")
}
