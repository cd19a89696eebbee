package otc_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"math"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/otcgo/otc"
)

// Types for the registration tests. Recursive types through a second type
// must be declared at package level.

type regNode struct {
	Children []regNode `json:"children" jsonschema:"description=Child nodes."`
}

type regListNode struct {
	Next *regListNode `json:"next" jsonschema:"description=The next node."`
}

type regMapNode struct {
	Kids map[string]regMapNode `json:"kids" jsonschema:"description=Child nodes by name."`
}

type regMutualA struct {
	B *regMutualB `json:"b" jsonschema:"description=The B side."`
}

type regMutualB struct {
	As []regMutualA `json:"as" jsonschema:"description=The A side."`
}

// regEmbedsSelf is recursive through an embedded pointer to itself. No
// code reads that field: Register sees it by reflection, and it is what
// the test "recursive_embedded_pointer" is about.
type regEmbedsSelf struct {
	//lint:ignore U1000 read only by reflection, in Register; removing it makes the type not recursive
	*regEmbedsSelf
	Name string `json:"name" jsonschema:"description=A name."`
}

type regDeepRecursion struct {
	Wrapper struct {
		Items [2]map[string]*regDeepRecursion `json:"items" jsonschema:"description=Items."`
	} `json:"wrapper" jsonschema:"description=A wrapper."`
}

type regChanField struct {
	Events chan string `json:"events" jsonschema:"description=Events."`
}

type regFuncField struct {
	Callback func() `json:"callback" jsonschema:"description=A callback."`
}

type regComplexField struct {
	Z complex128 `json:"z" jsonschema:"description=A complex number."`
}

type regValidInput struct {
	Q string `json:"q" jsonschema:"description=The query."`
}

// regNop is a tool function that does nothing.
func regNop[In, Out any](context.Context, In) (Out, error) {
	var out Out
	return out, nil
}

// regTool returns a valid Tool with the given id.
func regTool(id string) otc.Tool {
	return otc.Tool{ID: id, Version: "1.0.0", Description: "A tool for tests."}
}

