package otc_test

import (
	"context"
	"log/slog"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/otcgo/otc"
	"github.com/otcgo/otc/internal/testkit"
)

// BenchmarkPolicy times a direct call of a tool without a policy, of one
// whose policy checks the claims of a capability token (audience,
// capabilities, blast radius), and of one that also binds the token to
// the call (its operation and body hash) and spends its token id, so that
// the ratios show what the checks cost a call. Each execution-bound call
// carries a token of its own, since a token runs its tool once; building
// its claims is part of what is timed. Its expiry is past, so that the
// record of spent ids forgets each at once and stays small however many
// iterations run.
func BenchmarkPolicy(b *testing.B) {
	reg := otc.NewRegistry(&otc.RegistryOptions{Logger: slog.New(slog.DiscardHandler)})
	add := func(id string, p *otc.Policy) {
		require.NoError(b, otc.Register(reg, otc.Tool{ID: id, Version: "1.0.0", Description: "Adds.", Policy: p}, testkit.Add))
	}
	add("Bench.Open", nil)
	add("Bench.Guarded", &otc.Policy{ResourceURI: "urn:bench", RequiredCapabilities: []string{"add"}, MaxBlastRadius: "tenant:*"})
	add("Bench.Bound", &otc.Policy{
		ResourceURI: "urn:bench", RequiredCapabilities: []string{"add"}, MaxBlastRadius: "tenant:*",
		RequiresExecution: true, AllowedOperations: []string{"add"},
	})
	bodyOf := func(tool string) []byte {
		return []byte(`{"request":{"tool_id":"` + tool + `","input":{"a":1,"b":2}}}`)
	}
	expired := float64(time.Now().Add(-2 * time.Minute).Unix())
	boundHash := testkit.InpHash(string(bodyOf("Bench.Bound")))
	var n int
	identity := func(bound bool) *otc.Identity {
		claims := map[string]any{"aud": "urn:bench", "caps": []any{"read", "add"}, "blast_radius": "tenant:acme"}
		if bound {
			n++
			claims["exec_act"], claims["inp_hash"] = "add", boundHash
			claims["jti"], claims["exp"] = strconv.Itoa(n), expired
		}
		return &otc.Identity{Method: otc.MethodCapability, Name: "agent", Claims: claims}
	}
	for _, tc := range []struct {
		name, tool string
		bound      bool
	}{{"no_policy", "Bench.Open", false}, {"claims", "Bench.Guarded", false}, {"execution_bound", "Bench.Bound", true}} {
		b.Run(tc.name, func(b *testing.B) {
			body := bodyOf(tc.tool)
			req := otc.CallRequest{ToolID: tc.tool, Input: []byte(`{"a":1,"b":2}`), Protocol: otc.ProtocolOTC, RequestBody: body}
			call := func() (otc.CallResult, error) {
				r := req
				return reg.Call(otc.WithIdentity(context.Background(), identity(tc.bound)), &r)
			}
			for range 2 { // a new token each time: both run
				res, err := call()
				require.NoError(b, err)
				require.Nil(b, res.Error)
			}
			b.ReportAllocs()
			for b.Loop() {
				_, _ = call()
			}
			res, err := call()
			require.NoError(b, err, "still answered after the loop: the record of spent ids did not fill up")
			require.Nil(b, res.Error)
		})
	}
}
