package otc_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/otcgo/otc"
)

func TestCodeHTTPStatus(t *testing.T) {
	t.Parallel()
	// SPEC §6, row by row.
	tests := []struct {
		code   otc.Code
		status int
		name   string
	}{
		{otc.CodeServerError, http.StatusBadRequest, "server_error"},
		{otc.CodeUnauthenticated, http.StatusUnauthorized, "unauthenticated"},
		{otc.CodeTooLarge, http.StatusRequestEntityTooLarge, "too_large"},
		{otc.CodeInvalidInput, http.StatusUnprocessableEntity, "invalid_input"},
		{otc.Code(0), http.StatusInternalServerError, "unknown"},
		{otc.Code(-1), http.StatusInternalServerError, "unknown"},
		{otc.Code(99), http.StatusInternalServerError, "unknown"},
	}
	for _, tt := range tests {
		t.Run(tt.name+fmt.Sprint(int(tt.code)), func(t *testing.T) {
			t.Parallel()
			assert.Equal(t, tt.status, tt.code.HTTPStatus())
			assert.Equal(t, tt.name, tt.code.String())
			assert.Equal(t, tt.name, fmt.Sprint(tt.code), "Code is a fmt.Stringer")
		})
	}
}

func TestCodesAreDistinct(t *testing.T) {
	t.Parallel()
	// The zero Code is not a class, so an Error{} does not pass for one.
	codes := []otc.Code{otc.CodeServerError, otc.CodeUnauthenticated, otc.CodeTooLarge, otc.CodeInvalidInput}
	seen := map[otc.Code]bool{}
	for _, c := range codes {
		assert.NotZero(t, c)
		assert.False(t, seen[c], "%v twice", c)
		seen[c] = true
	}
}

func TestErrorMatching(t *testing.T) {
	t.Parallel()
	reg := otc.NewRegistry(nil)
	require.NoError(t, otc.Register(reg, otc.Tool{ID: "Calculator.Add", Version: "1.0.0", Description: "Adds."},
		func(_ context.Context, in regAddInput) (float64, error) { return in.A + in.B, nil }))
	call := func(toolID, input string) error {
		_, err := reg.Call(context.Background(), &otc.CallRequest{ToolID: toolID, Input: json.RawMessage(input)})
		return err
	}
	tests := []struct {
		name     string
		err      error
		code     otc.Code
		notFound bool
	}{
		{"unknown_tool", call("Calculator.Sub", `{}`), otc.CodeServerError, true},
		{"unknown_version", call("Calculator.Add@2.0.0", `{}`), otc.CodeServerError, true},
		{"unknown_shorthand_version", call("Calculator.Add@2", `{}`), otc.CodeServerError, true},
		{"malformed_id", call("Calculator.Add@latest", `{}`), otc.CodeServerError, false},
		{"input_not_object", call("Calculator.Add", `[]`), otc.CodeServerError, false},
		{"invalid_input", call("Calculator.Add", `{"a":"x"}`), otc.CodeInvalidInput, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			require.Error(t, tt.err)
			var e *otc.Error
			require.ErrorAs(t, tt.err, &e)
			assert.Equal(t, tt.code, e.Code)
			assert.NotEmpty(t, e.Message)
			assert.Equal(t, tt.notFound, errors.Is(tt.err, otc.ErrToolNotFound))

			// Wrapping by the caller keeps both matches working.
			wrapped := fmt.Errorf("serving: %w", tt.err)
			assert.ErrorAs(t, wrapped, &e)
			assert.Equal(t, tt.notFound, errors.Is(wrapped, otc.ErrToolNotFound))

			if tt.code == otc.CodeInvalidInput {
				assert.Equal(t, map[string]string{"a": "Must be a number", "b": "Is required"}, e.ParameterErrors)
			} else {
				assert.Empty(t, e.ParameterErrors)
			}
		})
	}
}

func TestErrorText(t *testing.T) {
	t.Parallel()
	e := &otc.Error{Code: otc.CodeServerError, Message: "Tool 'Calculator_Add' was not found", DeveloperMessage: "Calculator.Add version 2.0.0 is not available"}
	assert.Equal(t, "otc: Tool 'Calculator_Add' was not found: Calculator.Add version 2.0.0 is not available", e.Error())

	e = &otc.Error{Code: otc.CodeServerError, Message: "The request field is required"}
	assert.Equal(t, "otc: The request field is required", e.Error())

	// The parameter errors make the text useful in a log line.
	e = &otc.Error{Code: otc.CodeInvalidInput, Message: "Some input parameters are invalid", ParameterErrors: map[string]string{"b": "Must be a number", "a": "Is required"}}
	assert.Contains(t, e.Error(), "a: Is required")
	assert.Contains(t, e.Error(), "b: Must be a number")
	assert.Nil(t, errors.Unwrap(e))
}

