package main

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/otcgo/otc"
	"github.com/otcgo/otc/internal/redistest"
	"github.com/otcgo/otc/redisstore"
)

// A redis-server for the tests that need one, started by the first.
var redisServer struct {
	once sync.Once
	srv  *redistest.Server
	err  error
}

func needRedis(t *testing.T) string {
	t.Helper()
	redisServer.once.Do(func() { redisServer.srv, redisServer.err = redistest.Start() })
	return redistest.Need(t, redisServer.srv, redisServer.err)
}

func stopRedis() {
	if redisServer.srv != nil {
		redisServer.srv.Stop()
	}
}

// TestCounterIncrement_SharedThroughRedis runs two servers with
// OTC_REDIS_URL set to one Redis: a call id used on one is replayed on
// the other, whose own counter does not move.
func TestCounterIncrement_SharedThroughRedis(t *testing.T) {
	t.Parallel()
	url := "redis://" + needRedis(t) + "/0"
	start := func() string {
		_, lines := startMainEnv(t, "-addr 127.0.0.1:0", "OTC_REDIS_URL="+url)
		line := nextLine(t, lines)
		assert.Contains(t, line, "idempotency=redis")
		return listeningURL(t, line)
	}
	a, b := start(), start()

	first := incrementOTC(t, a, "shared-1")
	onB := incrementOTC(t, b, "shared-1")
	assert.Equal(t, first.count, onB.count, "the second server answers with the first's count")
	assert.True(t, onB.replayed)
	assert.Equal(t, 1.0, incrementOTC(t, b, "shared-2").count, "the second server had not counted before")
	assert.Equal(t, first.count+1, incrementOTC(t, a, "shared-3").count)
}

func TestIdempotencyStoreFromEnv(t *testing.T) {
	t.Parallel()
	env := func(url string) func(string) string {
		return func(k string) string {
			if k == "OTC_REDIS_URL" {
				return url
			}
			return ""
		}
	}
	sh, err := sharedFromEnv(context.Background(), env(""))
	require.NoError(t, err)
	assert.Equal(t, "memory", sh.name)
	assert.Nil(t, sh.tasks, "tasks in this process")

	_, err = sharedFromEnv(context.Background(), env("http://127.0.0.1:6379"))
	assert.ErrorContains(t, err, "OTC_REDIS_URL")
	assert.ErrorContains(t, err, "redis://host:port/db")

	_, err = sharedFromEnv(context.Background(), env("redis://127.0.0.1:1/0"))
	assert.ErrorContains(t, err, "cannot reach Redis at 127.0.0.1:1")

	sh, err = sharedFromEnv(context.Background(), env("redis://"+needRedis(t)+"/0"))
	require.NoError(t, err)
	assert.Equal(t, "redis", sh.name)
	assert.IsType(t, &redisstore.TaskStore{}, sh.tasks, "tasks in Redis too")
}

func TestRedisLeaseFromEnv(t *testing.T) {
	t.Parallel()
	url := "redis://" + needRedis(t) + "/0"
	env := func(lease string) func(string) string {
		return func(k string) string {
			switch k {
			case "OTC_REDIS_URL":
				return url
			case "OTC_REDIS_LEASE":
				return lease
			}
			return ""
		}
	}
	for _, bad := range []string{"soon", "500ms", "-3s"} {
		_, err := sharedFromEnv(context.Background(), env(bad))
		assert.ErrorContains(t, err, "OTC_REDIS_LEASE: \""+bad+"\" is not a duration of a second or more", bad)
	}
	sh, err := sharedFromEnv(context.Background(), env("3s"))
	require.NoError(t, err)
	assert.Equal(t, "redis", sh.name)
}

// TestRunLog: with OTC_RUN_LOG, each run of Counter.Increment and of
// Timer.Wait appends its call id; a replay, which runs nothing, appends
// none.
func TestRunLog(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "runs.log")
	_, lines := startMainEnv(t, "-addr 127.0.0.1:0", "OTC_RUN_LOG="+path)
	base := listeningURL(t, nextLine(t, lines))
	incrementOTC(t, base, "run-1")
	incrementOTC(t, base, "run-2")
	assert.True(t, incrementOTC(t, base, "run-1").replayed)
	wait := func() counterAnswer {
		return postCounter(t, base+"/tools/call", `{"request":{"tool_id":"Timer.Wait","call_id":"wait-1","input":{"ms":5}}}`, nil,
			func(m map[string]any) float64 { return m["result"].(map[string]any)["value"].(float64) })
	}
	assert.Equal(t, 5.0, wait().count)
	assert.True(t, wait().replayed)
	raw, err := os.ReadFile(path)
	require.NoError(t, err)
	assert.Equal(t, "run-1\nrun-2\nwait-1\n", string(raw))
}