func TestRegisterErrors(t *testing.T) {
	t.Parallel()
	const id = "Calculator.Add"
	with := func(change func(*otc.Tool)) otc.Tool {
		tool := regTool(id)
		change(&tool)
		return tool
	}
	withInput := func(schema string) otc.Tool {
		return with(func(t *otc.Tool) { t.InputSchema = json.RawMessage(schema) })
	}
	withOutput := func(schema string) otc.Tool {
		return with(func(t *otc.Tool) { t.OutputSchema = json.RawMessage(schema) })
	}
	valid := regNop[regValidInput, float64]
	// The seeds' Calculator.Add input with B's description forgotten; the
	// error must name the Go field, AddInput.B.
	type AddInput struct {
		A float64 `json:"a" jsonschema:"description=The first number to add."`
		B float64 `json:"b"`
	}

	tests := []struct {
		name     string
		register func(*otc.Registry) error
		// want are substrings the error must hold: the tool's id and the
		// field or part at fault.
		want []string
	}{
		// Ids.
		{"id_without_tool", func(r *otc.Registry) error {
			return otc.Register(r, regTool("Calculator"), valid)
		}, []string{`"Calculator`, "ID"}},
		{"id_with_dash", func(r *otc.Registry) error {
			return otc.Register(r, regTool("Calc-ulator.Add"), valid)
		}, []string{"Calc-ulator.Add", "ID"}},
		{"id_with_version", func(r *otc.Registry) error {
			return otc.Register(r, regTool("Calculator.Add@1.0.0"), valid)
		}, []string{"Calculator.Add@1.0.0", "ID", "Version"}},
		{"id_with_three_parts", func(r *otc.Registry) error {
			return otc.Register(r, regTool("Math.Calculator.Add"), valid)
		}, []string{"Math.Calculator.Add", "ID"}},
		{"id_empty_part", func(r *otc.Registry) error {
			return otc.Register(r, regTool(".Add"), valid)
		}, []string{`".Add`, "ID"}},
		{"id_empty", func(r *otc.Registry) error {
			return otc.Register(r, regTool(""), valid)
		}, []string{"ID"}},
		{"id_non_ascii", func(r *otc.Registry) error {
			return otc.Register(r, regTool("Calculatör.Add"), valid)
		}, []string{"Calculatör.Add", "ID"}},
		{"id_too_long", func(r *otc.Registry) error {
			return otc.Register(r, regTool("Calculator."+strings.Repeat("A", 260)), valid)
		}, []string{"Calculator.AAAA", "256"}},

		// Versions.
		{"version_two_parts", func(r *otc.Registry) error {
			return otc.Register(r, with(func(t *otc.Tool) { t.Version = "1.0" }), valid)
		}, []string{id, "Version", `"1.0"`}},
		{"version_v_prefix", func(r *otc.Registry) error {
			return otc.Register(r, with(func(t *otc.Tool) { t.Version = "v1.0.0" }), valid)
		}, []string{id, "Version", `"v1.0.0"`}},
		{"version_prerelease", func(r *otc.Registry) error {
			return otc.Register(r, with(func(t *otc.Tool) { t.Version = "1.0.0-beta" }), valid)
		}, []string{id, "Version", `"1.0.0-beta"`}},
		{"version_build_metadata", func(r *otc.Registry) error {
			return otc.Register(r, with(func(t *otc.Tool) { t.Version = "1.0.0+abc" }), valid)
		}, []string{id, "Version", `"1.0.0+abc"`}},
		{"version_leading_zero", func(r *otc.Registry) error {
			return otc.Register(r, with(func(t *otc.Tool) { t.Version = "01.0.0" }), valid)
		}, []string{id, "Version", `"01.0.0"`}},
		{"version_empty", func(r *otc.Registry) error {
			return otc.Register(r, with(func(t *otc.Tool) { t.Version = "" }), valid)
		}, []string{id, "Version", `""`}},

		// Names and descriptions.
		{"name_too_long", func(r *otc.Registry) error {
			return otc.Register(r, with(func(t *otc.Tool) { t.Name = strings.Repeat("n", 65) }), valid)
		}, []string{id, "Name", strings.Repeat("n", 65)}},
		{"name_with_space", func(r *otc.Registry) error {
			return otc.Register(r, with(func(t *otc.Tool) { t.Name = "add numbers" }), valid)
		}, []string{id, "Name", `"add numbers"`}},
		{"name_with_dot", func(r *otc.Registry) error {
			return otc.Register(r, with(func(t *otc.Tool) { t.Name = "Calculator.Add" }), valid)
		}, []string{id, "Name"}},
		{"default_name_too_long", func(r *otc.Registry) error {
			// Toolkit_Tool is 65 bytes here.
			return otc.Register(r, regTool("Calculator."+strings.Repeat("A", 54)), valid)
		}, []string{"Calculator.AAAA", "Name"}},
		{"description_empty", func(r *otc.Registry) error {
			return otc.Register(r, with(func(t *otc.Tool) { t.Description = "" }), valid)
		}, []string{id, "Description"}},
		{"description_blank", func(r *otc.Registry) error {
			return otc.Register(r, with(func(t *otc.Tool) { t.Description = " \t\n" }), valid)
		}, []string{id, "Description"}},

		// Functions and registries.
		{"nil_function", func(r *otc.Registry) error {
			return otc.Register[regValidInput, float64](r, regTool(id), nil)
		}, []string{id, "function"}},
		{"nil_registry", func(*otc.Registry) error {
			return otc.Register(nil, regTool(id), valid)
		}, []string{id, "Registry"}},

		// Input types that cannot hold a JSON object.
		{"input_int", func(r *otc.Registry) error {
			return otc.Register(r, regTool(id), regNop[int, float64])
		}, []string{id, "input type int"}},
		{"input_string", func(r *otc.Registry) error {
			return otc.Register(r, regTool(id), regNop[string, float64])
		}, []string{id, "input type string"}},
		{"input_slice", func(r *otc.Registry) error {
			return otc.Register(r, regTool(id), regNop[[]regValidInput, float64])
		}, []string{id, "input type []otc_test.regValidInput"}},
		{"input_map_int_keys", func(r *otc.Registry) error {
			return otc.Register(r, regTool(id), regNop[map[int]string, float64])
		}, []string{id, "input type map[int]string"}},
		{"input_pointer_to_pointer_to_int", func(r *otc.Registry) error {
			return otc.Register(r, regTool(id), regNop[**int, float64])
		}, []string{id, "input type **int"}},
		{"input_int_with_hand_written_schema", func(r *otc.Registry) error {
			return otc.Register(r, withInput(`{"type":"object","properties":{}}`), regNop[int, float64])
		}, []string{id, "input type int"}},

		// Parameters.
		{"parameter_without_description", func(r *otc.Registry) error {
			return otc.Register(r, regTool(id), regNop[AddInput, float64])
		}, []string{id, `"b"`, "AddInput.B"}},
		{"parameter_with_blank_description", func(r *otc.Registry) error {
			type in struct {
				Q string `json:"q" jsonschema:"description= "`
			}
			return otc.Register(r, regTool(id), regNop[in, float64])
		}, []string{id, `"q"`, "in.Q"}},
		{"embedded_parameter_without_description", func(r *otc.Registry) error {
			type Base struct {
				Region string `json:"region"`
			}
			type in struct {
				Base
				Q string `json:"q" jsonschema:"description=The query."`
			}
			return otc.Register(r, regTool(id), regNop[in, float64])
		}, []string{id, `"region"`, "Base.Region"}},

		// Types that cannot be written inline. Each must fail, not overflow
		// the stack.
		{"recursive_slice", func(r *otc.Registry) error {
			return otc.Register(r, regTool(id), regNop[regNode, float64])
		}, []string{id, "regNode.Children", "recursive"}},
		{"recursive_pointer", func(r *otc.Registry) error {
			return otc.Register(r, regTool(id), regNop[regListNode, float64])
		}, []string{id, "regListNode.Next", "recursive"}},
		{"recursive_pointer_input", func(r *otc.Registry) error {
			return otc.Register(r, regTool(id), regNop[*regListNode, float64])
		}, []string{id, "regListNode.Next", "recursive"}},
		{"recursive_map", func(r *otc.Registry) error {
			return otc.Register(r, regTool(id), regNop[regMapNode, float64])
		}, []string{id, "regMapNode.Kids", "recursive"}},
		{"recursive_mutual", func(r *otc.Registry) error {
			return otc.Register(r, regTool(id), regNop[regMutualA, float64])
		}, []string{id, "regMutualA.B.As", "recursive"}},
		{"recursive_embedded_pointer", func(r *otc.Registry) error {
			return otc.Register(r, regTool(id), regNop[regEmbedsSelf, float64])
		}, []string{id, "regEmbedsSelf.regEmbedsSelf", "recursive"}},
		{"recursive_deep", func(r *otc.Registry) error {
			return otc.Register(r, regTool(id), regNop[regDeepRecursion, float64])
		}, []string{id, "regDeepRecursion.Wrapper.Items", "recursive"}},
		{"recursive_inside_map_input", func(r *otc.Registry) error {
			return otc.Register(r, regTool(id), regNop[map[string]regNode, float64])
		}, []string{id, "regNode", "recursive"}},
		{"chan_field", func(r *otc.Registry) error {
			return otc.Register(r, regTool(id), regNop[regChanField, float64])
		}, []string{id, "regChanField.Events", "chan string"}},
		{"func_field", func(r *otc.Registry) error {
			return otc.Register(r, regTool(id), regNop[regFuncField, float64])
		}, []string{id, "regFuncField.Callback", "func()"}},
		{"complex_field", func(r *otc.Registry) error {
			return otc.Register(r, regTool(id), regNop[regComplexField, float64])
		}, []string{id, "regComplexField.Z", "complex128"}},
		{"recursive_output", func(r *otc.Registry) error {
			return otc.Register(r, regTool(id), regNop[regValidInput, regNode])
		}, []string{id, "output type", "regNode.Children", "recursive"}},
		{"recursive_output_pointer", func(r *otc.Registry) error {
			return otc.Register(r, regTool(id), regNop[regValidInput, *regMutualB])
		}, []string{id, "output type", "regMutualB", "recursive"}},
		{"chan_output", func(r *otc.Registry) error {
			return otc.Register(r, regTool(id), regNop[regValidInput, chan int])
		}, []string{id, "output type", "chan int"}},
		{"func_in_output_struct", func(r *otc.Registry) error {
			return otc.Register(r, regTool(id), regNop[regValidInput, regFuncField])
		}, []string{id, "output type", "regFuncField.Callback"}},

		// Hand-written input schemas.
		{"input_schema_invalid_json", func(r *otc.Registry) error {
			return otc.Register(r, withInput(`{"type":`), regNop[map[string]any, float64])
		}, []string{id, "InputSchema", "JSON"}},
		{"input_schema_array", func(r *otc.Registry) error {
			return otc.Register(r, withInput(`[]`), regNop[map[string]any, float64])
		}, []string{id, "InputSchema", "object"}},
		{"input_schema_string", func(r *otc.Registry) error {
			return otc.Register(r, withInput(`"object"`), regNop[map[string]any, float64])
		}, []string{id, "InputSchema", "object"}},
		{"input_schema_true", func(r *otc.Registry) error {
			return otc.Register(r, withInput(`true`), regNop[map[string]any, float64])
		}, []string{id, "InputSchema", `"type"`}},
		{"input_schema_type_array", func(r *otc.Registry) error {
			return otc.Register(r, withInput(`{"type":"array","items":{}}`), regNop[map[string]any, float64])
		}, []string{id, "InputSchema", `"type"`, "object"}},
		{"input_schema_no_type", func(r *otc.Registry) error {
			return otc.Register(r, withInput(`{"properties":{}}`), regNop[map[string]any, float64])
		}, []string{id, "InputSchema", `"type"`}},
		{"input_schema_ref_top", func(r *otc.Registry) error {
			return otc.Register(r, withInput(`{"type":"object","$ref":"#/x"}`), regNop[map[string]any, float64])
		}, []string{id, "InputSchema", `"$ref"`}},
		{"input_schema_ref_in_property", func(r *otc.Registry) error {
			return otc.Register(r, withInput(`{"type":"object","properties":{"q":{"description":"Q.","type":"object","properties":{"r":{"$ref":"#/x"}}}}}`), regNop[map[string]any, float64])
		}, []string{id, "InputSchema", `"$ref"`, "#/properties/q/properties/r"}},
		{"input_schema_ref_in_items_list", func(r *otc.Registry) error {
			return otc.Register(r, withInput(`{"type":"object","properties":{"q":{"description":"Q.","type":"array","items":[{"$ref":"#"}]}}}`), regNop[map[string]any, float64])
		}, []string{id, "InputSchema", `"$ref"`, "#/properties/q/items/0"}},
		{"input_schema_ref_in_any_of", func(r *otc.Registry) error {
			return otc.Register(r, withInput(`{"type":"object","properties":{"q":{"description":"Q.","anyOf":[{"type":"string"},{"$ref":"#"}]}}}`), regNop[map[string]any, float64])
		}, []string{id, "InputSchema", `"$ref"`, "#/properties/q/anyOf/1"}},
		{"input_schema_ref_in_additional_properties", func(r *otc.Registry) error {
			return otc.Register(r, withInput(`{"type":"object","additionalProperties":{"$ref":"#"}}`), regNop[map[string]any, float64])
		}, []string{id, "InputSchema", `"$ref"`, "#/additionalProperties"}},
		{"input_schema_ref_in_pattern_properties", func(r *otc.Registry) error {
			return otc.Register(r, withInput(`{"type":"object","patternProperties":{"^x":{"not":{"$ref":"#"}}}}`), regNop[map[string]any, float64])
		}, []string{id, "InputSchema", `"$ref"`, "#/patternProperties/^x/not"}},
		// $defs and definitions are accepted and inlined (inline_test.go);
		// what cannot be inlined is refused.
		{"input_schema_defs_not_an_object", func(r *otc.Registry) error {
			return otc.Register(r, withInput(`{"type":"object","$defs":[{"type":"string"}]}`), regNop[map[string]any, float64])
		}, []string{id, "InputSchema", `"$defs"`}},
		{"input_schema_definitions_broken_ref", func(r *otc.Registry) error {
			return otc.Register(r, withInput(`{"type":"object","definitions":{"a":{"$ref":"#/definitions/b"}}}`), regNop[map[string]any, float64])
		}, []string{id, "InputSchema", `"#/definitions/b"`, "#/definitions/a", "nothing"}},
		{"input_schema_nested_definitions_with_id", func(r *otc.Registry) error {
			return otc.Register(r, withInput(`{"type":"object","properties":{"q":{"description":"Q.","definitions":{"x":{"$id":"x.json"}}}}}`), regNop[map[string]any, float64])
		}, []string{id, "InputSchema", `"$id"`, "#/properties/q/definitions/x"}},
		{"input_schema_dollar_schema", func(r *otc.Registry) error {
			return otc.Register(r, withInput(`{"$schema":"http://json-schema.org/draft-07/schema#","type":"object"}`), regNop[map[string]any, float64])
		}, []string{id, "InputSchema", `"$schema"`}},
		{"input_schema_property_without_description", func(r *otc.Registry) error {
			return otc.Register(r, withInput(`{"type":"object","properties":{"q":{"type":"string"},"r":{"type":"string","description":"R."}}}`), regNop[map[string]any, float64])
		}, []string{id, `"q"`, "description"}},
		{"input_schema_invalid_regex", func(r *otc.Registry) error {
			return otc.Register(r, withInput(`{"type":"object","properties":{"q":{"type":"string","description":"Q.","pattern":"(["}}}`), regNop[map[string]any, float64])
		}, []string{id, "InputSchema", "pattern"}},
		{"input_schema_negative_min_length", func(r *otc.Registry) error {
			return otc.Register(r, withInput(`{"type":"object","properties":{"q":{"type":"string","description":"Q.","minLength":-1}}}`), regNop[map[string]any, float64])
		}, []string{id, "InputSchema", "minLength"}},
		{"input_schema_required_not_a_list", func(r *otc.Registry) error {
			return otc.Register(r, withInput(`{"type":"object","properties":{},"required":"q"}`), regNop[map[string]any, float64])
		}, []string{id, "InputSchema", "required"}},
		{"input_schema_unknown_type", func(r *otc.Registry) error {
			return otc.Register(r, withInput(`{"type":"object","properties":{"q":{"type":"text","description":"Q."}}}`), regNop[map[string]any, float64])
		}, []string{id, "InputSchema", "type"}},

		// Hand-written output schemas.
		{"output_schema_invalid_json", func(r *otc.Registry) error {
			return otc.Register(r, withOutput(`{"type":`), valid)
		}, []string{id, "OutputSchema", "JSON"}},
		{"output_schema_array", func(r *otc.Registry) error {
			return otc.Register(r, withOutput(`[{"type":"number"}]`), valid)
		}, []string{id, "OutputSchema", "object"}},
		{"output_schema_ref", func(r *otc.Registry) error {
			return otc.Register(r, withOutput(`{"type":"object","properties":{"a":{"$ref":"#"}}}`), valid)
		}, []string{id, "OutputSchema", `"$ref"`}},
		{"output_schema_recursive_def", func(r *otc.Registry) error {
			return otc.Register(r, withOutput(`{"$defs":{"a":{"$ref":"#/$defs/a"}}}`), valid)
		}, []string{id, "OutputSchema", `"#/$defs/a"`, "recursive"}},
		{"output_schema_invalid_keyword_value", func(r *otc.Registry) error {
			return otc.Register(r, withOutput(`{"type":"nope"}`), valid)
		}, []string{id, "OutputSchema", "type"}},

		// Requirements a caller could never satisfy.
		{"requirement_secret_without_id", func(r *otc.Registry) error {
			return otc.Register(r, with(func(t *otc.Tool) {
				t.Requirements = &otc.Requirements{Secrets: []otc.SecretRequirement{{ID: ""}}}
			}), valid)
		}, []string{id, "Requirements", "Secrets[0]"}},
		{"requirement_authorization_twice", func(r *otc.Registry) error {
			return otc.Register(r, with(func(t *otc.Tool) {
				t.Requirements = &otc.Requirements{Authorization: []otc.AuthorizationRequirement{{ID: "google"}, {ID: "google"}}}
			}), valid)
		}, []string{id, "Requirements", `"google"`}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			reg := otc.NewRegistry(nil)
			err := tt.register(reg)
			require.Error(t, err)
			msg := err.Error()
			assert.True(t, strings.HasPrefix(msg, "otc: "), "error %q lacks the otc: prefix", msg)
			for _, w := range tt.want {
				assert.Contains(t, msg, w)
			}
			assert.Empty(t, reg.Tools(), "a failed registration must leave the registry unchanged")
		})
	}
}

