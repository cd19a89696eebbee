package inspecttest

import (
	"bufio"
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/input"
	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// env is what every test shares: the servers and the browser.
var env struct {
	calc    string // the calculator's base URL
	page    string // the URL otc inspect printed
	rich    string // the URL of an otc inspect of richServer
	gateway string // the URL of an otc inspect of a gateway of richServer
	browser context.Context
}

// pageURLLine is the line otc inspect prints: checks outside the
// repository read it, so its shape is tested here as they read it.
var pageURLLine = regexp.MustCompile(`^http://127\.0\.0\.1:[0-9]+/\?token=[A-Za-z0-9_-]{16,}$`)

func TestMain(m *testing.M) {
	os.Exit(run(m))
}

func run(m *testing.M) int {
	browser := findChromium()
	if browser == "" {
		if os.Getenv("OTC_REQUIRE_CHROMIUM") == "1" {
			fmt.Fprintln(os.Stderr, "inspecttest: no chromium found and OTC_REQUIRE_CHROMIUM=1 (apt-get install chromium)")
			return 1
		}
		fmt.Fprintln(os.Stderr, "inspecttest: no chromium found; skipping the browser tests")
		return 0
	}
	dir, err := os.MkdirTemp("", "inspecttest")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer os.RemoveAll(dir)
	stop, err := start(dir)
	defer stop()
	if err != nil {
		fmt.Fprintln(os.Stderr, "inspecttest:", err)
		return 1
	}
	opts := append(chromedp.DefaultExecAllocatorOptions[:],
		chromedp.ExecPath(browser),
		chromedp.NoSandbox, // CI runs as root
		chromedp.WindowSize(1280, 800),
	)
	alloc, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	defer cancelAlloc()
	ctx, cancel := chromedp.NewContext(alloc)
	defer cancel()
	if err := chromedp.Run(ctx); err != nil { // starts the browser
		fmt.Fprintln(os.Stderr, "inspecttest: starting chromium:", err)
		return 1
	}
	env.browser = ctx
	return m.Run()
}

func findChromium() string {
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome", "google-chrome-stable"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	return ""
}

// start builds and starts the calculator and otc inspect; stop ends them.
func start(dir string) (stop func(), err error) {
	var procs []*exec.Cmd
	stop = func() {
		for _, p := range procs {
			_ = p.Process.Signal(os.Interrupt)
			done := make(chan struct{})
			go func() { _ = p.Wait(); close(done) }()
			select {
			case <-done:
			case <-time.After(5 * time.Second):
				_ = p.Process.Kill()
			}
		}
	}
	root, err := filepath.Abs("..")
	if err != nil {
		return stop, err
	}
	otcBin, calcBin := filepath.Join(dir, "otc"), filepath.Join(dir, "calculator")
	for _, b := range []struct{ dir, out string }{{root, otcBin + " ./cmd/otc"}, {filepath.Join(root, "examples/calculator"), calcBin + " ."}} {
		out, pkg, _ := strings.Cut(b.out, " ")
		cmd := exec.Command("go", "build", "-o", out, pkg)
		cmd.Dir = b.dir
		if msg, err := cmd.CombinedOutput(); err != nil {
			return stop, fmt.Errorf("go build %s: %v\n%s", pkg, err, msg)
		}
	}
	port, err := freePort()
	if err != nil {
		return stop, err
	}
	env.calc = "http://127.0.0.1:" + port
	calc := exec.Command(calcBin, "-addr", "127.0.0.1:"+port)
	calc.Env = append(os.Environ(), "OTC_API_KEY=", "OTC_JWT_SECRET=", "OTC_REDIS_URL=")
	calc.Stderr = io.Discard
	if err := calc.Start(); err != nil {
		return stop, err
	}
	procs = append(procs, calc)
	if err := waitHealthy(env.calc + "/health"); err != nil {
		return stop, err
	}
	insp := exec.Command(otcBin, "inspect", env.calc, "--mcp", env.calc+"/mcp", "--rest", env.calc+"/v1", "--no-open")
	insp.Env = append(os.Environ(), "OTC_API_KEY=", "OTC_BEARER_TOKEN=")
	insp.Stderr = io.Discard
	out, err := insp.StdoutPipe()
	if err != nil {
		return stop, err
	}
	if err := insp.Start(); err != nil {
		return stop, err
	}
	procs = append([]*exec.Cmd{insp}, procs...)
	if env.page, err = pageURL(out); err != nil {
		return stop, err
	}
	rich := richServer()
	insp2 := exec.Command(otcBin, "inspect", rich, "--mcp", rich+"/mcp", "--no-open")
	insp2.Stderr = io.Discard
	out2, err := insp2.StdoutPipe()
	if err != nil {
		return stop, err
	}
	if err := insp2.Start(); err != nil {
		return stop, err
	}
	procs = append([]*exec.Cmd{insp2}, procs...)
	if env.rich, err = pageURL(out2); err != nil {
		return stop, err
	}
	gw, err := gatewayServer(rich)
	if err != nil {
		return stop, err
	}
	insp3 := exec.Command(otcBin, "inspect", gw+"/otc", "--no-open")
	insp3.Stderr = io.Discard
	out3, err := insp3.StdoutPipe()
	if err != nil {
		return stop, err
	}
	if err := insp3.Start(); err != nil {
		return stop, err
	}
	procs = append([]*exec.Cmd{insp3}, procs...)
	env.gateway, err = pageURL(out3)
	return stop, err
}

// pageURL reads the URL otc inspect prints on out.
func pageURL(out io.Reader) (string, error) {
	line := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(out)
		if sc.Scan() {
			line <- sc.Text()
		}
		close(line)
		_, _ = io.Copy(io.Discard, out)
	}()
	select {
	case l := <-line:
		if !pageURLLine.MatchString(l) {
			return "", fmt.Errorf("otc inspect printed %q, not http://127.0.0.1:PORT/?token=…", l)
		}
		return l, nil
	case <-time.After(30 * time.Second):
		return "", fmt.Errorf("otc inspect printed no URL in 30s")
	}
}

