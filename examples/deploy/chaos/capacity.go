package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/otcgo/otc/internal/redistest"
)

// The capacity run (-capacity, make bench-deploy) measures how many calls
// per second the deployment serves, not how fast one call is: many
// concurrent callers (a process of their own, so that their CPU is
// counted apart) send OTC calls to Counter.Increment with call ids of
// their own through HAProxy, for 1, 2 and 3 replicas, with each Redis
// durability mode and with no Redis at all (each replica's in-memory
// store). For each configuration it prints the calls/s with p50 and p99,
// the CPU cores that the callers, the balancer, Redis and each replica
// used (from /proc), and Redis's commands and CPU per call; then what
// bounded the run.

// capConfig is the size of a capacity run.
type capConfig struct {
	conns    int           // concurrent callers
	warm     time.Duration // load before each measure
	measure  time.Duration // each configuration's measure
	replicas int           // up to this many
	modes    []string      // the Redis modes, in order
	// rate, when above zero, is a rate limit (calls per second, with a
	// burst of a tenth of a second's) that a last run sets on three
	// replicas sharing Redis (everysec), to show that the calls they
	// admit together keep to it.
	rate float64
	// callers returns the command of the callers process (runCallers)
	// against url.
	callers func(ctx context.Context, url string, conns int, warm, measure time.Duration) *exec.Cmd
}

// selfCallers is the callers process of the chaos program: itself, with
// -callers.
func selfCallers(ctx context.Context, url string, conns int, warm, measure time.Duration) *exec.Cmd {
	self, err := os.Executable()
	if err != nil {
		self = os.Args[0]
	}
	return exec.CommandContext(ctx, self, "-callers", url, "-conns", strconv.Itoa(conns), "-warm", warm.String(), "-for", measure.String())
}

// capModes are the Redis modes: the name a run prints, and redis-server's
// arguments ("" for no Redis).
var capModes = map[string][]string{
	"memory":   nil,
	"always":   {"--appendonly", "yes", "--appendfsync", "always"},
	"everysec": {"--appendonly", "yes", "--appendfsync", "everysec"},
	"no-aof":   {"--appendonly", "no"},
	// A Redis Cluster of three masters (no AOF), for the load one Redis
	// cannot carry.
	"cluster": {"cluster"},
}

// capRow is one configuration's figures.
type capRow struct {
	mode             string
	replicas         int
	callsPerSec      float64
	errors           int64
	p50, p99         time.Duration
	callers, lb      float64 // cores
	redis            float64 // cores
	replicaCores     []float64
	limited          int64 // calls refused 429 (over the rate limit)
	redisCmdsPerCall float64
	redisCPUPerCall  time.Duration
}

// runCapacity runs every configuration and writes the table to out.
func runCapacity(ctx context.Context, cfg capConfig, dir string, out io.Writer) ([]capRow, error) {
	calc, bins, err := prepare(ctx, dir)
	if err != nil {
		return nil, err
	}
	fmt.Fprintf(out, "capacity: %d callers, %v per configuration, on %d cores (GOMAXPROCS of this program: %d)\n",
		cfg.conns, cfg.measure, runtime.NumCPU(), runtime.GOMAXPROCS(0))
	var rows []capRow
	for _, mode := range cfg.modes {
		args, ok := capModes[mode]
		if !ok {
			return nil, fmt.Errorf("unknown mode %q: want memory, always, everysec, no-aof or cluster", mode)
		}
		for n := 1; n <= cfg.replicas; n++ {
			row, err := measureOne(ctx, cfg, dir, calc, bins, mode, args, n)
			if err != nil {
				return nil, fmt.Errorf("%s, %d replicas: %w", mode, n, err)
			}
			rows = append(rows, row)
			printRow(out, row)
		}
	}
	printSummary(out, rows)
	if cfg.rate > 0 {
		spec := fmt.Sprintf("%g/s,burst=%d", cfg.rate, max(int(cfg.rate/10), 1))
		row, err := measureOne(ctx, cfg, dir, calc, bins, "everysec", capModes["everysec"], cfg.replicas, "OTC_RATE_LIMIT="+spec)
		if err != nil {
			return nil, fmt.Errorf("the rate limit run: %w", err)
		}
		row.mode = "rate " + spec
		fmt.Fprintf(out, "capacity: rate limit %s, one caller, %d replicas sharing Redis: admitted %.0f calls/s (%.2f× the limit), refused %d (429)\n",
			spec, cfg.replicas, row.callsPerSec, row.callsPerSec/cfg.rate, row.limited)
		rows = append(rows, row)
	}
	return rows, nil
}

