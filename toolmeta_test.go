package otc_test

import (
	"encoding/json"
	"io"
	"math"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/otcgo/otc"
	"github.com/otcgo/otc/internal/testkit"
)

func TestRegisterMetadataErrors(t *testing.T) {
	t.Parallel()
	const label = `"Payments.Refund@1.0.0"`
	with := func(change func(*otc.Tool)) otc.Tool {
		tool := testkit.RefundTool()
		change(&tool)
		return tool
	}
	icon := func(ic otc.Icon) otc.Tool {
		return with(func(t *otc.Tool) { t.Icons = []otc.Icon{{Src: testkit.IconPNG}, ic} })
	}
	metaKey := func(k string) otc.Tool { return with(func(t *otc.Tool) { t.Meta = map[string]any{k: "v"} }) }

	tests := []struct {
		name string
		tool otc.Tool
		// want are substrings the error must hold, besides the tool's
		// label: the field at fault, and what was wrong.
		want []string
	}{
		{"title_blank", with(func(t *otc.Tool) { t.Title = " \t" }), []string{"Title is blank"}},
		{"title_two_lines", with(func(t *otc.Tool) { t.Title = "Refund\nan order" }), []string{"Title", "control character"}},
		{"title_not_utf8", with(func(t *otc.Tool) { t.Title = "Refund \xff" }), []string{"Title", "UTF-8"}},

		{"read_only_and_destructive", with(func(t *otc.Tool) {
			t.Annotations = &otc.ToolAnnotations{ReadOnlyHint: new(true), DestructiveHint: new(true)}
		}), []string{"Annotations", "ReadOnlyHint", "DestructiveHint"}},
		{"read_only_not_idempotent", with(func(t *otc.Tool) {
			t.Annotations = &otc.ToolAnnotations{ReadOnlyHint: new(true), IdempotentHint: new(false)}
		}), []string{"Annotations", "ReadOnlyHint", "IdempotentHint"}},

		{"icon_src_empty", icon(otc.Icon{}), []string{"Icons[1].Src", "empty"}},
		{"icon_src_http", icon(otc.Icon{Src: "http://example.com/i.png"}), []string{"Icons[1].Src", `"http://example.com/i.png"`, "https"}},
		{"icon_src_javascript", icon(otc.Icon{Src: "javascript:alert(1)"}), []string{"Icons[1].Src", "https"}},
		{"icon_src_file", icon(otc.Icon{Src: "file:///etc/icon.png"}), []string{"Icons[1].Src", "https"}},
		{"icon_src_relative", icon(otc.Icon{Src: "/static/icon.png"}), []string{"Icons[1].Src", "https"}},
		{"icon_src_no_host", icon(otc.Icon{Src: "https:///icon.png"}), []string{"Icons[1].Src", "no host"}},
		{"icon_src_credentials", icon(otc.Icon{Src: "https://user:pw@example.com/i.png"}), []string{"Icons[1].Src", "credentials"}},
		{"icon_src_not_a_uri", icon(otc.Icon{Src: "https://exa mple.com/i.png"}), []string{"Icons[1].Src", "not a URI"}},
		{"icon_data_not_base64", icon(otc.Icon{Src: "data:image/svg+xml,<svg/>"}), []string{"Icons[1].Src", "base64 data: URI"}},
		{"icon_data_not_image", icon(otc.Icon{Src: "data:text/html;base64,PGI+"}), []string{"Icons[1].Src", "image type"}},
		{"icon_data_no_type", icon(otc.Icon{Src: "data:;base64,PGI+"}), []string{"Icons[1].Src", "image type"}},
		{"icon_data_bad_base64", icon(otc.Icon{Src: "data:image/png;base64,iVBOR@@"}), []string{"Icons[1].Src", "valid base64"}},
		{"icon_data_empty", icon(otc.Icon{Src: "data:image/png;base64,"}), []string{"Icons[1].Src", "no image"}},
		{"icon_mime_not_image", icon(otc.Icon{Src: testkit.IconPNG, MIMEType: "text/html"}), []string{"Icons[1].MIMEType", `"text/html"`}},
		{"icon_mime_malformed", icon(otc.Icon{Src: testkit.IconPNG, MIMEType: "image/"}), []string{"Icons[1].MIMEType", `"image/"`}},
		{"icon_size_one_number", icon(otc.Icon{Src: testkit.IconPNG, Sizes: []string{"48"}}), []string{"Icons[1].Sizes", `"48"`}},
		{"icon_size_units", icon(otc.Icon{Src: testkit.IconPNG, Sizes: []string{"48x48px"}}), []string{"Icons[1].Sizes", `"48x48px"`}},
		{"icon_size_zero", icon(otc.Icon{Src: testkit.IconPNG, Sizes: []string{"0x48"}}), []string{"Icons[1].Sizes", `"0x48"`}},
		{"icon_size_leading_zero", icon(otc.Icon{Src: testkit.IconPNG, Sizes: []string{"048x48"}}), []string{"Icons[1].Sizes", `"048x48"`}},
		{"icon_size_capital_x", icon(otc.Icon{Src: testkit.IconPNG, Sizes: []string{"48X48"}}), []string{"Icons[1].Sizes", `"48X48"`}},
		{"icon_size_empty", icon(otc.Icon{Src: testkit.IconPNG, Sizes: []string{""}}), []string{"Icons[1].Sizes", `""`}},
		{"icon_theme", icon(otc.Icon{Src: testkit.IconPNG, Theme: "Dark"}), []string{"Icons[1].Theme", `"Dark"`}},

		{"meta_key_empty", metaKey(""), []string{`Meta key ""`, "empty"}},
		{"meta_key_mcp_reserved", metaKey("io.modelcontextprotocol/ui"), []string{`"io.modelcontextprotocol/ui"`, "reserves"}},
		{"meta_key_mcp_short", metaKey("dev.mcp/x"), []string{`"dev.mcp/x"`, "reserves"}},
		{"meta_key_mcp_second_of_three", metaKey("com.mcp.tools/x"), []string{`"com.mcp.tools/x"`, "reserves"}},
		{"meta_key_mcp_first", metaKey("modelcontextprotocol.io/x"), []string{`"modelcontextprotocol.io/x"`, "reserves"}},
		{"meta_key_mcp_middle", metaKey("tools.mcp.com/x"), []string{`"tools.mcp.com/x"`, "reserves"}},
		{"meta_key_mcp_any_case", metaKey("io.ModelContextProtocol/x"), []string{`"io.ModelContextProtocol/x"`, "reserves"}},
		{"meta_key_library", metaKey("io.github.otcgo/scopes"), []string{`"io.github.otcgo/scopes"`, "this library"}},
		{"meta_key_empty_label", metaKey("com..example/x"), []string{`"com..example/x"`, "label"}},
		{"meta_key_empty_prefix", metaKey("/x"), []string{`"/x"`, "label"}},
		{"meta_key_label_digit_first", metaKey("1com.example/x"), []string{`"1com.example/x"`, "label"}},
		{"meta_key_label_hyphen_last", metaKey("com.example-/x"), []string{`"com.example-/x"`, "label"}},
		{"meta_key_label_underscore", metaKey("com.ex_ample/x"), []string{`"com.ex_ample/x"`, "label"}},
		{"meta_key_name_hyphen_first", metaKey("com.example/-x"), []string{`"com.example/-x"`, "name"}},
		{"meta_key_name_dot_last", metaKey("owner."), []string{`"owner."`, "name"}},
		{"meta_key_two_slashes", metaKey("com.example/a/b"), []string{`"com.example/a/b"`, "name"}},
		{"meta_key_space", metaKey("owner name"), []string{`"owner name"`, "name"}},
		{"meta_value_func", with(func(t *otc.Tool) { t.Meta = map[string]any{"com.example/f": func() {}} }), []string{`Meta["com.example/f"]`, "JSON"}},
		{"meta_value_inf", with(func(t *otc.Tool) { t.Meta = map[string]any{"ok": 1, "com.example/n": math.Inf(1)} }), []string{`Meta["com.example/n"]`, "JSON"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			reg := otc.NewRegistry(nil)
			err := otc.Register(reg, tt.tool, regNop[regValidInput, float64])
			require.Error(t, err)
			msg := err.Error()
			assert.True(t, strings.HasPrefix(msg, "otc: tool "+label+": "), "error %q does not start by naming the tool", msg)
			for _, w := range tt.want {
				assert.Contains(t, msg, w)
			}
			assert.Empty(t, reg.Tools(), "a failed registration must leave the registry unchanged")
		})
	}
}

