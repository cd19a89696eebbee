package otelotc_test

import (
	"context"
	"encoding/json"
	"fmt"
	"log"
	"net/http"

	"github.com/otcgo/otc"
	"github.com/otcgo/otc/calllog"
	otelotc "github.com/otcgo/otc/otel"
	"github.com/otcgo/otc/rest"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
)

// A tool server whose calls are traced with the program's global
// providers, over both wire formats.
func ExampleMiddleware() {
	// The program sets up OpenTelemetry once, with its exporters:
	// otel.SetTracerProvider(tp) and otel.SetMeterProvider(mp).
	// docs:start middleware
	tracing, err := otelotc.Middleware(nil)
	if err != nil {
		log.Fatal(err)
	}
	reg := otc.NewRegistry(&otc.RegistryOptions{
		// First, so that its span covers the calls other middleware refuses.
		Middleware: []otc.Middleware{tracing, calllog.New(nil, nil)},
	})
	// docs:end middleware
	type addInput struct {
		A float64 `json:"a" jsonschema:"description=The first number."`
		B float64 `json:"b" jsonschema:"description=The second number."`
	}
	err = otc.Register(reg, otc.Tool{ID: "Calculator.Add", Version: "1.0.0", Description: "Adds two numbers."},
		func(_ context.Context, in addInput) (float64, error) { return in.A + in.B, nil })
	if err != nil {
		log.Fatal(err)
	}

	mux := http.NewServeMux()
	mux.Handle("/otc/", http.StripPrefix("/otc", otc.NewHandler(reg, nil)))
	mux.Handle("/v1/", http.StripPrefix("/v1", rest.NewHandler(reg, nil)))
	// A request with a traceparent header continues the caller's trace.
	log.Fatal(http.ListenAndServe("localhost:8080", mux))
}

// The span a call makes, recorded in memory.
func ExampleMiddleware_span() {
	spans := tracetest.NewSpanRecorder()
	tracing, err := otelotc.Middleware(&otelotc.Options{
		TracerProvider: sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(spans)),
		MeterProvider:  sdkmetric.NewMeterProvider(),
	})
	if err != nil {
		log.Fatal(err)
	}
	reg := otc.NewRegistry(&otc.RegistryOptions{Middleware: []otc.Middleware{tracing}})
	type addInput struct {
		A float64 `json:"a" jsonschema:"description=The first number."`
		B float64 `json:"b" jsonschema:"description=The second number."`
	}
	err = otc.Register(reg, otc.Tool{ID: "Calculator.Add", Version: "1.0.0", Description: "Adds two numbers."},
		func(_ context.Context, in addInput) (float64, error) { return in.A + in.B, nil })
	if err != nil {
		log.Fatal(err)
	}

	_, err = reg.Call(context.Background(), &otc.CallRequest{
		ToolID: "Calculator.Add",
		CallID: "call-1",
		Input:  json.RawMessage(`{"a": 1, "b": 2}`),
	})
	if err != nil {
		log.Fatal(err)
	}
	s := spans.Ended()[0]
	fmt.Println(s.Name(), s.SpanKind(), s.Status().Code)
	for _, kv := range s.Attributes() {
		fmt.Printf("%s=%s\n", kv.Key, kv.Value.String())
	}
	// Output:
	// execute_tool Calculator_Add internal Unset
	// gen_ai.operation.name=execute_tool
	// gen_ai.tool.name=Calculator_Add
	// gen_ai.tool.type=function
	// otc.tool.id=Calculator.Add@1.0.0
	// gen_ai.tool.description=Adds two numbers.
	// gen_ai.tool.call.id=call-1
	// otc.outcome=success
}
