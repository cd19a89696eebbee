package inspecttest

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/chromedp/cdproto/emulation"
	"github.com/chromedp/chromedp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/otcgo/otc"
	"github.com/otcgo/otc/client"
	"github.com/otcgo/otc/federation"
	"github.com/otcgo/otc/mcp"
	"github.com/otcgo/otc/mount"
)

// Filter is an item of SearchInput.Filters.
type Filter struct {
	Field string `json:"field" jsonschema:"description=The field to filter on."`
	Op    string `json:"op" jsonschema:"description=How to compare.,enum=eq,enum=ne"`
}

// SearchInput has a schema with each kind of field the form builds.
type SearchInput struct {
	Query   string   `json:"query" jsonschema:"description=What to look for.,minLength=1"`
	Limit   int      `json:"limit,omitempty" jsonschema:"description=How many results.,minimum=1,maximum=50,default=10"`
	Sort    string   `json:"sort,omitempty" jsonschema:"description=The order.,enum=relevance,enum=date"`
	Exact   bool     `json:"exact" jsonschema:"description=Match exactly."`
	Tags    []string `json:"tags,omitempty" jsonschema:"description=Tags to filter by."`
	Filters []Filter `json:"filters,omitempty" jsonschema:"description=Field filters."`
	Scope   struct {
		Site string `json:"site" jsonschema:"description=A site to search."`
	} `json:"scope" jsonschema:"description=Where to search."`
	Note *string `json:"note" jsonschema:"description=A note or null.,nullable"`
}

// tinyPNG is a 1×1 PNG.
var tinyPNG = []byte{0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0x00, 0x00, 0x00, 0x0d, 0x49, 0x48, 0x44, 0x52,
	0x00, 0x00, 0x00, 0x01, 0x00, 0x00, 0x00, 0x01, 0x08, 0x06, 0x00, 0x00, 0x00, 0x1f, 0x15, 0xc4, 0x89, 0x00, 0x00, 0x00,
	0x0d, 0x49, 0x44, 0x41, 0x54, 0x78, 0x9c, 0x63, 0xf8, 0xcf, 0xc0, 0xf0, 0x1f, 0x00, 0x05, 0x00, 0x01, 0xff, 0x89, 0x99,
	0x3d, 0x1d, 0x00, 0x00, 0x00, 0x00, 0x49, 0x45, 0x4e, 0x44, 0xae, 0x42, 0x60, 0x82}

// richServer serves, in this process, a tool whose input has every kind
// of field (it answers its input) and one that answers MCP content blocks.
func richServer() string {
	reg := otc.NewRegistry(nil)
	must := func(err error) {
		if err != nil {
			panic(err)
		}
	}
	must(otc.Register(reg, otc.Tool{ID: "Search.Echo", Version: "2.1.0", Description: "Answers its input."},
		func(_ context.Context, in SearchInput) (SearchInput, error) { return in, nil }))
	must(otc.Register(reg, otc.Tool{ID: "Media.Picture", Version: "1.0.0", Description: "Answers a caption and a picture."},
		func(context.Context, struct{}) (otc.Content, error) {
			return otc.Content{otc.TextContent("a dot"), otc.ImageContent(tinyPNG, "image/png")}, nil
		}))
	mux := http.NewServeMux()
	mux.Handle("/mcp", mcp.NewHandler(reg, nil))
	mux.Handle("/", otc.NewHandler(reg, nil))
	return httptest.NewServer(mux).URL // closed when the test binary exits
}

