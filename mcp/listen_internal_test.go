package mcp

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/otcgo/otc"
)

// TestListenBound: a server keeps at most maxListens listen streams open.
func TestListenBound(t *testing.T) {
	t.Parallel()
	s := newServer(otc.NewRegistry(nil), nil, false)
	s.listens.Store(maxListens)
	m := new(message)
	require.Nil(t, readMessage([]byte(`{"jsonrpc":"2.0","id":1,"method":"subscriptions/listen","params":{"notifications":{"toolsListChanged":true}}}`), m, "body"))
	_, e := s.listen(context.Background(), &exchange{msg: m, out: discard{}})
	require.NotNil(t, e)
	assert.Equal(t, codeServerBusy, e.Code)
	assert.Contains(t, e.Message, "1000 streams of subscriptions/listen are open")
	assert.EqualValues(t, maxListens, s.listens.Load(), "the refused stream is not counted")
}

type discard struct{}

func (discard) send([]byte) {}
