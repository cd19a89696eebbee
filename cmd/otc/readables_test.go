package main

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/otcgo/otc"
	"github.com/otcgo/otc/internal/testkit"
	"github.com/otcgo/otc/mcp"
	"github.com/otcgo/otc/prompt"
	"github.com/otcgo/otc/resource"
)

// readablesServer serves over MCP a resource, a binary one, a template
// and a prompt, one of whose names carries a terminal escape.
func readablesServer(t *testing.T) string {
	t.Helper()
	reg := otc.NewRegistry(nil)
	_, err := resource.Register(reg, resource.Resource{URI: "notes://today", Name: "today\x1b[31m", Description: "Today's notes."},
		func(context.Context) (string, error) { return "# Today\n- ship", nil })
	require.NoError(t, err)
	_, err = resource.Register(reg, resource.Resource{URI: "notes://logo", Name: "logo", MIMEType: "image/png"},
		func(context.Context) ([]byte, error) { return []byte{1, 2, 3}, nil })
	require.NoError(t, err)
	type day struct {
		N int `json:"n" jsonschema:"required,description=A day."`
	}
	_, err = resource.RegisterTemplate(reg, resource.Template[day]{URITemplate: "notes://days/{n}", Name: "day"},
		func(_ context.Context, in day) (day, error) { return in, nil })
	require.NoError(t, err)
	type review struct {
		Code string `json:"code" jsonschema:"required,description=The code."`
		Tone string `json:"tone,omitempty" jsonschema:"description=The tone."`
	}
	_, err = prompt.Register(reg, prompt.Prompt[review]{Name: "review", Description: "Reviews code."},
		func(_ context.Context, in review) ([]prompt.Message, error) {
			return []prompt.Message{
				{Role: prompt.User, Content: otc.TextContent("Review " + in.Code + " " + in.Tone)},
				{Role: prompt.Assistant, Content: otc.ImageContent([]byte{1, 2}, "image/png")},
			}, nil
		})
	require.NoError(t, err)
	srv := httptest.NewServer(mcp.NewHandler(reg, nil))
	t.Cleanup(srv.Close)
	return srv.URL
}

func TestReadables(t *testing.T) {
	t.Parallel()
	url := readablesServer(t)
	for name, tc := range map[string]struct {
		args           []string
		code           int
		stdout, stderr string
	}{
		"resources": {[]string{"resources", "URL"}, exitOK,
			"URI               NAME        TYPE       DESCRIPTION\n" +
				"notes://logo      logo        image/png  \n" +
				"notes://today     today?[31m             Today's notes.\n" +
				"notes://days/{n}  day                    \n", ""},
		"resources_json": {[]string{"resources", "URL", "--json"}, exitOK, `"uriTemplate": "notes://days/{n}"`, ""},
		"read":           {[]string{"read", "URL", "notes://today"}, exitOK, "# Today\n- ship\n", ""},
		"read_template":  {[]string{"read", "URL", "notes://days/7"}, exitOK, `{"n":7}` + "\n", ""},
		"read_binary":    {[]string{"read", "URL", "notes://logo"}, exitOK, "", "notes://logo is 3 bytes of image/png, not text: --json prints them in base64"},
		"read_not_found": {[]string{"read", "URL", "notes://nothing"}, exitRefused, "", "Resource not found: nothing is at notes://nothing"},
		"read_bad_value": {[]string{"read", "URL", "notes://days/seven"}, exitBadInput, "", `"seven" is not an integer`},
		"prompts":        {[]string{"prompts", "URL"}, exitOK, "NAME    ARGUMENTS   DESCRIPTION\nreview  code* tone  Reviews code.\n", ""},
		"prompt":         {[]string{"prompt", "URL", "review", "code=x", "tone=kind"}, exitOK, "user: Review x kind\nassistant: [image, 2 bytes of image/png]\n", ""},
		"prompt_missing": {[]string{"prompt", "URL", "review"}, exitBadInput, "", "code: Is required"},
		"prompt_pair":    {[]string{"prompt", "URL", "review", "code"}, exitBadInput, "", `"code" is not key=value`},
		"prompt_unknown": {[]string{"prompt", "URL", "nope"}, exitBadInput, "", `no prompt is named "nope"`},
		"not_mcp":        {[]string{"resources", "--rest", "URL"}, exitBadInput, "", "only MCP servers have resources and prompts"},
		"no_url":         {[]string{"read"}, exitBadInput, "", "want URL (or --stdio COMMAND) and the URI to read"},
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			code, stdout, stderr := otcRun(t, url, "", nil, tc.args...)
			assert.Equal(t, tc.code, code, "stderr: %s", stderr)
			if tc.stdout == "" {
				assert.Empty(t, stdout)
			} else if strings.HasPrefix(tc.stdout, `"`) || strings.HasPrefix(tc.stdout, `{`) {
				assert.Contains(t, stdout, tc.stdout)
			} else {
				assert.Equal(t, tc.stdout, stdout)
			}
			if tc.stderr != "" {
				assert.Contains(t, stderr, tc.stderr)
			}
			assert.NotContains(t, stdout, "\x1b", "no terminal escape of the server's reaches the terminal")
		})
	}
}

