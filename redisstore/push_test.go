package redisstore_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/otcgo/otc"
	"github.com/otcgo/otc/a2a"
	"github.com/otcgo/otc/redisstore"
	"github.com/otcgo/otc/tasks"
)

// TestA2APushAcrossReplicas: two A2A replicas share a task store in
// Redis. A webhook configured on one replica for a task the other runs is
// told of each change once, whichever replica made it: the running
// replica's (working again, completed), and the other's (cancelled).
func TestA2APushAcrossReplicas(t *testing.T) {
	client := needRedis(t)
	prefix := freshPrefix(t, client)

	var mu sync.Mutex
	var states []string
	hook := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		var body struct {
			Task struct {
				Status struct {
					State string `json:"state"`
				} `json:"status"`
			} `json:"task"`
		}
		_ = json.Unmarshal(b, &body)
		mu.Lock()
		states = append(states, body.Task.Status.State)
		mu.Unlock()
	}))
	t.Cleanup(hook.Close)
	got := func() []string {
		mu.Lock()
		defer mu.Unlock()
		return append([]string(nil), states...)
	}

	serve := func() string {
		reg := otc.NewRegistry(&otc.RegistryOptions{Logger: slog.New(slog.DiscardHandler)})
		require.NoError(t, otc.Register(reg, otc.Tool{ID: "Job.Ask", Version: "1.0.0", Description: "Asks for a name.", Tasks: otc.TasksOptional},
			func(ctx context.Context, _ struct{}) (string, error) {
				var in struct {
					Name string `json:"name"`
				}
				if _, err := otc.Elicit(ctx, "Name?", &in); err != nil {
					return "", err
				}
				return "hello " + in.Name, nil
			}))
		store := redisstore.NewTaskStore(client, &redisstore.TaskOptions{Prefix: prefix})
		h := a2a.NewHandler(reg, &a2a.Options{Tasks: &tasks.Options{Store: store}, Logger: slog.New(slog.DiscardHandler),
			Push: &a2a.PushOptions{AllowedNetworks: []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8")}}})
		srv := httptest.NewServer(h)
		t.Cleanup(srv.Close)
		return srv.URL
	}
	a, b := serve(), serve()
	send := func(base, body string) map[string]any {
		req, err := http.NewRequestWithContext(t.Context(), http.MethodPost, base+"/", strings.NewReader(body))
		require.NoError(t, err)
		req.Header.Set("A2A-Version", a2a.Version10)
		req.Header.Set("Content-Type", "application/json")
		resp, err := http.DefaultClient.Do(req)
		require.NoError(t, err)
		defer resp.Body.Close()
		var out struct {
			Result map[string]any `json:"result"`
			Error  map[string]any `json:"error"`
		}
		require.NoError(t, json.NewDecoder(resp.Body).Decode(&out))
		require.Nil(t, out.Error, "%v", out.Error)
		return out.Result
	}
	taskOf := func(res map[string]any) (string, string) {
		if w, ok := res["task"].(map[string]any); ok {
			res = w
		}
		return res["id"].(string), res["status"].(map[string]any)["state"].(string)
	}

	// The task runs on a and asks; its webhook is configured on b, and
	// it is answered on b.
	id, state := taskOf(send(a, `{"jsonrpc":"2.0","id":1,"method":"SendMessage","params":{"message":{"messageId":"m1","role":"ROLE_USER","parts":[{"data":{"tool":"Job_Ask","input":{}}}]}}}`))
	require.Equal(t, "TASK_STATE_INPUT_REQUIRED", state)
	send(b, `{"jsonrpc":"2.0","id":1,"method":"CreateTaskPushNotificationConfig","params":{"taskId":"`+id+`","url":"`+hook.URL+`"}}`)
	_, state = taskOf(send(b, `{"jsonrpc":"2.0","id":1,"method":"SendMessage","params":{"message":{"messageId":"m2","taskId":"`+id+`","role":"ROLE_USER","parts":[{"data":{"name":"Ada"}}]}}}`))
	require.Equal(t, "TASK_STATE_COMPLETED", state)
	require.Eventually(t, func() bool { s := got(); return len(s) > 0 && s[len(s)-1] == "TASK_STATE_COMPLETED" }, 10*time.Second, 10*time.Millisecond)
	time.Sleep(200 * time.Millisecond) // a second delivery would have come by now
	assert.Equal(t, []string{"TASK_STATE_WORKING", "TASK_STATE_COMPLETED"}, got(), "each change once, from the replica that ran the task")

	// Another task, asking on a, cancelled on b.
	mu.Lock()
	states = nil
	mu.Unlock()
	id, _ = taskOf(send(a, `{"jsonrpc":"2.0","id":1,"method":"SendMessage","params":{"message":{"messageId":"m3","role":"ROLE_USER","parts":[{"data":{"tool":"Job_Ask","input":{}}}]}}}`))
	send(a, `{"jsonrpc":"2.0","id":1,"method":"CreateTaskPushNotificationConfig","params":{"taskId":"`+id+`","url":"`+hook.URL+`"}}`)
	send(b, `{"jsonrpc":"2.0","id":1,"method":"CancelTask","params":{"id":"`+id+`"}}`)
	require.Eventually(t, func() bool { return len(got()) > 0 }, 10*time.Second, 10*time.Millisecond)
	time.Sleep(200 * time.Millisecond)
	assert.Equal(t, []string{"TASK_STATE_CANCELED"}, got(), "once, from the replica that cancelled it; not again when a's call stops")
}

// TestA2APushCallerCapAtOnce: 300 messages at once from one caller, each
// with a push notification configuration, through two replicas sharing a
// task store in Redis: the caller's cap (100 configurations across its
// tasks) holds, each refused message starts no task, and the tasks hold
// exactly the configurations that were accepted.
func TestA2APushCallerCapAtOnce(t *testing.T) {
	client := needRedis(t)
	store := redisstore.NewTaskStore(client, &redisstore.TaskOptions{Prefix: freshPrefix(t, client), MaxTasksPerOwner: 1000, MaxRunningPerOwner: 1000})
	release := make(chan struct{})
	t.Cleanup(func() { close(release) })
	replicas := []string{pushServer(t, store, 1000, release), pushServer(t, store, 1000, release)}
	const n = 300
	got := pushAtOnce(t, replicas, n, func(b string) string {
		switch {
		case strings.Contains(b, "TASK_STATE_WORKING"):
			return "accepted"
		case strings.Contains(b, "across your tasks"):
			return "refused"
		}
		return ""
	})
	accepted := got["accepted"]
	assert.Equal(t, tasks.DefaultMaxWebhooksPerOwner, accepted, "the caller's cap")
	assert.Equal(t, n-tasks.DefaultMaxWebhooksPerOwner, got["refused"])
	held, hooks := webhooksHeld(t, store)
	assert.Equal(t, accepted, held, "a refused message started no task")
	assert.Equal(t, accepted, hooks)
}

// TestA2APushRefusedForRoom: messages with a push notification
// configuration that find the server running as many tasks as it may are
// answered with a message that says so (a JSON-RPC result, as every
// refused call is in A2A) and keep no configuration: the task store holds
// the configurations of the tasks that run, and no more. (An attack run
// that counted every result as accepted saw 144 of 300 against a cap of
// 100 on the example server: 100 accepted, and 44 of these, refused for
// its 256 running tasks.)
func TestA2APushRefusedForRoom(t *testing.T) {
	client := needRedis(t)
	store := redisstore.NewTaskStore(client, &redisstore.TaskOptions{Prefix: freshPrefix(t, client), MaxTasksPerOwner: 1000, MaxRunningPerOwner: 1000})
	release := make(chan struct{})
	t.Cleanup(func() { close(release) })
	const n = 30
	got := pushAtOnce(t, []string{pushServer(t, store, 10, release)}, n, func(b string) string {
		switch {
		case strings.Contains(b, "TASK_STATE_WORKING"):
			return "accepted"
		case strings.Contains(b, `"result":{"message"`) && strings.Contains(b, "this server runs as many tasks as it may (10)"):
			return "full"
		}
		return ""
	})
	accepted := got["accepted"]
	assert.Equal(t, 10, accepted, "the server's room")
	assert.Equal(t, n-10, got["full"])
	held, hooks := webhooksHeld(t, store)
	assert.Equal(t, accepted, held, "a message refused for room started no task")
	assert.Equal(t, accepted, hooks, "and kept no configuration")
}

// pushServer serves an A2A agent on store, running at most maxRunning
// tasks, whose tool Job_Wait waits for release; push notifications may go
// to the loopback.
func pushServer(t *testing.T, store tasks.Store, maxRunning int, release <-chan struct{}) string {
	t.Helper()
	reg := otc.NewRegistry(&otc.RegistryOptions{Logger: slog.New(slog.DiscardHandler)})
	require.NoError(t, otc.Register(reg, otc.Tool{ID: "Job.Wait", Version: "1.0.0", Description: "Waits.", Tasks: otc.TasksOptional},
		func(ctx context.Context, _ struct{}) (string, error) {
			select {
			case <-release:
			case <-ctx.Done():
			}
			return "done", nil
		}))
	h := a2a.NewHandler(reg, &a2a.Options{Tasks: &tasks.Options{Store: store, MaxRunning: maxRunning}, Logger: slog.New(slog.DiscardHandler),
		Push: &a2a.PushOptions{AllowedNetworks: []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8")}}})
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	return srv.URL
}

// pushAtOnce sends n messages at once from one caller, spread over urls,
// each calling Job_Wait as a task with a push notification configuration,
// and counts their answers by what class names each (an answer it names
// nothing for fails the test).
func pushAtOnce(t *testing.T, urls []string, n int, class func(body string) string) map[string]int {
	t.Helper()
	var mu sync.Mutex
	got := map[string]int{}
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			body := fmt.Sprintf(`{"jsonrpc":"2.0","id":1,"method":"SendMessage","params":{"message":{"messageId":"m%d","role":"ROLE_USER","parts":[{"data":{"tool":"Job_Wait","input":{}}}]},"configuration":{"returnImmediately":true,"taskPushNotificationConfig":{"url":"http://127.0.0.1:1/hook"}}}}`, i)
			req, err := http.NewRequest(http.MethodPost, urls[i%len(urls)]+"/", strings.NewReader(body))
			if !assert.NoError(t, err) {
				return
			}
			req.Header.Set("A2A-Version", a2a.Version10)
			req.Header.Set("Content-Type", "application/json")
			resp, err := http.DefaultClient.Do(req)
			if !assert.NoError(t, err) {
				return
			}
			b, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			c := class(string(b))
			if c == "" {
				t.Errorf("an answer of no class: %s", b)
			}
			mu.Lock()
			got[c]++
			mu.Unlock()
		})
	}
	wg.Wait()
	return got
}

// webhooksHeld is how many tasks the anonymous caller at the loopback
// holds in store, and how many push notification configurations they
// have.
func webhooksHeld(t *testing.T, store *redisstore.TaskStore) (held, hooks int) {
	t.Helper()
	all, err := store.List(context.Background(), "a:127.0.0.1")
	require.NoError(t, err)
	for _, task := range all {
		hooks += len(task.Webhooks)
	}
	return len(all), hooks
}
