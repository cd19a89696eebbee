package client_test

// One client, four wire formats: the same calls against the library's
// own servers over OTC, MCP (HTTP and stdio), the REST view and A2A, with
// the same outcomes in the same types.

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/otcgo/otc"
	"github.com/otcgo/otc/client"
	"github.com/otcgo/otc/export"
	"github.com/otcgo/otc/idempotency"
	"github.com/otcgo/otc/mcp"
	"github.com/otcgo/otc/mount"
	"github.com/otcgo/otc/ratelimit"
)

// stdioEnv, when set in the environment, makes the test binary an MCP
// server over stdio of formatsRegistry's tools: the process NewStdio
// starts in these tests.
const stdioEnv = "OTC_CLIENT_TEST_STDIO"

func TestMain(m *testing.M) {
	if os.Getenv(stdioEnv) == "flood" {
		floodServer(os.Stdin, os.Stdout)
		os.Exit(0)
	}
	if os.Getenv(stdioEnv) == "old" {
		oldServer(os.Stdin, os.Stdout)
		os.Exit(0)
	}
	if os.Getenv(stdioEnv) == "resources" {
		if err := mcp.ServeStdio(context.Background(), resourcesRegistry(), nil); err != nil {
			os.Exit(1)
		}
		os.Exit(0)
	}
	if runTestProcess(os.Getenv(stdioEnv)) {
		os.Exit(0)
	}
	if os.Getenv(stdioEnv) != "" {
		reg, _ := formatsRegistry(nil)
		if err := mcp.ServeStdio(context.Background(), reg, nil); err != nil {
			os.Exit(1)
		}
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// toolRuns counts what the tools of formatsRegistry did.
type toolRuns struct {
	hits      atomic.Int64
	cancelled chan struct{}
	started   chan struct{}
}

type addInput struct {
	A float64 `json:"a" jsonschema:"description=The first number."`
	B float64 `json:"b" jsonschema:"description=The second number."`
}

// formatsRegistry is the registry every format serves in these tests.
func formatsRegistry(mw []otc.Middleware) (*otc.Registry, *toolRuns) {
	runs := &toolRuns{cancelled: make(chan struct{}, 1), started: make(chan struct{}, 1)}
	reg := otc.NewRegistry(&otc.RegistryOptions{Middleware: mw, Idempotency: idempotency.NewMemoryStore(nil)})
	must := func(err error) {
		if err != nil {
			panic(err)
		}
	}
	must(otc.Register(reg, otc.Tool{ID: "Math.Add", Version: "1.0.0", Description: "Adds two numbers."},
		func(_ context.Context, in addInput) (float64, error) { return in.A + in.B, nil }))
	must(otc.Register(reg, otc.Tool{ID: "Echo.Say", Version: "1.0.0", Description: "Says the text back."},
		func(_ context.Context, in struct {
			Text string `json:"text" jsonschema:"description=What to say."`
		}) (string, error) {
			return in.Text, nil
		}))
	must(otc.Register(reg, otc.Tool{ID: "Flaky.Fail", Version: "1.0.0", Description: "Fails, retryably."},
		func(context.Context, struct{}) (otc.NoOutput, error) {
			return otc.NoOutput{}, &otc.ToolError{Message: "The backend is down", CanRetry: true, RetryAfter: 500 * time.Millisecond,
				AdditionalPromptContent: "Try the mirror."}
		}))
	must(otc.Register(reg, otc.Tool{ID: "Count.Hit", Version: "1.0.0", Description: "Counts its runs."},
		func(context.Context, struct{}) (int64, error) { return runs.hits.Add(1), nil }))
	must(otc.Register(reg, otc.Tool{ID: "Slow.Wait", Version: "1.0.0", Description: "Reports progress, then waits to be cancelled."},
		func(ctx context.Context, _ struct{}) (otc.NoOutput, error) {
			otc.ReportProgress(ctx, 1, 2, "half way")
			select {
			case runs.started <- struct{}{}:
			default:
			}
			select {
			case <-ctx.Done():
				runs.cancelled <- struct{}{}
				return otc.NoOutput{}, ctx.Err()
			case <-time.After(30 * time.Second):
				return otc.NoOutput{}, nil
			}
		}))
	return reg, runs
}

// formatServer serves a registry on every format, as mount.All mounts
// them, and returns the URL of each.
func formatServer(t *testing.T, mw []otc.Middleware) (map[client.Format]string, *toolRuns, string) {
	t.Helper()
	reg, runs := formatsRegistry(mw)
	mux := http.NewServeMux()
	mount.All(mux, reg, nil)
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	return map[client.Format]string{
		client.FormatOTC:  srv.URL + mount.PrefixOTC,
		client.FormatMCP:  srv.URL + mount.PrefixMCP,
		client.FormatREST: srv.URL + mount.PrefixREST,
		client.FormatA2A:  srv.URL + mount.PrefixA2A,
	}, runs, srv.URL
}

var allFormats = []client.Format{client.FormatOTC, client.FormatMCP, client.FormatREST, client.FormatA2A}

// toolID is the id to call the tool named name by, as the catalog lists
// it.
func toolID(t *testing.T, defs []otc.ToolDefinition, name string) string {
	t.Helper()
	for _, d := range defs {
		if d.Name == name {
			return d.ID
		}
	}
	t.Fatalf("no tool named %s in %v", name, defs)
	return ""
}

// TestEveryFormat: the catalog, a value, a tool error with its retry
// hints, invalid input with the parameter to fix, and the model's text,
// the same over every format.
func TestEveryFormat(t *testing.T) {
	urls, _, _ := formatServer(t, nil)
	for _, f := range allFormats {
		t.Run(string(f), func(t *testing.T) {
			c, err := client.New(urls[f], &client.Options{Format: f})
			require.NoError(t, err)
			t.Cleanup(func() { _ = c.Close() })
			assert.Equal(t, f, c.Format())
			ctx := t.Context()

			defs, err := c.ListTools(ctx)
			require.NoError(t, err)
			require.Len(t, defs, 5)
			add := toolID(t, defs, "Math_Add")
			for _, d := range defs {
				if d.Name == "Math_Add" {
					assert.Contains(t, string(d.InputSchema.Parameters), `"a"`, "the schema as the server published it")
				}
			}
			_, err = export.New(defs, nil)
			require.NoError(t, err, "every format's catalog makes a toolset")

			sum, err := client.CallAs[float64](ctx, c, add, addInput{A: 1, B: 2}, nil)
			require.NoError(t, err)
			assert.Equal(t, 3.0, sum)

			res, err := c.Call(ctx, toolID(t, defs, "Echo_Say"), map[string]any{"text": "hi"}, nil)
			require.NoError(t, err)
			assert.JSONEq(t, `"hi"`, string(res.Value))
			text, ok := client.ModelText(res, err)
			assert.True(t, ok)
			assert.Equal(t, "hi", text)

			res, err = c.Call(ctx, toolID(t, defs, "Flaky_Fail"), nil, &client.CallOptions{CallID: "c-fail"})
			var te *otc.ToolError
			require.ErrorAs(t, err, &te)
			assert.Equal(t, "The backend is down", te.Message)
			assert.True(t, te.CanRetry)
			assert.Equal(t, 500*time.Millisecond, te.RetryAfter)
			assert.Equal(t, "Try the mirror.", te.AdditionalPromptContent)
			require.NotNil(t, res, "a tool error comes with its Result")
			assert.Equal(t, "c-fail", res.CallID)

			_, err = c.Call(ctx, add, map[string]any{"a": "one", "b": 2}, nil)
			var oe *otc.Error
			require.ErrorAs(t, err, &oe)
			assert.Equal(t, otc.CodeInvalidInput, oe.Code)
			assert.Contains(t, oe.ParameterErrors, "a")
			text, ok = client.ModelText(nil, err)
			assert.True(t, ok)
			assert.Contains(t, text, "a:")

			require.NoError(t, c.Health(ctx))
		})
	}
}

// TestCallIDIsTheIdempotencyKey: a call sent twice with one call id runs
// its tool once on an otc server, over every format that carries it.
func TestCallIDIsTheIdempotencyKey(t *testing.T) {
	urls, runs, _ := formatServer(t, nil)
	for _, f := range []client.Format{client.FormatOTC, client.FormatMCP, client.FormatA2A} {
		t.Run(string(f), func(t *testing.T) {
			c, err := client.New(urls[f], &client.Options{Format: f})
			require.NoError(t, err)
			defs, err := c.ListTools(t.Context())
			require.NoError(t, err)
			hit := toolID(t, defs, "Count_Hit")
			before := runs.hits.Load()
			id := otc.NewCallID()
			first, err := c.Call(t.Context(), hit, nil, &client.CallOptions{CallID: id})
			require.NoError(t, err)
			again, err := c.Call(t.Context(), hit, nil, &client.CallOptions{CallID: id})
			require.NoError(t, err)
			assert.JSONEq(t, string(first.Value), string(again.Value), "the first answer, again")
			assert.Equal(t, before+1, runs.hits.Load(), "the tool ran once")
		})
	}
}

// TestRateLimitEveryFormat: a rate-limited call is an *otc.Error with
// CodeRateLimited and the server's wait, over every format.
func TestRateLimitEveryFormat(t *testing.T) {
	for _, f := range allFormats {
		t.Run(string(f), func(t *testing.T) {
			limit, err := ratelimit.New(&ratelimit.Options{All: ratelimit.PerMinute(1)})
			require.NoError(t, err)
			urls, _, _ := formatServer(t, []otc.Middleware{limit})
			c, err := client.New(urls[f], &client.Options{Format: f})
			require.NoError(t, err)
			defs, err := c.ListTools(t.Context())
			require.NoError(t, err)
			add := toolID(t, defs, "Math_Add")
			_, err = c.Call(t.Context(), add, addInput{A: 1}, nil)
			require.NoError(t, err)
			_, err = c.Call(t.Context(), add, addInput{A: 1}, nil)
			var oe *otc.Error
			require.ErrorAs(t, err, &oe)
			assert.Equal(t, otc.CodeRateLimited, oe.Code, "%v", err)
			assert.Greater(t, oe.RetryAfter, 30*time.Second, "most of a minute: %v", err)
			text, ok := client.ModelText(nil, err)
			assert.True(t, ok)
			assert.Contains(t, text, "This may succeed if tried again after")
		})
	}
}

// TestMCPProgressAndCancel: progress reaches the call's callback, and
// cancelling the call's context stops the tool, over HTTP and stdio.
func TestMCPProgressAndCancel(t *testing.T) {
	urls, runs, _ := formatServer(t, nil)
	httpClient, err := client.New(urls[client.FormatMCP], &client.Options{Format: client.FormatMCP})
	require.NoError(t, err)
	cases := map[string]struct {
		c    *client.Client
		runs *toolRuns
	}{"http": {httpClient, runs}}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			ctx, cancel := context.WithCancel(t.Context())
			defer cancel()
			var mu sync.Mutex
			var got []client.Progress
			done := make(chan error, 1)
			go func() {
				_, err := tc.c.Call(ctx, "Slow_Wait", nil, &client.CallOptions{Progress: func(p client.Progress) {
					mu.Lock()
					got = append(got, p)
					mu.Unlock()
				}})
				done <- err
			}()
			select {
			case <-tc.runs.started:
			case <-time.After(5 * time.Second):
				t.Fatal("the tool did not start")
			}
			require.Eventually(t, func() bool { mu.Lock(); defer mu.Unlock(); return len(got) > 0 }, 5*time.Second, 10*time.Millisecond)
			mu.Lock()
			assert.Equal(t, client.Progress{Progress: 1, Total: 2, Message: "half way"}, got[0])
			mu.Unlock()
			cancel()
			select {
			case <-tc.runs.cancelled:
			case <-time.After(5 * time.Second):
				t.Fatal("the tool's context was not cancelled")
			}
			err := <-done
			assert.ErrorIs(t, err, context.Canceled)
		})
	}
}

