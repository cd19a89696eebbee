package main

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"net/http"
	"strings"
	"time"
)

// The crash probe makes what the load leaves to chance certain: a call
// that is running on the replica when it is killed. It sends Timer.Wait
// (1.5 s, recorded in the run log as it starts) with a call id to that
// replica itself, kills the replica once the run is logged, and then
// sends the call again through the balancer twice: while the claim's
// lease lives, when the call must not run again, and after the lease has
// lapsed, when it runs again: at least once, as the Redis store promises
// for a replica that dies, never at most once.

const probeWait = 1500 // ms

// probe is one call killed mid-run.
type probe struct {
	id     string
	runLog string
	sent   chan struct{} // closed when the first attempt has ended (it fails)

	// What the retries saw.
	withinLease   string // the class of the retry while the lease lived
	runsWithin    int    // runs logged after that retry
	afterLease    string // the class of the retry after the lease
	runsAfter     int    // runs logged after that one
	afterLeaseLag time.Duration
}

// startProbe sends the probe's call to a replica and returns once its run
// is in the run log.
func startProbe(ctx context.Context, replicaURL, runLog string) (*probe, error) {
	var b [8]byte
	_, _ = rand.Read(b[:])
	p := &probe{id: "probe-" + hex.EncodeToString(b[:]), runLog: runLog, sent: make(chan struct{})}
	go func() {
		defer close(p.sent)
		_, _ = p.send(ctx, replicaURL, 10*time.Second) // fails: its replica is killed under it
	}()
	err := waitFor(5*time.Second, "the probe's run in the run log", func() error {
		if n, err := p.runs(); err != nil || n == 0 {
			return fmt.Errorf("not logged yet (%v)", err)
		}
		return nil
	})
	return p, err
}

// retry sends the call again through the balancer, first while the lease
// of the dead replica's claim lives, then after it has lapsed. killedAt
// is when the replica was killed; the lease was last renewed before that.
func (p *probe) retry(ctx context.Context, balancer string, killedAt time.Time, lease time.Duration) {
	<-p.sent
	// Within the lease: the retry waits for the call in flight, which
	// never ends; it gives up long before the lease can lapse.
	if wait := min(lease/3, time.Second); time.Since(killedAt) < lease-2*wait {
		_, p.withinLease = p.send(ctx, balancer, wait)
	} else {
		p.withinLease = "not sent: the lease was nearly over"
	}
	p.runsWithin, _ = p.runs()
	// After the lease: the claim has lapsed, the call runs again.
	time.Sleep(time.Until(killedAt.Add(lease + 500*time.Millisecond)))
	p.afterLeaseLag = time.Since(killedAt)
	_, p.afterLease = p.send(ctx, balancer, 10*time.Second)
	p.runsAfter, _ = p.runs()
}

// send makes one attempt over OTC within timeout.
func (p *probe) send(ctx context.Context, base string, timeout time.Duration) (int64, string) {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	body := fmt.Sprintf(`{"request":{"tool_id":"Timer.Wait","call_id":%q,"input":{"ms":%d}}}`, p.id, probeWait)
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, base+"/tools/call", strings.NewReader(body))
	if err != nil {
		return 0, "bad request"
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("OXP-API-Key", chaosAPIKey)
	v, class := answer(http.DefaultClient, req, otcProto)
	if class != "ok" && ctx.Err() != nil {
		return 0, fmt.Sprintf("no answer within %v", timeout)
	}
	return v, class
}

// runs counts the probe's runs in the run log.
func (p *probe) runs() (int, error) {
	runs, err := readRuns(p.runLog)
	return runs[p.id], err
}

// report describes what the probe saw.
func (p *probe) report() string {
	return fmt.Sprintf("crash probe: a Timer.Wait killed mid-run; retried within the lease: %s, %d run(s) so far; retried %.1fs after the kill: %s, %d run(s)",
		p.withinLease, p.runsWithin, p.afterLeaseLag.Seconds(), p.afterLease, p.runsAfter)
}

// broken lists the promises the probe saw broken.
func (p *probe) broken() []string {
	var out []string
	if p.runsWithin != 1 {
		out = append(out, fmt.Sprintf("the probe ran %d times by the end of the lease, want 1 (at most once while the claim's lease lives)", p.runsWithin))
	}
	if p.afterLease != "ok" || p.runsAfter != 2 {
		out = append(out, fmt.Sprintf("the probe's retry after the lease: %s with %d runs, want ok with 2 (at least once after the lease)", p.afterLease, p.runsAfter))
	}
	return out
}
