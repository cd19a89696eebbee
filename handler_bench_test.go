package otc_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"slices"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"github.com/xeipuuv/gojsonschema"

	"github.com/otcgo/otc"
	"github.com/otcgo/otc/calllog"
	"github.com/otcgo/otc/internal/testkit"
)

// The benchmarks here put the library's handler beside a hand-written
// net/http handler that does the least work possible for the same answer,
// so that the ratio between the two shows what the library costs. Both
// variants get the same *http.Request (a shallow copy of one prepared
// request, with its body reader rewound) and a fresh httptest.Recorder per
// iteration, and each is checked once, before timing, to give the same
// answer with the same headers.

// baselineCallHandler answers the one call the benchmark sends, as a
// careful hand-written server would: it decodes the envelope, checks the
// tool id, validates the input against the tool's schema (compiled once),
// decodes it, adds, and encodes the result with encoding/json, timing the
// work as the protocol asks. Unlike the benchmarks module's validating
// floor, it reads the body through an io.LimitReader, takes the tool id
// only with its version, echoes the call's $schema and sets
// X-Content-Type-Options as the library does (sameAnswer compares the
// header names); what the two share is in internal/testkit/floors.go.
func baselineCallHandler(tb testing.TB, inputSchema json.RawMessage) http.Handler {
	tb.Helper()
	schema, err := gojsonschema.NewSchema(gojsonschema.NewBytesLoader(inputSchema))
	require.NoError(tb, err)

	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, err := io.ReadAll(io.LimitReader(r.Body, otc.DefaultMaxBodyBytes))
		if err != nil {
			testkit.WriteFloorError(w, http.StatusBadRequest, "unreadable body")
			return
		}
		var env testkit.FloorCall
		if err := json.Unmarshal(body, &env); err != nil {
			testkit.WriteFloorError(w, http.StatusBadRequest, "malformed body")
			return
		}
		if env.Request.ToolID != "Calculator.Add@1.0.0" {
			testkit.WriteFloorError(w, http.StatusBadRequest, "unknown tool")
			return
		}
		start := time.Now()
		in, ok := testkit.FloorInput(w, schema, env.Request.Input)
		if !ok {
			return
		}
		var out testkit.FloorResult
		out.Schema = env.Schema
		out.Result.CallID = env.Request.CallID
		out.Result.Success = true
		out.Result.Value = in.A + in.B
		out.Result.Duration = float64(time.Since(start).Microseconds()) / 1000
		b, err := json.Marshal(out)
		if err != nil {
			testkit.WriteFloorError(w, http.StatusInternalServerError, "encoding failed")
			return
		}
		h := w.Header()
		h.Set("Content-Type", "application/json")
		h.Set("X-Content-Type-Options", "nosniff")
		h.Set("Content-Length", strconv.Itoa(len(b)))
		w.WriteHeader(http.StatusOK)
		_, _ = w.Write(b)
	})
}

// benchServe runs one request per iteration through h: a shallow copy of
// proto whose body reads body from the start.
func benchServe(b *testing.B, h http.Handler, proto *http.Request, body []byte) {
	benchServeStatus(b, h, proto, body, http.StatusOK)
}

// benchServeStatus is benchServe for a request answered with status.
func benchServeStatus(b *testing.B, h http.Handler, proto *http.Request, body []byte, status int) {
	rd := bytes.NewReader(body)
	b.ReportAllocs()
	for b.Loop() {
		rd.Reset(body)
		req := *proto
		req.Body = io.NopCloser(rd)
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, &req)
		if rec.Code != status {
			b.Fatalf("status %d: %.300s", rec.Code, rec.Body.Bytes())
		}
	}
}

// serveOnce answers one request, for the checks before timing.
func serveOnce(h http.Handler, proto *http.Request, body []byte) *httptest.ResponseRecorder {
	req := *proto
	req.Body = io.NopCloser(bytes.NewReader(body))
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, &req)
	return rec
}

// sameAnswer checks that two handlers answer alike: status, header names,
// Content-Type, and the body as JSON once normalize has been applied.
func sameAnswer(tb testing.TB, a, b *httptest.ResponseRecorder, normalize func(map[string]any)) {
	tb.Helper()
	require.Equal(tb, http.StatusOK, a.Code, "%s", a.Body.Bytes())
	require.Equal(tb, a.Code, b.Code)
	names := func(h http.Header) []string {
		var out []string
		for k := range h {
			out = append(out, k)
		}
		slices.Sort(out)
		return out
	}
	require.Equal(tb, names(a.Header()), names(b.Header()), "both variants set the same headers")
	require.Equal(tb, "application/json", b.Header().Get("Content-Type"))
	var av, bv map[string]any
	require.NoError(tb, json.Unmarshal(a.Body.Bytes(), &av))
	require.NoError(tb, json.Unmarshal(b.Body.Bytes(), &bv))
	normalize(av)
	normalize(bv)
	require.Equal(tb, av, bv)
}