func freePort() (string, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", err
	}
	defer ln.Close()
	_, port, _ := net.SplitHostPort(ln.Addr().String())
	return port, nil
}

func waitHealthy(url string) error {
	deadline := time.Now().Add(30 * time.Second)
	for time.Now().Before(deadline) {
		resp, err := http.Get(url)
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return nil
			}
		}
		time.Sleep(100 * time.Millisecond)
	}
	return fmt.Errorf("%s did not answer 200 in 30s", url)
}

// tab opens a new tab for t, closed and screenshotted at the end of the
// test (into t.TempDir(), and into $OTC_INSPECT_SCREENSHOT when shot is
// true and it is set).
func tab(t *testing.T, shot bool) context.Context {
	t.Helper()
	tabCtx, cancel := chromedp.NewContext(env.browser)
	// An exception the page does not catch fails the test.
	var mu sync.Mutex
	var thrown []string
	chromedp.ListenTarget(tabCtx, func(ev any) {
		if e, ok := ev.(*runtime.EventExceptionThrown); ok {
			mu.Lock()
			thrown = append(thrown, e.ExceptionDetails.Error())
			mu.Unlock()
		}
	})
	t.Cleanup(func() {
		mu.Lock()
		defer mu.Unlock()
		assert.Empty(t, thrown, "exceptions in the page")
	})
	require.NoError(t, chromedp.Run(tabCtx, chromedp.EmulateViewport(1280, 800)))
	ctx, cancelTime := context.WithTimeout(tabCtx, 30*time.Second)
	dir := t.TempDir()
	t.Cleanup(func() {
		var png []byte
		shotCtx, cancelShot := context.WithTimeout(tabCtx, 10*time.Second)
		defer cancelShot()
		err := chromedp.Run(shotCtx, page.BringToFront(), chromedp.CaptureScreenshot(&png))
		if err != nil {
			t.Logf("screenshot: %v", err)
		}
		if err == nil {
			path := filepath.Join(dir, strings.ReplaceAll(t.Name(), "/", "_")+".png")
			if os.WriteFile(path, png, 0o644) == nil {
				t.Logf("screenshot: %s", path)
			}
			if all := os.Getenv("OTC_INSPECT_SCREENSHOTS"); all != "" {
				_ = os.WriteFile(filepath.Join(all, filepath.Base(path)), png, 0o644)
			}
			if to := os.Getenv("OTC_INSPECT_SCREENSHOT"); shot && to != "" {
				require.NoError(t, os.WriteFile(to, png, 0o644))
			}
		}
		cancelTime()
		cancel()
	})
	return ctx
}

