package main

import (
	"context"
	"os"
	"path/filepath"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/otcgo/otc/internal/redistest"
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
	_, name, err := idempotencyStore(context.Background(), env(""))
	require.NoError(t, err)
	assert.Equal(t, "memory", name)

	_, _, err = idempotencyStore(context.Background(), env("http://127.0.0.1:6379"))
	assert.ErrorContains(t, err, "OTC_REDIS_URL")
	assert.ErrorContains(t, err, "redis://host:port/db")

	_, _, err = idempotencyStore(context.Background(), env("redis://127.0.0.1:1/0"))
	assert.ErrorContains(t, err, "cannot reach Redis at 127.0.0.1:1")

	_, name, err = idempotencyStore(context.Background(), env("redis://"+needRedis(t)+"/0"))
	require.NoError(t, err)
	assert.Equal(t, "redis", name)
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
		_, _, err := idempotencyStore(context.Background(), env(bad))
		assert.ErrorContains(t, err, "OTC_REDIS_LEASE: \""+bad+"\" is not a duration of a second or more", bad)
	}
	_, name, err := idempotencyStore(context.Background(), env("3s"))
	require.NoError(t, err)
	assert.Equal(t, "redis", name)
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