func TestRegisterMetadataAccepted(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name   string
		change func(*otc.Tool)
	}{
		{"every_field", func(*otc.Tool) {}},
		{"nothing", func(t *otc.Tool) { t.Title, t.Annotations, t.Icons, t.Meta = "", nil, nil, nil }},
		{"read_only_consistent", func(t *otc.Tool) {
			t.Annotations = &otc.ToolAnnotations{ReadOnlyHint: new(true), DestructiveHint: new(false), IdempotentHint: new(true)}
		}},
		{"not_read_only_any_hints", func(t *otc.Tool) {
			t.Annotations = &otc.ToolAnnotations{ReadOnlyHint: new(false), DestructiveHint: new(false), IdempotentHint: new(true), OpenWorldHint: new(true)}
		}},
		{"title_with_unicode", func(t *otc.Tool) { t.Title = "Rückerstattung – Bestellung" }},
		{"icon_https_with_query", func(t *otc.Tool) {
			t.Icons = []otc.Icon{{Src: "HTTPS://cdn.example.com:8443/i.png?v=2#x", Theme: "dark", MIMEType: "image/png; charset=binary"}}
		}},
		{"icon_data_svg_with_parameter", func(t *otc.Tool) {
			t.Icons = []otc.Icon{{Src: "DATA:image/svg+xml;charset=utf-8;base64,PHN2Zy8+", Sizes: []string{"any", "16x16", "1024x768"}}}
		}},
		{"icon_data_type_any_case", func(t *otc.Tool) {
			t.Icons = []otc.Icon{{Src: "data:Image/PNG;base64,iVBORw0KGgo="}} // media types are case-insensitive
		}},
		{"meta_keys", func(t *otc.Tool) {
			t.Meta = map[string]any{
				"owner":                "no prefix",
				"com.example/":         "a prefix and an empty name",
				"com.example.mcp/x":    "mcp as the last label is not reserved",
				"mcp/x":                "nor as the only one",
				"io.github.example/x":  "another project's prefix",
				"a1.b-2.C3/x_y.z-9":    "labels and names with every allowed character",
				"com.example/nested":   map[string]any{"list": []any{1, "two", nil}},
				"com.example/raw":      json.RawMessage(`{"b":1,"a":[true]}`),
				"com.example/big":      uint64(math.MaxUint64),
				"com.example/html":     "<b>&</b>",
				"com.example/struct":   struct{ A int }{A: 1},
				"com.example/nil-only": nil,
			}
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			tool := testkit.RefundTool()
			tt.change(&tool)
			reg := otc.NewRegistry(nil)
			require.NoError(t, otc.Register(reg, tool, regNop[regValidInput, float64]))
		})
	}
}

