package a2a_test

import (
	"bytes"
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/MicahParks/jwkset"
	"github.com/golang-jwt/jwt/v5"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/otcgo/otc"
	"github.com/otcgo/otc/a2a"
	"github.com/otcgo/otc/internal/testkit"
	"github.com/otcgo/otc/tasks"
)

// loopback lets webhooks on this machine's loopback addresses be used.
var loopback = []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8"), netip.MustParsePrefix("::1/128")}

// hook is a webhook that records what it is sent, answering each post
// with the next of its statuses (200 once they run out).
type hook struct {
	srv      *httptest.Server
	mu       sync.Mutex
	got      []hookPost
	statuses []int
	arrived  chan struct{}
}

// hookPost is one post a webhook received.
type hookPost struct {
	header http.Header
	body   []byte
}

func newHook(t *testing.T, statuses ...int) *hook {
	t.Helper()
	h := &hook{statuses: statuses, arrived: make(chan struct{}, 100)}
	h.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		h.mu.Lock()
		h.got = append(h.got, hookPost{r.Header.Clone(), b})
		status := http.StatusOK
		if len(h.statuses) > 0 {
			status, h.statuses = h.statuses[0], h.statuses[1:]
		}
		h.mu.Unlock()
		if status == http.StatusFound {
			w.Header().Set("Location", "http://127.0.0.1:1/elsewhere")
		}
		w.WriteHeader(status)
		h.arrived <- struct{}{}
	}))
	t.Cleanup(h.srv.Close)
	return h
}

// posts are the posts received so far.
func (h *hook) posts() []hookPost {
	h.mu.Lock()
	defer h.mu.Unlock()
	return append([]hookPost(nil), h.got...)
}

// states are the task states of the posts received so far (1.0's
// StreamResponse {"task": ...}, or 0.3's task).
func (h *hook) states(t *testing.T) []string {
	t.Helper()
	var out []string
	for _, p := range h.posts() {
		var body struct {
			Task *struct {
				Status struct {
					State string `json:"state"`
				} `json:"status"`
			} `json:"task"`
			Kind   string `json:"kind"`
			Status struct {
				State string `json:"state"`
			} `json:"status"`
		}
		require.NoError(t, json.Unmarshal(p.body, &body), "%s", p.body)
		if body.Task != nil {
			out = append(out, body.Task.Status.State)
		} else {
			out = append(out, body.Status.State)
		}
	}
	return out
}

// waitFor waits until the webhook's states end with last.
func (h *hook) waitFor(t *testing.T, last string) []string {
	t.Helper()
	deadline := time.After(10 * time.Second)
	for {
		if s := h.states(t); len(s) > 0 && s[len(s)-1] == last {
			return s
		}
		select {
		case <-h.arrived:
		case <-deadline:
			t.Fatalf("the webhook never received %s; it received %v", last, h.states(t))
		}
	}
}

// logBuffer is a logger's output, safe for concurrent use.
type logBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *logBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *logBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// pushServer serves historyServer's tools and Job.Slow (released by the
// returned channel) with push notifications.
func pushServer(t *testing.T, push *a2a.PushOptions) (*server, *a2a.Handler, chan struct{}, *logBuffer) {
	t.Helper()
	return pushServerWith(t, push, nil)
}

// pushServerWith is pushServer with its task store (nil: the default).
func pushServerWith(t *testing.T, push *a2a.PushOptions, store tasks.Store) (*server, *a2a.Handler, chan struct{}, *logBuffer) {
	t.Helper()
	release := make(chan struct{})
	reg := otc.NewRegistry(nil)
	registerAskName(t, reg)
	require.NoError(t, otc.Register(reg, otc.Tool{ID: "Job.Slow", Version: "1.0.0", Description: "Waits to be released.", Tasks: otc.TasksOptional},
		func(ctx context.Context, _ struct{}) (string, error) {
			select {
			case <-release:
				return "finished", nil
			case <-ctx.Done():
				return "", ctx.Err()
			}
		}))
	logs := &logBuffer{}
	mux := http.NewServeMux()
	srv := httptest.NewUnstartedServer(mux)
	url := "http://" + srv.Listener.Addr().String() + "/a2a"
	h := a2a.NewHandler(reg, &a2a.Options{URL: url, Authenticator: testkit.ClaimsAuth(), Push: push, Logger: slog.New(slog.NewTextHandler(logs, nil)),
		Tasks: &tasks.Options{Store: store}})
	if push != nil {
		a2a.SetPushBackoff(h, 20*time.Millisecond)
	}
	mux.Handle("/a2a/", http.StripPrefix("/a2a", h))
	srv.Start()
	t.Cleanup(srv.Close)
	return &server{url: url}, h, release, logs
}

