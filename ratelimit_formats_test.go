package otc_test

// The rate limits of package ratelimit on every wire format: a caller over
// its limit is refused in each format's shape, with the delay to wait.

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/otcgo/otc"
	"github.com/otcgo/otc/internal/testkit"
	"github.com/otcgo/otc/mcp"
	"github.com/otcgo/otc/mount"
	"github.com/otcgo/otc/ratelimit"
)

// TestRateLimitFormats: with a limit of one call, a caller's second call
// is refused: 429 with Retry-After over OTC and the REST view (in each
// one's error shape), a tool error the model may retry after the delay
// over MCP, a failed task saying so over A2A; the call is counted as
// rate_limited, and another tool without a limit of its own still runs.
func TestRateLimitFormats(t *testing.T) {
	for _, format := range []string{"otc", "rest", "mcp", "a2a"} {
		t.Run(format, func(t *testing.T) {
			var mu sync.Mutex
			var outcomes []otc.Outcome
			record := func(next otc.CallFunc) otc.CallFunc {
				return func(ctx context.Context, call *otc.Call) (otc.CallResult, error) {
					res, err := next(ctx, call)
					mu.Lock()
					outcomes = append(outcomes, otc.OutcomeOf(res, err))
					mu.Unlock()
					return res, err
				}
			}
			limit, err := ratelimit.New(&ratelimit.Options{Tools: map[string]ratelimit.Limit{"Calculator.Add": {Rate: 0.01}, "Job.Task": {Rate: 0.01}}})
			require.NoError(t, err)
			reg := testkit.NewAddRegistry(t, record, limit)
			require.NoError(t, otc.Register(reg, testkit.AddTool("Calculator.Sum", "1.0.0"), testkit.Add))
			task := testkit.AddTool("Job.Task", "1.0.0")
			task.Tasks = otc.TasksOptional
			require.NoError(t, otc.Register(reg, task, testkit.Add))
			mux := http.NewServeMux()
			mount.All(mux, reg, nil)
			srv := httptest.NewServer(mux)
			t.Cleanup(srv.Close)

			call := func(tool string) (*http.Response, []byte) {
				var path, body string
				header := map[string]string{"Content-Type": "application/json"}
				name := strings.ReplaceAll(tool, ".", "_")
				switch format {
				case "otc":
					path, body = "/otc/tools/call", `{"request":{"tool_id":"`+tool+`","input":{"a":1,"b":2}}}`
				case "rest":
					path, body = "/v1/tools/"+name+":invoke", `{"schema_version":"0.1.0","args":{"a":1,"b":2}}`
				case "mcp":
					path, body = "/mcp", `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"`+name+`","arguments":{"a":1,"b":2}}}`
					header["Accept"] = "application/json, text/event-stream"
					header["MCP-Protocol-Version"] = "2025-11-25"
				case "a2a":
					path, body = "/a2a", `{"jsonrpc":"2.0","id":1,"method":"SendMessage","params":{"message":{"messageId":"`+otc.NewCallID()+`","role":"ROLE_USER","parts":[{"data":{"tool":"`+name+`","input":{"a":1,"b":2}}}]}}}`
					header["A2A-Version"] = "1.0"
				}
				req, err := http.NewRequest(http.MethodPost, srv.URL+path, strings.NewReader(body))
				require.NoError(t, err)
				for k, v := range header {
					req.Header.Set(k, v)
				}
				resp, err := http.DefaultClient.Do(req)
				require.NoError(t, err)
				defer resp.Body.Close()
				b, err := io.ReadAll(resp.Body)
				require.NoError(t, err)
				return resp, b
			}

			resp, body := call("Calculator.Add")
			require.Equal(t, http.StatusOK, resp.StatusCode, "%s", body)
			resp, body = call("Calculator.Add")
			switch format {
			case "otc", "rest":
				assert.Equal(t, http.StatusTooManyRequests, resp.StatusCode, "%s", body)
				after, err := strconv.Atoi(resp.Header.Get("Retry-After"))
				require.NoError(t, err, "Retry-After %q", resp.Header.Get("Retry-After"))
				assert.Greater(t, after, 90, "about 100 s: one call each 100 s")
				type errorBody struct {
					Message   string `json:"message"`
					Code      string `json:"code"`
					Retryable bool   `json:"retryable"`
					Details   struct {
						RetryAfterMS int64 `json:"retry_after_ms"`
					} `json:"details"`
				}
				var e errorBody
				if format == "rest" { // {"ok": false, "error": {...}}
					var wrapped struct{ Error errorBody }
					require.NoError(t, json.Unmarshal(body, &wrapped), "%s", body)
					e = wrapped.Error
				} else {
					require.NoError(t, json.Unmarshal(body, &e), "%s", body)
				}
				assert.Contains(t, e.Message, "Too many calls")
				assert.Contains(t, e.Message, "calls of Calculator.Add")
				if format == "rest" {
					assert.Equal(t, "request.rate_limited", e.Code)
					assert.True(t, e.Retryable)
					assert.Greater(t, e.Details.RetryAfterMS, int64(90_000))
				}
			case "mcp":
				require.Equal(t, http.StatusOK, resp.StatusCode, "%s", body)
				var r struct {
					Result struct {
						IsError bool `json:"isError"`
						Content []struct {
							Text string `json:"text"`
						} `json:"content"`
						Meta map[string]struct {
							Code         string `json:"code"`
							CanRetry     bool   `json:"can_retry"`
							RetryAfterMS int64  `json:"retry_after_ms"`
						} `json:"_meta"`
					} `json:"result"`
				}
				require.NoError(t, json.Unmarshal(body, &r), "%s", body)
				assert.True(t, r.Result.IsError)
				meta := r.Result.Meta[mcp.MetaError]
				assert.Equal(t, "rate_limited", meta.Code)
				assert.True(t, meta.CanRetry)
				assert.Greater(t, meta.RetryAfterMS, int64(90_000))
				require.NotEmpty(t, r.Result.Content)
				assert.Contains(t, r.Result.Content[0].Text, "Too many calls")
				assert.Contains(t, r.Result.Content[0].Text, "may succeed if tried again after")
			case "a2a":
				require.Equal(t, http.StatusOK, resp.StatusCode, "%s", body)
				assert.Contains(t, string(body), `"io.github.otcgo/outcome":"failed"`)
				assert.Contains(t, string(body), `"code":"rate_limited"`)
				assert.Contains(t, string(body), `"can_retry":true`)
				assert.Contains(t, string(body), "Too many calls")
			}
			if format == "a2a" {
				// A call of a tool that runs as a task is refused before its
				// task is kept, and answered as any call is.
				a2aTask(t, srv.URL)
			}
			resp, body = call("Calculator.Sum")
			assert.Equal(t, http.StatusOK, resp.StatusCode, "a tool without a limit runs: %s", body)
			if format != "mcp" && format != "a2a" {
				assert.NotContains(t, string(body), "Too many")
			}
			mu.Lock()
			defer mu.Unlock()
			want := []otc.Outcome{otc.OutcomeSuccess, otc.OutcomeRateLimited, otc.OutcomeSuccess}
			if format == "a2a" { // and the task's two calls
				want = []otc.Outcome{otc.OutcomeSuccess, otc.OutcomeRateLimited, otc.OutcomeSuccess, otc.OutcomeRateLimited, otc.OutcomeSuccess}
			}
			assert.Equal(t, want, outcomes)
		})
	}
}

