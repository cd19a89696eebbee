package otc_test

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/otcgo/otc"
)

// newVersionedRegistry registers Calculator.Add at each version; each
// version's function returns its own version string, so a call shows which
// one ran.
func newVersionedRegistry(t *testing.T, versions ...string) *otc.Registry {
	t.Helper()
	reg := otc.NewRegistry(nil)
	for _, v := range versions {
		err := otc.Register(reg, otc.Tool{ID: "Calculator.Add", Version: v, Description: "Adds two numbers together."},
			func(ctx context.Context, _ otc.NoOutput) (string, error) {
				return v, nil
			})
		require.NoError(t, err, v)
	}
	return reg
}

// calledVersion calls toolID and returns the version that ran.
func calledVersion(t *testing.T, reg *otc.Registry, toolID string) (string, error) {
	t.Helper()
	res, err := reg.Call(context.Background(), &otc.CallRequest{ToolID: toolID})
	if err != nil {
		return "", err
	}
	require.Nil(t, res.Error)
	var v string
	require.NoError(t, json.Unmarshal(res.Value, &v))
	return v, nil
}

func TestVersionResolution(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name       string
		registered []string
		toolID     string
		want       string // the version that runs; "" for not found
	}{
		// SPEC §5, rule by rule.
		{"exact", []string{"1.0.0", "1.2.0", "2.0.0"}, "Calculator.Add@1.2.0", "1.2.0"},
		{"exact_zero", []string{"0.0.0", "0.1.0"}, "Calculator.Add@0.0.0", "0.0.0"},
		{"shorthand_is_x_0_0", []string{"1.0.0", "1.2.0", "2.0.0"}, "Calculator.Add@1", "1.0.0"},
		{"shorthand_zero", []string{"0.0.0", "0.1.0"}, "Calculator.Add@0", "0.0.0"},
		// "@1" means 1.0.0, not the latest 1.x.
		{"shorthand_not_latest_minor", []string{"1.2.0", "2.0.0"}, "Calculator.Add@1", ""},
		{"shorthand_not_patch", []string{"1.0.1"}, "Calculator.Add@1", ""},
		{"latest", []string{"1.0.0", "2.0.0", "1.5.0"}, "Calculator.Add", "2.0.0"},
		{"latest_numeric_major", []string{"9.0.0", "10.0.0", "2.0.0"}, "Calculator.Add", "10.0.0"},
		{"latest_numeric_minor", []string{"1.9.0", "1.10.0"}, "Calculator.Add", "1.10.0"},
		{"latest_numeric_patch", []string{"1.0.9", "1.0.10", "1.0.2"}, "Calculator.Add", "1.0.10"},
		{"latest_single", []string{"0.1.0"}, "Calculator.Add", "0.1.0"},
		{"exact_missing", []string{"1.0.0"}, "Calculator.Add@2.0.0", ""},
		{"shorthand_missing", []string{"1.0.0"}, "Calculator.Add@2", ""},
		{"big_numbers", []string{"99999999999999999999.0.0", "100000000000000000000.0.0"}, "Calculator.Add", "100000000000000000000.0.0"},
		{"big_shorthand", []string{"99999999999999999999.0.0"}, "Calculator.Add@99999999999999999999", "99999999999999999999.0.0"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			reg := newVersionedRegistry(t, tt.registered...)
			got, err := calledVersion(t, reg, tt.toolID)
			if tt.want != "" {
				require.NoError(t, err)
				assert.Equal(t, tt.want, got)
				return
			}
			require.ErrorIs(t, err, otc.ErrToolNotFound)
			var e *otc.Error
			require.ErrorAs(t, err, &e)
			assert.Equal(t, otc.CodeServerError, e.Code)
			// The seed's wording: the message names the tool for a user,
			// the developer message the version and what is available.
			assert.Equal(t, "Tool 'Calculator_Add' was not found", e.Message)
			_, asked, _ := strings.Cut(tt.toolID, "@")
			if !strings.Contains(asked, ".") {
				asked += ".0.0"
			}
			assert.Contains(t, e.DeveloperMessage, "Calculator.Add version "+asked+" is not available")
		})
	}
}

