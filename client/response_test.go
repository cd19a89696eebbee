package client_test

// Calls against fake servers that answer what the protocol does not
// promise (SPEC §6: "every error response body is JSON" holds for this
// library's handler, not for the proxy in front of someone else's):
// HTML pages, truncated or shapeless JSON, huge bodies, slow answers, and
// connections that drop.

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os/exec"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/otcgo/otc"
	"github.com/otcgo/otc/client"
	"github.com/otcgo/otc/internal/testkit"
	"github.com/otcgo/otc/mcp"
)

// errorKind names which of the documented error types a call returned.
func errorKind(err error) string {
	switch {
	case err == nil:
		return "none"
	case isA[*otc.ToolError](err):
		return "tool"
	case isA[*otc.Error](err):
		return "refused"
	case isA[*client.ResponseError](err):
		return "response"
	}
	return "other"
}

func isA[E error](err error) bool {
	_, ok := errors.AsType[E](err)
	return ok
}

func TestCall_UnexpectedResponses(t *testing.T) {
	t.Parallel()
	const nginx502 = "<html>\r\n<head><title>502 Bad Gateway</title></head>\r\n<body>\r\n<center><h1>502 Bad Gateway</h1></center>\r\n<hr><center>nginx</center>\r\n</body>\r\n</html>\r\n"
	for _, tc := range []struct {
		name        string
		status      int
		contentType string
		body        string
		wantStatus  int
		wantInError []string
	}{
		{"proxy_html_502", 502, "text/html", nginx502, 502, []string{"502", "Bad Gateway", `<html>\r\n<head><title>502 Bad Gateway`, "text/html"}},
		{"html_503", 503, "text/html; charset=utf-8", "<!doctype html><p>Service Unavailable</p>", 503, []string{"503", "<!doctype html>"}},
		{"json_500", 500, "application/json", `{"message":"database down"}`, 500, []string{"500", "database down"}},
		{"json_404", 404, "application/json", `{"message":"No endpoint at '/tools/call'"}`, 404, []string{"404"}},
		{"not_modified_304", 304, "", "", 304, []string{"304"}},
		{"truncated_json_200", 200, "application/json", `{"$schema":"otc://1.0","result":{"call_id":"c1","duration":2,"succ`, 200, []string{"200"}},
		{"json_without_result_200", 200, "application/json", `{"$schema":"otc://1.0","value":15}`, 200, []string{"200", `"result"`}},
		{"result_null_200", 200, "application/json", `{"result":null}`, 200, []string{`"result"`}},
		{"result_without_success_200", 200, "application/json", `{"result":{"call_id":"c1","value":15}}`, 200, []string{`"success"`}},
		{"result_not_object_200", 200, "application/json", `{"result":[1,2]}`, 200, []string{"200"}},
		{"html_200", 200, "text/html", "<html><body>Welcome to nginx!</body></html>", 200, []string{"Welcome to nginx!"}},
		{"html_400", 400, "text/html", "<html><body><h1>400 Bad Request</h1></body></html>", 400, []string{"400", "<h1>400 Bad Request</h1>"}},
		{"json_400_without_message", 400, "application/json", `{"error":"invalid_request","error_description":"bad"}`, 400, []string{`"message"`, "invalid_request"}},
		{"json_422_without_message", 422, "application/json", `{"parameter_errors":{"b":"Must be a number"}}`, 422, []string{`"message"`}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			c := newClient(t, fake(t, tc.status, tc.contentType, tc.body), nil)
			res, err := c.Call(t.Context(), "Calculator.Add@1.0.0", testkit.AddInput{A: 1, B: 2}, nil)
			require.Error(t, err)
			assert.Nil(t, res)
			require.Equal(t, "response", errorKind(err), "%T: %v", err, err)
			re, _ := errors.AsType[*client.ResponseError](err)
			assert.Equal(t, tc.wantStatus, re.StatusCode)
			assert.Equal(t, http.MethodPost, re.Method)
			assert.True(t, strings.HasSuffix(re.URL, "/tools/call"), re.URL)
			assert.Equal(t, tc.contentType, re.ContentType)
			assert.True(t, bytes.HasPrefix([]byte(tc.body), re.Body))

			msg := err.Error()
			assert.Contains(t, msg, "Calculator.Add@1.0.0")
			for _, s := range tc.wantInError {
				assert.Contains(t, msg, s)
			}
		})
	}
}

