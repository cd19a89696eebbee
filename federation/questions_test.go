package federation_test

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/otcgo/otc"
	"github.com/otcgo/otc/client"
	"github.com/otcgo/otc/federation"
	"github.com/otcgo/otc/mount"
)

type nameAnswer struct {
	Name string `json:"name" jsonschema:"description=Your name."`
}

// TestFederation_Questions: a tool upstream asks its caller a question
// (elicitation) in the middle of a call; through the gateway, the
// question reaches the gateway's caller, whose answer goes back up, over
// an MCP upstream and an OTC one, for callers over MCP (the question on
// the call's stream, and in 2026-07-28's input_required rounds) and OTC.
// A caller that cannot answer gets an answer, not a wait.
func TestFederation_Questions(t *testing.T) {
	o := newOrigin(t)
	var asked atomic.Int64
	require.NoError(t, otc.Register(o.reg, otc.Tool{ID: "Greet.Ask", Version: "1.0.0", Description: "Asks your name, then greets you."},
		func(ctx context.Context, _ otc.NoOutput) (string, error) {
			asked.Add(1)
			var a nameAnswer
			action, err := otc.Elicit(ctx, "What is your name?", &a)
			if err != nil {
				return "", err
			}
			if action != otc.ElicitAccept {
				return "no name given", nil
			}
			return "hello " + a.Name, nil
		}))
	base := everyFormat(t, o)
	_, gw, _ := gateway(t, []federation.Upstream{
		{Name: "up_mcp", URL: base + mount.PrefixMCP, Format: client.FormatMCP},
		{Name: "up_otc", URL: base + mount.PrefixOTC, Format: client.FormatOTC},
	}, nil)
	answer := &client.Handlers{Elicit: func(_ context.Context, req *client.ElicitRequest) (*client.ElicitResult, error) {
		if req.Message != "What is your name?" {
			return nil, errors.New("unexpected question: " + req.Message)
		}
		return &client.ElicitResult{Action: "accept", Content: map[string]any{"name": "Ada"}}, nil
	}}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	// Over an MCP upstream, a caller over MCP answers on the call's
	// stream (2025-11-25) or in input_required rounds (2026-07-28).
	for _, v := range []string{"2025-11-25", "2026-07-28"} {
		t.Run("mcp-"+v, func(t *testing.T) {
			cl, err := client.New(gw+mount.PrefixMCP, &client.Options{Format: client.FormatMCP, MCPVersion: v, Handlers: answer})
			require.NoError(t, err)
			defer cl.Close()
			text, err := cl.CallText(ctx, "up_mcp_Greet_Ask", nil)
			require.NoError(t, err)
			assert.Equal(t, "hello Ada", text)
		})
	}

	// A caller over OTC gets the question as OTC carries it (a retryable
	// tool error naming it, q1) and calls again with the answer in
	// input_responses: the gateway runs the upstream call again, and its
	// question is answered from them.
	t.Run("otc", func(t *testing.T) {
		call := func(ctxJSON string) string {
			body := `{"$schema":"otc://1.0","request":{"tool_id":"up_mcp.Greet_Ask","call_id":"` + otc.NewCallID() + `","input":{}` + ctxJSON + `}}`
			resp, err := http.Post(gw+mount.PrefixOTC+"/tools/call", "application/json", strings.NewReader(body))
			require.NoError(t, err)
			defer resp.Body.Close()
			b, err := io.ReadAll(resp.Body)
			require.NoError(t, err)
			require.Equal(t, http.StatusOK, resp.StatusCode, string(b))
			return string(b)
		}
		first := call("")
		assert.Contains(t, first, `"success":false`)
		assert.Contains(t, first, "What is your name?")
		assert.Contains(t, first, `\"q1\"`)
		again := call(`,"context":{"input_responses":{"q1":{"action":"accept","content":{"name":"Ada"}}}}`)
		assert.Contains(t, again, `"value":"hello Ada"`)
	})

	// OTC has no way to ask its caller in the middle of a call: an OTC
	// upstream's question comes back as its tool error (naming the
	// question, retryable), whatever the gateway's caller could answer.
	t.Run("otc-upstream", func(t *testing.T) {
		cl, err := client.New(gw+mount.PrefixMCP, &client.Options{Format: client.FormatMCP, Handlers: answer})
		require.NoError(t, err)
		defer cl.Close()
		_, err = cl.Call(ctx, "up_otc_Greet_Ask", nil, nil)
		var te *otc.ToolError
		require.ErrorAs(t, err, &te)
		assert.Contains(t, te.Message, "What is your name?")
	})

	// An upstream over stdio asks on the process's stream, which names no
	// call: the question is the call's under way, and reaches its caller
	// as over HTTP, on every format that carries it.
	t.Run("stdio", func(t *testing.T) {
		up := stdioUpstream(t, "up_stdio")
		// 2025-11-25, whose server asks with requests of its own, as the
		// MCP servers people run do (2026-07-28 asks in rounds of the
		// call, which name it).
		up.Client = &client.Options{MCPVersion: "2025-11-25"}
		_, gw2, _ := gateway(t, []federation.Upstream{up}, nil)
		for _, v := range []string{"2025-11-25", "2026-07-28"} {
			cl, err := client.New(gw2+mount.PrefixMCP, &client.Options{Format: client.FormatMCP, MCPVersion: v, Handlers: answer})
			require.NoError(t, err)
			text, err := cl.CallText(ctx, "up_stdio_Process_Ask", nil)
			require.NoError(t, err, v)
			assert.Equal(t, "hello Ada", text, v)
			_ = cl.Close()
		}
		// A caller that cannot answer gets the documented refusal: over
		// OTC, the question as a tool error naming it, to answer in a
		// call again.
		body := `{"$schema":"otc://1.0","request":{"tool_id":"up_stdio.Process_Ask","call_id":"` + otc.NewCallID() + `","input":{}}}`
		resp, err := http.Post(gw2+mount.PrefixOTC+"/tools/call", "application/json", strings.NewReader(body))
		require.NoError(t, err)
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		assert.Contains(t, string(b), "What is your name?")
		assert.Contains(t, string(b), `\"q1\"`)
		assert.NotContains(t, string(b), "no wire format serves this call")
	})

	// Without a handler the caller cannot answer: the call ends, with an
	// error that says so, at once.
	cl, err := client.New(gw+mount.PrefixMCP, &client.Options{Format: client.FormatMCP, MCPVersion: "2025-11-25"})
	require.NoError(t, err)
	defer cl.Close()
	start := time.Now()
	_, err = cl.Call(ctx, "up_mcp_Greet_Ask", nil, nil)
	require.Error(t, err)
	assert.Less(t, time.Since(start), 5*time.Second)
}