// TestTasksAndRoundsAcrossReplicas runs two servers sharing Redis and
// OTC_REQUEST_STATE_KEYS, as the replicas behind a load balancer do: a
// task one starts is read and cancelled on the other, and an
// input_required round one asks is answered on the other, once.
func TestTasksAndRoundsAcrossReplicas(t *testing.T) {
	t.Parallel()
	keys := newIssuerKeys(t)
	env := []string{"OTC_REDIS_URL=redis://" + needRedis(t) + "/0", "OTC_REQUEST_STATE_KEYS=" + strings.Repeat("ab", 32) + "," + strings.Repeat("cd", 32)}
	for k, v := range keys.env() {
		env = append(env, k+"="+v)
	}
	start := func() string {
		_, lines := startMainEnv(t, "-addr 127.0.0.1:0", env...)
		return listeningURL(t, nextLine(t, lines))
	}
	a, b := start(), start()
	modern := func(method, name string) map[string]string {
		return map[string]string{otc.HeaderAPIKey: testAPIKey, "MCP-Protocol-Version": "2026-07-28", "Mcp-Method": method, "Mcp-Name": name}
	}
	const taskMeta = `"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{"extensions":{"io.modelcontextprotocol/tasks":{}}}}`
	startTask := func(ms int) string {
		body := fmt.Sprintf(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"Timer_Wait","arguments":{"ms":%d},%s}}`, ms, taskMeta)
		r := send(t, http.MethodPost, a+"/mcp", body, "", modern("tools/call", "Timer_Wait"))
		require.Equal(t, http.StatusOK, r.status, r.raw)
		res := r.body["result"].(map[string]any)
		require.Equal(t, "task", res["resultType"], r.raw)
		return res["taskId"].(string)
	}
	task := func(base, method, id string) map[string]any {
		body := `{"jsonrpc":"2.0","id":2,"method":"` + method + `","params":{"taskId":"` + id + `",` + taskMeta + `}}`
		r := send(t, http.MethodPost, base+"/mcp", body, "", modern(method, id))
		require.Equal(t, http.StatusOK, r.status, r.raw)
		return r.body["result"].(map[string]any)
	}

	t.Run("task_read_on_the_other_replica", func(t *testing.T) {
		id := startTask(200)
		assert.Equal(t, "working", task(b, "tasks/get", id)["status"], "b knows a's task")
		require.Eventually(t, func() bool { return task(b, "tasks/get", id)["status"] == "completed" }, 10*time.Second, 50*time.Millisecond)
		raw, err := json.Marshal(task(b, "tasks/get", id)["result"])
		require.NoError(t, err)
		assert.Contains(t, string(raw), `"result":200`)
	})
	t.Run("task_cancelled_on_the_other_replica", func(t *testing.T) {
		id := startTask(8000)
		task(b, "tasks/cancel", id)
		assert.Equal(t, "cancelled", task(a, "tasks/get", id)["status"], "a sees b's cancellation")
	})

	// A2A's tasks live in the same store: started on a, read, listed and
	// cancelled on b.
	a2aCall := func(base, method, params string) map[string]any {
		body := `{"jsonrpc":"2.0","id":3,"method":"` + method + `","params":` + params + `}`
		r := send(t, http.MethodPost, base+"/a2a", body, "", map[string]string{otc.HeaderAPIKey: testAPIKey, "A2A-Version": "1.0"})
		require.Equal(t, http.StatusOK, r.status, r.raw)
		res, ok := r.body["result"].(map[string]any)
		require.True(t, ok, r.raw)
		return res
	}
	state := func(task map[string]any) any { return task["status"].(map[string]any)["state"] }
	t.Run("a2a_task_on_the_other_replica", func(t *testing.T) {
		res := a2aCall(a, "SendMessage", `{"message":{"messageId":"a2a-`+strconv.FormatInt(time.Now().UnixNano(), 36)+`","role":"ROLE_USER","parts":[{"data":{"tool":"Timer_Wait","input":{"ms":8000}}}]},"configuration":{"returnImmediately":true}}`)
		id := res["task"].(map[string]any)["id"].(string)
		assert.Equal(t, "TASK_STATE_WORKING", state(a2aCall(b, "GetTask", `{"id":"`+id+`"}`)), "b reads a's task")
		listed := a2aCall(b, "ListTasks", `{"pageSize":100}`)
		raw, err := json.Marshal(listed["tasks"])
		require.NoError(t, err)
		assert.Contains(t, string(raw), id, "b lists it")
		assert.Equal(t, "TASK_STATE_CANCELED", state(a2aCall(b, "CancelTask", `{"id":"`+id+`"}`)), "b cancels it")
		assert.Equal(t, "TASK_STATE_CANCELED", state(a2aCall(a, "GetTask", `{"id":"`+id+`"}`)), "a sees b's cancellation")
	})

	t.Run("round_answered_on_the_other_replica", func(t *testing.T) {
		hdr := modern("tools/call", "Payments_Refund")
		delete(hdr, otc.HeaderAPIKey)
		meta := `"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{"elicitation":{}}}`
		body := `{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"Payments_Refund","arguments":{"order_id":"A-1","amount_cents":100},` + meta + `}}`
		r := send(t, http.MethodPost, a+"/mcp", body, keys.sign(t, refundClaims(body, nil)), hdr)
		require.Equal(t, http.StatusOK, r.status, r.raw)
		res := r.body["result"].(map[string]any)
		require.Equal(t, "input_required", res["resultType"], r.raw)
		body = `{"jsonrpc":"2.0","id":8,"method":"tools/call","params":{"name":"Payments_Refund","arguments":{"order_id":"A-1","amount_cents":100},` +
			`"inputResponses":{"confirm":{"action":"accept","content":{"confirm":true}}},"requestState":"` + res["requestState"].(string) + `",` + meta + `}}`
		r = send(t, http.MethodPost, b+"/mcp", body, keys.sign(t, refundClaims(body, nil)), hdr)
		require.Equal(t, http.StatusOK, r.status, r.raw)
		assert.Regexp(t, `rf_[0-9a-f]{12}`, r.raw, "b opened a's requestState")
		// The same last round again, on a, with a fresh token: the state
		// was used on b, and the record of it is shared.
		r = send(t, http.MethodPost, a+"/mcp", body, keys.sign(t, refundClaims(body, nil)), hdr)
		assert.Equal(t, http.StatusBadRequest, r.status, r.raw)
		assert.Contains(t, r.raw, "requestState was already used")
	})
}