// TestCall_ProtocolStatusesFromOtherServers: 401 and 413 often come from a
// proxy with a body of its own; they still map to their class (§6). A 400
// or 422 with the protocol's JSON from another server decodes in full.
func TestCall_ProtocolStatusesFromOtherServers(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name        string
		status      int
		contentType string
		body        string
		want        otc.Error
		wantInError []string
	}{
		{
			"text_401", 401, "text/plain; charset=utf-8", "Unauthorized\n",
			otc.Error{Code: otc.CodeUnauthenticated, Message: "Unauthorized"},
			[]string{"401", "Unauthorized"},
		},
		{
			"html_413", 413, "text/html", "<html><head><title>413 Request Entity Too Large</title></head></html>",
			otc.Error{Code: otc.CodeTooLarge, Message: "Request Entity Too Large"},
			[]string{"413", "Request Entity Too Large", "<html><head><title>413"},
		},
		{
			"empty_401", 401, "", "",
			otc.Error{Code: otc.CodeUnauthenticated, Message: "Unauthorized"},
			[]string{"401"},
		},
		{
			"json_422_extra_fields", 422, "application/json",
			`{"$schema":"urn:oxp:1.0","message":"Some input parameters are invalid","code":"E_INPUT","parameter_errors":{"b":"Must be a number","address.zip":"Too short"}}`,
			otc.Error{Code: otc.CodeInvalidInput, Message: "Some input parameters are invalid", ParameterErrors: map[string]string{"b": "Must be a number", "address.zip": "Too short"}},
			[]string{"422", "address.zip: Too short", "b: Must be a number"},
		},
		{
			"json_400_missing_requirements", 400, "application/json",
			`{"$schema":"otc://1.0","message":"Authorization required","developer_message":"no google token","missing_requirements":{"authorization":[{"id":"google","url":"https://auth.example.com/g","check_url":"https://auth.example.com/g/check","x":1}],"user_id":true}}`,
			otc.Error{
				Code: otc.CodeServerError, Message: "Authorization required", DeveloperMessage: "no google token",
				MissingRequirements: &otc.MissingRequirements{
					Authorization: []otc.AuthorizationChallenge{{ID: "google", URL: "https://auth.example.com/g", CheckURL: "https://auth.example.com/g/check"}},
					UserID:        true,
				},
			},
			[]string{"400", "Authorization required", "no google token"},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			c := newClient(t, fake(t, tc.status, tc.contentType, tc.body), nil)
			res, err := c.Call(t.Context(), "Calculator.Add", nil, nil)
			assert.Nil(t, res)
			require.Equal(t, "refused", errorKind(err), "%T: %v", err, err)
			e, _ := errors.AsType[*otc.Error](err)
			assert.Equal(t, tc.want.Code, e.Code)
			assert.Equal(t, tc.want.Message, e.Message)
			if tc.want.DeveloperMessage != "" {
				assert.Equal(t, tc.want.DeveloperMessage, e.DeveloperMessage)
			}
			assert.Equal(t, tc.want.ParameterErrors, e.ParameterErrors)
			assert.Equal(t, tc.want.MissingRequirements, e.MissingRequirements)
			assert.Contains(t, err.Error(), "Calculator.Add")
			for _, s := range tc.wantInError {
				assert.Contains(t, err.Error(), s)
			}
		})
	}
}

