package otc_test

// Regression tests for what a hostile client could make the server do:
// reserve memory it never sent, trickle a body, disagree with a gateway
// about which field it sent, and send ids of any length. Each runs over
// real HTTP, through both the OTC handler and the REST view.

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"maps"
	"net"
	"net/http"
	"net/http/httptest"
	"runtime"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/otcgo/otc"
	"github.com/otcgo/otc/internal/testkit"
	"github.com/otcgo/otc/rest"
)

// hardLooseInput is the input of Loose.Echo, whose hand-written schema
// lets unknown properties through, at the top and in inner.
type hardLooseInput struct {
	A     int    `json:"a"`
	S     string `json:"s"`
	Inner struct {
		K int `json:"k"`
	} `json:"inner"`
}

const hardLooseSchema = `{"type":"object","properties":{
	"a":{"type":"integer","description":"A number."},
	"s":{"type":"string","description":"A string."},
	"inner":{"type":"object","description":"Nested.","properties":{"k":{"type":"integer","description":"K."}}}}}`

// hardFixture serves a registry under /otc/ (OTC) and /v1/ (REST).
type hardFixture struct {
	srv     *httptest.Server
	reg     *otc.Registry
	guarded atomic.Int64 // runs of Guard.Sign
}

// newHardFixture builds the fixture. timeout is both handlers'
// BodyReadTimeout, auth their Authenticator, and configure, when set,
// adjusts the http.Server before it starts.
func newHardFixture(t *testing.T, timeout time.Duration, auth otc.Authenticator, configure func(*http.Server)) *hardFixture {
	t.Helper()
	f := &hardFixture{reg: otc.NewRegistry(&otc.RegistryOptions{Logger: slog.New(slog.DiscardHandler)})}
	require.NoError(t, otc.Register(f.reg, otc.Tool{ID: "Calculator.Add", Version: "1.0.0", Description: "Adds."}, testkit.Add))
	require.NoError(t, otc.Register(f.reg, otc.Tool{ID: "Guard.Sign", Version: "1.0.0", Description: "A tool a gateway keeps callers away from."},
		func(_ context.Context, in struct{}) (string, error) { f.guarded.Add(1); return "signed", nil }))
	require.NoError(t, otc.Register(f.reg, otc.Tool{ID: "Loose.Echo", Version: "1.0.0", Description: "Echoes what it was given.", InputSchema: json.RawMessage(hardLooseSchema)},
		func(_ context.Context, in hardLooseInput) (hardLooseInput, error) { return in, nil }))
	require.NoError(t, otc.Register(f.reg, otc.Tool{ID: "Meta.Inspect", Version: "1.0.0", Description: "Reports its call's ids."}, testkit.Inspect))
	require.NoError(t, otc.Register(f.reg, otc.Tool{ID: "Slow.Sleep", Version: "1.0.0", Description: "Sleeps, unless cancelled."},
		func(ctx context.Context, in struct {
			MS int `json:"ms" jsonschema:"description=How long."`
		}) (string, error) {
			select {
			case <-time.After(time.Duration(in.MS) * time.Millisecond):
				return "slept", nil
			case <-ctx.Done():
				return "", fmt.Errorf("cancelled: %w", ctx.Err())
			}
		}))
	mux := http.NewServeMux()
	mux.Handle("/otc/", http.StripPrefix("/otc", otc.NewHandler(f.reg, &otc.HandlerOptions{BodyReadTimeout: timeout, Authenticator: auth})))
	mux.Handle("/v1/", http.StripPrefix("/v1", rest.NewHandler(f.reg, &rest.Options{BodyReadTimeout: timeout, Authenticator: auth})))
	f.srv = httptest.NewUnstartedServer(mux)
	if configure != nil {
		configure(f.srv.Config)
	}
	f.srv.Start()
	t.Cleanup(f.srv.Close)
	return f
}

func (f *hardFixture) post(t *testing.T, path, body string) wireResponse {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, f.srv.URL+path, strings.NewReader(body))
	require.NoError(t, err)
	return wireSend(t, f.srv.Client(), req)
}

// restError decodes a REST error answer and checks its status.
func (r wireResponse) restError(t *testing.T, status int) (code, message string) {
	t.Helper()
	require.Equal(t, status, r.status, "body %s", r.body)
	var doc struct {
		OK    bool `json:"ok"`
		Error struct {
			Code    string `json:"code"`
			Message string `json:"message"`
		} `json:"error"`
	}
	require.NoError(t, json.Unmarshal(r.body, &doc), "%s", r.body)
	assert.False(t, doc.OK)
	return doc.Error.Code, doc.Error.Message
}

