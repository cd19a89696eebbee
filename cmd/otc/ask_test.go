package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/otcgo/otc"
	"github.com/otcgo/otc/a2a"
	"github.com/otcgo/otc/mcp"
	"github.com/otcgo/otc/mount"
	"github.com/otcgo/otc/tasks"
)

// The questions of a tool over MCP, answered on a terminal or refused,
// and otc call --task, against a registry served over real HTTP.

type refundForm struct {
	Confirm bool   `json:"confirm" jsonschema:"description=Refund the order?"`
	Reason  string `json:"reason,omitempty" jsonschema:"description=Why.,enum=damaged,enum=late,enum=other"`
	Copies  int    `json:"copies,omitempty" jsonschema:"description=Receipts to send.,default=1"`
}

type nameForm struct {
	Name string `json:"name" jsonschema:"description=Your name."`
}

// askFixture serves tools that ask, and tools that run as tasks, over
// MCP (at url) and A2A (at a2a).
type askFixture struct {
	url, a2a string
	polls    atomic.Int32    // tasks/get and GetTask requests
	cancels  atomic.Int32    // tasks/cancel and CancelTask requests
	stopped  chan error      // how Job.Forever ended
	started  chan struct{}   // Job.Forever runs
	answers  chan refundForm // what Shop.Refund was told
	// hold, when set, is closed by the next read of a task (tasks/get,
	// GetTask), which then waits for its client to give up.
	hold atomic.Pointer[chan struct{}]
	// polled hears of each read of a task, and pollTimes keeps when each
	// came: Job.Long ends after the fifth of its life.
	polled    chan struct{}
	mu        sync.Mutex
	pollTimes []time.Time
}

// pollsSince returns the times of the reads of tasks from the nth on.
func (f *askFixture) pollsSince(n int) []time.Time {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]time.Time(nil), f.pollTimes[n:]...)
}

// holdNextPoll makes the next read of a task wait until its client gives
// up, and returns a channel closed once the read is held.
func (f *askFixture) holdNextPoll() <-chan struct{} {
	held := make(chan struct{})
	f.hold.Store(&held)
	return held
}

func serveAsking(t *testing.T) *askFixture {
	t.Helper()
	f := &askFixture{stopped: make(chan error, 4), started: make(chan struct{}, 4), answers: make(chan refundForm, 4), polled: make(chan struct{}, 64)}
	reg := otc.NewRegistry(nil)
	tool := func(id string, tasks otc.TaskSupport) otc.Tool {
		return otc.Tool{ID: id, Version: "1.0.0", Description: "A tool of the tests: " + id + ".", Tasks: tasks, Timeout: time.Minute}
	}
	require.NoError(t, otc.Register(reg, tool("Shop.Refund", otc.TasksForbidden), func(ctx context.Context, _ struct{}) (string, error) {
		var form refundForm
		action, err := otc.Elicit(ctx, "Refund 250 € to order A-1001?", &form)
		if err != nil {
			return "", err
		}
		f.answers <- form
		if action != otc.ElicitAccept || !form.Confirm {
			return "not refunded (" + string(action) + ")", nil
		}
		return fmt.Sprintf("refunded: %s, %d receipts", form.Reason, form.Copies), nil
	}))
	require.NoError(t, otc.Register(reg, tool("Job.Long", otc.TasksOptional), func(ctx context.Context, _ struct{}) (string, error) {
		// Done once its task has been read five times: an event, not a
		// time, however busy the machine.
		for {
			select {
			case <-f.polled:
			default:
				for range 5 {
					select {
					case <-f.polled:
					case <-ctx.Done():
						return "", ctx.Err()
					}
				}
				return "done", nil
			}
		}
	}))
	require.NoError(t, otc.Register(reg, tool("Job.Ask", otc.TasksOptional), func(ctx context.Context, _ struct{}) (string, error) {
		var who nameForm
		if _, err := otc.Elicit(ctx, "Who runs this job?", &who); err != nil {
			return "", err
		}
		return "run by " + who.Name, nil
	}))
	greet := tool("Job.Greet", otc.TasksRequired)
	greet.AskBeforeTask = time.Second
	require.NoError(t, otc.Register(reg, greet, func(ctx context.Context, _ struct{}) (string, error) {
		var who nameForm
		if _, err := otc.Elicit(ctx, "Your name?", &who); err != nil {
			return "", err
		}
		return "Hello, " + who.Name, nil
	}))
	require.NoError(t, otc.Register(reg, tool("Job.Forever", otc.TasksOptional), func(ctx context.Context, _ struct{}) (string, error) {
		f.started <- struct{}{}
		<-ctx.Done()
		f.stopped <- ctx.Err()
		return "", ctx.Err()
	}))
	mux := http.NewServeMux()
	mount.All(mux, reg, &mount.Options{
		MCP: &mcp.Options{Tasks: &tasks.Options{PollInterval: 100 * time.Millisecond}},
		A2A: &a2a.Options{Tasks: &tasks.Options{}},
	})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		method := r.Header.Get("Mcp-Method")
		if strings.HasPrefix(r.URL.Path, mount.PrefixA2A) && r.Method == http.MethodPost {
			body, _ := io.ReadAll(r.Body)
			r.Body = io.NopCloser(bytes.NewReader(body))
			var m struct{ Method string }
			_ = json.Unmarshal(body, &m)
			method = map[string]string{"GetTask": "tasks/get", "CancelTask": "tasks/cancel"}[m.Method]
		}
		switch method {
		case "tasks/get":
			f.polls.Add(1)
			f.mu.Lock()
			f.pollTimes = append(f.pollTimes, time.Now())
			f.mu.Unlock()
			select {
			case f.polled <- struct{}{}:
			default:
			}
			if held := f.hold.Swap(nil); held != nil {
				close(*held)
				// Read to the end, so that the server sees the client
				// go away and ends the request's context.
				_, _ = io.Copy(io.Discard, r.Body)
				<-r.Context().Done()
				return
			}
		case "tasks/cancel":
			f.cancels.Add(1)
		}
		mux.ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)
	f.url, f.a2a = srv.URL+mount.PrefixMCP, srv.URL+mount.PrefixA2A
	return f
}