// TestStdio: a server the client starts: its tools, a value, a tool
// error, progress, and a process that exits, whose stderr the error
// quotes.
func TestStdio(t *testing.T) {
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), stdioEnv+"=1")
	c, err := client.NewStdio(cmd, nil)
	require.NoError(t, err)
	t.Cleanup(func() { _ = c.Close() })
	assert.Equal(t, client.FormatMCP, c.Format())

	defs, err := c.ListTools(t.Context())
	require.NoError(t, err)
	assert.Len(t, defs, 5)
	sum, err := client.CallAs[float64](t.Context(), c, "Math_Add", addInput{A: 2, B: 3}, nil)
	require.NoError(t, err)
	assert.Equal(t, 5.0, sum)
	_, err = c.Call(t.Context(), "Flaky_Fail", nil, nil)
	var te *otc.ToolError
	require.ErrorAs(t, err, &te)
	assert.True(t, te.CanRetry)

	// A call given up once its progress came.
	var progressed atomic.Bool
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	_, err = c.Call(ctx, "Slow_Wait", nil, &client.CallOptions{Progress: func(p client.Progress) {
		progressed.Store(p.Message == "half way")
		cancel()
	}})
	assert.ErrorIs(t, err, context.Canceled)
	assert.True(t, progressed.Load())
	// The process still answers after a call was cancelled.
	_, err = c.ListTools(t.Context())
	require.NoError(t, err)
	require.NoError(t, c.Close())
	_, err = c.ListTools(t.Context())
	assert.ErrorContains(t, err, "exited")

	dying, err := client.NewStdio(exec.Command("sh", "-c", "echo the server cannot start: no config >&2; exit 3"), nil)
	require.NoError(t, err)
	_, err = dying.ListTools(t.Context())
	require.Error(t, err)
	assert.ErrorContains(t, err, "exit status 3")
	assert.ErrorContains(t, err, "no config")
	require.NoError(t, dying.Close())

	// A server that ignores the end of its input is killed after the grace.
	stubborn, err := client.NewStdio(exec.Command("sh", "-c", "trap '' TERM; exec sleep 60"), nil)
	require.NoError(t, err)
	start := time.Now()
	require.NoError(t, stubborn.Close())
	assert.Less(t, time.Since(start), client.DefaultStdioGrace+5*time.Second)
}