// TestCall_ResultShapes reads 200 responses of other servers.
func TestCall_ResultShapes(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name         string
		body         string
		wantValue    string // "" for nil
		wantDuration time.Duration
		wantTool     *otc.ToolError
	}{
		{"seed_success", `{"$schema":"otc://1.0","result":{"call_id":"123e4567-e89b-12d3-a456-426614174000","duration":2,"success":true,"value":15}}`, `15`, 2 * time.Millisecond, nil},
		{"fractional_duration_and_extras", `{"result":{"call_id":"c","duration":0.5,"success":true,"value":{"x":[1,2]},"cost":1},"meta":{}}`, `{"x":[1,2]}`, 500 * time.Microsecond, nil},
		{"no_value", `{"result":{"call_id":"c","duration":1,"success":true}}`, "", time.Millisecond, nil},
		{"negative_duration", `{"result":{"call_id":"c","duration":-5,"success":true,"value":"v"}}`, `"v"`, 0, nil},
		{"huge_duration", `{"result":{"call_id":"c","duration":1e300,"success":true,"value":true}}`, `true`, 0, nil},
		{
			"seed_tool_error",
			`{"$schema":"otc://1.0","result":{"call_id":"c","duration":60,"success":false,"error":{"message":"Doorbell ID not found","developer_message":"The doorbell with ID 'doorbell1' does not exist.","can_retry":true,"additional_prompt_content":"ids: doorbell42,doorbell84","retry_after_ms":500}}}`,
			"", 60 * time.Millisecond,
			&otc.ToolError{Message: "Doorbell ID not found", DeveloperMessage: "The doorbell with ID 'doorbell1' does not exist.", CanRetry: true, AdditionalPromptContent: "ids: doorbell42,doorbell84", RetryAfter: 500 * time.Millisecond},
		},
		{
			"fractional_retry_after",
			`{"result":{"call_id":"c","duration":1,"success":false,"error":{"message":"m","can_retry":true,"retry_after_ms":1.5}}}`,
			"", time.Millisecond,
			&otc.ToolError{Message: "m", CanRetry: true, RetryAfter: 1500 * time.Microsecond},
		},
		{
			"negative_retry_after",
			`{"result":{"call_id":"c","duration":1,"success":false,"error":{"message":"m","retry_after_ms":-10}}}`,
			"", time.Millisecond,
			&otc.ToolError{Message: "m"},
		},
		{
			"failure_without_error_object",
			`{"result":{"call_id":"c","duration":1,"success":false}}`,
			"", time.Millisecond,
			&otc.ToolError{Message: "the tool failed without a message"},
		},
		{
			"failure_with_empty_message",
			`{"result":{"call_id":"c","duration":1,"success":false,"error":{"can_retry":true}}}`,
			"", time.Millisecond,
			&otc.ToolError{Message: "the tool failed without a message", CanRetry: true},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			c := newClient(t, fake(t, 200, "application/json", tc.body), nil)
			res, err := c.Call(t.Context(), "Doorbell.Ring", nil, nil)
			require.NotNil(t, res)
			if tc.wantTool == nil {
				require.NoError(t, err)
			} else {
				te, ok := errors.AsType[*otc.ToolError](err)
				require.True(t, ok, "want a *otc.ToolError, got %T: %v", err, err)
				assert.Equal(t, tc.wantTool, te)
				assert.Contains(t, err.Error(), "Doorbell.Ring")
				assert.Contains(t, err.Error(), tc.wantTool.Message)
			}
			if tc.wantValue == "" {
				assert.Nil(t, res.Value)
			} else {
				assert.JSONEq(t, tc.wantValue, string(res.Value))
			}
			assert.Equal(t, tc.wantDuration, res.Duration)
		})
	}
}

// TestResponseError_QuotesOnlyTheStart: a large error page is quoted in
// part, so that the message stays a log line.
func TestResponseError_QuotesOnlyTheStart(t *testing.T) {
	t.Parallel()
	page := "<html><body>" + strings.Repeat("<p>lorem ipsum</p>", 2000) + "</body></html>"
	c := newClient(t, fake(t, 502, "text/html", page), nil)
	_, err := c.Call(t.Context(), "Calculator.Add", nil, nil)
	re, ok := errors.AsType[*client.ResponseError](err)
	require.True(t, ok, "want a *client.ResponseError, got %T: %v", err, err)
	assert.NotEmpty(t, re.Body)
	assert.Less(t, len(re.Body), 1024, "only the first bytes are kept")
	assert.True(t, strings.HasPrefix(page, string(re.Body)))
	assert.Less(t, len(err.Error()), 2048)
	assert.NotContains(t, err.Error(), "\n", "one line")
}

// countingDoer counts the bytes the client reads from response bodies.
type countingDoer struct {
	next client.Doer
	read atomic.Int64
}

func (d *countingDoer) Do(r *http.Request) (*http.Response, error) {
	resp, err := d.next.Do(r)
	if err == nil {
		resp.Body = &countingBody{ReadCloser: resp.Body, n: &d.read}
	}
	return resp, err
}

