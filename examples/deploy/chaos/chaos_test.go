package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"
)

// callersEnv makes the test binary the capacity run's callers process:
// "URL CONNS WARM FOR".
const callersEnv = "CHAOS_TEST_CALLERS"

func TestMain(m *testing.M) {
	if spec := os.Getenv(callersEnv); spec != "" {
		f := strings.Fields(spec)
		if len(f) != 4 {
			fmt.Fprintln(os.Stderr, "callers: want URL CONNS WARM FOR, got", spec)
			os.Exit(2)
		}
		url := f[0]
		conns, err1 := strconv.Atoi(f[1])
		warm, err2 := time.ParseDuration(f[2])
		measure, err3 := time.ParseDuration(f[3])
		if err := errors.Join(err1, err2, err3); err != nil {
			fmt.Fprintln(os.Stderr, "callers:", err)
			os.Exit(2)
		}
		if err := runCallers(url, conns, warm, measure); err != nil {
			fmt.Fprintln(os.Stderr, "callers:", err)
			os.Exit(1)
		}
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// needDeploy skips the test without redis-server or haproxy on PATH,
// unless OTC_REQUIRE_DEPLOY=1, with which it fails instead.
func needDeploy(t *testing.T) {
	t.Helper()
	for _, bin := range []string{"redis-server", "haproxy"} {
		if _, err := exec.LookPath(bin); err != nil {
			if os.Getenv("OTC_REQUIRE_DEPLOY") == "1" {
				t.Fatalf("%s is not on PATH and OTC_REQUIRE_DEPLOY=1: apt-get install %s", bin, bin)
			}
			t.Skipf("%s is not on PATH (apt-get install %s)", bin, bin)
		}
	}
}

// TestCapacityShort runs the capacity run's short form: the callers in a
// process of their own, no Redis and Redis with everysec, 1 to 3
// replicas; every configuration serves calls without errors, the CPU of
// each part is read, Redis's commands per call are counted, and the
// report names each run's bound.
func TestCapacityShort(t *testing.T) {
	if testing.Short() {
		t.Skip("the capacity run takes about half a minute")
	}
	needDeploy(t)
	cfg := shortCapacity(func(ctx context.Context, url string, conns int, warm, measure time.Duration) *exec.Cmd {
		cmd := exec.CommandContext(ctx, os.Args[0])
		cmd.Env = append(os.Environ(), fmt.Sprintf("%s=%s %d %s %s", callersEnv, url, conns, warm, measure))
		return cmd
	})
	var out bytes.Buffer
	rows, err := runCapacity(t.Context(), cfg, t.TempDir(), &out)
	t.Log("\n" + out.String())
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) != 7 {
		t.Fatalf("%d configurations measured, want 6 and the rate limit's", len(rows))
	}
	// Three replicas sharing one limit in Redis admit, together, the
	// limit's rate, within 10%, and refuse the rest with 429.
	rated := rows[6]
	if ratio := rated.callsPerSec / 300; ratio < 0.9 || ratio > 1.1 {
		t.Errorf("the three replicas admitted %.0f calls/s under a limit of 300/s (%.2f×): want within 10%%", rated.callsPerSec, ratio)
	}
	if rated.limited == 0 || rated.errors != 0 {
		t.Errorf("under the limit: %d refused 429, %d other errors: want some refused, no errors", rated.limited, rated.errors)
	}
	for _, r := range rows[:6] {
		name := fmt.Sprintf("%s, %d replicas", r.mode, r.replicas)
		if r.callsPerSec <= 0 || r.errors != 0 {
			t.Errorf("%s: %.0f calls/s, %d errors", name, r.callsPerSec, r.errors)
		}
		if r.callers <= 0 || r.lb <= 0 || len(r.replicaCores) != r.replicas {
			t.Errorf("%s: the parts' CPU was not read: %+v", name, r)
		}
		if r.mode == "everysec" && (r.redisCmdsPerCall < 2 || r.redisCPUPerCall <= 0) {
			t.Errorf("%s: %.1f Redis commands and %v of its CPU per call: want a claim and an outcome, at least", name, r.redisCmdsPerCall, r.redisCPUPerCall)
		}
	}
	if !regexp.MustCompile(`everysec 3 replicas: [0-9.]+× no Redis`).MatchString(out.String()) || !strings.Contains(out.String(), "bound by") {
		t.Errorf("the report gives no ratio to no Redis, or no bound:\n%s", out.String())
	}
}

// TestChaosShort runs the short form, as .ci/run does: the deployment
// under load, a rolling restart, a crash (with the probe killed mid-run)
// and a Redis restart, and checks every promise (see the package doc). Without redis-server or haproxy on
// PATH it skips, unless OTC_REQUIRE_DEPLOY=1, with which CI fails instead.
func TestChaosShort(t *testing.T) {
	if testing.Short() {
		t.Skip("the chaos test runs for about a minute")
	}
	needDeploy(t)
	var out bytes.Buffer
	res, err := run(t.Context(), shortConfig, t.TempDir(), &out)
	t.Log("\n" + out.String())
	if err != nil {
		t.Fatal(err)
	}
	if !regexp.MustCompile(`(?m)^chaos: \d+ calls, \d+ calls/s, \d+ errors, \d+ ran twice$`).Match(out.Bytes()) {
		t.Errorf("the report does not end with the chaos line:\n%s", out.String())
	}
	if res.probe == nil {
		t.Error("the crash probe did not run")
	}
	for _, b := range res.broken() {
		t.Error(b)
	}
	s := res.stats()
	if s.calls < 100 {
		t.Errorf("only %d calls were made: the load did not run", s.calls)
	}
	if s.tasks == 0 || s.a2aTasks == 0 || s.rounds == 0 {
		t.Errorf("%d tasks (%d over A2A) and %d input_required rounds went through the balancer: the load made none of one kind", s.tasks, s.a2aTasks, s.rounds)
	}
	for i, tp := range res.throughput {
		if tp <= 0 {
			t.Errorf("no calls went through with %d replica(s)", i+1)
		}
	}
}
