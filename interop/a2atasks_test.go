package interop

import (
	"context"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/a2aproject/a2a-go/v2/a2aclient"
	"github.com/a2aproject/a2a-go/v2/a2aclient/agentcard"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/otcgo/otc"
	otca2a "github.com/otcgo/otc/a2a"
)

// newBookingAgent serves, over A2A, Trip.Book, which asks its caller to
// confirm the booking before it makes it, and Trip.Wait, which waits to
// be released; both may run as tasks.
func newBookingAgent(t *testing.T) (string, chan struct{}) {
	t.Helper()
	release := make(chan struct{})
	reg := otc.NewRegistry(&otc.RegistryOptions{Logger: slog.New(slog.DiscardHandler)})
	type bookIn struct {
		City string `json:"city" jsonschema:"description=Where to."`
	}
	type confirmation struct {
		Seat string `json:"seat" jsonschema:"description=The seat,enum=window,enum=aisle"`
	}
	require.NoError(t, otc.Register(reg, otc.Tool{ID: "Trip.Book", Version: "1.0.0", Description: "Books a trip once the traveller picks a seat.", Tasks: otc.TasksOptional},
		func(ctx context.Context, in bookIn) (string, error) {
			var c confirmation
			action, err := otc.Elicit(ctx, "Which seat to "+in.City+"?", &c)
			switch {
			case err != nil:
				return "", err
			case action != otc.ElicitAccept:
				return "", &otc.ToolError{Message: "The traveller did not pick a seat: nothing was booked."}
			}
			return "booked to " + in.City + ", " + c.Seat + " seat", nil
		}))
	require.NoError(t, otc.Register(reg, otc.Tool{ID: "Trip.Wait", Version: "1.0.0", Description: "Waits to be released.", Tasks: otc.TasksOptional},
		func(ctx context.Context, _ struct{}) (string, error) {
			select {
			case <-release:
				return "released", nil
			case <-ctx.Done():
				return "", ctx.Err()
			}
		}))
	// Every request is the caller "traveller", which lists its tasks (an
	// anonymous caller is listed none: it cannot prove it started any).
	traveller := otc.AuthenticatorFunc(func(*http.Request) (*otc.Identity, error) {
		return &otc.Identity{Method: "test", Name: "traveller"}, nil
	})
	h := otca2a.NewHandler(reg, &otca2a.Options{Name: "booking", Authenticator: traveller})
	mux := http.NewServeMux()
	mux.Handle("/a2a/", http.StripPrefix("/a2a", h))
	mux.Handle("/a2a", http.StripPrefix("/a2a", h))
	mux.Handle("GET /.well-known/agent-card.json", h.Card("/a2a"))
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	return srv.URL, release
}

