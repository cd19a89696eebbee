package otc_test

import (
	"context"
	"log/slog"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/otcgo/otc"
	"github.com/otcgo/otc/internal/testkit"
)

// BenchmarkPolicy times a direct call of a tool without a policy and of
// one whose policy checks every claim of a capability token (audience,
// capabilities, blast radius and an execution binding with its body
// hash), so that the ratio shows what the checks cost a call.
func BenchmarkPolicy(b *testing.B) {
	reg := otc.NewRegistry(&otc.RegistryOptions{Logger: slog.New(slog.DiscardHandler)})
	add := func(id string, p *otc.Policy) {
		require.NoError(b, otc.Register(reg, otc.Tool{ID: id, Version: "1.0.0", Description: "Adds.", Policy: p}, testkit.Add))
	}
	add("Bench.Open", nil)
	add("Bench.Guarded", &otc.Policy{
		ResourceURI: "urn:bench", RequiredCapabilities: []string{"add"}, MaxBlastRadius: "tenant:*",
		RequiresExecution: true, AllowedOperations: []string{"add"},
	})
	body := []byte(`{"request":{"tool_id":"Bench.Guarded","input":{"a":1,"b":2}}}`)
	id := &otc.Identity{Method: otc.MethodCapability, Name: "agent", Claims: map[string]any{
		"aud": "urn:bench", "caps": []any{"read", "add"}, "blast_radius": "tenant:acme",
		"exec_act": "add", "inp_hash": testkit.InpHash(string(body)),
	}}
	ctx := otc.WithIdentity(context.Background(), id)
	for _, tc := range []struct{ name, tool string }{{"no_policy", "Bench.Open"}, {"full_policy", "Bench.Guarded"}} {
		b.Run(tc.name, func(b *testing.B) {
			req := otc.CallRequest{ToolID: tc.tool, Input: []byte(`{"a":1,"b":2}`), Protocol: otc.ProtocolOTC, RequestBody: body}
			res, err := reg.Call(ctx, &req)
			require.NoError(b, err)
			require.Nil(b, res.Error)
			b.ReportAllocs()
			for b.Loop() {
				r := req
				_, _ = reg.Call(ctx, &r)
			}
		})
	}
}
