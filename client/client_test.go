package client_test

// Round trips against the library's own handler (SPEC §1–§7), over real
// HTTP: every error class of §6 as the client decodes it, the per-call
// context of §7, and what the client puts on the wire.

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/otcgo/otc"
	"github.com/otcgo/otc/client"
	"github.com/otcgo/otc/export"
	"github.com/otcgo/otc/internal/testkit"
)

type closeInput struct {
	DoorID string `json:"door_id" jsonschema:"description=The door to close."`
}

// seen is what Ctx.Echo reports about its call context.
type seen struct {
	Secret       string `json:"secret"`
	OtherVisible bool   `json:"other_visible"`
	Token        string `json:"token"`
	UserID       string `json:"user_id"`
	CallID       string `json:"call_id"`
	TraceID      string `json:"trace_id"`
}

type item struct {
	Name string `json:"name"`
}

// quiet discards the registry's logs: the panicking tool would otherwise
// print a stack into the test output.
var quiet = slog.New(slog.DiscardHandler)

// newRegistry registers the tools the round-trip tests call.
func newRegistry(t testing.TB) *otc.Registry {
	t.Helper()
	reg := otc.NewRegistry(&otc.RegistryOptions{
		Logger: quiet,
		AuthorizationChallenge: func(_ context.Context, _ string, req otc.AuthorizationRequirement, _ string) *otc.AuthorizationChallenge {
			return &otc.AuthorizationChallenge{ID: req.ID, URL: "https://auth.example.com/" + req.ID}
		},
	})
	for _, v := range []string{"1.0.0", "9.0.0", "10.0.0"} {
		require.NoError(t, otc.Register(reg, otc.Tool{ID: "Math.Add", Version: v, Description: "Adds two numbers."}, testkit.Add))
	}
	require.NoError(t, otc.Register(reg, otc.Tool{
		ID:          "Ctx.Echo",
		Version:     "1.0.0",
		Description: "Reports the call context it received.",
		Requirements: &otc.Requirements{
			Secrets:       []otc.SecretRequirement{{ID: "API_KEY"}},
			Authorization: []otc.AuthorizationRequirement{{ID: "google", OAuth2: &otc.OAuth2Requirement{Scopes: []string{"gmail.readonly"}}}},
			UserID:        true,
		},
	}, func(ctx context.Context, _ struct{}) (seen, error) {
		s := seen{UserID: otc.UserID(ctx), CallID: otc.CallID(ctx), TraceID: otc.TraceID(ctx)}
		s.Secret, _ = otc.Secret(ctx, "API_KEY")
		_, s.OtherVisible = otc.Secret(ctx, "OTHER")
		s.Token, _ = otc.AuthorizationToken(ctx, "google")
		return s, nil
	}))
	require.NoError(t, otc.Register(reg, otc.Tool{ID: "Door.Close", Version: "1.0.0", Description: "Closes a door; returns nothing."},
		func(context.Context, closeInput) (otc.NoOutput, error) { return otc.NoOutput{}, nil }))
	require.NoError(t, otc.Register(reg, otc.Tool{ID: "Null.Get", Version: "1.0.0", Description: "Returns a nil pointer."},
		func(context.Context, struct{}) (*item, error) { return nil, nil }))
	require.NoError(t, otc.Register(reg, otc.Tool{ID: "Boom.Panic", Version: "1.0.0", Description: "Panics."},
		func(context.Context, struct{}) (float64, error) { panic("kaboom") }))
	require.NoError(t, otc.Register(reg, otc.Tool{ID: "Flaky.Fail", Version: "1.0.0", Description: "Fails with a retry hint."},
		func(context.Context, struct{}) (float64, error) {
			return 0, &otc.ToolError{
				Message:                 "Upstream is busy",
				DeveloperMessage:        "connection pool exhausted",
				CanRetry:                true,
				RetryAfter:              1500 * time.Millisecond,
				AdditionalPromptContent: "try again in a moment",
			}
		}))
	require.NoError(t, otc.Register(reg, otc.Tool{ID: "Plain.Fail", Version: "1.0.0", Description: "Fails with a plain error."},
		func(context.Context, struct{}) (float64, error) { return 0, errors.New("disk full") }))
	return reg
}

// serve starts h over real HTTP for the duration of the test.
func serve(t testing.TB, h http.Handler) *httptest.Server {
	t.Helper()
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	return srv
}

// serveRegistry serves a fresh newRegistry with the library's handler.
func serveRegistry(t testing.TB, opts *otc.HandlerOptions) *httptest.Server {
	t.Helper()
	return serve(t, otc.NewHandler(newRegistry(t), opts))
}