// rpcAs sends a 1.0 JSON-RPC request as caller sub.
func (s *server) rpcAs(t *testing.T, sub, method, params string) rpc {
	t.Helper()
	return decodeRPC(t, s.post(t, "/", a2a.Version10, `{"jsonrpc":"2.0","id":1,"method":"`+method+`","params":`+params+`}`, as(sub)...))
}

// startSlow starts a Job.Slow task for sub and returns its id.
func (s *server) startSlow(t *testing.T, sub, messageID string) string {
	t.Helper()
	id, state, raw := rpcTask(t, s.post(t, "/", a2a.Version10, `{"jsonrpc":"2.0","id":1,"method":"SendMessage","params":{"message":{"messageId":"`+messageID+`","role":"ROLE_USER","parts":[{"data":{"tool":"Job_Slow","input":{}}}]},"configuration":{"returnImmediately":true}}}`, as(sub)...))
	require.Equal(t, "TASK_STATE_WORKING", state, "%s", raw)
	return id
}

// TestPushConfigs: the four configuration methods over JSON-RPC (1.0 and
// 0.3's shapes) and HTTP+JSON; configurations belong to the task's
// caller; they are bounded per task and per caller; a bad one is refused
// naming its field.
func TestPushConfigs(t *testing.T) {
	hk := newHook(t)
	s, _, release, _ := pushServerWith(t, &a2a.PushOptions{AllowedNetworks: loopback, MaxPerTask: 2}, tasks.NewMemoryStore(&tasks.MemoryStoreOptions{MaxWebhooksPerOwner: 3}))
	defer close(release)
	card := s.get(t, "/.well-known/agent-card.json")
	assert.Contains(t, string(card.body), `"pushNotifications":true`)

	task := s.startSlow(t, "alice", "p1")
	r := s.rpcAs(t, "alice", "CreateTaskPushNotificationConfig", `{"taskId":"`+task+`","id":"c1","url":"`+hk.srv.URL+`/hook","token":"tok-1","authentication":{"scheme":"Bearer","credentials":"secret"}}`)
	require.Nil(t, r.Error, "%s", r.Result)
	assert.JSONEq(t, `{"taskId":"`+task+`","id":"c1","url":"`+hk.srv.URL+`/hook","token":"tok-1","authentication":{"scheme":"Bearer","credentials":"secret"}}`, string(r.Result))
	r = s.rpcAs(t, "alice", "CreateTaskPushNotificationConfig", `{"taskId":"`+task+`","url":"`+hk.srv.URL+`/other"}`)
	require.Nil(t, r.Error)
	var made struct {
		ID string `json:"id"`
	}
	require.NoError(t, json.Unmarshal(r.Result, &made))
	assert.NotEmpty(t, made.ID, "an id is given when the caller names none")

	r = s.rpcAs(t, "alice", "GetTaskPushNotificationConfig", `{"taskId":"`+task+`","id":"c1"}`)
	require.Nil(t, r.Error)
	assert.Contains(t, string(r.Result), `"token":"tok-1"`)
	r = s.rpcAs(t, "alice", "ListTaskPushNotificationConfigs", `{"taskId":"`+task+`"}`)
	require.Nil(t, r.Error)
	var list struct {
		Configs       []struct{ ID string } `json:"configs"`
		NextPageToken *string               `json:"nextPageToken"`
	}
	require.NoError(t, json.Unmarshal(r.Result, &list))
	assert.Len(t, list.Configs, 2)
	require.NotNil(t, list.NextPageToken)

	// At most two per task; replacing one is not a new one.
	r = s.rpcAs(t, "alice", "CreateTaskPushNotificationConfig", `{"taskId":"`+task+`","id":"c3","url":"`+hk.srv.URL+`/3"}`)
	require.NotNil(t, r.Error)
	assert.Equal(t, -32602, r.Error.Code)
	assert.Contains(t, r.Error.Message, "as many as it may")
	r = s.rpcAs(t, "alice", "CreateTaskPushNotificationConfig", `{"taskId":"`+task+`","id":"c1","url":"`+hk.srv.URL+`/replaced"}`)
	require.Nil(t, r.Error, "%v", r.Error)
	// At most three per caller, across tasks.
	other := s.startSlow(t, "alice", "p2")
	r = s.rpcAs(t, "alice", "CreateTaskPushNotificationConfig", `{"taskId":"`+other+`","url":"`+hk.srv.URL+`/4"}`)
	require.Nil(t, r.Error)
	r = s.rpcAs(t, "alice", "CreateTaskPushNotificationConfig", `{"taskId":"`+other+`","url":"`+hk.srv.URL+`/5"}`)
	require.NotNil(t, r.Error)
	assert.Contains(t, r.Error.Message, "across your tasks")
	// A message whose configuration would pass it starts no task.
	raw := s.post(t, "/", a2a.Version10, `{"jsonrpc":"2.0","id":1,"method":"SendMessage","params":{"message":{"messageId":"p3","role":"ROLE_USER","parts":[{"data":{"tool":"Job_Slow","input":{}}}]},"configuration":{"returnImmediately":true,"taskPushNotificationConfig":{"url":"`+hk.srv.URL+`/6"}}}}`, as("alice")...)
	assert.Contains(t, string(raw.body), "across your tasks", "%s", raw.body)
	assert.NotContains(t, string(raw.body), `"TASK_STATE_WORKING"`)

	// Another caller finds none of it.
	for _, c := range []struct{ method, params string }{
		{"CreateTaskPushNotificationConfig", `{"taskId":"` + task + `","url":"` + hk.srv.URL + `/mallory"}`},
		{"GetTaskPushNotificationConfig", `{"taskId":"` + task + `","id":"c1"}`},
		{"ListTaskPushNotificationConfigs", `{"taskId":"` + task + `"}`},
		{"DeleteTaskPushNotificationConfig", `{"taskId":"` + task + `","id":"c1"}`},
	} {
		r := s.rpcAs(t, "bob", c.method, c.params)
		require.NotNil(t, r.Error, c.method)
		assert.Equal(t, -32001, r.Error.Code, c.method)
	}
	r = s.rpcAs(t, "alice", "GetTaskPushNotificationConfig", `{"taskId":"`+task+`","id":"c1"}`)
	require.Nil(t, r.Error, "bob deleted nothing")

	// Delete, twice; then it is gone.
	for range 2 {
		r = s.rpcAs(t, "alice", "DeleteTaskPushNotificationConfig", `{"taskId":"`+task+`","id":"c1"}`)
		require.Nil(t, r.Error)
		assert.JSONEq(t, `{}`, string(r.Result))
	}
	r = s.rpcAs(t, "alice", "GetTaskPushNotificationConfig", `{"taskId":"`+task+`","id":"c1"}`)
	require.NotNil(t, r.Error)
	assert.Equal(t, -32001, r.Error.Code)

	// Bad configurations, each refused naming its field.
	for _, c := range []struct{ params, field string }{
		{`{"taskId":"` + task + `"}`, "url"},
		{`{"url":"` + hk.srv.URL + `"}`, "taskId"},
		{`{"taskId":"` + task + `","url":"ftp://x.example/"}`, "url"},
		{`{"taskId":"` + task + `","url":"` + hk.srv.URL + `","authentication":{"credentials":"x"}}`, "authentication.scheme"},
		{`{"taskId":"` + task + `","url":"` + hk.srv.URL + `","authentication":{"scheme":"Bearer"}}`, "authentication.credentials"},
		{`{"taskId":"` + task + `","url":"` + hk.srv.URL + `","token":"a\nb"}`, "token"},
		{`{"taskId":"` + task + `","url":"` + hk.srv.URL + `","id":"a/b"}`, "id"},
	} {
		r := s.rpcAs(t, "alice", "CreateTaskPushNotificationConfig", c.params)
		require.NotNil(t, r.Error, c.params)
		assert.Equal(t, -32602, r.Error.Code, c.params)
		assert.Contains(t, r.Error.Message, c.field, c.params)
	}

	// 0.3's shapes.
	a := s.post(t, "/", "", `{"jsonrpc":"2.0","id":1,"method":"tasks/pushNotificationConfig/set","params":{"taskId":"`+other+`","pushNotificationConfig":{"id":"old","url":"`+hk.srv.URL+`/03","authentication":{"schemes":["Basic"],"credentials":"dTpw"}}}}`, as("alice")...)
	r = decodeRPC(t, a)
	require.Nil(t, r.Error, "%s", a.body)
	assert.JSONEq(t, `{"taskId":"`+other+`","pushNotificationConfig":{"id":"old","url":"`+hk.srv.URL+`/03","authentication":{"schemes":["Basic"],"credentials":"dTpw"}}}`, string(r.Result))
	a = s.post(t, "/", "", `{"jsonrpc":"2.0","id":1,"method":"tasks/pushNotificationConfig/list","params":{"id":"`+other+`"}}`, as("alice")...)
	r = decodeRPC(t, a)
	require.Nil(t, r.Error)
	var list03 []struct {
		TaskID string `json:"taskId"`
	}
	require.NoError(t, json.Unmarshal(r.Result, &list03), "an array: %s", r.Result)
	assert.Len(t, list03, 2)
	a = s.post(t, "/", "", `{"jsonrpc":"2.0","id":1,"method":"tasks/pushNotificationConfig/delete","params":{"id":"`+other+`","pushNotificationConfigId":"old"}}`, as("alice")...)
	r = decodeRPC(t, a)
	require.Nil(t, r.Error)
	assert.Equal(t, "null", string(r.Result))

	// HTTP+JSON.
	a = s.post(t, "/tasks/"+task+"/pushNotificationConfigs", a2a.Version10, `{"id":"rest","url":"`+hk.srv.URL+`/rest"}`, as("alice")...)
	require.Equal(t, http.StatusOK, a.status, "%s", a.body)
	a = s.get(t, "/tasks/"+task+"/pushNotificationConfigs/rest", as("alice")...)
	require.Equal(t, http.StatusOK, a.status, "%s", a.body)
	assert.Contains(t, string(a.body), `"url":"`+hk.srv.URL+`/rest"`)
	a = s.get(t, "/tasks/"+task+"/pushNotificationConfigs", as("alice")...)
	require.Equal(t, http.StatusOK, a.status)
	assert.Contains(t, string(a.body), `"configs":[`)
	a = s.do(t, http.MethodDelete, "/tasks/"+task+"/pushNotificationConfigs/rest", a2a.Version10, "", as("alice")...)
	require.Equal(t, http.StatusOK, a.status, "%s", a.body)
	a = s.get(t, "/tasks/"+task+"/pushNotificationConfigs/rest", as("alice")...)
	assert.Equal(t, http.StatusNotFound, a.status)
	a = s.get(t, "/tasks/"+task+"/pushNotificationConfigs/rest", as("bob")...)
	assert.Equal(t, http.StatusNotFound, a.status)
	a = s.post(t, "/tasks/"+task+"/pushNotificationConfigs", a2a.Version10, `{"url":"http://[::1"}`, as("alice")...)
	assert.Equal(t, http.StatusBadRequest, a.status)
	assert.Contains(t, string(a.body), "url")

	// Without Options.Push, the methods say push is not supported.
	plain := historyServer(t)
	assert.Contains(t, string(plain.get(t, "/.well-known/agent-card.json").body), `"pushNotifications":false`)
	r = plain.rpcAs(t, "alice", "CreateTaskPushNotificationConfig", `{"taskId":"x","url":"https://hooks.example.com/"}`)
	require.NotNil(t, r.Error)
	assert.Equal(t, -32003, r.Error.Code)
	r = decodeRPC(t, plain.post(t, "/", a2a.Version10, `{"jsonrpc":"2.0","id":1,"method":"SendMessage","params":{"message":{"messageId":"x","role":"ROLE_USER","parts":[{"data":{"tool":"Ask_Name","input":{}}}]},"configuration":{"taskPushNotificationConfig":{"url":"https://hooks.example.com/"}}}}`, as("alice")...))
	require.NotNil(t, r.Error)
	assert.Equal(t, -32003, r.Error.Code)
}

