package rest_test

import (
	"context"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/otcgo/otc"
	"github.com/otcgo/otc/rest"
)

// TestRESTAsk asks over the REST view's real wire: the invocation ends
// with an execution error naming the question, and the retry carries
// the answer in context.input_responses.
func TestRESTAsk(t *testing.T) {
	t.Parallel()
	reg := otc.NewRegistry(&otc.RegistryOptions{Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	require.NoError(t, otc.Register(reg, otc.Tool{ID: "Shop.Greet", Version: "1.0.0", Description: "Greets the user by name."},
		func(ctx context.Context, _ struct{}) (string, error) {
			var ans struct {
				Name string `json:"name" jsonschema:"required,title=Name"`
			}
			q := &otc.Elicitation{Key: "user_name", Message: "What is your name?", Answer: &ans}
			if err := otc.AskAll(ctx, q); err != nil {
				return "", err
			}
			if q.Action != otc.ElicitAccept {
				return "Hello, stranger", nil
			}
			return "Hello, " + ans.Name, nil
		}))
	mux := http.NewServeMux()
	mux.Handle("/v1/", http.StripPrefix("/v1", rest.NewHandler(reg, nil)))
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	f := &restFixture{srv: srv, reg: reg}

	r := f.invoke(t, "Shop_Greet", restBody(t, map[string]any{}, nil))
	e := r.failure(t, http.StatusInternalServerError, rest.CodeExecutionError)
	assert.Equal(t, "Tool 'Shop_Greet' needs answers before it can go on:\n- user_name: What is your name?", e.Message)
	assert.True(t, e.Retryable)
	require.NotNil(t, e.Details)
	prompt, _ := e.Details["additional_prompt_content"].(string)
	assert.Contains(t, prompt, "context.input_responses in the REST view")
	assert.Contains(t, prompt, `"user_name":{"method":"elicitation/create","params":{"message":"What is your name?","requestedSchema":{"properties":{"name":{"type":"string","title":"Name"}},"type":"object","required":["name"]}}`)

	answer := map[string]any{"input_responses": map[string]any{"user_name": map[string]any{"action": "accept", "content": map[string]any{"name": "Ada"}}}}
	value, _ := f.invoke(t, "Shop_Greet", restBody(t, map[string]any{}, answer)).success(t)
	assert.JSONEq(t, `"Hello, Ada"`, string(value))

	cancel := map[string]any{"input_responses": map[string]any{"user_name": map[string]any{"action": "cancel"}}}
	value, _ = f.invoke(t, "Shop_Greet", restBody(t, map[string]any{}, cancel)).success(t)
	assert.JSONEq(t, `"Hello, stranger"`, string(value))

	bad := map[string]any{"input_responses": map[string]any{"user_name": "Ada"}}
	f.invoke(t, "Shop_Greet", restBody(t, map[string]any{}, bad)).failure(t, http.StatusBadRequest, rest.CodeInvalidShape)
}