func newClient(t testing.TB, baseURL string, opts *client.Options) *client.Client {
	t.Helper()
	c, err := client.New(baseURL, opts)
	require.NoError(t, err)
	return c
}

// recorded is one request as a recordingDoer saw it.
type recorded struct {
	Method string
	Path   string
	Header http.Header
	Body   []byte
}

// recordingDoer records each request, then sends it with next.
type recordingDoer struct {
	next client.Doer
	mu   sync.Mutex
	reqs []recorded
}

func (d *recordingDoer) Do(r *http.Request) (*http.Response, error) {
	var body []byte
	if r.Body != nil {
		var err error
		body, err = io.ReadAll(r.Body)
		if err != nil {
			return nil, err
		}
		r.Body = io.NopCloser(bytes.NewReader(body))
	}
	d.mu.Lock()
	d.reqs = append(d.reqs, recorded{Method: r.Method, Path: r.URL.Path, Header: r.Header.Clone(), Body: body})
	d.mu.Unlock()
	return d.next.Do(r)
}

func (d *recordingDoer) requests() []recorded {
	d.mu.Lock()
	defer d.mu.Unlock()
	return append([]recorded(nil), d.reqs...)
}

// headerDoer adds a header to every request: how a caller sends an API key
// (SPEC §8) through the client.
type headerDoer struct {
	next        client.Doer
	name, value string
}

func (d headerDoer) Do(r *http.Request) (*http.Response, error) {
	r.Header.Set(d.name, d.value)
	return d.next.Do(r)
}

var uuidV4 = regexp.MustCompile(`^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$`)

func TestNew_BaseURL(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name, url string
	}{
		{"empty", ""},
		{"relative_path", "/otc"},
		{"host_without_scheme", "localhost:8080"},
		{"ftp_scheme", "ftp://tools.example.com"},
		{"no_host", "http://"},
		{"query", "http://tools.example.com/otc?key=1"},
		{"fragment", "http://tools.example.com/otc#top"},
		{"unparseable", "http://tools.example.com:port"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			c, err := client.New(tc.url, nil)
			require.Error(t, err)
			assert.Nil(t, c)
			assert.Contains(t, err.Error(), "otc client")
			assert.Contains(t, err.Error(), fmt.Sprintf("%q", tc.url), "the message names the URL")
		})
	}
	for _, u := range []string{"http://127.0.0.1:8080", "https://tools.example.com/otc", "https://tools.example.com/otc/"} {
		t.Run("ok_"+u, func(t *testing.T) {
			t.Parallel()
			_, err := client.New(u, nil)
			assert.NoError(t, err)
		})
	}
}

// TestCall_Success covers the 200 success: true shapes of SPEC §4: a value,
// no value (output_schema null), and the JSON value null.
func TestCall_Success(t *testing.T) {
	t.Parallel()
	srv := serveRegistry(t, nil)
	c := newClient(t, srv.URL, nil)
	ctx := t.Context()

	t.Run("value", func(t *testing.T) {
		res, err := c.Call(ctx, "Math.Add@1.0.0", testkit.AddInput{A: 10, B: 5}, &client.CallOptions{CallID: "call-1"})
		require.NoError(t, err)
		assert.JSONEq(t, `15`, string(res.Value))
		assert.Equal(t, "call-1", res.CallID)
		assert.GreaterOrEqual(t, res.Duration, time.Duration(0))
	})
	t.Run("version_shorthand_and_latest", func(t *testing.T) {
		for _, id := range []string{"Math.Add", "Math.Add@9", "Math.Add@10.0.0"} {
			res, err := c.Call(ctx, id, map[string]any{"a": 1.5, "b": 2}, nil)
			require.NoError(t, err, id)
			assert.JSONEq(t, `3.5`, string(res.Value), id)
		}
	})
	t.Run("raw_message_input", func(t *testing.T) {
		// A model's arguments arrive as a JSON object already.
		res, err := c.Call(ctx, "Math.Add", json.RawMessage(`{"a": 2, "b": 2}`), nil)
		require.NoError(t, err)
		assert.JSONEq(t, `4`, string(res.Value))
	})
	t.Run("no_output", func(t *testing.T) {
		res, err := c.Call(ctx, "Door.Close", closeInput{DoorID: "front"}, nil)
		require.NoError(t, err)
		assert.Nil(t, res.Value, "a tool whose output_schema is null has no value")
		assert.NotEmpty(t, res.CallID)
	})
	t.Run("null_value", func(t *testing.T) {
		res, err := c.Call(ctx, "Null.Get", nil, nil)
		require.NoError(t, err)
		assert.Equal(t, "null", string(res.Value), "a present null is kept apart from an absent value")
	})
	t.Run("generated_call_id", func(t *testing.T) {
		res, err := c.Call(ctx, "Math.Add", testkit.AddInput{A: 1, B: 1}, nil)
		require.NoError(t, err)
		assert.Regexp(t, uuidV4, res.CallID)
	})
}