// TestPushWebhookChecked: a webhook on an address the server alone can
// reach is refused when it is given, in every form (IPv4, IPv6, mapped,
// NAT64, a DNS name resolving to one), and a name that resolves elsewhere
// by the time of delivery (DNS rebinding) is refused when dialled.
func TestPushWebhookChecked(t *testing.T) {
	hk := newHook(t)
	port := hk.srv.URL[strings.LastIndex(hk.srv.URL, ":")+1:]
	var rebound sync.Once
	answers := map[string]string{"evil.example": "127.0.0.1", "meta.example": "169.254.169.254", "v6.example": "fd00:ec2::254"}
	opts := &a2a.PushOptions{Attempts: 1}
	a2a.SetPushLookup(opts, func(_ context.Context, host string) ([]netip.Addr, error) {
		if host == "rebind.example" {
			addr := "127.0.0.1"
			rebound.Do(func() { addr = "93.184.216.34" }) // public when checked, loopback when dialled
			return []netip.Addr{netip.MustParseAddr(addr)}, nil
		}
		if a, ok := answers[host]; ok {
			return []netip.Addr{netip.MustParseAddr(a)}, nil
		}
		return nil, errors.New("no such host")
	})
	s, _, release, logs := pushServer(t, opts)
	task := s.startSlow(t, "alice", "w1")
	for _, u := range []string{
		hk.srv.URL, "http://localhost:" + port + "/", "http://[::1]:" + port + "/", "http://10.1.2.3/", "http://192.168.0.1/",
		"http://169.254.169.254/latest/meta-data/", "http://[::ffff:127.0.0.1]:" + port + "/", "http://[64:ff9b::a9fe:a9fe]/",
		"http://[fe80::1]/", "http://0.0.0.0:" + port + "/", "http://evil.example:" + port + "/", "http://meta.example/", "http://v6.example/",
		"http://nowhere.example/",
		"http://[::ffff:0:127.0.0.1]:" + port + "/", "http://[::ffff:0:169.254.169.254]/", // IPv4-translated
		"http://[2001:db8::1]/", "http://[3fff::1]/", "http://[2001:2::1]/", "http://[2001:20::1]/", "http://192.31.196.1/", "http://[5f00::1]/",
	} {
		r := s.rpcAs(t, "alice", "CreateTaskPushNotificationConfig", `{"taskId":"`+task+`","url":"`+u+`"}`)
		require.NotNil(t, r.Error, u)
		assert.Equal(t, -32602, r.Error.Code, u)
		assert.Contains(t, r.Error.Message, "url", u)
	}
	r := s.rpcAs(t, "alice", "CreateTaskPushNotificationConfig", `{"taskId":"`+task+`","url":"http://rebind.example:`+port+`/"}`)
	require.Nil(t, r.Error, "public when given: %v", r.Error)
	release <- struct{}{}
	require.Eventually(t, func() bool { return strings.Contains(logs.String(), "could not be delivered") }, 10*time.Second, 10*time.Millisecond)
	assert.Contains(t, logs.String(), "not a public address")
	assert.Empty(t, hk.posts(), "nothing reached the loopback webhook")
}