// TestInspect_Readables: the inspector's API of resources and prompts:
// lists, a read, a refusal as the server answered it, a completion, a
// render, and what it refuses itself (a server that is not MCP, a body
// it does not take).
func TestInspect_Readables(t *testing.T) {
	mcpURL := readablesServer(t)
	a := newInspectAPI(t, startInspect(t, nil, "--mcp", mcpURL))
	resp, body := a.do(t, "GET", "/api/readables?server=mcp", "", nil)
	require.Equal(t, http.StatusOK, resp.StatusCode, body)
	assert.Contains(t, body, `"uriTemplate":"notes://days/{n}"`)
	assert.Contains(t, body, `"name":"review"`)

	resp, body = a.do(t, "POST", "/api/read", `{"server":"mcp","uri":"notes://days/3"}`, nil)
	require.Equal(t, http.StatusOK, resp.StatusCode, body)
	assert.JSONEq(t, `{"contents":[{"uri":"notes://days/3","mimeType":"application/json","text":"{\"n\":3}"}]}`, body)
	resp, body = a.do(t, "POST", "/api/read", `{"server":"mcp","uri":"notes://days/x"}`, nil)
	assert.Equal(t, http.StatusBadGateway, resp.StatusCode)
	assert.Contains(t, body, `"code":"rpc"`)
	assert.Contains(t, body, "is not an integer")

	resp, body = a.do(t, "POST", "/api/complete", `{"server":"mcp","ref":{"type":"ref/prompt","name":"review"},"argument":"code","value":""}`, nil)
	require.Equal(t, http.StatusOK, resp.StatusCode, body)
	assert.JSONEq(t, `{"values":[],"more":false}`, body)
	resp, body = a.do(t, "POST", "/api/prompt", `{"server":"mcp","name":"review","arguments":{"code":"x"}}`, nil)
	require.Equal(t, http.StatusOK, resp.StatusCode, body)
	assert.Contains(t, body, `"text":"Review x "`)

	resp, body = a.do(t, "POST", "/api/read", `{"server":"otc","uri":"notes://days/3"}`, nil)
	assert.Equal(t, http.StatusBadRequest, resp.StatusCode, body)
	assert.Contains(t, body, "not an MCP server")
	resp, body = a.do(t, "POST", "/api/read", `{"server":"mcp","url":"x"}`, nil)
	assert.Equal(t, http.StatusBadRequest, resp.StatusCode, body)
	resp, _ = a.do(t, "GET", "/api/read", "", nil)
	assert.Equal(t, http.StatusMethodNotAllowed, resp.StatusCode)
}

// TestWatch: otc watch subscribes to each URI (over subscriptions/listen
// in 2026-07-28, resources/subscribe over stdio before it), prints the new
// contents at each update, and ends cleanly when interrupted; a URI the
// server will not tell of is refused, saying so.
func TestWatch(t *testing.T) {
	t.Parallel()
	reg := otc.NewRegistry(nil)
	var n atomic.Int64
	h, err := resource.Register(reg, resource.Resource{URI: "calc://memory", Name: "memory"},
		func(context.Context) (string, error) { return fmt.Sprintf("value %d", n.Load()), nil })
	require.NoError(t, err)
	srv := httptest.NewServer(mcp.NewHandler(reg, nil))
	t.Cleanup(srv.Close)

	ctx, cancel := context.WithCancel(t.Context())
	var stdout, stderr testkit.SyncBuffer
	done := make(chan int, 1)
	go func() {
		done <- run(ctx, []string{"watch", srv.URL, "calc://memory"}, strings.NewReader(""), &stdout, &stderr, func(string) string { return "" })
	}()
	require.Eventually(t, func() bool { return strings.Contains(stderr.String(), "watching 1 resource") }, 10*time.Second, 5*time.Millisecond, "stderr: %s", stderr.String())
	for i := int64(1); i <= 2; i++ {
		n.Store(i)
		h.Changed()
		want := fmt.Sprintf("== calc://memory\nvalue %d\n", i)
		require.Eventually(t, func() bool { return strings.Contains(stdout.String(), want) }, 10*time.Second, 5*time.Millisecond, "stdout: %s", stdout.String())
	}
	cancel()
	select {
	case code := <-done:
		assert.Equal(t, exitOK, code)
	case <-time.After(10 * time.Second):
		t.Fatal("otc watch did not end when interrupted")
	}

	code, _, errOut := otcRun(t, srv.URL, "", nil, "watch", "URL", "calc://nothing")
	assert.Equal(t, exitRefused, code)
	assert.Contains(t, errOut, "does not tell of this URI: calc://nothing")
}