// openTool loads the page, chooses server (otc, mcp or rest) and clicks
// the tool whose call name is tool.
func openTool(t *testing.T, ctx context.Context, server, tool string) {
	t.Helper()
	openToolAt(t, ctx, env.page, server, tool)
}

func openToolAt(t *testing.T, ctx context.Context, page, server, tool string) {
	t.Helper()
	require.NoError(t, chromedp.Run(ctx,
		chromedp.Navigate(page),
		chromedp.WaitVisible(`#tools .tool-item`, chromedp.ByQuery),
		chromedp.Evaluate(fmt.Sprintf(`(() => { const s = document.querySelector('#server'); s.value = %q; s.dispatchEvent(new Event('change')); })()`, server), nil),
		chromedp.Click(fmt.Sprintf(`#tools button[data-tool=%q]`, tool), chromedp.ByQuery),
		chromedp.WaitVisible(`#form`, chromedp.ByQuery),
	), "open %s on %s", tool, server)
}

func text(t *testing.T, ctx context.Context, sel string) string {
	t.Helper()
	var s string
	require.NoError(t, chromedp.Run(ctx, chromedp.WaitVisible(sel, chromedp.ByQuery), chromedp.Text(sel, &s, chromedp.ByQuery)), "text of %s", sel)
	return strings.TrimSpace(s)
}

func fill(sel, value string) chromedp.Tasks {
	return chromedp.Tasks{
		chromedp.WaitVisible(sel, chromedp.ByQuery),
		chromedp.Evaluate(fmt.Sprintf(`document.querySelector(%q).value = ''`, sel), nil),
		chromedp.SendKeys(sel, value, chromedp.ByQuery),
	}
}

func call() chromedp.Tasks {
	return chromedp.Tasks{
		chromedp.Evaluate(`document.querySelector('#result').textContent = ''`, nil),
		chromedp.Click(`#call`, chromedp.ByQuery),
		chromedp.WaitVisible(`#result-status`, chromedp.ByQuery),
	}
}

// TestInspect_Add lists the tools, searches, opens Calculator.Add, fills
// its form and calls it.
func TestInspect_Add(t *testing.T) {
	ctx := tab(t, true)
	require.NoError(t, chromedp.Run(ctx, chromedp.Navigate(env.page), chromedp.WaitVisible(`#tools .tool-item`, chromedp.ByQuery)))
	tools := text(t, ctx, `#tools`)
	for _, want := range []string{"Calculator.Add", "Doorbell.Ring", "Signer.Sign", "Timer.Wait", "1.0.0"} {
		assert.Contains(t, tools, want)
	}
	require.NoError(t, chromedp.Run(ctx, fill(`#search`, "door")))
	assert.NotContains(t, text(t, ctx, `#tools`), "Calculator.Add", "the search filters")
	require.NoError(t, chromedp.Run(ctx, chromedp.Evaluate(`(() => { const s = document.querySelector('#search'); s.value = ''; s.dispatchEvent(new Event('input')); })()`, nil)))
	assert.Contains(t, text(t, ctx, `#tools`), "Calculator.Add")

	openTool(t, ctx, "otc", "Calculator.Add@1.0.0")
	assert.Contains(t, text(t, ctx, `#tool-description`), "Adds two numbers")
	require.NoError(t, chromedp.Run(ctx, fill(`input[name="a"]`, "10"), fill(`input[name="b"]`, "5")))
	var raw string
	require.NoError(t, chromedp.Run(ctx, chromedp.Value(`#raw-json`, &raw, chromedp.ByQuery)))
	assert.JSONEq(t, `{"a":10,"b":5}`, raw, "the raw JSON follows the form")
	require.NoError(t, chromedp.Run(ctx, call()))
	assert.Equal(t, "ok", text(t, ctx, `#result-status`))
	assert.Equal(t, "15", text(t, ctx, `#result-value`))
	assert.Regexp(t, `^\S+$`, text(t, ctx, `#result-call-id`))
	assert.Regexp(t, `^[0-9.]+ ms$`, text(t, ctx, `#duration`))
}