// TestPushDelivery: each change of a task's state is posted to its
// webhook, in order, as a StreamResponse {"task": ...}, with the
// configuration's token in both SDKs' headers and a JWT the agent's JWKS
// verifies (for the webhook, over the body's hash); a cancelled task is
// posted too; 0.3's configuration gets 0.3's payload.
func TestPushDelivery(t *testing.T) {
	hk := newHook(t)
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	require.NoError(t, err)
	s, _, release, _ := pushServer(t, &a2a.PushOptions{AllowedNetworks: loopback, SigningKey: key})

	// The JWKS, read without credentials.
	a := s.do(t, http.MethodGet, "/.well-known/jwks.json", "", "")
	require.Equal(t, http.StatusOK, a.status, "%s", a.body)
	store := jwkset.NewMemoryStorage()
	var set jwkset.JWKSMarshal
	require.NoError(t, json.Unmarshal(a.body, &set))
	require.Len(t, set.Keys, 1)
	j, err := jwkset.NewJWKFromMarshal(set.Keys[0], jwkset.JWKMarshalOptions{}, jwkset.JWKValidateOptions{})
	require.NoError(t, err)
	require.NoError(t, store.KeyWrite(t.Context(), j))

	// The configuration comes in a request whose Host header names
	// another agent: the agent signs its own URL all the same.
	url := hk.srv.URL + "/hook?for=alice"
	id, state, raw := rpcTask(t, s.post(t, "/", a2a.Version10, `{"jsonrpc":"2.0","id":1,"method":"SendMessage","params":{"message":{"messageId":"d1","role":"ROLE_USER","parts":[{"data":{"tool":"Ask_Name","input":{}}}]},"configuration":{"taskPushNotificationConfig":{"url":"`+url+`","token":"tok-d1"}}}}`, append(as("alice"), "Host", "bank.example")...))
	require.Equal(t, "TASK_STATE_INPUT_REQUIRED", state, "%s", raw)
	hk.waitFor(t, "TASK_STATE_INPUT_REQUIRED")
	_, state, _ = rpcTask(t, s.post(t, "/", a2a.Version10, `{"jsonrpc":"2.0","id":1,"method":"SendMessage","params":{"message":{"messageId":"d2","taskId":"`+id+`","role":"ROLE_USER","parts":[{"data":{"name":"Ada"}}]}}}`, as("alice")...))
	require.Equal(t, "TASK_STATE_COMPLETED", state)
	states := hk.waitFor(t, "TASK_STATE_COMPLETED")
	assert.Equal(t, []string{"TASK_STATE_WORKING", "TASK_STATE_INPUT_REQUIRED", "TASK_STATE_WORKING", "TASK_STATE_COMPLETED"}, states)

	for _, p := range hk.posts() {
		assert.Equal(t, "application/a2a+json", p.header.Get("Content-Type"))
		assert.Equal(t, "tok-d1", p.header.Get("A2A-Notification-Token"))
		assert.Equal(t, "tok-d1", p.header.Get("X-A2A-Notification-Token"))
		tok, ok := strings.CutPrefix(p.header.Get("Authorization"), "Bearer ")
		require.True(t, ok, "signed: %v", p.header)
		parsed, err := jwt.Parse(tok, func(tk *jwt.Token) (any, error) {
			k, err := store.KeyRead(context.Background(), tk.Header["kid"].(string))
			if err != nil {
				return nil, err
			}
			return k.Key(), nil
		}, jwt.WithValidMethods([]string{"ES256"}), jwt.WithAudience(url), jwt.WithIssuedAt(), jwt.WithExpirationRequired())
		require.NoError(t, err)
		claims := parsed.Claims.(jwt.MapClaims)
		sum := sha256.Sum256(p.body)
		assert.Equal(t, hex.EncodeToString(sum[:]), claims["request_body_sha256"])
		assert.Equal(t, id, claims["taskId"])
		assert.Equal(t, strings.TrimSuffix(s.url, "/"), claims["iss"], "the agent's configured URL, not the Host a caller sent")
	}
	var last struct {
		Task struct {
			ID        string            `json:"id"`
			Artifacts []json.RawMessage `json:"artifacts"`
		} `json:"task"`
	}
	posts := hk.posts()
	require.NoError(t, json.Unmarshal(posts[len(posts)-1].body, &last))
	assert.Equal(t, id, last.Task.ID)
	assert.NotEmpty(t, last.Task.Artifacts, "the ended task with its result")

	// A cancelled task is posted; credentials of the configuration are
	// sent instead of a JWT; 0.3's configuration gets the task itself.
	cancelled := newHook(t)
	task := s.startSlow(t, "alice", "d3")
	r := decodeRPC(t, s.post(t, "/", "", `{"jsonrpc":"2.0","id":1,"method":"tasks/pushNotificationConfig/set","params":{"taskId":"`+task+`","pushNotificationConfig":{"url":"`+cancelled.srv.URL+`","authentication":{"schemes":["Basic"],"credentials":"dTpw"}}}}`, as("alice")...))
	require.Nil(t, r.Error)
	r = s.rpcAs(t, "alice", "CancelTask", `{"id":"`+task+`"}`)
	require.Nil(t, r.Error)
	cancelled.waitFor(t, "canceled")
	p := cancelled.posts()[0]
	assert.Equal(t, "Basic dTpw", p.header.Get("Authorization"))
	assert.Contains(t, string(p.body), `"kind":"task"`)
	close(release)
}

