package mcp_test

// A tool's title, annotations, icons and _meta in tools/list, as each
// protocol version shapes them.

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/otcgo/otc"
	"github.com/otcgo/otc/internal/testkit"
	"github.com/otcgo/otc/mcp"
)

// The tools of testkit.NewMetaRegistry as tools/list shows them, without
// their input schemas, in 2025-11-25 and 2026-07-28.
const (
	listedAdd    = `{"name":"Calculator_Add","title":"Add two numbers","description":"Adds.","annotations":{"readOnlyHint":true}}`
	listedRefund = `{"name":"Payments_Refund","title":"Refund an order","description":"Refunds an order.",` +
		`"annotations":` + testkit.RefundAnnotations + `,"icons":` + testkit.RefundIcons + `,"_meta":` + testkit.RefundMeta + `}`
	listedNoop = `{"name":"Util_Noop","description":"Does nothing."}`
)

// listedRefund0618 is listedRefund in 2025-06-18, which has no icons.
const listedRefund0618 = `{"name":"Payments_Refund","title":"Refund an order","description":"Refunds an order.",` +
	`"annotations":` + testkit.RefundAnnotations + `,"_meta":` + testkit.RefundMeta + `}`

// withoutSchema returns a listed tool without its inputSchema, which the
// schema tests cover.
func withoutSchema(t testing.TB, tool map[string]json.RawMessage) string {
	t.Helper()
	assert.Contains(t, tool, "inputSchema")
	delete(tool, "inputSchema")
	b, err := json.Marshal(tool)
	require.NoError(t, err)
	return string(b)
}

func TestToolsListMetadata(t *testing.T) {
	t.Parallel()
	url := serve(t, testkit.NewMetaRegistry(t), nil)
	full := []string{listedAdd, listedRefund, listedNoop}
	for _, tc := range []struct {
		name   string
		params any
		hdr    map[string]string
		want   []string
	}{
		{"2026-07-28", obj{"_meta": modernMeta(nil)}, modernHeaders("tools/list", ""), full},
		{"2025-11-25", nil, map[string]string{"MCP-Protocol-Version": mcp.Version20251125}, full},
		{"2025-06-18", nil, map[string]string{"MCP-Protocol-Version": mcp.Version20250618}, []string{listedAdd, listedRefund0618, listedNoop}},
		// Without the header the version is unknown: listed as the latest
		// of the initialize era, as initialize answers.
		{"no_version_header", nil, map[string]string{"MCP-Protocol-Version": ""}, full},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			l, raw := listPage(t, url, tc.params, tc.hdr)
			if tc.params == nil {
				assert.Equal(t, []string{"tools"}, keys(object(t, raw)), "a list of the initialize era carries no 2026-07-28 fields")
			}
			require.Len(t, l.Tools, len(tc.want))
			for i, tool := range l.Tools {
				assert.JSONEq(t, tc.want[i], withoutSchema(t, tool))
			}
		})
	}
}

func TestToolsListMetadataOverStdio(t *testing.T) {
	t.Parallel()
	reg := testkit.NewMetaRegistry(t)
	for _, tc := range []struct {
		version string
		want    string
	}{
		{mcp.Version20250618, listedRefund0618},
		{mcp.Version20251125, listedRefund},
		// A version the server does not speak settles on 2025-11-25.
		{"2024-11-05", listedRefund},
	} {
		t.Run(tc.version, func(t *testing.T) {
			t.Parallel()
			c := startStdio(t, t.Context(), reg, nil)
			// Listed before initialize: the version is unknown.
			c.send(request(0, "tools/list", nil))
			assert.JSONEq(t, listedRefund, refundOf(t, c.recvResponse().Result))

			c.send(request(1, "initialize", obj{"protocolVersion": tc.version, "capabilities": obj{}, "clientInfo": obj{"name": "t", "version": "1"}}))
			require.Nil(t, c.recvResponse().Error)
			c.send(request(2, "tools/list", nil))
			assert.JSONEq(t, tc.want, refundOf(t, c.recvResponse().Result))
			// A 2026-07-28 request names its version itself.
			c.send(request(3, "tools/list", obj{"_meta": modernMeta(nil)}))
			assert.JSONEq(t, listedRefund, refundOf(t, c.recvResponse().Result))
		})
	}
}

// refundOf returns Payments_Refund from a tools/list result, without its
// input schema.
func refundOf(t testing.TB, result json.RawMessage) string {
	t.Helper()
	var l listResult
	require.NoError(t, json.Unmarshal(result, &l))
	for i, name := range toolNames(l) {
		if name == "Payments_Refund" {
			return withoutSchema(t, l.Tools[i])
		}
	}
	require.FailNow(t, "Payments_Refund is not listed", "%s", result)
	return ""
}

// The page cache serves every version from one build per revision: pages
// of one tool, the cursor of each version's pages, and a tool registered
// later with its metadata.
func TestToolsListMetadataPagesAndRevisions(t *testing.T) {
	t.Parallel()
	reg := testkit.NewMetaRegistry(t)
	url := serve(t, reg, &mcp.Options{PageSize: 1})
	pages := func(version string) []string {
		var out []string
		params := obj{}
		for range 10 {
			l, _ := listPage(t, url, params, map[string]string{"MCP-Protocol-Version": version})
			for _, tool := range l.Tools {
				out = append(out, withoutSchema(t, tool))
			}
			if l.NextCursor == nil {
				return out
			}
			params = obj{"cursor": *l.NextCursor}
		}
		require.FailNow(t, "the pages do not end")
		return nil
	}
	for range 2 { // each version twice, in turn, from the same cache
		got := pages(mcp.Version20250618)
		require.Len(t, got, 3)
		assert.JSONEq(t, listedRefund0618, got[1])
		got = pages(mcp.Version20251125)
		require.Len(t, got, 3)
		assert.JSONEq(t, listedRefund, got[1])
	}

	require.NoError(t, otc.Register(reg, otc.Tool{
		ID: "Util.Noop", Version: "2.0.0", Description: "Does nothing, newer.", Title: "Nothing",
		Icons: []otc.Icon{{Src: "https://example.com/noop.png"}},
	}, func(context.Context, struct{}) (otc.NoOutput, error) { return otc.NoOutput{}, nil }))
	got := pages(mcp.Version20251125)
	require.Len(t, got, 3)
	assert.JSONEq(t, `{"name":"Util_Noop","title":"Nothing","description":"Does nothing, newer.","icons":[{"src":"https://example.com/noop.png"}]}`, got[2])
	got = pages(mcp.Version20250618)
	require.Len(t, got, 3)
	assert.JSONEq(t, `{"name":"Util_Noop","title":"Nothing","description":"Does nothing, newer."}`, got[2])
}

func TestEncodeToolMetadata(t *testing.T) {
	t.Parallel()
	reg := testkit.NewMetaRegistry(t)
	url := serve(t, reg, nil)
	l, _ := listPage(t, url, nil, map[string]string{"MCP-Protocol-Version": mcp.Version20251125})
	defs := reg.Tools()
	require.Len(t, l.Tools, len(defs))
	for i, d := range defs { // catalog order is name order here
		b, err := json.Marshal(l.Tools[i])
		require.NoError(t, err)
		assert.JSONEq(t, string(b), string(mcp.EncodeTool(d)), "EncodeTool encodes what 2025-11-25 lists")
	}
}
