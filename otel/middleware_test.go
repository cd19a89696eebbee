package otelotc_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/otcgo/otc"
	"github.com/otcgo/otc/idempotency"
	otelotc "github.com/otcgo/otc/otel"
	"github.com/otcgo/otc/rest"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"
)

// Distinctive values sent in inputs, secrets and tokens, which must never
// show up in telemetry.
const (
	inputMarker  = "input-marker-5c0ffee"
	secretMarker = "secret-marker-d15ea5e"
	tokenMarker  = "token-marker-b16b00b5"
)

// A traceparent a caller might send, and its parts.
const (
	callerTraceID    = "4bf92f3577b34da6a3ce929d0e0e4736"
	callerSpanID     = "00f067aa0ba902b7"
	callerTraceparnt = "00-" + callerTraceID + "-" + callerSpanID + "-01"
)

type addInput struct {
	A float64 `json:"a" jsonschema:"description=The first number."`
	B float64 `json:"b" jsonschema:"description=The second number."`
}

type ticketInput struct {
	Summary string `json:"summary" jsonschema:"description=What went wrong."`
}

// traceSeen is what the Trace.Inspect tool saw of its context.
type traceSeen struct {
	TraceID   string `json:"trace_id"`
	SpanID    string `json:"span_id"`
	Recording bool   `json:"recording"`
}

// fixture is a registry with the middleware, recording into in-memory
// exporters, served over HTTP through the OTC handler (under /otc) and
// the REST view (under /v1).
type fixture struct {
	spans  *tracetest.SpanRecorder
	reader *sdkmetric.ManualReader
	tp     *sdktrace.TracerProvider
	srv    *httptest.Server
}

// newFixture builds a fixture. wrap, when set, wraps the HTTP handler, as
// an otelhttp handler would.
func newFixture(t *testing.T, wrap func(*fixture, http.Handler) http.Handler) *fixture {
	t.Helper()
	f := &fixture{spans: tracetest.NewSpanRecorder(), reader: sdkmetric.NewManualReader()}
	f.tp = sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(f.spans))
	mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(f.reader))
	mw, err := otelotc.Middleware(&otelotc.Options{TracerProvider: f.tp, MeterProvider: mp})
	require.NoError(t, err)

	reg := otc.NewRegistry(&otc.RegistryOptions{
		Logger:     slog.New(slog.DiscardHandler),
		Middleware: []otc.Middleware{mw},
	})
	require.NoError(t, otc.Register(reg, otc.Tool{ID: "Calculator.Add", Version: "1.2.3", Description: "Adds two numbers."},
		func(_ context.Context, in addInput) (float64, error) { return in.A + in.B, nil }))
	require.NoError(t, otc.Register(reg, otc.Tool{ID: "Tickets.Open", Version: "1.0.0", Description: "Opens a ticket."},
		func(_ context.Context, in ticketInput) (string, error) {
			return "", fmt.Errorf("cannot open a ticket about %q", in.Summary)
		}))
	require.NoError(t, otc.Register(reg, otc.Tool{ID: "Trace.Inspect", Version: "1.0.0", Description: "Reports the trace it runs in."},
		func(ctx context.Context, _ struct{}) (traceSeen, error) {
			sc := trace.SpanContextFromContext(ctx)
			return traceSeen{TraceID: sc.TraceID().String(), SpanID: sc.SpanID().String(), Recording: trace.SpanFromContext(ctx).IsRecording()}, nil
		}))
	require.NoError(t, otc.Register(reg, otc.Tool{ID: "Vault.Read", Version: "1.0.0", Description: "Reads with a key.",
		Requirements: &otc.Requirements{Secrets: []otc.SecretRequirement{{ID: "API_KEY"}}}},
		func(ctx context.Context, _ struct{}) (bool, error) {
			_, ok := otc.Secret(ctx, "API_KEY")
			return ok, nil
		}))

	rest := rest.NewHandler(reg, nil)
	mux := http.NewServeMux()
	mux.Handle("/otc/", http.StripPrefix("/otc", otc.NewHandler(reg, nil)))
	// The REST view takes its call id from an X-Request-Id response header
	// that a request-id middleware would set.
	mux.Handle("/v1/", http.StripPrefix("/v1", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if id := r.Header.Get("X-Request-Id"); id != "" {
			w.Header().Set("X-Request-Id", id)
		}
		rest.ServeHTTP(w, r)
	})))
	var h http.Handler = mux
	if wrap != nil {
		h = wrap(f, mux)
	}
	f.srv = httptest.NewServer(h)
	t.Cleanup(f.srv.Close)
	return f
}

