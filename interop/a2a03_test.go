package interop

import (
	"testing"

	a2a03 "github.com/a2aproject/a2a-go/a2a"
	a2aclient03 "github.com/a2aproject/a2a-go/a2aclient"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestA2A03Client: the A2A Go SDK's 0.3 client, which sends no
// A2A-Version header, calls the calculator over JSON-RPC at 0.3
// (message/send, kind-tagged parts): a value, wrapped in an object as 0.3's
// data parts are, and a tool error with its hint, each answered by a
// message whose metadata says how the call ended.
func TestA2A03Client(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	client, err := a2aclient03.NewFromEndpoints(ctx, []a2a03.AgentInterface{{Transport: a2a03.TransportProtocolJSONRPC, URL: sharedServer.url + "/a2a"}})
	require.NoError(t, err)
	t.Cleanup(func() { _ = client.Destroy() })

	msg := a2a03.NewMessage(a2a03.MessageRoleUser, a2a03.DataPart{Data: map[string]any{"tool": "Calculator_Add", "input": map[string]any{"a": 2, "b": 3}}})
	res, err := client.SendMessage(ctx, &a2a03.MessageSendParams{Message: msg})
	require.NoError(t, err)
	reply, ok := res.(*a2a03.Message)
	require.True(t, ok, "a message, got %T", res)
	assert.Equal(t, "succeeded", reply.Metadata["io.github.otcgo/outcome"])
	require.Len(t, reply.Parts, 2)
	data, ok := reply.Parts[0].(a2a03.DataPart)
	require.True(t, ok, "%T", reply.Parts[0])
	assert.Equal(t, map[string]any{"result": float64(5)}, data.Data)
	text, ok := reply.Parts[1].(a2a03.TextPart)
	require.True(t, ok, "%T", reply.Parts[1])
	assert.Equal(t, "5", text.Text)

	msg = a2a03.NewMessage(a2a03.MessageRoleUser, a2a03.DataPart{Data: map[string]any{"tool": "Doorbell_Ring", "input": map[string]any{"doorbell_id": "doorbell1"}}})
	res, err = client.SendMessage(ctx, &a2a03.MessageSendParams{Message: msg})
	require.NoError(t, err)
	reply, ok = res.(*a2a03.Message)
	require.True(t, ok, "a message, got %T", res)
	assert.Equal(t, "failed", reply.Metadata["io.github.otcgo/outcome"])
	first, ok := reply.Parts[0].(a2a03.TextPart)
	require.True(t, ok)
	assert.Contains(t, first.Text, "ids: doorbell42,doorbell84")
}