// TestDial: the format of a URL is found: a URL naming a format is that
// format, a server's root leads to its mounts, and a URL with nothing
// says what was tried.
func TestDial(t *testing.T) {
	urls, _, root := formatServer(t, nil)
	for want, u := range urls {
		c, err := client.Dial(t.Context(), u, nil)
		require.NoError(t, err, u)
		assert.Equal(t, want, c.Format(), u)
		assert.Equal(t, u, c.URL())
	}
	c, err := client.Dial(t.Context(), root, nil)
	require.NoError(t, err)
	assert.Equal(t, client.FormatOTC, c.Format(), "a root with every format: OTC, at its mount")
	assert.Equal(t, root+mount.PrefixOTC, c.URL())

	// A server that serves MCP alone, below its root.
	reg, _ := formatsRegistry(nil)
	mux := http.NewServeMux()
	mux.Handle("/mcp", mcp.NewHandler(reg, nil))
	only := httptest.NewServer(mux)
	t.Cleanup(only.Close)
	c, err = client.Dial(t.Context(), only.URL, nil)
	require.NoError(t, err)
	assert.Equal(t, client.FormatMCP, c.Format())
	assert.Equal(t, only.URL+"/mcp", c.URL())

	empty := httptest.NewServer(http.NotFoundHandler())
	t.Cleanup(empty.Close)
	_, err = client.Dial(t.Context(), empty.URL, nil)
	var nse *client.NoServerError
	require.ErrorAs(t, err, &nse)
	assert.Len(t, nse.Tried, 9)
	assert.Equal(t, client.Attempt{Format: client.FormatMCP, URL: empty.URL + "/sse"}, client.Attempt{Format: nse.Tried[6].Format, URL: nse.Tried[6].URL})
	assert.Equal(t, client.Attempt{Format: client.FormatA2A, URL: empty.URL + "/a2a"}, client.Attempt{Format: nse.Tried[8].Format, URL: nse.Tried[8].URL})
	assert.Contains(t, err.Error(), "mcp at "+empty.URL+"/mcp")
	assert.Contains(t, err.Error(), "404 Not Found")
}

