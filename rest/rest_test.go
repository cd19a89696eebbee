package rest_test

// Black-box tests of the REST adapter (rest.go): the GET /v1/tools,
// GET /v1/tools/{name} and POST /v1/tools/{name}:invoke API of
// seeds/004, served over real HTTP beside the OTC handler on the SAME
// registry, as SPEC §9 asks. Every route, every error code with its status
// and envelope, X-Request-Id on every answer, the call context of §7, and
// parity with the OTC handler: one tool, reached both ways, gives the same
// value, the same validation errors, the same requirement checks and the
// same tool errors. Names start with "rest" so that they stay out of the
// way of the package's other test files.

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"math"
	"net/http"
	"net/http/httptest"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/otcgo/otc"
	"github.com/otcgo/otc/auth"
	"github.com/otcgo/otc/internal/testkit"
	"github.com/otcgo/otc/rest"
)

// Values a call context carries. They are distinctive so that a leak into
// a response body is unmistakable.
const (
	restSecretValue = "rest-secret-API-KEY-8c41d2"
	restTokenValue  = "rest-google-token-f3a917"
	restOtherSecret = "rest-undeclared-secret-5e0b6c"
	restPanicValue  = "rest-panic-value-77aa"
)

// restMaxBody is the body limit of the fixture's two handlers.
const restMaxBody = 4096

// restUUID matches a version 4 UUID, the form of a generated request id.
var restUUID = regexp.MustCompile(`^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$`)

// restAddInputV2 is the input of Calculator.Add@2.0.0, which can round;
// version 1.0.0 takes testkit.AddInput.
type restAddInputV2 struct {
	A     float64 `json:"a" jsonschema:"description=The first number to add."`
	B     float64 `json:"b" jsonschema:"description=The second number to add."`
	Round bool    `json:"round,omitempty" jsonschema:"description=Round the sum to an integer."`
}

// restOrderInput is the input of Shapes.Order: nested objects, arrays, an
// enum and bounded and unbounded integers.
type restOrderInput struct {
	Customer string          `json:"customer" jsonschema:"description=Who places the order."`
	Address  testkit.Address `json:"address" jsonschema:"description=Where to deliver."`
	Items    []int           `json:"items" jsonschema:"description=Article numbers."`
	Speed    string          `json:"speed,omitempty" jsonschema:"description=Delivery speed.,enum=standard,enum=express"`
	Parcels  int             `json:"parcels,omitempty" jsonschema:"description=How many parcels.,minimum=1,maximum=10"`
	Weight   int8            `json:"weight,omitempty" jsonschema:"description=Weight in kilograms."`
}

// restOrderOutput summarizes what Shapes.Order decoded.
type restOrderOutput struct {
	Customer string `json:"customer"`
	Zip      string `json:"zip"`
	Items    int    `json:"items"`
	Parcels  int    `json:"parcels"`
}

// restSecureOutput is what Secure.Use saw of the call context. It reports
// comparisons, never the values themselves.
type restSecureOutput struct {
	SecretOK       bool   `json:"secret_ok"`
	TokenOK        bool   `json:"token_ok"`
	UserID         string `json:"user_id"`
	UndeclaredSeen bool   `json:"undeclared_seen"`
	TokenForOthers bool   `json:"token_for_others"`
	CallerIdentity string `json:"caller_identity"`
}

// restFixture serves one registry twice: the REST API under /v1/ and the
// OTC API under /otc/, as the example does.
type restFixture struct {
	srv *httptest.Server
	reg *otc.Registry
}

// newRESTFixture builds the registry and the server. auth, when non-nil,
// guards both handlers.
func newRESTFixture(t *testing.T, auth otc.Authenticator) *restFixture {
	t.Helper()
	reg := otc.NewRegistry(&otc.RegistryOptions{
		Logger: slog.New(slog.NewTextHandler(io.Discard, nil)),
		AuthorizationChallenge: func(ctx context.Context, toolID string, req otc.AuthorizationRequirement, userID string) *otc.AuthorizationChallenge {
			return &otc.AuthorizationChallenge{ID: req.ID, URL: "https://auth.example/" + req.ID + "?user=" + userID}
		},
	})
	restRegisterTools(t, reg)

	mux := http.NewServeMux()
	mux.Handle("/v1/", http.StripPrefix("/v1", rest.NewHandler(reg, &rest.Options{MaxBodyBytes: restMaxBody, Authenticator: auth})))
	mux.Handle("/otc/", http.StripPrefix("/otc", otc.NewHandler(reg, &otc.HandlerOptions{MaxBodyBytes: restMaxBody, Authenticator: auth})))
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	return &restFixture{srv: srv, reg: reg}
}

// restRegisterTools registers the fixture's tools, each built to exercise
// one path.
func restRegisterTools(t *testing.T, reg *otc.Registry) {
	t.Helper()
	// Two versions of Calculator.Add, registered newest first; the
	// descriptions and inputs differ so that a test sees which one it got.
	require.NoError(t, otc.Register(reg, otc.Tool{
		ID: "Calculator.Add", Version: "2.0.0", Description: "Adds two numbers, optionally rounding the sum.",
	}, func(ctx context.Context, in restAddInputV2) (float64, error) {
		if in.Round {
			return math.Round(in.A + in.B), nil
		}
		return in.A + in.B, nil
	}))
	require.NoError(t, otc.Register(reg, otc.Tool{
		ID: "Calculator.Add", Version: "1.0.0", Description: "Adds two numbers.",
	}, testkit.Add))

	require.NoError(t, otc.Register(reg, otc.Tool{
		ID: "Shapes.Order", Version: "1.0.0", Description: "Places an order.",
	}, func(ctx context.Context, in restOrderInput) (restOrderOutput, error) {
		return restOrderOutput{Customer: in.Customer, Zip: in.Address.Zip, Items: len(in.Items), Parcels: in.Parcels}, nil
	}))

	require.NoError(t, otc.Register(reg, otc.Tool{
		ID: "Meta.Inspect", Version: "1.0.0", Description: "Reports what its context carries.",
	}, testkit.Inspect))

	require.NoError(t, otc.Register(reg, otc.Tool{
		ID: "Meta.Noop", Version: "1.0.0", Description: "Does nothing and returns nothing.",
	}, testkit.Noop))

	require.NoError(t, otc.Register(reg, otc.Tool{
		ID: "Errors.Raise", Version: "1.0.0", Description: "Fails in the way the mode names.",
	}, func(ctx context.Context, in testkit.ModeInput) (float64, error) {
		switch in.Mode {
		case "ok":
			return 1, nil
		case "panic":
			panic(restPanicValue)
		case "nan":
			return math.NaN(), nil
		}
		return 0, testkit.Raise(in.Mode)
	}))

	require.NoError(t, otc.Register(reg, otc.Tool{
		ID: "Secure.Use", Version: "1.0.0", Description: "Needs a secret, a token and a user id.",
		Requirements: &otc.Requirements{
			Authorization: []otc.AuthorizationRequirement{{ID: "google", OAuth2: &otc.OAuth2Requirement{Scopes: []string{"gmail.readonly"}}}},
			Secrets:       []otc.SecretRequirement{{ID: "API_KEY"}},
			UserID:        true,
		},
	}, func(ctx context.Context, in testkit.ModeInput) (restSecureOutput, error) {
		if in.Mode == "error" {
			return restSecureOutput{}, &otc.ToolError{Message: "Upstream is busy", CanRetry: true, RetryAfter: 2 * time.Second}
		}
		secret, _ := otc.Secret(ctx, "API_KEY")
		token, _ := otc.AuthorizationToken(ctx, "google")
		_, undeclared := otc.Secret(ctx, "OTHER_KEY")
		_, github := otc.AuthorizationToken(ctx, "github")
		out := restSecureOutput{
			SecretOK:       secret == restSecretValue,
			TokenOK:        token == restTokenValue,
			UserID:         otc.UserID(ctx),
			UndeclaredSeen: undeclared,
			TokenForOthers: github,
		}
		if id := otc.CallerIdentity(ctx); id != nil {
			out.CallerIdentity = id.Method + ":" + id.Name
		}
		return out, nil
	}))

	// Versions.Which reports the version that ran; 10.0.0 must beat 9.0.0.
	for _, v := range []string{"10.0.0", "1.0.0", "9.0.0", "2.0.0"} {
		require.NoError(t, otc.Register(reg, otc.Tool{
			ID: "Versions.Which", Version: v, Description: "Reports its own version (" + v + ").",
		}, testkit.OwnToolID))
	}
}

// restResponse is a response read in full.
type restResponse struct {
	status int
	header http.Header
	body   []byte
}