// TestInspect_ServerSearch: words that no tool's text holds as typed
// ("add two numbers") find Calculator.Add through the server's search,
// shown first under its own heading; words a name holds in part still
// filter the list as before.
func TestInspect_ServerSearch(t *testing.T) {
	ctx := tab(t, false)
	require.NoError(t, chromedp.Run(ctx, chromedp.Navigate(env.page), chromedp.WaitVisible(`#tools .tool-item`, chromedp.ByQuery)))
	require.NoError(t, chromedp.Run(ctx, fill(`#search`, "sum of two numbers"), chromedp.WaitVisible(`#best-matches`, chromedp.ByQuery)))
	assert.Equal(t, "Calculator.Add1.0.0", text(t, ctx, `#best-matches + .tool-item`), "the best match first")
	require.NoError(t, chromedp.Run(ctx, fill(`#search`, "door")))
	tools := text(t, ctx, `#tools`)
	assert.Contains(t, tools, "Doorbell.Ring", "a part of a name still filters")
	assert.NotContains(t, tools, "Calculator.Add")
}

// TestInspect_ParameterError sends b: "infinity": the form marks it before
// sending, and the server's parameter error is shown beside b.
func TestInspect_ParameterError(t *testing.T) {
	ctx := tab(t, false)
	openTool(t, ctx, "otc", "Calculator.Add@1.0.0")
	require.NoError(t, chromedp.Run(ctx, fill(`input[name="a"]`, "1"), fill(`input[name="b"]`, "infinity")))
	assert.Contains(t, text(t, ctx, `.field-error.warn[data-path="b"]`), "not a number", "marked before sending")
	require.NoError(t, chromedp.Run(ctx, call()))
	assert.Equal(t, "refused 422", text(t, ctx, `#result-status`))
	assert.Contains(t, text(t, ctx, `.field-error.server[data-path="b"]`), "number", "the server's message, beside b")
	assert.Empty(t, text2(ctx, `.field-error[data-path="a"]`), "nothing beside a")
}

func text2(ctx context.Context, sel string) string {
	var s string
	_ = chromedp.Run(ctx, chromedp.Text(sel, &s, chromedp.ByQuery, chromedp.AtLeast(0)))
	return strings.TrimSpace(s)
}

// TestInspect_ToolError rings an unknown doorbell: the tool error with its
// retry hint and additional prompt content.
func TestInspect_ToolError(t *testing.T) {
	ctx := tab(t, false)
	openTool(t, ctx, "otc", "Doorbell.Ring@0.1.0")
	// From the keyboard: Ctrl+Enter in a field calls.
	require.NoError(t, chromedp.Run(ctx, fill(`textarea[name="doorbell_id"], input[name="doorbell_id"]`, "doorbell1"),
		chromedp.KeyEvent("\r", chromedp.KeyModifiers(input.ModifierCtrl)),
		chromedp.WaitVisible(`#result-status`, chromedp.ByQuery)))
	assert.Equal(t, "tool error", text(t, ctx, `#result-status`))
	assert.Equal(t, "Doorbell ID not found", text(t, ctx, `#tool-error-message`))
	assert.Equal(t, "Can retry after 500 ms.", text(t, ctx, `#retry-hint`))
	assert.Contains(t, text(t, ctx, `#prompt-content`), "ids: doorbell42,doorbell84")
}