// measureOne starts one configuration, measures it and stops it.
func measureOne(ctx context.Context, cfg capConfig, dir, calc string, bins map[string]string, mode string, redisArgs []string, n int, extraEnv ...string) (capRow, error) {
	row := capRow{mode: mode, replicas: n}
	d := &deployment{}
	defer d.stop()
	sub, err := os.MkdirTemp(dir, mode+"-")
	if err != nil {
		return row, err
	}
	var env []string
	var cluster *redistest.Cluster
	switch {
	case mode == "cluster":
		if cluster, err = redistest.StartCluster(3, 0); err != nil {
			return row, err
		}
		defer cluster.Stop()
		env = append(env, "OTC_REDIS_CLUSTER="+strings.Join(cluster.Addrs, ","))
	case redisArgs != nil:
		d.redis = &redisServer{bin: bins["redis-server"], dir: sub, args: redisArgs}
		if d.redis.port, err = freePort(); err != nil {
			return row, err
		}
		if err := d.redis.start(); err != nil {
			return row, err
		}
		env = append(env, "OTC_REDIS_URL=redis://"+d.redis.addr()+"/0")
	}
	// The Redis servers: one, or the cluster's nodes.
	var redisAddrs []string
	var redisPids []int
	if d.redis != nil {
		redisAddrs, redisPids = []string{d.redis.addr()}, []int{d.redis.p.cmd.Process.Pid}
	} else if cluster != nil {
		redisAddrs, redisPids = cluster.Addrs, cluster.Pids()
	}
	env = append(env, "OTC_API_KEY="+chaosAPIKey)
	env = append(env, extraEnv...)
	for i := range n {
		r := &replica{name: fmt.Sprintf("replica%d", i+1), bin: calc, drain: 0, env: env}
		if r.port, err = freePort(); err != nil {
			return row, err
		}
		if err := r.start(); err != nil {
			return row, err
		}
		d.replicas = append(d.replicas, r)
	}
	d.lb = &balancer{bin: bins["haproxy"], dir: sub}
	if d.lb.port, err = freePort(); err != nil {
		return row, err
	}
	if err := d.lb.start(d.replicas); err != nil {
		return row, err
	}
	time.Sleep(upDelay)

	// The callers run for warm plus measure; the figures are read over
	// the measure only.
	callers := cfg.callers(ctx, d.lb.url(), cfg.conns, cfg.warm, cfg.measure)
	callers.Stderr = os.Stderr
	stdout, err := callers.StdoutPipe()
	if err != nil {
		return row, err
	}
	if err := callers.Start(); err != nil {
		return row, err
	}
	defer func() { _ = callers.Process.Kill(); _ = callers.Wait() }()
	sc := bufio.NewScanner(stdout)
	if !sc.Scan() || sc.Text() != "measuring" {
		return row, fmt.Errorf("the callers did not start: %v", sc.Err())
	}
	pids := []int{callers.Process.Pid, d.lb.p.cmd.Process.Pid}
	for _, r := range d.replicas {
		pids = append(pids, r.p.cmd.Process.Pid)
	}
	firstRedis := len(pids)
	pids = append(pids, redisPids...)
	cpu0 := cpuTimes(pids)
	info0, err := readRedisInfos(redisAddrs)
	if err != nil {
		return row, err
	}
	began := time.Now()
	if !sc.Scan() {
		return row, fmt.Errorf("the callers ended without their figures: %v", sc.Err())
	}
	wall := time.Since(began)
	cpu1 := cpuTimes(pids)
	var res callersResult
	if err := json.Unmarshal(sc.Bytes(), &res); err != nil {
		return row, fmt.Errorf("the callers' figures: %w: %s", err, sc.Text())
	}
	cores := func(i int) float64 { return (cpu1[i] - cpu0[i]).Seconds() / wall.Seconds() }
	row.callsPerSec = float64(res.Calls) / res.Seconds
	row.errors, row.limited = res.Errors, res.Limited
	row.p50, row.p99 = time.Duration(res.P50us)*time.Microsecond, time.Duration(res.P99us)*time.Microsecond
	row.callers, row.lb = cores(0), cores(1)
	for i := range d.replicas {
		row.replicaCores = append(row.replicaCores, cores(2+i))
	}
	if len(redisAddrs) > 0 {
		for i := firstRedis; i < len(pids); i++ {
			row.redis += cores(i)
		}
		info1, err := readRedisInfos(redisAddrs)
		if err != nil {
			return row, err
		}
		calls := float64(res.Calls) * wall.Seconds() / res.Seconds // the calls within the CPU window
		row.redisCmdsPerCall = float64(info1.commands-info0.commands) / calls
		row.redisCPUPerCall = time.Duration(float64(info1.cpu-info0.cpu) / calls)
	}
	return row, nil
}