// TestA2AGoClientTasks: over each binding, the official Go SDK's client
// (v2.3.1) goes through an INPUT_REQUIRED round (the task's question and
// its schema read from the status message's data part, the answer sent
// as a message on the task, a wrong answer refused as invalid params),
// lists its tasks, and subscribes to a running task to its end.
func TestA2AGoClientTasks(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	base, release := newBookingAgent(t)
	card, err := agentcard.DefaultResolver.Resolve(ctx, base)
	require.NoError(t, err)
	for _, binding := range []a2a.TransportProtocol{a2a.TransportProtocolJSONRPC, a2a.TransportProtocolHTTPJSON} {
		t.Run(string(binding), func(t *testing.T) {
			client, err := a2aclient.NewFromCard(ctx, card, a2aclient.WithConfig(a2aclient.Config{PreferredTransports: []a2a.TransportProtocol{binding}}))
			require.NoError(t, err)
			t.Cleanup(func() { _ = client.Destroy() })

			msg := a2a.NewMessage(a2a.MessageRoleUser, a2a.NewDataPart(map[string]any{"tool": "Trip_Book", "input": map[string]any{"city": "Lyon"}}))
			res, err := client.SendMessage(ctx, &a2a.SendMessageRequest{Message: msg})
			require.NoError(t, err)
			task, ok := res.(*a2a.Task)
			require.True(t, ok, "a task, got %T", res)
			require.Equal(t, a2a.TaskStateInputRequired, task.Status.State)
			require.NotNil(t, task.Status.Message)
			require.Len(t, task.Status.Message.Parts, 2)
			assert.Contains(t, task.Status.Message.Parts[0].Text(), "Which seat to Lyon?")
			asked, ok := task.Status.Message.Parts[1].Data().(map[string]any)
			require.True(t, ok, "%#v", task.Status.Message.Parts[1])
			requests := asked["input_requests"].(map[string]any)
			require.Len(t, requests, 1)
			var key string
			for k, q := range requests {
				key = k
				params := q.(map[string]any)["params"].(map[string]any)
				assert.Equal(t, "Which seat to Lyon?", params["message"])
				schema := params["requestedSchema"].(map[string]any)["properties"].(map[string]any)["seat"].(map[string]any)
				assert.Equal(t, []any{"window", "aisle"}, schema["enum"])
			}

			answer := func(content map[string]any) (a2a.SendMessageResult, error) {
				m := a2a.NewMessageForTask(a2a.MessageRoleUser, task, a2a.NewDataPart(map[string]any{"input_responses": map[string]any{key: map[string]any{"action": "accept", "content": content}}}))
				return client.SendMessage(ctx, &a2a.SendMessageRequest{Message: m})
			}
			// An answer on the task in another context is refused (and
			// the task still waits: the answers below are read).
			other := a2a.NewMessageForTask(a2a.MessageRoleUser, task, a2a.NewDataPart(map[string]any{"seat": "aisle"}))
			other.ContextID = "another-context"
			_, err = client.SendMessage(ctx, &a2a.SendMessageRequest{Message: other})
			require.Error(t, err)
			assert.ErrorIs(t, err, a2a.ErrInvalidParams)
			_, err = answer(map[string]any{"seat": "roof"})
			require.Error(t, err)
			assert.ErrorIs(t, err, a2a.ErrInvalidParams)
			res, err = answer(map[string]any{"seat": "window"})
			require.NoError(t, err)
			done, ok := res.(*a2a.Task)
			require.True(t, ok, "a task, got %T", res)
			assert.Equal(t, task.ID, done.ID)
			assert.Equal(t, a2a.TaskStateCompleted, done.Status.State)
			require.NotEmpty(t, done.Artifacts)
			assert.Equal(t, "booked to Lyon, window seat", done.Artifacts[0].Parts[0].Data())

			// The task's history: the call, the question, the refused
			// answer not kept, the answer; historyLength honoured.
			full, err := client.GetTask(ctx, &a2a.GetTaskRequest{ID: task.ID})
			require.NoError(t, err)
			var roles []a2a.MessageRole
			for _, m := range full.History {
				roles = append(roles, m.Role)
			}
			assert.Equal(t, []a2a.MessageRole{a2a.MessageRoleUser, a2a.MessageRoleAgent, a2a.MessageRoleUser}, roles)
			require.Len(t, full.History, 3)
			assert.Equal(t, msg.ID, full.History[0].ID)
			two := 2
			last, err := client.GetTask(ctx, &a2a.GetTaskRequest{ID: task.ID, HistoryLength: &two})
			require.NoError(t, err)
			require.Len(t, last.History, 2)
			assert.Equal(t, full.History[2].ID, last.History[1].ID)

			// A running task, followed to its end.
			msg = a2a.NewMessage(a2a.MessageRoleUser, a2a.NewDataPart(map[string]any{"tool": "Trip_Wait", "input": map[string]any{}}))
			res, err = client.SendMessage(ctx, &a2a.SendMessageRequest{Message: msg, Config: &a2a.SendMessageConfig{ReturnImmediately: true}})
			require.NoError(t, err)
			waiting := res.(*a2a.Task)
			require.Equal(t, a2a.TaskStateWorking, waiting.Status.State)
			// It ends once the subscriber has the task as it is: an event,
			// not a guess at how long subscribing takes.
			var states []a2a.TaskState
			var released sync.Once
			for ev, err := range client.SubscribeToTask(ctx, &a2a.SubscribeToTaskRequest{ID: waiting.ID}) {
				require.NoError(t, err)
				switch ev := ev.(type) {
				case *a2a.Task:
					states = append(states, ev.Status.State)
					released.Do(func() { go func() { release <- struct{}{} }() })
				case *a2a.TaskStatusUpdateEvent:
					states = append(states, ev.Status.State)
				case *a2a.TaskArtifactUpdateEvent:
					assert.Equal(t, "released", ev.Artifact.Parts[0].Data())
				}
			}
			assert.Equal(t, []a2a.TaskState{a2a.TaskStateWorking, a2a.TaskStateCompleted}, states)

			// The caller's tasks, newest first.
			list, err := client.ListTasks(ctx, &a2a.ListTasksRequest{PageSize: 100})
			require.NoError(t, err)
			var ids []a2a.TaskID
			for _, lt := range list.Tasks {
				ids = append(ids, lt.ID)
			}
			assert.Contains(t, ids, task.ID)
			assert.Contains(t, ids, waiting.ID)
			list, err = client.ListTasks(ctx, &a2a.ListTasksRequest{PageSize: 1, Status: a2a.TaskStateCompleted})
			require.NoError(t, err)
			require.Len(t, list.Tasks, 1)
			assert.NotEmpty(t, list.NextPageToken, "more than one page")
		})
	}
}