func TestToolMetadataInDefinition(t *testing.T) {
	t.Parallel()
	reg := otc.NewRegistry(nil)
	tool := testkit.RefundTool()
	tool.Meta["audited"] = true // sorted first
	require.NoError(t, otc.Register(reg, tool, regNop[regValidInput, float64]))
	plain := otc.Tool{ID: "Calculator.Add", Version: "1.0.0", Description: "Adds.",
		Annotations: &otc.ToolAnnotations{}, Icons: []otc.Icon{}, Meta: map[string]any{}}
	require.NoError(t, otc.Register(reg, plain, regNop[regValidInput, float64]))

	// The caller's values change after registration; the registry's do not.
	*tool.Annotations.DestructiveHint = false
	tool.Annotations.OpenWorldHint = nil
	tool.Icons[1].Sizes[0] = "1x1"
	tool.Icons[0].Src = "https://evil.example/"
	tool.Meta["com.example/owner"] = "someone else"

	defs := reg.Tools()
	require.Len(t, defs, 2)
	add, refund := defs[0], defs[1]
	assert.Empty(t, add.Title)
	assert.Nil(t, add.Annotations, "annotations that state nothing are none")
	assert.Nil(t, add.Icons, "an empty list of icons is none")
	assert.Nil(t, add.Meta, "an empty _meta is none")

	assert.Equal(t, "Refund an order", refund.Title)
	assert.Equal(t, &otc.ToolAnnotations{
		ReadOnlyHint: new(false), DestructiveHint: new(true), IdempotentHint: new(false), OpenWorldHint: new(false),
	}, refund.Annotations)
	assert.Equal(t, []otc.Icon{
		{Src: "https://example.com/refund.svg", MIMEType: "image/svg+xml", Sizes: []string{"any"}, Theme: "light"},
		{Src: testkit.IconPNG, Sizes: []string{"48x48"}},
	}, refund.Icons)
	assert.JSONEq(t, `{"audited":true,"com.example/owner":"payments","com.example/tier":2}`, string(refund.Meta))
	assert.Equal(t, `{"audited":true,"com.example/owner":"payments","com.example/tier":2}`, string(refund.Meta), "keys sorted, compact")

	// Tools returns copies: changing one does not reach the next call, nor
	// what Lookup returns.
	*refund.Annotations.ReadOnlyHint = true
	refund.Annotations.IdempotentHint = nil
	refund.Icons[0].Sizes[0] = "16x16"
	refund.Icons[1].Theme = "dark"
	refund.Meta[2] = 'X'
	again := reg.Tools()[1]
	for _, d := range []*otc.ToolDefinition{&again, lookup(t, reg, "Payments.Refund")} {
		assert.Equal(t, new(false), d.Annotations.ReadOnlyHint)
		assert.Equal(t, new(false), d.Annotations.IdempotentHint)
		assert.Equal(t, "any", d.Icons[0].Sizes[0])
		assert.Empty(t, d.Icons[1].Theme)
		assert.Equal(t, `{"audited":true,"com.example/owner":"payments","com.example/tier":2}`, string(d.Meta))
	}
}

