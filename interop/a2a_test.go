package interop

import (
	"encoding/json"
	"errors"
	"testing"
	"time"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/a2aproject/a2a-go/v2/a2aclient"
	"github.com/a2aproject/a2a-go/v2/a2aclient/agentcard"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/otcgo/otc/internal/testkit"
)

// TestA2AGoClient: the official A2A Go SDK's client (v2.3.1) resolves the
// calculator's Agent Card and, over each binding the card names (JSON-RPC
// and HTTP+JSON), calls a tool with a data part and reads the completed
// task's artifact, reads a tool error as a failed task with its hint,
// gets invalid input as its invalid-params error, and is answered with a
// message when it sends text.
func TestA2AGoClient(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	card, err := agentcard.DefaultResolver.Resolve(ctx, sharedServer.url+"/a2a")
	require.NoError(t, err)
	assert.Equal(t, "otc calculator", card.Name)
	var skills []string
	for _, s := range card.Skills {
		skills = append(skills, s.ID)
	}
	assert.Contains(t, skills, "Shipping.Quote@1.0.0")
	assert.NotContains(t, skills, "Payments.Refund@1.0.0", "it needs a capability token")

	for _, binding := range []a2a.TransportProtocol{a2a.TransportProtocolJSONRPC, a2a.TransportProtocolHTTPJSON} {
		t.Run(string(binding), func(t *testing.T) {
			t.Parallel()
			client, err := a2aclient.NewFromCard(ctx, card, a2aclient.WithConfig(a2aclient.Config{PreferredTransports: []a2a.TransportProtocol{binding}}))
			require.NoError(t, err)
			t.Cleanup(func() { _ = client.Destroy() })

			call := func(tool string, input map[string]any) (a2a.SendMessageResult, error) {
				msg := a2a.NewMessage(a2a.MessageRoleUser, a2a.NewDataPart(map[string]any{"tool": tool, "input": input}))
				return client.SendMessage(ctx, &a2a.SendMessageRequest{Message: msg})
			}

			// A call answered within its message: a message, its outcome
			// in the metadata, the value as data and as text.
			res, err := call("Shipping_Quote", map[string]any{"to": map[string]any{"country": "FR"}, "speed": "express", "parcels": 2})
			require.NoError(t, err)
			reply, ok := res.(*a2a.Message)
			require.True(t, ok, "a message, got %T", res)
			assert.Equal(t, a2a.MessageRoleAgent, reply.Role)
			assert.Equal(t, "succeeded", reply.Metadata["io.github.otcgo/outcome"])
			require.Len(t, reply.Parts, 2)
			assert.Equal(t, "express to FR: 2 parcel(s), 25.00 EUR", reply.Parts[0].Data())
			assert.Equal(t, "express to FR: 2 parcel(s), 25.00 EUR", reply.Parts[1].Text())

			res, err = call("Doorbell_Ring", map[string]any{"doorbell_id": "doorbell1"})
			require.NoError(t, err)
			reply, ok = res.(*a2a.Message)
			require.True(t, ok, "a message, got %T", res)
			assert.Equal(t, "failed", reply.Metadata["io.github.otcgo/outcome"])
			require.Len(t, reply.Parts, 2)
			assert.Equal(t, "Doorbell ID not found\n\nids: doorbell42,doorbell84\n\nThis may succeed if tried again after 500ms.", reply.Parts[0].Text())
			assert.Equal(t, map[string]any{"code": "tool_error", "can_retry": true, "retry_after_ms": float64(500), "additional_prompt_content": "ids: doorbell42,doorbell84"}, reply.Parts[1].Data())

			_, err = call("Shipping_Quote", map[string]any{"to": map[string]any{"country": "france"}})
			require.Error(t, err)
			assert.True(t, errors.Is(err, a2a.ErrInvalidParams), "%v", err)
			assert.Contains(t, err.Error(), "to.country")

			// Streaming: the task, progress as WORKING updates, the
			// artifact, the final status.
			msg := a2a.NewMessage(a2a.MessageRoleUser, a2a.NewDataPart(map[string]any{"tool": "Timer_Wait", "input": map[string]any{"ms": 400}}))
			var kinds []string
			var final a2a.TaskState
			var value any
			for ev, err := range client.SendStreamingMessage(ctx, &a2a.SendMessageRequest{Message: msg}) {
				require.NoError(t, err)
				switch ev := ev.(type) {
				case *a2a.Task:
					kinds = append(kinds, "task")
					assert.Equal(t, a2a.TaskStateWorking, ev.Status.State)
				case *a2a.TaskStatusUpdateEvent:
					kinds = append(kinds, "status")
					final = ev.Status.State
				case *a2a.TaskArtifactUpdateEvent:
					kinds = append(kinds, "artifact")
					value = ev.Artifact.Parts[0].Data()
				default:
					t.Fatalf("unexpected event %T", ev)
				}
			}
			require.GreaterOrEqual(t, len(kinds), 4, "%v", kinds)
			assert.Equal(t, "task", kinds[0])
			assert.Contains(t, kinds[1:len(kinds)-2], "status", "progress reports: %v", kinds)
			assert.Equal(t, []string{"artifact", "status"}, kinds[len(kinds)-2:])
			assert.Equal(t, a2a.TaskStateCompleted, final)
			assert.Equal(t, float64(400), value)

			// A task: Timer.Wait may run as one; asked for at once, it is
			// WORKING, GetTask shows it end; a second is cancelled.
			msg = a2a.NewMessage(a2a.MessageRoleUser, a2a.NewDataPart(map[string]any{"tool": "Timer_Wait", "input": map[string]any{"ms": 300}}))
			res, err = client.SendMessage(ctx, &a2a.SendMessageRequest{Message: msg, Config: &a2a.SendMessageConfig{ReturnImmediately: true}})
			require.NoError(t, err)
			task, ok := res.(*a2a.Task)
			require.True(t, ok, "a task, got %T", res)
			assert.Equal(t, a2a.TaskStateWorking, task.Status.State)
			require.Eventually(t, func() bool {
				got, err := client.GetTask(ctx, &a2a.GetTaskRequest{ID: task.ID})
				return err == nil && got.Status.State == a2a.TaskStateCompleted && len(got.Artifacts) == 1 && got.Artifacts[0].Parts[0].Data() == float64(300)
			}, 10*time.Second, 50*time.Millisecond)
			msg = a2a.NewMessage(a2a.MessageRoleUser, a2a.NewDataPart(map[string]any{"tool": "Timer_Wait", "input": map[string]any{"ms": 1900}}))
			res, err = client.SendMessage(ctx, &a2a.SendMessageRequest{Message: msg, Config: &a2a.SendMessageConfig{ReturnImmediately: true}})
			require.NoError(t, err)
			task = res.(*a2a.Task)
			cancelled, err := client.CancelTask(ctx, &a2a.CancelTaskRequest{ID: task.ID})
			require.NoError(t, err)
			assert.Equal(t, a2a.TaskStateCanceled, cancelled.Status.State)
			_, err = client.GetTask(ctx, &a2a.GetTaskRequest{ID: "no-such-task"})
			assert.True(t, errors.Is(err, a2a.ErrTaskNotFound), "%v", err)

			// Payments.Refund's policy lists OTC and MCP only, and needs a
			// capability token: an anonymous caller, which sees it through
			// no protocol, is told no more than of an unknown tool.
			_, err = call("Payments_Refund", map[string]any{"order_id": "A-1", "amount_cents": 100})
			require.Error(t, err)
			assert.True(t, errors.Is(err, a2a.ErrInvalidParams), "%v", err)
			assert.ErrorContains(t, err, "Tool 'Payments_Refund' was not found")

			// Text goes to the example's text tool, Math.Evaluate, whose
			// calls may run as tasks: a client that only speaks text gets a
			// task.
			res, err = client.SendMessage(ctx, &a2a.SendMessageRequest{Message: a2a.NewMessage(a2a.MessageRoleUser, a2a.NewTextPart("2 + 3 * 4"))})
			require.NoError(t, err)
			task, ok = res.(*a2a.Task)
			require.True(t, ok, "a task, got %T", res)
			assert.Equal(t, a2a.TaskStateCompleted, task.Status.State)
			require.NotEmpty(t, task.Artifacts)
			assert.Equal(t, float64(14), task.Artifacts[0].Parts[0].Data())
			res, err = client.SendMessage(ctx, &a2a.SendMessageRequest{Message: a2a.NewMessage(a2a.MessageRoleUser, a2a.NewTextPart("what can you do?"))})
			require.NoError(t, err)
			task, ok = res.(*a2a.Task)
			require.True(t, ok, "a task, got %T", res)
			assert.Equal(t, a2a.TaskStateFailed, task.Status.State)
			assert.Contains(t, task.Status.Message.Parts[0].Text(), "Not an arithmetic expression")
		})
	}
}