func TestToolErrorUnwrap(t *testing.T) {
	t.Parallel()
	cause := io.ErrUnexpectedEOF
	te := &otc.ToolError{Message: "The upstream closed early", DeveloperMessage: "reading the quote", Err: fmt.Errorf("quote: %w", cause)}
	var err error = fmt.Errorf("tool: %w", te)

	assert.ErrorIs(t, err, cause)
	var got *otc.ToolError
	require.ErrorAs(t, err, &got)
	assert.Same(t, te, got)
	assert.Equal(t, "The upstream closed early: reading the quote", te.Error())
	assert.Equal(t, "The upstream closed early", (&otc.ToolError{Message: "The upstream closed early"}).Error())
	assert.Nil(t, (&otc.ToolError{Message: "m"}).Unwrap())
	// The cause shows in Error() only if the author puts it in a message.
	assert.NotContains(t, te.Error(), cause.Error())
}

func TestToolErrorMarshalJSON(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		in   otc.ToolError
		want string
	}{
		{
			// The seed's Doorbell.Ring error (002_…).
			name: "seed_example",
			in: otc.ToolError{
				Message: "Doorbell ID not found", DeveloperMessage: "The doorbell with ID 'doorbell1' does not exist.",
				CanRetry: true, AdditionalPromptContent: "ids: doorbell42,doorbell84", RetryAfter: 500 * time.Millisecond,
			},
			want: `{"message":"Doorbell ID not found","developer_message":"The doorbell with ID 'doorbell1' does not exist.",
				"can_retry":true,"additional_prompt_content":"ids: doorbell42,doorbell84","retry_after_ms":500}`,
		},
		{name: "message_only", in: otc.ToolError{Message: "m"}, want: `{"message":"m"}`},
		{name: "empty", in: otc.ToolError{}, want: `{"message":""}`},
		{name: "retry_rounds_up", in: otc.ToolError{Message: "m", RetryAfter: 1500 * time.Microsecond}, want: `{"message":"m","retry_after_ms":2}`},
		{name: "retry_one_nanosecond", in: otc.ToolError{Message: "m", RetryAfter: time.Nanosecond}, want: `{"message":"m","retry_after_ms":1}`},
		{name: "retry_whole_ms_kept", in: otc.ToolError{Message: "m", RetryAfter: 2 * time.Millisecond}, want: `{"message":"m","retry_after_ms":2}`},
		{name: "retry_just_over", in: otc.ToolError{Message: "m", RetryAfter: 2*time.Millisecond + 1}, want: `{"message":"m","retry_after_ms":3}`},
		{name: "retry_minutes", in: otc.ToolError{Message: "m", RetryAfter: 2 * time.Minute}, want: `{"message":"m","retry_after_ms":120000}`},
		{name: "retry_zero_omitted", in: otc.ToolError{Message: "m", CanRetry: true}, want: `{"message":"m","can_retry":true}`},
		{name: "retry_negative_omitted", in: otc.ToolError{Message: "m", RetryAfter: -time.Second}, want: `{"message":"m"}`},
		{name: "retry_max_duration", in: otc.ToolError{Message: "m", RetryAfter: math.MaxInt64}, want: `{"message":"m","retry_after_ms":9223372036855}`},
		{name: "cause_never_sent", in: otc.ToolError{Message: "m", Err: errors.New("db password is hunter2")}, want: `{"message":"m"}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			viaPointer, err := json.Marshal(&tt.in)
			require.NoError(t, err)
			assert.JSONEq(t, tt.want, string(viaPointer))

			// A ToolError held by value encodes the same.
			viaValue, err := json.Marshal(tt.in)
			require.NoError(t, err)
			assert.JSONEq(t, tt.want, string(viaValue))
			inStruct, err := json.Marshal(struct{ E otc.ToolError }{tt.in})
			require.NoError(t, err)
			assert.JSONEq(t, `{"E":`+tt.want+`}`, string(inStruct))
		})
	}
}

func TestToolErrorMarshalRetryAfterIsInteger(t *testing.T) {
	t.Parallel()
	// Clients in typed languages read retry_after_ms as an integer: no
	// fraction and no exponent, even for large values.
	for _, d := range []time.Duration{1, 999 * time.Microsecond, 1234567 * time.Microsecond, 48 * time.Hour, math.MaxInt64} {
		b, err := json.Marshal(&otc.ToolError{Message: "m", RetryAfter: d})
		require.NoError(t, err)
		var raw struct {
			RetryAfterMS json.RawMessage `json:"retry_after_ms"`
		}
		require.NoError(t, json.Unmarshal(b, &raw))
		assert.Regexp(t, `^[1-9][0-9]*$`, string(raw.RetryAfterMS), "%v", d)
	}
}

func TestToolErrorNilPointerMarshalsNull(t *testing.T) {
	t.Parallel()
	b, err := json.Marshal(struct {
		Error *otc.ToolError `json:"error"`
	}{})
	require.NoError(t, err)
	assert.JSONEq(t, `{"error":null}`, string(b))
}

func TestToolErrorUnmarshalJSON(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		in   string
		want otc.ToolError
	}{
		{
			name: "seed_example",
			in: `{"message":"Doorbell ID not found","developer_message":"The doorbell with ID 'doorbell1' does not exist.",
				"can_retry":true,"additional_prompt_content":"ids: doorbell42,doorbell84","retry_after_ms":500}`,
			want: otc.ToolError{
				Message: "Doorbell ID not found", DeveloperMessage: "The doorbell with ID 'doorbell1' does not exist.",
				CanRetry: true, AdditionalPromptContent: "ids: doorbell42,doorbell84", RetryAfter: 500 * time.Millisecond,
			},
		},
		{name: "fractional", in: `{"message":"m","retry_after_ms":1.5}`, want: otc.ToolError{Message: "m", RetryAfter: 1500 * time.Microsecond}},
		{name: "exponent", in: `{"message":"m","retry_after_ms":2e3}`, want: otc.ToolError{Message: "m", RetryAfter: 2 * time.Second}},
		{name: "zero", in: `{"message":"m","retry_after_ms":0}`, want: otc.ToolError{Message: "m"}},
		{name: "negative", in: `{"message":"m","retry_after_ms":-250}`, want: otc.ToolError{Message: "m"}},
		{name: "null", in: `{"message":"m","retry_after_ms":null}`, want: otc.ToolError{Message: "m"}},
		{name: "unknown_fields_ignored", in: `{"message":"m","code":"E42","details":{}}`, want: otc.ToolError{Message: "m"}},
		{name: "missing_message", in: `{}`, want: otc.ToolError{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			// Decoding replaces what was there before.
			got := otc.ToolError{Message: "old", DeveloperMessage: "old", CanRetry: true, RetryAfter: time.Hour, Err: io.EOF}
			require.NoError(t, json.Unmarshal([]byte(tt.in), &got))
			assert.Equal(t, tt.want, got)
			assert.GreaterOrEqual(t, got.RetryAfter, time.Duration(0))
		})
	}
}

func TestToolErrorUnmarshalHugeRetryIsCapped(t *testing.T) {
	t.Parallel()
	// The cap is the largest Duration in whole milliseconds, give or take
	// the float64 rounding of the conversion.
	maxRetry := time.Duration(math.MaxInt64 / int64(time.Millisecond) * int64(time.Millisecond))
	for _, in := range []string{
		`{"message":"m","retry_after_ms":1e300}`,
		`{"message":"m","retry_after_ms":9223372036854775808}`,
		`{"message":"m","retry_after_ms":9223372036855}`,
	} {
		var te otc.ToolError
		require.NoError(t, json.Unmarshal([]byte(in), &te), in)
		assert.Greater(t, te.RetryAfter, maxRetry-time.Millisecond, in)
		assert.LessOrEqual(t, te.RetryAfter, maxRetry, in)
	}
}

func TestToolErrorUnmarshalRejectsWrongTypes(t *testing.T) {
	t.Parallel()
	for _, in := range []string{
		`{"message":1}`,
		`{"message":"m","retry_after_ms":"500"}`,
		`{"message":"m","can_retry":"yes"}`,
		`[]`,
		`"Doorbell ID not found"`,
		`{"message":"m"`,
	} {
		var te otc.ToolError
		assert.Error(t, json.Unmarshal([]byte(in), &te), in)
	}
}

func TestToolErrorRoundTrip(t *testing.T) {
	t.Parallel()
	in := otc.ToolError{
		Message: "Rate limited", DeveloperMessage: "429 from upstream", CanRetry: true,
		AdditionalPromptContent: "try a smaller page", RetryAfter: 1200 * time.Millisecond,
	}
	b, err := json.Marshal(&in)
	require.NoError(t, err)
	var out otc.ToolError
	require.NoError(t, json.Unmarshal(b, &out))
	assert.Equal(t, in, out)
}