// call is one tool call in both wire formats.
type call struct {
	tool    string            // Toolkit.Tool, for OTC
	name    string            // the REST name
	input   string            // JSON object
	context string            // a call context object, or ""
	header  map[string]string // extra request headers
}

// protocol sends a call in one wire format.
type protocol struct {
	name string // otc.Call.Protocol
	send func(t *testing.T, f *fixture, c call, callID string) (status int, body []byte)
}

var protocols = []protocol{
	{otc.ProtocolOTC, func(t *testing.T, f *fixture, c call, callID string) (int, []byte) {
		body := fmt.Sprintf(`{"request":{"tool_id":%q,"call_id":%q,"input":%s`, c.tool, callID, c.input)
		if c.context != "" {
			body += `,"context":` + c.context
		}
		return f.post(t, "/otc/tools/call", body+"}}", c.header, "")
	}},
	{otc.ProtocolHTTP, func(t *testing.T, f *fixture, c call, callID string) (int, []byte) {
		body := `{"schema_version":"0.1.0","args":` + c.input
		if c.context != "" {
			body += `,"context":` + c.context
		}
		return f.post(t, "/v1/tools/"+c.name+":invoke", body+"}", c.header, callID)
	}},
}

func (f *fixture) post(t *testing.T, path, body string, header map[string]string, requestID string) (int, []byte) {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, f.srv.URL+path, strings.NewReader(body))
	require.NoError(t, err)
	req.Header.Set("Content-Type", "application/json")
	for k, v := range header {
		req.Header.Set(k, v)
	}
	if requestID != "" {
		req.Header.Set("X-Request-Id", requestID)
	}
	resp, err := f.srv.Client().Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	return resp.StatusCode, b
}

// toolSpans returns the spans the middleware made.
func (f *fixture) toolSpans() []sdktrace.ReadOnlySpan {
	var out []sdktrace.ReadOnlySpan
	for _, s := range f.spans.Ended() {
		if s.InstrumentationScope().Name == otelotc.ScopeName {
			out = append(out, s)
		}
	}
	return out
}

// onlySpan returns the one span the middleware made.
func (f *fixture) onlySpan(t *testing.T) sdktrace.ReadOnlySpan {
	t.Helper()
	spans := f.toolSpans()
	require.Len(t, spans, 1)
	return spans[0]
}

// durations returns the data points of the duration histogram.
func (f *fixture) durations(t *testing.T) []metricdata.HistogramDataPoint[float64] {
	t.Helper()
	var rm metricdata.ResourceMetrics
	require.NoError(t, f.reader.Collect(context.Background(), &rm))
	for _, sm := range rm.ScopeMetrics {
		if sm.Scope.Name != otelotc.ScopeName {
			continue
		}
		for _, m := range sm.Metrics {
			if m.Name == otelotc.DurationMetric {
				assert.Equal(t, "s", m.Unit)
				h, ok := m.Data.(metricdata.Histogram[float64])
				require.True(t, ok, "%T", m.Data)
				return h.DataPoints
			}
		}
	}
	return nil
}

// attrMap flattens attributes into strings for comparison.
func attrMap(kvs []attribute.KeyValue) map[string]string {
	m := make(map[string]string, len(kvs))
	for _, kv := range kvs {
		m[string(kv.Key)] = kv.Value.String()
	}
	return m
}