// TestA2AGoClientUnauthenticated: against the calculator with an API key,
// the official client's message without credentials is refused 401: the
// HTTP+JSON binding's error is the SDK's ErrUnauthenticated; the card is
// still public.
func TestA2AGoClientUnauthenticated(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	url := testkit.ExampleServer(t, "..", "OTC_API_KEY=interop-a2a-key-0b9f21")
	card, err := agentcard.DefaultResolver.Resolve(ctx, url+"/a2a")
	require.NoError(t, err)
	for _, binding := range []a2a.TransportProtocol{a2a.TransportProtocolJSONRPC, a2a.TransportProtocolHTTPJSON} {
		client, err := a2aclient.NewFromCard(ctx, card, a2aclient.WithConfig(a2aclient.Config{PreferredTransports: []a2a.TransportProtocol{binding}}))
		require.NoError(t, err)
		msg := a2a.NewMessage(a2a.MessageRoleUser, a2a.NewDataPart(map[string]any{"tool": "Calculator_Add", "input": map[string]any{"a": 1, "b": 2}}))
		_, err = client.SendMessage(ctx, &a2a.SendMessageRequest{Message: msg})
		require.Error(t, err, binding)
		if binding == a2a.TransportProtocolHTTPJSON {
			assert.True(t, errors.Is(err, a2a.ErrUnauthenticated), "%v", err)
		} else {
			assert.Contains(t, err.Error(), "401", "the JSON-RPC client reports the HTTP status")
		}
		_ = client.Destroy()
	}
}