// do sends a request; body may be nil, header may be nil.
func (f *restFixture) do(t *testing.T, method, path string, body io.Reader, header http.Header) restResponse {
	t.Helper()
	req, err := http.NewRequest(method, f.srv.URL+path, body)
	require.NoError(t, err)
	for k, vs := range header {
		req.Header[k] = vs
	}
	if body != nil && req.Header.Get("Content-Type") == "" {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := f.srv.Client().Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	return restResponse{status: resp.StatusCode, header: resp.Header, body: b}
}

// get sends GET path.
func (f *restFixture) get(t *testing.T, path string) restResponse {
	t.Helper()
	return f.do(t, http.MethodGet, path, nil, nil)
}

// invoke posts body to /v1/tools/{name}:invoke.
func (f *restFixture) invoke(t *testing.T, name, body string) restResponse {
	t.Helper()
	return f.do(t, http.MethodPost, "/v1/tools/"+name+":invoke", strings.NewReader(body), nil)
}

// restBody builds an invocation body: {"schema_version":"0.1.0","args":…},
// with context when it is not nil.
func restBody(t *testing.T, args any, callContext any) string {
	t.Helper()
	m := map[string]any{"schema_version": "0.1.0", "args": args}
	if callContext != nil {
		m["context"] = callContext
	}
	b, err := json.Marshal(m)
	require.NoError(t, err)
	return string(b)
}

// restFullContext is a call context satisfying Secure.Use, plus a secret
// and a token it did not declare.
func restFullContext() map[string]any {
	return map[string]any{
		"user_id":       "u1",
		"secrets":       []any{map[string]any{"id": "API_KEY", "value": restSecretValue}, map[string]any{"id": "OTHER_KEY", "value": restOtherSecret}},
		"authorization": []any{map[string]any{"id": "google", "token": restTokenValue}, map[string]any{"id": "github", "token": "gh-" + restTokenValue}},
	}
}

// restDecode decodes b strictly, keeping numbers as json.Number.
func restDecode(t *testing.T, b []byte, v any) {
	t.Helper()
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	dec.UseNumber()
	require.NoError(t, dec.Decode(v), "unexpected body: %s", b)
	_, err := dec.Token()
	require.ErrorIs(t, err, io.EOF, "data after the JSON value: %s", b)
}

// restKeys returns the keys of the JSON object b.
func restKeys(t *testing.T, b []byte) []string {
	t.Helper()
	var m map[string]json.RawMessage
	require.NoError(t, json.Unmarshal(b, &m), "not a JSON object: %s", b)
	require.NotNil(t, m, "JSON null, not an object")
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

// common checks what every answer of the REST API carries: JSON and a
// request id.
func (r restResponse) common(t *testing.T) {
	t.Helper()
	assert.Equal(t, "application/json", r.header.Get("Content-Type"), "Content-Type (body %s)", r.body)
	assert.NotEmpty(t, r.header.Get("X-Request-Id"), "X-Request-Id")
}

// restErrorDoc is the seed's Error document.
type restErrorDoc struct {
	SchemaVersion string         `json:"schema_version"`
	Code          string         `json:"code"`
	Message       string         `json:"message"`
	Retryable     bool           `json:"retryable"`
	Details       map[string]any `json:"details"`
}

// restMetricsDoc is ToolResult.metrics.
type restMetricsDoc struct {
	LatencyMS json.Number `json:"latency_ms"`
}

// restResultDoc is the seed's ToolResult document, the envelope of every
// invocation answer and of every error.
type restResultDoc struct {
	SchemaVersion string          `json:"schema_version"`
	OK            bool            `json:"ok"`
	Result        json.RawMessage `json:"result"`
	Error         *restErrorDoc   `json:"error"`
	Metrics       *restMetricsDoc `json:"metrics"`
}

// failure checks an error answer: the status, the envelope
// {"schema_version":"0.1.0","ok":false,"error":{…}} with the seed's
// required fields, and the code. It returns the error document.
func (r restResponse) failure(t *testing.T, status int, code string) *restErrorDoc {
	t.Helper()
	require.Equal(t, status, r.status, "status (body %s)", r.body)
	r.common(t)
	keys := restKeys(t, r.body)
	assert.Subset(t, keys, []string{"schema_version", "ok", "error"}, "envelope fields: %s", r.body)
	assert.NotContains(t, keys, "result", "a failure carries no result: %s", r.body)
	var doc restResultDoc
	restDecode(t, r.body, &doc)
	assert.Equal(t, rest.SchemaVersion, doc.SchemaVersion)
	assert.Equal(t, "0.1.0", doc.SchemaVersion)
	assert.False(t, doc.OK)
	require.NotNil(t, doc.Error, "error is required: %s", r.body)
	var raw struct {
		Error json.RawMessage `json:"error"`
	}
	require.NoError(t, json.Unmarshal(r.body, &raw))
	assert.Subset(t, restKeys(t, raw.Error), []string{"schema_version", "code", "message", "retryable"}, "error fields: %s", r.body)
	assert.Equal(t, "0.1.0", doc.Error.SchemaVersion)
	assert.Equal(t, code, doc.Error.Code, "code (body %s)", r.body)
	assert.NotEmpty(t, doc.Error.Message)
	if doc.Metrics != nil {
		restCheckLatency(t, doc.Metrics)
	}
	return doc.Error
}

// success checks a 200 invocation answer and returns the raw result and
// whether the result field was present.
func (r restResponse) success(t *testing.T) (json.RawMessage, bool) {
	t.Helper()
	require.Equal(t, http.StatusOK, r.status, "status (body %s)", r.body)
	r.common(t)
	keys := restKeys(t, r.body)
	assert.Subset(t, keys, []string{"schema_version", "ok", "metrics"}, "fields: %s", r.body)
	assert.NotContains(t, keys, "error", "a success carries no error: %s", r.body)
	var doc restResultDoc
	restDecode(t, r.body, &doc)
	assert.Equal(t, "0.1.0", doc.SchemaVersion)
	assert.True(t, doc.OK)
	require.NotNil(t, doc.Metrics, "metrics: %s", r.body)
	restCheckLatency(t, doc.Metrics)
	return doc.Result, slices.Contains(keys, "result")
}

// restCheckLatency checks that latency_ms is a number, not negative.
func restCheckLatency(t *testing.T, m *restMetricsDoc) {
	t.Helper()
	ms, err := m.LatencyMS.Float64()
	require.NoError(t, err, "latency_ms must be a number")
	assert.GreaterOrEqual(t, ms, 0.0, "latency_ms")
}

// restParameterErrors reads details.parameter_errors as a map of strings.
func restParameterErrors(t *testing.T, e *restErrorDoc) map[string]string {
	t.Helper()
	require.NotNil(t, e.Details, "details")
	require.Contains(t, e.Details, "parameter_errors")
	b, err := json.Marshal(e.Details["parameter_errors"])
	require.NoError(t, err)
	var out map[string]string
	require.NoError(t, json.Unmarshal(b, &out), "parameter_errors must map names to messages: %s", b)
	return out
}

// restOTCAnswer is the OTC handler's answer to a call, any status.
type restOTCAnswer struct {
	Schema              string            `json:"$schema"`
	Message             string            `json:"message"`
	DeveloperMessage    string            `json:"developer_message"`
	ParameterErrors     map[string]string `json:"parameter_errors"`
	MissingRequirements json.RawMessage   `json:"missing_requirements"`
	Result              *struct {
		CallID   string          `json:"call_id"`
		Duration json.Number     `json:"duration"`
		Success  bool            `json:"success"`
		Value    json.RawMessage `json:"value"`
		Error    *struct {
			Message                 string       `json:"message"`
			DeveloperMessage        string       `json:"developer_message"`
			CanRetry                bool         `json:"can_retry"`
			AdditionalPromptContent string       `json:"additional_prompt_content"`
			RetryAfterMS            *json.Number `json:"retry_after_ms"`
		} `json:"error"`
	} `json:"result"`
}

// otcCall calls toolID through the OTC handler and decodes the answer.
func (f *restFixture) otcCall(t *testing.T, toolID string, input, callContext any) (int, restOTCAnswer, []byte) {
	t.Helper()
	request := map[string]any{"tool_id": toolID, "input": input}
	if callContext != nil {
		request["context"] = callContext
	}
	b, err := json.Marshal(map[string]any{"request": request})
	require.NoError(t, err)
	r := f.do(t, http.MethodPost, "/otc/tools/call", bytes.NewReader(b), nil)
	var a restOTCAnswer
	restDecode(t, r.body, &a)
	return r.status, a, r.body
}

// restOTCID turns a REST tool name, with its optional version, into the
// OTC tool id of the fixture's tool: Calculator_Add@1 → Calculator.Add@1.
func restOTCID(name string) string {
	return strings.Replace(name, "_", ".", 1)
}

func TestRESTNewHandlerNilRegistryPanics(t *testing.T) {
	t.Parallel()
	defer func() {
		v := recover()
		require.NotNil(t, v, "rest.NewHandler(nil, nil) must panic")
		assert.True(t, strings.HasPrefix(fmt.Sprint(v), "otc: "), "panic message %q must start with \"otc: \"", v)
	}()
	rest.NewHandler(nil, nil)
}

func TestRESTNewHandlerNilOptions(t *testing.T) {
	t.Parallel()
	reg := otc.NewRegistry(nil)
	require.NoError(t, otc.Register(reg, otc.Tool{ID: "Calculator.Add", Version: "1.0.0", Description: "Adds two numbers."}, testkit.Add))
	mux := http.NewServeMux()
	mux.Handle("/v1/", http.StripPrefix("/v1", rest.NewHandler(reg, nil)))
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	f := &restFixture{srv: srv, reg: reg}

	value, _ := f.invoke(t, "Calculator_Add", `{"schema_version":"0.1.0","args":{"a":2,"b":3}}`).success(t)
	assert.JSONEq(t, `5`, string(value))
	// The default limit is DefaultMaxBodyBytes: a body just over the
	// fixture's small limit is fine here.
	big := restBody(t, map[string]any{"a": 1, "b": 2}, map[string]any{"user_id": strings.Repeat("u", 2*restMaxBody)})
	value, _ = f.invoke(t, "Calculator_Add", big).success(t)
	assert.JSONEq(t, `3`, string(value))
}

// TestRESTListTools checks the planner view of seeds/004: a JSON array of
// {name, description}, one entry per tool name, from its latest version.
func TestRESTListTools(t *testing.T) {
	t.Parallel()
	f := newRESTFixture(t, nil)

	r := f.get(t, "/v1/tools")
	require.Equal(t, http.StatusOK, r.status, "body %s", r.body)
	r.common(t)
	var entries []map[string]string
	restDecode(t, r.body, &entries)

	// One entry per name, whatever the number of versions.
	latest := map[string]otc.ToolDefinition{}
	for _, d := range f.reg.Tools() {
		if cur, ok := latest[d.Name]; !ok || restVersionLess(cur.Version, d.Version) {
			latest[d.Name] = d
		}
	}
	require.Len(t, entries, len(latest), "one entry per tool name: %s", r.body)
	require.Len(t, latest, 7, "fixture tools")
	seen := map[string]bool{}
	for _, e := range entries {
		assert.ElementsMatch(t, []string{"name", "description"}, slices.Collect(restMapKeys(e)), "entry %v has exactly name and description", e)
		assert.False(t, seen[e["name"]], "name %s listed twice", e["name"])
		seen[e["name"]] = true
		d, ok := latest[e["name"]]
		if assert.True(t, ok, "unknown name %q", e["name"]) {
			assert.Equal(t, d.Description, e["description"], "description of %s is its latest version's", e["name"])
		}
	}
	byName := map[string]string{}
	for _, e := range entries {
		byName[e["name"]] = e["description"]
	}
	assert.Equal(t, "Adds two numbers, optionally rounding the sum.", byName["Calculator_Add"], "2.0.0 is Calculator_Add's latest")
	assert.Equal(t, "Reports its own version (10.0.0).", byName["Versions_Which"], "10.0.0 beats 9.0.0 and 2.0.0")

	// The same answer every time.
	again := f.get(t, "/v1/tools")
	assert.Equal(t, string(r.body), string(again.body))

	t.Run("head", func(t *testing.T) {
		t.Parallel()
		r := f.do(t, http.MethodHead, "/v1/tools", nil, nil)
		assert.Equal(t, http.StatusOK, r.status)
		assert.Empty(t, r.body)
		r.common(t)
	})
	t.Run("empty_registry_is_an_empty_array", func(t *testing.T) {
		t.Parallel()
		srv := httptest.NewServer(rest.NewHandler(otc.NewRegistry(nil), nil))
		t.Cleanup(srv.Close)
		r := (&restFixture{srv: srv}).get(t, "/tools")
		require.Equal(t, http.StatusOK, r.status)
		assert.JSONEq(t, `[]`, string(r.body))
	})
}

// restMapKeys yields the keys of m.
func restMapKeys[V any](m map[string]V) func(func(string) bool) {
	return func(yield func(string) bool) {
		for k := range m {
			if !yield(k) {
				return
			}
		}
	}
}

// restVersionLess compares x.y.z versions numerically.
func restVersionLess(a, b string) bool {
	var a1, a2, a3, b1, b2, b3 int
	_, _ = fmt.Sscanf(a, "%d.%d.%d", &a1, &a2, &a3)
	_, _ = fmt.Sscanf(b, "%d.%d.%d", &b1, &b2, &b3)
	return slices.Compare([]int{a1, a2, a3}, []int{b1, b2, b3}) < 0
}

// restDefinitionDoc is the seed's ToolDefinition.
type restDefinitionDoc struct {
	SchemaVersion string          `json:"schema_version"`
	Name          string          `json:"name"`
	Description   string          `json:"description"`
	Version       string          `json:"version"`
	Parameters    json.RawMessage `json:"parameters"`
	Returns       json.RawMessage `json:"returns"`
	Tags          []string        `json:"tags"`
	Source        string          `json:"source"`
}

// TestRESTDescribeTool checks GET /v1/tools/{name}: the full definition
// of the latest version, or of the version after "@", with the same
// schemas as the OTC catalog's entry for that version.
func TestRESTDescribeTool(t *testing.T) {
	t.Parallel()
	f := newRESTFixture(t, nil)

	// The OTC catalog, by id, is the reference for the schemas.
	otcTools := f.get(t, "/otc/tools")
	require.Equal(t, http.StatusOK, otcTools.status)
	var catalog struct {
		Tools []struct {
			ID          string `json:"id"`
			InputSchema struct {
				Parameters json.RawMessage `json:"parameters"`
			} `json:"input_schema"`
			OutputSchema json.RawMessage `json:"output_schema"`
		} `json:"tools"`
	}
	require.NoError(t, json.Unmarshal(otcTools.body, &catalog))
	otcByID := map[string]int{}
	for i, d := range catalog.Tools {
		otcByID[d.ID] = i
	}

	tests := []struct {
		name, path          string
		wantID, wantVersion string
		wantDescription     string
		noReturns           bool
	}{
		{name: "latest", path: "Calculator_Add", wantID: "Calculator.Add@2.0.0", wantVersion: "2.0.0", wantDescription: "Adds two numbers, optionally rounding the sum."},
		{name: "exact_older_version", path: "Calculator_Add@1.0.0", wantID: "Calculator.Add@1.0.0", wantVersion: "1.0.0", wantDescription: "Adds two numbers."},
		{name: "major_older_version", path: "Calculator_Add@1", wantID: "Calculator.Add@1.0.0", wantVersion: "1.0.0", wantDescription: "Adds two numbers."},
		{name: "major_latest_version", path: "Calculator_Add@2", wantID: "Calculator.Add@2.0.0", wantVersion: "2.0.0", wantDescription: "Adds two numbers, optionally rounding the sum."},
		{name: "semver_order", path: "Versions_Which", wantID: "Versions.Which@10.0.0", wantVersion: "10.0.0", wantDescription: "Reports its own version (10.0.0)."},
		{name: "middle_version", path: "Versions_Which@9.0.0", wantID: "Versions.Which@9.0.0", wantVersion: "9.0.0", wantDescription: "Reports its own version (9.0.0)."},
		{name: "no_output", path: "Meta_Noop", wantID: "Meta.Noop@1.0.0", wantVersion: "1.0.0", wantDescription: "Does nothing and returns nothing.", noReturns: true},
		{name: "with_requirements", path: "Secure_Use", wantID: "Secure.Use@1.0.0", wantVersion: "1.0.0", wantDescription: "Needs a secret, a token and a user id."},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			r := f.get(t, "/v1/tools/"+tt.path)
			require.Equal(t, http.StatusOK, r.status, "body %s", r.body)
			r.common(t)
			keys := restKeys(t, r.body)
			assert.Subset(t, keys, []string{"schema_version", "name", "description", "version", "parameters"}, "the seed's required fields")
			var d restDefinitionDoc
			restDecode(t, r.body, &d)
			assert.Equal(t, "0.1.0", d.SchemaVersion)
			assert.Equal(t, strings.SplitN(tt.path, "@", 2)[0], d.Name)
			assert.Equal(t, tt.wantDescription, d.Description)
			assert.Equal(t, tt.wantVersion, d.Version)

			i, ok := otcByID[tt.wantID]
			require.True(t, ok, "OTC catalog lacks %s", tt.wantID)
			assert.JSONEq(t, string(catalog.Tools[i].InputSchema.Parameters), string(d.Parameters), "parameters is the input schema")
			if tt.noReturns {
				assert.NotContains(t, keys, "returns", "a tool that returns nothing has no returns: %s", r.body)
			} else {
				require.Contains(t, keys, "returns")
				assert.JSONEq(t, string(catalog.Tools[i].OutputSchema), string(d.Returns), "returns is the output schema")
			}
			// tags and source are optional in the seed; this library fills
			// them with the toolkit and the OTC id, which lets a user find
			// the same tool in the OTC catalog.
			if slices.Contains(keys, "tags") {
				assert.Contains(t, d.Tags, strings.SplitN(tt.wantID, ".", 2)[0])
			}
			if slices.Contains(keys, "source") {
				assert.Contains(t, d.Source, tt.wantID)
			}
		})
	}

	t.Run("schemas_as_reflected", func(t *testing.T) {
		t.Parallel()
		var v1, v2 restDefinitionDoc
		restDecode(t, f.get(t, "/v1/tools/Calculator_Add@1.0.0").body, &v1)
		restDecode(t, f.get(t, "/v1/tools/Calculator_Add").body, &v2)
		var p1, p2 struct {
			Type       string                     `json:"type"`
			Properties map[string]json.RawMessage `json:"properties"`
			Required   []string                   `json:"required"`
		}
		require.NoError(t, json.Unmarshal(v1.Parameters, &p1))
		require.NoError(t, json.Unmarshal(v2.Parameters, &p2))
		assert.Equal(t, "object", p1.Type)
		assert.ElementsMatch(t, []string{"a", "b"}, slices.Collect(restMapKeys(p1.Properties)))
		assert.ElementsMatch(t, []string{"a", "b", "round"}, slices.Collect(restMapKeys(p2.Properties)), "2.0.0 adds round")
		assert.ElementsMatch(t, []string{"a", "b"}, p1.Required)
		assert.JSONEq(t, `{"type":"number"}`, string(v2.Returns))
	})
	t.Run("head", func(t *testing.T) {
		t.Parallel()
		r := f.do(t, http.MethodHead, "/v1/tools/Calculator_Add", nil, nil)
		assert.Equal(t, http.StatusOK, r.status)
		assert.Empty(t, r.body)
	})
}

