package testkit

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/otcgo/otc"
	"github.com/otcgo/otc/tasks"
)

// TaskLimits are the limits a task store under test is made with; zero
// means the store's default.
type TaskLimits struct {
	TTL, Lease time.Duration
	PerOwner   int
	Running    int // tasks per owner that have not ended
	Webhooks   int // webhooks per owner, across its tasks
	MaxResult  int
	MaxHistory int
}

// TaskStoreContract checks that a task store keeps the promises of
// tasks.Store: the in-memory one and the Redis one run the same cases.
// newStore returns an empty store with the limits given.
func TaskStoreContract(t *testing.T, newStore func(t *testing.T, l TaskLimits) tasks.Store) {
	ctx := context.Background()
	create := func(t *testing.T, s tasks.Store, owner string) *tasks.Task {
		t.Helper()
		task, err := s.Create(ctx, &tasks.Task{ID: otc.NewCallID(), Owner: owner, Status: tasks.Working})
		require.NoError(t, err)
		return task
	}
	get := func(t *testing.T, s tasks.Store, id string) *tasks.Task {
		t.Helper()
		task, err := s.Get(ctx, id)
		require.NoError(t, err)
		return task
	}

	t.Run("create_then_get", func(t *testing.T) {
		s := newStore(t, TaskLimits{TTL: time.Minute})
		before := time.Now().Add(-time.Second)
		created := create(t, s, "alice")
		assert.Equal(t, tasks.Working, created.Status)
		assert.Equal(t, time.Minute, created.TTL)
		got := get(t, s, created.ID)
		assert.Equal(t, created.ID, got.ID)
		assert.Equal(t, "alice", got.Owner)
		assert.Equal(t, tasks.Working, got.Status)
		assert.False(t, got.Lost)
		assert.Equal(t, time.Minute, got.TTL)
		assert.Empty(t, got.ContextID)
		grouped, err := s.Create(ctx, &tasks.Task{ID: otc.NewCallID(), Owner: "alice", ContextID: "ctx-1", Status: tasks.Working})
		require.NoError(t, err)
		assert.Equal(t, "ctx-1", grouped.ContextID)
		assert.Equal(t, "ctx-1", get(t, s, grouped.ID).ContextID, "kept as given")
		assert.True(t, got.CreatedAt.After(before) && got.CreatedAt.Before(time.Now().Add(time.Second)), "created at %v", got.CreatedAt)
		assert.Nil(t, got.Result)
		assert.Empty(t, got.InputRequests)
	})

	t.Run("id_taken", func(t *testing.T) {
		s := newStore(t, TaskLimits{PerOwner: 2})
		first := create(t, s, "alice")
		_, err := s.Create(ctx, &tasks.Task{ID: first.ID, Owner: "alice", Status: tasks.Working})
		assert.ErrorIs(t, err, tasks.ErrExists)
		_, err = s.Create(ctx, &tasks.Task{ID: first.ID, Owner: "bob", Status: tasks.Working})
		assert.ErrorIs(t, err, tasks.ErrExists, "whoever asks")
		assert.Equal(t, "alice", get(t, s, first.ID).Owner, "the task is left as it was")
		if l, ok := s.(tasks.Lister); ok {
			held, err := l.List(ctx, "alice")
			require.NoError(t, err)
			assert.Len(t, held, 1, "still listed and counted once")
		}
		create(t, s, "alice") // the second of two: the refused ones took no place
	})

	t.Run("history", func(t *testing.T) {
		s := newStore(t, TaskLimits{MaxHistory: 3, MaxResult: 64})
		msg := func(n int) json.RawMessage { return json.RawMessage(fmt.Sprintf(`{"n":%d}`, n)) }
		task, err := s.Create(ctx, &tasks.Task{ID: otc.NewCallID(), Owner: "alice", Status: tasks.Working, History: []json.RawMessage{msg(1)}})
		require.NoError(t, err)
		id := task.ID
		history := func() []string {
			var out []string
			for _, m := range get(t, s, id).History {
				out = append(out, string(m))
			}
			return out
		}
		assert.Equal(t, []string{`{"n":1}`}, history(), "kept at creation")
		_, err = s.Update(ctx, id, &tasks.Update{Status: tasks.InputRequired, InputRequests: map[string]json.RawMessage{"q": json.RawMessage(`{"method":"elicitation/create","params":{}}`)},
			History: []json.RawMessage{msg(2)}})
		require.NoError(t, err)
		require.NoError(t, s.Respond(ctx, id, map[string]json.RawMessage{"nope": json.RawMessage(`{}`)}, msg(9)))
		assert.Equal(t, []string{`{"n":1}`, `{"n":2}`}, history(), "a message that answered nothing is not kept")
		require.NoError(t, s.Respond(ctx, id, map[string]json.RawMessage{"q": json.RawMessage(`{"action":"decline"}`)}, msg(3)))
		assert.Equal(t, []string{`{"n":1}`, `{"n":2}`, `{"n":3}`}, history())
		_, err = s.Update(ctx, id, &tasks.Update{History: []json.RawMessage{json.RawMessage(`"` + strings.Repeat("x", 100) + `"`)}})
		require.NoError(t, err)
		assert.Len(t, history(), 3, "a message larger than a result is not kept")
		_, err = s.Update(ctx, id, &tasks.Update{Status: tasks.Completed, Result: json.RawMessage(`1`), History: []json.RawMessage{msg(4), msg(5)}})
		require.NoError(t, err)
		assert.Equal(t, []string{`{"n":3}`, `{"n":4}`, `{"n":5}`}, history(), "the most recent, up to the bound")
		_, err = s.Update(ctx, id, &tasks.Update{History: []json.RawMessage{msg(6)}})
		require.NoError(t, err)
		assert.Equal(t, []string{`{"n":3}`, `{"n":4}`, `{"n":5}`}, history(), "an ended task no longer changes")
	})

	t.Run("webhooks", func(t *testing.T) {
		s := newStore(t, TaskLimits{MaxResult: 64})
		ws, ok := s.(tasks.WebhookStore)
		if !ok {
			t.Fatalf("%T keeps no webhooks: every store of this module does", s)
		}
		hook := func(id, cfg string) tasks.Webhook { return tasks.Webhook{ID: id, Config: json.RawMessage(cfg)} }
		task, err := s.Create(ctx, &tasks.Task{ID: otc.NewCallID(), Owner: "alice", Status: tasks.Working, Webhooks: []tasks.Webhook{hook("w1", `{"url":"a"}`)}})
		require.NoError(t, err)
		id := task.ID
		hooks := func() []string {
			var out []string
			for _, w := range get(t, s, id).Webhooks {
				out = append(out, w.ID+"="+string(w.Config))
			}
			return out
		}
		assert.Equal(t, []string{`w1={"url":"a"}`}, hooks(), "kept at creation")
		require.NoError(t, ws.SetWebhook(ctx, id, hook("w2", `{"url":"b"}`), 2))
		assert.ErrorIs(t, ws.SetWebhook(ctx, id, hook("w3", `{"url":"c"}`), 2), tasks.ErrTooManyWebhooks)
		require.NoError(t, ws.SetWebhook(ctx, id, hook("w1", `{"url":"a2"}`), 2), "replacing one is no new one")
		assert.Equal(t, []string{`w1={"url":"a2"}`, `w2={"url":"b"}`}, hooks(), "in the order first set")
		assert.ErrorIs(t, ws.SetWebhook(ctx, id, hook("w4", `"`+strings.Repeat("x", 100)+`"`), 5), tasks.ErrResultTooLarge)
		require.NoError(t, ws.DeleteWebhook(ctx, id, "w1"))
		require.NoError(t, ws.DeleteWebhook(ctx, id, "w1"), "deleting twice is no error")
		assert.Equal(t, []string{`w2={"url":"b"}`}, hooks())
		_, err = s.Update(ctx, id, &tasks.Update{Status: tasks.Completed, Result: json.RawMessage(`1`)})
		require.NoError(t, err)
		assert.Equal(t, []string{`w2={"url":"b"}`}, hooks(), "kept with the ended task")
		assert.ErrorIs(t, ws.SetWebhook(ctx, "nope", hook("w1", `{}`), 2), tasks.ErrNotFound)
		assert.ErrorIs(t, ws.DeleteWebhook(ctx, "nope", "w1"), tasks.ErrNotFound)
	})

	t.Run("webhooks_per_owner", func(t *testing.T) {
		s := newStore(t, TaskLimits{Webhooks: 5})
		ws := s.(tasks.WebhookStore)
		hook := func(id string) tasks.Webhook { return tasks.Webhook{ID: id, Config: json.RawMessage(`{}`)} }
		withHooks := func(owner string, ids ...string) (*tasks.Task, error) {
			var hs []tasks.Webhook
			for _, id := range ids {
				hs = append(hs, hook(id))
			}
			return s.Create(ctx, &tasks.Task{ID: otc.NewCallID(), Owner: owner, Status: tasks.Working, Webhooks: hs})
		}
		a, err := withHooks("alice", "w1", "w2")
		require.NoError(t, err)
		b, err := withHooks("alice", "w1", "w2", "w3")
		require.NoError(t, err, "five across two tasks")
		_, err = withHooks("alice", "w1")
		assert.ErrorIs(t, err, tasks.ErrTooManyOwnerWebhooks, "a sixth in a new task")
		assert.ErrorIs(t, ws.SetWebhook(ctx, a.ID, hook("w9"), 10), tasks.ErrTooManyOwnerWebhooks, "a sixth set")
		require.NoError(t, ws.SetWebhook(ctx, a.ID, hook("w1"), 10), "replacing one is no new one")
		_, err = withHooks("bob", "w1", "w2", "w3", "w4", "w5")
		require.NoError(t, err, "another owner has its own")
		require.NoError(t, ws.DeleteWebhook(ctx, b.ID, "w3"))
		require.NoError(t, ws.SetWebhook(ctx, a.ID, hook("w9"), 10), "room again once one is deleted")
		assert.ErrorIs(t, ws.SetWebhook(ctx, a.ID, hook("w10"), 10), tasks.ErrTooManyOwnerWebhooks)
		assert.ErrorIs(t, ws.SetWebhook(ctx, a.ID, hook("w11"), 3), tasks.ErrTooManyWebhooks, "the task's own cap, uncounted")
		require.NoError(t, ws.DeleteWebhook(ctx, a.ID, "w9"))
		require.NoError(t, ws.SetWebhook(ctx, b.ID, hook("w3"), 10), "the refused one took nothing")
	})

	t.Run("webhooks_per_owner_at_once", func(t *testing.T) {
		// Hundreds of new webhooks at once, in new tasks and set on
		// existing ones: exactly the cap is kept, whatever the order.
		const limit, each = 40, 150
		s := newStore(t, TaskLimits{Webhooks: limit, PerOwner: 2 * each, Running: 2 * each})
		ws := s.(tasks.WebhookStore)
		var hosts []string
		for range 5 {
			hosts = append(hosts, create(t, s, "mallory").ID)
		}
		var kept, refused atomic.Int32
		var wg sync.WaitGroup
		for i := range each {
			wg.Go(func() {
				_, err := s.Create(ctx, &tasks.Task{ID: otc.NewCallID(), Owner: "mallory", Status: tasks.Working,
					Webhooks: []tasks.Webhook{{ID: "w", Config: json.RawMessage(`{}`)}}})
				count(t, err, &kept, &refused)
			})
			wg.Go(func() {
				err := ws.SetWebhook(ctx, hosts[i%len(hosts)], tasks.Webhook{ID: fmt.Sprint("w", i), Config: json.RawMessage(`{}`)}, each)
				count(t, err, &kept, &refused)
			})
		}
		wg.Wait()
		assert.EqualValues(t, limit, kept.Load(), "the owner's cap, no more")
		assert.EqualValues(t, 2*each-limit, refused.Load())
		if l, ok := s.(tasks.Lister); ok {
			all, err := l.List(ctx, "mallory")
			require.NoError(t, err)
			n := 0
			for _, task := range all {
				n += len(task.Webhooks)
			}
			assert.Equal(t, limit, n, "the tasks hold as many as were kept")
		}
	})

	t.Run("unknown_task", func(t *testing.T) {
		s := newStore(t, TaskLimits{})
		_, err := s.Get(ctx, "nope")
		assert.ErrorIs(t, err, tasks.ErrNotFound)
		_, err = s.Update(ctx, "nope", &tasks.Update{})
		assert.ErrorIs(t, err, tasks.ErrNotFound)
		assert.ErrorIs(t, s.Cancel(ctx, "nope"), tasks.ErrNotFound)
		assert.ErrorIs(t, s.Respond(ctx, "nope", map[string]json.RawMessage{"k": json.RawMessage(`{}`)}, nil), tasks.ErrNotFound)
	})

	t.Run("tasks_per_owner", func(t *testing.T) {
		s := newStore(t, TaskLimits{PerOwner: 2, TTL: time.Minute})
		first := create(t, s, "alice")
		second := create(t, s, "alice")
		_, err := s.Update(ctx, first.ID, &tasks.Update{Status: tasks.Completed, Result: json.RawMessage(`{}`)})
		require.NoError(t, err)
		_, err = s.Update(ctx, second.ID, &tasks.Update{Status: tasks.Completed, Result: json.RawMessage(`{}`)})
		require.NoError(t, err)
		_, err = s.Create(ctx, &tasks.Task{ID: otc.NewCallID(), Owner: "alice", Status: tasks.Working})
		assert.ErrorIs(t, err, tasks.ErrTooMany, "ended tasks are held until their TTL")
		var limit *tasks.LimitError
		require.ErrorAs(t, err, &limit)
		assert.Equal(t, 2, limit.Limit)
		assert.False(t, limit.Running)
		assert.True(t, limit.RetryAfter > 50*time.Second && limit.RetryAfter <= time.Minute, "retry after the oldest task expires: %v", limit.RetryAfter)
		assert.Contains(t, err.Error(), "holds 2 tasks")
		create(t, s, "bob") // another caller has room of its own
	})

	t.Run("running_per_owner", func(t *testing.T) {
		s := newStore(t, TaskLimits{Running: 2, Lease: 300 * time.Millisecond})
		done := create(t, s, "alice")
		cancelled := create(t, s, "alice")
		create(t, s, "bob")
		_, err := s.Create(ctx, &tasks.Task{ID: otc.NewCallID(), Owner: "alice", Status: tasks.Working})
		var limit *tasks.LimitError
		require.ErrorAs(t, err, &limit)
		assert.ErrorIs(t, err, tasks.ErrTooMany)
		assert.Equal(t, 2, limit.Limit)
		assert.True(t, limit.Running)
		assert.Positive(t, limit.RetryAfter)
		assert.Contains(t, err.Error(), "runs 2 tasks")
		create(t, s, "bob") // another caller runs its own

		_, err = s.Update(ctx, done.ID, &tasks.Update{Status: tasks.Completed, Result: json.RawMessage(`{}`)})
		require.NoError(t, err)
		lost := create(t, s, "alice") // a task that ended makes room
		require.NoError(t, s.Cancel(ctx, cancelled.ID))
		create(t, s, "alice") // so does a cancelled one
		_, err = s.Create(ctx, &tasks.Task{ID: otc.NewCallID(), Owner: "alice", Status: tasks.Working})
		require.ErrorAs(t, err, &limit)

		// A task whose runner stopped renewing its lease ends, and makes
		// room, without anyone reading it first.
		time.Sleep(400 * time.Millisecond)
		create(t, s, "alice")
		assert.True(t, get(t, s, lost.ID).Lost)
	})

	t.Run("completed_is_final", func(t *testing.T) {
		s := newStore(t, TaskLimits{})
		id := create(t, s, "alice").ID
		done, err := s.Update(ctx, id, &tasks.Update{Status: tasks.Completed, Result: json.RawMessage(`{"content":[]}`)})
		require.NoError(t, err)
		assert.Equal(t, tasks.Completed, done.Status)
		again, err := s.Update(ctx, id, &tasks.Update{Status: tasks.Failed, Result: json.RawMessage(`{"code":1}`)})
		require.NoError(t, err)
		assert.Equal(t, tasks.Completed, again.Status, "a terminal task does not change")
		require.NoError(t, s.Cancel(ctx, id))
		got := get(t, s, id)
		assert.Equal(t, tasks.Completed, got.Status)
		assert.JSONEq(t, `{"content":[]}`, string(got.Result))
	})

	t.Run("questions_and_answers", func(t *testing.T) {
		s := newStore(t, TaskLimits{})
		id := create(t, s, "alice").ID
		q := map[string]json.RawMessage{
			"input-1": json.RawMessage(`{"method":"elicitation/create","params":{"message":"Name?"}}`),
			"input-2": json.RawMessage(`{"method":"elicitation/create","params":{"message":"Sure?"}}`),
		}
		_, err := s.Update(ctx, id, &tasks.Update{Status: tasks.InputRequired, InputRequests: q})
		require.NoError(t, err)
		got := get(t, s, id)
		assert.Equal(t, tasks.InputRequired, got.Status)
		assert.Len(t, got.InputRequests, 2)
		assert.JSONEq(t, string(q["input-1"]), string(got.InputRequests["input-1"]))

		require.NoError(t, s.Respond(ctx, id, map[string]json.RawMessage{
			"input-1": json.RawMessage(`{"action":"accept","content":{"name":"Ada"}}`),
			"never":   json.RawMessage(`{"action":"accept"}`),
		}, nil))
		got = get(t, s, id)
		assert.Equal(t, tasks.InputRequired, got.Status, "one question is still open")
		assert.Equal(t, []string{"input-2"}, keys(got.InputRequests))
		assert.Equal(t, []string{"input-1"}, keys(got.InputResponses), "an answer to no open question is ignored")
		assert.JSONEq(t, `{"action":"accept","content":{"name":"Ada"}}`, string(got.InputResponses["input-1"]))

		require.NoError(t, s.Respond(ctx, id, map[string]json.RawMessage{"input-1": json.RawMessage(`{"action":"decline"}`)}, nil))
		assert.JSONEq(t, `{"action":"accept","content":{"name":"Ada"}}`, string(get(t, s, id).InputResponses["input-1"]), "an answered question takes no second answer")

		require.NoError(t, s.Respond(ctx, id, map[string]json.RawMessage{"input-2": json.RawMessage(`{"action":"accept"}`)}, nil))
		got = get(t, s, id)
		assert.Equal(t, tasks.Working, got.Status, "every question answered: the task works again, and shows nothing to answer")
		assert.Empty(t, got.InputRequests)
		got, err = s.Update(ctx, id, &tasks.Update{Status: tasks.Working, Taken: []string{"input-1", "input-2"}})
		require.NoError(t, err)
		assert.Equal(t, tasks.Working, got.Status)
		assert.Empty(t, got.InputRequests)
		assert.Empty(t, got.InputResponses)
	})

	t.Run("questions_add_up", func(t *testing.T) {
		s := newStore(t, TaskLimits{})
		id := create(t, s, "alice").ID
		one := map[string]json.RawMessage{"input-1": json.RawMessage(`{"method":"elicitation/create","params":{}}`)}
		two := map[string]json.RawMessage{"input-2": json.RawMessage(`{"method":"sampling/createMessage","params":{}}`)}
		_, err := s.Update(ctx, id, &tasks.Update{Status: tasks.InputRequired, InputRequests: one})
		require.NoError(t, err)
		got, err := s.Update(ctx, id, &tasks.Update{Status: tasks.InputRequired, InputRequests: two})
		require.NoError(t, err)
		assert.ElementsMatch(t, []string{"input-1", "input-2"}, keys(got.InputRequests), "a second question adds to the first")
		require.NoError(t, s.Respond(ctx, id, map[string]json.RawMessage{"input-1": json.RawMessage(`{}`)}, nil))
		got, err = s.Update(ctx, id, &tasks.Update{Taken: []string{"input-1"}})
		require.NoError(t, err)
		assert.Equal(t, tasks.InputRequired, got.Status, "an update without a status keeps it")
		assert.Equal(t, []string{"input-2"}, keys(got.InputRequests))
		assert.Empty(t, got.InputResponses)
		got, err = s.Update(ctx, id, &tasks.Update{Status: tasks.Working})
		require.NoError(t, err)
		assert.Empty(t, got.InputRequests, "working closes the open questions")
	})

	t.Run("cancel", func(t *testing.T) {
		s := newStore(t, TaskLimits{})
		id := create(t, s, "alice").ID
		_, err := s.Update(ctx, id, &tasks.Update{Status: tasks.InputRequired, InputRequests: map[string]json.RawMessage{"input-1": json.RawMessage(`{}`)}})
		require.NoError(t, err)
		require.NoError(t, s.Cancel(ctx, id))
		got := get(t, s, id)
		assert.Equal(t, tasks.Cancelled, got.Status)
		assert.Empty(t, got.InputRequests, "a cancelled task asks nothing")
		beat, err := s.Update(ctx, id, &tasks.Update{})
		require.NoError(t, err)
		assert.Equal(t, tasks.Cancelled, beat.Status, "the runner learns of the cancellation at its next update")
		_, err = s.Update(ctx, id, &tasks.Update{Status: tasks.Completed, Result: json.RawMessage(`{}`)})
		require.NoError(t, err)
		assert.Equal(t, tasks.Cancelled, get(t, s, id).Status)
		assert.NoError(t, s.Cancel(ctx, id), "cancelling twice is no error")
	})

	t.Run("result_too_large", func(t *testing.T) {
		s := newStore(t, TaskLimits{MaxResult: 64})
		id := create(t, s, "alice").ID
		big := json.RawMessage(`"` + strings.Repeat("x", 100) + `"`)
		_, err := s.Update(ctx, id, &tasks.Update{Status: tasks.Completed, Result: big})
		assert.ErrorIs(t, err, tasks.ErrResultTooLarge)
		assert.Equal(t, tasks.Working, get(t, s, id).Status, "a refused update changes nothing")
		_, err = s.Update(ctx, id, &tasks.Update{Status: tasks.InputRequired, InputRequests: map[string]json.RawMessage{"input-1": big}})
		assert.ErrorIs(t, err, tasks.ErrResultTooLarge)
	})

	t.Run("lease_lapses", func(t *testing.T) {
		s := newStore(t, TaskLimits{Lease: 200 * time.Millisecond})
		renewed := create(t, s, "alice").ID
		lost := create(t, s, "alice").ID
		for range 6 {
			time.Sleep(70 * time.Millisecond)
			_, err := s.Update(ctx, renewed, &tasks.Update{})
			require.NoError(t, err)
		}
		assert.Equal(t, tasks.Working, get(t, s, renewed).Status, "a renewed lease holds")
		got := get(t, s, lost)
		assert.Equal(t, tasks.Failed, got.Status, "a task whose runner stopped renewing is failed, not working forever")
		assert.True(t, got.Lost)
		assert.Contains(t, got.StatusMessage, "lease")
		late, err := s.Update(ctx, lost, &tasks.Update{Status: tasks.Completed, Result: json.RawMessage(`{}`)})
		require.NoError(t, err)
		assert.Equal(t, tasks.Failed, late.Status, "a runner back from the dead changes nothing")
		assert.True(t, get(t, s, lost).Lost)
	})

	t.Run("list", func(t *testing.T) {
		s := newStore(t, TaskLimits{TTL: 300 * time.Millisecond})
		l, ok := s.(tasks.Lister)
		require.True(t, ok, "the store lists a caller's tasks (tasks.Lister)")
		list := func(owner string) []string {
			t.Helper()
			got, err := l.List(ctx, owner)
			require.NoError(t, err)
			ids := make([]string, len(got))
			for i, task := range got {
				assert.Equal(t, owner, task.Owner)
				ids[i] = task.ID
			}
			return ids
		}
		assert.Empty(t, list("nobody"))
		a1 := create(t, s, "alice").ID
		time.Sleep(5 * time.Millisecond) // the Redis store orders by milliseconds
		b1 := create(t, s, "bob").ID
		a2 := create(t, s, "alice").ID
		_, err := s.Update(ctx, a1, &tasks.Update{Status: tasks.Completed, Result: json.RawMessage(`1`)})
		require.NoError(t, err)
		assert.Equal(t, []string{a1, a2}, list("alice"), "a caller's own tasks, oldest first, ended ones too")
		assert.Equal(t, []string{b1}, list("bob"))
		got, err := l.List(ctx, "alice")
		require.NoError(t, err)
		assert.Equal(t, tasks.Completed, got[0].Status, "each as Get returns it")
		assert.JSONEq(t, `1`, string(got[0].Result))
		time.Sleep(400 * time.Millisecond)
		assert.Empty(t, list("alice"), "dropped after their TTL")
	})

	t.Run("ttl", func(t *testing.T) {
		s := newStore(t, TaskLimits{TTL: 200 * time.Millisecond, PerOwner: 1})
		id := create(t, s, "alice").ID
		time.Sleep(300 * time.Millisecond)
		_, err := s.Get(ctx, id)
		assert.ErrorIs(t, err, tasks.ErrNotFound, "a task is dropped after its TTL")
		create(t, s, "alice") // and no longer counts against its owner
	})
}

func keys(m map[string]json.RawMessage) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	return out
}

// count counts a webhook kept, or refused for its owner's cap, and fails
// on any other outcome.
func count(t *testing.T, err error, kept, refused *atomic.Int32) {
	switch {
	case err == nil:
		kept.Add(1)
	case errors.Is(err, tasks.ErrTooManyOwnerWebhooks):
		refused.Add(1)
	default:
		t.Errorf("neither kept nor refused for the cap: %v", err)
	}
}