// a2aTask calls Job.Task, whose calls run as tasks and which is limited
// to one call, twice over A2A: the second call is refused before its task
// is kept, and answered by a message saying when to try again.
func a2aTask(t *testing.T, base string) {
	t.Helper()
	send := func() string {
		body := `{"jsonrpc":"2.0","id":1,"method":"SendMessage","params":{"message":{"messageId":"` + otc.NewCallID() + `","role":"ROLE_USER","parts":[{"data":{"tool":"Job_Task","input":{"a":1,"b":2}}}]}}}`
		req, err := http.NewRequest(http.MethodPost, base+"/a2a", strings.NewReader(body))
		require.NoError(t, err)
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("A2A-Version", "1.0")
		resp, err := http.DefaultClient.Do(req)
		require.NoError(t, err)
		defer resp.Body.Close()
		b, err := io.ReadAll(resp.Body)
		require.NoError(t, err)
		return string(b)
	}
	first := send()
	assert.Contains(t, first, `"TASK_STATE_COMPLETED"`, first)
	second := send()
	assert.NotContains(t, second, `"TASK_STATE`, second)
	assert.Contains(t, second, `"io.github.otcgo/outcome":"failed"`, second)
	assert.Contains(t, second, `"code":"rate_limited"`, second)
	assert.Contains(t, second, `"can_retry":true`, second)
}