func lookup(t *testing.T, reg *otc.Registry, id string) *otc.ToolDefinition {
	t.Helper()
	d, err := reg.Lookup(id, "")
	require.NoError(t, err)
	return d
}

// The OTC catalog's ToolDefinition allows no members but its own
// (additionalProperties: false in the OXP OpenAPI file), so a tool's
// title, annotations, icons and _meta stay out of GET /tools.
func TestOTCCatalogLeavesToolMetadataOut(t *testing.T) {
	t.Parallel()
	bare := otc.NewRegistry(nil)
	tool := testkit.RefundTool()
	require.NoError(t, otc.Register(bare, otc.Tool{ID: tool.ID, Version: tool.Version, Description: tool.Description},
		regNop[regValidInput, float64]))
	annotated := otc.NewRegistry(nil)
	require.NoError(t, otc.Register(annotated, tool, regNop[regValidInput, float64]))

	get := func(reg *otc.Registry) string {
		srv := httptest.NewServer(otc.NewHandler(reg, nil))
		defer srv.Close()
		resp, err := http.Get(srv.URL + "/tools")
		require.NoError(t, err)
		defer resp.Body.Close()
		require.Equal(t, http.StatusOK, resp.StatusCode)
		b, err := io.ReadAll(resp.Body)
		require.NoError(t, err)
		return string(b)
	}
	want := get(bare)
	assert.Equal(t, want, get(annotated))
	for _, field := range []string{"title", "annotations", "Hint", "icons", "_meta", "com.example"} {
		assert.NotContains(t, want, field)
	}
}
