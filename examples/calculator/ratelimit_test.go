package main

import (
	"fmt"
	"math/rand/v2"
	"net/http"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/otcgo/otc/ratelimit"
)

// TestRateLimitFromEnv: OTC_RATE_LIMIT limits each caller; with
// OTC_REDIS_URL two servers share the limit; a malformed value stops the
// server with a message that shows the form.
func TestRateLimitFromEnv(t *testing.T) {
	t.Parallel()
	url := "redis://" + needRedis(t) + "/0"
	start := func(env ...string) string {
		_, lines := startMainEnv(t, "-addr 127.0.0.1:0", env...)
		return listeningURL(t, nextLine(t, lines))
	}
	// Each run is a caller of its own, named by the trusted proxy (this
	// test) in X-Forwarded-For: a limit kept in Redis outlives the run.
	client := fmt.Sprintf("10.%d.%d.%d", rand.IntN(256), rand.IntN(256), rand.IntN(256))
	status := func(base string) int {
		req, err := http.NewRequest(http.MethodPost, base+"/tools/call", strings.NewReader(`{"request":{"tool_id":"Calculator.Add","input":{"a":1,"b":2}}}`))
		require.NoError(t, err)
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("X-Forwarded-For", client)
		resp, err := http.DefaultClient.Do(req)
		require.NoError(t, err)
		resp.Body.Close()
		return resp.StatusCode
	}
	alone := start("OTC_RATE_LIMIT=2/h", "OTC_TRUSTED_PROXIES=127.0.0.1")
	assert.Equal(t, []int{200, 200, 429}, []int{status(alone), status(alone), status(alone)})

	env := []string{"OTC_RATE_LIMIT=3/h", "OTC_TRUSTED_PROXIES=127.0.0.0/8", "OTC_REDIS_URL=" + url}
	a, b := start(env...), start(env...)
	var got []int
	for i := range 6 {
		got = append(got, status([]string{a, b}[i%2]))
	}
	assert.Equal(t, []int{200, 200, 200, 429, 429, 429}, got, "the two servers share one limit")

	_, err := siteFromEnv(func(k string) string {
		return map[string]string{"OTC_TRUSTED_PROXIES": "lb.internal"}[k]
	})
	assert.ErrorContains(t, err, `OTC_TRUSTED_PROXIES: "lb.internal" is not an address or a prefix`)
	for _, bad := range []string{"tools.example.com", "ftp://tools.example.com", "https://", "https://x.test/?q=1"} {
		_, err := siteFromEnv(func(k string) string { return map[string]string{"OTC_PUBLIC_URL": bad}[k] })
		assert.ErrorContains(t, err, "OTC_PUBLIC_URL", bad)
	}

	for _, bad := range []string{"20", "20/d", "x/s", "20/s,burst=0", "20/s,max=3"} {
		l, err := ratelimit.ParseLimit(bad)
		assert.Error(t, err, "%q gave %+v", bad, l)
		assert.Contains(t, err.Error(), "such as 20/s", bad)
	}
	for spec, want := range map[string]ratelimit.Limit{
		"20/s":           {Rate: 20, Burst: 20},
		"600/m":          {Rate: 10, Burst: 600},
		"3600/h,burst=5": {Rate: 1, Burst: 5},
	} {
		l, err := ratelimit.ParseLimit(spec)
		require.NoError(t, err, spec)
		assert.Equal(t, want, l, spec)
	}
}