// cpuTimes reads the CPU time (user and system) of each process from
// /proc/PID/stat; a process that is gone reads zero.
func cpuTimes(pids []int) []time.Duration {
	out := make([]time.Duration, len(pids))
	for i, pid := range pids {
		b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
		if err != nil {
			continue
		}
		// The command name, in parentheses, may hold spaces: the fields
		// are counted after its closing one. utime and stime are the
		// 14th and 15th fields, in clock ticks of 1/100 s (USER_HZ).
		s := string(b)
		f := strings.Fields(s[strings.LastIndexByte(s, ')')+1:])
		if len(f) < 13 {
			continue
		}
		u, _ := strconv.ParseInt(f[11], 10, 64)
		st, _ := strconv.ParseInt(f[12], 10, 64)
		out[i] = time.Duration(u+st) * 10 * time.Millisecond
	}
	return out
}

// redisInfo is what the run reads of INFO.
type redisInfo struct {
	commands int64
	cpu      time.Duration
}

// readRedisInfo sends INFO to the Redis at addr and reads the commands it
// has processed and the CPU it has used.
func readRedisInfo(addr string) (redisInfo, error) {
	var ri redisInfo
	c, err := net.DialTimeout("tcp", addr, time.Second)
	if err != nil {
		return ri, err
	}
	defer c.Close()
	_ = c.SetDeadline(time.Now().Add(5 * time.Second))
	if _, err := c.Write([]byte("INFO all\r\n")); err != nil {
		return ri, err
	}
	r := bufio.NewReader(c)
	head, err := r.ReadString('\n')
	if err != nil || !strings.HasPrefix(head, "$") {
		return ri, fmt.Errorf("INFO answered %q: %v", head, err)
	}
	n, err := strconv.Atoi(strings.TrimSpace(head[1:]))
	if err != nil {
		return ri, err
	}
	body := make([]byte, n)
	if _, err := io.ReadFull(r, body); err != nil {
		return ri, err
	}
	var cpu float64
	for line := range strings.Lines(string(body)) {
		k, v, ok := strings.Cut(strings.TrimSpace(line), ":")
		if !ok {
			continue
		}
		switch k {
		case "total_commands_processed":
			ri.commands, _ = strconv.ParseInt(v, 10, 64)
		case "used_cpu_sys", "used_cpu_user":
			f, _ := strconv.ParseFloat(v, 64)
			cpu += f
		}
	}
	ri.cpu = time.Duration(cpu * float64(time.Second))
	return ri, nil
}

// readRedisInfos sums readRedisInfo over the servers at addrs.
func readRedisInfos(addrs []string) (redisInfo, error) {
	var sum redisInfo
	for _, a := range addrs {
		ri, err := readRedisInfo(a)
		if err != nil {
			return sum, err
		}
		sum.commands += ri.commands
		sum.cpu += ri.cpu
	}
	return sum, nil
}