// TestFederation_Tasks: a caller that takes tasks (MCP 2026-07-28 with the
// tasks extension) runs a remote call as a task of the gateway: it is
// answered at once with a task, polls it, and gets the upstream's result;
// cancelling it cancels the upstream call.
func TestFederation_Tasks(t *testing.T) {
	o := newOrigin(t)
	_, gw, _ := gateway(t, []federation.Upstream{{Name: "calc", URL: everyFormat(t, o) + mount.PrefixMCP, Format: client.FormatMCP}}, nil)
	cl, err := client.New(gw+mount.PrefixMCP, &client.Options{Format: client.FormatMCP, Tasks: true})
	require.NoError(t, err)
	defer cl.Close()
	ctx := context.Background()
	task, err := cl.Start(ctx, "calc_Calculator_Add", map[string]int{"a": 4, "b": 5}, nil)
	require.NoError(t, err)
	require.NotEmpty(t, task.ID)
	res, err := task.Wait(ctx)
	require.NoError(t, err)
	text, _ := client.ModelText(res, nil)
	assert.Contains(t, text, "9")

	slow, err := cl.Start(ctx, "calc_Slow_Wait", map[string]any{}, nil)
	require.NoError(t, err)
	require.NoError(t, slow.Cancel(ctx))
	st, err := slow.Status(ctx)
	require.NoError(t, err)
	assert.Equal(t, "cancelled", st.State)
}