type countingBody struct {
	io.ReadCloser
	n *atomic.Int64
}

func (b *countingBody) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	b.n.Add(int64(n))
	return n, err
}

// streamer answers status and then streams size bytes of filler after
// prefix, stopping when the client goes away.
func streamer(status int, prefix string, size int) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(status)
		_, _ = io.WriteString(w, prefix)
		chunk := bytes.Repeat([]byte(" "), 32<<10)
		for sent := 0; sent < size; sent += len(chunk) {
			if _, err := w.Write(chunk); err != nil || r.Context().Err() != nil {
				return
			}
		}
	}
}

// TestCall_ResponseTooLarge: a body over Options.MaxResponseBytes is
// refused, and the client stops reading near the limit.
func TestCall_ResponseTooLarge(t *testing.T) {
	t.Parallel()
	const limit = 64 << 10
	const streamed = 1 << 20 // 16 times the limit

	for _, tc := range []struct {
		name   string
		status int
		prefix string
		list   bool
	}{
		{"call_200", 200, `{"result":{"call_id":"c","success":true,"value":"`, false},
		{"call_502", 502, `<html>`, false},
		{"call_422", 422, `{"message":"Some input parameters are invalid","parameter_errors":{"b":"`, false},
		{"list_200", 200, `{"tools":[`, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			srv := serve(t, streamer(tc.status, tc.prefix, streamed))
			doer := &countingDoer{next: srv.Client()}
			c := newClient(t, srv.URL, &client.Options{HTTPClient: doer, MaxResponseBytes: limit})

			var err error
			if tc.list {
				_, err = c.ListTools(t.Context())
			} else {
				_, err = c.Call(t.Context(), "Calculator.Add", nil, nil)
			}
			require.Error(t, err)
			assert.ErrorIs(t, err, client.ErrResponseTooLarge)
			re, ok := errors.AsType[*client.ResponseError](err)
			require.True(t, ok, "want a *client.ResponseError, got %T: %v", err, err)
			assert.Equal(t, tc.status, re.StatusCode)
			assert.Contains(t, err.Error(), fmt.Sprint(limit))
			assert.True(t, strings.HasPrefix(string(re.Body), tc.prefix), "the start of the body is quoted")

			read := doer.read.Load()
			assert.GreaterOrEqual(t, read, int64(limit))
			assert.LessOrEqual(t, read, int64(limit+4<<10), "the client stops reading near the limit, not at the end of the %d-byte body", streamed)
		})
	}

	t.Run("exactly_at_the_limit", func(t *testing.T) {
		t.Parallel()
		body := `{"result":{"call_id":"c","duration":1,"success":true,"value":7}}`
		padded := body + strings.Repeat(" ", 100)
		srv := fake(t, 200, "application/json", padded)

		c := newClient(t, srv, &client.Options{MaxResponseBytes: int64(len(padded))})
		res, err := c.Call(t.Context(), "Calculator.Add", nil, nil)
		require.NoError(t, err, "a body of exactly MaxResponseBytes is read")
		assert.JSONEq(t, `7`, string(res.Value))

		c = newClient(t, srv, &client.Options{MaxResponseBytes: int64(len(padded) - 1)})
		_, err = c.Call(t.Context(), "Calculator.Add", nil, nil)
		assert.ErrorIs(t, err, client.ErrResponseTooLarge, "one byte over is refused")
	})
}

// blocker is a fake server that never answers until the test ends (or the
// client goes away). headers says whether it sends the status line and the
// start of a body first.
func blocker(t *testing.T, headers bool) string {
	t.Helper()
	release := make(chan struct{})
	srv := serve(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if headers {
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusOK)
			_, _ = io.WriteString(w, `{"$schema":"otc://1.0","result":{`)
			w.(http.Flusher).Flush()
		}
		select {
		case <-release:
		case <-r.Context().Done():
		}
	}))
	t.Cleanup(func() { close(release) }) // runs before serve's srv.Close
	return srv.URL
}

