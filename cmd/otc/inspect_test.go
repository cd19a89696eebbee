package main

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/otcgo/otc"
	"github.com/otcgo/otc/mcp"
	"github.com/otcgo/otc/search"
)

// pageLine is the line otc inspect prints, as checks outside the
// repository read it.
var pageLine = regexp.MustCompile(`^http://127\.0\.0\.1:[0-9]+/\?token=[A-Za-z0-9_-]{32}$`)

// startInspect runs "otc inspect" with args until the test ends and
// returns the URL it printed.
func startInspect(t *testing.T, env map[string]string, args ...string) string {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	r, w := io.Pipe()
	done := make(chan int, 1)
	go func() {
		done <- run(ctx, append([]string{"inspect", "--no-open"}, args...), strings.NewReader(""), w, io.Discard, func(k string) string { return env[k] })
		w.Close()
	}()
	t.Cleanup(func() {
		cancel()
		select {
		case code := <-done:
			assert.Equal(t, exitOK, code, "otc inspect stops cleanly on interrupt")
		case <-time.After(5 * time.Second):
			t.Error("otc inspect did not stop")
		}
	})
	line, err := bufio.NewReader(r).ReadString('\n')
	require.NoError(t, err)
	go func() { _, _ = io.Copy(io.Discard, r) }()
	line = strings.TrimSuffix(line, "\n")
	require.Regexp(t, pageLine, line, "the URL, on a line of its own")
	return line
}

// inspectAPI is the page's side of the inspector: its base and token.
type inspectAPI struct {
	base, token string
}

func newInspectAPI(t *testing.T, page string) inspectAPI {
	base, token, ok := strings.Cut(page, "/?token=")
	require.True(t, ok)
	return inspectAPI{base, token}
}

// do sends a request as the page does (the token in its header), with
// the changes of edit.
func (a inspectAPI) do(t *testing.T, method, path, body string, edit func(*http.Request)) (*http.Response, string) {
	t.Helper()
	req, err := http.NewRequest(method, a.base+path, strings.NewReader(body))
	require.NoError(t, err)
	req.Header.Set(inspectHeaderToken, a.token)
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	if edit != nil {
		edit(req)
	}
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	return resp, string(b)
}

// callEvents posts a call and returns the events of its answer, the
// notifications first and the result last.
func (a inspectAPI) callEvents(t *testing.T, body string) (notifications []json.RawMessage, result callOutcome) {
	t.Helper()
	resp, text := a.do(t, http.MethodPost, "/api/call", body, nil)
	require.Equal(t, http.StatusOK, resp.StatusCode, text)
	require.Equal(t, "text/event-stream", resp.Header.Get("Content-Type"))
	var sawResult bool
	for _, ev := range strings.Split(strings.TrimSpace(text), "\n\n") {
		name, data, ok := strings.Cut(ev, "\ndata: ")
		require.True(t, ok, ev)
		switch strings.TrimPrefix(name, "event: ") {
		case "notification":
			notifications = append(notifications, json.RawMessage(data))
		case "result":
			require.NoError(t, json.Unmarshal([]byte(data), &result))
			sawResult = true
		}
	}
	require.True(t, sawResult, text)
	return notifications, result
}