// otcTerm runs the command with the terminal features t, and returns its
// exit code, stdout and stderr.
func otcTerm(ctx context.Context, t terminalFeatures, stdin string, args ...string) (int, string, string) {
	var out, errOut bytes.Buffer
	code := runOn(ctx, args, strings.NewReader(stdin), &out, &errOut, func(string) string { return "" }, t)
	return code, out.String(), errOut.String()
}

var onTerminal = terminalFeatures{prompt: true}

func TestCallElicitationPrompt(t *testing.T) {
	f := serveAsking(t)
	url := f.url

	t.Run("accept", func(t *testing.T) {
		code, out, errOut := otcTerm(context.Background(), onTerminal, "a\nmaybe\nyes\n\n2\n", "call", "--mcp", url, "Shop_Refund")
		require.Equal(t, exitOK, code, errOut)
		assert.Equal(t, "refunded: late, 1 receipts\n", out)
		assert.Contains(t, errOut, "The tool asks: Refund 250 € to order A-1001?")
		assert.Contains(t, errOut, "confirm (boolean, required): Refund the order?")
		assert.Contains(t, errOut, "copies (integer) default 1: Receipts to send.")
		assert.Contains(t, errOut, "reason (string) [1) damaged, 2) late, 3) other]: Why.")
		assert.Contains(t, errOut, "Answer? [a]ccept, [d]ecline, [c]ancel:")
		assert.Contains(t, errOut, "answer yes or no", "a value that does not fit is asked again")
		assert.Equal(t, refundForm{Confirm: true, Reason: "late", Copies: 1}, recvOrFail(t, f.answers))
	})
	t.Run("decline", func(t *testing.T) {
		code, out, errOut := otcTerm(context.Background(), onTerminal, "d\n", "call", "--mcp", url, "Shop_Refund")
		require.Equal(t, exitOK, code, errOut)
		assert.Equal(t, "not refunded (decline)\n", out)
		recvOrFail(t, f.answers)
	})
	t.Run("end_of_input_cancels", func(t *testing.T) {
		code, out, _ := otcTerm(context.Background(), onTerminal, "", "call", "--mcp", url, "Shop_Refund")
		require.Equal(t, exitOK, code)
		assert.Equal(t, "not refunded (cancel)\n", out)
		recvOrFail(t, f.answers)
	})
	t.Run("no_terminal", func(t *testing.T) {
		start := time.Now()
		code, out, errOut := otcTerm(context.Background(), terminalFeatures{}, "a\nyes\n", "call", "--mcp", url, "Shop_Refund")
		assert.Equal(t, exitInput, code)
		assert.Empty(t, out)
		assert.Equal(t, "otc call: the tool asked its user a question (\"Refund 250 € to order A-1001?\"), and otc cannot answer: standard input is not a terminal; run otc call on a terminal without --json to answer it\n", errOut)
		assert.Less(t, time.Since(start), 5*time.Second, "it fails at once rather than wait")
		assert.Empty(t, f.answers, "the tool did not go on")
	})
	t.Run("json", func(t *testing.T) {
		code, out, errOut := otcTerm(context.Background(), onTerminal, "a\nyes\n", "call", "--mcp", "--json", url, "Shop_Refund")
		assert.Equal(t, exitInput, code)
		assert.Empty(t, out)
		assert.Contains(t, errOut, "--json was given")
	})
}

