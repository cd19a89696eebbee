package otc_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"unicode/utf8"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/otcgo/otc"
	"github.com/otcgo/otc/rest"
)

// fuzzMaxBody is the body limit of the fuzzed handler: small, so that the
// fuzzer reaches the 413 answer with inputs it can build.
const fuzzMaxBody = 64 << 10

// The input and output types of the fuzzed tools. Order has nesting, a
// slice, a map, an optional pointer and bounds, so that validation errors
// arise at every depth.
type (
	fuzzAddInput struct {
		A float64 `json:"a" jsonschema:"description=The first number."`
		B float64 `json:"b" jsonschema:"description=The second number."`
	}
	fuzzAddress struct {
		Street string `json:"street" jsonschema:"description=Street and number."`
		Zip    string `json:"zip" jsonschema:"description=Five digits.,pattern=^[0-9]{5}$"`
	}
	fuzzCustomer struct {
		Name    string      `json:"name" jsonschema:"description=Full name.,minLength=1"`
		Address fuzzAddress `json:"address" jsonschema:"description=Where to deliver."`
	}
	fuzzItem struct {
		SKU      string `json:"sku" jsonschema:"description=Stock keeping unit."`
		Quantity int    `json:"quantity" jsonschema:"description=How many.,minimum=1,maximum=1000"`
	}
	fuzzOrderInput struct {
		Customer fuzzCustomer      `json:"customer" jsonschema:"description=Who orders."`
		Items    []fuzzItem        `json:"items" jsonschema:"description=What to order.,minItems=1"`
		Note     *string           `json:"note,omitempty" jsonschema:"description=A note for the courier."`
		Tags     map[string]string `json:"tags,omitempty" jsonschema:"description=Free-form labels."`
		Priority string            `json:"priority,omitempty" jsonschema:"description=Delivery speed.,enum=normal,enum=express"`
	}
	fuzzOrderOutput struct {
		OrderID string `json:"order_id" jsonschema:"description=The new order's id."`
		Items   int    `json:"items" jsonschema:"description=Number of lines."`
	}
	fuzzPanicInput struct {
		Mode string `json:"mode" jsonschema_description:"How to fail: panic, index_out_of_range, error, tool_error or nothing."`
	}
)

// newFuzzRegistry registers tools that cover each path of a call: plain
// numbers, nested input with requirements, a function that panics or
// fails, and one that echoes arbitrary JSON back.
func newFuzzRegistry(tb testing.TB) *otc.Registry {
	tb.Helper()
	reg := otc.NewRegistry(&otc.RegistryOptions{Logger: slog.New(slog.DiscardHandler)})
	require.NoError(tb, otc.Register(reg, otc.Tool{
		ID: "Calculator.Add", Version: "1.0.0", Description: "Adds two numbers.",
	}, func(_ context.Context, in fuzzAddInput) (float64, error) {
		return in.A + in.B, nil
	}))
	require.NoError(tb, otc.Register(reg, otc.Tool{
		ID: "Calculator.Add", Version: "2.0.0", Description: "Adds two numbers, again.",
	}, func(_ context.Context, in fuzzAddInput) (float64, error) {
		return in.A + in.B, nil
	}))
	require.NoError(tb, otc.Register(reg, otc.Tool{
		ID: "Shop.Order", Version: "1.2.3", Description: "Places an order.",
		Requirements: &otc.Requirements{
			Authorization: []otc.AuthorizationRequirement{{ID: "shop", OAuth2: &otc.OAuth2Requirement{Scopes: []string{"orders.write"}}}},
			Secrets:       []otc.SecretRequirement{{ID: "SHOP_KEY"}},
			UserID:        true,
		},
	}, func(ctx context.Context, in fuzzOrderInput) (fuzzOrderOutput, error) {
		key, _ := otc.Secret(ctx, "SHOP_KEY")
		return fuzzOrderOutput{OrderID: otc.UserID(ctx) + "-" + otc.CallID(ctx) + "-" + strings.Repeat("k", len(key)), Items: len(in.Items)}, nil
	}))
	require.NoError(tb, otc.Register(reg, otc.Tool{
		ID: "Chaos.Fail", Version: "0.0.1", Description: "Fails in the way it is told to.",
	}, func(_ context.Context, in fuzzPanicInput) (otc.NoOutput, error) {
		switch in.Mode {
		case "panic":
			panic("chaos: " + in.Mode)
		case "index_out_of_range":
			// A runtime error, as a buggy tool raises, rather than the
			// string of the "panic" mode: the handler must recover from
			// both alike. The index is computed from the input so that the
			// panic happens only when the tool runs, with no bug written
			// into the code for a linter to flag.
			modes := []string{"panic", "error", "tool_error"}
			return otc.NoOutput{}, errors.New(modes[len(in.Mode)])
		case "error":
			return otc.NoOutput{}, errors.New("chaos: plain error")
		case "tool_error":
			return otc.NoOutput{}, &otc.ToolError{Message: "chaos", CanRetry: true, RetryAfter: 1}
		}
		return otc.NoOutput{}, nil
	}))
	require.NoError(tb, otc.Register(reg, otc.Tool{
		ID: "Echo.Any", Version: "1.0.0", Description: "Returns its input as it came.",
	}, func(_ context.Context, in map[string]any) (any, error) {
		return in, nil
	}))
	return reg
}