func TestInspect_Refusals(t *testing.T) {
	url := serveTools(t, "")
	page := startInspect(t, nil, url)
	a := newInspectAPI(t, page)
	port := strings.TrimPrefix(a.base, "http://127.0.0.1:")
	for _, c := range []struct {
		name         string
		method, path string
		body         string
		edit         func(*http.Request)
		status       int
		message      string
	}{
		{"no_token", "GET", "/api/info", "", func(r *http.Request) { r.Header.Del(inspectHeaderToken) }, 401, "missing or wrong token"},
		{"no_token_page", "GET", "/", "", func(r *http.Request) { r.Header.Del(inspectHeaderToken) }, 401, "missing or wrong token"},
		{"wrong_token", "GET", "/api/info", "", func(r *http.Request) { r.Header.Set(inspectHeaderToken, otherLast(a.token)) }, 401, "missing or wrong token"},
		{"wrong_token_query", "GET", "/?token=" + strings.ToUpper(a.token), "", func(r *http.Request) { r.Header.Del(inspectHeaderToken) }, 401, "missing or wrong token"},
		{"foreign_origin", "GET", "/api/info", "", func(r *http.Request) { r.Header.Set("Origin", "http://evil.example") }, 403, `requests from origin "http://evil.example" are refused`},
		{"null_origin", "POST", "/api/call", `{"server":"otc","tool":"Calculator.Add"}`, func(r *http.Request) { r.Header.Set("Origin", "null") }, 403, `requests from origin "null" are refused`},
		{"other_port_origin", "GET", "/api/info", "", func(r *http.Request) { r.Header.Set("Origin", "http://127.0.0.1:1") }, 403, "requests from origin"},
		{"cross_site", "GET", "/api/info", "", func(r *http.Request) { r.Header.Set("Sec-Fetch-Site", "cross-site") }, 403, "cross-site requests are refused"},
		{"rebound_host", "GET", "/api/info", "", func(r *http.Request) { r.Host = "attacker.example:" + port }, 421, `answers to Host 127.0.0.1 only, not "attacker.example:` + port + `"`},
		{"host_other_port", "GET", "/api/info", "", func(r *http.Request) { r.Host = "127.0.0.1:1" }, 421, "answers to Host 127.0.0.1 only"},
		{"unknown_path", "GET", "/api/nope", "", nil, 404, "no such page: /api/nope"},
		{"call_by_get", "GET", "/api/call", "", nil, 405, "GET /api/call: only POST"},
		{"info_by_post", "POST", "/api/info", "{}", nil, 405, "POST /api/info: only GET"},
		{"not_json", "POST", "/api/call", `{}`, func(r *http.Request) { r.Header.Set("Content-Type", "text/plain") }, 415, "the body must be JSON"},
		{"too_large", "POST", "/api/call", `{"server":"otc","tool":"Calculator.Add","input":{"a":"` + strings.Repeat("x", maxInspectBody) + `"}}`, nil, 413, "larger than 1048576 bytes"},
		{"not_a_call", "POST", "/api/call", `[1]`, nil, 400, "the request body is not a call"},
		// The page cannot name an address to proxy to: only the servers
		// of the command line, by kind.
		{"url_as_server", "POST", "/api/call", `{"server":"http://evil.example","tool":"Calculator.Add"}`, nil, 400, `server "http://evil.example" is not one this inspector was started with`},
		{"url_field", "POST", "/api/call", `{"server":"otc","url":"http://evil.example","tool":"Calculator.Add"}`, nil, 400, `unknown field "url"`},
		{"unstarted_kind", "POST", "/api/call", `{"server":"mcp","tool":"Calculator_Add"}`, nil, 400, `server "mcp" is not one this inspector was started with`},
		{"tools_of_unstarted_kind", "GET", "/api/tools?server=rest", "", nil, 400, `server "rest" is not one`},
		{"no_tool", "POST", "/api/call", `{"server":"otc"}`, nil, 400, "the call names no tool"},
	} {
		t.Run(c.name, func(t *testing.T) {
			resp, body := a.do(t, c.method, c.path, c.body, c.edit)
			assert.Equal(t, c.status, resp.StatusCode)
			assert.Equal(t, "text/plain; charset=utf-8", resp.Header.Get("Content-Type"))
			assert.Equal(t, "nosniff", resp.Header.Get("X-Content-Type-Options"))
			assert.True(t, strings.HasPrefix(body, "otc inspect: "), body)
			assert.Contains(t, body, c.message)
		})
	}
}

// otherLast returns tok with its last character changed, so that it is
// never the token itself (whatever that character was).
func otherLast(tok string) string {
	last := "x"
	if strings.HasSuffix(tok, "x") {
		last = "y"
	}
	return tok[:len(tok)-1] + last
}

func TestInspect_Usage(t *testing.T) {
	for _, c := range []struct {
		name    string
		args    []string
		message string
	}{
		{"no_server", []string{"inspect"}, "want the URL of a tool server"},
		{"two_urls", []string{"inspect", "http://a", "http://b"}, "want the URL of a tool server"},
		{"public_addr", []string{"inspect", "http://127.0.0.1:1", "--addr", "0.0.0.0:0"}, "served on 127.0.0.1 only"},
		{"other_host_addr", []string{"inspect", "http://127.0.0.1:1", "--addr", "192.168.1.1:8000"}, "served on 127.0.0.1 only"},
		{"not_http", []string{"inspect", "--mcp", "file:///etc/passwd"}, "is not an http:// or https:// URL"},
		{"jwt_without_otc", []string{"inspect", "--mcp", "http://127.0.0.1:1/mcp", "--jwt-secret", "s"}, "--jwt-secret is for OTC servers"},
	} {
		t.Run(c.name, func(t *testing.T) {
			code, _, errOut := otcRun(t, "", "", nil, c.args...)
			assert.Equal(t, exitBadInput, code)
			assert.Contains(t, errOut, c.message)
		})
	}
}