// TestCall_ToolErrors covers the tool execution errors of SPEC §6: 200 with
// success false.
func TestCall_ToolErrors(t *testing.T) {
	t.Parallel()
	srv := serveRegistry(t, nil)
	c := newClient(t, srv.URL, nil)

	for _, tc := range []struct {
		name, tool string
		want       otc.ToolError
	}{
		{"tool_error_type", "Flaky.Fail", otc.ToolError{
			Message:                 "Upstream is busy",
			DeveloperMessage:        "connection pool exhausted",
			CanRetry:                true,
			RetryAfter:              1500 * time.Millisecond,
			AdditionalPromptContent: "try again in a moment",
		}},
		{"plain_error", "Plain.Fail", otc.ToolError{Message: "disk full"}},
		{"panic", "Boom.Panic", otc.ToolError{Message: "Tool 'Boom_Panic' failed unexpectedly"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			res, err := c.Call(t.Context(), tc.tool, nil, &client.CallOptions{CallID: "c-" + tc.name})
			require.Error(t, err)
			te, ok := errors.AsType[*otc.ToolError](err)
			require.True(t, ok, "want a *otc.ToolError, got %T: %v", err, err)
			assert.Equal(t, tc.want.Message, te.Message)
			if tc.want.DeveloperMessage != "" {
				assert.Equal(t, tc.want.DeveloperMessage, te.DeveloperMessage)
			}
			assert.Equal(t, tc.want.CanRetry, te.CanRetry)
			assert.Equal(t, tc.want.RetryAfter, te.RetryAfter)
			assert.Equal(t, tc.want.AdditionalPromptContent, te.AdditionalPromptContent)

			require.NotNil(t, res, "a tool error still returns the Result")
			assert.Equal(t, "c-"+tc.name, res.CallID)
			assert.Nil(t, res.Value)

			assert.Contains(t, err.Error(), tc.tool)
			assert.Contains(t, err.Error(), tc.want.Message)
			_, isRefusal := errors.AsType[*otc.Error](err)
			assert.False(t, isRefusal, "a tool error is not a refused call")
		})
	}

	t.Run("panic_value_stays_on_the_server_side_message", func(t *testing.T) {
		t.Parallel()
		_, err := c.Call(t.Context(), "Boom.Panic", nil, nil)
		te, ok := errors.AsType[*otc.ToolError](err)
		require.True(t, ok)
		assert.NotContains(t, te.Message, "kaboom", "the model-facing message is fixed (SPEC §6)")
		assert.Contains(t, te.DeveloperMessage, "kaboom")
	})
}

// TestCall_ServerErrors covers the 400 class of SPEC §6 and §7.
func TestCall_ServerErrors(t *testing.T) {
	t.Parallel()
	srv := serveRegistry(t, nil)
	c := newClient(t, srv.URL, nil)

	for _, tc := range []struct {
		name, tool   string
		opts         *client.CallOptions
		wantMessage  string // in otc.Error.Message
		wantInString []string
		wantMissing  *otc.MissingRequirements
	}{
		{
			name: "unknown_tool", tool: "Math.Subtract",
			wantMessage:  "Tool 'Math_Subtract' was not found",
			wantInString: []string{"Math.Subtract is not registered"},
		},
		{
			name: "unknown_version", tool: "Math.Add@3.0.0",
			wantMessage:  "Tool 'Math_Add' was not found",
			wantInString: []string{"version 3.0.0"},
		},
		{
			name: "malformed_id", tool: "Math.Add@v1",
			wantMessage: "Tool ID 'Math.Add@v1' is malformed",
		},
		{
			name: "missing_every_requirement", tool: "Ctx.Echo",
			wantMessage:  "Tool 'Ctx_Echo' cannot run without",
			wantInString: []string{"secret API_KEY", "authorization google", "user id"},
			wantMissing: &otc.MissingRequirements{
				Authorization: []otc.AuthorizationChallenge{{ID: "google", URL: "https://auth.example.com/google"}},
				Secrets:       []otc.SecretRequirement{{ID: "API_KEY"}},
				UserID:        true,
			},
		},
		{
			name: "missing_user_id_only", tool: "Ctx.Echo",
			opts: &client.CallOptions{
				Secrets:       []otc.ToolSecret{{ID: "API_KEY", Value: "s3cret-value"}},
				Authorization: []otc.ToolAuthorization{{ID: "google", Token: "tok-value"}},
			},
			wantMessage: "a user id",
			wantMissing: &otc.MissingRequirements{UserID: true},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			res, err := c.Call(t.Context(), tc.tool, nil, tc.opts)
			require.Error(t, err)
			assert.Nil(t, res)
			e, ok := errors.AsType[*otc.Error](err)
			require.True(t, ok, "want a *otc.Error, got %T: %v", err, err)
			assert.Equal(t, otc.CodeServerError, e.Code)
			assert.Contains(t, e.Message, tc.wantMessage)
			assert.Equal(t, tc.wantMissing, e.MissingRequirements)

			msg := err.Error()
			assert.Contains(t, msg, tc.tool, "the message names the tool id")
			assert.Contains(t, msg, "400")
			assert.Contains(t, msg, tc.wantMessage)
			for _, s := range tc.wantInString {
				assert.Contains(t, msg, s)
			}
			assert.NotContains(t, msg, "s3cret-value")
			assert.NotContains(t, msg, "tok-value")
			_, isTool := errors.AsType[*otc.ToolError](err)
			assert.False(t, isTool)
		})
	}
}