// TestBodyMemoryFollowsBytesReceived sends requests that announce a 4 MB
// body and send one byte. The memory the server sets aside must follow
// the byte, not the announcement. It is not parallel: it reads the
// process's allocation counter.
func TestBodyMemoryFollowsBytesReceived(t *testing.T) {
	const conns = 40
	arrived := make(chan struct{}, conns)
	auth := otc.AuthenticatorFunc(func(r *http.Request) (*otc.Identity, error) {
		arrived <- struct{}{} // authentication runs just before the body is read
		return &otc.Identity{Method: "test"}, nil
	})
	f := newHardFixture(t, 0, auth, nil)
	addr := f.srv.Listener.Addr().String()

	runtime.GC()
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	for i := range conns {
		c, err := net.Dial("tcp", addr)
		require.NoError(t, err)
		t.Cleanup(func() { c.Close() })
		req := "POST /otc/call HTTP/1.1\r\n"
		switch i % 3 {
		case 1:
			req = "GET /otc/tools HTTP/1.1\r\n"
		case 2:
			req = "POST /v1/tools/Calculator_Add:invoke HTTP/1.1\r\n"
		}
		_, err = fmt.Fprintf(c, "%sHost: x\r\nContent-Type: application/json\r\nContent-Length: 4000000\r\n\r\n{", req)
		require.NoError(t, err)
	}
	for range conns {
		select {
		case <-arrived:
		case <-time.After(30 * time.Second):
			t.Fatal("the requests did not reach the handlers")
		}
	}
	// An ordering aid, not a measurement: the handlers go from
	// authentication to reading the body at once.
	time.Sleep(100 * time.Millisecond)
	runtime.ReadMemStats(&after)
	allocated := after.TotalAlloc - before.TotalAlloc
	assert.Less(t, allocated, uint64(16<<20), "allocated %d MB for %d bodies of one byte each (announced 4 MB each)", allocated>>20, conns)
}

// TestEnvelopeNamesAreExact covers bodies that a case-sensitive gateway
// reads one way and a case-folding decoder another.
func TestEnvelopeNamesAreExact(t *testing.T) {
	t.Parallel()
	f := newHardFixture(t, 0, nil, nil)
	for _, tt := range []struct{ name, body, message string }{
		{"upper_case_envelope", `{"REQUEST":{"TOOL_ID":"Guard.Sign"}}`, `Unknown field "REQUEST"`},
		{"long_s", `{"requeſt":{"tool_id":"Guard.Sign"}}`, `Unknown field "requeſt"`},
		{"second_tool_id", `{"request":{"tool_id":"Calculator.Add","TOOL_ID":"Guard.Sign","input":{"a":1,"b":2}}}`, `Unknown field "request.TOOL_ID"`},
		{"title_case_input", `{"request":{"tool_id":"Calculator.Add","Input":{"a":1,"b":2}}}`, `Unknown field "request.Input"`},
		{"kelvin_sign", `{"request":{"tool_id":"Guard.Sign","\u212aey":1}}`, "Unknown field \"request.\u212aey\""},
		{"repeated_tool_id", `{"request":{"tool_id":"Calculator.Add","tool_id":"Guard.Sign"}}`, `Field "request.tool_id" is given more than once`},
		{"repeated_request", `{"request":{"tool_id":"Calculator.Add"},"request":{"tool_id":"Guard.Sign"}}`, `Field "request" is given more than once`},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			e := f.post(t, "/otc/call", tt.body).errorBody(t, http.StatusBadRequest)
			assert.Equal(t, tt.message, e.Message)
		})
	}
	t.Run("context_names_are_exact", func(t *testing.T) {
		t.Parallel()
		// The context ignores fields it does not know, so a user id under
		// another spelling is not a user id.
		v := f.post(t, "/otc/call", `{"request":{"tool_id":"Meta.Inspect","context":{"USER_ID":"u1","user_ıd":"u2"}}}`).success(t)
		var out testkit.InspectOutput
		require.NoError(t, json.Unmarshal(v, &out))
		assert.Empty(t, out.UserID)
	})
	t.Cleanup(func() {
		assert.Zero(t, f.guarded.Load(), "Guard.Sign ran for a body naming it only in a spelling the server must refuse")
	})
}