func TestRegisterErrorsAgainstRegisteredTools(t *testing.T) {
	t.Parallel()
	valid := regNop[regValidInput, float64]
	tests := []struct {
		name   string
		second otc.Tool
		want   []string
	}{
		{
			name:   "duplicate_id_and_version",
			second: regTool("Calculator.Add"),
			want:   []string{"Calculator.Add@1.0.0", "already registered"},
		},
		{
			name:   "name_of_another_tool",
			second: otc.Tool{ID: "Calculator.Sum", Version: "1.0.0", Description: "Sums.", Name: "Calculator_Add"},
			want:   []string{"Calculator.Sum@1.0.0", `"Calculator_Add"`, "Calculator.Add"},
		},
		{
			// Calculator.Sub chose the name Adder; no other tool may use it.
			name:   "explicit_name_of_another_tool",
			second: otc.Tool{ID: "Calculator.Mul", Version: "1.0.0", Description: "Multiplies.", Name: "Adder"},
			want:   []string{"Calculator.Mul@1.0.0", `"Adder"`},
		},
		{
			name:   "different_name_across_versions",
			second: otc.Tool{ID: "Calculator.Add", Version: "2.0.0", Description: "Adds.", Name: "Add2"},
			want:   []string{"Calculator.Add@2.0.0", `"Add2"`, `"Calculator_Add"`},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			reg := otc.NewRegistry(nil)
			require.NoError(t, otc.Register(reg, regTool("Calculator.Add"), valid))
			require.NoError(t, otc.Register(reg, otc.Tool{ID: "Calculator.Sub", Version: "1.0.0", Description: "Subtracts.", Name: "Adder"}, valid))
			before := reg.Tools()

			err := otc.Register(reg, tt.second, valid)
			require.Error(t, err)
			assert.True(t, strings.HasPrefix(err.Error(), "otc: "))
			for _, w := range tt.want {
				assert.Contains(t, err.Error(), w)
			}
			assert.Equal(t, before, reg.Tools())
		})
	}
}

