package main

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestVerdict: a run is held to its baseline: a failure listed passes
// the verdict, one not listed fails it, and a listed test that passed,
// was skipped or did not run makes the baseline stale.
func TestVerdict(t *testing.T) {
	dir := t.TempDir()
	write := func(name, body string) string {
		p := filepath.Join(dir, name)
		require.NoError(t, os.WriteFile(p, []byte(body), 0o644))
		return p
	}
	report := write("tck.xml", `<?xml version="1.0"?><testsuites><testsuite name="pytest">
<testcase classname="tests.a" name="test_ok"/>
<testcase classname="tests.a" name="test_known"><failure message="x"/></testcase>
<testcase classname="tests.b.C" name="test_new"><error message="y"/></testcase>
<testcase classname="tests.b.C" name="test_skip"><skipped message="z"/></testcase>
</testsuite></testsuites>`)

	err := run(report, write("one.yml", "failures:\n  - reason: r\n    tests: [tests.a::test_known]\n"))
	require.Error(t, err)
	assert.Contains(t, err.Error(), "failed, and is not an expected failure: tests.b.C::test_new")

	err = run(report, write("both.yml", "failures:\n  - reason: r\n    tests: [tests.a::test_known, tests.b.C::test_new]\n"))
	require.NoError(t, err)

	err = run(report, write("stale.yml", "failures:\n  - reason: r\n    tests: [tests.a::test_known, tests.b.C::test_new, tests.a::test_ok, tests.b.C::test_skip, tests.gone::test_x]\n"))
	require.Error(t, err)
	assert.Contains(t, err.Error(), "tests.a::test_ok (passed)")
	assert.Contains(t, err.Error(), "tests.b.C::test_skip (skipped)")
	assert.Contains(t, err.Error(), "tests.gone::test_x (not run)")

	err = run(report, write("noreason.yml", "failures:\n  - tests: [tests.a::test_known]\n"))
	assert.ErrorContains(t, err, "says why")

	err = run(write("empty.xml", `<testsuites><testsuite name="pytest"/></testsuites>`), write("none.yml", "failures: []\n"))
	assert.ErrorContains(t, err, "the TCK did not run")
}