// TestPushRetries: a delivery the webhook refuses for now is tried again
// with backoff; one it never takes is dropped after the attempts with a
// log line; a redirect is not followed; a waiting delivery is replaced by
// a newer one.
func TestPushRetries(t *testing.T) {
	flaky := newHook(t, http.StatusServiceUnavailable, http.StatusInternalServerError)
	s, _, release, logs := pushServer(t, &a2a.PushOptions{AllowedNetworks: loopback, Attempts: 3})
	task := s.startSlow(t, "alice", "r1")
	require.Nil(t, s.rpcAs(t, "alice", "CreateTaskPushNotificationConfig", `{"taskId":"`+task+`","url":"`+flaky.srv.URL+`"}`).Error)
	release <- struct{}{}
	flaky.waitFor(t, "TASK_STATE_COMPLETED")
	require.Eventually(t, func() bool { return len(flaky.posts()) == 3 }, 10*time.Second, 10*time.Millisecond, "two refusals, then taken")
	assert.NotContains(t, logs.String(), "could not be delivered")

	down := newHook(t, 500, 500, 500, 500)
	task = s.startSlow(t, "alice", "r2")
	require.Nil(t, s.rpcAs(t, "alice", "CreateTaskPushNotificationConfig", `{"taskId":"`+task+`","url":"`+down.srv.URL+`"}`).Error)
	release <- struct{}{}
	require.Eventually(t, func() bool { return strings.Contains(logs.String(), "could not be delivered") }, 10*time.Second, 10*time.Millisecond)
	assert.Len(t, down.posts(), 3, "Attempts")
	assert.Contains(t, logs.String(), "answered 500")
	assert.NotContains(t, logs.String(), "r2", "the log names the task by id, not the message")

	moved := newHook(t, http.StatusFound)
	task = s.startSlow(t, "alice", "r3")
	require.Nil(t, s.rpcAs(t, "alice", "CreateTaskPushNotificationConfig", `{"taskId":"`+task+`","url":"`+moved.srv.URL+`/secret-path"}`).Error)
	release <- struct{}{}
	require.Eventually(t, func() bool { return strings.Contains(logs.String(), "redirects are not followed") }, 10*time.Second, 10*time.Millisecond)
	assert.Len(t, moved.posts(), 1, "not tried again")
	assert.NotContains(t, logs.String(), "secret-path", "the log names the webhook's host only")
	close(release)
}

// TestPushSigningNeedsURL: a signing key without the agent's URL is a
// mistake NewHandler names, rather than a token whose issuer each
// request's Host header would choose.
func TestPushSigningNeedsURL(t *testing.T) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	require.NoError(t, err)
	reg := otc.NewRegistry(nil)
	assert.PanicsWithValue(t,
		"a2a: PushOptions.SigningKey needs Options.URL, the agent's public URL: a signed delivery names it as its issuer, which no request's Host header may choose",
		func() { a2a.NewHandler(reg, &a2a.Options{Push: &a2a.PushOptions{SigningKey: key}}) })
	assert.NotPanics(t, func() {
		a2a.NewHandler(reg, &a2a.Options{URL: "https://agent.example.com/a2a", Push: &a2a.PushOptions{SigningKey: key}})
	})
}