// TestRESTMethodNotAllowed checks 405 request.method_not_allowed, with an
// Allow header naming the methods the route takes.
func TestRESTMethodNotAllowed(t *testing.T) {
	t.Parallel()
	f := newRESTFixture(t, nil)
	tests := []struct {
		name, method, path string
		allow              []string
	}{
		{"get_invoke", http.MethodGet, "/v1/tools/Calculator_Add:invoke", []string{"POST"}},
		{"put_invoke", http.MethodPut, "/v1/tools/Calculator_Add:invoke", []string{"POST"}},
		{"delete_invoke", http.MethodDelete, "/v1/tools/Calculator_Add:invoke", []string{"POST"}},
		{"head_invoke", http.MethodHead, "/v1/tools/Calculator_Add:invoke", []string{"POST"}},
		{"post_definition", http.MethodPost, "/v1/tools/Calculator_Add", []string{"GET", "HEAD"}},
		{"delete_definition", http.MethodDelete, "/v1/tools/Calculator_Add@1.0.0", []string{"GET", "HEAD"}},
		{"post_list", http.MethodPost, "/v1/tools", []string{"GET", "HEAD"}},
		{"patch_list", http.MethodPatch, "/v1/tools", []string{"GET", "HEAD"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			var body io.Reader
			if tt.method != http.MethodGet && tt.method != http.MethodHead {
				body = strings.NewReader(`{"schema_version":"0.1.0","args":{"a":1,"b":2}}`)
			}
			r := f.do(t, tt.method, tt.path, body, nil)
			assert.Equal(t, http.StatusMethodNotAllowed, r.status)
			var allow []string
			for _, m := range strings.Split(r.header.Get("Allow"), ",") {
				allow = append(allow, strings.TrimSpace(m))
			}
			assert.ElementsMatch(t, tt.allow, allow, "Allow: %q", r.header.Get("Allow"))
			if tt.method == http.MethodHead {
				assert.NotEmpty(t, r.header.Get("X-Request-Id"))
				return
			}
			e := r.failure(t, http.StatusMethodNotAllowed, rest.CodeMethodNotAllowed)
			assert.Contains(t, e.Message, tt.method)
			assert.False(t, e.Retryable)
		})
	}
}

