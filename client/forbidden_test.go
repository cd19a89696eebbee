package client_test

import (
	"context"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/otcgo/otc"
	"github.com/otcgo/otc/client"
)

// A call a tool's policy refuses comes back as an *otc.Error with
// CodeForbidden and the server's reason.
func TestPolicyRefusal(t *testing.T) {
	t.Parallel()
	reg := otc.NewRegistry(&otc.RegistryOptions{Logger: slog.New(slog.DiscardHandler)})
	require.NoError(t, otc.Register(reg, otc.Tool{
		ID: "Pay.Quote", Version: "1.0.0", Description: "Quotes a payment.",
		Policy: &otc.Policy{Protocols: []string{"http"}},
	}, func(context.Context, struct{}) (int, error) { return 1, nil }))
	srv := httptest.NewServer(otc.NewHandler(reg, nil))
	t.Cleanup(srv.Close)

	c, err := client.New(srv.URL, nil)
	require.NoError(t, err)
	_, err = c.Call(context.Background(), "Pay.Quote", map[string]any{}, nil)
	var e *otc.Error
	require.ErrorAs(t, err, &e)
	assert.Equal(t, otc.CodeForbidden, e.Code)
	assert.Equal(t, otc.ReasonProtocolDenied, e.Reason)
	assert.Contains(t, err.Error(), "status 403")
	assert.Equal(t, http.StatusForbidden, e.Code.HTTPStatus())
}