func TestSuccessfulCall(t *testing.T) {
	t.Parallel()
	for _, p := range protocols {
		t.Run(p.name, func(t *testing.T) {
			t.Parallel()
			f := newFixture(t, nil)
			status, body := p.send(t, f, call{tool: "Calculator.Add", name: "Calculator_Add", input: `{"a":1,"b":2}`}, "call-ok-1")
			require.Equal(t, http.StatusOK, status, "%s", body)

			s := f.onlySpan(t)
			assert.Equal(t, "execute_tool Calculator_Add", s.Name())
			assert.Equal(t, trace.SpanKindInternal, s.SpanKind())
			assert.Equal(t, map[string]string{
				"gen_ai.operation.name":   "execute_tool",
				"gen_ai.tool.name":        "Calculator_Add",
				"gen_ai.tool.type":        "function",
				"gen_ai.tool.description": "Adds two numbers.",
				"gen_ai.tool.call.id":     "call-ok-1",
				"otc.protocol":            p.name,
				"otc.tool.id":             "Calculator.Add@1.2.3",
				"otc.outcome":             "success",
			}, attrMap(s.Attributes()))
			assert.Equal(t, codes.Unset, s.Status().Code)
			assert.Empty(t, s.Status().Description)
			assert.Empty(t, s.Events())
			assert.False(t, s.Parent().IsValid(), "a call without traceparent starts a new trace")

			points := f.durations(t)
			require.Len(t, points, 1)
			assert.Equal(t, map[string]string{
				"gen_ai.operation.name": "execute_tool",
				"gen_ai.tool.name":      "Calculator_Add",
				"gen_ai.tool.type":      "function",
				"otc.outcome":           "success",
			}, attrMap(points[0].Attributes.ToSlice()))
			assert.Equal(t, uint64(1), points[0].Count)
			// The recorded value is the span's duration.
			assert.InDelta(t, s.EndTime().Sub(s.StartTime()).Seconds(), points[0].Sum, 1e-9)
		})
	}
}

func TestFailedCalls(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		name    string
		call    call
		outcome string
		// OTC and REST statuses.
		otcStatus, restStatus int
		// The span name and gen_ai.tool.name per protocol.
		spanName string
		toolName map[string]string
		resolved bool
	}{
		{
			name:    "tool_error",
			call:    call{tool: "Tickets.Open", name: "Tickets_Open", input: `{"summary":"` + inputMarker + `"}`},
			outcome: "tool_error", otcStatus: http.StatusOK, restStatus: http.StatusInternalServerError,
			spanName: "execute_tool Tickets_Open", resolved: true,
		},
		{
			name:    "invalid_input",
			call:    call{tool: "Calculator.Add", name: "Calculator_Add", input: `{"a":"` + inputMarker + `","b":2}`},
			outcome: "invalid_input", otcStatus: http.StatusUnprocessableEntity, restStatus: http.StatusBadRequest,
			spanName: "execute_tool Calculator_Add", resolved: true,
		},
		{
			name:    "missing_requirements",
			call:    call{tool: "Vault.Read", name: "Vault_Read", input: `{}`},
			outcome: "missing_requirements", otcStatus: http.StatusBadRequest, restStatus: http.StatusBadRequest,
			spanName: "execute_tool Vault_Read", resolved: true,
		},
		{
			name:    "not_found",
			call:    call{tool: "Nowhere.Tool", name: "Nowhere_Tool", input: `{}`},
			outcome: "not_found", otcStatus: http.StatusBadRequest, restStatus: http.StatusNotFound,
			spanName: "execute_tool",
			toolName: map[string]string{otc.ProtocolOTC: "Nowhere.Tool", otc.ProtocolHTTP: "Nowhere_Tool"},
		},
	} {
		for _, p := range protocols {
			t.Run(tt.name+"/"+p.name, func(t *testing.T) {
				t.Parallel()
				f := newFixture(t, nil)
				status, body := p.send(t, f, tt.call, "call-"+tt.name)
				want := tt.otcStatus
				if p.name == otc.ProtocolHTTP {
					want = tt.restStatus
				}
				assert.Equal(t, want, status, "%s", body)

				s := f.onlySpan(t)
				assert.Equal(t, tt.spanName, s.Name())
				assert.Equal(t, trace.SpanKindInternal, s.SpanKind())
				attrs := attrMap(s.Attributes())
				assert.Equal(t, tt.outcome, attrs["error.type"])
				assert.Equal(t, tt.outcome, attrs["otc.outcome"])
				assert.Equal(t, "execute_tool", attrs["gen_ai.operation.name"])
				assert.Equal(t, "call-"+tt.name, attrs["gen_ai.tool.call.id"])
				assert.Equal(t, p.name, attrs["otc.protocol"])
				assert.Equal(t, codes.Error, s.Status().Code)
				assert.NotEmpty(t, s.Status().Description)

				wantMetric := map[string]string{
					"gen_ai.operation.name": "execute_tool",
					"otc.outcome":           tt.outcome,
					"error.type":            tt.outcome,
				}
				if tt.resolved {
					name := strings.TrimPrefix(tt.spanName, "execute_tool ")
					assert.Equal(t, name, attrs["gen_ai.tool.name"])
					assert.Equal(t, "function", attrs["gen_ai.tool.type"])
					assert.NotEmpty(t, attrs["otc.tool.id"])
					wantMetric["gen_ai.tool.name"] = name
					wantMetric["gen_ai.tool.type"] = "function"
				} else {
					assert.Equal(t, tt.toolName[p.name], attrs["gen_ai.tool.name"])
					assert.NotContains(t, attrs, "gen_ai.tool.type")
					assert.NotContains(t, attrs, "otc.tool.id")
					assert.NotContains(t, attrs, "gen_ai.tool.description")
				}

				points := f.durations(t)
				require.Len(t, points, 1)
				assert.Equal(t, wantMetric, attrMap(points[0].Attributes.ToSlice()))
				assert.Equal(t, uint64(1), points[0].Count)
			})
		}
	}
}