func TestInspect_PageAndInfo(t *testing.T) {
	url := serveTools(t, "k3y")
	page := startInspect(t, map[string]string{"OTC_API_KEY": "k3y"}, url, "--mcp", url+"/mcp", "--rest", url+"/v1")
	a := newInspectAPI(t, page)

	resp, err := http.Get(page)
	require.NoError(t, err)
	html, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	assert.Equal(t, http.StatusOK, resp.StatusCode)
	assert.Equal(t, "text/html; charset=utf-8", resp.Header.Get("Content-Type"))
	csp := resp.Header.Get("Content-Security-Policy")
	assert.Contains(t, csp, "connect-src 'self'")
	assert.Contains(t, csp, "default-src 'none'")
	assert.NotContains(t, csp, "unsafe-inline", "the inline script and style are allowed by their hashes only")
	assert.Regexp(t, `script-src 'sha256-[A-Za-z0-9+/]+=*';`, csp)
	assert.Equal(t, "no-referrer", resp.Header.Get("Referrer-Policy"))
	assert.Equal(t, "DENY", resp.Header.Get("X-Frame-Options"))
	assert.Contains(t, string(html), "<title>otc inspect</title>")
	assert.NotContains(t, string(html), "/*INSPECT_", "the style and script are inlined")
	assert.NotContains(t, string(html), "k3y")
	assert.NotRegexp(t, `(src|href)="(https?:)?//`, string(html), "nothing is loaded from elsewhere")

	resp, body := a.do(t, "GET", "/api/info", "", nil)
	assert.Equal(t, http.StatusOK, resp.StatusCode)
	assert.JSONEq(t, `{"servers":[{"kind":"otc","url":"`+url+`"},{"kind":"mcp","url":"`+url+`/mcp"},{"kind":"rest","url":"`+url+`/v1"}],
		"credentials":{"api_key":true,"bearer":false,"jwt":false}}`, body)
}

func TestInspect_Tools(t *testing.T) {
	url := serveTools(t, "k3y")
	a := newInspectAPI(t, startInspect(t, nil, url, "--api-key", "k3y", "--mcp", url+"/mcp", "--rest", url+"/v1"))
	for _, kind := range []string{"otc", "mcp", "rest"} {
		t.Run(kind, func(t *testing.T) {
			resp, body := a.do(t, "GET", "/api/tools?server="+kind, "", nil)
			require.Equal(t, http.StatusOK, resp.StatusCode, body)
			var got struct{ Tools []inspectTool }
			require.NoError(t, json.Unmarshal([]byte(body), &got))
			require.Len(t, got.Tools, 4)
			byName := map[string]inspectTool{}
			for _, tool := range got.Tools {
				byName[tool.Name] = tool
			}
			add := byName["Calculator_Add"]
			assert.Equal(t, "Calculator", add.Toolkit)
			assert.Contains(t, string(add.InputSchema), `"b"`)
			switch kind {
			case "otc":
				assert.Equal(t, "Calculator.Add@1.0.0", add.Call)
				assert.Equal(t, "1.0.0", add.Version)
				assert.Equal(t, "SIGNING_KEY", byName["Signer_Sign"].Requirements.Secrets[0].ID)
			case "mcp":
				assert.Equal(t, "Calculator_Add", add.Call)
			case "rest":
				assert.Equal(t, "Calculator_Add", add.Call)
				assert.Equal(t, "1.0.0", add.Version, "the REST definitions are fetched")
			}
		})
	}

	t.Run("refused_upstream", func(t *testing.T) {
		b := newInspectAPI(t, startInspect(t, nil, url))
		resp, body := b.do(t, "GET", "/api/tools?server=otc", "", nil)
		assert.Equal(t, http.StatusBadGateway, resp.StatusCode)
		var got struct {
			Error callFailure
		}
		require.NoError(t, json.Unmarshal([]byte(body), &got))
		assert.Equal(t, otc.CodeUnauthenticated.String(), got.Error.Code)
		assert.Equal(t, http.StatusUnauthorized, got.Error.Status)
	})
}

