package interop

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/a2aproject/a2a-go/v2/a2aclient"
	"github.com/a2aproject/a2a-go/v2/a2aclient/agentcard"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// webhook records the posts it receives.
type webhook struct {
	srv   *httptest.Server
	mu    sync.Mutex
	posts []webhookPost
}

type webhookPost struct {
	path   string
	header http.Header
	body   []byte
}

func newWebhook(t *testing.T) *webhook {
	t.Helper()
	w := &webhook{}
	w.srv = httptest.NewServer(http.HandlerFunc(func(_ http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		w.mu.Lock()
		w.posts = append(w.posts, webhookPost{r.URL.Path, r.Header.Clone(), b})
		w.mu.Unlock()
	}))
	t.Cleanup(w.srv.Close)
	return w
}

// wait returns the posts to path once one holds want.
func (w *webhook) wait(t *testing.T, path string, want func(webhookPost) bool) []webhookPost {
	t.Helper()
	var got []webhookPost
	require.Eventually(t, func() bool {
		w.mu.Lock()
		defer w.mu.Unlock()
		got = nil
		found := false
		for _, p := range w.posts {
			if p.path == path {
				got = append(got, p)
				found = found || want(p)
			}
		}
		return found
	}, 15*time.Second, 20*time.Millisecond, "no post to %s", path)
	return got
}

// TestA2AGoClientPush: the official Go SDK's client (v2.3.1), over each
// binding, asks for a task's changes to be posted to a webhook in its
// message's configuration, reads the posts as its own StreamResponse
// (the token in its header), and creates, reads, lists and deletes the
// task's push notification configurations.
func TestA2AGoClientPush(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	hook := newWebhook(t)
	card, err := agentcard.DefaultResolver.Resolve(ctx, sharedServer.url)
	require.NoError(t, err)
	require.True(t, card.Capabilities.PushNotifications)
	for _, binding := range []a2a.TransportProtocol{a2a.TransportProtocolJSONRPC, a2a.TransportProtocolHTTPJSON} {
		t.Run(string(binding), func(t *testing.T) {
			client, err := a2aclient.NewFromCard(ctx, card, a2aclient.WithConfig(a2aclient.Config{PreferredTransports: []a2a.TransportProtocol{binding}}))
			require.NoError(t, err)
			t.Cleanup(func() { _ = client.Destroy() })
			path := "/go-" + string(binding)

			msg := a2a.NewMessage(a2a.MessageRoleUser, a2a.NewTextPart("6 * 7"))
			res, err := client.SendMessage(ctx, &a2a.SendMessageRequest{Message: msg, Config: &a2a.SendMessageConfig{
				ReturnImmediately: true, PushConfig: &a2a.PushConfig{URL: hook.srv.URL + path, Token: "go-token"}}})
			require.NoError(t, err)
			task, ok := res.(*a2a.Task)
			require.True(t, ok, "a task, got %T", res)
			posts := hook.wait(t, path, func(p webhookPost) bool {
				var sr a2a.StreamResponse
				if json.Unmarshal(p.body, &sr) != nil {
					return false
				}
				got, ok := sr.Event.(*a2a.Task)
				return ok && got.ID == task.ID && got.Status.State == a2a.TaskStateCompleted
			})
			last := posts[len(posts)-1]
			assert.Equal(t, "go-token", last.header.Get("A2A-Notification-Token"), "the header a2a-go's receivers read")
			var sr a2a.StreamResponse
			require.NoError(t, json.Unmarshal(last.body, &sr))
			done := sr.Event.(*a2a.Task)
			require.NotEmpty(t, done.Artifacts)
			assert.Equal(t, float64(42), done.Artifacts[0].Parts[0].Data())

			made, err := client.CreateTaskPushConfig(ctx, &a2a.PushConfig{TaskID: task.ID, ID: "go-1", URL: hook.srv.URL + path + "/2",
				Auth: &a2a.PushAuthInfo{Scheme: "Bearer", Credentials: "go-secret"}})
			require.NoError(t, err)
			assert.Equal(t, "go-1", made.ID)
			assert.Equal(t, task.ID, made.TaskID)
			got, err := client.GetTaskPushConfig(ctx, &a2a.GetTaskPushConfigRequest{TaskID: task.ID, ID: "go-1"})
			require.NoError(t, err)
			assert.Equal(t, hook.srv.URL+path+"/2", got.URL)
			require.NotNil(t, got.Auth)
			assert.Equal(t, "go-secret", got.Auth.Credentials)
			all, err := client.ListTaskPushConfigs(ctx, &a2a.ListTaskPushConfigRequest{TaskID: task.ID})
			require.NoError(t, err)
			assert.Len(t, all, 2, "the message's and go-1")
			require.NoError(t, client.DeleteTaskPushConfig(ctx, &a2a.DeleteTaskPushConfigRequest{TaskID: task.ID, ID: "go-1"}))
			_, err = client.GetTaskPushConfig(ctx, &a2a.GetTaskPushConfigRequest{TaskID: task.ID, ID: "go-1"})
			require.Error(t, err)
			assert.ErrorIs(t, err, a2a.ErrTaskNotFound)

			// A webhook on a private address is refused as invalid params.
			_, err = client.CreateTaskPushConfig(ctx, &a2a.PushConfig{TaskID: task.ID, URL: "http://169.254.169.254/latest/meta-data/"})
			require.Error(t, err)
			assert.ErrorIs(t, err, a2a.ErrInvalidParams)
		})
	}
}