// TestInspect_Secret calls Signer.Sign without its secret (refused, the
// secret named) and with it (the signature).
func TestInspect_Secret(t *testing.T) {
	ctx := tab(t, false)
	openTool(t, ctx, "otc", "Signer.Sign@1.0.0")
	require.NoError(t, chromedp.Run(ctx, fill(`textarea[name="message"], input[name="message"]`, "hello"), call()))
	assert.Contains(t, text(t, ctx, `#result-status`), "refused")
	assert.Contains(t, text(t, ctx, `#missing`), "secret SIGNING_KEY")

	require.NoError(t, chromedp.Run(ctx, fill(`#secret-SIGNING_KEY`, "k3y"), call()))
	assert.Equal(t, "ok", text(t, ctx, `#result-status`))
	mac := hmac.New(sha256.New, []byte("k3y"))
	mac.Write([]byte("hello"))
	assert.Contains(t, text(t, ctx, `#result-value`), hex.EncodeToString(mac.Sum(nil)))
	var shown string
	require.NoError(t, chromedp.Run(ctx, chromedp.Text(`#exchanges pre`, &shown, chromedp.ByQuery)))
	assert.NotContains(t, shown, "k3y", "the raw request shows no secret")

	// Re-sent from the history, with the secret this tab remembers.
	require.NoError(t, chromedp.Run(ctx,
		chromedp.Evaluate(`document.querySelector('#result').textContent = ''`, nil),
		chromedp.Click(`#history li:first-child .history-resend`, chromedp.ByQuery),
		chromedp.WaitVisible(`#history li:nth-child(3)`, chromedp.ByQuery)))
	assert.Equal(t, "ok", text(t, ctx, `#result-status`))
	var stored string
	require.NoError(t, chromedp.Run(ctx, chromedp.Evaluate(`JSON.stringify(localStorage) + JSON.stringify(sessionStorage) + document.cookie`, &stored)))
	assert.Equal(t, "{}{}", stored, "nothing stored")
}

// TestInspect_MCPProgress waits with Timer.Wait over MCP: the progress
// shows while the call runs, before its answer.
func TestInspect_MCPProgress(t *testing.T) {
	ctx := tab(t, false)
	openTool(t, ctx, "mcp", "Timer_Wait")
	assert.Contains(t, text(t, ctx, `#annotations`), "readOnly: true", "MCP annotations")
	var during int
	require.NoError(t, chromedp.Run(ctx,
		fill(`input[name="ms"]`, "1600"),
		chromedp.Click(`#call`, chromedp.ByQuery),
		chromedp.WaitVisible(`#logs .progress-event`, chromedp.ByQuery),
		chromedp.Evaluate(`document.querySelectorAll('#result-status').length`, &during),
	))
	assert.Zero(t, during, "progress shown before the answer")
	assert.Equal(t, "ok", text(t, ctx, `#result-status`))
	assert.Equal(t, "1600", text(t, ctx, `#result-value`))
	var events int
	require.NoError(t, chromedp.Run(ctx, chromedp.Evaluate(`document.querySelectorAll('#logs .progress-event').length`, &events)))
	assert.GreaterOrEqual(t, events, 3)
	assert.Contains(t, text(t, ctx, `#progress-text`), "1600 / 1600")
}