// TestUnresolvedNameIsClipped sends a tool name longer than the 128 bytes
// recorded for an unresolved call.
func TestUnresolvedNameIsClipped(t *testing.T) {
	t.Parallel()
	f := newFixture(t, nil)
	// 207 bytes; byte 128 falls inside an "é", which must not be split.
	long := "Nowher." + strings.Repeat("é", 100)
	status, body := protocols[0].send(t, f, call{tool: long, input: `{}`}, "call-long")
	assert.Equal(t, http.StatusBadRequest, status, "%s", body)
	s := f.onlySpan(t)
	assert.Equal(t, "execute_tool", s.Name())
	name := attrMap(s.Attributes())["gen_ai.tool.name"]
	assert.Len(t, name, otc.MaxIDLength-1)
	assert.True(t, utf8.ValidString(name))
	assert.True(t, strings.HasPrefix(long, name), "%q", name)
	assert.NotEmpty(t, attrMap(s.Attributes())["error.type"])
}

func TestTraceparentContinuesTheCallersTrace(t *testing.T) {
	t.Parallel()
	for _, p := range protocols {
		t.Run(p.name, func(t *testing.T) {
			t.Parallel()
			f := newFixture(t, nil)
			status, body := p.send(t, f, call{tool: "Trace.Inspect", name: "Trace_Inspect", input: `{}`,
				header: map[string]string{"traceparent": callerTraceparnt}}, "call-tp")
			require.Equal(t, http.StatusOK, status, "%s", body)

			s := f.onlySpan(t)
			assert.Equal(t, callerTraceID, s.SpanContext().TraceID().String())
			assert.Equal(t, callerTraceID, s.Parent().TraceID().String())
			assert.Equal(t, callerSpanID, s.Parent().SpanID().String())
			assert.True(t, s.Parent().IsRemote())

			seen := toolValue(t, p.name, body)
			assert.Equal(t, callerTraceID, seen.TraceID, "the tool sees the caller's trace")
			assert.Equal(t, s.SpanContext().SpanID().String(), seen.SpanID, "the tool sees the middleware's span")
			assert.True(t, seen.Recording)
		})
	}
}

func TestNoTraceparentStartsANewTrace(t *testing.T) {
	t.Parallel()
	for _, p := range protocols {
		t.Run(p.name, func(t *testing.T) {
			t.Parallel()
			f := newFixture(t, nil)
			status, body := p.send(t, f, call{tool: "Trace.Inspect", name: "Trace_Inspect", input: `{}`}, "call-root")
			require.Equal(t, http.StatusOK, status, "%s", body)

			s := f.onlySpan(t)
			assert.False(t, s.Parent().IsValid())
			assert.True(t, s.SpanContext().IsValid())
			assert.NotEqual(t, callerTraceID, s.SpanContext().TraceID().String())

			seen := toolValue(t, p.name, body)
			assert.Equal(t, s.SpanContext().TraceID().String(), seen.TraceID)
			assert.Equal(t, s.SpanContext().SpanID().String(), seen.SpanID)
		})
	}
}