func recvOrFail[T any](t *testing.T, ch <-chan T) T {
	t.Helper()
	select {
	case v := <-ch:
		return v
	case <-time.After(10 * time.Second):
		t.Fatal("nothing came")
	}
	var zero T
	return zero
}

func TestCallTask(t *testing.T) {
	f := serveAsking(t)
	url := f.url

	t.Run("polls_to_the_end", func(t *testing.T) {
		before := int(f.polls.Load())
		code, out, errOut := otcTerm(context.Background(), terminalFeatures{}, "", "call", "--mcp", "--task", url, "Job_Long")
		require.Equal(t, exitOK, code, errOut)
		assert.Equal(t, "done\n", out)
		assert.Regexp(t, `^otc call: task [0-9a-f-]{36}: working\notc call: task [0-9a-f-]{36}: completed\n$`, errOut)
		polls := f.pollsSince(before)
		assert.GreaterOrEqual(t, len(polls), 5, "read until it ended")
		for i := 1; i < len(polls); i++ {
			assert.GreaterOrEqual(t, polls[i].Sub(polls[i-1]), 90*time.Millisecond, "the 100 ms the server suggests (pollIntervalMs) is respected")
		}
	})
	t.Run("progress_on_a_terminal", func(t *testing.T) {
		code, out, errOut := otcTerm(context.Background(), terminalFeatures{spinner: true}, "", "call", "--mcp", "--task", url, "Job_Long")
		require.Equal(t, exitOK, code, errOut)
		assert.Equal(t, "done\n", out)
		assert.Contains(t, errOut, "\r\x1b[Ktask ")
		assert.Contains(t, errOut, ": working ")
		assert.True(t, strings.HasSuffix(errOut, "\r\x1b[K"), "the status line is cleared: %q", errOut)
	})
	t.Run("json", func(t *testing.T) {
		code, out, errOut := otcTerm(context.Background(), terminalFeatures{}, "", "call", "--mcp", "--task", "--json", url, "Job_Long")
		require.Equal(t, exitOK, code, errOut)
		var got struct {
			Success bool   `json:"success"`
			Value   string `json:"value"`
		}
		require.NoError(t, json.Unmarshal([]byte(out), &got), out)
		assert.True(t, got.Success)
		assert.Equal(t, "done", got.Value)
	})
	t.Run("task_asks", func(t *testing.T) {
		code, out, errOut := otcTerm(context.Background(), onTerminal, "a\nAda\n", "call", "--mcp", "--task", url, "Job_Ask")
		require.Equal(t, exitOK, code, errOut)
		assert.Equal(t, "run by Ada\n", out)
		assert.Contains(t, errOut, "The tool asks: Who runs this job?")
		assert.Contains(t, errOut, "input_required")
	})
	t.Run("rounds_then_task", func(t *testing.T) {
		code, out, errOut := otcTerm(context.Background(), onTerminal, "a\nAlice\n", "call", "--mcp", "--task", url, "Job_Greet")
		require.Equal(t, exitOK, code, errOut)
		assert.Equal(t, "Hello, Alice\n", out)
		assert.Contains(t, errOut, "The tool asks: Your name?")
	})
	t.Run("task_asks_without_terminal", func(t *testing.T) {
		before := f.cancels.Load()
		code, out, errOut := otcTerm(context.Background(), terminalFeatures{}, "", "call", "--mcp", "--task", url, "Job_Ask")
		assert.Equal(t, exitInput, code)
		assert.Empty(t, out)
		assert.Contains(t, errOut, "otc call: the tool asked its user a question (\"Who runs this job?\"), and otc cannot answer: standard input is not a terminal")
		assert.Equal(t, before+1, f.cancels.Load(), "the task is cancelled rather than left waiting")
	})
	t.Run("not_a_task_tool", func(t *testing.T) {
		code, out, errOut := otcTerm(context.Background(), onTerminal, "d\n", "call", "--mcp", "--task", url, "Shop_Refund")
		require.Equal(t, exitOK, code, errOut)
		assert.Equal(t, "not refunded (decline)\n", out, "a tool that runs no task answers at 2026-07-28 in rounds")
		recvOrFail(t, f.answers)
	})
	t.Run("needs_mcp_or_a2a", func(t *testing.T) {
		// An OTC server: --task has no meaning there.
		code, _, errOut := otcTerm(context.Background(), terminalFeatures{}, "", "call", "--task", serveTools(t, ""), "Calculator.Add", "a=1", "b=2")
		assert.Equal(t, exitBadInput, code)
		assert.Contains(t, errOut, "--task is for MCP servers and A2A agents")
	})
}

