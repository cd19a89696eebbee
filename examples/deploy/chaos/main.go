// Command chaos runs the example server as three replicas behind HAProxy,
// sharing one redis-server, drives them with calls over OTC, REST and MCP,
// and meanwhile restarts one replica with SIGTERM (a rolling restart),
// kills one with SIGKILL mid-call and restarts Redis. It reports what the
// callers saw and ends with one line:
//
//	chaos: N calls, R calls/s, E errors, D ran twice
//
// A subscriber to calc://memory, through the balancer, must be told of
// every Memory.Store, whichever replica ran it (watch.go).
//
// Some of the calls are MCP tasks, polled and cancelled through the
// balancer, and input_required rounds whose answer reaches another
// replica than the question: a replica that does not know a task or
// cannot open a round's requestState is an error (tasks.go).
//
// D counts the call ids whose tool ran more than once where the
// idempotency store promises at most once: every call but those in flight
// on the replica that was killed, which run at least once, again after
// their claim's lease lapses. A probe makes that case certain: a slow call
// killed mid-run, which must not run again while the lease lives and must
// run again after it (probe.go). The program exits 1 when a promise was
// broken: a call that failed for good, a call the balancer could have sent
// elsewhere that failed during the rolling restart, or D above zero.
//
//	go run ./chaos          # the long form (make chaos), a few minutes
//	go run ./chaos -short   # the short form that CI runs (make chaos-short)
//
// With -capacity (make bench-deploy) it runs no chaos and measures the
// deployment's capacity instead (capacity.go): many callers, a process of
// their own, through HAProxy to 1, 2 and 3 replicas, with no Redis and
// with Redis in each durability mode; for each configuration, calls/s
// with p50 and p99, the CPU of each part, Redis's commands and CPU per
// call, and what bounded the run.
//
// It needs go, redis-server and haproxy on PATH, and runs from anywhere
// inside the repository.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"time"
)

// config is the size of a run.
type config struct {
	replicas int
	workers  int
	measure  time.Duration // each throughput phase (1, 2, 3 replicas)
	settle   time.Duration // load between two chaos events
	lease    time.Duration // the Redis claims' lease (OTC_REDIS_LEASE)
	budget   time.Duration // how long a failed call is retried
	drain    time.Duration // the replicas' -drain-delay
}

var (
	shortConfig = config{replicas: 3, workers: 8, measure: 3 * time.Second, settle: 3 * time.Second,
		lease: 3 * time.Second, budget: 12 * time.Second, drain: time.Second}
	longConfig = config{replicas: 3, workers: 32, measure: 20 * time.Second, settle: 20 * time.Second,
		lease: 10 * time.Second, budget: 30 * time.Second, drain: time.Second}
)

func main() {
	short := flag.Bool("short", false, "the short form, as CI runs it (about a minute)")
	keep := flag.Bool("keep", false, "keep the run's folder (logs, haproxy.cfg, the run log) and print its path")
	flag.Parse()
	if capacityMain(*short, *keep) {
		return
	}
	cfg := longConfig
	if *short {
		cfg = shortConfig
	}
	dir, err := os.MkdirTemp("", "otc-chaos-")
	if err != nil {
		fmt.Fprintln(os.Stderr, "chaos:", err)
		os.Exit(2)
	}
	if *keep {
		fmt.Fprintln(os.Stderr, "chaos: the run's files are in", dir)
	} else {
		defer os.RemoveAll(dir)
	}
	res, err := run(context.Background(), cfg, dir, os.Stdout)
	if err != nil {
		fmt.Fprintln(os.Stderr, "chaos:", err)
		os.Exit(2)
	}
	if broken := res.broken(); len(broken) > 0 {
		fmt.Fprintln(os.Stderr, "chaos: promises broken:", strings.Join(broken, "; "))
		os.Exit(1)
	}
}

// deployment is what run starts.
type deployment struct {
	redis    *redisServer
	replicas []*replica
	lb       *balancer
}

func (d *deployment) stop() {
	if d.lb != nil {
		d.lb.p.stop()
	}
	for _, r := range d.replicas {
		if r.p != nil {
			r.p.stop()
		}
	}
	if d.redis != nil && d.redis.p != nil {
		d.redis.p.stop()
	}
}

