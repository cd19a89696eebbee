package federation_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/otcgo/otc"
	"github.com/otcgo/otc/federation"
)

// slowUpstream is the stdio server of these tests, taking wait to start,
// noting each start in the file it returns.
func slowUpstream(t *testing.T, name string, wait time.Duration) (federation.Upstream, string) {
	up := stdioUpstream(t, name)
	starts := filepath.Join(t.TempDir(), "starts")
	up.Env = append(up.Env, "FEDERATION_TEST_SLOW_START="+wait.String(), "FEDERATION_TEST_STARTS="+starts)
	return up, starts
}

func startsIn(path string) int {
	b, _ := os.ReadFile(path)
	return len(strings.Fields(string(b)))
}

// TestFederation_SlowStarter: a server that takes longer than its start
// timeout to answer is waited for in the background, "starting" and not
// down, never started twice, and served once it answers.
func TestFederation_SlowStarter(t *testing.T) {
	t.Parallel()
	up, starts := slowUpstream(t, "slow", 1500*time.Millisecond)
	up.Timeouts.Start, up.Timeouts.Ready = 200*time.Millisecond, 30*time.Second
	reg := otc.NewRegistry(nil)
	began := time.Now()
	fed, err := federation.Mount(context.Background(), reg, []federation.Upstream{up}, nil)
	require.NoError(t, err)
	t.Cleanup(func() { _ = fed.Close() })
	assert.Less(t, time.Since(began), time.Second, "Mount waits the start timeout, not the start")
	h := fed.Health()[0]
	assert.Equal(t, federation.StateStarting, h.State)
	assert.Positive(t, h.Starting)
	assert.Empty(t, reg.Tools(), "nothing served before it answers")

	require.Eventually(t, func() bool { return len(reg.Tools()) > 0 }, 20*time.Second, 20*time.Millisecond, "served once it answers")
	h = fed.Health()[0]
	assert.Equal(t, federation.StateUp, h.State)
	assert.Zero(t, h.Starting)
	assert.Equal(t, 1, startsIn(starts), "started once: the slow start was waited for, not cut short")
}

// TestFederation_NeverReady: a server that does not answer within its
// ready timeout is down, and started again.
func TestFederation_NeverReady(t *testing.T) {
	t.Parallel()
	up, starts := slowUpstream(t, "never", time.Minute)
	up.Timeouts.Start, up.Timeouts.Ready = 100*time.Millisecond, 400*time.Millisecond
	reg := otc.NewRegistry(nil)
	fed, err := federation.Mount(context.Background(), reg, []federation.Upstream{up}, nil)
	require.NoError(t, err)
	t.Cleanup(func() { _ = fed.Close() })
	require.Eventually(t, func() bool { return fed.Health()[0].State == federation.StateDown }, 10*time.Second, 20*time.Millisecond)
	require.Eventually(t, func() bool { return startsIn(starts) >= 2 }, 10*time.Second, 20*time.Millisecond, "started again once it is down")
}