// printRow prints one configuration's line.
func printRow(out io.Writer, r capRow) {
	reps := make([]string, len(r.replicaCores))
	for i, c := range r.replicaCores {
		reps[i] = fmt.Sprintf("%.2f", c)
	}
	redis := "-"
	if r.mode != "memory" {
		redis = fmt.Sprintf("%.2f cores, %.1f cmds/call, %.1f µs/call", r.redis, r.redisCmdsPerCall, float64(r.redisCPUPerCall.Nanoseconds())/1e3)
	}
	fmt.Fprintf(out, "capacity: %-8s %d replicas: %8.0f calls/s  p50 %6.2f ms  p99 %6.2f ms  errors %d | cores: callers %.2f  haproxy %.2f  replicas [%s] | redis %s\n",
		r.mode, r.replicas, r.callsPerSec, float64(r.p50.Microseconds())/1e3, float64(r.p99.Microseconds())/1e3, r.errors,
		r.callers, r.lb, strings.Join(reps, " "), redis)
}

// printSummary prints each Redis mode's calls/s as a ratio to no Redis's
// with as many replicas, and what bounded each run.
func printSummary(out io.Writer, rows []capRow) {
	memory := map[int]float64{}
	for _, r := range rows {
		if r.mode == "memory" {
			memory[r.replicas] = r.callsPerSec
		}
	}
	for _, r := range rows {
		ratio := ""
		if m := memory[r.replicas]; m > 0 && r.mode != "memory" {
			ratio = fmt.Sprintf("%.2f× no Redis, ", r.callsPerSec/m)
		}
		fmt.Fprintf(out, "capacity: %-8s %d replicas: %sbound by %s\n", r.mode, r.replicas, ratio, limit(r))
	}
}

// limit names what bounded a run: Redis when its one thread is nearly
// saturated; else the machine's cores when the processes used nearly all
// of them (naming the largest user); else the callers' concurrency (the
// run was bound by latency, not by any part).
func limit(r capRow) string {
	if r.mode != "memory" && r.mode != "cluster" && r.redis >= 0.85 {
		return fmt.Sprintf("Redis (its one thread at %.2f of a core)", r.redis)
	}
	var replicas float64
	for _, c := range r.replicaCores {
		replicas += c
	}
	total := r.callers + r.lb + r.redis + replicas
	cores := float64(runtime.NumCPU())
	if total >= 0.85*cores {
		most, used := "the replicas", replicas
		for _, p := range []struct {
			name  string
			cores float64
		}{{"the callers", r.callers}, {"the balancer", r.lb}, {"Redis", r.redis}} {
			if p.cores > used {
				most, used = p.name, p.cores
			}
		}
		return fmt.Sprintf("the machine's %d cores (%.2f used; most by %s, %.2f)", int(cores), total, most, used)
	}
	return fmt.Sprintf("the callers' concurrency (%.2f of %d cores used: latency, not a part, bounded it)", total, int(cores))
}

// callersResult is what the callers process prints at its end.
type callersResult struct {
	Calls   int64   `json:"calls"`
	Errors  int64   `json:"errors"`
	Limited int64   `json:"limited"` // refused 429: over the rate limit
	Seconds float64 `json:"seconds"`
	P50us   int64   `json:"p50_us"`
	P99us   int64   `json:"p99_us"`
}

