// Command tckverdict holds a run of the A2A TCK to its baseline: it reads
// the run's JUnit XML report and a YAML file of the tests expected to
// fail, each with its reason (.ci/a2a-tck-expected-failures.yml), and
// fails when a test not listed failed, or a listed test did not (it
// passed or was skipped: the baseline is stale). Tests the TCK skips (a
// capability the agent does not declare) count for nothing else.
//
//	go run ./tckverdict --report tck.xml --expected FILE
package main

import (
	"encoding/xml"
	"errors"
	"flag"
	"fmt"
	"os"
	"sort"

	"gopkg.in/yaml.v3"
)

// testCase is a JUnit testcase, as pytest writes it.
type testCase struct {
	ClassName string    `xml:"classname,attr"`
	Name      string    `xml:"name,attr"`
	Failure   *struct{} `xml:"failure"`
	Error     *struct{} `xml:"error"`
	Skipped   *struct{} `xml:"skipped"`
}

// baseline is the file of expected failures.
type baseline struct {
	Failures []struct {
		Reason string   `yaml:"reason"`
		Tests  []string `yaml:"tests"`
	} `yaml:"failures"`
}

func main() {
	report := flag.String("report", "", "the TCK's JUnit XML report (pytest --junitxml)")
	expected := flag.String("expected", "", "the YAML file of the tests expected to fail")
	flag.Parse()
	if err := run(*report, *expected); err != nil {
		fmt.Fprintln(os.Stderr, "tckverdict:", err)
		os.Exit(1)
	}
}

func run(report, expected string) error {
	b, err := os.ReadFile(report)
	if err != nil {
		return err
	}
	var doc struct {
		Cases  []testCase `xml:"testcase"`
		Suites []struct {
			Cases []testCase `xml:"testcase"`
		} `xml:"testsuite"`
	}
	if err := xml.Unmarshal(b, &doc); err != nil {
		return fmt.Errorf("%s: %w", report, err)
	}
	cases := doc.Cases
	for _, s := range doc.Suites {
		cases = append(cases, s.Cases...)
	}
	if len(cases) == 0 {
		return fmt.Errorf("%s holds no test: the TCK did not run", report)
	}
	b, err = os.ReadFile(expected)
	if err != nil {
		return err
	}
	var base baseline
	if err := yaml.Unmarshal(b, &base); err != nil {
		return fmt.Errorf("%s: %w", expected, err)
	}
	want := map[string]string{}
	for _, f := range base.Failures {
		if f.Reason == "" {
			return fmt.Errorf("%s: every group of expected failures says why", expected)
		}
		for _, t := range f.Tests {
			want[t] = f.Reason
		}
	}
	seen := map[string]bool{}
	var passed, failed, skipped int
	var unexpected, stale []string
	for _, c := range cases {
		id := c.ClassName + "::" + c.Name
		seen[id] = true
		switch {
		case c.Skipped != nil:
			skipped++
			if _, ok := want[id]; ok {
				stale = append(stale, id+" (skipped)")
			}
		case c.Failure != nil || c.Error != nil:
			failed++
			if _, ok := want[id]; !ok {
				unexpected = append(unexpected, id)
			}
		default:
			passed++
			if _, ok := want[id]; ok {
				stale = append(stale, id+" (passed)")
			}
		}
	}
	for id := range want {
		if !seen[id] {
			stale = append(stale, id+" (not run)")
		}
	}
	sort.Strings(unexpected)
	sort.Strings(stale)
	fmt.Printf("A2A TCK: %d passed, %d failed (%d expected, each with its reason in %s), %d skipped\n", passed, failed, failed-len(unexpected), expected, skipped)
	var errs []error
	for _, id := range unexpected {
		errs = append(errs, fmt.Errorf("failed, and is not an expected failure: %s", id))
	}
	for _, id := range stale {
		errs = append(errs, fmt.Errorf("listed as an expected failure, but %s: take it out of the list", id))
	}
	return errors.Join(errs...)
}