// TestRESTRouteNotFound checks 404 route.not_found for paths outside the
// API, whatever the method.
func TestRESTRouteNotFound(t *testing.T) {
	t.Parallel()
	f := newRESTFixture(t, nil)
	for _, path := range []string{
		"/v1/",
		"/v1/tools/",
		"/v1/tools/a/b",
		"/v1/tools/Calculator_Add/",
		"/v1/tools/Calculator_Add:invoke/extra",
		"/v1/other",
		"/v1/toolsx",
	} {
		for _, method := range []string{http.MethodGet, http.MethodPost} {
			t.Run(method+path, func(t *testing.T) {
				t.Parallel()
				var body io.Reader
				if method == http.MethodPost {
					body = strings.NewReader(`{"schema_version":"0.1.0","args":{}}`)
				}
				r := f.do(t, method, path, body, nil)
				e := r.failure(t, http.StatusNotFound, rest.CodeRouteNotFound)
				assert.False(t, e.Retryable)
				assert.NotContains(t, r.header, "Allow")
			})
		}
	}
}

// TestRESTInvalidJSON checks 400 request.invalid_json: a body that is not
// JSON text at all.
func TestRESTInvalidJSON(t *testing.T) {
	t.Parallel()
	f := newRESTFixture(t, nil)
	tests := []struct{ name, body string }{
		{"empty", ""},
		{"whitespace", " \n\t "},
		{"truncated", `{"schema_version":"0.1.0","args":{"a":1`},
		{"truncated_after_key", `{"schema_version":`},
		{"trailing_garbage", `{"schema_version":"0.1.0","args":{"a":1,"b":2}} x`},
		{"two_objects", `{"schema_version":"0.1.0","args":{}}{"schema_version":"0.1.0","args":{}}`},
		{"trailing_comma", `{"schema_version":"0.1.0","args":{},}`},
		{"single_quotes", `{'schema_version':'0.1.0','args':{}}`},
		{"bare_word", `hello`},
		{"nan_literal", `{"schema_version":"0.1.0","args":{"a":NaN,"b":1}}`},
		{"invalid_utf8_in_string", "{\"schema_version\":\"0.1.0\",\"args\":{\"a\":1,\"b\":2,\"c\":\"\xff\xfe\"}}"},
		{"invalid_utf8_outside_strings", "\xef\xbb\xbf{\"schema_version\":\"0.1.0\",\"args\":{}}\xc3"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			r := f.invoke(t, "Calculator_Add", tt.body)
			e := r.failure(t, http.StatusBadRequest, rest.CodeInvalidJSON)
			assert.False(t, e.Retryable)
			assert.Nil(t, e.Details)
		})
	}
	t.Run("messages", func(t *testing.T) {
		t.Parallel()
		e := f.invoke(t, "Calculator_Add", "").failure(t, http.StatusBadRequest, rest.CodeInvalidJSON)
		assert.Contains(t, e.Message, "empty")
		e = f.invoke(t, "Calculator_Add", `{"schema_version":"0.1.0","args":{"a":1`).failure(t, http.StatusBadRequest, rest.CodeInvalidJSON)
		assert.Contains(t, e.Message, "not valid JSON")
		e = f.invoke(t, "Calculator_Add", "{\"schema_version\":\"0.1.0\",\"args\":{\"s\":\"\xff\"}}").failure(t, http.StatusBadRequest, rest.CodeInvalidJSON)
		assert.Contains(t, e.Message, "UTF-8")
	})
}

// TestRESTInvalidShape checks 400 request.invalid_shape: JSON that is not a
// ToolInvocationRequest.
func TestRESTInvalidShape(t *testing.T) {
	t.Parallel()
	f := newRESTFixture(t, nil)
	tests := []struct {
		name, body, mention string
	}{
		{"array", `[{"schema_version":"0.1.0","args":{}}]`, "object"},
		{"string", `"hello"`, "object"},
		{"number", `42`, "object"},
		{"null", `null`, "object"},
		{"schema_version_missing", `{"args":{"a":1,"b":2}}`, "schema_version"},
		{"schema_version_null", `{"schema_version":null,"args":{"a":1,"b":2}}`, "schema_version"},
		{"schema_version_wrong", `{"schema_version":"1.0.0","args":{"a":1,"b":2}}`, "schema_version"},
		{"schema_version_otc", `{"schema_version":"otc://1.0","args":{"a":1,"b":2}}`, "schema_version"},
		{"schema_version_number", `{"schema_version":0.1,"args":{"a":1,"b":2}}`, "schema_version"},
		{"args_missing", `{"schema_version":"0.1.0"}`, "args"},
		{"args_null", `{"schema_version":"0.1.0","args":null}`, "args"},
		{"args_array", `{"schema_version":"0.1.0","args":[1,2]}`, "args"},
		{"args_string", `{"schema_version":"0.1.0","args":"a=1&b=2"}`, "args"},
		{"args_number", `{"schema_version":"0.1.0","args":3}`, "args"},
		{"context_string", `{"schema_version":"0.1.0","args":{"a":1,"b":2},"context":"u1"}`, "context"},
		{"context_array", `{"schema_version":"0.1.0","args":{"a":1,"b":2},"context":[]}`, "context"},
		{"context_user_id_number", `{"schema_version":"0.1.0","args":{"a":1,"b":2},"context":{"user_id":5}}`, "context"},
		{"context_secrets_object", `{"schema_version":"0.1.0","args":{"a":1,"b":2},"context":{"secrets":{"id":"K","value":"v"}}}`, "context"},
		{"context_secret_value_number", `{"schema_version":"0.1.0","args":{"a":1,"b":2},"context":{"secrets":[{"id":"K","value":5}]}}`, "context"},
		{"context_authorization_string", `{"schema_version":"0.1.0","args":{"a":1,"b":2},"context":{"authorization":"Bearer x"}}`, "context"},
		{"trace_string", `{"schema_version":"0.1.0","args":{"a":1,"b":2},"trace":"abc"}`, "trace"},
		{"trace_array", `{"schema_version":"0.1.0","args":{"a":1,"b":2},"trace":["abc"]}`, "trace"},
		{"trace_id_number", `{"schema_version":"0.1.0","args":{"a":1,"b":2},"trace":{"trace_id":7}}`, "trace"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			r := f.invoke(t, "Calculator_Add", tt.body)
			e := r.failure(t, http.StatusBadRequest, rest.CodeInvalidShape)
			assert.Contains(t, e.Message, tt.mention)
			assert.False(t, e.Retryable)
		})
	}
	t.Run("wrong_types_never_echo_values", func(t *testing.T) {
		t.Parallel()
		body := `{"schema_version":"0.1.0","args":{},"context":{"secrets":[{"id":"K","value":["` + restSecretValue + `"]}]}}`
		r := f.invoke(t, "Calculator_Add", body)
		r.failure(t, http.StatusBadRequest, rest.CodeInvalidShape)
		assert.NotContains(t, string(r.body), restSecretValue)
	})
}

// TestRESTUnknownFieldsIgnored documents that fields the seed does not
// name are ignored, at the top level, in context and in trace: unlike
// the OTC call body (SPEC §4), the REST request is read leniently.
func TestRESTUnknownFieldsIgnored(t *testing.T) {
	t.Parallel()
	f := newRESTFixture(t, nil)
	body := `{"schema_version":"0.1.0","args":{"a":2,"b":3},"metadata":{"x":1},"summary":"hi",` +
		`"context":{"locale":"fr","user_id":"u9"},"trace":{"trace_id":"t1","span_id":"s1"}}`
	value, _ := f.invoke(t, "Calculator_Add", body).success(t)
	assert.JSONEq(t, `5`, string(value))

	value, _ = f.invoke(t, "Meta_Inspect", `{"schema_version":"0.1.0","args":{},"extra":[1,2],"context":{"tenant":"acme","user_id":"u9"},"trace":{"trace_id":"t1","parent":"p"}}`).success(t)
	var got testkit.InspectOutput
	require.NoError(t, json.Unmarshal(value, &got))
	assert.Equal(t, "u9", got.UserID)
	assert.Equal(t, "t1", got.TraceID)

	// Unknown fields inside args are the tool's business: they are
	// rejected by its schema, as through the OTC handler.
	e := f.invoke(t, "Calculator_Add", `{"schema_version":"0.1.0","args":{"a":2,"b":3,"c":4}}`).failure(t, http.StatusBadRequest, rest.CodeInvalidArgs)
	assert.Equal(t, map[string]string{"c": "Is not an accepted parameter"}, restParameterErrors(t, e))
}