// TestSpanInContextWins covers a server whose HTTP handler is already
// traced: the call's span is a child of the handler's span, and the
// traceparent header, which the handler's instrumentation has had its say
// on, is not read again.
func TestSpanInContextWins(t *testing.T) {
	t.Parallel()
	f := newFixture(t, func(f *fixture, next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			ctx, span := f.tp.Tracer("server").Start(r.Context(), "http.server")
			defer span.End()
			next.ServeHTTP(w, r.WithContext(ctx))
		})
	})
	for _, p := range protocols {
		status, body := p.send(t, f, call{tool: "Trace.Inspect", name: "Trace_Inspect", input: `{}`,
			header: map[string]string{"traceparent": callerTraceparnt}}, "call-nested")
		require.Equal(t, http.StatusOK, status, "%s", body)
	}
	var server []sdktrace.ReadOnlySpan
	for _, s := range f.spans.Ended() {
		if s.Name() == "http.server" {
			server = append(server, s)
		}
	}
	tools := f.toolSpans()
	require.Len(t, tools, 2)
	require.Len(t, server, 2)
	for i, s := range tools {
		assert.Equal(t, server[i].SpanContext().SpanID(), s.Parent().SpanID())
		assert.Equal(t, server[i].SpanContext().TraceID(), s.SpanContext().TraceID())
		assert.NotEqual(t, callerTraceID, s.SpanContext().TraceID().String())
	}
}

// TestNoInputOrSecretInTelemetry sends distinctive input values, secrets
// and tokens through successful and failed calls, and scans every span
// attribute, status, event and metric attribute for them.
func TestNoInputOrSecretInTelemetry(t *testing.T) {
	t.Parallel()
	f := newFixture(t, nil)
	ctxJSON := `{"user_id":"user-1","secrets":[{"id":"API_KEY","value":"` + secretMarker + `"}],"authorization":[{"id":"google","token":"` + tokenMarker + `"}]}`
	calls := []call{
		{tool: "Calculator.Add", name: "Calculator_Add", input: `{"a":1,"b":2,"note":"` + inputMarker + `"}`, context: ctxJSON},
		{tool: "Calculator.Add", name: "Calculator_Add", input: `{"a":"` + inputMarker + `","b":2}`, context: ctxJSON},
		{tool: "Tickets.Open", name: "Tickets_Open", input: `{"summary":"` + inputMarker + `"}`, context: ctxJSON},
		{tool: "Vault.Read", name: "Vault_Read", input: `{"x":"` + inputMarker + `"}`, context: ctxJSON},
		{tool: "Vault.Read", name: "Vault_Read", input: `{}`, context: ctxJSON},
	}
	for _, p := range protocols {
		for _, c := range calls {
			p.send(t, f, c, "")
		}
	}
	spans := f.toolSpans()
	require.Len(t, spans, 2*len(calls))

	var texts []string
	for _, s := range spans {
		for _, kv := range s.Attributes() {
			texts = append(texts, string(kv.Key)+"="+kv.Value.String())
		}
		texts = append(texts, s.Name(), s.Status().Description)
		for _, e := range s.Events() {
			texts = append(texts, e.Name)
			for _, kv := range e.Attributes {
				texts = append(texts, kv.Value.String())
			}
		}
	}
	for _, dp := range f.durations(t) {
		for _, kv := range dp.Attributes.ToSlice() {
			texts = append(texts, string(kv.Key)+"="+kv.Value.String())
		}
	}
	all := strings.Join(texts, "\n")
	for _, marker := range []string{inputMarker, secretMarker, tokenMarker, "user-1"} {
		assert.NotContains(t, all, marker)
	}
	assert.Contains(t, all, "error.type=tool_error", "the calls did fail as planned")
	assert.Contains(t, all, "error.type=invalid_input")
}

// TestDirectCall covers a call that did not come over HTTP: no header to
// read, and the span is a child of the caller's.
func TestDirectCall(t *testing.T) {
	t.Parallel()
	rec := tracetest.NewSpanRecorder()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(rec))
	mw, err := otelotc.Middleware(&otelotc.Options{TracerProvider: tp, MeterProvider: sdkmetric.NewMeterProvider()})
	require.NoError(t, err)
	reg := otc.NewRegistry(&otc.RegistryOptions{Middleware: []otc.Middleware{mw}})
	require.NoError(t, otc.Register(reg, otc.Tool{ID: "Calculator.Add", Version: "1.0.0", Description: "Adds."},
		func(_ context.Context, in addInput) (float64, error) { return in.A + in.B, nil }))

	ctx, parent := tp.Tracer("test").Start(context.Background(), "agent")
	res, err := reg.Call(ctx, &otc.CallRequest{ToolID: "Calculator.Add", Input: json.RawMessage(`{"a":1,"b":2}`)})
	parent.End()
	require.NoError(t, err)
	assert.JSONEq(t, `3`, string(res.Value))

	var tool sdktrace.ReadOnlySpan
	for _, s := range rec.Ended() {
		if s.Name() == "execute_tool Calculator_Add" {
			tool = s
		}
	}
	require.NotNil(t, tool)
	assert.Equal(t, parent.SpanContext().SpanID(), tool.Parent().SpanID())
	attrs := attrMap(tool.Attributes())
	assert.Equal(t, res.CallID, attrs["gen_ai.tool.call.id"], "the generated call id")
	assert.NotContains(t, attrs, "otc.protocol", "a direct call names no protocol")
}