// TestCall_SlowResponse: a response slower than the context's deadline
// ends the call with the context's error, before the headers or in the
// middle of the body.
func TestCall_SlowResponse(t *testing.T) {
	t.Parallel()
	const deadline = 50 * time.Millisecond
	for _, tc := range []struct {
		name    string
		headers bool
		list    bool
	}{
		{"call_before_headers", false, false},
		{"call_during_body", true, false},
		{"list_before_headers", false, true},
		{"list_during_body", true, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			c := newClient(t, blocker(t, tc.headers), &client.Options{Retry: &client.RetryPolicy{}})
			start := time.Now()
			ctx, cancel := context.WithTimeout(t.Context(), deadline)
			defer cancel()
			var err error
			if tc.list {
				_, err = c.ListTools(ctx)
				require.Error(t, err)
				assert.Contains(t, err.Error(), "/tools")
			} else {
				var res *client.Result
				res, err = c.Call(ctx, "Calculator.Add", nil, nil)
				require.Error(t, err)
				assert.Nil(t, res)
				assert.Contains(t, err.Error(), "Calculator.Add")
			}
			assert.ErrorIs(t, err, context.DeadlineExceeded)
			assert.Equal(t, "other", errorKind(err), "a timeout is not a protocol error: %v", err)
			assert.GreaterOrEqual(t, time.Since(start), deadline)
		})
	}
}

// TestCall_TransportErrors: failures below HTTP come back as the HTTP
// client's errors, naming the call.
func TestCall_TransportErrors(t *testing.T) {
	t.Parallel()
	t.Run("connection_refused", func(t *testing.T) {
		t.Parallel()
		srv := serve(t, http.NotFoundHandler())
		url := srv.URL
		srv.Close()
		c := newClient(t, url, nil)
		res, err := c.Call(t.Context(), "Calculator.Add", nil, nil)
		require.Error(t, err)
		assert.Nil(t, res)
		assert.Equal(t, "other", errorKind(err))
		assert.True(t, isA[*net.OpError](err), "the transport's error is wrapped: %v", err)
		assert.Contains(t, err.Error(), "Calculator.Add")
		assert.Contains(t, err.Error(), url)

		_, err = c.ListTools(t.Context())
		require.Error(t, err)
		assert.Contains(t, err.Error(), url+"/tools")
	})
	t.Run("connection_dropped", func(t *testing.T) {
		t.Parallel()
		c := newClient(t, serve(t, dropper()).URL, nil)
		_, err := c.Call(t.Context(), "Calculator.Add", nil, nil)
		require.Error(t, err)
		assert.Equal(t, "other", errorKind(err))
		assert.ErrorIs(t, err, io.EOF)
	})
	t.Run("doer_error", func(t *testing.T) {
		t.Parallel()
		boom := errors.New("proxy refused")
		c := newClient(t, "http://tools.invalid", &client.Options{HTTPClient: doerFunc(func(*http.Request) (*http.Response, error) { return nil, boom })})
		_, err := c.Call(t.Context(), "Calculator.Add", nil, nil)
		assert.ErrorIs(t, err, boom)
	})
}

// dropper reads the request and closes the connection without answering.
func dropper() http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		conn, _, err := http.NewResponseController(w).Hijack()
		if err != nil {
			panic(err)
		}
		_ = conn.Close()
	}
}

type doerFunc func(*http.Request) (*http.Response, error)

func (f doerFunc) Do(r *http.Request) (*http.Response, error) { return f(r) }

