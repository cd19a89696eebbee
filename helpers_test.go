package otc_test

// Shared fixtures of the black-box HTTP tests in handler_test.go: a registry
// of small tools, each built to exercise one path of the handler, served
// over httptest, and helpers that send raw requests and check the parts of
// every answer that SPEC §1, §2 and §6 fix (status, Content-Type, a JSON
// object carrying $schema). Names start with "wire" so that they stay out
// of the way of the package's other test files.

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"math"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/otcgo/otc"
	"github.com/otcgo/otc/internal/testkit"
)

// Values the call context carries in the tests of SPEC §7. They are
// distinctive so that a leak into a body or a log line is unmistakable.
const (
	wireSecretValue = "s3cr3t-API-KEY-value-7f1c9a"
	wireTokenValue  = "ya29-google-token-value-9d2e4b"
	wireExtraSecret = "undeclared-extra-secret-44aa01"
	wireExtraToken  = "undeclared-github-token-5c7e12"
	wirePanicValue  = "wire-panic-value-1d3f"
)

// wireOrderInput is the input of Shapes.Order: nested objects, arrays,
// maps and an integer.
type wireOrderInput struct {
	Customer string          `json:"customer" jsonschema:"description=Who places the order."`
	Address  testkit.Address `json:"address" jsonschema:"description=Where to deliver."`
	Items    []int           `json:"items" jsonschema:"description=Article numbers."`
	Tags     map[string]int  `json:"tags,omitempty" jsonschema:"description=Counters by tag."`
	Count    int             `json:"count,omitempty" jsonschema:"description=How many parcels."`
}

// wireOrderOutput summarizes what Shapes.Order received, so that a test
// can see the decoded input.
type wireOrderOutput struct {
	Customer string `json:"customer"`
	Zip      string `json:"zip"`
	Items    int    `json:"items"`
	Count    int    `json:"count"`
}

// wireSecureOutput is what Secure.Use saw of its call context. It reports
// whether each value matched, never the value itself.
type wireSecureOutput struct {
	SecretOK                bool   `json:"secret_ok"`
	TokenOK                 bool   `json:"token_ok"`
	UndeclaredSecretVisible bool   `json:"undeclared_secret_visible"`
	UndeclaredTokenVisible  bool   `json:"undeclared_token_visible"`
	UserID                  string `json:"user_id"`
}

// wireSecureTool is the id of the tool with requirements.
const wireSecureTool = "Secure.Use@1.0.0"

// wireSecureRequirements are the requirements of Secure.Use: one of each
// kind SPEC §7 names.
func wireSecureRequirements() *otc.Requirements {
	return &otc.Requirements{
		Authorization: []otc.AuthorizationRequirement{{ID: "google", OAuth2: &otc.OAuth2Requirement{Scopes: []string{"gmail.readonly"}}}},
		Secrets:       []otc.SecretRequirement{{ID: "API_KEY"}},
		UserID:        true,
	}
}

// wireOptions configures a fixture.
type wireOptions struct {
	handler   *otc.HandlerOptions
	challenge func(ctx context.Context, toolID string, req otc.AuthorizationRequirement, userID string) *otc.AuthorizationChallenge
	// empty leaves the registry without tools.
	empty bool
}

// wireFixture is a registry of test tools served over a real HTTP server.
type wireFixture struct {
	reg  *otc.Registry
	h    *otc.Handler
	srv  *httptest.Server
	logs *testkit.SyncBuffer

	// Slow.Wait sends on started when it begins, then blocks until its
	// context is done and sends the context's error on stopped.
	started chan struct{}
	stopped chan error
}

// newWireFixture builds the test registry and serves it.
func newWireFixture(t *testing.T, opts wireOptions) *wireFixture {
	t.Helper()
	f := &wireFixture{
		logs:    &testkit.SyncBuffer{},
		started: make(chan struct{}, 1),
		stopped: make(chan error, 1),
	}
	f.reg = otc.NewRegistry(&otc.RegistryOptions{
		Logger:                 slog.New(slog.NewTextHandler(f.logs, nil)),
		AuthorizationChallenge: opts.challenge,
	})
	if !opts.empty {
		f.registerTools(t)
	}
	f.h = otc.NewHandler(f.reg, opts.handler)
	f.srv = httptest.NewServer(f.h)
	t.Cleanup(f.srv.Close)
	return f
}