// TestInputNamesAreExact checks that a parameter reaches the function only
// under its exact name, even where the schema lets other names through.
func TestInputNamesAreExact(t *testing.T) {
	t.Parallel()
	f := newHardFixture(t, 0, nil, nil)
	for _, tt := range []struct{ name, input, want string }{
		{"exact", `{"a":1,"s":"x","inner":{"k":2}}`, `{"a":1,"s":"x","inner":{"k":2}}`},
		{"upper_case_alone", `{"A":5}`, `{"a":0,"s":"","inner":{"k":0}}`},
		{"upper_case_after_exact", `{"a":1,"A":5}`, `{"a":1,"s":"","inner":{"k":0}}`},
		{"upper_case_before_exact", `{"A":5,"a":1}`, `{"a":1,"s":"","inner":{"k":0}}`},
		{"long_s", `{"ſ":"x"}`, `{"a":0,"s":"","inner":{"k":0}}`},
		{"nested", `{"inner":{"K":7,"x":1}}`, `{"a":0,"s":"","inner":{"k":0}}`},
		{"other_names_kept_out", `{"a":1,"Inner":{"k":9},"zzz":1}`, `{"a":1,"s":"","inner":{"k":0}}`},
		{"whole_numbers", `{"a":5.0,"INNER":{},"inner":{"k":1e1}}`, `{"a":5,"s":"","inner":{"k":10}}`},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			body := `{"request":{"tool_id":"Loose.Echo","input":` + tt.input + `}}`
			assert.JSONEq(t, tt.want, string(f.post(t, "/otc/call", body).success(t)), "OTC")
			rest := f.post(t, "/v1/tools/Loose_Echo:invoke", `{"schema_version":"0.1.0","args":`+tt.input+`}`)
			require.Equal(t, http.StatusOK, rest.status, "%s", rest.body)
			var doc struct {
				Result json.RawMessage `json:"result"`
			}
			require.NoError(t, json.Unmarshal(rest.body, &doc))
			assert.JSONEq(t, tt.want, string(doc.Result), "REST")
		})
	}
}

// TestRESTBodyNamesAreExact applies the envelope rules to the REST view's
// invocation document.
func TestRESTBodyNamesAreExact(t *testing.T) {
	t.Parallel()
	f := newHardFixture(t, 0, nil, nil)
	for _, tt := range []struct{ name, body, message string }{
		{"upper_case_args", `{"schema_version":"0.1.0","ARGS":{"a":1,"b":2}}`, "args is required: an object of the tool's arguments, {} for none"},
		{"repeated_args", `{"schema_version":"0.1.0","args":{"a":1,"b":2},"args":{"a":5,"b":5}}`, `Field "args" is given more than once: each field may appear once: a body that repeats a field means different things to different parsers`},
		{"repeated_trace_id", `{"schema_version":"0.1.0","args":{"a":1,"b":2},"trace":{"trace_id":"a","trace_id":"b"}}`, `Field "trace.trace_id" is given more than once: each field may appear once: a body that repeats a field means different things to different parsers`},
		{"repeated_secret", `{"schema_version":"0.1.0","args":{"a":1,"b":2},"context":{"secrets":[{"id":"K","value":"a"},{"id":"K","value":"b"}]}}`, `context.secrets lists "K" more than once: send each id once, so that the tool's value is not a guess`},
		{"wrong_type", `{"schema_version":"0.1.0","args":{"a":1,"b":2},"context":{"user_id":5}}`, `The request body has the wrong shape: context.user_id must be a string, not a number: ` + `context is {"user_id": string, "secrets": [{"id": string, "value": string}], "authorization": [{"id": string, "token": string}]}`},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			code, msg := f.post(t, "/v1/tools/Calculator_Add:invoke", tt.body).restError(t, http.StatusBadRequest)
			assert.Equal(t, rest.CodeInvalidShape, code)
			assert.Equal(t, tt.message, msg)
		})
	}
	t.Run("repeated_arg", func(t *testing.T) {
		t.Parallel()
		code, _ := f.post(t, "/v1/tools/Calculator_Add:invoke", `{"schema_version":"0.1.0","args":{"a":1,"a":1,"b":2}}`).restError(t, http.StatusBadRequest)
		assert.Equal(t, rest.CodeInvalidArgs, code)
	})
}

// TestSlowBodyIsCutOff trickles a body and expects a 408 once the body
// read timeout passes, from every endpoint that reads a body.
func TestSlowBodyIsCutOff(t *testing.T) {
	t.Parallel()
	f := newHardFixture(t, 300*time.Millisecond, nil, nil)
	for _, tt := range []struct{ name, request string }{
		{"otc_call", "POST /otc/call"},
		{"otc_catalog", "GET /otc/tools"},
		{"rest_invoke", "POST /v1/tools/Calculator_Add:invoke"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			c, err := net.Dial("tcp", f.srv.Listener.Addr().String())
			require.NoError(t, err)
			defer c.Close()
			require.NoError(t, c.SetDeadline(time.Now().Add(20*time.Second))) // a guard against hanging, not a measurement
			_, err = fmt.Fprintf(c, "%s HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{\"req", tt.request)
			require.NoError(t, err)
			resp, err := http.ReadResponse(bufio.NewReader(c), nil)
			require.NoError(t, err, "the server must answer a stalled body, not wait for it")
			defer resp.Body.Close()
			b, err := io.ReadAll(resp.Body)
			require.NoError(t, err)
			r := wireResponse{status: resp.StatusCode, header: resp.Header, body: b}
			assert.True(t, resp.Close, "the connection is closed after a cut-off body")
			if strings.Contains(tt.request, "/v1/") {
				code, msg := r.restError(t, http.StatusRequestTimeout)
				assert.Equal(t, rest.CodeRequestTimeout, code)
				assert.Equal(t, "The request body did not arrive within 300ms", msg)
				return
			}
			e := r.errorBody(t, http.StatusRequestTimeout)
			assert.Equal(t, "The request body did not arrive within 300ms", e.Message)
		})
	}
}

