package client_test

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/otcgo/otc"
	"github.com/otcgo/otc/client"
	"github.com/otcgo/otc/mount"
)

// TestA2AQuestions: an agent's task that asks its user (INPUT_REQUIRED)
// is answered with the Elicit handler and goes on to its end; a client
// without one ends the call saying what it lacks, and one whose handler
// fails ends it with the handler's error.
func TestA2AQuestions(t *testing.T) {
	reg := askRegistry(t, otc.TasksOptional)
	mux := http.NewServeMux()
	mount.All(mux, reg, nil)
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	url := srv.URL + mount.PrefixA2A

	var asked []string
	c, err := client.New(url, &client.Options{Format: client.FormatA2A, Handlers: &client.Handlers{
		Elicit: func(_ context.Context, req *client.ElicitRequest) (*client.ElicitResult, error) {
			asked = append(asked, req.Message)
			return &client.ElicitResult{Action: otc.ElicitAccept, Content: map[string]any{"name": "Ada"}}, nil
		},
	}})
	require.NoError(t, err)
	got, err := client.CallAs[string](t.Context(), c, "Greet_Ask", nil, nil)
	require.NoError(t, err)
	assert.Equal(t, "hello Ada", got)
	assert.Equal(t, []string{"Who are you?"}, asked)

	plain, err := client.New(url, &client.Options{Format: client.FormatA2A})
	require.NoError(t, err)
	_, err = plain.Call(t.Context(), "Greet_Ask", nil, nil)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "cannot answer")

	errAway := errors.New("the user is away")
	failing, err := client.New(url, &client.Options{Format: client.FormatA2A, Handlers: &client.Handlers{
		Elicit: func(context.Context, *client.ElicitRequest) (*client.ElicitResult, error) { return nil, errAway },
	}})
	require.NoError(t, err)
	_, err = failing.Call(t.Context(), "Greet_Ask", nil, nil)
	assert.ErrorIs(t, err, errAway)
}