// BenchmarkCall times the seed's Calculator.Add call through the library's
// handler (otc) and through baselineCallHandler (baseline).
func BenchmarkCall(b *testing.B) {
	reg := testkit.NewAddRegistry(b)
	lib := otc.NewHandler(reg, nil)
	base := baselineCallHandler(b, reg.Tools()[0].InputSchema.Parameters)

	body := []byte(testkit.OTCAddCall)
	proto := httptest.NewRequest(http.MethodPost, "/tools/call", nil)
	proto.Header.Set("Content-Type", "application/json")
	proto.ContentLength = int64(len(body))

	libAnswer := serveOnce(lib, proto, body)
	sameAnswer(b, libAnswer, serveOnce(base, proto, body), func(m map[string]any) {
		result := m["result"].(map[string]any)
		require.IsType(b, 0.0, result["duration"])
		result["duration"] = 0.0
	})
	require.Contains(b, libAnswer.Body.String(), `"value":15`)

	b.Run("otc", func(b *testing.B) { benchServe(b, lib, proto, body) })
	b.Run("baseline", func(b *testing.B) { benchServe(b, base, proto, body) })
}

// benchCatalogs holds the registries of BenchmarkListTools, built once per
// size: registering a thousand tools compiles a thousand validators.
var benchCatalogs = struct {
	sync.Mutex
	regs map[int]*otc.Registry
}{regs: map[int]*otc.Registry{}}

func benchCatalog(tb testing.TB, n int) *otc.Registry {
	tb.Helper()
	benchCatalogs.Lock()
	defer benchCatalogs.Unlock()
	if reg := benchCatalogs.regs[n]; reg != nil {
		return reg
	}
	reg := otc.NewRegistry(&otc.RegistryOptions{Logger: slog.New(slog.DiscardHandler)})
	for i := range n {
		require.NoError(tb, otc.Register(reg, testkit.AddTool(fmt.Sprintf("Bench.Tool%04d", i), "1.0.0"), testkit.Add))
	}
	benchCatalogs.regs[n] = reg
	return reg
}

// baselineListHandler is what a naive server does for GET /tools: marshal
// its list of definitions on every request.
func baselineListHandler(defs []otc.ToolDefinition) http.Handler {
	type catalog struct {
		Schema string               `json:"$schema"`
		Tools  []otc.ToolDefinition `json:"tools"`
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, err := json.Marshal(catalog{Schema: otc.SchemaOTC, Tools: defs})
		if err != nil {
			http.Error(w, err.Error(), http.StatusInternalServerError)
			return
		}
		h := w.Header()
		h.Set("Content-Type", "application/json")
		h.Set("X-Content-Type-Options", "nosniff")
		h.Set("Content-Length", strconv.Itoa(len(b)))
		w.WriteHeader(http.StatusOK)
		_, _ = w.Write(b)
	})
}

// BenchmarkListTools times GET /tools with 1 and 1000 registered tools,
// through the library's handler (otc) and a handler that marshals the
// definitions per request (baseline).
func BenchmarkListTools(b *testing.B) {
	proto := httptest.NewRequest(http.MethodGet, "/tools", nil)
	for _, n := range []int{1, 1000} {
		reg := benchCatalog(b, n)
		lib := otc.NewHandler(reg, nil)
		base := baselineListHandler(reg.Tools())
		sameAnswer(b, serveOnce(lib, proto, nil), serveOnce(base, proto, nil), func(m map[string]any) {
			require.Len(b, m["tools"], n)
		})
		b.Run("otc/"+strconv.Itoa(n), func(b *testing.B) { benchServe(b, lib, proto, nil) })
		b.Run("baseline/"+strconv.Itoa(n), func(b *testing.B) { benchServe(b, base, proto, nil) })
	}
}

// acceptHandler is a slog.Handler that takes every record and drops it:
// what call logging costs the call, apart from a handler's own work.
type acceptHandler struct{}

func (acceptHandler) Enabled(context.Context, slog.Level) bool  { return true }
func (acceptHandler) Handle(context.Context, slog.Record) error { return nil }
func (h acceptHandler) WithAttrs([]slog.Attr) slog.Handler      { return h }
func (h acceptHandler) WithGroup(string) slog.Handler           { return h }

// BenchmarkCallPipeline times the Calculator.Add call of BenchmarkCall
// through the pipeline with no middleware (none), with one middleware
// that only passes the call on (passthrough), with call logging to a
// handler that takes each record and drops it (logging), and with call
// logging to slog's JSON handler writing to io.Discard (logging_json):
// each record is then also encoded.
func BenchmarkCallPipeline(b *testing.B) {
	body := []byte(testkit.OTCAddCall)
	proto := httptest.NewRequest(http.MethodPost, "/tools/call", nil)
	proto.Header.Set("Content-Type", "application/json")
	proto.ContentLength = int64(len(body))

	passthrough := func(next otc.CallFunc) otc.CallFunc {
		return func(ctx context.Context, c *otc.Call) (otc.CallResult, error) { return next(ctx, c) }
	}
	logging := calllog.New(slog.New(acceptHandler{}), nil)
	loggingJSON := calllog.New(slog.New(slog.NewJSONHandler(io.Discard, nil)), nil)
	for _, v := range []struct {
		name string
		mw   []otc.Middleware
	}{
		{"none", nil},
		{"passthrough", []otc.Middleware{passthrough}},
		{"logging", []otc.Middleware{logging}},
		{"logging_json", []otc.Middleware{loggingJSON}},
	} {
		h := otc.NewHandler(testkit.NewAddRegistry(b, v.mw...), nil)
		require.Contains(b, serveOnce(h, proto, body).Body.String(), `"value":15`)
		b.Run(v.name, func(b *testing.B) { benchServe(b, h, proto, body) })
	}
}