// fuzzCallSeeds are the seed inputs given with f.Add: the ones too large
// or too repetitive to keep as files in testdata/fuzz/FuzzCall.
func fuzzCallSeeds() [][]byte {
	call := func(input string) []byte {
		return []byte(`{"request":{"tool_id":"Echo.Any","input":` + input + `}}`)
	}
	return [][]byte{
		[]byte(`{"$schema":"otc://1.0","request":{"call_id":"c1","tool_id":"Calculator.Add@1.0.0","input":{"a":10,"b":5}}}`),
		// Deep nesting: just under and over encoding/json's depth limit.
		call(`{"x":` + strings.Repeat("[", 9990) + strings.Repeat("]", 9990) + `}`),
		call(`{"x":` + strings.Repeat("[", 10001) + strings.Repeat("]", 10001) + `}`),
		call(`{"x":` + strings.Repeat(`{"y":`, 5000) + `1` + strings.Repeat("}", 5000) + `}`),
		// Size: just within and just over the limit.
		call(`{"x":"` + strings.Repeat("a", fuzzMaxBody-60) + `"}`),
		call(`{"x":"` + strings.Repeat("a", fuzzMaxBody) + `"}`),
		// Many parameters, each one reported.
		[]byte(`{"request":{"tool_id":"Calculator.Add","input":{` + strings.Repeat(`"k":1,`, 3000) + `"a":1,"b":2}}}`),
		// Numbers with a thousand digits.
		[]byte(`{"request":{"tool_id":"Calculator.Add","input":{"a":1` + strings.Repeat("0", 1000) + `,"b":0.` + strings.Repeat("0", 1000) + `1}}}`),
	}
}

// FuzzCall posts each input as the body of POST /tools/call and checks
// that the answer is one of the shapes of SPEC §6, whatever the input: no
// panic, no 5xx, JSON with $schema and the Content-Type to say so, a
// result with call_id and success on 200, a message on 4xx.
func FuzzCall(f *testing.F) {
	for _, s := range fuzzCallSeeds() {
		f.Add(s)
	}
	h := otc.NewHandler(newFuzzRegistry(f), &otc.HandlerOptions{MaxBodyBytes: fuzzMaxBody, Logger: slog.New(slog.DiscardHandler)})
	f.Fuzz(func(t *testing.T, body []byte) {
		for _, declared := range []bool{true, false} {
			req := httptest.NewRequest(http.MethodPost, "/tools/call", bytes.NewReader(body))
			if !declared {
				req.ContentLength = -1 // as with chunked encoding: the limit is met while reading
			}
			rec := httptest.NewRecorder()
			h.ServeHTTP(rec, req)
			checkCallAnswer(t, body, rec)
		}
	})
}