// FuzzCall feeds arbitrary responses to Call through an in-memory Doer.
// Whatever the server sends, Call must not panic, and its outcome must be
// one of the documented ones: a Result without error, a Result with a
// *otc.ToolError, or no Result with a *otc.Error or *client.ResponseError.
func FuzzCall(f *testing.F) {
	for _, seed := range []struct {
		status int
		body   string
	}{
		{200, `{"$schema":"otc://1.0","result":{"call_id":"c","duration":2,"success":true,"value":15}}`},
		{200, `{"result":{"call_id":"c","duration":60,"success":false,"error":{"message":"m","can_retry":true,"retry_after_ms":500}}}`},
		{200, `{"result":{"success":false,"error":{"retry_after_ms":1e308}}}`},
		{200, `{"result":{"success":true}}`},
		{200, `{"result":null}`},
		{400, `{"message":"m","missing_requirements":{"secrets":[{"id":"K"}],"user_id":true}}`},
		{401, `Unauthorized`},
		{413, ``},
		{422, `{"message":"m","parameter_errors":{"b":"Must be a number"}}`},
		{502, `<html>`},
	} {
		f.Add(seed.status, []byte(seed.body))
	}
	f.Fuzz(func(t *testing.T, status int, body []byte) {
		if status < 100 || status > 999 {
			return
		}
		c, err := client.New("http://fuzz.invalid", &client.Options{HTTPClient: staticDoer{status: status, body: body}})
		require.NoError(t, err)
		res, err := c.Call(t.Context(), "A.B", nil, nil)
		switch kind := errorKind(err); kind {
		case "none", "tool":
			require.NotNil(t, res, kind)
			require.Equal(t, 200, status)
			if kind == "tool" {
				te, _ := errors.AsType[*otc.ToolError](err)
				require.NotEmpty(t, te.Message)
				require.GreaterOrEqual(t, te.RetryAfter, time.Duration(0))
				require.Nil(t, res.Value)
			}
			if res.Value != nil {
				require.True(t, json.Valid(res.Value), "%q", res.Value)
			}
		case "refused":
			require.Nil(t, res, kind)
			require.Contains(t, []int{400, 401, 403, 413, 422, 429, 503}, status)
		case "response":
			require.Nil(t, res, kind)
		default:
			t.Fatalf("undocumented error %T: %v", err, err)
		}
	})
}

// TestWrongBaseURL: a base URL that no OTC handler is mounted at (a mux's
// root, an MCP endpoint) fails with a *ResponseError whose message says
// which URL to give, over real HTTP; the right one works.
func TestWrongBaseURL(t *testing.T) {
	t.Parallel()
	reg := otc.NewRegistry(nil)
	require.NoError(t, otc.Register(reg, otc.Tool{ID: "Calculator.Add", Version: "1.0.0", Description: "Adds."},
		func(_ context.Context, in struct {
			A float64 `json:"a" jsonschema:"description=A."`
		}) (float64, error) {
			return in.A, nil
		}))
	mux := http.NewServeMux()
	mux.Handle("/otc/", http.StripPrefix("/otc", otc.NewHandler(reg, nil)))
	mux.Handle("/mcp", mcp.NewHandler(reg, nil))
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)

	for _, base := range []string{srv.URL, srv.URL + "/mcp"} {
		c, err := client.New(base, nil)
		require.NoError(t, err)
		_, err = c.ListTools(t.Context())
		re, ok := errors.AsType[*client.ResponseError](err)
		require.True(t, ok, "%s: want a *client.ResponseError, got %T: %v", base, err, err)
		assert.Equal(t, http.StatusNotFound, re.StatusCode)
		assert.Contains(t, err.Error(), "use the URL its OTC handler is mounted at (an otc server's /otc)", base)
		_, err = c.Call(t.Context(), "Calculator.Add", json.RawMessage(`{"a":1}`), nil)
		assert.Contains(t, err.Error(), "use the URL its OTC handler is mounted at", base)
	}
	// Each format's hint names its own place, once.
	for f, want := range map[client.Format]string{
		client.FormatMCP:  "no MCP server answers at this URL: use its MCP endpoint (an otc server's /mcp)",
		client.FormatREST: "no REST tool view is mounted at this URL",
		client.FormatA2A:  "no A2A agent answers at this URL",
	} {
		c, err := client.New(srv.URL+"/nothing", &client.Options{Format: f})
		require.NoError(t, err)
		_, err = c.ListTools(t.Context())
		require.Error(t, err, f)
		assert.Contains(t, err.Error(), want, f)
		assert.Equal(t, 1, strings.Count(err.Error(), want), "%s: said once: %v", f, err)
		assert.NotContains(t, err.Error(), "OTC handler", f)
	}
	c, err := client.New(srv.URL+"/otc", nil)
	require.NoError(t, err)
	defs, err := c.ListTools(t.Context())
	require.NoError(t, err)
	assert.Len(t, defs, 1)
}

