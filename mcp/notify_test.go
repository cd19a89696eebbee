package mcp_test

// Progress and log notifications over HTTP: when an answer becomes an SSE
// stream, what it carries and in which order, what each protocol version
// lets through, reports that arrive after the answer, and a client that
// goes away.

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"math"
	"net/http"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/otcgo/otc"
	"github.com/otcgo/otc/mcp"
)

// progressParams returns the params of the nth report of Progress.Count.
func progressParams(token any, n int) map[string]any {
	return map[string]any{"progressToken": token, "progress": float64(n), "total": float64(3), "message": "step " + string(rune('0'+n))}
}

func TestProgressOverSSE(t *testing.T) {
	t.Parallel()
	url := serve(t, newRegistry(t), nil)
	legacyCall := func(meta obj) string { return request(9, "tools/call", callParams("Progress_Count", nil, meta)) }
	for _, tc := range []struct {
		name  string
		body  string
		hdr   map[string]string
		token any
	}{
		{"legacy_string_token", legacyCall(obj{"progressToken": "tok-1"}), nil, "tok-1"},
		{"legacy_integer_token", legacyCall(obj{"progressToken": 17}), nil, float64(17)},
		{"modern", modernCall(9, "Progress_Count", nil, obj{"progressToken": "m-1"}), modernHeaders("tools/call", "Progress_Count"), "m-1"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			a := post(t, url, tc.body, tc.hdr)
			assert.Equal(t, "no-cache", a.header.Get("Cache-Control"))
			ns, resp := splitStream(t, a.events(t))
			require.Len(t, ns, 3)
			for i, n := range ns {
				assert.Equal(t, "notifications/progress", n.Method)
				assert.Equal(t, progressParams(tc.token, i+1), n.Params, "report %d, in order", i+1)
			}
			assert.Equal(t, "9", string(resp.ID))
			require.Nil(t, resp.Error)
			assert.JSONEq(t, `{"result":"done"}`, string(decodeCall(t, resp.Result).StructuredContent))
		})
	}
	for _, tc := range []struct {
		name string
		body string
		hdr  map[string]string
	}{
		{"no_token", legacyCall(nil), nil},
		{"no_token_modern", modernCall(9, "Progress_Count", nil, nil), modernHeaders("tools/call", "Progress_Count")},
		{"accept_json_only", legacyCall(obj{"progressToken": "tok"}), map[string]string{"Accept": "application/json"}},
		{"no_accept", legacyCall(obj{"progressToken": "tok"}), map[string]string{"Accept": ""}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			a := post(t, url, tc.body, tc.hdr)
			assert.JSONEq(t, `{"result":"done"}`, string(decodeCall(t, a.result(t)).StructuredContent), "a plain JSON answer")
		})
	}
	t.Run("not_for_other_methods", func(t *testing.T) {
		t.Parallel()
		a := post(t, url, request(1, "tools/list", obj{"_meta": obj{"progressToken": "tok"}}), nil)
		assert.Contains(t, object(t, a.result(t)), "tools")
	})
}

func TestProgressRules(t *testing.T) {
	t.Parallel()
	reg := otc.NewRegistry(&otc.RegistryOptions{Logger: slog.New(slog.DiscardHandler)})
	addTool(t, reg, "Progress.Odd", func(ctx context.Context, _ struct{}) (string, error) {
		otc.ReportProgress(ctx, 1, 0, "")           // total unknown, no message
		otc.ReportProgress(ctx, 3, 10, "three")     // sent
		otc.ReportProgress(ctx, 2, 10, "backwards") // dropped
		otc.ReportProgress(ctx, 3, 10, "the same")  // dropped: progress must increase
		otc.ReportProgress(ctx, math.NaN(), 10, "nan")
		otc.ReportProgress(ctx, math.Inf(1), 10, "inf")
		otc.ReportProgress(ctx, 4, math.Inf(1), "infinite total")
		otc.ReportProgress(ctx, 4.5, 10, "line\nbreak \"quoted\"")
		return "ok", nil
	})
	url := serve(t, reg, nil)
	a := post(t, url, request(1, "tools/call", callParams("Progress_Odd", nil, obj{"progressToken": 5})), nil)
	ns, resp := splitStream(t, a.events(t))
	require.Nil(t, resp.Error)
	var got []map[string]any
	for _, n := range ns {
		got = append(got, n.Params)
	}
	assert.Equal(t, []map[string]any{
		{"progressToken": float64(5), "progress": float64(1)},
		{"progressToken": float64(5), "progress": float64(3), "total": float64(10), "message": "three"},
		{"progressToken": float64(5), "progress": 4.5, "total": float64(10), "message": "line\nbreak \"quoted\""},
	}, got)
}

