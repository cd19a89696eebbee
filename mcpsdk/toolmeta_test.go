package mcpsdk_test

import (
	"context"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/otcgo/otc/internal/testkit"
)

// TestAddTools_metadata checks that a tool's title, annotations, icons and
// _meta reach the SDK's tools, and so its clients.
func TestAddTools_metadata(t *testing.T) {
	t.Parallel()
	reg := testkit.NewMetaRegistry(t)
	for _, m := range modes {
		t.Run(m.name, func(t *testing.T) {
			t.Parallel()
			bridge, _ := connect(t, serveSDK(t, bridgeServer(t, reg, nil), m.stateless), m.version)
			ctx, cancel := context.WithTimeout(t.Context(), callTimeout)
			defer cancel()
			res, err := bridge.ListTools(ctx, nil)
			require.NoError(t, err)
			tools := map[string]*mcp.Tool{}
			for _, tool := range res.Tools {
				tools[tool.Name] = tool
			}
			require.Len(t, tools, 3)

			refund := tools["Payments_Refund"]
			require.NotNil(t, refund)
			assert.Equal(t, "Refund an order", refund.Title)
			assert.Equal(t, &mcp.ToolAnnotations{DestructiveHint: new(true), OpenWorldHint: new(false)}, refund.Annotations,
				"the SDK holds the hints whose default is false as plain booleans")
			assert.JSONEq(t, testkit.RefundAnnotations, marshal(t, refund.Annotations))
			assert.JSONEq(t, testkit.RefundMeta, marshal(t, refund.Meta))
			// The SDK's server lists a tool's icons in 2025-06-18 too,
			// where the native server leaves them out.
			assert.JSONEq(t, testkit.RefundIcons, marshal(t, refund.Icons))

			add := tools["Calculator_Add"]
			assert.Equal(t, "Add two numbers", add.Title)
			assert.Equal(t, &mcp.ToolAnnotations{ReadOnlyHint: true}, add.Annotations)

			noop := tools["Util_Noop"]
			assert.Empty(t, noop.Title)
			assert.Nil(t, noop.Annotations)
			assert.Nil(t, noop.Icons)
			assert.Nil(t, noop.Meta)
		})
	}
}