// TestCallTaskInterrupted: Ctrl-C at any moment of a task's life, over
// MCP and A2A, cancels the task, says so and exits 130. Each interrupt
// lands on an event, not after a sleep: once the task is named, inside
// the first read of the task (held by the server until the client gives
// up), and while the user is asked a question.
func TestCallTaskInterrupted(t *testing.T) {
	f := serveAsking(t)
	for _, format := range []struct{ flag, url string }{{"--mcp", f.url}, {"--a2a", f.a2a}} {
		// run runs otc call --task on tool, interrupted when at(cancel)
		// calls cancel.
		run := func(t *testing.T, tool string, in io.Reader, at func(e *cli, cancel func())) (int, string, string) {
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			var out, errOut bytes.Buffer
			e := &cli{stdin: in, stdout: &out, stderr: &errOut, getenv: func(string) string { return "" }, term: onTerminal}
			at(e, cancel)
			code := e.call(ctx, []string{"--task", format.flag, format.url, tool})
			return code, out.String(), errOut.String()
		}
		// cancelled asserts the outcome of an interrupted call whose task
		// was cancelled at its server.
		cancelled := func(t *testing.T, code int, out, errOut string, cancels int32) {
			t.Helper()
			assert.Equal(t, exitInterrupted, code, errOut)
			assert.Empty(t, out)
			assert.Regexp(t, `otc call: interrupted; task [0-9a-zA-Z-]+ cancelled\n$`, errOut)
			assert.Equal(t, cancels+1, f.cancels.Load(), "the task was cancelled at its server, once")
		}
		t.Run(format.flag[2:], func(t *testing.T) {
			t.Run("once_named", func(t *testing.T) {
				before := f.cancels.Load()
				code, out, errOut := run(t, "Job_Forever", strings.NewReader(""), func(e *cli, cancel func()) {
					e.taskNamed = func(string) { cancel() }
				})
				cancelled(t, code, out, errOut, before)
				assert.ErrorIs(t, recvOrFail(t, f.stopped), context.Canceled, "cancelling stopped the tool")
				recvOrFail(t, f.started)
			})
			t.Run("in_the_first_poll", func(t *testing.T) {
				before, polls := f.cancels.Load(), f.polls.Load()
				code, out, errOut := run(t, "Job_Forever", strings.NewReader(""), func(_ *cli, cancel func()) {
					held := f.holdNextPoll()
					go func() { <-held; cancel() }()
				})
				cancelled(t, code, out, errOut, before)
				assert.Equal(t, polls+1, f.polls.Load(), "interrupted in the first poll, which was the only one")
				assert.ErrorIs(t, recvOrFail(t, f.stopped), context.Canceled, "cancelling stopped the tool")
				recvOrFail(t, f.started)
			})
			t.Run("while_asking", func(t *testing.T) {
				before := f.cancels.Load()
				asked := make(chan struct{})
				in := &blockingReader{reading: asked, end: make(chan struct{})}
				t.Cleanup(func() { close(in.end) })
				code, out, errOut := run(t, "Job_Ask", in, func(_ *cli, cancel func()) {
					go func() { <-asked; cancel() }()
				})
				cancelled(t, code, out, errOut, before)
				assert.Contains(t, errOut, "The tool asks: Who runs this job?")
			})
		})
	}
}