// logsOf returns the level and data of each log notification.
func logsOf(t testing.TB, ns []notification) []string {
	t.Helper()
	var out []string
	for _, n := range ns {
		require.Equal(t, "notifications/message", n.Method)
		data, err := json.Marshal(n.Params["data"])
		require.NoError(t, err)
		out = append(out, n.Params["level"].(string)+" "+string(data))
	}
	return out
}

func TestLogsOverSSE(t *testing.T) {
	t.Parallel()
	reg := newRegistry(t)
	all := []string{`debug "debug message"`, `info "info message"`, `notice "notice message"`, `warning "warning message"`, `error {"error":"error message"}`}
	modernLog := func(level string) string {
		meta := obj{}
		if level != "" {
			meta["io.modelcontextprotocol/logLevel"] = level
		}
		return modernCall(1, "Log_Emit", nil, meta)
	}
	legacy := request(1, "tools/call", callParams("Log_Emit", nil, nil))
	for _, tc := range []struct {
		name string
		opts *mcp.Options
		body string
		hdr  map[string]string
		want []string // nil: a plain JSON answer
	}{
		{"modern_no_level", nil, modernLog(""), modernHeaders("tools/call", "Log_Emit"), nil},
		{"modern_debug", nil, modernLog("debug"), modernHeaders("tools/call", "Log_Emit"), all},
		{"modern_warning", nil, modernLog("warning"), modernHeaders("tools/call", "Log_Emit"), all[3:]},
		{"modern_notice", nil, modernLog("notice"), modernHeaders("tools/call", "Log_Emit"), all[2:]},
		{"modern_ignores_options", &mcp.Options{LogLevel: slog.LevelDebug}, modernLog(""), modernHeaders("tools/call", "Log_Emit"), nil},
		{"modern_emergency", nil, modernLog("emergency"), modernHeaders("tools/call", "Log_Emit"), nil},
		{"legacy_default_info", nil, legacy, nil, all[1:]},
		{"legacy_options_warning", &mcp.Options{LogLevel: slog.LevelWarn}, legacy, nil, all[3:]},
		{"legacy_options_debug", &mcp.Options{LogLevel: slog.LevelDebug}, legacy, nil, all},
		{"legacy_options_above_all", &mcp.Options{LogLevel: slog.LevelError + 1}, legacy, nil, nil},
		{"legacy_accept_json_only", nil, legacy, map[string]string{"Accept": "application/json"}, nil},
		{"modern_accept_json_only", nil, modernLog("debug"),
			map[string]string{"MCP-Protocol-Version": mcp.Version20260728, "Mcp-Method": "tools/call", "Mcp-Name": "Log_Emit", "Accept": "application/json"}, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			a := post(t, serve(t, reg, tc.opts), tc.body, tc.hdr)
			if tc.want == nil {
				assert.JSONEq(t, `{"result":"logged"}`, string(decodeCall(t, a.result(t)).StructuredContent), "a plain JSON answer")
				return
			}
			ns, resp := splitStream(t, a.events(t))
			assert.Equal(t, tc.want, logsOf(t, ns))
			require.Nil(t, resp.Error)
			assert.JSONEq(t, `{"result":"logged"}`, string(decodeCall(t, resp.Result).StructuredContent))
		})
	}
}

func TestConcurrentReports(t *testing.T) {
	t.Parallel()
	const workers, each = 8, 10
	reg := otc.NewRegistry(&otc.RegistryOptions{Logger: slog.New(slog.DiscardHandler)})
	addTool(t, reg, "Log.Many", func(ctx context.Context, _ struct{}) (int, error) {
		var wg sync.WaitGroup
		for w := range workers {
			wg.Go(func() {
				for i := range each {
					otc.LogToClient(ctx, slog.LevelInfo, map[string]int{"worker": w, "i": i})
				}
			})
		}
		wg.Wait()
		return workers * each, nil
	})
	url := serve(t, reg, nil)
	a := post(t, url, modernCall(1, "Log_Many", nil, obj{"io.modelcontextprotocol/logLevel": "info", "progressToken": 1}),
		modernHeaders("tools/call", "Log_Many"))
	ns, resp := splitStream(t, a.events(t))
	assert.Len(t, ns, workers*each)
	seen := map[string]bool{}
	for _, l := range logsOf(t, ns) {
		seen[l] = true
	}
	assert.Len(t, seen, workers*each, "each message once, whole")
	require.Nil(t, resp.Error)
}