// TestRESTToolNotFound checks 404 tool.not_found on both tool routes: an
// unknown name, an unknown version, a malformed version.
func TestRESTToolNotFound(t *testing.T) {
	t.Parallel()
	f := newRESTFixture(t, nil)
	tests := []struct{ name, tool, mention string }{
		{"unknown_name", "Calculator_Divide", "Calculator_Divide"},
		{"id_instead_of_name", "Calculator.Add", "Calculator.Add"},
		{"wrong_case", "calculator_add", "calculator_add"},
		{"unknown_exact_version", "Calculator_Add@3.0.0", "Calculator_Add"},
		{"unknown_minor_version", "Calculator_Add@1.1.0", "Calculator_Add"},
		{"unknown_major_version", "Calculator_Add@9", "Calculator_Add"},
		{"malformed_version_two_parts", "Calculator_Add@1.0", "Calculator_Add"},
		{"malformed_version_v", "Calculator_Add@v1", "Calculator_Add"},
		{"malformed_version_prerelease", "Calculator_Add@1.0.0-beta", "Calculator_Add"},
		{"malformed_version_latest", "Calculator_Add@latest", "Calculator_Add"},
		{"malformed_version_empty", "Calculator_Add@", "Calculator_Add"},
		{"empty_name", "@1.0.0", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			get := f.get(t, "/v1/tools/"+tt.tool)
			e := get.failure(t, http.StatusNotFound, rest.CodeToolNotFound)
			assert.Contains(t, e.Message, tt.mention)
			if tt.tool != "Calculator.Add" {
				assert.NotContains(t, e.Message, "Calculator.Add", "the message names what the caller sent, not the OTC id")
			}
			assert.False(t, e.Retryable)

			post := f.invoke(t, tt.tool, `{"schema_version":"0.1.0","args":{"a":1,"b":2}}`)
			e2 := post.failure(t, http.StatusNotFound, rest.CodeToolNotFound)
			assert.Equal(t, e.Message, e2.Message, "both routes say the same")
		})
	}
	t.Run("empty_name_invoke", func(t *testing.T) {
		t.Parallel()
		f.invoke(t, "", `{"schema_version":"0.1.0","args":{}}`).failure(t, http.StatusNotFound, rest.CodeToolNotFound)
	})
	t.Run("before_the_body", func(t *testing.T) {
		// An unknown tool is reported even when the body is bad too.
		t.Parallel()
		f.invoke(t, "Nope_Nope", `not json`).failure(t, http.StatusNotFound, rest.CodeToolNotFound)
	})
}

// TestRESTInvalidArgs checks 400 tool.invalid_args, whose
// details.parameter_errors follow SPEC §6: top-level names, dotted paths,
// short messages.
func TestRESTInvalidArgs(t *testing.T) {
	t.Parallel()
	f := newRESTFixture(t, nil)
	tests := []struct {
		name, tool string
		args       any
		want       map[string]string
	}{
		{"wrong_type", "Calculator_Add", map[string]any{"a": 1, "b": "two"}, map[string]string{"b": "Must be a number"}},
		{"missing_required", "Calculator_Add", map[string]any{"a": 1}, map[string]string{"b": "Is required"}},
		{"all_missing", "Calculator_Add", map[string]any{}, map[string]string{"a": "Is required", "b": "Is required"}},
		{"unexpected_parameter", "Calculator_Add@1", map[string]any{"a": 1, "b": 2, "round": true}, map[string]string{"round": "Is not an accepted parameter"}},
		{"nested_pattern", "Shapes_Order", map[string]any{"customer": "c", "address": map[string]any{"street": "s", "zip": "12"}, "items": []int{1}}, map[string]string{"address.zip": "Must match the pattern ^[0-9]{5}$"}},
		{"array_item", "Shapes_Order", map[string]any{"customer": "c", "address": map[string]any{"street": "s", "zip": "12345"}, "items": []any{1, "x"}}, map[string]string{"items.1": "Must be an integer"}},
		{"enum", "Shapes_Order", map[string]any{"customer": "c", "address": map[string]any{"street": "s", "zip": "12345"}, "items": []int{}, "speed": "warp"}, map[string]string{"speed": `Must be one of: "standard", "express"`}},
		{"maximum", "Shapes_Order", map[string]any{"customer": "c", "address": map[string]any{"street": "s", "zip": "12345"}, "items": []int{}, "parcels": 11}, map[string]string{"parcels": "Must be at most 10"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			r := f.invoke(t, tt.tool, restBody(t, tt.args, nil))
			e := r.failure(t, http.StatusBadRequest, rest.CodeInvalidArgs)
			assert.Equal(t, "Some input parameters are invalid", e.Message)
			assert.False(t, e.Retryable)
			assert.Equal(t, tt.want, restParameterErrors(t, e))
		})
	}
	t.Run("decoding_after_validation", func(t *testing.T) {
		// 300 is an integer to the schema but not an int8 to Go: still
		// tool.invalid_args, keyed by the parameter.
		t.Parallel()
		args := map[string]any{"customer": "c", "address": map[string]any{"street": "s", "zip": "12345"}, "items": []int{}, "weight": 300}
		e := f.invoke(t, "Shapes_Order", restBody(t, args, nil)).failure(t, http.StatusBadRequest, rest.CodeInvalidArgs)
		assert.Contains(t, restParameterErrors(t, e), "weight")
	})
	t.Run("values_never_echoed", func(t *testing.T) {
		t.Parallel()
		r := f.invoke(t, "Calculator_Add", restBody(t, map[string]any{"a": restSecretValue, "b": 1}, nil))
		e := r.failure(t, http.StatusBadRequest, rest.CodeInvalidArgs)
		assert.Equal(t, map[string]string{"a": "Must be a number"}, restParameterErrors(t, e))
		assert.NotContains(t, string(r.body), restSecretValue)
	})
}

// TestRESTToolFailures checks tool.execution_error (the tool's own error)
// and tool.handler_error (a panic or an unencodable value), both 500, with
// retryable mirroring the tool error's can-retry and the rest of the tool
// error in details.
func TestRESTToolFailures(t *testing.T) {
	t.Parallel()
	f := newRESTFixture(t, nil)
	tests := []struct {
		mode        string
		code        string
		message     string
		retryable   bool
		details     map[string]any // nil: no details
		devContains string         // for messages the test cannot spell out
		retryAfter  string         // the Retry-After header: the delay in whole seconds, rounded up
	}{
		{mode: "tool_error", code: rest.CodeExecutionError, message: "Doorbell ID not found", retryable: true, details: map[string]any{
			"developer_message":         "The doorbell with ID 'doorbell1' does not exist.",
			"additional_prompt_content": "ids: doorbell42,doorbell84",
			"retry_after_ms":            json.Number("500"),
		}, retryAfter: "1"},
		{mode: "retry_sub_ms", code: rest.CodeExecutionError, message: "Busy", retryable: true, details: map[string]any{"retry_after_ms": json.Number("2")}, retryAfter: "1"},
		{mode: "no_retry", code: rest.CodeExecutionError, message: "Quota exhausted"},
		{mode: "plain", code: rest.CodeExecutionError, message: "the upstream service refused the request"},
		{mode: "wrapped", code: rest.CodeExecutionError, message: "Profile is locked", retryable: true, details: map[string]any{"developer_message": "row lock held by another session", "retry_after_ms": json.Number("1000")}, retryAfter: "1"},
		{mode: "empty_tool_error", code: rest.CodeExecutionError, message: "Tool 'Errors_Raise' failed"},
		{mode: "empty_plain", code: rest.CodeExecutionError, message: "Tool 'Errors_Raise' failed"},
		{mode: "panic", code: rest.CodeHandlerError, message: "Tool 'Errors_Raise' failed unexpectedly", devContains: restPanicValue},
		{mode: "nan", code: rest.CodeHandlerError, message: "Tool 'Errors_Raise' returned a value that cannot be sent as JSON", devContains: "NaN"},
	}
	for _, tt := range tests {
		t.Run(tt.mode, func(t *testing.T) {
			t.Parallel()
			r := f.invoke(t, "Errors_Raise", restBody(t, map[string]any{"mode": tt.mode}, nil))
			e := r.failure(t, http.StatusInternalServerError, tt.code)
			assert.Equal(t, tt.message, e.Message)
			assert.Equal(t, tt.retryable, e.Retryable)
			assert.Equal(t, tt.retryAfter, r.header.Get("Retry-After"), "Retry-After")
			if tt.devContains != "" {
				require.NotNil(t, e.Details)
				assert.Contains(t, e.Details["developer_message"], tt.devContains)
			} else {
				assert.Equal(t, tt.details, e.Details)
			}
			assert.NotContains(t, string(r.body), testkit.HiddenCause, "a tool error's cause is never sent")
			assert.NotContains(t, string(r.body), "goroutine ", "no stack trace in the body")
			// The tool ran, so the answer says how long it took.
			var doc restResultDoc
			restDecode(t, r.body, &doc)
			assert.NotNil(t, doc.Metrics, "metrics of a call that ran")
		})
	}
	t.Run("server_keeps_serving_after_a_panic", func(t *testing.T) {
		t.Parallel()
		f.invoke(t, "Errors_Raise", restBody(t, map[string]any{"mode": "panic"}, nil)).failure(t, http.StatusInternalServerError, rest.CodeHandlerError)
		value, _ := f.invoke(t, "Errors_Raise", restBody(t, map[string]any{"mode": "ok"}, nil)).success(t)
		assert.JSONEq(t, `1`, string(value))
	})
}

// TestRESTRequestTooLarge checks 413 request.too_large past
// RESTOptions.MaxBodyBytes, announced or not.
func TestRESTRequestTooLarge(t *testing.T) {
	t.Parallel()
	f := newRESTFixture(t, nil)

	// A valid body of exactly the limit is accepted.
	prefix := `{"schema_version":"0.1.0","args":{"a":1,"b":2},"pad":"`
	exact := prefix + strings.Repeat("x", restMaxBody-len(prefix)-2) + `"}`
	require.Len(t, exact, restMaxBody)
	value, _ := f.invoke(t, "Calculator_Add", exact).success(t)
	assert.JSONEq(t, `3`, string(value))

	over := prefix + strings.Repeat("x", restMaxBody-len(prefix)-1) + `"}`
	tests := []struct {
		name string
		body func() io.Reader
	}{
		{"content_length", func() io.Reader { return strings.NewReader(over) }},
		// A reader of unknown length makes the client send the body
		// chunked, without Content-Length.
		{"chunked", func() io.Reader { return io.MultiReader(strings.NewReader(over)) }},
		{"chunked_huge", func() io.Reader { return io.LimitReader(restZeros{}, 10*restMaxBody) }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			r := f.do(t, http.MethodPost, "/v1/tools/Calculator_Add:invoke", tt.body(), nil)
			e := r.failure(t, http.StatusRequestEntityTooLarge, rest.CodeRequestTooLarge)
			assert.Contains(t, e.Message, fmt.Sprint(restMaxBody))
			assert.False(t, e.Retryable)
		})
	}
}

