// Package runner runs functions on goroutines kept between runs.
//
// A goroutine starts with a small stack, which the runtime copies to a
// larger one each time a call goes deeper than it holds. A tool run on a
// goroutine of its own (so that its caller can stop waiting at the tool's
// deadline) goes as deep as an HTTP client's round trip when the tool is
// another server's, and a fresh goroutine for each run copied its stack
// twice or three times a call. Go runs f on an idle goroutine that ran
// something before, whose stack has grown already, and starts one only
// when none is idle. A goroutine idle for half a second ends, so that a quiet
// process keeps none.
package runner

import (
	"sync"
	"sync/atomic"
	"time"
)

// idleTime is how long a goroutine waits for another run before it ends
// (a variable for the tests).
var idleTime atomic.Int64

func init() { idleTime.Store(int64(500 * time.Millisecond)) }

// maxIdle bounds the goroutines kept idle: one finishing a run when as
// many wait ends.
const maxIdle = 128

// worker is a goroutine waiting for runs on its channel.
type worker struct {
	runs chan func()
}

var (
	mu   sync.Mutex
	idle []*worker // most recently idle last, taken first: its stack is warm
)

// Go runs f on a goroutine: an idle one if there is one, else a new one.
func Go(f func()) {
	mu.Lock()
	if n := len(idle); n > 0 {
		w := idle[n-1]
		idle[n-1] = nil
		idle = idle[:n-1]
		mu.Unlock()
		w.runs <- f // its channel holds one: this never blocks
		return
	}
	mu.Unlock()
	w := &worker{runs: make(chan func(), 1)}
	go w.loop(f)
}

// Idle reports how many goroutines wait for a run.
func Idle() int {
	mu.Lock()
	defer mu.Unlock()
	return len(idle)
}

func (w *worker) loop(f func()) {
	t := time.NewTimer(time.Duration(idleTime.Load()))
	defer t.Stop()
	for {
		f()
		f = nil // nothing of the run is kept while idle
		mu.Lock()
		if len(idle) >= maxIdle {
			mu.Unlock()
			return
		}
		idle = append(idle, w)
		mu.Unlock()
		t.Reset(time.Duration(idleTime.Load()))
		select {
		case f = <-w.runs:
			continue
		case <-t.C:
		}
		// Idle long enough: leave, unless a run was handed over while
		// the timer fired (Go took this worker out of the list), which
		// is then on its way.
		mu.Lock()
		i := indexOf(idle, w)
		if i >= 0 {
			copy(idle[i:], idle[i+1:])
			idle[len(idle)-1] = nil
			idle = idle[:len(idle)-1]
		}
		mu.Unlock()
		if i >= 0 {
			return
		}
		f = <-w.runs
	}
}

func indexOf(ws []*worker, w *worker) int {
	for i, x := range ws {
		if x == w {
			return i
		}
	}
	return -1
}
