package otelotc

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/otcgo/otc"
	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/metric"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/trace"
)

// ScopeName is the instrumentation scope of the tracer and the meter the
// middleware uses. Match it in a View or a sampler to single out the
// middleware's telemetry.
const ScopeName = "github.com/otcgo/otc/otel"

// DurationMetric is the name of the call-duration histogram, the GenAI
// semantic conventions' tool execution duration. Its unit is "s".
const DurationMetric = "gen_ai.execute_tool.duration"

// Options configures [Middleware]. The zero value, and nil, give the
// defaults described on each field.
type Options struct {
	// TracerProvider creates the tracer. Nil means the global one,
	// otel.GetTracerProvider(), read when Middleware is called; the global
	// provider delegates to the one set later with otel.SetTracerProvider.
	TracerProvider trace.TracerProvider

	// MeterProvider creates the meter. Nil means the global one,
	// otel.GetMeterProvider(), which delegates like the tracer provider.
	MeterProvider metric.MeterProvider

	// Propagator reads the caller's trace context from the headers of a
	// call that came over HTTP, when the call's context holds no span
	// already. Nil means propagation.TraceContext{}, the W3C traceparent
	// and tracestate headers, rather than otel.GetTextMapPropagator(): the
	// global propagator does nothing until the program sets one, and a
	// caller's traceparent should be honored without that step. Pass
	// otel.GetTextMapPropagator() to use the program's own (with baggage,
	// say).
	Propagator propagation.TextMapPropagator
}

// Attribute keys. The gen_ai.* and error.type keys come from the
// OpenTelemetry semantic conventions; the otc.* keys are this library's.
const (
	keyOperationName   = attribute.Key("gen_ai.operation.name")
	keyToolName        = attribute.Key("gen_ai.tool.name")
	keyToolType        = attribute.Key("gen_ai.tool.type")
	keyToolDescription = attribute.Key("gen_ai.tool.description")
	keyToolCallID      = attribute.Key("gen_ai.tool.call.id")
	keyErrorType       = attribute.Key("error.type")
	keyProtocol        = attribute.Key("otc.protocol")
	// keyResourceURI and keyPromptName say what a read or a render is of
	// (MCP's semantic conventions); keyTarget what a completion completes.
	keyMCPMethod   = attribute.Key("mcp.method.name")
	keyResourceURI = attribute.Key("mcp.resource.uri")
	keyPromptName  = attribute.Key("gen_ai.prompt.name")
	keyTarget      = attribute.Key("otc.target")
	keyToolID      = attribute.Key("otc.tool.id")
	keyOutcome     = attribute.Key("otc.outcome")
	keyReplayed    = attribute.Key("otc.replayed")
)

const (
	// operationName is gen_ai.operation.name for a tool execution, and
	// the span name of a call that resolved to no tool.
	operationName = "execute_tool"
	// toolType is gen_ai.tool.type: the tool is a predefined function
	// whose arguments the model writes.
	toolType = "function"
	// maxNameLength bounds the tool name a caller sent, recorded for a
	// call that resolved to no tool.
	maxNameLength = otc.MaxIDLength
)

// internalKind is the span kind the conventions give a tool execution.
var internalKind = trace.WithSpanKind(trace.SpanKindInternal)

// durationBuckets are the histogram's advised bucket boundaries, in
// seconds: from sub-millisecond functions to reports that take minutes.
var durationBuckets = []float64{0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300}

// outcomes lists the outcome classes of otc, for which each tool's metric
// attributes are prepared in advance.
var outcomes = []otc.Outcome{
	otc.OutcomeSuccess, otc.OutcomeToolError, otc.OutcomeFault, otc.OutcomeTimeout,
	otc.OutcomeBusy, otc.OutcomeCanceled, otc.OutcomeNotFound, otc.OutcomeBadRequest,
	otc.OutcomeMissingRequirements, otc.OutcomeInvalidInput, otc.OutcomeUnauthenticated,
	otc.OutcomeRefused, otc.OutcomeConflict, otc.OutcomeRateLimited,
}

// statusDescription is the span status description of a failed call: a
// fixed phrase per outcome class, never a message that could quote the
// input.
func statusDescription(o otc.Outcome) string {
	switch o {
	case otc.OutcomeToolError:
		return "the tool function returned an error"
	case otc.OutcomeFault:
		return "the tool function panicked or returned a value that cannot be encoded"
	case otc.OutcomeTimeout:
		return "the tool function ran past the tool's timeout"
	case otc.OutcomeBusy:
		return "the tool was running its maximum of concurrent calls"
	case otc.OutcomeCanceled:
		return "the caller went away while the tool function ran"
	case otc.OutcomeNotFound:
		return "no registered tool or version matches the call"
	case otc.OutcomeBadRequest:
		return "the call is malformed"
	case otc.OutcomeMissingRequirements:
		return "the call lacks a secret, token or user id the tool requires"
	case otc.OutcomeInvalidInput:
		return "the input does not match the tool's schema"
	case otc.OutcomeUnauthenticated:
		return "the caller's credentials were refused"
	case otc.OutcomeRefused:
		return "a middleware refused the call"
	case otc.OutcomeConflict:
		return "the call id was already used for a different call"
	case otc.OutcomeRateLimited:
		return "the caller was over its rate limit"
	}
	return "the call failed"
}

