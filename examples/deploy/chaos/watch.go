package main

import (
	"context"
	"encoding/json"
	"fmt"
	"sync"
	"time"

	"github.com/otcgo/otc/client"
)

// A subscriber through the balancer: an MCP client of 2025-11-25
// subscribed to calc://memory, whose requests and session stream land on
// any replica (HAProxy keeps no caller on one), while a storer calls
// Memory.Store through the balancer every storeEvery. Each store that
// succeeded must be followed by an update on the subscriber's stream,
// whichever replica ran it and whichever holds the stream, through the
// rolling restart, the crash and Redis's restart: a replica's stream that
// ends is opened again on another with Last-Event-ID, and gets what was
// published meanwhile.

// storeEvery is how often the storer stores a number.
const storeEvery = 200 * time.Millisecond

// watcher records the stores and the updates.
type watcher struct {
	sub, store *client.Client

	mu      sync.Mutex
	stores  []time.Time // when each store that succeeded was answered
	failed  int         // stores that failed
	updates []time.Time // when each update came
}

// startWatcher subscribes through the balancer at base.
func startWatcher(ctx context.Context, base string) (*watcher, error) {
	w := &watcher{}
	opts := &client.Options{Format: client.FormatMCP, MCPVersion: "2025-11-25", APIKey: chaosAPIKey,
		OnNotification: func(method string, params json.RawMessage) {
			if method == "notifications/resources/updated" {
				w.mu.Lock()
				w.updates = append(w.updates, time.Now())
				w.mu.Unlock()
			}
		}}
	var err error
	if w.sub, err = client.New(base+"/mcp", opts); err != nil {
		return nil, err
	}
	if err := w.sub.MCP().Subscribe(ctx, "calc://memory"); err != nil {
		_ = w.sub.Close()
		return nil, fmt.Errorf("subscribing to calc://memory through the balancer: %w", err)
	}
	if w.store, err = client.New(base+"/mcp", &client.Options{Format: client.FormatMCP, APIKey: chaosAPIKey}); err != nil {
		_ = w.sub.Close()
		return nil, err
	}
	return w, nil
}

// run stores a number every storeEvery until ctx ends.
func (w *watcher) run(ctx context.Context) {
	t := time.NewTicker(storeEvery)
	defer t.Stop()
	for n := 1; ; n++ {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		cctx, cancel := context.WithTimeout(ctx, 5*time.Second)
		_, err := w.store.Call(cctx, "Memory_Store", map[string]any{"value": n}, nil)
		cancel()
		w.mu.Lock()
		if err != nil {
			w.failed++
		} else {
			w.stores = append(w.stores, time.Now())
		}
		w.mu.Unlock()
	}
}

// close ends the clients.
func (w *watcher) close() {
	_ = w.sub.Close()
	_ = w.store.Close()
}

// watchGrace is how long the last stores' updates may take to come.
const watchGrace = 5 * time.Second

// maxUpdateWait is the longest a store's update may take, through a
// replica's end and the stream's reopening on another.
const maxUpdateWait = 10 * time.Second

// waits returns, for each store, how long until the first update after
// it came (-1 when none came), and how many stores went untold.
func (w *watcher) waits() (waits []time.Duration, untold int) {
	w.mu.Lock()
	defer w.mu.Unlock()
	j := 0
	for _, s := range w.stores {
		for j < len(w.updates) && w.updates[j].Before(s) {
			j++
		}
		if j == len(w.updates) {
			waits = append(waits, -1)
			untold++
			continue
		}
		waits = append(waits, w.updates[j].Sub(s))
	}
	return waits, untold
}

// report says what the subscriber saw.
func (w *watcher) report() string {
	waits, untold := w.waits()
	longest := time.Duration(0)
	for _, d := range waits {
		longest = max(longest, d)
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	return fmt.Sprintf("subscriber through the balancer: %d stores (%d failed), %d updates, %d stores untold, the longest wait for an update %v",
		len(w.stores), w.failed, len(w.updates), untold, longest.Round(time.Millisecond))
}

// broken lists the promises the subscriber saw broken.
func (w *watcher) broken() []string {
	waits, untold := w.waits()
	var out []string
	if len(waits) == 0 {
		return []string{"the storer stored nothing through the balancer"}
	}
	if untold > 0 {
		out = append(out, fmt.Sprintf("%d stores of calc://memory were never told to its subscriber", untold))
	}
	for _, d := range waits {
		if d > maxUpdateWait {
			out = append(out, fmt.Sprintf("a store of calc://memory was told to its subscriber only after %v", d.Round(time.Millisecond)))
			break
		}
	}
	return out
}