// TestA2AJSClient: the official A2A JavaScript SDK's client (1.3.0)
// resolves the calculator's Agent Card at the host's root and, over
// JSON-RPC and HTTP+JSON, calls a tool (the answer a message), reads a
// tool error with its hint,
// gets invalid input refused with the parameter to fix, and streams a
// call to its end (testdata/frameworks/a2a-js.mjs).
func TestA2AJSClient(t *testing.T) {
	t.Parallel()
	node, dir := frameworkScripts(t)
	out := runScript(t, node, dir, "a2a-js.mjs", sharedServer.url)
	type part struct {
		Content struct {
			Case  string `json:"$case"`
			Value any    `json:"value"`
		} `json:"content"`
	}
	var f struct {
		Bindings map[string]map[string]struct {
			OK    json.RawMessage `json:"ok"`
			Error string          `json:"error"`
		} `json:"bindings"`
	}
	require.NoError(t, json.Unmarshal(out, &f), "%s", out)
	require.Len(t, f.Bindings, 2)
	for binding, got := range f.Bindings {
		// Calls answered within their message: messages, their outcome in
		// the metadata.
		type reply struct {
			Parts    []part         `json:"parts"`
			Metadata map[string]any `json:"metadata"`
		}
		var quote reply
		require.NoError(t, json.Unmarshal(got["quote"].OK, &quote), "%s: %s", binding, out)
		assert.Equal(t, "succeeded", quote.Metadata["io.github.otcgo/outcome"], "%s: %s", binding, got["quote"].OK)
		require.NotEmpty(t, quote.Parts, binding)
		assert.Equal(t, "express to FR: 2 parcel(s), 25.00 EUR", quote.Parts[0].Content.Value, binding)

		var failed reply
		require.NoError(t, json.Unmarshal(got["error"].OK, &failed), "%s: %s", binding, out)
		assert.Equal(t, "failed", failed.Metadata["io.github.otcgo/outcome"], binding)
		require.NotEmpty(t, failed.Parts)
		assert.Contains(t, failed.Parts[0].Content.Value, "ids: doorbell42,doorbell84", binding)

		assert.Contains(t, got["invalid"].Error, "to.country", binding)

		var text struct {
			Status struct {
				State int `json:"state"`
			} `json:"status"`
			Artifacts []struct {
				Parts []part `json:"parts"`
			} `json:"artifacts"`
		}
		require.NoError(t, json.Unmarshal(got["text"].OK, &text), "%s: %s", binding, out)
		assert.Equal(t, 3, text.Status.State, "%s: a text message gets a task, TASK_STATE_COMPLETED", binding)
		require.NotEmpty(t, text.Artifacts, binding)
		assert.Equal(t, float64(14), text.Artifacts[0].Parts[0].Content.Value, binding)

		// The task keeps the caller's message, and the SDK's historyLength
		// is honoured.
		var history struct {
			History []struct {
				MessageID string `json:"messageId"`
				Role      int    `json:"role"`
				Parts     []part `json:"parts"`
			} `json:"history"`
		}
		require.NoError(t, json.Unmarshal(got["history"].OK, &history), "%s: %s", binding, out)
		require.Len(t, history.History, 1, "%s: %s", binding, got["history"].OK)
		assert.Equal(t, 1, history.History[0].Role, "%s: ROLE_USER", binding)
		require.NotEmpty(t, history.History[0].Parts, binding)
		assert.Equal(t, "2 + 3 * 4", history.History[0].Parts[0].Content.Value, binding)
		history.History = nil
		require.NoError(t, json.Unmarshal(got["noHistory"].OK, &history), "%s: %s", binding, out)
		assert.Empty(t, history.History, "%s: historyLength 0", binding)

		var stream []struct {
			Payload struct {
				Case  string          `json:"$case"`
				Value json.RawMessage `json:"value"`
			} `json:"payload"`
		}
		require.NoError(t, json.Unmarshal(got["stream"].OK, &stream), "%s: %s", binding, out)
		require.GreaterOrEqual(t, len(stream), 3, binding)
		assert.Equal(t, "task", stream[0].Payload.Case, binding)
		assert.Equal(t, "artifactUpdate", stream[len(stream)-2].Payload.Case, binding)
		last := stream[len(stream)-1]
		assert.Equal(t, "statusUpdate", last.Payload.Case, binding)
		assert.Contains(t, string(last.Payload.Value), `"state":3`, binding)
	}
}