func TestRegisterVersionsAndCatalogOrder(t *testing.T) {
	t.Parallel()
	reg := otc.NewRegistry(nil)
	valid := regNop[regValidInput, float64]
	// Registered out of order on purpose.
	for _, tool := range []otc.Tool{
		{ID: "Zeta.Last", Version: "1.0.0", Description: "z"},
		{ID: "Calculator.Add", Version: "10.0.0", Description: "a"},
		{ID: "Calculator.Add", Version: "9.0.0", Description: "a"},
		{ID: "Calculator.Add", Version: "1.10.0", Description: "a"},
		{ID: "Calculator.Add", Version: "1.9.0", Description: "a"},
		{ID: "Calculator.Add", Version: "0.0.1", Description: "a"},
		{ID: "Alpha.First", Version: "2.0.0", Description: "x", Name: "first"},
		// Same name as its other versions, given explicitly.
		{ID: "Alpha.First", Version: "1.0.0", Description: "x", Name: "first"},
	} {
		require.NoError(t, otc.Register(reg, tool, valid), tool.ID+"@"+tool.Version)
	}
	var ids, names []string
	for _, d := range reg.Tools() {
		ids = append(ids, d.ID)
		names = append(names, d.Name)
		assert.Equal(t, d.ID, strings.SplitN(d.ID, "@", 2)[0]+"@"+d.Version)
	}
	// SPEC §3: by id, then by version ascending in semantic-version order.
	assert.Equal(t, []string{
		"Alpha.First@1.0.0", "Alpha.First@2.0.0",
		"Calculator.Add@0.0.1", "Calculator.Add@1.9.0", "Calculator.Add@1.10.0", "Calculator.Add@9.0.0", "Calculator.Add@10.0.0",
		"Zeta.Last@1.0.0",
	}, ids)
	assert.Equal(t, []string{"first", "first", "Calculator_Add", "Calculator_Add", "Calculator_Add", "Calculator_Add", "Calculator_Add", "Zeta_Last"}, names)
}

