package otelotc_test

import (
	"context"
	"encoding/json"
	"log/slog"
	"testing"

	"github.com/otcgo/otc"
	otelotc "github.com/otcgo/otc/otel"
	metricnoop "go.opentelemetry.io/otel/metric/noop"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	tracenoop "go.opentelemetry.io/otel/trace/noop"
)

// BenchmarkCall measures a direct call of a small tool without the
// middleware, with it on no-op providers, and with it on the SDK
// (sampling every span, exporting none).
func BenchmarkCall(b *testing.B) {
	for _, bb := range []struct {
		name string
		opts *otelotc.Options
	}{
		{"bare", nil},
		{"noop", &otelotc.Options{TracerProvider: tracenoop.NewTracerProvider(), MeterProvider: metricnoop.NewMeterProvider()}},
		{"sdk", &otelotc.Options{
			TracerProvider: sdktrace.NewTracerProvider(sdktrace.WithSampler(sdktrace.AlwaysSample())),
			MeterProvider:  sdkmetric.NewMeterProvider(sdkmetric.WithReader(sdkmetric.NewManualReader())),
		}},
	} {
		b.Run(bb.name, func(b *testing.B) {
			ro := &otc.RegistryOptions{Logger: slog.New(slog.DiscardHandler)}
			if bb.opts != nil {
				mw, err := otelotc.Middleware(bb.opts)
				if err != nil {
					b.Fatal(err)
				}
				ro.Middleware = []otc.Middleware{mw}
			}
			reg := otc.NewRegistry(ro)
			if err := otc.Register(reg, otc.Tool{ID: "Calculator.Add", Version: "1.0.0", Description: "Adds."},
				func(_ context.Context, in addInput) (float64, error) { return in.A + in.B, nil }); err != nil {
				b.Fatal(err)
			}
			req := &otc.CallRequest{ToolID: "Calculator.Add", CallID: "call-1", Input: json.RawMessage(`{"a":1,"b":2}`)}
			ctx := context.Background()
			b.ReportAllocs()
			for b.Loop() {
				if _, err := reg.Call(ctx, req); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
