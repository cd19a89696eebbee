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

// A refusal for want of OAuth scopes names them in RequiredScopes.
func TestScopeRefusal(t *testing.T) {
	t.Parallel()
	reg := otc.NewRegistry(&otc.RegistryOptions{Logger: slog.New(slog.DiscardHandler)})
	require.NoError(t, otc.Register(reg, otc.Tool{
		ID: "Notes.Write", Version: "1.0.0", Description: "Writes a note.",
		Policy: &otc.Policy{RequiredScopes: []string{"notes:read", "notes:write"}},
	}, func(context.Context, struct{}) (int, error) { return 1, nil }))
	auth := otc.AuthenticatorFunc(func(*http.Request) (*otc.Identity, error) {
		return &otc.Identity{Method: "oauth", Claims: map[string]any{"scope": "notes:read"}}, nil
	})
	srv := httptest.NewServer(otc.NewHandler(reg, &otc.HandlerOptions{Authenticator: auth}))
	t.Cleanup(srv.Close)

	c, err := client.New(srv.URL, nil)
	require.NoError(t, err)
	_, err = c.Call(context.Background(), "Notes.Write", map[string]any{}, nil)
	var e *otc.Error
	require.ErrorAs(t, err, &e)
	assert.Equal(t, otc.CodeForbidden, e.Code)
	assert.Equal(t, otc.ReasonInsufficientScope, e.Reason)
	assert.Equal(t, []string{"notes:write"}, e.RequiredScopes)
}