func TestRegisterAcceptsBoundaryNames(t *testing.T) {
	t.Parallel()
	valid := regNop[regValidInput, float64]
	for _, tool := range []otc.Tool{
		{ID: "A.B", Version: "0.0.0", Description: "d", Name: strings.Repeat("n", 64)},
		{ID: "a_1.B_2", Version: "123.456.789", Description: "d", Name: "a-b_C-9"},
		{ID: "X.Y", Version: "1.0.0", Description: "d", Name: "-"},
	} {
		t.Run(tool.ID, func(t *testing.T) {
			t.Parallel()
			reg := otc.NewRegistry(nil)
			require.NoError(t, otc.Register(reg, tool, valid))
			assert.Equal(t, tool.Name, onlyTool(t, reg).Name)
		})
	}
}

// registryUUIDv4 matches a random (version 4, RFC 4122 variant) UUID.
var registryUUIDv4 = regexp.MustCompile(`^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$`)

type regSumOutput struct {
	Sum float64 `json:"sum" jsonschema:"description=The sum."`
}

type regAddInput struct {
	A float64 `json:"a" jsonschema:"description=The first number to add."`
	B float64 `json:"b" jsonschema:"description=The second number to add."`
}

// newAddRegistry registers Calculator.Add@1.0.0 returning fn's result.
func newAddRegistry[Out any](t *testing.T, opts *otc.RegistryOptions, fn func(context.Context, regAddInput) (Out, error)) *otc.Registry {
	t.Helper()
	reg := otc.NewRegistry(opts)
	require.NoError(t, otc.Register(reg, otc.Tool{ID: "Calculator.Add", Version: "1.0.0", Description: "Adds two numbers together."}, fn))
	return reg
}

func TestCallSuccess(t *testing.T) {
	t.Parallel()
	reg := newAddRegistry(t, nil, func(ctx context.Context, in regAddInput) (regSumOutput, error) {
		return regSumOutput{Sum: in.A + in.B}, nil
	})

	t.Run("value_is_json", func(t *testing.T) {
		t.Parallel()
		res, err := reg.Call(context.Background(), &otc.CallRequest{ToolID: "Calculator.Add@1.0.0", Input: json.RawMessage(`{"a":10,"b":5}`)})
		require.NoError(t, err)
		assert.Nil(t, res.Error)
		assert.JSONEq(t, `{"sum":15}`, string(res.Value))
		assert.Greater(t, res.Duration, time.Duration(0))
	})
	t.Run("call_id_echoed", func(t *testing.T) {
		t.Parallel()
		const callID = "123e4567-e89b-12d3-a456-426614174000"
		res, err := reg.Call(context.Background(), &otc.CallRequest{ToolID: "Calculator.Add", CallID: callID, Input: json.RawMessage(`{"a":1,"b":2}`)})
		require.NoError(t, err)
		assert.Equal(t, callID, res.CallID)
	})
	t.Run("call_id_any_string_echoed", func(t *testing.T) {
		t.Parallel()
		res, err := reg.Call(context.Background(), &otc.CallRequest{ToolID: "Calculator.Add", CallID: "not a uuid ✓", Input: json.RawMessage(`{"a":1,"b":2}`)})
		require.NoError(t, err)
		assert.Equal(t, "not a uuid ✓", res.CallID)
	})
	t.Run("call_id_generated", func(t *testing.T) {
		t.Parallel()
		seen := map[string]bool{}
		for range 20 {
			res, err := reg.Call(context.Background(), &otc.CallRequest{ToolID: "Calculator.Add", Input: json.RawMessage(`{"a":1,"b":2}`)})
			require.NoError(t, err)
			assert.Regexp(t, registryUUIDv4, res.CallID)
			assert.False(t, seen[res.CallID], "call id %s generated twice", res.CallID)
			seen[res.CallID] = true
		}
	})
	t.Run("input_absent_or_null_is_empty_object", func(t *testing.T) {
		t.Parallel()
		for _, in := range []string{"", "null", " null\n"} {
			_, err := reg.Call(context.Background(), &otc.CallRequest{ToolID: "Calculator.Add", Input: json.RawMessage(in)})
			var e *otc.Error
			require.ErrorAs(t, err, &e, "input %q", in)
			// {} is missing both required parameters.
			assert.Equal(t, map[string]string{"a": "Is required", "b": "Is required"}, e.ParameterErrors, "input %q", in)
		}
	})
}

func TestCallDurationCoversTheFunction(t *testing.T) {
	t.Parallel()
	const pause = 2 * time.Millisecond
	reg := newAddRegistry(t, nil, func(ctx context.Context, in regAddInput) (float64, error) {
		time.Sleep(pause)
		return in.A + in.B, nil
	})
	res, err := reg.Call(context.Background(), &otc.CallRequest{ToolID: "Calculator.Add", Input: json.RawMessage(`{"a":1,"b":2}`)})
	require.NoError(t, err)
	assert.GreaterOrEqual(t, res.Duration, pause)
}

// stringerPanics is a panic value whose String method panics too.
type stringerPanics struct{}

func (stringerPanics) String() string { panic("String panicked") }