func TestInspect_Call(t *testing.T) {
	url := serveTools(t, "k3y")
	a := newInspectAPI(t, startInspect(t, map[string]string{"OTC_API_KEY": "k3y"}, url, "--mcp", url+"/mcp", "--rest", url+"/v1"))

	for _, kind := range []string{"otc", "mcp", "rest"} {
		tool := map[string]string{"otc": "Calculator.Add", "mcp": "Calculator_Add", "rest": "Calculator_Add"}[kind]
		t.Run(kind+"_value", func(t *testing.T) {
			_, res := a.callEvents(t, `{"server":"`+kind+`","tool":"`+tool+`","input":{"a":10,"b":5},"call_id":"c-1"}`)
			assert.True(t, res.OK)
			assert.JSONEq(t, `15`, string(res.Value))
			assert.Equal(t, "c-1", res.CallID)
			assert.Equal(t, kind, res.Server)
			assert.Positive(t, res.DurationMS)
			require.NotEmpty(t, res.Exchanges)
			last := res.Exchanges[len(res.Exchanges)-1]
			assert.Equal(t, http.StatusOK, last.Status)
			assert.Equal(t, redactedCredential, last.Header["Oxp-Api-Key"], "the credential is added, and not shown")
			b, _ := json.Marshal(res)
			assert.NotContains(t, string(b), "k3y")
		})
		t.Run(kind+"_parameter_error", func(t *testing.T) {
			_, res := a.callEvents(t, `{"server":"`+kind+`","tool":"`+tool+`","input":{"a":1,"b":"infinity"}}`)
			assert.False(t, res.OK)
			require.NotNil(t, res.Error)
			assert.Equal(t, "invalid_input", res.Error.Code)
			assert.Contains(t, res.Error.ParameterErrors, "b")
			// The status is the wire format's: 422 over OTC, 400 from the
			// REST view, 200 over MCP (an isError result).
			assert.Equal(t, map[string]int{"otc": 422, "rest": 400, "mcp": 200}[kind], res.Error.Status)
		})
	}

	t.Run("tool_error", func(t *testing.T) {
		_, res := a.callEvents(t, `{"server":"otc","tool":"Doorbell.Ring","input":{}}`)
		require.NotNil(t, res.ToolError)
		assert.Equal(t, toolFailure{Message: "Doorbell not found", CanRetry: true, RetryAfterMS: 500, AdditionalPromptContent: "ids: d1, d2"}, *res.ToolError)
	})
	t.Run("missing_secret", func(t *testing.T) {
		_, res := a.callEvents(t, `{"server":"otc","tool":"Signer.Sign","input":{"message":"hi"},"user_id":"u1"}`)
		require.NotNil(t, res.Error)
		require.NotNil(t, res.Error.MissingRequirements)
		assert.Equal(t, "SIGNING_KEY", res.Error.MissingRequirements.Secrets[0].ID)
	})
	t.Run("secret", func(t *testing.T) {
		_, res := a.callEvents(t, `{"server":"otc","tool":"Signer.Sign","input":{"message":"hi"},"user_id":"u1","secrets":[{"id":"SIGNING_KEY","value":"s3cret"}]}`)
		require.True(t, res.OK, "%+v", res.Error)
		assert.JSONEq(t, `"s3cret:hi:u1"`, string(res.Value))
		req := res.Exchanges[len(res.Exchanges)-1].Body
		assert.NotContains(t, req, "s3cret", "the raw request shows no secret")
		assert.Contains(t, req, `"value":"(secret)"`)
	})
	t.Run("unreachable", func(t *testing.T) {
		b := newInspectAPI(t, startInspect(t, nil, "http://127.0.0.1:1"))
		_, res := b.callEvents(t, `{"server":"otc","tool":"Calculator.Add","input":{}}`)
		require.NotNil(t, res.Error)
		assert.Equal(t, "transport", res.Error.Code)
		assert.Contains(t, res.Error.Message, "connection refused")
	})
}