// Middleware returns middleware that makes one span per call and records
// its duration in the [DurationMetric] histogram, as the package
// documentation describes. opts may be nil.
//
// It fails only when the meter refuses to create the histogram; the
// OpenTelemetry SDK does so for an invalid name or unit, which these are
// not, so an error points at a broken MeterProvider.
func Middleware(opts *Options) (otc.Middleware, error) {
	var o Options
	if opts != nil {
		o = *opts
	}
	if o.TracerProvider == nil {
		o.TracerProvider = otel.GetTracerProvider()
	}
	if o.MeterProvider == nil {
		o.MeterProvider = otel.GetMeterProvider()
	}
	if o.Propagator == nil {
		o.Propagator = propagation.TraceContext{}
	}
	duration, err := o.MeterProvider.Meter(ScopeName).Float64Histogram(DurationMetric,
		metric.WithUnit("s"),
		metric.WithDescription("How long tool calls take, measured around the rest of the call pipeline."),
		metric.WithExplicitBucketBoundaries(durationBuckets...))
	if err != nil {
		return nil, fmt.Errorf("otelotc: creating the %s histogram: %w", DurationMetric, err)
	}
	m := &middleware{
		tracer:     o.TracerProvider.Tracer(ScopeName),
		propagator: o.Propagator,
		duration:   duration,
		unresolved: newToolInfo(nil),
	}
	return m.wrap, nil
}

// middleware holds what every call shares.
type middleware struct {
	tracer     trace.Tracer
	propagator propagation.TextMapPropagator
	duration   metric.Float64Histogram

	tools      sync.Map // *otc.ToolDefinition → *toolInfo
	unresolved *toolInfo
}

// toolInfo is what the middleware prepares once per tool version: the span
// name, the span attributes that do not change from call to call, and the
// histogram's attributes for each outcome.
type toolInfo struct {
	spanName string
	attrs    []attribute.KeyValue // read-only once built
	record   map[otc.Outcome][]metric.RecordOption
	tool     bool // false for calls that resolved to no tool
}

// newToolInfo prepares the telemetry of tool d, or of unresolved calls
// when d is nil.
func newToolInfo(d *otc.ToolDefinition) *toolInfo {
	ti := &toolInfo{spanName: operationName, record: make(map[otc.Outcome][]metric.RecordOption, len(outcomes))}
	ti.attrs = []attribute.KeyValue{keyOperationName.String(operationName)}
	if d != nil {
		ti.tool = true
		ti.spanName = operationName + " " + d.Name
		ti.attrs = append(ti.attrs,
			keyToolName.String(d.Name),
			keyToolType.String(toolType),
			keyToolID.String(d.ID))
		if d.Description != "" {
			ti.attrs = append(ti.attrs, keyToolDescription.String(d.Description))
		}
	}
	for _, o := range outcomes {
		ti.record[o] = recordOptions(d, o)
	}
	return ti
}

// recordOptions builds the histogram attributes of one outcome of tool d,
// or of an unresolved call when d is nil.
func recordOptions(d *otc.ToolDefinition, o otc.Outcome) []metric.RecordOption {
	kvs := make([]attribute.KeyValue, 0, 5)
	kvs = append(kvs, keyOperationName.String(operationName), keyOutcome.String(string(o)))
	if d != nil {
		kvs = append(kvs, keyToolName.String(d.Name), keyToolType.String(toolType))
	}
	if o != otc.OutcomeSuccess {
		kvs = append(kvs, keyErrorType.String(string(o)))
	}
	return []metric.RecordOption{metric.WithAttributeSet(attribute.NewSet(kvs...))}
}

// info returns the prepared telemetry of the tool a call resolved to.
func (m *middleware) info(d *otc.ToolDefinition) *toolInfo {
	if d == nil {
		return m.unresolved
	}
	if ti, ok := m.tools.Load(d); ok {
		return ti.(*toolInfo)
	}
	ti, _ := m.tools.LoadOrStore(d, newToolInfo(d))
	return ti.(*toolInfo)
}

