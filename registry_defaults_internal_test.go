package otc

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/otcgo/otc/internal/hook"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestDefaultsCheckedAtRegistration: a default the parameter's own schema
// refuses, or that does not decode into its field, fails registration,
// naming the parameter; a duration's default reaches the decoder as its
// nanoseconds.
func TestDefaultsCheckedAtRegistration(t *testing.T) {
	type nested struct {
		N int `json:"n,omitempty" jsonschema:"description=N.,minimum=1,default=0"`
	}
	for name, tc := range map[string]struct {
		register func(r *Registry) error
		message  string
	}{
		"below the minimum": {typeTool[struct {
			N int `json:"n,omitempty" jsonschema:"description=N.,minimum=1,default=0"`
		}], `the default of parameter v.n, 0, is refused by the parameter's own schema (Must be at least 1)`},
		"outside the enum": {typeTool[struct {
			S string `json:"s,omitempty" jsonschema:"description=S.,enum=a,enum=b,default=c"`
		}], `the default of parameter v.s, "c", is refused by the parameter's own schema (Must be one of: "a", "b")`},
		"not a duration": {typeTool[struct {
			D time.Duration `json:"d,omitempty" jsonschema:"description=D.,default=5 minutes"`
		}], `the default of parameter v.d, "5 minutes", is refused by the parameter's own schema (Must be a duration such as`},
		"refused by UnmarshalText": {typeTool[struct {
			L level `json:"l,omitempty" jsonschema:"description=L.,default=medium"`
		}], `the default of parameter v.l, "medium", cannot be read as the field's type otc.level: unknown level "medium"`},
		"inside an array": {typeTool[[]nested], `the default of parameter v[].n, 0, is refused`},
		"an enum value refused by UnmarshalText": {typeTool[struct {
			L level `json:"l" jsonschema:"description=L.,enum=low,enum=medium"`
		}], `the enum value "medium" of parameter v.l cannot be read as otc.level: unknown level "medium"; list only values the type reads`},
		"an item enum value refused by UnmarshalText": {typeTool[struct {
			L []level `json:"l,omitempty" jsonschema:"description=L.,enum=low,enum=medium"`
		}], `the enum value "medium" of parameter v.l cannot be read as otc.level`},
		"hand-written": {func(r *Registry) error {
			return Register(r, Tool{ID: "Types.Probe", Version: "1.0.0", Description: "Probes.",
				InputSchema: json.RawMessage(`{"type":"object","properties":{"a":{"type":"integer","description":"A.","default":"x"}}}`)},
				func(context.Context, map[string]any) (string, error) { return "", nil })
		}, `the default of parameter a, "x", is refused by the parameter's own schema (Must be an integer)`},
	} {
		t.Run(name, func(t *testing.T) {
			err := tc.register(NewRegistry(nil))
			require.Error(t, err)
			assert.Contains(t, err.Error(), tc.message)
		})
	}

	r := NewRegistry(nil)
	require.NoError(t, typeTool[struct {
		D time.Duration `json:"d,omitempty" jsonschema:"description=D.,default=90s"`
	}](r))
	res, err := r.Call(context.Background(), &CallRequest{ToolID: "Types.Probe", Input: json.RawMessage(`{"v":{}}`)})
	require.NoError(t, err)
	assert.JSONEq(t, `"{1m30s}"`, string(res.Value))
}

// TestCallUsesTheResolution: a call whose tool a wire format resolved
// (callin.Resolve, for its task support) runs that resolution: the
// registry does not resolve it again, even when a newer version is
// registered in between.
func TestCallUsesTheResolution(t *testing.T) {
	t.Parallel()
	reg := NewRegistry(nil)
	version := func(v string) {
		require.NoError(t, Register(reg, Tool{ID: "Job.Run", Version: v, Description: "Says its version.", Tasks: TasksOptional},
			func(context.Context, struct{}) (string, error) { return v, nil }))
	}
	version("1.0.0")
	seam := hook.Of[Registry, Policy, ToolDefinition, CallRequest, Identity, Error]() // as the packages beside the root take it
	req := &CallRequest{ToolName: "Job_Run", Protocol: ProtocolA2A}
	tasks, _, ok := seam.Resolve(reg, req)
	require.True(t, ok)
	assert.Equal(t, TasksOptional, TaskSupport(tasks))
	version("2.0.0")
	res, err := reg.Call(context.Background(), req)
	require.NoError(t, err)
	assert.JSONEq(t, `"1.0.0"`, string(res.Value), "the call ran the version resolved")
	res, err = reg.Call(context.Background(), &CallRequest{ToolName: "Job_Run", Protocol: ProtocolA2A})
	require.NoError(t, err)
	assert.JSONEq(t, `"2.0.0"`, string(res.Value), "a call not resolved before resolves itself")

	_, _, ok = seam.Resolve(reg, &CallRequest{ToolName: "Nope", Protocol: ProtocolA2A})
	assert.False(t, ok)
	unknown := &CallRequest{ToolName: "Nope", Protocol: ProtocolA2A}
	seam.Resolve(reg, unknown)
	_, err = reg.Call(context.Background(), unknown)
	assert.ErrorIs(t, err, ErrToolNotFound, "the resolution's error answers the call")
}