// askerFunc is an otc.Asker of a function.
type askerFunc func(ctx context.Context, reqs []otc.InputRequest) ([]json.RawMessage, error)

func (f askerFunc) Ask(ctx context.Context, reqs []otc.InputRequest) ([]json.RawMessage, error) {
	return f(ctx, reqs)
}

// TestFederation_QuestionsOfOneCallerAtOnce: two calls of one caller run
// at once on the caller's process of a stdio upstream, and each asks; the
// questions name no call (stdio cannot), and both reach the caller: a
// question that comes while several calls of one caller are under way is
// that caller's, whichever call asked it.
func TestFederation_QuestionsOfOneCallerAtOnce(t *testing.T) {
	t.Parallel()
	up := stdioUpstream(t, "up_stdio")
	up.Client = &client.Options{MCPVersion: "2025-11-25"} // asks with requests of its own
	_, _, reg := gateway(t, []federation.Upstream{up}, nil)
	ctx := otc.WithIdentity(t.Context(), &otc.Identity{Method: "api_key", Name: "alice"})

	asked := make(chan struct{}, 2)
	release := make(chan struct{})
	asker := askerFunc(func(ctx context.Context, reqs []otc.InputRequest) ([]json.RawMessage, error) {
		asked <- struct{}{}
		select {
		case <-release: // both asked: answer
		case <-time.After(20 * time.Second):
		}
		return []json.RawMessage{json.RawMessage(`{"action":"accept","content":{"name":"Ada"}}`)}, nil
	})
	type outcome struct {
		res otc.CallResult
		err error
	}
	done := make(chan outcome, 2)
	call := func() {
		res, err := reg.Call(ctx, &otc.CallRequest{ToolName: "up_stdio_Process_Ask", Asker: asker})
		done <- outcome{res, err}
	}
	go call()
	select {
	case <-asked: // the first call asks, and waits for its answer
	case <-time.After(20 * time.Second):
		t.Fatal("the first call's question did not reach the caller")
	}
	go call()
	select {
	case <-asked: // the second call's question, with two calls under way
	case o := <-done:
		t.Fatalf("the second call ended without its question reaching the caller: %v %+v", o.err, o.res.Error)
	case <-time.After(20 * time.Second):
		t.Fatal("the second call's question did not reach the caller")
	}
	close(release)
	for range 2 {
		o := <-done
		require.NoError(t, o.err)
		require.Nil(t, o.res.Error)
		assert.JSONEq(t, `"hello Ada"`, string(o.res.Value))
	}

	// Callers without an identity share the upstream's main process: a
	// question while two of their calls run there is put to neither, and
	// the refusal says why.
	release2 := make(chan struct{})
	anonymous := askerFunc(func(ctx context.Context, reqs []otc.InputRequest) ([]json.RawMessage, error) {
		asked <- struct{}{}
		select {
		case <-release2:
		case <-time.After(20 * time.Second):
		}
		return []json.RawMessage{json.RawMessage(`{"action":"accept","content":{"name":"Bo"}}`)}, nil
	})
	go func() {
		res, err := reg.Call(t.Context(), &otc.CallRequest{ToolName: "up_stdio_Process_Ask", Asker: anonymous})
		done <- outcome{res, err}
	}()
	<-asked
	res, err := reg.Call(t.Context(), &otc.CallRequest{ToolName: "up_stdio_Process_Ask", Asker: anonymous})
	require.NoError(t, err)
	require.NotNil(t, res.Error, "the second anonymous call's question is put to no one")
	assert.Contains(t, res.Error.Message+res.Error.DeveloperMessage, "does not say which call it is of")
	close(release2)
	o := <-done
	require.NoError(t, o.err)
	assert.JSONEq(t, `"hello Bo"`, string(o.res.Value))
}