func checkCallAnswer(t *testing.T, body []byte, rec *httptest.ResponseRecorder) {
	t.Helper()
	status := rec.Code
	require.Contains(t, []int{200, 400, 413, 422}, status, "body: %s", rec.Body.Bytes())
	require.Equal(t, "application/json", rec.Header().Get("Content-Type"))
	var got map[string]any
	require.NoError(t, json.Unmarshal(rec.Body.Bytes(), &got), "answer: %q", rec.Body.Bytes())
	require.NotNil(t, got, "the answer must be an object")
	require.IsType(t, "", got["$schema"], "$schema")

	if status == http.StatusRequestEntityTooLarge {
		require.Greater(t, len(body), fuzzMaxBody, "413 for a body within the limit")
	}
	if status != http.StatusOK {
		msg, _ := got["message"].(string)
		require.NotEmpty(t, msg, "a %d answer needs a message: %s", status, rec.Body.Bytes())
		if status == http.StatusUnprocessableEntity {
			pe, _ := got["parameter_errors"].(map[string]any)
			require.NotEmpty(t, pe, "a 422 answer names the parameters: %s", rec.Body.Bytes())
		}
		return
	}
	result, ok := got["result"].(map[string]any)
	require.True(t, ok, "a 200 answer has a result object: %s", rec.Body.Bytes())
	require.IsType(t, "", result["call_id"], "result.call_id")
	success, ok := result["success"].(bool)
	require.True(t, ok, "result.success must be a boolean: %s", rec.Body.Bytes())
	d, ok := result["duration"].(float64)
	require.True(t, ok && d >= 0, "result.duration must be a non-negative number: %s", rec.Body.Bytes())
	if !success {
		e, _ := result["error"].(map[string]any)
		msg, _ := e["message"].(string)
		require.NotEmpty(t, msg, "a failed result has error.message: %s", rec.Body.Bytes())
	} else {
		assert.NotContains(t, result, "error")
	}
}

// listMaxBody is the body limit of FuzzListTools. A catalog request's body
// holds at most $schema, so a small limit loses nothing, and it keeps the
// inputs that reach 413 small: the fuzzer spends its time minimizing large
// interesting inputs rather than running new ones.
const listMaxBody = 1 << 10

// FuzzListTools sends each input as the body of GET /tools, which may hold
// only $schema (SPEC §1): 200 with the full catalog, or a 400/413 error.
func FuzzListTools(f *testing.F) {
	for _, s := range []string{
		``, ` `, `{}`, `{"$schema":"otc://1.0"}`, `{"$schema":"urn:oxp:1.0"}`, `{"$schema":null}`,
		`{"$schema":"otc://2.0"}`, `{"$schema":1}`, `{"tools":[]}`, `[]`, `null`, `"otc://1.0"`,
		`{"$schema":"otc://1.0"} {}`, `{"$schema":"otc://1.0"`, "{\"$schema\":\"\xff\"}",
		`{"$schema":"\ud800"}`, strings.Repeat(" ", listMaxBody+1), `{"$schema":"otc://1.0"}` + strings.Repeat(" ", listMaxBody),
	} {
		f.Add([]byte(s))
	}
	reg := newFuzzRegistry(f)
	want := len(reg.Tools())
	h := otc.NewHandler(reg, &otc.HandlerOptions{MaxBodyBytes: listMaxBody, Logger: slog.New(slog.DiscardHandler)})
	f.Fuzz(func(t *testing.T, body []byte) {
		req := httptest.NewRequest(http.MethodGet, "/tools", bytes.NewReader(body))
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)

		require.Contains(t, []int{200, 400, 413}, rec.Code, "body: %s", rec.Body.Bytes())
		require.Equal(t, "application/json", rec.Header().Get("Content-Type"))
		var got map[string]any
		require.NoError(t, json.Unmarshal(rec.Body.Bytes(), &got), "answer: %q", rec.Body.Bytes())
		require.NotNil(t, got)
		schema, ok := got["$schema"].(string)
		require.True(t, ok, "$schema must be a string")
		if rec.Code == http.StatusRequestEntityTooLarge {
			require.Greater(t, len(body), listMaxBody, "413 for a body within the limit")
		}
		if rec.Code != http.StatusOK {
			msg, _ := got["message"].(string)
			require.NotEmpty(t, msg)
			return
		}
		assert.Contains(t, []string{otc.SchemaOTC, otc.SchemaOXP, otc.SchemaOpenAPI}, schema)
		tools, ok := got["tools"].([]any)
		require.True(t, ok, "tools must be an array")
		assert.Len(t, tools, want)
	})
}