// TestInspect_Form fills a form of every kind of field, keeps the JSON
// view in step both ways, and sends it.
func TestInspect_Form(t *testing.T) {
	ctx := tab(t, false)
	openToolAt(t, ctx, env.rich, "otc", "Search.Echo@2.1.0")
	var limit, sortTag, raw string
	require.NoError(t, chromedp.Run(ctx,
		chromedp.Value(`input[name="limit"]`, &limit, chromedp.ByQuery),
		chromedp.Evaluate(`document.querySelector('[data-field="sort"] select').tagName`, &sortTag),
	))
	assert.Equal(t, "10", limit, "the default is filled in")
	assert.Equal(t, "SELECT", sortTag, "an enum is a menu")
	require.NoError(t, chromedp.Run(ctx, chromedp.Value(`#raw-json`, &raw, chromedp.ByQuery)))
	assert.JSONEq(t, `{"query":"","exact":false,"scope":{"site":""},"note":""}`, raw, "optional fields are left out until ticked")

	require.NoError(t, chromedp.Run(ctx,
		fill(`[data-field="query"] textarea, [data-field="query"] input`, "go"),
		fill(`input[name="limit"]`, "99"), // over the maximum: marked, still sent
		chromedp.Click(`[data-field="exact"] input[type=checkbox]:not(.include)`, chromedp.ByQuery),
		chromedp.Click(`button[aria-label="add item to tags"]`, chromedp.ByQuery),
		chromedp.Click(`button[aria-label="add item to tags"]`, chromedp.ByQuery),
		fill(`[data-field="tags.0"] textarea, [data-field="tags.0"] input`, "a"),
		fill(`[data-field="tags.1"] textarea, [data-field="tags.1"] input`, "b"),
		chromedp.Click(`button[aria-label="remove item of tags"]`, chromedp.ByQuery), // the first
		chromedp.Click(`button[aria-label="add item to filters"]`, chromedp.ByQuery),
		fill(`[data-field="filters.0.field"] textarea, [data-field="filters.0.field"] input`, "title"),
		chromedp.SetValue(`[data-field="filters.0.op"] select`, "1", chromedp.ByQuery),
		chromedp.Evaluate(`document.querySelector('[data-field="filters.0.op"] select').dispatchEvent(new Event('change', {bubbles: true}))`, nil),
		fill(`[data-field="scope.site"] textarea, [data-field="scope.site"] input`, "wiki"),
		chromedp.Click(`[data-field="note"] .nullbox`, chromedp.ByQuery),
	))
	assert.Contains(t, text(t, ctx, `.field-error.warn[data-path="limit"]`), "more than 50")
	assert.Equal(t, "b", value(t, ctx, `[data-field="tags.0"] textarea, [data-field="tags.0"] input`), "the items after a removed one move up")
	require.NoError(t, chromedp.Run(ctx, chromedp.Value(`#raw-json`, &raw, chromedp.ByQuery)))
	want := `{"query":"go","limit":99,"exact":true,"tags":["b"],"filters":[{"field":"title","op":"ne"}],"scope":{"site":"wiki"},"note":null}`
	assert.JSONEq(t, want, raw, "the JSON view follows the form")

	// The JSON view leads, and the form follows.
	require.NoError(t, chromedp.Run(ctx,
		chromedp.Click(`#mode-json`, chromedp.ByQuery),
		chromedp.Evaluate(`(() => { const r = document.querySelector('#raw-json'); r.value = JSON.stringify({query: "go", limit: 5, exact: true, scope: {site: "docs"}, note: "n"}); r.dispatchEvent(new Event('input')); })()`, nil),
		chromedp.Click(`#mode-form`, chromedp.ByQuery),
		chromedp.Value(`input[name="limit"]`, &limit, chromedp.ByQuery),
	))
	assert.Equal(t, "5", limit)
	assert.Equal(t, "docs", value(t, ctx, `[data-field="scope.site"] textarea, [data-field="scope.site"] input`))

	// Sent back as the server read it: limit 5 this time.
	require.NoError(t, chromedp.Run(ctx, fill(`input[name="limit"]`, "99"), call()))
	assert.Equal(t, "refused 422", text(t, ctx, `#result-status`))
	assert.Contains(t, text(t, ctx, `.field-error.server[data-path="limit"]`), "50")
	require.NoError(t, chromedp.Run(ctx, fill(`input[name="limit"]`, "7"), call()))
	var got map[string]any
	require.NoError(t, json.Unmarshal([]byte(text(t, ctx, `#result-value`)), &got))
	assert.Equal(t, map[string]any{"query": "go", "limit": 7.0, "exact": true, "scope": map[string]any{"site": "docs"}, "note": "n"}, got)
}