// TestCall_ValidationError covers the 422 class of SPEC §6, with the
// seed's own example (b: "infinity").
func TestCall_ValidationError(t *testing.T) {
	t.Parallel()
	srv := serveRegistry(t, nil)
	c := newClient(t, srv.URL, nil)

	for _, tc := range []struct {
		name  string
		input any
		param string
	}{
		{"wrong_type", map[string]any{"a": 10, "b": "infinity"}, "b"},
		{"missing", map[string]any{"a": 10}, "b"},
		{"unexpected", map[string]any{"a": 1, "b": 2, "c": 3}, "c"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			res, err := c.Call(t.Context(), "Math.Add@1.0.0", tc.input, nil)
			require.Error(t, err)
			assert.Nil(t, res)
			e, ok := errors.AsType[*otc.Error](err)
			require.True(t, ok, "want a *otc.Error, got %T: %v", err, err)
			assert.Equal(t, otc.CodeInvalidInput, e.Code)
			assert.Equal(t, "Some input parameters are invalid", e.Message)
			require.Contains(t, e.ParameterErrors, tc.param)
			assert.NotEmpty(t, e.ParameterErrors[tc.param])

			msg := err.Error()
			assert.Contains(t, msg, "Math.Add@1.0.0")
			assert.Contains(t, msg, "422")
			assert.Contains(t, msg, tc.param+": "+e.ParameterErrors[tc.param])
		})
	}
}

// TestCall_TooLarge covers the 413 class of SPEC §6 against a handler with
// a tiny body limit.
func TestCall_TooLarge(t *testing.T) {
	t.Parallel()
	srv := serveRegistry(t, &otc.HandlerOptions{MaxBodyBytes: 256})
	c := newClient(t, srv.URL, nil)

	_, err := c.Call(t.Context(), "Door.Close", closeInput{DoorID: strings.Repeat("x", 1024)}, nil)
	require.Error(t, err)
	e, ok := errors.AsType[*otc.Error](err)
	require.True(t, ok, "want a *otc.Error, got %T: %v", err, err)
	assert.Equal(t, otc.CodeTooLarge, e.Code)
	assert.Contains(t, e.Message, "256")
	assert.Contains(t, err.Error(), "Door.Close")
	assert.Contains(t, err.Error(), "413")

	// A small call to the same server still goes through.
	_, err = c.Call(t.Context(), "Door.Close", closeInput{DoorID: "x"}, nil)
	assert.NoError(t, err)
}

// requireAPIKey answers the JSON 401 of SPEC §6 and §8 when the request
// lacks the API key header.
func requireAPIKey(key string, next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("OXP-API-Key") != key {
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusUnauthorized)
			_, _ = io.WriteString(w, `{"$schema":"otc://1.0","message":"A valid OXP-API-Key header is required"}`)
			return
		}
		next.ServeHTTP(w, r)
	})
}