// TestDefaults builds the middleware on the global providers, which do
// nothing until the program sets them.
func TestDefaults(t *testing.T) {
	t.Parallel()
	mw, err := otelotc.Middleware(nil)
	require.NoError(t, err)
	reg := otc.NewRegistry(&otc.RegistryOptions{Middleware: []otc.Middleware{mw}})
	require.NoError(t, otc.Register(reg, otc.Tool{ID: "Calculator.Add", Version: "1.0.0", Description: "Adds."},
		func(_ context.Context, in addInput) (float64, error) { return in.A + in.B, nil }))
	res, err := reg.Call(context.Background(), &otc.CallRequest{ToolID: "Calculator.Add", Input: json.RawMessage(`{"a":1,"b":2}`)})
	require.NoError(t, err)
	assert.JSONEq(t, `3`, string(res.Value))
	_, err = reg.Call(context.Background(), &otc.CallRequest{ToolID: "Calculator.Nope"})
	assert.True(t, errors.Is(err, otc.ErrToolNotFound))
}

// toolValue decodes the Trace.Inspect result from an answer.
func toolValue(t *testing.T, protocol string, body []byte) traceSeen {
	t.Helper()
	var doc struct {
		Result json.RawMessage `json:"result"`
	}
	require.NoError(t, json.Unmarshal(body, &doc), "%s", body)
	raw := doc.Result
	if protocol == otc.ProtocolOTC {
		var r struct {
			Value json.RawMessage `json:"value"`
		}
		require.NoError(t, json.Unmarshal(raw, &r), "%s", body)
		raw = r.Value
	}
	var seen traceSeen
	require.NoError(t, json.Unmarshal(raw, &seen), "%s", body)
	return seen
}

// TestReplayedAndConflictingCalls: with an idempotency store, a call
// answered from the record is marked otc.replayed, and a call id reused
// for another call ends as a "conflict" error.
func TestReplayedAndConflictingCalls(t *testing.T) {
	t.Parallel()
	rec := tracetest.NewSpanRecorder()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(rec))
	mw, err := otelotc.Middleware(&otelotc.Options{TracerProvider: tp, MeterProvider: sdkmetric.NewMeterProvider()})
	require.NoError(t, err)
	reg := otc.NewRegistry(&otc.RegistryOptions{Middleware: []otc.Middleware{mw}, Idempotency: idempotency.NewMemoryStore(nil)})
	require.NoError(t, otc.Register(reg, otc.Tool{ID: "Calculator.Add", Version: "1.0.0", Description: "Adds."},
		func(_ context.Context, in addInput) (float64, error) { return in.A + in.B, nil }))

	for _, input := range []string{`{"a":1,"b":2}`, `{"a":1,"b":2}`, `{"a":5,"b":2}`} {
		_, _ = reg.Call(context.Background(), &otc.CallRequest{ToolID: "Calculator.Add", CallID: "c-1", Input: json.RawMessage(input)})
	}
	spans := rec.Ended()
	require.Len(t, spans, 3)
	first, second, third := attrMap(spans[0].Attributes()), attrMap(spans[1].Attributes()), attrMap(spans[2].Attributes())
	assert.NotContains(t, first, "otc.replayed")
	assert.Equal(t, "true", second["otc.replayed"], "attrMap renders values as text")
	assert.Equal(t, "success", second["otc.outcome"])
	assert.Equal(t, "conflict", third["otc.outcome"])
	assert.Equal(t, "conflict", third["error.type"])
	assert.Equal(t, "the call id was already used for a different call", spans[2].Status().Description)
}
