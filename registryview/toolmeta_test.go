package registryview_test

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/otcgo/otc/internal/testkit"
)

// A registry entry carries a tool's title, hints and icons after its
// protocols and policy, in MCP's shapes; its _meta stays with MCP.
func TestRegistryView_ToolMetadata(t *testing.T) {
	t.Parallel()
	url := serveRegistryView(t, testkit.NewMetaRegistry(t), nil)
	protocols := `"protocols":["otc","http","mcp","a2a"]`
	want := map[string]string{
		"Calculator.Add@1.0.0": `{"tool_id":"Calculator.Add@1.0.0","name":"Calculator_Add","description":"Adds.","version":"1.0.0",` +
			protocols + `,"title":"Add two numbers","annotations":{"readOnlyHint":true}}`,
		"Payments.Refund@1.0.0": `{"tool_id":"Payments.Refund@1.0.0","name":"Payments_Refund","description":"Refunds an order.","version":"1.0.0",` +
			protocols + `,"title":"Refund an order","annotations":` + testkit.RefundAnnotations + `,"icons":` + testkit.RefundIcons + `}`,
		"Util.Noop@1.0.0": `{"tool_id":"Util.Noop@1.0.0","name":"Util_Noop","description":"Does nothing.","version":"1.0.0",` + protocols + `}`,
	}
	for _, path := range []string{"/v1/tools", "/v1/tools?protocol=mcp", "/v1/mcp/tools"} {
		t.Run("list"+path, func(t *testing.T) {
			t.Parallel()
			r := registryViewGet(t, url+path)
			var entries []json.RawMessage
			require.NoError(t, json.Unmarshal(r.body, &entries), "body: %s", r.body)
			require.Len(t, entries, len(want))
			for i, id := range []string{"Calculator.Add@1.0.0", "Payments.Refund@1.0.0", "Util.Noop@1.0.0"} {
				assert.JSONEq(t, want[id], string(entries[i]))
			}
			assert.NotContains(t, string(r.body), "_meta")
		})
	}
	for id, entry := range want {
		t.Run("describe/"+id, func(t *testing.T) {
			t.Parallel()
			r := registryViewGet(t, url+"/v1/tools/"+id)
			require.Equal(t, 200, r.status, "body: %s", r.body)
			assert.JSONEq(t, entry, string(r.body))
		})
	}
}