// TestCall_Unauthenticated covers the 401 class of SPEC §6, and sending an
// API key (SPEC §8) with Options.APIKey or through a Doer.
func TestCall_Unauthenticated(t *testing.T) {
	t.Parallel()
	srv := serve(t, requireAPIKey("k-123", otc.NewHandler(newRegistry(t), nil)))

	t.Run("call_without_key", func(t *testing.T) {
		t.Parallel()
		c := newClient(t, srv.URL, nil)
		_, err := c.Call(t.Context(), "Math.Add", testkit.AddInput{A: 1, B: 2}, nil)
		e, ok := errors.AsType[*otc.Error](err)
		require.True(t, ok, "want a *otc.Error, got %T: %v", err, err)
		assert.Equal(t, otc.CodeUnauthenticated, e.Code)
		assert.Equal(t, "A valid OXP-API-Key header is required", e.Message)
		assert.Contains(t, err.Error(), "Math.Add")
		assert.Contains(t, err.Error(), "401")
	})
	t.Run("list_without_key", func(t *testing.T) {
		t.Parallel()
		c := newClient(t, srv.URL, nil)
		_, err := c.ListTools(t.Context())
		e, ok := errors.AsType[*otc.Error](err)
		require.True(t, ok, "want a *otc.Error, got %T: %v", err, err)
		assert.Equal(t, otc.CodeUnauthenticated, e.Code)
		assert.Contains(t, err.Error(), "401")
		assert.Contains(t, err.Error(), srv.URL+"/tools", "the message names the URL")
	})
	t.Run("with_api_key_option", func(t *testing.T) {
		t.Parallel()
		c := newClient(t, srv.URL, &client.Options{APIKey: "k-123"})
		sum, err := client.CallAs[float64](t.Context(), c, "Math.Add", testkit.AddInput{A: 2, B: 2}, nil)
		require.NoError(t, err)
		assert.Equal(t, 4.0, sum)
	})
	t.Run("with_key_from_a_doer", func(t *testing.T) {
		t.Parallel()
		c := newClient(t, srv.URL, &client.Options{HTTPClient: headerDoer{srv.Client(), "OXP-API-Key", "k-123"}})
		sum, err := client.CallAs[float64](t.Context(), c, "Math.Add", testkit.AddInput{A: 1, B: 2}, nil)
		require.NoError(t, err)
		assert.Equal(t, 3.0, sum)
		_, err = c.ListTools(t.Context())
		assert.NoError(t, err)
	})
}

// TestClient_BaseURLPrefix mounts the handler under /otc (SPEC §1: it works
// behind http.StripPrefix) and reaches it with and without a trailing
// slash on the base URL.
func TestClient_BaseURLPrefix(t *testing.T) {
	t.Parallel()
	mux := http.NewServeMux()
	mux.Handle("/otc/", http.StripPrefix("/otc", otc.NewHandler(newRegistry(t), nil)))
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		http.Error(w, "wrong path "+r.URL.Path, http.StatusTeapot)
	})
	srv := serve(t, mux)

	for _, base := range []string{srv.URL + "/otc", srv.URL + "/otc/"} {
		t.Run(base[len(srv.URL):], func(t *testing.T) {
			t.Parallel()
			c := newClient(t, base, nil)
			ctx := t.Context()
			require.NoError(t, c.Health(ctx))
			defs, err := c.ListTools(ctx)
			require.NoError(t, err)
			assert.NotEmpty(t, defs)
			sum, err := client.CallAs[float64](ctx, c, "Math.Add", testkit.AddInput{A: 2, B: 3}, nil)
			require.NoError(t, err)
			assert.Equal(t, 5.0, sum)
		})
	}
	t.Run("without_prefix_hits_the_mux", func(t *testing.T) {
		t.Parallel()
		c := newClient(t, srv.URL, nil)
		err := c.Health(t.Context())
		re, ok := errors.AsType[*client.ResponseError](err)
		require.True(t, ok, "want a *client.ResponseError, got %T: %v", err, err)
		assert.Equal(t, http.StatusTeapot, re.StatusCode)
	})
}