// TestLongToolOutlivesServerTimeouts runs a tool for longer than the
// server's ReadTimeout and WriteTimeout: they bound slow clients, and must
// neither cancel the tool nor stop its answer.
func TestLongToolOutlivesServerTimeouts(t *testing.T) {
	t.Parallel()
	f := newHardFixture(t, 0, nil, func(s *http.Server) {
		s.ReadTimeout = 250 * time.Millisecond
		s.WriteTimeout = 250 * time.Millisecond
	})
	t.Run("otc", func(t *testing.T) {
		t.Parallel()
		assert.JSONEq(t, `"slept"`, string(f.post(t, "/otc/call", `{"request":{"tool_id":"Slow.Sleep","input":{"ms":800}}}`).success(t)))
	})
	t.Run("rest", func(t *testing.T) {
		t.Parallel()
		r := f.post(t, "/v1/tools/Slow_Sleep:invoke", `{"schema_version":"0.1.0","args":{"ms":800}}`)
		require.Equal(t, http.StatusOK, r.status, "%s", r.body)
		assert.Contains(t, string(r.body), `"result":"slept"`)
	})
}

// TestIDLengths checks the cap on call and trace ids in every way a call
// can carry them.
func TestIDLengths(t *testing.T) {
	t.Parallel()
	f := newHardFixture(t, 0, nil, nil)
	longest, tooLong := strings.Repeat("c", otc.MaxIDLength), strings.Repeat("c", otc.MaxIDLength+1)
	call := func(field, id string) wireResponse {
		return f.post(t, "/otc/call", `{"request":{"tool_id":"Meta.Inspect","`+field+`":"`+id+`"}}`)
	}
	for _, field := range []string{"call_id", "trace_id"} {
		t.Run(field, func(t *testing.T) {
			t.Parallel()
			var out testkit.InspectOutput
			require.NoError(t, json.Unmarshal(call(field, longest).success(t), &out))
			assert.Contains(t, []string{out.CallID, out.TraceID}, longest)
			r := call(field, tooLong)
			e := r.errorBody(t, http.StatusBadRequest)
			assert.Equal(t, fmt.Sprintf("%s is longer than %d bytes", field, otc.MaxIDLength), e.Message)
			assert.NotContains(t, string(r.body), tooLong, "a refused id is not echoed")
		})
	}
	t.Run("rest_trace_id", func(t *testing.T) {
		t.Parallel()
		code, msg := f.post(t, "/v1/tools/Meta_Inspect:invoke", `{"schema_version":"0.1.0","args":{},"trace":{"trace_id":"`+tooLong+`"}}`).restError(t, http.StatusBadRequest)
		assert.Equal(t, rest.CodeInvalidShape, code)
		assert.Contains(t, msg, "trace_id is longer than 128 bytes")
	})
	t.Run("registry_call", func(t *testing.T) {
		t.Parallel()
		_, err := f.reg.Call(context.Background(), &otc.CallRequest{ToolID: "Meta.Inspect", CallID: tooLong})
		var e *otc.Error
		require.ErrorAs(t, err, &e)
		assert.Equal(t, otc.CodeServerError, e.Code)
	})
}

// TestManyUnexpectedParameters sends close to 4 MiB of unknown keys: the
// answer is a 422 with the first maxParameterErrors of them.
func TestManyUnexpectedParameters(t *testing.T) {
	t.Parallel()
	f := newHardFixture(t, 0, nil, nil)
	var b strings.Builder
	b.WriteString(`{"request":{"tool_id":"Calculator.Add","input":{"a":1,"b":2`)
	for i := 0; b.Len() < otc.DefaultMaxBodyBytes-64; i++ {
		fmt.Fprintf(&b, `,"k%d":1`, i)
	}
	b.WriteString(`}}}`)
	e := f.post(t, "/otc/call", b.String()).errorBody(t, http.StatusUnprocessableEntity)
	keys := slices.Sorted(maps.Keys(e.ParameterErrors))
	require.Len(t, keys, 32)
	for i := range 32 {
		assert.Equal(t, "Is not an accepted parameter", e.ParameterErrors[fmt.Sprintf("k%d", i)])
	}
}