// TestA2AJSClientPush: the official JavaScript SDK's client (1.3.0), over
// each binding, does the same (testdata/frameworks/a2a-js-push.mjs).
func TestA2AJSClientPush(t *testing.T) {
	t.Parallel()
	node, dir := frameworkScripts(t)
	hook := newWebhook(t)
	arg, err := json.Marshal(map[string]string{"url": sharedServer.url, "hook": hook.srv.URL})
	require.NoError(t, err)
	out := runScript(t, node, dir, "a2a-js-push.mjs", string(arg))
	var f struct {
		Bindings map[string]map[string]struct {
			OK    json.RawMessage `json:"ok"`
			Error string          `json:"error"`
		} `json:"bindings"`
	}
	require.NoError(t, json.Unmarshal(out, &f), "%s", out)
	require.Len(t, f.Bindings, 2)
	for binding, got := range f.Bindings {
		for _, step := range []string{"send", "create", "get", "list", "delete"} {
			require.Empty(t, got[step].Error, "%s %s: %s", binding, step, out)
		}
		var task struct {
			ID string `json:"id"`
		}
		require.NoError(t, json.Unmarshal(got["send"].OK, &task), "%s", got["send"].OK)
		path := "/js-" + binding
		posts := hook.wait(t, path, func(p webhookPost) bool {
			var body struct {
				Task struct {
					ID     string `json:"id"`
					Status struct {
						State string `json:"state"`
					} `json:"status"`
				} `json:"task"`
			}
			return json.Unmarshal(p.body, &body) == nil && body.Task.ID == task.ID && body.Task.Status.State == "TASK_STATE_COMPLETED"
		})
		assert.Equal(t, "js-token", posts[len(posts)-1].header.Get("X-A2A-Notification-Token"), "the header @a2a-js/sdk's receivers read")

		var made struct {
			ID, TaskID, URL string
		}
		require.NoError(t, json.Unmarshal(got["create"].OK, &made), "%s", got["create"].OK)
		assert.Equal(t, "js-1", made.ID)
		assert.Equal(t, task.ID, made.TaskID)
		require.NoError(t, json.Unmarshal(got["get"].OK, &made))
		assert.Equal(t, hook.srv.URL+path+"/2", made.URL)
		var list struct {
			Configs []json.RawMessage `json:"configs"`
		}
		require.NoError(t, json.Unmarshal(got["list"].OK, &list), "%s", got["list"].OK)
		assert.Len(t, list.Configs, 2, binding)
		assert.NotEmpty(t, got["afterDelete"].Error, "%s: the deleted configuration is gone", binding)
		assert.NotEmpty(t, got["private"].Error, "%s: a private webhook is refused", binding)
	}
}
