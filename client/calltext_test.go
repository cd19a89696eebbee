package client_test

import (
	"context"
	"encoding/json"
	"net/http/httptest"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/otcgo/otc"
	"github.com/otcgo/otc/client"
	"github.com/otcgo/otc/internal/testkit"
)

// TestCallText: a value, a tool error and invalid input come back as the
// model's text; a server that cannot be reached is an error.
func TestCallText(t *testing.T) {
	reg := testkit.NewAddRegistry(t)
	require.NoError(t, otc.Register(reg, otc.Tool{ID: "Bell.Ring", Version: "1.0.0", Description: "Rings."},
		func(context.Context, struct{}) (otc.NoOutput, error) {
			return otc.NoOutput{}, &otc.ToolError{Message: "No bell here", AdditionalPromptContent: "try bell 2"}
		}))
	srv := httptest.NewServer(otc.NewHandler(reg, nil))
	defer srv.Close()
	c, err := client.New(srv.URL, nil)
	require.NoError(t, err)
	ctx := t.Context()

	text, err := c.CallText(ctx, "Calculator.Add", json.RawMessage(`{"a":1,"b":2}`))
	require.NoError(t, err)
	assert.Equal(t, "3", text)
	text, err = c.CallText(ctx, "Bell.Ring", nil)
	require.NoError(t, err, "a tool error is the model's to read")
	assert.Equal(t, "No bell here\n\ntry bell 2", text)
	text, err = c.CallText(ctx, "Calculator.Add", json.RawMessage(`{"a":"x","b":2}`))
	require.NoError(t, err)
	assert.Contains(t, text, "a: Must be a number")
	for _, args := range []string{"1 + 2", `{"a":1`, `[1]`} {
		text, err = c.CallText(ctx, "Calculator.Add", json.RawMessage(args))
		require.NoError(t, err, "%q: arguments a model can write again", args)
		assert.Contains(t, text, "must be a JSON object", "%q", args)
	}
	text, err = c.CallText(ctx, "Bell.Ring", json.RawMessage(" null "))
	require.NoError(t, err)
	assert.Equal(t, "No bell here\n\ntry bell 2", text, "null arguments are none")

	srv.Close()
	_, err = c.CallText(ctx, "Calculator.Add", json.RawMessage(`{"a":1,"b":2}`))
	assert.Error(t, err, "an unreachable server is the agent's to handle")
}
