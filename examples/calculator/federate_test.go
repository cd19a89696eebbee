package main

import (
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestFederate_ReplicasShareRedis: two replicas of a gateway (this server
// run with -federate) share Redis and federate a third server; a call id
// used on one replica is answered on the other from Redis, and the
// upstream's tool ran once.
func TestFederate_ReplicasShareRedis(t *testing.T) {
	t.Parallel()
	_, lines := startMain(t, "-addr 127.0.0.1:0")
	upstream := listeningURL(t, nextLine(t, lines))

	config := filepath.Join(t.TempDir(), "gateway.yaml")
	require.NoError(t, os.WriteFile(config, []byte("upstreams:\n  - name: up\n    otc: {url: "+upstream+"}\n    include: [\"Counter.*\"]\n"), 0o600))
	url := "redis://" + needRedis(t) + "/0"
	start := func() string {
		_, lines := startMainEnv(t, "-addr 127.0.0.1:0 -federate "+config, "OTC_REDIS_URL="+url)
		for {
			line := nextLine(t, lines)
			if strings.Contains(line, "serving OTC tools") {
				return listeningURL(t, line)
			}
		}
	}
	a, b := start(), start()

	call := func(base, callID string) counterAnswer {
		body := `{"request":{"tool_id":"up.Counter_Increment","call_id":"` + callID + `","input":{}}}`
		return postCounter(t, base+"/tools/call", body, nil, func(m map[string]any) float64 {
			return m["result"].(map[string]any)["value"].(float64)
		})
	}
	first := call(a, "fed-shared-1")
	again := call(b, "fed-shared-1")
	assert.Equal(t, first.count, again.count)
	assert.True(t, again.replayed, "the other replica answered from Redis")
	next := call(b, "fed-shared-2")
	assert.Equal(t, first.count+1, next.count, "the upstream's counter moved once for the first call id")

	for _, base := range []string{a, b} {
		resp, err := http.Get(base + "/federation/health")
		require.NoError(t, err)
		var h struct {
			Status    string `json:"status"`
			Upstreams []struct {
				Name  string `json:"name"`
				Tools int    `json:"tools"`
			} `json:"upstreams"`
		}
		require.NoError(t, json.NewDecoder(resp.Body).Decode(&h))
		resp.Body.Close()
		assert.Equal(t, "ok", h.Status)
		require.Len(t, h.Upstreams, 1)
		assert.Equal(t, 1, h.Upstreams[0].Tools, "only Counter.Increment is included")
	}
}