// TestCallAs decodes values into the caller's type.
func TestCallAs(t *testing.T) {
	t.Parallel()
	srv := serveRegistry(t, nil)
	c := newClient(t, srv.URL, nil)
	ctx := t.Context()

	t.Run("number", func(t *testing.T) {
		sum, err := client.CallAs[float64](ctx, c, "Math.Add", testkit.AddInput{A: 0.5, B: 0.25}, nil)
		require.NoError(t, err)
		assert.Equal(t, 0.75, sum)
	})
	t.Run("struct", func(t *testing.T) {
		got, err := client.CallAs[seen](ctx, c, "Ctx.Echo", nil, &client.CallOptions{
			UserID:        "u1",
			Secrets:       []otc.ToolSecret{{ID: "API_KEY", Value: "k"}},
			Authorization: []otc.ToolAuthorization{{ID: "google", Token: "t"}},
		})
		require.NoError(t, err)
		assert.Equal(t, "u1", got.UserID)
		assert.Equal(t, "k", got.Secret)
	})
	t.Run("no_output_leaves_zero", func(t *testing.T) {
		got, err := client.CallAs[string](ctx, c, "Door.Close", closeInput{DoorID: "d"}, nil)
		require.NoError(t, err)
		assert.Equal(t, "", got)
	})
	t.Run("null_into_pointer", func(t *testing.T) {
		got, err := client.CallAs[*item](ctx, c, "Null.Get", nil, nil)
		require.NoError(t, err)
		assert.Nil(t, got)
	})
	t.Run("value_does_not_fit", func(t *testing.T) {
		got, err := client.CallAs[string](ctx, c, "Math.Add", testkit.AddInput{A: 1, B: 2}, nil)
		require.Error(t, err)
		assert.Equal(t, "", got)
		assert.Contains(t, err.Error(), "Math.Add")
		assert.Contains(t, err.Error(), "string")
		_, isJSON := errors.AsType[*json.UnmarshalTypeError](err)
		assert.True(t, isJSON, "the decoding error is wrapped: %v", err)
		_, isTool := errors.AsType[*otc.ToolError](err)
		assert.False(t, isTool)
	})
	t.Run("tool_error_passes_through", func(t *testing.T) {
		got, err := client.CallAs[float64](ctx, c, "Flaky.Fail", nil, nil)
		assert.Zero(t, got)
		te, ok := errors.AsType[*otc.ToolError](err)
		require.True(t, ok, "want a *otc.ToolError, got %T: %v", err, err)
		assert.True(t, te.CanRetry)
	})
}

// TestCall_Context checks that the per-call fields of SPEC §4 and §7 reach
// the tool function.
func TestCall_Context(t *testing.T) {
	t.Parallel()
	srv := serveRegistry(t, nil)
	c := newClient(t, srv.URL, nil)

	got, err := client.CallAs[seen](t.Context(), c, "Ctx.Echo", nil, &client.CallOptions{
		CallID:  "call-42",
		TraceID: "trace-7",
		UserID:  "user@example.com",
		Secrets: []otc.ToolSecret{
			{ID: "API_KEY", Value: "secret-value"},
			{ID: "OTHER", Value: "not-declared"},
		},
		Authorization: []otc.ToolAuthorization{{ID: "google", Token: "ya29.token"}},
	})
	require.NoError(t, err)
	assert.Equal(t, seen{
		Secret:       "secret-value",
		OtherVisible: false, // the tool did not declare OTHER (SPEC §7)
		Token:        "ya29.token",
		UserID:       "user@example.com",
		CallID:       "call-42",
		TraceID:      "trace-7",
	}, got)
}