// TestInspect_MCPProgress: the notifications of an MCP call come as
// events while it runs, before its result.
func TestInspect_MCPProgress(t *testing.T) {
	reg := otc.NewRegistry(nil)
	release := make(chan struct{})
	require.NoError(t, otc.Register(reg, otc.Tool{ID: "Timer.Wait", Version: "1.0.0", Description: "Waits."},
		func(ctx context.Context, in struct {
			Steps int `json:"steps" jsonschema:"description=How many steps."`
		}) (int, error) {
			otc.LogToClient(ctx, slog.LevelWarn, "starting")
			for i := range in.Steps {
				otc.ReportProgress(ctx, float64(i+1), float64(in.Steps), "step")
			}
			<-release
			return in.Steps, nil
		}))
	srv := httptest.NewServer(mcp.NewHandler(reg, nil))
	t.Cleanup(srv.Close)
	a := newInspectAPI(t, startInspect(t, nil, "--mcp", srv.URL))

	req, err := http.NewRequest(http.MethodPost, a.base+"/api/call", strings.NewReader(`{"server":"mcp","tool":"Timer_Wait","input":{"steps":3}}`))
	require.NoError(t, err)
	req.Header.Set(inspectHeaderToken, a.token)
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	sc := bufio.NewScanner(resp.Body)
	var progress, logs []string
	for sc.Scan() && len(progress) < 3 {
		d, ok := strings.CutPrefix(sc.Text(), "data: ")
		switch {
		case ok && strings.Contains(d, "notifications/progress"):
			progress = append(progress, d)
		case ok && strings.Contains(d, "notifications/message"):
			logs = append(logs, d)
		}
	}
	require.Len(t, progress, 3, "the progress arrives while the tool still runs")
	require.Len(t, logs, 1, "and so do its logs")
	assert.Contains(t, logs[0], `"level":"warning","data":"starting"`)
	assert.Contains(t, progress[2], `"progress":3,"total":3`)
	close(release)
	rest, _ := io.ReadAll(resp.Body)
	assert.Contains(t, string(rest), "event: result")
	assert.Contains(t, string(rest), `"value":3`)
}

func TestRedactSecrets(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{`{"request":{"context":{"secrets":[{"id":"K","value":"v"}]}}}`, `{"request":{"context":{"secrets":[{"id":"K","value":"(secret)"}]}}}`},
		{`{"params":{"_meta":{"x/context":{"secrets":[{"id":"K","value":"v"},{"id":"L","value":"w"}]}}}}`, `{"params":{"_meta":{"x/context":{"secrets":[{"id":"K","value":"(secret)"},{"id":"L","value":"(secret)"}]}}}}`},
		{`{"a":1}`, `{"a":1}`},
		{`not json`, `not json`},
	} {
		assert.Equal(t, c.want, redactSecrets([]byte(c.in)))
	}
}

// TestRecorderBudget: the exchanges of one call or listing keep at most
// maxRecordedTotal bytes of bodies, each at most maxRecorded.
func TestRecorderBudget(t *testing.T) {
	big := strings.Repeat("x", maxRecorded+10)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		_, _ = io.WriteString(w, big)
	}))
	t.Cleanup(srv.Close)
	rec := &recorder{base: http.DefaultTransport}
	hc := &http.Client{Transport: rec}
	for range 6 {
		resp, err := hc.Post(srv.URL, "text/plain", strings.NewReader("body"))
		require.NoError(t, err)
		n, _ := io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		assert.Equal(t, int64(len(big)), n, "the caller reads it all")
	}
	total := 0
	for i, ex := range rec.list() {
		assert.LessOrEqual(t, len(ex.ResponseBody), maxRecorded)
		assert.True(t, ex.Truncated, "exchange %d", i)
		total += len(ex.Body) + len(ex.ResponseBody)
	}
	assert.LessOrEqual(t, total, maxRecordedTotal)
	assert.Greater(t, total, maxRecordedTotal-100)
}

func TestInspect_Addr(t *testing.T) {
	url := serveTools(t, "")
	ln, err := listenLoopback("127.0.0.1:0")
	require.NoError(t, err)
	port := strings.TrimPrefix(ln.Addr().String(), "127.0.0.1:")
	ln.Close()
	for _, addr := range []string{"127.0.0.1:" + port, "localhost:0", ":0"} {
		t.Run(addr, func(t *testing.T) {
			page := startInspect(t, nil, url, "--addr", addr)
			if addr != "localhost:0" && addr != ":0" {
				assert.True(t, strings.HasPrefix(page, "http://127.0.0.1:"+port+"/?token="), page)
			}
			a := newInspectAPI(t, page)
			resp, _ := a.do(t, "GET", "/api/info", "", nil)
			assert.Equal(t, http.StatusOK, resp.StatusCode)
			// localhost names the same server, and is accepted as its Host.
			resp, _ = a.do(t, "GET", "/api/info", "", func(r *http.Request) { r.Host = strings.Replace(r.Host, "127.0.0.1", "localhost", 1) })
			assert.Equal(t, http.StatusOK, resp.StatusCode)
		})
	}
	t.Run("taken", func(t *testing.T) {
		busy, err := listenLoopback("127.0.0.1:0")
		require.NoError(t, err)
		defer busy.Close()
		code, _, errOut := otcRun(t, url, "", nil, "inspect", "URL", "--no-open", "--addr", busy.Addr().String())
		assert.Equal(t, exitBadInput, code)
		assert.Contains(t, errOut, "address already in use")
	})
}