// wrap is the otc.Middleware.
func (m *middleware) wrap(next otc.CallFunc) otc.CallFunc {
	return func(ctx context.Context, c *otc.Call) (otc.CallResult, error) {
		if !trace.SpanContextFromContext(ctx).IsValid() {
			if r := otc.HTTPRequest(ctx); r != nil {
				ctx = m.propagator.Extract(ctx, propagation.HeaderCarrier(r.Header))
			}
		}
		if c.Kind != "" && c.Kind != otc.CallTool {
			return m.wrapReadable(ctx, next, c)
		}
		ti := m.info(c.Tool)

		n := len(ti.attrs) + 2
		if !ti.tool {
			n++
		}
		attrs := make([]attribute.KeyValue, len(ti.attrs), n)
		copy(attrs, ti.attrs)
		if !ti.tool && c.ToolID != "" {
			attrs = append(attrs, keyToolName.String(clip(c.ToolID, maxNameLength)))
		}
		if c.CallID != "" {
			attrs = append(attrs, keyToolCallID.String(c.CallID))
		}
		if c.Protocol != "" {
			attrs = append(attrs, keyProtocol.String(c.Protocol))
		}

		start := time.Now()
		ctx, span := m.tracer.Start(ctx, ti.spanName,
			internalKind,
			trace.WithTimestamp(start),
			trace.WithAttributes(attrs...))
		res, err := next(ctx, c)
		end := time.Now()

		outcome := otc.OutcomeOf(res, err)
		if span.IsRecording() {
			if res.Replayed {
				span.SetAttributes(keyReplayed.Bool(true))
			}
			if outcome == otc.OutcomeSuccess {
				span.SetAttributes(keyOutcome.String(string(outcome)))
			} else {
				span.SetAttributes(keyOutcome.String(string(outcome)), keyErrorType.String(string(outcome)))
				span.SetStatus(codes.Error, statusDescription(outcome))
			}
			// The span ends when the histogram's value does, so that
			// the two durations agree.
			span.End(trace.WithTimestamp(end))
		} else {
			span.End()
		}

		if m.duration.Enabled(ctx) {
			opts, ok := ti.record[outcome]
			if !ok { // an outcome class newer than this package
				opts = recordOptions(c.Tool, outcome)
			}
			m.duration.Record(ctx, end.Sub(start).Seconds(), opts...)
		}
		return res, err
	}
}

// wrapReadable traces and times a read, a render, a completion or a
// list: a span named as MCP's method (resources/read, prompts/get,
// completion/complete, resources/list, …) with what it is of, and the
// duration histogram under mcp.method.name, apart from the tools'.
func (m *middleware) wrapReadable(ctx context.Context, next otc.CallFunc, c *otc.Call) (otc.CallResult, error) {
	var method string
	attrs := make([]attribute.KeyValue, 0, 4)
	switch c.Kind {
	case otc.CallRead:
		method = "resources/read"
		attrs = append(attrs, keyResourceURI.String(clip(c.Target, maxNameLength)))
	case otc.CallRender:
		method = "prompts/get"
		attrs = append(attrs, keyPromptName.String(clip(c.Target, maxNameLength)))
	case otc.CallList: // its Target is the method
		method = clip(c.Target, maxNameLength)
	default:
		method = "completion/complete"
		attrs = append(attrs, keyTarget.String(clip(c.Target, maxNameLength)))
	}
	attrs = append(attrs, keyMCPMethod.String(method))
	if c.CallID != "" {
		attrs = append(attrs, keyToolCallID.String(c.CallID))
	}
	if c.Protocol != "" {
		attrs = append(attrs, keyProtocol.String(c.Protocol))
	}
	start := time.Now()
	ctx, span := m.tracer.Start(ctx, method, internalKind, trace.WithTimestamp(start), trace.WithAttributes(attrs...))
	res, err := next(ctx, c)
	end := time.Now()
	outcome := otc.OutcomeOf(res, err)
	kvs := []attribute.KeyValue{keyMCPMethod.String(method), keyOutcome.String(string(outcome))}
	if outcome == otc.OutcomeSuccess {
		span.SetAttributes(keyOutcome.String(string(outcome)))
	} else {
		span.SetAttributes(keyOutcome.String(string(outcome)), keyErrorType.String(string(outcome)))
		span.SetStatus(codes.Error, statusDescription(outcome))
		kvs = append(kvs, keyErrorType.String(string(outcome)))
	}
	span.End(trace.WithTimestamp(end))
	if m.duration.Enabled(ctx) {
		m.duration.Record(ctx, end.Sub(start).Seconds(), metric.WithAttributeSet(attribute.NewSet(kvs...)))
	}
	return res, err
}

// clip cuts s to at most n bytes without splitting a UTF-8 sequence, and
// replaces invalid UTF-8, so that a caller's text is safe to export.
func clip(s string, n int) string {
	if len(s) > n {
		cut := n
		for cut > 0 && !utf8.RuneStart(s[cut]) {
			cut--
		}
		s = s[:cut]
	}
	if !utf8.ValidString(s) {
		s = strings.ToValidUTF8(s, "\uFFFD")
	}
	return s
}