// TestCallInterrupted: Ctrl-C during a call that runs no task ends it
// (the tool is told, over MCP) and exits 130 saying so.
func TestCallInterrupted(t *testing.T) {
	f := serveAsking(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() { <-f.started; cancel() }()
	code, out, errOut := otcTerm(ctx, terminalFeatures{}, "", "call", "--mcp", f.url, "Job_Forever")
	assert.Equal(t, exitInterrupted, code, errOut)
	assert.Empty(t, out)
	assert.Equal(t, "otc call: interrupted\n", errOut)
	assert.ErrorIs(t, recvOrFail(t, f.stopped), context.Canceled, "the tool was told")
}

// blockingReader is a terminal whose user never answers: its first Read
// closes reading, and every Read waits until the test ends.
type blockingReader struct {
	reading, end chan struct{}
	once         sync.Once
}

func (r *blockingReader) Read([]byte) (int, error) {
	r.once.Do(func() { close(r.reading) })
	<-r.end
	return 0, io.EOF
}

// TestCallSamplingDeclined: a server that sends a sampling request on the
// call's stream, though otc declared no sampling, gets an error naming
// why, and the call goes on.
func TestCallSamplingDeclined(t *testing.T) {
	replies := make(chan []byte, 1)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		switch {
		case bytes.Contains(body, []byte(`"method":"server/discover"`)):
			w.Header().Set("Content-Type", "application/json")
			fmt.Fprint(w, `{"jsonrpc":"2.0","id":1,"error":{"code":-32601,"message":"Method not found"}}`)
			return
		case bytes.Contains(body, []byte(`"method":"initialize"`)):
			assert.NotContains(t, string(body), "sampling", "otc declares no sampling")
			w.Header().Set("Content-Type", "application/json")
			fmt.Fprint(w, `{"jsonrpc":"2.0","id":2,"result":{"protocolVersion":"2025-11-25","capabilities":{"tools":{}},"serverInfo":{"name":"fake","version":"1"}}}`)
			return
		case bytes.Contains(body, []byte(`"method":"notifications/`)):
			w.WriteHeader(http.StatusAccepted)
			return
		}
		if bytes.Contains(body, []byte(`"method":"tools/call"`)) {
			w.Header().Set("Content-Type", "text/event-stream")
			fmt.Fprint(w, "event: message\ndata: {\"jsonrpc\":\"2.0\",\"id\":\"s-1\",\"method\":\"sampling/createMessage\",\"params\":{\"messages\":[],\"maxTokens\":10}}\n\n")
			w.(http.Flusher).Flush()
			reply := <-replies
			replies <- reply
			fmt.Fprint(w, "event: message\ndata: {\"jsonrpc\":\"2.0\",\"id\":3,\"result\":{\"content\":[{\"type\":\"text\",\"text\":\"went on without\"}]}}\n\n")
			return
		}
		replies <- body
		w.WriteHeader(http.StatusAccepted)
	}))
	t.Cleanup(srv.Close)
	code, out, errOut := otcTerm(context.Background(), onTerminal, "", "call", "--mcp", srv.URL, "Writer", "{}")
	require.Equal(t, exitOK, code, errOut)
	assert.Equal(t, "went on without\n", out)
	var reply struct {
		ID    string `json:"id"`
		Error struct {
			Code    int    `json:"code"`
			Message string `json:"message"`
		} `json:"error"`
	}
	require.NoError(t, json.Unmarshal(<-replies, &reply))
	assert.Equal(t, "s-1", reply.ID)
	assert.Equal(t, -32601, reply.Error.Code)
	assert.Contains(t, reply.Error.Message, "no handler for sampling/createMessage")
}