func TestVersionNotFoundMatchesSeed(t *testing.T) {
	t.Parallel()
	reg := newVersionedRegistry(t, "1.0.0")
	_, err := reg.Call(context.Background(), &otc.CallRequest{ToolID: "Calculator.Add@2.0.0", CallID: "123e4567-e89b-12d3-a456-426614174000"})
	var e *otc.Error
	require.ErrorAs(t, err, &e)
	// 002_…, "Server Error" example.
	assert.Equal(t, "Tool 'Calculator_Add' was not found", e.Message)
	assert.True(t, strings.HasPrefix(e.DeveloperMessage, "Calculator.Add version 2.0.0 is not available"), e.DeveloperMessage)
}

func TestUnknownTool(t *testing.T) {
	t.Parallel()
	reg := newVersionedRegistry(t, "1.0.0")
	for _, id := range []string{"Calculator.Sub", "Calculator.Sub@1.0.0", "Other.Add@1", "calculator.add"} {
		t.Run(id, func(t *testing.T) {
			t.Parallel()
			_, err := calledVersion(t, reg, id)
			require.ErrorIs(t, err, otc.ErrToolNotFound)
			var e *otc.Error
			require.ErrorAs(t, err, &e)
			assert.Equal(t, otc.CodeServerError, e.Code)
			key, _, _ := strings.Cut(id, "@")
			assert.True(t, strings.HasPrefix(e.Message, "Tool '"+strings.Replace(key, ".", "_", 1)+"' was not found"), e.Message)
			assert.Contains(t, e.DeveloperMessage, key)
			if id == "calculator.add" {
				assert.Contains(t, e.Message, "(did you mean 'Calculator.Add'?)", "the id it meant, by case")
			} else {
				assert.NotContains(t, e.Message, "did you mean", "nothing near enough")
			}
		})
	}
}

func TestMalformedToolIDs(t *testing.T) {
	t.Parallel()
	reg := newVersionedRegistry(t, "1.0.0")
	tests := map[string]string{
		"two_part_version":   "Calculator.Add@1.0",
		"v_prefix":           "Calculator.Add@v1",
		"v_prefix_full":      "Calculator.Add@v1.0.0",
		"prerelease":         "Calculator.Add@1.0.0-beta",
		"build_metadata":     "Calculator.Add@1.0.0+build",
		"latest_keyword":     "Calculator.Add@latest",
		"empty_version":      "Calculator.Add@",
		"two_versions":       "Calculator.Add@1@1",
		"four_part_version":  "Calculator.Add@1.0.0.0",
		"leading_zero":       "Calculator.Add@01.0.0",
		"leading_zero_short": "Calculator.Add@01",
		"negative":           "Calculator.Add@-1",
		"space_in_version":   "Calculator.Add@ 1",
		"empty_tool":         "Calculator.",
		"empty_toolkit":      ".Add",
		"no_dot":             "CalculatorAdd",
		"three_parts":        "Math.Calculator.Add",
		"empty":              "",
		"only_at":            "@1.0.0",
		"dash":               "Calculator.Add-x",
		"space":              " Calculator.Add",
		"trailing_newline":   "Calculator.Add\n",
		"unicode":            "Calculatör.Add",
		"name_not_id":        "Calculator_Add",
		"too_long":           "Calculator." + strings.Repeat("A", 250),
		"too_long_version":   "Calculator.Add@" + strings.Repeat("1", 250),
	}
	for name, id := range tests {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			_, err := calledVersion(t, reg, id)
			require.Error(t, err)
			var e *otc.Error
			require.ErrorAs(t, err, &e)
			assert.Equal(t, otc.CodeServerError, e.Code)
			assert.False(t, errors.Is(err, otc.ErrToolNotFound), "a malformed id is not a missing tool")
			assert.Contains(t, e.Message, "malformed")
			assert.LessOrEqual(t, len(e.Message), 200, "the message must not echo a huge id in full")
		})
	}
}