// logs returns the output of every process, for a failure's report.
func (d *deployment) logs() string {
	var b strings.Builder
	for _, r := range d.replicas {
		if r.p != nil {
			fmt.Fprintf(&b, "--- %s\n%s", r.name, tail(r.p.out.String(), 20))
		}
	}
	if d.lb != nil && d.lb.p != nil {
		fmt.Fprintf(&b, "--- haproxy\n%s", tail(d.lb.p.out.String(), 20))
	}
	return b.String()
}

func tail(s string, n int) string {
	lines := strings.SplitAfter(s, "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "")
}

// run starts the deployment in dir, runs the load and the chaos, and
// writes the report to out.
func run(ctx context.Context, cfg config, dir string, out io.Writer) (*result, error) {
	calc, bins, err := prepare(ctx, dir)
	if err != nil {
		return nil, err
	}

	d := &deployment{}
	defer d.stop()
	d.redis = &redisServer{bin: bins["redis-server"], dir: dir}
	if d.redis.port, err = freePort(); err != nil {
		return nil, err
	}
	if err := d.redis.start(); err != nil {
		return nil, err
	}
	runLog := filepath.Join(dir, "runs.log")
	is, err := newIssuer(dir)
	if err != nil {
		return nil, err
	}
	stateKey := newStateKey()
	pushKey, err := writePushKey(dir)
	if err != nil {
		return nil, err
	}
	d.lb = &balancer{bin: bins["haproxy"], dir: dir}
	if d.lb.port, err = freePort(); err != nil {
		return nil, err
	}
	for i := range cfg.replicas {
		r := &replica{name: fmt.Sprintf("replica%d", i+1), bin: calc, drain: cfg.drain, env: append([]string{
			// Where clients reach the replicas: the issuer of signed
			// deliveries, and the URL the Agent Card names.
			fmt.Sprintf("OTC_PUBLIC_URL=http://127.0.0.1:%d", d.lb.port),
			"OTC_REDIS_URL=redis://" + d.redis.addr() + "/0",
			"OTC_REDIS_LEASE=" + cfg.lease.String(),
			"OTC_RUN_LOG=" + runLog,
			// A2A tasks post their changes to the load's webhook.
			"OTC_PUSH_ALLOWED_NETWORKS=127.0.0.0/8",
			"OTC_PUSH_KEY_FILE=" + pushKey,
		}, is.env(stateKey)...)}
		if r.port, err = freePort(); err != nil {
			return nil, err
		}
		d.replicas = append(d.replicas, r)
	}
	res, err := exercise(ctx, cfg, d, is, runLog, out)
	// The processes' output, for -keep.
	if d.lb.p != nil {
		_ = os.WriteFile(filepath.Join(dir, "haproxy.log"), []byte(d.lb.p.out.String()), 0o644)
	}
	for _, r := range d.replicas {
		if r.p != nil {
			_ = os.WriteFile(filepath.Join(dir, r.name+".log"), []byte(r.p.out.String()), 0o644)
		}
	}
	if err != nil {
		return nil, fmt.Errorf("%w\n%s", err, d.logs())
	}
	return res, nil
}

// upDelay is how long the balancer takes to send traffic to a replica
// that has come up: two health checks 200 ms apart, and some slack.
const upDelay = 800 * time.Millisecond

// exercise runs the phases on a started Redis.
func exercise(ctx context.Context, cfg config, d *deployment, is *issuer, runLog string, out io.Writer) (*result, error) {
	// Throughput with one, two and three replicas.
	if err := d.replicas[0].start(); err != nil {
		return nil, err
	}
	if err := d.lb.start(d.replicas); err != nil {
		return nil, err
	}
	time.Sleep(upDelay)
	l := newLoader(d.lb.url(), cfg.budget, is)
	hook, err := startPushHook()
	if err != nil {
		return nil, err
	}
	defer hook.stop()
	l.hook = hook
	res := &result{cfg: cfg, hook: hook}
	for n := 1; n <= len(d.replicas); n++ {
		if n > 1 {
			if err := d.replicas[n-1].start(); err != nil {
				return nil, err
			}
			time.Sleep(upDelay)
		}
		l.setPhase(fmt.Sprintf("%d replicas", n))
		from := len(l.calls)
		lctx, cancel := context.WithTimeout(ctx, cfg.measure)
		began := time.Now()
		l.run(lctx, cfg.workers)
		cancel()
		res.throughput = append(res.throughput, float64(len(l.calls)-from)/time.Since(began).Seconds())
	}

	// The chaos, under one continuous load, with a subscriber told of
	// each store through the balancer (watch.go).
	w, err := startWatcher(ctx, d.lb.url())
	if err != nil {
		return nil, err
	}
	defer w.close()
	res.watch = w
	wctx, stopWatch := context.WithCancel(ctx)
	defer stopWatch()
	watchDone := make(chan struct{})
	go func() {
		defer close(watchDone)
		w.run(wctx)
	}()
	lctx, stopLoad := context.WithCancel(ctx)
	loadDone := make(chan struct{})
	began := time.Now()
	go func() {
		defer close(loadDone)
		l.run(lctx, cfg.workers)
	}()
	abort := func(err error) (*result, error) {
		stopLoad()
		<-loadDone
		return nil, err
	}
	l.setPhase("steady")
	time.Sleep(cfg.settle)
	// back starts a replica again and lets the load run steady awhile.
	back := func(r *replica) error {
		if err := r.start(); err != nil {
			return err
		}
		res.events = append(res.events, event{time.Now(), r.name + " started again"})
		time.Sleep(upDelay)
		l.setPhase("steady")
		time.Sleep(cfg.settle)
		return nil
	}

	// 1. A rolling restart: SIGTERM, the drain, the exit, a new process.
	l.setPhase("sigterm")
	r := d.replicas[0]
	res.events = append(res.events, event{time.Now(), "SIGTERM " + r.name})
	if err := r.p.signal(syscall.SIGTERM, cfg.drain+30*time.Second); err != nil {
		return abort(err)
	}
	if r.p.err != nil {
		return abort(fmt.Errorf("%s exited with %v after SIGTERM, want 0", r.name, r.p.err))
	}
	res.events = append(res.events, event{time.Now(), r.name + " exited"})
	if err := back(r); err != nil {
		return abort(err)
	}

	// 2. A crash: SIGKILL, with calls in flight, among them the probe's
	// (probe.go), which is retried while the lease lives and after.
	l.setPhase("sigkill")
	r = d.replicas[1]
	p, err := startProbe(ctx, r.url(), runLog)
	if err != nil {
		return abort(err)
	}
	res.probe = p
	res.killedInFlight = l.inFlightNow()
	if err := r.p.signal(syscall.SIGKILL, 10*time.Second); err != nil {
		return abort(err)
	}
	res.killedAt = time.Now()
	res.events = append(res.events, event{res.killedAt, "SIGKILL " + r.name})
	probeDone := make(chan struct{})
	go func() {
		defer close(probeDone)
		p.retry(ctx, d.lb.url(), res.killedAt, cfg.lease)
	}()
	time.Sleep(time.Second)
	if err := back(r); err != nil {
		return abort(err)
	}

	// 3. Redis restarts: it goes away for a moment and comes back with
	// what it had written.
	l.setPhase("redis")
	res.events = append(res.events, event{time.Now(), "SIGTERM redis-server"})
	if err := d.redis.p.signal(syscall.SIGTERM, 10*time.Second); err != nil {
		return abort(err)
	}
	res.events = append(res.events, event{time.Now(), "redis-server exited"})
	time.Sleep(500 * time.Millisecond)
	if err := d.redis.start(); err != nil {
		return abort(err)
	}
	res.events = append(res.events, event{time.Now(), "redis-server started again"})
	l.setPhase("steady")
	time.Sleep(cfg.settle)

	<-probeDone
	stopLoad()
	<-loadDone
	stopWatch()
	<-watchDone
	time.Sleep(watchGrace) // the last stores' updates
	res.duration = time.Since(began)
	res.began = began
	res.calls = l.calls
	runs, err := readRuns(runLog)
	if err != nil {
		return nil, err
	}
	res.runs = runs
	res.report(out)

	return res, nil
}

// readRuns counts the runs of each call id in the run log.
func readRuns(path string) (map[string]int, error) {
	b, err := os.ReadFile(path)
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		return nil, err
	}
	runs := map[string]int{}
	for line := range strings.Lines(string(b)) {
		if id := strings.TrimSpace(line); id != "" {
			runs[id]++
		}
	}
	return runs, nil
}