// FuzzRESTRequestID sends each input as the X-Request-Id of a REST
// invocation. An id of 1 to otc.MaxIDLength visible ASCII characters is
// echoed and is the call id the tool sees; none gets a new UUID; any other
// is refused with 400 request.invalid_shape, not echoed, and the tool does
// not run. Every answer is UTF-8 JSON.
func FuzzRESTRequestID(f *testing.F) {
	for _, s := range []string{
		"", "req-1", "0f8fad5b-d9cb-469f-a165-70867728950e", strings.Repeat("r", otc.MaxIDLength),
		strings.Repeat("r", otc.MaxIDLength+1), "req 1", " req", "req\t1", "req\x7f", "req-é", "req-\xff", "\x00",
	} {
		f.Add(s)
	}
	var ran atomic.Int64
	reg := otc.NewRegistry(&otc.RegistryOptions{Logger: slog.New(slog.DiscardHandler)})
	require.NoError(f, otc.Register(reg, otc.Tool{ID: "Meta.CallID", Version: "1.0.0", Description: "Returns its call id."},
		func(ctx context.Context, _ struct{}) (string, error) {
			ran.Add(1)
			return otc.CallID(ctx), nil
		}))
	h := rest.NewHandler(reg, nil)
	f.Fuzz(func(t *testing.T, id string) {
		req := httptest.NewRequest(http.MethodPost, "/tools/Meta_CallID:invoke", strings.NewReader(`{"schema_version":"0.1.0","args":{}}`))
		req.Header["X-Request-Id"] = []string{id}
		rec := httptest.NewRecorder()
		before := ran.Load()
		h.ServeHTTP(rec, req)
		require.True(t, utf8.Valid(rec.Body.Bytes()) && json.Valid(rec.Body.Bytes()), "not UTF-8 JSON: %q", rec.Body.Bytes())
		var got struct {
			Result string `json:"result"`
			Error  *struct {
				Code    string `json:"code"`
				Message string `json:"message"`
			} `json:"error"`
		}
		require.NoError(t, json.Unmarshal(rec.Body.Bytes(), &got))
		echoed := rec.Header().Get("X-Request-Id")
		usable := len(id) <= otc.MaxIDLength
		for i := 0; i < len(id); i++ {
			usable = usable && id[i] > ' ' && id[i] < 0x7f
		}
		switch {
		case id == "":
			require.Equal(t, http.StatusOK, rec.Code, "%s", rec.Body.Bytes())
			require.Equal(t, echoed, got.Result, "the generated id is the call id")
		case usable:
			require.Equal(t, http.StatusOK, rec.Code, "%s", rec.Body.Bytes())
			require.Equal(t, id, echoed)
			require.Equal(t, id, got.Result, "the request id is the call id")
		default:
			require.Equal(t, http.StatusBadRequest, rec.Code, "%s", rec.Body.Bytes())
			require.NotNil(t, got.Error)
			require.Equal(t, rest.CodeInvalidShape, got.Error.Code)
			require.Contains(t, got.Error.Message, "X-Request-Id")
			require.NotEqual(t, id, echoed, "a refused id is not echoed")
			require.Equal(t, before, ran.Load(), "the tool ran for a refused id")
		}
	})
}