func TestReportsAfterTimeout(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name   string
		before bool // the tool reports before its timeout too
	}{
		{"stream_started", true},
		{"plain_answer", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			release := make(chan struct{})
			finished := make(chan struct{})
			reg := otc.NewRegistry(&otc.RegistryOptions{Logger: slog.New(slog.DiscardHandler)})
			require.NoError(t, otc.Register(reg, otc.Tool{
				ID: "Slow.Report", Version: "1.0.0", Description: "Reports after its timeout.", Timeout: 300 * time.Millisecond,
			}, func(ctx context.Context, _ struct{}) (string, error) {
				defer close(finished)
				if tc.before {
					otc.ReportProgress(ctx, 1, 3, "before")
				}
				<-ctx.Done()
				<-release
				otc.ReportProgress(ctx, 2, 3, "late")
				otc.LogToClient(ctx, slog.LevelError, "late log")
				return "late", nil
			}))
			url := serve(t, reg, nil)
			client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 1}}
			t.Cleanup(client.CloseIdleConnections)

			body := request(1, "tools/call", callParams("Slow_Report", nil, obj{"progressToken": "p"}))
			req := newPost(t, url, body)
			resp, err := client.Do(req)
			require.NoError(t, err)
			a := answer{status: resp.StatusCode, header: resp.Header}
			a.body = readAll(t, resp)

			var r response
			if a.header.Get("Content-Type") == "text/event-stream" {
				// The timer may fire before the first report on a loaded
				// machine; then the answer is plain JSON.
				var ns []notification
				ns, r = splitStream(t, a.events(t))
				require.Len(t, ns, 1)
				assert.Equal(t, "before", ns[0].Params["message"])
			} else {
				r = a.rpc(t)
			}
			require.Nil(t, r.Error)
			cr := decodeCall(t, r.Result)
			assert.True(t, cr.IsError, "a timeout is a tool error")
			assert.Equal(t, true, errorMeta(t, cr)["can_retry"])

			close(release)
			recvWithin(t, finished, "the tool to return")

			// The connection the late reports would have written to still
			// answers cleanly.
			a = do2(t, client, newPost(t, url, request(2, "ping", nil)))
			assert.Equal(t, `{}`, string(a.result(t)))
		})
	}
}

func readAll(t testing.TB, resp *http.Response) []byte {
	t.Helper()
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	return b
}

// do2 is do with a client of the test's own.
func do2(t testing.TB, c *http.Client, req *http.Request) answer {
	t.Helper()
	resp, err := c.Do(req)
	require.NoError(t, err)
	return answer{status: resp.StatusCode, header: resp.Header, body: readAll(t, resp)}
}

func TestHTTPClientGoneCancelsCall(t *testing.T) {
	t.Parallel()
	started := make(chan struct{})
	ended := make(chan error, 1)
	reg := otc.NewRegistry(&otc.RegistryOptions{Logger: slog.New(slog.DiscardHandler)})
	addTool(t, reg, "Block.Wait", func(ctx context.Context, _ struct{}) (string, error) {
		close(started)
		<-ctx.Done()
		ended <- ctx.Err()
		return "", ctx.Err()
	})
	url := serve(t, reg, nil)
	ctx, cancel := context.WithCancel(t.Context())
	req := newPost(t, url, request(1, "tools/call", callParams("Block_Wait", nil, nil))).WithContext(ctx)
	done := make(chan error, 1)
	go func() {
		resp, err := http.DefaultClient.Do(req)
		if err == nil {
			resp.Body.Close()
		}
		done <- err
	}()
	recvWithin(t, started, "the tool to start")
	cancel()
	assert.ErrorIs(t, recvWithin(t, ended, "the tool's context to end"), context.Canceled)
	assert.Error(t, recvWithin(t, done, "the client to give up"))
}