// result is what a run saw.
type result struct {
	cfg            config
	throughput     []float64 // calls/s with 1, 2, 3 replicas
	calls          []*call
	duration       time.Duration // of the chaos load
	began          time.Time     // of the chaos load
	runs           map[string]int
	killedInFlight map[*call]bool
	killedAt       time.Time
	probe          *probe  // the call killed mid-run on purpose
	events         []event // what the chaos did, when
	hook           *pushHook
	watch          *watcher // the subscriber through the balancer
}

// event is one step of the chaos, for the detailed report.
type event struct {
	at   time.Time
	what string
}

// crashed reports whether a call id had an attempt in flight when the
// replica was killed: such a call may run again after the lease.
func (r *result) crashed(id string) bool {
	for c := range r.killedInFlight {
		if c.id == id {
			return true
		}
	}
	return false
}

// stats sums the calls up.
type stats struct {
	calls, failed, twice, crashTwice, lost int
	tasks, a2aTasks, rounds                int                       // that ended well (a2aTasks: of tasks, those over A2A)
	a2aEnded, pushed, pushedTwice          int                       // A2A tasks completed or cancelled; of them, those whose end was posted, and posted twice
	taskEnds                               map[string]int            // completed, cancelled, lost
	firstFailures                          map[string]map[string]int // phase → class → count
	finalFailures                          map[string]int            // class → count
	latencies                              []time.Duration
}