// TestInspect_HistoryAndCopy re-sends a call from the history and copies
// it as curl and as otc call.
func TestInspect_HistoryAndCopy(t *testing.T) {
	ctx := tab(t, false)
	openTool(t, ctx, "otc", "Calculator.Add@1.0.0")
	require.NoError(t, chromedp.Run(ctx, fill(`input[name="a"]`, "2"), fill(`input[name="b"]`, "3"), call()))
	assert.Equal(t, "5", text(t, ctx, `#result-value`))
	// Another tool, then the first call again from the history.
	require.NoError(t, chromedp.Run(ctx,
		chromedp.Click(`#tools button[data-tool="Doorbell.Ring@0.1.0"]`, chromedp.ByQuery),
		chromedp.WaitVisible(`#form`, chromedp.ByQuery),
		chromedp.Click(`#history li:last-child .history-resend`, chromedp.ByQuery),
		chromedp.WaitVisible(`#history li:nth-child(2)`, chromedp.ByQuery),
		chromedp.WaitVisible(`#result-value`, chromedp.ByQuery),
	))
	assert.Equal(t, "5", text(t, ctx, `#result-value`))
	assert.Contains(t, text(t, ctx, `#history`), "Calculator.Add@1.0.0")
	var n int
	require.NoError(t, chromedp.Run(ctx, chromedp.Evaluate(`document.querySelectorAll('#history li').length`, &n)))
	assert.Equal(t, 2, n)

	var curl, otcCall, raw string
	require.NoError(t, chromedp.Run(ctx,
		chromedp.Click(`#copy-curl`, chromedp.ByQuery), chromedp.Value(`#copy-text`, &curl, chromedp.ByQuery),
		chromedp.Click(`#copy-otc`, chromedp.ByQuery), chromedp.Value(`#copy-text`, &otcCall, chromedp.ByQuery),
		chromedp.Click(`#copy-raw`, chromedp.ByQuery), chromedp.Value(`#copy-text`, &raw, chromedp.ByQuery),
	))
	assert.True(t, strings.HasPrefix(raw, "POST "+env.calc+"/tools/call\n"), raw)
	assert.Contains(t, raw, "\n\nHTTP 200\n")
	assert.Contains(t, raw, `"value":5`)
	assert.True(t, strings.HasPrefix(curl, "curl -X POST '"+env.calc+"/tools/call'"), curl)
	assert.Contains(t, curl, `-H 'Content-Type: application/json'`)
	assert.Contains(t, curl, `"input":{"a":2,"b":3}`)
	assert.Equal(t, "otc call "+env.calc+` Calculator.Add@1.0.0 '{"a":2,"b":3}' --call-id `, otcCall[:strings.LastIndex(otcCall, " ")+1])

	// The curl command runs and gets the same answer.
	out, err := exec.Command("sh", "-c", curl).Output()
	require.NoError(t, err)
	assert.Contains(t, string(out), `"value":5`)
}

// TestInspect_Compare sends one call in each wire format the servers serve.
func TestInspect_Compare(t *testing.T) {
	ctx := tab(t, false)
	openTool(t, ctx, "otc", "Calculator.Add@1.0.0")
	require.NoError(t, chromedp.Run(ctx, fill(`input[name="a"]`, "4"), fill(`input[name="b"]`, "4"),
		chromedp.Click(`#compare`, chromedp.ByQuery),
		chromedp.WaitVisible(`#compare div[data-kind="rest"] .meta`, chromedp.ByQuery),
		chromedp.WaitVisible(`#compare div[data-kind="mcp"] .meta`, chromedp.ByQuery),
		chromedp.WaitVisible(`#compare div[data-kind="otc"] .meta`, chromedp.ByQuery),
	))
	for _, k := range []string{"otc", "mcp", "rest"} {
		col := text(t, ctx, `#compare div[data-kind="`+k+`"]`)
		assert.Contains(t, col, "ok", k)
		assert.Contains(t, col, "8", k)
	}
	assert.Contains(t, text(t, ctx, `#compare div[data-kind="rest"]`), "/v1/tools/Calculator_Add:invoke")
}