// TestInspect_BearerAndJWT: the proxy adds the bearer token, or a JWT it
// signs, and the page sees neither.
func TestInspect_BearerAndJWT(t *testing.T) {
	reg := otc.NewRegistry(nil)
	require.NoError(t, otc.Register(reg, otc.Tool{ID: "Calculator.Add", Version: "1.0.0", Description: "Adds."},
		func(_ context.Context, in addInput) (float64, error) { return in.A + in.B, nil }))
	seen := make(chan string, 16)
	mux := http.NewServeMux()
	mux.Handle("/mcp", mcp.NewHandler(reg, nil))
	mux.Handle("/", otc.NewHandler(reg, &otc.HandlerOptions{Search: search.Query}))
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		seen <- r.Header.Get("Authorization")
		mux.ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)
	for _, c := range []struct {
		name string
		args []string
		want *regexp.Regexp
	}{
		{"bearer_otc", []string{srv.URL, "--bearer", "t0ken"}, regexp.MustCompile(`^Bearer t0ken$`)},
		{"bearer_mcp", []string{"--mcp", srv.URL + "/mcp", "--bearer", "t0ken"}, regexp.MustCompile(`^Bearer t0ken$`)},
		{"jwt", []string{srv.URL, "--jwt-secret", strings.Repeat("s", 32)}, regexp.MustCompile(`^Bearer eyJ[\w-]+\.[\w-]+\.[\w-]+$`)},
	} {
		t.Run(c.name, func(t *testing.T) {
			for len(seen) > 0 {
				<-seen
			}
			a := newInspectAPI(t, startInspect(t, nil, c.args...))
			kind, tool := "otc", "Calculator.Add"
			if c.args[0] == "--mcp" {
				kind, tool = "mcp", "Calculator_Add"
			}
			_, res := a.callEvents(t, `{"server":"`+kind+`","tool":"`+tool+`","input":{"a":1,"b":2}}`)
			require.True(t, res.OK, "%+v", res.Error)
			require.NotZero(t, len(seen))
			for len(seen) > 0 { // the look at the URL's format, and the call
				assert.Regexp(t, c.want, <-seen)
			}
			assert.Equal(t, redactedCredential, res.Exchanges[0].Header["Authorization"])
			b, _ := json.Marshal(res)
			assert.NotContains(t, string(b), "t0ken")
			assert.NotContains(t, string(b), "eyJ")
		})
	}
}

// TestInspectSearch: the page asks a server's own search through
// /api/search: an OTC server that searches answers the found tools' call
// names, best first; an MCP server without search mode says it does not
// search, and the page filters by itself.
func TestInspectSearch(t *testing.T) {
	url := serveTools(t, "")
	a := newInspectAPI(t, startInspect(t, nil, url, "--mcp", url+"/mcp"))
	resp, body := a.do(t, "GET", "/api/search?server=otc&q=add+two+numbers", "", nil)
	require.Equal(t, http.StatusOK, resp.StatusCode, body)
	var got struct {
		Supported bool     `json:"supported"`
		Calls     []string `json:"calls"`
	}
	require.NoError(t, json.Unmarshal([]byte(body), &got))
	assert.True(t, got.Supported)
	require.NotEmpty(t, got.Calls)
	assert.Equal(t, "Calculator.Add@1.0.0", got.Calls[0])

	resp, body = a.do(t, "GET", "/api/search?server=mcp&q=add", "", nil)
	require.Equal(t, http.StatusOK, resp.StatusCode, body)
	got = struct {
		Supported bool     `json:"supported"`
		Calls     []string `json:"calls"`
	}{}
	require.NoError(t, json.Unmarshal([]byte(body), &got))
	assert.False(t, got.Supported)

	resp, body = a.do(t, "GET", "/api/search?server=a2a&q=add", "", nil)
	assert.Equal(t, http.StatusBadRequest, resp.StatusCode, body)
}