// registerTools adds every test tool to the fixture's registry.
func (f *wireFixture) registerTools(t *testing.T) {
	t.Helper()
	reg := f.reg

	require.NoError(t, otc.Register(reg, otc.Tool{
		ID: "Calculator.Add", Version: "1.0.0", Description: "Adds two numbers together.",
	}, testkit.Add))

	require.NoError(t, otc.Register(reg, otc.Tool{
		ID: "Shapes.Order", Version: "1.0.0", Description: "Places an order with nested parameters.",
	}, func(ctx context.Context, in wireOrderInput) (wireOrderOutput, error) {
		return wireOrderOutput{Customer: in.Customer, Zip: in.Address.Zip, Items: len(in.Items), Count: in.Count}, nil
	}))

	require.NoError(t, otc.Register(reg, otc.Tool{
		ID: "Faults.Panic", Version: "1.0.0", Description: "Panics.",
	}, func(ctx context.Context, in struct{}) (float64, error) {
		panic(wirePanicValue)
	}))

	require.NoError(t, otc.Register(reg, otc.Tool{
		ID: "Faults.NaN", Version: "1.0.0", Description: "Returns NaN, which JSON cannot carry.",
	}, func(ctx context.Context, in struct{}) (float64, error) {
		return math.NaN(), nil
	}))

	require.NoError(t, otc.Register(reg, otc.Tool{
		ID: "Faults.Chan", Version: "1.0.0", Description: "Returns a map holding a channel.",
	}, func(ctx context.Context, in struct{}) (any, error) {
		return map[string]any{"ok": 1, "nested": []any{make(chan int)}}, nil
	}))

	require.NoError(t, otc.Register(reg, otc.Tool{
		ID: "Slow.Wait", Version: "1.0.0", Description: "Waits until the call is cancelled.",
	}, func(ctx context.Context, in struct{}) (otc.NoOutput, error) {
		f.started <- struct{}{}
		<-ctx.Done()
		f.stopped <- ctx.Err()
		return otc.NoOutput{}, ctx.Err()
	}))

	require.NoError(t, otc.Register(reg, otc.Tool{
		ID: "Meta.Inspect", Version: "1.0.0", Description: "Reports what its context carries.",
	}, testkit.Inspect))

	require.NoError(t, otc.Register(reg, otc.Tool{
		ID: "Meta.Noop", Version: "1.0.0", Description: "Does nothing and returns nothing.",
	}, testkit.Noop))

	require.NoError(t, otc.Register(reg, otc.Tool{
		ID: "Errors.Raise", Version: "1.0.0", Description: "Fails in the way the mode names.",
	}, func(ctx context.Context, in testkit.ModeInput) (string, error) {
		return "", testkit.Raise(in.Mode)
	}))

	require.NoError(t, otc.Register(reg, otc.Tool{
		ID: "Secure.Use", Version: "1.0.0", Description: "Needs a secret, a token and a user id.",
		Requirements: wireSecureRequirements(),
	}, func(ctx context.Context, in testkit.ModeInput) (wireSecureOutput, error) {
		switch in.Mode {
		case "panic":
			panic("the secure tool gave up")
		case "error":
			return wireSecureOutput{}, errors.New("the upstream service refused the request")
		case "tool_error":
			return wireSecureOutput{}, &otc.ToolError{Message: "Upstream is busy", DeveloperMessage: "HTTP 503 from upstream", CanRetry: true}
		}
		secret, _ := otc.Secret(ctx, "API_KEY")
		token, _ := otc.AuthorizationToken(ctx, "google")
		_, extraSecret := otc.Secret(ctx, "EXTRA_KEY")
		_, extraToken := otc.AuthorizationToken(ctx, "github")
		return wireSecureOutput{
			SecretOK:                secret == wireSecretValue,
			TokenOK:                 token == wireTokenValue,
			UndeclaredSecretVisible: extraSecret,
			UndeclaredTokenVisible:  extraToken,
			UserID:                  otc.UserID(ctx),
		}, nil
	}))

	// Several versions of one tool, registered out of order; each
	// reports which one ran.
	for _, v := range []string{"10.0.0", "1.0.0", "9.0.0", "2.0.0"} {
		require.NoError(t, otc.Register(reg, otc.Tool{
			ID: "Versions.Which", Version: v, Description: "Reports its own version.",
		}, testkit.OwnToolID))
	}
}