func TestMalformedToolIDNamesTheIDWhenGivenAName(t *testing.T) {
	t.Parallel()
	reg := newVersionedRegistry(t, "1.0.0")
	_, err := calledVersion(t, reg, "Calculator_Add")
	var e *otc.Error
	require.ErrorAs(t, err, &e)
	// A client that sends the name instead of the id learns which id it meant.
	assert.Contains(t, e.DeveloperMessage, "Calculator.Add")
}

func TestToolIDLengthBoundary(t *testing.T) {
	t.Parallel()
	// The longest id and version the registry accepts (256 bytes in all)
	// must also be callable, in every form.
	tool := "T" + strings.Repeat("a", 247) // "K." + tool + "@1.0.0" is 256 bytes
	id := "K." + tool
	require.Len(t, id+"@1.0.0", 256)
	reg := otc.NewRegistry(nil)
	require.NoError(t, otc.Register(reg, otc.Tool{ID: id, Version: "1.0.0", Description: "Long.", Name: "long"},
		func(context.Context, otc.NoOutput) (int, error) { return 1, nil }))
	for _, call := range []string{id, id + "@1", id + "@1.0.0"} {
		_, err := reg.Call(context.Background(), &otc.CallRequest{ToolID: call})
		assert.NoError(t, err, "%d bytes", len(call))
	}
	// One byte more is refused at registration.
	err := otc.Register(reg, otc.Tool{ID: id + "b", Version: "1.0.0", Description: "Long.", Name: "longer"},
		func(context.Context, otc.NoOutput) (int, error) { return 1, nil })
	assert.Error(t, err)
}

func TestToolIDIsCaseSensitive(t *testing.T) {
	t.Parallel()
	reg := newVersionedRegistry(t, "1.0.0")
	_, err := calledVersion(t, reg, "Calculator.add")
	assert.ErrorIs(t, err, otc.ErrToolNotFound)
}

// TestDidYouMean: an unknown tool's error names the nearest tools the
// caller may see, in the style it named the tool in: names for a name (a
// gateway's folding of "get-sum" to "get_sum" among them), ids for an id;
// a tool its policy hides from the caller is never named.
func TestDidYouMean(t *testing.T) {
	t.Parallel()
	reg := otc.NewRegistry(nil)
	for _, tool := range []otc.Tool{
		{ID: "Math.get_sum", Version: "1.0.0", Description: "Sums."},
		{ID: "Notes.Reset", Version: "1.0.0", Description: "Resets.", Policy: &otc.Policy{RequiredScopes: []string{"notes:admin"}}},
	} {
		require.NoError(t, otc.Register(reg, tool, func(context.Context, struct{}) (int, error) { return 1, nil }))
	}
	call := func(ctx context.Context, req *otc.CallRequest) string {
		_, err := reg.Call(ctx, req)
		require.ErrorIs(t, err, otc.ErrToolNotFound)
		var e *otc.Error
		require.ErrorAs(t, err, &e)
		return e.Message
	}
	ctx := t.Context()
	assert.Contains(t, call(ctx, &otc.CallRequest{ToolName: "math-get-sum", Protocol: otc.ProtocolMCP}), "(did you mean 'Math_get_sum'?)")
	assert.Contains(t, call(ctx, &otc.CallRequest{ToolID: "math.get_sum", Protocol: otc.ProtocolOTC}), "(did you mean 'Math.get_sum'?)")
	assert.NotContains(t, call(ctx, &otc.CallRequest{ToolName: "Notes_Rest", Protocol: otc.ProtocolMCP}), "Notes_Reset",
		"a caller without the scope does not see the tool, and is not told of it")
	admin := otc.WithIdentity(ctx, &otc.Identity{Method: "bearer", Name: "ada", Claims: map[string]any{"scope": "notes:admin"}})
	assert.Contains(t, call(admin, &otc.CallRequest{ToolName: "Notes_Rest", Protocol: otc.ProtocolMCP}), "(did you mean 'Notes_Reset'?)")
}