// restZeros is an endless reader of '0' bytes.
type restZeros struct{}

func (restZeros) Read(p []byte) (int, error) {
	for i := range p {
		p[i] = '0'
	}
	return len(p), nil
}

// TestRESTSuccess checks the ToolResult of a successful invocation.
func TestRESTSuccess(t *testing.T) {
	t.Parallel()
	f := newRESTFixture(t, nil)
	tests := []struct {
		name, tool string
		body       string
		want       string // "" means no result field
	}{
		{"seed_shape", "Calculator_Add", `{"schema_version":"0.1.0","args":{"a":2,"b":3},"context":{},"trace":{}}`, `5`},
		{"latest_version", "Calculator_Add", `{"schema_version":"0.1.0","args":{"a":1.4,"b":1.4,"round":true}}`, `3`},
		{"exact_older_version", "Calculator_Add@1.0.0", `{"schema_version":"0.1.0","args":{"a":1.5,"b":2.25}}`, `3.75`},
		{"major_older_version", "Calculator_Add@1", `{"schema_version":"0.1.0","args":{"a":1,"b":2}}`, `3`},
		{"semver_order", "Versions_Which", `{"schema_version":"0.1.0","args":{}}`, `"Versions.Which@10.0.0"`},
		{"major_version", "Versions_Which@2", `{"schema_version":"0.1.0","args":{}}`, `"Versions.Which@2.0.0"`},
		{"null_context_and_trace", "Calculator_Add", `{"schema_version":"0.1.0","args":{"a":2,"b":3},"context":null,"trace":null}`, `5`},
		{"whitespace_around", "Calculator_Add", " \n{\"schema_version\":\"0.1.0\",\"args\":{\"a\":2,\"b\":3}}\n ", `5`},
		{"object_result", "Shapes_Order", restBody(t, map[string]any{"customer": "Ada", "address": map[string]any{"street": "1 Main St", "zip": "12345"}, "items": []int{7, 8}, "parcels": 2}, nil), `{"customer":"Ada","zip":"12345","items":2,"parcels":2}`},
		{"no_output", "Meta_Noop", `{"schema_version":"0.1.0","args":{}}`, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			value, present := f.invoke(t, tt.tool, tt.body).success(t)
			if tt.want == "" {
				assert.False(t, present, "a tool that returns nothing answers no result")
				return
			}
			require.True(t, present, "result")
			assert.JSONEq(t, tt.want, string(value))
		})
	}
	t.Run("percent_encoded_path", func(t *testing.T) {
		// Some clients percent-encode the colon of the custom method, or
		// the "@"; the path means the same.
		t.Parallel()
		for _, path := range []string{"/v1/tools/Calculator_Add%3Ainvoke", "/v1/tools/Calculator_Add%401.0.0:invoke"} {
			r := f.do(t, http.MethodPost, path, strings.NewReader(`{"schema_version":"0.1.0","args":{"a":2,"b":3}}`), nil)
			value, _ := r.success(t)
			assert.JSONEq(t, `5`, string(value), path)
		}
	})
}

// TestRESTRequestID checks that every answer, success and every kind of
// error, carries X-Request-Id: the client's, or a new UUID when it sent
// none; and that an X-Request-Id that cannot be a call id is refused on
// every route, 400 request.invalid_shape naming the header, never echoed.
func TestRESTRequestID(t *testing.T) {
	t.Parallel()
	f := newRESTFixture(t, nil)
	valid := `{"schema_version":"0.1.0","args":{"a":1,"b":2}}`
	requests := []struct {
		name, method, path, body string
		status                   int
	}{
		{"list", http.MethodGet, "/v1/tools", "", 200},
		{"describe", http.MethodGet, "/v1/tools/Calculator_Add", "", 200},
		{"invoke", http.MethodPost, "/v1/tools/Calculator_Add:invoke", valid, 200},
		{"route_not_found", http.MethodGet, "/v1/nowhere", "", 404},
		{"method_not_allowed", http.MethodGet, "/v1/tools/Calculator_Add:invoke", "", 405},
		{"invalid_json", http.MethodPost, "/v1/tools/Calculator_Add:invoke", `{`, 400},
		{"invalid_shape", http.MethodPost, "/v1/tools/Calculator_Add:invoke", `[]`, 400},
		{"tool_not_found", http.MethodPost, "/v1/tools/Nope:invoke", valid, 404},
		{"describe_not_found", http.MethodGet, "/v1/tools/Nope", "", 404},
		{"invalid_args", http.MethodPost, "/v1/tools/Calculator_Add:invoke", `{"schema_version":"0.1.0","args":{}}`, 400},
		{"missing_requirements", http.MethodPost, "/v1/tools/Secure_Use:invoke", `{"schema_version":"0.1.0","args":{}}`, 400},
		{"execution_error", http.MethodPost, "/v1/tools/Errors_Raise:invoke", `{"schema_version":"0.1.0","args":{"mode":"plain"}}`, 500},
		{"handler_error", http.MethodPost, "/v1/tools/Errors_Raise:invoke", `{"schema_version":"0.1.0","args":{"mode":"panic"}}`, 500},
		{"too_large", http.MethodPost, "/v1/tools/Calculator_Add:invoke", strings.Repeat(" ", restMaxBody+1), 413},
	}
	const rule = ": the request id is the call id: 1 to 128 visible ASCII characters, such as a UUID; send the same one with each retry of a call"
	unusable := map[string]struct{ id, message string }{
		"too_long":  {strings.Repeat("r", 129), "X-Request-Id is longer than 128 bytes: X-Request-Id is echoed back and logged, so it is limited to 128 bytes: send a UUID or another short id"},
		"space":     {"req 42", "X-Request-Id holds a space at byte 3" + rule},
		"tab":       {"req\t42", "X-Request-Id holds a control character at byte 3" + rule},
		"non_ascii": {"req-é-42", "X-Request-Id holds a byte that is not ASCII at byte 4" + rule},
	}
	for _, rq := range requests {
		do := func(t *testing.T, id string) restResponse {
			t.Helper()
			var body io.Reader
			if rq.body != "" {
				body = strings.NewReader(rq.body)
			}
			var h http.Header
			if id != "" {
				h = http.Header{"X-Request-Id": {id}}
			}
			r := f.do(t, rq.method, rq.path, body, h)
			assert.Len(t, r.header.Values("X-Request-Id"), 1, "one X-Request-Id")
			return r
		}
		send := func(t *testing.T, id string) restResponse {
			t.Helper()
			r := do(t, id)
			require.Equal(t, rq.status, r.status, "status (body %s)", r.body)
			return r
		}
		t.Run(rq.name+"/absent", func(t *testing.T) {
			t.Parallel()
			a, b := send(t, ""), send(t, "")
			assert.Regexp(t, restUUID, a.header.Get("X-Request-Id"))
			assert.Regexp(t, restUUID, b.header.Get("X-Request-Id"))
			assert.NotEqual(t, a.header.Get("X-Request-Id"), b.header.Get("X-Request-Id"), "a fresh id per request")
		})
		t.Run(rq.name+"/client", func(t *testing.T) {
			t.Parallel()
			for _, id := range []string{"client-req-42", "0f8fad5b-d9cb-469f-a165-70867728950e", strings.Repeat("r", 128), `a!"#$%&'()*+,-./:;<=>?@[\]^_{|}~z`} {
				assert.Equal(t, id, send(t, id).header.Get("X-Request-Id"))
			}
		})
		for name, tc := range unusable {
			t.Run(rq.name+"/unusable_"+name, func(t *testing.T) {
				t.Parallel()
				r := do(t, tc.id)
				e := r.failure(t, http.StatusBadRequest, rest.CodeInvalidShape)
				assert.Equal(t, tc.message, e.Message)
				assert.False(t, e.Retryable, "the same request fails the same way")
				got := r.header.Get("X-Request-Id")
				assert.NotEqual(t, tc.id, got, "a refused id is not echoed")
				assert.Regexp(t, restUUID, got)
				assert.NotContains(t, string(r.body), tc.id)
			})
		}
	}

	t.Run("is_the_call_id", func(t *testing.T) {
		t.Parallel()
		for _, id := range []string{"", "trace-me-7"} {
			var h http.Header
			if id != "" {
				h = http.Header{"X-Request-Id": {id}}
			}
			r := f.do(t, http.MethodPost, "/v1/tools/Meta_Inspect:invoke", strings.NewReader(`{"schema_version":"0.1.0","args":{}}`), h)
			value, _ := r.success(t)
			var got testkit.InspectOutput
			require.NoError(t, json.Unmarshal(value, &got))
			assert.Equal(t, r.header.Get("X-Request-Id"), got.CallID, "the tool's call id is the request id")
			if id != "" {
				assert.Equal(t, id, got.CallID)
			}
			assert.Equal(t, "Meta.Inspect@1.0.0", got.ToolID)
		}
	})
}