// wireResponse is a response read in full.
type wireResponse struct {
	status int
	header http.Header
	body   []byte
}

// do sends a request to the fixture's server. body may be nil.
func (f *wireFixture) do(t *testing.T, method, path string, body io.Reader) wireResponse {
	t.Helper()
	req, err := http.NewRequest(method, f.srv.URL+path, body)
	require.NoError(t, err)
	return wireSend(t, f.srv.Client(), req)
}

// wireSend sends req and reads the whole response.
func wireSend(t *testing.T, c *http.Client, req *http.Request) wireResponse {
	t.Helper()
	if req.Body != nil && req.Header.Get("Content-Type") == "" {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := c.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	return wireResponse{status: resp.StatusCode, header: resp.Header, body: b}
}

// call posts body to /tools/call.
func (f *wireFixture) call(t *testing.T, body string) wireResponse {
	t.Helper()
	return f.do(t, http.MethodPost, "/tools/call", strings.NewReader(body))
}

// wireCallBody builds a call body from a request object; schema "" leaves
// $schema out.
func wireCallBody(t *testing.T, schema string, request map[string]any) string {
	t.Helper()
	body := map[string]any{"request": request}
	if schema != "" {
		body["$schema"] = schema
	}
	b, err := json.Marshal(body)
	require.NoError(t, err)
	return string(b)
}

// object checks what SPEC §1 and §2 ask of every response, that it is
// JSON with Content-Type application/json, a single object, carrying
// $schema, and returns the object with numbers kept as json.Number.
func (r wireResponse) object(t *testing.T) map[string]any {
	t.Helper()
	assert.Equal(t, "application/json", r.header.Get("Content-Type"), "Content-Type (body %s)", r.body)
	dec := json.NewDecoder(bytes.NewReader(r.body))
	dec.UseNumber()
	var obj map[string]any
	require.NoError(t, dec.Decode(&obj), "body is not a JSON object: %s", r.body)
	require.NotNil(t, obj, "body is JSON null")
	_, err := dec.Token()
	require.ErrorIs(t, err, io.EOF, "data after the JSON object: %s", r.body)
	schema, ok := obj["$schema"].(string)
	require.True(t, ok, "body lacks a string $schema: %s", r.body)
	assert.NotEmpty(t, schema)
	return obj
}

// wireErrorBody is the error response body of SPEC §6, decoded strictly
// so that a field outside the table fails the test.
type wireErrorBody struct {
	Schema              string                   `json:"$schema"`
	Message             string                   `json:"message"`
	DeveloperMessage    string                   `json:"developer_message"`
	ParameterErrors     map[string]string        `json:"parameter_errors"`
	MissingRequirements *otc.MissingRequirements `json:"missing_requirements"`
}

// errorBody checks the status and the common parts of an error response
// and decodes its body.
func (r wireResponse) errorBody(t *testing.T, status int) wireErrorBody {
	t.Helper()
	require.Equal(t, status, r.status, "status (body %s)", r.body)
	r.object(t)
	var e wireErrorBody
	dec := json.NewDecoder(bytes.NewReader(r.body))
	dec.DisallowUnknownFields()
	require.NoError(t, dec.Decode(&e), "error body has an unexpected shape: %s", r.body)
	assert.NotEmpty(t, e.Message, "message is required in every error body")
	return e
}

// wireResult is the result object of a call response (SPEC §4).
type wireResult struct {
	CallID   string          `json:"call_id"`
	Duration json.Number     `json:"duration"`
	Success  bool            `json:"success"`
	Value    json.RawMessage `json:"value"`
	Error    *wireToolError  `json:"error"`
}

// wireToolError is result.error (SPEC §6). Optional fields are pointers so
// that a test can tell absent from empty.
type wireToolError struct {
	Message                 string       `json:"message"`
	DeveloperMessage        *string      `json:"developer_message"`
	CanRetry                *bool        `json:"can_retry"`
	AdditionalPromptContent *string      `json:"additional_prompt_content"`
	RetryAfterMS            *json.Number `json:"retry_after_ms"`
}

// result checks a 200 call response and decodes it strictly. It returns
// the response's $schema too.
func (r wireResponse) result(t *testing.T) (wireResult, string) {
	t.Helper()
	require.Equal(t, http.StatusOK, r.status, "status (body %s)", r.body)
	obj := r.object(t)
	var body struct {
		Schema string     `json:"$schema"`
		Result wireResult `json:"result"`
	}
	dec := json.NewDecoder(bytes.NewReader(r.body))
	dec.DisallowUnknownFields()
	dec.UseNumber()
	require.NoError(t, dec.Decode(&body), "call response has an unexpected shape: %s", r.body)

	res, ok := obj["result"].(map[string]any)
	require.True(t, ok, "result is not an object: %s", r.body)
	_, isNumber := res["duration"].(json.Number)
	assert.True(t, isNumber, "duration must be a JSON number: %s", r.body)
	d, err := body.Result.Duration.Float64()
	assert.NoError(t, err)
	assert.GreaterOrEqual(t, d, 0.0, "duration")
	assert.NotEmpty(t, body.Result.CallID, "call_id")
	if body.Result.Success {
		assert.Nil(t, body.Result.Error, "a successful result carries no error")
	} else {
		require.NotNil(t, body.Result.Error, "a failed result carries an error: %s", r.body)
		assert.NotEmpty(t, body.Result.Error.Message)
		assert.NotContains(t, res, "value", "a failed result carries no value")
	}
	return body.Result, body.Schema
}

// success checks a successful call and returns its value.
func (r wireResponse) success(t *testing.T) json.RawMessage {
	t.Helper()
	res, _ := r.result(t)
	require.True(t, res.Success, "call failed: %s", r.body)
	return res.Value
}

// toolError checks a call whose function failed and returns the error.
func (r wireResponse) toolError(t *testing.T) *wireToolError {
	t.Helper()
	res, _ := r.result(t)
	require.False(t, res.Success, "call succeeded: %s", r.body)
	return res.Error
}

// schema returns the $schema of a JSON response.
func (r wireResponse) schema(t *testing.T) string {
	t.Helper()
	return r.object(t)["$schema"].(string)
}

// wireSecureBody builds a call of Secure.Use with the given context.
func wireSecureBody(t *testing.T, mode string, callContext map[string]any) string {
	t.Helper()
	req := map[string]any{"tool_id": wireSecureTool}
	if mode != "" {
		req["input"] = map[string]any{"mode": mode}
	}
	if callContext != nil {
		req["context"] = callContext
	}
	return wireCallBody(t, "", req)
}

func wireSecrets(pairs ...string) []map[string]string {
	var out []map[string]string
	for i := 0; i+1 < len(pairs); i += 2 {
		out = append(out, map[string]string{"id": pairs[i], "value": pairs[i+1]})
	}
	return out
}

func wireTokens(pairs ...string) []map[string]string {
	var out []map[string]string
	for i := 0; i+1 < len(pairs); i += 2 {
		out = append(out, map[string]string{"id": pairs[i], "token": pairs[i+1]})
	}
	return out
}

// wireAssertNoSecrets fails if any secret value or token of the tests
// appears in s.
func wireAssertNoSecrets(t *testing.T, s, where string) {
	t.Helper()
	for _, v := range []string{wireSecretValue, wireTokenValue, wireExtraSecret, wireExtraToken} {
		assert.NotContains(t, s, v, "a secret value leaked into the %s", where)
	}
}
