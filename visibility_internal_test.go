package otc

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"

	idclaims "github.com/otcgo/otc/internal/claims"
)

// The scope checks that avoid allocating (scopeGranted in calls, caller in
// catalogs) agree with Identity.Scopes on every shape of claim.
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

// claimHas agrees with claimStrings.
func TestClaimHasAgreesWithClaimStrings(t *testing.T) {
	t.Parallel()
	for _, v := range []any{nil, "a", []string{"a", "b"}, []any{"a", 1, "b"}, 3, map[string]any{"a": 1}} {
		for _, s := range []string{"a", "b", "c"} {
			assert.Equal(t, slices.Contains(claimStrings(v), s), claimHas(v, s), "%v holds %q", v, s)
		}
	}
}