func TestCallToolFailures(t *testing.T) {
	t.Parallel()
	cause := errors.New("upstream down")
	tests := []struct {
		name string
		fn   func(context.Context, regAddInput) (float64, error)
		want otc.ToolError
		// devContains is a substring of the developer message.
		devContains string
		logged      bool
	}{
		{
			name: "tool_error",
			fn: func(context.Context, regAddInput) (float64, error) {
				return 0, &otc.ToolError{
					Message: "Doorbell ID not found", DeveloperMessage: "The doorbell with ID 'doorbell1' does not exist.",
					CanRetry: true, AdditionalPromptContent: "ids: doorbell42,doorbell84", RetryAfter: 500 * time.Millisecond,
					Err: cause,
				}
			},
			// Err is never passed on.
			want: otc.ToolError{
				Message: "Doorbell ID not found", DeveloperMessage: "The doorbell with ID 'doorbell1' does not exist.",
				CanRetry: true, AdditionalPromptContent: "ids: doorbell42,doorbell84", RetryAfter: 500 * time.Millisecond,
			},
		},
		{
			name: "wrapped_tool_error",
			fn: func(context.Context, regAddInput) (float64, error) {
				return 0, fmt.Errorf("adding: %w", &otc.ToolError{Message: "Overflow", CanRetry: false})
			},
			want: otc.ToolError{Message: "Overflow"},
		},
		{
			name: "tool_error_without_message",
			fn: func(context.Context, regAddInput) (float64, error) {
				return 0, &otc.ToolError{DeveloperMessage: "dev only"}
			},
			want: otc.ToolError{Message: "Tool 'Calculator_Add' failed", DeveloperMessage: "dev only"},
		},
		{
			name: "plain_error",
			fn: func(context.Context, regAddInput) (float64, error) {
				return 0, fmt.Errorf("cannot add: %w", cause)
			},
			want: otc.ToolError{Message: "cannot add: upstream down"},
		},
		{
			name: "error_with_empty_text",
			fn: func(context.Context, regAddInput) (float64, error) {
				return 0, errors.New("")
			},
			want: otc.ToolError{Message: "Tool 'Calculator_Add' failed"},
		},
		{
			name: "panic",
			fn: func(context.Context, regAddInput) (float64, error) {
				panic("index out of range in the adder")
			},
			want:        otc.ToolError{Message: "Tool 'Calculator_Add' failed unexpectedly"},
			devContains: "index out of range in the adder",
			logged:      true,
		},
		{
			name: "panic_with_error",
			fn: func(context.Context, regAddInput) (float64, error) {
				panic(cause)
			},
			want:        otc.ToolError{Message: "Tool 'Calculator_Add' failed unexpectedly"},
			devContains: "upstream down",
			logged:      true,
		},
		{
			name: "panic_nil",
			fn: func(context.Context, regAddInput) (float64, error) {
				panic(nil) // must not slip through as a success
			},
			want:        otc.ToolError{Message: "Tool 'Calculator_Add' failed unexpectedly"},
			devContains: "nil",
			logged:      true,
		},
		{
			name: "panic_value_whose_string_panics",
			fn: func(context.Context, regAddInput) (float64, error) {
				panic(stringerPanics{})
			},
			want:        otc.ToolError{Message: "Tool 'Calculator_Add' failed unexpectedly"},
			devContains: "String panicked", // fmt reports the inner panic
			logged:      true,
		},
		{
			name: "nan_result",
			fn: func(context.Context, regAddInput) (float64, error) {
				return math.NaN(), nil
			},
			want:        otc.ToolError{Message: "Tool 'Calculator_Add' returned a value that cannot be sent as JSON"},
			devContains: "NaN",
		},
		{
			name: "infinite_result",
			fn: func(context.Context, regAddInput) (float64, error) {
				return math.Inf(1), nil
			},
			want:        otc.ToolError{Message: "Tool 'Calculator_Add' returned a value that cannot be sent as JSON"},
			devContains: "+Inf",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			var logs bytes.Buffer
			logger := slog.New(slog.NewJSONHandler(&logs, nil))
			reg := newAddRegistry(t, &otc.RegistryOptions{Logger: logger}, tt.fn)
			res, err := reg.Call(context.Background(), &otc.CallRequest{ToolID: "Calculator.Add", CallID: "c1", Input: json.RawMessage(`{"a":1,"b":2}`)})
			require.NoError(t, err, "a failure inside the function is not a call error")
			require.NotNil(t, res.Error)
			assert.Nil(t, res.Value)
			assert.Equal(t, "c1", res.CallID)
			assert.Nil(t, res.Error.Err, "the cause must not travel to the client")
			if tt.devContains != "" {
				assert.Contains(t, res.Error.DeveloperMessage, tt.devContains)
				assert.Contains(t, res.Error.DeveloperMessage, "Calculator.Add@1.0.0")
				res.Error.DeveloperMessage = ""
			}
			assert.Equal(t, tt.want, *res.Error)
			if tt.logged {
				// The stack goes to the logger, never to the caller.
				assert.Contains(t, logs.String(), "otc: tool function panicked")
				assert.Contains(t, logs.String(), "goroutine")
				assert.Contains(t, logs.String(), `"call_id":"c1"`)
				assert.NotContains(t, res.Error.DeveloperMessage+res.Error.Message, "goroutine")
			} else {
				assert.Empty(t, logs.String())
			}
		})
	}
}

func TestCallErrorsBeforeTheFunction(t *testing.T) {
	t.Parallel()
	called := make(chan struct{}, 100)
	reg := newAddRegistry(t, nil, func(ctx context.Context, in regAddInput) (float64, error) {
		called <- struct{}{}
		return in.A + in.B, nil
	})
	tests := []struct {
		name  string
		req   otc.CallRequest
		code  otc.Code
		pe    map[string]string
		inMsg string
	}{
		{"input_array", otc.CallRequest{ToolID: "Calculator.Add", Input: json.RawMessage(`[1,2]`)}, otc.CodeServerError, nil, "object"},
		{"input_string", otc.CallRequest{ToolID: "Calculator.Add", Input: json.RawMessage(`"a=1"`)}, otc.CodeServerError, nil, "object"},
		{"input_number", otc.CallRequest{ToolID: "Calculator.Add", Input: json.RawMessage(`12`)}, otc.CodeServerError, nil, "object"},
		{"input_bool", otc.CallRequest{ToolID: "Calculator.Add", Input: json.RawMessage(`true`)}, otc.CodeServerError, nil, "object"},
		{"input_truncated", otc.CallRequest{ToolID: "Calculator.Add", Input: json.RawMessage(`{"a":1,`)}, otc.CodeServerError, nil, "JSON"},
		{"input_not_object_before_unknown_tool", otc.CallRequest{ToolID: "Nope.Nope", Input: json.RawMessage(`[]`)}, otc.CodeServerError, nil, "object"},
		{"wrong_type", otc.CallRequest{ToolID: "Calculator.Add", Input: json.RawMessage(`{"a":10,"b":"infinity"}`)}, otc.CodeInvalidInput, map[string]string{"b": "Must be a number"}, "invalid"},
		{"missing", otc.CallRequest{ToolID: "Calculator.Add", Input: json.RawMessage(`{"a":10}`)}, otc.CodeInvalidInput, map[string]string{"b": "Is required"}, "invalid"},
		{"unexpected", otc.CallRequest{ToolID: "Calculator.Add", Input: json.RawMessage(`{"a":1,"b":2,"c":3}`)}, otc.CodeInvalidInput, map[string]string{"c": "Is not an accepted parameter"}, "invalid"},
		{"null_parameter", otc.CallRequest{ToolID: "Calculator.Add", Input: json.RawMessage(`{"a":1,"b":null}`)}, otc.CodeInvalidInput, map[string]string{"b": "Must be a number"}, "invalid"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			_, err := reg.Call(context.Background(), &tt.req)
			var e *otc.Error
			require.ErrorAs(t, err, &e)
			assert.Equal(t, tt.code, e.Code)
			assert.Equal(t, tt.pe, e.ParameterErrors)
			assert.Contains(t, e.Message+e.DeveloperMessage, tt.inMsg)
			if tt.code == otc.CodeInvalidInput {
				// SPEC §6's fixed message.
				assert.Equal(t, "Some input parameters are invalid", e.Message)
			}
			assert.False(t, errors.Is(err, otc.ErrToolNotFound))
		})
	}
	assert.Empty(t, called, "no failing call may reach the function")
}

