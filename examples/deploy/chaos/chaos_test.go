package main

import (
	"bytes"
	"os"
	"os/exec"
	"regexp"
	"testing"
)

// TestChaosShort runs the short form, as .ci/run does: the deployment
// under load, a rolling restart, a crash (with the probe killed mid-run)
// and a Redis restart, and checks every promise (see the package doc). Without redis-server or haproxy on
// PATH it skips, unless OTC_REQUIRE_DEPLOY=1, with which CI fails instead.
func TestChaosShort(t *testing.T) {
	if testing.Short() {
		t.Skip("the chaos test runs for about a minute")
	}
	for _, bin := range []string{"redis-server", "haproxy"} {
		if _, err := exec.LookPath(bin); err != nil {
			if os.Getenv("OTC_REQUIRE_DEPLOY") == "1" {
				t.Fatalf("%s is not on PATH and OTC_REQUIRE_DEPLOY=1: apt-get install %s", bin, bin)
			}
			t.Skipf("%s is not on PATH (apt-get install %s)", bin, bin)
		}
	}
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
	if s.tasks == 0 || s.rounds == 0 {
		t.Errorf("%d tasks and %d input_required rounds went through the balancer: the load made none of one kind", s.tasks, s.rounds)
	}
	for i, tp := range res.throughput {
		if tp <= 0 {
			t.Errorf("no calls went through with %d replica(s)", i+1)
		}
	}
}
