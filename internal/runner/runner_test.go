package runner

import (
	"bytes"
	"context"
	"runtime"
	"runtime/pprof"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Tests here change the package's state: none runs in parallel.

func waitIdle(t *testing.T, n int) {
	t.Helper()
	for deadline := time.Now().Add(5 * time.Second); Idle() != n; time.Sleep(time.Millisecond) {
		require.True(t, time.Now().Before(deadline), "want %d idle, have %d", n, Idle())
	}
}

// waitRunsEnd waits until no run is under way: every goroutine is idle
// (and then swept away), so that the next test starts from none.
func waitRunsEnd(t *testing.T) {
	t.Helper()
	waitIdle(t, 0)
}

func TestRunsReuseAnIdleGoroutine(t *testing.T) {
	waitIdle(t, 0)
	done := make(chan struct{})
	Go(context.Background(), func() { close(done) })
	<-done
	waitIdle(t, 1)
	before := runtime.NumGoroutine()
	done, release := make(chan struct{}), make(chan struct{})
	Go(context.Background(), func() {
		<-release
		close(done)
	})
	assert.Equal(t, 0, Idle(), "the idle goroutine took the run")
	assert.LessOrEqual(t, runtime.NumGoroutine(), before, "no goroutine was started for it")
	close(release)
	waitIdle(t, 1)
	waitRunsEnd(t)
}

func TestIdleGoroutinesEnd(t *testing.T) {
	defer idleTime.Store(idleTime.Swap(int64(20 * time.Millisecond)))
	waitIdle(t, 0)
	base := runtime.NumGoroutine()
	var wg sync.WaitGroup
	release := make(chan struct{})
	for range 8 {
		wg.Add(1)
		Go(context.Background(), func() {
			defer wg.Done()
			<-release
		})
	}
	assert.GreaterOrEqual(t, runtime.NumGoroutine(), base+8, "eight runs at once, eight goroutines")
	close(release)
	wg.Wait()
	waitIdle(t, 0)
	// Polled by hand: Eventually starts goroutines of its own.
	for deadline := time.Now().Add(5 * time.Second); runtime.NumGoroutine() > base; time.Sleep(time.Millisecond) {
		require.True(t, time.Now().Before(deadline), "the idle goroutines ended: %d goroutines, %d before", runtime.NumGoroutine(), base)
	}
}

func TestIdleBounded(t *testing.T) {
	waitIdle(t, 0)
	var wg sync.WaitGroup
	release := make(chan struct{})
	for range maxIdle + 40 {
		wg.Add(1)
		Go(context.Background(), func() {
			defer wg.Done()
			<-release
		})
	}
	close(release)
	wg.Wait()
	assert.LessOrEqual(t, Idle(), maxIdle)
	waitIdle(t, maxIdle)
}

// TestEveryRunRunsOnce hands runs over while idle goroutines time out, so
// that hand-overs meet the timer: each run runs exactly once.
func TestEveryRunRunsOnce(t *testing.T) {
	defer idleTime.Store(idleTime.Swap(int64(50 * time.Microsecond)))
	const n = 20000
	var ran atomic.Int64
	var wg sync.WaitGroup
	for i := range n {
		wg.Add(1)
		Go(context.Background(), func() {
			ran.Add(1)
			wg.Done()
		})
		if i%64 == 0 {
			time.Sleep(60 * time.Microsecond)
		}
	}
	wg.Wait()
	assert.Equal(t, int64(n), ran.Load())
}

// BenchmarkGo hands a run over and waits for it, as a timed tool call
// does, through Go and through a goroutine of its own, at a shallow and
// a deep stack.
func BenchmarkGo(b *testing.B) {
	for _, depth := range []int{0, 200} {
		work := func() { deep(depth) }
		b.Run("runner/depth="+strconv.Itoa(depth), func(b *testing.B) {
			done := make(chan struct{}, 1)
			for b.Loop() {
				Go(context.Background(), func() { work(); done <- struct{}{} })
				<-done
			}
		})
		b.Run("go/depth="+strconv.Itoa(depth), func(b *testing.B) {
			done := make(chan struct{}, 1)
			for b.Loop() {
				go func() { work(); done <- struct{}{} }()
				<-done
			}
		})
	}
}

// deep calls itself n times with a frame of some size, as a deep call
// chain does.
//
//go:noinline
func deep(n int) byte {
	var pad [64]byte
	if n == 0 {
		return pad[0]
	}
	pad[n%64] = byte(n)
	return deep(n-1) + pad[(n+1)%64]
}

// TestRunsCarryTheirContextsLabels: a run carries the profiler labels of
// its context, and the next run on the same goroutine those of its own.
func TestRunsCarryTheirContextsLabels(t *testing.T) {
	labelled := func(v string) string {
		ctx := pprof.WithLabels(context.Background(), pprof.Labels("otc_runner_test", v))
		seen := make(chan string, 1)
		release := make(chan struct{})
		Go(ctx, func() {
			var buf bytes.Buffer
			_ = pprof.Lookup("goroutine").WriteTo(&buf, 1)
			seen <- buf.String()
			<-release
		})
		out := <-seen
		close(release)
		return out
	}
	waitIdle(t, 0)
	assert.Contains(t, labelled("first"), `"otc_runner_test":"first"`)
	waitIdle(t, 1)
	out := labelled("second")
	assert.Contains(t, out, `"otc_runner_test":"second"`)
	assert.NotContains(t, out, `"otc_runner_test":"first"`, "the goroutine's labels are the run's, not its last run's")
	waitIdle(t, 1) // the run ended
	waitRunsEnd(t)
}
