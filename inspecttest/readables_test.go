package inspecttest

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// openReadables loads the page and chooses the calculator's MCP server,
// whose resources, templates and prompts are listed beside its tools.
func openReadables(t *testing.T) context.Context {
	t.Helper()
	c := tab(t, false)
	require.NoError(t, chromedp.Run(c,
		chromedp.Navigate(env.page),
		chromedp.WaitVisible(`#tools .tool-item`, chromedp.ByQuery),
		chromedp.Evaluate(`(() => { const s = document.querySelector('#server'); s.value = 'mcp'; s.dispatchEvent(new Event('change')); })()`, nil),
		chromedp.WaitVisible(`#tools button[data-resource="calc://constants"]`, chromedp.ByQuery),
	))
	return c
}

// TestInspect_Resources: the page lists the calculator's resources and
// templates, reads one, fills a template's variables (completed as one
// types) into its URI and reads it, and shows a refusal naming the
// variable.
func TestInspect_Resources(t *testing.T) {
	ctx := openReadables(t)
	nav := text(t, ctx, `#tools`)
	for _, want := range []string{"RESOURCES", "calc://constants", "calc://tables/{op}/{n}{?upto}", "calc://notes/{path*}", "PROMPTS", "explain_expression"} {
		assert.Contains(t, nav, want)
	}
	require.NoError(t, chromedp.Run(ctx,
		chromedp.Click(`#tools button[data-resource="calc://constants"]`, chromedp.ByQuery),
		chromedp.WaitVisible(`#read`, chromedp.ByQuery),
		chromedp.Click(`#read`, chromedp.ByQuery),
		chromedp.WaitVisible(`#contents`, chromedp.ByQuery),
	))
	assert.Contains(t, text(t, ctx, `#contents`), `"pi":3.14159`)

	require.NoError(t, chromedp.Run(ctx,
		chromedp.Click(`#tools button[data-resource="calc://tables/{op}/{n}{?upto}"]`, chromedp.ByQuery),
		chromedp.WaitVisible(`#var-op`, chromedp.ByQuery),
		chromedp.SendKeys(`#var-op`, "mu", chromedp.ByQuery),
	))
	// The server completes "mu" to "multiply", in the field's datalist.
	var options string
	require.NoError(t, chromedp.Run(ctx, chromedp.Poll(`(() => { const o = [...document.querySelectorAll('#var-op-values option')].map(o => o.value).join(','); return o || null; })()`,
		&options, chromedp.WithPollingInterval(50*time.Millisecond), chromedp.WithPollingTimeout(10*time.Second))))
	assert.Equal(t, "multiply", options)
	require.NoError(t, chromedp.Run(ctx,
		fill(`#var-op`, "multiply"),
		fill(`#var-n`, "6"),
		fill(`#var-upto`, "2"),
	))
	var uri string
	require.NoError(t, chromedp.Run(ctx, chromedp.Value(`#resource-uri`, &uri, chromedp.ByQuery)))
	assert.Equal(t, "calc://tables/multiply/6?upto=2", uri, "the variables expand into the URI")
	require.NoError(t, chromedp.Run(ctx, chromedp.Click(`#read`, chromedp.ByQuery), chromedp.WaitVisible(`#contents`, chromedp.ByQuery)))
	assert.Contains(t, text(t, ctx, `#contents`), "6 × 2 = 12")

	require.NoError(t, chromedp.Run(ctx,
		fill(`#resource-uri`, "calc://tables/divide/6"),
		chromedp.Click(`#read`, chromedp.ByQuery),
		chromedp.WaitVisible(`#result .refused`, chromedp.ByQuery),
	))
	assert.Contains(t, text(t, ctx, `#result .refused`), "op")
}

// TestInspect_Prompt: the page renders the calculator's prompt from its
// arguments' fields, an enum argument completed by the server.
func TestInspect_Prompt(t *testing.T) {
	ctx := openReadables(t)
	require.NoError(t, chromedp.Run(ctx,
		chromedp.Click(`#tools button[data-prompt="explain_expression"]`, chromedp.ByQuery),
		chromedp.WaitVisible(`#arg-expression`, chromedp.ByQuery),
		chromedp.SendKeys(`#arg-audience`, "e", chromedp.ByQuery),
	))
	var options string
	require.NoError(t, chromedp.Run(ctx, chromedp.Poll(`(() => { const o = [...document.querySelectorAll('#arg-audience-values option')].map(o => o.value).join(','); return o || null; })()`,
		&options, chromedp.WithPollingInterval(50*time.Millisecond), chromedp.WithPollingTimeout(10*time.Second))))
	assert.Equal(t, "engineer", options)
	require.NoError(t, chromedp.Run(ctx,
		fill(`#arg-expression`, "2 * (3 + 4)"),
		fill(`#arg-audience`, "engineer"),
		chromedp.Click(`#get-prompt`, chromedp.ByQuery),
		chromedp.WaitVisible(`#messages`, chromedp.ByQuery),
	))
	msg := text(t, ctx, `#messages`)
	assert.True(t, strings.HasPrefix(msg, "user"), msg)
	assert.Contains(t, msg, fmt.Sprintf("for a %s, how %s is evaluated", "engineer", "2 * (3 + 4)"))
}