// TestRESTCallContext checks the context and trace of an invocation reach
// the tool through the accessors of SPEC §7.
func TestRESTCallContext(t *testing.T) {
	t.Parallel()
	f := newRESTFixture(t, nil)

	t.Run("secrets_tokens_user", func(t *testing.T) {
		t.Parallel()
		r := f.invoke(t, "Secure_Use", restBody(t, map[string]any{}, restFullContext()))
		value, _ := r.success(t)
		var got restSecureOutput
		require.NoError(t, json.Unmarshal(value, &got))
		assert.Equal(t, restSecureOutput{SecretOK: true, TokenOK: true, UserID: "u1"}, got,
			"declared secret and token visible, undeclared ones not")
		for _, v := range []string{restSecretValue, restTokenValue, restOtherSecret} {
			assert.NotContains(t, string(r.body), v)
		}
	})
	t.Run("brief_example", func(t *testing.T) {
		t.Parallel()
		reg := otc.NewRegistry(nil)
		type seen struct {
			User, Secret, Token, Trace string
		}
		require.NoError(t, otc.Register(reg, otc.Tool{
			ID: "Ctx.Read", Version: "1.0.0", Description: "Reads its context.",
			Requirements: &otc.Requirements{Secrets: []otc.SecretRequirement{{ID: "K"}}, Authorization: []otc.AuthorizationRequirement{{ID: "google"}}},
		}, func(ctx context.Context, in struct{}) (seen, error) {
			s, _ := otc.Secret(ctx, "K")
			tok, _ := otc.AuthorizationToken(ctx, "google")
			return seen{otc.UserID(ctx), s, tok, otc.TraceID(ctx)}, nil
		}))
		srv := httptest.NewServer(rest.NewHandler(reg, nil))
		t.Cleanup(srv.Close)
		g := &restFixture{srv: srv, reg: reg}
		r := g.do(t, http.MethodPost, "/tools/Ctx_Read:invoke", strings.NewReader(
			`{"schema_version":"0.1.0","args":{},"context":{"user_id":"u1","secrets":[{"id":"K","value":"v"}],"authorization":[{"id":"google","token":"t"}]},"trace":{"trace_id":"abc"}}`), nil)
		value, _ := r.success(t)
		assert.JSONEq(t, `{"User":"u1","Secret":"v","Token":"t","Trace":"abc"}`, string(value))
	})
	t.Run("trace_id", func(t *testing.T) {
		t.Parallel()
		for _, tt := range []struct{ trace, want string }{
			{`{"trace_id":"abc"}`, "abc"},
			{`{}`, ""},
			{`null`, ""},
		} {
			value, _ := f.invoke(t, "Meta_Inspect", `{"schema_version":"0.1.0","args":{},"trace":`+tt.trace+`}`).success(t)
			var got testkit.InspectOutput
			require.NoError(t, json.Unmarshal(value, &got))
			assert.Equal(t, tt.want, got.TraceID, "trace %s", tt.trace)
		}
	})
	t.Run("no_context_means_no_user", func(t *testing.T) {
		t.Parallel()
		value, _ := f.invoke(t, "Meta_Inspect", `{"schema_version":"0.1.0","args":{}}`).success(t)
		var got testkit.InspectOutput
		require.NoError(t, json.Unmarshal(value, &got))
		assert.Empty(t, got.UserID)
		assert.Empty(t, got.TraceID)
	})
}

