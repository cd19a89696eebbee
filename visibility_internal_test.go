package otc

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	idclaims "github.com/otcgo/otc/internal/claims"
)

// The scope checks that avoid allocating (claims.Granted in refusals,
// caller in the checks) agree with Identity.Scopes on every shape of claim.
func TestScopeChecksAgreeWithScopes(t *testing.T) {
	t.Parallel()
	var many []string
	for i := range 40 {
		many = append(many, fmt.Sprintf("s%d", i))
	}
	for _, claims := range []map[string]any{
		nil,
		{},
		{"scope": "a b"},
		{"scope": "  a\tb\n"},
		{"scope": "a\tc"},
		{"scope": "a  b"},
		{"scope": ""},
		{"scope": "a", "scp": []any{"b"}}, // scope wins
		{"scope": 7, "scp": []any{"b", 3, "c"}},
		{"scp": "a b"},
		{"scp": []string{"a", "b"}},
		{"scp": []any{"a b"}},
		{"scope": strings.Join(many, " ")}, // more than caller holds split
		{"scp": map[string]any{"a": true}},
	} {
		id := &Identity{Method: MethodCapability, Claims: claims}
		var c caller
		c.read(id)
		for _, s := range append([]string{"a", "b", "c", "a b", "", "s0", "s39", "s40"}, many[10:12]...) {
			want := slices.Contains(id.Scopes(), s)
			assert.Equal(t, want, idclaims.Granted(id.Claims, s), "claims.Granted(%v, %q)", claims, s)
			if claims != nil {
				assert.Equal(t, want, c.granted(s), "caller(%v).granted(%q)", claims, s)
			}
		}
	}
}

// TestEachCallerCheckRefusesAndHides: for every check of callerChecks, a
// caller that fails it (and passes those before) is refused by the call
// with its reason and does not see the tool in a catalog; one that passes
// them all is let through and sees it. A check added to the list without
// a case here fails the test, so that both paths are shown to follow it.
func TestEachCallerCheckRefusesAndHides(t *testing.T) {
	t.Parallel()
	reg := NewRegistry(nil)
	policy := &Policy{ResourceURI: "urn:pay", RequiredCapabilities: []string{"pay"}, MaxBlastRadius: "tenant:*", RequiredScopes: []string{"pay:write"}, RequiresBoundToken: true}
	require.NoError(t, Register(reg, Tool{ID: "Pay.Out", Version: "1.0.0", Description: "Pays.", Policy: policy},
		func(context.Context, struct{}) (string, error) { return "paid", nil }))
	good := func() map[string]any {
		return map[string]any{"aud": "urn:pay", "caps": []any{"pay"}, "blast_radius": "tenant:acme", "scope": "pay:write", "cnf": map[string]any{"jkt": "0ZcOCORZNYy-DWpqq30jZyJGHTN0d2HglBV3uiguA4I"}}
	}
	capability := func(edit func(map[string]any)) *Identity {
		c := good()
		if edit != nil {
			edit(c)
		}
		return &Identity{Method: MethodCapability, Name: "agent", Claims: c}
	}
	failing := map[string]*Identity{
		ReasonMissingToken:             {Method: "oauth", Name: "u", Claims: good()},
		ReasonTokenNotBound:            capability(func(c map[string]any) { delete(c, "cnf") }),
		ReasonAudienceMismatch:         capability(func(c map[string]any) { c["aud"] = "urn:other" }),
		ReasonInsufficientScope:        capability(func(c map[string]any) { c["scope"] = "pay:read" }),
		ReasonInsufficientCapabilities: capability(func(c map[string]any) { c["caps"] = []any{"read"} }),
		ReasonBlastRadiusExceeded:      capability(func(c map[string]any) { c["blast_radius"] = "org:acme" }),
	}
	call := func(reg *Registry, id *Identity) (CallResult, error) {
		return reg.Call(WithIdentity(context.Background(), id), &CallRequest{ToolID: "Pay.Out", Protocol: ProtocolOTC})
	}
	listed := NewRegistry(&RegistryOptions{ListEveryTool: true})
	require.NoError(t, Register(listed, Tool{ID: "Pay.Out", Version: "1.0.0", Description: "Pays.", Policy: policy},
		func(context.Context, struct{}) (string, error) { return "paid", nil }))
	for _, reason := range callerChecks {
		id, ok := failing[reason]
		require.True(t, ok, "callerChecks has %s: give this test a caller that fails it", reason)
		_, err := call(reg, id)
		var e *Error
		require.ErrorAs(t, err, &e, reason)
		if reason == ReasonMissingToken || reason == ReasonInsufficientScope || reason == ReasonTokenNotBound {
			assert.Equal(t, reason, e.Reason, "a refusal its caller can act on (send a token, step up, bind it) is precise")
		} else {
			assert.ErrorIs(t, err, ErrToolNotFound, "%s: a caller that sees the tool nowhere is answered as for an unknown tool", reason)
			assert.Equal(t, notFound("Pay_Out", "Pay.Out is not registered"), e, reason)
		}
		assert.False(t, reg.Visibility(id, ProtocolOTC).Sees("Pay.Out@1.0.0"), "%s: a catalog does not show the tool to a caller the call refuses", reason)

		_, err = call(listed, id)
		require.ErrorAs(t, err, &e, reason)
		assert.Equal(t, reason, e.Reason, "with every tool listed, the call is refused for the check the caller fails")
	}
	ok := capability(nil)
	res, err := call(reg, ok)
	require.NoError(t, err)
	assert.JSONEq(t, `"paid"`, string(res.Value))
	assert.True(t, reg.Visibility(ok, ProtocolOTC).Sees("Pay.Out@1.0.0"))
}
