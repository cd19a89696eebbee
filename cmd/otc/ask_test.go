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
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/otcgo/otc"
	"github.com/otcgo/otc/mcp"
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

// askFixture serves tools that ask, and tools that run as tasks.
type askFixture struct {
	url     string
	polls   atomic.Int32    // tasks/get requests
	cancels atomic.Int32    // tasks/cancel requests
	stopped chan error      // how Job.Forever ended
	started chan struct{}   // Job.Forever runs
	answers chan refundForm // what Shop.Refund was told
}

func serveAsking(t *testing.T) *askFixture {
	t.Helper()
	f := &askFixture{stopped: make(chan error, 4), started: make(chan struct{}, 4), answers: make(chan refundForm, 4)}
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
		select {
		case <-time.After(time.Second):
			return "done", nil
		case <-ctx.Done():
			return "", ctx.Err()
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
	h := mcp.NewHandler(reg, &mcp.Options{Tasks: &tasks.Options{PollInterval: 100 * time.Millisecond}})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.Header.Get("Mcp-Method") {
		case "tasks/get":
			f.polls.Add(1)
		case "tasks/cancel":
			f.cancels.Add(1)
		}
		h.ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)
	f.url = srv.URL
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
		before := f.polls.Load()
		code, out, errOut := otcTerm(context.Background(), terminalFeatures{}, "", "call", "--mcp", "--task", url, "Job_Long")
		require.Equal(t, exitOK, code, errOut)
		assert.Equal(t, "done\n", out)
		assert.Regexp(t, `^otc call: task [0-9a-f-]{36}: working\notc call: task [0-9a-f-]{36}: completed\n$`, errOut)
		polls := f.polls.Load() - before
		assert.GreaterOrEqual(t, polls, int32(5), "about a second at the 100 ms the server suggests")
		assert.LessOrEqual(t, polls, int32(12), "pollIntervalMs is respected")
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
	t.Run("interrupted", func(t *testing.T) {
		ctx, cancel := context.WithCancel(context.Background())
		go func() {
			<-f.started
			time.Sleep(150 * time.Millisecond)
			cancel() // Ctrl-C
		}()
		code, out, errOut := otcTerm(ctx, terminalFeatures{}, "", "call", "--mcp", "--task", url, "Job_Forever")
		assert.Equal(t, exitInterrupted, code)
		assert.Empty(t, out)
		assert.Regexp(t, `otc call: interrupted; task [0-9a-f-]{36} cancelled\n$`, errOut)
		assert.ErrorIs(t, recvOrFail(t, f.stopped), context.Canceled, "tasks/cancel stopped the tool")
	})
	t.Run("not_a_task_tool", func(t *testing.T) {
		code, out, errOut := otcTerm(context.Background(), onTerminal, "d\n", "call", "--mcp", "--task", url, "Shop_Refund")
		require.Equal(t, exitOK, code, errOut)
		assert.Equal(t, "not refunded (decline)\n", out, "a tool that runs no task answers at 2026-07-28 in rounds")
		recvOrFail(t, f.answers)
	})
	t.Run("needs_mcp", func(t *testing.T) {
		// An OTC server: --task has no meaning there.
		code, _, errOut := otcTerm(context.Background(), terminalFeatures{}, "", "call", "--task", serveTools(t, ""), "Calculator.Add", "a=1", "b=2")
		assert.Equal(t, exitBadInput, code)
		assert.Contains(t, errOut, "--task is for MCP servers")
	})
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