func (r *result) stats() stats {
	s := stats{firstFailures: map[string]map[string]int{}, finalFailures: map[string]int{}, taskEnds: map[string]int{}}
	answered := map[string]bool{}
	a2aEnds := map[string]string{}
	for _, c := range r.calls {
		s.calls++
		if len(c.attempts) > 0 && c.attempts[0].class != "ok" {
			if s.firstFailures[c.phase] == nil {
				s.firstFailures[c.phase] = map[string]int{}
			}
			s.firstFailures[c.phase][c.proto.String()+" "+c.attempts[0].class]++
		}
		for _, a := range c.attempts {
			if a.class == "ok" {
				s.latencies = append(s.latencies, a.end.Sub(a.start))
			}
		}
		switch {
		case c.ok && c.kind == "task":
			s.tasks++
			s.taskEnds[c.ended]++
			if c.proto == a2aProto {
				s.a2aTasks++
				if c.taskID != "" && (c.ended == "completed" || c.ended == "cancelled") {
					a2aEnds[c.taskID] = c.ended
				}
			}
		case c.ok && c.kind == "round":
			s.rounds++
		}
		if !c.ok {
			s.failed++
			class := "no attempt"
			if len(c.attempts) > 0 {
				class = c.attempts[len(c.attempts)-1].class
			}
			s.finalFailures[class]++
		} else if c.id != "" {
			answered[c.id] = true
		}
	}
	for id, n := range r.runs {
		if n > 1 && strings.HasPrefix(id, "chaos-") {
			if r.crashed(id) {
				s.crashTwice++
			} else {
				s.twice++
			}
		}
	}
	for id := range answered {
		if r.runs[id] == 0 {
			s.lost++
		}
	}
	s.a2aEnded = len(a2aEnds)
	if r.hook != nil {
		s.pushed, s.pushedTwice = r.hook.ends(a2aEnds)
	}
	slices.Sort(s.latencies)
	return s
}

func percentile(d []time.Duration, p float64) time.Duration {
	if len(d) == 0 {
		return 0
	}
	return d[min(len(d)-1, int(float64(len(d))*p))]
}