// TestMCP_AnswerToAnotherRequest: an MCP server over HTTP whose JSON
// answer carries another request's id is refused, as over a stream or
// stdio, rather than taken as this request's answer; an error about a
// request that could not be read (id null) is taken.
func TestMCP_AnswerToAnotherRequest(t *testing.T) {
	t.Parallel()
	var listID atomic.Value
	listID.Store(`999`)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var req struct {
			ID     json.RawMessage `json:"id"`
			Method string          `json:"method"`
		}
		_ = json.NewDecoder(r.Body).Decode(&req)
		w.Header().Set("Content-Type", "application/json")
		switch req.Method {
		case "initialize":
			fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%s,"result":{"protocolVersion":"2025-11-25","capabilities":{"tools":{}},"serverInfo":{"name":"odd","version":"1"}}}`, req.ID)
		case "tools/list":
			fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%s,"result":{"tools":[{"name":"stolen","inputSchema":{"type":"object"}}]}}`, listID.Load())
		case "tools/call":
			fmt.Fprint(w, `{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"Parse error"}}`)
		default:
			w.WriteHeader(http.StatusAccepted)
		}
	}))
	t.Cleanup(srv.Close)
	c, err := client.New(srv.URL, &client.Options{Format: client.FormatMCP, MCPVersion: "2025-11-25"})
	require.NoError(t, err)
	_, err = c.ListTools(t.Context())
	require.Error(t, err)
	assert.Contains(t, err.Error(), "the answer is to request 999, not to this one")
	assert.Equal(t, "response", errorKind(err))

	listID.Store(`null`)
	_, err = c.ListTools(t.Context())
	assert.ErrorContains(t, err, "not to this one", "a result without an id is no answer either")
	_, err = c.Call(t.Context(), "anything", nil, nil)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "Parse error", "an error with id null is the answer to a request that could not be read")
}

// TestMCP_Silence: a server that never answers the handshake (a process
// that reads its input and writes nothing; an HTTP server that holds the
// request) fails the first request after HandshakeTimeout, saying so;
// one that answers a call with a stream of comments and nothing else
// fails it after IdleTimeout, whatever the trickle.
func TestMCP_Silence(t *testing.T) {
	t.Parallel()
	silent, err := client.NewStdio(exec.Command("sh", "-c", "cat >/dev/null"), &client.Options{HandshakeTimeout: 200 * time.Millisecond})
	require.NoError(t, err)
	t.Cleanup(func() { _ = silent.Close() })
	start := time.Now()
	_, err = silent.ListTools(t.Context())
	require.Error(t, err)
	assert.Contains(t, err.Error(), "did not answer the MCP handshake within 200ms (Options.HandshakeTimeout)")
	assert.ErrorIs(t, err, context.DeadlineExceeded)
	assert.GreaterOrEqual(t, time.Since(start), 200*time.Millisecond)

	held := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		<-r.Context().Done()
	}))
	t.Cleanup(held.Close)
	c, err := client.New(held.URL, &client.Options{Format: client.FormatMCP, HandshakeTimeout: 200 * time.Millisecond})
	require.NoError(t, err)
	_, err = c.ListTools(t.Context())
	assert.ErrorContains(t, err, "did not answer the MCP handshake within 200ms")

	trickle := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var req struct {
			ID     json.RawMessage `json:"id"`
			Method string          `json:"method"`
		}
		_ = json.NewDecoder(r.Body).Decode(&req)
		switch req.Method {
		case "initialize":
			w.Header().Set("Content-Type", "application/json")
			fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%s,"result":{"protocolVersion":"2025-11-25","capabilities":{"tools":{}},"serverInfo":{"name":"trickle","version":"1"}}}`, req.ID)
		case "tools/call":
			w.Header().Set("Content-Type", "text/event-stream")
			tick := time.NewTicker(20 * time.Millisecond)
			defer tick.Stop()
			for {
				select {
				case <-r.Context().Done():
					return
				case <-tick.C:
					fmt.Fprint(w, ": still here\n\n")
					w.(http.Flusher).Flush()
				}
			}
		default:
			w.WriteHeader(http.StatusAccepted)
		}
	}))
	t.Cleanup(trickle.Close)
	c, err = client.New(trickle.URL, &client.Options{Format: client.FormatMCP, MCPVersion: "2025-11-25", IdleTimeout: 300 * time.Millisecond})
	require.NoError(t, err)
	_, err = c.Call(t.Context(), "slow", nil, nil)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "sent nothing for 300ms (Options.IdleTimeout)")
}