// TestMCPRefusals: an MCP server's refusals over HTTP are *otc.Error of
// their class: 401 with the challenge's scope, 429 with its wait.
func TestMCPRefusals(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.Header.Get("Authorization") {
		case "":
			w.Header().Set("WWW-Authenticate", `Bearer error="insufficient_scope", scope="tools:call tools:list"`)
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusUnauthorized)
			_, _ = w.Write([]byte(`{"jsonrpc":"2.0","id":null,"error":{"code":-32001,"message":"Sign in first"}}`))
		default:
			w.Header().Set("Retry-After", "7")
			w.WriteHeader(http.StatusTooManyRequests)
		}
	}))
	t.Cleanup(srv.Close)
	c, err := client.New(srv.URL, &client.Options{Format: client.FormatMCP})
	require.NoError(t, err)
	_, err = c.ListTools(t.Context())
	var oe *otc.Error
	require.ErrorAs(t, err, &oe)
	assert.Equal(t, otc.CodeUnauthenticated, oe.Code)
	assert.Equal(t, "Sign in first", oe.Message)
	assert.Equal(t, "insufficient_scope", oe.Reason)
	assert.Equal(t, []string{"tools:call", "tools:list"}, oe.RequiredScopes)

	c, err = client.New(srv.URL, &client.Options{Format: client.FormatMCP, BearerToken: "t"})
	require.NoError(t, err)
	_, err = c.Call(t.Context(), "x", nil, nil)
	require.ErrorAs(t, err, &oe)
	assert.Equal(t, otc.CodeRateLimited, oe.Code)
	assert.Equal(t, 7*time.Second, oe.RetryAfter)
	_, again := errors.AsType[*otc.ToolError](err)
	assert.False(t, again)
}

