package otelotc_test

import (
	"context"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/otel/codes"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/otcgo/otc"
	"github.com/otcgo/otc/mcp"
	otelotc "github.com/otcgo/otc/otel"
	"github.com/otcgo/otc/resource"
)

// TestReadSpans: a read of a resource over MCP is traced and timed as a
// call is, as its method, with its URI and outcome, apart from the
// tools' histogram series; a read that fails says so; a list is traced as
// its method.
func TestReadSpans(t *testing.T) {
	t.Parallel()
	f := &fixture{spans: tracetest.NewSpanRecorder(), reader: sdkmetric.NewManualReader()}
	f.tp = sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(f.spans))
	mw, err := otelotc.Middleware(&otelotc.Options{TracerProvider: f.tp, MeterProvider: sdkmetric.NewMeterProvider(sdkmetric.WithReader(f.reader))})
	require.NoError(t, err)
	reg := otc.NewRegistry(&otc.RegistryOptions{Logger: slog.New(slog.DiscardHandler), Middleware: []otc.Middleware{mw}})
	_, err = resource.Register(reg, resource.Resource{URI: "notes://today", Name: "today"}, func(context.Context) (string, error) { return "# Today", nil })
	require.NoError(t, err)
	_, err = resource.Register(reg, resource.Resource{URI: "notes://broken", Name: "broken"}, func(context.Context) (string, error) { panic("the disk") })
	require.NoError(t, err)
	srv := httptest.NewServer(mcp.NewHandler(reg, nil))
	t.Cleanup(srv.Close)
	send := func(body string) {
		req, err := http.NewRequest(http.MethodPost, srv.URL, strings.NewReader(body))
		require.NoError(t, err)
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		req.Header.Set("MCP-Protocol-Version", mcp.Version20251125)
		resp, err := http.DefaultClient.Do(req)
		require.NoError(t, err)
		resp.Body.Close()
	}
	read := func(uri string) {
		send(`{"jsonrpc":"2.0","id":1,"method":"resources/read","params":{"uri":"` + uri + `"}}`)
	}
	read("notes://today")
	read("notes://broken")
	send(`{"jsonrpc":"2.0","id":1,"method":"resources/list"}`)
	spans := f.spans.Ended()
	require.Len(t, spans, 3)
	assert.Equal(t, "resources/list", spans[2].Name(), "a list, as its method")
	assert.Equal(t, "resources/read", spans[0].Name())
	got := attrMap(spans[0].Attributes())
	assert.Equal(t, "notes://today", got["mcp.resource.uri"])
	assert.Equal(t, "resources/read", got["mcp.method.name"])
	assert.Equal(t, "success", got["otc.outcome"])
	assert.Equal(t, "mcp", got["otc.protocol"])
	assert.NotContains(t, got, "gen_ai.operation.name", "a read is no tool's execution")
	assert.Equal(t, "fault", attrMap(spans[1].Attributes())["otc.outcome"])
	assert.Equal(t, codes.Error, spans[1].Status().Code)
	points := f.durations(t)
	require.Len(t, points, 3) // read success, read fault, list success
	for _, p := range points {
		m := attrMap(p.Attributes.ToSlice())
		assert.Contains(t, []string{"resources/read", "resources/list"}, m["mcp.method.name"])
		assert.NotContains(t, m, "gen_ai.operation.name")
	}
}