// report writes the figures, ending with the chaos line.
func (r *result) report(out io.Writer) {
	s := r.stats()
	for i, t := range r.throughput {
		fmt.Fprintf(out, "throughput: %d replica(s): %.0f calls/s\n", i+1, t)
	}
	fmt.Fprintf(out, "latency: p50 %v, p99 %v (successful attempts)\n",
		percentile(s.latencies, 0.50).Round(10*time.Microsecond), percentile(s.latencies, 0.99).Round(10*time.Microsecond))
	for _, phase := range []string{"1 replicas", "2 replicas", "3 replicas", "steady", "sigterm", "sigkill", "redis"} {
		if f := s.firstFailures[phase]; len(f) > 0 {
			fmt.Fprintf(out, "first attempts that failed, %s: %s\n", phase, classes(f))
		}
	}
	if len(s.finalFailures) > 0 {
		fmt.Fprintf(out, "calls that failed for good: %s\n", classes(s.finalFailures))
	}
	fmt.Fprintf(out, "tasks through the balancer: %d, %d of them over A2A (%d completed, %d cancelled, %d lost with their replica); input_required rounds answered on the next request: %d\n",
		s.tasks, s.a2aTasks, s.taskEnds["completed"], s.taskEnds["cancelled"], s.taskEnds["lost"], s.rounds)
	fmt.Fprintf(out, "A2A push notifications: %d of %d ended tasks had their end posted to their webhook, %d of them twice\n", s.pushed, s.a2aEnded, s.pushedTwice)
	fmt.Fprintf(out, "crash: %d calls in flight (on any replica) at SIGKILL; %d of them ran again after the lease (at least once, as promised)\n", len(r.killedInFlight), s.crashTwice)
	if r.probe != nil {
		fmt.Fprintln(out, r.probe.report())
	}
	if r.watch != nil {
		fmt.Fprintln(out, r.watch.report())
	}
	if s.lost > 0 {
		fmt.Fprintf(out, "answered without a run in the run log: %d\n", s.lost)
	}
	if detail {
		type line struct {
			at   time.Time
			text string
		}
		var lines []line
		for _, e := range r.events {
			lines = append(lines, line{e.at, e.what})
		}
		for _, c := range r.calls {
			for _, a := range c.attempts {
				if a.class != "ok" {
					lines = append(lines, line{a.start, fmt.Sprintf("  %s %s %.80s (%v)", c.proto, c.id, a.class, a.end.Sub(a.start).Round(time.Millisecond))})
				}
			}
		}
		slices.SortFunc(lines, func(a, b line) int { return a.at.Compare(b.at) })
		for _, l := range lines {
			fmt.Fprintf(out, "%8.3fs %s\n", l.at.Sub(r.began).Seconds(), l.text)
		}
	}
	var chaosCalls int
	for _, c := range r.calls {
		if !strings.HasSuffix(c.phase, "replicas") {
			chaosCalls++
		}
	}
	fmt.Fprintf(out, "chaos: %d calls, %.0f calls/s, %d errors, %d ran twice\n",
		s.calls, float64(chaosCalls)/r.duration.Seconds(), s.failed, s.twice)
}

func classes(m map[string]int) string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	parts := make([]string, len(keys))
	for i, k := range keys {
		parts[i] = fmt.Sprintf("%s ×%d", k, m[k])
	}
	return strings.Join(parts, ", ")
}

// broken lists the promises the run saw broken.
func (r *result) broken() []string {
	s := r.stats()
	var out []string
	if s.twice > 0 {
		out = append(out, fmt.Sprintf("%d call ids ran twice where at most once is promised", s.twice))
	}
	if s.failed > 0 {
		out = append(out, fmt.Sprintf("%d calls failed for good (%s)", s.failed, classes(s.finalFailures)))
	}
	if f := s.firstFailures["sigterm"]; len(f) > 0 {
		out = append(out, "calls failed during the rolling restart, which the balancer could have sent elsewhere: "+classes(f))
	}
	if s.lost > 0 {
		out = append(out, fmt.Sprintf("%d calls were answered although their tool never ran", s.lost))
	}
	if s.pushedTwice > 0 {
		out = append(out, fmt.Sprintf("%d A2A tasks had their end posted twice, where each change is posted once", s.pushedTwice))
	}
	// A replica killed between recording a task's end and posting it
	// loses that post; any more missing is a fault.
	if missing := s.a2aEnded - s.pushed; missing > max(2, s.a2aEnded/10) {
		out = append(out, fmt.Sprintf("%d of %d ended A2A tasks never had their end posted to their webhook", missing, s.a2aEnded))
	}
	if r.probe != nil {
		out = append(out, r.probe.broken()...)
	}
	if r.watch != nil {
		out = append(out, r.watch.broken()...)
	}
	return out
}