// askRegistry is a registry of Greet.Ask, which asks its user's name
// (otc.Elicit) and greets them, or says "declined"; tasks is its
// otc.Tool.Tasks.
func askRegistry(t *testing.T, tasks otc.TaskSupport) *otc.Registry {
	t.Helper()
	reg := otc.NewRegistry(nil)
	require.NoError(t, otc.Register(reg, otc.Tool{ID: "Greet.Ask", Version: "1.0.0", Description: "Asks a name.", Tasks: tasks},
		func(ctx context.Context, _ struct{}) (string, error) {
			var who struct {
				Name string `json:"name" jsonschema:"description=Your name."`
			}
			action, err := otc.Elicit(ctx, "Who are you?", &who)
			if err != nil {
				return "", err
			}
			if action != otc.ElicitAccept {
				return "declined", nil
			}
			return "hello " + who.Name, nil
		}))
	return reg
}

// TestMCPQuestions: a tool that asks its user gets the Elicit handler's
// answer; without one, the client declares no elicitation and the tool
// is told it cannot ask.
func TestMCPQuestions(t *testing.T) {
	reg := askRegistry(t, otc.TasksForbidden)
	srv := httptest.NewServer(mcp.NewHandler(reg, nil))
	t.Cleanup(srv.Close)
	for _, version := range []string{mcp.Version20251125, mcp.Version20260728} {
		t.Run(version, func(t *testing.T) {
			var asked atomic.Value
			c, err := client.New(srv.URL, &client.Options{Format: client.FormatMCP, MCPVersion: version, Handlers: &client.Handlers{
				Elicit: func(_ context.Context, req *client.ElicitRequest) (*client.ElicitResult, error) {
					asked.Store(req.Message)
					return &client.ElicitResult{Action: "accept", Content: map[string]any{"name": "Ada"}}, nil
				},
			}})
			require.NoError(t, err)
			t.Cleanup(func() { _ = c.Close() }) // its session's stream, before the server closes
			res, err := c.Call(t.Context(), "Greet_Ask", nil, nil)
			require.NoError(t, err)
			assert.JSONEq(t, `"hello Ada"`, string(res.Value))
			assert.Equal(t, "Who are you?", asked.Load())

			plain, err := client.New(srv.URL, &client.Options{Format: client.FormatMCP, MCPVersion: version})
			require.NoError(t, err)
			_, err = plain.Call(t.Context(), "Greet_Ask", nil, nil)
			require.Error(t, err)
			assert.Contains(t, err.Error(), "elicitation", "the server says what the client lacks")
		})
	}
}

