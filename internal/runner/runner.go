// Package runner runs functions on goroutines kept between runs.
//
// A goroutine starts with a small stack, which the runtime copies to a
// larger one each time a call goes deeper than it holds. A tool run on a
// goroutine of its own (so that its caller can stop waiting at the tool's
// deadline) goes as deep as an HTTP client's round trip when the tool is
// another server's, and a fresh goroutine for each run copied its stack
// twice or three times a call. Go runs f on an idle goroutine that ran
// something before, whose stack has grown already, and starts one only
// when none is idle. A goroutine left idle through a sweep (every tenth
// of a second while any is idle) ends at the next, so that a quiet
// process keeps none for long.
package runner

import (
	"context"
	"runtime/pprof"
	"sync"
	"sync/atomic"
	"time"
)

// idleTime is the time between sweeps (a variable for the tests).
var idleTime atomic.Int64

func init() { idleTime.Store(int64(100 * time.Millisecond)) }

// maxIdle bounds the goroutines kept idle: one finishing a run when as
// many wait ends.
const maxIdle = 128

// worker is a goroutine waiting for runs on its channel; a nil run ends
// it.
type worker struct {
	runs chan func()
	// swept says the worker was idle at the last sweep.
	swept bool
}

var (
	mu       sync.Mutex
	idle     []*worker // most recently idle last, taken first: its stack is warm
	sweeping bool      // a sweep is due
)

// Go runs f on a goroutine: an idle one if there is one, else a new one.
// The goroutine carries ctx's profiler labels while f runs, as a
// goroutine started where ctx came from would have carried its
// starter's.
func Go(ctx context.Context, f func()) {
	runs.Add(1)
	if ctx != nil {
		run := f
		f = func() {
			pprof.SetGoroutineLabels(ctx)
			defer pprof.SetGoroutineLabels(context.Background())
			run()
		}
	}
	mu.Lock()
	if n := len(idle); n > 0 {
		w := idle[n-1]
		idle[n-1] = nil
		idle = idle[:n-1]
		mu.Unlock()
		w.runs <- f // its channel holds one, and it was idle: this never blocks
		return
	}
	mu.Unlock()
	w := &worker{runs: make(chan func(), 1)}
	go w.loop(f)
}

// runs counts the runs Go was given.
var runs atomic.Uint64

// Runs reports how many runs Go has been given.
func Runs() uint64 { return runs.Load() }

// Idle reports how many goroutines wait for a run.
func Idle() int {
	mu.Lock()
	defer mu.Unlock()
	return len(idle)
}

func (w *worker) loop(f func()) {
	for f != nil {
		f()
		mu.Lock()
		if len(idle) >= maxIdle {
			mu.Unlock()
			return
		}
		w.swept = false
		idle = append(idle, w)
		if !sweeping {
			sweeping = true
			time.AfterFunc(time.Duration(idleTime.Load()), sweep)
		}
		mu.Unlock()
		f = <-w.runs
	}
}

// sweep ends the goroutines that were idle at the last sweep and still
// are, and marks the others; it comes again while any is idle.
func sweep() {
	mu.Lock()
	var ended []*worker
	kept := idle[:0]
	for _, w := range idle {
		if w.swept {
			ended = append(ended, w)
			continue
		}
		w.swept = true
		kept = append(kept, w)
	}
	clear(idle[len(kept):])
	idle = kept
	sweeping = len(idle) > 0
	if sweeping {
		time.AfterFunc(time.Duration(idleTime.Load()), sweep)
	}
	mu.Unlock()
	for _, w := range ended {
		w.runs <- nil
	}
}
