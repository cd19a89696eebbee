// Package otelotc traces and measures the tool calls of an otc registry
// with OpenTelemetry.
//
// The package lives in its own module, github.com/otcgo/otc/otel, so that
// programs that use otc without OpenTelemetry never download it. The last
// element of its import path is "otel", as is the name of OpenTelemetry's
// own package; its package name is otelotc, so that a file can import both
// without a clash. Spelling the name out in the import says so:
//
//	import (
//		"go.opentelemetry.io/otel"
//		otelotc "github.com/otcgo/otc/otel"
//	)
//
// [Middleware] returns an [otc.Middleware] for [otc.RegistryOptions]. It
// works the same over every wire format (the OTC handler, the REST view,
// MCP and direct [otc.Registry.Call]), because it runs in the registry's
// call pipeline rather than in an HTTP handler.
//
// # Spans
//
// Each call gets one span, shaped as the OpenTelemetry semantic conventions
// for generative AI describe a tool execution ("execute tool" span,
// development status, in the GenAI conventions that have moved from
// open-telemetry/semantic-conventions to
// open-telemetry/semantic-conventions-genai):
//
//   - name: "execute_tool {tool name}", such as "execute_tool
//     Calculator_Add"; just "execute_tool" when the call names no
//     registered tool, so that callers cannot mint span names;
//   - kind: internal;
//   - gen_ai.operation.name: "execute_tool";
//   - gen_ai.tool.name: the tool's name, the one a model sees
//     ("Calculator_Add"); for a call that resolved to no tool, the tool as
//     the caller named it, cut to 128 bytes;
//   - gen_ai.tool.type: "function", the conventions' type for a predefined
//     function whose arguments the model writes (omitted for an unresolved
//     call);
//   - gen_ai.tool.description: the tool's description;
//   - gen_ai.tool.call.id: the call id, the caller's or the one the
//     registry generated;
//   - otc.protocol: the wire format, "otc", "http" or "mcp";
//   - otc.tool.id: the versioned tool id, "Calculator.Add@1.0.0";
//   - otc.outcome: the outcome class, [otc.Outcome];
//   - error.type, on a failed call only: the outcome class, one of
//     "tool_error", "fault", "timeout", "busy", "canceled", "not_found",
//     "bad_request", "missing_requirements", "invalid_input",
//     "unauthenticated", "refused", "conflict" and "rate_limited" (see
//     [otc.Outcome]);
//   - otc.replayed: true on a call answered with the outcome an earlier
//     call with the same call id recorded, the function not running
//     (see [otc.RegistryOptions.Idempotency]); absent otherwise.
//
// A failed call also sets the span status to Error, with a fixed short
// description of the outcome class. A successful call leaves the status
// unset, as the conventions ask. The middleware never records the input,
// the result, the call context (secrets, tokens, user id) or error
// messages, which can quote the input: the conventions' opt-in
// gen_ai.tool.call.arguments and gen_ai.tool.call.result are not
// implemented. Use [calllog.New] with LogInput when you want those.
//
// The span's context is passed down the chain, so later middleware and the
// tool function see it: trace.SpanFromContext(ctx) in a tool returns it,
// and spans the tool starts are its children.
//
// # Parent
//
// When the context of the call already holds a valid span context (an
// otelhttp handler upstream, or a direct call from traced code), the span
// is its child. Otherwise, for a call that came over HTTP, the parent is
// read from the request's headers with [Options.Propagator], by default the
// W3C Trace Context propagator: a request carrying a traceparent header
// continues the caller's trace, and one without starts a new trace.
//
// # Metric
//
// One histogram, gen_ai.execute_tool.duration (unit "s"), the tool
// execution duration the GenAI conventions define (development status). A
// value is recorded for every call and equals the span's duration. Its
// attributes are gen_ai.operation.name, gen_ai.tool.name,
// gen_ai.tool.type, otc.outcome, and error.type on failures. A call that
// names no registered tool is recorded without gen_ai.tool.name and
// gen_ai.tool.type, so that callers sending made-up names cannot create
// metric series at will. The middleware advises bucket boundaries from
// 0.5 ms to 5 minutes, since tools range from arithmetic to reports:
// 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5,
// 5, 10, 30, 60, 120 and 300 s. A View in the MeterProvider replaces them.
//
// # Order
//
// Put the middleware first in [otc.RegistryOptions.Middleware] so that its
// span covers the other middleware and records the calls they refuse.
package otelotc