// TestA2A03: an agent whose card is A2A 0.3's (url, preferredTransport,
// protocolVersion) is spoken to in 0.3: message/send with kind-tagged
// parts, whose answers (the task or message itself, lower-case states)
// the client reads. The card here is written by hand, and the JSON-RPC
// answers are the a2a package's 0.3 ones.
func TestA2A03(t *testing.T) {
	reg, _ := formatsRegistry(nil)
	mux := http.NewServeMux()
	mount.All(mux, reg, nil)
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	resp, err := http.Get(srv.URL + mount.PrefixA2A + "/.well-known/agent-card.json")
	require.NoError(t, err)
	var card map[string]any
	require.NoError(t, json.NewDecoder(resp.Body).Decode(&card))
	resp.Body.Close()
	delete(card, "supportedInterfaces")
	card["url"], card["preferredTransport"], card["protocolVersion"] = srv.URL+mount.PrefixA2A, "JSONRPC", "0.3.0"
	cardSrv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/.well-known/agent-card.json" {
			_ = json.NewEncoder(w).Encode(card)
			return
		}
		// The agent's JSON-RPC, as the card's url names, on this origin.
		r.URL.Path = mount.PrefixA2A
		mux.ServeHTTP(w, r)
	}))
	t.Cleanup(cardSrv.Close)
	card["url"] = cardSrv.URL

	var versions []string
	c, err := client.New(cardSrv.URL, &client.Options{Format: client.FormatA2A, HTTPClient: doerFunc(func(r *http.Request) (*http.Response, error) {
		if r.Method == http.MethodPost {
			var m struct {
				Method string `json:"method"`
			}
			b, _ := io.ReadAll(r.Body)
			_ = json.Unmarshal(b, &m)
			versions = append(versions, m.Method+" "+r.Header.Get("A2A-Version"))
			r.Body = io.NopCloser(bytes.NewReader(b))
		}
		return http.DefaultClient.Do(r)
	})})
	require.NoError(t, err)
	defs, err := c.ListTools(t.Context())
	require.NoError(t, err)
	sum, err := client.CallAs[float64](t.Context(), c, toolID(t, defs, "Math_Add"), addInput{A: 2, B: 2}, nil)
	require.NoError(t, err)
	assert.Equal(t, 4.0, sum)
	_, err = c.Call(t.Context(), toolID(t, defs, "Flaky_Fail"), nil, nil)
	var te *otc.ToolError
	require.ErrorAs(t, err, &te)
	assert.True(t, te.CanRetry)
	assert.Equal(t, []string{"message/send ", "message/send "}, versions, "0.3's method, without 1.0's header")
}