// runCallers is the callers process: conns workers, each on a keep-alive
// connection, call Counter.Increment with call ids of their own, one call
// after another, for warm (unmeasured; it then prints "measuring") and
// then for measure; it prints a callersResult.
func runCallers(base string, conns int, warm, measure time.Duration) error {
	client := &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{MaxIdleConnsPerHost: conns, MaxConnsPerHost: conns}}
	var (
		measuring atomic.Bool
		calls     atomic.Int64
		errs      atomic.Int64
		limited   atomic.Int64
		mu        sync.Mutex
		lat       []time.Duration
	)
	stop := make(chan struct{})
	var wg sync.WaitGroup
	prefix := newID()
	for w := range conns {
		wg.Go(func() {
			var own []time.Duration
			for i := 0; ; i++ {
				select {
				case <-stop:
					mu.Lock()
					lat = append(lat, own...)
					mu.Unlock()
					return
				default:
				}
				body := `{"request":{"tool_id":"Counter.Increment","call_id":"` + prefix + "-" + strconv.Itoa(w) + "-" + strconv.Itoa(i) + `","input":{}}}`
				req, _ := http.NewRequest(http.MethodPost, base+"/tools/call", strings.NewReader(body))
				req.Header.Set("Content-Type", "application/json")
				req.Header.Set("OXP-API-Key", chaosAPIKey)
				start := time.Now()
				status := 0
				if resp, err := client.Do(req); err == nil {
					_, _ = io.Copy(io.Discard, resp.Body)
					resp.Body.Close()
					status = resp.StatusCode
				}
				if !measuring.Load() {
					continue
				}
				switch status {
				case http.StatusOK:
					calls.Add(1)
					own = append(own, time.Since(start))
				case http.StatusTooManyRequests:
					limited.Add(1)
				default:
					errs.Add(1)
				}
			}
		})
	}
	time.Sleep(warm)
	measuring.Store(true)
	began := time.Now()
	fmt.Println("measuring")
	time.Sleep(measure)
	measuring.Store(false)
	secs := time.Since(began).Seconds()
	close(stop)
	wg.Wait()
	slices.Sort(lat)
	res := callersResult{Calls: calls.Load(), Errors: errs.Load(), Limited: limited.Load(), Seconds: secs}
	if len(lat) > 0 {
		res.P50us = lat[len(lat)/2].Microseconds()
		res.P99us = lat[len(lat)*99/100].Microseconds()
	}
	b, err := json.Marshal(res)
	if err != nil {
		return err
	}
	fmt.Println(string(b))
	if res.Calls == 0 {
		return errors.New("no call succeeded")
	}
	return nil
}

// capacityMain runs the capacity run's flags: -capacity, or the callers
// process (-callers URL). It reports whether it ran.
func capacityMain(short bool, keep bool) bool {
	if *callersURL != "" {
		if err := runCallers(*callersURL, *capConns, *capWarm, *callersFor); err != nil {
			fmt.Fprintln(os.Stderr, "callers:", err)
			os.Exit(1)
		}
		return true
	}
	if !*capacity {
		return false
	}
	cfg := capConfig{conns: *capConns, warm: *capWarm, measure: *capMeasure, replicas: 3,
		modes: strings.Split(*capModesFlag, ","), callers: selfCallers, rate: *capRate}
	if short {
		cfg = shortCapacity(selfCallers)
	}
	dir, err := os.MkdirTemp("", "otc-capacity-")
	if err != nil {
		fmt.Fprintln(os.Stderr, "capacity:", err)
		os.Exit(2)
	}
	if keep {
		fmt.Fprintln(os.Stderr, "capacity: the run's files are in", dir)
	} else {
		defer os.RemoveAll(dir)
	}
	if _, err := runCapacity(context.Background(), cfg, dir, os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "capacity:", err)
		os.Exit(2)
	}
	return true
}

// shortCapacity is the capacity run of CI: a few callers, a second per
// configuration, no Redis and Redis with everysec.
func shortCapacity(callers func(ctx context.Context, url string, conns int, warm, measure time.Duration) *exec.Cmd) capConfig {
	return capConfig{conns: 32, warm: 300 * time.Millisecond, measure: 2 * time.Second, replicas: 3,
		modes: []string{"memory", "everysec"}, callers: callers, rate: 300}
}

// The capacity run's flags.
var (
	capacity     = flag.Bool("capacity", false, "measure the deployment's capacity instead of running the chaos (make bench-deploy)")
	capConns     = flag.Int("conns", 256, "the capacity run's concurrent callers")
	capWarm      = flag.Duration("warm", 2*time.Second, "the capacity run's load before each measure")
	capMeasure   = flag.Duration("measure", 5*time.Second, "the capacity run's measure of each configuration")
	capModesFlag = flag.String("modes", "memory,always,everysec,no-aof,cluster", "the capacity run's Redis modes, in order: memory (no Redis), always, everysec, no-aof, cluster (three masters)")
	capRate      = flag.Float64("rate", 1000, "the rate limit, in calls/s, that the capacity run's last run sets on three replicas sharing Redis, to show they keep to it together; 0 for none")
	callersURL   = flag.String("callers", "", "run as the capacity run's callers process, against this URL")
	callersFor   = flag.Duration("for", 5*time.Second, "the callers process's measure")
)