func TestCallRequirements(t *testing.T) {
	t.Parallel()
	type challengeCall struct {
		toolID, userID string
		req            otc.AuthorizationRequirement
	}
	var (
		mu         sync.Mutex
		challenged []challengeCall
	)
	opts := &otc.RegistryOptions{
		AuthorizationChallenge: func(_ context.Context, toolID string, req otc.AuthorizationRequirement, userID string) *otc.AuthorizationChallenge {
			mu.Lock()
			challenged = append(challenged, challengeCall{toolID, userID, req})
			mu.Unlock()
			if req.ID == "github" {
				return nil // this provider has no authorization page
			}
			return &otc.AuthorizationChallenge{ID: req.ID, URL: "https://auth.example.com/" + req.ID + "?user=" + userID}
		},
	}
	reqs := &otc.Requirements{
		Authorization: []otc.AuthorizationRequirement{{ID: "google", OAuth2: &otc.OAuth2Requirement{Scopes: []string{"gmail.readonly"}}}, {ID: "github"}},
		Secrets:       []otc.SecretRequirement{{ID: "TWILIO_API_KEY"}, {ID: "SIGNING_KEY"}},
		UserID:        true,
	}
	register := func(t *testing.T, opts *otc.RegistryOptions) (*otc.Registry, *int) {
		reg := otc.NewRegistry(opts)
		calls := new(int)
		require.NoError(t, otc.Register(reg, otc.Tool{ID: "Mail.Send", Version: "1.0.0", Description: "Sends mail.", Requirements: reqs},
			func(context.Context, regValidInput) (otc.NoOutput, error) {
				*calls++
				return otc.NoOutput{}, nil
			}))
		return reg, calls
	}
	full := otc.CallContext{
		Authorization: []otc.ToolAuthorization{{ID: "google", Token: "tok-google-123"}, {ID: "github", Token: "tok-github-456"}},
		Secrets:       []otc.ToolSecret{{ID: "TWILIO_API_KEY", Value: "sec-twilio-789"}, {ID: "SIGNING_KEY", Value: "sec-signing-000"}},
		UserID:        "user-1",
	}
	secretValues := []string{"tok-google-123", "tok-github-456", "sec-twilio-789", "sec-signing-000"}

	t.Run("all_present", func(t *testing.T) {
		reg, calls := register(t, nil)
		_, err := reg.Call(context.Background(), &otc.CallRequest{ToolID: "Mail.Send", Input: json.RawMessage(`{"q":"x"}`), Context: full})
		require.NoError(t, err)
		assert.Equal(t, 1, *calls)
	})
	t.Run("all_missing_without_hook", func(t *testing.T) {
		reg, calls := register(t, nil)
		_, err := reg.Call(context.Background(), &otc.CallRequest{ToolID: "Mail.Send", Input: json.RawMessage(`{"q":"x"}`)})
		var e *otc.Error
		require.ErrorAs(t, err, &e)
		assert.Equal(t, otc.CodeServerError, e.Code)
		require.NotNil(t, e.MissingRequirements)
		assert.Equal(t, otc.MissingRequirements{
			Secrets: []otc.SecretRequirement{{ID: "TWILIO_API_KEY"}, {ID: "SIGNING_KEY"}},
			UserID:  true,
		}, *e.MissingRequirements, "without the hook the authorization list is omitted")
		for _, want := range []string{"TWILIO_API_KEY", "SIGNING_KEY", "google", "github", "user id"} {
			assert.Contains(t, e.Message, want)
		}
		assert.Zero(t, *calls)
	})
	t.Run("partial_with_hook_and_values_never_echoed", func(t *testing.T) {
		challenged = nil
		reg, calls := register(t, opts)
		cc := otc.CallContext{
			// google is sent empty, the first secret is sent under the wrong
			// id, and the second is sent twice with the first copy empty.
			Authorization: []otc.ToolAuthorization{{ID: "google", Token: ""}, {ID: "github", Token: "tok-github-456"}},
			Secrets:       []otc.ToolSecret{{ID: "TWILIO_KEY", Value: "sec-twilio-789"}, {ID: "SIGNING_KEY"}, {ID: "SIGNING_KEY", Value: "sec-signing-000"}},
			UserID:        "user-1",
		}
		_, err := reg.Call(context.Background(), &otc.CallRequest{ToolID: "Mail.Send", Input: json.RawMessage(`{"q":"x"}`), Context: cc})
		var e *otc.Error
		require.ErrorAs(t, err, &e)
		assert.Equal(t, otc.CodeServerError, e.Code)
		require.NotNil(t, e.MissingRequirements)
		assert.Equal(t, otc.MissingRequirements{
			Authorization: []otc.AuthorizationChallenge{{ID: "google", URL: "https://auth.example.com/google?user=user-1"}},
			Secrets:       []otc.SecretRequirement{{ID: "TWILIO_API_KEY"}},
		}, *e.MissingRequirements)
		require.Len(t, challenged, 1)
		assert.Equal(t, challengeCall{"Mail.Send@1.0.0", "user-1", reqs.Authorization[0]}, challenged[0])
		for _, v := range secretValues {
			assert.NotContains(t, err.Error(), v)
		}
		assert.Zero(t, *calls)
	})
	t.Run("checked_before_validation", func(t *testing.T) {
		reg, _ := register(t, nil)
		// SPEC §4: requirements (step 4) come before the input (step 5).
		_, err := reg.Call(context.Background(), &otc.CallRequest{ToolID: "Mail.Send", Input: json.RawMessage(`{"q":1}`)})
		var e *otc.Error
		require.ErrorAs(t, err, &e)
		assert.Equal(t, otc.CodeServerError, e.Code)
		assert.NotNil(t, e.MissingRequirements)
	})
	t.Run("checked_after_resolution", func(t *testing.T) {
		reg, _ := register(t, nil)
		_, err := reg.Call(context.Background(), &otc.CallRequest{ToolID: "Mail.Send@2.0.0", Input: json.RawMessage(`{"q":"x"}`)})
		assert.ErrorIs(t, err, otc.ErrToolNotFound)
	})
}