func TestRequestStateKeysFromEnv(t *testing.T) {
	t.Parallel()
	keys, err := requestStateKeys("")
	require.NoError(t, err)
	assert.Nil(t, keys)
	k := bytes.Repeat([]byte{7}, 32)
	keys, err = requestStateKeys(hex.EncodeToString(k) + ", " + base64.StdEncoding.EncodeToString(k) + "," + base64.RawURLEncoding.EncodeToString(k))
	require.NoError(t, err)
	assert.Equal(t, [][]byte{k, k, k}, keys)
	for _, bad := range []string{"abcd", hex.EncodeToString(k) + ",", strings.Repeat("zz", 32), base64.StdEncoding.EncodeToString(k[:16])} {
		_, err := requestStateKeys(bad)
		assert.ErrorContains(t, err, "OTC_REQUEST_STATE_KEYS: key", bad)
	}
}

// TestCounterIncrement_SharedThroughCluster runs two servers with
// OTC_REDIS_CLUSTER naming the nodes of one Redis Cluster: a call id used
// on one is replayed on the other.
func TestCounterIncrement_SharedThroughCluster(t *testing.T) {
	t.Parallel()
	c, err := redistest.StartCluster(3, 0)
	if c == nil {
		if os.Getenv("OTC_REQUIRE_REDIS") == "1" {
			t.Fatalf("OTC_REQUIRE_REDIS=1 but no Redis Cluster could be started: %v", err)
		}
		t.Skipf("no Redis Cluster: %v", err)
	}
	t.Cleanup(c.Stop)
	start := func() string {
		_, lines := startMainEnv(t, "-addr 127.0.0.1:0", "OTC_REDIS_CLUSTER="+strings.Join(c.Addrs, ","))
		line := nextLine(t, lines)
		assert.Contains(t, line, "idempotency=redis")
		return listeningURL(t, line)
	}
	a, b := start(), start()
	for i := range 6 { // call ids on several masters
		id := fmt.Sprintf("cluster-%d", i)
		first := incrementOTC(t, a, id)
		onB := incrementOTC(t, b, id)
		assert.Equal(t, first.count, onB.count, "the second server answers with the first's count")
		assert.True(t, onB.replayed)
	}

	_, err = sharedFromEnv(context.Background(), func(k string) string {
		return map[string]string{"OTC_REDIS_URL": "redis://127.0.0.1:6379/0", "OTC_REDIS_CLUSTER": c.Addrs[0]}[k]
	})
	assert.ErrorContains(t, err, "OTC_REDIS_URL and OTC_REDIS_CLUSTER are both set")
	_, err = sharedFromEnv(context.Background(), func(k string) string {
		return map[string]string{"OTC_REDIS_CLUSTER": "127.0.0.1:1"}[k]
	})
	assert.ErrorContains(t, err, "OTC_REDIS_CLUSTER: cannot reach the Redis Cluster at 127.0.0.1:1")
}