// TestClient_Wire records what the client sends.
func TestClient_Wire(t *testing.T) {
	t.Parallel()
	srv := serveRegistry(t, nil)

	for _, tc := range []struct {
		name       string
		opts       client.Options
		wantAgent  string
		wantSchema string
	}{
		{"defaults", client.Options{}, client.DefaultUserAgent, otc.SchemaOTC},
		{"custom", client.Options{UserAgent: "my-agent/2.0", Schema: otc.SchemaOXP}, "my-agent/2.0", otc.SchemaOXP},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			rec := &recordingDoer{next: srv.Client()}
			opts := tc.opts
			opts.HTTPClient = rec
			c := newClient(t, srv.URL, &opts)
			ctx := t.Context()

			_, err := c.ListTools(ctx)
			require.NoError(t, err)
			_, err = c.Call(ctx, "Ctx.Echo", map[string]any{}, &client.CallOptions{
				CallID:        "id-1",
				TraceID:       "tr-1",
				UserID:        "u-1",
				Secrets:       []otc.ToolSecret{{ID: "API_KEY", Value: "v"}},
				Authorization: []otc.ToolAuthorization{{ID: "google", Token: "t"}},
			})
			require.NoError(t, err)
			require.NoError(t, c.Health(ctx))

			reqs := rec.requests()
			require.Len(t, reqs, 3)
			list, call, health := reqs[0], reqs[1], reqs[2]

			assert.Equal(t, http.MethodGet, list.Method)
			assert.Equal(t, "/tools", list.Path)
			assert.Equal(t, http.MethodPost, call.Method)
			assert.Equal(t, "/tools/call", call.Path)
			assert.Equal(t, http.MethodGet, health.Method)
			assert.Equal(t, "/health", health.Path)
			for _, r := range reqs {
				assert.Equal(t, tc.wantAgent, r.Header.Get("User-Agent"), r.Path)
				assert.Equal(t, "application/json", r.Header.Get("Accept"), r.Path)
			}
			assert.Equal(t, "application/json", call.Header.Get("Content-Type"))
			assert.Empty(t, list.Body, "GET /tools sends no body")

			assert.JSONEq(t, fmt.Sprintf(`{
				"$schema": %q,
				"request": {
					"tool_id": "Ctx.Echo",
					"call_id": "id-1",
					"trace_id": "tr-1",
					"input": {},
					"context": {
						"user_id": "u-1",
						"secrets": [{"id": "API_KEY", "value": "v"}],
						"authorization": [{"id": "google", "token": "t"}]
					}
				}
			}`, tc.wantSchema), string(call.Body))
		})
	}

	t.Run("minimal_request", func(t *testing.T) {
		t.Parallel()
		rec := &recordingDoer{next: srv.Client()}
		c := newClient(t, srv.URL, &client.Options{HTTPClient: rec})
		_, err := c.Call(t.Context(), "Null.Get", nil, nil)
		require.NoError(t, err)
		reqs := rec.requests()
		require.Len(t, reqs, 1)
		var body struct {
			Schema  string                     `json:"$schema"`
			Request map[string]json.RawMessage `json:"request"`
		}
		require.NoError(t, json.Unmarshal(reqs[0].Body, &body))
		assert.Equal(t, otc.SchemaOTC, body.Schema)
		keys := make([]string, 0, len(body.Request))
		for k := range body.Request {
			keys = append(keys, k)
		}
		// No input, no context, no trace id: only what the call has. The
		// call id is always sent, so that a retry can reuse it.
		assert.ElementsMatch(t, []string{"tool_id", "call_id"}, keys)
	})
}

// TestCall_BadInput checks inputs the client refuses before sending.
func TestCall_BadInput(t *testing.T) {
	t.Parallel()
	srv := serveRegistry(t, nil)
	for _, tc := range []struct {
		name  string
		input any
		want  string
	}{
		{"array", []int{1, 2}, "an array"},
		{"string", "hello", "a string"},
		{"number", 42, "a number"},
		{"raw_array", json.RawMessage(`[1]`), "an array"},
		{"invalid_raw", json.RawMessage(`{"a":`), "encoding the input"},
		{"bytes_array", []byte(`[1]`), "an array"},
		{"unencodable", map[string]any{"ch": make(chan int)}, "encoding the input"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			rec := &recordingDoer{next: srv.Client()}
			c := newClient(t, srv.URL, &client.Options{HTTPClient: rec})
			res, err := c.Call(t.Context(), "Math.Add", tc.input, nil)
			require.Error(t, err)
			assert.Nil(t, res)
			assert.Contains(t, err.Error(), "Math.Add")
			assert.Contains(t, err.Error(), tc.want)
			assert.Empty(t, rec.requests(), "nothing is sent")
		})
	}
}

// TestCall_BytesAreJSON: input given as []byte is JSON, as a
// json.RawMessage is, not a base64 string.
func TestCall_BytesAreJSON(t *testing.T) {
	t.Parallel()
	c := newClient(t, serveRegistry(t, nil).URL, nil)
	sum, err := client.CallAs[float64](t.Context(), c, "Math.Add", []byte(`{"a":1,"b":2}`), nil)
	require.NoError(t, err)
	assert.Equal(t, 3.0, sum)
}

// TestListTools_OwnHandler reads the library's own catalog (SPEC §3).
func TestListTools_OwnHandler(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name string
		opts *otc.HandlerOptions
	}{
		{"tools", nil},
		{"tools_and_items", &otc.HandlerOptions{IncludeItems: true}},
		{"oxp_schema", &otc.HandlerOptions{Schema: otc.SchemaOXP}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			reg := newRegistry(t)
			srv := serve(t, otc.NewHandler(reg, tc.opts))
			c := newClient(t, srv.URL, nil)
			defs, err := c.ListTools(t.Context())
			require.NoError(t, err)

			want := reg.Tools()
			require.Len(t, defs, len(want), "each entry once, even when the server also sends items")
			for i := range want {
				assert.Equal(t, want[i].ID, defs[i].ID)
				assert.Equal(t, want[i].Name, defs[i].Name)
				assert.Equal(t, want[i].Description, defs[i].Description)
				assert.Equal(t, want[i].Version, defs[i].Version)
				assert.JSONEq(t, string(want[i].InputSchema.Parameters), string(defs[i].InputSchema.Parameters), want[i].ID)
				if want[i].OutputSchema == nil {
					assert.Nil(t, defs[i].OutputSchema, want[i].ID)
				} else {
					assert.JSONEq(t, string(want[i].OutputSchema), string(defs[i].OutputSchema), want[i].ID)
				}
				assert.Equal(t, want[i].Requirements, defs[i].Requirements, want[i].ID)
			}
		})
	}
}