// TestInspect_Refusals: the page without its token, and the API from a
// foreign origin or with a foreign Host, are refused.
func TestInspect_Refusals(t *testing.T) {
	ctx := tab(t, false)
	base, _, _ := strings.Cut(env.page, "/?token=")
	var body string
	require.NoError(t, chromedp.Run(ctx, chromedp.Navigate(base+"/"), chromedp.Text(`body`, &body, chromedp.ByQuery)))
	assert.Contains(t, body, "missing or wrong token")

	// From a page of another origin (the calculator's), a fetch with the
	// token is refused by the inspector, and the browser sees no answer.
	var result string
	require.NoError(t, chromedp.Run(ctx,
		chromedp.Navigate(env.calc+"/health"),
		chromedp.Evaluate(fmt.Sprintf(`fetch(%q).then(r => 'status ' + r.status, e => 'blocked: ' + e.name)`, strings.Replace(env.page, "/?", "/api/info?", 1)), &result,
			func(p *runtime.EvaluateParams) *runtime.EvaluateParams { return p.WithAwaitPromise(true) }),
	))
	assert.Equal(t, "blocked: TypeError", result)

	for _, c := range []struct {
		name    string
		header  http.Header
		url     string
		status  int
		message string
	}{
		{"no_token", nil, base + "/api/info", http.StatusUnauthorized, "missing or wrong token"},
		{"wrong_token", nil, base + "/api/info?token=nope", http.StatusUnauthorized, "missing or wrong token"},
		{"foreign_origin", http.Header{"Origin": {env.calc}}, strings.Replace(env.page, "/?", "/api/info?", 1), http.StatusForbidden, "requests from origin"},
		{"foreign_host", http.Header{"Host": {"evil.example:80"}}, strings.Replace(env.page, "/?", "/api/info?", 1), http.StatusMisdirectedRequest, "answers to Host 127.0.0.1 only"},
	} {
		t.Run(c.name, func(t *testing.T) {
			req, err := http.NewRequest(http.MethodGet, c.url, nil)
			require.NoError(t, err)
			for k, v := range c.header {
				if k == "Host" {
					req.Host = v[0]
					continue
				}
				req.Header[k] = v
			}
			resp, err := http.DefaultClient.Do(req)
			require.NoError(t, err)
			defer resp.Body.Close()
			b, _ := io.ReadAll(resp.Body)
			assert.Equal(t, c.status, resp.StatusCode)
			assert.Contains(t, string(b), c.message)
		})
	}
}

// TestInspect_Keyboard reaches a tool and calls it from the keyboard: "/"
// to search, Tab to the tool, Enter to open it, Ctrl+Enter to call.
func TestInspect_Keyboard(t *testing.T) {
	ctx := tab(t, false)
	var focused string
	require.NoError(t, chromedp.Run(ctx,
		chromedp.Navigate(env.page),
		chromedp.WaitVisible(`#tools .tool-item`, chromedp.ByQuery),
		chromedp.KeyEvent("/"),
		chromedp.Evaluate(`document.activeElement.id`, &focused),
	))
	assert.Equal(t, "search", focused)
	// The tools are buttons (focusable, and Enter presses them).
	var buttons bool
	require.NoError(t, chromedp.Run(ctx,
		chromedp.KeyEvent("counter"),
		chromedp.Evaluate(`[...document.querySelectorAll('#tools .tool-item')].every(b => b.tagName === 'BUTTON' && b.tabIndex === 0)`, &buttons),
	))
	assert.True(t, buttons)
	require.NoError(t, chromedp.Run(ctx,
		chromedp.KeyEvent(kb.Tab),
		chromedp.Evaluate(`document.activeElement.dataset.tool || ''`, &focused),
	))
	assert.Equal(t, "Counter.Increment@1.0.0", focused, "Tab goes from the search to the tools")
	require.NoError(t, chromedp.Run(ctx,
		chromedp.KeyEvent(kb.Enter),
		chromedp.WaitVisible(`#form`, chromedp.ByQuery),
		chromedp.KeyEvent("\r", chromedp.KeyModifiers(input.ModifierCtrl)),
		chromedp.WaitVisible(`#result-value`, chromedp.ByQuery),
	))
	assert.Equal(t, "ok", text(t, ctx, `#result-status`))
	assert.Regexp(t, `^[0-9]+$`, text(t, ctx, `#result-value`))
}