func value(t *testing.T, ctx context.Context, sel string) string {
	t.Helper()
	var v string
	require.NoError(t, chromedp.Run(ctx, chromedp.Value(sel, &v, chromedp.ByQuery)))
	return v
}

// TestInspect_ContentBlocks renders an MCP image block as an image, in a
// narrow dark window.
func TestInspect_ContentBlocks(t *testing.T) {
	ctx := tab(t, false)
	require.NoError(t, chromedp.Run(ctx,
		chromedp.EmulateViewport(480, 800),
		emulation.SetEmulatedMedia().WithFeatures([]*emulation.MediaFeature{{Name: "prefers-color-scheme", Value: "dark"}}),
	))
	openToolAt(t, ctx, env.rich, "mcp", "Media_Picture")
	require.NoError(t, chromedp.Run(ctx, call()))
	assert.Equal(t, "ok", text(t, ctx, `#result-status`))
	assert.Equal(t, "a dot", text(t, ctx, `#content-blocks pre.text`))
	var width int
	require.NoError(t, chromedp.Run(ctx, chromedp.WaitVisible(`#content-blocks img`, chromedp.ByQuery),
		chromedp.Evaluate(`document.querySelector('#content-blocks img').naturalWidth`, &width)))
	assert.Equal(t, 1, width, "the PNG decoded")
	var bg string
	require.NoError(t, chromedp.Run(ctx, chromedp.Evaluate(`getComputedStyle(document.body).backgroundColor`, &bg)))
	assert.Equal(t, "rgb(21, 24, 28)", bg, "dark, as the system is set")
	// Over OTC, a tool's otc.Content value is shown as blocks too.
	require.NoError(t, chromedp.Run(ctx,
		chromedp.Evaluate(`(() => { const s = document.querySelector('#server'); s.value = 'otc'; s.dispatchEvent(new Event('change')); })()`, nil),
		chromedp.WaitVisible(`#tools button[data-tool="Media.Picture@1.0.0"]`, chromedp.ByQuery),
		chromedp.WaitVisible(`#form`, chromedp.ByQuery), // the open tool followed the server
		call(),
		chromedp.WaitVisible(`#content-blocks img`, chromedp.ByQuery),
		chromedp.Evaluate(`document.querySelector('#content-blocks img').naturalWidth`, &width)))
	assert.Equal(t, 1, width)
	var overflow bool
	require.NoError(t, chromedp.Run(ctx, chromedp.Evaluate(`document.documentElement.scrollWidth > window.innerWidth`, &overflow)))
	assert.False(t, overflow, "nothing wider than a narrow window")
}

// gatewayServer serves, in this process, a federation of upstream's OTC
// handler under the name "rich", on every format, with its health at
// /federation/health as otc gateway serves it.
func gatewayServer(upstream string) (string, error) {
	reg := otc.NewRegistry(nil)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	fed, err := federation.Mount(ctx, reg, []federation.Upstream{{Name: "rich", URL: upstream, Format: client.FormatOTC}}, nil)
	if err != nil {
		return "", err
	}
	mux := http.NewServeMux()
	mount.All(mux, reg, nil)
	mux.Handle("/federation/health", fed)
	return httptest.NewServer(mux).URL, nil // closed when the test binary exits
}

// TestInspect_GatewayUpstream: on a gateway, a tool shows the upstream it
// is served from, with its format and state.
func TestInspect_GatewayUpstream(t *testing.T) {
	ctx := tab(t, false)
	openToolAt(t, ctx, env.gateway, "otc", "rich.Search_Echo@2.1.0")
	assert.Contains(t, text(t, ctx, `#upstream`), "served from")
	var badges []string
	require.NoError(t, chromedp.Run(ctx, chromedp.Evaluate(`[...document.querySelectorAll('#upstream .badge')].map(b => b.textContent)`, &badges)))
	assert.Equal(t, []string{"upstream rich", "otc", "up"}, badges)
	// A tool of a server that is no gateway shows none.
	openToolAt(t, ctx, env.rich, "otc", "Search.Echo@2.1.0")
	var n int
	require.NoError(t, chromedp.Run(ctx, chromedp.Evaluate(`document.querySelectorAll('#upstream').length`, &n)))
	assert.Zero(t, n)
}