// TestRESTMissingRequirements checks that a call whose context lacks what
// the tool declared is refused before the tool runs: 400
// request.invalid_shape with details.missing_requirements, never a value.
func TestRESTMissingRequirements(t *testing.T) {
	t.Parallel()
	f := newRESTFixture(t, nil)
	tests := []struct {
		name    string
		context map[string]any
		want    string
	}{
		{"nothing", nil, `{"secrets":[{"id":"API_KEY"}],"authorization":[{"id":"google","url":"https://auth.example/google?user="}],"user_id":true}`},
		{"only_user", map[string]any{"user_id": "u1"}, `{"secrets":[{"id":"API_KEY"}],"authorization":[{"id":"google","url":"https://auth.example/google?user=u1"}]}`},
		{"empty_secret_value", map[string]any{"user_id": "u1",
			"secrets":       []any{map[string]any{"id": "API_KEY", "value": ""}, map[string]any{"id": "OTHER_KEY", "value": restOtherSecret}},
			"authorization": []any{map[string]any{"id": "google", "token": restTokenValue}}},
			`{"secrets":[{"id":"API_KEY"}]}`},
		{"token_for_another_provider", map[string]any{"user_id": "u1",
			"secrets":       []any{map[string]any{"id": "API_KEY", "value": restSecretValue}},
			"authorization": []any{map[string]any{"id": "github", "token": restTokenValue}}},
			`{"authorization":[{"id":"google","url":"https://auth.example/google?user=u1"}]}`},
		{"no_user", map[string]any{
			"secrets":       []any{map[string]any{"id": "API_KEY", "value": restSecretValue}},
			"authorization": []any{map[string]any{"id": "google", "token": restTokenValue}}},
			`{"user_id":true}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			r := f.invoke(t, "Secure_Use", restBody(t, map[string]any{}, tt.context))
			e := r.failure(t, http.StatusBadRequest, rest.CodeInvalidShape)
			assert.Contains(t, e.Message, "Secure_Use")
			assert.False(t, e.Retryable)
			require.Contains(t, e.Details, "missing_requirements")
			got, err := json.Marshal(e.Details["missing_requirements"])
			require.NoError(t, err)
			assert.JSONEq(t, tt.want, string(got))
			for _, v := range []string{restSecretValue, restTokenValue, restOtherSecret} {
				assert.NotContains(t, string(r.body), v, "no secret value in the answer")
			}
		})
	}
	t.Run("before_validation", func(t *testing.T) {
		// Requirements are checked before the input (SPEC §4 step 4).
		t.Parallel()
		r := f.invoke(t, "Secure_Use", restBody(t, map[string]any{"mode": 5, "extra": 1}, nil))
		e := r.failure(t, http.StatusBadRequest, rest.CodeInvalidShape)
		assert.Contains(t, e.Details, "missing_requirements")
	})
}

// TestRESTAuthentication checks that a configured authenticator guards
// every route of the REST API as it guards the OTC handler (SPEC §8), with
// 401 request.unauthenticated.
func TestRESTAuthentication(t *testing.T) {
	t.Parallel()
	auth, err := auth.NewAPIKeyAuth(map[string]string{"ci": "rest-api-key-1"})
	require.NoError(t, err)
	f := newRESTFixture(t, auth)
	key := http.Header{otc.HeaderAPIKey: {"rest-api-key-1"}}
	badKey := http.Header{otc.HeaderAPIKey: {"wrong"}}
	valid := restBody(t, map[string]any{}, restFullContext())

	routes := []struct{ name, method, path, body string }{
		{"list", http.MethodGet, "/v1/tools", ""},
		{"describe", http.MethodGet, "/v1/tools/Secure_Use", ""},
		{"describe_unknown", http.MethodGet, "/v1/tools/Nope", ""},
		{"invoke", http.MethodPost, "/v1/tools/Secure_Use:invoke", valid},
		{"invoke_unknown", http.MethodPost, "/v1/tools/Nope:invoke", valid},
	}
	for _, rt := range routes {
		t.Run(rt.name, func(t *testing.T) {
			t.Parallel()
			body := func() io.Reader {
				if rt.body == "" {
					return nil
				}
				return strings.NewReader(rt.body)
			}
			for _, h := range []http.Header{nil, badKey} {
				r := f.do(t, rt.method, rt.path, body(), h)
				e := r.failure(t, http.StatusUnauthorized, rest.CodeUnauthenticated)
				assert.False(t, e.Retryable)
				assert.NotContains(t, string(r.body), "rest-api-key-1")
			}
			r := f.do(t, rt.method, rt.path, body(), key)
			assert.NotEqual(t, http.StatusUnauthorized, r.status, "body %s", r.body)
		})
	}
	t.Run("identity_reaches_the_tool", func(t *testing.T) {
		t.Parallel()
		value, _ := f.do(t, http.MethodPost, "/v1/tools/Secure_Use:invoke", strings.NewReader(valid), key).success(t)
		var got restSecureOutput
		require.NoError(t, json.Unmarshal(value, &got))
		assert.Equal(t, "api_key:ci", got.CallerIdentity)
	})
	t.Run("same_message_as_otc", func(t *testing.T) {
		t.Parallel()
		for _, h := range []http.Header{nil, badKey} {
			rest := f.do(t, http.MethodGet, "/v1/tools", nil, h).failure(t, http.StatusUnauthorized, rest.CodeUnauthenticated)
			o := f.do(t, http.MethodGet, "/otc/tools", nil, h)
			require.Equal(t, http.StatusUnauthorized, o.status)
			var ob restOTCAnswer
			restDecode(t, o.body, &ob)
			assert.Equal(t, ob.Message, rest.Message)
		}
	})
	t.Run("method_checked_first", func(t *testing.T) {
		// A wrong method is a 405 even without credentials, as in the OTC
		// handler.
		t.Parallel()
		f.do(t, http.MethodDelete, "/v1/tools", nil, nil).failure(t, http.StatusMethodNotAllowed, rest.CodeMethodNotAllowed)
	})
}

// TestRESTParityValues checks that a tool reached through both handlers
// gives the same value.
func TestRESTParityValues(t *testing.T) {
	t.Parallel()
	f := newRESTFixture(t, nil)
	order := map[string]any{"customer": "Ada", "address": map[string]any{"street": "1 Main St", "zip": "12345"}, "items": []int{7, 8, 9}, "parcels": 3}
	tests := []struct {
		name, tool string
		args       any
		context    any
	}{
		{"add", "Calculator_Add", map[string]any{"a": 2, "b": 3}, nil},
		{"add_fractions", "Calculator_Add", map[string]any{"a": 0.1, "b": 0.2}, nil},
		{"add_round", "Calculator_Add", map[string]any{"a": 1.4, "b": 1.4, "round": true}, nil},
		{"add_v1", "Calculator_Add@1.0.0", map[string]any{"a": -1, "b": 1e300}, nil},
		{"add_major", "Calculator_Add@1", map[string]any{"a": 1, "b": 2}, nil},
		{"order", "Shapes_Order", order, nil},
		{"versions", "Versions_Which", map[string]any{}, nil},
		{"versions_9", "Versions_Which@9", map[string]any{}, nil},
		{"noop", "Meta_Noop", map[string]any{}, nil},
		{"secure", "Secure_Use", map[string]any{}, restFullContext()},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			restValue, restPresent := f.invoke(t, tt.tool, restBody(t, tt.args, tt.context)).success(t)
			status, o, body := f.otcCall(t, restOTCID(tt.tool), tt.args, tt.context)
			require.Equal(t, http.StatusOK, status, "OTC body %s", body)
			require.NotNil(t, o.Result)
			require.True(t, o.Result.Success, "OTC body %s", body)
			assert.Equal(t, o.Result.Value != nil, restPresent, "value present both ways or neither")
			if restPresent {
				assert.JSONEq(t, string(o.Result.Value), string(restValue))
			}
		})
	}
}

// TestRESTParityValidation checks that a bad input earns the same
// parameter errors both ways: OTC 422 parameter_errors, REST 400
// details.parameter_errors.
func TestRESTParityValidation(t *testing.T) {
	t.Parallel()
	f := newRESTFixture(t, nil)
	addr := map[string]any{"street": "s", "zip": "12345"}
	tests := []struct {
		name, tool string
		args       any
	}{
		{"wrong_type", "Calculator_Add", map[string]any{"a": 1, "b": "2"}},
		{"bool_for_number", "Calculator_Add", map[string]any{"a": true, "b": 2}},
		{"null_for_number", "Calculator_Add", map[string]any{"a": nil, "b": 2}},
		{"missing_one", "Calculator_Add", map[string]any{"a": 1}},
		{"missing_all", "Calculator_Add", map[string]any{}},
		{"unexpected", "Calculator_Add", map[string]any{"a": 1, "b": 2, "c": 3}},
		{"unexpected_in_v1", "Calculator_Add@1.0.0", map[string]any{"a": 1, "b": 2, "round": false}},
		{"several", "Calculator_Add", map[string]any{"a": "x", "round": "yes", "z": 1}},
		{"nested_missing", "Shapes_Order", map[string]any{"customer": "c", "address": map[string]any{"street": "s"}, "items": []int{}}},
		{"nested_pattern", "Shapes_Order", map[string]any{"customer": "c", "address": map[string]any{"street": "s", "zip": "abcde"}, "items": []int{}}},
		{"nested_wrong_type", "Shapes_Order", map[string]any{"customer": "c", "address": "Main St", "items": []int{}}},
		{"array_items", "Shapes_Order", map[string]any{"customer": "c", "address": addr, "items": []any{1, 2.5, "x"}}},
		{"enum", "Shapes_Order", map[string]any{"customer": "c", "address": addr, "items": []int{}, "speed": "slow"}},
		{"minimum", "Shapes_Order", map[string]any{"customer": "c", "address": addr, "items": []int{}, "parcels": 0}},
		{"int8_overflow", "Shapes_Order", map[string]any{"customer": "c", "address": addr, "items": []int{}, "weight": 1000}},
		{"mode_wrong_type", "Errors_Raise", map[string]any{"mode": []int{1}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			e := f.invoke(t, tt.tool, restBody(t, tt.args, nil)).failure(t, http.StatusBadRequest, rest.CodeInvalidArgs)
			restErrs := restParameterErrors(t, e)

			status, o, body := f.otcCall(t, restOTCID(tt.tool), tt.args, nil)
			require.Equal(t, http.StatusUnprocessableEntity, status, "OTC body %s", body)
			require.NotEmpty(t, o.ParameterErrors, "OTC body %s", body)
			assert.Equal(t, o.ParameterErrors, restErrs)
			assert.Equal(t, o.Message, e.Message)
		})
	}
}

// TestRESTParityRequirements checks that the requirement checks of SPEC
// §7 give the same verdict both ways.
func TestRESTParityRequirements(t *testing.T) {
	t.Parallel()
	f := newRESTFixture(t, nil)
	tests := []struct {
		name    string
		context any
	}{
		{"none", nil},
		{"empty", map[string]any{}},
		{"user_only", map[string]any{"user_id": "u2"}},
		{"empty_token", map[string]any{"user_id": "u2",
			"secrets":       []any{map[string]any{"id": "API_KEY", "value": restSecretValue}},
			"authorization": []any{map[string]any{"id": "google", "token": ""}}}},
		{"secret_under_other_id", map[string]any{"user_id": "u2",
			"secrets":       []any{map[string]any{"id": "api_key", "value": restSecretValue}},
			"authorization": []any{map[string]any{"id": "google", "token": restTokenValue}}}},
		{"complete", restFullContext()},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			r := f.invoke(t, "Secure_Use", restBody(t, map[string]any{}, tt.context))
			status, o, body := f.otcCall(t, "Secure.Use", map[string]any{}, tt.context)
			if status == http.StatusOK {
				value, _ := r.success(t)
				require.NotNil(t, o.Result)
				assert.JSONEq(t, string(o.Result.Value), string(value))
				return
			}
			require.Equal(t, http.StatusBadRequest, status, "OTC body %s", body)
			e := r.failure(t, http.StatusBadRequest, rest.CodeInvalidShape)
			assert.Equal(t, o.Message, e.Message)
			require.NotNil(t, o.MissingRequirements, "OTC body %s", body)
			got, err := json.Marshal(e.Details["missing_requirements"])
			require.NoError(t, err)
			assert.JSONEq(t, string(o.MissingRequirements), string(got))
		})
	}
}

// TestRESTParityToolErrors checks that a failing tool fails the same way
// both ways: message, can-retry, retry-after, developer message and
// additional prompt content.
func TestRESTParityToolErrors(t *testing.T) {
	t.Parallel()
	f := newRESTFixture(t, nil)
	for _, mode := range []string{"tool_error", "retry_sub_ms", "no_retry", "plain", "wrapped", "empty_tool_error", "empty_plain", "panic", "nan"} {
		t.Run(mode, func(t *testing.T) {
			t.Parallel()
			args := map[string]any{"mode": mode}
			r := f.invoke(t, "Errors_Raise", restBody(t, args, nil))
			require.Equal(t, http.StatusInternalServerError, r.status)
			var doc restResultDoc
			restDecode(t, r.body, &doc)
			require.NotNil(t, doc.Error)

			status, o, body := f.otcCall(t, "Errors.Raise", args, nil)
			require.Equal(t, http.StatusOK, status, "OTC body %s", body)
			require.NotNil(t, o.Result)
			require.False(t, o.Result.Success)
			oe := o.Result.Error
			require.NotNil(t, oe)

			assert.Equal(t, oe.Message, doc.Error.Message)
			assert.Equal(t, oe.CanRetry, doc.Error.Retryable)
			assert.Equal(t, oe.DeveloperMessage, restDetail(doc.Error, "developer_message"))
			assert.Equal(t, oe.AdditionalPromptContent, restDetail(doc.Error, "additional_prompt_content"))
			var otcRetry string
			if oe.RetryAfterMS != nil {
				otcRetry = oe.RetryAfterMS.String()
			}
			assert.Equal(t, otcRetry, restDetail(doc.Error, "retry_after_ms"))
		})
	}
	t.Run("through_requirements", func(t *testing.T) {
		t.Parallel()
		args := map[string]any{"mode": "error"}
		e := f.invoke(t, "Secure_Use", restBody(t, args, restFullContext())).failure(t, http.StatusInternalServerError, rest.CodeExecutionError)
		_, o, _ := f.otcCall(t, "Secure.Use", args, restFullContext())
		require.NotNil(t, o.Result)
		require.NotNil(t, o.Result.Error)
		assert.Equal(t, o.Result.Error.Message, e.Message)
		assert.True(t, e.Retryable)
		assert.Equal(t, o.Result.Error.RetryAfterMS.String(), restDetail(e, "retry_after_ms"))
		assert.Equal(t, "2000", restDetail(e, "retry_after_ms"))
	})
}

// restDetail returns details[key] as text, "" when absent.
func restDetail(e *restErrorDoc, key string) string {
	v, ok := e.Details[key]
	if !ok {
		return ""
	}
	return fmt.Sprint(v)
}

// TestRESTMiddlewareAnswersUnknownTools: a middleware sees every call,
// unknown tools included, and an answer of its own is the REST answer;
// one that passes the call through leaves the unknown tool a 404.
func TestRESTMiddlewareAnswersUnknownTools(t *testing.T) {
	t.Parallel()
	refuse := func(next otc.CallFunc) otc.CallFunc {
		return func(ctx context.Context, c *otc.Call) (otc.CallResult, error) {
			return otc.CallResult{}, &otc.Error{Code: otc.CodeForbidden, Message: "Calls are closed for maintenance"}
		}
	}
	passThrough := func(next otc.CallFunc) otc.CallFunc { return next }
	for name, mw := range map[string]otc.Middleware{"refusing": refuse, "passing": passThrough} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			reg := otc.NewRegistry(&otc.RegistryOptions{Middleware: []otc.Middleware{mw}})
			srv := httptest.NewServer(rest.NewHandler(reg, nil))
			t.Cleanup(srv.Close)
			for _, body := range []string{`{"schema_version":"0.1.0","args":{}}`, `not json`} {
				for _, tool := range []string{"Nope_Nope", "Nope_Nope@x.y"} {
					resp, err := http.Post(srv.URL+"/tools/"+tool+":invoke", "application/json", strings.NewReader(body))
					require.NoError(t, err)
					raw, _ := io.ReadAll(resp.Body)
					resp.Body.Close()
					if name == "refusing" {
						assert.Equal(t, http.StatusForbidden, resp.StatusCode, "%s %s: %s", tool, body, raw)
						assert.Contains(t, string(raw), "closed for maintenance")
					} else {
						assert.Equal(t, http.StatusNotFound, resp.StatusCode, "%s %s: %s", tool, body, raw)
						assert.Contains(t, string(raw), rest.CodeToolNotFound)
					}
				}
			}
		})
	}
}