func TestCallCancellationReachesTheFunction(t *testing.T) {
	t.Parallel()
	reg := newAddRegistry(t, nil, func(ctx context.Context, in regAddInput) (float64, error) {
		<-ctx.Done()
		return 0, ctx.Err()
	})
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	res, err := reg.Call(ctx, &otc.CallRequest{ToolID: "Calculator.Add", Input: json.RawMessage(`{"a":1,"b":2}`)})
	require.NoError(t, err)
	require.NotNil(t, res.Error)
	assert.Equal(t, context.Canceled.Error(), res.Error.Message)
}

func TestToolsReturnsCopies(t *testing.T) {
	t.Parallel()
	reg := otc.NewRegistry(nil)
	tool := otc.Tool{
		ID: "Mail.Send", Version: "1.0.0", Description: "Sends mail.",
		Requirements: &otc.Requirements{
			Authorization: []otc.AuthorizationRequirement{{ID: "google", OAuth2: &otc.OAuth2Requirement{Scopes: []string{"gmail.send"}}}},
			Secrets:       []otc.SecretRequirement{{ID: "SMTP_PASSWORD"}},
		},
	}
	require.NoError(t, otc.Register(reg, tool, regNop[regValidInput, regSumOutput]))
	want, err := json.Marshal(reg.Tools())
	require.NoError(t, err)

	// Change everything reachable from the registered Tool and from a
	// returned definition.
	tool.Requirements.Secrets[0].ID = "CHANGED"
	tool.Requirements.Authorization[0].OAuth2.Scopes[0] = "CHANGED"
	tool.Requirements.UserID = true
	defs := reg.Tools()
	defs[0].Name = "CHANGED"
	for i := range defs[0].InputSchema.Parameters {
		defs[0].InputSchema.Parameters[i] = ' '
	}
	for i := range defs[0].OutputSchema {
		defs[0].OutputSchema[i] = ' '
	}
	defs[0].Requirements.Secrets[0].ID = "CHANGED"
	defs[0].Requirements.Authorization[0].ID = "CHANGED"
	defs[0].Requirements.Authorization[0].OAuth2.Scopes[0] = "CHANGED"
	defs[0].Requirements.UserID = true

	got, err := json.Marshal(reg.Tools())
	require.NoError(t, err)
	assert.JSONEq(t, string(want), string(got))
	assert.NotContains(t, string(got), "CHANGED")
}

func TestRegisterWhileCalling(t *testing.T) {
	t.Parallel()
	reg := newAddRegistry(t, nil, func(ctx context.Context, in regAddInput) (float64, error) {
		return in.A + in.B, nil
	})
	const writers, tools, readers = 4, 25, 8
	var wg sync.WaitGroup
	errs := make(chan error, writers*tools+readers*tools*2)
	for w := range writers {
		wg.Go(func() {
			for i := range tools {
				id := fmt.Sprintf("Kit%d.Tool%d", w, i)
				if err := otc.Register(reg, regTool(id), regNop[regValidInput, float64]); err != nil {
					errs <- err
				}
				// Another version of the same tool, racing the calls below.
				if err := otc.Register(reg, otc.Tool{ID: id, Version: "2.0.0", Description: "v2"}, regNop[regValidInput, float64]); err != nil {
					errs <- err
				}
			}
		})
	}
	for range readers {
		wg.Go(func() {
			for range tools {
				res, err := reg.Call(context.Background(), &otc.CallRequest{ToolID: "Calculator.Add", Input: json.RawMessage(`{"a":2,"b":3}`)})
				if err != nil {
					errs <- err
					continue
				}
				if string(res.Value) != "5" {
					errs <- fmt.Errorf("value %s, want 5", res.Value)
				}
				defs := reg.Tools()
				for i := 1; i < len(defs); i++ {
					if !catalogBefore(defs[i-1], defs[i]) {
						errs <- fmt.Errorf("catalog out of order: %s before %s", defs[i-1].ID, defs[i].ID)
					}
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	assert.Len(t, reg.Tools(), 1+writers*tools*2)
	for w := range writers {
		for i := range tools {
			id := fmt.Sprintf("Kit%d.Tool%d", w, i)
			_, err := reg.Call(context.Background(), &otc.CallRequest{ToolID: id, Input: json.RawMessage(`{"q":"x"}`)})
			assert.NoError(t, err, id)
		}
	}
}

// catalogBefore reports whether a may precede b in the catalog: by tool
// key, then by version in numeric order (SPEC §3).
func catalogBefore(a, b otc.ToolDefinition) bool {
	ka, _, _ := strings.Cut(a.ID, "@")
	kb, _, _ := strings.Cut(b.ID, "@")
	if ka != kb {
		return ka < kb
	}
	var va, vb [3]int
	_, errA := fmt.Sscanf(a.Version, "%d.%d.%d", &va[0], &va[1], &va[2])
	_, errB := fmt.Sscanf(b.Version, "%d.%d.%d", &vb[0], &vb[1], &vb[2])
	if errA != nil || errB != nil {
		return false
	}
	for i := range va {
		if va[i] != vb[i] {
			return va[i] < vb[i]
		}
	}
	return false // the same id and version twice
}