// TestHealth covers GET /health (SPEC §1): 200 when ready, 503 while not.
func TestHealth(t *testing.T) {
	t.Parallel()
	h := otc.NewHandler(newRegistry(t), nil)
	srv := serve(t, h)
	c := newClient(t, srv.URL, nil)

	require.NoError(t, c.Health(t.Context()))

	h.SetReady(false)
	err := c.Health(t.Context())
	re, ok := errors.AsType[*client.ResponseError](err)
	require.True(t, ok, "want a *client.ResponseError, got %T: %v", err, err)
	assert.Equal(t, http.StatusServiceUnavailable, re.StatusCode)
	assert.Contains(t, err.Error(), "503")
	assert.Contains(t, err.Error(), "/health")

	// While not ready, calls are refused with a server error.
	_, err = c.Call(t.Context(), "Math.Add", testkit.AddInput{A: 1, B: 1}, nil)
	e, ok := errors.AsType[*otc.Error](err)
	require.True(t, ok, "want a *otc.Error, got %T: %v", err, err)
	assert.Equal(t, otc.CodeServerError, e.Code)
	assert.Contains(t, e.Message, "unavailable")

	h.SetReady(true)
	assert.NoError(t, c.Health(t.Context()))
}

// TestClient_Concurrent runs calls from many goroutines on one client, for
// the race detector.
func TestClient_Concurrent(t *testing.T) {
	t.Parallel()
	srv := serveRegistry(t, nil)
	c := newClient(t, srv.URL, &client.Options{Retry: &client.RetryPolicy{}})
	var wg sync.WaitGroup
	for i := range 16 {
		wg.Go(func() {
			sum, err := client.CallAs[float64](t.Context(), c, "Math.Add", testkit.AddInput{A: float64(i), B: 1}, nil)
			if assert.NoError(t, err) {
				assert.Equal(t, float64(i+1), sum)
			}
		})
	}
	wg.Wait()
}

// TestToolset_AgentLoop goes the whole way against the library's handler:
// list, declare, let "the model" pick a name and arguments, look the name
// up, call.
func TestToolset_AgentLoop(t *testing.T) {
	t.Parallel()
	reg := newRegistry(t)
	srv := serve(t, otc.NewHandler(reg, nil))
	c := newClient(t, srv.URL, nil)
	ctx := t.Context()

	defs, err := c.ListTools(ctx)
	require.NoError(t, err)
	ts, err := export.New(defs, nil)
	require.NoError(t, err)

	var names []string
	for _, decl := range ts.OpenAI() {
		names = append(names, decl.Function.Name)
	}
	assert.ElementsMatch(t, []string{"Boom_Panic", "Ctx_Echo", "Door_Close", "Flaky_Fail", "Math_Add", "Null_Get", "Plain_Fail"}, names,
		"Math.Add is listed in three versions and declared once")

	var mathAdd *export.OpenAITool
	for i, decl := range ts.OpenAI() {
		if decl.Function.Name == "Math_Add" {
			mathAdd = &ts.OpenAI()[i]
		}
	}
	require.NotNil(t, mathAdd)
	assert.Equal(t, "function", mathAdd.Type)
	assert.Equal(t, "Adds two numbers.", mathAdd.Function.Description)
	var served otc.ToolDefinition
	for _, d := range reg.Tools() {
		if d.ID == "Math.Add@10.0.0" {
			served = d
		}
	}
	assert.JSONEq(t, string(served.InputSchema.Parameters), string(mathAdd.Function.Parameters))

	// The model answers with a name and its arguments as a JSON string.
	name, args := "Math_Add", `{"a": 40, "b": 2}`
	chosen, ok := ts.Lookup(name)
	require.True(t, ok)
	assert.Equal(t, "Math.Add@10.0.0", chosen.ID)
	sum, err := client.CallAs[float64](ctx, c, chosen.ID, json.RawMessage(args), nil)
	require.NoError(t, err)
	assert.Equal(t, 42.0, sum)
}
